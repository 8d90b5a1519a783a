/* agg_vpp.c — the virtual pipeline size and the step labels, see
 * agg_vpp.h. The decision rests on Megatron's warm-up count
 * (model/schedule.h): on stage s, the forward steps a rank runs before its
 * first backward are the warm-up plus one, and that count differs with the
 * number of chunks.
 */
#include "agg_vpp.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "agg_iter.h"
#include "topology.h"
#include "util/pp.h"

/* Forward computes before the first backward one on stage s of a pipeline
 * of P stages with vpp chunks and F forward computes, in Megatron's
 * schedule under rule: its warm-up (model/schedule.h), then one
 * steady-state forward; -1 when Megatron cannot run that (m = F / vpp
 * micro-batches, a multiple of P when interleaved). */
static int64_t forwards_first(int P, int s, int64_t F, int vpp, enum sched_rule rule)
{
	if (F % vpp || F / vpp > INT_MAX / vpp)
		return -1;
	int64_t m = F / vpp;
	if (vpp > 1 && (P < 2 || m % P))
		return -1;
	struct sched_shape sh = {
		.pp = P, .vpp = vpp, .m = (int)m, .interleaved = vpp > 1, .rule = rule
	};
	int warm = sched_warmup(&sh, s);
	if (warm < 0)
		return -1;
	return warm + (F > warm);
}

#define VPP_MAX 64

/* A rank's forward steps (with times) and how many of them start before
 * its first backward step; false when it has no step of either. */
static bool warmup_count(const struct agg_rank *r, int64_t *F, int64_t *c)
{
	int64_t first_bwd = INT64_MAX;
	*F = *c = 0;
	for (size_t j = 0; j < r->nsteps; j++) {
		const struct agg_step *s = &r->steps[j];
		if (s->has_kernels && s->phase == RR_BWD && s->s < first_bwd)
			first_bwd = s->s;
		*F += s->has_kernels && s->phase == RR_FWD;
	}
	if (!*F || first_bwd == INT64_MAX)
		return false;
	for (size_t j = 0; j < r->nsteps; j++)
		*c += r->steps[j].has_kernels && r->steps[j].phase == RR_FWD &&
		      r->steps[j].s < first_bwd;
	return true;
}

/* "2", "2, 4" or "1, 2, 4, ..." for the sizes that fit. */
static void add_sizes(struct strbuf *sb, const bool *fits)
{
	int k = 0;
	for (int v = 1; v <= VPP_MAX; v++) {
		if (!fits[v])
			continue;
		if (k++ == 3) {
			strbuf_addstr(sb, ", ...");
			break;
		}
		strbuf_addf(sb, "%s%d", k > 1 ? ", " : "", v);
	}
}

void agg_vpp_decide(const struct agg_iter *its, size_t n, const struct topology *t, int cfg,
		    struct agg_vpp *v)
{
	/* fits[rule][size]: the size fits every rank so far under that one of
	 * Megatron's warm-up rules, taken for the whole job (they differ only
	 * when m = P: docs/whatif.md §9.1); a size fits under either. */
	bool fitr[2][VPP_MAX + 1], fits[VPP_MAX + 1], any = false;
	int ranks = 0, stages = 0, P = t ? t->pp : 0;
	struct strbuf eg = STRBUF_INIT, cut = STRBUF_INIT, sizes = STRBUF_INIT;
	/* seen[st]: stage st counted; seen[P + rank]: rank counted (once over
	 * the iterations, so that the evidence counts ranks) */
	uint8_t *seen = xcalloc((size_t)(P > 0 ? P + t->nrank : 1), 1);
	v->cfg = v->vpp = cfg;
	v->from = AGG_VPP_UNTOLD;
	v->rule = NULL;
	v->warmup = SCHED_CORE;
	strbuf_reset(&v->why);
	for (int k = 1; k <= VPP_MAX; k++)
		fits[k] = fitr[SCHED_CORE][k] = fitr[SCHED_LEGACY][k] = true;
	for (size_t i = 0; i < n && P >= 1; i++)
		for (size_t k = 0; k < its[i].nranks; k++) {
			const struct agg_rank *r = &its[i].ranks[k];
			int rank = r->in.rank, st;
			int64_t F, c;
			if (!agg_rank_whole(r) || rank < 0 || rank >= t->nrank ||
			    (st = t->stage_of[rank]) < 0 || st >= P || !warmup_count(r, &F, &c))
				continue;
			bool had = false, has = false;
			for (int x = 1; x <= VPP_MAX; x++) {
				had |= fits[x];
				for (int u = SCHED_CORE; u <= SCHED_LEGACY; u++)
					fitr[u][x] &= forwards_first(P, st, F, x, u) == c;
				fits[x] = fitr[SCHED_CORE][x] || fitr[SCHED_LEGACY][x];
				has |= fits[x];
			}
			if (!any)
				strbuf_addf(&eg, "rank %d, stage %d: %lld of %lld forward steps",
					    rank, st, (long long)c, (long long)F);
			if (had && !has)
				strbuf_addf(&cut, "rank %d, stage %d, iteration %d: %lld of %lld",
					    rank, st, its[i].iteration, (long long)c, (long long)F);
			any = true;
			ranks += !seen[P + rank];
			stages += !seen[st];
			seen[P + rank] = seen[st] = 1;
		}
	free(seen);
	int got = 0, nfit = 0;
	for (int x = 1; x <= VPP_MAX; x++)
		if (fits[x]) {
			got = got ? got : x;
			nfit++;
		}
	add_sizes(&sizes, fits);
	if (!any) {
		strbuf_addstr(&v->why, P >= 1 ? "no rank ran both forward and backward steps"
					      : "no topology");
	} else if (cfg >= 1 && cfg <= VPP_MAX && fits[cfg]) {
		v->from = AGG_VPP_CONFIRMED;
		strbuf_addf(&v->why,
			    "the forward steps before the first backward fit it on %d rank%s "
			    "(%d stage%s)",
			    ranks, ranks == 1 ? "" : "s", stages, stages == 1 ? "" : "s");
	} else if (nfit == 1) {
		v->from = AGG_VPP_SCHEDULE;
		v->vpp = got;
		strbuf_addf(&v->why,
			    "the forward steps before the first backward fit vpp %d only, on "
			    "all %d rank%s (%d stage%s; e.g. %s)",
			    got, ranks, ranks == 1 ? "" : "s", stages, stages == 1 ? "" : "s",
			    eg.buf);
	} else if (nfit) {
		v->from = AGG_VPP_AMBIGUOUS;
		strbuf_addf(&v->why,
			    "the forward steps before the first backward on %d rank%s (%d "
			    "stage%s) fit vpp %s, not agg.vpp = %d",
			    ranks, ranks == 1 ? "" : "s", stages, stages == 1 ? "" : "s", sizes.buf,
			    cfg);
	} else {
		v->from = AGG_VPP_NO_FIT;
		strbuf_addf(&v->why,
			    "no size from 1 to %d fits the forward steps before the first "
			    "backward of every rank (%s fits none of the sizes the ranks before "
			    "it fit)",
			    VPP_MAX, cut.buf);
	}
	/* v->vpp may be an agg.vpp above the sizes tried (it takes up to 10^6) */
	bool tried = any && v->vpp <= VPP_MAX && fits[v->vpp];
	if (tried && !fitr[SCHED_CORE][v->vpp]) {
		v->rule = "the schedule runs every forward first when there are as many "
			  "micro-batches as stages (Megatron-LM up to 2023)";
		v->warmup = SCHED_LEGACY;
	} else if (tried && !fitr[SCHED_LEGACY][v->vpp])
		v->rule = "the schedule clamps its warm-up when there are as many micro-batches "
			  "as stages (current Megatron core)";
	strbuf_release(&eg);
	strbuf_release(&cut);
	strbuf_release(&sizes);
}

void agg_label_steps(struct agg_iter *it, int pp, int vpp)
{
	if (pp < 1 || vpp < 1)
		return;
	for (size_t i = 0; i < it->nranks; i++)
		for (size_t j = 0; j < it->ranks[i].nsteps; j++) {
			struct agg_step *s = &it->ranks[i].steps[j];
			int32_t chunk, mb;
			if ((s->phase != RR_FWD && s->phase != RR_BWD) ||
			    (s->chunk >= 0 && s->microbatch >= 0))
				continue;
			rr_vpp_label(s->seq, s->phase == RR_BWD, pp, vpp, &chunk, &mb);
			if (s->chunk < 0)
				s->chunk = chunk;
			if (s->microbatch < 0)
				s->microbatch = mb;
		}
}
