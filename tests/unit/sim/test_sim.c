/* Unit tests for the schedule simulator (pipeline/sim/sim.h): golden results of
 * the reference simulator (bit-exact), closed forms, megatron-vs-reference,
 * validation and cycle reporting, the activation in flight; and its JSON
 * config files (sim_input.h):
 * every shape the loader takes (pipeline.py's and PP-Schedule-Visualization's keys, op_times, stage maps,
 * escapes), errors with file and line, and a config longer than 16 MiB (the
 * loader used to stop reading there, silently). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <math.h>
#include <cmocka.h>

#include "sim/sim.h"
#include "sim/sim_input.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

static int run(struct sim_config *c, struct sim_result *r)
{
	struct strbuf err = STRBUF_INIT;
	strbuf_reset(&err);
	int rc = sim_run(c, r, &err);
	if (rc)
		printf("# sim_run: %s\n", err.buf);
	return rc;
	strbuf_release(&err);
}

static struct sim_config cfg(enum sim_strategy s, int p, int N, int m)
{
	struct sim_config c;
	sim_config_init(&c);
	c.strategy = s;
	c.devices = p;
	c.stages = N;
	c.microbatches = m;
	return c;
}

/* Parses "-", "x" or "x,y,z" into arr[N]; returns NULL for "-". */
static double *parse_times(const char *s, int N, double *arr)
{
	char *end;
	if (!strcmp(s, "-"))
		return NULL;
	for (int i = 0; i < N; i++) {
		arr[i] = strtod(s, &end);
		if (i == 0 && *end == '\0') {
			for (int j = 1; j < N; j++)
				arr[j] = arr[0];
			break;
		}
		s = end + (*end == ',');
	}
	return arr;
}

static bool same_bits(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

/* Every case of tests/fixtures/sim/reference.txt, reference model: same
 * doubles; and the megatron model agrees at L = 0 whenever it accepts. */
static void test_golden_reference(void **state)
{
	(void)state;
	struct strbuf err = STRBUF_INIT;
	const char *root = getenv("PP_ROOT");
	char path[1024], line[16384];
	snprintf(path, sizeof(path), "%s/tests/fixtures/sim/reference.txt", root ? root : ".");
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	int cases = 0, meg_equal = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		char st[64], model[32], tf[4096], tb[4096], td[4096], tw[4096], tfb[4096];
		int p, N, m, g, off = 0;
		double L;
		assert_int_equal(
			sscanf(line,
			       "%63s %31s %d %d %d %d %lf %4095s %4095s %4095s %4095s %4095s | %n",
			       st, model, &p, &N, &m, &g, &L, tf, tb, td, tw, tfb, &off),
			12);
		assert_true(off > 0);
		const char *exp = line + off;
		double *a = malloc(5 * (size_t)N * sizeof(double));
		struct sim_config c = cfg(SIM_1F1B, p, N, m);
		assert_int_equal(sim_strategy_parse(st, &c.strategy), 0);
		assert_int_equal(sim_model_parse(model, &c.model), 0);
		c.group_size = g;
		c.p2p = L;
		c.forward = parse_times(tf, N, a);
		c.backward = parse_times(tb, N, a + N);
		c.backward_d = parse_times(td, N, a + 2 * N);
		c.backward_w = parse_times(tw, N, a + 3 * N);
		c.overlapped = parse_times(tfb, N, a + 4 * N);
		struct sim_result r;
		strbuf_reset(&err);
		int rc = sim_run(&c, &r, &err);
		if (!strncmp(exp, "ERR", 3)) {
			if (rc != PP_EINVAL)
				fail_msg("%s: expected PP_EINVAL, got %d", line, rc);
		} else if (!strncmp(exp, "CYCLE", 5)) {
			if (rc != PP_ECYCLE)
				fail_msg("%s: expected PP_ECYCLE, got %d (%s)", line, rc, err.buf);
			assert_non_null(strstr(err.buf, "device "));
		} else {
			if (rc)
				fail_msg("%s: %s", line, err.buf);
			char *e;
			double mk = strtod(exp, &e), rate = strtod(e, &e);
			if (!same_bits(mk, r.makespan) || !same_bits(rate, r.reference_bubble_rate))
				fail_msg("%s: makespan %a (want %a), rate %a (want %a)", line,
					 r.makespan, mk, r.reference_bubble_rate, rate);
			for (int d = 0; d < p; d++) {
				double busy = strtod(e, &e);
				if (!same_bits(busy, r.devices[d].busy))
					fail_msg("%s: device %d busy %a, want %a", line, d,
						 r.devices[d].busy, busy);
			}
			if (L == 0) {
				struct sim_result r2;
				c.model = SIM_MODEL_MEGATRON;
				strbuf_reset(&err);
				if (sim_run(&c, &r2, &err) == 0) {
					assert_true(same_bits(r2.makespan, r.makespan));
					for (int d = 0; d < p; d++)
						assert_true(same_bits(r2.devices[d].busy,
								      r.devices[d].busy));
					meg_equal++;
				}
				sim_result_release(&r2);
			}
		}
		sim_result_release(&r);
		free(a);
		cases++;
	}
	fclose(f);
	assert_true(cases > 4000);
	printf("# %d cases, %d megatron = reference at L = 0\n", cases, meg_equal);
	assert_true(meg_equal > 300);
	strbuf_release(&err);
}

static void test_closed_form_1f1b(void **state)
{
	(void)state;
	for (int model = 0; model < 2; model++)
		for (int p = 1; p <= 8; p++)
			for (int m = p; m <= 3 * p + 1; m += p) {
				double F = 1.5, B = 2.25, tf[8], tb[8];
				for (int s = 0; s < p; s++) {
					tf[s] = F;
					tb[s] = B;
				}
				struct sim_config c = cfg(SIM_1F1B, p, p, m);
				struct sim_result r;
				c.model = (enum sim_model)model;
				c.forward = tf;
				c.backward = tb;
				assert_int_equal(run(&c, &r), 0);
				assert_true(r.makespan == (m + p - 1) * (F + B));
				for (int d = 0; d < p; d++) {
					assert_true(r.devices[d].busy == m * (F + B));
					assert_true(fabs(r.devices[d].bubble -
							 (double)(p - 1) / (m + p - 1)) < 1e-12);
				}
				assert_true(fabs(r.reference_bubble_rate - (double)(p - 1) / m) <
					    1e-12);
				assert_int_equal(r.nops, (size_t)(2 * m * p));
				sim_result_release(&r);
			}
}

static void test_closed_form_interleave(void **state)
{
	(void)state;
	static const int grid[][3] = { { 2, 2, 4 },  { 4, 2, 8 },  { 4, 3, 8 }, { 4, 2, 12 },
				       { 4, 4, 16 }, { 8, 2, 16 }, { 3, 2, 6 } };
	for (size_t k = 0; k < sizeof(grid) / sizeof(grid[0]); k++) {
		int p = grid[k][0], v = grid[k][1], m = grid[k][2];
		struct sim_config c = cfg(SIM_INTERLEAVE, p, p * v, m);
		struct sim_result r;
		assert_int_equal(run(&c, &r), 0);
		assert_true(r.makespan == (v * m + p - 1) * 3.0);
		for (int d = 0; d < p; d++)
			assert_true(fabs(r.devices[d].bubble - (double)(p - 1) / (v * m + p - 1)) <
				    1e-12);
		sim_result_release(&r);
	}
}

/* The warm-up rule (model/schedule.h): with m = p interleaved, legacy runs
 * every forward of a device before its first backward; core starts 1F1B
 * early on the later devices (device p-1: (v-1)·p forwards, plus one). */
static void test_warmup_rule(void **state)
{
	(void)state;
	for (int rule = SCHED_CORE; rule <= SCHED_LEGACY; rule++) {
		struct sim_config c = cfg(SIM_INTERLEAVE, 3, 6, 3);
		struct sim_result r;
		c.warmup = (enum sched_rule)rule;
		assert_int_equal(run(&c, &r), 0);
		int first[3]; /* forwards queued before each device's first backward */
		for (int d = 0; d < 3; d++)
			first[d] = -1;
		int seen[3] = { 0 };
		for (size_t i = 0; i < r.nops; i++) {
			const struct sim_op *o = &r.ops[i];
			if (o->type == SIM_B && first[o->device] < 0)
				first[o->device] = seen[o->device];
			seen[o->device] += o->type == SIM_F;
		}
		assert_int_equal(first[0], 6);
		assert_int_equal(first[2], rule == SCHED_LEGACY ? 6 : 4);
		sim_result_release(&r);
	}
	enum sched_rule w;
	assert_int_equal(sched_rule_parse(sched_rule_name(SCHED_LEGACY), &w), 0);
	assert_int_equal(w, SCHED_LEGACY);
	assert_int_equal(sched_rule_parse("2023", &w), PP_EINVAL);
}

static void test_closed_form_zb1p(void **state)
{
	(void)state;
	static const double fdw[][3] = { { 1, 1, 1 }, { 1.5, 1.25, 0.5 }, { 2, 1, 1 } };
	for (size_t k = 0; k < 3; k++)
		for (int p = 2; p <= 8; p += 2)
			for (int m = p; m <= 3 * p; m += p) {
				double F = fdw[k][0], D = fdw[k][1], W = fdw[k][2];
				double tf[8], td[8], tw[8];
				for (int s = 0; s < p; s++) {
					tf[s] = F;
					td[s] = D;
					tw[s] = W;
				}
				struct sim_config c = cfg(SIM_ZB1P, p, p, m);
				struct sim_result r;
				c.forward = tf;
				c.backward_d = td;
				c.backward_w = tw;
				assert_int_equal(run(&c, &r), 0);
				double want = m * (F + D + W) + (p - 1) * (F + D - W);
				if (r.makespan != want)
					fail_msg("zb1p p=%d m=%d F=%g D=%g W=%g: %g, want %g", p, m,
						 F, D, W, r.makespan, want);
				sim_result_release(&r);
			}
}

/* A hand-timed 1F1B with P2P latency (docs/sim-model.md §3 sync-P2P rule). */
static void test_p2p_by_hand(void **state)
{
	(void)state;
	for (int model = 0; model < 2; model++) {
		struct sim_config c = cfg(SIM_1F1B, 2, 2, 2);
		struct sim_result r;
		c.p2p = 0.5;
		c.model = (enum sim_model)model;
		assert_int_equal(run(&c, &r), 0);
		assert_true(r.makespan == 10.0);
		/* device 0: F0 [0,1] F1 [1.5,2.5] B0 [5,7] B1 [8,10] */
		assert_int_equal(r.ops[1].type, SIM_F);
		assert_true(r.ops[1].start == 1.5);
		assert_true(r.ops[2].start == 5.0);
		assert_true(r.ops[3].start == 8.0);
		assert_true(r.devices[0].busy == 6.0 && r.devices[0].idle == 4.0);
		assert_true(r.devices[1].bubble == 0.4);
		sim_result_release(&r);
	}
}

/* The megatron model drops latency on same-device edges and before W. */
static void test_megatron_fixes(void **state)
{
	(void)state;
	struct sim_config c = cfg(SIM_ZB1P, 4, 4, 8);
	struct sim_result ref, meg;
	c.p2p = 0.25;
	c.model = SIM_MODEL_REFERENCE;
	assert_int_equal(run(&c, &ref), 0);
	c.model = SIM_MODEL_MEGATRON;
	assert_int_equal(run(&c, &meg), 0);
	assert_true(meg.makespan < ref.makespan);
	/* In the megatron model a W never waits for latency after its D. */
	for (size_t i = 0; i < meg.nops; i++)
		if (meg.ops[i].type == SIM_W && i > 0 && meg.ops[i - 1].type == SIM_D &&
		    meg.ops[i - 1].batch == meg.ops[i].batch)
			assert_true(meg.ops[i].start == meg.ops[i - 1].end);
	sim_result_release(&ref);
	sim_result_release(&meg);

	/* DualPipe-V: device p-1 runs stages p-1 and p adjacent; no latency. */
	c = cfg(SIM_DUALPIPE_V, 4, 8, 8);
	c.p2p = 0.5;
	assert_int_equal(run(&c, &meg), 0);
	double f3 = -1, f4 = -1;
	for (size_t i = 0; i < meg.nops; i++)
		if (meg.ops[i].batch == 0 && meg.ops[i].type == SIM_F) {
			if (meg.ops[i].stage == 3)
				f3 = meg.ops[i].end;
			if (meg.ops[i].stage == 4)
				f4 = meg.ops[i].start;
		}
	assert_true(f3 >= 0 && f4 >= f3);
	assert_true(f4 == f3);
	sim_result_release(&meg);
}

static void test_pairs_are_two_ops(void **state)
{
	(void)state;
	struct sim_config c = cfg(SIM_1F1B_OVERLAP, 2, 2, 6);
	struct sim_result r;
	double fb[2] = { 2.5, 2.5 };
	c.overlapped = fb;
	assert_int_equal(run(&c, &r), 0);
	assert_int_equal(r.nops, 24);
	int pairs = 0;
	for (size_t i = 0; i + 1 < r.nops; i++)
		if (r.ops[i].paired && r.ops[i].type == SIM_F) {
			assert_int_equal(r.ops[i + 1].type, SIM_B);
			assert_true(r.ops[i + 1].paired);
			assert_true(r.ops[i].start == r.ops[i + 1].start);
			assert_true(r.ops[i].end - r.ops[i].start == 2.5);
			pairs++;
		}
	/* device 0: w = 3, 3 pairs; device 1: w = 1, 5 pairs */
	assert_int_equal(pairs, 8);
	sim_result_release(&r);
}

/* sim_peak_inflight(): the micro-batches each device holds at its peak. */
static void test_peak_inflight(void **state)
{
	(void)state;
	struct sim_result r;
	double units[16], peak[8], peak_w[8];
	int p = 4, m = 8;
	for (int k = 0; k < 16; k++)
		units[k] = 1.0;

	/* 1F1B: stage s holds its warm-up p - s - 1 and the next forward. */
	struct sim_config c = cfg(SIM_1F1B, p, p, m);
	assert_int_equal(run(&c, &r), 0);
	sim_peak_inflight(&r, units, 0.0, peak);
	for (int d = 0; d < p; d++)
		assert_true(peak[d] == p - d);
	sim_result_release(&r);

	/* Interleaved VPP 2, half a stage a chunk: 2(p - d - 1) + (v - 1)p
	 * warm-up chunks and the next. */
	c = cfg(SIM_INTERLEAVE, p, 2 * p, m);
	for (int k = 0; k < 2 * p; k++)
		units[k] = 0.5;
	assert_int_equal(run(&c, &r), 0);
	sim_peak_inflight(&r, units, 0.0, peak);
	for (int d = 0; d < p; d++)
		assert_true(peak[d] == 0.5 * (2 * (p - d - 1) + p + 1));
	sim_result_release(&r);

	/* ZB-1P: freed at D, the same as 1F1B; held to W, never less, and more
	 * on the later stages, whose W lags. */
	c = cfg(SIM_ZB1P, p, p, m);
	for (int k = 0; k < p; k++)
		units[k] = 1.0;
	assert_int_equal(run(&c, &r), 0);
	sim_peak_inflight(&r, units, 0.0, peak);
	sim_peak_inflight(&r, units, 1.0, peak_w);
	for (int d = 0; d < p; d++) {
		assert_true(peak[d] == p - d);
		assert_true(peak_w[d] >= peak[d]);
	}
	assert_true(peak_w[p - 1] > peak[p - 1]);
	sim_result_release(&r);

	/* 1F1B with overlap: 2(p - d - 1) + 1 warm-up forwards, then a pair
	 * whose forward counts before its backward frees. */
	c = cfg(SIM_1F1B_OVERLAP, p, p, m);
	assert_int_equal(run(&c, &r), 0);
	sim_peak_inflight(&r, units, 0.0, peak);
	for (int d = 0; d < p; d++)
		assert_true(peak[d] == 2 * (p - d - 1) + 2);
	sim_result_release(&r);
}

static void test_cycles_reported(void **state)
{
	(void)state;
	struct strbuf err = STRBUF_INIT;
	static const int cyc[][3] = { { 4, 3, 5 }, { 8, 2, 12 }, { 6, 2, 8 } };
	for (size_t k = 0; k < 3; k++) {
		struct sim_config c =
			cfg(SIM_INTERLEAVE, cyc[k][0], cyc[k][0] * cyc[k][1], cyc[k][2]);
		struct sim_result r;
		c.model = SIM_MODEL_REFERENCE;
		strbuf_reset(&err);
		assert_int_equal(sim_run(&c, &r, &err), PP_ECYCLE);
		assert_non_null(strstr(err.buf, "dependency cycle"));
		assert_non_null(strstr(err.buf, "device "));
		assert_null(r.ops);
		sim_result_release(&r);
		/* the megatron model rejects these inputs up front */
		c.model = SIM_MODEL_MEGATRON;
		strbuf_reset(&err);
		assert_int_equal(sim_run(&c, &r, &err), PP_EINVAL);
		assert_non_null(strstr(err.buf, "Megatron"));
	}
	strbuf_release(&err);
}

static void test_invalid_inputs(void **state)
{
	(void)state;
	struct {
		struct sim_config c;
		const char *msg;
	} bad[] = {
		{ cfg(SIM_1F1B, 4, 3, 8), "multiple" },
		{ cfg(SIM_1F1B, 4, 8, 8), "stages = devices" },
		{ cfg(SIM_1F1B, 0, 0, 8), ">= 1" },
		{ cfg(SIM_DUALPIPE, 3, 3, 8), "even number of devices" },
		{ cfg(SIM_DUALPIPE, 4, 4, 7), "even number of micro-batches" },
		{ cfg(SIM_DUALPIPE_V, 4, 4, 8), "2 x devices" },
		{ cfg(SIM_DUALPIPE_V, 4, 8, 7), ">= 2 x devices" },
		{ cfg(SIM_INTERLEAVE, 4, 8, 3), "group size" },
	};
	struct strbuf err = STRBUF_INIT;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		struct sim_result r;
		strbuf_reset(&err);
		assert_int_equal(sim_run(&bad[k].c, &r, &err), PP_EINVAL);
		if (!strstr(err.buf, bad[k].msg))
			fail_msg("case %zu: '%s' lacks '%s'", k, err.buf, bad[k].msg);
	}
	double neg[4] = { 1, -1, 1, 1 };
	struct sim_config c = cfg(SIM_1F1B, 4, 4, 8);
	struct sim_result r;
	c.forward = neg;
	strbuf_reset(&err);
	assert_int_equal(sim_run(&c, &r, &err), PP_EINVAL);
	assert_non_null(strstr(err.buf, "stage 1"));
	/* the reference model cannot build 1F1B with m < p - 1; megatron clamps */
	c = cfg(SIM_1F1B, 4, 4, 2);
	c.model = SIM_MODEL_REFERENCE;
	strbuf_reset(&err);
	assert_int_equal(sim_run(&c, &r, &err), PP_EINVAL);
	c.model = SIM_MODEL_MEGATRON;
	assert_int_equal(run(&c, &r), 0);
	assert_true(r.makespan == (2 + 4 - 1) * 3.0);
	sim_result_release(&r);
	strbuf_release(&err);
}

/* Random configurations in both models: never a crash, and every result
 * satisfies the schedule's invariants (queue order without overlap, data
 * dependencies respected, busy <= makespan). */
static void test_random_invariants(void **state)
{
	(void)state;
	struct strbuf err = STRBUF_INIT;
	unsigned seed = 12345;
	int ok = 0, rejected = 0, cycles = 0;
	for (int iter = 0; iter < 3000; iter++) {
		seed = seed * 1103515245u + 12345u;
		unsigned r = seed >> 8;
		enum sim_strategy st = (enum sim_strategy)(r % SIM_NSTRATEGIES);
		int p = 1 + (int)((r >> 3) % 6), v = 1 + (int)((r >> 6) % 3);
		int m = 1 + (int)((r >> 9) % 20);
		int N = st == SIM_INTERLEAVE || st == SIM_1F1B_INTERLEAVE_OVERLAP ? p * v
			: st == SIM_DUALPIPE_V                                    ? 2 * p
										  : p;
		double t[5][18];
		for (int k = 0; k < 5; k++)
			for (int s = 0; s < N; s++)
				t[k][s] = 0.25 * (1 + (int)(((r >> 12) + 7u * (unsigned)k +
							     3u * (unsigned)s) %
							    7));
		struct sim_config c = cfg(st, p, N, m);
		c.model = (enum sim_model)((r >> 20) & 1);
		c.p2p = ((r >> 21) & 3) * 0.125;
		c.group_size = (r >> 23) & 1 ? p + (int)((r >> 24) % 3) : 0;
		c.forward = t[0];
		c.backward = t[1];
		c.backward_d = t[2];
		c.backward_w = t[3];
		c.overlapped = (r >> 27) & 1 ? t[4] : NULL;
		struct sim_result res;
		strbuf_reset(&err);
		int rc = sim_run(&c, &res, &err);
		if (rc == PP_EINVAL) {
			rejected++;
			continue;
		}
		if (rc == PP_ECYCLE) {
			cycles++;
			assert_int_equal(c.model, SIM_MODEL_REFERENCE);
			continue;
		}
		assert_int_equal(rc, 0);
		ok++;
		for (size_t i = 0; i < res.nops; i++) {
			const struct sim_op *o = &res.ops[i];
			assert_true(o->start >= 0 && o->end >= o->start && o->end <= res.makespan);
			if (i > 0 && res.ops[i - 1].device == o->device && !o->paired)
				assert_true(o->start >= res.ops[i - 1].end);
			if (i > 0 && !(o->paired && o->type == SIM_B))
				assert_true(res.ops[i - 1].device <= o->device);
			/* F(b, s) after F(b, s-1) */
			for (size_t j = 0; o->type == SIM_F && o->stage > 0 && j < res.nops; j++)
				if (res.ops[j].type == SIM_F && res.ops[j].batch == o->batch &&
				    res.ops[j].stage == o->stage - 1)
					assert_true(o->start >= res.ops[j].end);
		}
		for (int d = 0; d < p; d++)
			assert_true(res.devices[d].busy <= res.makespan);
		sim_result_release(&res);
	}
	printf("# %d simulated, %d rejected, %d reference deadlocks\n", ok, rejected, cycles);
	assert_true(ok > 500);
	strbuf_release(&err);
}

static void test_names(void **state)
{
	(void)state;
	enum sim_strategy s;
	assert_int_equal(sim_strategy_parse("dualpipe-v", &s), 0);
	assert_int_equal(s, SIM_DUALPIPE_V);
	assert_int_equal(sim_strategy_parse("1f1b_interleave", &s), 0);
	assert_int_equal(s, SIM_INTERLEAVE);
	assert_int_equal(sim_strategy_parse("gpipe", &s), PP_EINVAL);
	for (int i = 0; i < SIM_NSTRATEGIES; i++) {
		assert_int_equal(sim_strategy_parse(sim_strategy_name((enum sim_strategy)i), &s),
				 0);
		assert_int_equal(s, i);
	}
	assert_string_equal(sim_op_type_name(SIM_W), "W");
}

/* ---- config files (sim_input.h) ---- */

static char path[64];

/* A temporary config file at path: head, filler 'x' bytes, tail. */
static void write_config(const char *head, size_t filler, const char *tail)
{
	if (!*path) {
		snprintf(path, sizeof(path), "/tmp/pptrace-sim-input-XXXXXX");
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		close(fd);
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(head, f);
	for (size_t i = 0; i < filler; i++)
		fputc('x', f);
	fputs(tail, f);
	assert_int_equal(fclose(f), 0);
}

static int load(struct sim_input *in, struct strbuf *err)
{
	sim_input_init(in);
	int rc = sim_input_load_json(in, path, err);
	if (rc)
		print_message("# %s\n", err->buf);
	return rc;
}

static void test_json_shapes(void **state)
{
	struct sim_input in;
	struct strbuf err = STRBUF_INIT;
	(void)state;
	write_config("{\n  \"num_devices\": 2, \"num_stages\": 4.0,\n"
		     "  \"strategy\": \"inter\\u006ceave\", \"num_microbatches\": 8,\n"
		     "  \"op_times\": {\"forward\": [1, 2, 3, 4], \"backward\": {\"1\": 5},\n"
		     "               \"backward_W\": 0.5},\n"
		     "  \"p2p_latency\": null, \"output_file\": \"a\\\"b.png\"\n}\n",
		     0, "");
	strbuf_reset(&err);
	assert_int_equal(load(&in, &err), 0);
	strbuf_reset(&err);
	assert_int_equal(sim_input_finish(&in, &err), 0);
	assert_int_equal(in.cfg.strategy, SIM_INTERLEAVE);
	assert_int_equal(in.cfg.devices, 2);
	assert_int_equal(in.cfg.stages, 4);
	assert_int_equal(in.cfg.microbatches, 8);
	assert_true(in.cfg.forward[3] == 4.0);
	assert_true(in.cfg.backward[0] == 2.0 && in.cfg.backward[1] == 5.0);
	assert_true(in.cfg.backward_w[2] == 0.5);
	assert_true(in.cfg.p2p == 0.0); /* null: not set */
	assert_string_equal(in.output, "a\"b.png");
	sim_input_release(&in);
	strbuf_release(&err);
}

static void test_json_errors(void **state)
{
	static const struct {
		const char *text, *err;
	} cases[] = {
		{ "{\"num_stages\": 4,\n , }", ":2: byte 19: found ',', expected a key string" },
		{ "{\"num_stages\": 4",
		  ":1: byte 16: found end of input, expected the rest of the value" },
		{ "[1, 2]", ":1: expected a JSON object" },
		{ "{\"num_stages\": 4}\n{}",
		  ":2: byte 18: found '{', expected the end of the text" },
		{ "{\"num_stages\": 4,\n \"forward_times\": [1, [2]]}",
		  ":2: expected a list of numbers" },
		{ "{\n\"forward_times\": {\"a\": 1}}", ":2: a stage map needs" },
		{ "{\n\n\"num_stages\": -1}", ":3: invalid stages '-1'" },
		{ "{\"op_times\": 3}", ":1: expected a JSON object" },
	};
	struct sim_input in;
	struct strbuf err = STRBUF_INIT;
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_config(cases[i].text, 0, "");
		sim_input_init(&in);
		strbuf_reset(&err);
		assert_int_not_equal(sim_input_load_json(&in, path, &err), 0);
		if (strncmp(err.buf, path, strlen(path)) || !strstr(err.buf, cases[i].err))
			fail_msg("case %zu: got '%s', expected '%s%s...'", i, err.buf, path,
				 cases[i].err);
		sim_input_release(&in);
	}
	strbuf_release(&err);
}

/* Devices or stages alone: the other follows from the order, but an
 * interleaved one needs both and names the one missing. */
static void test_json_devices_or_stages(void **state)
{
	static const struct {
		const char *text, *err;
		int devices, stages;
	} cases[] = {
		{ "{\"num_stages\": 4, \"num_microbatches\": 8}", NULL, 4, 4 },
		{ "{\"num_devices\": 3, \"strategy\": \"dualpipe_v\", \"num_microbatches\": 8}",
		  NULL, 3, 6 },
		{ "{\"num_stages\": 5, \"strategy\": \"dualpipe_v\", \"num_microbatches\": 8}",
		  NULL, 3, 5 },
		{ "{\"num_stages\": 8, \"strategy\": \"interleave\", \"num_microbatches\": 8}",
		  "interleave needs --devices as well as --stages", 0, 0 },
		{ "{\"num_devices\": 4, \"strategy\": \"1f1b_interleave_overlap\", "
		  "\"num_microbatches\": 8}",
		  "1f1b_interleave_overlap needs --stages as well as --devices", 0, 0 },
	};
	struct sim_input in;
	struct strbuf err = STRBUF_INIT;
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_config(cases[i].text, 0, "");
		strbuf_reset(&err);
		assert_int_equal(load(&in, &err), 0);
		int rc = sim_input_finish(&in, &err);
		if (cases[i].err) {
			assert_int_equal(rc, PP_EINVAL);
			assert_string_equal(err.buf, cases[i].err);
		} else {
			assert_int_equal(rc, 0);
			assert_int_equal(in.cfg.devices, cases[i].devices);
			assert_int_equal(in.cfg.stages, cases[i].stages);
		}
		sim_input_release(&in);
	}
	strbuf_release(&err);
}

/* Keys after the first 16 MiB count too. */
static void test_json_longer_than_16_mib(void **state)
{
	struct sim_input in;
	struct strbuf err = STRBUF_INIT;
	(void)state;
	write_config("{\"num_stages\": 4, \"comment\": \"", (size_t)17 << 20,
		     "\",\n \"num_batches\": 8}\n");
	strbuf_reset(&err);
	assert_int_equal(load(&in, &err), 0);
	assert_true(in.have_microbatches);
	assert_int_equal(in.cfg.microbatches, 8);
	sim_input_release(&in);
	unlink(path);
	strbuf_release(&err);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_golden_reference),
		  cmocka_unit_test(test_closed_form_1f1b),
		  cmocka_unit_test(test_closed_form_interleave),
		  cmocka_unit_test(test_warmup_rule),
		  cmocka_unit_test(test_closed_form_zb1p),
		  cmocka_unit_test(test_p2p_by_hand),
		  cmocka_unit_test(test_megatron_fixes),
		  cmocka_unit_test(test_pairs_are_two_ops),
		  cmocka_unit_test(test_peak_inflight),
		  cmocka_unit_test(test_cycles_reported),
		  cmocka_unit_test(test_invalid_inputs),
		  cmocka_unit_test(test_random_invariants),
		  cmocka_unit_test(test_names),
		  cmocka_unit_test(test_json_shapes),
		  cmocka_unit_test(test_json_errors),
		  cmocka_unit_test(test_json_devices_or_stages),
		  cmocka_unit_test(test_json_longer_than_16_mib),
	  })
