/* ops.c — the what-if op table of one Megatron-mode rank (docs/contracts.md
 * §4.1, docs/whatif.md §1): forward and backward computes from their steps'
 * GPU spans, one row per direction each pipeline call names, the
 * data-parallel collectives by kind and process group, finalize_model_grads'
 * all-reduces, the clip/optimizer split and the zero-length placeholders.
 *
 * Two calls from classify_finish(): ops_prepare() while the launches and the
 * kept slices still exist (the launch of every comm and optimizer kernel;
 * the clip_grad, finalize_model_grads and *_grad_sync frames), ops_derive()
 * once the steps have their GPU spans and the process groups their kinds.
 * Nothing here runs per event: the feed loop only records a comm kernel's
 * `Collective name` (rr_kernel.coll), and names get their frame bits when
 * they are interned.
 *
 * The worker knows neither PP, VPP nor its stage. Ops whose chunk comes
 * from a forward or backward step name that step (rr_op.step_seq) and
 * ppagg labels them; a rank without pipeline calls that launched anything
 * is a one-stage pipeline, whose only stage is the first and the last (it
 * gets the embedding placeholder of rule 9).
 */
#include <stdlib.h>
#include <string.h>

#include "classify_int.h"
#include "model/optype.h"
#include "util/arena.h"
#include "util/cmp.h"

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && !memcmp(s + n - k, suffix, k);
}

uint32_t ops_frame_bits(const char *name)
{
	size_t n = strlen(name);
	uint32_t bits = 0;
	if (strstr(name, "clip_grad") || strstr(name, "grad_norm"))
		bits |= NB_CLIP;
	if (ends_with(name, n, "finalize_model_grads"))
		bits |= NB_FINALIZE;
	if (ends_with(name, n, "finish_grad_sync"))
		bits |= NB_FINISH_GRAD | NB_GRAD_SYNC;
	if (ends_with(name, n, "start_grad_sync"))
		bits |= NB_GRAD_SYNC;
	return bits;
}

static int cmp_root_ts(const void *pa, const void *pb)
{
	return croot_cmp(pa, pb);
}

/* Whether kernel k may be (part of) an op of rules 4-8: a collective that
 * is not a pipeline send or receive nor a tensor-, context- or expert-
 * parallel one of a forward or backward step; an optimizer kernel. */
static bool candidate(const struct rank_result *res, const struct rr_kernel *k)
{
	if (k->orphan)
		return false;
	if (k->type != RR_COMM)
		return k->category == RR_OPT_COMP;
	if (k->coll == RR_COLL_OTHER || k->category == RR_PP_COMM)
		return false;
	if (k->pg < 0 || (k->category != RR_FWD_COMM && k->category != RR_BWD_COMM))
		return true;
	enum rr_pg_kind kind = res->groups[k->pg].kind;
	return kind != RR_PG_TP && kind != RR_PG_CP && kind != RR_PG_EP;
}

void ops_prepare(struct classify *c, const struct rank_result *res)
{
	struct ops_prep *p = &c->ops;
	if (res->mode != RR_MEGATRON)
		return;
	steps_roots_of(c, NB_CLIP, &p->clip);
	steps_roots_of(c, NB_FINALIZE, &p->finalize);
	steps_roots_of(c, NB_GRAD_SYNC, &p->grad_sync);
	steps_roots_of(c, NB_FINISH_GRAD, &p->finish);
	qsort(p->finish.v, p->finish.n, sizeof(*p->finish.v), cmp_root_ts);

	size_t n = 0;
	for (size_t i = 0; i < res->nkernels; i++)
		n += candidate(res, &res->kernels[i]);
	p->cand = arena_alloc(c->arena, (n + 1) * sizeof(*p->cand));
	const struct claunch *launches = c->launches.data;
	for (size_t i = 0; i < res->nkernels; i++) {
		const struct rr_kernel *k = &res->kernels[i];
		if (!candidate(res, k))
			continue;
		const struct claunch *l = &launches[cmap_get(&c->corr, k->correlation)];
		p->cand[p->ncand++] = (struct op_cand){ (uint32_t)i, l->thread, l->ts };
	}
}

/* --- deriving --------------------------------------------------------- */

/* The directions a p2p_communication function names, as op types
 * (docs/contracts.md §4.1 rule 3), the combined calls included. */
static const struct {
	const char *fn;
	int8_t types[4];
} p2p_calls[] = {
	{ "recv_forward", { OP_FWD_RECV, -1 } },
	{ "send_forward", { OP_FWD_SEND, -1 } },
	{ "recv_backward", { OP_BWD_RECV, -1 } },
	{ "send_backward", { OP_BWD_SEND, -1 } },
	{ "send_forward_recv_backward", { OP_FWD_SEND, OP_BWD_RECV, -1 } },
	{ "send_backward_recv_forward", { OP_BWD_SEND, OP_FWD_RECV, -1 } },
	{ "send_forward_recv_forward", { OP_FWD_SEND, OP_FWD_RECV, -1 } },
	{ "send_backward_recv_backward", { OP_BWD_SEND, OP_BWD_RECV, -1 } },
	{ "send_forward_backward_recv_forward_backward",
	  { OP_FWD_SEND, OP_BWD_SEND, OP_FWD_RECV, OP_BWD_RECV } },
};

/* The op types of a pp_comm slice's name: the function after the frame's
 * last "): " (the whole name without one) from the table; another name
 * gives each direction it spells (send_forward, ...). Returns how many. */
static int p2p_types(const char *name, int8_t types[4])
{
	const char *fn = name;
	for (const char *p = name; (p = strstr(p, "): ")); p += 3)
		fn = p + 3;
	for (size_t i = 0; i < sizeof(p2p_calls) / sizeof(p2p_calls[0]); i++) {
		if (strcmp(fn, p2p_calls[i].fn))
			continue;
		int n = 0;
		while (n < 4 && p2p_calls[i].types[n] >= 0) {
			types[n] = p2p_calls[i].types[n];
			n++;
		}
		return n;
	}
	static const struct {
		const char *word;
		int8_t type;
	} words[] = { { "send_forward", OP_FWD_SEND },
		      { "send_backward", OP_BWD_SEND },
		      { "recv_forward", OP_FWD_RECV },
		      { "recv_backward", OP_BWD_RECV } };
	int n = 0;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(fn, words[i].word))
			types[n++] = words[i].type;
	return n;
}

/* The number of ranks in a "[0, 8, 16]" text, the first and the last. */
static int rank_ends(const char *s, long *first, long *last)
{
	int n = 0;
	while (*s) {
		if (*s < '0' || *s > '9') {
			s++;
			continue;
		}
		char *end;
		*last = strtol(s, &end, 10);
		if (!n++)
			*first = *last;
		s = end;
	}
	return n;
}

struct derive {
	struct classify *c;
	struct rank_result *res;
	struct rr_op *v;
	size_t n;
	long pipe_first, pipe_last; /* the pipeline group's ends; -1 not yet
				     * looked for, -2 none (pipe_ends()) */
};

static struct rr_op *add(struct derive *d, int type, int64_t start, int64_t end)
{
	struct rr_op *o = &d->v[d->n];
	*o = (struct rr_op){ .start_ns = start,
			     .end_ns = end,
			     .seq_id = (int32_t)d->n, /* the tie-break until numbered */
			     .step_seq = -1,
			     .mc = -1,
			     .mb_id = -1,
			     .optype = (uint8_t)type };
	d->n++;
	return o;
}

struct span {
	int64_t lo, hi;
};
#define SPAN_EMPTY ((struct span){ INT64_MAX, INT64_MIN })

static void widen(struct span *s, int64_t lo, int64_t hi)
{
	if (lo < s->lo)
		s->lo = lo;
	if (hi > s->hi)
		s->hi = hi;
}

/* Whether a launch at (thread, ts) lies inside one of the roots r. */
static bool inside(const struct croots *r, uint32_t thread, int64_t ts)
{
	return roots_find(r, thread, ts) >= 0;
}

/* The seq of the step of the forward (backward) phase whose root holds a
 * launch on the forward thread (backward thread: time within the step,
 * docs/semantics.md §5 rule 2), or -1. */
static int32_t step_seq_at(const struct derive *d, int set, uint32_t thread, int64_t ts)
{
	const struct classify *c = d->c;
	uint32_t want = (uint32_t)(set == PAT_FORWARD_STEP ? c->fwd : c->bwd);
	if (c->fwd < 0 || thread != want)
		return -1;
	long i = roots_find(&c->roots[set], (uint32_t)c->fwd, ts);
	int32_t step = i < 0 ? -1 : c->roots[set].v[i].step;
	return step < 0 ? -1 : d->res->steps[step].seq;
}

/* The first and last rank of the pipeline group: a PIPELINE group's, else
 * the group of a pipeline send or receive (false when there is none). */
static bool pipe_ends(struct derive *d)
{
	const struct rank_result *res = d->res;
	if (d->pipe_first == -2)
		return false;
	if (d->pipe_first >= 0)
		return true;
	d->pipe_first = -2;
	long a, b;
	for (size_t g = 0; g < res->ngroups; g++)
		if (res->groups[g].kind == RR_PG_PP &&
		    rank_ends(res->groups[g].ranks, &a, &b) >= 2) {
			d->pipe_first = a;
			d->pipe_last = b;
			return true;
		}
	for (size_t i = 0; i < res->nkernels; i++) {
		const struct rr_kernel *k = &res->kernels[i];
		if (k->category == RR_PP_COMM && k->pg >= 0 &&
		    rank_ends(res->groups[k->pg].ranks, &a, &b) >= 2) {
			d->pipe_first = a;
			d->pipe_last = b;
			return true;
		}
	}
	return false;
}

enum role { ROLE_NONE, ROLE_DP, ROLE_TP, ROLE_EMB };

/* The role of a comm kernel's process group: its description's (docs/
 * classification.md "Process groups"; EMBEDDING for the embedding group),
 * else what Megatron launches where: a reduce-scatter or all-gather in a
 * dp_comm frame and an all-reduce in a *_grad_sync frame are the data-
 * parallel group's; in finalize_model_grads, an all-reduce over the
 * pipeline's first and last rank is the embedding group's, another the
 * tensor-parallel group's. */
static enum role role_of(struct derive *d, const struct rr_kernel *k, bool in_finalize,
			 bool in_grad_sync)
{
	const struct rr_group *g = k->pg >= 0 ? &d->res->groups[k->pg] : NULL;
	if (g && *g->desc) {
		if (g->kind == RR_PG_DP)
			return ROLE_DP;
		if (g->kind == RR_PG_TP)
			return ROLE_TP;
		return strcasestr(g->desc, "EMBEDDING") ? ROLE_EMB : ROLE_NONE;
	}
	if ((k->coll == RR_COLL_REDUCE_SCATTER || k->coll == RR_COLL_ALLGATHER) &&
	    k->category == RR_DP_COMM)
		return ROLE_DP;
	if (k->coll != RR_COLL_ALLREDUCE)
		return ROLE_NONE;
	if (in_grad_sync)
		return ROLE_DP;
	if (!in_finalize)
		return ROLE_NONE;
	long a, b;
	if (g && rank_ends(g->ranks, &a, &b) == 2 && pipe_ends(d) &&
	    ((a == d->pipe_first && b == d->pipe_last) ||
	     (b == d->pipe_first && a == d->pipe_last)))
		return ROLE_EMB;
	return ROLE_TP;
}

/* Forward and backward computes (rules 1, 2); returns the latest end. */
static int64_t compute_rows(struct derive *d)
{
	int64_t last = INT64_MIN;
	for (int ph = RR_FWD; ph <= RR_BWD; ph++) {
		for (size_t i = 0; i < d->res->nsteps; i++) {
			const struct rr_step *s = &d->res->steps[i];
			if (s->phase != ph || !s->has_kernels)
				continue;
			add(d, ph == RR_FWD ? OP_FWD_COMPUTE : OP_BWD_COMPUTE, s->start_ns,
			    s->end_ns)
				->step_seq = s->seq;
			if (s->end_ns > last)
				last = s->end_ns;
		}
	}
	return last;
}

/* Pipeline sends and receives (rule 3); returns how many calls gave rows. */
static size_t p2p_rows(struct derive *d)
{
	const struct cname *names = d->c->names.data;
	size_t calls = 0;
	for (size_t i = 0; i < d->res->nsteps; i++) {
		const struct rr_step *s = &d->res->steps[i];
		if (s->phase != RR_PP || !s->has_kernels)
			continue;
		int8_t types[4];
		int n = p2p_types(names[s->name_id].text, types);
		for (int k = 0; k < n; k++)
			add(d, types[k], s->start_ns, s->end_ns);
		calls += n > 0;
	}
	return calls;
}

static int cmp_op(const void *pa, const void *pb)
{
	const struct rr_op *a = pa, *b = pb;
	/* seq_id holds the emission order until numbered */
	const int64_t ka[] = { a->optype, a->start_ns, a->seq_id };
	const int64_t kb[] = { b->optype, b->start_ns, b->seq_id };
	return cmp_i64s(ka, kb, 3);
}

void ops_derive(struct classify *c, struct rank_result *res)
{
	const struct ops_prep *p = &c->ops;
	if (res->mode != RR_MEGATRON)
		return;
	size_t cap = res->nsteps * 4 + p->ncand + 8;
	struct derive d = { c, res, arena_alloc(c->arena, cap * sizeof(struct rr_op)), 0, -1, -1 };
	int64_t gc = compute_rows(&d);
	bool pipelined = p2p_rows(&d) > 0;

	struct span ln = SPAN_EMPTY, emb = SPAN_EMPTY, clip = SPAN_EMPTY, opt = SPAN_EMPTY;
	int64_t rs_last = INT64_MIN;
	bool overlapped = false, any_ag = false, any_rs = false;
	for (size_t i = 0; i < p->ncand; i++) {
		const struct op_cand *x = &p->cand[i];
		const struct rr_kernel *k = &res->kernels[x->kernel];
		int64_t a = k->start_ns, e = k->start_ns + k->dur_ns;
		bool in_opt = inside(&c->roots[PAT_OPTIMIZER], x->thread, x->ts);
		if (k->type == RR_COMM) {
			bool in_fin = inside(&p->finalize, x->thread, x->ts);
			bool in_sync = inside(&p->grad_sync, x->thread, x->ts);
			enum role role = role_of(&d, k, in_fin, in_sync);
			bool grads = role == ROLE_DP && (k->coll == RR_COLL_REDUCE_SCATTER ||
							 (k->coll == RR_COLL_ALLREDUCE && in_sync));
			if (grads) { /* rule 4; plain DDP's all-reduce alike */
				struct rr_op *o = add(&d, OP_GRADS_RS, a, e);
				o->step_seq = step_seq_at(&d, PAT_BACKWARD_STEP, x->thread, x->ts);
				if (o->step_seq >= 0) {
					overlapped = true;
				} else {
					long f = roots_find(&p->finish, UINT32_MAX, x->ts);
					o->mc = (int16_t)(f >= 0 ? f : 0);
				}
				any_rs = true;
				if (e > rs_last)
					rs_last = e;
				continue;
			}
			if (role == ROLE_DP && k->coll == RR_COLL_ALLGATHER) {
				if (in_opt) {
					widen(&opt, a, e); /* rule 8 */
					continue;
				}
				struct rr_op *o = add(&d, OP_PARAMS_AG, a, e);
				o->step_seq = step_seq_at(&d, PAT_FORWARD_STEP, x->thread, x->ts);
				if (o->step_seq < 0)
					o->mc = 0;
				any_ag = true;
				continue;
			}
			if (role == ROLE_TP && in_fin) {
				widen(&ln, a, e); /* rule 5 */
				continue;
			}
			if (role == ROLE_EMB && in_fin) {
				widen(&emb, a, e); /* rule 6 */
				continue;
			}
		}
		if (k->type != RR_MEM && in_opt && inside(&p->clip, x->thread, x->ts))
			widen(&clip, a, e); /* rule 7 */
		else if (k->category == RR_OPT_COMP)
			widen(&opt, a, e); /* rule 8 */
	}
	if (clip.lo <= clip.hi)
		add(&d, OP_CLIP, clip.lo, clip.hi);
	if (opt.lo <= opt.hi)
		add(&d, OP_OPTIMIZER, opt.lo, opt.hi);

	/* Rule 9: zero-length placeholders. */
	int64_t first = INT64_MAX;
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].start_ns < first)
			first = d.v[i].start_ns;
	if (gc != INT64_MIN) {
		add(&d, OP_GC, gc, gc);
		if (ln.lo > ln.hi) {
			int64_t t = overlapped && rs_last > gc ? rs_last : gc;
			ln = (struct span){ t, t };
		}
	}
	if (ln.lo <= ln.hi) {
		add(&d, OP_LAYERNORM, ln.lo, ln.hi);
		int64_t fin_end = ln.hi;
		if (emb.lo > emb.hi && !pipelined)
			emb = (struct span){ ln.hi, ln.hi };
		if (emb.lo <= emb.hi && emb.hi > fin_end)
			fin_end = emb.hi;
		if (overlapped)
			add(&d, OP_SEP_AR, fin_end, fin_end);
	}
	if (emb.lo <= emb.hi)
		add(&d, OP_EMBEDDING, emb.lo, emb.hi);
	if (any_rs && !any_ag && first != INT64_MAX)
		add(&d, OP_PARAMS_AG, first, first)->mc = 0;

	/* Rule 10: seq_id by start within each type. */
	qsort(d.v, d.n, sizeof(*d.v), cmp_op);
	for (size_t i = 0; i < d.n; i++)
		d.v[i].seq_id = i && d.v[i - 1].optype == d.v[i].optype ? d.v[i - 1].seq_id + 1 : 0;
	res->ops = d.v;
	res->nops = d.n;
}
