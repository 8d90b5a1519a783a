/* Randomised cross-check of the classifier against a naive reference: the
 * rules of docs/semantics.md §5 and the metrics of docs/semantics.md §6 evaluated literally (every
 * ancestor test, every containment test, unions with interval.h) on random
 * properly nested traces. Catches what the fast paths (sorted sweeps,
 * binary searches, the dense correlation map, union accumulators) could get
 * wrong. The thread roles are taken from the result (tested elsewhere). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "classify/classify.h"
#include "model/patterns.h"
#include "read/trace_read.h"
#include "util/arena.h"
#include "util/interval.h"
#include "util/pp.h"
#include "tests/unit/unit.h"
#include "util/strbuf.h"

enum { MAXS = 600, MAXK = 600, NTHREADS = 4 };

static const char *const slice_names[] = {
	"forward_step",      "forward_step_helper", "backward_step",  "send_forward",
	"recv_backward",     "start_grad_sync",     "optimizer.step", "pretrain_loss_func",
	"recompute_forward", "custom_forward",      "aten::mm",       "module.py(1): _call_impl",
	"record_param_comms"
};
static const char *const kernel_names[] = { "gemm", "ncclDevKernel_AllReduce", "Memcpy DtoD",
					    "elementwise", "ncclKernel_SendRecv" };
#define NSN (sizeof(slice_names) / sizeof(slice_names[0]))
#define NKN (sizeof(kernel_names) / sizeof(kernel_names[0]))

struct sl {
	int thread, name;
	int64_t ts, dur;
	int order;   /* file order among slices */
	bool launch; /* a launch (cudaLaunchKernel) rather than a slice */
	int64_t corr;
};

struct kn {
	int name;
	bool memevent, has_corr;
	int64_t corr, ts, dur;
};

struct world {
	struct sl s[MAXS];
	int ns;
	struct kn k[MAXK];
	int nk;
	uint32_t bits[NSN + NKN]; /* pattern bits per name */
};

static uint64_t rng_state;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}
static int64_t rnd_in(int64_t lo, int64_t hi) /* [lo, hi] */
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* A properly nested forest of slices in [lo, hi) on one thread. */
static void gen_slices(struct world *w, int thread, int64_t lo, int64_t hi, int depth,
		       int64_t *corr)
{
	int64_t t = lo;
	while (t < hi && w->ns < MAXS - 1) {
		int64_t start = rnd_in(t, t + 40);
		if (start >= hi)
			break;
		if (depth > 0 && rnd() % 3 == 0) { /* a launch */
			struct sl *l = &w->s[w->ns++];
			l->thread = thread;
			l->ts = start;
			l->dur = rnd_in(0, 2);
			l->launch = true;
			l->corr = (*corr)++;
			if (rnd() % 9 == 0)
				(*corr) += rnd_in(1, 50); /* gaps */
			t = start + l->dur + 1;
			continue;
		}
		int64_t end = rnd_in(start, start + (hi - start) / 2 + 1);
		if (end > hi)
			end = hi;
		struct sl *s = &w->s[w->ns++];
		s->thread = thread;
		s->ts = start;
		s->dur = end - start;
		s->name = (int)(rnd() % NSN);
		if (depth < 4 && s->dur > 10)
			gen_slices(w, thread, start, end, depth + 1, corr);
		t = end + rnd_in(0, 1); /* adjacent roots happen */
	}
}

static void gen_world(struct world *w, const struct patterns *p)
{
	int64_t corr = rnd_in(1, 1000);
	memset(w, 0, sizeof(*w));
	for (int t = 0; t < NTHREADS; t++)
		gen_slices(w, t, 0, 3000, rnd() % 2, &corr);
	for (int i = 0; i < w->ns; i++)
		w->s[i].order = i;
	/* shuffle the file order a little: nesting is by time, not order */
	for (int i = 0; i + 1 < w->ns; i++)
		if (rnd() % 5 == 0) {
			struct sl x = w->s[i];
			w->s[i] = w->s[i + 1];
			w->s[i + 1] = x;
		}
	for (int i = 0; i < w->ns; i++)
		w->s[i].order = i;
	if (rnd() % 8 == 0) /* no step slices at all: generic mode */
		for (int i = 0; i < w->ns; i++)
			if (w->s[i].name <= 2)
				w->s[i].name = 10;
	int nl = 0;
	int64_t lcorr[MAXS];
	for (int i = 0; i < w->ns; i++)
		if (w->s[i].launch)
			lcorr[nl++] = w->s[i].corr;
	w->nk = (int)rnd_in(0, MAXK - 1);
	for (int i = 0; i < w->nk; i++) {
		struct kn *k = &w->k[i];
		k->name = (int)(rnd() % NKN);
		k->memevent = rnd() % 10 == 0;
		k->has_corr = rnd() % 20 != 0;
		k->corr = nl && rnd() % 15 ? lcorr[rnd() % (uint64_t)nl]
					   : rnd_in(0, 5000); /* orphan-ish */
		k->ts = rnd_in(0, 6000);
		k->dur = rnd() % 8 == 0 ? 0 : rnd_in(1, 300);
	}
	for (size_t i = 0; i < NSN; i++)
		w->bits[i] = patterns_match(p, slice_names[i]);
	for (size_t i = 0; i < NKN; i++)
		w->bits[NSN + i] = patterns_match(p, kernel_names[i]);
}

static struct pp_sv sv(const char *s)
{
	struct pp_sv v = { s, strlen(s) };
	return v;
}

static struct rank_result *run(const struct world *w, struct arena *a, const struct patterns *p)
{
	struct classify *c = classify_new(p, a);
	struct trace_event ev;
	struct rank_result *r;
	/* flows: thread 0 → thread 1 decide the roles half of the time */
	bool flows = rnd() % 2;
	for (int i = 0; i < w->ns + w->nk + 2; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.cat = ev.name = ev.arg_name = ev.pg_name = sv("");
		ev.pg_desc = ev.pg_ranks = ev.collective = ev.dtype = sv("");
		ev.pid.str = ev.tid.str = ev.id.str = sv("");
		ev.has = TE_PID | TE_TID | TE_TS | TE_DUR;
		ev.pid.num = 1;
		if (i < w->ns) {
			const struct sl *s = &w->s[i];
			ev.ph = 'X';
			ev.tid.num = s->thread;
			ev.ts_ns = s->ts;
			ev.dur_ns = s->dur;
			if (s->launch) {
				ev.cat = sv("cuda_runtime");
				ev.name = sv("cudaLaunchKernel");
				ev.has |= TE_CORRELATION;
				ev.correlation = s->corr;
			} else {
				ev.cat = sv("python_function");
				ev.name = sv(slice_names[s->name]);
			}
		} else if (i < w->ns + w->nk) {
			const struct kn *k = &w->k[i - w->ns];
			ev.ph = 'X';
			ev.pid.num = 0;
			ev.tid.num = 7;
			ev.cat = sv(k->memevent ? "gpu_memcpy" : "kernel");
			ev.name = sv(kernel_names[k->name]);
			ev.ts_ns = k->ts;
			ev.dur_ns = k->dur;
			if (k->has_corr) {
				ev.has |= TE_CORRELATION;
				ev.correlation = k->corr;
			}
		} else {
			if (!flows)
				continue;
			ev.ph = i == w->ns + w->nk ? 's' : 'f';
			ev.cat = sv("fwdbwd");
			ev.tid.num = ev.ph == 's' ? 0 : 1;
			ev.id.num = 1;
		}
		classify_feed(c, &ev);
	}
	assert_int_equal(classify_finish(c, NULL, &r), 0);
	classify_free(c);
	return r;
}

/* --- the naive reference ------------------------------------------------ */

static bool has_set(const struct world *w, const struct sl *s, int set)
{
	return !s->launch && (w->bits[s->name] & (1u << set));
}

static bool is_ancestor(const struct sl *a, const struct sl *s)
{
	return a != s && a->thread == s->thread && !a->launch && a->ts <= s->ts &&
	       s->ts + s->dur <= a->ts + a->dur && (a->dur > s->dur || a->order < s->order);
}

static bool is_root(const struct world *w, const struct sl *s, int set)
{
	if (!has_set(w, s, set))
		return false;
	for (int i = 0; i < w->ns; i++)
		if (has_set(w, &w->s[i], set) && is_ancestor(&w->s[i], s))
			return false;
	return true;
}

/* The root of set containing time ts on thread (-1: any), or NULL. */
static const struct sl *root_at(const struct world *w, int set, int thread, int64_t ts)
{
	for (int i = 0; i < w->ns; i++) {
		const struct sl *s = &w->s[i];
		if ((thread < 0 || s->thread == thread) && is_root(w, s, set) && s->ts <= ts &&
		    ts <= s->ts + s->dur)
			return s;
	}
	return NULL;
}

/* seq of root s among the phase's steps (only_thread: -1 = any). */
static int seq_of(const struct world *w, const struct sl *s, int set, int only_thread)
{
	int seq = 0;
	for (int i = 0; i < w->ns; i++) {
		const struct sl *o = &w->s[i];
		if ((only_thread >= 0 && o->thread != only_thread) || !is_root(w, o, set))
			continue;
		if (o->ts < s->ts || (o->ts == s->ts && o->order < s->order))
			seq++;
	}
	return seq;
}

struct expect {
	int cat, phase, seq;
	bool recompute;
	const struct sl *step;
};

static void reference(const struct world *w, const struct rank_result *r, struct expect *e)
{
	int fwd = r->fwd_thread.found ? atoi(r->fwd_thread.tid) : -1;
	int bwd = r->bwd_thread.found ? atoi(r->bwd_thread.tid) : -1;
	bool generic = r->mode == RR_GENERIC;
	for (int i = 0; i < w->nk; i++) {
		const struct kn *k = &w->k[i];
		uint32_t kb = w->bits[NSN + k->name];
		int type = k->memevent                    ? RR_MEM
			   : kb & (1u << PAT_COMM_KERNEL) ? RR_COMM
			   : kb & (1u << PAT_MEM_KERNEL)  ? RR_MEM
							  : RR_COMP;
		const struct sl *l = NULL;
		for (int j = 0; j < w->ns && k->has_corr && !l; j++)
			if (w->s[j].launch && w->s[j].corr == k->corr)
				l = &w->s[j];
		struct expect *x = &e[i];
		memset(x, 0, sizeof(*x));
		x->phase = RR_NOPHASE;
		x->seq = -1;
		if (generic) {
			x->cat = type == RR_COMP   ? RR_COMPUTATION
				 : type == RR_COMM ? RR_COMMUNICATION
						   : RR_MEMORY;
			continue;
		}
		if (!l) {
			x->cat = type == RR_MEM ? RR_MEMORY : RR_OTHER;
			continue;
		}
		const struct sl *fs =
			l->thread == fwd ? root_at(w, PAT_FORWARD_STEP, fwd, l->ts) : NULL;
		const struct sl *bs =
			l->thread == bwd ? root_at(w, PAT_BACKWARD_STEP, fwd, l->ts) : NULL;
		const struct sl *ps = root_at(w, PAT_PP_COMM, l->thread, l->ts);
		const struct sl *ds = root_at(w, PAT_DP_COMM, l->thread, l->ts);
		const struct sl *os = root_at(w, PAT_OPTIMIZER, l->thread, l->ts);
		const struct sl *st = NULL;
		int ph = RR_NOPHASE;
		if (type == RR_MEM) {
			/* The first of these roots it lies in gives the phase. */
			const struct sl *in[] = { fs, bs, ps, ds, os };
			static const int phase[] = { RR_FWD, RR_BWD, RR_PP, RR_DP, RR_OPT };
			x->cat = RR_MEMORY;
			for (size_t at = 0; at < sizeof(in) / sizeof(in[0]) && !st; at++) {
				st = in[at];
				ph = st ? phase[at] : ph;
			}
		} else if (type == RR_COMM && ds) {
			x->cat = RR_DP_COMM;
			st = ds;
			ph = RR_DP;
		} else if (fs) {
			x->cat = type == RR_COMM ? RR_FWD_COMM : RR_FWD_COMP;
			st = fs;
			ph = RR_FWD;
		} else if (bs) {
			x->cat = type == RR_COMM ? RR_BWD_COMM : RR_BWD_COMP;
			st = bs;
			ph = RR_BWD;
			x->recompute = root_at(w, PAT_RECOMPUTE, l->thread, l->ts) != NULL;
		} else if (type == RR_COMM && ps && strstr(kernel_names[k->name], "SendRecv")) {
			/* rule 3 takes sends and receives, not an all-reduce */
			x->cat = RR_PP_COMM;
			st = ps;
			ph = RR_PP;
		} else if (type != RR_COMM && os) {
			x->cat = RR_OPT_COMP;
			st = os;
			ph = RR_OPT;
		} else {
			x->cat = RR_OTHER;
		}
		if (st) {
			static const int set_of[] = { PAT_FORWARD_STEP, PAT_BACKWARD_STEP,
						      PAT_PP_COMM, PAT_DP_COMM, PAT_OPTIMIZER };
			x->phase = ph;
			x->step = st;
			x->seq = seq_of(w, st, set_of[ph], ph <= RR_BWD ? fwd : -1);
		}
	}
}

static int64_t union_where(const struct rank_result *r, struct ivl *v, int cat, int type,
			   bool not_pp, bool covered)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nkernels; i++) {
		const struct rr_kernel *k = &r->kernels[i];
		if (cat >= 0 && k->category != cat)
			continue;
		if (type >= 0 && k->type != type)
			continue;
		if (not_pp && k->category == RR_PP_COMM)
			continue;
		if (covered && (r->mode == RR_GENERIC ? k->orphan : k->category == RR_OTHER))
			continue;
		v[n].s = k->start_ns;
		v[n++].e = k->start_ns + k->dur_ns;
	}
	return ivl_union(v, n);
}

static void check_metrics(const struct rank_result *r)
{
	static struct ivl v[MAXK], a[MAXK], b[MAXK];
	if (!r->nkernels)
		return;
	int64_t ws = INT64_MAX, we = INT64_MIN;
	for (size_t i = 0; i < r->nkernels; i++) {
		const struct rr_kernel *k = &r->kernels[i];
		if (k->start_ns < ws)
			ws = k->start_ns;
		if (k->start_ns + k->dur_ns > we)
			we = k->start_ns + k->dur_ns;
	}
	int64_t busy = union_where(r, v, -1, -1, false, false);
	assert_int_equal(r->window_start_ns, ws);
	assert_int_equal(r->window_end_ns, we);
	assert_int_equal(r->gpu_busy_ns, busy);
	assert_int_equal(r->idle_ns, we - ws - busy);
	assert_int_equal(r->bubble_ns, we - ws - union_where(r, v, -1, -1, true, false));
	assert_int_equal(r->comp_busy_ns, union_where(r, v, -1, RR_COMP, false, false));
	assert_int_equal(r->comm_busy_ns, union_where(r, v, -1, RR_COMM, false, false));
	size_t na = 0, nb = 0;
	for (size_t i = 0; i < r->nkernels; i++) {
		const struct rr_kernel *k = &r->kernels[i];
		struct ivl x = { k->start_ns, k->start_ns + k->dur_ns };
		if (k->type == RR_COMP)
			a[na++] = x;
		else if (k->type == RR_COMM)
			b[nb++] = x;
	}
	na = ivl_merge(a, na);
	nb = ivl_merge(b, nb);
	assert_int_equal(r->overlap_ns, ivl_overlap(a, na, b, nb));
	double cov = busy ? (double)union_where(r, v, -1, -1, false, true) / (double)busy : 0.0;
	assert_true(r->coverage == cov);
	for (int c = 0; c < RR_BWD_COMP_RECOMPUTE; c++)
		assert_int_equal(r->categories[c].busy_ns, union_where(r, v, c, -1, false, false));
	/* steps */
	for (size_t s = 0; s < r->nsteps; s++) {
		const struct rr_step *st = &r->steps[s];
		int64_t start = INT64_MAX, end = INT64_MIN, n = 0;
		na = nb = 0;
		for (size_t i = 0; i < r->nkernels; i++) {
			const struct rr_kernel *k = &r->kernels[i];
			if (k->step != (int32_t)s || k->category == RR_MEMORY ||
			    k->category == RR_OTHER)
				continue;
			struct ivl x = { k->start_ns, k->start_ns + k->dur_ns };
			if (x.s < start)
				start = x.s;
			if (x.e > end)
				end = x.e;
			n++;
			if (k->type == RR_COMM)
				b[nb++] = x;
			else
				a[na++] = x;
		}
		assert_int_equal(st->kernels, n);
		assert_int_equal(st->has_kernels, n > 0);
		if (n) {
			assert_int_equal(st->start_ns, start);
			assert_int_equal(st->end_ns, end);
			assert_int_equal(st->wall_ns, end - start);
		}
		na = ivl_merge(a, na);
		nb = ivl_merge(b, nb);
		assert_int_equal(st->comp_ns, ivl_total(a, na));
		assert_int_equal(st->comm_ns, ivl_total(b, nb));
		assert_int_equal(st->overlap_ns, ivl_overlap(a, na, b, nb));
	}
}

static void test_random_traces(void **state)
{
	struct strbuf cerr = STRBUF_INIT;
	(void)state;
	static struct world w;
	static struct expect e[MAXK];
	struct patterns *p = patterns_new(NULL, &cerr);
	int megatron = 0;
	for (uint64_t seed = 1; seed <= 100; seed++) {
		struct arena a = ARENA_INIT;
		rng_state = seed * 0x9e3779b97f4a7c15ull;
		gen_world(&w, p);
		struct rank_result *r = run(&w, &a, p);
		megatron += r->mode == RR_MEGATRON;
		reference(&w, r, e);
		assert_int_equal(r->nkernels, w.nk);
		for (int i = 0; i < w.nk; i++) {
			const struct rr_kernel *k = &r->kernels[i];
			int phase = rr_kernel_phase(r, k), seq = rr_kernel_seq(r, k);
			if (k->category != e[i].cat || phase != e[i].phase || seq != e[i].seq ||
			    k->recompute != e[i].recompute)
				fail_msg("seed %llu kernel %d: got %s %d %d %d, "
					 "expected %s %d %d %d",
					 (unsigned long long)seed, i, rr_category_name(k->category),
					 phase, seq, k->recompute, rr_category_name(e[i].cat),
					 e[i].phase, e[i].seq, e[i].recompute);
			if (e[i].step) {
				const struct rr_step *st = &r->steps[k->step];
				assert_int_equal(st->cpu_start_ns, e[i].step->ts);
				assert_int_equal(st->cpu_end_ns, e[i].step->ts + e[i].step->dur);
			}
		}
		check_metrics(r);
		arena_release(&a);
	}
	print_message("100 random traces, %d in megatron mode\n", megatron);
	assert_true(megatron > 40 && megatron < 97);
	patterns_free(p);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_random_traces),
	  })
