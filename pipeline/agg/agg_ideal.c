/* agg_ideal.c — the ideal pipeline length (docs/semantics.md §6): the schedule
 * simulator (sim.h) run with the measured per-stage median step times, no
 * P2P latency. 1F1B when vpp = 1, interleaved 1F1B otherwise, where every
 * virtual stage d + c·pp takes device d's medians (each measured step is one
 * chunk of one micro-batch; m is then the step count divided by vpp). Times stay in ns as doubles:
 * exact below 2^53 ns (104 days), rounded once at the end. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "agg.h"
#include "sim/sim.h"
#include "util/pp.h"
#include "util/strbuf.h"

int64_t agg_ideal_ns(int pp, int vpp, int m, enum sched_rule warmup, const int64_t *fwd,
		     const int64_t *bwd, struct strbuf *err)
{
	if (pp < 1 || vpp < 1 || m < 1) {
		pp_err(err, PP_EINVAL, "no pipeline to simulate");
		return -1;
	}
	int stages = pp * vpp;
	double *f = xmalloc((size_t)stages * sizeof(double));
	double *b = xmalloc((size_t)stages * sizeof(double));
	int64_t out = -1;
	for (int s = 0; s < stages; s++) {
		f[s] = (double)fwd[s % pp];
		b[s] = (double)bwd[s % pp];
	}
	struct sim_config cfg;
	struct sim_result res = { 0 };
	sim_config_init(&cfg);
	cfg.strategy = vpp > 1 ? SIM_INTERLEAVE : SIM_1F1B;
	cfg.devices = pp;
	cfg.stages = stages;
	cfg.microbatches = m;
	cfg.warmup = warmup;
	cfg.forward = f;
	cfg.backward = b;
	if (!sim_run(&cfg, &res, err))
		out = llround(res.makespan);
	sim_result_release(&res);
	free(f);
	free(b);
	return out;
}
