/* agg_timeline.c — the blocks of an iteration's timelines, see
 * agg_timeline.h.
 *
 * The kernels arrive per (trace, category, phase, seq) and split by the
 * recompute flag (storage/db_agg.h); the two halves are merged into one
 * block, and the recompute rows also make a block of the recompute subset.
 * A row lands on a rank only when its trace is the rank's: nothing of a
 * conflicting or rankless trace is drawn.
 */
#include "agg_timeline.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "storage/db.h"
#include "storage/db_agg.h"
#include "util/pp.h"

const enum rr_category agg_cat_category[AGG_NCATS] = {
	[AGG_CAT_BWD_COMP] = RR_BWD_COMP,
	[AGG_CAT_FWD_COMP] = RR_FWD_COMP,
	[AGG_CAT_RECOMPUTE] = RR_BWD_COMP_RECOMPUTE,
	[AGG_CAT_FWD_COMM] = RR_FWD_COMM,
	[AGG_CAT_BWD_COMM] = RR_BWD_COMM,
	[AGG_CAT_DP_COMM] = RR_DP_COMM,
	[AGG_CAT_PP_COMM] = RR_PP_COMM,
	[AGG_CAT_OPT_COMP] = RR_OPT_COMP,
};

int agg_cat_of(enum rr_category c, bool recompute)
{
	if (recompute)
		return c == RR_BWD_COMP ? AGG_CAT_RECOMPUTE : -1;
	for (int k = 0; k < AGG_NCATS; k++)
		if (k != AGG_CAT_RECOMPUTE && agg_cat_category[k] == c)
			return k;
	return -1;
}

static void add_block(struct agg_blocks *bl, const struct agg_block *b)
{
	PP_GROW(bl->v, bl->n, bl->alloc, 256);
	bl->v[bl->n++] = *b;
}

/* Rows arrive grouped by trace: the blocks of the trace being read, or
 * NULL when it is not a rank's. */
static struct agg_blocks *blocks_of(struct agg_timeline_fill *F, int64_t rank, int64_t trace_id)
{
	if (!F->bl || F->trace_id != trace_id) {
		const struct agg_rank *r = agg_iter_rank(F->it, (int)rank);
		F->bl = r && r->trace_id == trace_id && (!F->need || F->need[r - F->it->ranks])
				? &F->tl->rank[r - F->it->ranks]
				: NULL;
		F->trace_id = trace_id;
	}
	return F->bl;
}

int agg_timeline_block(void *ctx, const struct db_agg_block *k)
{
	struct agg_timeline_fill *F = ctx;
	struct agg_blocks *bl = blocks_of(F, k->rank, k->trace_id);
	int c = agg_cat_of(k->category, false);
	if (!bl || c < 0)
		return 0;
	struct agg_block b = { .s = k->start_ns,
			       .e = k->end_ns,
			       .seq = (int32_t)k->seq,
			       .cat = (uint8_t)c,
			       .phase = (int8_t)k->phase,
			       .kernels = (int32_t)k->kernels };
	struct agg_block *last = bl->n ? &bl->v[bl->n - 1] : NULL;
	if (k->recompute && last && last->cat == b.cat && last->phase == b.phase &&
	    last->seq == b.seq) {
		if (b.s < last->s)
			last->s = b.s;
		if (b.e > last->e)
			last->e = b.e;
		last->kernels += b.kernels;
	} else {
		add_block(bl, &b);
	}
	int rc_cat = agg_cat_of(k->category, true);
	if (k->recompute && rc_cat >= 0 && rc_cat != c) {
		b.cat = (uint8_t)rc_cat;
		add_block(bl, &b);
		/* Keep the merge target last: swap the subset block behind. */
		if (bl->n >= 2) {
			struct agg_block tmp = bl->v[bl->n - 1];
			bl->v[bl->n - 1] = bl->v[bl->n - 2];
			bl->v[bl->n - 2] = tmp;
		}
	}
	return 0;
}

/* Steps timed without kernels (PP-timer imports) are drawn as their
 * phase's computation block, so their pipelines show up too. */
static void timed_steps(const struct agg_rank *rk, struct agg_blocks *bl)
{
	for (size_t j = 0; j < rk->nsteps; j++) {
		const struct agg_step *p = &rk->steps[j];
		if (p->kernels || !p->has_kernels || (p->phase != RR_FWD && p->phase != RR_BWD))
			continue;
		struct agg_block b = { .s = p->s,
				       .e = p->e,
				       .seq = p->seq,
				       .cat = p->phase == RR_FWD ? AGG_CAT_FWD_COMP
								 : AGG_CAT_BWD_COMP,
				       .phase = p->phase };
		add_block(bl, &b);
	}
}

/* need[i]: whether rank i of it is drawn by a chart its plan writes: its
 * own timeline, or a row of a PP group's or a model replica's. Returns how
 * many are. */
static size_t drawn(const struct topology *t, const struct agg_iter *it, bool *need)
{
	const struct agg_plan *p = &it->plan;
	size_t n = 0;
	for (size_t i = 0; i < it->nranks; i++)
		need[i] = p->only_rank ? p->only_rank[i]
				       : p->rank_timeline && p->rank_timeline[i] != AGG_SHOW_NONE;
	for (int kind = TOPO_PP; kind <= TOPO_MODEL; kind += TOPO_MODEL - TOPO_PP) {
		const uint8_t *show = kind == TOPO_PP ? p->pp_group : p->model_group;
		const bool *only = kind == TOPO_PP ? p->only_pp : p->only_model;
		for (size_t g = 0; show && t->source != TOPO_SRC_NONE && g < t->groups[kind].n; g++)
			for (int k = 0; (only ? only[g] : show[g] != AGG_SHOW_NONE) &&
					k < t->groups[kind].v[g].n;
			     k++) {
				const struct agg_rank *r =
					agg_iter_rank(it, t->groups[kind].v[g].ranks[k]);
				if (r)
					need[r - it->ranks] = true;
			}
	}
	for (size_t i = 0; i < it->nranks; i++)
		n += need[i];
	return n;
}

bool *agg_timeline_drawn(const struct topology *t, const struct agg_iter *it, size_t *n)
{
	bool *need = xcalloc(it->nranks + 1, sizeof(bool));
	*n = drawn(t, it, need);
	return need;
}

void agg_timeline_begin(struct agg_timeline_fill *F, const struct agg_iter *it,
			struct agg_timeline *tl)
{
	tl->nranks = it->nranks;
	tl->rank = xcalloc(it->nranks + 1, sizeof(*tl->rank));
	*F = (struct agg_timeline_fill){ .it = it, .tl = tl };
}

void agg_timeline_end(struct agg_timeline_fill *F)
{
	for (size_t i = 0; i < F->it->nranks; i++)
		if (!F->need || F->need[i])
			timed_steps(&F->it->ranks[i], &F->tl->rank[i]);
}

size_t agg_timeline_bytes(const struct agg_timeline *tl)
{
	size_t n = tl->nranks * sizeof(*tl->rank);
	for (size_t i = 0; i < tl->nranks; i++)
		n += tl->rank[i].alloc * sizeof(struct agg_block);
	return n;
}

int agg_timeline_load(const struct agg_job *job, const struct agg_iter *it, struct agg_timeline *tl,
		      struct strbuf *err)
{
	size_t i = (size_t)(it - job->its);
	if (job->timelines && i < job->niters && job->timelines[i].rank) {
		*tl = job->timelines[i]; /* taken: the job keeps no copy */
		memset(&job->timelines[i], 0, sizeof(*tl));
		return 0;
	}
	struct agg_timeline_fill F;
	agg_timeline_begin(&F, it, tl);
	size_t n, k = 0;
	bool *need = agg_timeline_drawn(&job->topo, it, &n);
	F.need = need;
	int rc = 0;
	/* A few ranks of many: their traces' kernels only (a rowid range
	 * each); else one scan of the iteration. */
	if (n && n <= it->nranks / 2) {
		int64_t *ids = xmalloc(n * sizeof(*ids));
		for (size_t r = 0; r < it->nranks; r++)
			if (need[r] && it->ranks[r].trace_id)
				ids[k++] = it->ranks[r].trace_id;
		rc = db_agg_trace_blocks(job->db, ids, k, agg_timeline_block, &F);
		free(ids);
	} else if (n) {
		rc = db_agg_blocks(job->db, it->iteration, agg_timeline_block, &F);
	}
	if (rc) {
		pp_err(err, rc, "%s", rc == PP_EDB ? db_errmsg(job->db) : pp_strerror(rc));
		free(need);
		return rc;
	}
	agg_timeline_end(&F);
	free(need);
	return 0;
}

void agg_timeline_release(struct agg_timeline *tl)
{
	for (size_t i = 0; tl->rank && i < tl->nranks; i++)
		free(tl->rank[i].v);
	free(tl->rank);
	memset(tl, 0, sizeof(*tl));
}
