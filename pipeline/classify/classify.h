/* classify.h — per-rank analysis of one trace (SPEC §4–§6), incremental.
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

struct arena;
struct patterns;
struct trace_event;
struct trace_header;

struct classify;

/* A classifier drawing all its memory from arena (which must outlive the
 * result). pats is borrowed and must outlive the classifier. NULL when out
 * of memory. */
struct classify *classify_new(const struct patterns *pats, struct arena *arena);

/* A survey, for `ppbatch --inspect`: everything classify_finish() reports
 * except what needs every GPU event kept (kernel rows and categories,
 * orphans, process-group kernel counts, the rank metrics: the result has
 * survey set, nkernels 0, has_window false). Memory grows with the
 * distinct names, threads, pattern-matching slices and fwdbwd flow ids
 * (12 bytes each, ~50 k per GB), not with the kernels.
 * Launches are counted, not kept: when the backward thread must be decided
 * by "most launches inside backward-step windows" (SPEC §4, the last
 * fallback), classify_finish() returns CLASSIFY_AGAIN; feed the same events
 * once more (only launches are looked at) and call classify_finish() again. */
struct classify *classify_new_survey(const struct patterns *pats,
				     struct arena *arena);
#define CLASSIFY_AGAIN 1

/* A GPU event's type (SPEC §5) from its name's pattern bits
 * (patterns_match()): gpu_memcpy/gpu_memset events are mem; for kernels
 * comm_kernel is tested before mem_kernel. */
enum rr_type classify_kernel_type(uint32_t pattern_bits, bool memevent);

/* Takes one event (strings are copied as needed). Returns 0, or PP_ENOMEM
 * (the classifier is then failed and every later call returns PP_ENOMEM). */
int classify_feed(struct classify *c, const struct trace_event *ev);

/* Computes the result; h may be NULL (no base time). *out points into the
 * arena. Returns 0 or PP_ENOMEM (or, for a survey, CLASSIFY_AGAIN once).
 * Otherwise call once; the classifier is spent after (but must still be
 * freed). */
int classify_finish(struct classify *c, const struct trace_header *h,
		    struct rank_result **out);

/* Releases the classifier's own heap tables (the result, in the arena, stays
 * valid). Accepts NULL. Call it whether or not classify_finish() ran. */
void classify_free(struct classify *c);

#endif
