# Prints what valgrind logs (one file per process, without -q) report:
# every error record, and every leak record unless the process was killed
# by a signal (it could not free what it held; its code paths are checked
# for leaks in the runs where it exits).
function flush() {
	if (rec != "" && (kind == "error" || (kind == "leak" && !killed)))
		out = out rec
	rec = ""; kind = ""
}
FNR == 1 { flush(); if (out != "") printf "%s", out; out = ""; killed = 0; pre = 1 }
{
	line = $0
	sub(/^==[0-9]+== ?/, "", line)
	if (line == "") { flush(); pre = 0; next }
	if (pre) next
	if (rec == "") {
		if (line ~ /^Process terminating with default action of signal/) { killed = 1; kind = "skip" }
		else if (line ~ /are (definitely|indirectly|possibly) lost in loss record/) kind = "leak"
		else if (line ~ /^(HEAP SUMMARY|LEAK SUMMARY|ERROR SUMMARY|For lists of|For counts of|All heap blocks|Reachable blocks|To see them|Rerun with|Use --track-origins|Searching for pointers|checked [0-9,]+ bytes|Warning: )/ ||
			 line ~ /^ +(in use at exit|total heap usage|definitely lost|indirectly lost|possibly lost|still reachable|suppressed|of which reachable)/) kind = "skip"
		else kind = "error"
	}
	rec = rec FILENAME ": " $0 "\n"
}
END { flush(); if (out != "") printf "%s", out }
