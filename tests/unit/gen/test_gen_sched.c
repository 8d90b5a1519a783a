/* ppgen's copy of Megatron's warm-up count (gen_sched_warmup()) against
 * the analysis' (model/schedule.h sched_warmup()): ppgen may not include
 * model/ (it is the oracle), so the rule is written twice on purpose and
 * this test keeps the two equal over a grid of P 1-8, every stage,
 * m 1..3P, vpp 1-4 and both Megatron rules; and the order
 * gen_sched_build() writes runs that many forwards first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "gen/gen_sched.h"
#include "model/schedule.h"
#include "util/pp.h"
#include "tests/unit/unit.h"

static void test_gen_equals_model(void **state)
{
	(void)state;
	int compared = 0;
	for (int P = 1; P <= 8; P++)
		for (int vpp = 1; vpp <= 4; vpp++) {
			/* P = 1 with vpp > 1 is no Megatron configuration
			 * (Megatron runs forward_backward_no_pipelining) and
			 * ppgen refuses it (gen_sim_build()):
			 * gen_sched_warmup() still answers the interleaved
			 * formula, the model the no-pipelining count. */
			if (P == 1 && vpp > 1)
				continue;
			for (int m = 1; m <= 3 * P; m++)
				for (int legacy = 0; legacy <= 1; legacy++) {
					struct sched_shape sh = {
						.pp = P,
						.vpp = vpp,
						.m = m,
						.interleaved = vpp > 1,
						.rule = legacy ? SCHED_LEGACY : SCHED_CORE,
					};
					for (int s = 0; s < P; s++) {
						int g = gen_sched_warmup(P, vpp, m, s, legacy);
						int w = sched_warmup(&sh, s);
						if (g != w)
							print_error("pp %d vpp %d m %d stage %d "
								    "%s: ppgen %d, model %d\n",
								    P, vpp, m, s,
								    legacy ? "legacy" : "core", g,
								    w);
						assert_int_equal(g, w);
						compared++;
					}
				}
		}
	/* 2 rules x 3 m x 1 stage for P = 1; 2 x 4 vpp x 3P m x P stages above */
	assert_int_equal(compared, 6 + 24 * (4 + 9 + 16 + 25 + 36 + 49 + 64));
}

/* The order ppgen writes runs gen_sched_warmup() forwards before its first
 * backward, then one steady-state forward when there is one left, under
 * either rule. */
static void test_order_follows_count(void **state)
{
	(void)state;
	for (int P = 1; P <= 8; P++)
		for (int vpp = 1; vpp <= 4; vpp++)
			for (int m = 1; m <= 3 * P; m++) {
				if (vpp > 1 && m % P)
					continue;                 /* Megatron rejects it */
				for (int k = 0; k < 2 * P; k++) { /* stage k / 2, both rules */
					struct gen_act *a;
					int s = k / 2, f = 0;
					bool legacy = k % 2;
					int n = gen_sched_build(P, vpp, m, s, legacy, &a);
					assert_true(n > 0);
					for (int i = 0; i < n && a[i].kind != GA_BWD; i++)
						f += a[i].kind == GA_FWD;
					int w = gen_sched_warmup(P, vpp, m, s, legacy);
					assert_int_equal(f, w + (w < m * vpp));
					free(a);
				}
			}
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_gen_equals_model),
		  cmocka_unit_test(test_order_follows_count),
	  })
