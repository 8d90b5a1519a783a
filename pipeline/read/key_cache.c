/* key_cache.c — see key_cache.h. */
#include "key_cache.h"

void key_cache_init(struct key_cache *kc)
{
	memset(kc, 0, sizeof(*kc));
	kc->nnodes = 1;
}

unsigned key_cache_learn(struct key_cache *kc, unsigned at, const char *lit, size_t len, int which)
{
	if (at == KC_LOST || len < 4 || len > KC_LIT || which < 0 || which > 255)
		return KC_LOST;
	struct kc_next *nx = kc->node[at].next;
	int i = 0;
	while (i < KC_NEXT && nx[i].len && !(nx[i].len == len && !memcmp(nx[i].lit, lit, len)))
		i++;
	if (i < KC_NEXT && nx[i].len) /* expected, but missed (the value */
		return nx[i].node;    /* started with whitespace, or ended */
	if (kc->nnodes == KC_NODES)   /* the window) */
		return KC_LOST;
	if (i == KC_NEXT) /* full: the newest replaces the last */
		i = KC_NEXT - 1;
	struct kc_next *x = &nx[i];
	memset(x->lit, 0, sizeof(x->lit));
	memcpy(x->lit, lit, len);
	x->len = (uint8_t)len;
	x->which = (uint8_t)which;
	x->lo = (uint16_t)(len >= 16 ? 0xffffu : (1u << len) - 1);
	x->hi = (uint16_t)(len <= 16 ? 0 : len >= 32 ? 0xffffu : (1u << (len - 16)) - 1);
	x->node = (uint16_t)kc->nnodes++;
	return x->node;
}
