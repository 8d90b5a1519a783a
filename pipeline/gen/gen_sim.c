/* gen_sim.c — simulates the whole cluster on one clock: gives every slice
 * and kernel of the programs built by gen_prog.c its time.
 *
 * Design: programs are flat item lists (open slice, close slice, kernel,
 * CPU gap). The simulator advances each rank until it reaches a kernel it
 * cannot finish yet (a collective whose members have not all arrived, or a
 * receive whose send has not been issued), then moves to the next rank;
 * it loops until every rank is done. One CPU clock per rank serves both
 * threads: the main thread is blocked inside backward_step while the
 * autograd thread works, so their slices never run at the same time.
 *
 * Timing rules (what must stay true):
 * - a kernel starts after its launch ends, after the previous kernel of its
 *   stream, and after the last kernel of every stream in its depmask;
 * - a collective starts on each member when that member is ready and ends
 *   on all members at max(ready) + duration (members agree on the duration:
 *   it is a hash of the seed, iteration, group and sequence);
 * - p2p is a rendezvous, as NCCL's: a transfer runs from the later start of
 *   its sending and its receiving kernel for its transfer time, and a
 *   (batched) send/receive kernel ends with its last transfer. A kernel
 *   posted early spins on the GPU while it waits, which is what makes bubble
 *   differ from idle; a send and its receive end together;
 * - the CPU runs at most LEAD ns ahead of the stream it launches on, and
 *   waits for a GF_SYNC kernel to end.
 * Categories are decided at build time from the open steps (docs/semantics.md §5), in
 * the same order of rules; gen_truth and tests/tools/truthcheck.py check
 * that this agrees with the rules applied to the written trace.
 */
#include "gen_int.h"

#include <stdlib.h>

#include "util/pp.h"

#define LEAD_NS 400000

uint64_t gen_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t gen_hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t s = a * 0x9e3779b97f4a7c15ULL ^ b;
	gen_rand(&s);
	s ^= c * 0xc2b2ae3d27d4eb4fULL;
	gen_rand(&s);
	s ^= d;
	return gen_rand(&s);
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* Returns true when kernel k has its final time. */
static bool sim_kernel(struct gen_cluster *c, struct gen_rank *r, struct gen_kernel *k)
{
	struct coll *co = NULL;
	if (k->coll >= 0)
		co = &c->coll[k->pg_dim][k->pg_idx][k->coll];
	if (!(k->flags & GF_STARTED)) {
		int64_t ready;
		if (k->launch == GL_NONE) {
			ready = max64(r->stream_free[k->stream], r->clock - 300000);
		} else {
			if (k->launch == GL_GRAPH_FOLLOW) {
				k->lts = r->graph_lts;
				k->ldur = r->graph_ldur;
			} else {
				r->clock = max64(r->clock, r->stream_free[k->stream] - LEAD_NS);
				r->clock += 1500;
				k->lts = r->clock;
				k->ldur = 3000 + (int32_t)(gen_rand(&r->rng) % 5000);
				r->clock += k->ldur + 800;
				r->graph_lts = k->lts;
				r->graph_ldur = k->ldur;
			}
			ready = k->lts + k->ldur + 1000;
		}
		ready = max64(ready, r->stream_free[k->stream]);
		for (int s = 0; s < GS_N; s++)
			if (k->depmask & (1u << s))
				ready = max64(ready, r->stream_free[s]);
		k->ts = ready;
		for (int d = 0; d < 2; d++) {
			if (k->send_tag[d] >= 0)
				c->pub[k->send_tag[d]] = ready;
			if (k->recv_tag[d] >= 0)
				c->rstart[k->recv_tag[d]] = ready;
		}
		if (co) {
			co->arrived++;
			co->maxr = max64(co->maxr, ready);
		}
		k->flags |= GF_STARTED;
	}
	int64_t end = k->ts + k->dur;
	if (co) {
		if (co->arrived < gen_layout_group_size(&c->cfg.lay, k->pg_dim))
			return false;
		end = co->maxr + k->dur;
	}
	/* Each transfer starts when both its kernels have and lasts its
	 * transfer time; a kernel ends with its last transfer. */
	for (int i = 0; i < 4; i++) {
		int tag = i < 2 ? k->send_tag[i] : k->recv_tag[i - 2];
		if (tag < 0)
			continue;
		if (c->pub[tag] < 0 || c->rstart[tag] < 0)
			return false;
		end = max64(end, max64(c->pub[tag], c->rstart[tag]) + gen_xfer_ns(&c->cfg, tag));
	}
	k->dur = end - k->ts;
	r->stream_free[k->stream] = end;
	return true;
}

static bool sim_rank(struct gen_cluster *c, struct gen_rank *r)
{
	int start = r->pc;
	while (r->pc < r->nitems) {
		uint32_t it = r->items[r->pc];
		uint32_t idx = it & 0x0fffffff;
		switch (it >> 28) {
		case IT_OPEN:
			r->s[idx].ts = r->clock;
			r->clock += 400 + (int64_t)(gen_rand(&r->rng) % 200);
			break;
		case IT_CLOSE:
			r->clock += 300 + (int64_t)(gen_rand(&r->rng) % 200);
			r->s[idx].te = r->clock;
			break;
		case IT_GAP: r->clock += idx; break;
		case IT_KERNEL:
			if (!sim_kernel(c, r, &r->k[idx]))
				return r->pc > start;
			if (r->k[idx].flags & GF_SYNC)
				r->clock = max64(r->clock, r->k[idx].ts + r->k[idx].dur);
			break;
		}
		r->pc++;
	}
	return r->pc > start;
}

int gen_sim_run(struct gen_cluster *c)
{
	int world = c->cfg.lay.world;
	for (int t = 0; t < c->ntags; t++)
		c->pub[t] = c->rstart[t] = -1;
	for (int rank = 0; rank < world; rank++) {
		struct gen_rank *r = &c->ranks[rank];
		r->clock =
			c->cfg.t0 + (int64_t)(gen_hash(c->cfg.seed, (uint64_t)rank, 3, 0) % 40000);
		for (int s = 0; s < GS_N; s++)
			r->stream_free[s] = c->cfg.t0 - 1000000;
	}
	for (;;) {
		bool progress = false, done = true;
		for (int rank = 0; rank < world; rank++) {
			struct gen_rank *r = &c->ranks[rank];
			if (r->pc < r->nitems)
				progress |= sim_rank(c, r);
			if (r->pc < r->nitems)
				done = false;
		}
		if (done)
			return 0;
		if (!progress)
			return PP_ECYCLE;
	}
}

void gen_sim_shift(struct gen_cluster *c, const int64_t *offset_ns)
{
	for (int rank = 0; rank < c->cfg.lay.world; rank++) {
		struct gen_rank *r = &c->ranks[rank];
		int64_t d = offset_ns[rank];
		if (!d)
			continue;
		for (int i = 0; i < r->nk; i++) {
			r->k[i].ts += d;
			r->k[i].lts += d;
		}
		for (int i = 0; i < r->ns; i++) {
			r->s[i].ts += d;
			r->s[i].te += d;
		}
	}
}

struct gen_rank *gen_sim_rank(struct gen_cluster *c, int rank)
{
	return &c->ranks[rank];
}

int64_t gen_sim_p2p_start(const struct gen_cluster *c, int tag, bool recv)
{
	if (tag < 0 || tag >= c->ntags)
		return -1;
	return recv ? c->rstart[tag] : c->pub[tag];
}

int64_t gen_sim_end(const struct gen_cluster *c)
{
	int64_t end = c->cfg.t0;
	for (int rank = 0; rank < c->cfg.lay.world; rank++) {
		const struct gen_rank *r = &c->ranks[rank];
		for (int s = 0; s < GS_N; s++)
			end = max64(end, r->stream_free[s]);
		end = max64(end, r->clock);
	}
	return end;
}

void gen_sim_free(struct gen_cluster *c)
{
	if (!c)
		return;
	for (int rank = 0; rank < c->cfg.lay.world; rank++) {
		free(c->ranks[rank].k);
		free(c->ranks[rank].s);
		free(c->ranks[rank].items);
	}
	for (int d = 0; d < GEN_NGROUPS; d++) {
		if (c->coll[d])
			for (int g = 0; g < gen_layout_ngroups(&c->cfg.lay, d); g++)
				free(c->coll[d][g]);
		free(c->coll[d]);
		free(c->ncoll[d]);
	}
	PP_FREE_ALL(c->pub, c->rstart, c->ranks, c);
}
