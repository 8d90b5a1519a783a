/* Regression tests for bugs that fuzzing and the fault tests found in other
 * modules (each test names its bug). The bugs of pipeline/safefile have
 * their own file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pp.h"
#include "topology.h"

/* Bug: model replicas were built in O(dp * world): `--dp 100000` (or a
 * config file saying so) took minutes, 10^7 ranks would take days. */
static void test_topology_many_replicas_linear(void **state)
{
	struct topology t = TOPOLOGY_INIT;
	topo_init(&t);
	int64_t t0 = pp_now_ns();
	assert_int_equal(topo_from_sizes(&t, 1, 2, 100000, 1, 1), 0);
	int64_t ms = (pp_now_ns() - t0) / 1000000;
	assert_int_equal(t.groups[TOPO_MODEL].n, 100000);
	struct topo_group *g = &t.groups[TOPO_MODEL].v[99999];
	assert_int_equal(g->n, 2);
	assert_int_equal(g->ranks[0], 99999);
	assert_int_equal(g->ranks[1], 199999);
	topo_release(&t);
	/* Linear: well under a second even with sanitizers; quadratic: minutes. */
	assert_true(ms < 10000);
}

/* Bug: topo_infer_finish() passed NULL to qsort for kinds with no group
 * (UBSan: null pointer passed as argument declared nonnull). */
static void test_topology_infer_nothing(void **state)
{
	struct topology t = TOPOLOGY_INIT;
	topo_init(&t);
	assert_int_equal(topo_infer_finish(&t), PP_ENOTFOUND);
	topo_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topology_many_replicas_linear),
		cmocka_unit_test(test_topology_infer_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
