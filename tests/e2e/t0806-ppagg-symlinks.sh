#!/bin/bash
# ppagg never writes through a symlink planted in its output folder: files
# it writes go to a temporary name and are renamed into place, and what
# stands at gnuplot's output names is removed before gnuplot runs.
. "$PP_ROOT/tests/lib.sh"

"$PP_FAST_BIN/ppgen" --out tree --pp 2 --microbatches 2 --iterations 1 --quiet &&
	"$PP_FAST_BIN/ppbatch" --input tree --quiet
is "sample tree analysed" 0 $?

echo precious >victim
mkdir -p tree/pptrace/iteration_1/rank_0
ln -s "$T/victim" tree/pptrace/index.html
ln -s "$T/victim" tree/pptrace/iteration_1/pp_groups.csv
ln -s "$T/victim" tree/pptrace/iteration_1/rank_0/steps.csv
ln -s "$T/victim" tree/pptrace/iteration_1/rank_0/overlap.gp
ln -s "$T/victim" tree/pptrace/iteration_1/rank_0/overlap.png
ppagg --base-folder tree --quiet >out.txt 2>&1
is "ppagg exits 0" 0 $?
is "the symlinks' target is untouched" precious "$(cat victim)"
for f in index.html iteration_1/pp_groups.csv iteration_1/rank_0/steps.csv \
	iteration_1/rank_0/overlap.gp; do
	ok_if "$f is a regular file again" test -f "tree/pptrace/$f" -a ! -L "tree/pptrace/$f"
done
if command -v gnuplot >/dev/null; then
	ok_if "overlap.png rendered as a regular file" \
		test -f tree/pptrace/iteration_1/rank_0/overlap.png -a ! -L tree/pptrace/iteration_1/rank_0/overlap.png
else
	skip "overlap.png rendered as a regular file" "gnuplot is not installed"
fi
ok_if "no temporary files left behind" test -z "$(find tree/pptrace -name '.*tmp*' -o -name '*.tmp')"
done_testing
