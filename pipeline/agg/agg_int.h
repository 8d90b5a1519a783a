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
 * the step distributions, the worst ranks and the flagged ranks (stragglers,
 * the worst ranks, failed and conflicting ranks, the listed ones). */
void agg_overview_compute(struct agg_iter *it, const struct topology *t, const int *listed,
			  int nlisted);
/* Fills it->plan from it->ov's flags (docs/ppagg.md "What is rendered"):
 * every chart in every format under AGG_RC_ALL, and under AGG_RC_AUTO while
 * ranks × niters <= AGG_AUTO_ALL_RANKS; else the flagged ranks' charts
 * (none under AGG_RC_NONE), the PP groups holding a straggler in every
 * format, every other group and replica as one image, the overview whole. */
void agg_plan_compute(struct agg_iter *it, const struct topology *t, enum agg_rank_charts mode,
		      size_t niters);

#endif
