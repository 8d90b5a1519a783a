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
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/pp.h"
#include "whatif_int.h"

struct sample {
	int32_t a, b; /* workers, a < b */
	double d;     /* end(b) − end(a) */
};

struct edge {
	int32_t a, b;
	double d, w;
	size_t n;
	double mad;
};

struct samples {
	struct sample *v;
	size_t n, cap;
};

static void push(struct samples *S, int32_t a, int32_t b, double d)
{
	if (a == b)
		return;
	if (S->n == S->cap) {
		S->cap = S->cap ? 2 * S->cap : 1024;
		S->v = xrealloc(S->v, S->cap * sizeof(*S->v));
	}
	S->v[S->n++] = a < b ? (struct sample){ a, b, d } : (struct sample){ b, a, -d };
}

static int cmp_sample(const void *pa, const void *pb)
{
	const struct sample *x = pa, *y = pb;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	return (x->d > y->d) - (x->d < y->d);
}

static int cmp_double(const void *pa, const void *pb)
{
	double x = *(const double *)pa, y = *(const double *)pb;
	return (x > y) - (x < y);
}

/* The median of sorted x[0..n). */
static double median(const double *x, size_t n)
{
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* Whether node v's recorded interval in lane (si, d) is one to trust: a
 * recorded op (not a placeholder) of non-zero length. */
static bool usable(const struct whatif *e, size_t si, size_t v, size_t d)
{
	size_t i = wi_idx(e, si, v, d);
	return !(e->node[v].flags & WI_NODE_PLACEHOLDER) && e->re[i] > e->rs[i];
}

static void collect(const struct whatif *e, struct samples *S)
{
	size_t DP = (size_t)e->dp;
	for (size_t g = 0; g < e->ngroups; g++) {
		const struct wi_sync *G = &e->group[g];
		const int32_t *m = e->gmem + G->first;
		if (G->dpsync && G->n == 1) { /* a DP collective: replicas end together */
			size_t v = (size_t)m[0];
			int32_t base = e->node[v].stage * e->dp;
			for (size_t si = 0; si < e->nsteps; si++)
				for (size_t d = 1; d < DP; d++)
					if (usable(e, si, v, 0) && usable(e, si, v, d))
						push(S, base, base + (int32_t)d,
						     e->re[wi_idx(e, si, v, d)] -
							     e->re[wi_idx(e, si, v, 0)]);
		} else if (!G->dpsync && G->n == 2) { /* a p2p or the embedding pair */
			size_t v = (size_t)m[0], u = (size_t)m[1];
			int32_t a = e->node[v].stage * e->dp, b = e->node[u].stage * e->dp;
			for (size_t si = 0; si < e->nsteps; si++)
				for (size_t d = 0; d < DP; d++)
					if (usable(e, si, v, d) && usable(e, si, u, d))
						push(S, a + (int32_t)d, b + (int32_t)d,
						     e->re[wi_idx(e, si, u, d)] -
							     e->re[wi_idx(e, si, v, d)]);
		}
	}
}

/* The ends of two ops that sync coincide up to a few µs; the samples of a
 * pair of workers that do not (a combined p2p call waits for its other
 * neighbour too) spread over tens of µs to ms, on both sides. */
#define CLOCK_WINDOW_NS 2000.0

/* One edge per worker pair: where its samples are densest (the most of
 * them within CLOCK_WINDOW_NS; the first such window), the median of those,
 * their spread (median absolute deviation) and the weight n / (spread² +
 * 1 µs²) of the n in it. */
static size_t edges_of(struct samples *S, struct edge **out)
{
	qsort(S->v, S->n, sizeof(*S->v), cmp_sample);
	struct edge *E = xmalloc((S->n + 1) * sizeof(*E));
	double *x = xmalloc((S->n + 1) * sizeof(*x));
	size_t ne = 0;
	for (size_t i = 0, j; i < S->n; i = j) {
		for (j = i; j < S->n && S->v[j].a == S->v[i].a && S->v[j].b == S->v[i].b; j++)
			;
		const struct sample *v = S->v + i; /* sorted by d */
		size_t n = j - i, lo = 0, best = 0, most = 0;
		for (size_t hi = 0; hi < n; hi++) {
			while (v[hi].d - v[lo].d > CLOCK_WINDOW_NS)
				lo++;
			if (hi - lo + 1 > most) {
				most = hi - lo + 1;
				best = lo;
			}
		}
		for (size_t k = 0; k < most; k++)
			x[k] = v[best + k].d;
		double med = median(x, most);
		for (size_t k = 0; k < most; k++)
			x[k] = fabs(x[k] - med);
		qsort(x, most, sizeof(*x), cmp_double);
		double mad = median(x, most);
		E[ne++] = (struct edge){ v->a, v->b, med, (double)most / (mad * mad + 1e6),
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
	free(r);
	free(z);
	free(p);
	free(q);
	free(diag);
}

void whatif_clock_estimate(const struct whatif *e, struct whatif_clock *c)
{
	size_t W = (size_t)e->dp * (size_t)e->pp;
	memset(c, 0, sizeof(*c));
	c->dp = e->dp;
	c->pp = e->pp;
	c->offset_ns = xcalloc(W, sizeof(*c->offset_ns));
	/* The reference: the worker of the lowest rank. */
	for (size_t i = 1; i < W; i++)
		if (e->cell_rank[i] < e->cell_rank[c->ref])
			c->ref = (int)i;
	struct samples S = { 0 };
	collect(e, &S);
	struct edge *E = NULL;
	size_t ne = edges_of(&S, &E);
	uint8_t *seen = xmalloc(W);
	double *o = xmalloc(W * sizeof(*o));
	reach(E, ne, c->ref, seen, W);
	solve(E, ne, c->ref, seen, o, W);
	c->connected = true;
	for (size_t i = 0; i < W; i++) {
		c->connected &= seen[i] != 0;
		c->offset_ns[i] = (int64_t)llround(o[i] - o[c->ref]);
	}
	/* The error: the largest disagreement of the solution with a worker
	 * pair's estimate, plus that estimate's spread. */
	double err = 0;
	for (size_t k = 0; k < ne; k++) {
		double res = fabs(o[E[k].b] - o[E[k].a] - E[k].d) + E[k].mad;
		err = res > err ? res : err;
	}
	c->error_ns = (int64_t)llround(err);
	c->nsamples = S.n;
	c->nedges = ne;
	free(S.v);
	free(E);
	free(seen);
	free(o);
}

void whatif_clock_release(struct whatif_clock *c)
{
	free(c->offset_ns);
	memset(c, 0, sizeof(*c));
}
