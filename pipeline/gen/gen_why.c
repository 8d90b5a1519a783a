/* gen_why.c — the why analysis' exact answers from the model (see
 * gen_why.h).
 *
 * A p2p kernel's tags name its transfers (gen_prog.c: the producing virtual
 * stage, the micro-batch, the direction); the simulator recorded when the
 * sending and the receiving kernel of each tag started (gen_sim.c), in true
 * time. A collective kernel's (dim, group, seq) names its instance; every
 * member of an instance ends at max(ready) + its duration, so the transfer
 * after the last arrival is that duration.
 */
#include "gen_why.h"

#include <stdlib.h>
#include <string.h>

#include "gen_layout.h"
#include "util/cmp.h"
#include "util/pp.h"

static int64_t clamp(int64_t x, int64_t lo, int64_t hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

void gen_why_p2p(const struct gen_cluster *c, const struct gen_cfg *cfg, const struct gen_rank *r,
		 int64_t offset_ns, struct gen_p2p_rows *out)
{
	int P = cfg->lay.size[GEN_PP];
	out->nrow = out->nk = 0;
	for (int i = 0; i < r->nk; i++) {
		const struct gen_kernel *k = &r->k[i];
		/* slots: forward send, backward send, forward recv, backward recv */
		const int tags[4] = { k->send_tag[0], k->send_tag[1], k->recv_tag[0],
				      k->recv_tag[1] };
		if (tags[0] < 0 && tags[1] < 0 && tags[2] < 0 && tags[3] < 0)
			continue;
		PP_GROW(out->k, out->nk, out->capk, 64);
		struct gen_p2p_kernel *x = &out->k[out->nk];
		*x = (struct gen_p2p_kernel){ .kernel = (int)out->nk,
					      .start = k->ts - offset_ns,
					      .dur = k->dur,
					      .waited_for = -1 };
		int64_t last = INT64_MIN;
		int last_rank = -1;
		for (int slot = 0; slot < 4; slot++) {
			if (tags[slot] < 0)
				continue;
			int g, vs, mb, dir, role = slot >= 2;
			gen_p2p_tag_decode(cfg, tags[slot], &g, &vs, &mb, &dir);
			/* this rank's virtual stage and the peer's */
			int own = role ? (dir ? vs - 1 : vs + 1) : vs;
			int peer = role ? vs : (dir ? vs - 1 : vs + 1);
			int peer_rank = gen_layout_with(&cfg->lay, r->rank, GEN_PP, peer % P);
			int64_t ps = gen_sim_p2p_start(c, tags[slot], !role);
			PP_GROW(out->row, out->nrow, out->caprow, 128);
			struct gen_p2p *p = &out->row[out->nrow++];
			*p = (struct gen_p2p){ .kernel = x->kernel,
					       .peer_rank = peer_rank,
					       .dir = dir,
					       .role = role,
					       .mb = mb,
					       .chunk = own / P,
					       .start = x->start,
					       .dur = x->dur };
			p->wait = clamp(ps - x->start, 0, x->dur);
			p->transfer = x->dur - p->wait;
			if (ps > last || (ps == last && peer_rank < last_rank)) {
				last = ps;
				last_rank = peer_rank;
			}
		}
		x->wait = clamp(last - x->start, 0, x->dur);
		x->transfer = x->dur - x->wait;
		if (x->wait > 0)
			x->waited_for = last_rank;
		out->nk++;
	}
}

void gen_why_p2p_release(struct gen_p2p_rows *out)
{
	free(out->row);
	free(out->k);
	memset(out, 0, sizeof(*out));
}

/* One member's collective kernel. */
struct arrival {
	int order; /* the group description's place in the sort */
	int dim, group, seq, rank;
	int64_t start, dur;
};

static int cmp_arrival(const void *a, const void *b)
{
	const struct arrival *x = a, *y = b;
	const int64_t kx[] = { x->order, x->group, x->seq, x->rank };
	const int64_t ky[] = { y->order, y->group, y->seq, y->rank };
	return cmp_i64s(kx, ky, 4);
}

void gen_why_collectives(struct gen_cluster *c, const struct gen_cfg *cfg, const bool *written,
			 const int64_t *offset_ns,
			 void (*fn)(void *ctx, const struct gen_coll *x, const int *tied,
				    int ntied),
			 void *ctx)
{
	const struct gen_layout *lay = &cfg->lay;
	int order[GEN_NGROUPS];
	for (int d = 0; d < GEN_NGROUPS; d++) { /* the descriptions' order */
		order[d] = 0;
		for (int e = 0; e < GEN_NGROUPS; e++)
			order[d] += strcmp(gen_layout_pg_desc(e), gen_layout_pg_desc(d)) < 0;
	}
	size_t n = 0, cap = 1024;
	struct arrival *a = xmalloc(cap * sizeof(*a));
	for (int rank = 0; rank < lay->world; rank++) {
		const struct gen_rank *r = gen_sim_rank(c, rank);
		for (int i = 0; i < r->nk; i++) {
			const struct gen_kernel *k = &r->k[i];
			if (k->coll < 0)
				continue;
			PP_GROW(a, n, cap, 1024);
			a[n++] = (struct arrival){
				order[k->pg_dim],        k->pg_dim, k->pg_idx, k->coll, rank,
				k->ts - offset_ns[rank], k->dur
			};
		}
	}
	qsort(a, n, sizeof(*a), cmp_arrival);
	int *tied = xmalloc(((size_t)lay->world + 1) * sizeof(*tied));
	for (size_t i = 0, j; i < n; i = j) {
		bool all = true;
		for (j = i; j < n && a[j].order == a[i].order && a[j].group == a[i].group &&
			    a[j].seq == a[i].seq;
		     j++)
			all &= written[a[j].rank];
		int size = gen_layout_group_size(lay, a[i].dim);
		if (!all || (int)(j - i) != size || size < 2)
			continue;
		struct gen_coll x = {
			.dim = a[i].dim, .group = a[i].group, .seq = a[i].seq, .size = size
		};
		size_t f = i, l = i;
		for (size_t k = i; k < j; k++) {
			if (a[k].start < a[f].start)
				f = k;
			if (a[k].start > a[l].start)
				l = k;
		}
		x.first = a[f].start;
		x.last = a[l].start;
		x.first_rank = a[f].rank;
		x.last_rank = a[l].rank;
		x.transfer = a[l].dur;
		int nt = 0;
		for (size_t k = i; k < j; k++)
			if (a[k].start >= x.last - 1000)
				tied[nt++] = a[k].rank;
		fn(ctx, &x, tied, nt);
	}
	free(tied);
	free(a);
}
