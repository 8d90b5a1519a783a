/* attribute.c — one category per GPU event (docs/semantics.md §5, docs/contracts.md §2).
 *
 * Megatron mode, first rule that applies (after the type: mem is always
 * `memory`, keeping the step it was launched in, searched fwd, bwd, pp, dp,
 * opt):
 *   0 comm launched inside a root-most dp_comm slice      → dp_communication
 *   1 launched on the forward thread inside a fwd step    → fwd_*
 *   2 launched on the backward thread within a bwd window → bwd_* (+recompute)
 *   3 comm launched inside a root-most pp_comm slice      → pp_communication
 *     (a send, receive or unknown collective: never an all-to-all, ...)
 *   4 comp launched inside a root-most optimizer slice    → optimizer_computation
 *   5 otherwise (and orphans)                             → other
 * "Inside a slice" is on the slice's own thread, closed interval. Generic
 * mode: the type alone (computation, communication, memory).
 */
#include "classify_int.h"

/* Where the last lookup in each set of roots landed: kernels come in GPU
 * order, so their launches mostly fall in the root found for the kernel
 * before (roots_find_near()). */
struct hints {
	size_t set[PAT_NSETS], pg, its;
};

/* The step index of the root of set containing the launch, or -1. */
static int32_t step_in(const struct classify *c, struct hints *h, int set, uint32_t thread,
		       int64_t ts)
{
	const struct croots *r = &c->roots[set];
	long i = roots_find_near(r, thread, ts, &h->set[set]);
	return i < 0 ? -1 : r->v[i].step;
}

/* Lookups are done lazily, in rule order, for the kernel's type only. */
static void attribute_one(const struct classify *c, struct hints *h, struct rr_kernel *k,
			  const struct claunch *l)
{
	uint32_t fwd = (uint32_t)c->fwd;
	bool comm = k->type == RR_COMM, on_fwd, on_bwd;
	int32_t s;

	on_fwd = c->fwd >= 0 && l->thread == fwd;
	on_bwd = c->bwd >= 0 && l->thread == (uint32_t)c->bwd;
#define FWD() (on_fwd ? step_in(c, h, PAT_FORWARD_STEP, fwd, l->ts) : -1)
#define BWD() (on_bwd ? step_in(c, h, PAT_BACKWARD_STEP, fwd, l->ts) : -1)
#define IN(set) step_in(c, h, set, l->thread, l->ts)
	if (k->type == RR_MEM) {
		k->category = RR_MEMORY;
		if ((s = FWD()) >= 0 || (s = BWD()) >= 0 || (s = IN(PAT_PP_COMM)) >= 0 ||
		    (s = IN(PAT_DP_COMM)) >= 0 || (s = IN(PAT_OPTIMIZER)) >= 0)
			k->step = s;
	} else if (comm && (s = IN(PAT_DP_COMM)) >= 0) {
		k->category = RR_DP_COMM;
		k->step = s;
	} else if ((s = FWD()) >= 0) {
		k->category = comm ? RR_FWD_COMM : RR_FWD_COMP;
		k->step = s;
	} else if ((s = BWD()) >= 0) {
		k->category = comm ? RR_BWD_COMM : RR_BWD_COMP;
		k->step = s;
		k->recompute = roots_find_near(&c->roots[PAT_RECOMPUTE], l->thread, l->ts,
					       &h->set[PAT_RECOMPUTE]) >= 0;
	} else if (comm && rr_coll_p2p(k->coll) && (s = IN(PAT_PP_COMM)) >= 0) {
		k->category = RR_PP_COMM;
		k->step = s;
	} else if (!comm && (s = IN(PAT_OPTIMIZER)) >= 0) {
		k->category = RR_OPT_COMP;
		k->step = s;
	}
#undef FWD
#undef BWD
#undef IN
}

void attribute_kernels(struct classify *c, struct rank_result *res, int64_t base,
		       const struct croots *pg, const struct croots *its, const struct nest *colls,
		       int32_t *iter_of)
{
	static const uint8_t generic[3] = { RR_COMPUTATION, RR_COMMUNICATION, RR_MEMORY };
	const struct claunch *launches = c->launches.data;
	struct hints h = { 0 };
	for (size_t i = 0; i < res->nkernels; i++) {
		struct rr_kernel *k = &res->kernels[i];
		uint32_t li = k->has_correlation ? cmap_get(&c->corr, k->correlation) : IMAP_EMPTY;
		const struct claunch *l = li == IMAP_EMPTY ? NULL : &launches[li];
		k->start_ns += base;
		k->orphan = !l;
		iter_of[i] = -1;
		if (!l) {
			c->cnt.orphans++;
			k->category = k->type == RR_MEM ? RR_MEMORY : RR_OTHER;
			if (res->mode == RR_GENERIC)
				k->category = generic[k->type];
			continue;
		}
		if (k->pg < 0 && k->type == RR_COMM) {
			long p = roots_find_near(pg, l->thread, l->ts, &h.pg);
			if (p >= 0)
				k->pg = pg->v[p].step;
		}
		if (k->coll_by_name && colls->n) { /* the CPU side says it */
			long p = nest_find(colls, l->thread, l->ts, false);
			if (p >= 0) {
				k->coll = (uint8_t)colls->v[p].val;
				k->coll_by_name = false;
			}
		}
		long it = roots_find_near(its, UINT32_MAX, l->ts, &h.its);
		iter_of[i] = (int32_t)it;
		if (res->mode == RR_GENERIC) {
			k->category = generic[k->type];
			continue;
		}
		k->category = RR_OTHER;
		attribute_one(c, &h, k, l);
	}
}
