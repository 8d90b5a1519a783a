/* agg_timeline.h — what ppagg's timelines draw of one iteration: per rank,
 * one block per (step, drawn category), from its first kernel's start to
 * its last kernel's end (docs/semantics.md §8). Read from the kernels
 * (storage/db_agg.h) one iteration at a time, while its charts are
 * written, and dropped after: at scale they are most of ppagg's memory.
 */
#ifndef AGG_TIMELINE_H
#define AGG_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/rank_result.h"

struct agg_iter;
struct agg_job;
struct strbuf;
struct topology;

/* The drawn categories, in drawing order (largest boxes first). */
enum agg_cat {
	AGG_CAT_BWD_COMP,
	AGG_CAT_FWD_COMP,
	AGG_CAT_RECOMPUTE,
	AGG_CAT_FWD_COMM,
	AGG_CAT_BWD_COMM,
	AGG_CAT_DP_COMM,
	AGG_CAT_PP_COMM,
	AGG_CAT_OPT_COMP,
	AGG_NCATS
};

/* The kernel category each drawn category shows (its name labels it);
 * AGG_CAT_RECOMPUTE shows the recomputed subset of RR_BWD_COMP. */
extern const enum rr_category agg_cat_category[AGG_NCATS];

/* AGG_CAT_* of a kernel category (recompute: the kernel was recomputed,
 * for the subset's class), or -1 when it is not drawn. */
int agg_cat_of(enum rr_category c, bool recompute);

/* One block of a timeline: [first kernel start, last kernel end] of one
 * category's kernels in one step. */
struct agg_block {
	int64_t s, e;
	int32_t seq;  /* step number within its phase */
	uint8_t cat;  /* enum agg_cat */
	int8_t phase; /* enum rr_phase */
	int32_t kernels;
};

/* The blocks of one rank. */
struct agg_blocks {
	struct agg_block *v;
	size_t n, alloc;
};

/* The blocks of every rank of one iteration. */
struct agg_timeline {
	struct agg_blocks *rank; /* per it->ranks index */
	size_t nranks;
};

/* Loads into tl the blocks of the ranks of it, an iteration of job, that a
 * chart of its plan draws (its own timeline, a row of a PP group's or a
 * model replica's; the others get none), or takes them from
 * job->timelines when an analysis's scan already made them (agg_why.c):
 * one kernels scan of the iteration, or, when they are at most half of its
 * ranks, of their traces only. Steps timed without kernels (PP-timer
 * imports) become their phase's computation block. Returns 0, or PP_EDB
 * with the database's message appended to err; release tl with
 * agg_timeline_release() either way. */
int agg_timeline_load(const struct agg_job *job, const struct agg_iter *it, struct agg_timeline *tl,
		      struct strbuf *err);
void agg_timeline_release(struct agg_timeline *tl);

/* Filling tl from the rows of db_agg_blocks() or db_agg_blocks_why()
 * (storage/db_agg.h) when the caller runs the scan: begin, then
 * agg_timeline_block(F, row) for each row, then end. */
struct db_agg_block;
struct agg_timeline_fill {
	const struct agg_iter *it;
	struct agg_timeline *tl;
	struct agg_blocks *bl; /* the rank of the trace being read, or NULL */
	int64_t trace_id;
	const bool *need; /* the ranks (by index in it) whose blocks are kept; NULL: all */
};
void agg_timeline_begin(struct agg_timeline_fill *F, const struct agg_iter *it,
			struct agg_timeline *tl);
int agg_timeline_block(void *F, const struct db_agg_block *b);
void agg_timeline_end(struct agg_timeline_fill *F);
/* need[i] (it->nranks of them, free() them): whether a chart of it's plan
 * draws rank i; *n: how many do. */
bool *agg_timeline_drawn(const struct topology *t, const struct agg_iter *it, size_t *n);
/* The bytes tl's blocks take. */
size_t agg_timeline_bytes(const struct agg_timeline *tl);

#endif
