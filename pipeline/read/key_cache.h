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
 * Memory is fixed (KC_SLOTS literals, KC_NODES nodes); beyond that, keys
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
	KC_SLOTS = 64,    /* literals kept */
	KC_LIT = 32,      /* longest literal: a key of up to 28 bytes and ": " */
	KC_NEXT = 4,      /* next literals kept per trie node */
	KC_NODES = 512,   /* trie nodes; node 0 is an object's start */
	KC_LOST = 0xffff  /* a node for "off the trie": predicts nothing */
};

struct kc_node {
	uint8_t slot[KC_NEXT];   /* literal slots expected next (0: none) */
	uint16_t child[KC_NEXT]; /* the node after each */
};

struct key_cache {
	_Alignas(16) char lit[KC_SLOTS][KC_LIT]; /* zero-padded; slot 0 unused */
	uint16_t lo[KC_SLOTS], hi[KC_SLOTS];   /* bytes of each half compared */
	uint8_t len[KC_SLOTS];
	uint8_t which[KC_SLOTS];               /* the caller's code for the key */
	unsigned nslots, nnodes;
	struct kc_node node[KC_NODES];
};

void key_cache_init(struct key_cache *kc);

/* After a miss at trie node at: the member's literal was lit[0..len) and
 * its key code which. Returns the node to pass for the next member. len 0
 * (a key that cannot be cached: escaped, too long) gives KC_LOST. */
unsigned key_cache_learn(struct key_cache *kc, unsigned at, const char *lit, size_t len,
			 int which);

/* Whether the bytes at p start with slot s's literal. p may be anywhere up
 * to the window's end: KC_LIT bytes are readable (the window's padding). */
static inline bool key_cache_eq(const struct key_cache *kc, unsigned s, const char *p)
{
#ifdef __SSE2__
	__m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i b = _mm_load_si128((const __m128i *)(const void *)kc->lit[s]);
	unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b));
	if ((m & kc->lo[s]) != kc->lo[s])
		return false;
	if (!kc->hi[s])
		return true;
	a = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
	b = _mm_load_si128((const __m128i *)(const void *)(kc->lit[s] + 16));
	m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b));
	return (m & kc->hi[s]) == kc->hi[s];
#else
	return !memcmp(p, kc->lit[s], kc->len[s]);
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
	const struct kc_node *nd = &kc->node[*at];
	const char *p = *pp;
	for (int i = 0; i < KC_NEXT; i++) {
		unsigned s = nd->slot[i];
		if (!s)
			return -1;
		const char *v = p + kc->len[s];
		if (key_cache_eq(kc, s, p) && v < end && (unsigned char)*v > ' ') {
			*pp = v;
			*at = nd->child[i];
			return kc->which[s];
		}
	}
	return -1;
}

#endif
