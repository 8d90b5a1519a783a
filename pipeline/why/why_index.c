/* why_index.c — what every part of the why engine looks rows up by
 * (why_int.h): the ranks and their places, the iterations, which ranks
 * have a trace and ops in each; and the growable arrays the parts share.
 */
#include <stdlib.h>
#include <string.h>

#include "util/cmp.h"
#include "util/hugepage.h"
#include "util/pp.h"
#include "why.h"
#include "why_int.h"

void why_grow(void **v, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return;
	*cap = *cap ? 2 * *cap : 256;
	if (*cap <= n)
		*cap = n + 1;
	*v = xrealloc(*v, *cap * sz);
	hugepage_advise(*v, *cap * sz);
}

void *why_big(size_t n, bool zero)
{
	void *p = zero ? xcalloc(n ? n : 1, 1) : xmalloc(n ? n : 1);
	hugepage_advise(p, n);
	return p;
}

static int cmp_rank(const void *a, const void *b)
{
	const struct why_rank *x = a, *y = b;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

int32_t why_iter_index(const struct wrun *R, int64_t it)
{
	return (int32_t)cmp_floor_i64(R->iters, R->niters, it);
}

int32_t why_rank_index(const struct wrun *R, int32_t rank)
{
	if (rank >= 0 && rank < R->nlut)
		return R->rank_lut[rank];
	uint32_t v = imap_get(&R->rank_idx, rank);
	return v == IMAP_EMPTY ? -1 : (int32_t)v;
}

bool why_has_trace(const struct wrun *R, int32_t ii, int32_t rank)
{
	return imap_get(&R->trace_of, why_key(ii, rank)) != IMAP_EMPTY;
}

/* The ranks (sorted, each once: the first place given wins) and every
 * iteration any row names. */
void why_index_rows(struct wrun *R)
{
	struct why *w = R->w;
	R->rk = xmalloc((w->nrank + 1) * sizeof(*R->rk));
	/* Stable: keep the first place of a rank given twice. */
	for (size_t i = 0; i < w->nrank; i++)
		R->rk[i] = w->rank[i];
	size_t n = 0;
	imap_init(&R->rank_idx);
	for (size_t i = 0; i < w->nrank; i++) {
		uint32_t *v = imap_ref(&R->rank_idx, R->rk[i].rank, (uint32_t)n);
		if (*v == n)
			R->rk[n++] = w->rank[i];
	}
	R->nrk = n;
	qsort(R->rk, n, sizeof(*R->rk), cmp_rank);
	imap_release(&R->rank_idx);
	imap_init(&R->rank_idx);
	imap_init(&R->place);
	/* Ranks are usually 0 .. world - 1: a table for those. */
	R->nlut = n && R->rk[n - 1].rank >= 0 && (size_t)R->rk[n - 1].rank < 4 * n + 1024
			  ? R->rk[n - 1].rank + 1
			  : 0;
	R->rank_lut = xmalloc(((size_t)R->nlut + 1) * sizeof(*R->rank_lut));
	for (int32_t k = 0; k < R->nlut; k++)
		R->rank_lut[k] = -1;
	for (size_t i = 0; i < n; i++) {
		if (R->rk[i].rank >= 0 && R->rk[i].rank < R->nlut)
			R->rank_lut[R->rk[i].rank] = (int32_t)i;
		*imap_ref(&R->rank_idx, R->rk[i].rank, (uint32_t)i) = (uint32_t)i;
		if (R->rk[i].stage >= 0 && R->rk[i].stage < R->P && R->rk[i].pp_group >= 0)
			imap_ref(&R->place, (int64_t)R->rk[i].pp_group * R->P + R->rk[i].stage,
				 (uint32_t)R->rk[i].rank);
	}
	/* The iterations: few, each over long runs of rows. */
	size_t cap = 16, k = 0;
	int64_t *it = xmalloc(cap * sizeof(*it));
	for (int part = 0; part < 3; part++) {
		size_t rows = part == 0 ? w->ntrace : part == 1 ? w->nop : w->nkern;
		for (size_t i = 0; i < rows; i++) {
			int64_t x = part == 0   ? w->trace[i].iteration
				    : part == 1 ? w->op[i].iteration
						: w->kern[i].iteration;
			if (k && it[k - 1] == x)
				continue;
			bool seen = false;
			for (size_t j = 0; j < k && !seen; j++)
				seen = it[j] == x;
			if (seen)
				continue;
			PP_GROW(it, k, cap, 16);
			it[k++] = x;
		}
	}
	qsort(it, k, sizeof(*it), cmp_i64);
	R->iters = it;
	R->niters = k;
	imap_init(&R->trace_of);
	imap_init(&R->has_ops);
	for (size_t i = 0; i < w->ntrace; i++)
		imap_ref(&R->trace_of,
			 why_key(why_iter_index(R, w->trace[i].iteration), w->trace[i].rank),
			 (uint32_t)i);
	for (size_t i = 0; i < w->nop; i++)
		if (!i || w->op[i].iteration != w->op[i - 1].iteration ||
		    w->op[i].rank != w->op[i - 1].rank)
			imap_ref(&R->has_ops,
				 why_key(why_iter_index(R, w->op[i].iteration), w->op[i].rank), 1);
}
