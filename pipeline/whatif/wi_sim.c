/* wi_sim.c — the lane-vectorised simulator (docs/whatif.md §4).
 *
 * The schedule (Kahn's order, computed once by wi_model.c) does not depend
 * on the times, so a simulation is one pass over it per block of steps, each
 * item a loop over the block's lanes:
 *   start v:   start = max over preds of their end (0 for a root) + delay;
 *              a local op ends at start + duration;
 *   finish g:  G = max of the members' starts (per lane; per step over the DP
 *              lanes when the group is DP-synchronised); member m ends at
 *              G + transfer(m).
 * The step time is the latest optimizer end; the span is the latest end
 * minus the earliest start, both over the lanes of the step.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/hugepage.h"
#include "util/pp.h"
#include "whatif_int.h"

enum { MODE_NONE = 0, MODE_ALL, MODE_MIXED };

static int sel_mode(const struct wi_sel *s, size_t v)
{
	if (s->all)
		return s->invert ? MODE_NONE : MODE_ALL;
	if (s->node && !s->node[v])
		return s->invert ? MODE_ALL : MODE_NONE;
	if (!s->worker)
		return s->invert ? MODE_NONE : MODE_ALL;
	return MODE_MIXED;
}

/* mask[stage·maxl + j] for lane j of any block: worker selected (^ invert). */
static void lane_masks(const struct whatif *e, const struct wi_sel *s, uint8_t *mask, size_t maxl)
{
	if (!s->worker || s->all)
		return;
	for (int st = 0; st < e->pp; st++)
		for (size_t j = 0; j < maxl; j++)
			mask[(size_t)st * maxl + j] =
				(uint8_t)(!!s->worker[st * e->dp + (int)(j % (size_t)e->dp)] ^
					  s->invert);
}

/* out[l] = the value lane l uses: recorded, ideal, or by the lane mask. */
static const double *pick(int mode, const double *rec, double ideal, const uint8_t *mask,
			  double *tmp, size_t nl)
{
	if (mode == MODE_ALL)
		return rec;
	if (mode == MODE_NONE) {
		for (size_t l = 0; l < nl; l++)
			tmp[l] = ideal;
	} else {
		for (size_t l = 0; l < nl; l++)
			tmp[l] = mask[l] ? rec[l] : ideal;
	}
	return tmp;
}

/* en[l] = start[l] + d[l], the end of a node in lane l (en may be start),
 * and maxe[l] the latest end so far. */
static inline void end_at(double *en, const double *start, const double *d, double *maxe, size_t nl)
{
	for (size_t l = 0; l < nl; l++) {
		en[l] = start[l] + d[l];
		maxe[l] = en[l] > maxe[l] ? en[l] : maxe[l];
	}
}

void wi_dp_max(double *x, size_t nb, int dp)
{
	for (size_t k = 0; k < nb; k++) {
		double *p = x + k * (size_t)dp, m = p[0];
		for (int d = 1; d < dp; d++)
			m = p[d] > m ? p[d] : m;
		for (int d = 0; d < dp; d++)
			p[d] = m;
	}
}

void wi_simulate(struct whatif *e, const struct wi_scen *sc, struct wi_out *out)
{
	size_t maxl = e->bs * (size_t)e->dp, n = e->n;
	if (!e->scratch) {
		/* One block's starts and ends, kept for the engine's next runs:
		 * fresh pages per run cost more than the run. */
		e->scratch = xmalloc(2 * n * maxl * sizeof(*e->scratch));
		hugepage_advise(e->scratch, 2 * n * maxl * sizeof(*e->scratch));
	}
	double *sbuf = e->scratch, *ebuf = e->scratch + n * maxl;
	double *tmp = xmalloc(4 * maxl * sizeof(*tmp));
	uint8_t *vmask = xmalloc((size_t)e->pp * maxl);
	uint8_t *dmask = xmalloc((size_t)e->pp * maxl);
	uint8_t *vmode = xmalloc(n), *dmode = xmalloc(n);
	double *pk = tmp, *mins = tmp + maxl, *maxe = tmp + 2 * maxl, *opte = tmp + 3 * maxl;
	lane_masks(e, &sc->val, vmask, maxl);
	lane_masks(e, &sc->delay, dmask, maxl);
	for (size_t v = 0; v < n; v++) {
		vmode[v] = (uint8_t)sel_mode(&sc->val, v);
		dmode[v] = (uint8_t)sel_mode(&sc->delay, v);
	}
	for (size_t bl = 0; bl < e->nblocks; bl++) {
		size_t nb = wi_block_steps(e, bl), nl = nb * (size_t)e->dp;
		size_t off = bl * e->bs * (size_t)e->dp * n;
		double *S = out->start ? out->start + off : sbuf;
		double *E = out->end ? out->end + off : ebuf;
		const double *val = e->val + off, *dl = e->delay + off;
		for (size_t l = 0; l < nl; l++) {
			mins[l] = INFINITY;
			maxe[l] = -INFINITY;
			opte[l] = -INFINITY;
		}
		for (size_t i = 0; i < e->nsched; i++) {
			int32_t it = e->sched[i];
			if (it >= 0) {
				size_t v = (size_t)it;
				const struct wi_node *nd = &e->node[v];
				double *s = S + v * nl;
				int32_t k0 = e->pred_off[v], k1 = e->pred_off[v + 1];
				if (k0 == k1) {
					memset(s, 0, nl * sizeof(*s));
				} else {
					memcpy(s, E + (size_t)e->pred[k0] * nl, nl * sizeof(*s));
					for (int32_t k = k0 + 1; k < k1; k++) {
						const double *pe = E + (size_t)e->pred[k] * nl;
						for (size_t l = 0; l < nl; l++)
							s[l] = pe[l] > s[l] ? pe[l] : s[l];
					}
				}
				if (dmode[v] == MODE_ALL) {
					for (size_t l = 0; l < nl; l++)
						s[l] += dl[v * nl + l];
				} else if (dmode[v] == MODE_MIXED) {
					const uint8_t *m = dmask + (size_t)nd->stage * maxl;
					for (size_t l = 0; l < nl; l++)
						s[l] += m[l] ? dl[v * nl + l] : 0;
				}
				for (size_t l = 0; l < nl; l++)
					mins[l] = s[l] < mins[l] ? s[l] : mins[l];
				if (nd->group >= 0)
					continue;
				const double *d = pick(vmode[v], val + v * nl, e->ideal[v],
						       vmask + (size_t)nd->stage * maxl, pk, nl);
				double *en = E + v * nl;
				end_at(en, s, d, maxe, nl);
				if (nd->optype == OP_OPTIMIZER)
					for (size_t l = 0; l < nl; l++)
						opte[l] = en[l] > opte[l] ? en[l] : opte[l];
				continue;
			}
			const struct wi_sync *g = &e->group[~it];
			/* G is built in the first member's end row, which is
			 * therefore written last. */
			size_t v0 = (size_t)e->gmem[g->first];
			double *gm = E + v0 * nl;
			memcpy(gm, S + v0 * nl, nl * sizeof(*gm));
			for (int32_t m = 1; m < g->n; m++) {
				const double *ps = S + (size_t)e->gmem[g->first + m] * nl;
				for (size_t l = 0; l < nl; l++)
					gm[l] = ps[l] > gm[l] ? ps[l] : gm[l];
			}
			if (g->dpsync)
				wi_dp_max(gm, nb, e->dp);
			for (int32_t m = g->n - 1; m >= 0; m--) {
				size_t v = (size_t)e->gmem[g->first + m];
				const struct wi_node *nd = &e->node[v];
				const double *d = pick(vmode[v], val + v * nl, e->ideal[v],
						       vmask + (size_t)nd->stage * maxl, pk, nl);
				end_at(E + v * nl, gm, d, maxe, nl);
			}
		}
		for (size_t k = 0; k < nb; k++) {
			double lo = INFINITY, hi = -INFINITY, op = -INFINITY;
			for (int dd = 0; dd < e->dp; dd++) {
				size_t l = k * (size_t)e->dp + (size_t)dd;
				lo = mins[l] < lo ? mins[l] : lo;
				hi = maxe[l] > hi ? maxe[l] : hi;
				op = opte[l] > op ? opte[l] : op;
			}
			size_t si = bl * e->bs + k;
			if (out->sim)
				out->sim[si] = op;
			if (out->span)
				out->span[si] = hi - lo;
		}
	}
	PP_FREE_ALL(tmp, vmask, dmask, vmode, dmode);
}
