/* key_cache.h — predicts the next key of a trace object from the keys before.
 *
 * Kineto writes every event of a kind with the same keys in the same order
 * and the same spacing: a kernel is `"ph": `, `"cat": `, `"pid": `, ... and
 * its args `"External id": `, `"device": `, ...; a flow event `"ph": `,
 * `"id": `, ... The cache learns each key's *literal* (its bytes from the
 * opening quote to the value: `"cat": `) and a trie of the literal sequences
 * seen, each node keeping up to KC_NEXT next literals. Reading a member then
 * starts with a 32-byte compare against the literals expected at the current
 * node (usually one); only a miss reads the key byte by byte, dispatches on
 * its text and extends the trie.
 *
 * A hit is exact by construction: the bytes equal a literal whose key was
 * read and dispatched before, and the byte after it is not whitespace, so
 * reading the key would have stopped at the same place with the same key.
 * Memory is fixed (KC_NODES nodes of KC_NEXT literals); beyond that, keys
 * are read as usual.
 */
#ifndef KEY_CACHE_H
#define KEY_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

enum {
	KC_LIT = 32,     /* longest literal: a key of up to 26 bytes, ", " and ": " */
	KC_NEXT = 4,     /* next literals kept per trie node */
	KC_NODES = 512,  /* trie nodes; node 0 is an object's start */
	KC_LOST = 0xffff /* a node for "off the trie": predicts nothing */
};

/* One literal expected next, kept in the node itself: the compare needs no
 * load that depends on another. */
struct kc_next {
	_Alignas(16) char lit[KC_LIT]; /* zero-padded */
	uint16_t lo, hi;               /* bytes of each 16-byte half compared */
	uint8_t len;                   /* 0: no literal */
	uint8_t which;                 /* the caller's code for the key */
	uint16_t node;                 /* the node after it */
};

struct kc_node {
	struct kc_next next[KC_NEXT];
};

struct key_cache {
	unsigned nnodes;
	struct kc_node node[KC_NODES];
};

void key_cache_init(struct key_cache *kc);

/* After a miss at trie node at: the member's literal was lit[0..len) and
 * its key code which. Returns the node to pass for the next member. len 0
 * (a key that cannot be cached: escaped, too long) gives KC_LOST. */
unsigned key_cache_learn(struct key_cache *kc, unsigned at, const char *lit, size_t len, int which);

/* Whether the bytes at p start with x's literal. p may be anywhere up to
 * the window's end: KC_LIT bytes are readable (the window's padding). */
static inline bool key_cache_eq(const struct kc_next *x, const char *p)
{
#ifdef __SSE2__
	__m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i b = _mm_load_si128((const __m128i *)(const void *)x->lit);
	unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b));
	if ((m & x->lo) != x->lo)
		return false;
	if (!x->hi)
		return true;
	a = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
	b = _mm_load_si128((const __m128i *)(const void *)(x->lit + 16));
	m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b));
	return (m & x->hi) == x->hi;
#else
	return !memcmp(p, x->lit, x->len);
#endif
}

/* Tries the literals expected at trie node *at against the bytes at *pp.
 * On a hit that ends before end at a byte that is not whitespace, moves
 * *pp to the value, *at to the next node and returns the key code; else
 * -1 and nothing moves. */
static inline int key_cache_match(const struct key_cache *kc, unsigned *at, const char **pp,
				  const char *end)
{
	if (*at == KC_LOST)
		return -1;
	const char *p = *pp;
	for (const struct kc_next *x = kc->node[*at].next; x < kc->node[*at].next + KC_NEXT; x++) {
		if (!x->len)
			return -1;
		const char *v = p + x->len;
		if (key_cache_eq(x, p) && v < end && (unsigned char)*v > ' ') {
			*pp = v;
			*at = x->node;
			return x->which;
		}
	}
	return -1;
}

#endif
