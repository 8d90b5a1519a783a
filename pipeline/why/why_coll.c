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

static int cmp_kern(const void *a, const void *b)
{
	const struct why_kernel *x = a, *y = b;
	const int64_t kx[] = { x->iteration, x->group, x->rank, x->order, x->start_ns };
	const int64_t ky[] = { y->iteration, y->group, y->rank, y->order, y->start_ns };
	return cmp_i64s(kx, ky, 5);
}

/* The member index of rank in g, or -1. */
static int32_t member(const struct why_grp *g, int32_t rank)
{
	int32_t lo = 0, hi = g->n;
	while (lo < hi) {
		int32_t mid = (lo + hi) / 2;
		if (g->ranks[mid] < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->n && g->ranks[lo] == rank ? lo : -1;
}

/* The instances of one (iteration, group): kernels k[0..n) (sorted). */
static void instances(struct wrun *R, size_t first, size_t n, int32_t *seg, int32_t *cnt)
{
	const struct why_kernel *k = R->w->kern + first;
	const struct why_grp *g = &R->w->grp[k[0].group];
	int32_t ii = why_iter_index(R, k[0].iteration);
	for (int32_t m = 0; m < g->n; m++)
		cnt[m] = 0;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && k[j].rank == k[i].rank; j++)
			;
		int32_t m = member(g, k[i].rank);
		if (m < 0) {
			R->stray_kernels += j - i;
			continue;
		}
		seg[m] = (int32_t)(first + i);
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
				      .grp = k[0].group,
				      .seq = q,
				      .first = (int32_t)R->nkidx,
				      .size = g->n,
				      .missing_rank = missing,
				      .status = status };
		for (int32_t m = 0; m < g->n; m++) {
			why_grow((void **)&R->kidx, &R->capkidx, R->nkidx, sizeof(*R->kidx));
			bool has = q < cnt[m];
			R->kidx[R->nkidx++] = has ? seg[m] + q : -1;
			in->present += has;
			if (!has && in->missing_rank < 0)
				in->missing_rank = g->ranks[m];
		}
	}
}

void why_coll_match(struct wrun *R)
{
	struct why *w = R->w;
	why_sort(w->kern, w->nkern, sizeof(*w->kern), cmp_kern);
	int32_t most = 1;
	for (size_t i = 0; i < w->ngrp; i++)
		most = w->grp[i].n > most ? w->grp[i].n : most;
	int32_t *seg = xmalloc((size_t)most * sizeof(*seg));
	int32_t *cnt = xmalloc((size_t)most * sizeof(*cnt));
	for (size_t i = 0, j; i < w->nkern; i = j) {
		for (j = i + 1; j < w->nkern && w->kern[j].iteration == w->kern[i].iteration &&
				w->kern[j].group == w->kern[i].group;
		     j++)
			;
		if (w->grp[w->kern[i].group].n >= 2)
			instances(R, i, j - i, seg, cnt);
	}
	free(seg);
	free(cnt);
}

/* ---- measures ------------------------------------------------------- */

/* Per (rank, class of group) while summing: class = the kind, or for a
 * group of unknown kind its description's place among the groups. */
struct acc {
	int32_t rank, grp; /* a group of the class (its kind, its desc) */
	int64_t instances, times_last, wait, last_by;
	double chance, var;
};

static int32_t class_of(const struct why *w, int32_t g, int32_t *first_of_desc)
{
	const struct why_grp *x = &w->grp[g];
	if (x->kind != RR_PG_UNKNOWN)
		return x->kind;
	if (first_of_desc[g] < 0) {
		first_of_desc[g] = g;
		for (int32_t h = 0; h < g; h++)
			if (w->grp[h].kind == RR_PG_UNKNOWN && !strcmp(w->grp[h].desc, x->desc)) {
				first_of_desc[g] = h;
				break;
			}
	}
	return 16 + first_of_desc[g];
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

static void rank_rows(struct wrun *R, const struct acc *a, size_t n)
{
	struct why_result *r = R->r;
	r->coll_ranks = xcalloc(n + 1, sizeof(*r->coll_ranks));
	for (size_t i = 0; i < n; i++) {
		const struct why_grp *g = &R->w->grp[a[i].grp];
		double expect = a[i].chance, sd = sqrt(a[i].var);
		r->coll_ranks[r->ncoll_ranks++] = (struct why_coll_rank){
			.rank = a[i].rank,
			.kind = g->kind,
			.desc = g->kind == RR_PG_UNKNOWN ? xstrdup(g->desc) : NULL,
			.instances = a[i].instances,
			.times_last = a[i].times_last,
			.share_last = (double)a[i].times_last / (double)a[i].instances,
			.chance = a[i].chance / (double)a[i].instances,
			.mean_wait_ns =
				(int64_t)llround((double)a[i].wait / (double)a[i].instances),
			.last_by_ns = a[i].times_last ? (int64_t)llround((double)a[i].last_by /
									 (double)a[i].times_last)
						      : 0,
			/* far more often than chance: by more than 3 standard
			 * deviations of chance's count, and 3 times at least */
			.late = a[i].times_last >= 3 && (double)a[i].times_last > expect + 3 * sd,
		};
	}
	why_sort(r->coll_ranks, r->ncoll_ranks, sizeof(*r->coll_ranks), cmp_coll_rank);
}

void why_coll_measure(struct wrun *R)
{
	struct why *w = R->w;
	struct why_result *r = R->r;
	struct imap at;
	struct acc *acc = NULL;
	size_t nacc = 0, capacc = 0;
	int32_t *first_of_desc = xmalloc((w->ngrp + 1) * sizeof(*first_of_desc));
	for (size_t g = 0; g < w->ngrp; g++)
		first_of_desc[g] = -1;
	imap_init(&at);
	r->colls = xcalloc(R->ninst + 1, sizeof(*r->colls));
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
		const int32_t *kx = R->kidx + in->first;
		int64_t *arr = xmalloc((size_t)in->size * sizeof(*arr));
		int32_t lastm = 0, firstm = 0;
		int64_t second = INT64_MIN; /* the latest arrival but the last's */
		for (int32_t m = 0; m < in->size; m++) {
			const struct why_kernel *k = &w->kern[kx[m]];
			int32_t ri = why_rank_index(R, k->rank);
			arr[m] = k->start_ns - (ri >= 0 ? R->off[ri] : 0);
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
		c->first_rank = w->kern[kx[firstm]].rank;
		c->last_rank = w->kern[kx[lastm]].rank;
		c->transfer_ns = w->kern[kx[lastm]].dur_ns;
		int32_t cls = class_of(w, in->grp, first_of_desc);
		double p = 1.0 / in->size;
		for (int32_t m = 0; m < in->size; m++) {
			int32_t rank = w->kern[kx[m]].rank;
			int64_t key = (int64_t)((uint64_t)(uint32_t)rank << 24 | (uint32_t)cls);
			uint32_t *v = imap_ref(&at, key, (uint32_t)nacc);
			if (*v == nacc) {
				why_grow((void **)&acc, &capacc, nacc, sizeof(*acc));
				acc[nacc++] = (struct acc){ .rank = rank, .grp = in->grp };
			}
			struct acc *a = &acc[*v];
			a->instances++;
			a->times_last += m == lastm;
			a->last_by += m == lastm ? c->last_ns - second : 0;
			a->wait += c->last_ns - arr[m];
			a->chance += p;
			a->var += p * (1 - p);
		}
		free(arr);
	}
	rank_rows(R, acc, nacc);
	imap_release(&at);
	free(acc);
	free(first_of_desc);
}
