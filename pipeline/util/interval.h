/* interval.h — unions and overlaps of half-open time intervals [s, e) in
 * int64 nanoseconds: the arithmetic behind every metric of docs/semantics.md §6.
 *
 * union(S) = total length covered by at least one interval;
 * overlap(A, B) = length of union(A) ∩ union(B).
 */
#ifndef INTERVAL_H
#define INTERVAL_H

#include <stddef.h>
#include <stdint.h>

struct ivl {
	int64_t s, e; /* s <= e; empty when equal */
};

/* Sorts v by start and merges it in place into disjoint, sorted, non-empty
 * intervals; returns their count k (v[0..k) holds them). */
size_t ivl_merge(struct ivl *v, size_t n);
/* Total length of disjoint intervals (as produced by ivl_merge). */
int64_t ivl_total(const struct ivl *merged, size_t k);
/* Convenience: ivl_total(v, ivl_merge(v, n)); reorders v. */
int64_t ivl_union(struct ivl *v, size_t n);
/* Length of the intersection of two merged lists (linear sweep). */
int64_t ivl_overlap(const struct ivl *a, size_t na, const struct ivl *b, size_t nb);

#endif
