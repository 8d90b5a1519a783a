/* Unit tests for ppagg's render plan (pipeline/agg/agg_overview.c,
 * docs/ppagg.md "What the report shows") on hand-made iterations: which
 * iterations the report details, which rank, PP-group and model-replica
 * charts it shows and in which formats, what --charts adds, what is not
 * written at all, and the cap on the stragglers whose charts are shown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agg/agg_int.h"
#include "util/pp.h"
#include "tests/unit/unit.h"

/* tp 1 × pp 4 × dp 4: rank = dp + 4 · stage; PP group g and model replica
 * g are the ranks g, g + 4, g + 8, g + 12. */
static struct topology topo;

static int setup(void **state)
{
	(void)state;
	topo_init(&topo);
	if (topo_from_sizes(&topo, 1, 4, 4, 1, 1))
		return -1;
	topo_index(&topo);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	topo_release(&topo);
	return 0;
}

/* An iteration of nranks ranks (0 .. nranks - 1, all analysed), pipelines
 * of the 4 PP groups measuring measured[g], and the stragglers given. */
static void iter_init(struct agg_iter *it, int iteration, size_t nranks, const int64_t *measured,
		      const int *strag, size_t nstrag)
{
	memset(it, 0, sizeof(*it));
	it->iteration = iteration;
	it->nranks = nranks;
	it->ranks = xcalloc(nranks, sizeof(*it->ranks));
	for (size_t i = 0; i < nranks; i++) {
		it->ranks[i].in.rank = (int)i;
		it->ranks[i].in.ok = true;
		it->ranks[i].in.fwd_med = it->ranks[i].in.bwd_med = -1;
	}
	it->res.slowest_stage = -1;
	it->res.npipes = measured ? 4 : 0;
	it->res.pipes = xcalloc(4, sizeof(*it->res.pipes));
	for (size_t g = 0; g < it->res.npipes; g++)
		it->res.pipes[g] =
			(struct agg_pipeline_row){ .pp_group = (int)g, .measured = measured[g] };
	it->res.nstrag = nstrag;
	it->res.strag = xcalloc(nstrag + 1, sizeof(*it->res.strag));
	for (size_t s = 0; s < nstrag; s++)
		it->res.strag[s] = (struct agg_straggler_row){ .rank = strag[s],
							       .group_kind = "dp",
							       .excess = 0.2 + 0.01 * (double)s };
}

static const int64_t measured[4] = { 100, 130, 120, 110 }; /* slowest: 1, 2, 3 */

static void test_detailed_iterations(void **state)
{
	(void)state;
	struct agg_iter its[7];
	/* Times (the longest pipeline): 15 and 17 tie as the slowest. */
	static const int64_t t[7] = { 300, 100, 300, 200, 150, 250, 120 };
	struct agg_charts none = { 0 };
	for (int i = 0; i < 7; i++) {
		int64_t m[4] = { t[i], 1, 1, 1 };
		iter_init(&its[i], 15 + i, 4, m, NULL, 0);
	}
	/* Up to AGG_DETAIL_ITERS: every one. */
	agg_plan_iterations(its, AGG_DETAIL_ITERS, &none, false);
	for (int i = 0; i < AGG_DETAIL_ITERS; i++)
		assert_int_equal(its[i].plan.detail, AGG_DETAIL_EVERY);
	/* More: the slowest (the later of a tie: sorted by time, then by
	 * iteration), the median, the fastest; and those asked for. */
	int asked[] = { 21, 99 };
	struct agg_charts c = { .iterations = asked, .niterations = 2 };
	agg_plan_iterations(its, 7, &c, false);
	static const uint8_t want[7] = {
		0, AGG_DETAIL_FASTEST, AGG_DETAIL_SLOWEST, AGG_DETAIL_MEDIAN, 0, 0, AGG_DETAIL_ASKED
	};
	for (int i = 0; i < 7; i++)
		assert_int_equal(its[i].plan.detail, want[i]);
	/* --charts all: every one. */
	agg_plan_iterations(its, 7, &none, true);
	for (int i = 0; i < 7; i++)
		assert_int_equal(its[i].plan.detail, AGG_DETAIL_EVERY);
	for (int i = 0; i < 7; i++)
		agg_iter_release(&its[i]);
}

/* Plans iteration it (detailed or not) under o, after its flags. */
static void plan(struct agg_iter *it, const struct agg_opts *o, bool detailed, size_t ndetailed)
{
	agg_overview_compute(it, &topo, o->charts.ranks, o->charts.nranks);
	it->plan.detail = detailed ? AGG_DETAIL_EVERY : 0;
	agg_plan_compute(it, &topo, o, ndetailed);
}

/* Each of the 16 ranks' timeline and overlap charts is shown as
 * timeline and overlap, rank `one`'s as one_timeline and one_overlap. */
static void expect_ranks(const struct agg_iter *it, size_t one, uint8_t one_timeline,
			 uint8_t one_overlap, uint8_t timeline, uint8_t overlap)
{
	for (size_t i = 0; i < 16; i++) {
		assert_int_equal(it->plan.rank_timeline[i], i == one ? one_timeline : timeline);
		assert_int_equal(it->plan.rank_overlap[i], i == one ? one_overlap : overlap);
	}
}

/* 16 ranks in one detailed iteration: a small job, everything in every
 * format. */
static void test_small_job_shows_all(void **state)
{
	(void)state;
	struct agg_iter it;
	struct agg_opts o = { .rank_charts = AGG_RC_AUTO };
	iter_init(&it, 15, 16, measured, NULL, 0);
	plan(&it, &o, true, 1);
	assert_true(it.plan.all);
	assert_int_equal(it.plan.overview, AGG_SHOW_ALL);
	expect_ranks(&it, 0, AGG_SHOW_ALL, AGG_SHOW_ALL, AGG_SHOW_ALL, AGG_SHOW_ALL);
	for (size_t g = 0; g < 4; g++) {
		assert_int_equal(it.plan.pp_group[g], AGG_SHOW_ALL);
		assert_int_equal(it.plan.model_group[g], AGG_SHOW_ALL);
	}
	agg_iter_release(&it);
	/* The same ranks in 5 detailed iterations are 80 rank charts: no
	 * longer small. */
	iter_init(&it, 15, 16, measured, NULL, 0);
	plan(&it, &o, true, 5);
	assert_false(it.plan.all);
	agg_iter_release(&it);
}

/* At scale: the flagged ranks (here straggler 6, and the worst ranks of
 * no metric: no rank has a window), the PP groups of the straggler (in
 * every format) and of the 3 slowest pipelines (one image), the replicas
 * of the straggler and of the slowest pipeline; nothing else written. */
static void test_flagged_at_scale(void **state)
{
	(void)state;
	struct agg_iter it;
	struct agg_opts o = { .rank_charts = AGG_RC_AUTO };
	int strag[] = { 6 };
	iter_init(&it, 15, 16, measured, strag, 1);
	plan(&it, &o, true, 5);
	expect_ranks(&it, 6, AGG_SHOW_ALL, AGG_SHOW_IMAGE, AGG_SHOW_NONE, AGG_SHOW_NONE);
	/* Group 2 holds rank 6; 1, 2, 3 are the slowest pipelines. */
	static const uint8_t pp[4] = { AGG_SHOW_NONE, AGG_SHOW_IMAGE, AGG_SHOW_ALL,
				       AGG_SHOW_IMAGE };
	/* Replica 2 holds rank 6, replica 1 the slowest pipeline. */
	static const uint8_t mg[4] = { AGG_SHOW_NONE, AGG_SHOW_IMAGE, AGG_SHOW_IMAGE,
				       AGG_SHOW_NONE };
	for (size_t g = 0; g < 4; g++) {
		assert_int_equal(it.plan.pp_group[g], pp[g]);
		assert_int_equal(it.plan.model_group[g], mg[g]);
	}
	agg_iter_release(&it);
}

/* --charts: the ranks, groups and replicas named in every format; all:
 * the rest as scripts. --rank-charts none: only the ranks named. */
static void test_charts_on_demand(void **state)
{
	(void)state;
	struct agg_iter it;
	int ranks[] = { 9 }, groups[] = { 0 }, replicas[] = { 3 };
	struct agg_opts o = { .rank_charts = AGG_RC_NONE,
			      .charts = { .ranks = ranks,
					  .nranks = 1,
					  .groups = groups,
					  .ngroups = 1,
					  .replicas = replicas,
					  .nreplicas = 1 } };
	int strag[] = { 6 };
	iter_init(&it, 15, 16, measured, strag, 1);
	plan(&it, &o, true, 5);
	expect_ranks(&it, 9, AGG_SHOW_ALL, AGG_SHOW_ALL, AGG_SHOW_NONE, AGG_SHOW_NONE);
	assert_int_equal(it.plan.pp_group[0], AGG_SHOW_ALL);
	assert_int_equal(it.plan.model_group[3], AGG_SHOW_ALL);
	agg_iter_release(&it);

	o.rank_charts = AGG_RC_AUTO;
	o.charts = (struct agg_charts){ .all = true };
	iter_init(&it, 15, 16, measured, strag, 1);
	plan(&it, &o, true, 5);
	for (size_t i = 0; i < 16; i++)
		assert_int_equal(it.plan.rank_timeline[i], i == 6 ? AGG_SHOW_ALL : AGG_SHOW_SCRIPT);
	assert_int_equal(it.plan.pp_group[0], AGG_SHOW_SCRIPT);
	assert_int_equal(it.plan.model_group[3], AGG_SHOW_SCRIPT);
	agg_iter_release(&it);
}

/* An iteration the report does not detail: nothing of it is written. */
static void test_not_detailed(void **state)
{
	(void)state;
	struct agg_iter it;
	int ranks[] = { 9 };
	struct agg_opts o = { .rank_charts = AGG_RC_ALL,
			      .charts = { .all = true, .ranks = ranks, .nranks = 1 } };
	iter_init(&it, 15, 16, measured, NULL, 0);
	plan(&it, &o, false, 3);
	assert_false(it.plan.all);
	assert_int_equal(it.plan.overview, AGG_SHOW_NONE);
	for (size_t i = 0; i < 16; i++)
		assert_int_equal(it.plan.rank_timeline[i] | it.plan.rank_overlap[i], AGG_SHOW_NONE);
	for (size_t g = 0; g < 4; g++)
		assert_int_equal(it.plan.pp_group[g] | it.plan.model_group[g], AGG_SHOW_NONE);
	agg_iter_release(&it);
}

/* Of 12 stragglers, the AGG_TOP with the largest excess are flagged. */
static void test_straggler_cap(void **state)
{
	(void)state;
	struct agg_iter it;
	struct agg_opts o = { .rank_charts = AGG_RC_AUTO };
	int strag[12];
	for (int s = 0; s < 12; s++)
		strag[s] = s; /* excess 0.2 + 0.01 s: 2 .. 11 the largest */
	iter_init(&it, 15, 16, measured, strag, 12);
	plan(&it, &o, true, 5);
	for (int r = 0; r < 16; r++)
		assert_int_equal(!!(it.ov.flag[r] & AGG_FLAG_STRAGGLER), r >= 2 && r < 12);
	agg_iter_release(&it);
}

UNIT_MAIN(setup, teardown,
	  {
		  cmocka_unit_test(test_detailed_iterations),
		  cmocka_unit_test(test_small_job_shows_all),
		  cmocka_unit_test(test_flagged_at_scale),
		  cmocka_unit_test(test_charts_on_demand),
		  cmocka_unit_test(test_not_detailed),
		  cmocka_unit_test(test_straggler_cap),
	  })
