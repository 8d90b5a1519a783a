/* arena.c — bump allocator; see arena.h. Blocks form a singly linked list;
 * allocations never move, so pointers stay valid until arena_release(). */
#include "arena.h"
#include "hugepage.h"
#include "pp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
	struct arena_block *next;
	size_t size; /* usable bytes after the header */
	size_t off;  /* bytes used */
	_Alignas(16) unsigned char data[];
};

#define MIN_BLOCK ((size_t)64 * 1024)
#define MAX_BLOCK ((size_t)64 * 1024 * 1024)

struct arena_owned {
	struct arena_owned *next;
	void *p;
	size_t n;
};

void arena_init(struct arena *a)
{
	a->head = NULL;
	a->used = 0;
	a->reserved = 0;
	a->owned = NULL;
}

void arena_release(struct arena *a)
{
	for (struct arena_owned *o = a->owned; o; o = o->next)
		hugepage_free(o->p, o->n); /* the nodes themselves live in the blocks */
	struct arena_block *b = a->head;
	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	arena_init(a);
}

void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_block *b = a->head;
	n = (n + 15) & ~(size_t)15;
	if (!n)
		n = 16;
	if (!b || b->size - b->off < n) {
		size_t size = b ? b->size * 2 : MIN_BLOCK;
		if (size > MAX_BLOCK)
			size = MAX_BLOCK;
		if (size < n)
			size = n;
		if (size > SIZE_MAX - sizeof(*b))
			die("out of memory allocating %zu bytes", n);
		b = xmalloc(sizeof(*b) + size);
		hugepage_advise(b, sizeof(*b) + size);
		b->size = size;
		b->off = 0;
		b->next = a->head;
		a->head = b;
		a->reserved += size;
	}
	void *p = b->data + b->off;
	b->off += n;
	a->used += n;
	return p;
}

void *arena_calloc(struct arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		die("out of memory allocating %zu x %zu bytes", n, size);
	void *p = arena_alloc(a, n * size);
	memset(p, 0, n * size);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		die("out of memory allocating %zu bytes", n);
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void arena_adopt(struct arena *a, void *p, size_t n)
{
	struct arena_owned *o = arena_alloc(a, sizeof(*o));
	o->p = p;
	o->n = n;
	o->next = a->owned;
	a->owned = o;
	a->reserved += n;
	a->used += n;
}
