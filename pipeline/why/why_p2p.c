/* why_p2p.c — the pipeline sends and receives (docs/why.md "P2P").
 *
 *   the op rows of one (iteration, rank) → its calls (its p2p rows with one
 *   interval: one kernel) → per direction, the computes' labels and
 *   whatif_p2p_match() (docs/whatif.md §3.3): a matched row names the
 *   compute whose output it sends or whose input it receives, hence its
 *   chunk and micro-batch; a row whose peer chunk lies outside the model
 *   moves nothing → every transfer's key (iteration, pipeline, direction,
 *   producing virtual stage, micro-batch) → sorted, one send and one
 *   receive with a key are a pair → once the clocks are known, the waits.
 *
 * What must stay true: a row is a transfer exactly when the what-if model
 * pairs it (the same matching and the same no-op rules), and nothing
 * unpaired gets a number.
 */
#include <stdlib.h>
#include <string.h>

#include "model/optype.h"
#include "model/rank_result.h"
#include "util/cmp.h"
#include "util/pp.h"
#include "whatif/whatif.h"
#include "why_int.h"

static int cmp_op(const void *a, const void *b)
{
	const struct why_op *x = a, *y = b;
	const int64_t kx[] = { x->iteration, x->rank, x->optype, x->start_ns, x->seq_id };
	const int64_t ky[] = { y->iteration, y->rank, y->optype, y->start_ns, y->seq_id };
	return cmp_i64s(kx, ky, 5);
}

static int cmp_span(const void *a, const void *b)
{
	const struct whatif_span *x = a, *y = b;
	const int64_t kx[] = { x->start, x->end }, ky[] = { y->start, y->end };
	return cmp_i64s(kx, ky, 2);
}

static bool is_p2p(int ty)
{
	return ty >= OP_FWD_SEND && ty <= OP_BWD_RECV;
}

/* The chunk and micro-batch of compute c, pos-th of its type on the rank. */
static void label(const struct wrun *R, const struct why_op *c, size_t pos, int32_t *mc,
		  int32_t *mb)
{
	*mc = *mb = -1;
	if (c->mc >= 0) {
		*mc = c->mc;
		*mb = c->mb_id;
	} else if (c->step_seq >= 0) {
		rr_vpp_label(c->step_seq, c->optype == OP_BWD_COMPUTE, R->P, R->V, mc, mb);
	} else if (R->V == 1) {
		*mc = 0;
		*mb = (int32_t)pos;
	}
}

/* The rank at stage s of pipeline g, or -1. */
static int32_t rank_at(const struct wrun *R, int32_t g, int s)
{
	uint32_t v = imap_get(&R->place, (int64_t)g * R->P + s);
	return v == IMAP_EMPTY ? -1 : (int32_t)v;
}

/* The call of interval (start, end) among calls[c0 .. ncall). */
static int32_t find_call(const struct wrun *R, size_t c0, int64_t start, int64_t end)
{
	size_t lo = c0, hi = R->ncall;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct wcall *c = &R->call[mid];
		if (c->start < start || (c->start == start && c->end < end))
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int32_t)lo;
}

/* Rows [lo, hi) of o[] with optype ty (o sorted by optype within a block). */
static void type_range(const struct why_op *o, size_t n, int ty, size_t *lo, size_t *hi)
{
	*lo = 0;
	while (*lo < n && o[*lo].optype < ty)
		(*lo)++;
	*hi = *lo;
	while (*hi < n && o[*hi].optype == ty)
		(*hi)++;
}

static void add_ep(struct wrun *R, const struct wep *e)
{
	why_grow((void **)&R->ep, &R->capep, R->nep, sizeof(*R->ep));
	R->ep[R->nep++] = *e;
	R->call[e->call].nep++;
}

static int cmp_ep_row(const void *a, const void *b)
{
	const struct wep *x = a, *y = b;
	const int64_t kx[] = { x->call, x->dir, x->role }, ky[] = { y->call, y->dir, y->role };
	return cmp_i64s(kx, ky, 3);
}

static void block_eps(struct wrun *R, const struct why_op *o, size_t n, struct whatif_span *sp,
		      struct whatif_span *cs, int32_t *match);

/* The calls and transfers of one (iteration, rank): o[0..n), sorted; its
 * transfers by call, direction and role. */
static void block(struct wrun *R, const struct why_op *o, size_t n, struct whatif_span *sp,
		  struct whatif_span *cs, int32_t *match)
{
	size_t e0 = R->nep;
	block_eps(R, o, n, sp, cs, match);
	why_sort(R->ep + e0, R->nep - e0, sizeof(*R->ep), cmp_ep_row);
}

static void block_eps(struct wrun *R, const struct why_op *o, size_t n, struct whatif_span *sp,
		      struct whatif_span *cs, int32_t *match)
{
	int32_t ii = why_iter_index(R, o[0].iteration), rank = o[0].rank;
	int32_t ri = why_rank_index(R, rank);
	size_t c0 = R->ncall, k = 0;
	for (size_t i = 0; i < n; i++)
		if (is_p2p(o[i].optype))
			sp[k++] = (struct whatif_span){ o[i].start_ns, o[i].end_ns };
	if (!k)
		return;
	qsort(sp, k, sizeof(*sp), cmp_span);
	const struct why_rank *place = ri >= 0 ? &R->rk[ri] : NULL;
	bool placed = place && place->stage >= 0 && place->stage < R->P && place->pp_group >= 0;
	for (size_t i = 0; i < k; i++) {
		if (i && !cmp_span(&sp[i - 1], &sp[i]))
			continue;
		why_grow((void **)&R->call, &R->capcall, R->ncall, sizeof(*R->call));
		R->call[R->ncall] = (struct wcall){ .ii = ii,
						    .ri = ri,
						    .seq = (int32_t)(R->ncall - c0),
						    .start = sp[i].start,
						    .end = sp[i].end,
						    .status = placed ? WHY_OK : WHY_NO_PLACE };
		R->ncall++;
	}
	if (!placed)
		return;
	int s = place->stage, P = R->P;
	int32_t g = place->pp_group;
	for (int dir = 0; dir < 2; dir++) {
		size_t clo, chi;
		type_range(o, n, dir ? OP_BWD_COMPUTE : OP_FWD_COMPUTE, &clo, &chi);
		size_t ncomp = chi - clo;
		for (size_t i = 0; i < ncomp; i++)
			cs[i] = (struct whatif_span){ o[clo + i].start_ns, o[clo + i].end_ns };
		for (int role = 0; role < 2; role++) {
			int ty = dir ? (role ? OP_BWD_RECV : OP_BWD_SEND)
				     : (role ? OP_FWD_RECV : OP_FWD_SEND);
			size_t lo, hi;
			type_range(o, n, ty, &lo, &hi);
			if (lo == hi)
				continue;
			for (size_t i = lo; i < hi; i++)
				sp[i - lo] = (struct whatif_span){ o[i].start_ns, o[i].end_ns };
			size_t cnt = whatif_p2p_match(cs, ncomp, sp, hi - lo, role, match);
			bool ends = s == 0 || s == P - 1;
			bool valid = cnt == ncomp || (ends && (cnt == 0 || cnt + 1 == ncomp));
			/* Downstream: a forward send, a backward receive. */
			int delta = (dir == WHY_FORWARD) == (role == WHY_SEND) ? 1 : -1;
			for (size_t i = lo; i < hi; i++) {
				struct wep e = {
					.call = find_call(R, c0, o[i].start_ns, o[i].end_ns),
					.peer_call = -1,
					.peer_rank = rank_at(R, g, ((s + delta) % P + P) % P),
					.mb = -1,
					.chunk = -1,
					.dir = (uint8_t)dir,
					.role = (uint8_t)role,
					.status = WHY_UNLABELLED,
				};
				int32_t m = valid ? match[i - lo] : 0;
				if (valid && m < 0)
					continue; /* type-1 no-op: never launched */
				int32_t mc = -1, mb = -1;
				if (valid)
					label(R, &o[clo + (size_t)m], (size_t)m, &mc, &mb);
				if (mc < 0) {
					add_ep(R, &e);
					continue;
				}
				int gmc = mc * P + s, pvs = gmc + delta;
				if (pvs < 0 || pvs >= P * R->V)
					continue; /* type-2 no-op: the peer chunk is outside */
				int producer = role == WHY_SEND ? gmc : pvs;
				const int64_t key[5] = { ii, g, dir, producer, mb };
				memcpy(e.key, key, sizeof(key));
				e.mb = mb;
				e.chunk = mc;
				e.peer_rank = rank_at(R, g, pvs % P);
				e.status = WHY_OK;
				add_ep(R, &e);
			}
		}
	}
}

/* A transfer's place in the pairing: its key packed (iteration index and
 * pipeline; producing virtual stage, micro-batch, direction and role)
 * and its index. */
struct keyed {
	uint64_t k1, k2;
	int32_t idx;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	if (x->k2 != y->k2)
		return x->k2 < y->k2 ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static struct keyed keyed_of(const struct wep *e, int32_t idx)
{
	/* key[]: iteration index, pipeline, direction, producer, micro-batch;
	 * each fits in 31 bits */
	return (struct keyed){ (uint64_t)e->key[0] << 32 | (uint32_t)e->key[1],
			       (uint64_t)e->key[3] << 33 | (uint64_t)(uint32_t)e->key[4] << 2 |
				       (uint64_t)e->key[2] << 1 | e->role,
			       idx };
}

/* Why transfer e has no partner. */
static uint8_t unpaired(const struct wrun *R, const struct wep *e)
{
	int32_t ii = R->call[e->call].ii;
	if (e->peer_rank < 0 || !why_has_trace(R, ii, e->peer_rank) ||
	    imap_get(&R->has_ops, why_key(ii, e->peer_rank)) == IMAP_EMPTY)
		return WHY_PEER_MISSING;
	return WHY_NO_PEER_ROW;
}

static void pair(struct wrun *R)
{
	struct keyed *v = why_big((R->nep + 1) * sizeof(*v), false);
	size_t n = 0;
	for (size_t i = 0; i < R->nep; i++)
		if (R->ep[i].status == WHY_OK)
			v[n++] = keyed_of(&R->ep[i], (int32_t)i);
	why_sort(v, n, sizeof(*v), cmp_keyed);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j].k1 == v[i].k1 && v[j].k2 >> 1 == v[i].k2 >> 1; j++)
			;
		struct wep *a = &R->ep[v[i].idx];
		if (j - i == 2 && (v[i].k2 & 1) == WHY_SEND && (v[i + 1].k2 & 1) == WHY_RECV) {
			struct wep *b = &R->ep[v[i + 1].idx];
			a->peer_call = b->call;
			b->peer_call = a->call;
		} else if (j - i == 1) {
			a->status = unpaired(R, a);
		} else {
			for (size_t k = i; k < j; k++)
				R->ep[v[k].idx].status = WHY_AMBIGUOUS;
		}
	}
	free(v);
}

/* The end of the (iteration, rank) block of w->op that starts at i, and
 * whether its rows are in order. */
static size_t block_end(const struct why *w, size_t i, bool *sorted)
{
	size_t j = i + 1;
	*sorted = true;
	for (; j < w->nop && w->op[j].iteration == w->op[i].iteration &&
	       w->op[j].rank == w->op[i].rank;
	     j++)
		*sorted &= cmp_op(&w->op[j - 1], &w->op[j]) <= 0;
	return j;
}

/* Each (iteration, rank) block of w->op sorted in place. */
static void sort_blocks(struct why *w)
{
	bool sorted;
	for (size_t i = 0, j; i < w->nop; i = j)
		if (j = block_end(w, i, &sorted), !sorted)
			qsort(w->op + i, j - i, sizeof(*w->op), cmp_op);
}

/* A block of w->op: its key and rows. */
struct oprun {
	int64_t iteration;
	int32_t rank;
	size_t first, n;
};

static int cmp_oprun(const void *a, const void *b)
{
	const struct oprun *x = a, *y = b;
	const int64_t kx[] = { x->iteration, x->rank, (int64_t)x->first };
	const int64_t ky[] = { y->iteration, y->rank, (int64_t)y->first };
	return cmp_i64s(kx, ky, 3);
}

/* Sorts w->op by (iteration, rank, optype, start, seq_id), cheaply for
 * the usual input, each trace's rows together and in order (a trace's
 * ops come by type and seq_id): the blocks are sorted only when they need
 * it, then ordered by their key, the rows moved once. */
static void sort_ops(struct why *w)
{
	struct oprun *run = NULL;
	size_t nrun = 0, cap = 0;
	bool in_order = true, sorted;
	sort_blocks(w);
	for (size_t i = 0, j; i < w->nop; i = j) {
		j = block_end(w, i, &sorted);
		why_grow((void **)&run, &cap, nrun, sizeof(*run));
		run[nrun] = (struct oprun){ w->op[i].iteration, w->op[i].rank, i, j - i };
		if (nrun) { /* strictly after the block before: no key twice */
			const int64_t a[] = { run[nrun - 1].iteration, run[nrun - 1].rank };
			const int64_t b[] = { run[nrun].iteration, run[nrun].rank };
			in_order &= cmp_i64s(a, b, 2) < 0;
		}
		nrun++;
	}
	if (!in_order) {
		qsort(run, nrun, sizeof(*run), cmp_oprun);
		struct why_op *o = why_big((w->nop + 1) * sizeof(*o), false);
		for (size_t r = 0, k = 0; r < nrun; k += run[r].n, r++)
			memcpy(o + k, w->op + run[r].first, run[r].n * sizeof(*o));
		free(w->op);
		w->op = o;
		w->capop = w->nop + 1;
		sort_blocks(w); /* blocks of one key are adjacent now */
	}
	free(run);
}

void why_p2p_match(struct wrun *R)
{
	struct why *w = R->w;
	sort_ops(w);
	size_t most = 0;
	bool sorted;
	for (size_t i = 0, j; i < w->nop; i = j) {
		j = block_end(w, i, &sorted);
		most = j - i > most ? j - i : most;
	}
	struct whatif_span *sp = xmalloc((most + 1) * sizeof(*sp));
	struct whatif_span *cs = xmalloc((most + 1) * sizeof(*cs));
	int32_t *match = xmalloc((most + 1) * sizeof(*match));
	for (size_t i = 0, j; i < w->nop; i = j) {
		j = block_end(w, i, &sorted);
		block(R, w->op + i, j - i, sp, cs, match);
	}
	free(sp);
	free(cs);
	free(match);
	pair(R);
}

/* ---- measures ------------------------------------------------------- */

static int64_t corrected(const struct wrun *R, const struct wcall *c)
{
	return c->start - (c->ri >= 0 ? R->off[c->ri] : 0);
}

static int64_t clamp(int64_t x, int64_t lo, int64_t hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* The side of the neighbour a transfer goes to or comes from. */
static uint8_t side_of(const struct wep *e)
{
	return (e->dir == WHY_FORWARD) == (e->role == WHY_RECV) ? WHY_SIDE_PREVIOUS : WHY_SIDE_NEXT;
}

static int cmp_hop(const void *a, const void *b)
{
	const struct why_hop *x = a, *y = b;
	const int64_t kx[] = { x->iteration, x->stage, x->peer_stage };
	const int64_t ky[] = { y->iteration, y->stage, y->peer_stage };
	return cmp_i64s(kx, ky, 3);
}

static int cmp_trace(const void *a, const void *b)
{
	const struct why_trace *x = a, *y = b;
	const int64_t kx[] = { x->iteration, x->rank }, ky[] = { y->iteration, y->rank };
	return cmp_i64s(kx, ky, 2);
}

/* The kernels' rows, their transfers and the last peer of each. */
static void kernel_rows(struct wrun *R, int32_t *last_peer)
{
	struct why_result *r = R->r;
	r->kernels = why_big((R->ncall + 1) * sizeof(*r->kernels), true);
	r->p2p = why_big((R->nep + 1) * sizeof(*r->p2p), true);
	size_t e = 0;
	for (size_t c = 0; c < R->ncall; c++) {
		const struct wcall *cl = &R->call[c];
		if (cl->status == WHY_OK && !cl->nep) {
			R->noop_calls++;
			while (e < R->nep && R->ep[e].call == (int32_t)c)
				e++;
			continue;
		}
		int32_t ki = (int32_t)r->nkernels++;
		struct why_p2p_kernel *k = &r->kernels[ki];
		*k = (struct why_p2p_kernel){
			.iteration = R->iters[cl->ii],
			.rank = cl->ri >= 0 ? R->rk[cl->ri].rank : -1,
			.stage = cl->ri >= 0 ? R->rk[cl->ri].stage : -1,
			.seq = cl->seq,
			.start_ns = corrected(R, cl),
			.dur_ns = cl->end - cl->start,
			.waited_for = -1,
			.transfers = cl->nep,
			.status = cl->status,
		};
		int64_t last = INT64_MIN;
		const struct wep *lastep = NULL;
		for (; e < R->nep && R->ep[e].call == (int32_t)c; e++) {
			const struct wep *x = &R->ep[e];
			struct why_p2p *p = &r->p2p[r->np2p++];
			*p = (struct why_p2p){
				.iteration = k->iteration,
				.rank = k->rank,
				.peer_rank = x->peer_rank,
				.kernel = ki,
				.microbatch = x->mb,
				.chunk = x->chunk,
				.start_ns = k->start_ns,
				.dur_ns = k->dur_ns,
				.dir = x->dir,
				.role = x->role,
				.status = x->status,
			};
			if (x->status != WHY_OK || x->peer_call < 0) {
				if (k->status == WHY_OK)
					k->status =
						x->status != WHY_OK ? x->status : WHY_NO_PEER_ROW;
				r->p2p_unpaired++;
				continue;
			}
			p->peer_start_ns = corrected(R, &R->call[x->peer_call]);
			p->wait_ns = clamp(p->peer_start_ns - p->start_ns, 0, p->dur_ns);
			p->transfer_ns = p->dur_ns - p->wait_ns;
			if (p->peer_start_ns > last ||
			    (p->peer_start_ns == last && x->peer_rank < lastep->peer_rank)) {
				last = p->peer_start_ns;
				lastep = x;
			}
		}
		last_peer[ki] = -1;
		if (k->status != WHY_OK || !lastep) {
			r->kernels_incomplete += k->status != WHY_OK;
			continue;
		}
		k->wait_ns = clamp(last - k->start_ns, 0, k->dur_ns);
		k->transfer_ns = k->dur_ns - k->wait_ns;
		last_peer[ki] = lastep->peer_rank;
		if (k->wait_ns > 0) {
			k->waited_for = lastep->peer_rank;
			k->side = side_of(lastep);
		}
	}
}

/* Per trace: the waits by side, the transfers, the rest of its bubble. */
static void bubble_rows(struct wrun *R)
{
	struct why *w = R->w;
	struct why_result *r = R->r;
	struct why_trace *t = xmalloc((w->ntrace + 1) * sizeof(*t));
	if (w->ntrace)
		memcpy(t, w->trace, w->ntrace * sizeof(*t));
	why_sort(t, w->ntrace, sizeof(*t), cmp_trace);
	r->bubbles = xcalloc(w->ntrace + 1, sizeof(*r->bubbles));
	size_t k = 0;
	for (size_t i = 0; i < w->ntrace; i++) {
		if (i && !cmp_trace(&t[i - 1], &t[i]))
			continue;
		int32_t ri = why_rank_index(R, t[i].rank);
		struct why_bubble *b = &r->bubbles[r->nbubbles++];
		*b = (struct why_bubble){ .iteration = t[i].iteration,
					  .rank = t[i].rank,
					  .stage = ri >= 0 ? R->rk[ri].stage : -1,
					  .bubble_ns = t[i].bubble_ns };
		while (k < r->nkernels &&
		       (r->kernels[k].iteration < b->iteration ||
			(r->kernels[k].iteration == b->iteration && r->kernels[k].rank < b->rank)))
			k++;
		for (; k < r->nkernels && r->kernels[k].iteration == b->iteration &&
		       r->kernels[k].rank == b->rank;
		     k++) {
			const struct why_p2p_kernel *x = &r->kernels[k];
			if (x->status != WHY_OK) {
				b->incomplete++;
				continue;
			}
			if (x->side == WHY_SIDE_PREVIOUS)
				b->wait_prev_ns += x->wait_ns;
			else if (x->side == WHY_SIDE_NEXT)
				b->wait_next_ns += x->wait_ns;
			b->transfer_ns += x->transfer_ns;
		}
		b->no_work_ns = -1;
		if (b->bubble_ns >= 0 && !b->incomplete) {
			int64_t p2p = b->wait_prev_ns + b->wait_next_ns + b->transfer_ns;
			b->no_work_ns = b->bubble_ns > p2p ? b->bubble_ns - p2p : 0;
		}
	}
	free(t);
}

/* Per (iteration, stage, the stage of the last peer). */
static void hop_rows(struct wrun *R, const int32_t *last_peer)
{
	struct why_result *r = R->r;
	struct imap at;
	size_t cap = 0;
	imap_init(&at);
	for (size_t k = 0; k < r->nkernels; k++) {
		const struct why_p2p_kernel *x = &r->kernels[k];
		int32_t pi = last_peer[k] >= 0 ? why_rank_index(R, last_peer[k]) : -1;
		if (pi < 0 || x->stage < 0)
			continue;
		int32_t ps = R->rk[pi].stage;
		int64_t key =
			((int64_t)why_iter_index(R, x->iteration) * R->P + x->stage) * R->P + ps;
		uint32_t *v = imap_ref(&at, key, (uint32_t)r->nhops);
		if (*v == r->nhops) {
			why_grow((void **)&r->hops, &cap, r->nhops, sizeof(*r->hops));
			r->hops[r->nhops++] = (struct why_hop){ .iteration = x->iteration,
								.stage = x->stage,
								.peer_stage = ps };
		}
		struct why_hop *h = &r->hops[*v];
		h->kernels++;
		h->wait_ns += x->wait_ns;
		h->transfer_ns += x->transfer_ns;
	}
	imap_release(&at);
	why_sort(r->hops, r->nhops, sizeof(*r->hops), cmp_hop);
}

void why_p2p_measure(struct wrun *R)
{
	/* The calls are in (iteration, rank, seq) order, and so are the
	 * transfers (block()). */
	int32_t *last_peer = why_big((R->ncall + 1) * sizeof(*last_peer), false);
	kernel_rows(R, last_peer);
	bubble_rows(R);
	hop_rows(R, last_peer);
	free(last_peer);
}
