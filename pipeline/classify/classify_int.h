/* classify_int.h — the classifier's internal state, shared by its modules:
 * classify.c (feeding, interning, result assembly), roles.c (thread roles),
 * steps.c (root-most steps and containment lookups), attribute.c (one
 * category and collective per GPU event), annotate.c (GPU time per user
 * annotation), nest.c (the innermost enclosing range, which both use) and
 * rank_metrics.c (docs/semantics.md §6 numbers).
 *
 * Raw times here are as written in the file (ns); the header's base time
 * is added only when the result is assembled.
 */
#ifndef CLASSIFY_INT_H
#define CLASSIFY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/patterns.h"
#include "model/rank_result.h"
#include "util/htab.h"
#include "util/vec.h"

struct arena;

/* Name bits beyond the pattern sets: ProfilerStep#N, and the Megatron
 * frames the what-if ops are placed by (ops.c, ops_frame_bits()). */
enum {
	NB_PROFSTEP = 1u << 16,    /* ProfilerStep#N */
	NB_CLIP = 1u << 17,        /* *clip_grad* *grad_norm* */
	NB_FINALIZE = 1u << 18,    /* *finalize_model_grads */
	NB_FINISH_GRAD = 1u << 19, /* *finish_grad_sync */
	NB_GRAD_SYNC = 1u << 20,   /* *start_grad_sync, *finish_grad_sync */
	NB_NCCL_OP = 1u << 21,     /* nccl:<op>: a collective's CPU range */
	/* Bits 24-27: the enum rr_coll a comm kernel's name (or Collective
	 * name arg) says, NB_COLL_UNKNOWN until a comm kernel asks. */
	NB_COLL_SHIFT = 24,
	NB_COLL_MASK = 15,
	NB_COLL_UNKNOWN = 15,
	NB_SLICE_SETS = (1u << PAT_FORWARD_STEP) | (1u << PAT_BACKWARD_STEP) | (1u << PAT_PP_COMM) |
			(1u << PAT_DP_COMM) | (1u << PAT_OPTIMIZER) | (1u << PAT_RECOMPUTE) |
			(1u << PAT_LOSS_FUNC) | NB_PROFSTEP | NB_CLIP | NB_FINALIZE |
			NB_FINISH_GRAD | NB_GRAD_SYNC
};

struct cname {
	const char *s;    /* arena copy of the raw bytes (for interning) */
	const char *text; /* s, or a copy with each NUL byte as U+FFFD: what
			   * is matched and output (C strings end at NUL) */
	uint32_t len;
	uint32_t bits; /* 1u << pat_set, NB_* */
	uint64_t hash;
	uint32_t out_id; /* id in rank_result.names, UINT32_MAX = unused */
};

struct cthread {
	bool pid_str, tid_str;
	int64_t pid, tid;
	const char *pid_s, *tid_s; /* arena copies when *_str */
	uint64_t hash;
	const char *name;         /* thread_name metadata, or NULL */
	int64_t flows_s, flows_f; /* fwdbwd endpoints */
	int64_t launches;
	int64_t bwd_launches; /* launches inside backward-step windows */
	int64_t fwd_steps;    /* root-most forward_step slices */
};

struct cslice { /* a CPU slice matching a pattern set */
	int64_t ts, dur;
	uint32_t thread, name, bits, order;
};

/* A slice of a nest (struct nest): a CPU user annotation (thread, val =
 * name id), a CPU range that names a collective (val = enum rr_coll), or a
 * gpu_user_annotation range (thread = its stream, val = name id). */
struct nslice {
	int64_t ts, end;
	uint32_t thread, order, val;
	int32_t parent; /* the slice that encloses it, or -1 (nest_build()) */
	int64_t hits;   /* GPU events it gave its val to */
};

/* Slices sorted by (thread, ts, longer first, order), each with its
 * parent: the innermost slice holding a time is found by a binary search
 * and a walk up the parents (nest_find()). */
struct nest {
	struct nslice *v;
	size_t n;
};

struct cpgslice { /* a CPU op carrying process-group args */
	int64_t ts, dur;
	uint32_t thread, order;
	int32_t pg;
};

/* The nesting order of slices (docs/semantics.md §4): by thread, then start,
 * the longer one first (an ancestor precedes what it encloses), then file
 * order. For qsort comparators of cslice and cpgslice. */
static inline int cmp_nesting(uint32_t thread_a, int64_t ts_a, int64_t dur_a, uint32_t order_a,
			      uint32_t thread_b, int64_t ts_b, int64_t dur_b, uint32_t order_b)
{
	if (thread_a != thread_b)
		return thread_a < thread_b ? -1 : 1;
	if (ts_a != ts_b)
		return ts_a < ts_b ? -1 : 1;
	if (dur_a != dur_b)
		return dur_a > dur_b ? -1 : 1;
	return (order_a > order_b) - (order_a < order_b);
}

/* One launch (a CPU event with a correlation id): 12 bytes, not 16 with
 * the padding after thread, as there is one per kernel (docs/ppbatch.md,
 * "Performance"); 4-byte aligned, x86-64 and aarch64 load ts unaligned. */
struct __attribute__((packed, aligned(4))) claunch {
	int64_t ts;
	uint32_t thread;
};
_Static_assert(sizeof(struct claunch) == 12, "claunch is 12 bytes");

struct cgroup {
	const char *name, *desc, *ranks;
	uint64_t hash;
	int64_t kernels;
};

/* A root-most slice of one set; sorted by (thread, ts) for lookups. */
struct croot {
	int64_t ts, end;
	uint32_t thread, name, order;
	int32_t step; /* index into the result's steps, or -1 */
};

/* The order of roots: by start, then by feed order. */
static inline int croot_cmp(const struct croot *a, const struct croot *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return (a->order > b->order) - (a->order < b->order);
}

struct croots {
	struct croot *v;
	size_t n;
};

/* What the what-if ops need from the feeding that classify_finish() drops
 * before the step metrics exist (ops.c): the launch of every comm and
 * optimizer kernel, and the Megatron frames. */
struct op_cand {
	uint32_t kernel; /* index into rank_result.kernels */
	uint32_t thread; /* of its launch */
	int64_t ts;      /* its launch's raw start */
};

struct ops_prep {
	struct op_cand *cand;
	size_t ncand;
	struct croots clip, finalize, grad_sync;
	struct croots finish; /* by start, any thread: their index is a chunk */
};

#define NCACHE_SETS 64
#define NCACHE_WAYS 4

/* One way of the name cache (struct classify's ncache). */
struct ncache_way {
	uint64_t key;
	uint32_t id1; /* id + 1; 0 = empty */
};

struct classify {
	const struct patterns *pats;
	struct arena *arena;

	struct vec names, threads, slices, pgslices, launches, groups;
	/* struct nslice: user annotations (CPU), CPU ranges naming a
	 * collective, gpu_user_annotation ranges; none in a survey. */
	struct vec annslices, collslices, gpuannslices;
	struct vec dup_launches; /* launches whose correlation came before */
	/* GPU events as result rows from the start (raw ts, type set; the
	 * category and step are filled in by attribute_kernels()). */
	struct vec gpus;
	struct itab name_tab, thread_tab, group_tab;
	/* Recent names by (length, first and last 8 bytes): most events repeat
	 * a name seen a moment ago, and a hit costs at most one memcmp, no
	 * hash. Sets of NCACHE_WAYS, newest first: templated kernel names
	 * often share their ends and length (cuBLAS's sm90_xmma_gemm_*). */
	struct ncache_way ncache[NCACHE_SETS][NCACHE_WAYS];
	struct cmap corr;     /* correlation → launch index */
	struct imap flows;    /* fwdbwd id hash → bit 1 s, bit 2 f */
	bool survey;          /* classify_new_survey(): no GPU rows, no launches */
	bool launch_pass;     /* survey, second pass: count launches only */
	bool roots_done;      /* steps_find_roots() ran (survey, first finish) */
	uint32_t last_thread; /* cache for consecutive events on one thread */
	bool have_last_thread;
	struct rr_counters cnt;

	/* Computed by classify_finish(). */
	struct croots roots[PAT_NSETS]; /* per pattern set, root-most slices */
	struct croots profsteps;
	int fwd, bwd;                  /* thread indices, -1 = none */
	int64_t gpu_in_set[PAT_NSETS]; /* GPU events matching comm/mem_kernel */
	struct ops_prep ops;
};

/* steps.c */
void steps_find_roots(struct classify *c);
/* Fills r with the root-most kept slices whose name has bit (a pattern set's
 * 1u << set, or an NB_* bit), sorted by (thread, ts). */
void steps_roots_of(struct classify *c, uint32_t bit, struct croots *r);
/* Index of the root of r containing ts on thread (closed interval), or -1.
 * thread UINT32_MAX matches any thread (r must then be sorted by ts). */
long roots_find(const struct croots *r, uint32_t thread, int64_t ts);
/* roots_find() for lookups whose times mostly move forward (the launches of
 * the kernels in GPU order): *hint, a root found before, is taken when it
 * is exactly what roots_find() would give (it contains ts and the next
 * root starts after ts), else the search runs and moves the hint. Start
 * *hint at 0. */
long roots_find_near(const struct croots *r, uint32_t thread, int64_t ts, size_t *hint);

/* nest.c */
/* Sorts v (a vec of struct nslice, given over) into n and sets the
 * parents. */
void nest_build(struct vec *v, struct nest *n);
/* The innermost slice of n on thread holding ts (closed: s.ts <= ts <=
 * s.end; half_open: s.ts <= ts < s.end, or ts == s.ts), or -1. */
long nest_find(const struct nest *n, uint32_t thread, int64_t ts, bool half_open);
/* Whether slice i holds ts (the same rule). */
static inline bool nest_holds(const struct nslice *s, int64_t ts, bool half_open)
{
	return s->ts <= ts && (half_open ? ts < s->end || ts == s->ts : ts <= s->end);
}

/* annotate.c: the user annotations of the kernels and their metrics. */
struct ann_members {
	uint32_t *first; /* kernel i's annotations are idx[first[i]..first[i+1]) */
	uint32_t *idx;   /* indices into rank_result.annotations */
	size_t nann;
};
/* Builds the annotation rows of res (calls set, metrics 0) and each
 * kernel's annotation indices into m, from the nests (CPU annotations by
 * launch, GPU ranges by stream and start: raw times, so the kernels'
 * absolute starts less base); m->nann 0 when none. Call it after
 * attribute_kernels() (orphans known), while the launches exist. */
void annotate_kernels(struct classify *c, struct rank_result *res, int64_t base, struct nest *cpu,
		      struct nest *gpu, struct ann_members *m);

/* roles.c */
/* Returns CLASSIFY_AGAIN when a survey must count launches first (the
 * launch fallback), else 0. */
int roles_decide(struct classify *c, struct rank_result *res);

/* attribute.c: completes res->kernels[i] (GPU event i, raw ts): adds base,
 * sets category, step (croot.step of the roots), recompute, orphan, group
 * (pg = process-group slices as roots, step = group index), the CPU side's
 * collective (colls: CPU ranges naming one); iter_of[i] = index of the
 * iteration window (its = ProfilerStep roots by ts) or -1. */
void attribute_kernels(struct classify *c, struct rank_result *res, int64_t base,
		       const struct croots *pg, const struct croots *its, const struct nest *colls,
		       int32_t *iter_of);

/* rank_metrics.c: category stats, step metrics, rank metrics, iteration
 * windows (from iter_of) and annotation metrics (from ann; NULL: none) of an
 * attributed result. */
void rank_metrics_compute(struct rank_result *res, const int32_t *iter_of,
			  const struct ann_members *ann, struct arena *a);

/* ops.c: the what-if ops (docs/contracts.md §4.1). */
/* NB_* bits of the frames a name is (once per distinct name). */
uint32_t ops_frame_bits(const char *name);
/* The enum rr_coll that interned name id says (patterns_collective(),
 * computed on its first call; for an nccl:<op> range, rr_coll_of() of the
 * op). */
static inline uint8_t ops_coll(struct classify *c, long id)
{
	struct cname *e = &VEC_AT(&c->names, struct cname, id);
	if ((e->bits >> NB_COLL_SHIFT & NB_COLL_MASK) == NB_COLL_UNKNOWN) {
		uint32_t coll = e->bits & NB_NCCL_OP
					? (uint32_t)rr_coll_of(e->text + 5, e->len - 5)
					: (uint32_t)patterns_collective(c->pats, e->text);
		e->bits = (e->bits & ~((uint32_t)NB_COLL_MASK << NB_COLL_SHIFT)) |
			  coll << NB_COLL_SHIFT;
	}
	return (uint8_t)(e->bits >> NB_COLL_SHIFT & NB_COLL_MASK);
}
/* Before the launches and slices are dropped: keeps what ops_derive()
 * needs (Megatron mode only). */
void ops_prepare(struct classify *c, const struct rank_result *res);
/* After the step metrics and the process groups: res->ops. */
void ops_derive(struct classify *c, struct rank_result *res);

#endif
