/* agg_compare_calc.c — the comparison of two runs, see agg_compare_calc.h
 * and docs/compare.md, whose rules this file implements:
 *
 *   the step, bubble and S → the shapes: do stages and ranks compare? →
 *   per dimension and key, per stage (or the whole job) the per-iteration
 *   values, their spread pooled over the key's stages, the judgement →
 *   per rank its compute against its stage's median change → the stage
 *   rows the flagged ranks explain → the sentence.
 *
 * A judgement: the means over the iterations, change = new / base - 1,
 * noise = max(k x spread, floor), flagged when |change| > noise and the
 * change in time is at least min_share of the baseline's step. The spread
 * is relative to the baseline's mean: the pooled within-run standard
 * deviation of the per-iteration values when both runs have two
 * iterations or more, else the robust standard deviation (1.4826 x the
 * median absolute deviation) of same-role units within each run: the ranks
 * of a stage, the pipelines of an iteration.
 */
#include "agg_compare_calc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cmp.h"
#include "util/pp.h"

const char *cmp_from_name(enum cmp_from f)
{
	static const char *const name[] = { NULL, "iterations", "ranks", "pipelines", "floor" };
	return f >= 0 && f <= CMP_FROM_FLOOR ? name[f] : NULL;
}

int cmp_key(struct cmp_keys *k, enum cmp_dim d, const char *name)
{
	for (size_t i = 0; i < k->n[d]; i++)
		if (!strcmp(k->name[d][i], name))
			return (int)i;
	PP_GROW(k->name[d], k->n[d], k->cap[d], 32);
	k->name[d][k->n[d]] = xstrdup(name);
	return (int)k->n[d]++;
}

void cmp_keys_release(struct cmp_keys *k)
{
	for (int d = 0; d < CMP_NDIMS; d++) {
		for (size_t i = 0; i < k->n[d]; i++)
			free(k->name[d][i]);
		free(k->name[d]);
	}
	memset(k, 0, sizeof(*k));
}

void cmp_run_init(struct cmp_run *r, const int *iterations, size_t niters)
{
	memset(r, 0, sizeof(*r));
	r->niters = niters;
	r->iteration = xmalloc((niters + 1) * sizeof(int));
	memcpy(r->iteration, iterations, niters * sizeof(int));
	r->step_ns = xmalloc((niters + 1) * sizeof(double));
	r->bubble = xmalloc((niters + 1) * sizeof(double));
	r->t_ns = xmalloc((niters + 1) * sizeof(double));
	r->t_ideal_ns = xmalloc((niters + 1) * sizeof(double));
	for (size_t i = 0; i < niters; i++)
		r->step_ns[i] = r->bubble[i] = r->t_ns[i] = r->t_ideal_ns[i] = NAN;
}

void cmp_run_ranks(struct cmp_run *r, int nrank)
{
	r->nrank = nrank;
	r->stage = xmalloc(((size_t)nrank + 1) * sizeof(int));
	for (int k = 0; k < nrank; k++)
		r->stage[k] = -1;
	size_t cells = r->niters * (size_t)nrank + 1;
	r->present = xcalloc(cells, 1);
	r->compute = xcalloc(cells, sizeof(int64_t));
	r->has_compute = xcalloc(cells, sizeof(bool));
}

int cmp_run_iter(const struct cmp_run *r, int it)
{
	for (size_t i = 0; i < r->niters; i++)
		if (r->iteration[i] == it)
			return (int)i;
	return -1;
}

void cmp_run_add(struct cmp_run *r, size_t iter, int rank, enum cmp_dim d, int key, int64_t ns)
{
	PP_GROW(r->v, r->nv, r->capv, 4096);
	r->v[r->nv++] = (struct cmp_sample){ (uint32_t)iter, rank, (uint16_t)d, (uint16_t)key, ns };
	r->has_dim[d] = true;
}

void cmp_run_add_pipe(struct cmp_run *r, size_t iter, double ns, double bubble)
{
	PP_GROW(r->pipes, r->npipes, r->cappipes, 64);
	r->pipes[r->npipes++] = (struct cmp_pipe){ iter, ns, bubble };
}

void cmp_run_release(struct cmp_run *r)
{
	PP_FREE_ALL(r->iteration, r->step_ns, r->bubble, r->pipes, r->stage, r->present, r->compute,
		    r->has_compute, r->v, r->t_ns, r->t_ideal_ns);
	memset(r, 0, sizeof(*r));
}

void cmp_result_release(struct cmp_result *r)
{
	for (size_t i = 0; i < r->nshape; i++)
		strbuf_release(&r->shape[i].note);
	free(r->shape);
	free(r->keys);
	free(r->rank);
	strbuf_release(&r->sentence);
	strbuf_release(&r->missing);
	memset(r, 0, sizeof(*r));
}

/* ---- statistics ------------------------------------------------------ */

static double mean_of(const double *v, size_t n)
{
	double s = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i])) {
			s += v[i];
			k++;
		}
	return k ? s / (double)k : NAN;
}

/* 1.4826 x the median absolute deviation of v[0..n) from its median: the
 * standard deviation of normal values, which a few outliers (a straggler
 * among its peers) do not move. Sorts v; NaN for fewer than two. */
static double robust_sd(double *v, size_t n)
{
	if (n < 2)
		return NAN;
	double m = cmp_median(v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = fabs(v[i] - m);
	return 1.4826 * cmp_median(v, n);
}

/* The within-run sums of squares of one unit's per-iteration values,
 * relative to ref, added to *ss with their degrees of freedom to *dof:
 * nothing unless both runs have two values or more. */
static void add_spread(const double *b, size_t nb, const double *n, size_t nn, double ref,
		       double *ss, double *dof)
{
	size_t kb = 0, kn = 0;
	for (size_t i = 0; i < nb; i++)
		kb += isfinite(b[i]);
	for (size_t i = 0; i < nn; i++)
		kn += isfinite(n[i]);
	if (kb < 2 || kn < 2 || !(ref > 0))
		return;
	double mb = mean_of(b, nb), mn = mean_of(n, nn);
	for (size_t i = 0; i < nb; i++)
		if (isfinite(b[i]))
			*ss += ((b[i] - mb) / ref) * ((b[i] - mb) / ref);
	for (size_t i = 0; i < nn; i++)
		if (isfinite(n[i]))
			*ss += ((n[i] - mn) / ref) * ((n[i] - mn) / ref);
	*dof += (double)(kb + kn - 2);
}

/* Growable list of relative residuals (the ranks' or pipelines' spread). */
struct resid {
	double *v;
	size_t n, cap;
};

static void resid_add(struct resid *r, double x)
{
	if (!isfinite(x))
		return;
	PP_GROW(r->v, r->n, r->cap, 256);
	r->v[r->n++] = x;
}

/* A spread and where it comes from; sd NaN when there is none. */
struct spread {
	double sd;
	enum cmp_from from;
};

/* The iterations' spread (ss, dof: add_spread()) when both runs have two
 * iterations or more, else the same-role units' (uss, udof: their sums of
 * squares around their group's mean, from `unit`). */
static struct spread spread_of(double ss, double dof, double uss, double udof, enum cmp_from unit)
{
	if (dof > 0)
		return (struct spread){ sqrt(ss / dof), CMP_FROM_ITERATIONS };
	return (struct spread){ udof > 0 ? sqrt(uss / udof) : NAN, unit };
}

/* Adds the values v[0..n) of one group of same-role units, relative to
 * ref, to the units' sums of squares. */
static void add_units(const double *v, size_t n, double ref, double *uss, double *udof)
{
	double sum = 0;
	if (n < 2 || !(ref > 0))
		return;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	for (size_t i = 0; i < n; i++)
		*uss += ((v[i] - sum / (double)n) / ref) * ((v[i] - sum / (double)n) / ref);
	*udof += (double)(n - 1);
}

/* The judgement of base -> new_ under spread sp; delta_ok: the change in
 * time is large enough to matter (min_share). */
static struct cmp_judgement judge(double base, double new_, struct spread sp, bool delta_ok,
				  const struct cmp_params *p)
{
	struct cmp_judgement j = { base, new_, NAN, p->floor, CMP_FROM_FLOOR, false };
	if (isfinite(sp.sd) && p->k * sp.sd > p->floor) {
		j.noise = p->k * sp.sd;
		j.from = sp.from;
	}
	if (isfinite(base) && isfinite(new_) && base > 0)
		j.change = new_ / base - 1;
	j.flagged = isfinite(j.change) && fabs(j.change) > j.noise && delta_ok;
	if (!isfinite(base) || !isfinite(new_))
		j.from = CMP_FROM_NONE;
	return j;
}

/* ---- the job's numbers ----------------------------------------------- */

struct ctx {
	const struct cmp_run *run[2]; /* base, new */
	const struct cmp_keys *keys;
	const struct cmp_params *p;
	struct cmp_result *r;
	double base_step; /* the baseline's mean step, NaN when unknown */
	/* dense[run][dim]: [(key * niters + iter) * nrank + rank] */
	int64_t *dense[2][CMP_NDIMS];
	uint8_t *flagged_rank; /* by rank: a flagged rank (ranks compared) */
	int nrank;             /* of both runs */
};

/* Whether a change of delta ns (per rank and iteration) matters. */
static bool matters(const struct ctx *C, double delta)
{
	return !isfinite(C->base_step) || fabs(delta) >= C->p->min_share * C->base_step;
}

/* The step (longest pipeline) and the bubble share: the iterations'
 * spread, else the pipelines' of each iteration. */
static void job_metrics(struct ctx *C)
{
	const struct cmp_run *b = C->run[0], *n = C->run[1];
	C->base_step = mean_of(b->step_ns, b->niters);
	for (int m = 0; m < 2; m++) {
		const double *vb = m ? b->bubble : b->step_ns, *vn = m ? n->bubble : n->step_ns;
		double mb = mean_of(vb, b->niters), mn = mean_of(vn, n->niters), ss = 0, dof = 0;
		double uss = 0, udof = 0;
		if (!isfinite(mb) || !isfinite(mn))
			continue;
		add_spread(vb, b->niters, vn, n->niters, mb, &ss, &dof);
		for (int k = 0; k < 2 && !(dof > 0); k++) {
			const struct cmp_run *x = C->run[k];
			double *v = xmalloc((x->npipes + 1) * sizeof(double));
			for (size_t i = 0; i < x->niters; i++) {
				size_t cnt = 0;
				for (size_t q = 0; q < x->npipes; q++)
					if (x->pipes[q].iter == i)
						v[cnt++] = m ? x->pipes[q].bubble : x->pipes[q].ns;
				add_units(v, cnt, mb, &uss, &udof);
			}
			free(v);
		}
		struct spread sp = spread_of(ss, dof, uss, udof, CMP_FROM_PIPELINES);
		/* a bubble share's change in time: the share of the step */
		bool ok = m ? fabs(mn - mb) >= C->p->min_share : matters(C, mn - mb);
		C->r->metric[m ? CMP_BUBBLE : CMP_STEP] = judge(mb, mn, sp, ok, C->p);
		C->r->has_metric[m ? CMP_BUBBLE : CMP_STEP] = true;
	}
}

/* S = mean T / mean ideal over the iterations with a what-if step; the
 * spread of the steps' own S. */
static void whatif_metric(struct ctx *C)
{
	double s[2] = { NAN, NAN }, ss = 0, dof = 0;
	double *per[2] = { NULL, NULL };
	size_t n[2] = { 0, 0 };
	for (int k = 0; k < 2; k++) {
		const struct cmp_run *x = C->run[k];
		double t = 0, ideal = 0;
		per[k] = xmalloc((x->niters + 1) * sizeof(double));
		for (size_t i = 0; i < x->niters; i++)
			if (isfinite(x->t_ns[i]) && x->t_ideal_ns[i] > 0) {
				t += x->t_ns[i];
				ideal += x->t_ideal_ns[i];
				per[k][n[k]++] = x->t_ns[i] / x->t_ideal_ns[i];
			}
		if (x->has_whatif && ideal > 0)
			s[k] = t / ideal;
		snprintf(k ? C->r->verdict_new : C->r->verdict_base, sizeof(C->r->verdict_base),
			 "%s", x->has_whatif ? x->verdict : "");
	}
	if (isfinite(s[0]) && isfinite(s[1])) {
		add_spread(per[0], n[0], per[1], n[1], s[0], &ss, &dof);
		struct spread sp = spread_of(ss, dof, 0, 0, CMP_FROM_FLOOR);
		C->r->metric[CMP_S] =
			judge(s[0], s[1], sp, fabs(s[1] - s[0]) >= C->p->min_share, C->p);
		C->r->has_metric[CMP_S] = true;
		C->r->verdict_flagged = C->r->verdict_base[0] && C->r->verdict_new[0] &&
					strcmp(C->r->verdict_base, C->r->verdict_new) &&
					C->r->metric[CMP_S].flagged;
	}
	free(per[0]);
	free(per[1]);
}

/* ---- the shapes ------------------------------------------------------- */

static const char *schedule_name(int vpp)
{
	return vpp > 1 ? "interleaved 1F1B" : "1F1B";
}

static void add_shape_row(struct ctx *C, const char *name, int b, int n, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void add_shape_row(struct ctx *C, const char *name, int b, int n, const char *fmt, ...)
{
	struct cmp_result *r = C->r;
	r->shape = xrealloc(r->shape, (r->nshape + 1) * sizeof(*r->shape));
	struct cmp_shape_row *row = &r->shape[r->nshape++];
	row->name = name;
	row->base = b;
	row->new_ = n;
	strbuf_init(&row->note, 0);
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&row->note, fmt, ap);
	va_end(ap);
}

/* The rows of the shape parameters that differ, and what can be compared:
 * stages when both know the same pipeline size, ranks when the layouts are
 * the same (a rank then plays the same role). */
static void shapes(struct ctx *C)
{
	const struct cmp_shape *b = &C->run[0]->shape, *n = &C->run[1]->shape;
	struct cmp_result *r = C->r;
	bool split = b->split && n->split;
	int tb = split ? b->tp : b->tp * (b->split ? b->cp * b->ep : 1);
	int tn = split ? n->tp : n->tp * (n->split ? n->cp * n->ep : 1);
	r->stages = b->pp > 0 && b->pp == n->pp;
	r->ranks = r->stages && b->ranks > 0 && b->ranks == n->ranks && b->dp > 0 &&
		   b->dp == n->dp && tb > 0 && tb == tn;
	if (b->pp && n->pp && b->pp != n->pp)
		add_shape_row(C, "pp", b->pp, n->pp,
			      "pipeline stages differ: categories, op types and process groups "
			      "are compared over the whole job (sums over its ranks), ranks are "
			      "not compared");
	if (b->vpp && n->vpp && b->vpp != n->vpp)
		add_shape_row(C, "vpp", b->vpp, n->vpp,
			      "schedule %s \u2192 %s: a stage's times are compared over all its "
			      "model chunks, per-chunk times are not",
			      schedule_name(b->vpp), schedule_name(n->vpp));
	if (b->dp && n->dp && b->dp != n->dp)
		add_shape_row(C, "dp", b->dp, n->dp,
			      "data-parallel size differs: per-stage values are means per rank, "
			      "ranks are not compared");
	if (tb && tn && tb != tn)
		add_shape_row(C, split ? "tp" : "tp_cp_ep", tb, tn,
			      "%s differs: a rank's share of the work differs, ranks are not "
			      "compared",
			      split ? "tensor-parallel size" : "ranks per (replica, stage) cell");
	if (split && b->cp != n->cp)
		add_shape_row(C, "cp", b->cp, n->cp,
			      "context-parallel size differs: ranks are not compared");
	if (split && b->ep != n->ep)
		add_shape_row(C, "ep", b->ep, n->ep,
			      "expert-parallel size differs: ranks are not compared");
	if (split && (b->cp != n->cp || b->ep != n->ep))
		r->ranks = false;
	if (b->mb && n->mb && b->mb != n->mb)
		add_shape_row(C, "microbatches", b->mb, n->mb,
			      "micro-batches per pipeline differ: per-stage totals include every "
			      "micro-batch");
	if (b->ranks && n->ranks && b->ranks != n->ranks)
		add_shape_row(C, "ranks", b->ranks, n->ranks,
			      "the jobs have different sizes: ranks are not compared");
	if (!b->pp || !n->pp)
		strbuf_addf(&r->missing,
			    "stages: the %s has no topology: categories, op types and process "
			    "groups are compared over the whole job, ranks are not\n",
			    !b->pp ? "baseline" : "new run");
	if (!b->vpp || !n->vpp || !b->mb || !n->mb || !b->dp || !n->dp)
		strbuf_addf(&r->missing,
			    "shape: the %s does not record every size (vpp, dp, "
			    "micro-batches); only the known ones are compared\n",
			    !b->vpp || !b->mb || !b->dp ? "baseline" : "new run");
}

/* ---- categories, op types, process groups -------------------------- */

/* The per-dimension values of run k in one dense array per dimension. */
static void densify(struct ctx *C)
{
	for (int k = 0; k < 2; k++) {
		const struct cmp_run *x = C->run[k];
		for (int d = 0; d < CMP_NDIMS; d++) {
			size_t n = C->keys->n[d] * x->niters * (size_t)C->nrank + 1;
			C->dense[k][d] = xcalloc(n, sizeof(int64_t));
		}
		for (size_t i = 0; i < x->nv; i++) {
			const struct cmp_sample *s = &x->v[i];
			if (s->rank < 0 || s->rank >= x->nrank)
				continue;
			size_t at = ((size_t)s->key * x->niters + s->iter) * (size_t)C->nrank +
				    (size_t)s->rank;
			C->dense[k][s->dim][at] += s->ns;
		}
	}
}

/* The stage of rank r for the comparison: its stage in the baseline, or
 * -1 (the whole job) when stages are not compared. */
static int group_of(const struct ctx *C, int k, int rank)
{
	const struct cmp_run *x = C->run[k];
	if (!C->r->stages)
		return -1;
	return rank < x->nrank ? x->stage[rank] : -2;
}

/* The value of group g (a stage, or -1: the whole job) for key (d, key) in
 * iteration i of run k: the mean over its ranks (the sum over the job's),
 * ranks marked in skip left out. NaN when it has no rank. *count gets how
 * many ranks. */
static double group_value(const struct ctx *C, int k, int d, int key, int g, size_t i,
			  const uint8_t *skip, int *count)
{
	const struct cmp_run *x = C->run[k];
	const int64_t *v = C->dense[k][d] + ((size_t)key * x->niters + i) * (size_t)C->nrank;
	double sum = 0;
	int cnt = 0;
	for (int r = 0; r < x->nrank; r++)
		if (x->present[i * (size_t)x->nrank + (size_t)r] && group_of(C, k, r) == g &&
		    !(skip && skip[r])) {
			sum += (double)v[r];
			cnt++;
		}
	if (count)
		*count = cnt;
	if (!cnt)
		return NAN;
	return g < 0 ? sum : sum / cnt;
}

/* The groups (stages) of the comparison, ascending; -1 alone for the
 * whole job. */
static int *groups_of(const struct ctx *C, size_t *n)
{
	int *g = xmalloc(((size_t)C->nrank + 2) * sizeof(int));
	*n = 0;
	if (!C->r->stages) {
		g[(*n)++] = -1;
		return g;
	}
	for (int s = 0; s < C->run[0]->shape.pp; s++)
		g[(*n)++] = s;
	return g;
}

/* The per-iteration values of group g for (d, key) in run k into out. */
static void series(const struct ctx *C, int k, int d, int key, int g, const uint8_t *skip,
		   double *out, int *nranks)
{
	for (size_t i = 0; i < C->run[k]->niters; i++) {
		int cnt = 0;
		out[i] = group_value(C, k, d, key, g, i, skip, &cnt);
		if (nranks && cnt > *nranks)
			*nranks = cnt;
	}
}

/* The values of the ranks of group g in each iteration of both runs, as
 * same-role units, relative to ref: the one-iteration spread. */
static void rank_units(const struct ctx *C, int d, int key, int g, double ref, double *uss,
		       double *udof)
{
	double *v = xmalloc(((size_t)C->nrank + 1) * sizeof(double));
	for (int k = 0; k < 2; k++) {
		const struct cmp_run *x = C->run[k];
		for (size_t i = 0; i < x->niters; i++) {
			const int64_t *val =
				C->dense[k][d] + ((size_t)key * x->niters + i) * (size_t)C->nrank;
			size_t cnt = 0;
			for (int r = 0; r < x->nrank; r++)
				if (x->present[i * (size_t)x->nrank + (size_t)r] &&
				    group_of(C, k, r) == g)
					v[cnt++] = (double)val[r];
			add_units(v, cnt, ref, uss, udof);
		}
	}
	free(v);
}

/* Every key of dimension d, per group: the rows. */
static void compare_dim(struct ctx *C, int d)
{
	size_t ng, nb = C->run[0]->niters, nn = C->run[1]->niters;
	int *g = groups_of(C, &ng);
	double *vb = xmalloc((nb + 1) * sizeof(double)), *vn = xmalloc((nn + 1) * sizeof(double));
	for (size_t key = 0; key < C->keys->n[d]; key++) {
		double ss = 0, dof = 0, uss = 0, udof = 0;
		size_t first = C->r->nkeys;
		for (size_t s = 0; s < ng; s++) {
			int cnt = 0;
			series(C, 0, d, (int)key, g[s], NULL, vb, &cnt);
			series(C, 1, d, (int)key, g[s], NULL, vn, NULL);
			double mb = mean_of(vb, nb), mn = mean_of(vn, nn);
			if (!isfinite(mb) || !isfinite(mn) || (mb == 0 && mn == 0))
				continue;
			add_spread(vb, nb, vn, nn, mb, &ss, &dof);
			rank_units(C, d, (int)key, g[s], mb, &uss, &udof);
			C->r->keys = xrealloc(C->r->keys, (C->r->nkeys + 1) * sizeof(*C->r->keys));
			struct cmp_key_row *row = &C->r->keys[C->r->nkeys++];
			*row = (struct cmp_key_row){ .dim = (enum cmp_dim)d,
						     .stage = g[s],
						     .key = (int)key,
						     .nranks = cnt };
			row->j.base = mb;
			row->j.new_ = mn;
		}
		/* The spread pooled over the key's stages: each stage's estimate
		 * alone rests on a handful of values. */
		struct spread sp = spread_of(ss, dof, uss, udof, CMP_FROM_RANKS);
		for (size_t i = first; i < C->r->nkeys; i++) {
			struct cmp_key_row *row = &C->r->keys[i];
			double per_rank = (row->j.new_ - row->j.base) /
					  (row->stage < 0 && row->nranks ? row->nranks : 1);
			row->j = judge(row->j.base, row->j.new_, sp, matters(C, per_rank), C->p);
		}
	}
	free(vb);
	free(vn);
	free(g);
}

/* ---- ranks ----------------------------------------------------------- */

/* The mean compute of rank r over run k's iterations, NaN when never; its
 * per-iteration values into v (NaN where absent). */
static double rank_compute(const struct cmp_run *x, int r, double *v)
{
	for (size_t i = 0; i < x->niters; i++) {
		size_t at = i * (size_t)x->nrank + (size_t)r;
		v[i] = r < x->nrank && x->present[at] && x->has_compute[at] ? (double)x->compute[at]
									    : NAN;
	}
	return mean_of(v, x->niters);
}

static void compare_ranks(struct ctx *C)
{
	const struct cmp_run *b = C->run[0], *n = C->run[1];
	size_t nb = b->niters, nn = n->niters, count = 0;
	double *vb = xmalloc((nb + 1) * sizeof(double)), *vn = xmalloc((nn + 1) * sizeof(double));
	double ss = 0, dof = 0;
	C->r->rank = xcalloc((size_t)C->nrank + 1, sizeof(*C->r->rank));
	for (int r = 0; r < C->nrank; r++) {
		double mb = rank_compute(b, r, vb), mn = rank_compute(n, r, vn);
		if (!isfinite(mb) || !isfinite(mn) || !(mb > 0))
			continue;
		add_spread(vb, nb, vn, nn, mb, &ss, &dof);
		struct cmp_rank_row *row = &C->r->rank[count++];
		row->rank = r;
		row->stage = r < b->nrank ? b->stage[r] : -1;
		row->j.base = mb;
		row->j.new_ = mn;
		row->j.change = mn / mb - 1;
	}
	C->r->nranks = count;
	/* each stage's lower median change */
	double *ch = xmalloc((count + 1) * sizeof(double));
	for (size_t i = 0; i < count; i++) {
		size_t k = 0;
		for (size_t q = 0; q < count; q++)
			if (C->r->rank[q].stage == C->r->rank[i].stage)
				ch[k++] = C->r->rank[q].j.change;
		qsort(ch, k, sizeof(*ch), cmp_double);
		C->r->rank[i].stage_change = ch[(k - 1) / 2];
		C->r->rank[i].deviation = C->r->rank[i].j.change - C->r->rank[i].stage_change;
	}
	/* one iteration: the robust spread of the deviations, which the
	 * deviating ranks themselves do not widen */
	struct resid rs = { 0 };
	for (size_t i = 0; i < count; i++)
		resid_add(&rs, C->r->rank[i].deviation);
	struct spread sp = { robust_sd(rs.v, rs.n), CMP_FROM_RANKS };
	if (dof > 0)
		sp = spread_of(ss, dof, 0, 0, CMP_FROM_RANKS);
	free(rs.v);
	C->flagged_rank = xcalloc((size_t)C->nrank + 1, 1);
	for (size_t i = 0; i < count; i++) {
		struct cmp_rank_row *row = &C->r->rank[i];
		/* judged on its deviation from its stage's median change */
		struct cmp_judgement dev = judge(1, 1 + row->deviation, sp,
						 matters(C, row->deviation * row->j.base), C->p);
		row->j.noise = dev.noise;
		row->j.from = dev.from;
		row->j.flagged = dev.flagged;
		if (row->j.flagged)
			C->flagged_rank[row->rank] = 1;
	}
	free(ch);
	free(vb);
	free(vn);
}

/* A flagged stage row whose change the flagged ranks make: without them,
 * the stage's change is within its noise. */
static void explain(struct ctx *C)
{
	size_t nb = C->run[0]->niters, nn = C->run[1]->niters;
	double *vb = xmalloc((nb + 1) * sizeof(double)), *vn = xmalloc((nn + 1) * sizeof(double));
	for (size_t i = 0; i < C->r->nkeys && C->flagged_rank; i++) {
		struct cmp_key_row *row = &C->r->keys[i];
		bool any = false;
		for (size_t q = 0; q < C->r->nranks && !any; q++)
			any = C->r->rank[q].j.flagged && C->r->rank[q].stage == row->stage;
		if (!row->j.flagged || row->stage < 0 || !any)
			continue;
		series(C, 0, row->dim, row->key, row->stage, C->flagged_rank, vb, NULL);
		series(C, 1, row->dim, row->key, row->stage, C->flagged_rank, vn, NULL);
		double mb = mean_of(vb, nb), mn = mean_of(vn, nn);
		row->explained = !isfinite(mb) || !isfinite(mn) || !(mb > 0) ||
				 fabs(mn / mb - 1) <= row->j.noise;
	}
	free(vb);
	free(vn);
}

/* ---- the sentence ---------------------------------------------------- */

void cmp_format_ranks(const int *rank, size_t n, struct strbuf *sb)
{
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && rank[j] == rank[j - 1] + 1;)
			j++;
		strbuf_addf(sb, "%s%d", i ? ", " : "", rank[i]);
		if (j - i > 1)
			strbuf_addf(sb, "\u2013%d", rank[j - 1]);
	}
}

void cmp_key_words(const struct cmp_keys *keys, enum cmp_dim d, int key, struct strbuf *sb)
{
	static const struct {
		const char *name, *words;
	} cats[] = {
		{ "fwd_computation", "forward compute" },
		{ "bwd_computation", "backward compute" },
		{ "optimizer_computation", "optimizer compute" },
		{ "fwd_communication", "forward communication" },
		{ "bwd_communication", "backward communication" },
		{ "pp_communication", "pipeline communication" },
		{ "dp_communication", "data-parallel communication" },
		{ "bwd_computation_recompute", "recompute" },
		{ "bwd_communication_recompute", "recompute communication" },
		{ "other", "other kernels" },
	},
	  groups[] = {
		  { "tp", "tensor-parallel collectives" },   { "pp", "pipeline sends/receives" },
		  { "dp", "data-parallel collectives" },     { "ep", "expert-parallel collectives" },
		  { "cp", "context-parallel collectives" },  { "", "communication of no group" },
		  { "EMBEDDING_GROUP", "embedding-group collectives" },
		  { "default_pg", "world (default_pg) collectives" },
	  };
	const char *name = keys->name[d][key];
	if (d == CMP_OPTYPE) {
		strbuf_addstr(sb, name);
		return;
	}
	for (size_t i = 0; d == CMP_CATEGORY && i < sizeof(cats) / sizeof(cats[0]); i++)
		if (!strcmp(cats[i].name, name))
			return strbuf_addstr(sb, cats[i].words);
	for (size_t i = 0; d == CMP_GROUP && i < sizeof(groups) / sizeof(groups[0]); i++)
		if (!strcmp(groups[i].name, name))
			return strbuf_addstr(sb, groups[i].words);
	strbuf_addf(sb, d == CMP_GROUP ? "%s collectives" : "%s", name);
}

/* One thing the sentence may say after the job's numbers, by its class
 * (the shape, ranks, stages) and, within the stages, the time it changed. */
struct finding {
	int cls;
	double impact;
	struct strbuf text;
};

struct findings {
	struct finding *v;
	size_t n;
};

static struct strbuf *finding_add(struct findings *f, int cls, double impact)
{
	f->v = xrealloc(f->v, (f->n + 1) * sizeof(*f->v));
	struct finding *x = &f->v[f->n++];
	x->cls = cls;
	x->impact = impact;
	strbuf_init(&x->text, 0);
	return &x->text;
}

static int cmp_finding(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	if (x->cls != y->cls)
		return x->cls - y->cls;
	return (x->impact < y->impact) - (x->impact > y->impact);
}

static void pct(struct strbuf *sb, double v)
{
	strbuf_addf(sb, "%+.1f %%", 100 * v);
}

/* Whether row's key goes into the sentence: compute categories and the
 * process groups, which name communication more precisely than its
 * categories; all categories without groups; op types without either. */
static bool in_sentence(const struct ctx *C, const struct cmp_key_row *row)
{
	bool groups = C->run[0]->has_dim[CMP_GROUP] && C->run[1]->has_dim[CMP_GROUP];
	bool cats = C->run[0]->has_dim[CMP_CATEGORY] && C->run[1]->has_dim[CMP_CATEGORY];
	const char *name = C->keys->name[row->dim][row->key];
	switch (row->dim) {
	case CMP_GROUP: return true;
	case CMP_CATEGORY:
		return !groups || (strstr(name, "computation") && !strstr(name, "recompute"));
	default: return !groups && !cats;
	}
}

/* The ranks of the stages in list (the baseline's), as ranges. */
static void stage_ranks(const struct ctx *C, const int *stages, size_t n, struct strbuf *sb)
{
	const struct cmp_run *b = C->run[0];
	int *rk = xmalloc(((size_t)b->nrank + 1) * sizeof(int));
	size_t k = 0;
	for (int r = 0; r < b->nrank; r++)
		for (size_t s = 0; s < n; s++)
			if (b->stage[r] == stages[s]) {
				rk[k++] = r;
				break;
			}
	cmp_format_ranks(rk, k, sb);
	free(rk);
}

/* The flagged stage rows of one key and direction, as one finding: "data-
 * parallel collectives on ranks 0–3 (stage 0) +29.6 %". */
static void stage_findings(const struct ctx *C, struct findings *f)
{
	int *stages = xmalloc((C->r->nkeys + 1) * sizeof(int));
	uint8_t *done = xcalloc(C->r->nkeys + 1, 1);
	for (size_t i = 0; i < C->r->nkeys; i++) {
		const struct cmp_key_row *row = &C->r->keys[i];
		if (done[i] || !row->j.flagged || row->explained || !in_sentence(C, row))
			continue;
		bool up = row->j.change > 0;
		double sb = 0, sn = 0;
		size_t ns = 0;
		int nstages = C->r->stages ? C->run[0]->shape.pp : 1;
		for (size_t q = i; q < C->r->nkeys; q++) {
			const struct cmp_key_row *o = &C->r->keys[q];
			if (done[q] || o->dim != row->dim || o->key != row->key || !o->j.flagged ||
			    o->explained || (o->j.change > 0) != up)
				continue;
			done[q] = 1;
			stages[ns++] = o->stage;
			double w = o->stage < 0 ? 1 : o->nranks;
			sb += o->j.base * w;
			sn += o->j.new_ * w;
		}
		struct strbuf *t = finding_add((struct findings *)f, 2, fabs(sn - sb));
		cmp_key_words(C->keys, row->dim, row->key, t);
		if (stages[0] < 0 || (int)ns == nstages) {
			strbuf_addstr(t, stages[0] < 0 ? " across the job " : " on every rank ");
		} else {
			strbuf_addstr(t, " on ranks ");
			stage_ranks(C, stages, ns, t);
			strbuf_addstr(t, ns > 1 ? " (stages " : " (stage ");
			cmp_format_ranks(stages, ns, t);
			strbuf_addstr(t, ") ");
		}
		pct(t, sb > 0 ? sn / sb - 1 : NAN);
	}
	free(stages);
	free(done);
}

static int cmp_rank_impact(const void *a, const void *b)
{
	const struct cmp_rank_row *x = *(const struct cmp_rank_row *const *)a;
	const struct cmp_rank_row *y = *(const struct cmp_rank_row *const *)b;
	double ix = fabs(x->deviation * x->j.base), iy = fabs(y->deviation * y->j.base);
	return (ix < iy) - (ix > iy);
}

/* The flagged ranks: each its own finding up to three, else one. */
static void rank_findings(const struct ctx *C, struct findings *f)
{
	const struct cmp_rank_row **v = xmalloc((C->r->nranks + 1) * sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < C->r->nranks; i++)
		if (C->r->rank[i].j.flagged)
			v[n++] = &C->r->rank[i];
	qsort(v, n, sizeof(*v), cmp_rank_impact);
	for (size_t i = 0; i < n && n <= 3; i++) {
		struct strbuf *t = finding_add(f, 1, fabs(v[i]->deviation * v[i]->j.base));
		strbuf_addf(t, "compute on rank %d", v[i]->rank);
		if (v[i]->stage >= 0)
			strbuf_addf(t, " (stage %d)", v[i]->stage);
		strbuf_addch(t, ' ');
		pct(t, v[i]->j.change);
		strbuf_addstr(t, " (its stage ");
		pct(t, v[i]->stage_change);
		strbuf_addch(t, ')');
	}
	if (n > 3) {
		struct strbuf *t = finding_add(f, 1, 0);
		double lo = v[0]->deviation, hi = v[0]->deviation;
		strbuf_addf(t, "compute on %zu ranks (%d, %d, %d, ...) ", n, v[0]->rank, v[1]->rank,
			    v[2]->rank);
		for (size_t i = 1; i < n; i++) {
			lo = v[i]->deviation < lo ? v[i]->deviation : lo;
			hi = v[i]->deviation > hi ? v[i]->deviation : hi;
		}
		pct(t, lo);
		strbuf_addstr(t, " to ");
		pct(t, hi);
		strbuf_addstr(t, " against their stages");
	}
	free(v);
}

static void sentence(struct ctx *C)
{
	struct cmp_result *r = C->r;
	struct strbuf *s = &r->sentence;
	struct findings f = { 0 };
	const struct cmp_judgement *st = &r->metric[CMP_STEP];
	for (size_t i = 0; i < r->nshape; i++)
		if (!strcmp(r->shape[i].name, "vpp") || !strcmp(r->shape[i].name, "pp") ||
		    !strcmp(r->shape[i].name, "microbatches")) {
			struct strbuf *t = finding_add(&f, 0, 0);
			if (!strcmp(r->shape[i].name, "vpp"))
				strbuf_addf(t, "schedule %s \u2192 %s (VPP %d \u2192 %d)",
					    schedule_name(r->shape[i].base),
					    schedule_name(r->shape[i].new_), r->shape[i].base,
					    r->shape[i].new_);
			else
				strbuf_addf(t, "%s %d \u2192 %d",
					    !strcmp(r->shape[i].name, "pp") ? "PP"
									    : "micro-batches",
					    r->shape[i].base, r->shape[i].new_);
		}
	rank_findings(C, &f);
	stage_findings(C, &f);
	if (f.n)
		qsort(f.v, f.n, sizeof(*f.v), cmp_finding);
	if (r->has_metric[CMP_STEP] && isfinite(st->change)) {
		strbuf_addstr(s, "Step ");
		pct(s, st->change);
		strbuf_addf(s, " (noise \u00b1%.1f %%)", 100 * st->noise);
	} else {
		strbuf_addstr(s, "Step not compared (no pipelines in one run)");
	}
	if (r->has_metric[CMP_BUBBLE] && r->metric[CMP_BUBBLE].flagged)
		strbuf_addf(s, ", bubble %.1f %% \u2192 %.1f %%", 100 * r->metric[CMP_BUBBLE].base,
			    100 * r->metric[CMP_BUBBLE].new_);
	if (r->has_metric[CMP_S] && r->metric[CMP_S].flagged) {
		strbuf_addf(s, ", what-if S %.3f \u2192 %.3f", r->metric[CMP_S].base,
			    r->metric[CMP_S].new_);
		if (r->verdict_flagged)
			strbuf_addf(s, " (verdict %s \u2192 %s)", r->verdict_base, r->verdict_new);
	}
	size_t shown = f.n < 3 ? f.n : 3;
	for (size_t i = 0; i < shown; i++) {
		strbuf_addstr(s, i ? "; " : ": ");
		strbuf_addstr(s, f.v[i].text.buf);
	}
	if (f.n > shown)
		strbuf_addf(s, "; and %zu more in the compare_* views", f.n - shown);
	else if (!f.n && r->has_metric[CMP_STEP] && st->flagged)
		strbuf_addstr(s, ": no stage, process group or rank stands out");
	else
		strbuf_addstr(s,
			      f.n ? "; everything else within noise" : ": everything within noise");
	strbuf_addch(s, '.');
	for (size_t i = 0; i < f.n; i++)
		strbuf_release(&f.v[i].text);
	free(f.v);
}

void cmp_compare(const struct cmp_run *base, const struct cmp_run *new_,
		 const struct cmp_keys *keys, const struct cmp_params *p, struct cmp_result *r)
{
	struct ctx C = { .run = { base, new_ }, .keys = keys, .p = p, .r = r };
	memset(r, 0, sizeof(*r));
	strbuf_init(&r->sentence, 0);
	strbuf_init(&r->missing, 0);
	C.nrank = base->nrank > new_->nrank ? base->nrank : new_->nrank;
	job_metrics(&C);
	whatif_metric(&C);
	shapes(&C);
	/* ranks beyond a run's nrank are absent from it: size both alike */
	densify(&C);
	for (int d = 0; d < CMP_NDIMS; d++)
		if (base->has_dim[d] && new_->has_dim[d])
			compare_dim(&C, d);
	if (r->ranks)
		compare_ranks(&C);
	explain(&C);
	r->regression = r->has_metric[CMP_STEP] && r->metric[CMP_STEP].flagged &&
			r->metric[CMP_STEP].change > p->threshold;
	sentence(&C);
	for (int k = 0; k < 2; k++)
		for (int d = 0; d < CMP_NDIMS; d++)
			free(C.dense[k][d]);
	free(C.flagged_rank);
}
