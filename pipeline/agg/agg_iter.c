/* agg_iter.c — look-ups in ppagg's model of an iteration and its release,
 * see agg_iter.h. The ranks, their steps and category stats live in the
 * iteration's arena (agg_load.c fills them); the rows, the overview and
 * the plan are malloc'd.
 */
#include "agg_iter.h"

#include <stdlib.h>
#include <string.h>

#include "util/pp.h"

struct agg_rank *agg_iter_rank(const struct agg_iter *it, int rank)
{
	size_t lo = 0, hi = it->nranks;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (it->ranks[mid].in.rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < it->nranks && it->ranks[lo].in.rank == rank ? &it->ranks[lo] : NULL;
}

int64_t agg_iter_time(const struct agg_iter *it)
{
	int64_t best = 0;
	for (size_t i = 0; i < it->res.npipes; i++)
		if (it->res.pipes[i].measured > best)
			best = it->res.pipes[i].measured;
	if (!best)
		for (size_t i = 0; i < it->nranks; i++)
			if (it->ranks[i].in.has_window &&
			    it->ranks[i].in.win_e - it->ranks[i].in.win_s > best)
				best = it->ranks[i].in.win_e - it->ranks[i].in.win_s;
	return best;
}

bool agg_rank_whole(const struct agg_rank *r)
{
	return r && r->trace_id && r->status && !strcmp(r->status, "ok");
}

/* Why a rank that agg_iter_rank() found (r) or not is not analysed. */
static const char *absence(const struct agg_rank *r)
{
	if (!r)
		return "missing";
	return r->status && !strcmp(r->status, "conflict") ? "in conflict" : "failed";
}

int agg_group_absent(const struct agg_iter *it, const int *ranks, int n, struct strbuf *sb)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		const struct agg_rank *r = agg_iter_rank(it, ranks[i]);
		if (!r || !r->in.ok)
			strbuf_addf(sb, "%s%d (%s)", k++ ? ", " : "", ranks[i], absence(r));
	}
	return k;
}

static void overview_release(struct agg_overview *ov)
{
	PP_FREE_ALL(ov->cells, ov->fwd, ov->bwd, ov->flag);
}

static void plan_release(struct agg_plan *p)
{
	PP_FREE_ALL(p->rank_timeline, p->rank_overlap, p->pp_group, p->model_group, p->only_rank,
		    p->only_pp, p->only_model);
}

void agg_iter_release(struct agg_iter *it)
{
	free(it->ranks);
	agg_result_release(&it->res);
	overview_release(&it->ov);
	plan_release(&it->plan);
	arena_release(&it->arena);
	memset(it, 0, sizeof(*it));
}
