/* Unit tests for Megatron's warm-up count (pipeline/model/schedule.h): 1F1B
 * and interleaved counts by hand, the clamp, P = 1, the overlap's extra
 * forward, and m = P with VPP > 1 under both Megatron rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/schedule.h"
#include "util/pp.h"
#include "tests/unit/unit.h"

static struct sched_shape shape(int pp, int vpp, int m, bool interleaved, enum sched_rule rule)
{
	return (struct sched_shape){
		.pp = pp, .vpp = vpp, .m = m, .interleaved = interleaved, .rule = rule
	};
}

/* Each stage's count against want[stage]. */
static void expect(const struct sched_shape *sh, const int *want)
{
	for (int s = 0; s < sh->pp; s++) {
		print_message("# pp %d vpp %d m %d g %d stage %d\n", sh->pp, sh->vpp, sh->m,
			      sh->group, s);
		assert_int_equal(sched_warmup(sh, s), want[s]);
	}
}

/* Each stage's count under SCHED_CORE against core[stage], then under
 * SCHED_LEGACY against legacy[stage]; sh keeps the legacy rule. */
static void expect_rules(struct sched_shape *sh, const int *core, const int *legacy)
{
	sh->rule = SCHED_CORE;
	expect(sh, core);
	sh->rule = SCHED_LEGACY;
	expect(sh, legacy);
}

static void test_1f1b(void **state)
{
	(void)state;
	struct sched_shape sh = shape(4, 1, 8, false, SCHED_CORE);
	expect(&sh, (const int[]){ 3, 2, 1, 0 });
	sh.m = 2; /* min(P - s - 1, m) */
	expect(&sh, (const int[]){ 2, 2, 1, 0 });
	assert_int_equal(sched_warmup_wanted(&sh, 0), 3);
	sh.rule = SCHED_LEGACY; /* the rules differ only when interleaved */
	sh.m = 4;
	expect(&sh, (const int[]){ 3, 2, 1, 0 });
	sh = shape(1, 1, 5, false, SCHED_CORE); /* no pipeline: F B F B ... */
	expect(&sh, (const int[]){ 0 });
}

static void test_interleaved(void **state)
{
	(void)state;
	/* (P - s - 1)·2 + (vpp - 1)·P */
	struct sched_shape sh = shape(4, 2, 8, true, SCHED_CORE);
	expect_rules(&sh, (const int[]){ 10, 8, 6, 4 }, (const int[]){ 10, 8, 6, 4 });
	sh.group = 5; /* (vpp - 1)·group */
	expect(&sh, (const int[]){ 11, 9, 7, 5 });
	sh = shape(8, 3, 16, true, SCHED_CORE);
	expect(&sh, (const int[]){ 30, 28, 26, 24, 22, 20, 18, 16 });
	/* overlap_moe_expert_parallel_comm: one more forward, before the clamp */
	sh = shape(4, 2, 4, true, SCHED_CORE);
	sh.extra = 1;
	expect(&sh, (const int[]){ 8, 8, 7, 5 });
	/* one chunk, overlapped: 2(P - s - 1) + 1 */
	sh = shape(3, 1, 9, true, SCHED_CORE);
	sh.extra = 1;
	expect(&sh, (const int[]){ 5, 3, 1 });
	/* P = 1: 1, never the extra */
	sh = shape(1, 3, 2, true, SCHED_CORE);
	sh.extra = 1;
	expect(&sh, (const int[]){ 1 });
	assert_int_equal(sched_warmup_wanted(&sh, 0), 1);
}

/* m = P with VPP > 1: current Megatron clamps (later stages start their
 * steady state), Megatron up to 2023 runs every forward first. */
static void test_m_equals_p(void **state)
{
	(void)state;
	struct sched_shape sh = shape(4, 2, 4, true, SCHED_CORE);
	expect_rules(&sh, (const int[]){ 8, 8, 6, 4 }, (const int[]){ 8, 8, 8, 8 });
	sh = shape(8, 4, 8, true, SCHED_CORE);
	expect_rules(&sh, (const int[]){ 32, 32, 32, 32, 30, 28, 26, 24 },
		     (const int[]){ 32, 32, 32, 32, 32, 32, 32, 32 });
	/* the formula before the clamp is the same under both */
	assert_int_equal(sched_warmup_wanted(&sh, 0), 38);
	/* m = 2P: no clamp, the rules agree */
	sh = shape(4, 2, 8, true, SCHED_LEGACY);
	expect(&sh, (const int[]){ 10, 8, 6, 4 });
}

static void test_out_of_range(void **state)
{
	(void)state;
	struct sched_shape sh = shape(4, 2, 8, true, SCHED_CORE);
	assert_int_equal(sched_warmup(&sh, -1), PP_EINVAL);
	assert_int_equal(sched_warmup(&sh, 4), PP_EINVAL);
	assert_int_equal(sched_warmup_wanted(&sh, 4), PP_EINVAL);
	sh.m = 0;
	assert_int_equal(sched_warmup(&sh, 0), PP_EINVAL);
	sh = shape(0, 1, 1, false, SCHED_CORE);
	assert_int_equal(sched_warmup(&sh, 0), PP_EINVAL);
	sh = shape(2, 0, 1, false, SCHED_CORE);
	assert_int_equal(sched_warmup(&sh, 0), PP_EINVAL);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_1f1b),
		  cmocka_unit_test(test_interleaved),
		  cmocka_unit_test(test_m_equals_p),
		  cmocka_unit_test(test_out_of_range),
	  })
