/* why.h — why the pipeline waits (docs/why.md): the wait and the transfer
 * of every pipeline send and receive, who arrives last at every collective,
 * and the critical path of each step.
 *
 * A pure library: plain rows in, results out. why_new() takes the job's
 * shape, why_add_*() its rows (every rank's traces of the iterations
 * analysed, their ops and communication kernels, the process groups and
 * the topology), why_run() pairs, matches, estimates the ranks' clock
 * offsets and measures. why_cpath() walks the critical path of every step
 * of a what-if engine (whatif/whatif.h). Times are int64 nanoseconds: the
 * inputs in each rank's own clock, the results clock-corrected (rank
 * offsets taken off: docs/why.md "Clocks").
 */
#ifndef WHY_H
#define WHY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

struct whatif;

/* ---- inputs --------------------------------------------------------- */

struct why_opts {
	int pp;           /* pipeline stages (>= 1) */
	int vpp;          /* model chunks per stage (>= 1; 0 = 1) */
	bool keep_clocks; /* take every trace's clock as right (no estimate) */
};

/* Where a rank is in the job (the topology). */
struct why_rank {
	int32_t rank;
	int32_t pp_group; /* its pipeline (PP group), 0-based */
	int32_t stage;    /* 0..pp-1 */
	int32_t dp_rank;  /* its model replica */
};

/* One trace analysed: (iteration, rank) has a trace whose ops and kernels
 * are given; bubble_ns is its rank's bubble (docs/semantics.md §6), -1 when
 * unknown. A rank without a trace in an iteration is missing there. */
struct why_trace {
	int64_t iteration;
	int32_t rank;
	int64_t bubble_ns;
};

/* One op of a rank's op table (the `ops` view; docs/whatif.md §1): the
 * engine uses the forward and backward computes and the four p2p types.
 * mc and mb_id are the labels of a compute (-1 = not labelled); step_seq
 * >= 0 names the fwd/bwd step that labels it (rr_vpp_label() with the
 * options' pp and vpp: db_agg_op's fields as they are). */
struct why_op {
	int64_t iteration;
	int64_t start_ns, end_ns;
	int32_t rank;
	int32_t seq_id;
	int32_t step_seq; /* -1 = none */
	int16_t mc, mb_id;
	uint8_t optype; /* enum op_type (model/optype.h) */
};

/* A process group: its description ("" when the trace gives none), kind
 * (enum rr_pg_kind, model/rank_result.h: the topology's when its rank set
 * is one of its groups, else from the description) and members. */
struct why_group {
	const char *desc;
	const char *ranks_text; /* as the trace spells it: "[0, 8]" */
	const int32_t *ranks;   /* the members (copied) */
	int32_t nranks;
	int kind;
};

/* One communication kernel of a process group: a collective's kernel on
 * one rank. `order` is its launch order on the rank (the kernel's
 * correlation id); kernels of one group on one rank are taken in that
 * order, ties by start. Pipeline send/receive kernels are not given here. */
struct why_kernel {
	int64_t iteration;
	int64_t start_ns, dur_ns;
	int64_t order;
	int32_t rank;
	int32_t group; /* why_add_group()'s index */
};

struct why;

/* A new engine for a job of o->pp stages and o->vpp chunks. Never NULL
 * (out of memory ends the process, docs/contracts.md §7). */
struct why *why_new(const struct why_opts *o);
void why_free(struct why *w);

/* The rows, in any order. A rank given twice keeps its first place. */
void why_add_rank(struct why *w, const struct why_rank *r);
void why_add_trace(struct why *w, const struct why_trace *t);
void why_add_op(struct why *w, const struct why_op *op);
/* Returns the group's index (for why_kernel.group). */
int32_t why_add_group(struct why *w, const struct why_group *g);
void why_add_kernel(struct why *w, const struct why_kernel *k);

/* ---- results -------------------------------------------------------- */

/* Why a p2p row, a p2p kernel or a collective instance has no numbers:
 * never a guess (docs/why.md "Incomplete jobs"). */
enum why_status {
	WHY_OK = 0,
	WHY_PEER_MISSING,  /* the peer's trace is not there (or has no ops) */
	WHY_NO_PEER_ROW,   /* the peer's trace has no matching transfer */
	WHY_AMBIGUOUS,     /* two transfers claim the same key */
	WHY_UNLABELLED,    /* the row could not be matched to a compute */
	WHY_NO_PLACE,      /* the rank is in no pipeline of the topology */
	WHY_RANK_MISSING,  /* a member of the group has no trace */
	WHY_COUNT_DIFFERS, /* the members launched different numbers of the
			    * group's kernels: the order cannot match them */
	WHY_NSTATUS
};
/* "ok", "peer missing", ... */
const char *why_status_name(enum why_status s);

enum why_dir { WHY_FORWARD = 0, WHY_BACKWARD = 1 };
enum why_role { WHY_SEND = 0, WHY_RECV = 1 };
/* Which neighbour a p2p kernel waited for. */
enum why_side { WHY_SIDE_NONE = 0, WHY_SIDE_PREVIOUS, WHY_SIDE_NEXT };
const char *why_dir_name(enum why_dir d);   /* "forward", "backward" */
const char *why_role_name(enum why_role r); /* "send", "recv" */
const char *why_side_name(enum why_side s); /* NULL, "previous", "next" */

/* One transfer of a pipeline send or receive (one row of the op table that
 * really moves a tensor): with its peer's transfer, the wait is the part
 * of its kernel before the peer's kernel started (clamped to [0, dur]),
 * the transfer the rest. Kernel times are its call's (docs/why.md). */
struct why_p2p {
	int64_t iteration;
	int32_t rank, peer_rank; /* peer -1 when the topology has none */
	int32_t kernel;          /* index into why_result.kernels */
	int32_t microbatch, chunk;
	int64_t start_ns, dur_ns;     /* the kernel, corrected */
	int64_t wait_ns, transfer_ns; /* when status is WHY_OK */
	int64_t peer_start_ns;        /* the peer's kernel, corrected */
	uint8_t dir, role, status;
};

/* One p2p kernel (one pipeline call's kernels: their interval): the wait
 * until its last peer started, and the transfer after; side and
 * waited_for name that peer when the kernel waited (wait > 0). */
struct why_p2p_kernel {
	int64_t iteration;
	int32_t rank, stage;
	int32_t seq; /* its order among the rank's p2p kernels of the iteration */
	int64_t start_ns, dur_ns;
	int64_t wait_ns, transfer_ns; /* when status is WHY_OK */
	int32_t waited_for;           /* rank, -1 when it did not wait */
	int32_t transfers;            /* its transfers (why_p2p rows) */
	uint8_t side, status;
};

/* One collective instance: the n-th kernel of one process group on each
 * of its members in one iteration. Arrival = a member's kernel start;
 * transfer = the last arriver's kernel duration (its kernel does not
 * wait). The times are set when status is WHY_OK. */
struct why_coll {
	int64_t iteration;
	int32_t group;         /* why_add_group()'s index */
	int32_t seq;           /* the instance's order within the group in the iteration */
	int32_t present, size; /* members with a kernel, members of the group */
	int64_t first_ns, last_ns, skew_ns, transfer_ns;
	int32_t first_rank, last_rank; /* ties: the lowest rank */
	int32_t missing_rank;          /* one member without a kernel, or -1 */
	uint8_t status;
};

/* Per rank and kind of process group (over the complete instances of every
 * iteration): how often it arrived last, how long it waited on average
 * (last arrival − its arrival), and by how much it was last on average
 * when it was (its arrival − the one before it: what the others waited for
 * it alone). chance is the share of last arrivals that chance gives (the
 * mean of 1 / group size); late marks a rank that arrives last far more
 * often than chance (docs/why.md). */
struct why_coll_rank {
	int32_t rank;
	int kind;   /* enum rr_pg_kind */
	char *desc; /* the groups' description when kind is unknown
		     * (EMBEDDING_GROUP, default_pg, ...), else NULL */
	int64_t instances, times_last;
	double share_last, chance;
	int64_t mean_wait_ns;
	int64_t last_by_ns; /* 0 when it was never last */
	bool late;
};

/* Per (iteration, rank): the p2p kernels' waits by side and their
 * transfers, and the rest of the rank's bubble (no work: idle, or work
 * that does not wait for a neighbour). */
struct why_bubble {
	int64_t iteration;
	int32_t rank, stage;
	int64_t bubble_ns; /* -1 unknown (then no_work_ns too) */
	int64_t wait_prev_ns, wait_next_ns, transfer_ns, no_work_ns;
	int32_t incomplete; /* p2p kernels without numbers */
};

/* Per (iteration, stage, the neighbour's stage): the p2p kernels of the
 * stage's ranks whose last peer is on that stage, their waits and
 * transfers (a kernel that did not wait counts under the stage of its
 * last peer too). For the chart of wait vs transfer per stage pair. */
struct why_hop {
	int64_t iteration;
	int32_t stage, peer_stage;
	int64_t kernels, wait_ns, transfer_ns;
};

struct why_result {
	struct why_p2p *p2p; /* by iteration, rank, kernel, dir, role */
	size_t np2p;
	struct why_p2p_kernel *kernels; /* by iteration, rank, seq */
	size_t nkernels;
	struct why_coll *colls; /* by iteration, group, seq */
	size_t ncolls;
	struct why_coll_rank *coll_ranks; /* by rank, kind, desc */
	size_t ncoll_ranks;
	struct why_bubble *bubbles; /* by iteration, rank */
	size_t nbubbles;
	struct why_hop *hops; /* by iteration, stage, peer stage */
	size_t nhops;
	/* The ranks' clock offsets (subtracted from their times): offset[i]
	 * of rank[i], ascending ranks; 0 everywhere when not corrected. */
	int32_t *clock_rank;
	int64_t *clock_offset_ns;
	size_t nclock;
	int64_t clock_error_ns; /* -1: not estimated (keep_clocks, or no samples) */
	bool clock_corrected;
	size_t p2p_unpaired, kernels_incomplete, colls_incomplete;
	struct strbuf notes; /* what was assumed or left out, one per line */
};

/* Analyses the rows into r (release with why_result_release()). Returns 0,
 * or PP_EINVAL with the reason in err when the options or the rows cannot
 * be analysed at all (pp < 1, a p2p row of a rank with no place); rows
 * that cannot be matched are results with a status, not errors. */
int why_run(struct why *w, struct why_result *r, struct strbuf *err);
void why_result_release(struct why_result *r);

/* The clock offset why_run() took off rank's times (0 when unknown). */
int64_t why_clock_offset(const struct why_result *r, int32_t rank);

/* ---- the critical path ---------------------------------------------- */

enum why_seg_kind {
	WHY_SEG_OP = 0, /* the op runs; a communication op: after its last
			 * participant arrived */
	WHY_SEG_DELAY,  /* between the end of the op's binding dependency
			 * and its start (a launch delay, the CPU) */
	WHY_SEG_START   /* from the step's start to the path's first op */
};
const char *why_seg_kind_name(enum why_seg_kind k); /* "op", "delay", "start" */

/* One segment of the critical path: [start_ns, start_ns + dur_ns) of the
 * worker (dp_rank, stage) whose op (optype, op_seq) the path follows
 * there; the op's own interval is [op_start_ns, op_end_ns). Segments are
 * disjoint, in time order, and cover the step's span exactly. */
struct why_seg {
	int64_t iteration;
	int32_t seq;
	int32_t rank, dp_rank, stage;
	int16_t optype; /* enum op_type */
	int32_t op_seq; /* the op's seq_id */
	uint8_t kind;
	bool placeholder; /* the op is one the what-if engine inserted */
	int64_t start_ns, dur_ns;
	int64_t op_start_ns, op_end_ns;
};

/* Shares of one step's critical path: per (op type, stage) and per rank,
 * largest first; kind WHY_SEG_DELAY and WHY_SEG_START have optype -1. */
struct why_share {
	int64_t iteration;
	int32_t rank, stage; /* -1 where the share is not by it */
	int16_t optype;
	uint8_t kind;
	int64_t ns;
	double share; /* of the step */
};

struct why_cpath {
	struct why_seg *seg; /* by iteration, seq */
	size_t nseg;
	int64_t *step_iteration, *step_start_ns, *step_ns; /* per step */
	size_t nsteps;
	struct why_share *by_type; /* by iteration, then ns descending */
	size_t nby_type;
	struct why_share *by_rank; /* by iteration, then ns descending */
	size_t nby_rank;
};

/* The critical path of every step of e (built on clock-corrected times,
 * whatif_recorded()): from the op that ends last, back through each op's
 * binding dependency (its predecessor that ended last; for a
 * communication op, the participant that arrived last), gaps as delay
 * segments (docs/why.md "The critical path"). Release with
 * why_cpath_release(). */
void why_cpath_run(const struct whatif *e, struct why_cpath *out);
void why_cpath_release(struct why_cpath *c);

/* Appends one sentence on step index si of c: "62.0 % of the step is
 * backward-compute on stage 3; 18.0 % grads-reduce-scatter on stage 1 (rank
 * 41); ...", the n largest (op type, stage) shares (n >= 1). */
void why_cpath_sentence(const struct why_cpath *c, size_t si, size_t n, struct strbuf *sb);

#endif
