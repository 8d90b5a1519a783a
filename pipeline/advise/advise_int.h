/* advise_int.h — what advise.c (the runs and rows), advise_model.c (op
 * times and activation units of a candidate schedule) and advise_memory.c
 * (the memory fit) share. Not part of the public API. */
#ifndef ADVISE_INT_H
#define ADVISE_INT_H

#include <stdbool.h>

#include "advise.h"

/* Op kinds of the stage model: forward, backward (the input gradient when W
 * is measured, else the whole backward) and the measured weight gradient. */
enum { AK_F = 0, AK_B, AK_W, AK_N };

/* The per-stage model derived once from the measured inputs
 * (docs/advisor.md, "How a stage's time divides"). */
struct advise_model {
	const struct advise_input *in;
	const struct advise_settings *set;
	int pp, v0;
	bool layers_known;
	bool w_measured;
	double *lambda;     /* pp: layers per stage (1 each when unknown) */
	double *meas[AK_N]; /* pp * v0: measured compute per (stage, chunk),
			    * the chunk overhead taken off; W 0 if not measured */
	double *rate[AK_N]; /* pp: compute per layer */
	double first[AK_N]; /* the first stage's extra (embedding) */
	double last[AK_N];  /* the last stage's extra (loss, output layer) */
	double *overhead;   /* pp: per-op overhead (0 when not measured) */
	double p2p;         /* hop latency used */
};

/* One schedule to simulate. */
struct advise_cand {
	enum advise_kind kind;
	enum sim_strategy strategy;
	int v;                /* chunks per stage */
	int m;                /* micro-batches */
	double mbs_factor;    /* micro-batch size relative to the measured */
	const double *lambda; /* pp: layers per stage of this candidate */
	bool measured_chunks; /* the measured per-chunk times apply (same
			       * chunks, placement and layers) */
	int group_size;       /* interleaved group, 0 = pp */
};

/* The arrays one simulation needs, per stage of the simulated schedule
 * (N = pp * v, or 2 * pp for DualPipe-V). */
struct advise_times {
	int N;
	double *f, *b, *d, *w, *fb; /* fb NULL unless the strategy pairs ops */
	double *units;              /* activation units of one micro-batch */
};

void advise_model_init(struct advise_model *mod, const struct advise_input *in,
		       const struct advise_settings *set);
void advise_model_release(struct advise_model *mod);

/* Fills *t for candidate c (allocating its arrays); advise_times_release()
 * frees them. */
void advise_times_build(const struct advise_model *mod, const struct advise_cand *c,
			struct advise_times *t);
void advise_times_release(struct advise_times *t);

/* The device and chunk that hold stage k of a simulated schedule. */
int advise_stage_device(enum sim_strategy s, int pp, int N, int k);
int advise_stage_chunk(enum sim_strategy s, int pp, int k);

/* True for the strategies whose backward is split into D and W. */
bool advise_split(enum sim_strategy s);
/* True for the strategies that run overlapped (F, B) pairs. */
bool advise_paired(enum sim_strategy s);

/* Fits the memory model on the replay's per-stage peak units (pp values);
 * fills res->memory. */
void advise_memory_fit(const struct advise_input *in, const double *units,
		       struct advise_memory_fit *fit);
void advise_memory_fit_release(struct advise_memory_fit *fit);

#endif
