#!/bin/bash
# ppbatch --inspect's survey on a trace whose backward thread is only found
# by its launches inside backward-step windows (no fwdbwd flows, no
# pt_autograd_* thread): the survey reads the file twice and agrees with
# --full; from a pipe (no second reading possible) the whole classifier
# runs instead.
source "$PP_ROOT/tests/lib.sh"
cat >t.json <<'JSON'
{"traceEvents": [
 {"ph": "X", "cat": "python_function", "name": "forward_step", "pid": 1, "tid": 1, "ts": 100, "dur": 100},
 {"ph": "X", "cat": "python_function", "name": "backward_step", "pid": 1, "tid": 1, "ts": 1000, "dur": 1000},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 150, "dur": 5, "args": {"correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 3, "ts": 1100, "dur": 5, "args": {"correlation": 2}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 3, "ts": 1200, "dur": 5, "args": {"correlation": 3}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 4, "ts": 1300, "dur": 5, "args": {"correlation": 4}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 5000, "dur": 10, "args": {"correlation": 1, "stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 5010, "dur": 10, "args": {"correlation": 2, "stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 5020, "dur": 10, "args": {"correlation": 3, "stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 5030, "dur": 10, "args": {"correlation": 4, "stream": 7}}
]}
JSON
roles='import json,sys
c = json.load(sys.stdin)["classification"]
print(c["survey"], c["mode"], c["backward_thread"]["tid"], c["backward_thread"]["rule"], c["launches"], c["steps"])'
ppbatch --inspect --json t.json >s.json
is "survey: exit 0" 0 "$?"
is "survey: backward thread by launches (two readings)" "True megatron 3 bwd_launches 4 2" \
	"$(python3 -c "$roles" <s.json)"
ppbatch --inspect --full --json t.json >f.json
is "--full: the same roles" "False megatron 3 bwd_launches 4 2" "$(python3 -c "$roles" <f.json)"
cat t.json | ppbatch --inspect --json /dev/stdin >p.json 2>p.err
is "from a pipe: exit 0" 0 "$?"
is "from a pipe: the whole classifier, same roles" "False megatron 3 bwd_launches 4 2" \
	"$(python3 -c "$roles" <p.json)"
is "from a pipe: no diagnostics" "" "$(cat p.err)"
ppbatch --inspect t.json >s.txt
ok_if "text: the survey's backward thread and rule" \
	grep -q 'backward thread: pid 1 tid 3 "" (rule: bwd_launches)' s.txt
done_testing
