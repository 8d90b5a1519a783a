/* wi_clock.c — the clock offsets of the workers, estimated from the ops
 * that end together (docs/whatif.md §4.1; see whatif_clock_estimate()).
 *
 *   samples: per step and lane, the end difference of the two members of
 *            a p2p pair or of the embedding pair, and of every replica's
 *            DP collective against replica 0's (worker b − worker a =
 *            offset_b − offset_a, plus noise);
 *   edges:   per worker pair, the median of its densest 2 µs of samples
 *            and their spread (median absolute deviation);
 *   solve:   weighted least squares over the worker graph, the reference
 *            worker fixed at 0 (Jacobi-preconditioned conjugate gradients
 *            on the graph's Laplacian), weights n / (spread² + 1 µs²).
 *
 * The densest window makes an edge robust to the samples that do not end
 * together (a combined p2p call ends with its last transfer, which may be
 * with its other neighbour: under VPP fewer than half of a pair's samples
 * coincide, and their plain median is off by hundreds of ns); the weights
 * let the tight edges decide where edges disagree.
 *
 * whatif_clock_solve() is the estimate from any pairs of ops that sync;
 * whatif_clock_estimate() collects the engine's and calls it. The why
 * analysis (docs/why.md) calls it with every rank's kernels.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/cmp.h"
#include "util/pp.h"
#include "whatif_int.h"

/* One pair of ops of workers a and b that sync: in a's clock b's interval
 * is shifted by δ = offset_b − offset_a, and d = end_b − end_a is δ when
 * the two end together; as both run at the instant they sync, their
 * intervals overlap in true time, so lo = start_b − end_a ≤ δ ≤ hi =
 * end_b − start_a whatever their ends. */
struct sample {
	int32_t a, b; /* workers, a < b */
	double d, lo, hi;
};

struct edge {
	int32_t a, b;
	double d, w;
	size_t n;
	double mad;
};

struct pairs {
	struct whatif_clock_pair *v;
	size_t n, cap;
};

/* The pair of the ops (sa, ea) of worker a and (sb, eb) of worker b. */
static void push(struct pairs *P, int32_t a, int32_t b, double sa, double ea, double sb, double eb)
{
	PP_GROW(P->v, P->n, P->cap, 1024);
	P->v[P->n++] = (struct whatif_clock_pair){ a, b, sa, ea, sb, eb };
}

/* Node v's interval in lane (si, d) into (*s, *e). */
static void at(const struct whatif *e, size_t si, size_t v, size_t d, double *s, double *t)
{
	size_t i = wi_idx(e, si, v, d);
	*s = e->rs[i];
	*t = e->re[i];
}

static int cmp_sample(const void *pa, const void *pb)
{
	const struct sample *x = pa, *y = pb;
	const double kx[] = { x->a, x->b, x->d, x->lo, x->hi };
	const double ky[] = { y->a, y->b, y->d, y->lo, y->hi };
	return cmp_f64s(kx, ky, 5);
}

/* Whether node v's recorded interval in lane (si, d) is one to trust: a
 * recorded op (not a placeholder) of non-zero length. */
static bool usable(const struct whatif *e, size_t si, size_t v, size_t d)
{
	size_t i = wi_idx(e, si, v, d);
	return !(e->node[v].flags & WI_NODE_PLACEHOLDER) && e->re[i] > e->rs[i];
}

static void collect(const struct whatif *e, struct pairs *P)
{
	size_t DP = (size_t)e->dp;
	for (size_t g = 0; g < e->ngroups; g++) {
		const struct wi_sync *G = &e->group[g];
		const int32_t *m = e->gmem + G->first;
		double sa, ea, sb, eb;
		if (G->dpsync && G->n == 1) { /* a DP collective: replicas end together */
			size_t v = (size_t)m[0];
			int32_t base = e->node[v].stage * e->dp;
			for (size_t si = 0; si < e->nsteps; si++)
				for (size_t d = 1; d < DP; d++) {
					if (!usable(e, si, v, 0) || !usable(e, si, v, d))
						continue;
					at(e, si, v, 0, &sa, &ea);
					at(e, si, v, d, &sb, &eb);
					push(P, base, base + (int32_t)d, sa, ea, sb, eb);
				}
		} else if (!G->dpsync && G->n == 2) { /* a p2p or the embedding pair */
			size_t v = (size_t)m[0], u = (size_t)m[1];
			int32_t a = e->node[v].stage * e->dp, b = e->node[u].stage * e->dp;
			for (size_t si = 0; si < e->nsteps; si++)
				for (size_t d = 0; d < DP; d++) {
					if (!usable(e, si, v, d) || !usable(e, si, u, d))
						continue;
					at(e, si, v, d, &sa, &ea);
					at(e, si, u, d, &sb, &eb);
					push(P, a + (int32_t)d, b + (int32_t)d, sa, ea, sb, eb);
				}
		}
	}
}

/* The ends of two ops that sync coincide up to a few µs; the samples of a
 * pair of workers that do not (a combined p2p call waits for its other
 * neighbour too) spread over tens of µs to ms, on both sides. */
#define CLOCK_WINDOW_NS 2000.0

/* One edge per worker pair, from its distinct samples (the rows of one
 * combined call pair with the same partner call more than once): the
 * samples whose d lies within every sample's [lo, hi] (give or take the
 * window; all of them when the bounds disagree), where those are densest
 * (the most within CLOCK_WINDOW_NS; of such windows the narrowest, then
 * the first), the median of the ones there, their spread (median absolute
 * deviation) and the weight n / (spread² + 1 µs²) of the n there. */
static size_t edges_of(struct sample *v, size_t *nv, struct edge **out)
{
	qsort(v, *nv, sizeof(*v), cmp_sample);
	struct edge *E = xmalloc((*nv + 1) * sizeof(*E));
	double *x = xmalloc((*nv + 1) * sizeof(*x));
	size_t ne = 0, keep = 0;
	for (size_t i = 0; i < *nv; i++) /* distinct samples */
		if (!keep || cmp_sample(&v[keep - 1], &v[i]))
			v[keep++] = v[i];
	*nv = keep;
	for (size_t i = 0, j; i < keep; i = j) {
		double lo = -INFINITY, hi = INFINITY;
		for (j = i; j < keep && v[j].a == v[i].a && v[j].b == v[i].b; j++) {
			lo = v[j].lo > lo ? v[j].lo : lo;
			hi = v[j].hi < hi ? v[j].hi : hi;
		}
		if (lo > hi + CLOCK_WINDOW_NS) { /* inconsistent: no bounds */
			lo = -INFINITY;
			hi = INFINITY;
		}
		const struct sample *g = v + i; /* sorted by d */
		size_t n = 0, first = 0, best = 0, most = 0;
		for (size_t k = 0; k < j - i; k++)
			if (g[k].d >= lo - CLOCK_WINDOW_NS && g[k].d <= hi + CLOCK_WINDOW_NS)
				x[n++] = g[k].d;
		if (!n) /* none fits: take them all */
			for (size_t k = 0; k < j - i; k++)
				x[n++] = g[k].d;
		for (size_t k = 0; k < n; k++) {
			while (x[k] - x[first] > CLOCK_WINDOW_NS)
				first++;
			size_t m = k - first + 1;
			if (m > most ||
			    (m == most && x[k] - x[first] < x[best + most - 1] - x[best])) {
				most = m;
				best = first;
			}
		}
		double med = wi_median(x + best, most);
		for (size_t k = 0; k < most; k++)
			x[k] = fabs(x[best + k] - med);
		double mad = wi_median(x, most);
		E[ne++] = (struct edge){ g->a, g->b, med, (double)most / (mad * mad + 1e6),
					 most, mad };
	}
	free(x);
	*out = E;
	return ne;
}

/* y = L x over the free workers (the reference's row and column left out). */
static void laplace(const struct edge *E, size_t ne, const double *x, double *y, size_t W, int ref)
{
	memset(y, 0, W * sizeof(*y));
	for (size_t k = 0; k < ne; k++) {
		double f = E[k].w * (x[E[k].a] - x[E[k].b]);
		y[E[k].a] += f;
		y[E[k].b] -= f;
	}
	y[ref] = 0;
}

/* Marks the workers the edges connect to ref. */
static void reach(const struct edge *E, size_t ne, int ref, uint8_t *seen, size_t W)
{
	memset(seen, 0, W);
	seen[ref] = 1;
	for (bool grew = true; grew;) {
		grew = false;
		for (size_t k = 0; k < ne; k++)
			if (seen[E[k].a] != seen[E[k].b]) {
				seen[E[k].a] = seen[E[k].b] = 1;
				grew = true;
			}
	}
}

/* Weighted least squares: o[ref] = 0, Jacobi-preconditioned CG. */
static void solve(const struct edge *E, size_t ne, int ref, const uint8_t *seen, double *o,
		  size_t W)
{
	double *r = xcalloc(W, sizeof(double)), *z = xcalloc(W, sizeof(double));
	double *p = xcalloc(W, sizeof(double)), *q = xcalloc(W, sizeof(double));
	double *diag = xcalloc(W, sizeof(double));
	for (size_t k = 0; k < ne; k++) {
		r[E[k].a] -= E[k].w * E[k].d;
		r[E[k].b] += E[k].w * E[k].d;
		diag[E[k].a] += E[k].w;
		diag[E[k].b] += E[k].w;
	}
	for (size_t i = 0; i < W; i++)
		if (i == (size_t)ref || !seen[i])
			r[i] = 0;
	memset(o, 0, W * sizeof(*o));
	double rz = 0, r0 = 0;
	for (size_t i = 0; i < W; i++) {
		z[i] = diag[i] > 0 ? r[i] / diag[i] : 0;
		p[i] = z[i];
		rz += r[i] * z[i];
		r0 += r[i] * r[i];
	}
	for (size_t it = 0; it < 4 * W + 20 && rz > 0; it++) {
		laplace(E, ne, p, q, W, ref);
		double pq = 0;
		for (size_t i = 0; i < W; i++)
			pq += p[i] * q[i];
		if (pq <= 0)
			break;
		double alpha = rz / pq, rr = 0, rz2 = 0;
		for (size_t i = 0; i < W; i++) {
			o[i] += alpha * p[i];
			r[i] -= alpha * q[i];
			rr += r[i] * r[i];
		}
		if (rr <= r0 * 1e-28)
			break;
		for (size_t i = 0; i < W; i++) {
			z[i] = diag[i] > 0 ? r[i] / diag[i] : 0;
			rz2 += r[i] * z[i];
		}
		for (size_t i = 0; i < W; i++)
			p[i] = z[i] + rz2 / rz * p[i];
		rz = rz2;
	}
	PP_FREE_ALL(r, z, p, q, diag);
}

void whatif_clock_solve(const struct whatif_clock_pair *p, size_t np, size_t W, int ref,
			struct whatif_clock *c)
{
	memset(c, 0, sizeof(*c));
	c->ref = ref;
	c->offset_ns = xcalloc(W ? W : 1, sizeof(*c->offset_ns));
	struct sample *S = xmalloc((np + 1) * sizeof(*S));
	size_t ns = 0;
	for (size_t i = 0; i < np; i++) {
		const struct whatif_clock_pair *x = &p[i];
		if (x->a == x->b)
			continue;
		S[ns++] = x->a < x->b ? (struct sample){ x->a, x->b, x->eb - x->ea, x->sb - x->ea,
							 x->eb - x->sa }
				      : (struct sample){ x->b, x->a, x->ea - x->eb, x->sa - x->eb,
							 x->ea - x->sb };
	}
	struct edge *E = NULL;
	size_t ne = edges_of(S, &ns, &E);
	uint8_t *seen = xmalloc(W ? W : 1);
	double *o = xmalloc((W ? W : 1) * sizeof(*o));
	reach(E, ne, ref, seen, W);
	solve(E, ne, ref, seen, o, W);
	c->connected = true;
	for (size_t i = 0; i < W; i++) {
		c->connected &= seen[i] != 0;
		c->offset_ns[i] = (int64_t)llround(o[i] - o[ref]);
	}
	/* The error: the largest disagreement of the solution with a worker
	 * pair's estimate, plus that estimate's spread. */
	double err = 0;
	for (size_t k = 0; k < ne; k++) {
		double res = fabs(o[E[k].b] - o[E[k].a] - E[k].d) + E[k].mad;
		err = res > err ? res : err;
	}
	c->error_ns = (int64_t)llround(err);
	c->nsamples = ns;
	c->nedges = ne;
	PP_FREE_ALL(S, E, seen, o);
}

void whatif_clock_estimate(const struct whatif *e, struct whatif_clock *c)
{
	size_t W = (size_t)e->dp * (size_t)e->pp;
	int ref = 0;
	/* The reference: the worker of the lowest rank. */
	for (size_t i = 1; i < W; i++)
		if (e->cell_rank[i] < e->cell_rank[ref])
			ref = (int)i;
	struct pairs P = { 0 };
	collect(e, &P);
	whatif_clock_solve(P.v, P.n, W, ref, c);
	c->dp = e->dp;
	c->pp = e->pp;
	free(P.v);
}

void whatif_clock_release(struct whatif_clock *c)
{
	free(c->offset_ns);
	memset(c, 0, sizeof(*c));
}
