/* why_int.h — the engine's layout, shared by its files: why.c (the rows,
 * the run, the summaries), why_p2p.c (labels, pairs, waits), why_coll.c
 * (collective instances) and why_clock.c (the ranks' clock offsets).
 *
 * A run works on indices: ranks are numbered by their place in the sorted
 * rank list (rank index), iterations by their place in the sorted list of
 * iterations (iteration index). Times stay in each rank's own clock until
 * the offsets are known; every measure is taken after that.
 */
#ifndef WHY_INT_H
#define WHY_INT_H

#include <stdlib.h>

#include "util/htab.h"
#include "why.h"

struct why_grp {
	char *desc, *text;
	int32_t *ranks; /* ascending */
	int32_t n;
	int kind;
};

struct why {
	struct why_opts o;
	struct why_rank *rank;
	size_t nrank, caprank;
	struct why_trace *trace;
	size_t ntrace, captrace;
	struct why_op *op;
	size_t nop, capop;
	struct why_grp *grp;
	size_t ngrp, capgrp;
	struct why_kernel *kern;
	size_t nkern, capkern;
};

/* A p2p call of one rank (its rows with one interval): a p2p kernel. */
struct wcall {
	int32_t ii, ri; /* iteration index, rank index */
	int32_t seq;
	int64_t start, end; /* own clock */
	int32_t nep;        /* its transfers */
	uint8_t status;     /* WHY_OK, or why it has no transfers (WHY_NO_PLACE) */
};

/* One transfer endpoint: a p2p row that moves a tensor. key: iteration
 * index, pipeline, direction, the producing virtual stage, micro-batch. */
struct wep {
	int64_t key[5];
	int32_t call, peer_call; /* peer_call -1 until paired */
	int32_t peer_rank, mb, chunk;
	uint8_t dir, role, status;
};

/* A member's kernel of a complete collective instance: a copy of what the
 * measures need, instance by instance (read in order, not by index). */
struct wmem {
	int64_t start, dur; /* own clock */
	int32_t rank, ri;   /* rank and rank index (-1: not in the topology) */
};

/* One collective instance while matching: when complete (WHY_OK), its
 * members' kernels are mem[first .. first + size), in member order. */
struct winst {
	int32_t ii, grp, seq;
	int32_t first, size, present;
	int32_t missing_rank;
	uint8_t status;
};

struct wrun {
	struct why *w;
	struct why_result *r;
	int P, V;
	/* ranks, ascending and distinct, and their index */
	struct why_rank *rk;
	size_t nrk;
	struct imap rank_idx;
	int32_t *rank_lut; /* rank -> index for ranks below nlut (-1: none) */
	int32_t nlut;
	struct imap place; /* pp_group * P + stage -> rank */
	/* iterations, ascending and distinct */
	int64_t *iters;
	size_t niters;
	struct imap trace_of; /* (ii << 32 | rank) -> index into w->trace */
	struct imap has_ops;  /* (ii << 32 | rank) -> 1 when it has op rows */
	int64_t *off;         /* per rank index: the offset taken off */
	/* p2p */
	struct wcall *call;
	size_t ncall, capcall;
	struct wep *ep;
	size_t nep, capep;
	size_t noop_calls; /* calls whose rows are all no-ops: left out */
	/* collectives */
	struct winst *inst;
	size_t ninst, capinst;
	struct wmem *mem;
	size_t nmem, capmem;
	size_t stray_kernels; /* kernels of a rank outside their group */
};

/* The (iteration index, rank) key of trace_of and has_ops. */
static inline int64_t why_key(int32_t ii, int32_t rank)
{
	return (int64_t)((uint64_t)(uint32_t)ii << 32 | (uint32_t)rank);
}

/* why_index.c: the ranks (sorted, each once: the first place given wins),
 * their places and every iteration any row names; then the lookups. */
void why_index_rows(struct wrun *R);
/* The iteration index of it (it must be one of R's). */
int32_t why_iter_index(const struct wrun *R, int64_t it);
/* The rank index of rank, or -1. */
int32_t why_rank_index(const struct wrun *R, int32_t rank);
/* Whether (ii, rank) has a trace. */
bool why_has_trace(const struct wrun *R, int32_t ii, int32_t rank);

/* why_p2p.c: labels the p2p rows, builds the calls and pairs the
 * transfers; then, once R->off is known, the rows, kernels, bubbles and
 * hops of the result. */
void why_p2p_match(struct wrun *R);
void why_p2p_measure(struct wrun *R);

/* why_coll.c: the instances; then their measures and the per-rank rows. */
void why_coll_match(struct wrun *R);
void why_coll_measure(struct wrun *R);

/* why_clock.c: R->off from the paired calls and the complete instances
 * (or zeros), and the result's clock fields. */
void why_clock_run(struct wrun *R);

/* qsort() that accepts an empty (NULL) array. */
static inline void why_sort(void *v, size_t n, size_t sz, int (*cmp)(const void *, const void *))
{
	if (n)
		qsort(v, n, sz, cmp);
}

/* The index of x in v[0..n) (ascending), or -1. */
static inline int32_t why_find(const int32_t *v, size_t n, int32_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == x ? (int32_t)lo : -1;
}

/* Grows *v (element size sz) to hold at least n + 1 elements. */
void why_grow(void **v, size_t *cap, size_t n, size_t sz);
/* xmalloc(n) (zeroed: xcalloc) of a block the engine fills at once. The
 * big blocks of both (from 2 MiB) get huge pages (util/hugepage.h): at
 * 1,024 ranks the engine touches ~170 MB of fresh memory, and its 4 KiB
 * first-touch faults were a fifth of its time on a virtual machine. */
void *why_big(size_t n, bool zero);

#endif
