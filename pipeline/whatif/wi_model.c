/* wi_model.c — validation of an op table and the dependency model of one
 * step of one model replica (docs/whatif.md §1.2, §2, §3).
 *
 * Design notes:
 * - Nodes are the ops of the first slice (smallest step, dp_rank 0), one per
 *   (stage, optype, seq_id), numbered stage by stage, then the placeholders.
 *   Every other (step, dp_rank) slice must have exactly that op set; its rows
 *   land on (node, lane) by index, so lanes never depend on row order.
 * - "Time order" sorts first-slice ops by (start, seq_id, type rank). A
 *   placeholder params-all-gather sorts first, a placeholder
 *   grads-reduce-scatter last: they have no recorded time.
 * - The schedule is Kahn's order with sync groups: a node is started when its
 *   predecessors have finished; a group finishes when its last member has
 *   started. Nodes that never start lie on (or behind) a cycle of the graph
 *   with each group collapsed to one node; that is reported with the cycle.
 * - Placeholders get times by replaying the recorded trace through the
 *   schedule: a placeholder starts when its predecessors end and ends when
 *   its group's last member arrives, so its launch delay and transfer are 0.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cmp.h"
#include "util/htab.h"
#include "util/pp.h"
#include "whatif_int.h"

#define NT OP_NTYPES

#define fail wi_errf

/* "optype_seq_stage". */
static void op_name(char *buf, size_t len, int type, long seq, int stage)
{
	snprintf(buf, len, "%s_%ld_%d", op_type_name(type), seq, stage);
}

static size_t step_index(const struct whatif *e, int64_t step)
{
	return cmp_floor_i64(e->steps, e->nsteps, step);
}

/* ---- building state ---------------------------------------------------- */

struct build {
	struct whatif *e;
	const struct wi_table *t;
	struct strbuf *err;
	int32_t *base;      /* [stage·NT + type]: first node of the (stage, type) */
	int32_t *cnt;       /* [stage·NT + type]: nodes of it (placeholders too) */
	int64_t *row0;      /* first-slice row of each real node, -1 = none */
	int32_t (*edge)[2]; /* (v, u): v waits for u */
	size_t nedge, capedge;
	int32_t *gmem;
	size_t ngmem, capgmem;
	struct wi_sync *group;
	size_t ngroup, capgroup;
};

static void add_edge(struct build *b, int32_t v, int32_t u)
{
	PP_GROW(b->edge, b->nedge, b->capedge, 1024);
	b->edge[b->nedge][0] = v;
	b->edge[b->nedge][1] = u;
	b->nedge++;
}

/* Each op waits for the one before it. */
static void add_chain(struct build *b, const int32_t *ops, size_t n)
{
	for (size_t i = 1; i < n; i++)
		add_edge(b, ops[i], ops[i - 1]);
}

static void add_group(struct build *b, const int32_t *mem, int32_t n, bool dpsync)
{
	PP_GROW(b->group, b->ngroup, b->capgroup, 256);
	PP_RESERVE(b->gmem, b->ngmem, (size_t)n, b->capgmem, 512);
	struct wi_sync *g = &b->group[b->ngroup];
	g->first = (int32_t)b->ngmem;
	g->n = n;
	g->dpsync = dpsync;
	for (int32_t i = 0; i < n; i++) {
		struct wi_node *nd = &b->e->node[mem[i]];
		nd->group = (int32_t)b->ngroup;
		nd->flags |= WI_NODE_COMM | (dpsync ? WI_NODE_DPSYNC : 0);
		b->gmem[b->ngmem++] = mem[i];
	}
	b->ngroup++;
}

/* The node of (stage, type, seq), or -1. */
static int32_t node_of(const struct build *b, int stage, int type, int64_t seq)
{
	if (stage < 0 || stage >= b->e->pp || seq < 0 || seq >= b->cnt[stage * NT + type])
		return -1;
	return b->base[stage * NT + type] + (int32_t)seq;
}

/* ---- time order -------------------------------------------------------- */

static const uint8_t *sort_order;
static const struct wi_node *sort_nodes;

static int cmp_time(const void *a, const void *b)
{
	const struct wi_node *x = &sort_nodes[*(const int32_t *)a];
	const struct wi_node *y = &sort_nodes[*(const int32_t *)b];
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (int)sort_order[x->optype] - (int)sort_order[y->optype];
}

/* The nodes of stage s whose type is in types[0..ntypes), in time order;
 * returns how many (out has room for every node of the stage). */
static size_t stage_ops(const struct build *b, int s, const int *types, int ntypes, int32_t *out)
{
	size_t k = 0;
	for (int i = 0; i < ntypes; i++)
		for (int32_t j = 0; j < b->cnt[s * NT + types[i]]; j++)
			out[k++] = b->base[s * NT + types[i]] + j;
	sort_order = b->t->order;
	sort_nodes = b->e->node;
	qsort(out, k, sizeof(*out), cmp_time);
	return k;
}

/* One stream: stage_ops() of these types, each waiting for the one before
 * it (add_chain()); returns how many, in out. */
static size_t stage_stream(struct build *b, int s, const int *types, int ntypes, int32_t *out)
{
	size_t n = stage_ops(b, s, types, ntypes, out);
	add_chain(b, out, n);
	return n;
}

/* ---- validation of the rows and the first slice ------------------------- */

static int check_rows(struct build *b)
{
	struct whatif *e = b->e;
	const struct wi_table *t = b->t;
	char where[320];
	int64_t maxdp = -1, maxst = -1;
	if (t->n == 0)
		return fail(b->err, "%s%sthe op trace has no rows", t->src, t->src[0] ? ": " : "");
	if (t->n > (size_t)INT32_MAX)
		return fail(b->err, "%s: more than 2^31 op rows", t->src);
	for (size_t i = 0; i < t->n; i++) {
		const struct wi_op *o = &t->ops[i];
		const char *what = NULL;
		if (o->optype >= NT)
			what = "optype is not an op type";
		else if (o->dp_rank < 0)
			what = "dp_rank is negative";
		else if (o->stage < 0)
			what = "stage is negative";
		else if (o->seq_id < 0)
			what = "seq_id is negative";
		else if (o->end_ns < o->start_ns)
			what = "duration is negative";
		if (what) {
			wi_table_where(t, i, where, sizeof(where));
			return fail(b->err, "%s%s", where, what);
		}
		if (o->dp_rank > maxdp)
			maxdp = o->dp_rank;
		if (o->stage > maxst)
			maxst = o->stage;
	}
	e->dp = (int)maxdp + 1;
	e->pp = (int)maxst + 1;
	/* Distinct steps: rows come grouped by step, so a hash set sees few
	 * lookups past the last step seen. */
	struct imap seen;
	imap_init(&seen);
	size_t k = 0, cap = 64;
	int64_t *steps = xmalloc(cap * sizeof(*steps));
	for (size_t i = 0; i < t->n; i++) {
		int64_t st = t->ops[i].step;
		if (k && steps[k - 1] == st)
			continue;
		uint32_t got = *imap_ref(&seen, st, (uint32_t)k);
		if (got != k)
			continue;
		PP_GROW(steps, k, cap, 64);
		steps[k++] = st;
	}
	imap_release(&seen);
	qsort(steps, k, sizeof(*steps), cmp_i64);
	e->steps = steps;
	e->nsteps = k;
	return 0;
}

/* Counts the first slice's ops per (stage, type) and checks seq_ids. */
static int check_first_slice(struct build *b, int32_t *maxseq, int64_t **first_row)
{
	struct whatif *e = b->e;
	const struct wi_table *t = b->t;
	char where[320], name[96];
	size_t ncell = (size_t)e->pp * NT;
	for (size_t c = 0; c < ncell; c++)
		maxseq[c] = -1;
	for (size_t i = 0; i < t->n; i++) {
		const struct wi_op *o = &t->ops[i];
		if (o->step != e->steps[0] || o->dp_rank != 0)
			continue;
		int32_t *m = &maxseq[o->stage * NT + o->optype];
		if (o->seq_id > *m)
			*m = o->seq_id;
	}
	size_t total = 0;
	for (size_t c = 0; c < ncell; c++)
		total += (size_t)(maxseq[c] + 1);
	int64_t *fr = xmalloc((total ? total : 1) * sizeof(*fr));
	for (size_t i = 0; i < total; i++)
		fr[i] = -1;
	size_t off = 0;
	for (size_t c = 0; c < ncell; c++) {
		b->base[c] = (int32_t)off;
		b->cnt[c] = maxseq[c] + 1;
		off += (size_t)b->cnt[c];
	}
	*first_row = fr;
	for (size_t i = 0; i < t->n; i++) {
		const struct wi_op *o = &t->ops[i];
		if (o->step != e->steps[0] || o->dp_rank != 0)
			continue;
		int64_t *slot = &fr[b->base[o->stage * NT + o->optype] + o->seq_id];
		if (*slot >= 0) {
			wi_table_where(t, i, where, sizeof(where));
			op_name(name, sizeof(name), o->optype, o->seq_id, o->stage);
			return fail(b->err, "%s%s appears twice in step %lld, dp_rank 0 (rank %d)",
				    where, name, (long long)o->step, (int)o->rank);
		}
		*slot = (int64_t)i;
	}
	for (size_t c = 0; c < ncell; c++)
		for (int32_t s = 0; s < b->cnt[c]; s++)
			if (fr[b->base[c] + s] < 0)
				return fail(
					b->err,
					"%s%sseq_ids of %s on stage %d are not contiguous in step %lld, dp_rank 0: %d is missing below %d",
					t->src, t->src[0] ? ": " : "", op_type_name((int)(c % NT)),
					(int)(c / NT), (long long)e->steps[0], (int)s,
					(int)maxseq[c]);
	return 0;
}

/* Types with one op per stage and step, hard-wired by the model. */
static bool single_type(int type)
{
	return type == OP_GC || type == OP_LAYERNORM || type == OP_EMBEDDING || type == OP_CLIP ||
	       type == OP_OPTIMIZER || type == OP_SEP_AR;
}

static bool dp_type(int type)
{
	return type == OP_PARAMS_AG || type == OP_GRADS_RS || type == OP_SEP_AR;
}

/* The §2 invariants of the first slice, and which placeholders it needs:
 * need[stage·NT + type] = 1. */
static int check_model_rules(struct build *b, const int32_t *maxseq, uint8_t *need)
{
	struct whatif *e = b->e;
	const char *src = b->t->src, *sep = src[0] ? ": " : "";
	int64_t s0 = e->steps[0];
	for (int s = 0; s < e->pp; s++) {
		const int32_t *c = &b->cnt[s * NT];
		if (c[OP_FWD_COMPUTE] == 0 || c[OP_BWD_COMPUTE] == 0)
			return fail(
				b->err,
				"%s%sstage %d has %d forward-compute and %d backward-compute ops in step %lld, dp_rank 0: every stage needs both",
				src, sep, s, (int)c[OP_FWD_COMPUTE], (int)c[OP_BWD_COMPUTE],
				(long long)s0);
		if (c[OP_FWD_COMPUTE] != c[OP_BWD_COMPUTE])
			return fail(
				b->err,
				"%s%sstage %d has %d forward-compute but %d backward-compute ops in step %lld, dp_rank 0: the counts must be equal",
				src, sep, s, (int)c[OP_FWD_COMPUTE], (int)c[OP_BWD_COMPUTE],
				(long long)s0);
		for (int ty = 0; ty < NT; ty++) {
			if (single_type(ty) && c[ty] > 1)
				return fail(
					b->err,
					"%s%s%s_%d_%d: the model has one %s op per stage and step",
					src, sep, op_type_name(ty), (int)maxseq[s * NT + ty], s,
					op_type_name(ty));
			if (dp_type(ty) && c[ty] > 0 && !e->use_dp)
				return fail(
					b->err,
					"%s%s%s ops on stage %d, but the job has no data parallelism (DP %d, dsp_size %lld)",
					src, sep, op_type_name(ty), s, e->dp,
					(long long)e->opts.dsp_size);
		}
		bool ends = s == 0 || s == e->pp - 1;
		if (c[OP_EMBEDDING] > 0 && !ends)
			return fail(
				b->err,
				"%s%sembedding-grads-all-reduce on stage %d: only the first and the last stage have one",
				src, sep, s);
		if (c[OP_OPTIMIZER] == 0)
			return fail(
				b->err,
				"%s%sstage %d has no optimizer op in step %lld, dp_rank 0: its end is the end of the step",
				src, sep, s, (long long)s0);
		if (c[OP_CLIP] == 0)
			return fail(
				b->err,
				"%s%sstage %d has no optimizer-clip-main-grad op in step %lld, dp_rank 0: the model's global barrier needs it",
				src, sep, s, (long long)s0);
		if (c[OP_GC] == 0)
			need[s * NT + OP_GC] = 1;
		if (c[OP_LAYERNORM] == 0)
			need[s * NT + OP_LAYERNORM] = 1;
		if (ends && c[OP_EMBEDDING] == 0)
			need[s * NT + OP_EMBEDDING] = 1;
		if (e->use_dp && c[OP_PARAMS_AG] == 0)
			need[s * NT + OP_PARAMS_AG] = 1;
		if (e->use_dp && c[OP_GRADS_RS] == 0)
			need[s * NT + OP_GRADS_RS] = 1;
		if (e->use_dp && e->overlapped && c[OP_SEP_AR] == 0)
			need[s * NT + OP_SEP_AR] = 1;
	}
	return 0;
}

/* Creates the nodes: real ones from the first slice, then placeholders. */
static void make_nodes(struct build *b, const int64_t *fr, const uint8_t *need)
{
	struct whatif *e = b->e;
	size_t nreal = 0, nph = 0;
	for (int c = 0; c < e->pp * NT; c++) {
		nreal += (size_t)b->cnt[c];
		nph += need[c];
	}
	e->n = nreal + nph;
	e->node = xcalloc(e->n, sizeof(*e->node));
	b->row0 = xmalloc(e->n * sizeof(*b->row0));
	for (size_t v = 0; v < nreal; v++) {
		const struct wi_op *o = &b->t->ops[fr[v]];
		struct wi_node *nd = &e->node[v];
		nd->seq = o->seq_id;
		nd->stage = o->stage;
		nd->mc = o->mc;
		nd->gmc = o->gmc;
		nd->optype = o->optype;
		nd->group = -1;
		nd->t0 = o->start_ns;
		nd->t1 = o->end_ns;
		b->row0[v] = fr[v];
	}
	/* Placeholders: (stage, type) cells of one node past the real ones. */
	size_t v = nreal;
	for (int c = 0; c < e->pp * NT; c++) {
		if (!need[c])
			continue;
		struct wi_node *nd = &e->node[v];
		int ty = c % NT;
		nd->seq = 0;
		nd->stage = (int16_t)(c / NT);
		nd->mc = (ty == OP_PARAMS_AG || ty == OP_GRADS_RS) ? 0 : -1;
		nd->gmc = -1;
		nd->optype = (uint8_t)ty;
		nd->flags = WI_NODE_PLACEHOLDER;
		nd->group = -1;
		nd->t0 = nd->t1 = ty == OP_GRADS_RS ? INT64_MAX : INT64_MIN;
		b->row0[v] = -1;
		b->base[c] = (int32_t)v;
		b->cnt[c] = 1;
		strbuf_addf(&e->notes,
			    "placeholder: a zero-length %s_0_%d in every step and replica\n",
			    op_type_name(ty), c / NT);
		v++;
	}
}

/* ---- the dependency model (§3) ----------------------------------------- */

size_t whatif_p2p_match(const struct whatif_span *comp, size_t n, const struct whatif_span *op,
			size_t m, bool recv, int32_t *match)
{
	int64_t last_start = INT64_MIN, first_end = INT64_MAX;
	for (size_t k = 0; k < n; k++) {
		if (comp[k].start > last_start)
			last_start = comp[k].start;
		if (comp[k].end < first_end)
			first_end = comp[k].end;
	}
	/* Matchable: a recv posted before the last compute starts, a send
	 * ending after the first compute ends (50 µs slack). */
	size_t cnt = 0;
	for (size_t i = 0; i < m; i++) {
		bool ok = recv ? (double)op[i].start <= (double)last_start + WI_NS_EPS_MATCH
			       : (double)op[i].end >= (double)first_end - WI_NS_EPS_MATCH;
		match[i] = ok ? 0 : -1;
		cnt += ok;
	}
	int32_t cid = recv && cnt + 1 == n ? 1 : 0; /* the first compute has no recv */
	for (size_t i = 0; i < m; i++)
		if (match[i] == 0)
			match[i] = cid++;
	return cnt;
}

/* §3.3: matches the p2p ops of direction dir (0 forward, 1 backward) of
 * stage s to computes; marks no-ops in noop[] and adds the edges. */
static int match_p2p(struct build *b, int s, int dir, uint8_t *noop, int32_t *tmp)
{
	struct whatif *e = b->e;
	const int comp_type = dir ? OP_BWD_COMPUTE : OP_FWD_COMPUTE;
	int32_t ncomp = b->cnt[s * NT + comp_type];
	struct whatif_span *comp = xmalloc(((size_t)ncomp + 1) * sizeof(*comp));
	struct whatif_span *ops = xmalloc((e->n + 1) * sizeof(*ops));
	int32_t *match = xmalloc((e->n + 1) * sizeof(*match));
	int rc = 0;
	for (int32_t k = 0; k < ncomp; k++) {
		const struct wi_node *c = &e->node[b->base[s * NT + comp_type] + k];
		comp[k] = (struct whatif_span){ c->t0, c->t1 };
	}
	for (int recv = 0; recv < 2 && !rc; recv++) {
		int type = dir ? (recv ? OP_BWD_RECV : OP_BWD_SEND)
			       : (recv ? OP_FWD_RECV : OP_FWD_SEND);
		size_t n = stage_ops(b, s, &type, 1, tmp);
		for (size_t i = 0; i < n; i++)
			ops[i] = (struct whatif_span){ e->node[tmp[i]].t0, e->node[tmp[i]].t1 };
		int32_t cnt = (int32_t)whatif_p2p_match(comp, (size_t)ncomp, ops, n, recv, match);
		for (size_t i = 0; i < n; i++)
			noop[tmp[i]] = match[i] < 0;
		if (cnt != ncomp) {
			if (s != 0 && s != e->pp - 1) {
				rc = fail(
					b->err,
					"%s%sstage %d has %d launched %s ops for %d %s ops in step %lld, dp_rank 0: only the first and the last stage may have fewer",
					b->t->src, b->t->src[0] ? ": " : "", s, (int)cnt,
					op_type_name(type), (int)ncomp, op_type_name(comp_type),
					(long long)e->steps[0]);
				break;
			}
			if (cnt != 0 && cnt + 1 != ncomp) {
				rc = fail(
					b->err,
					"%s%sstage %d has %d launched %s ops for %d %s ops in step %lld, dp_rank 0: expected %d, %d or 0",
					b->t->src, b->t->src[0] ? ": " : "", s, (int)cnt,
					op_type_name(type), (int)ncomp, op_type_name(comp_type),
					(long long)e->steps[0], (int)ncomp, (int)ncomp - 1);
				break;
			}
		}
		for (size_t i = 0; i < n; i++) {
			int32_t op = tmp[i];
			if (match[i] < 0)
				continue; /* type-1 no-op: never launched */
			int32_t cid = match[i];
			int32_t comp_node = b->base[s * NT + comp_type] + cid;
			/* Type-2 no-op: the peer chunk is outside the model. */
			int delta = (type == OP_FWD_SEND || type == OP_BWD_RECV) ? 1 : -1;
			int peer = e->node[comp_node].gmc + delta;
			noop[op] = peer < 0 || peer >= e->vpp * e->pp;
			if (recv)
				add_edge(b, comp_node, op);
			else
				add_edge(b, op, comp_node);
			if (recv && cid >= 1)
				add_edge(b, op, comp_node - 1);
		}
	}
	free(comp);
	free(ops);
	free(match);
	return rc;
}

/* §3.4: pairs the launched p2p ops across stages; no-ops are alone. */
static int pair_p2p(struct build *b, const uint8_t *noop, int32_t *tmp, int32_t *tmp2)
{
	struct whatif *e = b->e;
	static const int sends[2] = { OP_FWD_SEND, OP_BWD_SEND };
	static const int recvs[2] = { OP_FWD_RECV, OP_BWD_RECV };
	char n1[96];
	for (int dir = 0; dir < 2; dir++) {
		for (int s = 0; s < e->pp; s++) {
			int peer = dir ? (s - 1 + e->pp) % e->pp : (s + 1) % e->pp;
			size_t ns = stage_ops(b, s, &sends[dir], 1, tmp);
			size_t nr = stage_ops(b, peer, &recvs[dir], 1, tmp2);
			size_t j = 0, k = 0;
			for (;;) {
				while (j < ns && noop[tmp[j]])
					j++;
				while (k < nr && noop[tmp2[k]])
					k++;
				if (j == ns && k == nr)
					break;
				if (j == ns || k == nr) {
					int32_t op = j < ns ? tmp[j] : tmp2[k];
					const struct wi_node *o = &e->node[op];
					op_name(n1, sizeof(n1), o->optype, o->seq, o->stage);
					return fail(
						b->err,
						"%s%s%s has no peer: stage %d's launched %s ops and stage %d's launched %s ops differ in number (step %lld, dp_rank 0)",
						b->t->src, b->t->src[0] ? ": " : "", n1, s,
						op_type_name(sends[dir]), peer,
						op_type_name(recvs[dir]), (long long)e->steps[0]);
				}
				int32_t pair[2] = { tmp[j], tmp2[k] };
				add_group(b, pair, 2, false);
				j++;
				k++;
			}
		}
	}
	for (size_t v = 0; v < e->n; v++) {
		int ty = e->node[v].optype;
		if (ty >= OP_FWD_SEND && ty <= OP_BWD_RECV && noop[v]) {
			int32_t one = (int32_t)v;
			add_group(b, &one, 1, false);
		}
	}
	return 0;
}

/* §3.1, 3.2, 3.5: the compute chain, the p2p streams and the first
 * backward exchange. */
static int stage_streams(struct build *b, int s, int32_t *tmp)
{
	struct whatif *e = b->e;
	static const int comp[2] = { OP_FWD_COMPUTE, OP_BWD_COMPUTE };
	size_t n = stage_stream(b, s, comp, 2, tmp);
	size_t i = 0;
	while (i < n && e->node[tmp[i]].optype != OP_BWD_COMPUTE)
		i++;
	if (i >= 2 && i < n) {
		for (size_t k = 1; k <= 2; k++)
			if (e->node[tmp[i - k]].optype != OP_FWD_COMPUTE) {
				char n1[96];
				const struct wi_node *o = &e->node[tmp[i - k]];
				op_name(n1, sizeof(n1), o->optype, o->seq, o->stage);
				return fail(
					b->err,
					"%s%sthe first backward-compute of stage %d is preceded by %s: the two computes before it must be forwards (step %lld, dp_rank 0)",
					b->t->src, b->t->src[0] ? ": " : "", s, n1,
					(long long)e->steps[0]);
			}
		int32_t warm = tmp[i - 2];
		int32_t r0 = node_of(b, s, OP_BWD_RECV, 0), s0 = node_of(b, s, OP_BWD_SEND, 0);
		if (r0 >= 0)
			add_edge(b, r0, warm);
		if (s0 >= 0)
			add_edge(b, s0, warm);
	}
	for (int ty = OP_FWD_SEND; ty <= OP_BWD_RECV; ty++)
		stage_stream(b, s, &ty, 1, tmp);
	return 0;
}

/* The first (lowest time order) or last compute of type ty and chunk mc
 * on stage s by start (first) or end (last); -1 when there is none. */
static int32_t chunk_compute(const struct build *b, int s, int ty, int mc, bool last, int32_t *tmp)
{
	size_t n = stage_ops(b, s, &ty, 1, tmp);
	int32_t best = -1;
	for (size_t i = 0; i < n; i++) {
		const struct wi_node *o = &b->e->node[tmp[i]];
		if (o->mc != mc)
			continue;
		if (best < 0 || (last ? o->t1 > b->e->node[best].t1 : o->t0 < b->e->node[best].t0))
			best = tmp[i];
	}
	return best;
}

/* §3.7 (all-gathers, walked from the highest seq_id down, gate the first
 * forward of their chunk) and §3.8 (reduce-scatters, walked up, wait for
 * the last backward of theirs): the first collective met per chunk. */
static int chunk_gates(struct build *b, int s, int coll, uint8_t *done, int32_t *tmp)
{
	struct whatif *e = b->e;
	bool ag = coll == OP_PARAMS_AG;
	int comp = ag ? OP_FWD_COMPUTE : OP_BWD_COMPUTE;
	int32_t n = b->cnt[s * NT + coll];
	memset(done, 0, (size_t)e->vpp + 2);
	for (int32_t k = 0; k < n; k++) {
		int32_t i = ag ? n - 1 - k : k, op = b->base[s * NT + coll] + i;
		int mc = e->node[op].mc;
		if (mc >= -1 && mc <= e->vpp && done[mc + 1])
			continue;
		int32_t c = mc >= 0 ? chunk_compute(b, s, comp, mc, !ag, tmp) : -1;
		if (c < 0) {
			char n1[96];
			op_name(n1, sizeof(n1), coll, i, s);
			return fail(
				b->err, "%s%s%s has mc %d, but stage %d has no %s of that chunk",
				b->t->src, b->t->src[0] ? ": " : "", n1, mc, s, op_type_name(comp));
		}
		if (ag)
			add_edge(b, c, op);
		else
			add_edge(b, op, c);
		done[mc + 1] = 1;
	}
	return 0;
}

/* §3.6-3.8: the DP stream and its gates. */
static int stage_dp(struct build *b, int s, int32_t *tmp)
{
	struct whatif *e = b->e;
	static const int dpt[2] = { OP_PARAMS_AG, OP_GRADS_RS };
	stage_stream(b, s, dpt, 2, tmp);
	uint8_t *done = xmalloc((size_t)e->vpp + 2);
	int rc = chunk_gates(b, s, OP_PARAMS_AG, done, tmp);
	if (!rc && e->overlapped)
		rc = chunk_gates(b, s, OP_GRADS_RS, done, tmp);
	free(done);
	return rc;
}

/* §3.9: the end-of-step chain. */
static void stage_end(struct build *b, int s, int32_t *tmp)
{
	struct whatif *e = b->e;
	static const int comp[2] = { OP_FWD_COMPUTE, OP_BWD_COMPUTE };
	size_t n = stage_ops(b, s, comp, 2, tmp);
	int32_t last = tmp[0];
	for (size_t i = 1; i < n; i++)
		if (e->node[tmp[i]].t1 > e->node[last].t1)
			last = tmp[i];
	int32_t gc = node_of(b, s, OP_GC, 0), ln = node_of(b, s, OP_LAYERNORM, 0);
	int32_t emb = node_of(b, s, OP_EMBEDDING, 0), clip = node_of(b, s, OP_CLIP, 0);
	int32_t opt = node_of(b, s, OP_OPTIMIZER, 0);
	int32_t chain[8];
	size_t k = 0;
	add_edge(b, gc, last);
	chain[k++] = gc;
	chain[k++] = ln;
	if (emb >= 0)
		chain[k++] = emb;
	if (e->use_dp && e->overlapped) {
		int32_t rlast = node_of(b, s, OP_GRADS_RS, b->cnt[s * NT + OP_GRADS_RS] - 1);
		add_edge(b, ln, rlast);
		chain[k++] = node_of(b, s, OP_SEP_AR, 0);
	} else if (e->use_dp) {
		add_chain(b, chain, k);
		int32_t r0 = node_of(b, s, OP_GRADS_RS, 0);
		int32_t rl = node_of(b, s, OP_GRADS_RS, b->cnt[s * NT + OP_GRADS_RS] - 1);
		add_edge(b, r0, chain[k - 1]);
		for (int32_t i = 1; i < b->cnt[s * NT + OP_GRADS_RS]; i++)
			add_edge(b, r0 + i, r0 + i - 1);
		k = 0;
		chain[k++] = rl;
	}
	chain[k++] = clip;
	chain[k++] = opt;
	add_chain(b, chain, k);
}

static void build_groups(struct build *b)
{
	struct whatif *e = b->e;
	for (size_t v = 0; v < e->n; v++)
		if (e->use_dp && dp_type(e->node[v].optype)) {
			int32_t one = (int32_t)v;
			add_group(b, &one, 1, true);
		}
	int32_t emb[2] = { node_of(b, 0, OP_EMBEDDING, 0), node_of(b, e->pp - 1, OP_EMBEDDING, 0) };
	add_group(b, emb, e->pp > 1 ? 2 : 1, false);
	int32_t *clip = xmalloc((size_t)e->pp * sizeof(*clip));
	for (int s = 0; s < e->pp; s++)
		clip[s] = node_of(b, s, OP_CLIP, 0);
	add_group(b, clip, e->pp, true);
	free(clip);
}

static int cmp_edge(const void *a, const void *b)
{
	const int32_t *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Sorts and dedupes the edges into the CSR arrays. */
static void make_csr(struct build *b)
{
	struct whatif *e = b->e;
	qsort(b->edge, b->nedge, sizeof(*b->edge), cmp_edge);
	e->pred_off = xcalloc(e->n + 1, sizeof(*e->pred_off));
	e->pred = xmalloc((b->nedge ? b->nedge : 1) * sizeof(*e->pred));
	size_t k = 0;
	for (size_t i = 0; i < b->nedge; i++) {
		if (i && b->edge[i][0] == b->edge[i - 1][0] && b->edge[i][1] == b->edge[i - 1][1])
			continue;
		e->pred[k++] = b->edge[i][1];
		e->pred_off[b->edge[i][0] + 1]++;
	}
	for (size_t v = 0; v < e->n; v++)
		e->pred_off[v + 1] += e->pred_off[v];
	e->nedges = k;
	e->group = b->group;
	e->ngroups = b->ngroup;
	e->gmem = b->gmem;
	b->group = NULL;
	b->gmem = NULL;
}

/* ---- schedule, cycles ---------------------------------------------------- */

/* Describes a cycle among the nodes that never started into err. */
static int report_cycle(struct build *b, const uint8_t *started)
{
	struct whatif *e = b->e;
	/* Walk predecessors (through group mates) among unstarted nodes until
	 * a node repeats: that stretch is a cycle. */
	int32_t *seen = xmalloc(e->n * sizeof(*seen));
	int32_t *path = xmalloc((e->n + 1) * sizeof(*path));
	for (size_t v = 0; v < e->n; v++)
		seen[v] = -1;
	int32_t v = -1;
	for (size_t i = 0; i < e->n && v < 0; i++)
		if (!started[i])
			v = (int32_t)i;
	size_t len = 0;
	while (v >= 0 && seen[v] < 0) {
		seen[v] = (int32_t)len;
		path[len++] = v;
		int32_t next = -1;
		for (int32_t k = e->pred_off[v]; k < e->pred_off[v + 1] && next < 0; k++)
			if (!started[e->pred[k]])
				next = e->pred[k];
		if (next < 0 && e->node[v].group >= 0) {
			/* v waits for a group mate that waits for something. */
			const struct wi_sync *g = &e->group[e->node[v].group];
			for (int32_t m = 0; m < g->n && next < 0; m++) {
				int32_t u = e->gmem[g->first + m];
				for (int32_t k = e->pred_off[u]; k < e->pred_off[u + 1] && next < 0;
				     k++)
					if (!started[e->pred[k]])
						next = e->pred[k];
			}
		}
		v = next;
	}
	struct strbuf sb = STRBUF_INIT;
	char name[96];
	if (v >= 0) {
		for (size_t i = (size_t)seen[v]; i < len; i++) {
			const struct wi_node *o = &e->node[path[len - 1 - (i - (size_t)seen[v])]];
			op_name(name, sizeof(name), o->optype, o->seq, o->stage);
			strbuf_addf(&sb, "%s%s", sb.len ? " -> " : "", name);
			if (sb.len > 600) {
				strbuf_addstr(&sb, " -> ...");
				break;
			}
		}
	}
	pp_err(b->err, PP_ECYCLE,
	       "%s%sthe dependency model has a cycle (sync groups collapsed): %s", b->t->src,
	       b->t->src[0] ? ": " : "", sb.len ? sb.buf : "(not found)");
	strbuf_release(&sb);
	free(seen);
	free(path);
	return PP_ECYCLE;
}

static int make_schedule(struct build *b)
{
	struct whatif *e = b->e;
	int rc = 0;
	int32_t *deg = xmalloc(e->n * sizeof(*deg));
	int32_t *succ_off = xcalloc(e->n + 1, sizeof(*succ_off));
	int32_t *succ = xmalloc((e->nedges ? e->nedges : 1) * sizeof(*succ));
	int32_t *queue = xmalloc(e->n * sizeof(*queue));
	int32_t *gstarted = xcalloc(e->ngroups ? e->ngroups : 1, sizeof(*gstarted));
	uint8_t *started = xcalloc(e->n, 1);
	e->sched = xmalloc((e->n + e->ngroups) * sizeof(*e->sched));
	for (size_t v = 0; v < e->n; v++) {
		deg[v] = e->pred_off[v + 1] - e->pred_off[v];
		for (int32_t k = e->pred_off[v]; k < e->pred_off[v + 1]; k++)
			succ_off[e->pred[k] + 1]++;
	}
	for (size_t v = 0; v < e->n; v++)
		succ_off[v + 1] += succ_off[v];
	{
		int32_t *fill = xmalloc(e->n * sizeof(*fill));
		memcpy(fill, succ_off, e->n * sizeof(*fill));
		for (size_t v = 0; v < e->n; v++)
			for (int32_t k = e->pred_off[v]; k < e->pred_off[v + 1]; k++)
				succ[fill[e->pred[k]]++] = (int32_t)v;
		free(fill);
	}
	size_t head = 0, tail = 0, ns = 0;
	for (size_t v = 0; v < e->n; v++)
		if (deg[v] == 0)
			queue[tail++] = (int32_t)v;
	while (head < tail) {
		int32_t v = queue[head++];
		started[v] = 1;
		e->sched[ns++] = v;
		const struct wi_node *nd = &e->node[v];
		int32_t fin[1];
		const int32_t *done = NULL;
		int32_t ndone = 0;
		if (nd->group < 0) {
			fin[0] = v;
			done = fin;
			ndone = 1;
		} else if (++gstarted[nd->group] == e->group[nd->group].n) {
			e->sched[ns++] = ~nd->group;
			done = &e->gmem[e->group[nd->group].first];
			ndone = e->group[nd->group].n;
		}
		for (int32_t i = 0; i < ndone; i++)
			for (int32_t k = succ_off[done[i]]; k < succ_off[done[i] + 1]; k++)
				if (--deg[succ[k]] == 0)
					queue[tail++] = succ[k];
	}
	e->nsched = ns;
	if (head < e->n)
		rc = report_cycle(b, started);
	PP_FREE_ALL(deg, succ_off, succ, queue, gstarted, started);
	return rc;
}

/* ---- recorded lanes ----------------------------------------------------- */

/* Places every row on its (node, lane) relative to its step's first start;
 * checks that each slice has the first slice's ops, once each, and that
 * each (dp_rank, stage) is one rank. */
static int place_rows(struct build *b)
{
	struct whatif *e = b->e;
	const struct wi_table *t = b->t;
	char where[320], name[96];
	int rc = 0;
	size_t total = e->lanes * e->n;
	int64_t *t0 = e->origin = xmalloc(e->nsteps * sizeof(*t0));
	size_t *sidx = xmalloc(t->n * sizeof(*sidx));
	uint8_t *filled = xcalloc(total ? total : 1, 1);
	e->rs = xcalloc(total ? total : 1, sizeof(*e->rs));
	e->re = xcalloc(total ? total : 1, sizeof(*e->re));
	e->cell_rank = xmalloc((size_t)e->dp * (size_t)e->pp * sizeof(*e->cell_rank));
	struct imap rank_cell;
	imap_init(&rank_cell);
	int64_t last_rank = -1;
	uint32_t last_cell = UINT32_MAX;
	for (size_t i = 0; i < (size_t)e->dp * (size_t)e->pp; i++)
		e->cell_rank[i] = -1;
	for (size_t s = 0; s < e->nsteps; s++)
		t0[s] = INT64_MAX;
	for (size_t i = 0; i < t->n; i++) {
		sidx[i] = i && t->ops[i].step == t->ops[i - 1].step ? sidx[i - 1]
								    : step_index(e, t->ops[i].step);
		if (t->ops[i].start_ns < t0[sidx[i]])
			t0[sidx[i]] = t->ops[i].start_ns;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct wi_op *o = &t->ops[i];
		int32_t v = node_of(b, o->stage, o->optype, o->seq_id);
		if (v < 0 || (e->node[v].flags & WI_NODE_PLACEHOLDER)) {
			wi_table_where(t, i, where, sizeof(where));
			op_name(name, sizeof(name), o->optype, o->seq_id, o->stage);
			rc = fail(
				b->err,
				"%s%s (step %lld, dp_rank %d) is not an op of step %lld, dp_rank 0: every (step, dp_rank) must have the same ops",
				where, name, (long long)o->step, (int)o->dp_rank,
				(long long)e->steps[0]);
			goto out;
		}
		int32_t *cell = &e->cell_rank[o->stage * e->dp + o->dp_rank];
		uint32_t want = (uint32_t)(o->stage * e->dp + o->dp_rank), got = want;
		if (*cell < 0)
			*cell = o->rank;
		if (o->rank != last_rank || want != last_cell) {
			got = *imap_ref(&rank_cell, o->rank, want);
			last_rank = o->rank;
			last_cell = want;
		}
		if (*cell != o->rank || got != want) {
			wi_table_where(t, i, where, sizeof(where));
			rc = fail(
				b->err,
				"%srank %d at dp_rank %d, stage %d: the op trace must hold one rank per (dp_rank, stage) and one (dp_rank, stage) per rank (there: rank %d; rank %d is at dp_rank %u, stage %u)",
				where, (int)o->rank, (int)o->dp_rank, (int)o->stage, (int)*cell,
				(int)o->rank, got % (uint32_t)e->dp, got / (uint32_t)e->dp);
			goto out;
		}
		size_t k = wi_idx(e, sidx[i], (size_t)v, (size_t)o->dp_rank);
		if (filled[k]) {
			wi_table_where(t, i, where, sizeof(where));
			op_name(name, sizeof(name), o->optype, o->seq_id, o->stage);
			rc = fail(b->err, "%s%s appears twice in step %lld, dp_rank %d", where,
				  name, (long long)o->step, (int)o->dp_rank);
			goto out;
		}
		filled[k] = 1;
		e->rs[k] = (double)(o->start_ns - t0[sidx[i]]);
		e->re[k] = (double)(o->end_ns - t0[sidx[i]]);
	}
	/* No duplicates: all there when the count is right. */
	size_t nreal = 0;
	for (size_t v = 0; v < e->n; v++)
		nreal += !(e->node[v].flags & WI_NODE_PLACEHOLDER);
	for (size_t si = 0; si < e->nsteps && t->n != nreal * e->lanes; si++)
		for (int d = 0; d < e->dp; d++)
			for (size_t v = 0; v < e->n; v++) {
				if (e->node[v].flags & WI_NODE_PLACEHOLDER)
					continue;
				if (filled[wi_idx(e, si, v, (size_t)d)])
					continue;
				const struct wi_node *o = &e->node[v];
				op_name(name, sizeof(name), o->optype, o->seq, o->stage);
				rc = fail(
					b->err,
					"%s%sstep %lld, dp_rank %d lacks %s, which step %lld, dp_rank 0 has: every (step, dp_rank) must have the same ops",
					t->src, t->src[0] ? ": " : "", (long long)e->steps[si], d,
					name, (long long)e->steps[0]);
				goto out;
			}
out:
	imap_release(&rank_cell);
	free(sidx);
	free(filled);
	return rc;
}

/* §4 (Lanes) in one pass over the schedule: placeholder times, launch delays,
 * transfer times, and val (duration or transfer). */
static void derive_lanes(struct whatif *e)
{
	size_t total = e->lanes * e->n;
	size_t maxl = e->bs * (size_t)e->dp;
	e->delay = xmalloc(total * sizeof(*e->delay));
	e->val = xmalloc(total * sizeof(*e->val));
	double *g = xmalloc(maxl * sizeof(*g));
	for (size_t bl = 0; bl < e->nblocks; bl++) {
		size_t nb = wi_block_steps(e, bl), nl = nb * (size_t)e->dp;
		size_t off = bl * e->bs * (size_t)e->dp * e->n;
		double *rs = e->rs + off, *re = e->re + off;
		double *dl = e->delay + off, *val = e->val + off;
		for (size_t i = 0; i < e->nsched; i++) {
			int32_t it = e->sched[i];
			if (it >= 0) {
				size_t v = (size_t)it;
				const struct wi_node *nd = &e->node[v];
				for (size_t l = 0; l < nl; l++)
					g[l] = 0;
				for (int32_t k = e->pred_off[v]; k < e->pred_off[v + 1]; k++) {
					const double *pe = re + (size_t)e->pred[k] * nl;
					for (size_t l = 0; l < nl; l++)
						g[l] = k == e->pred_off[v] || pe[l] > g[l] ? pe[l]
											   : g[l];
				}
				if (nd->flags & WI_NODE_PLACEHOLDER) {
					memcpy(rs + v * nl, g, nl * sizeof(*g));
					memcpy(re + v * nl, g, nl * sizeof(*g));
				}
				for (size_t l = 0; l < nl; l++) {
					double d = rs[v * nl + l] - g[l];
					dl[v * nl + l] = d <= WI_NS_NEG_CLAMP ? 0 : d;
					val[v * nl + l] = re[v * nl + l] - rs[v * nl + l];
				}
				continue;
			}
			const struct wi_sync *gr = &e->group[~it];
			for (int32_t m = 0; m < gr->n; m++) {
				const double *ps = rs + (size_t)e->gmem[gr->first + m] * nl;
				for (size_t l = 0; l < nl; l++)
					g[l] = m == 0 || ps[l] > g[l] ? ps[l] : g[l];
			}
			if (gr->dpsync)
				wi_dp_max(g, nb, e->dp);
			for (int32_t m = 0; m < gr->n; m++) {
				size_t v = (size_t)e->gmem[gr->first + m];
				if (e->node[v].flags & WI_NODE_PLACEHOLDER)
					memcpy(re + v * nl, g, nl * sizeof(*g));
				for (size_t l = 0; l < nl; l++) {
					double x = re[v * nl + l] - g[l];
					val[v * nl + l] = x <= WI_NS_NEG_CLAMP ? 0 : x;
				}
			}
		}
	}
	free(g);
}

/* Is the type's ideal a mean (compute-like) rather than a median? */
static bool mean_type(int ty)
{
	return ty == OP_FWD_COMPUTE || ty == OP_BWD_COMPUTE || ty == OP_OPTIMIZER || ty == OP_GC;
}

/* The k-th smallest of x[0..n) (x is reordered): Hoare's selection. */
static double select_kth(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		double p = x[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (x[i] < p)
				i++;
			while (x[j] > p)
				j--;
			if (i <= j) {
				double tmp = x[i];
				x[i] = x[j];
				x[j] = tmp;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return x[k];
	}
	return x[k];
}

double wi_median(double *x, size_t n)
{
	double hi = select_kth(x, n, n / 2);
	if (n % 2)
		return hi;
	double lo = x[0]; /* after selection, x[0 .. n/2) <= hi: take their max */
	for (size_t i = 1; i < n / 2; i++)
		lo = x[i] > lo ? x[i] : lo;
	return (lo + hi) / 2;
}

/* §4 (Scenarios): one ideal value per type, pooled over every op of the type. */
static void ideal_values(struct whatif *e)
{
	size_t count[NT] = { 0 };
	for (size_t v = 0; v < e->n; v++)
		count[e->node[v].optype] += e->lanes;
	size_t maxc = 0;
	for (int ty = 0; ty < NT; ty++)
		maxc = count[ty] > maxc ? count[ty] : maxc;
	double *buf = xmalloc((maxc ? maxc : 1) * sizeof(*buf));
	e->ideal = xmalloc(e->n * sizeof(*e->ideal));
	for (int ty = 0; ty < NT; ty++) {
		size_t k = 0;
		for (size_t bl = 0; bl < e->nblocks; bl++) {
			size_t nl = wi_block_steps(e, bl) * (size_t)e->dp;
			const double *val = e->val + bl * e->bs * (size_t)e->dp * e->n;
			for (size_t v = 0; v < e->n; v++)
				if (e->node[v].optype == ty) {
					memcpy(buf + k, val + v * nl, nl * sizeof(*buf));
					k += nl;
				}
		}
		double x = 0;
		if (k && mean_type(ty)) {
			for (size_t i = 0; i < k; i++)
				x += buf[i];
			x /= (double)k;
		} else if (k) {
			x = wi_median(buf, k);
		}
		e->ideal_type[ty] = x;
	}
	for (size_t v = 0; v < e->n; v++)
		e->ideal[v] = e->ideal_type[e->node[v].optype];
	free(buf);
}

static void recorded_spans(struct whatif *e)
{
	e->span_base = xmalloc(e->nsteps * sizeof(*e->span_base));
	for (size_t bl = 0; bl < e->nblocks; bl++) {
		size_t nb = wi_block_steps(e, bl), nl = nb * (size_t)e->dp;
		size_t off = bl * e->bs * (size_t)e->dp * e->n;
		for (size_t k = 0; k < nb; k++) {
			double lo = INFINITY, hi = -INFINITY;
			for (size_t v = 0; v < e->n; v++)
				for (size_t l = k * (size_t)e->dp; l < (k + 1) * (size_t)e->dp;
				     l++) {
					lo = e->rs[off + v * nl + l] < lo ? e->rs[off + v * nl + l]
									  : lo;
					hi = e->re[off + v * nl + l] > hi ? e->re[off + v * nl + l]
									  : hi;
				}
			e->span_base[bl * e->bs + k] = hi - lo;
		}
	}
}

int wi_model_build(struct whatif *e, const struct wi_table *t, struct strbuf *err)
{
	struct build b = { .e = e, .t = t, .err = err };
	int32_t *maxseq = NULL, *tmp = NULL, *tmp2 = NULL;
	int64_t *fr = NULL;
	uint8_t *need = NULL, *noop = NULL;
	int rc = check_rows(&b);
	if (rc)
		goto out;
	e->use_dp = (int64_t)e->dp * e->opts.dsp_size > 1;
	for (size_t i = 0; i < t->n && !e->overlapped; i++)
		e->overlapped = t->ops[i].optype == OP_SEP_AR;
	size_t ncell = (size_t)e->pp * NT;
	b.base = xcalloc(ncell, sizeof(*b.base));
	b.cnt = xcalloc(ncell, sizeof(*b.cnt));
	maxseq = xmalloc(ncell * sizeof(*maxseq));
	need = xcalloc(ncell, 1);
	if ((rc = check_first_slice(&b, maxseq, &fr)))
		goto out;
	if ((rc = check_model_rules(&b, maxseq, need)))
		goto out;
	make_nodes(&b, fr, need);
	int maxmc = -1;
	for (size_t v = 0; v < e->n; v++)
		if (!(e->node[v].flags & WI_NODE_PLACEHOLDER) && e->node[v].mc > maxmc)
			maxmc = e->node[v].mc;
	e->vpp = maxmc + 1;
	tmp = xmalloc(e->n * sizeof(*tmp));
	tmp2 = xmalloc(e->n * sizeof(*tmp2));
	noop = xcalloc(e->n, 1);
	for (int s = 0; s < e->pp && !rc; s++) {
		rc = match_p2p(&b, s, 0, noop, tmp);
		if (!rc)
			rc = match_p2p(&b, s, 1, noop, tmp);
	}
	if (!rc)
		rc = pair_p2p(&b, noop, tmp, tmp2);
	for (int s = 0; s < e->pp && !rc; s++) {
		rc = stage_streams(&b, s, tmp);
		if (!rc && e->use_dp)
			rc = stage_dp(&b, s, tmp);
		if (!rc)
			stage_end(&b, s, tmp);
	}
	if (rc)
		goto out;
	build_groups(&b);
	make_csr(&b);
	if ((rc = make_schedule(&b)))
		goto out;
	e->bs = e->dp >= 32 ? 1 : (size_t)((32 + e->dp - 1) / e->dp);
	if (e->bs > e->nsteps)
		e->bs = e->nsteps;
	e->nblocks = (e->nsteps + e->bs - 1) / e->bs;
	e->lanes = e->nsteps * (size_t)e->dp;
	if ((rc = place_rows(&b)))
		goto out;
	derive_lanes(e);
	ideal_values(e);
	recorded_spans(e);
out:
	PP_FREE_ALL(b.base, b.cnt, b.row0, b.edge, b.gmem, b.group, maxseq, fr, need, noop, tmp,
		    tmp2);
	return rc;
}
