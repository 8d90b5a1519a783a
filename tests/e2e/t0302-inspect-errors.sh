#!/bin/bash
# ppbatch --inspect on broken input: exact error messages with byte offsets,
# exit status 1, --salvage keeping the complete events of a truncated trace.
source "$PP_ROOT/tests/lib.sh"

printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1.5,"dur":2},\n{"ph":"X","cat":"cpu_op","name":"c","ts":2,"dur":1},\n{"ph":"X","name":"cut' >cut.json
printf 'not json\n' >text.json
printf '{"displayTimeUnit":"ns"}' >notrace.json
printf '{"traceEvents":[{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"main"}},{"ph":"X","cat":"Kernel","name":"ncclDevKernel_x","pid":0,"tid":7,"ts":10,"dur":5},{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":7,"ts":20,"dur":1},{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":1,"dur":30}],"distributedInfo":{"rank":3,"world_size":8,"nccl_version":"2.21.5"},"baseTimeNanoseconds":1000000000}' >good.json
gzip -c good.json >good.json.gz
head -c 150 good.json.gz >cutgz.json.gz

ppbatch --inspect --json cut.json >out.json 2>err.txt
is "truncated: exit 1" 1 "$?"
is "truncated: message with offset and complete events" \
	'{"ok":false,"events":2,"error":"cut.json: byte 145: file ends inside an event (at byte 122) after 2 complete events, expected the rest of the trace"}' \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({k:d[k] for k in ("ok","events","error")}, separators=(",",":")))' out.json)"

ppbatch --inspect --json --salvage cut.json >out.json
is "salvage: exit 0" 0 "$?"
is "salvage: ok, truncated, 2 events, 1 kernel" "True True 2 1" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["ok"], d["truncated"], d["events"], d["kernels"])' out.json)"

ppbatch --inspect text.json >out.txt 2>err.txt
is "non-JSON: exit 1" 1 "$?"
is "non-JSON: message" "ppbatch: error: text.json: byte 0: found 'n', expected '{' opening a trace object" "$(cat err.txt)"

ppbatch --inspect notrace.json >out.txt 2>err.txt
is "JSON that is not a trace: exit 1" 1 "$?"
is "JSON that is not a trace: message" "ppbatch: error: notrace.json: byte 24: no traceEvents key in the trace object, expected a Kineto trace" "$(cat err.txt)"

ppbatch --inspect --json good.json good.json.gz missing.json text.json >out.jsonl 2>err.txt
is "mixed files: exit 1" 1 "$?"
is "mixed files: one line each, ok per file" "True True False False" \
	"$(python3 -c 'import json,sys; print(*[json.loads(l)["ok"] for l in open(sys.argv[1])])' out.jsonl)"
is "missing file: message" "missing.json: byte 0: cannot open: No such file or directory, expected a readable file" \
	"$(sed -n 3p out.jsonl | python3 -c 'import json,sys; print(json.load(sys.stdin)["error"])')"
is "gzip and plain read the same" "same" \
	"$(python3 -c '
import json,sys
a,b=[json.loads(l) for l in open(sys.argv[1])][:2]
keys=("events","kernels","gpu_events","kernel_types","by_ph","by_cat","rank","world_size","nccl_version","start_ns","end_ns","threads")
print("same" if all(a[k]==b[k] for k in keys) and b["gzip"] and not a["gzip"] else (a,b))' out.jsonl)"
is "good: facts" "3 8 2.21.5 1000001000 1000031000 {'comp': 0, 'comm': 1, 'mem': 1} {'M': 1, 'X': 3}" \
	"$(sed -n 1p out.jsonl | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["rank"], d["world_size"], d["nccl_version"], d["start_ns"], d["end_ns"], d["kernel_types"], d["by_ph"])')"

ppbatch --inspect cutgz.json.gz >out.txt 2>err.txt
is "truncated gzip: exit 1" 1 "$?"
ok_if "truncated gzip: says so" grep -q 'gzip stream ends' err.txt

ppbatch --inspect good.json >out.txt
is "text: kernel types" "  kernel types comp 0, comm 1, mem 1" "$(grep 'kernel types' out.txt)"
is "text: thread with its name" "    pid 1          tid 2                     1 events  main" "$(grep 'tid 2 ' out.txt)"

# Two categories whose first 8 bytes with the length mixed in and last 8
# bytes are the same (inspect's category cache must compare the length).
printf '{"traceEvents":[{"ph":"i","cat":"xaaaaaabz","ts":1},{"ph":"i","cat":"xaaaaaaabz","ts":2}]}' >cats.json
ppbatch --inspect --no-classify cats.json >out.txt
is "categories alike in head and tail stay apart" "  categories  xaaaaaaabz 1, xaaaaaabz 1" \
	"$(grep categories out.txt)"

# Two kernel names alike in length and in the bytes that inspect hashes
# (head, middle, tail), one of them NCCL's: each keeps its own type.
a=kkkkkkkkx_nccl_xmmmmmmmmpppppppptttttttt b=kkkkkkkkxxxxxxxxmmmmmmmmpppppppptttttttt
k() { printf '{"ph":"X","cat":"kernel","name":"%s","ts":%d,"dur":1}' "$1" "$2"; }
printf '{"traceEvents":[%s,%s,%s,%s]}' "$(k $a 1)" "$(k $b 2)" "$(k $a 3)" "$(k $b 4)" >names.json
ppbatch --inspect --no-classify names.json >out.txt
is "kernel names alike in what is hashed keep their types" "  kernel types comp 2, comm 2, mem 0" \
	"$(grep 'kernel types' out.txt)"

ppbatch --inspect >out.txt 2>err.txt
is "no file: usage error 2" 2 "$?"
done_testing
