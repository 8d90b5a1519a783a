/* agg_overview.c — what shows a whole job at once (docs/ppagg.md,
 * "Overview"): per rank four numbers (bubble share, forward+backward
 * compute, idle, coverage), folded onto the (pipeline stage × data-parallel
 * replica) grid, the distribution of step times per stage, the worst ranks
 * per number, the flagged ranks, and the render plan: which iterations the
 * report details and which charts it shows, rendered now, or writes as a
 * script only (docs/ppagg.md "What the report shows").
 *
 * Folding: a cell holds every rank of one stage of one model replica (its
 * TP, CP and EP ranks); it shows the worst of them (the highest bubble
 * share, compute and idle; the lowest coverage) and names that rank, so one
 * slow GPU is never averaged away by its healthy TP peers.
 */
#include "agg_int.h"

#include <math.h>
#include <stdlib.h>

#include "topology.h"
#include "util/cmp.h"
#include "util/pp.h"

const struct agg_metric_info agg_metrics[AGG_NMETRICS] = {
	[AGG_M_BUBBLE] = { "bubble", "bubble share", " %", false,
			   "group bubble / PP-group window: the share of the pipeline's time "
			   "this GPU did no work but pipeline communication" },
	[AGG_M_COMPUTE] = { "compute", "forward+backward compute", " ms", false,
			    "busy time of fwd_computation and bwd_computation kernels" },
	[AGG_M_IDLE] = { "idle", "idle time", " ms", false,
			 "PP-group window minus the GPU's busy time" },
	[AGG_M_COVERAGE] = { "coverage", "coverage", " %", true,
			     "share of GPU busy time that landed in a named category" },
};

/* The value of metric m for rank r (index i of it->ranks); false when it
 * has none (failed, no window, not in a PP group for the group metrics).
 * pp_row[i]: the index of rank i's row in it->res.pp, -1 for none. */
static bool rank_metric(const struct agg_iter *it, const int *pp_row, size_t i, enum agg_metric m,
			double *v)
{
	const struct agg_rank *r = &it->ranks[i];
	const struct agg_pp_row *p = pp_row && pp_row[i] >= 0 ? &it->res.pp[pp_row[i]] : NULL;
	if (!r->in.ok || !r->in.has_window)
		return false;
	switch (m) {
	case AGG_M_BUBBLE:
		if (!p || !p->has_rank || p->gw_e <= p->gw_s)
			return false;
		*v = 100.0 * (double)p->bubble / (double)(p->gw_e - p->gw_s);
		return true;
	case AGG_M_COMPUTE:
		if (!r->in.megatron)
			return false;
		*v = (double)r->in.compute / 1e6;
		return true;
	case AGG_M_IDLE: *v = (double)(p && p->has_rank ? p->idle : r->idle) / 1e6; return true;
	default: *v = 100.0 * r->coverage; return true;
	}
}

/* The index of every rank's pp_groups row, -1 for none. */
static int *pp_rows(const struct agg_iter *it)
{
	int *row = xmalloc((it->nranks + 1) * sizeof(int));
	for (size_t i = 0; i < it->nranks; i++)
		row[i] = -1;
	for (size_t k = 0; k < it->res.npp; k++) {
		const struct agg_pp_row *p = &it->res.pp[k];
		const struct agg_rank *r = agg_iter_rank(it, p->rank);
		if (r)
			row[r - it->ranks] = (int)k;
	}
	return row;
}

static bool worse(enum agg_metric m, double a, double b)
{
	return agg_metrics[m].low_bad ? a < b : a > b;
}

/* Keeps the AGG_TOP worst (value, rank) pairs, worst first. */
static void top_add(struct agg_overview *ov, enum agg_metric m, int rank, double v)
{
	int n = ov->ntop[m], k = n;
	if (n == AGG_TOP && !worse(m, v, ov->topv[m][n - 1]))
		return;
	if (n < AGG_TOP)
		ov->ntop[m]++;
	else
		k = n - 1;
	while (k > 0 && worse(m, v, ov->topv[m][k - 1])) {
		ov->topv[m][k] = ov->topv[m][k - 1];
		ov->top[m][k] = ov->top[m][k - 1];
		k--;
	}
	ov->topv[m][k] = v;
	ov->top[m][k] = rank;
}

static void dist_of(double *v, size_t n, struct agg_dist *d)
{
	d->n = n;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	d->min = v[0];
	d->q1 = cmp_quantile(v, n, 0.25);
	d->med = cmp_quantile(v, n, 0.5);
	d->q3 = cmp_quantile(v, n, 0.75);
	d->max = v[n - 1];
}

/* Every fwd (phase RR_FWD) or bwd step with kernels of the ranks of each
 * stage, in ms. */
static void step_dists(struct agg_iter *it, const struct topology *t, int phase,
		       struct agg_dist *out)
{
	struct agg_overview *ov = &it->ov;
	size_t *count = xcalloc((size_t)ov->nstage + 1, sizeof(size_t));
	for (size_t i = 0; i < it->nranks; i++) {
		int rk = it->ranks[i].in.rank;
		if (!it->ranks[i].in.ok || rk >= t->nrank || t->stage_of[rk] < 0 ||
		    t->stage_of[rk] >= ov->nstage)
			continue;
		for (size_t j = 0; j < it->ranks[i].nsteps; j++)
			count[t->stage_of[rk]] += it->ranks[i].steps[j].phase == phase &&
						  it->ranks[i].steps[j].has_kernels;
	}
	for (int s = 0; s < ov->nstage; s++) {
		double *v = xmalloc((count[s] + 1) * sizeof(double));
		size_t n = 0;
		for (size_t i = 0; i < it->nranks; i++) {
			int rk = it->ranks[i].in.rank;
			if (!it->ranks[i].in.ok || rk >= t->nrank || t->stage_of[rk] != s)
				continue;
			for (size_t j = 0; j < it->ranks[i].nsteps; j++) {
				const struct agg_step *st = &it->ranks[i].steps[j];
				if (st->phase == phase && st->has_kernels)
					v[n++] = (double)st->wall / 1e6;
			}
		}
		dist_of(v, n, &out[s]);
		free(v);
	}
	free(count);
}

/* Folds every rank into its (stage, replica) cell. */
static void fill_grid(struct agg_iter *it, const struct topology *t, const int *row)
{
	struct agg_overview *ov = &it->ov;
	size_t ncell = (size_t)ov->nstage * (size_t)ov->nrep;
	ov->cells = xcalloc(ncell + 1, sizeof(*ov->cells));
	for (size_t c = 0; c < ncell; c++) {
		struct agg_cell *cell = &ov->cells[c];
		for (int m = 0; m < AGG_NMETRICS; m++)
			cell->rank[m] = -1;
		cell->fwd_rank = cell->bwd_rank = -1;
		cell->fwd_ms = cell->bwd_ms = NAN;
	}
	for (size_t i = 0; i < it->nranks; i++) {
		int rk = it->ranks[i].in.rank;
		if (rk >= t->nrank || t->stage_of[rk] < 0 || t->model_of[rk] < 0 ||
		    t->stage_of[rk] >= ov->nstage || t->model_of[rk] >= ov->nrep)
			continue;
		struct agg_cell *cell = &ov->cells[(size_t)t->stage_of[rk] * (size_t)ov->nrep +
						   (size_t)t->model_of[rk]];
		const struct agg_rank_in *in = &it->ranks[i].in;
		cell->nranks++;
		for (int m = 0; m < AGG_NMETRICS; m++) {
			double v;
			if (rank_metric(it, row, i, m, &v) &&
			    (cell->rank[m] < 0 || worse(m, v, cell->v[m]))) {
				cell->rank[m] = rk;
				cell->v[m] = v;
			}
		}
		if (in->ok && in->fwd_med >= 0 &&
		    (cell->fwd_rank < 0 || (double)in->fwd_med / 1e6 > cell->fwd_ms)) {
			cell->fwd_rank = rk;
			cell->fwd_ms = (double)in->fwd_med / 1e6;
		}
		if (in->ok && in->bwd_med >= 0 &&
		    (cell->bwd_rank < 0 || (double)in->bwd_med / 1e6 > cell->bwd_ms)) {
			cell->bwd_rank = rk;
			cell->bwd_ms = (double)in->bwd_med / 1e6;
		}
	}
}

void agg_overview_compute(struct agg_iter *it, const struct topology *t, const int *listed,
			  int nlisted)
{
	struct agg_overview *ov = &it->ov;
	int *row = pp_rows(it);
	ov->flag = xcalloc(it->nranks + 1, 1);
	for (int m = 0; m < AGG_NMETRICS; m++)
		for (size_t i = 0; i < it->nranks; i++) {
			double v;
			if (rank_metric(it, row, i, m, &v))
				top_add(ov, m, it->ranks[i].in.rank, v);
		}
	if (t->source != TOPO_SRC_NONE && t->groups[TOPO_PP].n && t->groups[TOPO_MODEL].n &&
	    t->nrank) {
		ov->nrep = (int)t->groups[TOPO_MODEL].n;
		for (int r = 0; r < t->nrank; r++)
			if (t->stage_of[r] + 1 > ov->nstage)
				ov->nstage = t->stage_of[r] + 1;
	}
	if (ov->nstage > 0 && ov->nrep > 0) {
		fill_grid(it, t, row);
		ov->fwd = xcalloc((size_t)ov->nstage, sizeof(*ov->fwd));
		ov->bwd = xcalloc((size_t)ov->nstage, sizeof(*ov->bwd));
		step_dists(it, t, RR_FWD, ov->fwd);
		step_dists(it, t, RR_BWD, ov->bwd);
	} else {
		ov->nstage = ov->nrep = 0;
	}
	/* Flagged ranks: the report shows their own charts. Of the
	 * stragglers, the AGG_TOP with the largest excess (a slow region of
	 * the cluster must not fill the output folder; the table lists all). */
	for (size_t n = 0; n < AGG_TOP && n < it->res.nstrag; n++) {
		const struct agg_straggler_row *best = NULL;
		struct agg_rank *r = NULL;
		for (size_t s = 0; s < it->res.nstrag; s++) {
			struct agg_rank *c = agg_iter_rank(it, it->res.strag[s].rank);
			if (c && !(ov->flag[c - it->ranks] & AGG_FLAG_STRAGGLER) &&
			    (!best || it->res.strag[s].excess > best->excess)) {
				best = &it->res.strag[s];
				r = c;
			}
		}
		if (r)
			ov->flag[r - it->ranks] |= AGG_FLAG_STRAGGLER;
	}
	for (int m = 0; m < AGG_NMETRICS; m++)
		for (int k = 0; k < ov->ntop[m]; k++) {
			struct agg_rank *r = agg_iter_rank(it, ov->top[m][k]);
			ov->flag[r - it->ranks] |= AGG_FLAG_TOP;
		}
	for (size_t i = 0; i < it->nranks; i++)
		if (!it->ranks[i].in.ok)
			ov->flag[i] |= AGG_FLAG_FAILED;
	for (int k = 0; k < nlisted; k++) {
		struct agg_rank *r = agg_iter_rank(it, listed[k]);
		if (r)
			ov->flag[r - it->ranks] |= AGG_FLAG_LISTED;
	}
	for (size_t i = 0; i < it->nranks; i++)
		ov->nflagged += ov->flag[i] != 0;
	free(row);
}

void agg_plan_iterations(struct agg_iter *its, size_t n, const struct agg_charts *c, bool every)
{
	for (size_t i = 0; i < n; i++)
		its[i].plan.detail = every || n <= AGG_DETAIL_ITERS ? AGG_DETAIL_EVERY : 0;
	if (n > AGG_DETAIL_ITERS && !every) {
		/* Sorted by time, ties by iteration (its are ascending): an
		 * insertion sort of indices, n is a few hundred at most. */
		size_t *ix = xmalloc(n * sizeof(*ix));
		int64_t *tm = xmalloc(n * sizeof(*tm));
		for (size_t i = 0; i < n; i++) {
			size_t k = i;
			tm[i] = agg_iter_time(&its[i]);
			for (; k > 0 && tm[ix[k - 1]] > tm[i]; k--)
				ix[k] = ix[k - 1];
			ix[k] = i;
		}
		its[ix[0]].plan.detail |= AGG_DETAIL_FASTEST;
		its[ix[(n - 1) / 2]].plan.detail |= AGG_DETAIL_MEDIAN;
		its[ix[n - 1]].plan.detail |= AGG_DETAIL_SLOWEST;
		free(ix);
		free(tm);
	}
	for (int k = 0; k < c->niterations; k++)
		for (size_t i = 0; i < n; i++)
			if (its[i].iteration == c->iterations[k])
				its[i].plan.detail |= AGG_DETAIL_ASKED;
}

static bool listed(const int *v, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* Whether one of the n ranks is a flagged straggler (its group's chart is
 * shown in every format). */
static bool holds_straggler(const struct agg_iter *it, const int *ranks, int n)
{
	for (int i = 0; i < n; i++) {
		const struct agg_rank *r = agg_iter_rank(it, ranks[i]);
		if (r && it->ov.flag[r - it->ranks] & AGG_FLAG_STRAGGLER)
			return true;
	}
	return false;
}

/* Marks the PP groups of the AGG_TOP_GROUPS slowest pipelines (measured;
 * ties: the lower group) in slow[]. */
static void slowest_pipelines(const struct agg_iter *it, size_t ng, bool *slow)
{
	for (int n = 0; n < AGG_TOP_GROUPS; n++) {
		const struct agg_pipeline_row *best = NULL;
		for (size_t p = 0; p < it->res.npipes; p++) {
			const struct agg_pipeline_row *pr = &it->res.pipes[p];
			if ((size_t)pr->pp_group < ng && !slow[pr->pp_group] &&
			    (!best || pr->measured > best->measured))
				best = pr;
		}
		if (best)
			slow[best->pp_group] = true;
	}
}

/* The show of a chart the report does not show: its script under
 * --charts all, else nothing. */
static uint8_t unshown(const struct agg_opts *o)
{
	return o->charts.all ? AGG_SHOW_SCRIPT : AGG_SHOW_NONE;
}

void agg_plan_compute(struct agg_iter *it, const struct topology *t, const struct agg_opts *o,
		      size_t ndetailed)
{
	struct agg_plan *p = &it->plan;
	const struct agg_charts *c = &o->charts;
	enum agg_rank_charts mode = o->rank_charts;
	bool detailed = p->detail != 0;
	/* auto: every rank chart while the report shows at most that many
	 * (ranks × detailed iterations): an imported op trace of 16 ranks and
	 * 44 steps would otherwise show 700. */
	p->all = detailed && (mode == AGG_RC_ALL ||
			      (mode == AGG_RC_AUTO &&
			       (int64_t)it->nranks * (int64_t)ndetailed <= AGG_AUTO_ALL_RANKS));
	p->overview = detailed ? AGG_SHOW_ALL : AGG_SHOW_NONE;
	p->rank_timeline = xcalloc(it->nranks + 1, 1);
	p->rank_overlap = xcalloc(it->nranks + 1, 1);
	size_t ng = t->source != TOPO_SRC_NONE ? t->groups[TOPO_PP].n : 0;
	size_t nm = t->source != TOPO_SRC_NONE ? t->groups[TOPO_MODEL].n : 0;
	p->pp_group = xcalloc(ng + 1, 1);
	p->model_group = xcalloc(nm + 1, 1);
	if (!detailed)
		return;
	for (size_t i = 0; i < it->nranks; i++) {
		uint8_t f = it->ov.flag[i];
		bool asked = f & AGG_FLAG_LISTED;
		bool mine = p->all || asked || (mode != AGG_RC_NONE && f != 0);
		/* At scale a flagged rank's overlap chart is one image (its SVG,
		 * with the numbers of steps.csv as hover text, is one gnuplot
		 * away); a rank asked for gets every format. */
		p->rank_timeline[i] = mine ? AGG_SHOW_ALL : unshown(o);
		p->rank_overlap[i] = !mine             ? unshown(o)
				     : p->all || asked ? AGG_SHOW_ALL
						       : AGG_SHOW_IMAGE;
	}
	/* Groups: those of the stragglers shown in every format, the slowest
	 * pipelines as one image. */
	bool *slow = xcalloc(ng + 1, sizeof(bool));
	slowest_pipelines(it, ng, slow);
	for (size_t g = 0; g < ng; g++) {
		const struct topo_group *pg = &t->groups[TOPO_PP].v[g];
		p->pp_group[g] = p->all || listed(c->groups, c->ngroups, (int)g) ||
						 holds_straggler(it, pg->ranks, pg->n)
					 ? AGG_SHOW_ALL
				 : slow[g] ? AGG_SHOW_IMAGE
					   : unshown(o);
	}
	/* Replicas (128 rows at TP 8 × PP 16): those of the stragglers and of
	 * the slowest pipeline, as one image. */
	const struct agg_pipeline_row *slowest = NULL;
	for (size_t k = 0; k < it->res.npipes; k++)
		if (!slowest || it->res.pipes[k].measured > slowest->measured)
			slowest = &it->res.pipes[k];
	for (size_t m = 0; m < nm; m++) {
		const struct topo_group *mg = &t->groups[TOPO_MODEL].v[m];
		bool of_slowest = false;
		if (slowest && (size_t)slowest->pp_group < ng) {
			int r0 = t->groups[TOPO_PP].v[slowest->pp_group].ranks[0];
			of_slowest = r0 < t->nrank && t->model_of[r0] == (int)m;
		}
		p->model_group[m] =
			p->all || listed(c->replicas, c->nreplicas, (int)m)   ? AGG_SHOW_ALL
			: of_slowest || holds_straggler(it, mg->ranks, mg->n) ? AGG_SHOW_IMAGE
									      : unshown(o);
	}
	free(slow);
	if (o->mode != AGG_CHARTS_ONLY)
		return;
	p->only_rank = xcalloc(it->nranks + 1, sizeof(bool));
	p->only_pp = xcalloc(ng + 1, sizeof(bool));
	p->only_model = xcalloc(nm + 1, sizeof(bool));
	for (size_t i = 0; i < it->nranks; i++)
		p->only_rank[i] = it->ov.flag[i] & AGG_FLAG_LISTED;
	for (size_t g = 0; g < ng; g++)
		p->only_pp[g] = listed(c->groups, c->ngroups, (int)g);
	for (size_t m = 0; m < nm; m++)
		p->only_model[m] = listed(c->replicas, c->nreplicas, (int)m);
}
