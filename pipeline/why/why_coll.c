/* why_coll.c — collective instances (docs/why.md "Collectives").
 *
 *   kernels by (iteration, group, rank, launch order, start) → per
 *   (iteration, group), each member's count of the group's kernels: a
 *   member without a trace leaves every instance incomplete, and so do
 *   members with different counts (the order cannot pair them) → the n-th
 *   kernel of every member is instance n → once the clocks are known: the
 *   arrivals (kernel starts), the first and the last, the transfer after
 *   the last (its kernel's duration), and per rank and kind of group how
 *   often it was last and how long it waited.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/rank_result.h"
#include "util/cmp.h"
#include "util/pp.h"
#include "why_int.h"

/* Kernel indices by rank, launch order, start (qsort_r: arg the kernels). */
static int cmp_kern(const void *a, const void *b, void *arg)
{
	const struct why_kernel *k = arg;
	const struct why_kernel *x = &k[*(const int32_t *)a], *y = &k[*(const int32_t *)b];
	const int64_t kx[] = { x->rank, x->order, x->start_ns };
	const int64_t ky[] = { y->rank, y->order, y->start_ns };
	return cmp_i64s(kx, ky, 3);
}

/* The member index of rank in g, or -1. */
static int32_t member(const struct why_grp *g, int32_t rank)
{
	return why_find(g->ranks, (size_t)g->n, rank);
}

/* The instances of one (iteration, group): the kernels kx[0..n) (indices
 * into w->kern, by rank, launch order and start). */
static void instances(struct wrun *R, const int32_t *kx, size_t n, int32_t *seg, int32_t *cnt)
{
	const struct why_kernel *k = R->w->kern;
	const struct why_grp *g = &R->w->grp[k[kx[0]].group];
	int32_t ii = why_iter_index(R, k[kx[0]].iteration);
	for (int32_t m = 0; m < g->n; m++)
		cnt[m] = 0;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && k[kx[j]].rank == k[kx[i]].rank; j++)
			;
		int32_t m = member(g, k[kx[i]].rank);
		if (m < 0) {
			R->stray_kernels += j - i;
			continue;
		}
		seg[m] = (int32_t)i;
		cnt[m] = (int32_t)(j - i);
	}
	uint8_t status = WHY_OK;
	int32_t missing = -1, most = 0;
	for (int32_t m = 0; m < g->n; m++)
		most = cnt[m] > most ? cnt[m] : most;
	for (int32_t m = 0; m < g->n && status == WHY_OK; m++)
		if (!why_has_trace(R, ii, g->ranks[m])) {
			status = WHY_RANK_MISSING;
			missing = g->ranks[m];
		}
	for (int32_t m = 0; m < g->n && status == WHY_OK; m++)
		if (cnt[m] != most) {
			status = WHY_COUNT_DIFFERS;
			missing = g->ranks[m];
		}
	for (int32_t q = 0; q < most; q++) {
		why_grow((void **)&R->inst, &R->capinst, R->ninst, sizeof(*R->inst));
		struct winst *in = &R->inst[R->ninst++];
		*in = (struct winst){ .ii = ii,
				      .grp = k[kx[0]].group,
				      .seq = q,
				      .first = (int32_t)R->nmem,
				      .size = g->n,
				      .missing_rank = missing,
				      .status = status };
		for (int32_t m = 0; m < g->n; m++) {
			bool has = q < cnt[m];
			in->present += has;
			if (!has && in->missing_rank < 0)
				in->missing_rank = g->ranks[m];
			if (status != WHY_OK)
				continue;
			const struct why_kernel *x = &k[kx[seg[m] + q]];
			why_grow((void **)&R->mem, &R->capmem, R->nmem, sizeof(*R->mem));
			R->mem[R->nmem++] = (struct wmem){ x->start_ns, x->dur_ns, x->rank,
							   why_rank_index(R, x->rank) };
		}
	}
}

/* The kernels into buckets of one (iteration, group), each by rank, launch
 * order and start: a counting sort of indices, then small sorts (the
 * kernels themselves never move). */
void why_coll_match(struct wrun *R)
{
	struct why *w = R->w;
	size_t nb = R->niters * w->ngrp;
	size_t *first = xcalloc(nb + 2, sizeof(*first));
	int32_t *bucket = why_big((w->nkern + 1) * sizeof(*bucket), false);
	int32_t *kx = why_big((w->nkern + 1) * sizeof(*kx), false);
	for (size_t i = 0; i < w->nkern; i++) {
		const struct why_kernel *k = &w->kern[i];
		bucket[i] = (int32_t)((size_t)why_iter_index(R, k->iteration) * w->ngrp +
				      (size_t)k->group);
		first[bucket[i] + 2]++;
	}
	for (size_t b = 2; b < nb + 2; b++)
		first[b] += first[b - 1];
	for (size_t i = 0; i < w->nkern; i++) /* stable */
		kx[first[bucket[i] + 1]++] = (int32_t)i;
	int32_t most = 1;
	for (size_t i = 0; i < w->ngrp; i++)
		most = w->grp[i].n > most ? w->grp[i].n : most;
	int32_t *seg = xmalloc((size_t)most * sizeof(*seg));
	int32_t *cnt = xmalloc((size_t)most * sizeof(*cnt));
	for (size_t b = 0; b < nb; b++) {
		size_t lo = first[b], n = first[b + 1] - lo;
		if (!n || w->grp[b % w->ngrp].n < 2)
			continue;
		bool sorted = true; /* usually: each rank's kernels come in order */
		for (size_t i = lo + 1; i < lo + n && sorted; i++)
			sorted = cmp_kern(&kx[i - 1], &kx[i], w->kern) <= 0;
		if (!sorted)
			qsort_r(kx + lo, n, sizeof(*kx), cmp_kern, w->kern);
		instances(R, kx + lo, n, seg, cnt);
	}
	PP_FREE_ALL(first, bucket, kx, seg, cnt);
}

/* ---- measures ------------------------------------------------------- */

/* Per (rank, class of group) while summing. A class is a kind, or for
 * groups of unknown kind a description: classes() numbers them densely. */
struct acc {
	int64_t instances, times_last, wait, last_by;
	double chance, var;
};

/* cls[g] for every group; the number of classes. rep[c] is a group of
 * class c (its kind and description). */
static int32_t classes(const struct why *w, int32_t *cls, int32_t *rep)
{
	int32_t n = 0, kind_cls[RR_PG_CP + 1];
	for (int k = 0; k <= RR_PG_CP; k++)
		kind_cls[k] = -1;
	for (size_t g = 0; g < w->ngrp; g++) {
		const struct why_grp *x = &w->grp[g];
		bool known = x->kind > RR_PG_UNKNOWN && x->kind <= RR_PG_CP;
		int32_t c = known ? kind_cls[x->kind] : -1;
		for (int32_t k = 0; k < n && c < 0 && !known; k++)
			if (w->grp[rep[k]].kind == x->kind && !strcmp(w->grp[rep[k]].desc, x->desc))
				c = k;
		if (c < 0) { /* a new class: g stands for it */
			c = n++;
			rep[c] = (int32_t)g;
			if (known)
				kind_cls[x->kind] = c;
		}
		cls[g] = c;
	}
	return n;
}

static int cmp_coll_rank(const void *a, const void *b)
{
	const struct why_coll_rank *x = a, *y = b;
	const int64_t kx[] = { x->rank, x->kind }, ky[] = { y->rank, y->kind };
	int c = cmp_i64s(kx, ky, 2);
	if (c)
		return c;
	return strcmp(x->desc ? x->desc : "", y->desc ? y->desc : "");
}

/* The rows of collective_ranks from the sums a[rank index · ncls + class]. */
static void rank_rows(struct wrun *R, const struct acc *a, int32_t ncls, const int32_t *rep)
{
	struct why_result *r = R->r;
	size_t n = 0;
	for (size_t i = 0; i < R->nrk * (size_t)ncls; i++)
		n += a[i].instances > 0;
	r->coll_ranks = xcalloc(n + 1, sizeof(*r->coll_ranks));
	for (size_t i = 0; i < R->nrk * (size_t)ncls; i++) {
		const struct acc *x = &a[i];
		if (!x->instances)
			continue;
		const struct why_grp *g = &R->w->grp[rep[i % (size_t)ncls]];
		double expect = x->chance, sd = sqrt(x->var);
		r->coll_ranks[r->ncoll_ranks++] = (struct why_coll_rank){
			.rank = R->rk[i / (size_t)ncls].rank,
			.kind = g->kind,
			.desc = g->kind == RR_PG_UNKNOWN ? xstrdup(g->desc) : NULL,
			.instances = x->instances,
			.times_last = x->times_last,
			.share_last = (double)x->times_last / (double)x->instances,
			.chance = x->chance / (double)x->instances,
			.mean_wait_ns = (int64_t)llround((double)x->wait / (double)x->instances),
			.last_by_ns = x->times_last ? (int64_t)llround((double)x->last_by /
								       (double)x->times_last)
						    : 0,
			/* far more often than chance: by more than 3 standard
			 * deviations of chance's count, and 3 times at least */
			.late = x->times_last >= 3 && (double)x->times_last > expect + 3 * sd,
		};
	}
	why_sort(r->coll_ranks, r->ncoll_ranks, sizeof(*r->coll_ranks), cmp_coll_rank);
}

void why_coll_measure(struct wrun *R)
{
	struct why *w = R->w;
	struct why_result *r = R->r;
	int32_t *cls = xmalloc((w->ngrp + 1) * sizeof(*cls));
	int32_t *rep = xmalloc((w->ngrp + 1) * sizeof(*rep));
	for (size_t g = 0; g <= w->ngrp; g++)
		rep[g] = -1;
	int32_t ncls = classes(w, cls, rep);
	struct acc *acc = why_big((R->nrk * (size_t)(ncls ? ncls : 1) + 1) * sizeof(*acc), true);
	int32_t most = 1;
	for (size_t g = 0; g < w->ngrp; g++)
		most = w->grp[g].n > most ? w->grp[g].n : most;
	int64_t *arr = xmalloc((size_t)most * sizeof(*arr));
	r->colls = why_big((R->ninst + 1) * sizeof(*r->colls), true);
	for (size_t q = 0; q < R->ninst; q++) {
		const struct winst *in = &R->inst[q];
		struct why_coll *c = &r->colls[r->ncolls++];
		*c = (struct why_coll){ .iteration = R->iters[in->ii],
					.group = in->grp,
					.seq = in->seq,
					.present = in->present,
					.size = in->size,
					.first_rank = -1,
					.last_rank = -1,
					.missing_rank = in->missing_rank,
					.status = in->status };
		if (in->status != WHY_OK) {
			r->colls_incomplete++;
			continue;
		}
		const struct wmem *mem = R->mem + in->first;
		int32_t lastm = 0, firstm = 0;
		int64_t second = INT64_MIN; /* the latest arrival but the last's */
		for (int32_t m = 0; m < in->size; m++) {
			arr[m] = mem[m].start - (mem[m].ri >= 0 ? R->off[mem[m].ri] : 0);
			if (arr[m] > arr[lastm])
				lastm = m; /* ties: the lowest rank (members ascend) */
			if (arr[m] < arr[firstm])
				firstm = m;
		}
		for (int32_t m = 0; m < in->size; m++)
			if (m != lastm && arr[m] > second)
				second = arr[m];
		c->first_ns = arr[firstm];
		c->last_ns = arr[lastm];
		c->skew_ns = c->last_ns - c->first_ns;
		c->first_rank = mem[firstm].rank;
		c->last_rank = mem[lastm].rank;
		c->transfer_ns = mem[lastm].dur;
		double p = 1.0 / in->size;
		for (int32_t m = 0; m < in->size; m++) {
			if (mem[m].ri < 0)
				continue;
			struct acc *a =
				&acc[(size_t)mem[m].ri * (size_t)ncls + (size_t)cls[in->grp]];
			a->instances++;
			a->times_last += m == lastm;
			a->last_by += m == lastm ? c->last_ns - second : 0;
			a->wait += c->last_ns - arr[m];
			a->chance += p;
			a->var += p * (1 - p);
		}
	}
	rank_rows(R, acc, ncls, rep);
	PP_FREE_ALL(acc, arr, cls, rep);
}
