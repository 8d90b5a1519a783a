/* why_cpath.c — the critical path of each step (docs/why.md "The critical
 * path"), on the what-if engine's dependency graph and recorded times.
 *
 * The walk goes backwards with a cursor t, from the end of the op that
 * ends last in the step (over every replica) to the step's start:
 *
 *   at op v of worker (d, stage):
 *     v syncs with others (a p2p pair, a collective) and one of them
 *     arrived after v started → [last arrival, t) is v's (its transfer),
 *     and the path goes on at that last participant (possibly on another
 *     replica: a DP collective);
 *     otherwise [start of v, t) is v's; then the binding dependency: the
 *     predecessor of v that ended last; a gap between its end and t is a
 *     delay segment of v's worker; no predecessor: a start segment back
 *     to the step's start.
 *
 * A dependency here is one of the what-if model's (docs/whatif.md §3) or
 * the worker's program order: its compute or p2p op that ended last before
 * the op started (the CPU issues them in order: a 1F1B stage posts a
 * backward receive after its forward compute, which the model does not
 * link). Whichever ended last binds.
 *
 * Each segment ends where the previous one (in time) starts and t only
 * decreases, so the segments are disjoint and cover [step start, step end]
 * exactly whatever the recorded times (negative launch delays only clip
 * a predecessor's segment). Zero-length segments are left out.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/optype.h"
#include "util/cmp.h"
#include "util/pp.h"
#include "whatif/whatif.h"
#include "why.h"

const char *why_seg_kind_name(enum why_seg_kind k)
{
	switch (k) {
	case WHY_SEG_DELAY: return "delay";
	case WHY_SEG_START: return "start";
	default: return "op";
	}
}

/* One step's walk. */
struct walk {
	const struct whatif *e;
	size_t N, DP, si;
	const double *rs, *re; /* whatif_recorded() */
	struct whatif_node *node;
	int64_t origin, iteration;
	/* Per worker (d · stages + stage) of the step: its computes and p2p
	 * ops of non-zero length by end, order[first[w] .. first[w + 1]). */
	struct ended {
		double end;
		int32_t v;
	} * order;
	size_t *first;
	int stages;
	struct why_seg *seg; /* in reverse time order */
	size_t nseg, cap;
};

static size_t lane(const struct walk *W, size_t d, size_t v)
{
	return (W->si * W->DP + d) * W->N + v;
}

static void emit(struct walk *W, size_t d, size_t v, enum why_seg_kind kind, double from, double to)
{
	if (to <= from)
		return;
	PP_GROW(W->seg, W->nseg, W->cap, 256);
	const struct whatif_node *nd = &W->node[v];
	size_t i = lane(W, d, v);
	W->seg[W->nseg++] = (struct why_seg){
		.iteration = W->iteration,
		.rank = whatif_cell_rank(W->e, (int)d, nd->stage),
		.dp_rank = (int32_t)d,
		.stage = nd->stage,
		.optype = (int16_t)nd->optype,
		.op_seq = nd->seq_id,
		.kind = (uint8_t)kind,
		.placeholder = nd->placeholder,
		.start_ns = W->origin + llround(from),
		.dur_ns = llround(to) - llround(from),
		.op_start_ns = W->origin + llround(W->rs[i]),
		.op_end_ns = W->origin + llround(W->re[i]),
	};
}

/* The participant of v's sync group (v in lane d) that arrived last:
 * *ud, *uv; v itself on a tie. */
static void last_arrival(const struct walk *W, size_t d, size_t v, size_t *ud, size_t *uv)
{
	const int32_t *mem;
	size_t n = whatif_node_group(W->e, v, &mem);
	size_t d0 = W->node[v].dp_sync ? 0 : d, d1 = W->node[v].dp_sync ? W->DP : d + 1;
	double best = W->rs[lane(W, d, v)];
	*ud = d;
	*uv = v;
	for (size_t x = d0; x < d1; x++)
		for (size_t m = 0; m < n; m++) {
			double s = W->rs[lane(W, x, (size_t)mem[m])];
			if (s > best) {
				best = s;
				*ud = x;
				*uv = (size_t)mem[m];
			}
		}
}

static bool in_order(int ty)
{
	return ty == OP_FWD_COMPUTE || ty == OP_BWD_COMPUTE ||
	       (ty >= OP_FWD_SEND && ty <= OP_BWD_RECV);
}

static int cmp_end(const void *a, const void *b)
{
	const struct ended *x = a, *y = b;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return (x->v > y->v) - (x->v < y->v);
}

/* W->order and W->first for step W->si. */
static void index_order(struct walk *W)
{
	size_t k = 0;
	for (size_t d = 0; d < W->DP; d++)
		for (int st = 0; st < W->stages; st++) {
			W->first[d * (size_t)W->stages + (size_t)st] = k;
			size_t k0 = k;
			for (size_t v = 0; v < W->N; v++) {
				size_t i = lane(W, d, v);
				if (W->node[v].stage == st && in_order(W->node[v].optype) &&
				    W->re[i] > W->rs[i])
					W->order[k++] = (struct ended){ W->re[i], (int32_t)v };
			}
			qsort(W->order + k0, k - k0, sizeof(*W->order), cmp_end);
		}
	W->first[W->DP * (size_t)W->stages] = k;
}

/* The worker's op (of in_order()) that ended last at or before s, other
 * than v; SIZE_MAX when none. */
static size_t previous(const struct walk *W, size_t d, size_t v, double s)
{
	size_t w = d * (size_t)W->stages + (size_t)W->node[v].stage;
	size_t lo = W->first[w], hi = W->first[w + 1];
	while (lo < hi) { /* the first whose end is after s */
		size_t mid = (lo + hi) / 2;
		if (W->order[mid].end <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > W->first[w] && (size_t)W->order[lo - 1].v == v)
		lo--;
	return lo > W->first[w] ? (size_t)W->order[lo - 1].v : SIZE_MAX;
}

static void walk_step(struct walk *W)
{
	size_t DP = W->DP, N = W->N;
	double lo = INFINITY, t = -INFINITY;
	size_t d = 0, v = 0;
	for (size_t x = 0; x < DP; x++)
		for (size_t u = 0; u < N; u++) {
			size_t i = lane(W, x, u);
			lo = W->rs[i] < lo ? W->rs[i] : lo;
			if (W->re[i] > t) {
				t = W->re[i];
				d = x;
				v = u;
			}
		}
	index_order(W);
	/* Every move goes to a predecessor, to a group's last arrival (then to
	 * one of its predecessors) or to an op that ended before the current
	 * one started: with the model acyclic (whatif_new() checks it) this
	 * ends; the bound only guards against inconsistent times. */
	for (size_t steps = 0; steps < 4 * N * DP + 4; steps++) {
		double s = W->rs[lane(W, d, v)];
		if (W->node[v].comm) {
			size_t ud, uv;
			last_arrival(W, d, v, &ud, &uv);
			double g = W->rs[lane(W, ud, uv)];
			if (g > s) {
				emit(W, d, v, WHY_SEG_OP, g, t);
				t = g < t ? g : t;
				d = ud;
				v = uv;
				s = g;
			}
		}
		emit(W, d, v, WHY_SEG_OP, s, t);
		t = s < t ? s : t;
		const int32_t *pred;
		size_t np = whatif_node_preds(W->e, v, &pred), best = SIZE_MAX;
		for (size_t k = 0; k < np; k++)
			if (best == SIZE_MAX ||
			    W->re[lane(W, d, (size_t)pred[k])] > W->re[lane(W, d, best)])
				best = (size_t)pred[k];
		size_t prev = previous(W, d, v, s);
		if (prev != SIZE_MAX &&
		    (best == SIZE_MAX || W->re[lane(W, d, prev)] > W->re[lane(W, d, best)]))
			best = prev;
		if (best == SIZE_MAX) {
			emit(W, d, v, WHY_SEG_START, lo, t);
			return;
		}
		double pe = W->re[lane(W, d, best)];
		emit(W, d, v, WHY_SEG_DELAY, pe, t);
		t = pe < t ? pe : t;
		v = best;
	}
}

/* Per step: by (op type, stage, kind) and by rank, largest first. */
static int cmp_share(const void *a, const void *b)
{
	const struct why_share *x = a, *y = b;
	const int64_t kx[] = { x->iteration, -x->ns, x->optype, x->stage, x->kind, x->rank };
	const int64_t ky[] = { y->iteration, -y->ns, y->optype, y->stage, y->kind, y->rank };
	return cmp_i64s(kx, ky, 6);
}

/* Adds seg's time to the share with the same (iteration, optype, stage,
 * kind) — or, by_rank, the same (iteration, rank) — among v[0..*n). */
static void add_share(struct why_share **v, size_t *n, size_t *cap, const struct why_seg *s,
		      bool by_rank, size_t from)
{
	int16_t ty = s->kind == WHY_SEG_OP ? s->optype : -1;
	for (size_t i = from; i < *n; i++) {
		struct why_share *x = &(*v)[i];
		bool same = by_rank ? x->rank == s->rank
				    : x->optype == ty && x->stage == s->stage && x->kind == s->kind;
		if (!same)
			continue;
		x->ns += s->dur_ns;
		if (!by_rank && x->rank != s->rank)
			x->rank = -1; /* more than one rank */
		return;
	}
	PP_GROW(*v, *n, *cap, 64);
	(*v)[(*n)++] = (struct why_share){ .iteration = s->iteration,
					   .rank = s->rank,
					   .stage = by_rank ? -1 : s->stage,
					   .optype = by_rank ? -1 : ty,
					   .kind = by_rank ? 0 : s->kind,
					   .ns = s->dur_ns };
}

void why_cpath_run(const struct whatif *e, struct why_cpath *out)
{
	struct whatif_shape sh;
	memset(out, 0, sizeof(*out));
	whatif_shape(e, &sh);
	struct walk W = { .e = e, .N = sh.nodes, .DP = (size_t)sh.dp };
	size_t total = sh.nsteps * W.DP * W.N;
	double *rs = xmalloc((total + 1) * sizeof(*rs)), *re = xmalloc((total + 1) * sizeof(*re));
	whatif_recorded(e, rs, re);
	W.rs = rs;
	W.re = re;
	W.node = xmalloc((W.N + 1) * sizeof(*W.node));
	for (size_t v = 0; v < W.N; v++)
		whatif_node(e, v, &W.node[v]);
	W.stages = sh.pp;
	W.order = xmalloc((W.N * W.DP + 1) * sizeof(*W.order));
	W.first = xmalloc((W.DP * (size_t)sh.pp + 1) * sizeof(*W.first));
	out->nsteps = sh.nsteps;
	out->step_iteration = xmalloc((sh.nsteps + 1) * sizeof(int64_t));
	out->step_start_ns = xmalloc((sh.nsteps + 1) * sizeof(int64_t));
	out->step_ns = xmalloc((sh.nsteps + 1) * sizeof(int64_t));
	size_t cap = 0, capt = 0, capr = 0;
	for (size_t si = 0; si < sh.nsteps; si++) {
		W.si = si;
		W.iteration = whatif_step(e, si, &W.origin);
		W.nseg = 0;
		walk_step(&W);
		out->step_iteration[si] = W.iteration;
		int64_t span = 0;
		size_t first = out->nseg, t0 = out->nby_type, r0 = out->nby_rank;
		for (size_t k = W.nseg; k-- > 0;) {
			PP_GROW(out->seg, out->nseg, cap, 1024);
			struct why_seg *s = &out->seg[out->nseg];
			*s = W.seg[k];
			s->seq = (int32_t)(out->nseg - first);
			span += s->dur_ns;
			out->nseg++;
			add_share(&out->by_type, &out->nby_type, &capt, s, false, t0);
			add_share(&out->by_rank, &out->nby_rank, &capr, s, true, r0);
		}
		out->step_start_ns[si] = out->nseg > first ? out->seg[first].start_ns : W.origin;
		out->step_ns[si] = span;
		for (size_t i = t0; i < out->nby_type; i++)
			out->by_type[i].share =
				span ? (double)out->by_type[i].ns / (double)span : 0;
		for (size_t i = r0; i < out->nby_rank; i++)
			out->by_rank[i].share =
				span ? (double)out->by_rank[i].ns / (double)span : 0;
	}
	if (out->nby_type)
		qsort(out->by_type, out->nby_type, sizeof(*out->by_type), cmp_share);
	if (out->nby_rank)
		qsort(out->by_rank, out->nby_rank, sizeof(*out->by_rank), cmp_share);
	PP_FREE_ALL(W.seg, W.node, W.order, W.first, rs, re);
}

void why_cpath_release(struct why_cpath *c)
{
	PP_FREE_ALL(c->seg, c->step_iteration, c->step_start_ns, c->step_ns, c->by_type,
		    c->by_rank);
	memset(c, 0, sizeof(*c));
}

void why_cpath_sentence(const struct why_cpath *c, size_t si, size_t n, struct strbuf *sb)
{
	size_t k = 0;
	for (size_t i = 0; i < c->nby_type && k < n; i++) {
		const struct why_share *x = &c->by_type[i];
		if (x->iteration != c->step_iteration[si] || !x->ns)
			continue;
		strbuf_addf(sb, k ? "; %.1f %% " : "%.1f %% of the step is ", 100 * x->share);
		if (x->kind == WHY_SEG_START)
			strbuf_addf(sb, "before the first op, on stage %d", (int)x->stage);
		else if (x->kind == WHY_SEG_DELAY)
			strbuf_addf(sb, "launch delays on stage %d", (int)x->stage);
		else
			strbuf_addf(sb, "%s on stage %d", op_type_name(x->optype), (int)x->stage);
		if (x->rank >= 0)
			strbuf_addf(sb, " (rank %d)", (int)x->rank);
		k++;
	}
}
