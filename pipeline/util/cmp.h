/* cmp.h — three-way comparisons for qsort(): -1, 0 or 1.
 *
 * A sort key of several fields is written once, most significant first,
 * as two arrays of the same length; the first pair that differs decides.
 * Integers take the int64 form (exact for every field we sort by), reals
 * the double form (an int field converts to double exactly).
 *
 * The comparators of plain arrays (cmp.c) are the ones qsort() and
 * bsearch() take for an array of int (int32_t is int), int64_t or double:
 * ascending; two NaNs, or a NaN and a number, compare equal.
 */
#ifndef CMP_H
#define CMP_H

#include <stddef.h>
#include <stdint.h>

static inline int cmp_i64s(const int64_t *a, const int64_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static inline int cmp_f64s(const double *a, const double *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* Binary search in v[0..n), ascending: the index of the last value <= x;
 * 0 when there is none (x below v[0], or n == 0). */
static inline size_t cmp_floor_i64(const int64_t *v, size_t n, int64_t x)
{
	size_t lo = 0, hi = n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (v[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int cmp_int(const void *a, const void *b);
int cmp_i64(const void *a, const void *b);
int cmp_double(const void *a, const void *b);

/* The median of v[0..n), the mean of the middle two for an even n; sorts v
 * (cmp_double). NaN for none. */
double cmp_median(double *v, size_t n);
/* The q-quantile (0 <= q <= 1) of the sorted v[0..n), n > 0: linear
 * between the order statistics around q·(n - 1). */
double cmp_quantile(const double *v, size_t n, double q);

#endif
