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

static int count(const struct gen_act *a, int n, int kind)
{
	int c = 0;
	for (int i = 0; i < n; i++)
		c += a[i].kind == kind;
	return c;
}

static void test_sched_1f1b_orders(void **state)
{
	(void)state;
	struct gen_act *a;
	/* Stage 0 of 4, 8 micro-batches: 3 warm-up forwards, then 1F1B. */
	int n = gen_sched_build(4, 1, 8, 0, &a);
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
	assert_int_equal(first_b, 4);   /* 3 warm-up + 1 before the first backward */
	assert_int_equal(count(a, n, GA_RECV_F), 0); /* first stage receives nothing */
	assert_int_equal(count(a, n, GA_SEND_F_RECV_B), 5);
	free(a);
	/* Last stage: strictly alternating, no sends forward. */
	n = gen_sched_build(4, 1, 8, 3, &a);
	assert_int_equal(count(a, n, GA_SEND_F) + count(a, n, GA_SEND_F_RECV_B), 0);
	assert_int_equal(count(a, n, GA_SEND_B_RECV_F), 7);
	assert_int_equal(count(a, n, GA_SEND_B), 1);
	free(a);
}

static void test_sched_interleaved(void **state)
{
	(void)state;
	struct gen_act *a;
	assert_int_equal(gen_sched_build(4, 2, 6, 0, &a), PP_EINVAL);
	int n = gen_sched_build(4, 2, 8, 1, &a);
	assert_int_equal(count(a, n, GA_FWD), 16);
	assert_int_equal(count(a, n, GA_BWD), 16);
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
	free(a);
}

static void test_parse_options(void **state)
{
	(void)state;
	unsigned v;
	char err[128];
	int *l, n;
	assert_int_equal(gen_parse_nasty("bom,unsorted", &v, err, sizeof(err)), 0);
	assert_int_equal(v, GN_BOM | GN_UNSORTED);
	assert_int_equal(gen_parse_nasty("all", &v, err, sizeof(err)), 0);
	assert_false(v & GN_TRUNCATE);
	assert_true(v & GN_NAN);
	assert_int_equal(gen_parse_nasty("bom,nope", &v, err, sizeof(err)), PP_EINVAL);
	assert_non_null(strstr(err, "'nope'"));
	assert_int_equal(gen_parse_int_list("8,0-3,2", &l, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(l[0], 0);
	assert_int_equal(l[4], 8);
	free(l);
	assert_int_equal(gen_parse_int_list("3-1", &l, &n), PP_EINVAL);
	assert_int_equal(gen_parse_int_list("", &l, &n), PP_EINVAL);
}

static void test_sim_collectives_end_together(void **state)
{
	(void)state;
	struct gen_cfg cfg = { .vpp = 1, .microbatches = 4, .layers = 2, .kpl = 6, .seed = 3,
			       .iteration = 1, .t0 = 1000000000000LL };
	char err[128];
	assert_int_equal(gen_layout_init(&cfg.lay, 2, 1, 1, 1, 2), 0);
	struct gen_cluster *c = gen_sim_build(&cfg, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(gen_sim_run(c), 0);
	struct gen_rank *a = gen_sim_rank(c, 0), *b = gen_sim_rank(c, 1);
	assert_int_equal(a->nk, b->nk);
	int checked = 0;
	for (int i = 0; i < a->nk; i++) {
		if (a->k[i].coll < 0)
			continue;
		assert_int_equal(a->k[i].ts + a->k[i].dur, b->k[i].ts + b->k[i].dur);
		checked++;
	}
	assert_true(checked > 10);
	gen_sim_free(c);
}

/* The VPP labels that ppagg puts on a rank's steps (rr_vpp_label, from
 * the step's position) are the (chunk, micro-batch) the schedule builder
 * runs at that position, for every stage of many shapes. */
static void test_vpp_labels_follow_the_schedule(void **state)
{
	(void)state;
	for (int pp = 1; pp <= 6; pp++)
		for (int vpp = 1; vpp <= 4; vpp++)
			for (int m = pp; m <= 4 * pp; m += pp) {
				if (vpp > 1 && m % pp)
					continue;
				for (int s = 0; s < pp; s++) {
					struct gen_act *a = NULL;
					int n = gen_sched_build(pp, vpp, m, s, &a);
					int64_t seq[2] = { 0, 0 };
					assert_true(n > 0);
					for (int i = 0; i < n; i++) {
						if (a[i].kind != GA_FWD && a[i].kind != GA_BWD)
							continue;
						bool bwd = a[i].kind == GA_BWD;
						int32_t chunk, mb;
						rr_vpp_label(seq[bwd]++, bwd, pp, vpp, &chunk, &mb);
						if (chunk != a[i].chunk || mb != a[i].mb)
							fail_msg("pp %d vpp %d m %d stage %d %s #%lld: label (%d, %d), schedule (%d, %d)",
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_coords_and_groups),
		cmocka_unit_test(test_layout_topology_text),
		cmocka_unit_test(test_sched_1f1b_orders),
		cmocka_unit_test(test_sched_interleaved),
		cmocka_unit_test(test_parse_options),
		cmocka_unit_test(test_sim_collectives_end_together),
		cmocka_unit_test(test_vpp_labels_follow_the_schedule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
