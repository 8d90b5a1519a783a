/* gen_sched.h — the program order of Megatron-LM's pipeline schedules, per
 * stage: which forward/backward steps and point-to-point calls a rank makes,
 * in order. Timing is not decided here (gen_sim does that).
 *
 * vpp == 1: 1F1B (forward_backward_pipelining_without_interleaving), with
 * Megatron's combined send_forward_recv_backward / send_backward_recv_forward
 * calls in the steady state. vpp > 1: the interleaved order (requires
 * microbatches % pp == 0), with one send or receive call per transfer.
 * Calls that have nothing to transfer (first/last stage) are left out.
 */
#ifndef GEN_SCHED_H
#define GEN_SCHED_H

enum gen_act_kind {
	GA_FWD, GA_BWD,
	GA_RECV_F, GA_SEND_F, GA_RECV_B, GA_SEND_B,
	GA_SEND_F_RECV_B, /* send forward of (chunk, mb), receive grad of (chunk2, mb2) */
	GA_SEND_B_RECV_F  /* send grad of (chunk, mb), receive forward of (chunk2, mb2) */
};

struct gen_act {
	int kind;
	int chunk, mb;   /* model chunk (0..vpp-1) and micro-batch */
	int chunk2, mb2; /* second transfer of a combined call */
};

/* Builds the action list of stage s (0..pp-1). Returns the number of
 * actions written to *out (caller frees), or PP_EINVAL when the parameters
 * cannot form a schedule (vpp > 1 and microbatches % pp != 0). */
int gen_sched_build(int pp, int vpp, int microbatches, int s, struct gen_act **out);

/* Virtual stage of (stage s, chunk c): c * pp + s. */
static inline int gen_sched_vstage(int pp, int s, int c) { return c * pp + s; }

#endif
