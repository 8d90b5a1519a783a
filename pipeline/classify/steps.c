/* steps.c — root-most slices per pattern set (docs/semantics.md §5) and the
 * "launch lies inside slice" lookups (docs/contracts.md §1).
 *
 * Slices are sorted by (thread, ts, longer first, file order): an ancestor
 * then precedes its descendants, so one sweep keeping the current root of
 * the set tells whether a slice is root-most. Roots of one set on one thread
 * are disjoint when slices nest properly, so a lookup is a binary search for
 * the last root starting at or before the launch; roots_find_near() first
 * tries the root the previous lookup found, when it is provably the same
 * answer.
 */
#include <stdlib.h>

#include "classify_int.h"
#include "util/arena.h"
#include "util/pp.h"

static int cmp_slice(const void *pa, const void *pb)
{
	const struct cslice *a = pa, *b = pb;
	return cmp_nesting(a->thread, a->ts, a->dur, a->order, b->thread, b->ts, b->dur, b->order);
}

void steps_roots_of(struct classify *c, uint32_t bit, struct croots *r)
{
	const struct cslice *s = c->slices.data;
	size_t n = c->slices.n, k = 0;
	for (int pass = 0; pass < 2; pass++) {
		bool have = false;
		uint32_t th = 0;
		int64_t rts = 0, rend = 0;
		k = 0;
		for (size_t i = 0; i < n; i++) {
			if (!(s[i].bits & bit))
				continue;
			int64_t end = s[i].ts + s[i].dur;
			if (have && th == s[i].thread && s[i].ts >= rts && end <= rend)
				continue;
			have = true;
			th = s[i].thread;
			rts = s[i].ts;
			rend = end;
			if (pass) {
				struct croot *o = &r->v[k];
				o->ts = rts;
				o->end = rend;
				o->thread = th;
				o->name = s[i].name;
				o->order = s[i].order;
				o->step = -1;
			}
			k++;
		}
		if (!pass)
			r->v = arena_alloc(c->arena, (k ? k : 1) * sizeof(*r->v));
	}
	r->n = k;
}

void steps_find_roots(struct classify *c)
{
	if (c->slices.n)
		qsort(c->slices.data, c->slices.n, sizeof(struct cslice), cmp_slice);
	for (int set = 0; set < PAT_NSETS; set++) {
		uint32_t bit = 1u << set;
		if (!(bit & NB_SLICE_SETS)) {
			c->roots[set].v = NULL;
			c->roots[set].n = 0;
			continue;
		}
		steps_roots_of(c, bit, &c->roots[set]);
	}
	steps_roots_of(c, NB_PROFSTEP, &c->profsteps);
}

/* Whether root m sorts after (thread, ts): the binary search's order. */
static inline bool root_after(const struct croot *m, uint32_t thread, int64_t ts)
{
	return thread == UINT32_MAX ? m->ts > ts
				    : m->thread > thread || (m->thread == thread && m->ts > ts);
}

long roots_find(const struct croots *r, uint32_t thread, int64_t ts)
{
	size_t lo = 0, hi = r->n; /* first root after (thread, ts) */
	if (!r->n)
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (root_after(&r->v[mid], thread, ts))
			hi = mid;
		else
			lo = mid + 1;
	}
	/* Look back a little: with improperly nested input an earlier root
	 * may still cover ts. */
	for (size_t i = lo, tries = 0; i > 0 && tries < 4; i--, tries++) {
		const struct croot *m = &r->v[i - 1];
		if (thread != UINT32_MAX && m->thread != thread)
			break;
		if (m->ts <= ts && ts <= m->end)
			return (long)(i - 1);
	}
	return -1;
}

long roots_find_near(const struct croots *r, uint32_t thread, int64_t ts, size_t *hint)
{
	size_t i = *hint;
	/* i contains ts on thread, so it does not sort after (thread, ts); if
	 * i + 1 does, the search would stop at lo = i + 1 and its look-back
	 * would return i, the first root it tries. */
	if (i < r->n) {
		const struct croot *m = &r->v[i];
		if ((thread == UINT32_MAX || m->thread == thread) && m->ts <= ts && ts <= m->end &&
		    (i + 1 == r->n || root_after(&r->v[i + 1], thread, ts)))
			return (long)i;
	}
	long f = roots_find(r, thread, ts);
	if (f >= 0)
		*hint = (size_t)f;
	return f;
}
