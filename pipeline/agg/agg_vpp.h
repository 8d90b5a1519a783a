/* agg_vpp.h — the virtual pipeline size of a job (docs/ppagg.md "VPP"):
 * decided once from agg.vpp and the schedule the ranks ran, then used
 * everywhere -- the fwd/bwd steps' chunk and micro-batch labels, the ideal
 * pipeline, the what-if's op labels -- and the step labels themselves.
 */
#ifndef AGG_VPP_H
#define AGG_VPP_H

#include <stddef.h>

#include "model/schedule.h"
#include "util/strbuf.h"

struct agg_iter;
struct topology;

/* Where the VPP that labels the steps, sizes the ideal pipeline and labels
 * the what-if's ops comes from (docs/ppagg.md "VPP"). */
enum agg_vpp_from {
	AGG_VPP_UNTOLD,    /* agg.vpp: no rank ran both forward and backward steps */
	AGG_VPP_CONFIRMED, /* agg.vpp, and the schedule fits it */
	AGG_VPP_SCHEDULE,  /* the one size the schedule fits: agg.vpp overridden */
	AGG_VPP_AMBIGUOUS, /* agg.vpp: the schedule fits several sizes, not it */
	AGG_VPP_NO_FIT     /* agg.vpp: the schedule fits no size (ranks disagree) */
};
struct agg_vpp {
	int vpp; /* the one ppagg uses everywhere */
	int cfg; /* agg.vpp */
	enum agg_vpp_from from;
	struct strbuf why; /* the evidence, one line without a final newline */
	/* Which of Megatron's warm-up rules vpp fits when only one does (they
	 * differ only when m = P: docs/whatif.md §9.1), else NULL; warmup is
	 * that rule, SCHED_CORE when both fit (or none was tried). */
	const char *rule;
	enum sched_rule warmup;
};

/* Decides v from the fwd/bwd steps of every rank of its[0..n) with a whole
 * trace (status "ok": a salvaged one stops early) that the topology t
 * (indexed) places on a stage: for each, the forward steps that
 * start before its first backward must be Megatron's warm-up plus one for
 * its stage (docs/ppagg.md "VPP"). The schedule wins when exactly one size
 * of 1-64 fits every rank; cfg (agg.vpp, >= 1) is kept otherwise.
 * Release v->why with strbuf_release(). */
void agg_vpp_decide(const struct agg_iter *its, size_t n, const struct topology *t, int cfg,
		    struct agg_vpp *v);

/* docs/semantics.md §6: gives each fwd/bwd step of it its model chunk and
 * micro-batch for a pipeline of pp stages with vpp chunks (Megatron's
 * interleaved order; with vpp 1, chunk 0 and the micro-batch is the step's
 * seq). Labels recorded in the database (PP-timer imports name every
 * step) win: only the unknown ones are computed. Nothing when pp or vpp
 * is below 1. */
void agg_label_steps(struct agg_iter *it, int pp, int vpp);

#endif
