#!/bin/bash
# ppbatch on every real trace of $SHARED/data/real: each is stored (generic
# mode where it is not Megatron) and its per-category sums equal the sum of
# its GPU event durations, computed independently from the JSON text by
# python. Which categories are GPU work is not restated here: `ppbatch
# --inspect --json` lists them (gpu_categories: the classifier's one rule,
# classify_gpu_event()), and python's count of those events must equal
# --inspect's and the database's.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/e2e/lib-ppbatch.sh"
REAL=$SHARED/data/real
[ -d "$REAL" ] || { skip "real traces" "no folder $REAL (set PP_SHARED)"; done_testing; exit; }

# One folder per file, so that (iteration, rank) identifies a trace.
n=0
while read -r f; do
	mkdir -p "tree/iteration_$n"
	ln -s "$f" "tree/iteration_$n/"
	n=$((n + 1))
done < <(find "$REAL" -type f | LC_ALL=C sort)
ppbatch --input tree --pattern '*' -j 2 --quiet
rc=$?
ok_if "ppbatch exits 0 or 1" test "$rc" -le 1
db=tree/pptrace.db
is "every file has a ranks row" "$n" "$(sql $db "SELECT count(*) FROM ranks")"
is "every real trace is ok" "" "$(sql $db "SELECT path || ': ' || error FROM ranks WHERE status != 'ok'")"
is "per-category sums equal kernel sums" "" \
	"$(sql $db "SELECT k.iteration FROM (SELECT iteration, sum(dur_ns) s, count(*) n FROM kernels GROUP BY 1) k
		JOIN (SELECT iteration, sum(sum_ns) s, sum(kernels) n FROM category_stats WHERE category NOT LIKE '%_recompute' GROUP BY 1) c
		USING (iteration) WHERE c.s != k.s OR c.n != k.n")"

# Independent sums: python's json module over the raw files, over the
# categories --inspect names as GPU work.
sql $db "SELECT path FROM ranks ORDER BY iteration" >paths.txt
xargs -d '\n' ppbatch --inspect --json --no-classify <paths.txt >inspect.jsonl 2>/dev/null
is "--inspect reads every file" "$n" "$(wc -l <inspect.jsonl)"
cat >sums.py <<'PY'
import gzip, json, sys
from decimal import Decimal
def ns(v):
    return int(Decimal(str(v)) * 1000) if not isinstance(v, str) else int(Decimal(v) * 1000)
gpu_cats = {}
for line in open('inspect.jsonl'):
    d = json.loads(line)
    gpu_cats[d['file']] = (set(d['gpu_categories']), d['gpu_events'])
for line in sys.stdin:
    it, path = line.rstrip('\n').split('\t')
    cats, inspect_n = gpu_cats[path]
    raw = open(path, 'rb').read()
    if raw[:2] == b'\x1f\x8b':
        raw = gzip.decompress(raw)
    try:
        doc = json.loads(raw.decode('utf-8-sig', 'replace'), strict=False,
                         parse_float=Decimal)
    except Exception:
        continue  # python cannot read it: covered by the SQL check above
    evs = doc.get('traceEvents', []) if isinstance(doc, dict) else doc
    tot = cnt = 0
    for e in evs:
        if isinstance(e, dict) and e.get('ph') == 'X' and str(e.get('cat', '')).lower() in cats:
            tot += ns(e.get('dur', 0)); cnt += 1
    if cnt != inspect_n:
        print(f"{path}: python counts {cnt} GPU events, --inspect {inspect_n}", file=sys.stderr)
    print(f"{it}|{cnt}|{tot}")
PY
sql -separator '	' $db "SELECT iteration, path FROM ranks ORDER BY iteration" | python3 sums.py 2>sums.err | sort >want.txt
is "python and --inspect count the same GPU events" "" "$(cat sums.err)"
sql $db "SELECT iteration, sum(kernels), sum(sum_ns) FROM category_stats WHERE category NOT LIKE '%_recompute' GROUP BY 1" >got0.txt
# ranks without GPU events have no category rows
sql $db "SELECT iteration || '|0|0' FROM ranks WHERE iteration NOT IN (SELECT iteration FROM category_stats)" >>got0.txt
cut -d'|' -f1 want.txt | while read -r it; do grep "^$it|" got0.txt; done | sort >got.txt
ok_if "python read most files" test "$(wc -l <want.txt)" -ge $((n * 3 / 4))
ok_if "sums equal the python sums of GPU event durations" diff want.txt got.txt
is "generic mode where not Megatron" "" "$(sql $db "SELECT path FROM ranks WHERE status = 'ok' AND mode IS NULL")"
done_testing
