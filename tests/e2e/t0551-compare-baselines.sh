#!/bin/bash
# The baseline of ppagg --compare (docs/compare.md "The baseline"): a real
# version-3 file (tests/fixtures/db-v3) compares what its version holds, is
# read without a byte or a file of its folder changed, and says what it
# lacks; a version-6 file (made older) compares rank by rank; a baseline
# ppagg never aggregated compares the job's totals; a missing file, this
# run's own database, an iteration the baseline lacks and a newer version
# are not compared (exit 1, one warning); a run without --compare leaves no
# comparison behind (views, CSVs, report); a bad [compare] value is a usage
# error.
source "$PP_ROOT/tests/lib.sh"

# The job of the fixture (its README), made by today's ppgen, aggregated.
"$PP_FAST_BIN/ppgen" --out tree --pp 2 --microbatches 2 --layers 2 --iterations 1 --quiet &&
	ppbatch --input tree -q && ppagg --base-folder tree --no-render -q ||
	{ ok_if "ppgen, ppbatch, ppagg" false; done_testing; exit; }

# 1. A version-3 baseline in a folder of its own, which must not change.
mkdir v3 && tar -xzf "$PP_ROOT/tests/fixtures/db-v3/db-v3.tar.gz" -C v3 && cp v3/pptrace.db v3.orig &&
	chmod 555 v3
ppagg --base-folder tree --no-render --compare v3/pptrace.db >out 2>err
is "a version-3 baseline: exit 0" 0 $?
is "... read as version 3, iteration 1 against 1" "3|1|1" \
	"$(sql tree/pptrace.db "SELECT baseline_version, base_iterations, new_iterations FROM comparison")"
ok_if "... its file unchanged" cmp -s v3.orig v3/pptrace.db
is "... nothing added to its folder (no -wal, no -shm)" "pptrace.db" "$(ls v3)"
is "... still version 3" 3 "$(sql v3/pptrace.db "PRAGMA user_version")"
ok_if "... says what it lacks: the what-if" \
	grep -q "^ppagg: compare: note: the baseline: schema version 3 has no what-if: S is not compared$" err
ok_if "... the ops" grep -q "^ppagg: compare: note: the baseline: schema version 3 has no ops: op types not compared$" err
ok_if "... the shape" grep -q "records no shape (agg_shape): pp, dp and the ranks per cell come from its topology rows, the VPP and micro-batches are not known" err
is "... and lists it in comparison.missing" 4 "$(sql tree/pptrace.db "SELECT length(missing) - length(replace(missing, char(10), ''))
	FROM comparison")"
is "... step and bubble compared" "step_ns|bubble" \
	"$(sql tree/pptrace.db "SELECT group_concat(metric, '|') FROM compare_summary WHERE metric IN ('step_ns', 'bubble')")"
is "... categories by stage (its pp_groups place the ranks)" "0|1" \
	"$(sql tree/pptrace.db "SELECT group_concat(DISTINCT stage) FROM compare_categories" | tr ',' '|')"
is "... no op type, no rank by rank (its dp is not known)" "0|0" \
	"$(sql tree/pptrace.db "SELECT (SELECT count(*) FROM compare_optypes), (SELECT count(*) FROM compare_ranks)")"
chmod 755 v3

# 2. A version-6 file: no agg_shape (sizes from agg_topology), ranks compared.
cp tree/pptrace.db v6.db
sql v6.db "DROP VIEW comparison; DROP VIEW compare_summary; DROP VIEW compare_categories;
	DROP VIEW compare_optypes; DROP VIEW compare_groups; DROP VIEW compare_ranks;
	DROP TABLE compare_run; DROP TABLE compare_summary_t; DROP TABLE compare_key_t;
	DROP TABLE compare_rank_t; DROP TABLE agg_shape; PRAGMA user_version = 6" ||
	ok_if "made a version-6 file" false
ppagg --base-folder tree --no-render -q --compare v6.db
is "a version-6 baseline of the same run: exit 0" 0 $?
is "... version 6, every rank compared, nothing flagged" "6|2|0" \
	"$(sql tree/pptrace.db "SELECT baseline_version, (SELECT count(*) FROM compare_ranks),
		(SELECT count(*) FROM compare_ranks WHERE flagged) FROM comparison")"
is "... everything within noise" "Step +0.0 % (noise ±3.0 %): everything within noise." \
	"$(sql tree/pptrace.db "SELECT sentence FROM comparison")"

# 3. A baseline ppagg never aggregated: the job's totals only.
mkdir raw && cp -r tree/iteration_1 raw/ && ppbatch --input raw -q
ppagg --base-folder tree --no-render --compare raw/pptrace.db >out 2>err
is "a baseline not aggregated: exit 0" 0 $?
ok_if "... says so" grep -q "compare: note: the baseline: not aggregated by ppagg (no pp_groups rows): no step time, bubble or stages; run ppagg on it once" err
is "... categories over the whole job (stage NULL)" "1|0" \
	"$(sql tree/pptrace.db "SELECT count(*) > 0, count(stage) FROM compare_categories")"
ok_if "... the step not compared" sh -c "sqlite3 tree/pptrace.db 'SELECT sentence FROM comparison' | grep -q '^Step not compared'"

# 4. Baselines that cannot be compared: exit 1, one warning, no comparison.
nocompare() { # nocompare DESC WHY ARGS...
	local desc=$1 why=$2
	shift 2
	ppagg --base-folder tree --no-render -q "$@" >out 2>err
	is "$desc: exit 1" 1 $?
	ok_if "... says why: $why" grep -q "^ppagg: warning: compare: not compared: .*$why" err
	is "... no comparison in the views" 0 "$(sql tree/pptrace.db "SELECT count(*) FROM comparison")"
}
nocompare "a missing baseline" "cannot open database 'none.db'" --compare none.db
nocompare "this run's own database" "is this run's own database" --compare "$T/tree/pptrace.db"
nocompare "an iteration the baseline lacks" "has no iteration '99'" --compare v6.db --compare-iterations 99
cp v6.db v99.db && sql v99.db "PRAGMA user_version = 99"
nocompare "a baseline of a newer pptrace" "schema version 99 is newer than this pptrace" --compare v99.db
is "... which stays as it was" 99 "$(sql v99.db "PRAGMA user_version")"

# 5. No comparison left behind by a run without --compare.
ppagg --base-folder tree -q --no-render --compare v6.db --out rep
ok_if "a comparison writes compare/*.csv" test -s rep/compare/summary.csv -a -s rep/compare/ranks.csv
ok_if "... and its section" grep -q '<section id="baseline">' rep/index.html
ppagg --base-folder tree -q --no-render --out rep
is "a run without --compare: exit 0" 0 $?
is "... empties every comparison view" 0 "$(sql tree/pptrace.db "SELECT (SELECT count(*) FROM comparison)
	+ (SELECT count(*) FROM compare_summary) + (SELECT count(*) FROM compare_categories)
	+ (SELECT count(*) FROM compare_optypes) + (SELECT count(*) FROM compare_groups)
	+ (SELECT count(*) FROM compare_ranks)")"
ok_if "... removes compare/" test ! -e rep/compare
ok_if "... and the section" sh -c "! grep -q 'id=\"baseline\"' rep/index.html"
is "... keeps the job's shape" "2|1|1|1|2|1|1|2" \
	"$(sql tree/pptrace.db "SELECT ranks, tp, cp, ep, pp, dp, vpp, microbatches FROM agg_shape")"

# 6. [compare] settings are checked.
printf '[compare]\nnoise_floor = lots\n' >bad.ini
ppagg --base-folder tree -q --no-render --config bad.ini --compare v6.db >out 2>err
is "a bad compare.noise_floor: exit 2" 2 $?
ok_if "... names the key" grep -q "compare.noise_floor" err
printf '[compare]\nregression_threshold = 0\nnoise_floor = 0\nmin_share = 0\n' >zero.ini
ppagg --base-folder tree -q --no-render --config zero.ini --compare v6.db
is "thresholds of 0: the same run is no regression (no change)" 0 $?
done_testing
