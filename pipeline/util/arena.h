/* arena.h — a bump allocator for everything derived from one trace.
 *
 * A worker allocates all per-trace state from one arena and drops it in one
 * call after the trace's transaction commits: no per-object free(). Memory is
 * taken from malloc in blocks that double up to 64 MiB. Like every
 * allocation of ours, a failed one ends the process (docs/contracts.md).
 */
#ifndef ARENA_H
#define ARENA_H

#include <stddef.h>

struct arena {
	struct arena_block *head;  /* newest block first */
	size_t used;               /* bytes handed out, for statistics */
	size_t reserved;           /* bytes taken from malloc */
	struct arena_owned *owned; /* adopted malloc blocks (arena_adopt) */
};

#define ARENA_INIT               \
	{                        \
		NULL, 0, 0, NULL \
	}

void arena_init(struct arena *a);
/* Frees every block; the arena is empty and reusable afterwards. */
void arena_release(struct arena *a);
/* n bytes aligned to 16 (never NULL, also for n = 0). */
void *arena_alloc(struct arena *a, size_t n);
/* Zeroed arena_alloc. */
void *arena_calloc(struct arena *a, size_t n, size_t size);
/* A NUL-terminated copy of s[0..n). */
char *arena_strndup(struct arena *a, const char *s, size_t n);
/* Takes ownership of p (a block of n bytes from hugepage_realloc(), e.g. a
 * vector grown while streaming): arena_release() frees it. Saves copying a
 * large array into the arena. */
void arena_adopt(struct arena *a, void *p, size_t n);

#endif
