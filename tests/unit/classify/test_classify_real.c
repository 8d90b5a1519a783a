/* The classifier on every real trace in $PP_SHARED/data/real (through the
 * reader): no failure, categories partition the GPU events (count and sum of
 * durations equal a tally of the reader's events that the GPU-event rule,
 * classify_gpu_event(), selects), and the metric invariants hold. The data
 * folder is $PP_SHARED/data/real, else $PP_ROOT/../shared/data/real
 * (tests/run-tests.sh sets PP_ROOT); without it the test is reported as
 * skipped, with the folder it looked for. */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "classify/classify.h"
#include "model/patterns.h"
#include "read/trace_read.h"
#include "util/arena.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

static void check_invariants(const struct rank_result *r)
{
	if (!r->has_window)
		return;
	int64_t window = r->window_end_ns - r->window_start_ns;
	assert_true(r->gpu_busy_ns >= 0 && r->gpu_busy_ns <= window);
	assert_true(r->idle_ns >= 0 && r->bubble_ns >= r->idle_ns);
	assert_true(r->bubble_ns <= window);
	assert_true(r->overlap_ns <= r->comp_busy_ns && r->overlap_ns <= r->comm_busy_ns);
	assert_true(r->coverage >= 0.0 && r->coverage <= 1.0);
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct rr_step *s = &r->steps[i];
		assert_true(s->overlap_ns <= s->comp_ns && s->overlap_ns <= s->comm_ns);
		assert_true(s->comp_ns + s->comm_ns - s->overlap_ns <= s->wall_ns);
	}
	for (int c = 0; c < RR_NCATEGORIES; c++)
		assert_true(r->categories[c].busy_ns <= r->categories[c].sum_ns);
}

static void classify_file(const char *path, const struct patterns *pats)
{
	struct arena a = ARENA_INIT;
	struct trace_reader_opts o = { .salvage = false };
	struct trace_reader *rd = trace_reader_open(path, &o);
	struct classify *c = classify_new(pats, &a);
	struct trace_event ev;
	struct rank_result *r = NULL;
	int64_t gpu_n = 0, gpu_sum = 0;
	int rc;

	assert_non_null(rd);
	assert_non_null(c);
	while ((rc = trace_reader_next(rd, &ev)) == 1) {
		if (classify_gpu_event(ev.ph, classify_category(ev.cat))) {
			gpu_n++;
			gpu_sum += ev.dur_ns > 0 ? ev.dur_ns : 0;
		}
		classify_feed(c, &ev);
	}
	if (rc < 0)
		print_message("%s: %s\n", path, trace_reader_error(rd));
	assert_int_equal(rc, 0);
	assert_int_equal(classify_finish(c, trace_reader_header(rd), &r), 0);
	classify_free(c);

	int64_t n = 0, sum = 0;
	for (int k = 0; k < RR_BWD_COMP_RECOMPUTE; k++) {
		n += r->categories[k].kernels;
		sum += r->categories[k].sum_ns;
	}
	print_message("%-9s %6lld gpu events, coverage %.4f, steps %zu, "
		      "fwd %s/%s (%s) bwd %s/%s (%s): %s\n",
		      rr_mode_name(r->mode), (long long)gpu_n, r->coverage, r->nsteps,
		      r->fwd_thread.pid, r->fwd_thread.tid, rr_role_rule_name(r->fwd_thread.rule),
		      r->bwd_thread.pid, r->bwd_thread.tid, rr_role_rule_name(r->bwd_thread.rule),
		      strrchr(path, '/') + 1);
	assert_int_equal(n, gpu_n);
	assert_int_equal(sum, gpu_sum);
	assert_int_equal(r->nkernels, gpu_n);
	check_invariants(r);
	trace_reader_close(rd);
	arena_release(&a);
}

static void test_real_traces(void **state)
{
	struct strbuf cerr = STRBUF_INIT;
	char pat[4200], dir[4000];
	glob_t g;
	const char *shared = unit_shared_dir(dir, sizeof(dir));
	(void)state;
	if (!shared) {
		print_message("# skip: neither PP_SHARED nor PP_ROOT is set\n");
		skip();
	}
	snprintf(pat, sizeof(pat), "%s/data/real/*/*.gz", shared);
	if (glob(pat, 0, NULL, &g) != 0) {
		print_message("# skip: no real traces match %s\n", pat);
		skip();
	}
	struct patterns *pats = patterns_new(NULL, &cerr);
	assert_non_null(pats);
	snprintf(pat, sizeof(pat), "%s/data/real/*/*/*.gz", shared);
	glob(pat, GLOB_APPEND, NULL, &g);
	print_message("%zu real traces\n", g.gl_pathc);
	assert_true(g.gl_pathc >= 45);
	for (size_t i = 0; i < g.gl_pathc; i++)
		classify_file(g.gl_pathv[i], pats);
	globfree(&g);
	patterns_free(pats);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_real_traces),
	  })
