/* agg_advice.c — the schedule advisor's inputs from ppagg's job, its run
 * and its rows (agg_advice.h; docs/advisor.md §1 and §6).
 *
 *   the iterations measured (the warm-up left out) → per complete PP group
 *   and iteration: each stage's ops (fwd/bwd steps, weight-gradient calls),
 *   the gaps between them, the first forward's hop, stage 0's last op, the
 *   step and the pipeline's span → medians (docs/advisor.md §1) → the
 *   engine → the views, in one transaction.
 */
#include "agg_advice.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg_iter.h"
#include "storage/db_advice.h"
#include "storage/db_import.h"
#include "topology.h"
#include "util/cmp.h"
#include "util/pp.h"

void agg_advice_init(struct agg_advice *a)
{
	memset(a, 0, sizeof(*a));
	strbuf_init(&a->why, 0);
	strbuf_init(&a->inputs, 0);
	strbuf_init(&a->layers, 0);
	advise_input_init(&a->in);
	advise_settings_init(&a->set);
}

void agg_advice_release(struct agg_advice *a)
{
	strbuf_release(&a->why);
	strbuf_release(&a->inputs);
	strbuf_release(&a->layers);
	advise_result_release(&a->res);
	PP_FREE_ALL(a->fwd, a->bwd, a->wgrad, a->overhead, a->memory, a->layer_split);
	memset(a, 0, sizeof(*a));
}

/* ---- samples ---- */

struct dvec {
	double *v;
	size_t n, cap;
};

static void dpush(struct dvec *d, double x)
{
	PP_GROW(d->v, d->n, d->cap, 16);
	d->v[d->n++] = x;
}

/* The q-quantile (linear between order statistics) of v, sorted. NaN for
 * none. */
static double quantile_sorted(const struct dvec *d, double q)
{
	return d->n ? cmp_quantile(d->v, d->n, q) : NAN;
}

/* The same of v in any order; sorts v. */
static double quantile(struct dvec *d, double q)
{
	if (d->n)
		qsort(d->v, d->n, sizeof(*d->v), cmp_double);
	return quantile_sorted(d, q);
}

/* Its three quantiles from one sort. */
static struct advise_stat stat_of(struct dvec *d)
{
	double med = quantile(d, 0.5);
	return (struct advise_stat){ med, quantile_sorted(d, 0.1), quantile_sorted(d, 0.9),
				     (int)d->n };
}

/* ---- measuring ---- */

struct op {
	int64_t s, e;
	int kind, chunk; /* 0 fwd, 1 bwd, 2 wgrad */
};

static int cmp_op(const void *a, const void *b)
{
	const struct op *x = a, *y = b;
	return (x->s > y->s) - (x->s < y->s);
}

/* What the measurement collects, per (stage, chunk) and per stage. */
struct measure {
	int P, V;
	struct dvec *fwd, *bwd, *wgrad; /* [P * V] */
	struct dvec *gaps;              /* [P] */
	double *mem;                    /* [P]: highest reading, NaN none */
	struct dvec hops, last, steps, outside;
	int nfwd0; /* forward calls of stage 0 in the first group measured */
	/* one iteration's readings and weight-gradient calls */
	struct db_agg_reading *rd;
	size_t nrd, caprd;
	struct db_agg_wgrad *wg;
	size_t nwg, capwg;
	bool dump;      /* the source records the schedule call, not an
			   * iteration window */
	bool has_total; /* some reading has a total */
	int groups;     /* (group, iteration) pairs measured */
};

static int take_reading(void *ctx, const struct db_agg_reading *r)
{
	struct measure *M = ctx;
	PP_GROW(M->rd, M->nrd, M->caprd, 64);
	M->rd[M->nrd++] = *r;
	return 0;
}

static int take_wgrad(void *ctx, const struct db_agg_wgrad *w)
{
	struct measure *M = ctx;
	PP_GROW(M->wg, M->nwg, M->capwg, 256);
	M->wg[M->nwg++] = *w;
	return 0;
}

static const struct db_agg_reading *reading_of(const struct measure *M, int64_t rank)
{
	for (size_t i = 0; i < M->nrd; i++)
		if (M->rd[i].rank == rank)
			return &M->rd[i];
	return NULL;
}

/* The ops of rank r (its steps, and its weight-gradient calls) into *ops. */
static size_t rank_ops(const struct measure *M, const struct agg_rank *r, struct op **ops,
		       size_t *cap)
{
	size_t n = 0;
	size_t need = r->nsteps + 1;
	for (size_t i = 0; i < M->nwg; i++)
		need += M->wg[i].rank == r->in.rank;
	if (need > *cap) {
		*cap = need;
		*ops = xrealloc(*ops, *cap * sizeof(**ops));
	}
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct agg_step *s = &r->steps[i];
		if ((s->phase != RR_FWD && s->phase != RR_BWD) || !s->has_kernels || s->e < s->s)
			continue;
		(*ops)[n++] = (struct op){ s->s, s->e, s->phase == RR_FWD ? 0 : 1,
					   s->chunk > 0 ? s->chunk : 0 };
	}
	for (size_t i = 0; i < M->nwg; i++)
		if (M->wg[i].rank == r->in.rank && M->wg[i].end_ns >= M->wg[i].start_ns)
			(*ops)[n++] = (struct op){ M->wg[i].start_ns, M->wg[i].end_ns, 2,
						   M->wg[i].chunk > 0 ? M->wg[i].chunk : 0 };
	qsort(*ops, n, sizeof(**ops), cmp_op);
	return n;
}

/* One complete PP group g in one iteration. */
static void measure_group(struct measure *M, const struct agg_iter *it, const struct topo_group *g)
{
	const int P = M->P, V = M->V;
	struct op *ops = NULL;
	size_t cap = 0;
	int64_t *first_fs = xmalloc(2 * (size_t)P * sizeof(*first_fs)), *first_fe = first_fs + P;
	int64_t lo = INT64_MAX, hi = INT64_MIN, s0_lo = 0, s0_hi = 0;
	double top_total = -1, top_window = -1;
	for (int s = 0; s < P; s++) {
		const struct agg_rank *r = agg_iter_rank(it, g->ranks[s]);
		size_t n = rank_ops(M, r, &ops, &cap);
		first_fs[s] = first_fe[s] = INT64_MIN;
		for (size_t i = 0; i < n; i++) {
			const struct op *o = &ops[i];
			int at = s * V + (o->chunk < V ? o->chunk : V - 1);
			struct dvec *d = o->kind == 0   ? &M->fwd[at]
					 : o->kind == 1 ? &M->bwd[at]
							: &M->wgrad[at];
			dpush(d, (double)(o->e - o->s));
			if (i && o->s >= ops[i - 1].e)
				dpush(&M->gaps[s], (double)(o->s - ops[i - 1].e));
			if (o->kind == 0 && first_fs[s] == INT64_MIN) {
				first_fs[s] = o->s;
				first_fe[s] = o->e;
			}
		}
		if (n) {
			lo = ops[0].s < lo ? ops[0].s : lo;
			for (size_t i = 0; i < n; i++)
				hi = ops[i].e > hi ? ops[i].e : hi;
		}
		if (s == 0 && n) {
			dpush(&M->last, (double)(ops[n - 1].e - ops[n - 1].s));
			s0_lo = ops[0].s;
			s0_hi = ops[n - 1].e;
			if (!M->nfwd0)
				for (size_t i = 0; i < n; i++)
					M->nfwd0 += ops[i].kind == 0;
		}
		const struct db_agg_reading *rd = reading_of(M, r->in.rank);
		if (rd && rd->has_total && (double)rd->total_ns > top_total)
			top_total = (double)rd->total_ns;
		if (rd && rd->has_memory && !(rd->memory_gib <= M->mem[s]))
			M->mem[s] = rd->memory_gib;
		if (r->in.has_window && (double)(r->in.win_e - r->in.win_s) > top_window)
			top_window = (double)(r->in.win_e - r->in.win_s);
	}
	for (int s = 0; s + 1 < P; s++)
		if (first_fe[s] != INT64_MIN && first_fs[s + 1] != INT64_MIN)
			dpush(&M->hops, (double)(first_fs[s + 1] - first_fe[s]));
	/* docs/advisor.md §1: a dump's step is the schedule call (the longest
	 * rank's total; without totals, the pipeline's span on the ranks'
	 * common origin) and nothing lies outside; a Kineto job's step is
	 * the iteration window, and what it holds beyond stage 0's span (the
	 * first forward's start to the last backward's end) is outside. */
	double step, outside = 0;
	if (M->dump) {
		M->has_total |= top_total > 0;
		step = top_total > 0 ? top_total : (double)(hi - lo);
	} else {
		step = top_window > 0 ? top_window : (double)(hi - lo);
		outside = fmax(0.0, step - (double)(s0_hi - s0_lo));
	}
	if (step > 0) {
		dpush(&M->steps, step);
		dpush(&M->outside, outside);
		M->groups++;
	}
	free(first_fs);
	free(ops);
}

/* Whether every rank of g has an analysed trace with steps. */
static bool group_complete(const struct agg_iter *it, const struct topo_group *g)
{
	for (int s = 0; s < g->n; s++) {
		const struct agg_rank *r = agg_iter_rank(it, g->ranks[s]);
		if (!r || r->ntraces != 1 || !r->in.ok || !r->nsteps)
			return false;
	}
	return true;
}

static void measure_release(struct measure *M)
{
	for (int i = 0; i < M->P * M->V; i++) {
		free(M->fwd[i].v);
		free(M->bwd[i].v);
		free(M->wgrad[i].v);
	}
	for (int s = 0; s < M->P; s++)
		free(M->gaps[s].v);
	PP_FREE_ALL(M->fwd, M->bwd, M->wgrad, M->gaps, M->mem, M->hops.v, M->last.v, M->steps.v,
		    M->outside.v, M->rd, M->wg);
}

/* The layer split: [advise] layers, else the import's --layers, over P
 * stages when it divides; "" and NULL otherwise (a note in a->why). */
static void split_layers(struct agg_advice *a, long layers, int P)
{
	if (layers <= 0)
		return;
	if (layers % P) {
		strbuf_addf(&a->inputs, "; %ld layers do not divide over %d stages: split unknown",
			    layers, P);
		return;
	}
	a->layer_split = xcalloc((size_t)P, sizeof(*a->layer_split));
	for (int s = 0; s < P; s++) {
		a->layer_split[s] = (int)(layers / P);
		strbuf_addf(&a->layers, "%s%d", s ? "," : "", a->layer_split[s]);
	}
	a->in.layers = a->layer_split;
}

/* Fills a->in from M (docs/advisor.md §1). */
static void finish_inputs(struct agg_advice *a, struct measure *M, int m)
{
	const int P = M->P, V = M->V, nops = P * V;
	struct dvec overs = { 0 };
	bool any_w = false;
	a->fwd = xcalloc((size_t)nops, sizeof(*a->fwd));
	a->bwd = xcalloc((size_t)nops, sizeof(*a->bwd));
	a->overhead = xcalloc((size_t)P, sizeof(*a->overhead));
	for (int i = 0; i < nops; i++) {
		a->fwd[i] = stat_of(&M->fwd[i]);
		a->bwd[i] = stat_of(&M->bwd[i]);
		any_w |= M->wgrad[i].n > 0;
	}
	if (any_w) {
		a->wgrad = xcalloc((size_t)nops, sizeof(*a->wgrad));
		for (int i = 0; i < nops; i++)
			a->wgrad[i] = stat_of(&M->wgrad[i]);
		a->in.wgrad = a->wgrad;
	}
	for (int s = 0; s < P; s++)
		if (M->gaps[s].n)
			dpush(&overs, quantile(&M->gaps[s], 0.25));
	double over = overs.n ? quantile(&overs, 0.5) : 0;
	free(overs.v);
	for (int s = 0; s < P; s++)
		a->overhead[s] = over;
	a->in.fwd = a->fwd;
	a->in.bwd = a->bwd;
	a->in.overhead_ns = a->overhead;
	a->in.pp = P;
	a->in.vpp = V;
	a->in.microbatches = m;
	a->in.strategy = V > 1 ? SIM_INTERLEAVE : any_w ? SIM_ZB1P : SIM_1F1B;
	a->in.p2p_measured = M->hops.n > 0;
	a->in.p2p_ns = M->hops.n ? fmax(0.0, quantile(&M->hops, 0.5) - over) : 0;
	double last = quantile(&M->last, 0.5);
	a->in.tail_ns = isfinite(last) ? fmax(0.0, last - a->bwd[0].median) : 0;
	a->in.step_ns = quantile(&M->steps, 0.5);
	a->in.outside_ns = quantile(&M->outside, 0.5);
	a->in.outside_measured = true;
	bool any_mem = false;
	for (int s = 0; s < P; s++)
		any_mem |= isfinite(M->mem[s]);
	if (any_mem) {
		a->memory = xcalloc((size_t)P, sizeof(*a->memory));
		memcpy(a->memory, M->mem, (size_t)P * sizeof(*a->memory));
		a->in.memory_gib = a->memory;
	}
	strbuf_addf(&a->inputs,
		    "%s: %d iteration%s (%d-%d), %d pipeline-iteration%s; step %.3f ms (%s), "
		    "outside the pipeline %.3f ms, per-op overhead %.3f ms, hop %.3f ms, tail "
		    "%.3f ms%s%s",
		    a->source, a->iterations, a->iterations == 1 ? "" : "s", a->first_iteration,
		    a->last_iteration, M->groups, M->groups == 1 ? "" : "s", a->in.step_ns / 1e6,
		    M->dump ? (M->has_total ? "median of the longest rank's total"
					    : "median of the pipeline's span")
			    : "median of the longest iteration window",
		    a->in.outside_ns / 1e6, over / 1e6, a->in.p2p_ns / 1e6, a->in.tail_ns / 1e6,
		    any_w ? ", weight-gradient calls measured" : "",
		    any_mem ? ", memory readings" : "");
}

/* Measures the inputs; 0, or PP_ENOTFOUND with why (state FAILED), or
 * PP_EDB. */
static int measure(struct db *db, const struct agg_iter *its, size_t n, const struct topology *t,
		   int V, struct agg_advice *a)
{
	const int P = t->pp;
	struct measure M = { .P = P, .V = V };
	struct db_import_info imp;
	int found = 0, rc;
	if ((rc = db_import_latest(db, &imp, &found)))
		return rc;
	a->source = found && !strcmp(imp.format, "primus")     ? "primus"
		    : found && !strcmp(imp.format, "pp-timer") ? "pp-timer"
							       : "kineto";
	M.dump = strcmp(a->source, "kineto") != 0;
	M.fwd = xcalloc((size_t)(P * V), sizeof(*M.fwd));
	M.bwd = xcalloc((size_t)(P * V), sizeof(*M.bwd));
	M.wgrad = xcalloc((size_t)(P * V), sizeof(*M.wgrad));
	M.gaps = xcalloc((size_t)P, sizeof(*M.gaps));
	M.mem = xcalloc((size_t)P, sizeof(*M.mem));
	for (int s = 0; s < P; s++)
		M.mem[s] = NAN;
	size_t first = n > 1 && its[0].iteration <= 1 ? 1 : 0;
	for (size_t i = first; i < n && !rc; i++) {
		const struct agg_iter *it = &its[i];
		int before = M.groups;
		M.nrd = M.nwg = 0;
		if (M.dump && ((rc = db_import_readings(db, it->iteration, take_reading, &M)) ||
			       (rc = db_import_wgrads(db, it->iteration, take_wgrad, &M))))
			break;
		for (size_t g = 0; g < t->groups[TOPO_PP].n; g++) {
			const struct topo_group *pg = &t->groups[TOPO_PP].v[g];
			if (pg->n == P && group_complete(it, pg))
				measure_group(&M, it, pg);
		}
		if (M.groups > before) {
			if (!a->iterations++)
				a->first_iteration = it->iteration;
			a->last_iteration = it->iteration;
		}
	}
	if (rc)
		goto out;
	/* the memory readings of the warm-up count: max_memory_reserved()
	 * is the peak so far */
	if (first && M.dump) {
		M.nrd = 0;
		if ((rc = db_import_readings(db, its[0].iteration, take_reading, &M)))
			goto out;
		for (size_t g = 0; g < t->groups[TOPO_PP].n; g++)
			for (int s = 0; s < P && t->groups[TOPO_PP].v[g].n == P; s++) {
				const struct db_agg_reading *rd =
					reading_of(&M, t->groups[TOPO_PP].v[g].ranks[s]);
				if (rd && rd->has_memory && !(rd->memory_gib <= M.mem[s]))
					M.mem[s] = rd->memory_gib;
			}
	}
	if (!M.groups) {
		strbuf_addstr(&a->why, "no complete PP group with forward and backward steps in "
				       "the iterations measured");
		rc = PP_ENOTFOUND;
		goto out;
	}
	bool all = true;
	for (int i = 0; i < P * V; i++)
		all &= M.fwd[i].n > 0 && M.bwd[i].n > 0;
	int m = M.nfwd0 / V;
	if (!all || m < 1) {
		strbuf_addf(&a->why,
			    "not every (stage, chunk) of PP %d, VPP %d has forward and backward "
			    "steps",
			    P, V);
		rc = PP_ENOTFOUND;
		goto out;
	}
	finish_inputs(a, &M, m);
out:
	measure_release(&M);
	return rc;
}

/* ---- the rows ---- */

static const char *kind_name(enum advise_kind k)
{
	switch (k) {
	case ADVISE_CURRENT: return "current";
	case ADVISE_SCHEDULE: return "schedule";
	case ADVISE_MICROBATCHES: return "microbatches";
	default: return "layers";
	}
}

void agg_advice_label(const struct agg_advice *a, const struct advise_row *row, struct strbuf *sb)
{
	const char *name = sim_strategy_name(row->strategy);
	if (row->kind == ADVISE_CURRENT) {
		strbuf_addf(sb, "current (%s", name);
		if (row->vpp > 1)
			strbuf_addf(sb, ", VPP %d", row->vpp);
		strbuf_addstr(sb, ")");
		return;
	}
	strbuf_addstr(sb, name);
	if (row->strategy == SIM_INTERLEAVE)
		strbuf_addf(sb, ", VPP %d", row->vpp);
	if (row->kind == ADVISE_MICROBATCHES)
		strbuf_addf(sb, ", %d micro-batches", row->microbatches);
	if (row->layers) {
		strbuf_addstr(sb, ", layers ");
		advise_layers_format(&a->res, row, sb);
	}
}

static int store(struct db *db, const struct agg_advice *a)
{
	const struct advise_result *r = &a->res;
	const int P = r->pp;
	struct db_advice_row *rows = xcalloc(r->nrows + 1, sizeof(*rows));
	struct db_advice_memory *mem = xcalloc(r->nrows * (size_t)P + 1, sizeof(*mem));
	struct strbuf *txt = xcalloc(3 * r->nrows + 1, sizeof(*txt));
	size_t nmem = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct advise_row *w = &r->rows[i];
		struct strbuf *lay = &txt[3 * i], *mod = &txt[3 * i + 1];
		strbuf_init(lay, 0);
		strbuf_init(mod, 0);
		strbuf_init(&txt[3 * i + 2], 0);
		advise_layers_format(r, w, lay);
		advise_modelled_format(w->modelled, mod);
		rows[i] = (struct db_advice_row){
			.row = (int)i,
			.schedule = advise_row_schedule(w),
			.kind = kind_name(w->kind),
			.vpp = w->vpp,
			.microbatches = w->microbatches,
			.micro_batch_size = w->micro_batch_size,
			.layers = lay->buf,
			.valid = w->valid,
			.step_ns = w->step_ns,
			.pipeline_ns = w->pipeline_ns,
			.measured_step_ns = r->measured_step_ns,
			.delta = w->delta,
			.bubble = w->bubble,
			.activation = w->activation,
			.memory_gib = w->memory_gib,
			.modelled = mod->buf,
			.options = w->knobs,
			.notes = w->notes,
			.best = (int)i == r->best,
		};
		for (int s = 0; s < P; s++)
			mem[nmem++] = (struct db_advice_memory){
				.row = (int)i,
				.stage = s,
				.units = w->stage_units ? w->stage_units[s] : NAN,
				.memory_gib = w->stage_gib ? w->stage_gib[s] : NAN,
				.measured_gib = i == 0 && r->memory.measured_gib
							? r->memory.measured_gib[s]
							: NAN,
			};
	}
	struct db_advice_run run = {
		.source = a->source,
		.iterations = a->iterations,
		.first_iteration = a->first_iteration,
		.last_iteration = a->last_iteration,
		.pp = a->in.pp,
		.vpp = a->in.vpp,
		.microbatches = a->in.microbatches,
		.layers = a->layers.buf,
		.measured_step_ns = r->measured_step_ns,
		.calibration_error = r->calibration_error,
		.calibrated = r->calibrated,
		.calibration_note = r->calibration_note,
		.best_row = r->best,
		.best_note = r->best_note,
		.gib_per_unit = r->memory.ok ? r->memory.gib_per_unit : NAN,
		.common_gib = r->memory.ok ? r->memory.common_gib : NAN,
		.memory_rms_gib = r->memory.ok ? r->memory.rms_gib : NAN,
		.memory_note = r->memory.note,
		.inputs = a->inputs.buf,
		.simulations = r->simulations,
	};
	int rc = db_advice_write(db, &run, rows, r->nrows, mem, nmem);
	for (size_t i = 0; i < 3 * r->nrows; i++)
		strbuf_release(&txt[i]);
	free(txt);
	free(rows);
	free(mem);
	return rc;
}

int agg_advice_run(struct db *db, const struct agg_iter *its, size_t n, const struct topology *t,
		   int vpp, int warmup, const struct advise_settings *set, bool store_rows,
		   struct agg_advice *a)
{
	int64_t t0 = pp_now_ns();
	int rc;
	if (set)
		a->set = *set;
	else
		advise_settings_init(&a->set);
	long layers = a->set.layers;
	if (t->source == TOPO_SRC_NONE || t->pp < 2) {
		a->state = AGG_ADV_NONE;
		strbuf_addstr(&a->why, t->source == TOPO_SRC_NONE
					       ? "no topology, so no pipeline to advise on"
					       : "no pipeline (PP 1): nothing to schedule");
		rc = store_rows ? db_advice_write(db, NULL, NULL, 0, NULL, 0) : 0;
		a->seconds = (double)(pp_now_ns() - t0) / 1e9;
		return rc;
	}
	rc = measure(db, its, n, t, vpp > 0 ? vpp : 1, a);
	if (rc == PP_EDB)
		return rc;
	if (!rc) {
		struct db_import_info imp;
		int found = 0;
		if (!layers && !(rc = db_import_latest(db, &imp, &found)) && found)
			layers = imp.num_layers;
		if (rc)
			return rc;
		a->in.warmup = (enum sched_rule)warmup;
		split_layers(a, layers, t->pp);
		rc = advise_run(&a->in, &a->set, &a->res, &a->why) ? PP_EINVAL : 0;
	}
	a->state = rc ? AGG_ADV_FAILED : AGG_ADV_DONE;
	rc = !store_rows                ? 0
	     : a->state == AGG_ADV_DONE ? store(db, a)
					: db_advice_write(db, NULL, NULL, 0, NULL, 0);
	a->seconds = (double)(pp_now_ns() - t0) / 1e9;
	return rc;
}
