/* cmp.h — three-way comparisons for qsort(): -1, 0 or 1.
 *
 * A sort key of several fields is written once, most significant first,
 * as two arrays of the same length; the first pair that differs decides.
 * Integers take the int64 form (exact for every field we sort by), reals
 * the double form (an int field converts to double exactly).
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

#endif
