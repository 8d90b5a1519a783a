/* htab.c — see htab.h. The byte hash is a multiply-xorshift over 8-byte
 * words (in the spirit of wyhash/murmur finalizers): not cryptographic,
 * just fast and well distributed for interning. */
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "hugepage.h"
#include "pp.h"

#define M1 0x9e3779b97f4a7c15ull
#define M2 0xbf58476d1ce4e5b9ull
#define M3 0x94d049bb133111ebull

uint64_t pp_hash_u64(uint64_t x)
{
	x ^= x >> 30;
	x *= M2;
	x ^= x >> 27;
	x *= M3;
	x ^= x >> 31;
	return x;
}

/* 64x64 → 128-bit multiply folded to 64 bits (wyhash's "mum"). */
static uint64_t mum(uint64_t a, uint64_t b)
{
	unsigned __int128 r = (unsigned __int128)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static uint64_t load8(const unsigned char *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	return w;
}

static uint32_t load4(const unsigned char *p)
{
	uint32_t w;
	memcpy(&w, p, 4);
	return w;
}

static uint64_t hash_run(const unsigned char *s, size_t n, uint64_t h)
{
	while (n >= 16) {
		h = mum(load8(s) ^ M1, load8(s + 8) ^ h);
		s += 16;
		n -= 16;
	}
	if (n >= 8) {
		h = mum(load8(s) ^ M2, h ^ M3);
		s += 8;
		n -= 8;
	}
	if (n) { /* 1..7 bytes, read without a variable-length copy */
		uint64_t w;
		if (n >= 4)
			w = (uint64_t)load4(s) << 32 | load4(s + n - 4);
		else
			w = (uint64_t)s[0] << 16 | (uint64_t)s[n >> 1] << 8 | s[n - 1];
		h = mum(w ^ M3, h ^ M1 ^ n);
	}
	return h;
}

/* Names longer than 256 bytes (C++ template kernels, several KB) are hashed
 * on their first and last 128 bytes and their length: equal names still
 * hash equal, and interning compares the full text anyway. */
uint64_t pp_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = seed ^ (n * M1);
	if (n <= 256) {
		h = hash_run(s, n, h);
	} else {
		h = hash_run(s, 128, h);
		h = hash_run(s + n - 128, 128, h);
	}
	return pp_hash_u64(h);
}

void imap_init(struct imap *m)
{
	memset(m, 0, sizeof(*m));
}

void imap_release(struct imap *m)
{
	free(m->keys);
	free(m->vals);
	imap_init(m);
}

static size_t imap_find(const struct imap *m, int64_t key)
{
	size_t mask = m->cap - 1;
	size_t i = pp_hash_u64((uint64_t)key) & mask;
	while (m->vals[i] != IMAP_EMPTY && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

uint32_t imap_get(const struct imap *m, int64_t key)
{
	if (!m->cap)
		return IMAP_EMPTY;
	return m->vals[imap_find(m, key)];
}

static void imap_grow(struct imap *m)
{
	struct imap g;
	g.cap = m->cap ? m->cap * 2 : 1024;
	g.n = 0;
	g.keys = xmalloc(g.cap * sizeof(*g.keys));
	g.vals = xmalloc(g.cap * sizeof(*g.vals));
	memset(g.vals, 0xff, g.cap * sizeof(*g.vals));
	for (size_t i = 0; i < m->cap; i++) {
		if (m->vals[i] == IMAP_EMPTY)
			continue;
		size_t j = imap_find(&g, m->keys[i]);
		g.keys[j] = m->keys[i];
		g.vals[j] = m->vals[i];
		g.n++;
	}
	imap_release(m);
	*m = g;
}

uint32_t *imap_ref(struct imap *m, int64_t key, uint32_t init)
{
	if ((m->n + 1) * 2 > m->cap)
		imap_grow(m);
	size_t i = imap_find(m, key);
	if (m->vals[i] == IMAP_EMPTY) {
		m->keys[i] = key;
		m->vals[i] = init;
		m->n++;
	}
	return &m->vals[i];
}

void itab_init(struct itab *t)
{
	memset(t, 0, sizeof(*t));
}

void itab_release(struct itab *t)
{
	free(t->slot);
	free(t->hash32);
	itab_init(t);
}

void itab_grow(struct itab *t, uint64_t (*rehash)(void *ctx, uint32_t idx), void *ctx)
{
	size_t cap = t->cap ? t->cap * 2 : 1024, mask = cap - 1;
	uint32_t *slot = xcalloc(cap, sizeof(*slot));
	uint32_t *h32 = xcalloc(cap, sizeof(*h32));
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slot[i])
			continue;
		uint64_t h = rehash(ctx, t->slot[i] - 1);
		size_t j = h & mask;
		while (slot[j])
			j = (j + 1) & mask;
		slot[j] = t->slot[i];
		h32[j] = (uint32_t)h;
	}
	free(t->slot);
	free(t->hash32);
	t->slot = slot;
	t->hash32 = h32;
	t->cap = cap;
}

void itab_put(struct itab *t, size_t slot, uint64_t h, uint32_t idx)
{
	t->slot[slot] = idx + 1;
	t->hash32[slot] = (uint32_t)h;
	t->n++;
}

void cmap_init(struct cmap *m)
{
	memset(m, 0, sizeof(*m));
	imap_init(&m->sparse);
}

void cmap_release(struct cmap *m)
{
	hugepage_free(m->dense, m->cap * sizeof(*m->dense));
	imap_release(&m->sparse);
	cmap_init(m);
}

uint32_t cmap_get(const struct cmap *m, int64_t key)
{
	if (cmap_in_dense(m, key))
		return m->dense[(uint64_t)key - (uint64_t)m->base];
	return imap_get(&m->sparse, key);
}

/* The dense array may cover up to 8 slots per stored id (plus 64 Ki): dense
 * enough that it costs at most 32 bytes per id. */
static bool cmap_dense_ok(const struct cmap *m, uint64_t off)
{
	return off < 8 * (uint64_t)m->n + 65536;
}

/* cmap_ref() outside the dense array: the first id, the sparse map, a
 * growth. */
uint32_t *cmap_ref_slow(struct cmap *m, int64_t key, uint32_t init)
{
	if (!m->has_base) {
		m->base = key;
		m->has_base = true;
	}
	uint64_t off = (uint64_t)key - (uint64_t)m->base;
	/* Inside the array it must go there (cmap_in_dense()), whatever the
	 * density rule says. */
	if (key < m->base || (off >= m->cap && !cmap_dense_ok(m, off))) {
		size_t before = m->sparse.n;
		uint32_t *v = imap_ref(&m->sparse, key, init);
		m->n += m->sparse.n - before;
		return v;
	}
	if (off >= m->cap) {
		size_t cap = m->cap ? m->cap : 4096;
		while (cap <= off)
			cap *= 2;
		uint32_t *d = hugepage_realloc(m->dense, m->cap * sizeof(*d), m->cap * sizeof(*d),
					       cap * sizeof(*d));
		memset(d + m->cap, 0xff, (cap - m->cap) * sizeof(*d));
		/* Ids the array now covers that went to the sparse map before:
		 * copied in, as cmap_get() looks only in the array for them.
		 * Only the new part: the old one has the values since, which a
		 * caller may have changed through cmap_ref(). */
		for (size_t i = 0; i < m->sparse.cap; i++) {
			uint64_t k = (uint64_t)m->sparse.keys[i] - (uint64_t)m->base;
			if (m->sparse.vals[i] != IMAP_EMPTY && m->sparse.keys[i] >= m->base &&
			    k >= m->cap && k < cap)
				d[k] = m->sparse.vals[i];
		}
		m->dense = d;
		m->cap = cap;
	}
	return cmap_dense_ref(m, off, init);
}
