#!/bin/bash
# ppgen never writes through a symlink planted in its output folder: traces
# (plain and gzip), the topology file and the truth CSVs go to a temporary
# name and are renamed into place, with the user's umask; a folder below
# --out that is a symlink is refused, not followed.
. "$PP_ROOT/tests/lib.sh"

gen() { ppgen --out tree --pp 2 --microbatches 2 --quiet "$@"; }

umask 022
gen
is "first run" 0 $?
topo=$(cd tree && ls unique_parallel_groups_*.txt)
files="iteration_15/rank_0000_iter_15.pt.trace.json iteration_15/rank_0001_iter_15.pt.trace.json
$topo .truth/topology.txt .truth/ranks.csv .truth/category_stats.csv .truth/steps.csv
.truth/pp_groups.csv .truth/stragglers.csv"
cp -r tree expected

echo precious >victim
for f in $files; do
	rm -f "tree/$f"
	ln -s "$T/victim" "tree/$f"
done
umask 027
gen >out.txt 2>&1
is "ppgen over planted symlinks exits 0" 0 $?
is "the symlinks' target is untouched" precious "$(cat victim)"
bad=
for f in $files; do
	[ -f "tree/$f" ] && [ ! -L "tree/$f" ] || bad="$bad $f(not a regular file)"
	[ "$(stat -c %a "tree/$f")" = 640 ] || bad="$bad $f(mode $(stat -c %a "tree/$f"))"
done
is "every output is a regular file with mode 640 (umask 027)" "" "$bad"
is "the outputs are the same as on a clean run" "" "$(diff -r expected tree 2>&1 | head -5)"
ok_if "no temporary files left behind" test -z "$(find tree -name '.*tmp*' -o -name '*.tmp')"

# gzip output: a planted symlink at the .gz name
ln -s "$T/victim" tree/iteration_15/rank_0001_iter_15.pt.trace.json.gz
umask 077
gen --gzip >out.txt 2>&1
is "ppgen --gzip exits 0" 0 $?
is "the symlink's target is untouched" precious "$(cat victim)"
gz=tree/iteration_15/rank_0001_iter_15.pt.trace.json.gz
ok_if "the .gz is a regular file" test -f "$gz" -a ! -L "$gz"
is "with mode 600 (umask 077)" 600 "$(stat -c %a "$gz")"
is "it holds the same trace (but for its traceName)" "" \
	"$(zcat "$gz" | grep -v traceName | cmp - <(grep -v traceName expected/iteration_15/rank_0001_iter_15.pt.trace.json) 2>&1)"

# A folder below --out that is a symlink (even root's) is refused.
mkdir elsewhere
rm -rf tree/iteration_15 tree/.truth
ln -s "$T/elsewhere" tree/iteration_15
gen >out.txt 2>&1
is "a symlinked iteration folder: exit 3 (fatal)" 3 $?
ok_if "the error names the symlink" grep -q "iteration_15.*symlink\|symlink.*iteration_15" out.txt
is "nothing written through it" "" "$(ls elsewhere)"
rm -rf tree/iteration_15 tree/.truth
ln -s "$T/elsewhere" tree/.truth
gen >out.txt 2>&1
is "a symlinked .truth folder: exit 3 (fatal)" 3 $?
ok_if "the error names the symlink" grep -q "refusing to follow symlink '.truth'" out.txt
is "nothing written through it" "" "$(ls elsewhere)"
done_testing
