/* advise.h — the schedule advisor: from one job's measured pipeline times,
 * what step time, bubble and activation memory other schedules would give.
 *
 * advise_run() first replays the schedule the job ran with its measured times
 * (the calibration: its error against the measured step is the error bar of
 * every answer), then simulates the alternatives with the same inputs: 1F1B,
 * interleaved 1F1B at every VPP size the layer count allows, ZB-1P, 1F1B with
 * overlap, DualPipe-V, half and twice the micro-batches at the same global
 * batch, and layers moved off the slowest stage. What a trace cannot tell is
 * filled in by documented models, each with a setting (struct
 * advise_settings); every row names the modelled inputs it rests on.
 * docs/advisor.md is the model. Pure: no SQL, no files, no printing; the
 * simulations are pipeline/sim/'s.
 */
#ifndef ADVISE_H
#define ADVISE_H

#include <stdbool.h>
#include <stddef.h>

#include "model/schedule.h"
#include "sim/sim.h"

struct strbuf;
struct config;

/* One measured op time: over micro-batches and iterations, in ns. */
struct advise_stat {
	double median;
	double p10, p90; /* the spread; NaN when unknown */
	int samples;     /* how many op executions the median is over */
};

/* What the job measured. Fill it after advise_input_init(); the arrays are
 * the caller's and must outlive advise_run(). Per-(stage, chunk) arrays hold
 * pp * vpp entries, index stage * vpp + chunk (advise_at()); chunk c of stage
 * s is the model's virtual stage c * pp + s for the interleaved schedule and
 * s (c = 0) or 2 * pp - 1 - s (c = 1) for DualPipe-V (docs/sim-model.md §1). */
struct advise_input {
	/* The schedule that ran: SIM_1F1B, SIM_INTERLEAVE, SIM_ZB1P,
	 * SIM_1F1B_OVERLAP or SIM_DUALPIPE_V (vpp 1, 1, any, 1, 2). */
	enum sim_strategy strategy;
	enum sched_rule warmup; /* the job's Megatron warm-up rule */
	int pp;                 /* pipeline stages (devices), >= 1 */
	int vpp;                /* model chunks per stage, >= 1 */
	int microbatches;       /* per iteration, >= 1 */
	int group_size;         /* interleaved: micro-batch group, 0 = pp */
	const int *layers;      /* pp entries: transformer layers per stage; NULL
				 * when unknown (equal stages are assumed) */
	int micro_batch_size;   /* samples per micro-batch; 0 when unknown */
	long global_batch;      /* samples per step; 0 when unknown */

	const struct advise_stat *fwd;   /* forward compute per (stage, chunk) */
	const struct advise_stat *bwd;   /* backward: whole, or input gradient
					* only when wgrad is given */
	const struct advise_stat *wgrad; /* weight gradient (zero-bubble
					  * schedules' W); NULL: not measured */
	const double *overhead_ns;       /* pp entries: device time per op call
				    * spent outside compute (its p2p call);
				    * NULL: not measured (0) */
	double p2p_ns;                   /* latency of one hop between stages */
	bool p2p_measured;               /* else the setting's p2p is used */
	double tail_ns;                  /* how much longer the step's last backward
				    * runs than its median (measured; kept in
				    * every schedule) */
	double outside_ns;               /* the step's time outside the pipeline */
	bool outside_measured;
	double step_ns;           /* the measured step, > 0 */
	const double *memory_gib; /* pp entries: each stage's peak memory,
				    * NaN where none; NULL: no readings */
};

/* The models' settings (docs/advisor.md gives the reasoning for each
 * default). advise_settings_init() sets the defaults. */
struct advise_settings {
	double zb_w_share;            /* W's share of a backward, 0..1 (0.4) */
	double w_memory_share;        /* share of a micro-batch's activation held
				   * from its D to its W, 0..1 (32/34) */
	double chunk_overhead_ns;     /* compute time every chunk call adds (0) */
	double mbs_efficiency;        /* time per sample when the micro-batch size
				   * doubles, relative (1) */
	double p2p_ns;                /* hop latency when not measured (0) */
	double overlap_hidden;        /* share of the shorter op hidden when a
				   * forward and a backward run as one
				   * overlapped pair, 0..1 (0) */
	double calibration_tolerance; /* the replay's largest error for
				       * trusted answers (0.05) */
	double min_gain;              /* a best option must beat the replay by
				   * this share (0.01) */
	double memory_limit_gib;      /* device memory; 0 = unknown. Options
				   * predicted above it are not "best" */
	int max_layer_moves;          /* layers moved off the slowest stage: 1..
				   * this (2) */
	int layers;                   /* the model's transformer layers, 0 =
				   * unknown: not read by advise_run(), for
				   * the caller that fills advise_input.layers */
};

enum advise_kind {
	ADVISE_CURRENT = 0,  /* the calibration replay */
	ADVISE_SCHEDULE,     /* another strategy or VPP size */
	ADVISE_MICROBATCHES, /* the micro-batch count halved or doubled */
	ADVISE_REBALANCE     /* layers moved between stages */
};

/* The modelled (not measured) inputs a row rests on, as bits of
 * advise_row.modelled; advise_modelled_format() names them. */
enum {
	ADVISE_MOD_P2P = 1u << 0,         /* p2p: the setting, not measured */
	ADVISE_MOD_OVERHEAD = 1u << 1,    /* per-op overhead not measured */
	ADVISE_MOD_OUTSIDE = 1u << 2,     /* outside time not measured */
	ADVISE_MOD_LAYERS = 1u << 3,      /* layer split unknown */
	ADVISE_MOD_CHUNK_SPLIT = 1u << 4, /* stage time divided over chunks */
	ADVISE_MOD_W_SHARE = 1u << 5,     /* backward split into D and W */
	ADVISE_MOD_OVERLAP = 1u << 6,     /* overlapped pair time */
	ADVISE_MOD_MBS = 1u << 7,         /* time of another micro-batch size */
	ADVISE_MOD_LAYER_RATE = 1u << 8,  /* per-layer time of moved layers */
	ADVISE_MOD_MEMORY = 1u << 9,      /* GiB from the memory fit */
	ADVISE_MOD_NBITS = 10
};

/* One answer: the replay (rows[0]) or one alternative. */
struct advise_row {
	enum advise_kind kind;
	enum sim_strategy strategy;
	int vpp; /* chunks per stage (2 for DualPipe-V) */
	int microbatches;
	int micro_batch_size; /* 0 when the input's is unknown */
	int *layers;          /* pp entries when the row moves layers, else NULL */
	bool valid;           /* false: cannot run here, notes say why; the
			       * numbers below are NaN */
	double step_ns;       /* predicted step */
	double pipeline_ns;   /* its pipeline part (the simulated makespan) */
	double delta;         /* (step_ns - measured) / measured */
	double bubble;        /* mean share of the pipeline time a device idles */
	double activation;    /* peak in-flight activation of the most loaded
			       * stage, relative to the replay's */
	double memory_gib;    /* predicted peak GiB of the most loaded stage;
			       * NaN without a memory fit */
	double *stage_units;  /* pp: peak in-flight layer x micro-batch units */
	double *stage_gib;    /* pp: predicted peak GiB; NULL without a fit */
	unsigned modelled;    /* ADVISE_MOD_* */
	char *knobs;          /* Megatron options for this row ("" if none) */
	char *notes;          /* assumptions, constraints, warnings ("" if none) */
};

/* The least-squares memory model (docs/advisor.md, "Memory"): a stage's
 * peak = its schedule-independent part + gib_per_unit x its peak in-flight
 * layer x micro-batch units in the replay. */
struct advise_memory_fit {
	bool ok;                 /* false: no readings, or no usable fit (note) */
	double gib_per_unit;     /* activation of one layer x micro-batch */
	double common_gib;       /* the fitted stages' common schedule-independent
			      * part */
	double *base_gib;        /* pp: each stage's schedule-independent part
			      * (its reading - gib_per_unit x its units) */
	double *residual_gib;    /* pp: reading - (common_gib + gib_per_unit x
			      * units); NaN where no reading */
	double *measured_gib;    /* pp: the readings (NaN where none) */
	int fit_first, fit_last; /* the stages the line was fitted on */
	double rms_gib;          /* residuals' RMS over the fitted stages */
	char *note;              /* "" or why there is no fit */
};

struct advise_result {
	int pp;
	double measured_step_ns;
	struct advise_row *rows; /* rows[0] is the calibration replay */
	size_t nrows;
	double calibration_error; /* (replay - measured) / measured */
	bool calibrated;          /* |error| <= the tolerance */
	char *calibration_note;   /* "" or why the replay is off */
	int best;                 /* the best option's row, -1: none claimed */
	char *best_note;          /* why that one, or why none */
	struct advise_memory_fit memory;
	int simulations; /* schedules simulated */
};

void advise_input_init(struct advise_input *in);
void advise_settings_init(struct advise_settings *set);

/* Reads the [advise] section of cfg (docs/advisor.md §7) into *set, from
 * advise_settings_init()'s defaults, warning about keys it does not know.
 * The one reader of the section: a command loads it once, before anything
 * runs. Returns 0 or PP_EINVAL with the key and the value named in err. */
int advise_settings_load(struct advise_settings *set, const struct config *cfg, struct strbuf *err);
/* Warns about each key of the [advise] section it does not know; returns
 * their number. */
size_t advise_settings_check_known(const struct config *cfg);

/* Index of (stage, chunk) in the per-(stage, chunk) input arrays. */
static inline int advise_at(const struct advise_input *in, int stage, int chunk)
{
	return stage * in->vpp + chunk;
}

/* Runs the advisor. *res is the caller's to release with
 * advise_result_release(), also after an error. Returns 0, or PP_EINVAL for
 * inputs or settings it cannot use (message appended to err). Alternatives
 * that cannot run are rows with valid = false, not errors. */
int advise_run(const struct advise_input *in, const struct advise_settings *set,
	       struct advise_result *res, struct strbuf *err);

/* Frees what advise_run() allocated; res is zeroed. Accepts a zeroed one. */
void advise_result_release(struct advise_result *res);

/* "current" for the replay, else the strategy's name (sim_strategy_name()). */
const char *advise_row_schedule(const struct advise_row *row);
/* Appends "7,8,8,9" (row->layers) or nothing when the row moves no layers. */
void advise_layers_format(const struct advise_result *res, const struct advise_row *row,
			  struct strbuf *sb);
/* Appends the names of the bits, comma-separated ("chunk_split,w_share"),
 * or nothing for 0. */
void advise_modelled_format(unsigned modelled, struct strbuf *sb);
/* The name of one ADVISE_MOD_* bit ("p2p", "overhead", ...), "?" else. */
const char *advise_modelled_name(unsigned bit);

#endif
