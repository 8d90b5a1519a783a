/* interval.c — see interval.h. Sorting is the only superlinear step. */
#include "interval.h"

#include <stdlib.h>

static int cmp_start(const void *pa, const void *pb)
{
	const struct ivl *a = pa, *b = pb;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return (a->e > b->e) - (a->e < b->e);
}

size_t ivl_merge(struct ivl *v, size_t n)
{
	size_t k = 0;
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_start);
	for (size_t i = 0; i < n; i++) {
		if (v[i].e <= v[i].s)
			continue;
		if (k && v[i].s <= v[k - 1].e) {
			if (v[i].e > v[k - 1].e)
				v[k - 1].e = v[i].e;
		} else {
			v[k++] = v[i];
		}
	}
	return k;
}

int64_t ivl_total(const struct ivl *merged, size_t k)
{
	int64_t t = 0;
	for (size_t i = 0; i < k; i++)
		t += merged[i].e - merged[i].s;
	return t;
}

int64_t ivl_union(struct ivl *v, size_t n)
{
	return ivl_total(v, ivl_merge(v, n));
}

int64_t ivl_overlap(const struct ivl *a, size_t na, const struct ivl *b, size_t nb)
{
	size_t i = 0, j = 0;
	int64_t t = 0;
	while (i < na && j < nb) {
		int64_t s = a[i].s > b[j].s ? a[i].s : b[j].s;
		int64_t e = a[i].e < b[j].e ? a[i].e : b[j].e;
		if (e > s)
			t += e - s;
		if (a[i].e < b[j].e)
			i++;
		else
			j++;
	}
	return t;
}
