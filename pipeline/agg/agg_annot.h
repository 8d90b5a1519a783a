/* agg_annot.h — ppagg's table of user annotations (docs/ppagg.md "User
 * annotations"): the GPU time of each annotation name (the database's
 * `annotations` view, docs/classification.md "User annotations") summed
 * over the iterations ppagg aggregates, per pipeline stage when a topology
 * exists, else per rank (up to AGG_ANN_RANKS ranks) or over the whole job,
 * each name with the spread of its GPU time over the group's ranks and its
 * share of their steps.
 *
 * agg_annot_run() reads the rows of the ranks ppagg aggregates (a rank in
 * conflict, failed or outside the topology brings none) through
 * storage/db_agg.h and stores nothing: the view is the database's answer.
 * The report (report/report_annot.c) shows the first AGG_ANN_TOP names of
 * each group and writes every name to a CSV.
 */
#ifndef AGG_ANNOT_H
#define AGG_ANNOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agg_iter;
struct db;
struct topology;

enum { AGG_ANN_TOP = 20, AGG_ANN_RANKS = 8 };

/* What a group is. */
enum agg_ann_by {
	AGG_ANN_STAGE, /* a pipeline stage of the topology: every replica's rank */
	AGG_ANN_RANK,  /* one rank (no topology, at most AGG_ANN_RANKS ranks) */
	AGG_ANN_JOB    /* every rank (no topology, more ranks) */
};

/* One annotation name in one group, summed over its ranks and iterations. */
struct agg_ann_row {
	char *name;
	int nranks; /* ranks of the group that run it */
	int64_t calls, kernels, gpu_ns, comp_ns, comm_ns, overlap_ns;
	/* The GPU time of one rank (over the iterations): the least (0 when
	 * a rank of the group never runs it) and the most, with its rank. */
	int64_t min_ns, max_ns;
	int max_rank;
	double share; /* gpu_ns over the sum of the group's ranks' windows */
};

struct agg_ann_group {
	int id;                   /* the stage or the rank; -1 for the job */
	int nranks;               /* aggregated ranks of the group (any iteration) */
	int64_t window;           /* the sum of their step windows (ns) */
	int64_t gpu_ns;           /* the GPU time of every annotation of the group */
	struct agg_ann_row *rows; /* most GPU time first, then name */
	size_t nrows;
};

struct agg_annot {
	enum agg_ann_by by;
	bool generic;                 /* no aggregated rank in Megatron mode */
	struct agg_ann_group *groups; /* by id */
	size_t ngroups;
	size_t nnames; /* distinct names over the groups */
};

void agg_annot_init(struct agg_annot *a);
void agg_annot_release(struct agg_annot *a);

/* Fills a from the annotation rows of the iterations its[0..n) (their
 * ranks loaded, t the job's topology, TOPO_SRC_NONE when none). Returns 0
 * or PP_EDB (db_errmsg(db)); a is left empty then. */
int agg_annot_run(struct db *db, const struct agg_iter *its, size_t n, const struct topology *t,
		  struct agg_annot *a);

#endif
