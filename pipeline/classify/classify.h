/* classify.h — per-rank analysis of one trace (docs/semantics.md §4–6), incremental.
 *
 * Feed every event of a trace in file order with classify_feed(), then call
 * classify_finish() once with the header (needed for baseTimeNanoseconds,
 * known only at the end). The classifier keeps only launches, CPU slices that
 * match a pattern set, GPU events, fwdbwd flow endpoints, thread names and
 * ProfilerStep annotations, in the arena: memory grows with the kernels, not
 * with the file. Names are matched against the pattern sets once per distinct
 * name.
 *
 *   struct arena a = ARENA_INIT;
 *   struct classify *c = classify_new(pats, &a);
 *   while ((rc = trace_reader_next(r, &ev)) == 1)
 *           classify_feed(c, &ev);
 *   classify_finish(c, trace_reader_header(r), &res);
 *   classify_free(c);
 *   ... store res ...; arena_release(&a);
 */
#ifndef CLASSIFY_H
#define CLASSIFY_H

#include "model/rank_result.h"
#include "read/trace_read.h"

struct arena;
struct patterns;

struct classify;

/* A classifier drawing all its memory from arena (which must outlive the
 * result). pats is borrowed and must outlive the classifier. */
struct classify *classify_new(const struct patterns *pats, struct arena *arena);

/* A survey, for `ppbatch --inspect`: everything classify_finish() reports
 * except what needs every GPU event kept (kernel rows and categories,
 * orphans, process-group kernel counts, the rank metrics: the result has
 * survey set, nkernels 0, has_window false). Memory grows with the
 * distinct names, threads, pattern-matching slices and fwdbwd flow ids
 * (12 bytes each, ~50 k per GB), not with the kernels.
 * Launches are counted, not kept: when the backward thread must be decided
 * by "most launches inside backward-step windows" (docs/semantics.md §4, the last
 * fallback), classify_finish() returns CLASSIFY_AGAIN; feed the same events
 * once more (only launches are looked at) and call classify_finish() again. */
struct classify *classify_new_survey(const struct patterns *pats, struct arena *arena);
#define CLASSIFY_AGAIN 1

/* The GPU-event rule, in one place: what an event's category makes of it
 * (ASCII case-insensitive). A GPU event is an X event of category kernel,
 * gpu_memcpy or gpu_memset (2021 traces say Memcpy and Memset):
 * classify_gpu_event(). Everything that counts GPU events (the classifier,
 * ppbatch --inspect, the tests) asks these functions. */
enum classify_cat {
	CC_CPU,            /* any other category: a CPU slice (cpu_op, python_function, ...) */
	CC_KERNEL,         /* kernel */
	CC_MEMCPY,         /* gpu_memcpy, Memcpy */
	CC_MEMSET,         /* gpu_memset, Memset */
	CC_FWDBWD,         /* fwdbwd: flows from forward to backward threads */
	CC_ANNOTATION,     /* user_annotation: a CPU slice, and a user annotation */
	CC_GPU_ANNOTATION, /* gpu_user_annotation: on a stream, not work */
	CC_GPU_OTHER       /* cuda_sync: on the device, not work */
};
enum classify_cat classify_category(struct pp_sv cat);

/* Whether an event of phase ph and category kind c is a GPU event. */
static inline bool classify_gpu_event(char ph, enum classify_cat c)
{
	return ph == 'X' && (c == CC_KERNEL || c == CC_MEMCPY || c == CC_MEMSET);
}

/* A GPU event's type (docs/classification.md) from its name's pattern bits
 * (patterns_match()): memcpy/memset events (memevent) are mem; for kernels
 * comm_kernel is tested before mem_kernel. */
enum rr_type classify_kernel_type(uint32_t pattern_bits, bool memevent);

/* Takes one event (strings are copied as needed). */
void classify_feed(struct classify *c, const struct trace_event *ev);

/* Computes the result; h may be NULL (no base time). *out points into the
 * arena. Returns 0 (or, for a survey, CLASSIFY_AGAIN once).
 * Otherwise call once; the classifier is spent after (but must still be
 * freed). */
int classify_finish(struct classify *c, const struct trace_header *h, struct rank_result **out);

/* Releases the classifier's own heap tables (the result, in the arena, stays
 * valid). Accepts NULL. Call it whether or not classify_finish() ran. */
void classify_free(struct classify *c);

#endif
