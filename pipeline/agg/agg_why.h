/* agg_why.h — ppagg's why analysis (docs/why.md): why the pipeline waits.
 *
 * agg_why_run() feeds the why engine (why/why.h) the iterations ppagg
 * aggregates, as docs/why.md §7 says: every rank of the topology, each
 * aggregated trace (a rank in conflict or without a rank brings none) with
 * its bubble, its ops (those ppbatch derived from Kineto traces) and its
 * communication kernels of a process group, each group with its kind (the
 * topology's group with its ranks, else its description). It runs the
 * engine, walks the critical path of every step on the what-if analysis'
 * engine (agg_whatif.h: clock-corrected recorded times) when there is one,
 * and rewrites the why views in one transaction. The views then hold this
 * run's analysis; when there was nothing to analyse, only the `why` row,
 * whose notes say why.
 *
 * Nothing here fails the run but the database: what cannot be analysed (no
 * topology, no Kineto ops or kernels, ranks missing) is a state, counts and
 * a reason, for agg.c to say on stderr and the report to show.
 */
#ifndef AGG_WHY_H
#define AGG_WHY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"
#include "why/why.h"

struct agg_iter;
struct db;
struct topology;
struct whatif;

enum agg_why_state {
	AGG_WHY_NONE = 0, /* pairs and instances not analysed: why says why */
	AGG_WHY_DONE      /* r holds them (some may be incomplete: statuses) */
};

/* Which instances of tensor-, context- and expert-parallel groups get a
 * row in the collectives view (agg.tp_collective_rows; their ranks'
 * summary in collective_ranks always): at scale they are nearly all the
 * instances (two all-reduces per layer and micro-batch). */
enum agg_why_rows {
	AGG_WHY_ROWS_AUTO, /* all while they number <= AGG_WHY_AUTO_ROWS */
	AGG_WHY_ROWS_ALL,
	AGG_WHY_ROWS_NONE
};
enum { AGG_WHY_AUTO_ROWS = 100000 };

/* A process group the engine knows (its index is why_add_group()'s). */
struct agg_why_group {
	char *desc, *ranks; /* as traced: "DATA_PARALLEL_GROUP", "[0, 8]" */
	int kind;           /* enum rr_pg_kind */
};

struct agg_why {
	enum agg_why_state state;
	struct strbuf why;   /* AGG_WHY_NONE: what is missing */
	struct why_result r; /* AGG_WHY_DONE: the engine's result */
	/* The critical path (nsteps 0 when there is none: no_path says why);
	 * its times are the what-if analysis' clock-corrected ones. */
	struct why_cpath path;
	struct strbuf no_path;
	struct agg_why_group *groups;
	size_t ngroups;
	size_t ntraces, nops, nkernels; /* rows given to the engine */
	/* Instances of TP, CP and EP groups, and whether the collectives
	 * view lists them. */
	size_t inner_instances;
	bool inner_rows;
	/* Seconds (wall) reading the rows, in the engine, walking the path,
	 * storing; the whole in wall and CPU time of the process. */
	double t_read, t_engine, t_path, t_store, seconds, cpu_seconds;
};

void agg_why_init(struct agg_why *w);
void agg_why_release(struct agg_why *w);

/* How many bytes of timeline blocks agg_why_run() keeps for the report. */
#define AGG_WHY_KEEP_BYTES ((size_t)256 << 20)

/* Analyses the n iterations its (the ranks ppagg loaded; t indexed, or
 * without a source) with the VPP ppagg decided; e is the what-if
 * analysis' engine or NULL (then no_path_why says why there is no
 * critical path). Stores the result in the why views. keep, when not
 * NULL, is an array of n timelines (zeroed): the scan of each iteration's
 * kernels fills them too (db_agg_blocks_why()), while they take at most
 * AGG_WHY_KEEP_BYTES, so that the report need not scan them again
 * (agg_timeline_load()); the caller releases them. Returns 0, also when
 * there is nothing to analyse (w->state), or PP_EDB with db_errmsg(db). */
struct agg_timeline;
int agg_why_run(struct db *db, const struct agg_iter *its, size_t n, const struct topology *t,
		int vpp, const struct whatif *e, const char *no_path_why, enum agg_why_rows rows,
		struct agg_timeline *keep, struct agg_why *w);

/* The name of a group's kind as the views spell it: "tp", ..., or the
 * description for a group of no known kind (EMBEDDING_GROUP). */
const char *agg_why_kind_name(int kind, const char *desc);

/* Counts of the statuses of w's transfers, p2p kernels and instances: the
 * "what was incomplete" of the report and of the line on stderr, e.g.
 * "32 peer missing, 3 rank missing"; nothing when all are ok. */
void agg_why_incomplete(const struct agg_why *w, struct strbuf *sb);

/* One communication or compute kernel of a trace, for the merged timeline
 * (report/report_why.c): its own clock, its category and its stream. */
struct agg_why_kernel {
	int64_t start_ns, dur_ns;
	int64_t stream;   /* -1 when unknown */
	int category;     /* enum rr_category */
	const char *name; /* valid during the callback */
	const char *coll; /* rr_coll_name(), or NULL */
};
/* Calls fn with every kernel of the trace of rank (its aggregated one) in
 * iteration it, in stored order. 0, fn's non-zero value, or PP_EDB with
 * the database's message appended to err. */
int agg_why_kernels(struct db *db, const struct agg_iter *it, int rank,
		    int (*fn)(void *ctx, const struct agg_why_kernel *k), void *ctx,
		    struct strbuf *err);

#endif
