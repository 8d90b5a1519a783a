/* gen_sched.c — Megatron's 1F1B and interleaved 1F1B program orders. */
#include "gen_sched.h"

#include <stdlib.h>

#include "util/pp.h"

struct acts {
	struct gen_act *v;
	int n, cap;
};

static void push(struct acts *a, int kind, int c, int mb, int c2, int mb2)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 64;
		a->v = xrealloc(a->v, (size_t)a->cap * sizeof(*a->v));
	}
	a->v[a->n++] = (struct gen_act){ kind, c, mb, c2, mb2 };
}

static void build_1f1b(struct acts *a, int P, int M, int s)
{
	bool first = s == 0, last = s == P - 1;
	int warmup = P - s - 1 < M ? P - s - 1 : M;
	int remaining = M - warmup;

	for (int i = 0; i < warmup; i++) {
		if (!first)
			push(a, GA_RECV_F, 0, i, 0, 0);
		push(a, GA_FWD, 0, i, 0, 0);
		if (!last)
			push(a, GA_SEND_F, 0, i, 0, 0);
	}
	if (remaining > 0 && !first)
		push(a, GA_RECV_F, 0, warmup, 0, 0);
	for (int i = 0; i < remaining; i++) {
		int f = warmup + i;
		push(a, GA_FWD, 0, f, 0, 0);
		if (!last)
			push(a, GA_SEND_F_RECV_B, 0, f, 0, i);
		push(a, GA_BWD, 0, i, 0, 0);
		if (i == remaining - 1) {
			if (!first)
				push(a, GA_SEND_B, 0, i, 0, 0);
		} else if (!first) {
			push(a, GA_SEND_B_RECV_F, 0, i, 0, f + 1);
		}
	}
	for (int i = 0; i < warmup; i++) {
		int b = remaining + i;
		if (!last)
			push(a, GA_RECV_B, 0, b, 0, 0);
		push(a, GA_BWD, 0, b, 0, 0);
		if (!first)
			push(a, GA_SEND_B, 0, b, 0, 0);
	}
}

/* Megatron's get_model_chunk_id / microbatch id for virtual microbatch k. */
static void vmb(int P, int V, int k, bool forward, int *chunk, int *mb)
{
	int in_group = k % (P * V);
	int c = in_group / P;
	*chunk = forward ? c : V - 1 - c;
	*mb = k / (P * V) * P + in_group % P;
}

static void fwd_interleaved(struct acts *a, int P, int V, int s, int k)
{
	int c, mb;
	vmb(P, V, k, true, &c, &mb);
	int vs = gen_sched_vstage(P, s, c);
	if (vs > 0)
		push(a, GA_RECV_F, c, mb, 0, 0);
	push(a, GA_FWD, c, mb, 0, 0);
	if (vs < P * V - 1)
		push(a, GA_SEND_F, c, mb, 0, 0);
}

static void bwd_interleaved(struct acts *a, int P, int V, int s, int k)
{
	int c, mb;
	vmb(P, V, k, false, &c, &mb);
	int vs = gen_sched_vstage(P, s, c);
	if (vs < P * V - 1)
		push(a, GA_RECV_B, c, mb, 0, 0);
	push(a, GA_BWD, c, mb, 0, 0);
	if (vs > 0)
		push(a, GA_SEND_B, c, mb, 0, 0);
}

static void build_interleaved(struct acts *a, int P, int V, int M, int s)
{
	int total = M * V;
	int warmup = (P - s - 1) * 2 + (V - 1) * P;
	if (warmup > total)
		warmup = total;
	int remaining = total - warmup;
	for (int k = 0; k < warmup; k++)
		fwd_interleaved(a, P, V, s, k);
	for (int k = 0; k < remaining; k++) {
		fwd_interleaved(a, P, V, s, warmup + k);
		bwd_interleaved(a, P, V, s, k);
	}
	for (int k = remaining; k < total; k++)
		bwd_interleaved(a, P, V, s, k);
}

int gen_sched_build(int pp, int vpp, int microbatches, int s, struct gen_act **out)
{
	struct acts a = { 0 };
	*out = NULL;
	if (pp < 1 || vpp < 1 || microbatches < 1 || s < 0 || s >= pp)
		return PP_EINVAL;
	if (vpp > 1 && microbatches % pp)
		return PP_EINVAL;
	if (vpp == 1)
		build_1f1b(&a, pp, microbatches, s);
	else
		build_interleaved(&a, pp, vpp, microbatches, s);
	*out = a.v;
	return a.n;
}
