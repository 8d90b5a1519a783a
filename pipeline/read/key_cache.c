/* key_cache.c — see key_cache.h. */
#include "key_cache.h"

void key_cache_init(struct key_cache *kc)
{
	memset(kc, 0, sizeof(*kc));
	kc->nslots = 1;
	kc->nnodes = 1;
}

/* The slot of a literal, added if new; 0 when the table is full. */
static unsigned slot_of(struct key_cache *kc, const char *lit, size_t len, int which)
{
	for (unsigned s = 1; s < kc->nslots; s++)
		if (kc->len[s] == len && !memcmp(kc->lit[s], lit, len))
			return s;
	if (kc->nslots == KC_SLOTS)
		return 0;
	unsigned s = kc->nslots++;
	memcpy(kc->lit[s], lit, len);
	kc->len[s] = (uint8_t)len;
	kc->which[s] = (uint8_t)which;
	kc->lo[s] = (uint16_t)(len >= 16 ? 0xffffu : (1u << len) - 1);
	kc->hi[s] = (uint16_t)(len <= 16 ? 0 : len >= 32 ? 0xffffu : (1u << (len - 16)) - 1);
	return s;
}

unsigned key_cache_learn(struct key_cache *kc, unsigned at, const char *lit, size_t len,
			 int which)
{
	if (at == KC_LOST || len < 4 || len > KC_LIT || which < 0 || which > 255)
		return KC_LOST;
	unsigned s = slot_of(kc, lit, len, which);
	if (!s)
		return KC_LOST;
	struct kc_node *nd = &kc->node[at];
	int i = 0;
	while (i < KC_NEXT && nd->slot[i] && nd->slot[i] != s)
		i++;
	if (i < KC_NEXT && nd->slot[i] == s) /* expected, but missed (the value */
		return nd->child[i];          /* started with whitespace, or ended */
	if (kc->nnodes == KC_NODES)           /* the window) */
		return KC_LOST;
	if (i == KC_NEXT) /* full: the newest replaces the last */
		i = KC_NEXT - 1;
	nd->slot[i] = (uint8_t)s;
	nd->child[i] = (uint16_t)kc->nnodes++;
	return nd->child[i];
}
