/* sim.h — the pipeline-schedule simulator behind ppsim (and ppagg's "ideal").
 *
 * Builds the per-device op queues of one schedule strategy (1F1B, interleaved,
 * ZB-1P, the overlap variants, DualPipe, DualPipe-V) and times them with
 * static list scheduling: each device runs its queue in order, each op starts
 * at the latest of its dependencies. docs/sim-model.md
 * is the precise model. Two timing models: SIM_MODEL_REFERENCE reproduces the
 * PP-Schedule-Visualization simulator bit for bit, quirks included;
 * SIM_MODEL_MEGATRON (the default) fixes those quirks and equals it when the
 * P2P latency is 0. The timing pass is iterative (a worklist), so cycles are
 * reported as PP_ECYCLE, never a hang.
 */
#ifndef SIM_H
#define SIM_H

#include <stddef.h>
#include <stdint.h>

#include "model/schedule.h"

struct strbuf;

enum sim_strategy {
	SIM_1F1B = 0,
	SIM_INTERLEAVE,
	SIM_ZB1P,
	SIM_1F1B_OVERLAP,
	SIM_1F1B_INTERLEAVE_OVERLAP,
	SIM_DUALPIPE,
	SIM_DUALPIPE_V,
	SIM_NSTRATEGIES
};

enum sim_model {
	SIM_MODEL_MEGATRON = 0, /* quirks of the reference fixed (default) */
	SIM_MODEL_REFERENCE     /* bit-exact PP-Schedule-Visualization */
};

/* Op types. B is a whole backward; D/W are its input/weight halves. */
enum sim_op_type { SIM_F = 0, SIM_B, SIM_D, SIM_W, SIM_NTYPES };

/* What to simulate. Initialise with sim_config_init() and set the fields.
 * The time arrays are owned by the caller and must hold `stages` values
 * (one per stage); NULL means the default for every stage. */
struct sim_config {
	enum sim_strategy strategy;
	enum sim_model model;
	enum sched_rule warmup;   /* Megatron's warm-up rule (model/schedule.h);
				 * SCHED_CORE after sim_config_init() */
	int devices;              /* p >= 1 */
	int stages;               /* N, a multiple of p (see docs/sim-model.md §5) */
	int microbatches;         /* m >= 1 */
	int group_size;           /* interleave: micro-batch group per virtual stage;
			   * 0 = p (ignored by 1f1b_interleave_overlap) */
	double p2p;               /* P2P latency L >= 0 */
	const double *forward;    /* F, default 1 */
	const double *backward;   /* whole B, default 2 (also in split mode) */
	const double *backward_d; /* D, default 1 */
	const double *backward_w; /* W, default 1 */
	const double *overlapped; /* an overlapped (F, B) pair keyed on the
				   * forward's stage; NULL = F + B there; a NaN
				   * stage = not given (PP_EINVAL if a pair
				   * runs there) */
};

/* One op as timed. An overlapped pair gives two ops (F then B) with equal
 * start and end and `paired` set. */
struct sim_op {
	int32_t device;
	int32_t stage;
	int32_t batch;
	uint8_t type;   /* enum sim_op_type */
	uint8_t paired; /* 1 when part of an overlapped pair */
	double start;
	double end;
};

struct sim_device {
	double busy;   /* sum of (end - start) over the queue; a pair once */
	double idle;   /* makespan - busy */
	double bubble; /* idle / makespan (0 when makespan is 0) */
};

struct sim_result {
	double makespan;              /* max of all op ends */
	double ideal;                 /* the reference's ideal: m * sum_s(F+B) / p */
	double reference_bubble_rate; /* (makespan - ideal) / ideal */
	int ndevices;
	struct sim_device *devices; /* ndevices entries */
	size_t nops;
	struct sim_op *ops; /* device 0's queue first, in queue order */
};

/* Sets defaults: 1F1B, megatron model, everything else 0/NULL. */
void sim_config_init(struct sim_config *cfg);

/* Validates cfg, builds the schedule, times it and fills *res (which the
 * caller releases with sim_result_release(), also after an error).
 * Returns 0, PP_EINVAL for invalid parameters (including schedules the
 * chosen model cannot build), PP_ECYCLE when the schedule deadlocks (the
 * message names the device and the op). On error a one-line
 * message is appended to err (when not NULL), as pp_err() does. */
int sim_run(const struct sim_config *cfg, struct sim_result *res, struct strbuf *err);

/* Frees what sim_run allocated; res is zeroed. Accepts a zeroed result. */
void sim_result_release(struct sim_result *res);

/* The peak activation each device holds in a schedule sim_run() timed
 * (docs/advisor.md, "Activation memory"). Each device's queue is walked in
 * order: a forward of (batch, stage) adds units[stage]; the end of that
 * micro-batch's backward-input op (B, or D in split schedules) frees
 * (1 - w_share) of it and its W the rest (w_share does not matter for
 * schedules without W ops: B frees everything). The peak is taken after each
 * forward, so an overlapped pair counts its forward before its backward
 * frees. units holds one value per stage of the run (cfg.stages), in any
 * unit; peak receives res->ndevices values. Pure; no error. */
void sim_peak_inflight(const struct sim_result *res, const double *units, double w_share,
		       double *peak);

/* "1f1b", "interleave", "zb1p", "1f1b_overlap", "1f1b_interleave_overlap",
 * "dualpipe", "dualpipe_v". */
const char *sim_strategy_name(enum sim_strategy s);
/* Parses a strategy name (also "1f1b_interleave" = interleave, as app.py
 * spells it; "-" may stand for "_"). Returns 0 or PP_EINVAL. */
int sim_strategy_parse(const char *name, enum sim_strategy *out);
/* "megatron" / "reference". */
const char *sim_model_name(enum sim_model m);
int sim_model_parse(const char *name, enum sim_model *out);
/* "F", "B", "D", "W". */
const char *sim_op_type_name(enum sim_op_type t);

#endif
