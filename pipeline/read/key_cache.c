/* key_cache.c — see key_cache.h. */
#include "key_cache.h"

#include <stdlib.h>

#include "util/pp.h"

struct key_cache *key_cache_new(void)
{
	struct key_cache *kc = xmalloc(sizeof(*kc));
	kc->nnodes = 1;
	kc->byte_at = 0;
	kc->byte_miss = 0;
	memset(kc->byte_to, 0, sizeof(kc->byte_to));
	memset(kc->branch, 0, sizeof(kc->branch));
	memset(&kc->node[0], 0, sizeof(kc->node[0]));
	memset(&kc->node[KC_LOST], 0, sizeof(kc->node[KC_LOST]));
	return kc;
}

void key_cache_free(struct key_cache *kc)
{
	free(kc);
}

/* A node of its own, cleared (nodes are only cleared when first used). */
static unsigned new_node(struct key_cache *kc)
{
	memset(&kc->node[kc->nnodes], 0, sizeof(kc->node[0]));
	return kc->nnodes++;
}

/* Bytes > ' ' may start a value; whitespace (JSON's and \f, \v), ',', ']'
 * and '}' end one. */
#define V (KC_F_VALUE | KC_F_ANY)
#define D (KC_F_DELIM | KC_F_ANY)
const uint8_t kc_follow[256] = {
	[0 ... 8] = KC_F_ANY, [9 ... 13] = D, [14 ... 31] = KC_F_ANY, [32] = D,
	[33 ... 43] = V,      [44] = V | D,   [45 ... 92] = V,        [93] = V | D,
	[94 ... 124] = V,     [125] = V | D,  [126 ... 255] = V,
};
#undef V
#undef D

static void set_literal(struct kc_next *x, const char *lit, size_t len)
{
	memset(x->lit, 0, sizeof(x->lit));
	memcpy(x->lit, lit, len);
	x->len = (uint8_t)len;
	x->mask = len >= 32 ? 0xffffffffu : (1u << len) - 1;
}

unsigned key_cache_learn(struct key_cache *kc, unsigned at, const char *lit, size_t len, int which,
			 struct kc_next **fresh)
{
	*fresh = NULL;
	if (at == KC_LOST || len < (which == KC_END ? 1 : 4) || len > KC_LIT || which < 0 ||
	    (which >= KC_WHOLE && which != KC_END))
		return KC_LOST;
	struct kc_next *nx = kc->node[at].next;
	int i = 0;
	while (i < KC_NEXT && nx[i].len &&
	       !((nx[i].klen ? nx[i].klen : nx[i].len) == len && !memcmp(nx[i].lit, lit, len)))
		i++;
	if (i < KC_NEXT && nx[i].len) { /* expected, but missed: */
		struct kc_next *x = &nx[i];
		if (x->klen) { /* the value changed (or the window ended) */
			set_literal(x, lit, len);
			x->which &= (uint8_t)~KC_WHOLE;
			x->follow = KC_F_VALUE;
			x->klen = 0;
			x->vkind = 0;
			x->varies = 1;
		}
		return x->node; /* or it started with whitespace, or ended the window */
	}
	if (kc->nnodes == KC_NODES && which != KC_END)
		return KC_LOST;
	if (i == KC_NEXT) /* full: the newest replaces the last */
		i = KC_NEXT - 1;
	struct kc_next *x = &nx[i];
	memset(x, 0, sizeof(*x));
	set_literal(x, lit, len);
	x->which = (uint8_t)which;
	x->follow = which == KC_END ? KC_F_ANY : KC_F_VALUE;
	x->node = which == KC_END ? KC_LOST : (uint16_t)new_node(kc);
	if (which != KC_END)
		*fresh = x;
	return x->node;
}

void key_cache_whole(struct kc_next *x, const char *lit, size_t len, int vkind, int64_t num,
		     const char *val, size_t vlen)
{
	if (len > KC_LIT || vlen >= KC_LIT || x->varies)
		return;
	x->klen = x->len;
	set_literal(x, lit, len);
	x->which |= KC_WHOLE;
	x->follow = KC_F_DELIM;
	x->vkind = (uint8_t)vkind;
	x->num = num;
	x->vlen = (uint32_t)vlen;
	memcpy(x->val, val, vlen);
	x->val[vlen] = '\0';
}

unsigned key_cache_branch_new(struct key_cache *kc, unsigned at, uint64_t value)
{
	if (at == KC_LOST)
		return KC_LOST;
	unsigned h = key_cache_home(at, value);
	for (unsigned i = 0; i < 4; i++) { /* the pair, or a free slot, near its home */
		struct kc_branch *b = &kc->branch[(h + i) & (KC_BRANCHES - 1)];
		if (b->to && b->value == value && b->from == at)
			return b->to;
		if (!b->to) {
			if (kc->nnodes == KC_NODES)
				return KC_LOST;
			b->value = value;
			b->from = (uint16_t)at;
			b->to = (uint16_t)new_node(kc);
			return b->to;
		}
	}
	return KC_LOST;
}

unsigned key_cache_branch_byte_new(struct key_cache *kc, unsigned at, unsigned char v)
{
	unsigned to = key_cache_branch(kc, at, v);
	if (at != kc->byte_at && at != KC_LOST && (!kc->byte_at || ++kc->byte_miss == 16)) {
		kc->byte_at = at;
		kc->byte_miss = 0;
		memset(kc->byte_to, 0, sizeof(kc->byte_to));
	}
	if (at == kc->byte_at)
		kc->byte_to[v] = (uint16_t)to;
	return to;
}

void key_cache_front(struct key_cache *kc, unsigned at, const char *p)
{
	struct kc_next *nx = kc->node[at].next, t;
	const struct kc_next *x = key_cache_find(kc, at, p);
	if (!x || x == nx)
		return;
	t = nx[0];
	nx[0] = *x;
	nx[x - nx] = t;
}
