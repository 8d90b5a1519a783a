/* Unit tests for pipeline/agg/agg_advice.c on hand-made iterations of a
 * PP 2 job (1F1B, 2 micro-batches, forward 10 us, backward 20 us, no gaps
 * but the schedule's): the inputs measured (docs/advisor.md §1), the rows
 * stored in a real database, the warm-up left out, a job without a
 * pipeline, a pipeline whose inputs cannot be measured, [advise] checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agg/agg_advice.h"
#include "agg/agg_iter.h"
#include "agg/topology.h"
#include "storage/db.h"
#include "util/config.h"
#include "util/pp.h"
#include "tests/unit/unit.h"

#define US 1000

/* 1F1B, P 2, m 2 (times in us): stage 0 F0 0-10, F1 10-20, B0 40-60,
 * B1 70-90; stage 1 F0 10-20, B0 20-40, F1 40-50, B1 50-70. */
struct op {
	int phase, mb;
	int s, e;
};
static const struct op stage_ops[2][4] = {
	{ { RR_FWD, 0, 0, 10 },
	  { RR_FWD, 1, 10, 20 },
	  { RR_BWD, 0, 40, 60 },
	  { RR_BWD, 1, 70, 90 } },
	{ { RR_FWD, 0, 10, 20 },
	  { RR_BWD, 0, 20, 40 },
	  { RR_FWD, 1, 40, 50 },
	  { RR_BWD, 1, 50, 70 } },
};

static struct agg_step steps[2][4];
static struct agg_rank ranks[2];

/* One iteration numbered n; with window, each rank's window is 0..w us. */
static void make_iter(struct agg_iter *it, int n, int w)
{
	memset(it, 0, sizeof(*it));
	memset(ranks, 0, sizeof(ranks));
	for (int s = 0; s < 2; s++) {
		for (int i = 0; i < 4; i++) {
			const struct op *o = &stage_ops[s][i];
			steps[s][i] = (struct agg_step){ .phase = (int8_t)o->phase,
							 .seq = i,
							 .has_kernels = true,
							 .s = (int64_t)o->s * US,
							 .e = (int64_t)o->e * US,
							 .chunk = 0,
							 .microbatch = o->mb };
		}
		ranks[s].in.rank = s;
		ranks[s].in.ok = true;
		ranks[s].in.has_window = true;
		ranks[s].in.win_s = 0;
		ranks[s].in.win_e = (int64_t)w * US;
		ranks[s].ntraces = 1;
		ranks[s].steps = steps[s];
		ranks[s].nsteps = 4;
	}
	it->iteration = n;
	it->ranks = ranks;
	it->nranks = 2;
}

static char dbpath[] = "/tmp/test_advice_XXXXXX";
static struct db *db;

static int setup(void **state)
{
	(void)state;
	char err[512];
	int fd = mkstemp(dbpath);
	if (fd < 0)
		return -1;
	close(fd);
	unlink(dbpath);
	db = unit_db_open(dbpath, 0, err, sizeof(err));
	if (!db)
		fprintf(stderr, "%s\n", err);
	return db ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	db_close(db);
	unlink(dbpath);
	return 0;
}

static void test_measured(void **state)
{
	(void)state;
	struct topology t;
	struct agg_iter it;
	struct agg_advice a;
	topo_init(&t);
	assert_int_equal(topo_from_sizes(&t, 1, 2, 1, 1, 1), 0);
	make_iter(&it, 7, 100); /* the window holds 10 us beyond the pipeline */
	agg_advice_init(&a);
	assert_int_equal(agg_advice_run(db, &it, 1, &t, 1, 0, NULL, true, &a), 0);
	assert_int_equal(a.state, AGG_ADV_DONE);
	assert_string_equal(a.source, "kineto");
	assert_int_equal(a.iterations, 1);
	assert_int_equal(a.first_iteration, 7);
	assert_int_equal(a.in.pp, 2);
	assert_int_equal(a.in.vpp, 1);
	assert_int_equal(a.in.microbatches, 2);
	assert_int_equal(a.in.strategy, SIM_1F1B);
	for (int s = 0; s < 2; s++) {
		assert_true(a.in.fwd[s].median == 10 * US);
		assert_true(a.in.bwd[s].median == 20 * US);
		assert_int_equal(a.in.fwd[s].samples, 2);
	}
	assert_true(a.in.step_ns == 100 * US);
	assert_true(a.in.outside_ns == 10 * US); /* the window beyond stage 0's span */
	assert_true(a.in.p2p_measured);
	assert_true(a.in.tail_ns == 0);
	assert_null(a.in.memory_gib);
	assert_null(a.in.layers);
	/* rows[0] replays the job; the views hold every row */
	assert_int_equal(a.res.rows[0].kind, ADVISE_CURRENT);
	assert_true(a.res.measured_step_ns == 100 * US);
	struct strbuf sb = STRBUF_INIT;
	agg_advice_label(&a, &a.res.rows[0], &sb);
	assert_string_equal(sb.buf, "current (1f1b)");
	strbuf_release(&sb);
	agg_advice_release(&a);

	/* the warm-up (iteration 1) is left out when later ones are there */
	struct agg_iter its[2];
	make_iter(&its[0], 1, 100);
	struct agg_rank r1[2];
	memcpy(r1, ranks, sizeof(r1));
	its[0].ranks = r1;
	make_iter(&its[1], 2, 100);
	agg_advice_init(&a);
	assert_int_equal(agg_advice_run(db, its, 2, &t, 1, 0, NULL, false, &a), 0);
	assert_int_equal(a.state, AGG_ADV_DONE);
	assert_int_equal(a.iterations, 1);
	assert_int_equal(a.first_iteration, 2);
	agg_advice_release(&a);
	topo_release(&t);
}

/* agg_advice_run() on it (stored) with t, VPP vpp and the default settings ends
 * in state, its why being why (whole) or holding it. */
static void expect_no_advice(const struct agg_iter *it, const struct topology *t, int vpp,
			     enum agg_adv_state state, bool whole, const char *why)
{
	struct agg_advice a;
	agg_advice_init(&a);
	assert_int_equal(agg_advice_run(db, it, 1, t, vpp, 0, NULL, true, &a), 0);
	assert_int_equal(a.state, state);
	if (whole)
		assert_string_equal(a.why.buf, why);
	else
		assert_non_null(strstr(a.why.buf, why));
	agg_advice_release(&a);
}

static void test_no_pipeline(void **state)
{
	(void)state;
	struct topology t;
	struct agg_iter it;
	make_iter(&it, 7, 100);
	topo_init(&t); /* no source */
	expect_no_advice(&it, &t, 1, AGG_ADV_NONE, true,
			 "no topology, so no pipeline to advise on");
	assert_int_equal(topo_from_sizes(&t, 1, 1, 2, 1, 1), 0); /* PP 1 */
	expect_no_advice(&it, &t, 1, AGG_ADV_NONE, true, "no pipeline (PP 1): nothing to schedule");
	topo_release(&t);

	/* VPP 2 given, but the steps carry chunk 0 only */
	topo_init(&t);
	assert_int_equal(topo_from_sizes(&t, 1, 2, 1, 1, 1), 0);
	expect_no_advice(&it, &t, 2, AGG_ADV_FAILED, false,
			 "not every (stage, chunk) of PP 2, VPP 2");
	/* a rank without a trace: no complete group */
	ranks[1].ntraces = 0;
	expect_no_advice(&it, &t, 1, AGG_ADV_FAILED, false, "no complete PP group");
	topo_release(&t);
}

static void test_config(void **state)
{
	(void)state;
	char path[sizeof(dbpath) + 8];
	snprintf(path, sizeof(path), "%s.ini", dbpath);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("[advise]\nlayers = 0\n", f);
	fclose(f);
	struct strbuf sb = STRBUF_INIT;
	struct config *cfg = config_load(path, &sb);
	struct advise_settings set;
	assert_non_null(cfg);
	assert_int_equal(advise_settings_load(&set, cfg, &sb), PP_EINVAL);
	assert_non_null(strstr(sb.buf, "advise.layers"));
	strbuf_release(&sb);
	config_free(cfg);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[advise]\nlayers = 16\nzb_w_share = 0.5\n", f);
	fclose(f);
	cfg = config_load(path, &sb);
	assert_non_null(cfg);
	assert_int_equal(advise_settings_load(&set, cfg, &sb), 0);
	strbuf_release(&sb);
	/* the layers reach the engine: 8 a stage */
	struct topology t;
	struct agg_iter it;
	struct agg_advice a;
	topo_init(&t);
	assert_int_equal(topo_from_sizes(&t, 1, 2, 1, 1, 1), 0);
	make_iter(&it, 7, 100);
	agg_advice_init(&a);
	assert_int_equal(agg_advice_run(db, &it, 1, &t, 1, 0, &set, false, &a), 0);
	assert_int_equal(a.state, AGG_ADV_DONE);
	assert_string_equal(a.layers.buf, "8,8");
	assert_true(a.set.zb_w_share == 0.5);
	agg_advice_release(&a);
	topo_release(&t);
	config_free(cfg);
	unlink(path);
}

UNIT_MAIN(setup, teardown,
	  {
		  cmocka_unit_test(test_measured),
		  cmocka_unit_test(test_no_pipeline),
		  cmocka_unit_test(test_config),
	  })
