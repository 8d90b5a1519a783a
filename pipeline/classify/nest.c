/* nest.c — the innermost of properly nested slices that holds a time: the
 * CPU user annotation and the CPU range naming a collective of a launch, the
 * gpu_user_annotation ranges of a kernel (docs/classification.md).
 *
 * The slices are sorted in nesting order (thread, start, the longer first,
 * file order: an ancestor precedes what it encloses) and one sweep with a
 * stack gives each its parent. A lookup finds the last slice of the thread
 * starting at or before the time (binary search) and walks up its parents
 * until one holds the time: with proper nesting that is the innermost, and
 * the walk is at most the depth. Unlike roots_find(), siblings before the
 * time are never looked at, so a range with many children costs nothing.
 */
#include <stdlib.h>

#include "classify_int.h"

static int cmp_nslice(const void *pa, const void *pb)
{
	const struct nslice *a = pa, *b = pb;
	return cmp_nesting(a->thread, a->ts, a->end - a->ts, a->order, b->thread, b->ts,
			   b->end - b->ts, b->order);
}

void nest_build(struct vec *v, struct nest *n)
{
	n->v = v->data;
	n->n = v->n;
	if (!n->n)
		return;
	qsort(n->v, n->n, sizeof(*n->v), cmp_nslice);
	/* The stack is the chain of parents of the last slice: walk it up to
	 * the first that encloses the next one (same thread, its end not
	 * before the next one's end). */
	int32_t top = -1;
	for (size_t i = 0; i < n->n; i++) {
		struct nslice *s = &n->v[i];
		while (top >= 0 && (n->v[top].thread != s->thread || n->v[top].end < s->end))
			top = n->v[top].parent;
		s->parent = top;
		top = (int32_t)i;
	}
}

long nest_find(const struct nest *n, uint32_t thread, int64_t ts, bool half_open)
{
	size_t lo = 0, hi = n->n; /* the first slice after (thread, ts) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct nslice *m = &n->v[mid];
		if (m->thread > thread || (m->thread == thread && m->ts > ts))
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!lo || n->v[lo - 1].thread != thread)
		return -1;
	for (long i = (long)lo - 1; i >= 0; i = n->v[i].parent)
		if (nest_holds(&n->v[i], ts, half_open))
			return i;
	return -1;
}
