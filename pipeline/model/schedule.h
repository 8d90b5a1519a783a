/* schedule.h — Megatron's warm-up count: how many forward steps a pipeline
 * stage runs before its first backward in Megatron-LM's 1F1B and
 * interleaved 1F1B schedules (docs/sim-model.md §2, docs/whatif.md §9.1).
 *
 * The one statement of the rule for the analysis: ppsim's op orders
 * (sim/sim_order.c) and ppagg's reading of VPP off a trace
 * (agg/agg_whatif.c) call it. ppgen keeps its own copy on purpose
 * (gen_sched_warmup() in gen/gen_sched.h): the generator is the oracle the
 * analysis is checked against, and tests/unit/gen/test_gen_sched.c checks
 * that the two agree.
 */
#ifndef SCHEDULE_H
#define SCHEDULE_H

#include <stdbool.h>

/* Which Megatron computes the count (they differ only for the interleaved
 * schedule with m = P micro-batches; docs/whatif.md §9.1). */
enum sched_rule {
	/* megatron/core pipeline_parallel/schedules.py (2024 on,
	 * get_pp_rank_microbatches): the formula, clamped to the forwards
	 * there are. */
	SCHED_CORE,
	/* Megatron-LM up to 2023: as SCHED_CORE, except that the interleaved
	 * schedule with m = P runs every forward first
	 * (all_warmup_microbatches). */
	SCHED_LEGACY,
};

/* One pipeline's schedule, as far as the warm-up count depends on it. */
struct sched_shape {
	int pp;           /* P, pipeline stages (devices), >= 1 */
	int vpp;          /* model chunks per stage, >= 1 */
	int m;            /* micro-batches per iteration, >= 1 */
	int group;        /* microbatch_group_size_per_vp_stage; 0 means P */
	bool interleaved; /* Megatron's interleaved function (vpp > 1, or an
			   * overlapped schedule at vpp 1) */
	int extra;        /* forwards added before the clamp when P > 1: 1
			   * under overlap_moe_expert_parallel_comm, else 0 */
	enum sched_rule rule;
};

/* The count Megatron's formula asks of stage `stage` (0..pp-1) before it
 * is clamped to the m·vpp forwards: P − s − 1 for 1F1B, (P − s − 1)·2 +
 * (vpp − 1)·group for the interleaved function, each plus sh->extra; with
 * P = 1 (no pipeline) 0 for 1F1B (each forward then its backward) and 1
 * for the interleaved function, without extra (get_pp_rank_microbatches'
 * forward_backward_no_pipelining case, the one docs/sim-model.md §2
 * follows). May exceed m·vpp. PP_EINVAL for a shape or stage out of
 * range. */
int sched_warmup_wanted(const struct sched_shape *sh, int stage);

/* Megatron's warm-up count of stage `stage`: sched_warmup_wanted()
 * clamped to the m·vpp forwards; under SCHED_LEGACY, m·vpp when the
 * schedule is interleaved and m == P. PP_EINVAL for a shape or stage out of
 * range. */
int sched_warmup(const struct sched_shape *sh, int stage);

/* "core" / "legacy". */
const char *sched_rule_name(enum sched_rule r);
/* Parses "core" or "legacy". 0 or PP_EINVAL. */
int sched_rule_parse(const char *name, enum sched_rule *out);

#endif
