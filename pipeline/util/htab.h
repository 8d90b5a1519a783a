/* htab.h — small hashing helpers for the classifier's hot path: a fast
 * 64-bit hash of bytes, and an open-addressing map from int64 keys to
 * uint32 values (linear probing, power-of-two capacity, heap-allocated and
 * grown by doubling: never per-event allocation; allocation failure ends
 * the process, docs/contracts.md).
 */
#ifndef HTAB_H
#define HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A well-mixed 64-bit hash of p[0..n), reading 8 bytes at a time. */
uint64_t pp_hash_bytes(const void *p, size_t n, uint64_t seed);
/* A well-mixed 64-bit hash of one integer. */
uint64_t pp_hash_u64(uint64_t x);

struct imap {
	int64_t *keys;
	uint32_t *vals; /* IMAP_EMPTY marks a free slot */
	size_t cap, n;  /* cap is 0 or a power of two */
};

#define IMAP_EMPTY UINT32_MAX

void imap_init(struct imap *m);
void imap_release(struct imap *m);
/* The value stored for key, or IMAP_EMPTY. */
uint32_t imap_get(const struct imap *m, int64_t key);
/* A pointer to key's value, inserting init when key is absent. Valid until
 * the next insertion. */
uint32_t *imap_ref(struct imap *m, int64_t key, uint32_t init);

/* Correlation ids → uint32: CUPTI numbers API calls with a counter, so the
 * ids of one trace are dense. Ids within a growing window above the first id
 * seen go to a direct array (sequential, cache-friendly); others (far away,
 * below it, or sparse) fall back to an imap. Same contract as imap. */
struct cmap {
	int64_t base;    /* the first id seen */
	uint32_t *dense; /* dense[id - base], IMAP_EMPTY = absent */
	size_t cap;      /* slots in dense */
	size_t n;        /* ids stored (dense + sparse) */
	bool has_base;
	struct imap sparse;
};

void cmap_init(struct cmap *m);
void cmap_release(struct cmap *m);
uint32_t cmap_get(const struct cmap *m, int64_t key);
uint32_t *cmap_ref_slow(struct cmap *m, int64_t key, uint32_t init);

/* Whether key's place is the dense array: cmap_get() looks only there for
 * it, so cmap_ref() must put it there. */
static inline bool cmap_in_dense(const struct cmap *m, int64_t key)
{
	return m->has_base && key >= m->base && (uint64_t)key - (uint64_t)m->base < m->cap;
}

/* cmap_ref() of the id at dense[off]. */
static inline uint32_t *cmap_dense_ref(struct cmap *m, uint64_t off, uint32_t init)
{
	uint32_t *v = &m->dense[off];
	if (*v == IMAP_EMPTY) {
		*v = init;
		m->n++;
	}
	return v;
}

/* A pointer to key's value, inserting init when key is absent (as
 * imap_ref()); inline for an id inside the dense array, one per launch. */
static inline uint32_t *cmap_ref(struct cmap *m, int64_t key, uint32_t init)
{
	if (cmap_in_dense(m, key))
		return cmap_dense_ref(m, (uint64_t)key - (uint64_t)m->base, init);
	return cmap_ref_slow(m, key, init);
}

/* A table of uint32 indices (+1, 0 = free) keyed by 64-bit hashes, for
 * interning things the caller keeps (in an array) and compares: make room
 * with itab_reserve(), then itab_find() and, when absent, itab_put(); or
 * itab_intern() for all three. */
struct itab {
	uint32_t *slot;
	uint32_t *hash32; /* low 32 bits of each slot's hash, to skip compares */
	size_t cap, n;
};

void itab_init(struct itab *t);
void itab_release(struct itab *t);
/* Grows the table when it is more than half full.
 * rehash(ctx, idx) must return the full hash of entry idx. */
void itab_grow(struct itab *t, uint64_t (*rehash)(void *ctx, uint32_t idx), void *ctx);
static inline void itab_reserve(struct itab *t, uint64_t (*rehash)(void *ctx, uint32_t idx),
				void *ctx)
{
	if ((t->n + 1) * 2 > t->cap)
		itab_grow(t, rehash, ctx);
}
/* The entry of hash h that eq(ctx, idx) accepts (asked only about entries
 * whose hash matches in its low 32 bits): its index, or -1. Then *slot is
 * the free slot where an entry of hash h goes (itab_put()). The table must
 * have room: itab_reserve() first. */
static inline long itab_find(const struct itab *t, uint64_t h,
			     bool (*eq)(const void *ctx, uint32_t idx), const void *ctx,
			     size_t *slot)
{
	size_t mask = t->cap - 1, i = h & mask;
	for (; t->slot[i]; i = (i + 1) & mask)
		if (t->hash32[i] == (uint32_t)h && eq(ctx, t->slot[i] - 1))
			return (long)(t->slot[i] - 1);
	*slot = i;
	return -1;
}
/* Stores entry idx of hash h in the slot itab_find() gave (no insertion in
 * between). */
void itab_put(struct itab *t, size_t slot, uint64_t h, uint32_t idx);
/* All three for a caller that adds every entry it does not find: the
 * index of the entry of hash h that eq(ectx, idx) accepts, or -1 after
 * storing next for it, the index the caller's array gives its new entry
 * (pushed next, before the table is used again). */
static inline long itab_intern(struct itab *t, uint64_t h,
			       uint64_t (*rehash)(void *ctx, uint32_t idx), void *rctx,
			       bool (*eq)(const void *ctx, uint32_t idx), const void *ectx,
			       uint32_t next)
{
	size_t slot;
	itab_reserve(t, rehash, rctx);
	long id = itab_find(t, h, eq, ectx, &slot);
	if (id < 0)
		itab_put(t, slot, h, next);
	return id;
}

#endif
