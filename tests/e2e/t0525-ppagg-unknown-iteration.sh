#!/bin/bash
# --iterations naming an iteration the database lacks (docs/ppagg.md: exit
# 1, the others aggregated): a warning for each unknown name (not an
# "error:", since the run goes on), and when none matches, the final error
# lists the iterations there are (exit 3, nothing done).
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --pp 2 --iterations 15,16 --layers 1 --kernels-per-layer 2 -q &&
	"$PP_FAST_BIN/ppbatch" --input j -q
is "generated and stored" 0 $?
ppagg --base-folder j --iterations 15 99 --no-render -q 2>some.err
is "one known, one unknown: exit 1" 1 $?
is "... a warning names the unknown one" "ppagg: warning: no iteration '99' in the database" \
	"$(cat some.err)"
ok_if "... the known one is aggregated" test -s j/pptrace/iteration_15.html
ppagg --base-folder j --iterations 51 iteration_61 --no-render -q 2>none.err
is "none known: exit 3" 3 $?
is "... a warning each, then the error lists the iterations there are" \
	"ppagg: warning: no iteration '51' in the database
ppagg: warning: no iteration 'iteration_61' in the database
ppagg: error: no iteration to aggregate in 'j/pptrace.db': it holds iterations 15, 16" \
	"$(cat none.err)"
ppagg --input j/iteration_17 --no-render -q 2>input.err
is "--input of an iteration not stored: exit 3" 3 $?
ok_if "... the error lists the iterations there are" \
	grep -q "^ppagg: error: no iteration to aggregate in 'j/pptrace.db': it holds iterations 15, 16$" input.err
done_testing
