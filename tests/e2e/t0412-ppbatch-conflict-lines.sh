#!/bin/bash
# A rank claimed by many traces is one warning, naming three of them and
# counting the rest; at most 10 such warnings, then one line with the number
# of ranks left. Before, every trace of a conflict had a line of its own
# ("rank 0 is claimed by 14 traces, among them '...'", ten times over for
# the same rank), and the last line counted traces.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out g --pp 2 --microbatches 4 --layers 2 --iterations 1 --quiet
f=g/iteration_1/rank_0000_iter_1.pt.trace.json
# Header rank 0, no rank in the file names: five traces claim rank 0.
mkdir -p t/iteration_7
for n in a b c d e; do cp "$f" "t/iteration_7/$n.pt.trace.json"; done
ppbatch --input t -j 2 >out.txt 2>err.txt
is "a conflict: exit 1" 1 $?
is "one warning for the rank, three traces named, the others counted" \
	"ppbatch: warning: rank conflict: iteration 7, rank 0 is claimed by 5 traces ('$PWD/t/iteration_7/a.pt.trace.json', '$PWD/t/iteration_7/b.pt.trace.json', '$PWD/t/iteration_7/c.pt.trace.json' and 2 more): none of them is aggregated" \
	"$(grep 'rank conflict' err.txt)"
ok_if "the summary counts the traces" \
	grep -q "^rank conflicts: 5 traces claim a rank another trace of their iteration claims" out.txt

# Twelve iterations in conflict: ten warnings, then the ranks left.
for i in $(seq 10 21); do
	mkdir -p m/iteration_$i
	cp "$f" m/iteration_$i/x.pt.trace.json
	cp "$f" m/iteration_$i/y.pt.trace.json
done
ppbatch --input m -j 2 >out.txt 2>err.txt
is "many conflicts: exit 1" 1 $?
is "ten warnings, one per rank" 10 "$(grep -c 'rank conflict: iteration .*, rank 0 is claimed by 2 traces' err.txt)"
is "then the ranks left" "ppbatch: warning: rank conflict: 2 more ranks (SELECT * FROM rank_conflicts)" \
	"$(grep 'more ranks' err.txt)"
is "the view holds every trace" 24 "$(sql m/pptrace.db "SELECT count(*) FROM rank_conflicts")"
done_testing
