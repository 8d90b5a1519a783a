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
 * Events of different kinds share their first keys and part ways later,
 * so the caller may branch on a value that tells the kind (an event's ph
 * and cat): key_cache_branch() moves to a node of that value's own, whose
 * next literal is then usually the only one.
 *
 * Many values are the same in every event of a kind (a kernel's `"pid": 0`,
 * `"device": 0`, `"grid": [132, 1, 1]`, a flow's `"name": "ac2g"`). A key
 * learned anew may therefore become a *whole* literal, its value included
 * (key_cache_whole()), with what reading the value gave kept beside it;
 * a hit then needs no reading at all. The first time the value differs,
 * the literal misses, the key is read byte by byte, and learning it turns
 * the whole literal back into the key's for good.
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

#include "simd.h"

enum {
	KC_LIT = 32,        /* longest literal: a key of up to 26 bytes, ", " and ": " */
	KC_NEXT = 4,        /* next literals kept per trie node */
	KC_NODES = 1024,    /* trie nodes; node 0 is an object's start */
	KC_BRANCHES = 256,  /* (node, value) pairs of key_cache_branch() */
	KC_LOST = KC_NODES, /* the node "off the trie": always empty, predicts nothing */
	KC_WHOLE = 64,      /* which | KC_WHOLE: a whole literal, the value included */
	KC_END = 127        /* the code of a literal that closes the object (the
			    * bytes from the last value's end to its '}'); the
			    * callers' codes are below KC_WHOLE */
};

/* What the byte after a literal must be (kc_next.follow: bits of
 * kc_follow[byte]): a value's first byte after a key (not whitespace), a
 * delimiter after a whole literal (so the value ends there), anything after
 * an end literal. */
enum { KC_F_VALUE = 1, KC_F_DELIM = 2, KC_F_ANY = 4 };
extern const uint8_t kc_follow[256];

/* The value of a whole literal. */
enum {
	KC_VSKIP = 1, /* none kept: read as skipped (the caller keeps nothing) */
	KC_VNUM,      /* an integer that fits int64: num, its text in val */
	KC_VSTR       /* a string without escapes: its body in val */
};

/* One literal expected next, kept in the node itself: the compare needs no
 * load that depends on another. */
struct kc_next {
	_Alignas(16) char lit[KC_LIT]; /* zero-padded */
	uint32_t mask;                 /* bit i: byte i is compared */
	uint8_t len;                   /* 0: no literal */
	uint8_t which;                 /* the caller's code for the key (| KC_WHOLE) */
	uint8_t follow;                /* KC_F_*; 0: no literal (never matches) */
	uint8_t klen;                  /* a whole literal: its key's literal's length */
	uint16_t node;                 /* the node after it */
	uint8_t varies;                /* the key's value changed: never whole again */
	uint8_t vkind;                 /* a whole literal: KC_V* */
	uint32_t vlen;                 /* ... the length of val */
	int64_t num;                   /* ... KC_VNUM: the integer */
	char val[KC_LIT];              /* ... NUL-terminated */
};

struct kc_node {
	struct kc_next next[KC_NEXT];
};

struct kc_branch {
	uint64_t value;
	uint16_t from, to; /* to 0: the slot is free */
	uint16_t then;     /* the caller's: a node of another cache that the
			    * value leads to, found once (0: not yet) */
};

struct key_cache {
	unsigned nnodes;
	unsigned byte_at;      /* the node of key_cache_branch_byte()'s table (0: none yet) */
	unsigned byte_miss;    /* its calls at other nodes since it was taken */
	uint16_t byte_to[256]; /* key_cache_branch(kc, byte_at, byte) once found; 0: not yet */
	struct kc_branch branch[KC_BRANCHES];
	struct kc_node node[KC_NODES + 1]; /* node[KC_LOST] stays empty */
};

/* A cache with no literals. Its nodes are cleared as they are first used,
 * so an empty cache costs a few pages, not its full size (a reader is
 * opened per trace). Never NULL (docs/contracts.md §7). */
struct key_cache *key_cache_new(void);
void key_cache_free(struct key_cache *kc);

/* After a miss at trie node at: the member's literal was lit[0..len) and
 * its key code which (KC_END: the object's end, which leads to no node).
 * Returns the node to pass for the next member. len 0 (a key that cannot be
 * cached: escaped, too long) gives KC_LOST. *fresh is the literal when it
 * is new (for key_cache_whole()), else NULL. A whole literal of this key at
 * node at becomes the key's literal again. */
unsigned key_cache_learn(struct key_cache *kc, unsigned at, const char *lit, size_t len, int which,
			 struct kc_next **fresh);

/* Makes the new literal x whole: its bytes run on to lit[0..len) (the key's
 * literal and the value that follows; len <= KC_LIT), and reading that
 * value gave vkind, num and val[0..vlen). */
void key_cache_whole(struct kc_next *x, const char *lit, size_t len, int vkind, int64_t num,
		     const char *val, size_t vlen);

unsigned key_cache_branch_new(struct key_cache *kc, unsigned at, uint64_t value);

/* The branch table's home slot of the pair (at, value): where the lookups
 * look first and key_cache_branch_new() places the pair when free. */
static inline unsigned key_cache_home(unsigned at, uint64_t value)
{
	return (unsigned)(((value ^ at) * 0x9e3779b97f4a7c15ull) >> 56 & (KC_BRANCHES - 1));
}

/* The node after node at for a member whose value is value (up to 8 of its
 * bytes and its length, packed by the caller): a node of its own, made on
 * first sight. KC_LOST stays lost, and so does a value beyond the table.
 * *bp is the table's entry that gave the node, or NULL when it was not
 * there at the first look (its then is for the caller to keep, e.g. a node
 * that the same value leads to in another cache: an entry, once made,
 * stays). */
static inline unsigned key_cache_branch_at(struct key_cache *kc, unsigned at, uint64_t value,
					   struct kc_branch **bp)
{
	struct kc_branch *b = &kc->branch[key_cache_home(at, value)];
	if (b->value == value && b->from == at && b->to) {
		*bp = b;
		return b->to;
	}
	*bp = NULL;
	return key_cache_branch_new(kc, at, value);
}

/* key_cache_branch_at() without the entry. */
static inline unsigned key_cache_branch(struct key_cache *kc, unsigned at, uint64_t value)
{
	struct kc_branch *b;
	return key_cache_branch_at(kc, at, value, &b);
}

/* key_cache_branch() on a value of one byte (an event's ph). One node (the
 * one after the "ph" key of most events: the node asked at first, then the
 * one asked at by the 16th call at other nodes since) has a table by the
 * byte, filled as values are found: an entry of the branch table, once
 * made, stays, and a value that found no room finds none later, so a
 * branch found once is the branch ever after, and there it costs a load. */
unsigned key_cache_branch_byte_new(struct key_cache *kc, unsigned at, unsigned char v);

static inline __attribute__((always_inline)) unsigned key_cache_branch_byte(struct key_cache *kc,
									    unsigned at,
									    unsigned char v)
{
	if (at == kc->byte_at && kc->byte_to[v])
		return kc->byte_to[v];
	return key_cache_branch_byte_new(kc, at, v);
}

/* Whether the bytes at p start with x's literal: one 32-byte compare,
 * without a branch on the literal's length. p may be anywhere up to the
 * window's end: KC_LIT bytes are readable (the window's padding). */
static inline bool key_cache_eq(const struct kc_next *x, const char *p)
{
	return simd_lit_eq(p, x->lit, x->mask, x->len);
}

/* The literal expected at trie node at that the bytes at p start with and
 * that the byte after them may follow (kc_follow), or NULL. Neither needs
 * the window's end: the window is followed by zero bytes, and no literal
 * ends with one (each ends with the whitespace or ':' before a value, a
 * value's last byte, or the '}' of KC_END), so a literal that matches ends
 * inside the window; and a zero follows no key or whole literal, so the
 * byte after those is inside too. The first literal is compared without
 * a look at its length, as nearly always it is the one: an empty one (all
 * zeros) never matches, its follow having no bit in common with any byte's
 * kc_follow; a next one is compared only when it is there. */
static inline const struct kc_next *key_cache_find(const struct key_cache *kc, unsigned at,
						   const char *p)
{
	const struct kc_next *x = kc->node[at].next;
	for (int i = 0;; i++, x++) {
		if (key_cache_eq(x, p) && (kc_follow[(unsigned char)p[x->len]] & x->follow))
			return x;
		if (i == KC_NEXT - 1 || !x[1].len)
			return NULL;
	}
}

/* Brings the literal of node at that the bytes at p start with (the one
 * key_cache_find() finds) to the node's front, where it is tried first.
 * The order of a node's literals decides only which is tried first: at
 * most one of them matches given bytes (a node keeps one literal per
 * spelling of a key, whole or not, and two literals either differ within
 * the shorter one's bytes or the byte after the shorter one is not one it
 * may be followed by), and a match reads as its key would. */
void key_cache_front(struct key_cache *kc, unsigned at, const char *p);

#endif
