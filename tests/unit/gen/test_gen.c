/* Unit tests for ppgen's pieces: layout and groups, the Megatron schedule
 * orders, option parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gen/gen.h"
#include "gen/gen_layout.h"
#include "gen/gen_model.h"
#include "gen/gen_sched.h"
#include "model/rank_result.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

static void test_layout_coords_and_groups(void **state)
{
	(void)state;
	struct gen_layout l;
	int r[8];
	assert_int_equal(gen_layout_init(&l, 2, 1, 1, 2, 4), 0);
	assert_int_equal(l.world, 16);
	/* rank = tp + 2 * (dp + 2 * pp) */
	assert_int_equal(gen_layout_coord(&l, 13, GEN_TP), 1);
	assert_int_equal(gen_layout_coord(&l, 13, GEN_DP), 0);
	assert_int_equal(gen_layout_coord(&l, 13, GEN_PP), 3);
	assert_int_equal(gen_layout_ngroups(&l, GEN_PP), 4);
	gen_layout_group_ranks(&l, GEN_PP, gen_layout_group_of(&l, 13, GEN_PP), r);
	assert_int_equal(r[0], 1);
	assert_int_equal(r[3], 13);
	gen_layout_group_ranks(&l, GEN_DP, gen_layout_group_of(&l, 13, GEN_DP), r);
	assert_int_equal(r[0], 13);
	assert_int_equal(r[1], 15);
	/* Group indices follow the groups' lowest ranks. */
	int last = -1;
	for (int g = 0; g < gen_layout_ngroups(&l, GEN_TP); g++) {
		gen_layout_group_ranks(&l, GEN_TP, g, r);
		assert_true(r[0] > last);
		last = r[0];
		assert_int_equal(gen_layout_group_of(&l, r[1], GEN_TP), g);
	}
	assert_int_equal(gen_layout_with(&l, 13, GEN_PP, 0), 1);
	assert_int_equal(gen_layout_init(&l, 0, 1, 1, 1, 1), PP_EINVAL);
}

static void test_layout_topology_text(void **state)
{
	(void)state;
	struct gen_layout l;
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(gen_layout_init(&l, 2, 1, 1, 2, 2), 0);
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(gen_layout_write_topology(&l, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "TP Size: 2\nPP Size: 2\nCP Size: 1\nEP Size: 1\nDP Size: 2\n"
				    "World Size: 8\n"));
	assert_non_null(strstr(buf, "PIPELINE PARALLEL (PP) GROUPS\n----"));
	assert_non_null(strstr(buf, "Group 1: [0, 4]\nGroup 2: [1, 5]"));
	assert_non_null(strstr(buf, "Group 0: [0, 1, 4, 5]\nGroup 1: [2, 3, 6, 7]\n"));
	assert_null(strstr(buf, "CONTEXT PARALLEL"));
	free(buf);
}

/* Calls of function fn in a[0..n); with xfer, only those that make it. */
static int count_calls(const struct gen_act *a, int n, int fn, int xfer)
{
	int c = 0;
	for (int i = 0; i < n; i++)
		c += a[i].kind == GA_CALL && a[i].fn == fn && (xfer < 0 || a[i].x[xfer].chunk >= 0);
	return c;
}

/* Calls of a[0..n) that transfer something (launch a kernel). */
static int count_kernels(const struct gen_act *a, int n)
{
	int c = 0;
	for (int i = 0; i < n; i++) {
		bool any = false;
		for (int d = 0; d < GX_N; d++)
			any |= a[i].kind == GA_CALL && a[i].x[d].chunk >= 0;
		c += any;
	}
	return c;
}

static void test_sched_1f1b_orders(void **state)
{
	(void)state;
	struct gen_act *a;
	/* Stage 0 of 4, 8 micro-batches: 3 warm-up forwards, then 1F1B. */
	int n = gen_sched_build(4, 1, 8, 0, true, &a);
	assert_true(n > 0);
	int f = 0, b = 0, first_b = -1;
	for (int i = 0; i < n; i++) {
		if (a[i].kind == GA_FWD)
			assert_int_equal(a[i].mb, f++);
		if (a[i].kind == GA_BWD) {
			if (first_b < 0)
				first_b = f;
			assert_int_equal(a[i].mb, b++);
		}
	}
	assert_int_equal(f, 8);
	assert_int_equal(b, 8);
	assert_int_equal(first_b, 4); /* 3 warm-up + 1 before the first backward */
	/* The first stage calls recv_forward (3 warm-up + 1) and
	 * send_backward_recv_forward, but they return at once. */
	assert_int_equal(count_calls(a, n, GF_RECV_F, -1), 4);
	assert_int_equal(count_calls(a, n, GF_RECV_F, GX_RECV_F), 0);
	assert_int_equal(count_calls(a, n, GF_SEND_B_RECV_F, -1), 4);
	for (int i = 0; i < n; i++)
		if (a[i].kind == GA_CALL && a[i].fn == GF_RECV_F)
			assert_false(a[i].communicate);
	assert_int_equal(count_calls(a, n, GF_SEND_F_RECV_B, GX_RECV_B), 5);
	free(a);
	/* Last stage: strictly alternating, no sends forward. */
	n = gen_sched_build(4, 1, 8, 3, true, &a);
	assert_int_equal(count_calls(a, n, GF_SEND_F, GX_SEND_F) +
				 count_calls(a, n, GF_SEND_F_RECV_B, GX_SEND_F),
			 0);
	assert_int_equal(count_calls(a, n, GF_SEND_F_RECV_B, -1), 8);
	assert_int_equal(count_calls(a, n, GF_SEND_B_RECV_F, GX_SEND_B), 7);
	assert_int_equal(count_calls(a, n, GF_SEND_B, GX_SEND_B), 1);
	free(a);
	/* No pipeline: forward_backward_no_pipelining makes no calls. */
	n = gen_sched_build(1, 1, 3, 0, true, &a);
	assert_int_equal(n, 6);
	assert_int_equal(count_kernels(a, n), 0);
	free(a);
}

static void test_sched_interleaved(void **state)
{
	(void)state;
	struct gen_act *a;
	assert_int_equal(gen_sched_build(4, 2, 6, 0, true, &a), PP_EINVAL);
	int n = gen_sched_build(4, 2, 8, 1, true, &a);
	int fwd = 0, bwd = 0;
	for (int i = 0; i < n; i++) {
		fwd += a[i].kind == GA_FWD;
		bwd += a[i].kind == GA_BWD;
	}
	assert_int_equal(fwd, 16);
	assert_int_equal(bwd, 16);
	/* Megatron's order: first forwards are chunk 0, micro-batches 0..3, then chunk 1. */
	int seen = 0;
	for (int i = 0; i < n && seen < 5; i++)
		if (a[i].kind == GA_FWD) {
			assert_int_equal(a[i].chunk, seen < 4 ? 0 : 1);
			assert_int_equal(a[i].mb, seen % 4);
			seen++;
		}
	/* The first backward is of the last chunk. */
	for (int i = 0; i < n; i++)
		if (a[i].kind == GA_BWD) {
			assert_int_equal(a[i].chunk, 1);
			assert_int_equal(a[i].mb, 0);
			break;
		}
	/* Stage 1 of 4, 16 virtual micro-batches: warm-up (4 - 1 - 1) * 2 + 4 =
	 * 8 forwards, each followed by a call, the last one four-way; 8 steady
	 * four-way calls; 8 cool-down send_backward_recv_backward. */
	assert_int_equal(count_calls(a, n, GF_RECV_F, -1), 1);
	assert_int_equal(count_calls(a, n, GF_SEND_F_RECV_F, -1), 7);
	assert_int_equal(count_calls(a, n, GF_SEND_F_B_RECV_F_B, -1), 9);
	assert_int_equal(count_calls(a, n, GF_SEND_B_RECV_B, -1), 8);
	assert_int_equal(count_calls(a, n, GF_RECV_B, -1), 0);
	for (int i = 0; i < n; i++)
		assert_true(a[i].kind != GA_CALL || a[i].communicate);
	free(a);
	/* pp = microbatches: every forward is a warm-up one, and the cool-down
	 * starts with recv_backward (a no-op on the last stage). */
	n = gen_sched_build(4, 2, 4, 3, true, &a);
	assert_int_equal(count_calls(a, n, GF_SEND_F_B_RECV_F_B, -1), 0);
	assert_int_equal(count_calls(a, n, GF_RECV_B, -1), 1);
	assert_int_equal(count_calls(a, n, GF_RECV_B, GX_RECV_B), 0);
	free(a);
}

/* Over the whole pipeline, every transfer a call sends is received exactly
 * once, by the stage that needs it, before the step that consumes it and
 * after that stage's previous step of the same chunk and direction (one
 * tensor in flight per chunk, as Megatron's queues hold them). */
static void sched_transfers_pair_up(bool legacy)
{
	for (int pp = 2; pp <= 5; pp++)
		for (int vpp = 1; vpp <= 3; vpp++)
			for (int m = pp; m <= 3 * pp; m += pp) {
				int PV = pp * vpp, ntag = PV * m * 2;
				int *sent = calloc((size_t)ntag, sizeof(int));
				int *recv = calloc((size_t)ntag, sizeof(int));
				for (int s = 0; s < pp; s++) {
					struct gen_act *a;
					int n = gen_sched_build(pp, vpp, m, s, legacy, &a);
					assert_true(n > 0);
					int *got = calloc((size_t)ntag, sizeof(int));
					for (int i = 0; i < n; i++) {
						if (a[i].kind == GA_CALL) {
							for (int d = 0; d < GX_N; d++) {
								if (a[i].x[d].chunk < 0)
									continue;
								int vs = gen_sched_vstage(
									pp, s, a[i].x[d].chunk);
								int bwd = d == GX_SEND_B ||
									  d == GX_RECV_B;
								int from = d == GX_RECV_F   ? vs - 1
									   : d == GX_RECV_B ? vs + 1
											    : vs;
								assert_true(from >= 0 && from < PV);
								int tag =
									(from * m + a[i].x[d].mb) *
										2 +
									bwd;
								if (d == GX_SEND_F ||
								    d == GX_SEND_B) {
									sent[tag]++;
								} else {
									recv[tag]++;
									got[tag] = 1;
								}
							}
							continue;
						}
						/* A step that needs a tensor has received it. */
						int vs = gen_sched_vstage(pp, s, a[i].chunk);
						bool fwd = a[i].kind == GA_FWD;
						int from = fwd ? vs - 1 : vs + 1;
						if (from < 0 || from >= PV)
							continue;
						int tag = (from * m + a[i].mb) * 2 + !fwd;
						if (!got[tag])
							fail_msg(
								"pp %d vpp %d m %d stage %d: %s (%d, %d) runs before its receive",
								pp, vpp, m, s, fwd ? "fwd" : "bwd",
								a[i].chunk, a[i].mb);
					}
					free(got);
					free(a);
				}
				for (int t = 0; t < ntag; t++)
					if (sent[t] != recv[t] || sent[t] > 1)
						fail_msg(
							"pp %d vpp %d m %d: tag %d sent %d times, received %d times",
							pp, vpp, m, t, sent[t], recv[t]);
				free(sent);
				free(recv);
			}
}

/* ... under either warm-up rule (gen_sched_warmup()). */
static void test_sched_transfers_pair_up(void **state)
{
	(void)state;
	sched_transfers_pair_up(true);
	sched_transfers_pair_up(false);
}

static void test_parse_options(void **state)
{
	(void)state;
	unsigned v;
	struct strbuf err = STRBUF_INIT;
	int *l, n;
	strbuf_reset(&err);
	assert_int_equal(gen_parse_nasty("bom,unsorted", &v, &err), 0);
	assert_int_equal(v, GN_BOM | GN_UNSORTED);
	strbuf_reset(&err);
	assert_int_equal(gen_parse_nasty("all", &v, &err), 0);
	assert_false(v & GN_TRUNCATE);
	assert_true(v & GN_NAN);
	strbuf_reset(&err);
	assert_int_equal(gen_parse_nasty("bom,nope", &v, &err), PP_EINVAL);
	assert_non_null(strstr(err.buf, "'nope'"));
	assert_int_equal(gen_parse_int_list("8,0-3,2", &l, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(l[0], 0);
	assert_int_equal(l[4], 8);
	free(l);
	assert_int_equal(gen_parse_int_list("3-1", &l, &n), PP_EINVAL);
	assert_int_equal(gen_parse_int_list("", &l, &n), PP_EINVAL);

	/* Host clock offsets: microseconds to the exact nanosecond. */
	struct gen_clock_skew *sk;
	strbuf_reset(&err);
	assert_int_equal(gen_parse_clock_skew("1:250.5,3:-0.001,0:+7", &sk, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(sk[0].host, 1);
	assert_int_equal(sk[0].offset_ns, 250500);
	assert_int_equal(sk[1].offset_ns, -1);
	assert_int_equal(sk[2].host, 0);
	assert_int_equal(sk[2].offset_ns, 7000);
	free(sk);
	strbuf_reset(&err);
	assert_int_equal(gen_parse_clock_skew("2:1000000", &sk, &n, &err), 0);
	assert_int_equal(sk[0].offset_ns, 1000000000);
	free(sk);
	static const char *const bad[] = { "2",    "2:",   ":5",       "2:1.0001", "2:1000000.001",
					   "-1:5", "2:5x", "1:5,,2:3", "2:." };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strbuf_reset(&err);
		if (gen_parse_clock_skew(bad[i], &sk, &n, &err) != PP_EINVAL)
			fail_msg("'%s' accepted", bad[i]);
		assert_non_null(strstr(err.buf, "HOST:OFFSET_US"));
	}
	strbuf_release(&err);
}

static void test_sim_collectives_end_together(void **state)
{
	(void)state;
	struct gen_cfg cfg = { .vpp = 1,
			       .microbatches = 4,
			       .layers = 2,
			       .kpl = 6,
			       .seed = 3,
			       .iteration = 1,
			       .t0 = 1000000000000LL };
	struct strbuf err = STRBUF_INIT;
	assert_int_equal(gen_layout_init(&cfg.lay, 2, 1, 1, 1, 2), 0);
	strbuf_reset(&err);
	struct gen_cluster *c = gen_sim_build(&cfg, &err);
	assert_non_null(c);
	assert_int_equal(gen_sim_run(c), 0);
	struct gen_rank *a = gen_sim_rank(c, 0), *b = gen_sim_rank(c, 1);
	assert_int_equal(a->nk, b->nk);
	int checked = 0;
	int kinds = 0;
	for (int i = 0; i < a->nk; i++) {
		if (a->k[i].coll < 0 || a->k[i].pg_idx != b->k[i].pg_idx)
			continue; /* not a collective of a group the two share */
		assert_int_equal(a->k[i].ts + a->k[i].dur, b->k[i].ts + b->k[i].dur);
		checked++;
		kinds |= 1 << a->k[i].pg_dim;
	}
	assert_true(checked > 10);
	assert_int_equal(kinds, 1 << GEN_TP | 1 << GEN_WORLD);
	gen_sim_free(c);
	strbuf_release(&err);
}

/* The VPP labels that ppagg puts on a rank's steps (rr_vpp_label, from
 * the step's position) are the (chunk, micro-batch) the schedule builder
 * runs at that position, for every stage of many shapes. */
static void vpp_labels_follow_the_schedule(bool legacy)
{
	for (int pp = 1; pp <= 6; pp++)
		for (int vpp = 1; vpp <= 4; vpp++)
			for (int m = pp; m <= 4 * pp; m += pp) {
				if (vpp > 1 && m % pp)
					continue;
				for (int s = 0; s < pp; s++) {
					struct gen_act *a = NULL;
					int n = gen_sched_build(pp, vpp, m, s, legacy, &a);
					int64_t seq[2] = { 0, 0 };
					assert_true(n > 0);
					for (int i = 0; i < n; i++) {
						if (a[i].kind != GA_FWD && a[i].kind != GA_BWD)
							continue;
						bool bwd = a[i].kind == GA_BWD;
						int32_t chunk, mb;
						rr_vpp_label(seq[bwd]++, bwd, pp, vpp, &chunk, &mb);
						if (chunk != a[i].chunk || mb != a[i].mb)
							fail_msg(
								"pp %d vpp %d m %d stage %d %s #%lld: label (%d, %d), schedule (%d, %d)",
								pp, vpp, m, s, bwd ? "bwd" : "fwd",
								(long long)seq[bwd] - 1, chunk, mb,
								a[i].chunk, a[i].mb);
					}
					assert_int_equal(seq[0], (int64_t)m * vpp);
					assert_int_equal(seq[1], (int64_t)m * vpp);
					free(a);
				}
			}
}

/* ... under either warm-up rule (gen_sched_warmup()). */
static void test_vpp_labels_follow_the_schedule(void **state)
{
	(void)state;
	vpp_labels_follow_the_schedule(true);
	vpp_labels_follow_the_schedule(false);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_layout_coords_and_groups),
		  cmocka_unit_test(test_layout_topology_text),
		  cmocka_unit_test(test_sched_1f1b_orders),
		  cmocka_unit_test(test_sched_interleaved),
		  cmocka_unit_test(test_sched_transfers_pair_up),
		  cmocka_unit_test(test_parse_options),
		  cmocka_unit_test(test_sim_collectives_end_together),
		  cmocka_unit_test(test_vpp_labels_follow_the_schedule),
	  })
