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
	AGG_CAT_BWD_COMP,
	AGG_CAT_FWD_COMP,
	AGG_CAT_RECOMPUTE,
	AGG_CAT_FWD_COMM,
	AGG_CAT_BWD_COMM,
	AGG_CAT_DP_COMM,
	AGG_CAT_PP_COMM,
	AGG_CAT_OPT_COMP,
	AGG_NCATS
};

struct agg_cat_style {
	enum rr_category category; /* what the boxes show (its name labels them) */
	const char *color;         /* "#rrggbb" */
	double lo, hi;             /* box extent relative to the row centre */
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
	int32_t seq;  /* step number within its phase */
	uint8_t cat;  /* enum agg_cat */
	int8_t phase; /* enum rr_phase */
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

/* ---- the overview (agg_overview.c) ---- */

/* The per-rank numbers the overview maps and ranks. */
enum agg_metric { AGG_M_BUBBLE, AGG_M_COMPUTE, AGG_M_IDLE, AGG_M_COVERAGE, AGG_NMETRICS };

struct agg_metric_info {
	const char *key;   /* file stem and anchor: "bubble" */
	const char *title; /* "bubble share" */
	const char *unit;  /* " %" or " ms" */
	bool low_bad;      /* the worst value is the lowest (coverage) */
	const char *means; /* one line for the report */
};
extern const struct agg_metric_info agg_metrics[AGG_NMETRICS];

enum { AGG_TOP = 10 }; /* worst ranks listed per metric */

/* Why a rank's own charts are rendered (agg_rank_flag bits). */
enum { AGG_FLAG_STRAGGLER = 1, AGG_FLAG_TOP = 2, AGG_FLAG_FAILED = 4, AGG_FLAG_LISTED = 8 };

/* One (stage, replica) cell: per metric, its worst rank and value. */
struct agg_cell {
	int nranks;
	int rank[AGG_NMETRICS]; /* -1: no rank with a value */
	double v[AGG_NMETRICS];
	int fwd_rank, bwd_rank; /* the rank with the slowest median step */
	double fwd_ms, bwd_ms;  /* its median step; NaN when none */
};

/* A distribution of step times (ms): min, quartiles, max. */
struct agg_dist {
	size_t n;
	double min, q1, med, q3, max;
};

struct agg_overview {
	int nstage, nrep;               /* the grid; 0 without a topology */
	struct agg_cell *cells;         /* [stage * nrep + replica] */
	struct agg_dist *fwd, *bwd;     /* per stage, every fwd / bwd step */
	int top[AGG_NMETRICS][AGG_TOP]; /* worst ranks first */
	double topv[AGG_NMETRICS][AGG_TOP];
	int ntop[AGG_NMETRICS];
	uint8_t *flag; /* per it->ranks index: AGG_FLAG_* bits */
	int nflagged;
	bool all; /* every chart is rendered (the render plan) */
};

struct agg_iter {
	int iteration;
	const char *folder;
	struct agg_rank *ranks; /* sorted by rank */
	size_t nranks;
	struct agg_result res;
	struct agg_overview ov;
	int nfailed, nok;
	int nconflicts;        /* ranks claimed by more than one trace */
	const char **unranked; /* paths of traces without any rank (arena) */
	size_t nunranked;
	struct arena arena;
};

/* Whether the straggler flag had no rank to compare although ranks were
 * analysed: then it says "not computed" (AGG_STRAG_NA), not "none". */
static inline bool agg_strag_not_computed(const struct agg_iter *it)
{
	return !it->res.ncompared && it->nok;
}

/* Finds the rank or NULL (binary search). */
struct agg_rank *agg_iter_rank(const struct agg_iter *it, int rank);
/* The ranks of a group (n rank ids) that are not analysed, each with why,
 * appended to sb: "2 (missing), 5 (in conflict), 7 (failed)" -- no trace,
 * several traces claim it, its trace failed. Returns how many. */
int agg_group_absent(const struct agg_iter *it, const int *ranks, int n, struct strbuf *sb);
void agg_iter_release(struct agg_iter *it);

/* ---- the database (agg_load.c, through storage/db_agg.h) ---- */
/* Resolves names ("15" or "iteration_15") to iteration numbers; no names =
 * every iteration in the database. Fills a malloc'd sorted array. Names
 * that match nothing are reported and counted in *nmissing. Returns 0 or
 * PP_EDB (db_errmsg). */
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

/* The value of metric m for rank r (index i of it->ranks); false when it
 * has none (failed, no window, not in a PP group for the group metrics). */
bool agg_rank_metric(const struct agg_iter *it, const int *pp_row, size_t i, enum agg_metric m,
		     double *v);
/* Fills it->ov: the grid (when the topology has PP groups and replicas),
 * the step distributions, the worst ranks and the flagged ranks (stragglers,
 * the worst ranks, failed and conflicting ranks, the listed ranks). */
void agg_overview_compute(struct agg_iter *it, const struct topology *t, const int *listed,
			  int nlisted);
void agg_overview_release(struct agg_overview *ov);

/* ---- rendering plan (agg_render.c) ---- */
/* The scripts to render, each with the outputs to make now. */
struct agg_jobs {
	struct agg_job {
		char *script;
		bool png, svg;
	} * v;
	size_t n, alloc;
	size_t written; /* scripts written, rendered or not */
};
/* Counts a written script; queues it (copied) when an output is asked for. */
void agg_jobs_add(struct agg_jobs *j, const char *script, bool png, bool svg);
void agg_jobs_release(struct agg_jobs *j);
/* After a chart writer returned rc for PREFIX.gp: reports err and returns
 * PP_EIO when rc failed, else queues PREFIX.gp with co's render formats. */
struct agg_chart_opts;
int agg_jobs_script(struct agg_jobs *j, int rc, const char *err, const char *prefix,
		    const struct agg_chart_opts *co);

/* Runs gnuplot on every job, at most processes at a time (chart/gnuplot.h).
 * Returns the number of scripts that failed; *ms gets the wall time. 0 and
 * a warning when gnuplot is not installed. */
int agg_render(const struct agg_jobs *jobs, int processes, double *ms, bool quiet);

/* ---- charts and CSVs (agg_chart.c, agg_overview.c) ---- */
struct agg_chart_opts {
	bool individual;             /* each row's time starts at its own first event */
	bool png, svg;               /* outputs the .gp script writes (--format) */
	bool render_png, render_svg; /* of those, what is rendered now */
	bool overlap_png_only;       /* a rank's overlap chart: no SVG now */
};
/* Each writes <dir>/<stem>.gp (and the CSVs) and adds the script to jobs
 * with co's render formats. Return 0 or PP_EIO. */
int agg_chart_rank(const char *dir, const struct agg_iter *it, const struct agg_rank *r,
		   const struct agg_chart_opts *co, struct agg_jobs *jobs);
int agg_chart_rows(const char *dir, const char *title, const struct agg_iter *it, const int *ranks,
		   const int *split, int n, const struct agg_chart_opts *co, struct agg_jobs *jobs);
/* The overview charts of it into <dir>/: one heatmap per metric over the
 * stage × replica grid, and steps.gp (step times per stage). Nothing
 * without a grid. */
int agg_chart_overview(const char *dir, const struct agg_iter *it, const struct agg_chart_opts *co,
		       struct agg_jobs *jobs);

/* ---- the virtual pipeline size (agg_whatif.c, next to Megatron's warm-up
 * count it rests on) ---- */

/* Where the VPP that labels the steps, sizes the ideal pipeline and labels
 * the what-if's ops comes from (docs/ppagg.md "VPP"). */
enum agg_vpp_from {
	AGG_VPP_UNTOLD,    /* agg.vpp: no rank ran both forward and backward steps */
	AGG_VPP_CONFIRMED, /* agg.vpp, and the schedule fits it */
	AGG_VPP_SCHEDULE,  /* the one size the schedule fits: agg.vpp overridden */
	AGG_VPP_AMBIGUOUS, /* agg.vpp: the schedule fits several sizes, not it */
	AGG_VPP_NO_FIT     /* agg.vpp: the schedule fits no size (ranks disagree) */
};
struct agg_vpp {
	int vpp; /* the one ppagg uses everywhere */
	int cfg; /* agg.vpp */
	enum agg_vpp_from from;
	struct strbuf why; /* the evidence, one line without a final newline */
	/* Which of Megatron's warm-up rules vpp fits when only one does (they
	 * differ only when m = P: docs/whatif.md §9.1), else NULL; warmup is
	 * that rule, SCHED_CORE when both fit (or none was tried). */
	const char *rule;
	enum sched_rule warmup;
};

/* Decides v from the fwd/bwd steps of every rank of its[0..n) with a whole
 * trace (status "ok": a salvaged one stops early) that the topology t
 * (indexed) places on a stage: for each, the forward steps that
 * start before its first backward must be Megatron's warm-up plus one for
 * its stage (docs/ppagg.md "VPP"). The schedule wins when exactly one size
 * of 1-64 fits every rank; cfg (agg.vpp, >= 1) is kept otherwise.
 * Release v->why with strbuf_release(). */
void agg_vpp_decide(const struct agg_iter *its, size_t n, const struct topology *t, int cfg,
		    struct agg_vpp *v);

/* ---- the what-if in the report (agg_whatif_report.c) ---- */
struct agg_whatif;
/* <out>/whatif/: sw.gp (S_w heatmap), step.gp (one step, measured and
 * ideal) and timeline.json (the step for Perfetto); nothing unless the
 * analysis was made. 0 or PP_EIO. */
int agg_whatif_charts(const char *out, const struct agg_whatif *w, const struct agg_chart_opts *co,
		      struct agg_jobs *jobs);
/* The "What if" section of index.html; one line when there is nothing to
 * say. */
void agg_whatif_html(struct strbuf *h, const char *out, const struct agg_whatif *w);

/* ---- report (agg_html.c) ---- */
/* index.html (the summary, overview and worst ranks of every iteration)
 * and iteration_<N>.html (its pipelines, group charts, ranks and rank
 * charts). */
int agg_html_write(const char *out, const struct agg_opts *o, const struct topology *t,
		   const struct agg_vpp *vpp, const struct agg_iter *its, size_t n,
		   const struct agg_whatif *w);
/* Appends s to sb with &<>"' escaped. */
void agg_html_escape(struct strbuf *sb, const char *s);
/* Appends a <figure> for the chart whose files are out/<rel>.{png,svg,gp}:
 * the image that exists (lazily loaded when lazy), the caption, links to the
 * script and the SVG, or how to render it when gnuplot made none. */
void agg_html_chart(struct strbuf *h, const char *out, const char *rel, const char *caption,
		    bool lazy);

#endif
