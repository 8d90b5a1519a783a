/* key_cache.c — see key_cache.h. */
#include "key_cache.h"

void key_cache_init(struct key_cache *kc)
{
	memset(kc, 0, sizeof(*kc));
	kc->nnodes = 1;
}

unsigned key_cache_learn(struct key_cache *kc, unsigned at, const char *lit, size_t len, int which)
{
	if (at == KC_LOST || len < (which == KC_END ? 1 : 4) || len > KC_LIT || which < 0 ||
	    which > KC_END)
		return KC_LOST;
	struct kc_next *nx = kc->node[at].next;
	int i = 0;
	while (i < KC_NEXT && nx[i].len && !(nx[i].len == len && !memcmp(nx[i].lit, lit, len)))
		i++;
	if (i < KC_NEXT && nx[i].len)                  /* expected, but missed (the value */
		return nx[i].node;                     /* started with whitespace, or ended */
	if (kc->nnodes == KC_NODES && which != KC_END) /* the window) */
		return KC_LOST;
	if (i == KC_NEXT) /* full: the newest replaces the last */
		i = KC_NEXT - 1;
	struct kc_next *x = &nx[i];
	memset(x->lit, 0, sizeof(x->lit));
	memcpy(x->lit, lit, len);
	x->len = (uint8_t)len;
	x->which = (uint8_t)which;
	x->mask = len >= 32 ? 0xffffffffu : (1u << len) - 1;
	x->node = which == KC_END ? KC_LOST : (uint16_t)kc->nnodes++;
	return x->node;
}

unsigned key_cache_branch_new(struct key_cache *kc, unsigned at, uint64_t value)
{
	if (at == KC_LOST)
		return KC_LOST;
	unsigned h = (unsigned)(((value ^ at) * 0x9e3779b97f4a7c15ull) >> 56 & (KC_BRANCHES - 1));
	for (unsigned i = 0; i < 4; i++) { /* the pair, or a free slot, near its home */
		struct kc_branch *b = &kc->branch[(h + i) & (KC_BRANCHES - 1)];
		if (b->to && b->value == value && b->from == at)
			return b->to;
		if (!b->to) {
			if (kc->nnodes == KC_NODES)
				return KC_LOST;
			b->value = value;
			b->from = (uint16_t)at;
			b->to = (uint16_t)kc->nnodes++;
			return b->to;
		}
	}
	return KC_LOST;
}
