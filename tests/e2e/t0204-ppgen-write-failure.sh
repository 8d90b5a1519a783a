#!/bin/bash
# ppgen failing to write part of a tree (exit 3) leaves .truth as it was,
# as an interrupted run does (t0203): the truth of the iterations written
# before the failure would not describe the tree, so .truth is not
# committed with the rows of those iterations alone.
source "$PP_ROOT/tests/lib.sh"

args=(--out out --pp 4 --layers 60 --iterations 1,2)
ppgen "${args[@]}" >/dev/null 2>first.err
is "a whole tree: exit 0" 0 $?
is "... its truth has a row per trace" "9" "$(wc -l <out/.truth/ranks.csv)"
cp out/.truth/ranks.csv ranks.before

# iteration_2 a file, not a folder: iteration 1 is written, 2 cannot be.
rm -r out/iteration_2
echo x >out/iteration_2
ppgen "${args[@]}" >/dev/null 2>fail.err
is "a folder that cannot be made: exit 3" 3 $?
ok_if "... said so" grep -q "^ppgen: error: .*iteration_2" fail.err
ok_if "... and iteration 1 was written before it" test -e out/iteration_1/rank_0000_iter_1.pt.trace.json
ok_if ".truth/ranks.csv is left as it was" cmp -s ranks.before out/.truth/ranks.csv
is "no temporary file is left" "" "$(find out -name '.pp-*')"
done_testing
