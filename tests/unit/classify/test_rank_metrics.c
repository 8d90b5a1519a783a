/* rank_metrics_totals(): the whole-rank metrics of docs/semantics.md §6 over
 * tagged intervals, against the definitions evaluated literally with
 * util/interval.h (union of each subset, overlap as the intersection of two
 * merged lists), on random intervals in and out of start order, empty and
 * inverted ones included; and the cases the importers rely on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "classify/rank_metrics.h"
#include "model/rank_result.h"
#include "util/interval.h"
#include "tests/unit/unit.h"

enum { MAXN = 300 };

/* Union of the intervals of v whose kind has all of want and none of
 * avoid. */
static int64_t union_of(const struct rm_interval *v, size_t n, unsigned want, unsigned avoid,
			struct ivl *tmp, size_t *k)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if ((v[i].kind & want) == want && !(v[i].kind & avoid))
			tmp[m++] = (struct ivl){ v[i].start_ns, v[i].end_ns };
	*k = ivl_merge(tmp, m);
	return ivl_total(tmp, *k);
}

static void check(const struct rm_interval *v0, size_t n)
{
	static struct rm_interval v[MAXN];
	static struct ivl a[MAXN], b[MAXN];
	struct rank_result r;
	size_t ka, kb;
	memcpy(v, v0, n * sizeof(*v));
	memset(&r, 0x5a, sizeof(r));
	r.nkernels = 77; /* not a metric: left as it is */
	rank_metrics_totals(v, n, &r);
	assert_int_equal(r.nkernels, 77);
	for (size_t i = 1; i < n; i++) /* sorted by start, same intervals */
		assert_true(v[i - 1].start_ns <= v[i].start_ns);
	assert_int_equal(r.has_window, n > 0);
	int64_t ws = n ? INT64_MAX : 0, we = n ? INT64_MIN : 0;
	for (size_t i = 0; i < n; i++) {
		ws = v0[i].start_ns < ws ? v0[i].start_ns : ws;
		we = v0[i].end_ns > we ? v0[i].end_ns : we;
	}
	assert_int_equal(r.window_start_ns, ws);
	assert_int_equal(r.window_end_ns, we);
	int64_t busy = union_of(v0, n, 0, 0, a, &ka);
	assert_int_equal(r.gpu_busy_ns, busy);
	assert_int_equal(r.idle_ns, we - ws - busy);
	assert_int_equal(r.bubble_ns, we - ws - union_of(v0, n, 0, RM_PP, a, &ka));
	assert_int_equal(r.comp_busy_ns, union_of(v0, n, RM_COMP, 0, a, &ka));
	assert_int_equal(r.comm_busy_ns, union_of(v0, n, RM_COMM, 0, b, &kb));
	assert_int_equal(r.overlap_ns, ivl_overlap(a, ka, b, kb));
	double cov = busy ? (double)union_of(v0, n, RM_COVERED, 0, a, &ka) / (double)busy : 0.0;
	assert_true(r.coverage == cov);
}

static void test_random(void **state)
{
	(void)state;
	static struct rm_interval v[MAXN];
	srand(12345);
	for (int round = 0; round < 2000; round++) {
		size_t n = (size_t)(rand() % (round < 20 ? 3 : MAXN));
		int64_t span = 1 + rand() % 1000, t = (rand() % 2000) - 1000;
		bool in_order = rand() % 2;
		for (size_t i = 0; i < n; i++) {
			if (in_order)
				t += rand() % (span / 10 + 1);
			int64_t s = in_order ? t : (int64_t)(rand() % span) - span / 2;
			int64_t len = rand() % 8 ? rand() % (span / 4 + 1) : -(rand() % 3);
			v[i] = (struct rm_interval){ s, s + len, (unsigned)rand() % 16 };
		}
		check(v, n);
	}
}

/* The metrics of r, in the order of the ranks view. */
static void expect(const struct rank_result *r, const int64_t want[8], double coverage)
{
	const int64_t got[8] = { r->window_start_ns, r->window_end_ns, r->gpu_busy_ns,
				 r->idle_ns,         r->bubble_ns,     r->comp_busy_ns,
				 r->comm_busy_ns,    r->overlap_ns };
	for (int i = 0; i < 8; i++)
		assert_int_equal(got[i], want[i]);
	assert_true(r->coverage == coverage);
}

/* What the importers give: an op trace's ops (every one covered, comp or
 * comm, the pipeline's sends/receives RM_PP) and PP-timer steps (comp). */
static void test_importer_shapes(void **state)
{
	(void)state;
	struct rm_interval ops[] = {
		{ 0, 10, RM_COMP | RM_COVERED },
		{ 5, 20, RM_COMM | RM_PP | RM_COVERED },
		{ 30, 40, RM_COMM | RM_COVERED },
		{ 35, 50, RM_COMP | RM_COVERED },
	};
	struct rank_result r = { 0 };
	rank_metrics_totals(ops, 4, &r);
	assert_true(r.has_window);
	expect(&r, (const int64_t[8]){ 0, 50, 40, 10, 50 - 30, 25, 25, 5 + 5 }, 1.0);

	/* steps sorted by (phase, start): out of start order, a zero-length
	 * one at the end of the window */
	struct rm_interval steps[] = {
		{ 100, 200, RM_COMP },
		{ 300, 350, RM_COMP },
		{ 150, 250, RM_COMP },
		{ 400, 400, RM_COMP },
	};
	memset(&r, 0, sizeof(r));
	rank_metrics_totals(steps, 4, &r);
	expect(&r, (const int64_t[8]){ 100, 400, 200, 100, 100, 200, 0, 0 }, 0.0);

	/* nothing: no window, zeros (the caller stores NULL metrics) */
	memset(&r, 0x5a, sizeof(r));
	rank_metrics_totals(NULL, 0, &r);
	assert_false(r.has_window);
	expect(&r, (const int64_t[8]){ 0 }, 0.0);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_random),
		  cmocka_unit_test(test_importer_shapes),
	  })
