#!/bin/bash
# The stable interface (docs/contracts.md §3): every view's columns, in
# order, are the ones the contract lists, the why views included; on a
# database ppbatch made they exist and hold nothing until the why analysis
# stores its rows. ppgen's why truth on an expert-parallel job: the
# all-to-all's SendRecv kernels are collective instances of the expert group,
# never pipeline transfers (every p2p row's peer is in the rank's pipeline).
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --tp 2 --pp 2 --dp 2 --ep 2 -m 4 --layers 1 -q &&
	"$PP_FAST_BIN/ppbatch" --input j -q
is "generated and stored" 0 $?

cat >contract.py <<'PY'
import re, sqlite3, sys
text = open(sys.argv[1]).read()
block = text[text.index("## 3."):]
block = block[block.index("```") + 3:]
block = block[:block.index("```")]
want = {m.group(1): [c.strip() for c in m.group(2).split(",")]
        for m in re.finditer(r"(\w+)\(([^)]*)\)", block)}
db = sqlite3.connect(sys.argv[2])
views = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'view'")]
bad = 0
for v in sorted(set(views) | set(want)):
    got = [r[1] for r in db.execute("PRAGMA table_info(%s)" % v)] if v in views else None
    if got != want.get(v):
        print("%s: contract %s, database %s" % (v, want.get(v), got))
        bad = 1
print("%d views" % len(views))
sys.exit(bad)
PY
ok_if "every view's columns are the contract's (docs/contracts.md §3)" \
	python3 contract.py "$PP_ROOT/docs/contracts.md" j/pptrace.db
is "the why views are there, empty until the analysis stores its rows" "0|0|0|0|0|0|0|0|0" \
	"$(sql j/pptrace.db "SELECT (SELECT count(*) FROM p2p), (SELECT count(*) FROM p2p_kernels),
	(SELECT count(*) FROM p2p_bubbles), (SELECT count(*) FROM p2p_hops),
	(SELECT count(*) FROM collectives), (SELECT count(*) FROM collective_ranks),
	(SELECT count(*) FROM critical_path), (SELECT count(*) FROM rank_clocks),
	(SELECT count(*) FROM why)")"

ok_if "the expert group's all-to-all kernels are traced as SendRecv" \
	grep -q '"name": "ncclDevKernel_SendRecv[^"]*", .*"Collective name": "all_to_all"' \
	j/iteration_15/rank_0000_iter_15.pt.trace.json
ok_if "... and are instances of the expert group in the why truth" \
	grep -q '^15,EXPERT_MODEL_PARALLEL_GROUP,' j/.truth/collectives.csv
cat >peers.py <<'PY'
import csv, re, sys
topo = open(sys.argv[1]).read()
sec = topo[topo.index("PIPELINE PARALLEL"):]
sec = sec[:sec.index("\n\n")] if "\n\n" in sec else sec
pipe = {}
for m in re.finditer(r"Group \d+: \[([^\]]*)\]", sec):
    ranks = [int(x) for x in m.group(1).split(",")]
    for r in ranks:
        pipe[r] = set(ranks)
rows = list(csv.DictReader(open(sys.argv[2])))
bad = [r for r in rows if int(r["peer_rank"]) not in pipe[int(r["rank"])]]
print(len(rows), "transfers,", len(bad), "with a peer outside the rank's pipeline")
sys.exit(1 if bad or not rows else 0)
PY
ok_if "every pipeline transfer's peer is in the rank's pipeline" \
	python3 peers.py j/.truth/topology.txt j/.truth/p2p.csv
ok_if "the truth holds together with the traces (truthcheck.py)" \
	python3 "$PP_ROOT/tests/tools/truthcheck.py" j
done_testing
