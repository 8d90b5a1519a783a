#!/bin/bash
# ppbatch's modes: which one runs when several are named (--inspect, then
# --merge, then --worker, else the one --format names), --format's values
# listed from the modes, and each mode's own usage errors: exit 2, one line
# saying what is missing, nothing written.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out a --pp 2 --microbatches 4 --layers 2 --iterations 1 --quiet
trace=a/iteration_1/rank_0000_iter_1.pt.trace.json

ppbatch --format foo --input a 2>err.txt
is "an unknown --format: exit 2" 2 $?
is "... lists the formats" "ppbatch: error: invalid value 'foo' for --format: expected kineto, pp-timer, primus or optrace" \
	"$(head -n 1 err.txt)"

# --inspect wins over --format (and --format is still checked).
ppbatch --format optrace --inspect --json "$trace" >out.json 2>err.txt
is "--inspect with --format optrace inspects: exit 0" 0 $?
ok_if "... one JSON object for the trace" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' out.json
ppbatch --inspect --format foo "$trace" >/dev/null 2>&1
is "... and a bad --format is still refused" 2 $?

ppbatch --inspect --full --no-classify "$trace" >/dev/null 2>err.txt
is "--full with --no-classify: exit 2" 2 $?
is "... says they exclude each other" "ppbatch: error: --full and --no-classify exclude each other" "$(cat err.txt)"

ppbatch --merge shard.db 2>err.txt
is "--merge without --db: exit 2" 2 $?
is "... says what it needs" "ppbatch: error: --merge needs --db <out.db> and at least one shard database" \
	"$(cat err.txt)"
ppbatch --merge --db m.db 2>/dev/null
is "--merge without shards: exit 2" 2 $?
ok_if "... and no database was created" test ! -e m.db

ppbatch --worker </dev/null 2>err.txt
is "--worker without --db: exit 2" 2 $?
is "... says so" "ppbatch: error: --worker needs --db" "$(cat err.txt)"
ppbatch --worker --db w.db extra </dev/null 2>err.txt
is "--worker with an argument: exit 2" 2 $?
ok_if "... names it" grep -qF "ppbatch: error: unexpected argument 'extra'" err.txt
ok_if "... and no database was created" test ! -e w.db

ppbatch --format pp-timer --input a --meta m.yaml --pp-size 2 2>err.txt
is "--meta with --format pp-timer: exit 2" 2 $?
is "... says where it belongs" "ppbatch: error: --meta and --schema go with --format optrace" "$(cat err.txt)"
ppbatch --format optrace --input a/.truth/optrace.csv --vpp-size 2 --db op.db 2>err.txt
is "--vpp-size with --format optrace: exit 2" 2 $?
is "... says where it belongs" "ppbatch: error: --pp-size and --vpp-size go with --format pp-timer" "$(cat err.txt)"
ok_if "... and nothing was imported" test ! -e op.db

# --format kineto is the default mode, named.
ppbatch --format kineto --input a -j 2 --quiet
is "--format kineto analyses the tree: exit 0" 0 $?
is "... both ranks stored" 2 "$(sql a/pptrace.db "SELECT count(*) FROM ranks WHERE status = 'ok'")"
done_testing
