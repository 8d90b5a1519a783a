/* Unit tests for agg_vpp_decide() (pipeline/agg/agg_vpp.c, docs/ppagg.md
 * "VPP") on hand-made schedules of pp 2: agg.vpp confirmed, overridden by
 * the one size the schedule fits, kept when the ranks fit no common size or
 * tell nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agg/agg_iter.h"
#include "agg/agg_vpp.h"
#include "agg/topology.h"
#include "tests/unit/unit.h"

/* A rank whose fwd/bwd steps run in the order of prog ('f', 'b'), 10 ns
 * apart. */
static void make_rank(struct agg_rank *r, int rank, const char *prog)
{
	size_t n = strlen(prog);
	memset(r, 0, sizeof(*r));
	r->in.rank = rank;
	r->in.ok = true;
	r->trace_id = 1 + rank;
	r->status = "ok";
	r->in.megatron = true;
	r->steps = calloc(n, sizeof(*r->steps));
	assert_non_null(r->steps);
	r->nsteps = n;
	for (size_t i = 0; i < n; i++)
		r->steps[i] = (struct agg_step){ .phase = prog[i] == 'f' ? RR_FWD : RR_BWD,
						 .has_kernels = true,
						 .s = (int64_t)(10 * i),
						 .e = (int64_t)(10 * i + 5),
						 .chunk = -1,
						 .microbatch = -1 };
}

/* Decides the VPP of ranks 0 (stage 0) and 1 (stage 1) of tp1 pp2 dp1 running
 * prog0 and prog1 in each of niters iterations (3, 4, ...), with agg.vpp =
 * cfg; t NULL when !topo. */
static void decide_iters(const char *prog0, const char *prog1, int cfg, bool topo, size_t niters,
			 struct agg_vpp *v)
{
	struct topology t;
	struct agg_rank r[2];
	struct agg_iter it[4];
	assert_true(niters <= 4);
	for (size_t i = 0; i < niters; i++)
		it[i] = (struct agg_iter){ .iteration = 3 + (int)i, .ranks = r, .nranks = 2 };
	topo_init(&t);
	assert_int_equal(topo_from_sizes(&t, 1, 2, 1, 1, 1), 0);
	topo_index(&t);
	make_rank(&r[0], 0, prog0);
	make_rank(&r[1], 1, prog1);
	agg_vpp_decide(it, niters, topo ? &t : NULL, cfg, v);
	free(r[0].steps);
	free(r[1].steps);
	topo_release(&t);
}

/* The same in one iteration (3). */
static void decide(const char *prog0, const char *prog1, int cfg, bool topo, struct agg_vpp *v)
{
	decide_iters(prog0, prog1, cfg, topo, 1, v);
}

/* 1F1B, 4 micro-batches: stage 0 warms up with 1 forward, stage 1 with none. */
#define S0_1F1B "ffbfbfbb"
#define S1_1F1B "fbfbfbfb"

static void test_confirmed_and_overridden(void **state)
{
	struct agg_vpp v = { .why = STRBUF_INIT };
	(void)state;
	decide(S0_1F1B, S1_1F1B, 1, true, &v);
	assert_int_equal(v.from, AGG_VPP_CONFIRMED);
	assert_int_equal(v.vpp, 1);
	decide(S0_1F1B, S1_1F1B, 2, true, &v);
	assert_int_equal(v.from, AGG_VPP_SCHEDULE);
	assert_int_equal(v.vpp, 1);
	assert_int_equal(v.cfg, 2);
	assert_string_equal(v.why.buf,
			    "the forward steps before the first backward fit vpp 1 only, on all 2 "
			    "ranks (2 stages; e.g. rank 0, stage 0: 2 of 4 forward steps)");
	/* interleaved, vpp 2, 2 micro-batches = pp: every forward first */
	decide("ffffbbbb", "ffffbbbb", 1, true, &v);
	assert_int_equal(v.from, AGG_VPP_SCHEDULE);
	assert_int_equal(v.vpp, 2);
	strbuf_release(&v.why);
}

/* The evidence counts ranks, not rank-iterations: two iterations of the
 * same two ranks are still "2 ranks". */
static void test_ranks_counted_once_over_iterations(void **state)
{
	struct agg_vpp v = { .why = STRBUF_INIT };
	(void)state;
	decide_iters(S0_1F1B, S1_1F1B, 2, true, 2, &v);
	assert_int_equal(v.from, AGG_VPP_SCHEDULE);
	assert_int_equal(v.vpp, 1);
	assert_string_equal(v.why.buf,
			    "the forward steps before the first backward fit vpp 1 only, on all 2 "
			    "ranks (2 stages; e.g. rank 0, stage 0: 2 of 4 forward steps)");
	decide_iters(S0_1F1B, S1_1F1B, 1, true, 3, &v);
	assert_int_equal(v.from, AGG_VPP_CONFIRMED);
	assert_string_equal(v.why.buf, "the forward steps before the first backward fit it on 2 "
				       "ranks (2 stages)");
	strbuf_release(&v.why);
}

static void test_kept_when_the_schedule_does_not_settle_it(void **state)
{
	struct agg_vpp v = { .why = STRBUF_INIT };
	(void)state;
	/* rank 0 fits vpp 1 only, rank 1 vpp 2 only: no common size */
	decide(S0_1F1B, "ffffbbbb", 4, true, &v);
	assert_int_equal(v.from, AGG_VPP_NO_FIT);
	assert_int_equal(v.vpp, 4);
	assert_non_null(strstr(v.why.buf, "(rank 1, stage 1, iteration 3: 4 of 4 fits none"));
	/* agg.vpp takes up to 1000000 (cmd/ppagg.c), beyond the 1-64 sizes
	 * tried: kept as it is, and no rule named for it */
	decide(S0_1F1B, "ffffbbbb", 100, true, &v);
	assert_int_equal(v.from, AGG_VPP_NO_FIT);
	assert_int_equal(v.vpp, 100);
	assert_null(v.rule);
	/* no backward step: nothing to tell */
	decide("ffff", "ffff", 3, true, &v);
	assert_int_equal(v.from, AGG_VPP_UNTOLD);
	assert_int_equal(v.vpp, 3);
	assert_string_equal(v.why.buf, "no rank ran both forward and backward steps");
	decide(S0_1F1B, S1_1F1B, 2, false, &v);
	assert_int_equal(v.from, AGG_VPP_UNTOLD);
	assert_int_equal(v.vpp, 2);
	assert_string_equal(v.why.buf, "no topology");
	strbuf_release(&v.why);
}

/* A salvaged trace (status partial) is cut short: its forward steps stop
 * early and fit no size. It neither confirms nor overturns agg.vpp: the
 * ranks stored whole decide. */
static void test_salvaged_rank_ignored(void **state)
{
	struct agg_vpp v = { .why = STRBUF_INIT };
	struct topology t;
	struct agg_rank r[2];
	struct agg_iter it = { .iteration = 3, .ranks = r, .nranks = 2 };
	(void)state;
	topo_init(&t);
	assert_int_equal(topo_from_sizes(&t, 1, 2, 1, 1, 1), 0);
	topo_index(&t);
	make_rank(&r[0], 0, S0_1F1B);
	make_rank(&r[1], 1, "ffb"); /* stage 1 cut after its first backward */
	r[1].status = "partial";
	agg_vpp_decide(&it, 1, &t, 1, &v);
	assert_int_equal(v.from, AGG_VPP_CONFIRMED);
	assert_string_equal(v.why.buf, "the forward steps before the first backward fit it on 1 "
				       "rank (1 stage)");
	free(r[0].steps);
	free(r[1].steps);
	topo_release(&t);
	strbuf_release(&v.why);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_confirmed_and_overridden),
		  cmocka_unit_test(test_ranks_counted_once_over_iterations),
		  cmocka_unit_test(test_kept_when_the_schedule_does_not_settle_it),
		  cmocka_unit_test(test_salvaged_rank_ignored),
	  })
