/* Unit tests for the comparison of two runs (docs/compare.md): the engine
 * (pipeline/agg/agg_compare_calc.c) on hand-made runs — the worked example
 * of the noise rule, the floor and the least share, one iteration's
 * spread, ranks against their stage, the rows they explain, shapes that
 * differ, the sentence — and the data part (pipeline/agg/agg_compare.c)
 * through real databases: a baseline read as it is (an older version too,
 * never changed), the views written, emptied without a baseline, and a
 * baseline that cannot be compared. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "agg/agg_compare.h"
#include "agg/agg_iter.h"
#include "agg/agg_vpp.h"
#include "agg/topology.h"
#include "storage/db.h"
#include "storage/db_agg.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

static const struct cmp_params params = {
	.floor = 0.03, .min_share = 0.01, .threshold = 0.05, .k = 3
};

/* A comparison: the base and new runs, the keys and the result. */
struct pair {
	struct cmp_run b, n;
	struct cmp_keys keys;
	struct cmp_result r;
};

/* Frees the result, both runs and the keys. */
static void pair_release(struct pair *cm)
{
	cmp_result_release(&cm->r);
	cmp_run_release(&cm->n);
	cmp_run_release(&cm->b);
	cmp_keys_release(&cm->keys);
}

/* A run of n iterations (numbered from 1) whose steps take step_ms[i] ms,
 * one pipeline each, and nrank ranks. */
static void job(struct cmp_run *r, const double *step_ms, size_t n, int nrank)
{
	int it[8] = { 0 };
	for (size_t i = 0; i < n; i++)
		it[i] = (int)i + 1;
	cmp_run_init(r, it, n);
	for (size_t i = 0; i < n; i++) {
		r->step_ns[i] = step_ms[i] * 1e6;
		r->bubble[i] = 0.2;
		cmp_run_add_pipe(r, i, r->step_ns[i], 0.2);
	}
	cmp_run_ranks(r, nrank);
}

/* docs/compare.md's worked example: the baseline's steps took 100 and 103
 * ms, the new run's 108 and 111. Means 101.5 and 109.5: +7.88 %. Within
 * each run the steps are 1.5 ms from their mean: pooled variance (4 x 2.25)
 * / (2 + 2 - 2) = 4.5, spread 2.121 ms = 2.09 % of 101.5, noise 3 x 2.09 =
 * 6.27 % (above the 3 % floor): flagged, 8 ms is more than 1 % of the step,
 * and above the 5 % threshold: a regression. */
static void test_worked_example(void **state)
{
	(void)state;
	struct pair cm = { 0 };
	job(&cm.b, (const double[]){ 100, 103 }, 2, 0);
	job(&cm.n, (const double[]){ 108, 111 }, 2, 0);
	cmp_compare(&cm.b, &cm.n, &cm.keys, &params, &cm.r);
	const struct cmp_judgement *j = &cm.r.metric[CMP_STEP];
	assert_true(cm.r.has_metric[CMP_STEP]);
	assert_true(fabs(j->change - 8.0 / 101.5) < 1e-12);
	assert_true(fabs(j->noise - 3 * sqrt(4.5) * 1e6 / 101.5e6) < 1e-12);
	assert_int_equal(j->from, CMP_FROM_ITERATIONS);
	assert_true(j->flagged);
	assert_true(cm.r.regression);
	assert_string_equal(
		cm.r.sentence.buf,
		"Step +7.9 % (noise \u00b16.3 %): no stage, process group or rank stands "
		"out.");
	/* the bubble did not move: its spread is 0, the floor is its noise */
	assert_int_equal(cm.r.metric[CMP_BUBBLE].from, CMP_FROM_FLOOR);
	assert_false(cm.r.metric[CMP_BUBBLE].flagged);
	cmp_result_release(&cm.r);
	cmp_run_release(&cm.n);
	/* 104 and 107: +3.94 %, within the 6.27 % noise */
	job(&cm.n, (const double[]){ 104, 107 }, 2, 0);
	cmp_compare(&cm.b, &cm.n, &cm.keys, &params, &cm.r);
	assert_false(cm.r.metric[CMP_STEP].flagged);
	assert_false(cm.r.regression);
	assert_string_equal(cm.r.sentence.buf,
			    "Step +3.9 % (noise \u00b16.3 %): everything within noise.");
	pair_release(&cm);
}

/* A change beyond the floor that is too small a share of the step is not
 * flagged; a change beyond both is, though no regression under the
 * threshold. */
static void test_floor_and_least_share(void **state)
{
	(void)state;
	struct pair cm = { 0 };
	struct cmp_params p = params;
	job(&cm.b, (const double[]){ 100, 100 }, 2, 0);
	job(&cm.n, (const double[]){ 104, 104 }, 2, 0);
	cmp_compare(&cm.b, &cm.n, &cm.keys, &p, &cm.r);
	assert_int_equal(cm.r.metric[CMP_STEP].from, CMP_FROM_FLOOR);
	assert_true(cm.r.metric[CMP_STEP].flagged);
	assert_false(cm.r.regression); /* +4 % < 5 % */
	cmp_result_release(&cm.r);
	p.min_share = 0.05; /* 4 ms is less than 5 % of the step */
	cmp_compare(&cm.b, &cm.n, &cm.keys, &p, &cm.r);
	assert_false(cm.r.metric[CMP_STEP].flagged);
	pair_release(&cm);
}

/* One iteration per run: the spread of the pipelines of each iteration. */
static void test_one_iteration_pipelines(void **state)
{
	(void)state;
	struct pair cm = { 0 };
	job(&cm.b, (const double[]){ 100 }, 1, 0);
	job(&cm.n, (const double[]){ 110 }, 1, 0);
	cmp_run_add_pipe(&cm.b, 0, 96e6, 0.2); /* the other pipeline: 4 ms shorter */
	cmp_run_add_pipe(&cm.n, 0, 106e6, 0.2);
	cmp_compare(&cm.b, &cm.n, &cm.keys, &params, &cm.r);
	/* residuals ±2 ms in both: sqrt(4 x 4 / 2) = 2.83 ms, 2.83 % of 100 */
	assert_int_equal(cm.r.metric[CMP_STEP].from, CMP_FROM_PIPELINES);
	assert_true(fabs(cm.r.metric[CMP_STEP].noise - 3 * sqrt(8) / 100) < 1e-12);
	assert_true(cm.r.metric[CMP_STEP].flagged); /* +10 % > 8.5 % */
	pair_release(&cm);
}

/* Two stages of two ranks, two iterations: per rank its forward compute
 * (category fwd_computation) and a data-parallel group's time. */
static void staged(struct cmp_run *r, struct cmp_keys *k, const double *fwd, double dp)
{
	job(r, (const double[]){ 100, 100 }, 2, 4);
	r->shape = (struct cmp_shape){ .ranks = 4,
				       .tp = 1,
				       .cp = 1,
				       .ep = 1,
				       .pp = 2,
				       .dp = 2,
				       .vpp = 1,
				       .mb = 4,
				       .split = true };
	int fc = cmp_key(k, CMP_CATEGORY, "fwd_computation"), g = cmp_key(k, CMP_GROUP, "dp");
	for (int rank = 0; rank < 4; rank++) {
		r->stage[rank] = rank / 2;
		for (size_t i = 0; i < 2; i++) {
			/* ±0.1 % from iteration to iteration */
			double ns = fwd[rank] * 1e6 * (i ? 1.001 : 0.999);
			size_t at = i * 4 + (size_t)rank;
			r->present[at] = 1;
			r->compute[at] = (int64_t)ns;
			r->has_compute[at] = true;
			cmp_run_add(r, i, rank, CMP_CATEGORY, fc, (int64_t)ns);
			cmp_run_add(r, i, rank, CMP_GROUP, g,
				    (int64_t)(dp * 1e6 * (i ? 1.001 : 0.999)));
		}
	}
}

/* Rank 3 computes 50 % longer: it is flagged against its stage, stage 1's
 * forward compute is flagged but explained by it; the data-parallel group
 * 20 % slower on every rank is the next finding. */
static void test_rank_and_stage(void **state)
{
	(void)state;
	struct pair cm = { 0 };
	staged(&cm.b, &cm.keys, (const double[]){ 40, 40, 40, 40 }, 10);
	staged(&cm.n, &cm.keys, (const double[]){ 40, 40, 40, 60 }, 12);
	cmp_compare(&cm.b, &cm.n, &cm.keys, &params, &cm.r);
	assert_true(cm.r.stages && cm.r.ranks);
	assert_int_equal(cm.r.nranks, 4);
	assert_true(cm.r.rank[3].j.flagged);
	assert_true(fabs(cm.r.rank[3].j.change - 0.5) < 1e-6);
	assert_true(fabs(cm.r.rank[3].stage_change) < 1e-6); /* the lower median: rank 2's */
	assert_false(cm.r.rank[2].j.flagged);
	int found = 0;
	for (size_t i = 0; i < cm.r.nkeys; i++) {
		const struct cmp_key_row *k = &cm.r.keys[i];
		if (k->dim == CMP_CATEGORY && k->stage == 1) {
			assert_true(k->j.flagged); /* +25 % */
			assert_true(k->explained);
			found++;
		}
		if (k->dim == CMP_CATEGORY && k->stage == 0)
			assert_false(k->j.flagged);
		if (k->dim == CMP_GROUP)
			assert_true(k->j.flagged && !k->explained);
	}
	assert_int_equal(found, 1);
	assert_string_equal(cm.r.sentence.buf,
			    "Step +0.0 % (noise \u00b13.0 %): compute on rank 3 (stage 1) +50.0 % "
			    "(its stage +0.0 %); data-parallel collectives on every rank +20.0 %; "
			    "everything else within noise.");
	pair_release(&cm);
}

/* Another pipeline size: no stage and no rank is compared, the job's sums
 * are; the size that differs is a summary row saying so; another VPP is
 * the schedule's change, first in the sentence. */
static void test_shapes_differ(void **state)
{
	(void)state;
	struct pair cm = { 0 };
	staged(&cm.b, &cm.keys, (const double[]){ 40, 40, 40, 40 }, 10);
	staged(&cm.n, &cm.keys, (const double[]){ 40, 40, 40, 40 }, 10);
	cm.n.shape.pp = 4;
	cm.n.shape.vpp = 2;
	cmp_compare(&cm.b, &cm.n, &cm.keys, &params, &cm.r);
	assert_false(cm.r.stages);
	assert_false(cm.r.ranks);
	assert_int_equal(cm.r.nranks, 0);
	for (size_t i = 0; i < cm.r.nkeys; i++) {
		assert_int_equal(cm.r.keys[i].stage, -1);
		assert_int_equal(cm.r.keys[i].nranks, 4);
	}
	assert_int_equal(cm.r.nshape, 2);
	assert_string_equal(cm.r.shape[0].name, "pp");
	assert_int_equal(cm.r.shape[0].base, 2);
	assert_int_equal(cm.r.shape[0].new_, 4);
	assert_non_null(strstr(cm.r.shape[0].note.buf, "ranks are not compared"));
	assert_string_equal(cm.r.shape[1].name, "vpp");
	assert_non_null(strstr(cm.r.shape[1].note.buf, "per-chunk times are not"));
	assert_string_equal(cm.r.sentence.buf,
			    "Step +0.0 % (noise \u00b13.0 %): PP 2 \u2192 4; schedule 1F1B \u2192 "
			    "interleaved 1F1B (VPP 1 \u2192 2); everything else within noise.");
	pair_release(&cm);
}

static void test_format_ranks_and_words(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	struct cmp_keys keys = { 0 };
	cmp_format_ranks((const int[]){ 0, 1, 2, 3, 8, 10, 11 }, 7, &sb);
	assert_string_equal(sb.buf, "0\u20133, 8, 10\u201311");
	strbuf_reset(&sb);
	cmp_key_words(&keys, CMP_GROUP, cmp_key(&keys, CMP_GROUP, "EMBEDDING_GROUP"), &sb);
	strbuf_addch(&sb, '|');
	cmp_key_words(&keys, CMP_GROUP, cmp_key(&keys, CMP_GROUP, "MY_GROUP"), &sb);
	strbuf_addch(&sb, '|');
	cmp_key_words(&keys, CMP_CATEGORY, cmp_key(&keys, CMP_CATEGORY, "dp_communication"), &sb);
	assert_string_equal(sb.buf, "embedding-group collectives|MY_GROUP collectives|"
				    "data-parallel communication");
	assert_int_equal(cmp_key(&keys, CMP_GROUP, "MY_GROUP"), 1);
	strbuf_release(&sb);
	cmp_keys_release(&keys);
}

/* ---- the data part, through databases -------------------------------- */

static char *tmp_dir(void)
{
	char dir[64];
	assert_int_equal(unit_mkdtemp(dir, sizeof(dir), "test-compare"), 0);
	return xstrdup(dir);
}

static void rm_dir(char *dir)
{
	assert_int_equal(unit_rm_rf(dir), 0);
	free(dir);
}

/* Asserts the rows of a query on the database at path (unit_rows()). */
static void assert_rows(const char *path, const char *sql, const char *expect)
{
	sqlite3 *c;
	assert_int_equal(sqlite3_open_v2(path, &c, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	unit_assert_rows(c, sql, expect);
	sqlite3_close(c);
}

/* One rank of one iteration: forward compute fwd_ms, a data-parallel
 * all-reduce of dp_ms, four forward steps. */
static void add_rank(struct db *db, int it, int rank, double fwd_ms, double dp_ms)
{
	char path[64];
	snprintf(path, sizeof(path), "/x/iteration_%d/rank_%d.json", it, rank);
	int64_t t0 = 1700000000000000000 + (int64_t)it * 1000000000, fwd = (int64_t)(fwd_ms * 1e6);
	int64_t dp = (int64_t)(dp_ms * 1e6);
	struct db_trace t = { .path = path,
			      .folder = strchr(path + 3, 'i'),
			      .has_iteration = true,
			      .iteration = it,
			      .has_header_rank = true,
			      .header_rank = rank,
			      .bytes = 1,
			      .status = DB_STATUS_OK,
			      .mode = DB_MODE_MEGATRON,
			      .has_metrics = true,
			      .window_start_ns = t0,
			      .window_end_ns = t0 + fwd + dp,
			      .gpu_busy_ns = fwd + dp,
			      .comp_busy_ns = fwd,
			      .comm_busy_ns = dp,
			      .coverage = 1 };
	assert_int_equal(db_trace_begin(db, &t), 0);
	struct db_category c = { RR_FWD_COMP, 4, fwd, fwd };
	assert_int_equal(db_trace_add_category(db, &c), 0);
	c = (struct db_category){ RR_DP_COMM, 1, dp, dp };
	assert_int_equal(db_trace_add_category(db, &c), 0);
	for (int s = 0; s < 4; s++) {
		struct db_step st = { .phase = RR_FWD,
				      .seq = s,
				      .kernels = 1,
				      .start_ns = t0 + s * fwd / 4,
				      .end_ns = t0 + (s + 1) * fwd / 4,
				      .comp_ns = fwd / 4,
				      .chunk = -1,
				      .mbs = -1 };
		assert_int_equal(db_trace_add_step(db, &st), 0);
	}
	const struct rr_kernel k = { .category = RR_DP_COMM,
				     .type = RR_COMM,
				     .step = -1,
				     .stream = 9,
				     .start_ns = t0 + fwd,
				     .dur_ns = dp,
				     .coll = RR_COLL_ALLREDUCE };
	struct db_kernel dk = { .k = &k,
				.name = "ncclDevKernel_AllReduce",
				.name_len = 23,
				.pg_desc = "DATA_PARALLEL_GROUP",
				.pg_ranks = rank < 2 ? "[0, 1]" : "[2, 3]" };
	assert_int_equal(db_trace_add_kernel(db, &dk), 0);
	assert_int_equal(db_trace_commit(db), 0);
}

/* A run of pp 2 x dp 2 (ranks 0, 1 stage 0; 2, 3 stage 1), iterations 1
 * and 2, aggregated: every rank fwd_ms[rank] of compute, dp_ms of DP
 * collective; one pipeline per replica of step_ms. */
static void make_run(const char *path, const double *fwd_ms, double dp_ms, double step_ms)
{
	char err[512];
	struct db *db = unit_db_open(path, 0, err, sizeof(err));
	assert_non_null(db);
	for (int it = 1; it <= 2; it++)
		for (int r = 0; r < 4; r++)
			add_rank(db, it, r, fwd_ms[r] * (it == 1 ? 0.999 : 1.001), dp_ms);
	struct db_agg_writer *w = db_agg_begin(db);
	assert_non_null(w);
	for (int it = 1; it <= 2; it++) {
		for (int r = 0; r < 4; r++) {
			struct db_agg_pp_group g = { .iteration = it,
						     .pp_group = r % 2,
						     .stage = r / 2,
						     .rank = r,
						     .complete = true };
			assert_int_equal(db_agg_add_pp_group(w, &g), 0);
		}
		for (int g = 0; g < 2; g++) {
			struct db_agg_pipeline p = { .iteration = it,
						     .pp_group = g,
						     .measured_ns = (int64_t)(step_ms * 1e6) + g,
						     .bubble_ratio = 0.25 };
			assert_int_equal(db_agg_add_pipeline(w, &p), 0);
		}
	}
	assert_int_equal(db_agg_clear_topology(w), 0);
	for (int r = 0; r < 4; r++) {
		struct db_agg_topology t = { r, r % 2, r / 2, r % 2, 2, 1 };
		assert_int_equal(db_agg_add_topology(w, &t), 0);
	}
	assert_int_equal(db_agg_commit(w), 0);
	db_close(db);
}

/* Runs the comparison of the run at path (iterations 1 and 2) with the
 * baseline base (NULL: none), as ppagg does after its analyses. */
static void compare(const char *path, const char *base, struct agg_compare *c)
{
	char err[512];
	struct topology t;
	struct agg_iter its[2];
	memset(its, 0, sizeof(its));
	its[0].iteration = 1;
	its[1].iteration = 2;
	topo_init(&t);
	assert_int_equal(topo_from_sizes(&t, 1, 2, 2, 1, 1), 0);
	topo_index(&t);
	struct agg_vpp vpp = { .vpp = 1 };
	struct agg_compare_opts o = { .baseline = base,
				      .threshold = AGG_COMPARE_THRESHOLD,
				      .noise_floor = AGG_COMPARE_NOISE_FLOOR,
				      .min_share = AGG_COMPARE_MIN_SHARE };
	struct db *db = unit_db_open(path, DB_EXISTING, err, sizeof(err));
	assert_non_null(db);
	agg_compare_init(c);
	assert_int_equal(agg_compare_run(db, path, its, 2, &t, &vpp, &o, c), 0);
	db_close(db);
	topo_release(&t);
}

/* The bytes of a file. */
static char *slurp(const char *path, size_t *n)
{
	struct strbuf sb = STRBUF_INIT;
	struct strbuf err = STRBUF_INIT;
	assert_int_equal(strbuf_read_file(&sb, path, 0, &err), 0);
	strbuf_release(&err);
	*n = sb.len;
	return strbuf_detach(&sb, NULL);
}

/* Rank 3 computes 50 % longer and the step grew 20 %: the views say so,
 * ppagg's exit status would be 4; the baseline is not touched. A run
 * without a baseline empties the views and keeps the shape. */
static void test_compare_databases(void **state)
{
	(void)state;
	char *dir = tmp_dir(), base[256], cur[256];
	snprintf(base, sizeof(base), "%s/base.db", dir);
	snprintf(cur, sizeof(cur), "%s/new.db", dir);
	make_run(base, (const double[]){ 40, 40, 40, 40 }, 10, 100);
	make_run(cur, (const double[]){ 40, 40, 40, 60 }, 10, 120);
	size_t n0, n1;
	char *before = slurp(base, &n0);
	struct agg_compare c;
	compare(cur, base, &c);
	assert_int_equal(c.state, AGG_CMP_DONE);
	assert_true(c.r.regression);
	assert_string_equal(c.base_iters.buf, "1, 2");
	assert_int_equal(c.baseline_version, SCHEMA_VERSION);
	agg_compare_release(&c);
	char *after = slurp(base, &n1);
	assert_true(n0 == n1 && !memcmp(before, after, n0)); /* read, never written */
	free(before);
	free(after);
	assert_rows(cur,
		    "SELECT base_iterations, new_iterations, regression, sentence FROM comparison",
		    "1, 2|1, 2|1|Step +20.0 % (noise \u00b13.0 %): compute on rank 3 (stage 1) "
		    "+50.0 % (its stage +0.0 %); everything else within noise.\n");
	assert_rows(cur, "SELECT metric, base, new, flagged, noise_from FROM compare_summary",
		    "step_ns|100000001.0|120000001.0|1|floor\n"
		    "bubble|0.25|0.25|0|floor\n");
	assert_rows(cur, "SELECT stage, category, base_ns, new_ns, flagged FROM compare_categories",
		    "0|dp_communication|10000000|10000000|0\n"
		    "0|fwd_computation|40000000|40000000|0\n"
		    "1|dp_communication|10000000|10000000|0\n"
		    "1|fwd_computation|40000000|50000000|1\n");
	assert_rows(cur, "SELECT stage, kind, flagged FROM compare_groups", "0|dp|0\n1|dp|0\n");
	assert_rows(
		cur,
		"SELECT rank, stage, round(change, 3), stage_change, flagged, host FROM compare_ranks",
		"0|0|0.0|0.0|0|NULL\n1|0|0.0|0.0|0|NULL\n2|1|0.0|0.0|0|NULL\n"
		"3|1|0.5|0.0|1|NULL\n");
	assert_rows(cur, "SELECT ranks, tp, cp, ep, pp, dp, vpp, microbatches FROM agg_shape",
		    "4|1|1|1|2|2|1|NULL\n");
	/* without a baseline: nothing that looks like a comparison is left */
	compare(cur, NULL, &c);
	assert_int_equal(c.state, AGG_CMP_NONE);
	agg_compare_release(&c);
	assert_rows(
		cur,
		"SELECT (SELECT count(*) FROM comparison) + (SELECT count(*) FROM compare_summary)"
		" + (SELECT count(*) FROM compare_categories) + (SELECT count(*) FROM"
		" compare_groups) + (SELECT count(*) FROM compare_ranks), (SELECT count(*) FROM"
		" agg_shape)",
		"0|1\n");
	rm_dir(dir);
}

/* A baseline of version 3 (made older: no agg_topology, ops, what-if or
 * shape) compares by its pp_groups, says what it lacks, and stays version
 * 3; a baseline that is the run's own file, or no file, is not compared. */
static void test_older_and_unusable_baselines(void **state)
{
	(void)state;
	char *dir = tmp_dir(), base[256], cur[256], missing[256];
	snprintf(base, sizeof(base), "%s/base.db", dir);
	snprintf(cur, sizeof(cur), "%s/new.db", dir);
	snprintf(missing, sizeof(missing), "%s/none.db", dir);
	make_run(base, (const double[]){ 40, 40, 40, 40 }, 10, 100);
	make_run(cur, (const double[]){ 40, 40, 40, 40 }, 10, 100);
	sqlite3 *c3;
	assert_int_equal(sqlite3_open(base, &c3), SQLITE_OK);
	assert_int_equal(sqlite3_exec(c3,
				      "DROP VIEW ops; DROP TABLE agg_topology; DROP TABLE op_t;"
				      " DROP VIEW whatif_steps; DROP TABLE agg_shape;"
				      " PRAGMA user_version = 3",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(c3);
	struct agg_compare c;
	compare(cur, base, &c);
	assert_int_equal(c.state, AGG_CMP_DONE);
	assert_int_equal(c.baseline_version, 3);
	assert_true(c.r.stages);
	assert_false(c.r.ranks); /* its dp is not known */
	assert_non_null(strstr(c.r.missing.buf, "the baseline: schema version 3 has no what-if"));
	assert_non_null(strstr(c.r.missing.buf, "the baseline: schema version 3 has no ops"));
	assert_non_null(strstr(c.r.missing.buf, "records no shape"));
	assert_string_equal(c.r.sentence.buf,
			    "Step +0.0 % (noise \u00b13.0 %): everything within noise.");
	agg_compare_release(&c);
	assert_rows(base, "PRAGMA user_version", "3\n");
	compare(cur, cur, &c);
	assert_int_equal(c.state, AGG_CMP_FAILED);
	assert_non_null(strstr(c.why.buf, "is this run's own database"));
	agg_compare_release(&c);
	compare(cur, missing, &c);
	assert_int_equal(c.state, AGG_CMP_FAILED);
	assert_non_null(strstr(c.why.buf, "none.db"));
	agg_compare_release(&c);
	assert_rows(cur, "SELECT count(*) FROM comparison", "0\n");
	rm_dir(dir);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_worked_example),
		  cmocka_unit_test(test_floor_and_least_share),
		  cmocka_unit_test(test_one_iteration_pipelines),
		  cmocka_unit_test(test_rank_and_stage),
		  cmocka_unit_test(test_shapes_differ),
		  cmocka_unit_test(test_format_ranks_and_words),
		  cmocka_unit_test(test_compare_databases),
		  cmocka_unit_test(test_older_and_unusable_baselines),
	  })
