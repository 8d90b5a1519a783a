/* db_compare.h — the comparison of two runs (docs/compare.md): what ppagg
 * reads of a run's database, its own or a baseline's, and the rows it
 * writes.
 *
 * A baseline is opened with db_open(..., DB_READONLY | DB_ANY_VERSION, ...):
 * never migrated, of any version from 1 to SCHEMA_VERSION. The reads below
 * use only what a file of its version holds (the stable views of
 * docs/database.md, and tables only where db_cmp_caps() says they exist),
 * and name categories, op types and phases by their text, so that a file
 * whose code tables are older still reads right. "A rank of an iteration"
 * means one trace stored whole (status ok) that no other trace of the
 * iteration claims the rank of (docs/contracts.md §8).
 *
 * The writer rewrites the tables behind the views comparison,
 * compare_summary, compare_categories, compare_optypes, compare_groups and
 * compare_ranks, and ppagg's shape of the job (agg_shape), in one IMMEDIATE
 * transaction: db_cmp_begin() deletes every row, the add functions insert,
 * db_cmp_commit() makes them visible at once (on failure it rolls back).
 *
 * Every function returns 0, a callback's non-zero value (which stops the
 * query), or PP_EDB with db_errmsg(db). Errors here are not sticky.
 */
#ifndef DB_COMPARE_H
#define DB_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"

/* What a database holds, by its version and its tables. */
struct db_cmp_caps {
	int version;        /* PRAGMA user_version */
	bool aggregated;    /* ppagg's rows: pp_groups has rows */
	bool topology;      /* agg_topology (version 4) */
	bool topology_size; /* its pp_size and vpp (version 5) */
	bool ops;           /* op_t (version 4) */
	bool whatif;        /* the what-if views (version 4) */
	bool shape;         /* agg_shape (version 7) */
};
int db_cmp_caps(struct db *db, struct db_cmp_caps *caps);

/* The iterations with ppagg's rows (pp_groups), ascending. */
int db_cmp_aggregated(struct db *db, int (*fn)(void *ctx, int64_t iteration), void *ctx);

/* Per rank of iteration: the GPU time (busy_ns) of each of its
 * category_stats rows, by the category's name. */
int db_cmp_categories(struct db *db, int64_t iteration,
		      int (*fn)(void *ctx, int64_t rank, const char *category, int64_t busy_ns),
		      void *ctx);

/* Per rank of iteration and phase ("fwd", "bwd"): how many steps and the
 * sum of their comp_ns (an import's step: its duration). */
int db_cmp_steps(struct db *db, int64_t iteration,
		 int (*fn)(void *ctx, int64_t rank, const char *phase, int64_t steps,
			   int64_t comp_ns),
		 void *ctx);

/* Per rank of iteration and op type (by name): how many ops and their
 * summed duration. Only when caps.ops. */
int db_cmp_ops(struct db *db, int64_t iteration,
	       int (*fn)(void *ctx, int64_t rank, const char *optype, int64_t ops, int64_t ns),
	       void *ctx);

/* Per rank of iteration and process group of its communication kernels:
 * the group's description ("" when the trace names none), how many
 * kernels and their summed duration. One scan of the iteration's kernels. */
int db_cmp_groups(struct db *db, int64_t iteration,
		  int (*fn)(void *ctx, int64_t rank, const char *desc, int64_t kernels, int64_t ns),
		  void *ctx);

/* The pipelines rows of iteration: PP group, measured_ns, bubble_ratio. */
int db_cmp_pipelines(struct db *db, int64_t iteration,
		     int (*fn)(void *ctx, int pp_group, int64_t measured_ns, double bubble_ratio),
		     void *ctx);

/* Where each rank sits: agg_topology's row when caps.topology (pp_size
 * and vpp -1 without caps.topology_size or when NULL), else the pp_groups
 * rows of iteration (dp_rank, pp_size and vpp -1). */
struct db_cmp_place {
	int64_t rank;
	int pp_group, stage, dp_rank, pp_size, vpp;
};
int db_cmp_placement(struct db *db, const struct db_cmp_caps *caps, int64_t iteration,
		     int (*fn)(void *ctx, const struct db_cmp_place *p), void *ctx);

/* ppagg's shape of the job (agg_shape): the sizes its topology had, the
 * VPP it decided and the micro-batches per pipeline; 0 where not known. */
struct db_cmp_shape {
	int64_t ranks, tp, cp, ep, pp, dp, vpp, microbatches;
};
/* *found false when caps.shape is false or the table has no row. */
int db_cmp_shape(struct db *db, const struct db_cmp_caps *caps, struct db_cmp_shape *s,
		 bool *found);

/* The what-if row (caps.whatif): iterations analysed, S and the verdict;
 * *found false when there is none. The strings live until the next call. */
struct db_cmp_whatif {
	int64_t iterations, first_iteration, last_iteration;
	double slowdown;
	char verdict[16];
};
int db_cmp_whatif(struct db *db, struct db_cmp_whatif *w, bool *found);
/* Its per-step rows: iteration, t_ns, t_ideal_ns (the step's S is their
 * ratio). */
int db_cmp_whatif_steps(struct db *db,
			int (*fn)(void *ctx, int64_t iteration, int64_t t_ns, int64_t t_ideal_ns),
			void *ctx);

/* ---- the rows written ---------------------------------------------- */

/* The comparison itself (the view comparison): one row. */
struct db_cmp_run {
	const char *baseline;        /* the baseline's path as given */
	int64_t baseline_version;    /* its schema version */
	const char *base_iterations; /* "1, 2, 3" */
	const char *new_iterations;
	int64_t compared_at; /* unix seconds */
	double threshold, noise_floor, min_share;
	bool regression;
	const char *sentence;
	const char *missing; /* what could not be compared, one per line, or NULL */
};

/* A value of the summary: a number (stored as an integer when integer is
 * set: a size), or a text (the verdict); NaN and NULL text stand for NULL. */
struct db_cmp_value {
	const char *text;
	double num;
	bool integer;
};
struct db_cmp_summary {
	const char *metric;
	struct db_cmp_value base, new_;
	double change, noise; /* NaN = NULL */
	const char *noise_from;
	int flagged; /* 0, 1; -1 = NULL */
	const char *note;
};

/* One row of compare_categories (dim 0), compare_optypes (1) or
 * compare_groups (2). stage -1 = NULL (the whole job). */
struct db_cmp_key {
	int dim;
	int64_t stage;
	const char *key;
	double base_ns, new_ns, change, noise; /* NaN = NULL */
	const char *noise_from;
	bool flagged;
};

struct db_cmp_rank {
	int64_t rank, stage; /* stage -1 = NULL */
	const char *host;    /* NULL: the database records no host */
	double base_ns, new_ns, change, stage_change, deviation, noise;
	const char *noise_from;
	bool flagged;
};

/* The writer: db_cmp_begin() starts the transaction and deletes every
 * comparison row and the shape (NULL on failure, db_errmsg()); each set or
 * add function inserts one row and returns 0 or PP_EDB (db_errmsg(), not
 * sticky; the caller then abandons the writer). */
struct db_cmp_writer;
struct db_cmp_writer *db_cmp_begin(struct db *db);
/* The shape of the new run (table agg_shape: its one row). */
int db_cmp_set_shape(struct db_cmp_writer *w, const struct db_cmp_shape *s);
/* What was compared and the verdict (view comparison: its one row). */
int db_cmp_add_run(struct db_cmp_writer *w, const struct db_cmp_run *r);
/* A metric of the whole job (view compare_summary). */
int db_cmp_add_summary(struct db_cmp_writer *w, const struct db_cmp_summary *r);
/* A category, op type or group of a stage (views compare_categories,
 * compare_optypes, compare_groups by r->dim). */
int db_cmp_add_key(struct db_cmp_writer *w, const struct db_cmp_key *r);
/* A rank (view compare_ranks). */
int db_cmp_add_rank(struct db_cmp_writer *w, const struct db_cmp_rank *r);
/* Commits (on failure rolls back) or abandons; both end the writer. */
int db_cmp_commit(struct db_cmp_writer *w);
void db_cmp_rollback(struct db_cmp_writer *w);

#endif
