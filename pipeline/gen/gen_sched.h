/* gen_sched.h — the program order of Megatron-LM's pipeline schedules, per
 * stage: the forward and backward steps a rank runs and the
 * p2p_communication calls it makes between them, in the order Megatron-LM
 * core's schedules.py makes them (without overlap_p2p_comm). Timing is not
 * decided here (gen_sim does that).
 *
 * pp == 1, vpp == 1: forward_backward_no_pipelining (no calls at all).
 * vpp == 1: 1F1B (forward_backward_pipelining_without_interleaving) with
 * recv_forward, send_forward, send_forward_recv_backward,
 * send_backward_recv_forward, recv_backward and send_backward. Every call is
 * made on every stage; on the first and last stage the calls without a peer
 * return at once (no _communicate, no transfer), as Megatron's do.
 * vpp > 1: the interleaved order (needs microbatches % pp == 0): one
 * recv_forward, send_forward_recv_forward after each warm-up forward (the
 * last warm-up one is send_forward_backward_recv_forward_backward),
 * send_forward_backward_recv_forward_backward after each forward/backward
 * pair of the steady state, send_backward_recv_backward after each cool-down
 * backward (after a recv_backward when every forward was a warm-up one).
 * These always reach _communicate; a call with nothing to transfer launches
 * no kernel.
 */
#ifndef GEN_SCHED_H
#define GEN_SCHED_H

#include <stdbool.h>

enum gen_act_kind { GA_FWD, GA_BWD, GA_CALL };

/* Megatron's p2p_communication functions. */
enum gen_p2p_fn {
	GF_RECV_F,
	GF_SEND_F,
	GF_RECV_B,
	GF_SEND_B,
	GF_SEND_F_RECV_B,
	GF_SEND_B_RECV_F,
	GF_SEND_F_RECV_F,
	GF_SEND_B_RECV_B,
	GF_SEND_F_B_RECV_F_B,
	GF_NFN
};

/* The transfers a call can make. */
enum gen_xfer { GX_SEND_F, GX_SEND_B, GX_RECV_F, GX_RECV_B, GX_N };

struct gen_act {
	int kind;         /* GA_* */
	int chunk, mb;    /* GA_FWD, GA_BWD: model chunk (0..vpp-1), micro-batch */
	int fn;           /* GA_CALL: GF_* */
	bool communicate; /* GA_CALL: reaches _communicate (no early return) */
	/* GA_CALL: the transfers, chunk -1 when the call does not make it. A
	 * send names the step of this stage whose output (forward) or input
	 * gradient (backward) it sends; a receive names the step of this stage
	 * that consumes what it receives. */
	struct {
		int chunk, mb;
	} x[GX_N];
};

/* Builds the action list of stage s (0..pp-1), with the warm-up of
 * gen_sched_warmup(legacy). Returns the number of actions written to *out
 * (caller frees), or PP_EINVAL when the parameters cannot form a schedule
 * (vpp > 1 and microbatches % pp != 0). */
int gen_sched_build(int pp, int vpp, int microbatches, int s, bool legacy, struct gen_act **out);

/* Megatron's warm-up count: the forward steps stage s (0..pp-1) runs before
 * its first backward, of the microbatches·vpp there are. 1F1B: pp − s − 1;
 * interleaved (vpp > 1): (pp − s − 1)·2 + (vpp − 1)·pp; either clamped to
 * microbatches·vpp. legacy: Megatron-LM up to 2023, whose interleaved
 * schedule runs every forward first when microbatches == pp; otherwise
 * current Megatron core (docs/ppgen.md). PP_EINVAL for arguments out of
 * range.
 *
 * A deliberate second copy of model/schedule.h's sched_warmup(): ppgen is
 * the oracle the analysis is checked against and may not include model/
 * (docs/architecture.md), so the two are written apart and
 * tests/unit/gen/test_gen_sched.c checks that they agree. */
int gen_sched_warmup(int pp, int vpp, int microbatches, int s, bool legacy);

/* The directions fn's name promises (bit 1 << GX_*), whether or not a call
 * transfers anything: send_forward_recv_backward names GX_SEND_F and
 * GX_RECV_B. */
unsigned gen_sched_fn_dirs(int fn);

/* Virtual stage of (stage s, chunk c): c * pp + s. */
static inline int gen_sched_vstage(int pp, int s, int c)
{
	return c * pp + s;
}

#endif
