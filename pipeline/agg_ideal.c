/* agg_ideal.c — the ideal pipeline length through the schedule simulator
 * (pipeline/sim.h). Placeholder until the simulator lands: reports that
 * no ideal is available. */
#include <stdio.h>

#include "agg.h"

int64_t agg_ideal_ns(int pp, int vpp, int m, const int64_t *fwd, const int64_t *bwd,
		     char *err, size_t errlen)
{
	snprintf(err, errlen, "the schedule simulator is not available");
	return -1;
}
