#!/bin/bash
# ppgen's op traces (.truth/optrace.csv and optrace-meta.yaml, written from
# the simulated jobs independently of the analysis) through the commands:
# `ppbatch --format optrace` then `ppagg --db`. A --straggler rank comes
# first with verdict worker, a slow last stage gives verdict stage, an even
# job verdict none, each read from the views.
source "$PP_ROOT/tests/lib.sh"
whatif() { # whatif NAME [ppgen options]: the job's whatif row and top worker
	local name=$1
	shift
	PATH="$PP_FAST_BIN:$PATH" ppgen --out "$name" --pp 4 --dp 2 -m 8 --layers 2 \
		--iterations 3,4 -q "$@" || return 1
	ppbatch --format optrace --input "$name/.truth/optrace.csv" \
		--meta "$name/.truth/optrace-meta.yaml" --db "$name.db" -q || return 1
	ppagg --db "$name.db" --out "$name.out" --no-render -q || return 1
	sql "$name.db" "SELECT verdict, (SELECT rank || ' ' || dp_rank || ' ' || stage
		FROM whatif_workers LIMIT 1), slowdown >= 1.03 FROM whatif"
}
is "a 1.8x slow rank 5 (dp 1, stage 2): verdict worker, rank 5 first" "worker|5 1 2|1" \
	"$(whatif straggler --straggler 5:1.8)"
is "a 1.6x slow last stage: verdict stage, a stage-3 worker first" "stage|6 0 3|1" \
	"$(whatif slow-last --slow-stage last:1.6)"
is "an even job: verdict none, S below 1.03" "none|0 0 0|0" "$(whatif even)"
is "... its workers without ratios" "8|0" \
	"$(sql even.db "SELECT count(*), count(slowdown) FROM whatif_workers")"
done_testing
