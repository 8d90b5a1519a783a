/* whatif_int.h — the engine's layout, shared by its files: wi_model.c
 * (validation and the dependency model), wi_sim.c (the lane-vectorised
 * simulator) and whatif.c (scenarios and metrics).
 *
 * Lanes are (step index, dp_rank). Per-op-per-lane values live in blocks of
 * `bs` whole steps: block b holds steps [b·bs, b·bs + nb) and, inside it,
 * node v's lanes are contiguous (nb·DP doubles), lane j = (step − b·bs)·DP +
 * dp. DP-synchronised groups reduce over the DP lanes of one step, so a block
 * is simulated on its own.
 */
#ifndef WI_WHATIF_INT_H
#define WI_WHATIF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"
#include "whatif.h"

#define WI_NS_EPS_MATCH 50000.0     /* 50 µs: p2p matching (§3.3) */
#define WI_NS_NEG_CLAMP -10000000.0 /* -10 ms: launch delay / transfer clamp */

enum { WI_NODE_PLACEHOLDER = 1, WI_NODE_COMM = 2, WI_NODE_DPSYNC = 4 };

struct wi_node {
	int32_t seq;
	int16_t stage, mc, gmc;
	uint8_t optype;
	uint8_t flags;
	int32_t group;  /* sync group, -1 = local op */
	int64_t t0, t1; /* start/end in the first slice (time order) */
};

struct wi_sync {
	int32_t first, n; /* members gmem[first .. first + n) */
	bool dpsync;
};

struct whatif {
	int dp, pp, vpp;
	bool use_dp, overlapped;
	struct whatif_opts opts;

	size_t nsteps;
	int64_t *steps;
	int64_t *origin; /* per step: its earliest recorded start */

	size_t n; /* nodes */
	struct wi_node *node;
	int32_t *pred_off; /* CSR: preds of v = pred[pred_off[v] .. pred_off[v+1]) */
	int32_t *pred;
	size_t nedges;
	size_t ngroups;
	struct wi_sync *group;
	int32_t *gmem;
	int32_t *sched; /* v >= 0: start node v; ~g: finish group g */
	size_t nsched;
	int32_t *cell_rank; /* [stage·DP + dp] */

	size_t bs, nblocks; /* steps per block, blocks */
	size_t lanes;       /* nsteps·DP */
	double *rs, *re;    /* recorded start/end, relative, block layout */
	double *val;        /* duration (local) or transfer (comm) */
	double *delay;      /* launch delay */
	double ideal_type[OP_NTYPES];
	double *ideal;     /* per node */
	double *span_base; /* per step */
	double *scratch;   /* the simulator's block buffers (wi_sim.c) */

	struct strbuf notes;
};

/* Index of (step index si, node v, dp d) in the block layout. */
static inline size_t wi_idx(const struct whatif *e, size_t si, size_t v, size_t d)
{
	size_t b = si / e->bs, first = b * e->bs;
	size_t nb = e->nsteps - first < e->bs ? e->nsteps - first : e->bs;
	return first * (size_t)e->dp * e->n + v * nb * (size_t)e->dp +
	       (si - first) * (size_t)e->dp + d;
}

/* Steps in block b. */
static inline size_t wi_block_steps(const struct whatif *e, size_t b)
{
	size_t first = b * e->bs;
	return e->nsteps - first < e->bs ? e->nsteps - first : e->bs;
}

/* Validates t and builds e's model and recorded lanes (wi_model.c). */
int wi_model_build(struct whatif *e, const struct wi_table *t, struct strbuf *err);

/* A selection of (node, worker) pairs: all, or those whose node has
 * node[v] set (NULL = every node) and whose worker has worker[stage·DP +
 * dp] set (NULL = every worker); invert takes the complement. */
struct wi_sel {
	bool all;
	bool invert;
	const uint8_t *node;
	const uint8_t *worker;
};

/* A scenario: selected pairs use the recorded duration/transfer (val) and
 * launch delay (delay); the others use the ideal value and no delay. */
struct wi_scen {
	struct wi_sel val, delay;
};

/* What one simulation returns: per step the simulator's step time (latest
 * optimizer end) and the span (latest end − earliest start); optionally every
 * start/end in the block layout (NULL = not wanted). */
struct wi_out {
	double *sim, *span;
	double *start, *end;
};

/* The median of x[0..n), n > 0 (the mean of the two middle values for an
 * even count); reorders x. */
double wi_median(double *x, size_t n);

/* Replaces x[k·dp .. k·dp + dp) by its maximum, for each of the nb steps
 * of a block (a DP-synchronised group's arrival). */
void wi_dp_max(double *x, size_t nb, int dp);

/* Simulates every lane under sc (wi_sim.c). */
void wi_simulate(struct whatif *e, const struct wi_scen *sc, struct wi_out *out);

#endif
