#!/usr/bin/env python3
"""mkhostile.py — build a trace tree of hostile and broken inputs.

    mkhostile.py BASE [--small]

Writes BASE/iteration_1/ with two valid traces (ranks 0 and 99, first and
last in walk order) and one hostile input per rank in between, plus
BASE/cases.tsv: one line per case, "rank<TAB>expect<TAB>file name<TAB>what"
(file names are written with Python's repr so a newline in a name survives).

expect is one of
  fail  the file must be reported: a `ranks` row with status failed and a
        non-empty error, or (for a file that is not a regular file) an error
        line naming it on stderr;
  ok    the file is valid despite its oddity: status ok;
  any   either outcome, but a failure must carry a specific error.
--small shrinks the 10 MB name and the 10^6-deep nesting (for valgrind).
"""
import gzip
import json
import os
import stat
import sys

BASE_NS = 1_700_000_000_000_000_000


def trace(rank, kname="sm80_xmma_gemm_bf16", extra_events=(), corr=1, head="", raw=None):
    """A minimal valid Kineto trace: one forward_step, one launch, one kernel.
    raw: bytes put verbatim between the quotes of the kernel's name."""
    ev = [
        {"ph": "X", "cat": "python_function", "pid": 10, "tid": 10, "ts": 100, "dur": 1000,
         "name": "megatron/core/pipeline_parallel/schedules.py(412): forward_step"},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10,
         "ts": 200, "dur": 5, "args": {"correlation": corr}},
        {"ph": "X", "cat": "kernel", "name": "@@KNAME@@" if raw else kname, "pid": 0, "tid": 7, "ts": 300,
         "dur": 100, "args": {"correlation": corr, "stream": 7, "device": 0}},
    ]
    body = ",\n".join([json.dumps(e) for e in ev] + list(extra_events))
    out = (head + '{"schemaVersion": 1, "distributedInfo": {"rank": %d, "world_size": 100},\n'
           '"baseTimeNanoseconds": %d,\n"traceEvents": [\n%s\n]}\n'
           % (rank, BASE_NS, body)).encode()
    return out.replace(b"@@KNAME@@", raw) if raw else out


def main():
    base = sys.argv[1]
    small = "--small" in sys.argv[2:]
    it = os.path.join(base, "iteration_1")
    os.makedirs(it, exist_ok=True)
    cases = []

    def name(rank, suffix=".pt.trace.json"):
        return "rank_%04d_iter_1%s" % (rank, suffix)

    def put(rank, expect, what, data, fname=None):
        fname = fname or name(rank)
        with open(os.path.join(it, fname), "wb") as f:
            f.write(data)
        cases.append((rank, expect, fname, what))
        return fname

    put(0, "ok", "valid trace (first)", trace(0))
    put(99, "ok", "valid trace, gzip, last",
        gzip.compress(trace(99)), name(99, ".pt.trace.json.gz"))

    put(1, "fail", "zero-byte file", b"")
    d = os.path.join(it, name(2))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "inside.json"), "wb") as f:
        f.write(trace(2))
    cases.append((2, "fail", name(2), "a directory named like a trace"))
    os.symlink(name(3), os.path.join(it, name(3)))
    cases.append((3, "fail", name(3), "symlink loop (to itself)"))
    os.symlink("does-not-exist.json", os.path.join(it, name(4)))
    cases.append((4, "fail", name(4), "dangling symlink"))
    f5 = put(5, "fail", "unreadable file (mode 000)", trace(5))
    os.chmod(os.path.join(it, f5), 0)
    put(6, "fail", "not JSON (text and binary)", b"this is not json\x00\xff\xfe\n")
    put(7, "fail", "JSON that is not a trace (object)", b'{"hello": [1, 2, 3]}')
    put(8, "fail", "JSON that is not a trace (array)", b"[1, 2, 3]")
    big = (1 << 20) if small else (10 << 20)
    put(9, "any", "%d MB kernel name" % (big >> 20), trace(9, kname="k" * big))
    depth = 10_000 if small else 1_000_000
    put(10, "any", "%d-deep array nesting" % depth,
        b'{"traceEvents": [' + b"[" * depth + b"]" * depth + b"]}")
    put(11, "any", "%d-deep object nesting in args" % depth,
        trace(11, extra_events=[
            '{"ph":"i","name":"deep","pid":1,"tid":1,"ts":1,"args":' +
            '{"a":' * depth + "1" + "}" * depth + "}"]))
    put(12, "any", "ids and numbers above 2^64",
        trace(12, corr=2, extra_events=[
            '{"ph":"X","cat":"kernel","name":"big","pid":18446744073709551617,'
            '"tid":99999999999999999999999,"ts":300,"dur":1,"args":{"correlation":'
            '18446744073709551616,"stream":340282366920938463463374607431768211456}}',
            '{"ph":"X","cat":"kernel","name":"hugets","pid":0,"tid":7,'
            '"ts":99999999999999999999999999,"dur":1e308,"args":{"correlation":2}}']))
    put(13, "ok", "names with quotes, newlines, control bytes, invalid UTF-8",
        trace(13, raw=b'q\\"uo\\\\te\\nnew\nline\ttab\x01ctl \xff\xfe\xc0\xaf bad utf8 '
              b'\\ud800 \'; DROP TABLE kernels; -- \\u0000 nul'))
    t14 = trace(14)
    put(14, "fail", "truncated mid-event", t14[: len(t14) * 2 // 3])
    put(15, "fail", "gzip magic, corrupt body",
        b"\x1f\x8b\x08\x00" + os.urandom(0) + b"corrupt" * 100, name(15, ".pt.trace.json.gz"))
    g16 = gzip.compress(trace(16))
    put(16, "fail", "truncated gzip", g16[: len(g16) // 2], name(16, ".pt.trace.json.gz"))
    put(17, "ok", "path with spaces, quotes and a newline", trace(17),
        "rank_0017_iter_1 it's \"q\" $(x) \n;.pt.trace.json")
    fifo = os.path.join(it, name(18))
    os.mkfifo(fifo)
    cases.append((18, "fail", name(18), "a FIFO named like a trace (must not hang)"))
    put(19, "ok", "UTF-8 BOM", trace(19, head="\ufeff"))
    put(20, "ok", "NaN, Infinity and null in args",
        trace(20, extra_events=['{"ph":"i","name":"n","pid":1,"tid":1,"ts":5,"args":'
                                '{"a":NaN,"b":Infinity,"c":-Infinity,"d":null}}']))
    put(21, "any", "negative dur and ts",
        trace(21, extra_events=['{"ph":"X","cat":"kernel","name":"neg","pid":0,"tid":7,'
                                '"ts":-5,"dur":-10,"args":{"correlation":1}}']))
    put(22, "fail", "only an opening brace", b"{")
    put(23, "fail", "traceEvents is not an array",
        b'{"traceEvents": {"ph": "X"}, "schemaVersion": 1}')
    put(24, "any", "a 1e6-digit number",
        trace(24, extra_events=['{"ph":"X","cat":"kernel","name":"long","pid":0,"tid":7,'
                                '"ts":' + "9" * (10_000 if small else 1_000_000) +
                                ',"dur":1,"args":{"correlation":1}}']))
    put(25, "any", "traceEvents twice, duplicate keys",
        trace(25).replace(b'"traceEvents"', b'"traceEvents": [], "traceEvents"', 1))
    put(26, "any", "garbage after the top-level object", trace(26) + b"{]garbage")
    put(27, "ok", "escaped unicode and a raw NUL-free control char in a name",
        trace(27, raw=b"\\u00e9\\u4e2d\\ud83d\\ude00 k\x7f \xc3\xa9"))
    put(28, "any", "events with wrong value types",
        trace(28, extra_events=['{"ph":7,"cat":[],"name":{},"pid":null,"tid":true,'
                                '"ts":"x","dur":{},"args":[]}', '"string event"', "[]"]))
    put(29, "fail", "gzip of non-JSON", gzip.compress(b"\x00" * 1000), name(29, ".pt.trace.json.gz"))

    with open(os.path.join(base, "cases.tsv"), "w") as f:
        for rank, expect, fname, what in cases:
            f.write("%d\t%s\t%r\t%s\n" % (rank, expect, fname, what))


if __name__ == "__main__":
    main()
