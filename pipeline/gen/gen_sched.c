/* gen_sched.c — Megatron's 1F1B and interleaved 1F1B program orders, with
 * the p2p_communication calls of schedules.py (see gen_sched.h). */
#include "gen_sched.h"

#include <stdlib.h>
#include <string.h>

#include "util/pp.h"

struct acts {
	struct gen_act *v;
	int n, cap;
	int P, V, M, s;
	bool legacy; /* Megatron-LM's pre-2024 warm-up (gen_sched_warmup()) */
	int *nrecv;  /* [dir * V + chunk]: receives posted so far (interleaved) */
};

unsigned gen_sched_fn_dirs(int fn)
{
	static const unsigned dirs[GF_NFN] = {
		[GF_RECV_F] = 1u << GX_RECV_F,
		[GF_SEND_F] = 1u << GX_SEND_F,
		[GF_RECV_B] = 1u << GX_RECV_B,
		[GF_SEND_B] = 1u << GX_SEND_B,
		[GF_SEND_F_RECV_B] = 1u << GX_SEND_F | 1u << GX_RECV_B,
		[GF_SEND_B_RECV_F] = 1u << GX_SEND_B | 1u << GX_RECV_F,
		[GF_SEND_F_RECV_F] = 1u << GX_SEND_F | 1u << GX_RECV_F,
		[GF_SEND_B_RECV_B] = 1u << GX_SEND_B | 1u << GX_RECV_B,
		[GF_SEND_F_B_RECV_F_B] = 0xfu,
	};
	return (unsigned)fn < GF_NFN ? dirs[fn] : 0;
}

static struct gen_act *push(struct acts *a, int kind)
{
	PP_GROW(a->v, a->n, a->cap, 64);
	struct gen_act *x = &a->v[a->n++];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	for (int d = 0; d < GX_N; d++)
		x->x[d].chunk = x->x[d].mb = -1;
	return x;
}

static void step(struct acts *a, int kind, int chunk, int mb)
{
	struct gen_act *x = push(a, kind);
	x->chunk = chunk;
	x->mb = mb;
}

/* A call; the transfers are set by the caller with set(). */
static struct gen_act *call(struct acts *a, int fn, bool communicate)
{
	struct gen_act *x = push(a, GA_CALL);
	x->fn = fn;
	x->communicate = communicate;
	return x;
}

static void set(struct gen_act *x, int dir, int chunk, int mb)
{
	x->x[dir].chunk = chunk;
	x->x[dir].mb = mb;
}

/* A call of 1F1B that, when it communicates, moves micro-batch mb of chunk
 * 0 in direction dir. */
static struct gen_act *call1(struct acts *a, int fn, bool communicate, int dir, int mb)
{
	struct gen_act *x = call(a, fn, communicate);
	if (communicate)
		set(x, dir, 0, mb);
	return x;
}

int gen_sched_warmup(int pp, int vpp, int microbatches, int s, bool legacy)
{
	int total = microbatches * vpp, warmup;
	if (pp < 1 || vpp < 1 || microbatches < 1 || s < 0 || s >= pp)
		return PP_EINVAL;
	if (vpp == 1) /* get_pp_rank_microbatches without interleaving */
		warmup = pp - s - 1;
	else if (legacy && microbatches == pp) /* all_warmup_microbatches */
		warmup = total;
	else
		warmup = (pp - s - 1) * 2 + (vpp - 1) * pp;
	return warmup < total ? warmup : total;
}

/* forward_backward_pipelining_without_interleaving: every call on every
 * stage, early returns on the first (no previous) and last (no next) stage. */
static void build_1f1b(struct acts *a)
{
	int P = a->P, M = a->M, s = a->s;
	bool first = s == 0, last = s == P - 1;
	int warmup = gen_sched_warmup(P, 1, M, s, true);
	int remaining = M - warmup;
	struct gen_act *x;

	if (P == 1) { /* forward_backward_no_pipelining */
		for (int i = 0; i < M; i++) {
			step(a, GA_FWD, 0, i);
			step(a, GA_BWD, 0, i);
		}
		return;
	}
	for (int i = 0; i < warmup; i++) {
		call1(a, GF_RECV_F, !first, GX_RECV_F, i);
		step(a, GA_FWD, 0, i);
		call1(a, GF_SEND_F, !last, GX_SEND_F, i);
	}
	if (remaining > 0)
		call1(a, GF_RECV_F, !first, GX_RECV_F, warmup);
	for (int i = 0; i < remaining; i++) {
		int f = warmup + i;
		step(a, GA_FWD, 0, f);
		x = call(a, GF_SEND_F_RECV_B, !last);
		if (!last) {
			set(x, GX_SEND_F, 0, f);
			set(x, GX_RECV_B, 0, i);
		}
		step(a, GA_BWD, 0, i);
		bool end = i == remaining - 1;
		x = call1(a, end ? GF_SEND_B : GF_SEND_B_RECV_F, !first, GX_SEND_B, i);
		if (!first && !end)
			set(x, GX_RECV_F, 0, f + 1);
	}
	for (int i = 0; i < warmup; i++) {
		int b = remaining + i;
		call1(a, GF_RECV_B, !last, GX_RECV_B, b);
		step(a, GA_BWD, 0, b);
		call1(a, GF_SEND_B, !first, GX_SEND_B, b);
	}
}

/* Python's k % n for any k. */
static int pymod(int k, int n)
{
	int r = k % n;
	return r < 0 ? r + n : r;
}

/* Megatron's get_model_chunk_id and micro-batch of virtual micro-batch k. */
static int chunk_of(const struct acts *a, int k, bool forward)
{
	int c = pymod(k, a->P * a->V) / a->P;
	return forward ? c : a->V - 1 - c;
}

static int mb_of(const struct acts *a, int k)
{
	return k / (a->P * a->V) * a->P + k % a->P;
}

static int vstage(const struct acts *a, int chunk)
{
	return gen_sched_vstage(a->P, a->s, chunk);
}

/* A receive for the next step of `chunk` in direction dir (0 forward) that
 * has not received yet: Megatron queues received tensors per chunk. */
static void recv(struct acts *a, struct gen_act *x, int dir, int chunk)
{
	int *n = &a->nrecv[dir * a->V + chunk];
	set(x, dir ? GX_RECV_B : GX_RECV_F, chunk, (*n)++);
}

/* The output of forward k goes to the next virtual stage, unless it is the
 * last one. */
static void send_fwd(struct acts *a, struct gen_act *x, int k)
{
	int c = chunk_of(a, k, true);
	if (vstage(a, c) < a->P * a->V - 1)
		set(x, GX_SEND_F, c, mb_of(a, k));
}

/* The input gradient of backward k goes to the previous virtual stage,
 * unless it is the first one. */
static void send_bwd(struct acts *a, struct gen_act *x, int k)
{
	int c = chunk_of(a, k, false);
	if (vstage(a, c) > 0)
		set(x, GX_SEND_B, c, mb_of(a, k));
}

/* forward_backward_pipelining_with_interleaving, p2p not overlapped. */
static void build_interleaved(struct acts *a)
{
	int P = a->P, V = a->V, s = a->s, total = a->M * V;
	bool first = s == 0, last = s == P - 1;
	int warmup = gen_sched_warmup(P, V, a->M, s, a->legacy);
	bool all_warmup = warmup == total; /* are_all_microbatches_in_warmup */
	int remaining = total - warmup;
	struct gen_act *x;

	/* Virtual rank 0: the first stage has no previous stage. */
	x = call(a, GF_RECV_F, !first);
	if (!first)
		recv(a, x, 0, 0);
	for (int k = 0; k < warmup; k++) {
		step(a, GA_FWD, chunk_of(a, k, true), mb_of(a, k));
		int next_c = chunk_of(a, k + 1, true);
		bool recv_prev = !(first && next_c == 0) && k != total - 1;
		bool four = k == warmup - 1 && !all_warmup;
		x = call(a, four ? GF_SEND_F_B_RECV_F_B : GF_SEND_F_RECV_F, true);
		send_fwd(a, x, k);
		if (recv_prev)
			recv(a, x, 0, next_c);
		if (four && !last)
			recv(a, x, 1, V - 1);
	}
	for (int k = 0; k < remaining; k++) {
		int fk = k + warmup, bk = k;
		step(a, GA_FWD, chunk_of(a, fk, true), mb_of(a, fk));
		step(a, GA_BWD, chunk_of(a, bk, false), mb_of(a, bk));
		x = call(a, GF_SEND_F_B_RECV_F_B, true);
		send_fwd(a, x, fk);
		send_bwd(a, x, bk);
		int nc, nb;
		bool recv_prev = true, recv_next = true;
		if (first) { /* ahead of the last stage by P - 1 */
			nc = chunk_of(a, fk - (P - 1), true);
			recv_prev = nc != V - 1;
			nc++;
		} else {
			nc = chunk_of(a, fk + 1, true);
		}
		if (last) {
			nb = chunk_of(a, bk - (P - 1), false);
			recv_next = nb != 0;
			nb--;
		} else {
			nb = chunk_of(a, bk + 1, false);
		}
		if (k == remaining - 1)
			recv_prev = false;
		if (recv_prev)
			recv(a, x, 0, nc);
		if (recv_next)
			recv(a, x, 1, nb);
	}
	/* Virtual rank V - 1: the last stage has no next stage. */
	if (all_warmup) {
		x = call(a, GF_RECV_B, !last);
		if (!last)
			recv(a, x, 1, V - 1);
	}
	for (int k = remaining; k < total; k++) {
		step(a, GA_BWD, chunk_of(a, k, false), mb_of(a, k));
		int nb = chunk_of(a, k + 1, false);
		bool recv_next = !(last && nb == V - 1) && k != total - 1;
		x = call(a, GF_SEND_B_RECV_B, true);
		send_bwd(a, x, k);
		if (recv_next)
			recv(a, x, 1, nb);
	}
}

int gen_sched_build(int pp, int vpp, int microbatches, int s, bool legacy, struct gen_act **out)
{
	struct acts a = { .P = pp, .V = vpp, .M = microbatches, .s = s, .legacy = legacy };
	*out = NULL;
	if (pp < 1 || vpp < 1 || microbatches < 1 || s < 0 || s >= pp)
		return PP_EINVAL;
	if (vpp > 1 && microbatches % pp)
		return PP_EINVAL;
	if (vpp == 1) {
		build_1f1b(&a);
	} else {
		a.nrecv = xcalloc((size_t)2 * (size_t)vpp, sizeof(*a.nrecv));
		build_interleaved(&a);
		free(a.nrecv);
	}
	*out = a.v;
	return a.n;
}
