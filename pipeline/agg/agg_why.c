/* agg_why.c — ppagg's why analysis, see agg_why.h.
 *
 *   the topology's ranks → per iteration: the aggregated traces and their
 *   bubbles (agg_iter), their ops derived from Kineto traces
 *   (db_agg_kineto_ops()), their communication kernels of a process group
 *   (db_why_kernels(); each group added at its first kernel, its kind from
 *   the topology's groups, else from its description) → why_run() → the
 *   critical path on the what-if engine → one transaction: the why views,
 *   deleted and written again.
 *
 * Rows arrive trace by trace; a trace's rows are taken when it is the
 * rank's aggregated trace (agg_iter_rank(): not a conflict) and was
 * analysed (status ok or partial), so the engine sees what the rest of the
 * report sees.
 */
#include "agg_why.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agg_iter.h"
#include "agg_timeline.h"
#include "model/collective.h"
#include "model/rank_result.h"
#include "storage/db.h"
#include "storage/db_agg.h"
#include "storage/db_why.h"
#include "topology.h"
#include "util/cmp.h"
#include "util/htab.h"
#include "util/pp.h"
#include "whatif/whatif.h"

void agg_why_init(struct agg_why *w)
{
	memset(w, 0, sizeof(*w));
	strbuf_init(&w->why, 0);
	strbuf_init(&w->no_path, 0);
	strbuf_init(&w->r.notes, 0);
}

void agg_why_release(struct agg_why *w)
{
	why_result_release(&w->r);
	why_cpath_release(&w->path);
	for (size_t i = 0; i < w->ngroups; i++) {
		free(w->groups[i].desc);
		free(w->groups[i].ranks);
	}
	free(w->groups);
	strbuf_release(&w->why);
	strbuf_release(&w->no_path);
	agg_why_init(w);
}

const char *agg_why_kind_name(int kind, const char *desc)
{
	return kind == RR_PG_UNKNOWN && desc && *desc ? desc : rr_pg_kind_name(kind);
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double since(int64_t t0)
{
	return (double)(pp_now_ns() - t0) / 1e9;
}

/* ---- reading ---------------------------------------------------------- */

/* What the callbacks share while an iteration streams in. */
struct load {
	struct agg_why *w;
	struct why *e;
	const struct topology *t;
	const struct agg_iter *it;
	int64_t trace_id;     /* the trace of the row before, and whether its */
	bool keep;            /* rows are taken */
	struct imap stored;   /* pgroups.id -> index in pg + 1 */
	struct imap group_of; /* pgroups.id -> engine group + 1 (0: none) */
	struct db_why_group *pg;
	size_t npg;
	int64_t last_pg; /* the group of the kernel before, and its index */
	int32_t last_group;
};

/* Whether the rows of trace_id (rank's) are taken; cached per trace. */
static bool take(struct load *L, int64_t rank, int64_t trace_id)
{
	if (trace_id != L->trace_id) {
		const struct agg_rank *r = agg_iter_rank(L->it, (int)rank);
		L->trace_id = trace_id;
		L->keep = r && r->trace_id == trace_id && r->in.ok;
	}
	return L->keep;
}

static int take_op(void *p, const struct db_agg_op *o)
{
	struct load *L = p;
	/* Kineto ops only: db_agg_kineto_ops() leaves out the imports, which
	 * record their worker and have no kernels. */
	if (!take(L, o->rank, o->trace_id))
		return 0;
	struct why_op x = { .iteration = L->it->iteration,
			    .start_ns = o->start_ns,
			    .end_ns = o->end_ns,
			    .rank = (int32_t)o->rank,
			    .seq_id = o->seq_id,
			    .step_seq = o->has_step ? o->step_seq : -1,
			    .mc = o->mc,
			    .mb_id = o->mb_id,
			    .optype = (uint8_t)o->optype };
	why_add_op(L->e, &x);
	L->w->nops++;
	return 0;
}

static int take_stored_group(void *p, const struct db_why_group *g)
{
	struct load *L = p;
	L->pg = xrealloc(L->pg, (L->npg + 1) * sizeof(*L->pg));
	L->pg[L->npg++] = (struct db_why_group){ g->id, xstrdup(g->desc), xstrdup(g->ranks) };
	*imap_ref(&L->stored, g->id, 0) = (uint32_t)L->npg;
	return 0;
}

/* The kind of the group whose distinct ranks are rk[0..n), ascending: the
 * topology's kind whose group has exactly these ranks, else what the
 * description says (docs/why.md §1). */
static int kind_of(const struct topology *t, const int *rk, int n, const char *desc)
{
	static const int kinds[][2] = { { TOPO_TP, RR_PG_TP },
					{ TOPO_PP, RR_PG_PP },
					{ TOPO_DP, RR_PG_DP },
					{ TOPO_EP, RR_PG_EP },
					{ TOPO_CP, RR_PG_CP } };
	for (size_t k = 0; n >= 2 && k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		const struct topo_groups *gs = &t->groups[kinds[k][0]];
		for (size_t i = 0; i < gs->n; i++) {
			bool same = gs->v[i].n == n;
			for (int j = 0; same && j < n; j++)
				same = bsearch(&gs->v[i].ranks[j], rk, (size_t)n, sizeof(int),
					       cmp_int) != NULL;
			if (same)
				return kinds[k][1];
		}
	}
	return rr_pg_kind_of(desc);
}

/* The engine's group of stored group id, added at its first kernel; -1
 * when its ranks cannot be read. */
static int32_t group(struct load *L, int64_t id)
{
	uint32_t known = imap_get(&L->group_of, id);
	if (known != IMAP_EMPTY)
		return (int32_t)known - 1;
	uint32_t at = imap_get(&L->stored, id);
	const struct db_why_group *g = at != IMAP_EMPTY ? &L->pg[at - 1] : NULL;
	int *rk = NULL;
	int n = g ? topo_parse_ranks(g->ranks, &rk) : -1;
	int32_t idx = -1;
	if (n >= 1) {
		qsort(rk, (size_t)n, sizeof(*rk), cmp_int);
		int m = 0; /* distinct */
		for (int i = 0; i < n; i++)
			if (!m || rk[m - 1] != rk[i])
				rk[m++] = rk[i];
		int32_t *r32 = xmalloc((size_t)m * sizeof(*r32));
		for (int i = 0; i < m; i++)
			r32[i] = rk[i];
		struct agg_why *w = L->w;
		struct why_group wg = { g->desc, g->ranks, r32, m, kind_of(L->t, rk, m, g->desc) };
		idx = why_add_group(L->e, &wg);
		w->groups = xrealloc(w->groups, (w->ngroups + 1) * sizeof(*w->groups));
		w->groups[w->ngroups++] =
			(struct agg_why_group){ xstrdup(g->desc), xstrdup(g->ranks), wg.kind };
		free(r32);
	}
	free(rk);
	*imap_ref(&L->group_of, id, 0) = (uint32_t)(idx + 1);
	return idx;
}

static int take_kernel(void *p, const struct db_why_kernel *k)
{
	struct load *L = p;
	if (!take(L, k->rank, k->trace_id))
		return 0;
	int32_t g = k->pg_id == L->last_pg ? L->last_group : group(L, k->pg_id);
	L->last_pg = k->pg_id;
	L->last_group = g;
	if (g < 0)
		return 0;
	struct why_kernel x = { L->it->iteration, k->start_ns,      k->dur_ns,
				k->order,         (int32_t)k->rank, g };
	why_add_kernel(L->e, &x);
	L->w->nkernels++;
	return 0;
}

/* One scan for the blocks of keep and the kernels of L. */
struct both {
	struct agg_timeline_fill fill;
	struct load *L;
};

static int both_block(void *p, const struct db_agg_block *b)
{
	return agg_timeline_block(&((struct both *)p)->fill, b);
}

static int both_kernel(void *p, const struct db_why_kernel *k)
{
	return take_kernel(((struct both *)p)->L, k);
}

/* The iteration's kernels into the engine and, while they fit, its blocks
 * into *keep (NULL: none). */
static int read_kernels(struct db *db, struct load *L, struct agg_timeline *keep, size_t *kept)
{
	if (!keep || *kept >= AGG_WHY_KEEP_BYTES)
		return db_why_kernels(db, L->it->iteration, take_kernel, L);
	struct both B = { .L = L };
	size_t n;
	bool *need = agg_timeline_drawn(L->t, L->it, &n);
	agg_timeline_begin(&B.fill, L->it, keep);
	B.fill.need = need; /* the ranks the report draws: agg_timeline_load() */
	int rc = db_agg_blocks_why(db, L->it->iteration, both_block, both_kernel, &B);
	agg_timeline_end(&B.fill);
	free(need);
	*kept += agg_timeline_bytes(keep);
	return rc;
}

/* Every row of the n iterations its into the engine L->e. */
static int read_rows(struct db *db, const struct agg_iter *its, size_t n, struct load *L,
		     struct agg_timeline *keep)
{
	size_t kept = 0;
	const struct topology *t = L->t;
	for (int r = 0; r < t->nrank; r++) {
		struct why_rank x = { r, t->pp_of[r], t->stage_of[r], t->model_of[r] };
		why_add_rank(L->e, &x);
	}
	int rc = db_why_groups(db, take_stored_group, L);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct agg_iter *it = &its[i];
		L->it = it;
		for (size_t k = 0; k < it->nranks; k++) {
			const struct agg_rank *r = &it->ranks[k];
			if (!r->trace_id || !r->in.ok)
				continue;
			struct why_trace x = { it->iteration, r->in.rank,
					       r->in.has_window ? r->in.bubble : -1 };
			why_add_trace(L->e, &x);
			L->w->ntraces++;
		}
		L->trace_id = -1;
		rc = db_agg_kineto_ops(db, it->iteration, take_op, L);
		L->trace_id = -1;
		if (!rc)
			rc = read_kernels(db, L, keep ? &keep[i] : NULL, &kept);
	}
	return rc;
}

/* ---- storing ---------------------------------------------------------- */

static bool inner_kind(int kind)
{
	return kind == RR_PG_TP || kind == RR_PG_CP || kind == RR_PG_EP;
}

static int store_result(struct db_why_writer *wr, const struct agg_why *w)
{
	const struct why_result *r = &w->r;
	int rc = 0;
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
		rc = db_why_add_p2p(wr, &x);
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
		rc = db_why_add_p2p_kernel(wr, &x);
	}
	for (size_t i = 0; i < r->nbubbles && !rc; i++) {
		const struct why_bubble *b = &r->bubbles[i];
		struct db_why_bubble x = { b->iteration,   b->rank,         b->stage,
					   b->bubble_ns,   b->wait_prev_ns, b->wait_next_ns,
					   b->transfer_ns, b->no_work_ns,   b->incomplete };
		rc = db_why_add_bubble(wr, &x);
	}
	for (size_t i = 0; i < r->nhops && !rc; i++) {
		const struct why_hop *h = &r->hops[i];
		struct db_why_hop x = { h->iteration, h->stage,   h->peer_stage,
					h->kernels,   h->wait_ns, h->transfer_ns };
		rc = db_why_add_hop(wr, &x);
	}
	for (size_t g = 0; g < w->ngroups && !rc; g++) {
		const struct agg_why_group *x = &w->groups[g];
		struct db_why_group_row row = { (int64_t)g, x->desc, x->ranks,
						agg_why_kind_name(x->kind, x->desc) };
		rc = db_why_add_group(wr, &row);
	}
	for (size_t i = 0; i < r->ncolls && !rc; i++) {
		const struct why_coll *k = &r->colls[i];
		if (!w->inner_rows && inner_kind(w->groups[k->group].kind))
			continue;
		struct db_why_collective x = {
			k->iteration,    k->group,
			k->seq,          k->size,
			k->present,      k->status == WHY_OK,
			k->first_ns,     k->last_ns,
			k->skew_ns,      k->first_rank,
			k->last_rank,    k->transfer_ns,
			k->missing_rank, why_status_name(k->status),
		};
		rc = db_why_add_collective(wr, &x);
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
		rc = db_why_add_collective_rank(wr, &x);
	}
	for (size_t i = 0; i < r->nclock && !rc; i++)
		rc = db_why_add_clock(wr, r->clock_rank[i], r->clock_offset_ns[i]);
	return rc;
}

static int store_path(struct db_why_writer *wr, const struct why_cpath *c)
{
	int rc = 0;
	for (size_t i = 0; i < c->nseg && !rc; i++) {
		const struct why_seg *s = &c->seg[i];
		struct db_why_segment x = { s->iteration,   s->seq,
					    s->rank,        s->dp_rank,
					    s->stage,       s->kind == WHY_SEG_OP ? s->optype : -1,
					    s->op_seq,      why_seg_kind_name(s->kind),
					    s->placeholder, s->start_ns,
					    s->dur_ns,      s->op_start_ns,
					    s->op_end_ns };
		rc = db_why_add_segment(wr, &x);
	}
	return rc;
}

/* The notes of the `why` row: the engine's, then what ppagg left out. */
static void notes(const struct agg_why *w, struct strbuf *sb)
{
	if (w->state == AGG_WHY_NONE)
		strbuf_addf(sb, "not analysed: %s\n", w->why.buf);
	else
		strbuf_add(sb, w->r.notes.buf, w->r.notes.len);
	if (w->inner_instances && !w->inner_rows)
		strbuf_addf(sb,
			    "collectives: the %zu instances of tensor-, context- and "
			    "expert-parallel groups are summarised in collective_ranks, not "
			    "listed (agg.tp_collective_rows)\n",
			    w->inner_instances);
	if (!w->path.nsteps)
		strbuf_addf(sb, "critical path: none: %s\n", w->no_path.buf);
}

static int store(struct db *db, const struct agg_iter *its, size_t n, const struct agg_why *w)
{
	struct db_why_writer *wr = db_why_begin(db);
	if (!wr)
		return PP_EDB;
	struct strbuf nb = STRBUF_INIT;
	const struct why_result *r = &w->r;
	int rc = w->state == AGG_WHY_DONE ? store_result(wr, w) : 0;
	if (!rc)
		rc = store_path(wr, &w->path);
	if (!rc) {
		notes(w, &nb);
		struct db_why_summary s = { (int64_t)n,
					    n ? its[0].iteration : 0,
					    n ? its[n - 1].iteration : 0,
					    (int64_t)r->np2p,
					    (int64_t)r->p2p_unpaired,
					    (int64_t)r->nkernels,
					    (int64_t)r->kernels_incomplete,
					    (int64_t)r->ncolls,
					    (int64_t)r->colls_incomplete,
					    (int64_t)w->path.nsteps,
					    w->state == AGG_WHY_DONE && r->clock_error_ns >= 0,
					    r->clock_error_ns,
					    r->clock_corrected,
					    nb.len ? nb.buf : NULL };
		rc = db_why_set_summary(wr, &s);
	}
	strbuf_release(&nb);
	if (rc) {
		db_why_rollback(wr);
		return rc;
	}
	return db_why_commit(wr);
}

/* ---- the run ---------------------------------------------------------- */

/* Whether e's model holds the topology's whole DP x PP grid: the what-if
 * analysis takes the grid its ops fill, and a job without its last stage
 * is a shorter pipeline to it, whose path is not the job's (docs/why.md
 * §5). Says what is missing into why otherwise. */
static bool whole_grid(const struct whatif *e, const struct topology *t, struct strbuf *why)
{
	struct whatif_shape sh;
	whatif_shape(e, &sh);
	int dp = t ? (int)t->groups[TOPO_MODEL].n : 0, pp = t ? t->pp : 0;
	if (!t || t->source == TOPO_SRC_NONE || (sh.dp >= dp && sh.pp >= pp))
		return true;
	strbuf_addf(why,
		    "the what-if model has %d replica%s x %d stage%s, the topology %d x %d: "
		    "cells without ops",
		    sh.dp, sh.dp == 1 ? "" : "s", sh.pp, sh.pp == 1 ? "" : "s", dp, pp);
	return false;
}

int agg_why_run(struct db *db, const struct agg_iter *its, size_t n, const struct topology *t,
		int vpp, const struct whatif *e, const char *no_path_why, enum agg_why_rows rows,
		struct agg_timeline *keep, struct agg_why *w)
{
	int64_t t0 = pp_now_ns(), t1;
	double c0 = cpu_now();
	int rc = 0;
	if (!t || t->source == TOPO_SRC_NONE || t->pp < 1 || !t->nrank) {
		strbuf_addstr(&w->why,
			      "no topology (the pipelines and their stages are not known)");
	} else {
		struct why_opts o = { .pp = t->pp, .vpp = vpp > 0 ? vpp : 1 };
		struct load L = { .w = w, .e = why_new(&o), .t = t, .last_pg = -1 };
		imap_init(&L.stored);
		imap_init(&L.group_of);
		rc = read_rows(db, its, n, &L, keep);
		for (size_t i = 0; i < L.npg; i++) {
			free((char *)L.pg[i].desc);
			free((char *)L.pg[i].ranks);
		}
		free(L.pg);
		imap_release(&L.stored);
		imap_release(&L.group_of);
		w->t_read = since(t0);
		t1 = pp_now_ns();
		struct strbuf err = STRBUF_INIT;
		if (rc) {
			; /* the database's error */
		} else if (!w->nops && !w->nkernels) {
			strbuf_addstr(
				&w->why,
				"no aggregated Kineto trace has ops or communication kernels of "
				"a process group (op-trace and PP-timer imports store no kernels; "
				"traces ppbatch read in generic mode have no ops)");
		} else if (why_run(L.e, &w->r, &err)) {
			strbuf_add(&w->why, err.buf, err.len);
		} else {
			w->state = AGG_WHY_DONE;
		}
		strbuf_release(&err);
		why_free(L.e);
		w->t_engine = since(t1);
	}
	if (rc)
		return rc;
	t1 = pp_now_ns();
	if (e && whole_grid(e, t, &w->no_path))
		why_cpath_run(e, &w->path);
	if (!w->path.nsteps && !w->no_path.len)
		strbuf_addstr(&w->no_path, e ? "the what-if model has no step"
					   : no_path_why && *no_path_why ? no_path_why
									 : "no what-if model");
	w->t_path = since(t1);
	for (size_t i = 0; i < w->r.ncolls; i++)
		w->inner_instances += inner_kind(w->groups[w->r.colls[i].group].kind);
	w->inner_rows = rows == AGG_WHY_ROWS_ALL ||
			(rows == AGG_WHY_ROWS_AUTO && w->inner_instances <= AGG_WHY_AUTO_ROWS);
	t1 = pp_now_ns();
	rc = store(db, its, n, w);
	w->t_store = since(t1);
	w->seconds = since(t0);
	w->cpu_seconds = cpu_now() - c0;
	return rc;
}

/* ---- for the report --------------------------------------------------- */

void agg_why_incomplete(const struct agg_why *w, struct strbuf *sb)
{
	const struct why_result *r = &w->r;
	size_t p2p[WHY_NSTATUS] = { 0 }, coll[WHY_NSTATUS] = { 0 };
	for (size_t i = 0; i < r->np2p; i++)
		p2p[r->p2p[i].status < WHY_NSTATUS ? r->p2p[i].status : WHY_OK]++;
	for (size_t i = 0; i < r->ncolls; i++)
		coll[r->colls[i].status < WHY_NSTATUS ? r->colls[i].status : WHY_OK]++;
	const struct {
		const size_t *count;
		size_t total;
		const char *what;
	} parts[] = { { p2p, r->np2p, "pipeline transfers" },
		      { coll, r->ncolls, "collective instances" } };
	for (size_t k = 0; k < 2; k++) {
		size_t bad = parts[k].total - parts[k].count[WHY_OK];
		if (!bad)
			continue;
		strbuf_addf(sb, "%s%zu of %zu %s (", sb->len ? "; " : "", bad, parts[k].total,
			    parts[k].what);
		for (int s = 1, first = 1; s < WHY_NSTATUS; s++)
			if (parts[k].count[s]) {
				strbuf_addf(sb, "%s%zu %s", first ? "" : ", ", parts[k].count[s],
					    why_status_name((enum why_status)s));
				first = 0;
			}
		strbuf_addch(sb, ')');
	}
}

struct kernels_ctx {
	int (*fn)(void *ctx, const struct agg_why_kernel *k);
	void *ctx;
};

static int one_kernel(void *p, const struct db_why_trace_kernel *k)
{
	const struct kernels_ctx *K = p;
	struct agg_why_kernel x = {
		k->start_ns, k->dur_ns, k->stream,
		k->category, k->name,   k->coll ? rr_coll_name((enum rr_coll)k->coll) : NULL
	};
	return K->fn(K->ctx, &x);
}

int agg_why_kernels(struct db *db, const struct agg_iter *it, int rank,
		    int (*fn)(void *ctx, const struct agg_why_kernel *k), void *ctx,
		    struct strbuf *err)
{
	const struct agg_rank *r = agg_iter_rank(it, rank);
	if (!r || !r->trace_id)
		return 0;
	struct kernels_ctx K = { fn, ctx };
	int rc = db_why_trace_kernels(db, r->trace_id, one_kernel, &K);
	if (rc == PP_EDB)
		pp_err(err, rc, "%s", db_errmsg(db));
	return rc;
}
