#!/bin/bash
# A topology file comes before --tp/--pp/--dp/--cp/--ep and [agg]'s sizes
# (docs/ppagg.md "Topology"). Sizes that disagree with the file are not
# dropped without a word: a warning says which sizes were ignored (the
# user's --tp 3) and what the file says. Sizes that agree, or none, say
# nothing.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --tp 2 --pp 2 --dp 2 --layers 1 --kernels-per-layer 2 -q &&
	"$PP_FAST_BIN/ppbatch" --input j -q
is "generated and stored" 0 $?
ppagg --base-folder j --no-render --tp 3 --pp 2 2>differ.err
is "disagreeing sizes: exit 0 (the file is used)" 0 $?
ok_if "... a warning names the ignored size and the file's" grep -q \
	"^ppagg: warning: sizes tp 3 (command line or \[agg\]) ignored: the topology file 'j/unique_parallel_groups_[0-9_]*.txt' says tp 2 and comes first" \
	differ.err
ok_if "... the file's topology is used" grep -q '^ppagg: topology from file: .*(tp 2, pp 2, dp 2,' differ.err
printf '[agg]\ndp = 4\n' >agg.ini
ppagg --base-folder j --no-render -q --config agg.ini 2>cfg.err
is "a disagreeing size from the config file: exit 0" 0 $?
ok_if "... warned too" grep -q "^ppagg: warning: sizes dp 4 (command line or \[agg\]) ignored: .* says dp 2 " cfg.err
ppagg --base-folder j --no-render -q --tp 2 --pp 2 --dp 2 2>same.err
is "agreeing sizes: exit 0" 0 $?
is "... no warning" "" "$(cat same.err)"
done_testing
