/* rank_metrics.c — the numbers of SPEC §6 for one rank, from attributed
 * kernels (contracts §2): per category count/sum/busy (with the two
 * recompute subset rows), per step start/end/wall/comp/comm/overlap, per rank
 * window/gpu_busy/idle/bubble/comp_busy/comm_busy/overlap/coverage, and the
 * generic-mode iteration windows.
 *
 * Every union goes through interval.h on one scratch array; kernels are
 * grouped by step with a counting sort, so the cost is O(n log n) overall.
 */
#include <string.h>

#include "arena.h"
#include "classify_priv.h"
#include "interval.h"
#include "pp.h"

static struct ivl kivl(const struct rr_kernel *k)
{
	struct ivl v = { k->start_ns, k->start_ns + k->dur_ns };
	return v;
}

/* Union of the kernels passing keep(); v is scratch of size n. */
static int64_t union_if(const struct rank_result *res, struct ivl *v,
			bool (*keep)(const struct rr_kernel *, const void *),
			const void *arg)
{
	size_t m = 0;
	for (size_t i = 0; i < res->nkernels; i++)
		if (keep(&res->kernels[i], arg))
			v[m++] = kivl(&res->kernels[i]);
	return ivl_union(v, m);
}

static bool keep_all(const struct rr_kernel *k, const void *arg)
{
	return true;
}

static bool keep_not_pp(const struct rr_kernel *k, const void *arg)
{
	return k->category != RR_PP_COMM;
}

static bool keep_type(const struct rr_kernel *k, const void *arg)
{
	return k->type == *(const uint8_t *)arg;
}

static bool keep_covered(const struct rr_kernel *k, const void *arg)
{
	bool generic = *(const bool *)arg;
	return generic ? !k->orphan : k->category != RR_OTHER;
}

static bool keep_category(const struct rr_kernel *k, const void *arg)
{
	int cat = *(const int *)arg;
	if (cat == RR_BWD_COMP_RECOMPUTE)
		return k->category == RR_BWD_COMP && k->recompute;
	if (cat == RR_BWD_COMM_RECOMPUTE)
		return k->category == RR_BWD_COMM && k->recompute;
	return k->category == cat;
}

static void rank_level(struct rank_result *res, struct ivl *v, struct ivl *w)
{
	if (!res->nkernels)
		return;
	res->has_window = true;
	res->window_start_ns = res->kernels[0].start_ns;
	res->window_end_ns = res->kernels[0].start_ns + res->kernels[0].dur_ns;
	for (size_t i = 1; i < res->nkernels; i++) {
		const struct rr_kernel *k = &res->kernels[i];
		if (k->start_ns < res->window_start_ns)
			res->window_start_ns = k->start_ns;
		if (k->start_ns + k->dur_ns > res->window_end_ns)
			res->window_end_ns = k->start_ns + k->dur_ns;
	}
	int64_t window = res->window_end_ns - res->window_start_ns;
	res->gpu_busy_ns = union_if(res, v, keep_all, NULL);
	res->idle_ns = window - res->gpu_busy_ns;
	res->bubble_ns = window - union_if(res, v, keep_not_pp, NULL);

	uint8_t comp = RR_COMP, comm = RR_COMM;
	size_t na = 0, nb = 0;
	for (size_t i = 0; i < res->nkernels; i++) {
		if (keep_type(&res->kernels[i], &comp))
			v[na++] = kivl(&res->kernels[i]);
		else if (keep_type(&res->kernels[i], &comm))
			w[nb++] = kivl(&res->kernels[i]);
	}
	na = ivl_merge(v, na);
	nb = ivl_merge(w, nb);
	res->comp_busy_ns = ivl_total(v, na);
	res->comm_busy_ns = ivl_total(w, nb);
	res->overlap_ns = ivl_overlap(v, na, w, nb);

	bool generic = res->mode == RR_GENERIC;
	int64_t covered = union_if(res, v, keep_covered, &generic);
	res->coverage = res->gpu_busy_ns
				? (double)covered / (double)res->gpu_busy_ns
				: 0.0;
}

static void categories(struct rank_result *res, struct ivl *v)
{
	for (int cat = 0; cat < RR_NCATEGORIES; cat++) {
		struct rr_category_stat *st = &res->categories[cat];
		memset(st, 0, sizeof(*st));
		for (size_t i = 0; i < res->nkernels; i++) {
			if (!keep_category(&res->kernels[i], &cat))
				continue;
			st->kernels++;
			st->sum_ns += res->kernels[i].dur_ns;
		}
		if (st->kernels)
			st->busy_ns = union_if(res, v, keep_category, &cat);
	}
}

/* Kernels that count in their step's metrics: not memory, not other. */
static bool counts_in_step(const struct rr_kernel *k)
{
	return k->step >= 0 && k->category != RR_MEMORY &&
	       k->category != RR_OTHER;
}

static int step_level(struct rank_result *res, struct ivl *v, struct ivl *w,
		      struct arena *a)
{
	size_t ns = res->nsteps;
	if (!ns)
		return 0;
	size_t *first = arena_calloc(a, ns + 1, sizeof(*first));
	uint32_t *order = arena_alloc(a, (res->nkernels + 1) * sizeof(*order));
	if (!first || !order)
		return PP_ENOMEM;
	for (size_t i = 0; i < res->nkernels; i++)
		if (counts_in_step(&res->kernels[i]))
			first[res->kernels[i].step + 1]++;
	for (size_t s = 0; s < ns; s++)
		first[s + 1] += first[s];
	size_t *fill = arena_alloc(a, (ns + 1) * sizeof(*fill));
	if (!fill)
		return PP_ENOMEM;
	memcpy(fill, first, (ns + 1) * sizeof(*fill));
	for (size_t i = 0; i < res->nkernels; i++)
		if (counts_in_step(&res->kernels[i]))
			order[fill[res->kernels[i].step]++] = (uint32_t)i;

	for (size_t s = 0; s < ns; s++) {
		struct rr_step *st = &res->steps[s];
		size_t na = 0, nb = 0;
		st->kernels = (int64_t)(first[s + 1] - first[s]);
		st->has_kernels = st->kernels > 0;
		for (size_t j = first[s]; j < first[s + 1]; j++) {
			const struct rr_kernel *k = &res->kernels[order[j]];
			int64_t end = k->start_ns + k->dur_ns;
			if (j == first[s] || k->start_ns < st->start_ns)
				st->start_ns = k->start_ns;
			if (j == first[s] || end > st->end_ns)
				st->end_ns = end;
			if (k->type == RR_COMM)
				w[nb++] = kivl(k);
			else
				v[na++] = kivl(k);
		}
		st->wall_ns = st->end_ns - st->start_ns;
		na = ivl_merge(v, na);
		nb = ivl_merge(w, nb);
		st->comp_ns = ivl_total(v, na);
		st->comm_ns = ivl_total(w, nb);
		st->overlap_ns = ivl_overlap(v, na, w, nb);
	}
	return 0;
}

static void iteration_level(struct rank_result *res, const int32_t *iter_of,
			    struct ivl *v)
{
	for (size_t it = 0; it < res->niterations; it++) {
		struct rr_iteration *r = &res->iterations[it];
		size_t m = 0;
		for (size_t i = 0; i < res->nkernels; i++) {
			const struct rr_kernel *k = &res->kernels[i];
			if (iter_of[i] != (int32_t)it)
				continue;
			int64_t end = k->start_ns + k->dur_ns;
			if (!m || k->start_ns < r->start_ns)
				r->start_ns = k->start_ns;
			if (!m || end > r->end_ns)
				r->end_ns = end;
			v[m++] = kivl(k);
		}
		r->kernels = (int64_t)m;
		r->has_kernels = m > 0;
		r->busy_ns = ivl_union(v, m);
	}
}

int rank_metrics_compute(struct rank_result *res, const int32_t *iter_of,
			 struct arena *a)
{
	struct ivl *v = arena_alloc(a, (res->nkernels + 1) * sizeof(*v));
	struct ivl *w = arena_alloc(a, (res->nkernels + 1) * sizeof(*w));
	if (!v || !w)
		return PP_ENOMEM;
	rank_level(res, v, w);
	categories(res, v);
	if (step_level(res, v, w, a) < 0)
		return PP_ENOMEM;
	iteration_level(res, iter_of, v);
	return 0;
}
