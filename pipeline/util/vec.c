/* vec.c — the growable array of vec.h. */
#include "vec.h"

#include <string.h>

#include "hugepage.h"

void vec_init(struct vec *v, size_t elem)
{
	v->data = NULL;
	v->n = v->cap = 0;
	v->elem = elem;
}

void vec_release(struct vec *v)
{
	hugepage_free(v->data, v->cap * v->elem);
	vec_init(v, v->elem);
}

/* Large vectors grow 4x: fewer reallocs that move; untouched capacity is
 * not resident. */
void vec_grow(struct vec *v)
{
	size_t cap = !v->cap ? 256 : v->cap * v->elem >= (1u << 20) ? v->cap * 4 : v->cap * 2;
	v->data = hugepage_realloc(v->data, v->cap * v->elem, v->n * v->elem, cap * v->elem);
	v->cap = cap;
}

void *vec_push(struct vec *v)
{
	void *p = vec_next(v);
	memset(p, 0, v->elem);
	return p;
}
