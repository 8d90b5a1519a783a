/* vec.h — a growable array of fixed-size elements (doubling; 4x once it
 * passes 1 MiB), on huge-page-backed blocks (hugepage.h): never one malloc
 * per element, and no copy of what it holds when a large block grows.
 *
 * Contract: elements are contiguous at v->data, v->n of them; a push may
 * move them, so pointers into the array live until the next push. Never
 * fails (out of memory ends the program, docs/contracts.md). An embedded
 * struct: vec_init() before use, vec_release() after (it may be reused).
 */
#ifndef PP_VEC_H
#define PP_VEC_H

#include <stddef.h>

struct vec {
	void *data;
	size_t n, cap, elem; /* elements held, room for, size of one */
};

/* An empty vec of elem-byte elements. */
void vec_init(struct vec *v, size_t elem);
/* Frees the elements; v is empty again, with the same element size. */
void vec_release(struct vec *v);
/* Room for at least one more element. */
void vec_grow(struct vec *v);

/* A pointer to a new element at the end, uninitialised: for rows that
 * are written whole on a hot path (a memset per row costs more than the
 * row). */
static inline void *vec_next(struct vec *v)
{
	if (v->n == v->cap)
		vec_grow(v);
	return (char *)v->data + v->n++ * v->elem;
}

/* A pointer to a new zeroed element at the end. */
void *vec_push(struct vec *v);

#define VEC_AT(v, type, i) (((type *)(v)->data)[i])

#endif
