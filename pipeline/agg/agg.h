/* agg.h — ppagg's data layer: what the traces of a job say, per iteration
 * and as a whole (docs/ppagg.md, docs/semantics.md §6–8).
 *
 * agg_analyse() reads ppbatch's database, finds the topology, decides the
 * VPP, computes the numbers, runs the analyses (the what-if, agg_whatif.h;
 * why the pipeline waits, agg_why.h),
 * stores the rows ppagg owns and fills one struct agg_job. It reports what
 * it finds on stderr and writes no chart, CSV or page: the output layer
 * (report/report.h) makes those from the job. cmd/ppagg.c calls the two.
 *
 * The files: agg.c (agg_analyse(): the sequence), agg_load.c (ppbatch's
 * rows in, ppagg's rows out, through storage/db_agg.h), agg_iter.c (the
 * model of an iteration, agg_iter.h), agg_calc.c and agg_ideal.c (the
 * numbers, agg_calc.h), agg_vpp.c (agg_vpp.h), agg_overview.c (the
 * overview's numbers and the render plan), agg_timeline.c (the timelines'
 * blocks, agg_timeline.h), agg_whatif.c (agg_whatif.h), agg_why.c
 * (agg_why.h), agg_compare.c and agg_compare_calc.c (the comparison with a
 * baseline, agg_compare.h), agg_advice.c (agg_advice.h), agg_import.c (an
 * import's topology), agg_annot.c (the user annotations, agg_annot.h),
 * topology.c (topology.h). docs/architecture.md,
 * "Adding an analysis to ppagg", says
 * where a new analysis goes.
 */
#ifndef AGG_H
#define AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agg_annot.h"
#include "agg_advice.h"
#include "agg_compare.h"
#include "agg_iter.h"
#include "agg_vpp.h"
#include "agg_whatif.h"
#include "agg_why.h"
#include "topology.h"

struct agg_timeline;
struct config;
struct db;

/* Which rank charts the report shows of its own accord (--rank-charts, the
 * older spelling; docs/ppagg.md "What the report shows"). */
enum agg_rank_charts {
	AGG_RC_AUTO,    /* every rank while ranks × detailed iterations <=
			 * AGG_AUTO_ALL_RANKS, else the flagged ones */
	AGG_RC_ALL,     /* every chart of every iteration, rendered in every
			 * format (--charts all, and everything rendered) */
	AGG_RC_FLAGGED, /* the flagged ranks, whatever the job's size */
	AGG_RC_NONE     /* no rank chart (overview and groups still) */
};
enum { AGG_AUTO_ALL_RANKS = 64 };

/* What the report shows beyond its own choice (--charts): each named rank,
 * PP group, model replica and iteration is written, rendered and linked
 * from the pages. The lists are the caller's.
 *   all         every chart and CSV of every iteration (the report's own
 *               rendered, the rest scripts only)
 *   ranks       rank=: their charts and CSVs in every detailed iteration
 *   groups      group=: these PP groups' timelines
 *   replicas    replica=: these model replicas' timelines
 *   iterations  iteration=: these iterations in detail */
struct agg_charts {
	bool all;
	int *ranks, *groups, *replicas, *iterations;
	int nranks, ngroups, nreplicas, niterations;
};

/* What one agg_analyse() runs. */
enum agg_mode {
	AGG_FULL,        /* every analysis; ppagg's rows stored */
	AGG_ADVISE_ONLY, /* the schedule advisor alone (ppsim --from-db): no
			  * row of ppagg's stored, no other analysis */
	/* Only the charts --charts names (cmd/ppagg.c picks it when the output
	 * holds a report and --charts names only ranks, PP groups or
	 * replicas): the iterations are loaded and their numbers computed,
	 * no row is stored and no analysis runs; each plan says what to
	 * write (agg_plan.only_rank, ...). */
	AGG_CHARTS_ONLY,
};

/* What to analyse and how (the output's options: report/report.h). */
struct agg_opts {
	const char *base;  /* --base-folder DIR (or the parent of --input) */
	char **iterations; /* --iterations: numbers or folder names */
	int niterations;
	const char *input;                    /* --input DIR/iteration_N */
	const char *db;                       /* --db; NULL = <base>/pptrace.db */
	int tp, pp, dp, cp, ep;               /* sizes from flags (0 = not given) */
	int vpp;                              /* virtual pipeline size (config agg.vpp) */
	double threshold;                     /* agg.straggler_threshold, default 0.10 */
	bool quiet;                           /* --quiet */
	enum agg_rank_charts rank_charts;     /* --rank-charts: the report's own rank charts */
	bool rank_charts_given;               /* the flag was given (the config key yields) */
	struct agg_charts charts;             /* --charts: what the report shows besides */
	struct config *config;                /* never NULL */
	const struct advise_settings *advise; /* [advise], loaded by the command
					       * (advise_settings_load()); NULL:
					       * the defaults */
	struct agg_compare_opts compare;      /* --compare: the baseline, thresholds */
	enum agg_why_rows why_rows;           /* agg.tp_collective_rows */
	enum agg_mode mode;                   /* what runs: everything by default */
};

/* The analysed job: everything the report shows. Each analysis that runs
 * after the per-iteration numbers has its member at the end. */
struct agg_job {
	/* BASE (--base-folder, else the folder of --input or of the database:
	 * where the topology file is looked for, and the output goes by
	 * default) and the database. */
	char *base, *db_path;
	/* Open until agg_job_release(): agg_timeline_load() reads the
	 * timelines' blocks through it, one iteration at a time. */
	struct db *db;
	struct topology topo;     /* indexed; source TOPO_SRC_NONE when none was found */
	struct agg_vpp vpp;       /* the VPP every part uses */
	double threshold;         /* the straggler threshold (agg.straggler_threshold) */
	struct agg_iter *its;     /* the iterations, ascending */
	size_t niters;            /* >= 1 after agg_analyse() succeeded */
	bool partial;             /* inputs missing, failed or conflicting: exit 1 */
	enum agg_mode mode;       /* agg_opts.mode: what ran */
	int64_t started_ns;       /* when agg_analyse() started (pp_now_ns()) */
	int64_t analysed_ns;      /* when it finished */
	struct agg_whatif whatif; /* the what-if analysis (agg_whatif.h) */
	struct agg_advice advice; /* the schedule advisor (agg_advice.h) */
	struct agg_why why;       /* why the pipeline waits (agg_why.h) */
	/* Per iteration, the timelines' blocks the why analysis' scan of the
	 * kernels made (up to AGG_WHY_KEEP_BYTES), for agg_timeline_load() to
	 * take instead of scanning again; an entry with no ranks is loaded. */
	struct agg_timeline *timelines;
	/* The comparison with a baseline (agg_compare.h); its
	 * r.regression makes ppagg's exit status 4 (cmd/ppagg.c). */
	struct agg_compare compare;
	struct agg_annot annot; /* the table of user annotations (agg_annot.h) */
};

/* Analyses what o selects into job: opens the database, loads the
 * iterations, finds the topology (file, sizes, inferred, the op trace's
 * workers, else none), decides the VPP, labels the steps, computes and
 * stores the PP-group, pipeline and straggler rows, the overview and the
 * render plan of each iteration, then runs the analyses, each storing its
 * own rows. Missing, failed or conflicting inputs and a missing topology
 * degrade the job (job->partial for the first three) and are reported as
 * warnings; anything else stops it. Returns 0, or a negative PP_E* code
 * with why appended to err. Release job with agg_job_release() either way. */
int agg_analyse(const struct agg_opts *o, struct agg_job *job, struct strbuf *err);

/* BASE of o, malloc'd: --base-folder, else the parent of --input, else the
 * database's folder (where ppbatch puts it by default). */
char *agg_base_folder(const struct agg_opts *o);

/* Closes the database and frees everything job holds; job is left zeroed. */
void agg_job_release(struct agg_job *job);

#endif
