/* Unit tests for the schedule advisor (pipeline/advise/advise.h): the
 * calibration replay on exact inputs reproduces the step; each alternative's
 * constraints; the memory fit on a linear case is exact; the modelled-vs-
 * measured labels; the settings from a config file. Then two checks against
 * measured truth: the shipped real Primus run (calibration, predictions,
 * memory fit; $PP_SHARED/data/primus/pp8, skipped without it) and ppgen jobs
 * of known truth, the same model as VPP 1 and VPP 2 with and without a slow
 * stage, each predicting the other (docs/advisor.md, "Accuracy"). */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "advise/advise.h"
#include "batch/primus.h"
#include "gen/gen.h"
#include "sim/sim.h"
#include "util/config.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

/* ---- helpers ------------------------------------------------------------ */

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The q-quantile (0..1, linear between neighbours) of v[0..n); sorts v. */
static double quantile(double *v, size_t n, double q)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_d);
	double x = q * (double)(n - 1);
	size_t i = (size_t)x;
	return i + 1 < n ? v[i] + (x - (double)i) * (v[i + 1] - v[i]) : v[n - 1];
}

struct dvec {
	double *v;
	size_t n, cap;
};

static void dpush(struct dvec *d, double x)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 64;
		d->v = xrealloc(d->v, d->cap * sizeof(double));
	}
	d->v[d->n++] = x;
}

static struct advise_stat stat_of(struct dvec *d)
{
	struct advise_stat st = { .samples = (int)d->n };
	st.median = quantile(d->v, d->n, 0.5);
	st.p10 = quantile(d->v, d->n, 0.1);
	st.p90 = quantile(d->v, d->n, 0.9);
	return st;
}

static const struct advise_row *find_row(const struct advise_result *r, enum advise_kind kind,
					 enum sim_strategy s, int vpp, int m)
{
	for (size_t i = 0; i < r->nrows; i++) {
		const struct advise_row *row = &r->rows[i];
		if (row->kind == kind && row->strategy == s && (vpp < 0 || row->vpp == vpp) &&
		    (m < 0 || row->microbatches == m))
			return row;
	}
	return NULL;
}

static void print_result(const struct advise_result *r)
{
	struct strbuf sb = STRBUF_INIT;
	print_message("calibration %+.2f %%%s%s; best: %s\n", 100 * r->calibration_error,
		      r->calibration_note[0] ? ": " : "", r->calibration_note, r->best_note);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct advise_row *row = &r->rows[i];
		strbuf_reset(&sb);
		advise_layers_format(r, row, &sb);
		strbuf_addstr(&sb, " [");
		advise_modelled_format(row->modelled, &sb);
		strbuf_addstr(&sb, "]");
		print_message("%-12s v%d m%-3d %10.2f ms %+6.2f %% bubble %5.3f act %5.2f mem "
			      "%6.1f GiB %s %s | %s\n",
			      advise_row_schedule(row), row->vpp, row->microbatches,
			      row->step_ns / 1e6, 100 * row->delta, row->bubble, row->activation,
			      row->memory_gib, sb.buf, row->knobs, row->notes);
	}
	strbuf_release(&sb);
}

/* A job with p stages of f/b ms per stage (one chunk), m micro-batches. */
struct job {
	struct advise_input in;
	struct advise_stat fwd[64], bwd[64];
	int layers[64];
	double mem[64];
	double over[64];
};

static void job_init(struct job *j, int p, int m, double f, double b)
{
	memset(j, 0, sizeof(*j));
	advise_input_init(&j->in);
	j->in.pp = p;
	j->in.microbatches = m;
	for (int s = 0; s < p; s++) {
		j->fwd[s] = (struct advise_stat){ f * 1e6, NAN, NAN, 10 };
		j->bwd[s] = (struct advise_stat){ b * 1e6, NAN, NAN, 10 };
		j->layers[s] = 8;
	}
	j->in.fwd = j->fwd;
	j->in.bwd = j->bwd;
	j->in.step_ns = 1e9;
}

/* The makespan ppsim gives for the same job: the replay's truth. */
static double sim_makespan(const struct job *j, double p2p)
{
	double f[64], b[64];
	struct sim_config c;
	struct sim_result r;
	struct strbuf e = STRBUF_INIT;
	for (int s = 0; s < j->in.pp * j->in.vpp; s++) {
		f[s] = j->fwd[s].median + (j->in.overhead_ns ? j->over[0] : 0);
		b[s] = j->bwd[s].median + (j->in.overhead_ns ? j->over[0] : 0);
	}
	sim_config_init(&c);
	c.devices = j->in.pp;
	c.stages = j->in.pp;
	c.microbatches = j->in.microbatches;
	c.p2p = p2p;
	c.forward = f;
	c.backward = b;
	strbuf_reset(&e);
	assert_int_equal(sim_run(&c, &r, &e), 0);
	double ms = r.makespan;
	sim_result_release(&r);
	return ms;
	strbuf_release(&e);
}

static void run_ok(const struct job *j, const struct advise_settings *set, struct advise_result *r)
{
	struct strbuf err = STRBUF_INIT;
	int rc = advise_run(&j->in, set, r, &err);
	if (rc)
		print_message("# advise_run: %s\n", err.buf);
	assert_int_equal(rc, 0);
	strbuf_release(&err);
}

struct interval {
	double s, e;
};

static int cmp_interval(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;
	return (x->s > y->s) - (x->s < y->s);
}

/* What both readers below collect (docs/advisor.md, "The inputs"), in ns. */
struct measure {
	struct dvec fwd[64], bwd[64]; /* per (stage, chunk) */
	struct dvec gaps[64];         /* per stage: between consecutive ops */
	struct dvec hops;             /* the first forward, stage s to s + 1 */
	struct dvec last;             /* stage 0's last op of each iteration */
	struct dvec steps;            /* each iteration's step */
};

/* The k ops of one stage in one iteration: the gaps between consecutive
 * ones and, on stage 0, the last one's duration. Sorts ops. */
static void measure_ops(struct measure *M, int stage, struct interval *ops, size_t k)
{
	qsort(ops, k, sizeof(*ops), cmp_interval);
	for (size_t i = 1; i < k; i++)
		if (ops[i].s >= ops[i - 1].e)
			dpush(&M->gaps[stage], ops[i].s - ops[i - 1].e);
	if (stage == 0 && k)
		dpush(&M->last, ops[k - 1].e - ops[k - 1].s);
}

static void measure_release(struct measure *M)
{
	for (int i = 0; i < 64; i++) {
		free(M->fwd[i].v);
		free(M->bwd[i].v);
		free(M->gaps[i].v);
	}
	free(M->hops.v);
	free(M->last.v);
	free(M->steps.v);
	memset(M, 0, sizeof(*M));
}

/* Fills j's op times, per-op overhead (over stages, the median of each
 * stage's lower quartile of gaps: the gaps where the next op's input was
 * there, the call alone), hop latency (beyond the overhead), tail and step
 * from M; frees M's vectors. */
static void measure_finish(struct measure *M, struct job *j)
{
	int pp = j->in.pp, nops = j->in.pp * j->in.vpp;
	struct dvec overs = { 0 };
	for (int i = 0; i < nops; i++) {
		j->fwd[i] = stat_of(&M->fwd[i]);
		j->bwd[i] = stat_of(&M->bwd[i]);
	}
	for (int s = 0; s < pp; s++)
		dpush(&overs, quantile(M->gaps[s].v, M->gaps[s].n, 0.25));
	double over = quantile(overs.v, overs.n, 0.5);
	for (int s = 0; s < pp; s++)
		j->over[s] = over;
	j->in.overhead_ns = j->over;
	j->in.p2p_ns = pp > 1 ? fmax(0.0, quantile(M->hops.v, M->hops.n, 0.5) - over) : 0;
	j->in.p2p_measured = true;
	j->in.tail_ns = fmax(0.0, quantile(M->last.v, M->last.n, 0.5) - j->bwd[0].median);
	j->in.step_ns = quantile(M->steps.v, M->steps.n, 0.5);
	free(overs.v);
	measure_release(M);
}

/* ---- a Primus pp_data dump (docs/advisor.md, "Inputs from a Primus dump") --
 * Read by the importer's reader (batch/primus.h): each call's start and end
 * in ns on its rank's own clock, the schedule's start at 0 on every rank. */

/* Fills j from the dump in dir, iterations first.. on: the op times,
 * overhead, hop and tail of measure_finish() (the hop: the ranks' clocks
 * start together); the step is the median over iterations of the longest
 * rank's total (the schedule call: nothing outside the pipeline); memory
 * each stage's highest reading (peak reserved so far). Returns false with
 * the reason when the dump cannot be read. */
static bool primus_job(const char *dir, int first, struct job *j, struct strbuf *why)
{
	struct primus_dump d;
	struct measure M = { 0 };
	size_t i0 = 0;
	bool ok = false;

	if (primus_load(dir, &d, why))
		goto out;
	int pp = d.cfg.pp, vpp = d.cfg.vpp, mbs = d.microbatches;
	while (i0 < d.niters && d.iters[i0] < first)
		i0++;
	if (pp * vpp > 64 || mbs < 1 || i0 == d.niters) {
		strbuf_addf(why, "%s: pp %d, vpp %d, %d micro-batches, %zu iterations: not usable",
			    dir, pp, vpp, mbs, d.niters);
		goto out;
	}
	job_init(j, pp, mbs, 1, 1);
	j->in.vpp = vpp;
	j->in.strategy = vpp > 1 ? SIM_INTERLEAVE : SIM_1F1B;

	for (int s = 0; s < pp; s++) {
		j->mem[s] = NAN;
		for (size_t i = i0; i < d.niters; i++) {
			const struct primus_iter *x = primus_at(&d, s, i);
			struct interval *ops = xcalloc(
				x->ncalls[PRIMUS_FWD] + x->ncalls[PRIMUS_BWD], sizeof(*ops));
			size_t k = 0;
			for (int kind = PRIMUS_FWD; kind <= PRIMUS_BWD; kind++)
				for (size_t c = 0; c < x->ncalls[kind]; c++) {
					const struct primus_call *op = &x->calls[kind][c];
					struct dvec *times = kind == PRIMUS_FWD ? M.fwd : M.bwd;
					dpush(&times[s * vpp + op->chunk],
					      (double)(op->end_ns - op->start_ns));
					ops[k++] = (struct interval){ (double)op->start_ns,
								      (double)op->end_ns };
				}
			measure_ops(&M, s, ops, k);
			free(ops);
			if (x->has_memory && !(x->memory_gib <= j->mem[s]))
				j->mem[s] = x->memory_gib;
		}
	}
	for (size_t i = i0; i < d.niters; i++) {
		double top = 0;
		for (int s = 0; s < pp; s++) {
			const struct primus_iter *x = primus_at(&d, s, i);
			top = fmax(top, (double)x->total_ns);
			if (s + 1 < pp) {
				const struct primus_iter *y = primus_at(&d, s + 1, i);
				dpush(&M.hops, (double)(y->calls[PRIMUS_FWD][0].start_ns -
							x->calls[PRIMUS_FWD][0].end_ns));
			}
		}
		dpush(&M.steps, top);
	}
	measure_finish(&M, j);
	j->in.outside_ns = 0;
	j->in.outside_measured = true;
	j->in.memory_gib = j->mem;
	ok = true;
out:
	primus_dump_release(&d);
	return ok;
}

/* Runs the advisor on a job whose measured step is the simulation of its
 * own times (no p2p, overhead, tail or outside time). */
static void run_exact(struct job *j, const struct advise_settings *set, struct advise_result *r)
{
	j->in.step_ns = sim_makespan(j, 0);
	run_ok(j, set, r);
}

/* ---- exact inputs ------------------------------------------------------- */

/* Measured step = the simulation of the same times (+ tail + outside): the
 * replay reproduces it exactly, whatever the per-stage times. */
static void test_calibration_exact(void **state)
{
	struct advise_settings set;
	struct advise_result r;
	struct job j;
	(void)state;
	advise_settings_init(&set);
	job_init(&j, 4, 8, 10, 20);
	j.in.layers = j.layers;
	j.fwd[3].median = 14e6; /* a slow last stage */
	j.bwd[1].median = 23e6;
	j.over[0] = j.over[1] = j.over[2] = j.over[3] = 0.25e6;
	j.in.overhead_ns = j.over;
	j.in.p2p_ns = 0.1e6;
	j.in.p2p_measured = true;
	j.in.tail_ns = 3e6;
	j.in.outside_ns = 50e6;
	j.in.outside_measured = true;
	j.in.step_ns = sim_makespan(&j, 0.1e6) + 3e6 + 50e6;
	run_ok(&j, &set, &r);
	assert_true(r.nrows > 1);
	assert_int_equal(r.rows[0].kind, ADVISE_CURRENT);
	assert_string_equal(advise_row_schedule(&r.rows[0]), "current");
	assert_true(fabs(r.rows[0].step_ns - j.in.step_ns) < 1e-6);
	assert_true(fabs(r.calibration_error) < 1e-12);
	assert_true(r.calibrated);
	assert_string_equal(r.calibration_note, "");
	/* 1F1B stage s holds p - s micro-batches of 8 layers at its peak. */
	for (int s = 0; s < 4; s++)
		assert_true(fabs(r.rows[0].stage_units[s] - 8.0 * (4 - s)) < 1e-9);
	assert_true(fabs(r.rows[0].activation - 1.0) < 1e-12);
	assert_true(r.simulations >= (int)r.nrows - 2);
	advise_result_release(&r);

	/* The replay 10 % long: not calibrated, no best option, a reason. */
	j.in.step_ns /= 1.10;
	run_ok(&j, &set, &r);
	assert_false(r.calibrated);
	assert_true(fabs(r.calibration_error - 0.10) < 1e-9);
	assert_int_equal(r.best, -1);
	assert_non_null(strstr(r.calibration_note, "longer"));
	assert_non_null(strstr(r.best_note, "no best option"));
	advise_result_release(&r);
}

/* Which alternatives run, and why the others do not. */
static void test_constraints(void **state)
{
	struct advise_settings set;
	struct advise_result r;
	struct job j;
	const struct advise_row *row;
	(void)state;
	advise_settings_init(&set);

	/* pp 4, 8 layers a stage, 8 micro-batches: VPP 2, 4, 8; DualPipe-V
	 * runs (even pp, m >= 2p, even layers). */
	job_init(&j, 4, 8, 10, 20);
	j.in.layers = j.layers;
	run_exact(&j, &set, &r);
	print_result(&r);
	for (int v = 2; v <= 8; v++) {
		row = find_row(&r, ADVISE_SCHEDULE, SIM_INTERLEAVE, v, -1);
		if (v == 2 || v == 4 || v == 8) {
			assert_non_null(row);
			assert_true(row->valid);
			assert_true(row->step_ns < r.rows[0].step_ns);
		} else {
			assert_null(row);
		}
	}
	row = find_row(&r, ADVISE_SCHEDULE, SIM_INTERLEAVE, 2, -1);
	assert_string_equal(row->knobs, "--num-layers-per-virtual-pipeline-stage 4");
	/* Uniform stages: VPP v's bubble is (p-1)/(v m + p-1). */
	assert_true(fabs(row->bubble - 3.0 / 19.0) < 1e-9);
	row = find_row(&r, ADVISE_SCHEDULE, SIM_DUALPIPE_V, -1, -1);
	assert_non_null(row);
	assert_true(row->valid);
	row = find_row(&r, ADVISE_SCHEDULE, SIM_ZB1P, 1, -1);
	assert_true(row->valid);
	/* ZB-H1 closed form (docs/ppsim.md): m(F+D+W) + (p-1)(F+D-W), with
	 * D = 0.6 B and W = 0.4 B (zb_w_share). */
	assert_true(fabs(row->pipeline_ns - (8 * 30e6 + 3 * (10e6 + 12e6 - 8e6))) < 1e-3);
	row = find_row(&r, ADVISE_MICROBATCHES, SIM_1F1B, 1, 4);
	assert_true(row->valid);
	row = find_row(&r, ADVISE_MICROBATCHES, SIM_1F1B, 1, 16);
	assert_true(row->valid);
	/* Uniform stages: every stage is "slowest", the first wins; moving
	 * layers to the other end and to the least loaded. */
	assert_non_null(find_row(&r, ADVISE_REBALANCE, SIM_1F1B, 1, 8));
	advise_result_release(&r);

	/* pp 3 (odd), 7 layers a stage (none divides), 5 micro-batches (odd),
	 * micro-batch size 1 (cannot halve). */
	job_init(&j, 3, 5, 10, 20);
	for (int s = 0; s < 3; s++)
		j.layers[s] = 7;
	j.in.layers = j.layers;
	j.in.micro_batch_size = 1;
	run_exact(&j, &set, &r);
	print_result(&r);
	row = find_row(&r, ADVISE_SCHEDULE, SIM_INTERLEAVE, 7, -1);
	assert_non_null(row);     /* 7 divides 7: one layer per chunk */
	assert_false(row->valid); /* but Megatron needs m mod pp = 0 or >= pp */
	assert_non_null(strstr(row->notes, "Megatron needs"));
	row = find_row(&r, ADVISE_SCHEDULE, SIM_DUALPIPE_V, -1, -1);
	assert_false(row->valid);
	assert_non_null(strstr(row->notes, "even number of pipeline stages"));
	row = find_row(&r, ADVISE_MICROBATCHES, SIM_1F1B, 1, 2);
	assert_false(row->valid);
	assert_non_null(strstr(row->notes, "odd micro-batch count"));
	row = find_row(&r, ADVISE_MICROBATCHES, SIM_1F1B, 1, 10);
	assert_false(row->valid);
	assert_non_null(strstr(row->notes, "odd micro-batch size"));
	advise_result_release(&r);

	/* pp 4 with 5 layers a stage: no VPP size divides, one invalid row. */
	job_init(&j, 4, 8, 10, 20);
	for (int s = 0; s < 4; s++)
		j.layers[s] = 5;
	j.in.layers = j.layers;
	run_exact(&j, &set, &r);
	row = find_row(&r, ADVISE_SCHEDULE, SIM_INTERLEAVE, 5, -1);
	assert_non_null(row);
	assert_true(row->valid);
	assert_null(find_row(&r, ADVISE_SCHEDULE, SIM_INTERLEAVE, 2, -1));
	row = find_row(&r, ADVISE_SCHEDULE, SIM_DUALPIPE_V, -1, -1);
	assert_false(row->valid);
	assert_non_null(strstr(row->notes, "even layer count"));
	advise_result_release(&r);

	/* DualPipe-V with too few micro-batches; layers unknown: VPP 2 and 4,
	 * flagged, and no layers to move. */
	job_init(&j, 4, 6, 10, 20);
	run_exact(&j, &set, &r);
	row = find_row(&r, ADVISE_SCHEDULE, SIM_DUALPIPE_V, -1, -1);
	assert_false(row->valid);
	assert_non_null(strstr(row->notes, "at least 2 x pp = 8"));
	for (int v = 2; v <= 4; v += 2) {
		row = find_row(&r, ADVISE_SCHEDULE, SIM_INTERLEAVE, v, -1);
		assert_non_null(row);
		assert_true(row->modelled & ADVISE_MOD_LAYERS);
		/* m = 6 is not a multiple of pp = 4: Megatron refuses it */
		assert_false(row->valid);
	}
	row = find_row(&r, ADVISE_REBALANCE, SIM_1F1B, 1, -1);
	assert_false(row->valid);
	assert_non_null(strstr(row->notes, "layer counts unknown"));
	advise_result_release(&r);

	/* No pipeline (pp 1): nothing to interleave, no DualPipe-V, no layers
	 * to move; the micro-batch rows run. */
	job_init(&j, 1, 4, 10, 20);
	j.in.layers = j.layers;
	run_exact(&j, &set, &r);
	assert_true(fabs(r.calibration_error) < 1e-12);
	row = find_row(&r, ADVISE_SCHEDULE, SIM_INTERLEAVE, 2, -1);
	assert_false(row->valid);
	assert_non_null(strstr(row->notes, "two or more pipeline stages"));
	assert_false(find_row(&r, ADVISE_SCHEDULE, SIM_DUALPIPE_V, -1, -1)->valid);
	assert_null(find_row(&r, ADVISE_REBALANCE, SIM_1F1B, -1, -1));
	assert_true(find_row(&r, ADVISE_MICROBATCHES, SIM_1F1B, 1, 2)->valid);
	advise_result_release(&r);

	/* Bad inputs are errors, not rows. */
	struct strbuf err = STRBUF_INIT;
	job_init(&j, 4, 8, 10, 20);
	j.in.strategy = SIM_INTERLEAVE; /* with vpp 1 */
	assert_int_equal(advise_run(&j.in, &set, &r, &err), PP_EINVAL);
	advise_result_release(&r);
	job_init(&j, 4, 8, 10, 20);
	j.fwd[2].median = NAN;
	assert_int_equal(advise_run(&j.in, &set, &r, &err), PP_EINVAL);
	assert_non_null(strstr(err.buf, "forward time of stage 2"));
	advise_result_release(&r);
	job_init(&j, 4, 8, 10, 20);
	j.in.step_ns = 0;
	assert_int_equal(advise_run(&j.in, &set, &r, &err), PP_EINVAL);
	advise_result_release(&r);
	job_init(&j, 4, 8, 10, 20);
	set.zb_w_share = 1.5;
	assert_int_equal(advise_run(&j.in, &set, &r, &err), PP_EINVAL);
	advise_result_release(&r);
	strbuf_release(&err);
}

/* Readings that are exactly base + a x units: the fit finds a and every
 * residual is 0; a stage's predicted GiB for the replay is its reading and
 * an alternative's is base + a x its own units. */
static void test_memory_fit_exact(void **state)
{
	struct advise_settings set;
	struct advise_result r;
	struct job j;
	const double a = 0.75, base = 40;
	(void)state;
	advise_settings_init(&set);
	job_init(&j, 8, 16, 10, 20);
	j.in.layers = j.layers;
	for (int s = 0; s < 8; s++)
		j.mem[s] = base + a * 8 * (8 - s);
	j.mem[0] += 1.5; /* the embedding: outside the fit, kept in the base */
	j.mem[7] += 2.0; /* the loss */
	j.in.memory_gib = j.mem;
	run_exact(&j, &set, &r);
	print_result(&r);
	assert_true(r.memory.ok);
	assert_true(fabs(r.memory.gib_per_unit - a) < 1e-9);
	assert_true(fabs(r.memory.common_gib - base) < 1e-9);
	assert_true(r.memory.rms_gib < 1e-9);
	for (int s = 1; s < 7; s++)
		assert_true(fabs(r.memory.residual_gib[s]) < 1e-9);
	assert_true(fabs(r.memory.residual_gib[0] - 1.5) < 1e-9);
	assert_true(fabs(r.memory.base_gib[7] - (base + 2.0)) < 1e-9);
	for (int s = 0; s < 8; s++)
		assert_true(fabs(r.rows[0].stage_gib[s] - j.mem[s]) < 1e-9);
	assert_true(fabs(r.rows[0].memory_gib - j.mem[0]) < 1e-9);
	const struct advise_row *row = find_row(&r, ADVISE_SCHEDULE, SIM_INTERLEAVE, 2, -1);
	assert_non_null(row);
	for (int s = 0; s < 8; s++)
		assert_true(fabs(row->stage_gib[s] -
				 (r.memory.base_gib[s] + a * row->stage_units[s])) < 1e-9);
	/* Interleaved stage 0 holds 2(p-1) + (v-1)p + 1 = 23 chunks of 4
	 * layers: 92 units against 1F1B's 64. */
	assert_true(fabs(row->stage_units[0] - 92) < 1e-9);
	assert_true(fabs(row->activation - 92.0 / 64.0) < 1e-9);
	/* Half the micro-batches of twice the size: 1F1B stage 0 still holds
	 * 8 of them, each twice the activation. */
	row = find_row(&r, ADVISE_MICROBATCHES, SIM_1F1B, 1, 8);
	assert_true(fabs(row->stage_units[0] - 128) < 1e-9);
	advise_result_release(&r);

	/* No readings: no GiB anywhere, the activation ratio stays. */
	j.in.memory_gib = NULL;
	run_ok(&j, &set, &r);
	assert_false(r.memory.ok);
	assert_true(isnan(r.rows[1].memory_gib));
	assert_null(r.rows[1].stage_gib);
	assert_true(isfinite(r.rows[1].activation));
	advise_result_release(&r);
}

/* Every row says which of its inputs are modelled. */
static void test_modelled_labels(void **state)
{
	struct advise_settings set;
	struct advise_result r;
	struct job j;
	struct strbuf sb = STRBUF_INIT;
	(void)state;
	advise_settings_init(&set);
	job_init(&j, 4, 8, 10, 20);
	j.in.layers = j.layers;
	run_exact(&j, &set, &r);
	/* Nothing but the op times measured: p2p, overhead, outside. */
	advise_modelled_format(r.rows[0].modelled, &sb);
	assert_string_equal(sb.buf, "p2p,overhead,outside");
	advise_result_release(&r);

	for (int s = 0; s < 4; s++) {
		j.over[s] = 0;
		j.mem[s] = 30 + 0.5 * 8 * (4 - s);
	}
	j.in.overhead_ns = j.over;
	j.in.p2p_measured = true;
	j.in.outside_measured = true;
	j.in.memory_gib = j.mem;
	run_ok(&j, &set, &r);
	assert_int_equal(r.rows[0].modelled, 0);
	for (size_t i = 1; i < r.nrows; i++) {
		const struct advise_row *row = &r.rows[i];
		unsigned want = 0;
		if (!row->valid)
			continue;
		if (row->kind == ADVISE_SCHEDULE && row->strategy != SIM_ZB1P &&
		    row->strategy != SIM_1F1B_OVERLAP)
			want |= ADVISE_MOD_CHUNK_SPLIT;
		if (row->strategy == SIM_ZB1P || row->strategy == SIM_DUALPIPE_V)
			want |= ADVISE_MOD_W_SHARE;
		if (row->strategy == SIM_1F1B_OVERLAP || row->strategy == SIM_DUALPIPE_V)
			want |= ADVISE_MOD_OVERLAP;
		if (row->kind == ADVISE_MICROBATCHES)
			want |= ADVISE_MOD_MBS;
		if (row->kind == ADVISE_REBALANCE)
			want |= ADVISE_MOD_CHUNK_SPLIT | ADVISE_MOD_LAYER_RATE;
		want |= ADVISE_MOD_MEMORY;
		strbuf_reset(&sb);
		advise_modelled_format(row->modelled, &sb);
		print_message("%s v%d m%d: %s\n", advise_row_schedule(row), row->vpp,
			      row->microbatches, sb.buf);
		assert_int_equal(row->modelled, want);
	}
	advise_result_release(&r);

	/* A measured W: zero-bubble rows no longer rest on the W share. */
	struct advise_stat w[4];
	for (int s = 0; s < 4; s++) {
		w[s] = (struct advise_stat){ 8e6, NAN, NAN, 10 };
		j.bwd[s].median = 12e6;
	}
	j.in.wgrad = w;
	run_ok(&j, &set, &r);
	const struct advise_row *zb = find_row(&r, ADVISE_SCHEDULE, SIM_ZB1P, 1, -1);
	assert_false(zb->modelled & ADVISE_MOD_W_SHARE);
	advise_result_release(&r);

	strbuf_reset(&sb);
	advise_modelled_format(~0u & ((1u << ADVISE_MOD_NBITS) - 1), &sb);
	assert_string_equal(sb.buf, "p2p,overhead,outside,layers,chunk_split,w_share,overlap,"
				    "mbs,layer_rate,memory_fit");
	assert_string_equal(advise_modelled_name(ADVISE_MOD_MBS), "mbs");
	assert_string_equal(advise_modelled_name(3), "?");
	strbuf_release(&sb);
}

/* The config file path holding text, loaded. */
static struct config *config_of(const char *path, const char *text, struct strbuf *e)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	struct config *cfg = config_load(path, e);
	assert_non_null(cfg);
	return cfg;
}

/* [advise] keys of a config file; a bad value names its key; an unknown
 * key is warned of, not refused. */
static void test_settings_from_config(void **state)
{
	char path[] = "/tmp/pp-advise-cfg-XXXXXX";
	struct advise_settings set;
	struct strbuf e = STRBUF_INIT;
	struct config *cfg;
	int fd = mkstemp(path);
	(void)state;
	assert_true(fd >= 0);
	close(fd);
	cfg = config_of(path,
			"[advise]\nzb_w_share = 0.3\nchunk_overhead_ms = 0.5\nmax_layer_moves = 3\n"
			"memory_limit_gib = 192\n",
			&e);
	assert_int_equal(advise_settings_load(&set, cfg, &e), 0);
	assert_true(set.zb_w_share == 0.3);
	assert_true(set.chunk_overhead_ns == 0.5e6);
	assert_int_equal(set.max_layer_moves, 3);
	assert_true(set.memory_limit_gib == 192);
	assert_true(set.mbs_efficiency == 1.0);
	assert_int_equal(advise_settings_check_known(cfg), 0);
	config_free(cfg);

	cfg = config_of(path, "[advise]\noverlap_hidden = 2\n", &e);
	assert_int_equal(advise_settings_load(&set, cfg, &e), PP_EINVAL);
	assert_non_null(strstr(e.buf, "overlap_hidden"));
	config_free(cfg);

	strbuf_reset(&e);
	cfg = config_of(path, "[advise]\nzb_w_shar = 0.5\nmin_gain = 0.02\n", &e);
	assert_int_equal(advise_settings_check_known(cfg), 1);
	assert_int_equal(advise_settings_load(&set, cfg, &e), 0);
	assert_true(set.zb_w_share == 0.4); /* the default: the key is misspelt */
	assert_true(set.min_gain == 0.02);
	config_free(cfg);
	unlink(path);
	strbuf_release(&e);
}

/* The shipped real run: PP 8, VPP 1, 16 micro-batches of a 64-layer model,
 * 20 iterations (the first skipped: warm-up). The replay is within 2 % of
 * the measured step; the memory line fits the middle stages within a GiB. */
static void test_primus_sample(void **state)
{
	char buf[3000], dir[4000];
	const char *shared = unit_shared_dir(buf, sizeof(buf));
	struct strbuf why = STRBUF_INIT;
	struct advise_settings set;
	struct advise_result r;
	struct job *j = xcalloc(1, sizeof(*j));
	(void)state;
	if (!shared) {
		print_message("# skip: neither PP_SHARED nor PP_ROOT is set\n");
		free(j);
		skip();
	}
	snprintf(dir, sizeof(dir), "%s/data/primus/pp8", shared);
	if (access(dir, R_OK)) {
		print_message("# skip: no Primus sample at %s\n", dir);
		free(j);
		skip();
	}
	if (!primus_job(dir, 2, j, &why))
		print_message("# %s\n", why.buf);
	assert_int_equal(why.len, 0);
	for (int s = 0; s < 8; s++)
		j->layers[s] = 8;
	j->in.layers = j->layers;
	print_message("step %.2f ms, overhead %.3f ms, p2p %.3f ms, tail %.2f ms\n",
		      j->in.step_ns / 1e6, j->over[0] / 1e6, j->in.p2p_ns / 1e6,
		      j->in.tail_ns / 1e6);
	advise_settings_init(&set);
	run_ok(j, &set, &r);
	print_result(&r);
	print_message("memory: %.3f GiB per layer x micro-batch, common %.2f GiB, rms %.3f GiB\n",
		      r.memory.gib_per_unit, r.memory.common_gib, r.memory.rms_gib);
	for (int s = 0; s < 8; s++)
		print_message("  stage %d: measured %.2f GiB, base %.2f, residual %+.3f\n", s,
			      r.memory.measured_gib[s], r.memory.base_gib[s],
			      r.memory.residual_gib[s]);
	assert_true(fabs(r.calibration_error) < 0.02);
	assert_true(r.calibrated);
	assert_true(r.memory.ok);
	assert_true(r.memory.rms_gib < 1.0);
	const struct advise_row *v2 = find_row(&r, ADVISE_SCHEDULE, SIM_INTERLEAVE, 2, -1);
	assert_non_null(v2);
	assert_true(v2->valid && v2->step_ns < r.rows[0].step_ns);
	assert_true(isfinite(v2->memory_gib));
	advise_result_release(&r);
	strbuf_release(&why);
	free(j);
}

/* ---- ppgen jobs of known truth ---------------------------------------------
 * ppgen simulates every kernel of a Megatron job (docs/ppgen.md) and writes
 * each rank's op table (.truth/ops.csv) and iteration windows
 * (.truth/ranks.csv). The advisor's inputs are measured from them as the
 * Primus reader does: per (stage, chunk) compute medians, the per-op overhead
 * from the gaps between consecutive compute ops, the first forward's hop,
 * stage 0's tail; the step is the iteration window and what lies outside
 * the compute pipeline is kept as measured. */

struct gop {
	int it, rank, type, mc, mb;
	double s, e;
};

static int cmp_gop(const void *a, const void *b)
{
	const struct gop *x = a, *y = b;
	if (x->it != y->it)
		return x->it - y->it;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return (x->s > y->s) - (x->s < y->s);
}

/* Generates pp stages x vpp chunks of `layers` layers a stage into
 * tmp/name (slow: stage 2 computes that much slower, 0 = none) and measures
 * the advisor's inputs from its truth. */
static void gen_job(const char *name, int pp, int vpp, int m, int layers, double slow,
		    struct job *j)
{
	static const int iters[] = { 3, 4, 5 };
	char out[256], path[320], line[512];
	struct gen_slow_stage sl = { 2, slow };
	struct gen_opts o;
	snprintf(out, sizeof(out), "%s/%s", unit_tmp, name);
	unit_gen_opts(&o, out, pp, m, iters, 3);
	o.vpp = vpp;
	o.layers = layers / vpp;
	o.seed = 7;
	o.slow_stages = &sl;
	o.nslow_stages = slow > 0;
	o.variant = GEN_WARMUP_CORE;
	unit_gen(&o);

	struct gop *ops = NULL;
	size_t n = 0, cap = 0;
	snprintf(path, sizeof(path), "%s/.truth/ops.csv", out);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		int it, rank, dp, stage, seq, mc, gmc, mb;
		char type[64];
		long long s0, e0;
		if (sscanf(line, "%d,%d,%d,%d,%63[^,],%d,%d,%d,%d,%lld,%lld", &it, &rank, &dp,
			   &stage, type, &seq, &mc, &gmc, &mb, &s0, &e0) != 11)
			continue;
		bool fw = !strcmp(type, "forward-compute"), bw = !strcmp(type, "backward-compute");
		if (!fw && !bw)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			ops = xrealloc(ops, cap * sizeof(*ops));
		}
		ops[n++] = (struct gop){ it, stage, bw, mc, mb, (double)s0, (double)e0 };
	}
	fclose(f);
	qsort(ops, n, sizeof(*ops), cmp_gop);

	job_init(j, pp, m, 1, 1);
	j->in.vpp = vpp;
	j->in.strategy = vpp > 1 ? SIM_INTERLEAVE : SIM_1F1B;
	j->in.warmup = SCHED_CORE;
	for (int s = 0; s < pp; s++)
		j->layers[s] = layers;
	j->in.layers = j->layers;

	struct measure M = { 0 };
	struct dvec spans = { 0 };
	struct interval *run = xcalloc(n ? n : 1, sizeof(*run));
	for (size_t i = 0, k = 0; i < n; i++) {
		const struct gop *x = &ops[i];
		dpush(x->type ? &M.bwd[x->rank * vpp + x->mc] : &M.fwd[x->rank * vpp + x->mc],
		      x->e - x->s);
		run[k++] = (struct interval){ x->s, x->e };
		if (i + 1 == n || ops[i + 1].it != x->it || ops[i + 1].rank != x->rank) {
			measure_ops(&M, x->rank, run, k);
			k = 0;
		}
	}
	free(run);
	/* The first forward's hops, and each iteration's compute span. */
	for (int it = iters[0]; it <= iters[2]; it++) {
		double first[64], fend[64], lo = INFINITY, hi = -INFINITY;
		for (int s = 0; s < pp; s++)
			first[s] = fend[s] = NAN;
		for (size_t i = 0; i < n; i++) {
			const struct gop *x = &ops[i];
			if (x->it != it)
				continue;
			lo = fmin(lo, x->s);
			hi = fmax(hi, x->e);
			if (!x->type && x->mb == 0 && x->mc == 0) {
				first[x->rank] = x->s;
				fend[x->rank] = x->e;
			}
		}
		for (int s = 0; s + 1 < pp; s++)
			dpush(&M.hops, first[s + 1] - fend[s]);
		dpush(&spans, hi - lo);
	}
	snprintf(path, sizeof(path), "%s/.truth/ranks.csv", out);
	f = fopen(path, "r");
	assert_non_null(f);
	double wlo[3], whi[3];
	for (int k = 0; k < 3; k++) {
		wlo[k] = INFINITY;
		whi[k] = -INFINITY;
	}
	while (fgets(line, sizeof(line), f)) {
		int it, rank;
		long long ws, we;
		char mode[32];
		if (sscanf(line, "%d,%d,%31[^,],%lld,%lld", &it, &rank, mode, &ws, &we) != 5 ||
		    it < iters[0] || it > iters[2])
			continue;
		wlo[it - iters[0]] = fmin(wlo[it - iters[0]], (double)ws);
		whi[it - iters[0]] = fmax(whi[it - iters[0]], (double)we);
	}
	fclose(f);
	for (int k = 0; k < 3; k++)
		dpush(&M.steps, whi[k] - wlo[k]);
	measure_finish(&M, j);
	j->in.outside_ns = j->in.step_ns - quantile(spans.v, spans.n, 0.5);
	j->in.outside_measured = true;
	free(spans.v);
	free(ops);
	print_message("%s: step %.3f ms (outside %.3f), overhead %.1f us, p2p %.1f us, tail "
		      "%.1f us, F0 %.3f ms, B0 %.3f ms\n",
		      name, j->in.step_ns / 1e6, j->in.outside_ns / 1e6, j->over[0] / 1e3,
		      j->in.p2p_ns / 1e3, j->in.tail_ns / 1e3, j->fwd[0].median / 1e6,
		      j->bwd[0].median / 1e6);
}

/* Predicts b's schedule from a's measurements; returns the relative error
 * against b's measured step. */
static double cross(const char *what, const struct job *a, const struct job *b)
{
	struct advise_settings set;
	struct advise_result r;
	const struct advise_row *row;
	advise_settings_init(&set);
	run_ok(a, &set, &r);
	print_result(&r);
	row = b->in.strategy == SIM_1F1B
		      ? find_row(&r, ADVISE_SCHEDULE, SIM_1F1B, 1, b->in.microbatches)
		      : find_row(&r, ADVISE_SCHEDULE, SIM_INTERLEAVE, b->in.vpp,
				 b->in.microbatches);
	assert_non_null(row);
	assert_true(row->valid);
	double e = (row->step_ns - b->in.step_ns) / b->in.step_ns;
	print_message("%s: calibration %+.2f %%, predicted %.3f ms, measured %.3f ms: %+.2f %%\n",
		      what, 100 * r.calibration_error, row->step_ns / 1e6, b->in.step_ns / 1e6,
		      100 * e);
	assert_true(fabs(r.calibration_error) < 0.03);
	advise_result_release(&r);
	return e;
}

/* The same model (pp 4, 8 layers a stage, 8 micro-batches) as VPP 1 and
 * VPP 2, with and without a slow stage: each run predicts the other's step
 * within 3 %. */
static void test_ppgen_cross(void **state)
{
	struct job *v1 = xcalloc(1, sizeof(*v1)), *v2 = xcalloc(1, sizeof(*v2));
	(void)state;
	for (int k = 0; k < 2; k++) {
		double slow = k ? 1.5 : 0;
		gen_job(k ? "v1-slow" : "v1", 4, 1, 8, 8, slow, v1);
		gen_job(k ? "v2-slow" : "v2", 4, 2, 8, 8, slow, v2);
		assert_true(fabs(cross("VPP 1 -> 2", v1, v2)) < 0.03);
		assert_true(fabs(cross("VPP 2 -> 1", v2, v1)) < 0.03);
	}
	free(v1);
	free(v2);
}

UNIT_MAIN(unit_tmp_setup, unit_tmp_teardown,
	  {
		  cmocka_unit_test(test_calibration_exact),
		  cmocka_unit_test(test_constraints),
		  cmocka_unit_test(test_memory_fit_exact),
		  cmocka_unit_test(test_modelled_labels),
		  cmocka_unit_test(test_settings_from_config),
		  cmocka_unit_test(test_primus_sample),
		  cmocka_unit_test(test_ppgen_cross),
	  })
