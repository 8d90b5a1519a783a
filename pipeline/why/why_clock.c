/* why_clock.c — the ranks' clock offsets (docs/why.md "Clocks"): the
 * what-if engine's estimate (docs/whatif.md §4.1, whatif_clock_solve())
 * over every rank instead of one worker per cell, from the kernels that
 * run at one instant: each pair of p2p kernels (a transfer's two calls)
 * and each complete collective instance (every member against its lowest
 * rank; of a group's many instances in an iteration, 32 spread over them). Applied, as the what-if analysis does, only when some offset is
 * larger than the estimate's own error.
 */
#include <stdlib.h>
#include <string.h>

#include "util/pp.h"
#include "whatif/whatif.h"
#include "why_int.h"

/* Pairs of workers: the ranks with a trace, numbered by worker[rank index]. */
struct pairs {
	struct whatif_clock_pair *v;
	size_t n, cap;
	const int32_t *worker;
};

static void push(struct pairs *P, int32_t ra, int32_t rb, int64_t sa, int64_t ea, int64_t sb,
		 int64_t eb)
{
	int32_t a = ra >= 0 ? P->worker[ra] : -1, b = rb >= 0 ? P->worker[rb] : -1;
	if (a < 0 || b < 0 || a == b)
		return;
	why_grow((void **)&P->v, &P->cap, P->n, sizeof(*P->v));
	P->v[P->n++] =
		(struct whatif_clock_pair){ a, b, (double)sa, (double)ea, (double)sb, (double)eb };
}

#define SAMPLED_INSTANCES 32

/* The time origin of the samples: times are made relative to it so that
 * the doubles hold them exactly (absolute epoch ns need 61 bits). */
static int64_t origin(const struct wrun *R)
{
	int64_t o = INT64_MAX;
	for (size_t i = 0; i < R->ncall; i++)
		o = R->call[i].start < o ? R->call[i].start : o;
	for (size_t i = 0; i < R->w->nkern; i++)
		o = R->w->kern[i].start_ns < o ? R->w->kern[i].start_ns : o;
	return o == INT64_MAX ? 0 : o;
}

static void collect(const struct wrun *R, struct pairs *P)
{
	int64_t t0 = origin(R);
	for (size_t i = 0; i < R->nep; i++) {
		const struct wep *e = &R->ep[i];
		if (e->status != WHY_OK || e->peer_call < 0 || e->role != WHY_SEND)
			continue;
		const struct wcall *a = &R->call[e->call], *b = &R->call[e->peer_call];
		push(P, a->ri, b->ri, a->start - t0, a->end - t0, b->start - t0, b->end - t0);
	}
	/* Of a group's instances in an iteration, SAMPLED_INSTANCES spread
	 * over them: a tensor-parallel group has hundreds, whose ends say the
	 * same thing; a pair of ranks keeps plenty to find its densest. */
	size_t stride = 1;
	for (size_t q = 0; q < R->ninst; q++) {
		const struct winst *in = &R->inst[q];
		if (in->seq == 0) {
			size_t n = 1;
			while (q + n < R->ninst && R->inst[q + n].seq > 0)
				n++;
			stride = (n + SAMPLED_INSTANCES - 1) / SAMPLED_INSTANCES;
		}
		if (in->status != WHY_OK || (size_t)in->seq % stride)
			continue;
		const struct wmem *m = R->mem + in->first;
		for (int32_t j = 1; j < in->size; j++)
			push(P, m[0].ri, m[j].ri, m[0].start - t0, m[0].start + m[0].dur - t0,
			     m[j].start - t0, m[j].start + m[j].dur - t0);
	}
}

void why_clock_run(struct wrun *R)
{
	struct why_result *r = R->r;
	r->nclock = R->nrk;
	r->clock_rank = xmalloc((R->nrk + 1) * sizeof(*r->clock_rank));
	r->clock_offset_ns = xcalloc(R->nrk + 1, sizeof(*r->clock_offset_ns));
	for (size_t i = 0; i < R->nrk; i++)
		r->clock_rank[i] = R->rk[i].rank;
	if (R->w->o.keep_clocks || !R->nrk)
		return;
	/* The workers: the ranks with a trace (the others have no clock to
	 * estimate), in rank order, so worker 0 is the lowest rank. */
	int32_t *worker = xmalloc(R->nrk * sizeof(*worker)),
		*rank_of = xmalloc(R->nrk * sizeof(*rank_of));
	size_t W = 0;
	for (size_t i = 0; i < R->nrk; i++)
		worker[i] = -1;
	for (size_t i = 0; i < R->w->ntrace; i++) {
		int32_t ri = why_rank_index(R, R->w->trace[i].rank);
		if (ri >= 0)
			worker[ri] = 0;
	}
	for (size_t i = 0; i < R->nrk; i++)
		if (worker[i] >= 0) {
			rank_of[W] = (int32_t)i;
			worker[i] = (int32_t)W++;
		}
	struct pairs P = { .worker = worker };
	collect(R, &P);
	if (!P.n) {
		strbuf_addstr(&r->notes, "clocks: no kernels that run together: every trace's "
					 "clock is taken as right\n");
		goto out;
	}
	struct whatif_clock c;
	whatif_clock_solve(P.v, P.n, W, 0, &c);
	int64_t most = 0;
	for (size_t i = 0; i < W; i++)
		most = llabs(c.offset_ns[i]) > most ? llabs(c.offset_ns[i]) : most;
	r->clock_error_ns = c.error_ns;
	if (!c.connected)
		strbuf_addstr(&r->notes, "clocks: some ranks share no kernel that runs with "
					 "another's: their clocks are taken as right\n");
	if (most > c.error_ns) {
		for (size_t i = 0; i < W; i++)
			R->off[rank_of[i]] = r->clock_offset_ns[rank_of[i]] = c.offset_ns[i];
		r->clock_corrected = true;
		strbuf_addf(&r->notes,
			    "clocks: corrected, offsets up to %.1f us relative to rank %d "
			    "(estimated error %.1f us, from %zu samples over %zu rank pairs)\n",
			    (double)most / 1e3, (int)R->rk[rank_of[0]].rank,
			    (double)c.error_ns / 1e3, c.nsamples, c.nedges);
	} else if (most) {
		strbuf_addf(&r->notes,
			    "clocks: offsets up to %.1f us, within their error (%.1f us): not "
			    "corrected\n",
			    (double)most / 1e3, (double)c.error_ns / 1e3);
	}
	whatif_clock_release(&c);
out:
	free(P.v);
	free(worker);
	free(rank_of);
}
