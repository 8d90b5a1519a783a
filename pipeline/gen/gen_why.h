/* gen_why.h — ppgen's exact answers for the why analysis (docs/why.md):
 * every p2p kernel's and transfer's wait and transfer, and every collective
 * instance's arrivals, taken from the simulator's own model in true time —
 * when each kernel started and when its peer's did (the rendezvous of
 * gen_sim.c), when each member of a collective was ready — never from the
 * analysis it checks. gen_truth writes them (docs/contracts.md §4).
 */
#ifndef GEN_WHY_H
#define GEN_WHY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gen_model.h"

/* One transfer of a p2p kernel: with its peer kernel's start p, wait =
 * min(max(p − start, 0), dur), transfer = dur − wait. */
struct gen_p2p {
	int kernel;               /* the kernel's order among the rank's p2p kernels */
	int peer_rank, dir, role; /* dir 0 forward / 1 backward; role 0 send / 1 recv */
	int mb, chunk;            /* the micro-batch; this rank's chunk */
	int64_t start, dur, wait, transfer;
};

/* One p2p kernel: the wait until its last peer started, the transfer
 * after; waited_for that peer's rank when it waited (-1 otherwise; ties:
 * the lowest rank). */
struct gen_p2p_kernel {
	int kernel;
	int64_t start, dur, wait, transfer;
	int waited_for;
};

/* Growable arrays of both. */
struct gen_p2p_rows {
	struct gen_p2p *row;
	size_t nrow, caprow;
	struct gen_p2p_kernel *k;
	size_t nk, capk;
};

/* Rank r's transfers and p2p kernels into out (emptied first); offset_ns is
 * its clock's offset (its times minus true time). */
void gen_why_p2p(const struct gen_cluster *c, const struct gen_cfg *cfg, const struct gen_rank *r,
		 int64_t offset_ns, struct gen_p2p_rows *out);
void gen_why_p2p_release(struct gen_p2p_rows *out);

/* One collective instance: the seq-th collective of group `group` along
 * `dim`; arrival = a member's kernel start; transfer = the time from the
 * last arrival to the end all members share. */
struct gen_coll {
	int dim, group, seq, size;
	int64_t first, last, transfer;
	int first_rank, last_rank; /* ties: the lowest rank */
};

/* Calls fn with every collective instance of the iteration whose members
 * were all written (written[rank]), ordered by the group's description
 * (gen_layout_pg_desc()), its lowest rank, seq; tied[0..ntied) are the
 * members that arrived within 1 µs of the last one, ascending (the
 * analysis cannot be asked to tell them apart). offset_ns per rank. */
void gen_why_collectives(struct gen_cluster *c, const struct gen_cfg *cfg, const bool *written,
			 const int64_t *offset_ns,
			 void (*fn)(void *ctx, const struct gen_coll *x, const int *tied,
				    int ntied),
			 void *ctx);

#endif
