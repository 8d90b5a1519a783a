/* agg_int.h — what the parts of ppagg share: the in-memory model of one
 * iteration (ranks, their steps, blocks and category stats), loading it
 * from the database and writing ppagg's rows (agg_load.c, through
 * storage/db_agg.h), the chart and CSV writers (agg_chart.c), the report
 * (agg_html.c) and the renderer (agg_render.c). Internal to ppagg.
 */
#ifndef AGG_INT_H
#define AGG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agg.h"
#include "model/rank_result.h"
#include "util/arena.h"
#include "util/strbuf.h"

struct db;
struct topology;

/* Drawn categories, in drawing order (largest boxes first). */
enum agg_cat {
	AGG_CAT_BWD_COMP, AGG_CAT_FWD_COMP, AGG_CAT_RECOMPUTE, AGG_CAT_FWD_COMM,
	AGG_CAT_BWD_COMM, AGG_CAT_DP_COMM, AGG_CAT_PP_COMM, AGG_CAT_OPT_COMP,
	AGG_NCATS
};

struct agg_cat_style {
	enum rr_category category; /* what the boxes show (its name labels them) */
	const char *color; /* "#rrggbb" */
	double lo, hi;     /* box extent relative to the row centre */
};
extern const struct agg_cat_style agg_cat_styles[AGG_NCATS];
/* mkdir -p of an output folder without following planted symlinks
 * (safefile.h); reports the error itself. 0 or PP_EIO. */
int agg_mkdir_p(const char *path);

/* AGG_CAT_* of a kernel category (recompute: the kernel was recomputed,
 * for the subset's class), or -1 when it is not drawn. */
int agg_cat_of(enum rr_category c, bool recompute);
/* A phase's name for charts and CSVs; "-" for RR_NOPHASE. */
const char *agg_phase_name(enum rr_phase p);

/* One block of a timeline: [first kernel start, last kernel end] of one
 * category's kernels in one step. */
struct agg_block {
	int64_t s, e;
	int32_t seq;    /* step number within its phase */
	uint8_t cat;    /* enum agg_cat */
	int8_t phase;   /* enum rr_phase */
	int32_t kernels;
};

/* One fwd/bwd step (steps view), for the overlap chart and the CSV. */
struct agg_step {
	int8_t phase; /* enum rr_phase */
	int32_t seq;
	bool has_kernels;
	int64_t cpu_s, cpu_e, s, e, wall, comp, comm, overlap;
	int32_t kernels;
	int32_t chunk, microbatch; /* VPP labels of fwd/bwd steps when the
				    * topology is known (agg_label_steps), else -1 */
};

struct agg_catstat {
	enum rr_category category;
	int64_t kernels, sum, busy;
};

struct agg_rank {
	struct agg_rank_in in;
	int64_t trace_id; /* its trace (traces.id); 0 for a conflicted rank */
	int ntraces;      /* traces claiming the rank: > 1 is a conflict */
	/* status: "ok", "partial", "failed" or "conflict"; mode: "megatron",
	 * "generic" or NULL; error: why it failed, or the conflict's traces. */
	const char *status, *mode, *error, *path, *folder; /* arena strings or NULL */
	int64_t idle, comp_busy, comm_busy, overlap;
	double coverage;
	struct agg_step *steps;
	size_t nsteps;
	struct agg_block *blocks;
	size_t nblocks, ablocks;
	struct agg_catstat *cats;
	size_t ncats;
};

struct agg_iter {
	int iteration;
	const char *folder;
	struct agg_rank *ranks; /* sorted by rank */
	size_t nranks;
	struct agg_result res;
	int nfailed, nok;
	int nconflicts;        /* ranks claimed by more than one trace */
	const char **unranked; /* paths of traces without any rank (arena) */
	size_t nunranked;
	struct arena arena;
};

/* Finds the rank or NULL (binary search). */
struct agg_rank *agg_iter_rank(const struct agg_iter *it, int rank);
void agg_iter_release(struct agg_iter *it);

/* ---- the database (agg_load.c, through storage/db_agg.h) ---- */
/* Resolves names ("15" or "iteration_15") to iteration numbers; no names =
 * every iteration in the database. Fills a malloc'd sorted array. Names
 * that match nothing are reported and counted in *nmissing. PP_EDB
 * (db_errmsg) or PP_ENOMEM. */
int agg_load_iterations(struct db *db, char **names, int nnames, int **out, int *nout,
			int *nmissing);
/* Loads the ranks (with steps and category stats) of one iteration into
 * it. A rank claimed by several traces becomes one rank with status
 * "conflict" and none of their data; traces without a rank are listed in
 * it->unranked. */
int agg_load(struct db *db, int iteration, struct agg_iter *it);
/* Loads the timeline blocks of every rank of it (one kernels scan). */
int agg_load_blocks(struct db *db, struct agg_iter *it);
/* Feeds the distinct (pg_desc, pg_ranks) of an iteration to topo_infer_add. */
int agg_load_process_groups(struct db *db, int iteration, struct topology *t);
/* Deletes and rewrites the ppagg rows of every iteration, one transaction. */
int agg_store(struct db *db, const struct agg_iter *its, size_t n);

/* ---- charts and CSVs (agg_chart.c) ---- */
struct agg_chart_opts {
	bool individual; /* each row's time starts at its own first event */
	bool png, svg;   /* outputs the .gp script writes */
};
/* Each writes <dir>/<stem>.gp (and the CSVs) and appends the .gp path to
 * jobs (one per line) for the renderer. Return 0 or PP_EIO. */
int agg_chart_rank(const char *dir, const struct agg_iter *it, const struct agg_rank *r,
		   const struct agg_chart_opts *co, struct strbuf *jobs);
int agg_chart_rows(const char *dir, const char *title, const struct agg_iter *it,
		   const int *ranks, const int *split, int n, const struct agg_chart_opts *co,
		   struct strbuf *jobs);

/* ---- rendering (agg_render.c) ---- */
/* Runs gnuplot on every script of jobs (one path per line), at most
 * processes at a time, each in its script's folder. Returns the number of
 * scripts that failed; *ms gets the wall time. 0 and a warning when
 * gnuplot is not installed. */
int agg_render(const struct strbuf *jobs, int processes, double *ms, bool quiet);

/* ---- report (agg_html.c) ---- */
int agg_html_write(const char *out, const struct agg_opts *o, const struct topology *t,
		   const struct agg_iter *its, size_t n);
/* Appends s to sb with &<>"' escaped. */
void agg_html_escape(struct strbuf *sb, const char *s);

#endif
