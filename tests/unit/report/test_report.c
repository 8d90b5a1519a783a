/* Unit tests for pipeline/report/: every output's path (report_paths.c,
 * the report's layout of docs/ppagg.md "Output folder") and what the render queue
 * asks gnuplot for, per render plan and --format (report_render.c, docs/ppagg.md
 * "What the report shows"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/report_int.h"
#include "tests/unit/unit.h"

/* The outputs test_paths() checked: every one must be. */
static bool rel_seen[RF_NFILES];

static void expect_rel(enum report_file f, int it, long id, const char *want)
{
	struct strbuf sb = STRBUF_INIT;
	rel_seen[f] = true;
	report_rel(&sb, f, it, id);
	assert_string_equal(sb.buf, want);
	strbuf_release(&sb);
}

static void test_paths(void **state)
{
	(void)state;
	expect_rel(RF_INDEX, 0, 0, "index.html");
	expect_rel(RF_ITERATIONS, 0, 0, "iterations.csv");
	expect_rel(RF_PAGE, 15, 0, "iteration_15.html");
	expect_rel(RF_ITERATION, 15, 0, "iteration_15");
	expect_rel(RF_PP_GROUPS, 15, 0, "iteration_15/pp_groups.csv");
	expect_rel(RF_PIPELINES, 15, 0, "iteration_15/pipelines.csv");
	expect_rel(RF_STRAGGLERS, 15, 0, "iteration_15/stragglers.csv");
	expect_rel(RF_OVERVIEW, 15, 0, "iteration_15/overview");
	expect_rel(RF_OVERVIEW_MAP, 15, AGG_M_BUBBLE, "iteration_15/overview/bubble");
	expect_rel(RF_OVERVIEW_MAP, 15, AGG_M_COVERAGE, "iteration_15/overview/coverage");
	expect_rel(RF_OVERVIEW_STEPS, 15, 0, "iteration_15/overview/steps");
	expect_rel(RF_RANK, 16, 1023, "iteration_16/rank_1023");
	expect_rel(RF_RANK_TIMELINE, 16, 5, "iteration_16/rank_5/timeline");
	expect_rel(RF_RANK_OVERLAP, 16, 5, "iteration_16/rank_5/overlap");
	expect_rel(RF_RANK_STEPS, 16, 5, "iteration_16/rank_5/steps.csv");
	expect_rel(RF_RANK_CATEGORIES, 16, 5, "iteration_16/rank_5/categories.csv");
	expect_rel(RF_PP_GROUP, 3, 2, "iteration_3/pp_group_2");
	expect_rel(RF_PP_GROUP_TIMELINE, 3, 2, "iteration_3/pp_group_2/timeline");
	expect_rel(RF_MODEL_GROUP, 3, 0, "iteration_3/model_group_0");
	expect_rel(RF_MODEL_GROUP_TIMELINE, 3, 0, "iteration_3/model_group_0/timeline");
	expect_rel(RF_WHATIF, 0, 0, "whatif");
	expect_rel(RF_WHATIF_SW, 0, 0, "whatif/sw");
	expect_rel(RF_WHATIF_STEP, 0, 0, "whatif/step");
	expect_rel(RF_WHATIF_JSON, 0, 0, "whatif/timeline.json");
	expect_rel(RF_WHY, 0, 0, "why");
	expect_rel(RF_WHY_HOPS, 0, 0, "why/hops");
	expect_rel(RF_WHY_JSON, 0, 0, "why/ranks.json");
	expect_rel(RF_ANNOT, 0, 0, "annotations");
	expect_rel(RF_ANNOT_CSV, 0, 0, "annotations/annotations.csv");
	expect_rel(RF_ADVICE, 0, 0, "advice");
	expect_rel(RF_ADVICE_CSV, 0, 0, "advice/advice.csv");
	expect_rel(RF_ADVICE_MEMORY_CSV, 0, 0, "advice/advice_memory.csv");
	expect_rel(RF_ADVICE_CHART, 0, 0, "advice/step_memory");
	expect_rel(RF_COMPARE, 0, 0, "compare");
	expect_rel(RF_COMPARE_SUMMARY, 0, 0, "compare/summary.csv");
	expect_rel(RF_COMPARE_CATEGORIES, 0, 0, "compare/categories.csv");
	expect_rel(RF_COMPARE_OPTYPES, 0, 0, "compare/optypes.csv");
	expect_rel(RF_COMPARE_GROUPS, 0, 0, "compare/groups.csv");
	expect_rel(RF_COMPARE_RANKS, 0, 0, "compare/ranks.csv");
	for (int f = 0; f < RF_NFILES; f++)
		if (!rel_seen[f])
			fail_msg("output %d of enum report_file: no path checked", f);
	assert_string_equal(report_leaf("iteration_3/pp_group_2/timeline"), "timeline");
	assert_string_equal(report_leaf("index.html"), "index.html");
}

/* The output folder: --out as given, else <base>/pptrace; a path under it. */
static void test_out(void **state)
{
	(void)state;
	char base[] = "run42";
	struct agg_job job = { .base = base };
	struct report_opts o = { 0 };
	struct report R = { .job = &job, .o = &o };
	struct strbuf sb = STRBUF_INIT;
	R.out = report_out(&job, &o);
	assert_string_equal(R.out, "run42/pptrace");
	report_path(&sb, &R, RF_RANK_STEPS, 15, 3);
	assert_string_equal(sb.buf, "run42/pptrace/iteration_15/rank_3/steps.csv");
	free(R.out);
	o.out = "/tmp/x";
	R.out = report_out(&job, &o);
	assert_string_equal(R.out, "/tmp/x");
	free(R.out);
	strbuf_release(&sb);
}

/* What the queue holds for one script of plan show under the options. */
static void expect_queued(bool render, bool png, bool svg, enum agg_show show, bool want_png,
			  bool want_svg)
{
	struct report_opts o = { .render = render, .png = png, .svg = svg };
	struct report R = { .o = &o };
	report_queue_add(&R, "a/b.gp", show);
	assert_int_equal(R.queue.written, 1);
	assert_int_equal(R.queue.n, want_png || want_svg);
	if (R.queue.n) {
		assert_string_equal(R.queue.v[0].path, "a/b.gp");
		assert_int_equal(R.queue.v[0].png, want_png);
		assert_int_equal(R.queue.v[0].svg, want_svg);
	}
	report_queue_release(&R.queue);
}

static void test_render_queue(void **state)
{
	(void)state;
	/* every format asked for */
	expect_queued(true, true, true, AGG_SHOW_ALL, true, true);
	expect_queued(true, true, false, AGG_SHOW_ALL, true, false);
	expect_queued(true, false, true, AGG_SHOW_ALL, false, true);
	/* one image: the PNG, or the SVG when only SVG is asked for */
	expect_queued(true, true, true, AGG_SHOW_IMAGE, true, false);
	expect_queued(true, true, false, AGG_SHOW_IMAGE, true, false);
	expect_queued(true, false, true, AGG_SHOW_IMAGE, false, true);
	/* the script only (a chart the plan does not show is never written,
	 * nor rendered); nothing at all with --no-render */
	expect_queued(true, true, true, AGG_SHOW_SCRIPT, false, false);
	expect_queued(true, true, true, AGG_SHOW_NONE, false, false);
	expect_queued(false, true, true, AGG_SHOW_ALL, false, false);
	expect_queued(false, true, true, AGG_SHOW_IMAGE, false, false);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_paths),
		  cmocka_unit_test(test_out),
		  cmocka_unit_test(test_render_queue),
	  })
