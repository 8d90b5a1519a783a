/* agg_int.h — what the parts of ppagg share: the in-memory model of one
 * iteration (ranks, their steps, blocks and category stats), the database
 * access (agg_db.c), the chart and CSV writers (agg_chart.c), the report
 * (agg_html.c) and the renderer (agg_render.c). Internal to ppagg.
 */
#ifndef AGG_INT_H
#define AGG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agg.h"
#include "util/arena.h"
#include "util/strbuf.h"

struct topology;

/* Drawn categories, in drawing order (largest boxes first). */
enum agg_cat {
	AGG_CAT_BWD_COMP, AGG_CAT_FWD_COMP, AGG_CAT_RECOMPUTE, AGG_CAT_FWD_COMM,
	AGG_CAT_BWD_COMM, AGG_CAT_DP_COMM, AGG_CAT_PP_COMM, AGG_CAT_OPT_COMP,
	AGG_NCATS
};

struct agg_cat_style {
	const char *name;  /* category name of the database */
	const char *color; /* "#rrggbb" */
	double lo, hi;     /* box extent relative to the row centre */
};
extern const struct agg_cat_style agg_cat_styles[AGG_NCATS];
/* mkdir -p of an output folder without following planted symlinks
 * (safefile.h); reports the error itself. 0 or PP_EIO. */
int agg_mkdir_p(const char *path);

/* AGG_CAT_* of a category name (recompute flag for the subset), or -1. */
int agg_cat_of(const char *name, bool recompute);

/* One block of a timeline: [first kernel start, last kernel end] of one
 * category's kernels in one step. */
struct agg_block {
	int64_t s, e;
	int32_t seq;    /* step number within its phase */
	uint8_t cat;    /* enum agg_cat */
	uint8_t phase;  /* 1 fwd 2 bwd 3 pp 4 dp 5 opt */
	int32_t kernels;
};

/* One fwd/bwd step (steps view), for the overlap chart and the CSV. */
struct agg_step {
	uint8_t phase; /* 1 fwd, 2 bwd, 3 pp, 4 dp, 5 opt */
	int32_t seq;
	bool has_kernels;
	int64_t cpu_s, cpu_e, s, e, wall, comp, comm, overlap;
	int32_t kernels;
	int32_t chunk, microbatch; /* VPP labels of fwd/bwd steps when the
				    * topology is known (agg_label_steps), else -1 */
};

struct agg_catstat {
	const char *category; /* arena string */
	int64_t kernels, sum, busy;
};

struct agg_rank {
	struct agg_rank_in in;
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
	struct arena arena;
};

/* Finds the rank or NULL (binary search). */
struct agg_rank *agg_iter_rank(const struct agg_iter *it, int rank);
void agg_iter_release(struct agg_iter *it);

/* ---- database (agg_db.c) ---- */
struct agg_db;
/* Opens an existing database read-write; NULL with a message in err. */
struct agg_db *agg_db_open(const char *path, char *err, size_t errlen);
void agg_db_close(struct agg_db *db);
const char *agg_db_errmsg(struct agg_db *db);
/* Resolves names ("15" or "iteration_15") to iteration numbers; no names =
 * every iteration in the database. Fills a malloc'd sorted array. Names
 * that match nothing are reported and counted in *nmissing. */
int agg_db_iterations(struct agg_db *db, char **names, int nnames, int **out, int *nout,
		      int *nmissing);
/* Loads ranks (with steps and category stats) of one iteration into it. */
int agg_db_load(struct agg_db *db, int iteration, struct agg_iter *it);
/* Loads the timeline blocks of every rank of it (one kernels scan). */
int agg_db_load_blocks(struct agg_db *db, struct agg_iter *it);
/* Feeds the distinct (pg_desc, pg_ranks) of an iteration to topo_infer_add. */
int agg_db_infer_topology(struct agg_db *db, int iteration, struct topology *t);
/* Deletes and rewrites the ppagg rows of every iteration, one transaction. */
int agg_db_write(struct agg_db *db, struct agg_iter *its, size_t n);

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
