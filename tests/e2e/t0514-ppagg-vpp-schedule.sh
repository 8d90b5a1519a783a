#!/bin/bash
# One VPP for the whole report (docs/ppagg.md "VPP"): when agg.vpp is wrong
# and the schedule fits exactly one size, that size labels the steps, sizes
# the ideal pipelines and labels the what-if's ops, and a warning names both
# values and the evidence; when agg.vpp is right nothing is said.
# ppgen (pp 4 x vpp 2, 8 micro-batches) -> ppbatch -> ppagg with agg.vpp = 4,
# then 2.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out g --pp 4 --vpp 2 --dp 2 -m 8 --layers 1 --kernels-per-layer 2 -q &&
	"$PP_FAST_BIN/ppbatch" --input g --quiet
is "vpp-2 job generated and stored" 0 "$?"
fwd_labels() { # the chunk:micro-batch of rank 3's forward steps
	awk -F, '$1 == "fwd" { printf "%s%s:%s", s, $14, $15; s = " " }' \
		g/pptrace/iteration_15/rank_3/steps.csv
}
numbers() { # what the VPP decides in the database
	sql g/pptrace.db "SELECT (SELECT vpp FROM whatif),
		(SELECT group_concat(DISTINCT vpp) FROM agg_topology),
		(SELECT group_concat(ideal_ns, ' ') FROM pipelines)"
}

printf '[agg]\nvpp = 4\n' >wrong.ini
ppagg --base-folder g --config wrong.ini --no-render --quiet 2>wrong.err
is "agg.vpp = 4 on a vpp-2 job: exit 0" 0 "$?"
ok_if "... a warning names both values and the evidence" grep -q \
	"warning: vpp: agg.vpp = 4 overridden by the schedule's vpp 2: the forward steps before the first backward fit vpp 2 only, on all 8 ranks (4 stages; e.g. rank 0, stage 0: " \
	wrong.err
ok_if "... the report says so" grep -q "VPP 2, read off the schedule: agg.vpp = 4 overridden" \
	g/pptrace/index.html
wrong_labels=$(fwd_labels)
wrong_numbers=$(numbers)
is "... the what-if and the ops view use 2" "2|2" "$(echo "$wrong_numbers" | cut -d'|' -f1,2)"
is "... both replicas have an ideal pipeline (compared below)" 2 \
	"$(echo "$wrong_numbers" | cut -d'|' -f3 | wc -w)"

printf '[agg]\nvpp = 2\n' >right.ini
ppagg --base-folder g --config right.ini --no-render --quiet 2>right.err
is "agg.vpp = 2: exit 0" 0 "$?"
is "... no vpp warning" "" "$(grep vpp right.err)"
ok_if "... the report says the schedule agrees" grep -q \
	"VPP 2 (agg.vpp; the forward steps before the first backward fit it on 8 ranks (4 stages))" \
	g/pptrace/index.html
is "... the step labels are the overridden run's" "$(fwd_labels)" "$wrong_labels"
is "... and so are the what-if's VPP and the ideal pipelines" "$(numbers)" "$wrong_numbers"
is "rank 3 (stage 3): interleaved labels" "0:0 0:1 0:2 0:3 1:0 1:1 1:2 1:3 0:4 0:5 0:6 0:7 1:4 1:5 1:6 1:7" \
	"$(fwd_labels)"
done_testing
