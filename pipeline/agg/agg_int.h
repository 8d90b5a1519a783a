/* agg_int.h — the steps of agg_analyse() (agg.c) that other files of the
 * data layer implement: reading ppbatch's rows and writing ppagg's
 * (agg_load.c, through storage/db_agg.h), the overview's numbers and the
 * render plan (agg_overview.c). Internal to pipeline/agg/.
 */
#ifndef AGG_INT_H
#define AGG_INT_H

#include <stddef.h>

#include "agg.h"

struct db;
struct topology;

/* ---- the database (agg_load.c) ---- */

/* Resolves names ("15" or "iteration_15") to iteration numbers; no names =
 * every iteration in the database. Fills a malloc'd sorted array. Names
 * that match nothing are reported and counted in *nmissing. Returns 0 or
 * PP_EDB (db_errmsg). */
int agg_load_iterations(struct db *db, char **names, int nnames, int **out, int *nout,
			int *nmissing);
/* Loads the ranks (with steps, their medians and category stats) of one
 * iteration into it. A rank claimed by several traces becomes one rank
 * with status "conflict" and none of their data; traces without a rank are
 * listed in it->unranked. Returns 0 or PP_EDB. */
int agg_load(struct db *db, int iteration, struct agg_iter *it);
/* Feeds the distinct (pg_desc, pg_ranks) of an iteration to topo_infer_add. */
int agg_load_process_groups(struct db *db, int iteration, struct topology *t);
/* Deletes and rewrites the ppagg rows of every iteration, one transaction. */
int agg_store(struct db *db, const struct agg_iter *its, size_t n);

/* The topology of a PP-timer or Primus import (agg_import.c): when the
 * latest import (storage/db_import.h) records its PP size and one rank per
 * stage and t has no source yet, t becomes that one pipeline
 * (topo_from_grid(), source TOPO_SRC_IMPORT); else t is left alone. *vpp is the import's VPP size (0
 * without an import). 0 or PP_EDB. */
int agg_import_topology(struct db *db, struct topology *t, int *vpp);

/* ---- the overview and the render plan (agg_overview.c) ---- */

/* Fills it->ov: the grid (when the topology has PP groups and replicas),
 * the step distributions, the worst ranks and the flagged
 * ranks (the AGG_TOP stragglers of the largest excess, the worst ranks,
 * failed and conflicting ranks, the listed ones). */
void agg_overview_compute(struct agg_iter *it, const struct topology *t, const int *listed,
			  int nlisted);
/* Chooses the iterations the report details (agg_plan.detail): every one
 * when there are at most AGG_DETAIL_ITERS or every is set (--charts all);
 * else the slowest, the median and the fastest by agg_iter_time(); and
 * those c names. */
void agg_plan_iterations(struct agg_iter *its, size_t n, const struct agg_charts *c, bool every);
/* Fills it->plan from its detail, it->ov's flags and o (docs/ppagg.md
 * "What the report shows"); ndetailed: the detailed iterations of the run.
 * Nothing is written of an iteration that is not detailed. In a detailed
 * one: the overview; every chart in every format under AGG_RC_ALL, and
 * under AGG_RC_AUTO while ranks × ndetailed <= AGG_AUTO_ALL_RANKS; else the
 * flagged ranks' charts (under AGG_RC_NONE only those --charts names),
 * the PP groups of the shown stragglers and those --charts names in every
 * format, those of the AGG_TOP_GROUPS slowest pipelines as one image, the
 * model replicas of the shown stragglers and of the slowest pipeline as
 * one image, those --charts names in every format. Everything else is a
 * script under --charts all, and not written otherwise. */
void agg_plan_compute(struct agg_iter *it, const struct topology *t, const struct agg_opts *o,
		      size_t ndetailed);

#endif
