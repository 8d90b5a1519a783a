/* agg_whatif.c — ppagg's what-if analysis, see agg_whatif.h.
 *
 *   the workers: each (dp_rank, stage) cell of the topology is its lowest
 *   rank (docs/whatif.md §9.1) → ops of the aggregated traces
 *   (storage/db_agg.h) → a wi_table, each trace on its worker → the chunk
 *   and micro-batch labels of the ops derived from Kineto traces, with the
 *   VPP ppagg decided (agg_vpp.h, from the ranks' steps) →
 *   the grid check → the op-trace imports' meta and op
 *   type order → whatif_new → the clock offsets from the ops that end
 *   together, the times corrected, whatif_new again (Kineto ops only) →
 *   whatif_run → one step of it, measured and ideal, kept for the report →
 *   one transaction: ppagg's topology and the what-if rows, deleted and
 *   written again.
 */
#include "agg_whatif.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg_calc.h"
#include "agg_iter.h"
#include "model/optype.h"
#include "model/rank_result.h"
#include "storage/db_agg.h"
#include "topology.h"
#include "util/pp.h"

/* What the loader keeps while the ops of one iteration stream in. */
struct load {
	const struct agg_iter *it;
	const struct topology *t;
	const int *rep; /* per rank of t: whether it is its cell's worker */
	struct wi_table *tab;
	int32_t *step; /* per row of tab: the step seq that labels it, or -1 */
	size_t stepcap;
	int64_t trace_id; /* the trace of the previous row */
	bool keep;        /* its ops are aggregated */
	bool placed;      /* ... and it has a worker */
	int dp, stage;
	size_t nrows;          /* op rows of the iteration, kept or not */
	int64_t unplaced_rank; /* a rank with ops but no worker, or -1 */
	int64_t *sources;      /* distinct op-trace imports */
	size_t nsources;
	bool kineto; /* some ops come from Kineto traces */
};

static int add_op(void *ctx, const struct db_agg_op *o)
{
	struct load *L = ctx;
	L->nrows++;
	if (o->trace_id != L->trace_id) {
		const struct agg_rank *r = agg_iter_rank(L->it, (int)o->rank);
		L->trace_id = o->trace_id;
		L->keep = r && r->trace_id == o->trace_id; /* not a conflict */
		L->placed = o->has_worker;
		L->dp = o->dp_rank;
		L->stage = o->stage;
		if (L->keep && !o->has_worker && L->t && o->rank >= 0 && o->rank < L->t->nrank &&
		    L->t->stage_of[o->rank] >= 0 && L->t->model_of[o->rank] >= 0) {
			L->placed = true;
			L->dp = L->t->model_of[o->rank];
			L->stage = L->t->stage_of[o->rank];
			/* TP/CP > 1: the cell's other ranks are not its worker */
			L->keep = L->rep[o->rank];
		}
		if (L->keep && !L->placed && L->unplaced_rank < 0)
			L->unplaced_rank = o->rank;
		bool known = o->source_id <= 0;
		for (size_t i = 0; i < L->nsources && !known; i++)
			known = L->sources[i] == o->source_id;
		if (L->keep && !known) {
			L->sources = xrealloc(L->sources, (L->nsources + 1) * sizeof(*L->sources));
			L->sources[L->nsources++] = o->source_id;
		}
	}
	if (!L->keep || !L->placed)
		return 0;
	if (L->dp < 0 || L->dp > INT16_MAX || L->stage < 0 || L->stage > INT16_MAX)
		return 0; /* not a worker the engine can hold: the cell stays missing */
	struct wi_op op = {
		.step = L->it->iteration,
		.start_ns = o->start_ns,
		.end_ns = o->end_ns,
		.rank = (int32_t)o->rank,
		.seq_id = o->seq_id,
		.dp_rank = (int16_t)L->dp,
		.stage = (int16_t)L->stage,
		.mc = o->mc,
		.gmc = o->gmc,
		.mb_id = o->mb_id,
		.optype = (uint8_t)o->optype,
	};
	PP_GROW(L->step, L->tab->n, L->stepcap, 4096);
	L->step[L->tab->n] = o->has_step ? o->step_seq : -1;
	L->kineto |= o->source_id <= 0 && !o->has_worker;
	wi_table_add(L->tab, &op, 0);
	return 0;
}

/* ---- the cells' workers ---------------------------------------------- */

/* Whether rank r has a trace in iteration it that is analysed ("ok"). */
static bool rank_ok(const struct agg_iter *it, int r)
{
	return agg_rank_whole(agg_iter_rank(it, r));
}

/* The (dp_rank, stage) cell of rank r, dp_rank * t->pp + stage; -1 for none. */
static long cell_of(const struct topology *t, int r)
{
	if (t->stage_of[r] < 0 || t->stage_of[r] >= t->pp || t->model_of[r] < 0)
		return -1;
	return (long)t->model_of[r] * t->pp + t->stage_of[r];
}

/* rep[r] = 1 for the worker of each (dp_rank, stage) cell of t: its lowest
 * rank analysed in every iteration, else its lowest rank analysed in one,
 * else its lowest rank. Returns the most ranks one cell has. */
static int pick_workers(const struct topology *t, const struct agg_iter *its, size_t n, int *rep)
{
	int cells = 0, most = 0;
	for (int r = 0; r < t->nrank; r++) {
		rep[r] = 0;
		if (cell_of(t, r) >= 0 && (t->model_of[r] + 1) * t->pp > cells)
			cells = (t->model_of[r] + 1) * t->pp;
	}
	int *best = xmalloc(((size_t)cells + 1) * sizeof(int));
	int *score = xcalloc((size_t)cells + 1, sizeof(int));
	int *count = xcalloc((size_t)cells + 1, sizeof(int));
	for (int c = 0; c < cells; c++)
		best[c] = -1;
	for (int r = 0; r < t->nrank; r++) {
		long c = cell_of(t, r);
		int sc = 0;
		if (c < 0)
			continue;
		size_t in = 0;
		for (size_t i = 0; i < n; i++)
			in += rank_ok(&its[i], r);
		sc = in == n ? 2 : in ? 1 : 0;
		if (++count[c] > most)
			most = count[c];
		if (best[c] < 0 || sc > score[c]) { /* ranks ascend: the lowest wins ties */
			best[c] = r;
			score[c] = sc;
		}
	}
	for (int c = 0; c < cells; c++)
		if (best[c] >= 0)
			rep[best[c]] = 1;
	free(best);
	free(score);
	free(count);
	return most;
}

/* ---- the slow rank of a cell ------------------------------------------ */

/* The ranks of a cell as ranges: "4-5", "0, 8", then ", ..." when out of room. */
static void format_cell_ranks(char *buf, size_t len, const int *rank, int n)
{
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && rank[j] == rank[j - 1] + 1;)
			j++;
		size_t before = sb.len;
		strbuf_addf(&sb, "%s%d", i ? ", " : "", rank[i]);
		if (j - i > 1)
			strbuf_addf(&sb, "-%d", rank[j - 1]);
		if ((j < n && sb.len + 5 >= len) || sb.len >= len) {
			sb.len = before;
			sb.buf[before] = '\0';
			strbuf_addstr(&sb, ", ...");
			break;
		}
	}
	snprintf(buf, len, "%s", sb.buf);
	strbuf_release(&sb);
}

/* w->cells from t: per (dp_rank, stage) cell, its ranks and the one whose
 * own compute (forward + backward compute kernels, r->in.compute, summed
 * over the iterations where every rank of the cell has a whole trace:
 * a salvaged one computes less, cut short) is more
 * than w->margin above the cell's lower median (docs/whatif.md §9.2). A
 * slow tensor rank makes its partners wait inside the tensor-parallel
 * collectives: their communication grows, its compute does.
 *
 * The comparison is the straggler flag's, agg_above_lower_median(); what
 * is compared differs on purpose. The straggler flag judges each iteration
 * on its own and lists every rank that stands out; a cell gets one name for
 * the whole what-if analysis, which spans the aggregated iterations, so it
 * sums them, only those where every rank of the cell has a whole trace (each
 * sum then covers the same steps), and names the highest sum of those that
 * stand out. */
static void name_slow_ranks(struct agg_whatif *w, const struct topology *t,
			    const struct agg_iter *its, size_t n)
{
	int dp = 0, pp = t->pp;
	for (int r = 0; r < t->nrank; r++)
		if (cell_of(t, r) >= 0 && t->model_of[r] >= dp)
			dp = t->model_of[r] + 1;
	if (!dp || pp < 1)
		return;
	size_t cells = (size_t)dp * (size_t)pp;
	w->cells = xcalloc(cells, sizeof(*w->cells));
	w->cell_dp = dp;
	w->cell_pp = pp;
	/* the ranks of cell c, ascending: order[first[c] .. first[c + 1]) */
	int *first = xcalloc(cells + 1, sizeof(int));
	int *fill = xmalloc(cells * sizeof(int));
	int *order = xmalloc(((size_t)t->nrank + 1) * sizeof(int));
	int64_t *sum = xmalloc(((size_t)t->nrank + 1) * sizeof(int64_t));
	int *which = xmalloc(((size_t)t->nrank + 1) * sizeof(int));
	for (int r = 0; r < t->nrank; r++)
		if (cell_of(t, r) >= 0)
			first[cell_of(t, r) + 1]++;
	for (size_t c = 0; c < cells; c++)
		first[c + 1] += first[c];
	memcpy(fill, first, cells * sizeof(int));
	for (int r = 0; r < t->nrank; r++)
		if (cell_of(t, r) >= 0)
			order[fill[cell_of(t, r)]++] = r;
	free(fill);
	for (size_t c = 0; c < cells; c++) {
		struct agg_wi_cell *cell = &w->cells[c];
		const int *rank = order + first[c];
		int k = first[c + 1] - first[c];
		cell->nranks = k;
		cell->slow = -1;
		format_cell_ranks(cell->ranks, sizeof(cell->ranks), rank, k);
		if (k < 2)
			continue;
		memset(sum, 0, (size_t)k * sizeof(*sum));
		size_t used = 0;
		for (size_t i = 0; i < n; i++) {
			bool all = true;
			for (int j = 0; j < k && all; j++)
				all = agg_rank_whole(agg_iter_rank(&its[i], rank[j]));
			for (int j = 0; j < k && all; j++)
				sum[j] += agg_iter_rank(&its[i], rank[j])->in.compute;
			used += all;
		}
		if (!used)
			continue;
		int64_t m;
		int nslow = agg_above_lower_median(sum, k, w->margin, &m, which);
		int top = nslow ? which[0] : -1;
		for (int j = 1; j < nslow; j++)
			if (sum[which[j]] > sum[top]) /* the lowest rank wins ties */
				top = which[j];
		if (top >= 0) {
			cell->slow = rank[top];
			cell->excess = agg_excess(sum[top], m);
		}
	}
	PP_FREE_ALL(first, order, sum, which);
}

const struct agg_wi_cell *agg_whatif_cell(const struct agg_whatif *w, int dp_rank, int stage)
{
	if (!w->cells || dp_rank < 0 || stage < 0 || dp_rank >= w->cell_dp || stage >= w->cell_pp)
		return NULL;
	const struct agg_wi_cell *c =
		&w->cells[(size_t)dp_rank * (size_t)w->cell_pp + (size_t)stage];
	return c->nranks > 1 ? c : NULL;
}

/* ---- the labels of Kineto ops ------------------------------------- */

/* The chunk, micro-batch and global chunk of the ops that name a step. */
static void label(struct wi_table *tab, const int32_t *step, int P, int vpp)
{
	for (size_t i = 0; i < tab->n && P >= 1 && vpp >= 1; i++) {
		struct wi_op *o = &tab->ops[i];
		if (step[i] < 0)
			continue;
		bool bwd = o->optype == OP_BWD_COMPUTE || o->optype == OP_GRADS_RS;
		bool compute = o->optype == OP_FWD_COMPUTE || o->optype == OP_BWD_COMPUTE;
		int32_t chunk, mb;
		rr_vpp_label(step[i], bwd, P, vpp, &chunk, &mb);
		o->mc = (int16_t)chunk;
		if (compute) {
			o->mb_id = (int16_t)mb;
			o->gmc = (int16_t)(chunk * P + o->stage);
		}
	}
}

/* Whether every iteration holds the whole DP x PP grid; what is missing
 * into why otherwise. */
static bool grid_complete(const struct agg_iter *its, size_t n, const struct wi_table *tab,
			  struct strbuf *why)
{
	int dp = 0, pp = 0;
	for (size_t i = 0; i < tab->n; i++) {
		dp = tab->ops[i].dp_rank + 1 > dp ? tab->ops[i].dp_rank + 1 : dp;
		pp = tab->ops[i].stage + 1 > pp ? tab->ops[i].stage + 1 : pp;
	}
	size_t cells = (size_t)dp * (size_t)pp, missing = 0;
	uint8_t *have = xcalloc(n * cells, 1);
	for (size_t i = 0, k = 0; i < tab->n; i++) {
		const struct wi_op *o = &tab->ops[i];
		while (its[k].iteration != o->step) /* rows come in iteration order */
			k++;
		have[k * cells + (size_t)o->dp_rank * (size_t)pp + (size_t)o->stage] = 1;
	}
	struct strbuf list = STRBUF_INIT;
	for (size_t k = 0; k < n; k++) {
		size_t got = 0;
		for (size_t c = 0; c < cells; c++)
			got += have[k * cells + c];
		for (size_t c = 0; c < cells && got < cells; c++) {
			if (have[k * cells + c])
				continue;
			if (missing++ < 3 && !got)
				strbuf_addf(&list, "%siteration %d has no ops",
					    list.len ? "; " : "", its[k].iteration);
			else if (missing <= 3)
				strbuf_addf(&list, "%siteration %d lacks dp %zu stage %zu",
					    list.len ? "; " : "", its[k].iteration, c / (size_t)pp,
					    c % (size_t)pp);
			if (!got)
				break; /* one entry for an iteration without ops */
		}
	}
	free(have);
	if (missing)
		strbuf_addf(
			why,
			"the ops of %zu iteration%s do not fill the %d x %d grid (dp x stage) in "
			"each: %s%s",
			n, n == 1 ? "" : "s", dp, pp, list.buf, missing > 3 ? "; ..." : "");
	strbuf_release(&list);
	return !missing;
}

/* The op-trace imports' meta and order into the table; false (why set)
 * when the imports disagree on what the analysis takes from them. */
struct sources {
	struct wi_table *tab;
	bool any, differ;
	int64_t dsp;
	char order[512];
	struct strbuf paths; /* for the message */
};

static int take_source(void *ctx, const struct db_agg_op_source *s)
{
	struct sources *S = ctx;
	const char *order = s->optype_order ? s->optype_order : "";
	int64_t dsp = s->has_meta ? s->dsp_size : 1;
	if (S->any && (dsp != S->dsp || strcmp(order, S->order))) {
		strbuf_addf(&S->paths, " and %s", s->path);
		S->differ = true;
		return 0;
	}
	if (S->any)
		return 0;
	S->any = true;
	S->dsp = dsp;
	snprintf(S->order, sizeof(S->order), "%s", order);
	strbuf_addstr(&S->paths, s->path);
	if (s->has_meta) {
		struct wi_meta *m = &S->tab->meta;
		S->tab->has_meta = true;
		snprintf(m->trial_name, sizeof(m->trial_name), "%s",
			 s->trial_name ? s->trial_name : "");
		m->run_id = s->run_id;
		m->dp_size = s->dp_size;
		m->pp_size = s->pp_size;
		m->tp_size = s->tp_size;
		m->dsp_size = s->dsp_size;
		m->vpp_size = s->vpp_size;
		m->world_size = s->world_size;
	}
	if (*order) { /* the names, comma-separated */
		char buf[512], *names[OP_NTYPES];
		size_t k = 0;
		snprintf(buf, sizeof(buf), "%s", order);
		for (char *p = buf; p && k < OP_NTYPES; k++) {
			names[k] = p;
			p = strchr(p, ',');
			if (p)
				*p++ = '\0';
		}
		wi_table_set_order(S->tab, (const char *const *)names, k);
	}
	return 0;
}

static int read_sources(struct db *db, const struct load *L, struct wi_table *tab,
			struct strbuf *why, bool *ok)
{
	struct sources S = { .tab = tab, .paths = STRBUF_INIT };
	int rc = 0;
	for (size_t i = 0; i < L->nsources && !rc; i++)
		rc = db_agg_op_source(db, L->sources[i], take_source, &S, NULL);
	*ok = !S.differ;
	if (!*ok)
		strbuf_addf(why,
			    "the ops come from op-trace imports with a different dsp_size or "
			    "op type order: %s",
			    S.paths.buf);
	strbuf_release(&S.paths);
	return rc;
}

static void format_ranks(struct agg_whatif *w)
{
	strbuf_reset(&w->mw_ranks);
	for (size_t i = 0; i < w->r.n_mw; i++)
		strbuf_addf(&w->mw_ranks, "%s%d", i ? ", " : "", (int)w->r.workers[i].rank);
}

/* The clock offset taken off the worker's times (0 when the estimates were
 * within their error and nothing was corrected); false for op traces. */
static bool worker_offset(const struct agg_whatif *w, const struct wi_worker *x, int64_t *off)
{
	if (!w->has_clock || x->stage >= w->clock.pp || x->dp_rank >= w->clock.dp)
		return false;
	*off = w->clock_corrected ? w->clock.offset_ns[x->stage * w->clock.dp + x->dp_rank] : 0;
	return true;
}

/* ppagg's topology with the VPP it decided for the whole report (also when
 * no Kineto op was labelled with it), then the analysis when there is one. */
static int store(struct db *db, const struct topology *t, const struct agg_iter *its, size_t n,
		 int vpp, const struct agg_whatif *w)
{
	struct db_agg_writer *wr = db_agg_begin(db);
	if (!wr)
		return PP_EDB;
	int rc = db_agg_clear_topology(wr);
	for (int r = 0; t && !rc && r < t->nrank; r++) {
		if (t->stage_of[r] < 0 || t->model_of[r] < 0)
			continue;
		struct db_agg_topology row = {
			r, t->pp_of[r], t->stage_of[r], t->model_of[r], t->pp, vpp > 0 ? vpp : 1
		};
		rc = db_agg_add_topology(wr, &row);
	}
	if (!rc)
		rc = db_agg_clear_whatif(wr);
	if (!rc && w->state == AGG_WI_DONE) {
		const struct whatif_result *r = &w->r;
		struct db_agg_whatif row = {
			.iterations = (int64_t)n,
			.first_iteration = its[0].iteration,
			.last_iteration = its[n - 1].iteration,
			.t_base_ns = r->mean_base,
			.t_ns = r->mean_nodelay,
			.t_ideal_ns = r->mean_ideal,
			.slowdown = r->s,
			.launch_slowdown = r->s_launch,
			.m_w = r->m_w,
			.m_w_add = r->mw.add,
			.m_s = r->m_s,
			.m_s_add = r->ms.add,
			.m_w_ranks = w->mw_ranks.len ? w->mw_ranks.buf : NULL,
			.verdict = wi_verdict_name(r->verdict),
			.ranks_per_cell = w->ranks_per_cell,
			.cell_ops = w->cell_ops,
			.vpp = w->vpp,
			.has_clock_error = w->has_clock,
			.clock_error_ns = w->clock.error_ns,
			.notes = w->notes.len ? w->notes.buf : NULL,
		};
		rc = db_agg_add_whatif(wr, &row);
		for (size_t g = 0; !rc && g < r->by_group.n; g++)
			rc = db_agg_add_whatif_optype(wr, wi_group_name(r->by_group.key[g]),
						      r->by_group.ratio[g]);
		for (size_t k = 0; !rc && k < r->nworkers; k++) {
			const struct wi_worker *x = &r->workers[k];
			struct db_agg_whatif_worker wk = {
				.rank = x->rank,
				.dp_rank = x->dp_rank,
				.stage = x->stage,
				.s_dp = x->s_dp,
				.s_pp = x->s_pp,
				.slowdown = x->s_w,
				.slow_rank = -1,
			}; /* an op trace has no clock to correct */
			const struct agg_wi_cell *c = agg_whatif_cell(w, x->dp_rank, x->stage);
			if (c)
				wk.slow_rank = c->slow;
			wk.has_clock_offset = worker_offset(w, x, &wk.clock_offset_ns);
			rc = db_agg_add_whatif_worker(wr, &wk);
		}
		for (size_t s = 0; !rc && s < r->nsteps; s++)
			rc = db_agg_add_whatif_step(wr, r->step[s], r->t_nodelay[s], r->t_ideal[s],
						    r->slowdown[s]);
	}
	if (rc) {
		db_agg_rollback(wr);
		return rc;
	}
	return db_agg_commit(wr);
}

struct grid {
	struct db_agg_op_worker *v;
	size_t n, cap;
};

static int add_worker(void *ctx, const struct db_agg_op_worker *w)
{
	struct grid *g = ctx;
	PP_GROW(g->v, g->n, g->cap, 256);
	g->v[g->n++] = *w;
	return 0;
}

int agg_whatif_topology(struct db *db, const int *iters, int n, struct topology *t)
{
	struct grid g = { 0 };
	int rc = 0, dp = 0, pp = 0;
	for (int i = 0; i < n && !rc; i++)
		rc = db_agg_op_workers(db, iters[i], add_worker, &g);
	for (size_t i = 0; i < g.n; i++) {
		dp = g.v[i].dp_rank + 1 > dp ? g.v[i].dp_rank + 1 : dp;
		pp = g.v[i].stage + 1 > pp ? g.v[i].stage + 1 : pp;
	}
	size_t cells = (size_t)dp * (size_t)pp;
	bool ok = !rc && g.n && cells <= g.n;
	int *rank_at = ok ? xmalloc(cells * sizeof(int)) : NULL;
	for (size_t c = 0; c < cells && ok; c++)
		rank_at[c] = -1;
	for (size_t i = 0; i < g.n && ok; i++) {
		const struct db_agg_op_worker *w = &g.v[i];
		int *cell = &rank_at[(size_t)w->dp_rank * (size_t)pp + (size_t)w->stage];
		ok = w->dp_rank >= 0 && w->stage >= 0 && w->rank >= 0 && w->rank <= INT32_MAX &&
		     (*cell < 0 || *cell == (int)w->rank);
		*cell = (int)w->rank;
	}
	for (size_t c = 0; c < cells && ok; c++)
		ok = rank_at[c] >= 0;
	if (ok && !topo_from_grid(t, dp, pp, rank_at)) {
		strbuf_reset(&t->origin);
		strbuf_addstr(&t->origin, "the dp_rank and stage of its traces");
	}
	free(rank_at);
	free(g.v);
	return rc;
}

void agg_whatif_init(struct agg_whatif *w)
{
	memset(w, 0, sizeof(*w));
	strbuf_init(&w->why, 0);
	strbuf_init(&w->notes, 0);
	strbuf_init(&w->mw_ranks, 0);
}

void agg_whatif_release(struct agg_whatif *w)
{
	if (w->state == AGG_WI_DONE)
		whatif_result_release(&w->r);
	whatif_clock_release(&w->clock);
	whatif_free(w->engine);
	strbuf_release(&w->why);
	strbuf_release(&w->notes);
	strbuf_release(&w->mw_ranks);
	free(w->step.op);
	free(w->cells);
	agg_whatif_init(w);
}

/* Clock offsets from the ops that end together; when they are larger than
 * their error, the table's times corrected and the engine built again. */
static int correct_clocks(struct agg_whatif *w, struct wi_table *tab, struct whatif **e,
			  struct strbuf *err)
{
	whatif_clock_estimate(*e, &w->clock);
	w->has_clock = true;
	int64_t most = 0;
	for (int i = 0; i < w->clock.dp * w->clock.pp; i++)
		if (llabs(w->clock.offset_ns[i]) > most)
			most = llabs(w->clock.offset_ns[i]);
	if (!w->clock.connected)
		strbuf_addstr(&w->notes, "clocks: some workers share no op that ends with "
					 "another's: their clocks are taken as right\n");
	if (most <= w->clock.error_ns) {
		if (most)
			strbuf_addf(&w->notes,
				    "clocks: offsets up to %.1f us, within their error (%.1f us): "
				    "not corrected\n",
				    (double)most / 1e3, (double)w->clock.error_ns / 1e3);
		return 0;
	}
	for (size_t i = 0; i < tab->n; i++) {
		struct wi_op *o = &tab->ops[i];
		int64_t off = w->clock.offset_ns[o->stage * w->clock.dp + o->dp_rank];
		o->start_ns -= off;
		o->end_ns -= off;
	}
	w->clock_corrected = true;
	strbuf_addf(&w->notes,
		    "clocks: corrected, offsets up to %.1f us (estimated error %.1f us, from "
		    "%zu samples over %zu worker pairs)\n",
		    (double)most / 1e3, (double)w->clock.error_ns / 1e3, w->clock.nsamples,
		    w->clock.nedges);
	whatif_free(*e);
	*e = NULL;
	return whatif_new(tab, NULL, e, err);
}

/* One step of the analysis for the report (w->step): the one with the
 * largest per-step slowdown, every op of every replica recorded and
 * simulated ideal, taken from the engine e before it is freed. */
static void capture(struct whatif *e, struct agg_whatif *w)
{
	const struct whatif_result *r = &w->r;
	struct agg_wi_step *st = &w->step;
	size_t k = 0, nodes = w->shape.nodes, dp = (size_t)w->shape.dp;
	for (size_t i = 1; i < r->nsteps; i++)
		if (r->slowdown[i] > r->slowdown[k])
			k = i;
	if (!r->nsteps || !nodes || !dp)
		return;
	size_t per_step = dp * nodes, all = r->nsteps * per_step;
	double *rs = xmalloc(all * sizeof(double)), *re = xmalloc(all * sizeof(double));
	double *is = xmalloc(all * sizeof(double)), *ie = xmalloc(all * sizeof(double));
	whatif_recorded(e, rs, re);
	whatif_timeline(e, WI_SCEN_IDEAL, is, ie);
	st->index = k;
	st->dp = (int)dp;
	st->nodes = nodes;
	st->op = xcalloc(per_step, sizeof(*st->op));
	for (size_t d = 0; d < dp; d++)
		for (size_t v = 0; v < nodes; v++) {
			struct whatif_node n;
			size_t i = (k * dp + d) * nodes + v;
			struct agg_wi_op *o = &st->op[d * nodes + v];
			whatif_node(e, v, &n);
			*o = (struct agg_wi_op){ n.stage, n.optype, n.seq_id, n.mc, n.placeholder,
						 rs[i],   re[i],    is[i],    ie[i] };
		}
	PP_FREE_ALL(rs, re, is, ie);
}

/* The engine on tab: validation, the clocks (Kineto ops), every scenario. */
static void analyse(struct agg_whatif *w, struct wi_table *tab, bool kineto)
{
	struct whatif *e = NULL;
	if (whatif_new(tab, NULL, &e, &w->why) || (kineto && correct_clocks(w, tab, &e, &w->why))) {
		w->state = AGG_WI_REJECTED;
		whatif_free(e);
		return;
	}
	whatif_shape(e, &w->shape);
	strbuf_addstr(&w->notes, whatif_notes(e));
	whatif_run(e, &w->r);
	capture(e, w);
	w->engine = e; /* the critical path walks it (agg_why.c) */
	w->state = AGG_WI_DONE;
	format_ranks(w);
}

int agg_whatif_run(struct db *db, const struct agg_iter *its, size_t n, const struct topology *t,
		   int vpp, const char *vpp_rule, double margin, struct agg_whatif *w)
{
	struct wi_table tab;
	struct load L = { .t = t && t->nrank ? t : NULL, .unplaced_rank = -1 };
	size_t nrows = 0;
	int64_t t0 = pp_now_ns();
	int rc = 0;
	int *rep = NULL;
	wi_table_init(&tab);
	L.tab = &tab;
	if (L.t) {
		rep = xmalloc(((size_t)L.t->nrank + 1) * sizeof(*rep));
		w->ranks_per_cell = pick_workers(L.t, its, n, rep);
		L.rep = rep;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		L.it = &its[i];
		L.trace_id = 0;
		rc = db_agg_ops(db, its[i].iteration, add_op, &L);
		nrows += L.nrows;
		L.nrows = 0;
	}
	if (rc)
		goto out;
	w->nops = tab.n;
	w->kineto = L.kineto;
	if (L.kineto) {
		w->cell_ops = "lowest rank of each (dp_rank, stage) cell";
		if (w->ranks_per_cell > 1) {
			strbuf_addf(
				&w->notes,
				"cells: each (dp_rank, stage) cell has %d ranks (TP %d x CP %d x "
				"EP %d); its lowest is its worker\n",
				w->ranks_per_cell, L.t->tp, L.t->cp, L.t->ep);
			w->margin = margin;
			name_slow_ranks(w, L.t, its, n);
		}
		w->vpp = vpp > 0 ? vpp : 1;
		if (vpp_rule)
			strbuf_addf(&w->notes, "vpp: %s\n", vpp_rule);
		label(&tab, L.step, L.t->pp, w->vpp);
	} else {
		w->ranks_per_cell = 1;
		w->cell_ops = "the op trace's worker";
	}
	bool ok = true;
	if (!nrows) {
		w->state = AGG_WI_NO_OPS;
	} else if (L.unplaced_rank >= 0) {
		w->state = AGG_WI_INCOMPLETE;
		strbuf_addf(&w->why,
			    "rank %lld has ops but no dp_rank and stage: its trace does not "
			    "record them and no topology places it",
			    (long long)L.unplaced_rank);
	} else if (!tab.n || !grid_complete(its, n, &tab, &w->why)) {
		w->state = AGG_WI_INCOMPLETE;
		if (!tab.n)
			strbuf_addf(&w->why, "the ops stored for these iterations belong to no "
					     "aggregated rank (ranks in conflict)");
	} else if ((rc = read_sources(db, &L, &tab, &w->why, &ok)) || !ok) {
		w->state = AGG_WI_INCOMPLETE;
	} else {
		analyse(w, &tab, L.kineto && !L.nsources);
	}
	if (!rc)
		rc = store(db, L.t, its, n, vpp, w);
	w->seconds = (double)(pp_now_ns() - t0) / 1e9;
out:
	free(L.sources);
	free(L.step);
	free(rep);
	wi_table_release(&tab);
	return rc;
}
