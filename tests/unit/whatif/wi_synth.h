/* wi_synth.h — synthetic Megatron-like op tables for the what-if tests and
 * benchmark: 1F1B (VPP 1) pipelines timed by a small event simulation of
 * their own (not the engine's), with DP collectives, the end-of-step chain
 * and optional stragglers. */
#ifndef WI_SYNTH_H
#define WI_SYNTH_H

#include <stdint.h>

#include "whatif/wi_ops.h"

struct wi_synth {
	int pp, dp, mb, steps;
	int64_t f_ns, b_ns; /* forward / backward compute per micro-batch */
	int64_t p2p_ns;     /* p2p transfer */
	int64_t rs_ns, clip_ns, opt_ns;
	double slow;             /* compute factor of the slow worker (1 = none) */
	int slow_dp, slow_stage; /* the slow worker */
	double last_stage;       /* compute factor of every last-stage worker */
	unsigned seed;           /* jitter of +-2 % per op when nonzero */
};

/* Defaults: F 1 ms, B 2 ms, p2p 50 µs, RS 3 ms, clip 0.5 ms, opt 4 ms, no
 * straggler. */
void wi_synth_defaults(struct wi_synth *c, int pp, int dp, int mb, int steps);
/* Makes worker (dp, stage) the straggler: its compute takes factor times as
 * long. */
void wi_synth_slow(struct wi_synth *c, double factor, int dp, int stage);

/* Appends the job's rows to t (rank = stage·DP + dp). */
void wi_synth_job(struct wi_table *t, const struct wi_synth *c);

struct whatif;

/* The what-if engine of the job (whatif_new() on its rows; whatif_free()
 * frees it); NULL, with whatif_new()'s message on stderr, when it fails. */
struct whatif *wi_synth_engine(const struct wi_synth *c);

#endif
