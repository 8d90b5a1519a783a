/* why.c — the engine's rows and its run (see why.h): the rank, trace and
 * iteration indices every part uses, then matching, clocks and measures in
 * that order (why_int.h).
 */
#include "why.h"

#include <stdlib.h>
#include <string.h>

#include "model/optype.h"
#include "util/cmp.h"
#include "util/pp.h"
#include "why_int.h"

static const char *const status_names[WHY_NSTATUS] = {
	[WHY_OK] = "ok",
	[WHY_PEER_MISSING] = "peer missing",
	[WHY_NO_PEER_ROW] = "no peer transfer",
	[WHY_AMBIGUOUS] = "ambiguous",
	[WHY_UNLABELLED] = "unlabelled",
	[WHY_NO_PLACE] = "no place",
	[WHY_RANK_MISSING] = "rank missing",
	[WHY_COUNT_DIFFERS] = "counts differ",
};

const char *why_status_name(enum why_status s)
{
	return (unsigned)s < WHY_NSTATUS ? status_names[s] : "?";
}

const char *why_dir_name(enum why_dir d)
{
	return d == WHY_BACKWARD ? "backward" : "forward";
}

const char *why_role_name(enum why_role r)
{
	return r == WHY_RECV ? "recv" : "send";
}

const char *why_side_name(enum why_side s)
{
	return s == WHY_SIDE_PREVIOUS ? "previous" : s == WHY_SIDE_NEXT ? "next" : NULL;
}

#define PUSH(arr, n, cap, x)                                            \
	do {                                                            \
		why_grow((void **)&(arr), &(cap), (n), sizeof(*(arr))); \
		(arr)[(n)++] = (x);                                     \
	} while (0)

struct why *why_new(const struct why_opts *o)
{
	struct why *w = xcalloc(1, sizeof(*w));
	w->o = *o;
	if (w->o.vpp < 1)
		w->o.vpp = 1;
	return w;
}

void why_free(struct why *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->ngrp; i++) {
		free(w->grp[i].desc);
		free(w->grp[i].text);
		free(w->grp[i].ranks);
	}
	PP_FREE_ALL(w->grp, w->rank, w->trace, w->op, w->kern, w);
}

void why_add_rank(struct why *w, const struct why_rank *r)
{
	PUSH(w->rank, w->nrank, w->caprank, *r);
}

void why_add_trace(struct why *w, const struct why_trace *t)
{
	PUSH(w->trace, w->ntrace, w->captrace, *t);
}

void why_add_op(struct why *w, const struct why_op *op)
{
	if (op->optype > OP_BWD_RECV)
		return; /* computes and p2p only */
	PUSH(w->op, w->nop, w->capop, *op);
}

int32_t why_add_group(struct why *w, const struct why_group *g)
{
	struct why_grp x = {
		.desc = xstrdup(g->desc ? g->desc : ""),
		.text = xstrdup(g->ranks_text ? g->ranks_text : ""),
		.ranks = xmalloc(((size_t)(g->nranks > 0 ? g->nranks : 0) + 1) * sizeof(int32_t)),
		.kind = g->kind,
	};
	for (int32_t i = 0; i < g->nranks; i++)
		x.ranks[i] = g->ranks[i];
	qsort(x.ranks, (size_t)(g->nranks > 0 ? g->nranks : 0), sizeof(int32_t), cmp_int);
	for (int32_t i = 0; i < g->nranks; i++) /* distinct */
		if (!x.n || x.ranks[x.n - 1] != x.ranks[i])
			x.ranks[x.n++] = x.ranks[i];
	PUSH(w->grp, w->ngrp, w->capgrp, x);
	return (int32_t)(w->ngrp - 1);
}

void why_add_kernel(struct why *w, const struct why_kernel *k)
{
	if (k->group < 0 || (size_t)k->group >= w->ngrp)
		return;
	PUSH(w->kern, w->nkern, w->capkern, *k);
}

/* ---- indices -------------------------------------------------------- */

/* ---- the run -------------------------------------------------------- */

int why_run(struct why *w, struct why_result *r, struct strbuf *err)
{
	memset(r, 0, sizeof(*r));
	strbuf_init(&r->notes, 0);
	r->clock_error_ns = -1;
	if (w->o.pp < 1) {
		strbuf_addf(err, "the pipeline has %d stages: at least 1 is needed", w->o.pp);
		return PP_EINVAL;
	}
	struct wrun R = { .w = w, .r = r, .P = w->o.pp, .V = w->o.vpp };
	why_index_rows(&R);
	R.off = xcalloc(R.nrk + 1, sizeof(*R.off));
	why_p2p_match(&R);
	why_coll_match(&R);
	why_clock_run(&R);
	why_p2p_measure(&R);
	why_coll_measure(&R);
	if (R.noop_calls)
		strbuf_addf(&r->notes,
			    "p2p: %zu kernel%s of pipeline calls whose rows the op table's rules "
			    "take as moving nothing: left out\n",
			    R.noop_calls, R.noop_calls == 1 ? "" : "s");
	if (R.stray_kernels)
		strbuf_addf(&r->notes,
			    "collectives: %zu kernel%s of ranks their group does not list: left "
			    "out\n",
			    R.stray_kernels, R.stray_kernels == 1 ? "" : "s");
	imap_release(&R.rank_idx);
	imap_release(&R.place);
	imap_release(&R.trace_of);
	imap_release(&R.has_ops);
	PP_FREE_ALL(R.rk, R.rank_lut, R.iters, R.off, R.call, R.ep, R.inst, R.mem);
	return 0;
}

void why_result_release(struct why_result *r)
{
	free(r->p2p);
	free(r->kernels);
	free(r->colls);
	for (size_t i = 0; i < r->ncoll_ranks; i++)
		free(r->coll_ranks[i].desc);
	PP_FREE_ALL(r->coll_ranks, r->bubbles, r->hops, r->clock_rank, r->clock_offset_ns);
	strbuf_release(&r->notes);
	memset(r, 0, sizeof(*r));
}

int64_t why_clock_offset(const struct why_result *r, int32_t rank)
{
	int32_t i = why_find(r->clock_rank, r->nclock, rank);
	return i >= 0 ? r->clock_offset_ns[i] : 0;
}
