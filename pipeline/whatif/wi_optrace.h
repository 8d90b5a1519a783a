/* wi_optrace.h — op-trace files (docs/whatif.md §1): the CSV of ops, the job's
 * meta yaml and the optional schema json that fixes the optype order.
 *
 * The CSV has a header naming at least dp_rank, stage, rank, step, optype,
 * start_ts, duration, seq_id, mc, mb_id and gmc (any order, other columns
 * ignored); times are seconds as decimal text. Each time is read as the
 * float32 that its text denotes (correctly rounded, as strtof would) and
 * converted to int64 ns by rounding that float's exact value; end = start +
 * duration in ns. Plain or gzip input (any name).
 */
#ifndef WI_OPTRACE_H
#define WI_OPTRACE_H

#include <stddef.h>

#include "wi_ops.h"

/* Appends the rows of the CSV at path to t (t->src becomes path, t->line the
 * rows' lines). Returns 0, PP_EIO (cannot read: strerror in err) or
 * PP_EPARSE ("FILE:LINE: column 'x': what is wrong"). */
int wi_optrace_read(const char *path, struct wi_table *t, struct strbuf *err);

/* Reads the meta yaml's `key: value` lines (trial_name, run_id, dp_size,
 * pp_size, tp_size, dsp_size, vpp_size, world_size; missing sizes are 1) and
 * checks them (wi_meta_check()). 0, PP_EIO or PP_EPARSE with "FILE:LINE:
 * what" in err. */
int wi_optrace_read_meta(const char *path, struct wi_meta *m, struct strbuf *err);

/* Reads the optype order of a schema json ("categories": {"optype": [...]})
 * into t (wi_table_set_order()). 0, PP_EIO or PP_EPARSE. */
int wi_optrace_read_schema(const char *path, struct wi_table *t, struct strbuf *err);

/* Parses s[0..n) as a decimal number to the nearest float32 (ties to even),
 * like strtof. 0, or PP_EPARSE when it is not a finite decimal number. */
int wi_optrace_parse_f32(const char *s, size_t n, float *out);

/* Seconds (a float32's exact value) to nanoseconds, rounded to nearest,
 * halves away from zero. */
int64_t wi_optrace_f32_ns(float seconds);

#endif
