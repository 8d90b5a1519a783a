/* agg_calc.h — ppagg's numbers (docs/semantics.md §6): group windows, idle
 * and bubble, measured and ideal pipelines, stragglers and the slowest stage
 * of one iteration, from what each rank's row says (struct agg_rank_in).
 * Pure functions: agg_calc.c, and agg_ideal.c for the ideal pipeline (the
 * schedule simulator, sim/sim.h).
 */
#ifndef AGG_CALC_H
#define AGG_CALC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/schedule.h"

struct strbuf;
struct topology;

/* What the calculation needs of one rank of one iteration. */
struct agg_rank_in {
	int rank;
	bool ok;         /* analysed (status ok or partial) with metrics */
	bool has_window; /* it has GPU events */
	bool megatron;   /* mode megatron (has fwd/bwd steps) */
	int64_t win_s, win_e, gpu_busy, bubble;
	int64_t compute;          /* busy of fwd_computation + bwd_computation */
	int64_t fwd_med, bwd_med; /* lower-median step wall; -1 when none */
	int nfwd, nbwd;           /* number of fwd / bwd steps with kernels */
};

struct agg_pp_row {
	int pp_group, stage, rank;
	bool complete;   /* every rank of the group is ok */
	bool has_window; /* group window known */
	bool has_rank;   /* this rank's idle/bubble known */
	int64_t gw_s, gw_e, idle, bubble;
};

struct agg_pipeline_row {
	int pp_group;
	int64_t measured;
	bool has_ideal;
	int64_t ideal, gap;
	double bubble_ratio;
};

struct agg_straggler_row {
	int rank;
	const char *group_kind; /* "dp" or "stage" (static string) */
	int group;              /* 0-based, in topology order */
	const char *metric;     /* "fwd_bwd_compute" */
	int64_t value, median;
	double excess; /* value / median - 1 */
};

struct agg_result {
	struct agg_pp_row *pp;
	size_t npp;
	struct agg_pipeline_row *pipes;
	size_t npipes;
	struct agg_straggler_row *strag;
	size_t nstrag;
	/* Ranks the straggler flag compared: those with compute kernels in a
	 * group of two or more such ranks. 0: it could look at none (imports
	 * store no kernels; DP 1), so no straggler row means "not computed". */
	size_t ncompared;
	int slowest_stage; /* highest median compute; -1 unknown */
	int64_t slowest_compute;
};

/* Why no straggler was looked for when agg_result.ncompared is 0. */
#define AGG_STRAG_NA                                                                   \
	"no DP group has two ranks with forward/backward compute kernels to compare: " \
	"DP 1, or op-trace and PP-timer imports, which store no kernels"

struct agg_params {
	double threshold;       /* straggler threshold, e.g. 0.10 */
	int vpp;                /* >= 1 */
	enum sched_rule warmup; /* Megatron's warm-up rule the job follows, for
				 * the ideal pipeline (agg_vpp_decide()) */
};

/* Computes every row for one iteration. ranks[] may be in any order and
 * may hold ranks outside the topology (ignored). t must be indexed
 * (topo_index). res is released with agg_result_release(). */
void agg_compute(const struct topology *t, const struct agg_rank_in *ranks, size_t n,
		 const struct agg_params *p, struct agg_result *res);
void agg_result_release(struct agg_result *res);

/* Lower median (element (n-1)/2 after sorting) of v; sorts v. -1 if n = 0. */
int64_t agg_lower_median(int64_t *v, size_t n);

/* How far v lies above median, as a fraction of it: (v − median) / median,
 * the difference taken exactly in integers; median > 0. */
double agg_excess(int64_t v, int64_t median);

/* The one rule of "slower than its peers", shared by the straggler flag
 * (docs/ppagg.md) and a what-if cell's slow rank (docs/whatif.md §9.2):
 * v[i] stands out when agg_excess(v[i], m) > margin, m the lower median of
 * v[0..n) and margin a fraction (agg.straggler_threshold: 0.1 = 10 %).
 * Which values are compared is the caller's. Writes the indices of those
 * that stand out, ascending, to which[] (room for n) and returns how many;
 * *median gets m, or -1 when n < 2. Nothing stands out without a
 * reference: fewer than two values (with two, the faster one is the
 * reference) or m <= 0. v is not changed. */
int agg_above_lower_median(const int64_t *v, int n, double margin, int64_t *median, int *which);

/* The ideal length of one pipeline: simulates 1F1B (interleaved when
 * vpp > 1) on pp devices with per-stage step times fwd[s], bwd[s] (ns) and
 * m micro-batches, the warm-up counted by Megatron's rule `warmup`
 * (model/schedule.h). Returns the makespan in ns, or -1 when it cannot be
 * simulated (message appended to err). */
int64_t agg_ideal_ns(int pp, int vpp, int m, enum sched_rule warmup, const int64_t *fwd,
		     const int64_t *bwd, struct strbuf *err);

#endif
