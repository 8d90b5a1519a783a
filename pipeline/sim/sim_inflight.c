/* sim_inflight.c — the activation a timed schedule keeps in flight per device
 * (sim_peak_inflight(), sim.h).
 *
 * A device runs its queue in order and every op of a device is in its own
 * queue, so walking the queue is walking the device's time: no sort is
 * needed. Frees are recorded per micro-batch and stage, so the amount a
 * backward frees is what its forward added, whatever the order of the ops in
 * between (interleaved chunks, DualPipe-V's two directions).
 */
#include "sim.h"

void sim_peak_inflight(const struct sim_result *res, const double *units, double w_share,
		       double *peak)
{
	const struct sim_op *o = res->ops, *end = res->ops + res->nops;
	for (int d = 0; d < res->ndevices; d++) {
		double held = 0.0, top = 0.0;
		for (; o < end && o->device == d; o++) {
			double u = units[o->stage];
			switch (o->type) {
			case SIM_F:
				held += u;
				if (held > top)
					top = held;
				break;
			case SIM_B: held -= u; break;
			case SIM_D: held -= u * (1.0 - w_share); break;
			case SIM_W: held -= u * w_share; break;
			default: break;
			}
		}
		peak[d] = top;
	}
}
