/* gen_int.h — what gen_prog.c (building the programs) and gen_sim.c
 * (timing them) share; not for other modules. */
#ifndef GEN_INT_H
#define GEN_INT_H

#include "gen_model.h"

/* Program items: (op << 28) | index (slice, kernel) or gap in ns. */
enum { IT_OPEN, IT_CLOSE, IT_KERNEL, IT_GAP };
#define ITEM(op, idx) (((uint32_t)(op) << 28) | (uint32_t)(idx))

struct coll {
	int arrived;
	int64_t maxr;
};

struct gen_cluster {
	struct gen_cfg cfg;
	struct gen_rank *ranks;
	/* Collectives per (group kind, group): ncoll[dim][g] records each. */
	struct coll **coll[GEN_NGROUPS];
	int *ncoll[GEN_NGROUPS];
	/* P2P, per tag: when the sending and the receiving kernel started, -1
	 * until they have. */
	int64_t *pub, *rstart;
	int ntags;
	char annotation[48];
};

/* Transfer time of the p2p message with this tag (both sides agree). */
int64_t gen_xfer_ns(const struct gen_cfg *c, int tag);

#endif
