/* agg_whatif.h — ppagg's what-if analysis (docs/whatif.md): how much faster
 * the job would run without its stragglers, and who they are.
 *
 * agg_whatif_run() takes the ops (the database's `ops`) of the traces ppagg
 * aggregates in the iterations it aggregates — a rank in conflict or
 * without a rank brings none — places each trace on its worker (as its
 * source recorded it, else by the topology), checks that every iteration
 * holds the complete DP x PP grid, runs the engine (whatif/whatif.h) and
 * rewrites the views whatif, whatif_optypes, whatif_workers and
 * whatif_steps (and ppagg's topology, which places Kineto traces' ops in
 * the `ops` view) in one transaction. The views then hold this run's
 * analysis, or nothing when it could not be made.
 *
 * For the report (report/report_whatif.c): state says what there is; when
 * AGG_WI_DONE, r is the engine's whole result (per step, S_t per group in
 * r.by_group, workers by S_w descending with r.n_mw the ones M_W removes,
 * M_W, M_S, the verdict), shape its sizes and step one step of it; why says
 * what is missing otherwise.
 */
#ifndef AGG_WHATIF_H
#define AGG_WHATIF_H

#include <stdbool.h>
#include <stddef.h>

#include "util/strbuf.h"
#include "whatif/whatif.h"

struct agg_iter;
struct db;
struct topology;

enum agg_wi_state {
	AGG_WI_NO_OPS = 0, /* no aggregated trace has ops (nothing to say) */
	AGG_WI_INCOMPLETE, /* ops, but no complete DP x PP grid in every
			    * iteration: why says what is missing */
	AGG_WI_REJECTED,   /* the engine refused the ops: why is its message */
	AGG_WI_DONE        /* r holds the analysis */
};

/* One step of the analysis for the report (report/report_whatif.c): every
 * op of every replica, recorded ("measured", from whatif_recorded()) and
 * simulated ideal (whatif_timeline(WI_SCEN_IDEAL)), ns from the step's
 * start. The step is the one with the largest per-step slowdown. */
struct agg_wi_op {
	int stage, optype;
	int32_t seq;
	int16_t mc;
	bool placeholder;
	double ms, me; /* measured start, end */
	double is, ie; /* ideal start, end */
};
struct agg_wi_step {
	size_t index; /* into r.step */
	int dp;
	size_t nodes;         /* ops per replica */
	struct agg_wi_op *op; /* [dp_rank * nodes + v]; NULL when not captured */
};

/* One (dp_rank, stage) cell of a job with several ranks per cell (TP/CP/EP
 * > 1): the analysis takes its lowest rank's ops (docs/whatif.md §9.1), the
 * report names the rank whose own compute stands out (§9.2). */
struct agg_wi_cell {
	int nranks;
	int slow;       /* the slow rank, or -1: none stands out */
	double excess;  /* its compute over the cell's lower median, minus 1 */
	char ranks[48]; /* the cell's ranks: "4-5", "0, 8", "0-3, 16-19, ..." */
};

struct agg_whatif {
	enum agg_wi_state state;
	struct strbuf why;
	size_t nops;               /* ops analysed */
	double seconds;            /* reading, analysing and storing them */
	struct whatif_shape shape; /* AGG_WI_DONE */
	struct whatif_result r;    /* AGG_WI_DONE */
	struct strbuf notes;       /* the engine's notes (placeholders, meta)
				    * and ppagg's (cells, the warm-up rule,
				    * clocks), one per line */
	struct strbuf mw_ranks;    /* the M_W workers' ranks: "0, 8" */
	struct agg_wi_step step;   /* AGG_WI_DONE: one step for the report */
	/* Which rank is a (dp_rank, stage) cell's worker (docs/whatif.md
	 * §9.1): ranks_per_cell is how many ranks a cell has (TP·CP·EP for
	 * Kineto traces, 1 for an op-trace import), cell_ops says which one
	 * is analysed. */
	int ranks_per_cell;
	const char *cell_ops;
	/* [dp_rank * cell_pp + stage] when ranks_per_cell > 1 (Kineto
	 * traces), else NULL; margin: how far above the cell's lower median
	 * a rank's compute must be to be named (agg.straggler_threshold). */
	struct agg_wi_cell *cells;
	int cell_dp, cell_pp;
	double margin;
	bool kineto; /* some ops were derived from Kineto traces
				    * (not read from an op-trace import) */
	int vpp;     /* labelled the Kineto ops with (agg_vpp_decide()); 0 = none */
	/* The workers' clock offsets (Kineto ops, docs/whatif.md §4.1), and
	 * whether the times were corrected by them. */
	bool has_clock;
	bool clock_corrected;
	struct whatif_clock clock;
	/* AGG_WI_DONE: the engine, its times corrected, kept for the analyses
	 * that walk its model (the critical path, agg_why.h); freed by
	 * agg_whatif_release(). */
	struct whatif *engine;
};

void agg_whatif_init(struct agg_whatif *w);
void agg_whatif_release(struct agg_whatif *w);

/* The topology of an op-trace import: the workers its traces record in
 * the iterations iters[0..n), when they form one complete DP x PP grid with
 * one rank per cell, the same in every iteration (topo_from_grid()). Leaves
 * t alone otherwise. 0 or PP_EDB. */
int agg_whatif_topology(struct db *db, const int *iters, int n, struct topology *t);

/* Analyses the ops of the n iterations its (the ranks ppagg loaded; t
 * indexed, or without a source) and stores the result. vpp labels the
 * Kineto ops' chunks: the one ppagg decided for the whole report
 * (agg_vpp_decide()); vpp_rule, when not NULL, which of Megatron's warm-up
 * rules the schedule follows (a note). Returns 0 —
 * also when there is nothing to analyse or the ops are incomplete
 * (w->state) — or PP_EDB with db_errmsg(db). */
int agg_whatif_run(struct db *db, const struct agg_iter *its, size_t n, const struct topology *t,
		   int vpp, const char *vpp_rule, double margin, struct agg_whatif *w);

/* The cell of worker (dp_rank, stage) when it has several ranks, else NULL. */
const struct agg_wi_cell *agg_whatif_cell(const struct agg_whatif *w, int dp_rank, int stage);

/* Where ops come from, for the line that says there are none. */
#define AGG_WI_OPS_FROM                                                               \
	"ppbatch derives them from the Megatron-mode Kineto traces it read whole "    \
	"(status ok: not from failed, salvaged or generic-mode ones) and imports op " \
	"traces (ppbatch --format optrace)"

#endif
