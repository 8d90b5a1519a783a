/* agg_calc.c — the numbers of ppagg (docs/semantics.md §6), pure functions.
 *
 * Group idle and bubble need no kernel scan: a rank's bubble is
 * window − union(non-pp GPU events), so that union is window − bubble and
 *   group_bubble = group_window − (window − bubble),
 *   group_idle   = group_window − gpu_busy.
 * Stragglers compare each rank's fwd+bwd compute with the lower median of
 * its DP group (with two ranks the faster one is the reference, so a slow
 * rank is still found) by agg_above_lower_median(), the rule a what-if
 * cell's slow rank uses too.
 */
#include "agg.h"

#include <stdlib.h>
#include <string.h>

#include "topology.h"
#include "util/cmp.h"
#include "util/pp.h"
#include "util/strbuf.h"

int64_t agg_lower_median(int64_t *v, size_t n)
{
	if (!n)
		return -1;
	qsort(v, n, sizeof(*v), cmp_i64);
	return v[(n - 1) / 2];
}

double agg_excess(int64_t v, int64_t median)
{
	return (double)(v - median) / (double)median;
}

int agg_above_lower_median(const int64_t *v, int n, double margin, int64_t *median, int *which)
{
	*median = -1;
	if (n < 2)
		return 0;
	int64_t *sorted = xmalloc((size_t)n * sizeof(*sorted));
	memcpy(sorted, v, (size_t)n * sizeof(*sorted));
	int64_t m = agg_lower_median(sorted, (size_t)n);
	free(sorted);
	*median = m;
	int k = 0;
	for (int i = 0; m > 0 && i < n; i++)
		if (agg_excess(v[i], m) > margin)
			which[k++] = i;
	return k;
}

void agg_result_release(struct agg_result *res)
{
	free(res->pp);
	free(res->pipes);
	free(res->strag);
	memset(res, 0, sizeof(*res));
	res->slowest_stage = -1;
}

/* by_rank[r] = the input of rank r or NULL. */
static const struct agg_rank_in **index_ranks(const struct topology *t,
					      const struct agg_rank_in *ranks, size_t n)
{
	const struct agg_rank_in **by = xcalloc((size_t)t->nrank + 1, sizeof(*by));
	for (size_t i = 0; i < n; i++)
		if (ranks[i].rank >= 0 && ranks[i].rank < t->nrank)
			by[ranks[i].rank] = &ranks[i];
	return by;
}

static bool usable(const struct agg_rank_in *r)
{
	return r && r->ok;
}

static void pp_group_rows(const struct topology *t, const struct agg_rank_in **by,
			  const struct agg_params *p, struct agg_result *res, size_t g)
{
	const struct topo_group *grp = &t->groups[TOPO_PP].v[g];
	bool complete = true, has = false;
	int64_t gs = 0, ge = 0;
	for (int s = 0; s < grp->n; s++) {
		const struct agg_rank_in *r = by[grp->ranks[s]];
		if (!usable(r)) {
			complete = false;
			continue;
		}
		if (!r->has_window)
			continue;
		if (!has || r->win_s < gs)
			gs = r->win_s;
		if (!has || r->win_e > ge)
			ge = r->win_e;
		has = true;
	}
	double ratio_sum = 0;
	int64_t *fwd = xmalloc((size_t)grp->n * sizeof(int64_t));
	int64_t *bwd = xmalloc((size_t)grp->n * sizeof(int64_t));
	bool ideal_ok = complete && has;
	int m = 0;
	for (int s = 0; s < grp->n; s++) {
		const struct agg_rank_in *r = by[grp->ranks[s]];
		struct agg_pp_row *row = &res->pp[res->npp++];
		*row = (struct agg_pp_row){ .pp_group = (int)g,
					    .stage = s,
					    .rank = grp->ranks[s],
					    .complete = complete,
					    .has_window = has,
					    .gw_s = gs,
					    .gw_e = ge };
		if (usable(r) && has) {
			int64_t len = ge - gs;
			int64_t nonpp = r->has_window ? r->win_e - r->win_s - r->bubble : 0;
			row->has_rank = true;
			row->idle = len - (r->has_window ? r->gpu_busy : 0);
			row->bubble = len - nonpp;
			if (len > 0)
				ratio_sum += (double)row->bubble / (double)len;
		}
		if (usable(r) && r->fwd_med >= 0 && r->bwd_med >= 0) {
			fwd[s] = r->fwd_med;
			bwd[s] = r->bwd_med;
			if (r->nfwd > m)
				m = r->nfwd;
		} else {
			ideal_ok = false;
		}
	}
	if (complete && has) {
		struct agg_pipeline_row *pr = &res->pipes[res->npipes++];
		*pr = (struct agg_pipeline_row){ .pp_group = (int)g,
						 .measured = ge - gs,
						 .bubble_ratio = ratio_sum / grp->n };
		int vpp = p->vpp > 0 ? p->vpp : 1;
		if (ideal_ok && m > 0) {
			struct strbuf err = STRBUF_INIT;
			int64_t ideal = agg_ideal_ns(grp->n, vpp, (m + vpp - 1) / vpp, p->warmup,
						     fwd, bwd, &err);
			strbuf_release(&err);
			if (ideal >= 0) {
				pr->has_ideal = true;
				pr->ideal = ideal;
				pr->gap = pr->measured - ideal;
			}
		}
	}
	free(fwd);
	free(bwd);
}

/* Flags the ranks of one comparison group; members are rank ids. Per
 * iteration, the ranks compared are the analysed Megatron ranks with
 * compute: a rank without compute kernels would pull the median down and
 * flag its healthy peers. Every rank that stands out is listed. */
static void straggler_group(const struct agg_rank_in **by, const int *members, int n,
			    const char *kind, int group, double thr, struct agg_result *res)
{
	int64_t *v = xmalloc(((size_t)n + 1) * sizeof(*v));
	int *who = xmalloc(((size_t)n + 1) * sizeof(*who));
	int *which = xmalloc(((size_t)n + 1) * sizeof(*which));
	int k = 0;
	for (int i = 0; i < n; i++) {
		const struct agg_rank_in *r = by[members[i]];
		if (usable(r) && r->megatron && r->compute > 0) {
			v[k] = r->compute;
			who[k++] = members[i];
		}
	}
	int64_t med;
	int slow = agg_above_lower_median(v, k, thr, &med, which);
	if (k >= 2)
		res->ncompared += (size_t)k;
	for (int j = 0; j < slow; j++) {
		const struct agg_rank_in *r = by[who[which[j]]];
		double excess = agg_excess(r->compute, med);
		res->strag[res->nstrag++] =
			(struct agg_straggler_row){ r->rank,    kind, group, "fwd_bwd_compute",
						    r->compute, med,  excess };
	}
	free(v);
	free(who);
	free(which);
}

static int cmp_strag(const void *a, const void *b)
{
	const struct agg_straggler_row *x = a, *y = b;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

void agg_compute(const struct topology *t, const struct agg_rank_in *ranks, size_t n,
		 const struct agg_params *p, struct agg_result *res)
{
	memset(res, 0, sizeof(*res));
	res->slowest_stage = -1;
	const struct topo_groups *pp = &t->groups[TOPO_PP];
	size_t nrows = 0, maxstage = 0;
	for (size_t g = 0; g < pp->n; g++) {
		nrows += (size_t)pp->v[g].n;
		if ((size_t)pp->v[g].n > maxstage)
			maxstage = (size_t)pp->v[g].n;
	}
	const struct agg_rank_in **by = index_ranks(t, ranks, n);
	res->pp = xcalloc(nrows + 1, sizeof(*res->pp));
	res->pipes = xcalloc(pp->n + 1, sizeof(*res->pipes));
	res->strag = xcalloc((size_t)t->nrank + 1, sizeof(*res->strag));
	int64_t *scratch = xcalloc((size_t)t->nrank + 1, sizeof(int64_t));
	for (size_t g = 0; g < pp->n; g++)
		pp_group_rows(t, by, p, res, g);

	const struct topo_groups *dp = &t->groups[TOPO_DP];
	if (dp->n) {
		for (size_t g = 0; g < dp->n; g++)
			straggler_group(by, dp->v[g].ranks, dp->v[g].n, "dp", (int)g, p->threshold,
					res);
	} else {
		/* No DP groups: ranks holding the same stage form the group. */
		int *members = xmalloc((pp->n + 1) * sizeof(int));
		for (size_t s = 0; s < maxstage; s++) {
			int k = 0;
			for (size_t g = 0; g < pp->n; g++)
				if ((size_t)pp->v[g].n > s)
					members[k++] = pp->v[g].ranks[s];
			straggler_group(by, members, k, "stage", (int)s, p->threshold, res);
		}
		free(members);
	}
	qsort(res->strag, res->nstrag, sizeof(*res->strag), cmp_strag);

	/* Slowest stage: the highest lower-median compute over its ranks. */
	for (size_t s = 0; s < maxstage; s++) {
		size_t k = 0;
		for (size_t g = 0; g < pp->n; g++) {
			if ((size_t)pp->v[g].n <= s)
				continue;
			const struct agg_rank_in *r = by[pp->v[g].ranks[s]];
			if (usable(r) && r->compute > 0)
				scratch[k++] = r->compute;
		}
		int64_t med = agg_lower_median(scratch, k);
		if (med > res->slowest_compute) {
			res->slowest_compute = med;
			res->slowest_stage = (int)s;
		}
	}
	free(by);
	free(scratch);
}
