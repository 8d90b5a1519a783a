/* db_agg.h — what ppagg reads from the database and the rows it writes.
 *
 * ppagg opens the file with db_open(..., DB_EXISTING, ...), reads each
 * iteration's traces, category rows, steps, timeline blocks, process
 * groups and ops through the callbacks below (one query each, rows in a
 * stable order), and rewrites its own rows (pp_groups, pipelines,
 * stragglers; the topology and the what-if analysis) in IMMEDIATE
 * transactions, so a re-run gives the same content and readers never see
 * half of it. Plain structs: categories and phases are
 * model/rank_result.h's enums, statuses and modes schema.h's codes. Strings
 * in a callback's struct live until the callback returns.
 *
 * Every function returns 0, a callback's non-zero value (which stops the
 * query), or PP_EDB with db_errmsg(db). Errors here are not sticky.
 */
#ifndef DB_AGG_H
#define DB_AGG_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"

/* Calls fn with every iteration number whose traces match name: a folder
 * name or an iteration number ("iteration_15", "15"); NULL = every
 * iteration. Increasing order, each number once; *found = how many. */
int db_agg_iterations(struct db *db, const char *name, int (*fn)(void *ctx, int64_t iteration),
		      void *ctx, int *found);

/* One stored trace of an iteration. */
struct db_agg_trace {
	int64_t id;    /* the key of its category, step, block rows */
	bool has_rank; /* false: neither header nor file name gave one */
	int64_t rank;
	const char *folder, *path, *error; /* NULL when absent */
	int status;                        /* DB_STATUS_* */
	bool has_mode;
	int mode;        /* DB_MODE_* */
	bool has_window; /* it has GPU events: the metrics are set */
	int64_t window_start_ns, window_end_ns, gpu_busy_ns, idle_ns, bubble_ns;
	int64_t comp_busy_ns, comm_busy_ns, overlap_ns;
	double coverage;
};
/* Every trace of iteration, ordered by rank (none first), then path. */
int db_agg_traces(struct db *db, int64_t iteration,
		  int (*fn)(void *ctx, const struct db_agg_trace *t), void *ctx);

/* One row of the annotations view: the GPU time of a user annotation name
 * in one trace (docs/database.md). */
struct db_agg_annotation {
	int64_t trace_id, rank;
	const char *name;
	int64_t calls, kernels, gpu_ns, comp_ns, comm_ns, overlap_ns;
};
/* The annotation rows of iteration, ordered by rank, then most GPU time
 * first, then name: what the report's table of the top annotations per
 * rank (or summed per stage) reads. */
int db_agg_annotations(struct db *db, int64_t iteration,
		       int (*fn)(void *ctx, const struct db_agg_annotation *a), void *ctx);

/* One category_stats row. */
struct db_agg_category {
	int64_t trace_id, rank;
	enum rr_category category;
	int64_t kernels, sum_ns, busy_ns;
};
/* The category rows of iteration, ordered by rank and category name. */
int db_agg_categories(struct db *db, int64_t iteration,
		      int (*fn)(void *ctx, const struct db_agg_category *c), void *ctx);

/* One step (the steps view plus the VPP labels a PP-timer import records). */
struct db_agg_step {
	int64_t trace_id, rank;
	enum rr_phase phase;
	int64_t seq;
	int64_t cpu_start_ns, cpu_end_ns;
	bool has_times;                    /* start/end known (kernels, or a PP-timer step) */
	int64_t start_ns, end_ns, wall_ns; /* wall 0 without times */
	int64_t comp_ns, comm_ns, overlap_ns, kernels;
	int64_t chunk, mbs; /* recorded VPP labels, -1 when unknown */
};
/* The steps of iteration, trace by trace (ascending id), each trace's
 * ordered by phase name and seq. */
int db_agg_steps(struct db *db, int64_t iteration,
		 int (*fn)(void *ctx, const struct db_agg_step *s), void *ctx);

/* The kernels of one (trace, category, phase, seq, recompute flag). */
struct db_agg_block {
	int64_t trace_id, rank;
	enum rr_category category;
	enum rr_phase phase;
	int64_t seq;
	bool recompute;
	int64_t start_ns, end_ns; /* first kernel start, last kernel end */
	int64_t kernels;
};
/* The timeline blocks of iteration: kernels attributed to a step, memory
 * and other kernels left out; ordered by rank, category name, phase name,
 * seq, recompute flag. One scan of the iteration's kernels. */
int db_agg_blocks(struct db *db, int64_t iteration,
		  int (*fn)(void *ctx, const struct db_agg_block *b), void *ctx);
/* The same for the n traces trace_ids only, in that order (each a rowid
 * range of the kernels: a few ranks of a large iteration are read without
 * scanning the others). */
int db_agg_trace_blocks(struct db *db, const int64_t *trace_ids, size_t n,
			int (*fn)(void *ctx, const struct db_agg_block *b), void *ctx);

/* db_agg_blocks() and db_why_kernels() (db_why.h) from one scan of the
 * iteration's kernels: each block to fn, each communication kernel of a
 * process group to kfn, the rows and orders of both. For the why analysis,
 * which keeps the blocks for the timelines. */
struct db_why_kernel;
int db_agg_blocks_why(struct db *db, int64_t iteration,
		      int (*fn)(void *ctx, const struct db_agg_block *b),
		      int (*kfn)(void *ctx, const struct db_why_kernel *k), void *ctx);

/* Calls fn with each distinct (description, ranks) of the process groups
 * that the iteration's kernels name (both present). */
int db_agg_process_groups(struct db *db, int64_t iteration,
			  int (*fn)(void *ctx, const char *desc, const char *ranks), void *ctx);

/* One op of an iteration (the ops view), with the worker its trace
 * records (op-trace imports); has_worker false: the caller's topology
 * places it. */
struct db_agg_op {
	int64_t trace_id, rank;
	bool has_worker;
	int dp_rank, stage;
	int64_t source_id; /* its op-trace import (0 = none) */
	int optype;        /* enum op_type (model/optype.h) */
	int32_t seq_id;
	int16_t mc, gmc, mb_id;
	bool has_step;    /* labelled from a step (db_op): */
	int32_t step_seq; /* ... the seq of that fwd/bwd step */
	int64_t start_ns, end_ns;
};
/* The ops of iteration, trace by trace (ascending id), each trace's in the
 * order they were stored. */
int db_agg_ops(struct db *db, int64_t iteration, int (*fn)(void *ctx, const struct db_agg_op *o),
	       void *ctx);
/* The same of the traces that record no worker (has_worker false): the
 * ops derived from Kineto traces; an import's are not read. */
int db_agg_kineto_ops(struct db *db, int64_t iteration,
		      int (*fn)(void *ctx, const struct db_agg_op *o), void *ctx);

/* An op-trace import: the job's meta (when it had one) and the op type
 * order of its schema (comma-separated names, or NULL). */
struct db_agg_op_source {
	int64_t id;
	const char *path;
	bool has_meta;
	const char *trial_name;
	int64_t run_id, dp_size, pp_size, tp_size, dsp_size, vpp_size, world_size;
	const char *optype_order;
};
/* Calls fn with the import id (*found: 0 when there is none). */
int db_agg_op_source(struct db *db, int64_t id,
		     int (*fn)(void *ctx, const struct db_agg_op_source *s), void *ctx, int *found);

/* The worker that the ops of a trace of iteration record (imports). */
struct db_agg_op_worker {
	int64_t trace_id, rank;
	int dp_rank, stage;
};
int db_agg_op_workers(struct db *db, int64_t iteration,
		      int (*fn)(void *ctx, const struct db_agg_op_worker *w), void *ctx);

/* ppagg's rows (docs/contracts.md §3: pp_groups, pipelines, stragglers). */
struct db_agg_pp_group {
	int64_t iteration;
	int pp_group, stage, rank;
	bool complete;   /* every rank of the group is ok */
	bool has_window; /* group window known */
	int64_t window_start_ns, window_end_ns;
	bool has_rank; /* this rank's idle/bubble known */
	int64_t idle_ns, bubble_ns;
};
struct db_agg_pipeline {
	int64_t iteration;
	int pp_group;
	int64_t measured_ns;
	bool has_ideal;
	int64_t ideal_ns, gap_ns;
	double bubble_ratio;
};
struct db_agg_straggler {
	int64_t iteration;
	int rank;
	const char *group_kind; /* "dp" or "stage" */
	int group;
	const char *metric;
	int64_t value_ns, median_ns;
	double excess;
};

/* The writer: db_agg_begin() starts the transaction (NULL on failure),
 * db_agg_clear() deletes an iteration's rows, the add functions insert;
 * db_agg_commit() commits (on failure it rolls back), db_agg_rollback()
 * abandons. Both end the writer. */
struct db_agg_writer;
struct db_agg_writer *db_agg_begin(struct db *db);
int db_agg_clear(struct db_agg_writer *w, int64_t iteration);
int db_agg_add_pp_group(struct db_agg_writer *w, const struct db_agg_pp_group *r);
int db_agg_add_pipeline(struct db_agg_writer *w, const struct db_agg_pipeline *r);
int db_agg_add_straggler(struct db_agg_writer *w, const struct db_agg_straggler *r);
int db_agg_commit(struct db_agg_writer *w);
void db_agg_rollback(struct db_agg_writer *w);

/* The topology ppagg resolved (the ops view places the ops of a trace that
 * records no worker with it): cleared and written whole. */
struct db_agg_topology {
	int64_t rank;
	int pp_group, stage, dp_rank; /* dp_rank: the rank's model replica */
	int pp_size, vpp;             /* label the ops (op_t.step_seq); 0 = NULL */
};
int db_agg_clear_topology(struct db_agg_writer *w);
int db_agg_add_topology(struct db_agg_writer *w, const struct db_agg_topology *r);

/* The what-if analysis (views whatif, whatif_optypes, whatif_workers,
 * whatif_steps): the result of ppagg's last run, cleared and written
 * whole. NaN stands for NULL; times are ns, stored rounded. */
struct db_agg_whatif {
	int64_t iterations, first_iteration, last_iteration;
	double t_base_ns, t_ns, t_ideal_ns;
	double slowdown, launch_slowdown, m_w, m_w_add, m_s, m_s_add;
	const char *m_w_ranks; /* or NULL */
	const char *verdict;
	int64_t ranks_per_cell; /* 0 = NULL */
	const char *cell_ops;   /* or NULL */
	int vpp;                /* 0 = NULL */
	bool has_clock_error;
	int64_t clock_error_ns;
	const char *notes; /* or NULL */
};
struct db_agg_whatif_worker {
	int64_t rank;
	int dp_rank, stage;
	double s_dp, s_pp, slowdown;
	bool has_clock_offset;
	int64_t clock_offset_ns;
	int64_t slow_rank; /* the rank of the worker's cell whose own compute
			    * stands out; -1 = NULL (one rank, or none does) */
};
int db_agg_clear_whatif(struct db_agg_writer *w);
int db_agg_add_whatif(struct db_agg_writer *w, const struct db_agg_whatif *r);
int db_agg_add_whatif_optype(struct db_agg_writer *w, const char *optype, double slowdown);
int db_agg_add_whatif_worker(struct db_agg_writer *w, const struct db_agg_whatif_worker *r);
int db_agg_add_whatif_step(struct db_agg_writer *w, int64_t iteration, double t_ns,
			   double t_ideal_ns, double slowdown);

#endif
