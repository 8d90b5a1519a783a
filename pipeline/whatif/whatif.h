/* whatif.h — the what-if engine: how much faster a training job would run
 * without its stragglers, and who they are (docs/whatif.md).
 *
 * whatif_new() validates an op table (wi_ops.h) and builds the dependency model
 * of one step of one model replica; whatif_run() replays every (step,
 * dp_rank) lane with recorded, delay-free and idealised durations and
 * computes S, S_t, S_dp, S_pp, S_w, M_W, M_S, the launch-delay metrics and a
 * verdict. Everything is double precision; times are nanoseconds relative to
 * each step's first start. The engine keeps no pointer into the table.
 *
 * Names: whatif_ is the engine's handle (struct whatif), the structs it
 * takes and fills (whatif_opts, _result, _shape, _node, _clock) and their
 * functions, and the files named for the folder (whatif.c, whatif.h,
 * whatif_int.h); every other file, type and function of whatif/ is wi_.
 */
#ifndef WI_WHATIF_H
#define WI_WHATIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wi_ops.h"

struct whatif;

/* The reference's threshold: a ratio below it is not decomposed. */
#define WHATIF_THRESHOLD 1.03

struct whatif_opts {
	int64_t dsp_size;     /* the meta's dsp_size (DP exists when
			     * DP·dsp_size > 1); 0 = the table's meta, else 1 */
	double threshold;     /* decompose when a ratio is >= this; 0 =
			       * WHATIF_THRESHOLD */
	double mw_percent;    /* M_W removes the top ceil(this % of workers);
			     * 0 = 3 */
	double verdict_share; /* M_W or M_S at least this names the culprit;
			       * 0 = 0.5 */
	bool all_lanes;       /* simulate S_dp on every lane (tests: the two-lane
			     * shortcut must give the same bits) */
};

/* The groups of the optype decompositions (docs/whatif.md §5.3, §5.8). */
enum wi_group {
	WI_G_FWD_COMPUTE = 0,
	WI_G_BWD_COMPUTE,
	WI_G_FWD_PP, /* forward-send + forward-recv */
	WI_G_BWD_PP, /* backward-send + backward-recv */
	WI_G_PARAMS_AG,
	WI_G_GRADS_RS,
	WI_G_SEP_AR,
	WI_G_LAYERNORM,
	WI_G_EMBEDDING,
	WI_G_CLIP,
	WI_G_OPTIMIZER,
	WI_G_GC,
	WI_G_FIRST_OP, /* launch decomposition only */
	WI_NGROUPS
};

/* "forward-compute", "forward-pp-comm", "first-op", ... */
const char *wi_group_name(int group);

enum wi_verdict {
	WI_VERDICT_NONE = 0, /* S below the threshold: nothing to explain */
	WI_VERDICT_WORKER,   /* a few workers explain most of S (M_W) */
	WI_VERDICT_STAGE,    /* the last pipeline stage does (M_S) */
	WI_VERDICT_SPREAD    /* neither: the slowdown is spread out */
};

const char *wi_verdict_name(enum wi_verdict v);

/* One decomposition: n keys (group ids, dp ranks or stages), the overall
 * ratio of each and, per step, ratio[step index * n + key index]. Keys are
 * in ascending order (not sorted by value). present = false (and n = 0)
 * below the threshold. */
struct wi_decomp {
	bool present;
	size_t n;
	int *key;
	double *ratio;
	double *per_step;
};

/* explain() of docs/whatif.md §5.6; NaN fields when undefined. */
struct wi_explain {
	double tori, tideal, trem, tadd; /* mean span step times, ns */
	double rem, add;
};

struct wi_worker {
	int32_t rank;
	int dp_rank, stage;
	double s_dp, s_pp, s_w; /* NaN below the threshold */
};

struct whatif_result {
	size_t nsteps;
	int64_t *step;       /* ascending */
	double *t_base;      /* span of the recorded step, ns */
	double *t_nodelay;   /* span without launch delays ("T") */
	double *t_ideal;     /* span of the ideal */
	double *sim_nodelay; /* simulator step time (optimizer end) */
	double *sim_ideal;
	double *slowdown;                                 /* per step: t_nodelay / sim_ideal */
	double *launch_slowdown;                          /* per step: t_base / sim_nodelay */
	double mean_base, mean_nodelay, mean_ideal;       /* means of the spans */
	double s;                                         /* S, docs/whatif.md §5.2 */
	double s_launch;                                  /* launch_slowdown, §5.8 */
	struct wi_decomp by_group, by_dp, by_stage;       /* blocking */
	struct wi_decomp l_by_group, l_by_dp, l_by_stage; /* launch */
	size_t nworkers;
	struct wi_worker *workers; /* by S_w descending, then rank; by rank
				    * when S_w is undefined */
	size_t n_mw;               /* the workers M_W removes: workers[0..n_mw) */
	struct wi_explain mw, ms;
	double m_w, m_s; /* = mw.rem, ms.rem; NaN = NULL */
	enum wi_verdict verdict;
};

/* Validates the table and builds the model. On failure returns PP_EPARSE
 * (bad input: the first problem, "FILE:LINE: what" when the table knows
 * lines) or PP_ECYCLE (the model has a cycle), with the message in err, and
 * *out = NULL. The caller frees a new engine with whatif_free(). No
 * function of the engine returns PP_ENOMEM: running out of memory ends the
 * process (docs/contracts.md §7). */
int whatif_new(const struct wi_table *t, const struct whatif_opts *o, struct whatif **out,
	       struct strbuf *err);
void whatif_free(struct whatif *e);

/* Runs every scenario and metric into r (release with
 * whatif_result_release()). */
void whatif_run(struct whatif *e, struct whatif_result *r);
void whatif_result_release(struct whatif_result *r);

/* Notes on what the engine added or assumed (placeholders inserted, meta
 * sizes that differ from the trace), one per line; "" when none. */
const char *whatif_notes(const struct whatif *e);

/* Sizes of the model: nodes (ops of one step of one replica, placeholders
 * included), edges, sync groups, DP, PP, VPP, steps. */
struct whatif_shape {
	size_t nodes, edges, groups, nsteps;
	int dp, pp, vpp;
	bool use_dp, overlapped_dp;
};
void whatif_shape(const struct whatif *e, struct whatif_shape *s);

/* Node v of the model: its type, stage and seq_id, whether it is a
 * placeholder the engine inserted, and its name "<optype>_<seq>_<stage>". */
struct whatif_node {
	int optype, stage;
	int32_t seq_id;
	int16_t mc, gmc;
	bool placeholder;
	bool comm; /* in a sync group */
	bool dp_sync;
};
void whatif_node(const struct whatif *e, size_t v, struct whatif_node *n);
void whatif_node_name(const struct whatif *e, size_t v, char *buf, size_t len);

/* The node of (stage, optype, seq_id), or -1. */
long whatif_find(const struct whatif *e, int stage, int optype, int32_t seq_id);
/* Node v's predecessors (the ops it waits for): *preds points into the
 * engine; returns how many. */
size_t whatif_node_preds(const struct whatif *e, size_t v, const int32_t **preds);
/* The members of node v's sync group (*members points into the engine);
 * 0 for a local op. */
size_t whatif_node_group(const struct whatif *e, size_t v, const int32_t **members);

/* Step index si (0..nsteps-1, ascending steps): its step (iteration)
 * number, and in *origin its recorded start (the earliest start over its
 * rows, as the table gives them): what whatif_recorded() and
 * whatif_timeline() measure from. */
int64_t whatif_step(const struct whatif *e, size_t si, int64_t *origin);
/* The rank of the worker (dp_rank, stage): the one the table holds. */
int32_t whatif_cell_rank(const struct whatif *e, int dp_rank, int stage);

/* An interval, ns. */
struct whatif_span {
	int64_t start, end;
};

/* docs/whatif.md §3.3 on one stage: matches its m ops of one p2p type
 * (op[], in time order) to the n computes of their direction (comp[], by
 * seq_id). A receive is matchable when it starts at most 50 µs after the
 * last compute starts, a send when it ends at most 50 µs before the first
 * compute ends; the others are type-1 no-ops (match[i] = -1). The k-th
 * matchable op matches compute k, or k + 1 for receives when n − 1 of
 * them are matchable (the first compute has none): match[i] is that
 * compute's index. Returns the number matchable; only n, and on the first
 * or last stage 0 or n − 1, fit the model (the caller checks), since other
 * counts leave matches past the last compute. */
size_t whatif_p2p_match(const struct whatif_span *comp, size_t n, const struct whatif_span *op,
			size_t m, bool recv, int32_t *match);

enum wi_scenario {
	WI_SCEN_BASE = 0, /* recorded durations and launch delays */
	WI_SCEN_NODELAY,  /* recorded durations, no launch delays */
	WI_SCEN_IDEAL     /* per-type ideal durations, no launch delays */
};

/* Simulates one scenario and writes every op's start and end (ns from the
 * step's start) to start[i] and end[i], i = (step index · DP + dp_rank) ·
 * nodes + v; each array holds nsteps·DP·nodes doubles. */
void whatif_timeline(struct whatif *e, enum wi_scenario sc, double *start, double *end);

/* The recorded times on the same index (placeholders included), relative to
 * each step's first start. */
void whatif_recorded(const struct whatif *e, double *start, double *end);

/* The clock offsets of the workers (docs/whatif.md §4.1), for tables whose
 * workers stamp with their own clocks (Kineto traces of several hosts):
 * estimated from the ops that end together — the two members of each p2p
 * pair and of the embedding pair in each lane, and each replica's DP
 * collective against replica 0's in each step — as the weighted least-
 * squares solution over the worker graph of the per-pair medians, relative
 * to the worker of the lowest rank. offset_ns[stage·DP + dp] is what that
 * worker's clock reads minus what the reference's reads at the same
 * instant: subtract it from its times. */
struct whatif_clock {
	int dp, pp;
	int ref;            /* the reference worker, stage·DP + dp */
	int64_t *offset_ns; /* [stage·DP + dp] */
	int64_t error_ns;   /* the largest disagreement of the solution with
			     * a worker pair's median that the pair's own
			     * spread does not explain: how far to trust it */
	bool connected;     /* every worker is linked to the reference
			     * (else the others' offsets are 0) */
	size_t nsamples, nedges;
};
void whatif_clock_estimate(const struct whatif *e, struct whatif_clock *c);
void whatif_clock_release(struct whatif_clock *c);

/* Two ops that sync (they run at one instant, and usually end together):
 * worker a's interval [sa, ea] and worker b's [sb, eb], each in its
 * worker's clock. */
struct whatif_clock_pair {
	int32_t a, b;
	double sa, ea, sb, eb;
};

/* The estimate of whatif_clock_estimate() from any such pairs (np of
 * them; pairs of a worker with itself are ignored) over W workers
 * numbered 0..W-1, relative to worker ref: fills c's offset_ns (W
 * entries, release with whatif_clock_release()), ref, error_ns,
 * connected, nsamples and nedges; dp and pp are left 0. */
void whatif_clock_solve(const struct whatif_clock_pair *p, size_t np, size_t W, int ref,
			struct whatif_clock *c);

#endif
