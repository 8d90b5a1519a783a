/* why_load.c — see why_load.h. */
#include "why_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/optype.h"
#include "model/rank_result.h"
#include "storage/db_agg.h"
#include "storage/db_why.h"
#include "util/htab.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "whatif/whatif.h"

/* What the callbacks share while one iteration streams in. */
struct ctx {
	struct why_load *L;
	const struct topology *t;
	int vpp;
	int64_t iteration;
	struct imap *group_of; /* pgroups.id -> engine group + 1 */
	const bool *worker;    /* per rank: its (dp_rank, stage) cell's lowest */
	bool *seen;            /* per rank: a worker with ops */
	int64_t last_pg;       /* the group of the kernel before, and its index */
	int32_t last_group;
	struct db_why_group *pg; /* every stored group, by id */
	size_t npg;
};

static int take_trace(void *p, const struct db_agg_trace *x)
{
	struct ctx *C = p;
	if (!x->has_rank)
		return 0;
	struct why_trace t = { C->iteration, (int32_t)x->rank, x->has_window ? x->bubble_ns : -1 };
	why_add_trace(C->L->w, &t);
	C->L->ntraces++;
	return 0;
}

static int take_op(void *p, const struct db_agg_op *o)
{
	struct ctx *C = p;
	struct why_op x = { .iteration = C->iteration,
			    .start_ns = o->start_ns,
			    .end_ns = o->end_ns,
			    .rank = (int32_t)o->rank,
			    .seq_id = o->seq_id,
			    .step_seq = o->has_step ? o->step_seq : -1,
			    .mc = o->mc,
			    .mb_id = o->mb_id,
			    .optype = (uint8_t)o->optype };
	why_add_op(C->L->w, &x);
	C->L->nops++;
	const struct topology *t = C->t;
	if (o->rank < 0 || o->rank >= t->nrank || !C->worker[o->rank])
		return 0;
	C->seen[o->rank] = true;
	int stage = t->stage_of[o->rank], P = t->pp;
	struct wi_op w = { .step = C->iteration,
			   .start_ns = o->start_ns,
			   .end_ns = o->end_ns,
			   .rank = (int32_t)o->rank,
			   .seq_id = o->seq_id,
			   .dp_rank = (int16_t)t->model_of[o->rank],
			   .stage = (int16_t)stage,
			   .mc = o->mc,
			   .gmc = o->gmc,
			   .mb_id = o->mb_id,
			   .optype = (uint8_t)o->optype };
	if (o->has_step) {
		int32_t chunk, mb;
		bool bwd = o->optype == OP_BWD_COMPUTE || o->optype == OP_GRADS_RS;
		rr_vpp_label(o->step_seq, bwd, P, C->vpp, &chunk, &mb);
		w.mc = (int16_t)chunk;
		if (o->optype == OP_FWD_COMPUTE || o->optype == OP_BWD_COMPUTE) {
			w.mb_id = (int16_t)mb;
			w.gmc = (int16_t)(chunk * P + stage);
		}
	}
	wi_table_add(&C->L->reps, &w, 0);
	return 0;
}

static int take_group(void *p, const struct db_why_group *g)
{
	struct ctx *C = p;
	C->pg = xrealloc(C->pg, (C->npg + 1) * sizeof(*C->pg));
	C->pg[C->npg++] = (struct db_why_group){ g->id, xstrdup(g->desc), xstrdup(g->ranks) };
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* The kind of a group: the topology's kind whose group has its ranks. */
static int kind_of(const struct topology *t, const int *rk, int n)
{
	static const int kinds[][2] = { { TOPO_TP, RR_PG_TP },
					{ TOPO_PP, RR_PG_PP },
					{ TOPO_DP, RR_PG_DP },
					{ TOPO_EP, RR_PG_EP },
					{ TOPO_CP, RR_PG_CP } };
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		const struct topo_groups *gs = &t->groups[kinds[k][0]];
		for (size_t i = 0; i < gs->n; i++) {
			if (gs->v[i].n != n || n < 2)
				continue;
			int *x = xmalloc((size_t)n * sizeof(*x));
			memcpy(x, gs->v[i].ranks, (size_t)n * sizeof(*x));
			qsort(x, (size_t)n, sizeof(*x), cmp_int);
			bool same = !memcmp(x, rk, (size_t)n * sizeof(*x));
			free(x);
			if (same)
				return kinds[k][1];
		}
	}
	return RR_PG_UNKNOWN;
}

/* The engine's group of stored group id, added at its first kernel. */
static int32_t group(struct ctx *C, int64_t id)
{
	uint32_t *v = imap_ref(C->group_of, id, 0);
	if (*v)
		return (int32_t)*v - 1;
	const struct db_why_group *g = NULL;
	for (size_t i = 0; i < C->npg && !g; i++)
		if (C->pg[i].id == id)
			g = &C->pg[i];
	int *rk = NULL;
	int n = g ? topo_parse_ranks(g->ranks, &rk) : -1;
	if (n < 1) {
		free(rk);
		return -1;
	}
	qsort(rk, (size_t)n, sizeof(*rk), cmp_int);
	int32_t *r32 = xmalloc((size_t)n * sizeof(*r32));
	for (int i = 0; i < n; i++)
		r32[i] = rk[i];
	struct why_load *L = C->L;
	struct why_group wg = { g->desc, g->ranks, r32, n, kind_of(C->t, rk, n) };
	int32_t idx = why_add_group(L->w, &wg);
	L->gdesc = xrealloc(L->gdesc, (L->ngroups + 1) * sizeof(char *));
	L->gtext = xrealloc(L->gtext, (L->ngroups + 1) * sizeof(char *));
	L->gkind = xrealloc(L->gkind, (L->ngroups + 1) * sizeof(int));
	L->gdesc[L->ngroups] = xstrdup(g->desc);
	L->gtext[L->ngroups] = xstrdup(g->ranks);
	L->gkind[L->ngroups] = wg.kind;
	L->ngroups++;
	*imap_ref(C->group_of, id, 0) = (uint32_t)idx + 1;
	free(rk);
	free(r32);
	return idx;
}

static int take_kernel(void *p, const struct db_why_kernel *k)
{
	struct ctx *C = p;
	int32_t g = k->pg_id == C->last_pg ? C->last_group : group(C, k->pg_id);
	C->last_pg = k->pg_id;
	C->last_group = g;
	if (g < 0)
		return 0;
	struct why_kernel x = {
		C->iteration, k->start_ns, k->dur_ns, k->order, (int32_t)k->rank, g
	};
	why_add_kernel(C->L->w, &x);
	C->L->nkernels++;
	return 0;
}

int why_load_db(struct db *db, const int64_t *its, size_t n, const struct topology *t, int vpp,
		struct why_load *L)
{
	memset(L, 0, sizeof(*L));
	wi_table_init(&L->reps);
	struct why_opts o = { .pp = t->pp, .vpp = vpp };
	L->w = why_new(&o);
	for (int r = 0; r < t->nrank; r++) {
		struct why_rank x = { r, t->pp_of[r], t->stage_of[r], t->model_of[r] };
		why_add_rank(L->w, &x);
	}
	/* The cells' workers: each (dp_rank, stage) cell's lowest rank. */
	bool *worker = xcalloc((size_t)t->nrank + 1, sizeof(*worker));
	int *lowest = xmalloc(((size_t)t->nrank + 1) * sizeof(*lowest));
	for (int r = 0; r < t->nrank; r++)
		lowest[r] = -1;
	for (int r = t->nrank - 1; r >= 0; r--)
		if (t->model_of[r] >= 0 && t->stage_of[r] >= 0)
			lowest[t->model_of[r] * t->pp + t->stage_of[r]] = r;
	for (int r = 0; r < t->nrank; r++)
		if (t->model_of[r] >= 0 && t->stage_of[r] >= 0)
			worker[r] = lowest[t->model_of[r] * t->pp + t->stage_of[r]] == r;
	free(lowest);
	bool *seen = xcalloc((size_t)t->nrank + 1, sizeof(*seen));
	struct imap group_of;
	imap_init(&group_of);
	struct ctx C = { .L = L,
			 .t = t,
			 .vpp = vpp,
			 .group_of = &group_of,
			 .worker = worker,
			 .seen = seen,
			 .last_pg = -1 };
	int rc = db_why_groups(db, take_group, &C);
	for (size_t i = 0; i < n && !rc; i++) {
		C.iteration = its[i];
		rc = db_agg_traces(db, its[i], take_trace, &C);
		if (!rc)
			rc = db_agg_ops(db, its[i], take_op, &C);
		int64_t t0 = pp_now_ns();
		if (!rc)
			rc = db_why_kernels(db, its[i], take_kernel, &C);
		L->seconds_kernels += (double)(pp_now_ns() - t0) / 1e9;
	}
	for (size_t i = 0; i < C.npg; i++) {
		free((char *)C.pg[i].desc);
		free((char *)C.pg[i].ranks);
	}
	free(C.pg);
	for (int r = 0; r < t->nrank; r++) {
		L->cells += worker[r];
		L->cells_seen += seen[r];
	}
	free(worker);
	free(seen);
	imap_release(&group_of);
	return rc;
}

int why_load_cpath(struct why_load *L, const struct why_result *r, struct why_cpath *c,
		   struct whatif **keep)
{
	if (L->cells_seen < L->cells) {
		fprintf(stderr, "%zu of the topology's %zu cells have no worker with ops\n",
			L->cells - L->cells_seen, L->cells);
		return PP_EINVAL;
	}
	for (size_t i = 0; i < L->reps.n; i++) {
		struct wi_op *o = &L->reps.ops[i];
		int64_t off = why_clock_offset(r, o->rank);
		o->start_ns -= off;
		o->end_ns -= off;
	}
	struct whatif *e = NULL;
	char err[1024];
	int rc = whatif_new(&L->reps, NULL, &e, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "%s\n", err);
		return rc;
	}
	why_cpath_run(e, c);
	if (keep)
		*keep = e;
	else
		whatif_free(e);
	return 0;
}

int why_load_store(struct db *db, const struct why_load *L, const struct why_result *r,
		   const struct why_cpath *c, const int64_t *its, size_t n)
{
	struct db_why_writer *w = db_why_begin(db);
	int rc = 0;
	if (!w)
		return PP_EDB;
	for (size_t i = 0; i < r->np2p && !rc; i++) {
		const struct why_p2p *p = &r->p2p[i];
		struct db_why_p2p x = { p->iteration,
					p->rank,
					r->kernels[p->kernel].seq,
					why_dir_name(p->dir),
					why_role_name(p->role),
					why_status_name(p->status),
					p->peer_rank,
					p->microbatch,
					p->chunk,
					p->start_ns,
					p->dur_ns,
					p->status == WHY_OK,
					p->wait_ns,
					p->transfer_ns,
					p->peer_start_ns,
					-1 };
		rc = db_why_add_p2p(w, &x);
	}
	for (size_t i = 0; i < r->nkernels && !rc; i++) {
		const struct why_p2p_kernel *k = &r->kernels[i];
		struct db_why_p2p_kernel x = { k->iteration,
					       k->rank,
					       k->stage,
					       k->seq,
					       k->start_ns,
					       k->dur_ns,
					       k->status == WHY_OK,
					       k->wait_ns,
					       k->transfer_ns,
					       k->waited_for,
					       why_side_name(k->side),
					       k->transfers,
					       why_status_name(k->status) };
		rc = db_why_add_p2p_kernel(w, &x);
	}
	for (size_t i = 0; i < r->nbubbles && !rc; i++) {
		const struct why_bubble *b = &r->bubbles[i];
		struct db_why_bubble x = { b->iteration,   b->rank,         b->stage,
					   b->bubble_ns,   b->wait_prev_ns, b->wait_next_ns,
					   b->transfer_ns, b->no_work_ns,   b->incomplete };
		rc = db_why_add_bubble(w, &x);
	}
	for (size_t i = 0; i < r->nhops && !rc; i++) {
		const struct why_hop *h = &r->hops[i];
		struct db_why_hop x = { h->iteration, h->stage,   h->peer_stage,
					h->kernels,   h->wait_ns, h->transfer_ns };
		rc = db_why_add_hop(w, &x);
	}
	for (size_t g = 0; g < L->ngroups && !rc; g++) {
		int kind = L->gkind[g];
		struct db_why_group_row x = { (int64_t)g, L->gdesc[g], L->gtext[g],
					      kind == RR_PG_UNKNOWN ? L->gdesc[g]
								    : rr_pg_kind_name(kind) };
		rc = db_why_add_group(w, &x);
	}
	for (size_t i = 0; i < r->ncolls && !rc; i++) {
		const struct why_coll *k = &r->colls[i];
		struct db_why_collective x = {
			k->iteration,    k->group,
			k->seq,          k->size,
			k->present,      k->status == WHY_OK,
			k->first_ns,     k->last_ns,
			k->skew_ns,      k->first_rank,
			k->last_rank,    k->transfer_ns,
			k->missing_rank, why_status_name(k->status),
		};
		rc = db_why_add_collective(w, &x);
	}
	for (size_t i = 0; i < r->ncoll_ranks && !rc; i++) {
		const struct why_coll_rank *k = &r->coll_ranks[i];
		struct db_why_collective_rank x = {
			k->rank,         k->desc ? k->desc : rr_pg_kind_name(k->kind),
			k->instances,    k->times_last,
			k->share_last,   k->chance,
			k->mean_wait_ns, k->last_by_ns,
			k->late,
		};
		rc = db_why_add_collective_rank(w, &x);
	}
	for (size_t i = 0; c && i < c->nseg && !rc; i++) {
		const struct why_seg *s = &c->seg[i];
		struct db_why_segment x = { s->iteration,   s->seq,
					    s->rank,        s->dp_rank,
					    s->stage,       s->kind == WHY_SEG_OP ? s->optype : -1,
					    s->op_seq,      why_seg_kind_name(s->kind),
					    s->placeholder, s->start_ns,
					    s->dur_ns,      s->op_start_ns,
					    s->op_end_ns };
		rc = db_why_add_segment(w, &x);
	}
	for (size_t i = 0; i < r->nclock && !rc; i++)
		rc = db_why_add_clock(w, r->clock_rank[i], r->clock_offset_ns[i]);
	if (!rc) {
		struct db_why_summary s = { (int64_t)n,
					    n ? its[0] : 0,
					    n ? its[n - 1] : 0,
					    (int64_t)r->np2p,
					    (int64_t)r->p2p_unpaired,
					    (int64_t)r->nkernels,
					    (int64_t)r->kernels_incomplete,
					    (int64_t)r->ncolls,
					    (int64_t)r->colls_incomplete,
					    c ? (int64_t)c->nsteps : 0,
					    r->clock_error_ns >= 0,
					    r->clock_error_ns,
					    r->clock_corrected,
					    r->notes.len ? r->notes.buf : NULL };
		rc = db_why_set_summary(w, &s);
	}
	if (rc) {
		db_why_rollback(w);
		return rc;
	}
	return db_why_commit(w);
}

void why_load_release(struct why_load *L)
{
	why_free(L->w);
	wi_table_release(&L->reps);
	for (size_t i = 0; i < L->ngroups; i++) {
		free(L->gdesc[i]);
		free(L->gtext[i]);
	}
	free(L->gdesc);
	free(L->gtext);
	free(L->gkind);
	memset(L, 0, sizeof(*L));
}

/* A command of $PP_FAST_BIN (or build/bin) into buf; NULL when not built. */
static const char *bin(const char *name, char *buf, size_t n)
{
	const char *dir = getenv("PP_FAST_BIN");
	snprintf(buf, n, "%s/%s", dir ? dir : "build/bin", name);
	return access(buf, X_OK) ? NULL : buf;
}

int why_load_tree(const char *dir, const char *gen_args)
{
	char gen[4096], batch[4096];
	if (!bin("ppgen", gen, sizeof(gen)) || !bin("ppbatch", batch, sizeof(batch)))
		return 1;
	struct strbuf cmd = STRBUF_INIT;
	strbuf_addf(&cmd, "%s --quiet --out %s/tree %s && %s --input %s/tree --quiet", gen, dir,
		    gen_args, batch, dir);
	fprintf(stderr, "%s\n", cmd.buf);
	int rc = system(cmd.buf) ? -1 : 0;
	strbuf_release(&cmd);
	return rc;
}

struct its {
	int64_t *v;
	size_t n, max;
};

static int take_it(void *ctx, int64_t it)
{
	struct its *I = ctx;
	if (I->n < I->max)
		I->v[I->n++] = it;
	return 0;
}

size_t why_load_iterations(struct db *db, int64_t *its, size_t max)
{
	struct its I = { its, 0, max };
	return db_agg_iterations(db, NULL, take_it, &I, NULL) ? 0 : I.n;
}
