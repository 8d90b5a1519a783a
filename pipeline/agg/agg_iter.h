/* agg_iter.h — ppagg's model of one iteration: its ranks (each one trace,
 * with its steps and category stats), the numbers agg_calc.h computes over
 * them, the overview's numbers and the render plan (agg_overview.c).
 * agg_analyse() fills it (agg.h); the output layer reads it. agg_iter.c
 * holds the look-ups and the release.
 */
#ifndef AGG_ITER_H
#define AGG_ITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agg_calc.h"
#include "model/rank_result.h"
#include "util/arena.h"
#include "util/strbuf.h"

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

/* Why the report shows a rank's own charts (agg_overview.flag bits): one
 * of the AGG_TOP stragglers with the largest excess, one of the worst
 * ranks, failed (it has no chart: listed), named by --charts rank=. */
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
};

/* How much of a chart the report shows (docs/ppagg.md "What the report
 * shows"). */
enum agg_show {
	AGG_SHOW_NONE,   /* not written: the report does not show it (--charts
			  * writes it on demand) */
	AGG_SHOW_SCRIPT, /* the script only (--charts all): renders later */
	AGG_SHOW_IMAGE,  /* one image: the PNG, or the SVG when only SVG is asked for */
	AGG_SHOW_ALL     /* every format asked for */
};

/* Why an iteration is detailed: its overview, CSVs, charts and page are
 * written (agg_plan.detail bits). An iteration with none of them has its
 * line in the comparison of iterations only. */
enum {
	AGG_DETAIL_EVERY = 1,   /* at most AGG_DETAIL_ITERS iterations, or --charts all */
	AGG_DETAIL_SLOWEST = 2, /* the longest iteration time (agg_iter_time()) */
	AGG_DETAIL_MEDIAN = 4,  /* the lower median of the times */
	AGG_DETAIL_FASTEST = 8, /* the shortest */
	AGG_DETAIL_ASKED = 16   /* --charts iteration=N */
};
enum { AGG_DETAIL_ITERS = 4 };

/* At scale, the report's own choice of groups: the PP groups of the
 * AGG_TOP_GROUPS slowest pipelines (besides those of the stragglers), and
 * the charts of at most AGG_TOP stragglers (the largest excess first). */
enum { AGG_TOP_GROUPS = 3 };

/* The render plan of one iteration's charts (agg_plan_compute()): each an
 * enum agg_show. A rank's CSVs are written with its charts (rank_timeline
 * not AGG_SHOW_NONE). */
struct agg_plan {
	uint8_t detail;                        /* AGG_DETAIL_* bits; 0: none of its files */
	bool all;                              /* every chart in every format */
	uint8_t *rank_timeline, *rank_overlap; /* per it->ranks index */
	uint8_t *pp_group;                     /* per PP group of the topology */
	uint8_t *model_group;                  /* per model replica of the topology */
	uint8_t overview;                      /* the heatmaps and the step chart */
	/* A charts-only run (AGG_CHARTS_ONLY): the charts it writes,
	 * those --charts names (per it->ranks index, PP group, model
	 * replica); the rest of the plan is what the pages show. NULL in a
	 * full run, which writes what the plan shows. */
	bool *only_rank, *only_pp, *only_model;
};

struct agg_iter {
	int iteration;
	const char *folder;
	struct agg_rank *ranks; /* sorted by rank */
	size_t nranks;
	struct agg_result res;
	struct agg_overview ov;
	struct agg_plan plan;
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

/* The iteration's time: its longest pipeline (measured), else its longest
 * rank window; 0 when it has neither. */
int64_t agg_iter_time(const struct agg_iter *it);
/* Finds the rank or NULL (binary search). */
struct agg_rank *agg_iter_rank(const struct agg_iter *it, int rank);
/* Whether r (NULL: no trace) is one trace stored whole (status "ok"): not
 * failed, not in conflict, and not salvaged (a partial trace is cut short,
 * so its steps and compute stop early). */
bool agg_rank_whole(const struct agg_rank *r);
/* The ranks of a group (n rank ids) that are not analysed, each with why,
 * appended to sb: "2 (missing), 5 (in conflict), 7 (failed)" -- no trace,
 * several traces claim it, its trace failed. Returns how many. */
int agg_group_absent(const struct agg_iter *it, const int *ranks, int n, struct strbuf *sb);
/* Frees everything it holds (its ranks, rows, overview, plan, arena). */
void agg_iter_release(struct agg_iter *it);

#endif
