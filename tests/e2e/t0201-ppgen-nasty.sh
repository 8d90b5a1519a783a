#!/bin/bash
# ppgen --nasty: each real-world quirk is really in the file, the quirks that
# only change the text leave the truth unchanged, and a correct reader
# (tests/tools/truthcheck.py) still recomputes the truth exactly.
source "$PP_ROOT/tests/lib.sh"
TC="python3 $PP_ROOT/tests/tools/truthcheck.py"
GEN="ppgen --tp 2 --pp 2 --dp 2 --microbatches 4 --iterations 5 --layers 2 --quiet"
f=iteration_5/rank_0000_iter_5.pt.trace.json

ok_if "plain run" $GEN --out plain
text="string-ids,unsorted,unicode,control-chars,big-ids,bom,whitespace,nan,long-names"
ok_if "text-only quirks" $GEN --out text --nasty $text
ok_if "text-only quirks keep the truth" diff -r plain/.truth text/.truth
ok_if "truthcheck reads the quirky text" $TC text
is "BOM" "efbbbf" "$(head -c 3 text/$f | od -An -tx1 | tr -d ' \n')"
ok_if "string pids" grep -q '"pid": "Spans"' text/$f
ok_if "escaped unicode with a surrogate pair" grep -q 'ud83d\\ude80' text/$f
ok_if "escaped ASCII in python names" grep -q 'megatr\\u006fn/' text/$f
ok_if "raw control characters" grep -q $'\x01\t\x1f' text/$f
ok_if "ids above 2^63" grep -q '"Ev Idx": 92233720368547758' text/$f
ok_if "NaN and Infinity tokens" grep -q '"est. achieved occupancy %": NaN' text/$f
ok_if "CRLF separators" grep -q $'\r$' text/$f
ok_if "kernel names of several KB" grep -qE '"name": "[^"]{6000,}' text/$f
first=$(grep -m1 -o '"cat": "kernel", "pid": 0, "tid": [0-9]*, "ts": [0-9.]*' text/$f | sed 's/.*"ts": //')
last=$(grep -o '"cat": "kernel", "pid": 0, "tid": [0-9]*, "ts": [0-9.]*' text/$f | tail -1 | sed 's/.*"ts": //')
ok_if "kernels not in time order" awk -v a="$first" -v b="$last" 'BEGIN {exit !(a > b)}'

ok_if "orphans and zero durations (they are in the truth)" $GEN --out model --nasty orphans,zero-dur --gzip
ok_if "truthcheck agrees with orphans and zero durations" $TC model
ok_if "zero-duration kernels" bash -c "zcat model/$f.gz | grep -q '\"dur\": 0, \"name\": \"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add'"
ok_if "more orphans lower the coverage" awk -F, 'NR==FNR {if (FNR>1) c[$2]=$12; next} FNR>1 && !($12 < c[$2]) {bad=1} END {exit bad}' \
	plain/.truth/ranks.csv model/.truth/ranks.csv

ok_if "truncate" $GEN --out cut --nasty truncate
ok_if "truncated truth describes the whole trace" diff -r plain/.truth cut/.truth
ok_if "truncated file is not valid JSON" bash -c "! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' cut/$f 2>/dev/null"
ok_if "truncated file ends mid-event" bash -c "tail -c 1 cut/$f | grep -qv '}'"
ok_if "--nasty all" $GEN --out all --nasty all
ok_if "truthcheck agrees on --nasty all" $TC all
done_testing
