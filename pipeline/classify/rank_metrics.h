/* rank_metrics.h — the whole-rank metrics of docs/semantics.md §6 (window,
 * gpu_busy, idle, bubble, comp_busy, comm_busy, overlap, coverage) over a
 * rank's time intervals, whatever they were read from. One owner, so that a
 * `ranks` row means the same for every source: the classifier's kernels
 * (rank_metrics_compute(), classify_int.h), an op trace's ops
 * (batch/opimport.c) and a PP-timer dump's steps (batch/pptimer.c) all go
 * through the same union sweep.
 */
#ifndef RANK_METRICS_H
#define RANK_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct rank_result;

/* What an interval counts in besides the window and gpu_busy (bits of
 * rm_interval.kind). */
enum {
	RM_COMP = 1,    /* computation: comp_busy, and the overlap with comm */
	RM_COMM = 2,    /* communication: comm_busy, and the overlap */
	RM_PP = 4,      /* a pipeline send/receive: left out of the bubble */
	RM_COVERED = 8, /* accounted for (a named category): coverage */
};

/* One interval [start_ns, end_ns) of a rank, in int64 ns. An empty one
 * (end_ns <= start_ns) adds nothing to the unions but still stretches the
 * window (docs/contracts.md §1). */
struct rm_interval {
	int64_t start_ns, end_ns;
	unsigned kind; /* RM_* bits */
};

/* Sets the whole-rank metrics of res (has_window, window_start_ns,
 * window_end_ns, gpu_busy_ns, idle_ns, bubble_ns, comp_busy_ns,
 * comm_busy_ns, overlap_ns, coverage; nothing else) from v[0..n), given in
 * any order: v is sorted by start in place (qsort()) unless it already
 * is; nothing else is allocated. n = 0: has_window false and every metric
 * 0. Linear after the sort. */
void rank_metrics_totals(struct rm_interval *v, size_t n, struct rank_result *res);

#endif
