/* rank_metrics.c — the numbers of docs/semantics.md §6 for one rank, from attributed
 * kernels (docs/contracts.md §2): per category count/sum/busy (with the two
 * recompute subset rows), per step start/end/wall/comp/comm/overlap, per rank
 * window/gpu_busy/idle/bubble/comp_busy/comm_busy/overlap/coverage, and the
 * iteration windows; and the per-rank part alone for the importers'
 * intervals (rank_metrics_totals(), rank_metrics.h).
 *
 * Design: the kernels are sorted once by start (LSD radix sort on the offset
 * from the earliest start, skipped when the file had them in order), then
 * one sweep feeds every interval into the
 * union accumulators it belongs to (rank-wide, per category, per step, per
 * iteration). An accumulator fed in start order computes a union in O(1) per
 * interval; overlap(A, B) = |A| + |B| - |A ∪ B|. So the cost is linear after
 * the sort, whatever the number of steps and categories. The rank-wide
 * accumulators (struct totals) are the same for kernels and for imported
 * intervals: what differs is only which RM_* kinds a source gives.
 */
#include <stdlib.h>
#include <string.h>

#include "classify_int.h"
#include "rank_metrics.h"
#include "util/arena.h"
#include "util/pp.h"

/* Union of half-open intervals fed in non-decreasing start order: total
 * over the closed runs, [s, e) the open one. Empty, s = e = INT64_MIN (a
 * run of length 0 that any interval starts after): no flag to test per
 * interval. */
struct acc {
	int64_t s, e, total;
};

static void acc_init(struct acc *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a[i] = (struct acc){ INT64_MIN, INT64_MIN, 0 };
}

static void acc_add(struct acc *a, int64_t s, int64_t e)
{
	if (e <= s)
		return;
	if (s <= a->e) {
		if (e > a->e)
			a->e = e;
		return;
	}
	a->total += a->e - a->s;
	a->s = s;
	a->e = e;
}

static int64_t acc_total(const struct acc *a)
{
	return a->total + (a->e - a->s);
}

/* The whole-rank metrics: the window and the unions of every interval, of
 * all but the pipeline sends/receives (bubble), of comp, of comm, of both
 * (overlap) and of the covered ones; fed in start order. */
struct totals {
	struct acc all, not_pp, comp, comm, both, covered;
	int64_t start, end; /* the window, when n > 0 */
	size_t n;
};

static void totals_init(struct totals *t)
{
	memset(t, 0, sizeof(*t));
	acc_init(&t->all, 1);
	acc_init(&t->not_pp, 1);
	acc_init(&t->comp, 1);
	acc_init(&t->comm, 1);
	acc_init(&t->both, 1);
	acc_init(&t->covered, 1);
	t->start = INT64_MAX;
	t->end = INT64_MIN;
}

/* What an interval counts in comes as flags, not RM_* bits: the kernel
 * sweep's inline call then tests the kernel's fields directly (building and
 * decoding bits cost it 16 to 27 instructions per GPU event, callgrind). */
static inline void totals_add(struct totals *t, int64_t s, int64_t e, bool pp, bool comp, bool comm,
			      bool covered)
{
	t->n++;
	if (s < t->start)
		t->start = s;
	if (e > t->end)
		t->end = e;
	acc_add(&t->all, s, e);
	if (!pp)
		acc_add(&t->not_pp, s, e);
	if (comp)
		acc_add(&t->comp, s, e);
	if (comm)
		acc_add(&t->comm, s, e);
	if (comp || comm)
		acc_add(&t->both, s, e);
	if (covered)
		acc_add(&t->covered, s, e);
}

static void totals_finish(const struct totals *t, struct rank_result *res)
{
	res->has_window = t->n > 0;
	res->window_start_ns = t->n ? t->start : 0;
	res->window_end_ns = t->n ? t->end : 0;
	int64_t window = res->window_end_ns - res->window_start_ns;
	res->gpu_busy_ns = acc_total(&t->all);
	res->idle_ns = window - res->gpu_busy_ns;
	res->bubble_ns = window - acc_total(&t->not_pp);
	res->comp_busy_ns = acc_total(&t->comp);
	res->comm_busy_ns = acc_total(&t->comm);
	res->overlap_ns = res->comp_busy_ns + res->comm_busy_ns - acc_total(&t->both);
	res->coverage =
		res->gpu_busy_ns ? (double)acc_total(&t->covered) / (double)res->gpu_busy_ns : 0.0;
}

static int cmp_interval(const void *pa, const void *pb)
{
	const struct rm_interval *a = pa, *b = pb;
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

void rank_metrics_totals(struct rm_interval *v, size_t n, struct rank_result *res)
{
	struct totals t;
	size_t i = 1;
	totals_init(&t);
	while (i < n && v[i - 1].start_ns <= v[i].start_ns)
		i++;
	if (i < n)
		qsort(v, n, sizeof(*v), cmp_interval);
	for (i = 0; i < n; i++)
		totals_add(&t, v[i].start_ns, v[i].end_ns, v[i].kind & RM_PP, v[i].kind & RM_COMP,
			   v[i].kind & RM_COMM, v[i].kind & RM_COVERED);
	totals_finish(&t, res);
}

/* Sorts idx[0..n) by key (LSD radix, 11-bit digits, as many passes as the
 * largest key needs), ping-ponging with the scratch arrays. Returns the
 * array that holds the sorted indices (idx or tidx). */
static uint32_t *radix_sort(uint64_t *key, uint32_t *idx, uint64_t *tkey, uint32_t *tidx, size_t n)
{
	uint64_t max = 0;
	for (size_t i = 0; i < n; i++)
		if (key[i] > max)
			max = key[i];
	for (unsigned shift = 0; shift < 64 && (max >> shift); shift += 11) {
		size_t count[2049] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[((key[i] >> shift) & 2047) + 1]++;
		for (size_t d = 0; d < 2048; d++)
			count[d + 1] += count[d];
		for (size_t i = 0; i < n; i++) {
			size_t d = count[(key[i] >> shift) & 2047]++;
			tkey[d] = key[i];
			tidx[d] = idx[i];
		}
		uint64_t *k = key;
		uint32_t *x = idx;
		key = tkey;
		idx = tidx;
		tkey = k;
		tidx = x;
	}
	return idx;
}

/* Kernels that count in their step's metrics: not memory, not other. */
static bool counts_in_step(const struct rr_kernel *k)
{
	return k->step >= 0 && k->category != RR_MEMORY && k->category != RR_OTHER;
}

struct sweep {
	struct totals rank;
	struct acc cat[RR_NCATEGORIES];
	struct acc *step; /* 3 per step: comp, comm, both */
	struct acc *iter; /* 1 per iteration */
	const struct ann_members *ann;
	struct acc *anns; /* 4 per annotation: all, comp, comm, both */
};

/* Kernel i's share of its annotations' metrics. */
static void feed_annotations(struct sweep *w, struct rank_result *res, size_t i, int64_t s,
			     int64_t e)
{
	const struct rr_kernel *k = &res->kernels[i];
	for (uint32_t j = w->ann->first[i]; j < w->ann->first[i + 1]; j++) {
		struct acc *aa = &w->anns[4 * w->ann->idx[j]];
		res->annotations[w->ann->idx[j]].kernels++;
		acc_add(&aa[0], s, e);
		if (k->type == RR_MEM)
			continue;
		acc_add(&aa[k->type == RR_COMM ? 2 : 1], s, e);
		acc_add(&aa[3], s, e);
	}
}

static void feed(struct sweep *w, struct rank_result *res, size_t i, int32_t iter)
{
	const struct rr_kernel *k = &res->kernels[i];
	int64_t s = k->start_ns, e = k->start_ns + k->dur_ns;
	bool generic = res->mode == RR_GENERIC;

	/* the whole-rank metrics: by type (mem in neither), pp_communication
	 * out of the bubble, coverage (docs/contracts.md §2: not `other`;
	 * generic mode: not an orphan) */
	totals_add(&w->rank, s, e, k->category == RR_PP_COMM, k->type == RR_COMP,
		   k->type == RR_COMM, generic ? !k->orphan : k->category != RR_OTHER);
	acc_add(&w->cat[k->category], s, e);
	if (k->recompute && k->category == RR_BWD_COMP)
		acc_add(&w->cat[RR_BWD_COMP_RECOMPUTE], s, e);
	if (k->recompute && k->category == RR_BWD_COMM)
		acc_add(&w->cat[RR_BWD_COMM_RECOMPUTE], s, e);
	if (counts_in_step(k)) {
		struct acc *sa = &w->step[3 * k->step];
		struct rr_step *st = &res->steps[k->step];
		acc_add(&sa[k->type == RR_COMM ? 1 : 0], s, e);
		acc_add(&sa[2], s, e);
		if (!st->kernels || s < st->start_ns)
			st->start_ns = s;
		if (!st->kernels || e > st->end_ns)
			st->end_ns = e;
		st->kernels++;
	}
	if (iter >= 0) {
		struct rr_iteration *it = &res->iterations[iter];
		acc_add(&w->iter[iter], s, e);
		if (!it->kernels || s < it->start_ns)
			it->start_ns = s;
		if (!it->kernels || e > it->end_ns)
			it->end_ns = e;
		it->kernels++;
	}
	if (w->ann)
		feed_annotations(w, res, i, s, e);
}

static void categories(struct rank_result *res, const struct sweep *w)
{
	memset(res->categories, 0, sizeof(res->categories));
	for (size_t i = 0; i < res->nkernels; i++) {
		const struct rr_kernel *k = &res->kernels[i];
		struct rr_category_stat *st = &res->categories[k->category];
		st->kernels++;
		st->sum_ns += k->dur_ns;
		if (k->recompute && (k->category == RR_BWD_COMP || k->category == RR_BWD_COMM)) {
			st = &res->categories[k->category == RR_BWD_COMP ? RR_BWD_COMP_RECOMPUTE
									 : RR_BWD_COMM_RECOMPUTE];
			st->kernels++;
			st->sum_ns += k->dur_ns;
		}
	}
	for (int c = 0; c < RR_NCATEGORIES; c++)
		res->categories[c].busy_ns = acc_total(&w->cat[c]);
}

static void totals(struct rank_result *res, const struct sweep *w)
{
	totals_finish(&w->rank, res);
	for (size_t s = 0; s < res->nsteps; s++) {
		struct rr_step *st = &res->steps[s];
		const struct acc *sa = &w->step[3 * s];
		st->has_kernels = st->kernels > 0;
		if (!st->has_kernels)
			st->start_ns = st->end_ns = 0;
		st->wall_ns = st->end_ns - st->start_ns;
		st->comp_ns = acc_total(&sa[0]);
		st->comm_ns = acc_total(&sa[1]);
		st->overlap_ns = st->comp_ns + st->comm_ns - acc_total(&sa[2]);
	}
	for (size_t i = 0; i < res->niterations; i++) {
		res->iterations[i].has_kernels = res->iterations[i].kernels > 0;
		res->iterations[i].busy_ns = acc_total(&w->iter[i]);
	}
	for (size_t i = 0; w->ann && i < w->ann->nann; i++) {
		struct rr_annotation *an = &res->annotations[i];
		const struct acc *aa = &w->anns[4 * i];
		an->gpu_ns = acc_total(&aa[0]);
		an->comp_ns = acc_total(&aa[1]);
		an->comm_ns = acc_total(&aa[2]);
		an->overlap_ns = an->comp_ns + an->comm_ns - acc_total(&aa[3]);
	}
}

void rank_metrics_compute(struct rank_result *res, const int32_t *iter_of,
			  const struct ann_members *ann, struct arena *a)
{
	size_t n = res->nkernels;
	struct sweep w;
	memset(&w, 0, sizeof(w));
	totals_init(&w.rank);
	acc_init(w.cat, RR_NCATEGORIES);
	w.step = arena_alloc(a, (3 * res->nsteps + 1) * sizeof(*w.step));
	w.iter = arena_alloc(a, (res->niterations + 1) * sizeof(*w.iter));
	acc_init(w.step, 3 * res->nsteps);
	acc_init(w.iter, res->niterations);
	if (ann && ann->nann) {
		w.ann = ann;
		w.anns = arena_alloc(a, 4 * ann->nann * sizeof(*w.anns));
		acc_init(w.anns, 4 * ann->nann);
	}
	for (size_t s = 0; s < res->nsteps; s++)
		res->steps[s].kernels = 0;
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = res->kernels[i - 1].start_ns <= res->kernels[i].start_ns;
	if (sorted) {
		for (size_t i = 0; i < n; i++)
			feed(&w, res, i, iter_of[i]);
	} else {
		uint64_t *key = arena_alloc(a, 2 * n * sizeof(*key));
		uint32_t *idx = arena_alloc(a, 2 * n * sizeof(*idx));
		int64_t first = res->kernels[0].start_ns;
		for (size_t i = 1; i < n; i++)
			if (res->kernels[i].start_ns < first)
				first = res->kernels[i].start_ns;
		for (size_t i = 0; i < n; i++) {
			key[i] = (uint64_t)(res->kernels[i].start_ns - first);
			idx[i] = (uint32_t)i;
		}
		idx = radix_sort(key, idx, key + n, idx + n, n);
		for (size_t i = 0; i < n; i++)
			feed(&w, res, idx[i], iter_of[idx[i]]);
	}
	categories(res, &w);
	totals(res, &w);
}
