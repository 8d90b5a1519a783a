/* sim_order.c — the op order of each device's queue, per strategy.
 *
 * Each generator appends device d's entries through sim_emit() and
 * sim_emit_pair(), which check batch ranges, stage placement and duplicates,
 * so an order the chosen model cannot build ends in a sticky S->rc instead
 * of bad memory. The orders follow docs/sim-model.md §2 step by step; the
 * megatron model only clamps warmup counts to what exists (docs/sim-model.md
 * §6, items 7 and 8). Every warmup count is Megatron's (model/schedule.h)
 * under cfg->warmup: its current rule by default, as docs/sim-model.md §2
 * says.
 */
#include <stdlib.h>

#include "model/schedule.h"
#include "sim_int.h"
#include "util/pp.h"

static int imin(int a, int b)
{
	return a < b ? a : b;
}

/* The schedule of S with v chunks per device and micro-batch groups of g
 * (0: p), for model/schedule.h. */
static struct sched_shape shape(const struct sim_sched *S, int v, int g, bool interleaved)
{
	return (struct sched_shape){ .pp = S->p,
				     .vpp = v,
				     .m = S->m,
				     .group = g,
				     .interleaved = interleaved,
				     .rule = S->cfg->warmup };
}

/* The warmup of a schedule with one chunk per device: forwards 0..w-1, w
 * Megatron's count, clamped to the m batches except in the reference model
 * (docs/sim-model.md §6 item 7). Returns the warmup count. */
static int warmup(struct sim_sched *S, int d, const struct sched_shape *sh)
{
	int w = S->reference ? sched_warmup_wanted(sh, d) : sched_warmup(sh, d);
	for (int b = 0; b < w; b++)
		sim_emit(S, b, d, SIM_F);
	return w;
}

/* 1F1B: warmup forwards, steady F/B, cooldown backwards. */
static void order_1f1b(struct sim_sched *S, int d)
{
	struct sched_shape sh = shape(S, 1, 0, false);
	int m = S->m, w = warmup(S, d, &sh);
	for (int k = 0; k < m - w; k++) {
		sim_emit(S, w + k, d, SIM_F);
		sim_emit(S, k, d, SIM_B);
	}
	for (int b = m - w; b < m; b++)
		sim_emit(S, b, d, SIM_B);
}

/* ZB-1P (ZB-H1): 1F1B with D in place of B; W lags D by d steps. */
static void order_zb1p(struct sim_sched *S, int d)
{
	struct sched_shape sh = shape(S, 1, 0, false);
	int m = S->m, p = S->p, w = warmup(S, d, &sh), nw = 0;
	for (int k = 0; k < m - w; k++) {
		sim_emit(S, w + k, d, SIM_F);
		sim_emit(S, k, d, SIM_D);
		if ((w + k) - nw >= p - 1)
			sim_emit(S, nw++, d, SIM_W);
	}
	for (int b = m - w; b < m; b++) {
		sim_emit(S, b, d, SIM_D);
		sim_emit(S, nw++, d, SIM_W);
	}
	while (nw < m)
		sim_emit(S, nw++, d, SIM_W);
}

/* 1F1B with overlapped (F, B) pairs in the steady phase: the warmup of the
 * interleaved function with one chunk plus the overlap's forward,
 * 2(p-d-1)+1 (docs/sim-model.md §2). */
static void order_1f1b_overlap(struct sim_sched *S, int d)
{
	struct sched_shape sh = shape(S, 1, 0, true);
	sh.extra = 1;
	int m = S->m, w = warmup(S, d, &sh);
	for (int k = 0; k < m - w; k++)
		sim_emit_pair(S, w + k, d, k, d);
	for (int b = m - w; b < m; b++)
		sim_emit(S, b, d, SIM_B);
}

/* Megatron's interleaved schedule table: entry j = (micro-batch, chunk). */
struct itable {
	int32_t *mb;
	int32_t *chunk;
	int total;
};

static void itable_build(struct sim_sched *S, int g, struct itable *t)
{
	int m = S->m, v = S->v, j = 0;
	t->total = m * v;
	t->mb = xmalloc((size_t)t->total * sizeof(*t->mb));
	t->chunk = xmalloc((size_t)t->total * sizeof(*t->chunk));
	for (int lo = 0; lo < m; lo += g) {
		int hi = lo + g >= m ? m : lo + g;
		for (int c = 0; c < v; c++)
			for (int mb = lo; mb < hi; mb++) {
				t->mb[j] = mb;
				t->chunk[j++] = c;
			}
	}
}

/* Interleaved 1F1B, with or without overlapped pairs (docs/sim-model.md §2). */
static void order_interleave(struct sim_sched *S, int d, bool overlap)
{
	int p = S->p, v = S->v, g = overlap ? p : S->g, nw;
	struct itable t = { NULL, NULL, 0 };
	struct sched_shape sh = shape(S, v, g, true);
	itable_build(S, g, &t);
	if (overlap && !S->reference) /* Megatron adds the extra warmup before clamping */
		sh.extra = 1;
	nw = sched_warmup(&sh, d);
	/* model/schedule.h adds no extra at p = 1 (1F1B-overlap's 2(p-d-1)+1
	 * relies on it); here the extra goes on p = 1's 1 before the clamp, as
	 * for p > 1 (docs/sim-model.md §2, "Interleaved 1F1B with overlap"). */
	if (overlap && !S->reference && p == 1)
		nw = imin(2, t.total);
	if (overlap && S->reference) {
		nw++;
		if (nw > t.total) {
			sim_fail(S, PP_EINVAL,
				 "1f1b_interleave_overlap: device %d would need %d "
				 "warmup forwards but has only %d (the reference "
				 "asserts here; use --model megatron)",
				 d, nw, t.total);
			goto out;
		}
	}
#define FWD(j) (t.mb[j]), d + t.chunk[j] * p
#define BWD(j) (t.mb[j]), d + (v - 1 - t.chunk[j]) * p
	for (int j = 0; j < nw; j++)
		sim_emit(S, FWD(j), SIM_F);
	for (int k = 0; k < t.total - nw; k++) {
		if (overlap) {
			sim_emit_pair(S, FWD(nw + k), BWD(k));
		} else {
			sim_emit(S, FWD(nw + k), SIM_F);
			sim_emit(S, BWD(k), SIM_B);
		}
	}
	for (int j = t.total - nw; nw > 0 && j < t.total; j++)
		sim_emit(S, BWD(j), SIM_B);
#undef FWD
#undef BWD
out:
	free(t.mb);
	free(t.chunk);
}

/* DualPipe and DualPipe-V share their step structure (deepseek's
 * dualpipe.py / dualpipev.py): a device runs two chunks (phases), each with
 * its own forward and backward counters, and a FIFO of deferred W ops. */
struct dp_state {
	struct sim_sched *S;
	int stage[2];  /* chunk/phase -> stage */
	int fwd[2];    /* next forward batch per chunk */
	int bwd[2];    /* next backward batch per chunk */
	int32_t *wq_b; /* FIFO of deferred W: batch, stage */
	int32_t *wq_s;
	size_t wq_head, wq_tail, wq_cap;
};

static void dp_f(struct dp_state *st, int c)
{
	sim_emit(st->S, st->fwd[c]++, st->stage[c], SIM_F);
}

static void dp_b(struct dp_state *st, int c, bool zb)
{
	int b = st->bwd[c]++;
	if (!zb) {
		sim_emit(st->S, b, st->stage[c], SIM_B);
		return;
	}
	sim_emit(st->S, b, st->stage[c], SIM_D);
	if (st->wq_tail == st->wq_cap) {
		sim_fail(st->S, PP_EINVAL, "device %d: W queue overflow", st->S->cur_dev);
		return;
	}
	st->wq_b[st->wq_tail] = b;
	st->wq_s[st->wq_tail++] = st->stage[c];
}

static void dp_w(struct dp_state *st)
{
	if (st->wq_head == st->wq_tail) {
		sim_fail(st->S, PP_EINVAL, "device %d: no deferred W op left to run",
			 st->S->cur_dev);
		return;
	}
	sim_emit(st->S, st->wq_b[st->wq_head], st->wq_s[st->wq_head], SIM_W);
	st->wq_head++;
}

static void dp_fb(struct dp_state *st, int cf, int cb)
{
	int bf = st->fwd[cf]++, bb = st->bwd[cb]++;
	sim_emit_pair(st->S, bf, st->stage[cf], bb, st->stage[cb]);
}

/* The common steps 1-8. n = ranks in the (half-)pipeline (p for V, p/2 for
 * DualPipe), r = rank within it, steady = iterations of step 4, first_plain
 * = whether step 4's first iteration runs F0 then B1 unpaired. */
static void dp_steps(struct dp_state *st, int n, int r, int steady, bool first_plain)
{
	for (int i = 0; i < (n - r - 1) * 2; i++)
		dp_f(st, 0);
	for (int i = 0; i < r + 1; i++) {
		dp_f(st, 0);
		dp_f(st, 1);
	}
	for (int i = 0; i < n - r - 1; i++) {
		dp_b(st, 1, true);
		dp_w(st);
		dp_f(st, 1);
	}
	for (int k = 0; k < steady; k++) {
		if (k == 0 && first_plain) {
			dp_f(st, 0);
			dp_b(st, 1, false);
		} else {
			dp_fb(st, 0, 1);
		}
		dp_fb(st, 1, 0);
	}
	for (int i = 0; i < n - r - 1; i++) {
		dp_b(st, 1, false);
		dp_fb(st, 1, 0);
	}
	bool zb = false;
	int half = (r + 1) / 2;
	for (int i = 0; i <= r; i++) {
		if (i == half && r % 2 == 1)
			zb = true;
		dp_b(st, 1, zb);
		if (i == half && r % 2 == 0)
			zb = true;
		dp_b(st, 0, zb);
	}
	for (int i = 0; i < n - r - 1; i++) {
		dp_w(st);
		dp_b(st, 0, true);
	}
	for (int i = 0; i < r + 1; i++)
		dp_w(st);
}

static void order_dualpipe(struct sim_sched *S, int d, bool v_shape)
{
	int p = S->p, N = S->N, m = S->m;
	struct dp_state st = { .S = S };
	st.wq_cap = (size_t)2 * (size_t)m + 1;
	st.wq_b = xmalloc(st.wq_cap * sizeof(*st.wq_b));
	st.wq_s = xmalloc(st.wq_cap * sizeof(*st.wq_s));
	if (v_shape) {
		st.stage[0] = d;
		st.stage[1] = N - 1 - d;
		dp_steps(&st, p, d, m - 2 * p + d + 1, d == p - 1);
		if (st.wq_head != st.wq_tail && !S->rc)
			sim_fail(S, PP_EINVAL, "dualpipe_v: device %d ends with %zu deferred W ops",
				 d, st.wq_tail - st.wq_head);
	} else {
		int h = p / 2, r = imin(d, p - 1 - d);
		bool second = d >= h;
		st.stage[0] = second ? N - 1 - d : d;
		st.stage[1] = second ? d : N - 1 - d;
		st.fwd[0] = st.bwd[0] = second ? m / 2 : 0;
		st.fwd[1] = st.bwd[1] = second ? 0 : m / 2;
		dp_steps(&st, h, r, m / 2 - p + r + 1, d == h - 1 || d == h);
	}
	free(st.wq_b);
	free(st.wq_s);
}

void sim_order_device(struct sim_sched *S, int d)
{
	switch (S->cfg->strategy) {
	case SIM_1F1B: order_1f1b(S, d); break;
	case SIM_ZB1P: order_zb1p(S, d); break;
	case SIM_1F1B_OVERLAP: order_1f1b_overlap(S, d); break;
	case SIM_INTERLEAVE: order_interleave(S, d, false); break;
	case SIM_1F1B_INTERLEAVE_OVERLAP: order_interleave(S, d, true); break;
	case SIM_DUALPIPE: order_dualpipe(S, d, false); break;
	case SIM_DUALPIPE_V: order_dualpipe(S, d, true); break;
	default: sim_fail(S, PP_EINVAL, "unknown strategy"); break;
	}
}
