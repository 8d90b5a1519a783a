/* agg_load.c — ppagg's model of an iteration (agg_iter.h), filled from the
 * database (storage/db_agg.h: one query per kind of row, in rank order),
 * and its rows written back. The timelines' blocks are read later, one
 * iteration at a time (agg_timeline.c).
 *
 * A rank is one trace. When several traces of an iteration claim the same
 * rank (ppbatch records them as a conflict, docs/contracts.md §8), the rank
 * becomes one entry with status "conflict", which names the traces and
 * takes none of their data: ppagg never adds two traces together. Steps
 * and category rows are attached by trace id, so nothing of a conflicting
 * or rankless trace lands on a rank.
 */
#include "agg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/db_agg.h"
#include "topology.h"
#include "util/cmp.h"
#include "util/pp.h"

struct int_list {
	int *v;
	int n, alloc;
};

static int add_iteration(void *ctx, int64_t iteration)
{
	struct int_list *l = ctx;
	PP_GROW(l->v, l->n, l->alloc, 16);
	l->v[l->n++] = (int)iteration;
	return 0;
}

int agg_load_iterations(struct db *db, char **names, int nnames, int **out, int *nout,
			int *nmissing)
{
	struct int_list l = { 0 };
	int rc = 0;
	*nmissing = 0;
	for (int i = 0; i < (nnames ? nnames : 1) && !rc; i++) {
		int found = 0;
		rc = db_agg_iterations(db, nnames ? names[i] : NULL, add_iteration, &l, &found);
		if (!rc && !found && nnames) {
			warn("no iteration '%s' in the database", names[i]);
			(*nmissing)++;
		}
	}
	if (rc) {
		free(l.v);
		return rc;
	}
	if (l.n)
		qsort(l.v, (size_t)l.n, sizeof(int), cmp_int);
	int k = 0;
	for (int i = 0; i < l.n; i++)
		if (!k || l.v[k - 1] != l.v[i])
			l.v[k++] = l.v[i];
	*out = l.v;
	*nout = k;
	return 0;
}

/* The rank of a row of trace id, or NULL when that trace is not the rank's
 * (a conflicting or rankless trace). */
static struct agg_rank *rank_of(const struct agg_iter *it, int64_t rank, int64_t trace_id)
{
	struct agg_rank *r = agg_iter_rank(it, (int)rank);
	return r && r->trace_id == trace_id ? r : NULL;
}

static const char *dup(struct agg_iter *it, const char *s)
{
	return s ? arena_strndup(&it->arena, s, strlen(s)) : NULL;
}

static const char *status_name(int status)
{
	return status == DB_STATUS_OK ? "ok" : status == DB_STATUS_PARTIAL ? "partial" : "failed";
}

struct load {
	struct agg_iter *it;
	size_t alloc;
};

/* A second trace claims r's rank: r becomes a conflict naming them all. */
static void add_conflict(struct agg_iter *it, struct agg_rank *r, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int rank = r->in.rank;
	if (r->ntraces == 1) {
		if (r->in.ok)
			it->nok--;
		else
			it->nfailed--;
		it->nconflicts++;
		strbuf_addf(&sb, "rank %d is claimed by more than one trace: %s", rank,
			    r->path ? r->path : "?");
	} else {
		strbuf_addstr(&sb, r->error);
	}
	strbuf_addf(&sb, ", %s", path ? path : "?");
	r->ntraces++;
	r->error = arena_strndup(&it->arena, sb.buf, sb.len);
	strbuf_release(&sb);
	r->status = "conflict";
	r->mode = NULL;
	r->trace_id = 0;
	memset(&r->in, 0, sizeof(r->in));
	r->in.rank = rank;
	r->in.fwd_med = r->in.bwd_med = -1;
}

static int add_trace(void *ctx, const struct db_agg_trace *t)
{
	struct load *L = ctx;
	struct agg_iter *it = L->it;
	if (!t->has_rank) {
		const char **nv = arena_alloc(&it->arena, (it->nunranked + 1) * sizeof(*nv));
		if (it->nunranked)
			memcpy(nv, it->unranked, it->nunranked * sizeof(*nv));
		nv[it->nunranked++] = dup(it, t->path);
		it->unranked = nv;
		return 0;
	}
	if (it->nranks && it->ranks[it->nranks - 1].in.rank == t->rank) {
		add_conflict(it, &it->ranks[it->nranks - 1], t->path);
		return 0;
	}
	PP_GROW(it->ranks, it->nranks, L->alloc, 64);
	struct agg_rank *r = &it->ranks[it->nranks++];
	memset(r, 0, sizeof(*r));
	r->in.rank = (int)t->rank;
	r->trace_id = t->id;
	r->ntraces = 1;
	r->folder = dup(it, t->folder);
	r->path = dup(it, t->path);
	r->status = status_name(t->status);
	r->error = dup(it, t->error);
	r->mode = !t->has_mode ? NULL
		  : t->mode == DB_MODE_OPTRACE
			  ? "optrace" /* an op-trace import */
			  : rr_mode_name(t->mode == DB_MODE_GENERIC ? RR_GENERIC : RR_MEGATRON);
	if (!it->folder && r->folder)
		it->folder = r->folder;
	bool ok = t->status != DB_STATUS_FAILED;
	r->in.ok = ok;
	r->in.has_window = ok && t->has_window;
	r->in.megatron = t->has_mode && t->mode == DB_MODE_MEGATRON;
	r->in.win_s = t->window_start_ns;
	r->in.win_e = t->window_end_ns;
	r->in.gpu_busy = t->gpu_busy_ns;
	r->idle = t->idle_ns;
	r->in.bubble = t->bubble_ns;
	r->comp_busy = t->comp_busy_ns;
	r->comm_busy = t->comm_busy_ns;
	r->overlap = t->overlap_ns;
	r->coverage = t->coverage;
	r->in.fwd_med = r->in.bwd_med = -1;
	if (ok)
		it->nok++;
	else
		it->nfailed++;
	return 0;
}

/* A copy of the n elements of old in a doubled arena array (*alloc
 * updated; the arena never fails, docs/contracts.md §7). */
static void *grow(struct arena *a, void *old, size_t n, size_t *alloc, size_t size)
{
	size_t na = *alloc ? 2 * *alloc : 32;
	while (na <= n)
		na *= 2;
	void *nv = arena_alloc(a, na * size);
	if (n)
		memcpy(nv, old, n * size);
	*alloc = na;
	return nv;
}

/* Rows of one kind arrive grouped by rank: the rank being filled and its
 * array's capacity. */
struct fill {
	struct agg_iter *it;
	struct agg_rank *r;
	int64_t trace_id;
	size_t alloc;
};

/* A new last element of the arena array arr (n elements, capacity
 * F->alloc). */
#define APPEND(F, arr, n)                                                                         \
	((n) == (F)->alloc                                                                        \
		 ? (void)((arr) = grow(&(F)->it->arena, (arr), (n), &(F)->alloc, sizeof(*(arr)))) \
		 : (void)0,                                                                       \
	 &(arr)[(n)++])

/* The rank a row of trace_id belongs to, or NULL (then the row is not
 * aggregated). Resets the capacity when the rank changes. */
static struct agg_rank *fill_rank(struct fill *F, int64_t rank, int64_t trace_id)
{
	if (!F->r || F->trace_id != trace_id) {
		F->r = rank_of(F->it, rank, trace_id);
		F->trace_id = trace_id;
		F->alloc = 0;
	}
	return F->r;
}

static int add_category(void *ctx, const struct db_agg_category *c)
{
	struct fill *F = ctx;
	struct agg_rank *r = fill_rank(F, c->rank, c->trace_id);
	if (!r)
		return 0;
	*APPEND(F, r->cats, r->ncats) =
		(struct agg_catstat){ c->category, c->kernels, c->sum_ns, c->busy_ns };
	if (c->category == RR_FWD_COMP || c->category == RR_BWD_COMP)
		r->in.compute += c->busy_ns;
	return 0;
}

static int add_step(void *ctx, const struct db_agg_step *s)
{
	struct fill *F = ctx;
	struct agg_rank *r = fill_rank(F, s->rank, s->trace_id);
	if (!r)
		return 0;
	*APPEND(F, r->steps, r->nsteps) = (struct agg_step){
		.phase = (int8_t)s->phase,
		.seq = (int32_t)s->seq,
		.has_kernels = s->has_times,
		.cpu_s = s->cpu_start_ns,
		.cpu_e = s->cpu_end_ns,
		.s = s->start_ns,
		.e = s->end_ns,
		.wall = s->wall_ns,
		.comp = s->comp_ns,
		.comm = s->comm_ns,
		.overlap = s->overlap_ns,
		.kernels = (int32_t)s->kernels,
		.chunk = (int32_t)s->chunk,
		.microbatch = (int32_t)s->mbs,
	};
	return 0;
}

static void rank_medians(struct agg_rank *r, int64_t *scratch)
{
	for (int phase = RR_FWD; phase <= RR_BWD; phase++) {
		size_t k = 0;
		for (size_t i = 0; i < r->nsteps; i++)
			if (r->steps[i].phase == phase && r->steps[i].has_kernels)
				scratch[k++] = r->steps[i].wall;
		if (phase == RR_FWD) {
			r->in.nfwd = (int)k;
			r->in.fwd_med = agg_lower_median(scratch, k);
		} else {
			r->in.nbwd = (int)k;
			r->in.bwd_med = agg_lower_median(scratch, k);
		}
	}
}

static void medians(struct agg_iter *it)
{
	int64_t *scratch = NULL;
	size_t scratch_n = 0;
	for (size_t i = 0; i < it->nranks; i++) {
		struct agg_rank *q = &it->ranks[i];
		if (q->nsteps > scratch_n) {
			free(scratch);
			scratch_n = q->nsteps;
			scratch = xmalloc(scratch_n * sizeof(*scratch));
		}
		rank_medians(q, scratch);
	}
	free(scratch);
}

int agg_load(struct db *db, int iteration, struct agg_iter *it)
{
	memset(it, 0, sizeof(*it));
	arena_init(&it->arena);
	it->iteration = iteration;
	it->res.slowest_stage = -1;
	struct load L = { it, 0 };
	struct fill F = { .it = it };
	int rc = db_agg_traces(db, iteration, add_trace, &L);
	if (!rc)
		rc = db_agg_categories(db, iteration, add_category, &F);
	F.r = NULL;
	if (!rc)
		rc = db_agg_steps(db, iteration, add_step, &F);
	if (!rc)
		medians(it);
	return rc;
}

static int add_group(void *ctx, const char *desc, const char *ranks)
{
	return topo_infer_add(ctx, desc, ranks);
}

int agg_load_process_groups(struct db *db, int iteration, struct topology *t)
{
	return db_agg_process_groups(db, iteration, add_group, t);
}

static int store_iteration(struct db_agg_writer *w, const struct agg_iter *it)
{
	const struct agg_result *res = &it->res;
	int rc = db_agg_clear(w, it->iteration);
	for (size_t i = 0; !rc && i < res->npp; i++) {
		const struct agg_pp_row *p = &res->pp[i];
		struct db_agg_pp_group row = {
			it->iteration, p->pp_group,   p->stage,  p->rank,
			p->complete,   p->has_window, p->gw_s,   p->gw_e,
			p->has_rank,   p->idle,       p->bubble,
		};
		rc = db_agg_add_pp_group(w, &row);
	}
	for (size_t i = 0; !rc && i < res->npipes; i++) {
		const struct agg_pipeline_row *p = &res->pipes[i];
		struct db_agg_pipeline row = { it->iteration,  p->pp_group, p->measured,
					       p->has_ideal,   p->ideal,    p->gap,
					       p->bubble_ratio };
		rc = db_agg_add_pipeline(w, &row);
	}
	for (size_t i = 0; !rc && i < res->nstrag; i++) {
		const struct agg_straggler_row *p = &res->strag[i];
		struct db_agg_straggler row = { it->iteration, p->rank,  p->group_kind, p->group,
						p->metric,     p->value, p->median,     p->excess };
		rc = db_agg_add_straggler(w, &row);
	}
	return rc;
}

int agg_store(struct db *db, const struct agg_iter *its, size_t n)
{
	struct db_agg_writer *w = db_agg_begin(db);
	int rc = 0;
	if (!w)
		return PP_EDB;
	for (size_t i = 0; i < n && !rc; i++)
		rc = store_iteration(w, &its[i]);
	if (rc) {
		db_agg_rollback(w);
		return rc;
	}
	return db_agg_commit(w);
}
