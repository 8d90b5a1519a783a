/* wi_ops.h — the op table of the what-if analysis (docs/whatif.md §1).
 *
 * One plain record per operation per (step, rank): what the op-trace reader
 * (wi_optrace.h) fills and what storage will fill from the `ops` view. Times are
 * int64 nanoseconds on any origin common to the workers of a step. The table
 * only stores; the engine (whatif.h) validates the rules of docs/whatif.md §1.2
 * and analyses.
 */
#ifndef WI_OPS_H
#define WI_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/optype.h"

struct strbuf;

/* One op instance. */
struct wi_op {
	int64_t step;             /* training iteration */
	int64_t start_ns, end_ns; /* GPU-side interval */
	int32_t rank;             /* global rank: an identifier only */
	int32_t seq_id;           /* ordinal among the ops of this type on this
				  * worker in this step, in start order */
	int16_t dp_rank, stage;   /* the worker's coordinates */
	int16_t mc, gmc, mb_id;   /* chunk, global chunk, micro-batch; -1 = none */
	uint8_t optype;           /* enum op_type (model/optype.h) */
};

/* Job metadata (docs/whatif.md §1.1). */
struct wi_meta {
	char trial_name[64];
	int64_t run_id;
	int64_t dp_size, pp_size, tp_size, dsp_size, vpp_size, world_size;
};

/* A growable array of ops plus where they came from. `line` is NULL or holds
 * each row's source line, for messages; `order` ranks the op types for the
 * tie-break of docs/whatif.md §3 (default: alphabetical names). */
struct wi_table {
	struct wi_op *ops;
	size_t n, cap;
	uint32_t *line;
	char src[256]; /* file name in messages ("" = none) */
	uint8_t order[OP_NTYPES];
	bool has_meta;
	struct wi_meta meta;
};

void wi_table_init(struct wi_table *t);
void wi_table_release(struct wi_table *t);
/* Appends a copy of op (line: its source line, 0 = unknown). Running out
 * of memory ends the process (docs/contracts.md §7). */
void wi_table_add(struct wi_table *t, const struct wi_op *op, uint32_t line);
/* Sets the tie-break order from a list of type names (the op trace's
 * categorical order); names that are not types are skipped, types not named
 * keep their alphabetical place after the named ones. */
void wi_table_set_order(struct wi_table *t, const char *const *names, size_t n);

/* Writes "FILE:LINE: " or "row N: " for row i into buf. */
void wi_table_where(const struct wi_table *t, size_t i, char *buf, size_t len);

/* Appends a message to err (as pp_err() does) and returns PP_EPARSE (for
 * `return wi_errf(...)` on bad input). */
int wi_errf(struct strbuf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Checks the metadata: positive sizes and world = dp·pp·tp·dsp. 0 or
 * PP_EINVAL with the reason appended to err. */
int wi_meta_check(const struct wi_meta *m, struct strbuf *err);

#endif
