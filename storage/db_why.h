/* db_why.h — the rows the why analysis reads and the ones it writes
 * (docs/why.md, docs/database.md "The why views").
 *
 * Reads: the communication kernels of an iteration that belong to a
 * process group (pipeline sends and receives left out), the interned
 * process groups and every kernel of one trace (the merged timeline); the
 * ops and the traces come from db_agg.h. Writes: the
 * tables behind the views p2p, p2p_kernels, p2p_bubbles, p2p_hops,
 * collectives, collective_ranks, critical_path, rank_clocks and why, which
 * hold the analysis of ppagg's last run: db_why_begin() deletes them all in
 * an IMMEDIATE transaction, the add functions insert, db_why_commit()
 * makes them visible at once (on failure it rolls back). Plain structs:
 * names of directions, statuses and kinds come as text (the engine's
 * why_*_name()), so this layer knows none of the analysis. -1 stands for
 * NULL where a field says so.
 *
 * Every function returns 0, a callback's non-zero value (which stops the
 * query), or PP_EDB with db_errmsg(db). Errors here are not sticky.
 */
#ifndef DB_WHY_H
#define DB_WHY_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"

/* One communication kernel of a process group (not a pipeline send or
 * receive: category pp_communication is left out). */
struct db_why_kernel {
	int64_t trace_id, rank;
	int64_t pg_id; /* pgroups.id: db_why_groups() */
	int category;  /* enum rr_category */
	int64_t start_ns, dur_ns;
	int64_t order; /* its correlation id, else its index in the trace */
};
/* The iteration's such kernels, trace by trace (ascending id), each
 * trace's in stored order. One scan of the iteration's kernels. */
int db_why_kernels(struct db *db, int64_t iteration,
		   int (*fn)(void *ctx, const struct db_why_kernel *k), void *ctx);

/* Every interned process group with a description and ranks. */
struct db_why_group {
	int64_t id;
	const char *desc, *ranks; /* "DATA_PARALLEL_GROUP", "[0, 8]" */
};
int db_why_groups(struct db *db, int (*fn)(void *ctx, const struct db_why_group *g), void *ctx);

/* Every GPU event of one trace, for a merged timeline of chosen ranks:
 * its name, stream, category and collective codes (enum rr_category,
 * enum rr_coll; model/), its own clock. */
struct db_why_trace_kernel {
	const char *name; /* valid during the callback */
	int64_t stream;   /* -1 = NULL */
	int category, coll;
	int64_t start_ns, dur_ns;
};
/* The kernels of trace trace_id in stored order. One scan of its rows. */
int db_why_trace_kernels(struct db *db, int64_t trace_id,
			 int (*fn)(void *ctx, const struct db_why_trace_kernel *k), void *ctx);

/* ---- the rows written ---------------------------------------------- */

struct db_why_p2p {
	int64_t iteration, rank, kernel; /* kernel: its p2p kernel's seq */
	const char *direction, *role, *status;
	int64_t peer_rank, microbatch, chunk; /* -1 = NULL */
	int64_t start_ns, dur_ns;
	bool measured; /* wait, transfer and the peer's start are set */
	int64_t wait_ns, transfer_ns, peer_start_ns;
	int64_t bytes; /* -1 = NULL */
};

struct db_why_p2p_kernel {
	int64_t iteration, rank, stage, kernel; /* stage -1 = NULL */
	int64_t start_ns, dur_ns;
	bool measured;
	int64_t wait_ns, transfer_ns;
	int64_t waited_for; /* -1 = NULL */
	const char *side;   /* "previous", "next" or NULL */
	int64_t transfers;
	const char *status;
};

struct db_why_bubble {
	int64_t iteration, rank, stage; /* stage -1 = NULL */
	int64_t bubble_ns;              /* -1 = NULL */
	int64_t wait_prev_ns, wait_next_ns, transfer_ns;
	int64_t no_work_ns; /* -1 = NULL */
	int64_t incomplete;
};

struct db_why_hop {
	int64_t iteration, stage, peer_stage, kernels, wait_ns, transfer_ns;
};

/* A process group the collectives name by id (db_why_add_group()). */
struct db_why_group_row {
	int64_t id;
	const char *pg_desc, *pg_ranks, *pg_kind;
};

struct db_why_collective {
	int64_t iteration;
	int64_t group; /* a db_why_add_group() id */
	int64_t seq, size, present;
	bool measured;
	int64_t first_ns, last_ns, skew_ns, first_rank, last_rank, transfer_ns;
	int64_t missing_rank; /* -1 = NULL */
	const char *status;
};

struct db_why_collective_rank {
	int64_t rank;
	const char *pg_kind;
	int64_t instances, times_last;
	double share_last, chance;
	int64_t mean_wait_ns, last_by_ns;
	bool late;
};

struct db_why_segment {
	int64_t iteration, seq, rank, dp_rank, stage;
	int optype; /* enum op_type, -1 = NULL (a delay or the start) */
	int64_t op_seq;
	const char *kind; /* "op", "delay", "start" */
	bool placeholder;
	int64_t start_ns, dur_ns, op_start_ns, op_end_ns;
};

/* The one row of the `why` view. */
struct db_why_summary {
	int64_t iterations, first_iteration, last_iteration;
	int64_t p2p_transfers, p2p_unpaired, p2p_kernels, p2p_kernels_incomplete;
	int64_t collectives, collectives_incomplete;
	int64_t critical_path_steps;
	bool has_clock_error;
	int64_t clock_error_ns;
	bool clocks_corrected;
	const char *notes; /* or NULL */
};

/* The writer: db_why_begin() starts the transaction and deletes every row
 * of the why tables (NULL on failure, db_errmsg()); each add function
 * inserts one row (p2p, p2p_kernels and collectives rows may wait in a
 * batch until db_why_commit()) and returns 0 or PP_EDB (db_errmsg(), not
 * sticky; the caller then abandons the writer). */
struct db_why_writer;
struct db_why_writer *db_why_begin(struct db *db);
/* A transfer: a send or receive that moves a tensor (view p2p). */
int db_why_add_p2p(struct db_why_writer *w, const struct db_why_p2p *r);
/* A p2p kernel: one call of the pipeline's send/receive (view p2p_kernels). */
int db_why_add_p2p_kernel(struct db_why_writer *w, const struct db_why_p2p_kernel *r);
/* A rank's bubble split by cause (view p2p_bubbles). */
int db_why_add_bubble(struct db_why_writer *w, const struct db_why_bubble *r);
/* The waits and transfers of a pair of stages (view p2p_hops). */
int db_why_add_hop(struct db_why_writer *w, const struct db_why_hop *r);
/* A process group the collectives rows name by id. */
int db_why_add_group(struct db_why_writer *w, const struct db_why_group_row *r);
/* A collective instance across its group (view collectives). */
int db_why_add_collective(struct db_why_writer *w, const struct db_why_collective *r);
/* How often a rank arrived last (view collective_ranks). */
int db_why_add_collective_rank(struct db_why_writer *w, const struct db_why_collective_rank *r);
/* A step of the critical path (view critical_path). */
int db_why_add_segment(struct db_why_writer *w, const struct db_why_segment *r);
/* A rank's clock offset (view rank_clocks). */
int db_why_add_clock(struct db_why_writer *w, int64_t rank, int64_t offset_ns);
/* The one row of view why. */
int db_why_set_summary(struct db_why_writer *w, const struct db_why_summary *r);
/* Commits (on failure rolls back) or abandons; both end the writer. */
int db_why_commit(struct db_why_writer *w);
void db_why_rollback(struct db_why_writer *w);

#endif
