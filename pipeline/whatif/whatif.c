/* whatif.c — scenarios and metrics of the what-if engine (docs/whatif.md
 * §5-§6): S, the decompositions, S_w, M_W, M_S and the verdict. */
#include "whatif.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/pp.h"
#include "whatif_int.h"

/* The §5.3 group of an op type. */
static int type_group(int ty)
{
	static const int map[OP_NTYPES] = {
		[OP_FWD_COMPUTE] = WI_G_FWD_COMPUTE, [OP_BWD_COMPUTE] = WI_G_BWD_COMPUTE,
		[OP_FWD_SEND] = WI_G_FWD_PP,         [OP_FWD_RECV] = WI_G_FWD_PP,
		[OP_BWD_SEND] = WI_G_BWD_PP,         [OP_BWD_RECV] = WI_G_BWD_PP,
		[OP_PARAMS_AG] = WI_G_PARAMS_AG,     [OP_GRADS_RS] = WI_G_GRADS_RS,
		[OP_SEP_AR] = WI_G_SEP_AR,           [OP_LAYERNORM] = WI_G_LAYERNORM,
		[OP_EMBEDDING] = WI_G_EMBEDDING,     [OP_CLIP] = WI_G_CLIP,
		[OP_OPTIMIZER] = WI_G_OPTIMIZER,     [OP_GC] = WI_G_GC,
	};
	return map[ty];
}

/* A group is named as its op types (model/optype.h), but for the p2p pairs
 * and the launch decomposition's first op. */
const char *wi_group_name(int group)
{
	switch (group) {
	case WI_G_FWD_PP: return "forward-pp-comm";
	case WI_G_BWD_PP: return "backward-pp-comm";
	case WI_G_FIRST_OP: return "first-op";
	}
	for (int ty = 0; ty < OP_NTYPES; ty++)
		if (type_group(ty) == group)
			return op_type_name(ty);
	return "?";
}

const char *wi_verdict_name(enum wi_verdict v)
{
	switch (v) {
	case WI_VERDICT_WORKER: return "worker";
	case WI_VERDICT_STAGE: return "stage";
	case WI_VERDICT_SPREAD: return "spread";
	default: return "none";
	}
}

int whatif_new(const struct wi_table *t, const struct whatif_opts *o, struct whatif **out,
	       struct strbuf *err)
{
	*out = NULL;
	struct whatif *e = xcalloc(1, sizeof(*e));
	strbuf_init(&e->notes, 0);
	if (o)
		e->opts = *o;
	if (e->opts.dsp_size <= 0)
		e->opts.dsp_size = t->has_meta ? t->meta.dsp_size : 1;
	if (e->opts.threshold <= 0)
		e->opts.threshold = WHATIF_THRESHOLD;
	if (e->opts.mw_percent <= 0)
		e->opts.mw_percent = 3;
	if (e->opts.verdict_share <= 0)
		e->opts.verdict_share = 0.5;
	int rc = wi_model_build(e, t, err);
	if (rc) {
		whatif_free(e);
		return rc;
	}
	if (t->has_meta && (t->meta.dp_size != e->dp || t->meta.pp_size != e->pp))
		strbuf_addf(
			&e->notes,
			"meta: dp_size %lld and pp_size %lld, but the trace has DP %d and PP %d: the trace's are used\n",
			(long long)t->meta.dp_size, (long long)t->meta.pp_size, e->dp, e->pp);
	*out = e;
	return 0;
}

void whatif_free(struct whatif *e)
{
	if (!e)
		return;
	void *own[] = { e->steps, e->origin, e->node,      e->pred_off, e->pred, e->group,
			e->gmem,  e->sched,  e->cell_rank, e->rs,       e->re,   e->val,
			e->delay, e->ideal,  e->span_base, e->scratch };
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		free(own[i]);
	strbuf_release(&e->notes);
	free(e);
}

const char *whatif_notes(const struct whatif *e)
{
	return e->notes.buf;
}

void whatif_shape(const struct whatif *e, struct whatif_shape *s)
{
	s->nodes = e->n;
	s->edges = e->nedges;
	s->groups = e->ngroups;
	s->nsteps = e->nsteps;
	s->dp = e->dp;
	s->pp = e->pp;
	s->vpp = e->vpp;
	s->use_dp = e->use_dp;
	s->overlapped_dp = e->overlapped;
}

void whatif_node(const struct whatif *e, size_t v, struct whatif_node *n)
{
	const struct wi_node *nd = &e->node[v];
	n->optype = nd->optype;
	n->stage = nd->stage;
	n->seq_id = nd->seq;
	n->mc = nd->mc;
	n->gmc = nd->gmc;
	n->placeholder = nd->flags & WI_NODE_PLACEHOLDER;
	n->comm = nd->flags & WI_NODE_COMM;
	n->dp_sync = nd->flags & WI_NODE_DPSYNC;
}

void whatif_node_name(const struct whatif *e, size_t v, char *buf, size_t len)
{
	const struct wi_node *nd = &e->node[v];
	snprintf(buf, len, "%s_%d_%d", op_type_name(nd->optype), (int)nd->seq, (int)nd->stage);
}

int64_t whatif_step(const struct whatif *e, size_t si, int64_t *origin)
{
	*origin = e->origin[si];
	return e->steps[si];
}

int32_t whatif_cell_rank(const struct whatif *e, int dp_rank, int stage)
{
	return e->cell_rank[stage * e->dp + dp_rank];
}

long whatif_find(const struct whatif *e, int stage, int optype, int32_t seq_id)
{
	for (size_t v = 0; v < e->n; v++) {
		const struct wi_node *nd = &e->node[v];
		if (nd->stage == stage && nd->optype == optype && nd->seq == seq_id)
			return (long)v;
	}
	return -1;
}

size_t whatif_node_preds(const struct whatif *e, size_t v, const int32_t **preds)
{
	*preds = e->pred + e->pred_off[v];
	return (size_t)(e->pred_off[v + 1] - e->pred_off[v]);
}

size_t whatif_node_group(const struct whatif *e, size_t v, const int32_t **members)
{
	int32_t g = e->node[v].group;
	if (g < 0) {
		*members = NULL;
		return 0;
	}
	*members = e->gmem + e->group[g].first;
	return (size_t)e->group[g].n;
}

/* ---- runs --------------------------------------------------------------- */

static double mean(const double *x, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

/* Mean simulator step time and span of scenario sc; per step into sim/span
 * when given. */
static void run(struct whatif *e, const struct wi_scen *sc, double *sim, double *span, double *buf,
		double *msim, double *mspan)
{
	double *s1 = sim ? sim : buf, *s2 = span ? span : buf + e->nsteps;
	struct wi_out o = { s1, s2, NULL, NULL };
	wi_simulate(e, sc, &o);
	if (msim)
		*msim = mean(s1, e->nsteps);
	if (mspan)
		*mspan = mean(s2, e->nsteps);
}

static void decomp_alloc(struct wi_decomp *d, size_t n, size_t nsteps)
{
	d->n = n;
	d->key = xcalloc(n ? n : 1, sizeof(*d->key));
	d->ratio = xcalloc(n ? n : 1, sizeof(*d->ratio));
	d->per_step = xcalloc((n ? n : 1) * nsteps, sizeof(*d->per_step));
	d->present = true;
}

static void decomp_release(struct wi_decomp *d)
{
	free(d->key);
	free(d->ratio);
	free(d->per_step);
	memset(d, 0, sizeof(*d));
}

/* One entry of a decomposition: simulate sc, ratio against den (per step
 * and its mean). */
static void decomp_entry(struct whatif *e, struct wi_decomp *d, size_t i, const struct wi_scen *sc,
			 const double *den, double mden, double *buf)
{
	double m;
	run(e, sc, buf, NULL, buf + e->nsteps, &m, NULL);
	d->ratio[i] = m / mden;
	for (size_t s = 0; s < e->nsteps; s++)
		d->per_step[s * d->n + i] = buf[s] / den[s];
}

/* S_dp(d) (§5.4) on two lanes per step instead of DP: with replica d's
 * recorded durations on top of the ideal, every other replica runs the
 * ideal with no delays, so all of them are the same lane; the DP maximum
 * over {d, that lane} is the maximum over all replicas. Exact, and DP/2
 * times cheaper. */
static void replica_entry(struct whatif *e, struct wi_decomp *dec, int d, const double *den,
			  double mden, double *buf)
{
	struct whatif v = *e;
	v.dp = 2;
	v.bs = e->nsteps < 16 ? e->nsteps : 16;
	v.nblocks = (e->nsteps + v.bs - 1) / v.bs;
	v.lanes = e->nsteps * 2;
	double *val = xcalloc(v.lanes * e->n, sizeof(*val));
	uint8_t *worker = xcalloc((size_t)e->pp * 2, 1);
	for (size_t si = 0; si < e->nsteps; si++)
		for (size_t n = 0; n < e->n; n++)
			val[wi_idx(&v, si, n, 0)] = e->val[wi_idx(e, si, n, (size_t)d)];
	for (int st = 0; st < e->pp; st++)
		worker[st * 2] = 1;
	v.val = val;
	v.delay = val; /* never read: no delays */
	/* e's block buffers hold DP·bs >= 2·bs' lanes when DP >= 2. */
	if (e->dp < 2)
		v.scratch = NULL;
	struct wi_scen sc = { .val = { .worker = worker },
			      .delay = { .all = true, .invert = true } };
	decomp_entry(&v, dec, (size_t)d, &sc, den, mden, buf);
	if (v.scratch != e->scratch)
		free(v.scratch);
	free(val);
	free(worker);
}

/* Is node v relabelled first-op (§5.8)? */
static bool first_op(const struct wi_node *nd)
{
	return nd->seq == 0 && ((nd->stage == 0 && nd->optype == OP_FWD_COMPUTE) ||
				(nd->stage > 0 && nd->optype == OP_FWD_RECV));
}

/* The three decompositions of one kind: launch = give back launch delays
 * on top of no-delay, else durations on top of the ideal. */
static void decompose(struct whatif *e, bool launch, const double *den, double mden,
		      struct wi_decomp *by_group, struct wi_decomp *by_dp,
		      struct wi_decomp *by_stage, double *buf)
{
	uint8_t *node = xmalloc(e->n);
	uint8_t *worker = xmalloc((size_t)e->dp * (size_t)e->pp);
	bool present[WI_NGROUPS] = { false };
	for (size_t v = 0; v < e->n; v++)
		present[launch && first_op(&e->node[v]) ? WI_G_FIRST_OP
							: type_group(e->node[v].optype)] = true;
	size_t ng = 0;
	for (int g = 0; g < WI_NGROUPS; g++)
		ng += present[g];
	decomp_alloc(by_group, ng, e->nsteps);
	decomp_alloc(by_dp, (size_t)e->dp, e->nsteps);
	decomp_alloc(by_stage, (size_t)e->pp, e->nsteps);
	struct wi_sel all = { .all = true };
	struct wi_sel pick = { 0 };
	struct wi_scen sc = { .val = all, .delay = { .all = true, .invert = true } };
	struct wi_sel *target = launch ? &sc.delay : &sc.val;
	if (!launch)
		sc.val = pick;
	size_t i = 0;
	for (int g = 0; g < WI_NGROUPS; g++) {
		if (!present[g])
			continue;
		for (size_t v = 0; v < e->n; v++) {
			int vg = launch && first_op(&e->node[v]) ? WI_G_FIRST_OP
								 : type_group(e->node[v].optype);
			node[v] = vg == g;
		}
		*target = (struct wi_sel){ .node = node };
		by_group->key[i] = g;
		decomp_entry(e, by_group, i++, &sc, den, mden, buf);
	}
	for (int d = 0; d < e->dp; d++) {
		for (int st = 0; st < e->pp; st++)
			for (int dd = 0; dd < e->dp; dd++)
				worker[st * e->dp + dd] = dd == d;
		*target = (struct wi_sel){ .worker = worker };
		by_dp->key[d] = d;
		if (launch || e->opts.all_lanes)
			decomp_entry(e, by_dp, (size_t)d, &sc, den, mden, buf);
		else
			replica_entry(e, by_dp, d, den, mden, buf);
	}
	for (int st = 0; st < e->pp; st++) {
		for (size_t v = 0; v < e->n; v++)
			node[v] = e->node[v].stage == st;
		*target = (struct wi_sel){ .node = node };
		by_stage->key[st] = st;
		decomp_entry(e, by_stage, (size_t)st, &sc, den, mden, buf);
	}
	free(node);
	free(worker);
}

/* explain() of §5.6 for the (node, worker) selection sel. */
static void explain(struct whatif *e, const struct wi_sel *sel, double tori, double tideal,
		    struct wi_explain *x, double *buf)
{
	struct wi_scen rem = { .val = *sel, .delay = { .all = true, .invert = true } };
	rem.val.invert = !sel->invert;
	struct wi_scen add = { .val = *sel, .delay = { .all = true, .invert = true } };
	run(e, &rem, NULL, NULL, buf, NULL, &x->trem);
	run(e, &add, NULL, NULL, buf, NULL, &x->tadd);
	x->tori = tori;
	x->tideal = tideal;
	double den = tori - tideal;
	x->rem = den != 0 ? (tori - x->trem) / den : NAN;
	x->add = den != 0 ? (x->tadd - tideal) / den : NAN;
}

static int cmp_worker(const void *a, const void *b)
{
	const struct wi_worker *x = a, *y = b;
	if (!isnan(x->s_w) && !isnan(y->s_w) && x->s_w != y->s_w)
		return x->s_w > y->s_w ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static void workers(struct whatif *e, struct whatif_result *r, double *buf)
{
	r->nworkers = (size_t)e->dp * (size_t)e->pp;
	r->workers = xcalloc(r->nworkers, sizeof(*r->workers));
	for (int st = 0; st < e->pp; st++)
		for (int d = 0; d < e->dp; d++) {
			struct wi_worker *w = &r->workers[st * e->dp + d];
			w->rank = e->cell_rank[st * e->dp + d];
			w->dp_rank = d;
			w->stage = st;
			w->s_dp = r->by_dp.present ? r->by_dp.ratio[d] : NAN;
			w->s_pp = r->by_stage.present ? r->by_stage.ratio[st] : NAN;
			w->s_w = w->s_dp < w->s_pp ? w->s_dp : w->s_pp;
			if (isnan(w->s_dp) || isnan(w->s_pp))
				w->s_w = NAN;
		}
	qsort(r->workers, r->nworkers, sizeof(*r->workers), cmp_worker);
	r->m_w = NAN;
	r->mw = (struct wi_explain){ NAN, NAN, NAN, NAN, NAN, NAN };
	if (!r->by_dp.present)
		return;
	r->n_mw = (size_t)ceil((double)r->nworkers * e->opts.mw_percent / 100.0);
	if (r->n_mw < 1)
		r->n_mw = 1;
	if (r->n_mw > r->nworkers)
		r->n_mw = r->nworkers;
	uint8_t *mask = xcalloc(r->nworkers, 1);
	for (size_t i = 0; i < r->n_mw; i++)
		mask[r->workers[i].stage * e->dp + r->workers[i].dp_rank] = 1;
	struct wi_sel sel = { .worker = mask };
	explain(e, &sel, r->mean_nodelay, r->mean_ideal, &r->mw, buf);
	r->m_w = r->mw.rem;
	free(mask);
}

/* The verdict (docs/whatif.md §7): none below the threshold; worker when
 * M_W's few workers explain at least `share` of S, unless they are the
 * whole last stage; else stage when M_S does; else spread. */
static enum wi_verdict verdict(const struct whatif *e, const struct whatif_result *r)
{
	double share = e->opts.verdict_share;
	if (!(r->s >= e->opts.threshold))
		return WI_VERDICT_NONE;
	size_t last = 0;
	for (size_t i = 0; i < r->n_mw; i++)
		last += r->workers[i].stage == e->pp - 1;
	bool whole_last = last == (size_t)e->dp;
	if (r->m_w >= share && !whole_last)
		return WI_VERDICT_WORKER;
	if (r->m_s >= share)
		return WI_VERDICT_STAGE;
	if (r->m_w >= share)
		return WI_VERDICT_WORKER;
	return WI_VERDICT_SPREAD;
}

void whatif_run(struct whatif *e, struct whatif_result *r)
{
	memset(r, 0, sizeof(*r));
	size_t ns = e->nsteps;
	r->nsteps = ns;
	r->step = xmalloc(ns * sizeof(*r->step));
	double *arr = xmalloc(7 * ns * sizeof(*arr));
	double *buf = xmalloc(3 * ns * sizeof(*buf));
	uint8_t *node = xmalloc(e->n);
	memcpy(r->step, e->steps, ns * sizeof(*r->step));
	r->t_base = arr;
	r->t_nodelay = arr + ns;
	r->t_ideal = arr + 2 * ns;
	r->sim_nodelay = arr + 3 * ns;
	r->sim_ideal = arr + 4 * ns;
	r->slowdown = arr + 5 * ns;
	r->launch_slowdown = arr + 6 * ns;
	memcpy(r->t_base, e->span_base, ns * sizeof(double));
	r->mean_base = mean(r->t_base, ns);
	struct wi_sel none = { .all = true, .invert = true }, all = { .all = true };
	struct wi_scen nodelay = { .val = all, .delay = none };
	struct wi_scen ideal = { .val = none, .delay = none };
	double msim_nd, msim_id;
	run(e, &nodelay, r->sim_nodelay, r->t_nodelay, buf, &msim_nd, &r->mean_nodelay);
	run(e, &ideal, r->sim_ideal, r->t_ideal, buf, &msim_id, &r->mean_ideal);
	r->s = r->mean_nodelay / msim_id;
	r->s_launch = r->mean_base / msim_nd;
	for (size_t s = 0; s < ns; s++) {
		r->slowdown[s] = r->t_nodelay[s] / r->sim_ideal[s];
		r->launch_slowdown[s] = r->t_base[s] / r->sim_nodelay[s];
	}
	if (r->s >= e->opts.threshold)
		decompose(e, false, r->sim_ideal, msim_id, &r->by_group, &r->by_dp, &r->by_stage,
			  buf);
	if (r->s_launch >= e->opts.threshold)
		decompose(e, true, r->sim_nodelay, msim_nd, &r->l_by_group, &r->l_by_dp,
			  &r->l_by_stage, buf);
	workers(e, r, buf);
	for (size_t v = 0; v < e->n; v++)
		node[v] = e->node[v].stage == e->pp - 1;
	struct wi_sel last = { .node = node };
	explain(e, &last, r->mean_nodelay, r->mean_ideal, &r->ms, buf);
	r->m_s = r->ms.rem;
	r->verdict = verdict(e, r);
	free(buf);
	free(node);
}

void whatif_result_release(struct whatif_result *r)
{
	free(r->step);
	free(r->t_base);
	decomp_release(&r->by_group);
	decomp_release(&r->by_dp);
	decomp_release(&r->by_stage);
	decomp_release(&r->l_by_group);
	decomp_release(&r->l_by_dp);
	decomp_release(&r->l_by_stage);
	free(r->workers);
	memset(r, 0, sizeof(*r));
}

/* ---- timelines ----------------------------------------------------------- */

/* Copies block-layout arrays to the (step, dp, node) layout. */
static void unblock(const struct whatif *e, const double *src, double *dst)
{
	for (size_t si = 0; si < e->nsteps; si++)
		for (int d = 0; d < e->dp; d++)
			for (size_t v = 0; v < e->n; v++)
				dst[(si * (size_t)e->dp + (size_t)d) * e->n + v] =
					src[wi_idx(e, si, v, (size_t)d)];
}

void whatif_timeline(struct whatif *e, enum wi_scenario sc, double *start, double *end)
{
	size_t total = e->lanes * e->n;
	double *s = xmalloc(total * sizeof(*s)), *en = xmalloc(total * sizeof(*en));
	struct wi_sel none = { .all = true, .invert = true }, all = { .all = true };
	struct wi_scen scen = { .val = sc == WI_SCEN_IDEAL ? none : all,
				.delay = sc == WI_SCEN_BASE ? all : none };
	struct wi_out o = { NULL, NULL, s, en };
	wi_simulate(e, &scen, &o);
	unblock(e, s, start);
	unblock(e, en, end);
	free(s);
	free(en);
}

void whatif_recorded(const struct whatif *e, double *start, double *end)
{
	unblock(e, e->rs, start);
	unblock(e, e->re, end);
}
