/* gen_ops.c — one rank's what-if op rows from the model (see gen_ops.h).
 *
 * The rules are the contract of docs/contracts.md §4, applied to what the
 * model knows by construction: each kernel's step (phase, seq) and
 * category, the p2p function of each pp step, the chunk and micro-batch of
 * each forward/backward step, and the role (enum gen_wop) of the kernels that
 * are ops of their own. tests/tools/truthcheck.py derives the same rows from
 * the written trace text.
 */
#include "gen_ops.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gen_sched.h"
#include "util/cmp.h"
#include "util/pp.h"

const char *const gen_optype_names[GO_N] = {
	[GO_BWD] = "backward-compute",    [GO_BWD_RECV] = "backward-recv",
	[GO_BWD_SEND] = "backward-send",  [GO_EMB] = "embedding-grads-all-reduce",
	[GO_FWD] = "forward-compute",     [GO_FWD_RECV] = "forward-recv",
	[GO_FWD_SEND] = "forward-send",   [GO_GC] = "gc",
	[GO_RS] = "grads-reduce-scatter", [GO_LN] = "layernorm-grads-all-reduce",
	[GO_OPT] = "optimizer",           [GO_CLIP] = "optimizer-clip-main-grad",
	[GO_AG] = "params-all-gather",    [GO_SEP] = "separate-grads-all-reduce",
};

/* The op type of each direction a p2p function names (gen_sched.h). */
static const uint8_t dir_type[GX_N] = {
	[GX_SEND_F] = GO_FWD_SEND,
	[GX_SEND_B] = GO_BWD_SEND,
	[GX_RECV_F] = GO_FWD_RECV,
	[GX_RECV_B] = GO_BWD_RECV,
};

struct span {
	int64_t lo, hi;
};

static void widen(struct span *s, int64_t lo, int64_t hi)
{
	if (lo < s->lo)
		s->lo = lo;
	if (hi > s->hi)
		s->hi = hi;
}

static bool empty(const struct span *s)
{
	return s->lo > s->hi;
}

struct rows {
	struct gen_op **v;
	size_t *cap, n;
};

static struct gen_op *add(struct rows *R, int type, int64_t start, int64_t end)
{
	PP_GROW(*R->v, R->n, *R->cap, 256);
	struct gen_op *o = &(*R->v)[R->n++];
	*o = (struct gen_op){
		.start = start, .end = end, .mb = -1, .mc = -1, .gmc = -1, .type = (uint8_t)type
	};
	return o;
}

/* Rows by type, then start; the creation order breaks ties (stable). */
static int cmp_op(const void *a, const void *b)
{
	const struct gen_op *x = a, *y = b;
	const int64_t kx[] = { x->type, x->start, x->seq }, ky[] = { y->type, y->start, y->seq };
	return cmp_i64s(kx, ky, 3);
}

/* Kernel spans per step of phases fwd, bwd (their compute and
 * communication kernels) and pp. */
static struct span *step_spans(const struct gen_rank *r, int phase, int *n)
{
	*n = 0;
	for (int i = 0; i < r->ns; i++)
		if (r->s[i].step_mask & (1u << phase))
			(*n)++;
	struct span *sp = xmalloc(((size_t)*n + 1) * sizeof(*sp));
	for (int i = 0; i < *n; i++)
		sp[i] = (struct span){ INT64_MAX, INT64_MIN };
	static const uint8_t cats[GP_N][2] = {
		[GP_FWD] = { GC_FWD_COMP, GC_FWD_COMM },
		[GP_BWD] = { GC_BWD_COMP, GC_BWD_COMM },
		[GP_PP] = { GC_PP, GC_PP },
	};
	for (int i = 0; i < r->nk; i++) {
		const struct gen_kernel *k = &r->k[i];
		if (k->phase == phase && (k->cat == cats[phase][0] || k->cat == cats[phase][1]))
			widen(&sp[k->seq], k->ts, k->ts + k->dur);
	}
	return sp;
}

/* Forward and backward compute, one row per step; returns the latest end. */
static int64_t compute_rows(struct rows *R, const struct gen_rank *r, const struct gen_cfg *cfg)
{
	int64_t last = INT64_MIN;
	for (int ph = GP_FWD; ph <= GP_BWD; ph++) {
		int n;
		struct span *sp = step_spans(r, ph, &n);
		for (int i = 0; i < r->ns; i++) {
			const struct gen_slice *s = &r->s[i];
			if (!(s->step_mask & (1u << ph)) || empty(&sp[s->seq[ph]]))
				continue;
			const struct span *x = &sp[s->seq[ph]];
			struct gen_op *o = add(R, ph == GP_FWD ? GO_FWD : GO_BWD, x->lo, x->hi);
			o->mb = s->mb;
			o->mc = s->chunk;
			o->gmc = (int16_t)(s->chunk * cfg->lay.size[GEN_PP] + r->stage);
			if (x->hi > last)
				last = x->hi;
		}
		free(sp);
	}
	return last;
}

/* One row per direction each p2p call names, with the call's interval;
 * calls that launched no kernel are no ops. */
static void p2p_rows(struct rows *R, const struct gen_rank *r)
{
	int n;
	struct span *sp = step_spans(r, GP_PP, &n);
	for (int i = 0; i < r->ns; i++) {
		const struct gen_slice *s = &r->s[i];
		if (!(s->step_mask & (1u << GP_PP)) || s->call < 0 || empty(&sp[s->seq[GP_PP]]))
			continue;
		const struct span *x = &sp[s->seq[GP_PP]];
		unsigned dirs = gen_sched_fn_dirs(s->call);
		for (int d = 0; d < GX_N; d++)
			if (dirs & (1u << d))
				add(R, dir_type[d], x->lo, x->hi);
	}
	free(sp);
}

size_t gen_ops_rank(const struct gen_rank *r, const struct gen_cfg *cfg, struct gen_op **ops,
		    size_t *cap)
{
	struct rows R = { .v = ops, .cap = cap };
	int64_t gc = compute_rows(&R, r, cfg);
	p2p_rows(&R, r);

	/* Kernels that are ops of their own, or parts of one. */
	struct span ln = { INT64_MAX, INT64_MIN }, emb = ln, clip = ln, opt = ln, rs_last = ln;
	bool overlapped = false, any_ag = false, any_rs = false;
	for (int i = 0; i < r->nk; i++) {
		const struct gen_kernel *k = &r->k[i];
		int64_t a = k->ts, e = k->ts + k->dur;
		switch (k->wop) {
		case GW_RS:
		case GW_AG: {
			struct gen_op *o = add(&R, k->wop == GW_RS ? GO_RS : GO_AG, a, e);
			o->mc = k->wchunk;
			if (k->wop == GW_RS) {
				any_rs = true;
				overlapped |= k->thread == GT_BWD; /* launched inside backward */
				widen(&rs_last, e, e);
			} else {
				any_ag = true;
			}
			break;
		}
		case GW_LN: widen(&ln, a, e); break;
		case GW_EMB: widen(&emb, a, e); break;
		case GW_CLIP: widen(&clip, a, e); break;
		case GW_OPT:
		case GW_AG_OPT: widen(&opt, a, e); break;
		}
	}
	if (!empty(&clip))
		add(&R, GO_CLIP, clip.lo, clip.hi);
	if (!empty(&opt))
		add(&R, GO_OPT, opt.lo, opt.hi);

	/* Zero-length placeholders where the model needs an op the trace does
	 * not have. */
	int P = cfg->lay.size[GEN_PP];
	int64_t first = INT64_MAX;
	for (size_t i = 0; i < R.n; i++)
		if ((*ops)[i].start < first)
			first = (*ops)[i].start;
	if (gc != INT64_MIN)
		add(&R, GO_GC, gc, gc);
	if (empty(&ln)) {
		int64_t t = overlapped && rs_last.hi > gc ? rs_last.hi : gc;
		ln = (struct span){ t, t };
	}
	add(&R, GO_LN, ln.lo, ln.hi);
	int64_t fin_end = ln.hi; /* the end of finalize_model_grads' rows */
	if (r->stage == 0 || r->stage == P - 1) {
		if (empty(&emb))
			emb = (struct span){ ln.hi, ln.hi };
		add(&R, GO_EMB, emb.lo, emb.hi);
		if (emb.hi > fin_end)
			fin_end = emb.hi;
	}
	if (overlapped)
		add(&R, GO_SEP, fin_end, fin_end);
	if (any_rs && !any_ag)
		add(&R, GO_AG, first, first)->mc = 0;

	/* seq_id: the order of start within each type. */
	for (size_t i = 0; i < R.n; i++)
		(*ops)[i].seq = (int32_t)i;
	qsort(*ops, R.n, sizeof(**ops), cmp_op);
	for (size_t i = 0; i < R.n; i++)
		(*ops)[i].seq =
			i && (*ops)[i - 1].type == (*ops)[i].type ? (*ops)[i - 1].seq + 1 : 0;
	return R.n;
}
