/* The clock offsets of the workers (whatif_clock_estimate(), docs/whatif.md
 * §4.1) on synthetic jobs whose workers' clocks are shifted by known
 * offsets: exact when the ops that sync end together, within the noise
 * when their ends jitter, robust to the samples of combined p2p calls that
 * end late, and zero — nothing to correct — when the clocks agree. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/pp.h"
#include "whatif/wi_ops.h"
#include "whatif/whatif.h"
#include "wi_synth.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

/* A deterministic generator (no libc state shared with other tests). */
static uint64_t next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* Uniform in [-a, a] ns. */
static int64_t noise(uint64_t *s, int64_t a)
{
	return a ? (int64_t)(next(s) % (uint64_t)(2 * a + 1)) - a : 0;
}

static bool is_p2p(int type)
{
	return type == OP_FWD_SEND || type == OP_FWD_RECV || type == OP_BWD_SEND ||
	       type == OP_BWD_RECV;
}

/* The job's table with every worker's clock moved by off[stage·DP + dp],
 * every end moved by up to +-jitter ns, and late_percent of the p2p ops of
 * the odd stages ending 30-80 µs late, as a combined call that waits for
 * its other neighbour does (one-sided: every pair of workers has one odd
 * stage). */
static void job(struct wi_table *t, const struct wi_synth *c, const int64_t *off, int64_t jitter,
		int late_percent, uint64_t seed)
{
	wi_table_init(t);
	wi_synth_job(t, c);
	for (size_t i = 0; i < t->n; i++) {
		struct wi_op *o = &t->ops[i];
		int64_t d = off ? off[o->stage * c->dp + o->dp_rank] : 0;
		o->start_ns += d;
		o->end_ns += d + noise(&seed, jitter);
		if (is_p2p(o->optype) && o->stage % 2 && (int)(next(&seed) % 100) < late_percent)
			o->end_ns += 30000 + (int64_t)(next(&seed) % 50000);
		if (o->end_ns < o->start_ns)
			o->end_ns = o->start_ns;
	}
}

static void estimate(const struct wi_table *t, struct whatif_clock *clk)
{
	struct whatif *e = NULL;
	struct strbuf err = STRBUF_INIT;
	strbuf_reset(&err);
	if (whatif_new(t, NULL, &e, &err))
		print_message("%s\n", err.buf);
	assert_non_null(e);
	whatif_clock_estimate(e, clk);
	whatif_free(e);
	strbuf_release(&err);
}

/* The clocks estimated from job(c, off, jitter, late_percent, seed). */
static void clocks_of(const struct wi_synth *c, const int64_t *off, int64_t jitter,
		      int late_percent, uint64_t seed, struct whatif_clock *clk)
{
	struct wi_table t;
	job(&t, c, off, jitter, late_percent, seed);
	estimate(&t, clk);
	wi_table_release(&t);
}

/* Offsets of up to +-800 µs, host-like: workers come in pairs sharing one;
 * the worker of the lowest rank (stage 0, dp 0) is the reference. */
static int64_t *offsets(int pp, int dp, uint64_t seed)
{
	int64_t *off = xcalloc((size_t)(pp * dp), sizeof(*off));
	for (int w = 0; w < pp * dp; w += 2) {
		off[w] = w ? noise(&seed, 800000) : 0;
		if (w + 1 < pp * dp)
			off[w + 1] = off[w];
	}
	return off;
}

static int64_t max_error(const struct whatif_clock *clk, const int64_t *off)
{
	int64_t most = 0;
	for (int w = 0; w < clk->dp * clk->pp; w++) {
		int64_t want = off ? off[w] - off[clk->ref] : 0;
		most = llabs(clk->offset_ns[w] - want) > most ? llabs(clk->offset_ns[w] - want)
							      : most;
	}
	return most;
}

/* Ends that coincide give the offsets exactly; the same table unshifted
 * gives zeros and nothing to correct. */
static void test_exact(void **state)
{
	struct wi_synth c;
	struct whatif_clock clk;
	(void)state;
	wi_synth_defaults(&c, 4, 4, 8, 3);
	c.seed = 7;
	int64_t *off = offsets(4, 4, 11);
	clocks_of(&c, off, 0, 0, 1, &clk);
	assert_true(clk.connected);
	assert_int_equal(clk.ref, 0);
	assert_int_equal(max_error(&clk, off), 0);
	assert_int_equal(clk.error_ns, 0);
	whatif_clock_release(&clk);

	clocks_of(&c, NULL, 0, 0, 1, &clk);
	assert_int_equal(max_error(&clk, NULL), 0);
	assert_int_equal(clk.error_ns, 0);
	whatif_clock_release(&clk);
	free(off);
}

/* Ends that jitter by +-1 µs: every offset within 1 µs, and the error
 * the estimate reports covers what it missed. */
static void test_jitter(void **state)
{
	struct wi_synth c;
	struct whatif_clock clk;
	(void)state;
	wi_synth_defaults(&c, 4, 4, 8, 4);
	int64_t *off = offsets(4, 4, 23);
	clocks_of(&c, off, 1000, 0, 5, &clk);
	int64_t err = max_error(&clk, off);
	print_message("jitter 1 us: largest error %lld ns, reported %lld ns\n", (long long)err,
		      (long long)clk.error_ns);
	assert_true(err <= 1000);
	assert_true(clk.error_ns >= err);
	whatif_clock_release(&clk);
	free(off);
}

/* 60 % of the odd stages' p2p ops end 30-80 µs late (a plain median of a
 * pair's samples is then among the late ones, tens of µs off): the densest
 * window ignores them. With one replica (DP 1) the p2p pairs and the
 * embedding pair are all the evidence. */
static void test_late_p2p(void **state)
{
	struct wi_synth c;
	struct whatif_clock clk;
	(void)state;
	for (int dp = 1; dp <= 2; dp++) {
		wi_synth_defaults(&c, 4, dp, 8, 4);
		int64_t *off = offsets(4, dp, 31);
		clocks_of(&c, off, 500, 60, 9, &clk);
		int64_t err = max_error(&clk, off);
		print_message(
			"dp %d, 60 %% late p2p ends: largest error %lld ns, reported %lld ns\n", dp,
			(long long)err, (long long)clk.error_ns);
		assert_true(clk.connected);
		assert_true(err <= 1000);
		whatif_clock_release(&clk);
		free(off);
	}
}

/* The what-if numbers of the corrected table are those of the unshifted
 * one: the estimate moves exactly with the clocks. */
static void test_same_answer(void **state)
{
	struct wi_synth c;
	struct wi_table t, u;
	struct whatif_clock clk;
	struct whatif_result a, b;
	struct whatif *e = NULL;
	struct strbuf err = STRBUF_INIT;
	(void)state;
	wi_synth_defaults(&c, 4, 2, 8, 3);
	wi_synth_slow(&c, 1.8, 1, 2);
	int64_t *off = offsets(4, 2, 41);
	job(&t, &c, off, 0, 0, 3);
	job(&u, &c, NULL, 0, 0, 3);
	estimate(&t, &clk);
	for (size_t i = 0; i < t.n; i++) {
		struct wi_op *o = &t.ops[i];
		int64_t d = clk.offset_ns[o->stage * c.dp + o->dp_rank];
		o->start_ns -= d;
		o->end_ns -= d;
	}
	strbuf_reset(&err);
	assert_int_equal(whatif_new(&t, NULL, &e, &err), 0);
	whatif_run(e, &a);
	whatif_free(e);
	strbuf_reset(&err);
	assert_int_equal(whatif_new(&u, NULL, &e, &err), 0);
	whatif_run(e, &b);
	whatif_free(e);
	assert_true(a.s > 1.1);
	assert_true(fabs(a.s - b.s) <= 1e-12 * b.s);
	assert_true(fabs(a.m_w - b.m_w) <= 1e-12);
	assert_int_equal(a.workers[0].rank, b.workers[0].rank);
	whatif_result_release(&a);
	whatif_result_release(&b);
	whatif_clock_release(&clk);
	wi_table_release(&t);
	wi_table_release(&u);
	free(off);
	strbuf_release(&err);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_exact),
		  cmocka_unit_test(test_jitter),
		  cmocka_unit_test(test_late_p2p),
		  cmocka_unit_test(test_same_answer),
	  })
