/* wi_synth.c — see wi_synth.h. Each step: a zero-wait parameter all-gather
 * (DP), the 1F1B pipeline of every replica (list scheduling: an op starts
 * when its stage is free and its input has arrived; a p2p pair ends
 * `p2p_ns` after both sides are there), then gc, layernorm, the embedding
 * pair of the first and last stage, the reduce-scatter (DP-synchronised per
 * stage), the clip (a global barrier) and the optimizer. */
#include "wi_synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/pp.h"
#include "util/strbuf.h"
#include "whatif/whatif.h"

void wi_synth_defaults(struct wi_synth *c, int pp, int dp, int mb, int steps)
{
	*c = (struct wi_synth){ .pp = pp,
				.dp = dp,
				.mb = mb,
				.steps = steps,
				.f_ns = 1000000,
				.b_ns = 2000000,
				.p2p_ns = 50000,
				.rs_ns = 3000000,
				.clip_ns = 500000,
				.opt_ns = 4000000,
				.slow = 1,
				.slow_dp = -1,
				.slow_stage = -1,
				.last_stage = 1 };
}

void wi_synth_slow(struct wi_synth *c, double factor, int dp, int stage)
{
	c->slow = factor;
	c->slow_dp = dp;
	c->slow_stage = stage;
}

struct gen {
	struct wi_table *t;
	const struct wi_synth *c;
	int64_t step, origin;
	int d;
	unsigned rng;
	int32_t *dyn_seq; /* [stage·NOPTYPES + type] */
};

static void emit(struct gen *g, int s, int type, int64_t start, int64_t end, int mb)
{
	int32_t *seq = &g->dyn_seq[s * OP_NTYPES + type];
	bool comp = type == OP_FWD_COMPUTE || type == OP_BWD_COMPUTE;
	bool chunk = comp || type == OP_PARAMS_AG || type == OP_GRADS_RS;
	struct wi_op o = {
		.step = g->step,
		.start_ns = g->origin + start,
		.end_ns = g->origin + end,
		.rank = s * g->c->dp + g->d,
		.seq_id = (*seq)++,
		.dp_rank = (int16_t)g->d,
		.stage = (int16_t)s,
		.mc = (int16_t)(chunk ? 0 : -1),
		.gmc = (int16_t)(comp ? s : -1),
		.mb_id = (int16_t)(comp            ? mb
				   : type == OP_GC ? 0
						   : -1),
		.optype = (uint8_t)type,
	};
	wi_table_add(g->t, &o, 0);
}

static int64_t compute_ns(struct gen *g, int s, int64_t base)
{
	double f = 1;
	if (g->d == g->c->slow_dp && s == g->c->slow_stage)
		f *= g->c->slow;
	if (s == g->c->pp - 1)
		f *= g->c->last_stage;
	if (g->c->seed) {
		g->rng = g->rng * 1103515245u + 12345u;
		f *= 0.98 + 0.04 * (double)((g->rng >> 8) & 0xffff) / 65535.0;
	}
	return (int64_t)((double)base * f);
}

/* One replica's pipeline; t[s] = each stage's last compute end. */
static void pipeline(struct gen *g, int64_t t0, int64_t *t)
{
	const struct wi_synth *c = g->c;
	int pp = c->pp, mb = c->mb;
	size_t cells = (size_t)pp * (size_t)mb;
	int64_t *fend = xmalloc(cells * sizeof(*fend)), *bend = xmalloc(cells * sizeof(*bend));
	int *idx = xcalloc((size_t)pp, sizeof(*idx));
	for (size_t i = 0; i < cells; i++)
		fend[i] = bend[i] = -1;
	for (int s = 0; s < pp; s++)
		t[s] = t0;
	for (int left = 2 * pp * mb; left > 0;) {
		for (int s = 0; s < pp; s++) {
			int warm = pp - s - 1 < mb ? pp - s - 1 : mb;
			while (idx[s] < 2 * mb) {
				/* 1F1B: warm forwards, then F/B pairs, then backwards. */
				int i = idx[s], m;
				bool fwd;
				if (i < warm) {
					fwd = true;
					m = i;
				} else if (i < warm + 2 * (mb - warm)) {
					fwd = (i - warm) % 2 == 0;
					m = fwd ? warm + (i - warm) / 2 : (i - warm) / 2;
				} else {
					fwd = false;
					m = mb - warm + (i - warm - 2 * (mb - warm));
				}
				int64_t *prod = fwd ? (s > 0 ? &fend[(s - 1) * mb + m] : NULL)
						    : (s < pp - 1 ? &bend[(s + 1) * mb + m] : NULL);
				if (prod && *prod < 0)
					break;
				int64_t start = t[s];
				if (prod) {
					int64_t end = (start > *prod ? start : *prod) + c->p2p_ns;
					emit(g, s, fwd ? OP_FWD_RECV : OP_BWD_RECV, start, end, -1);
					emit(g, fwd ? s - 1 : s + 1,
					     fwd ? OP_FWD_SEND : OP_BWD_SEND, *prod, end, -1);
					start = end;
				}
				int64_t end = start + compute_ns(g, s, fwd ? c->f_ns : c->b_ns);
				emit(g, s, fwd ? OP_FWD_COMPUTE : OP_BWD_COMPUTE, start, end, m);
				(fwd ? fend : bend)[s * mb + m] = end;
				t[s] = end;
				idx[s]++;
				left--;
			}
		}
	}
	free(fend);
	free(bend);
	free(idx);
}

void wi_synth_job(struct wi_table *t, const struct wi_synth *c)
{
	int pp = c->pp, dp = c->dp;
	bool use_dp = dp > 1;
	struct gen g = { .t = t, .c = c, .rng = c->seed };
	size_t cells = (size_t)pp * (size_t)dp;
	int64_t *tend = xmalloc(cells * sizeof(*tend)); /* [d·pp + s] */
	int64_t *ready = xmalloc(cells * sizeof(*ready));
	g.dyn_seq = xmalloc((size_t)pp * OP_NTYPES * sizeof(*g.dyn_seq));
	const int64_t ag = use_dp ? 200000 : 0, ln = 100000, emb = 200000;
	for (int k = 0; k < c->steps; k++) {
		g.step = 100 + k;
		g.origin = (int64_t)k * 1000000000000; /* 1000 s apart */
		for (g.d = 0; g.d < dp; g.d++) {
			memset(g.dyn_seq, 0, (size_t)pp * OP_NTYPES * sizeof(*g.dyn_seq));
			for (int s = 0; s < pp && use_dp; s++)
				emit(&g, s, OP_PARAMS_AG, 0, ag, -1);
			pipeline(&g, ag, tend + g.d * pp);
			for (int s = 0; s < pp; s++) {
				int64_t x = tend[g.d * pp + s];
				emit(&g, s, OP_GC, x, x, -1);
				emit(&g, s, OP_LAYERNORM, x, x + ln, -1);
				ready[g.d * pp + s] = x + ln;
			}
			/* The embedding pair of this replica (one op when PP = 1). */
			int64_t e0 = ready[g.d * pp], e1 = ready[g.d * pp + pp - 1];
			int64_t eend = (e0 > e1 ? e0 : e1) + emb;
			for (int s = 0; s < pp; s += (pp > 1 ? pp - 1 : 1)) {
				emit(&g, s, OP_EMBEDDING, ready[g.d * pp + s], eend, -1);
				ready[g.d * pp + s] = eend;
			}
		}
		/* Reduce-scatter: DP-synchronised per stage. */
		int64_t *rsend = tend; /* reuse as per-(d, s) clip arrival */
		for (int s = 0; s < pp; s++) {
			int64_t m = 0;
			for (int d = 0; d < dp; d++)
				m = ready[d * pp + s] > m ? ready[d * pp + s] : m;
			for (g.d = 0; g.d < dp; g.d++) {
				int64_t x = ready[g.d * pp + s];
				if (use_dp) {
					memset(g.dyn_seq + s * OP_NTYPES + OP_GRADS_RS, 0,
					       sizeof(int32_t));
					emit(&g, s, OP_GRADS_RS, x, m + c->rs_ns, -1);
					x = m + c->rs_ns;
				}
				rsend[g.d * pp + s] = x;
			}
		}
		int64_t gmax = 0;
		for (size_t i = 0; i < cells; i++)
			gmax = rsend[i] > gmax ? rsend[i] : gmax;
		for (g.d = 0; g.d < dp; g.d++)
			for (int s = 0; s < pp; s++) {
				g.dyn_seq[s * OP_NTYPES + OP_CLIP] = 0;
				g.dyn_seq[s * OP_NTYPES + OP_OPTIMIZER] = 0;
				emit(&g, s, OP_CLIP, rsend[g.d * pp + s], gmax + c->clip_ns, -1);
				emit(&g, s, OP_OPTIMIZER, gmax + c->clip_ns,
				     gmax + c->clip_ns + c->opt_ns, -1);
			}
	}
	free(tend);
	free(ready);
	free(g.dyn_seq);
}

struct whatif *wi_synth_engine(const struct wi_synth *c)
{
	struct wi_table t;
	struct whatif *e = NULL;
	struct strbuf err = STRBUF_INIT;
	wi_table_init(&t);
	wi_synth_job(&t, c);
	if (whatif_new(&t, NULL, &e, &err))
		fprintf(stderr, "wi_synth: %s\n", err.buf);
	wi_table_release(&t);
	strbuf_release(&err);
	return e;
}
