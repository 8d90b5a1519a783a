#!/bin/bash
# ppsim --from-db: the schedule advisor alone on a database (a Primus import
# of tests/fixtures/primus/pp2-old): its table on stdout, the same numbers as
# ppagg's advice view, nothing written to the database; --iterations
# narrows what is measured; ppsim's exit statuses (2 usage, 3 no database or
# no pipeline).
source "$PP_ROOT/tests/lib.sh"
F="$PP_ROOT/tests/fixtures/primus"
ppbatch --format primus --input "$F/pp2-old" --layers 8 --db p.db >/dev/null
is "import: exit 0" 0 $?
before=$(sha256sum p.db)
ppsim --from-db p.db >t.txt 2>t.err
is "ppsim --from-db: exit 0" 0 $?
is "... the database untouched" "$before" "$(sha256sum p.db)"
is "... the header" "advice for p.db" "$(head -n 1 t.txt)"
ok_if "... the inputs measured: iterations 2-3" grep -q '^inputs: primus: 2 iterations (2-3)' t.txt
ok_if "... the calibration line" grep -q '^calibration: current (1f1b), PP 2, 4 micro-batches: replay .* ms against the measured 15.2 ms: ' t.txt
ok_if "... a row per schedule (interleave, VPP 2)" grep -q '^interleave, VPP 2 ' t.txt
ppagg --db p.db --no-render -q --out rep
cur=$(awk '/^current \(1f1b\)/ { print $3 }' t.txt)
is "... the current row as ppagg's advice view" "$(sql p.db "SELECT printf('%.1f', step_ns / 1e6) FROM advice WHERE row = 0")" "$cur"

ppsim --from-db p.db --iterations 3 >t3.txt
is "--iterations 3: exit 0" 0 $?
ok_if "... one iteration measured" grep -q '^inputs: primus: 1 iteration (3-3)' t3.txt

ppsim --from-db p.db --devices 4 >/dev/null 2>u.err
is "a simulation option with --from-db: exit 2" 2 $?
ok_if "... says which options go with it" grep -q 'takes only --iterations and --config' u.err
ppsim --from-db missing.db >/dev/null 2>m.err
is "no database: exit 3" 3 $?
ok_if "... says so" grep -q "cannot open database 'missing.db'" m.err
"$PP_FAST_BIN/ppgen" --out flat --pp 1 --dp 2 --iterations 1 --quiet && ppbatch --input flat -q
ppsim --from-db flat/pptrace.db >/dev/null 2>f.err
is "a job without a pipeline: exit 3" 3 $?
is "... one line why" "ppsim: error: no advice for 'flat/pptrace.db': no pipeline (PP 1): nothing to schedule" "$(cat f.err)"
printf '[advise]\nmin_gain = -1\n' >bad.ini
ppsim --from-db p.db --config bad.ini >/dev/null 2>b.err
is "a bad [advise] value: exit 2" 2 $?
ok_if "... names the key" grep -q 'min_gain' b.err
done_testing
