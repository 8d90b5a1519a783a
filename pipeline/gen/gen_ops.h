/* gen_ops.h — the what-if op table of one simulated rank: the rows that a
 * mapping of the rank's Kineto trace onto the op types of docs/whatif.md must
 * derive, by the rules of docs/contracts.md §4 (forward/backward compute from
 * the steps' GPU spans, one row per direction a p2p call names, DP
 * collectives by kind and chunk, finalize_model_grads' all-reduces, the
 * clip/optimizer split, zero-length placeholders). ppgen writes them to
 * .truth/ops.csv and, for one representative rank per (dp_rank, stage),
 * to .truth/optrace.csv. The op type names repeat model/optype.h's on
 * purpose: the generator must not link the code it checks
 * (docs/architecture.md), so a misspelling on either side fails the
 * comparison (t0512) instead of agreeing with itself.
 */
#ifndef GEN_OPS_H
#define GEN_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "gen_model.h"

/* The op types, in the alphabetical order of their names (the order of
 * the truth files' rows). */
enum gen_optype {
	GO_BWD,
	GO_BWD_RECV,
	GO_BWD_SEND,
	GO_EMB,
	GO_FWD,
	GO_FWD_RECV,
	GO_FWD_SEND,
	GO_GC,
	GO_RS,
	GO_LN,
	GO_OPT,
	GO_CLIP,
	GO_AG,
	GO_SEP,
	GO_N
};

/* "backward-compute", ..., spelled as in docs/whatif.md. */
extern const char *const gen_optype_names[GO_N];

struct gen_op {
	int64_t start, end; /* GPU interval, ns, in the rank's clock */
	int32_t seq;        /* ordinal among the rank's ops of the type, by start */
	int32_t mb;         /* micro-batch of a compute op, else -1 */
	int16_t mc, gmc;    /* chunk (compute, all-gather, reduce-scatter) and
			     * global chunk mc * pp + stage (compute), else -1 */
	uint8_t type;       /* enum gen_optype */
};

/* Derives rank r's ops for one iteration (cfg: the layout, vpp). The rows go
 * to *ops (grown with xrealloc; *cap its capacity), sorted by type and seq;
 * returns their number. */
size_t gen_ops_rank(const struct gen_rank *r, const struct gen_cfg *cfg, struct gen_op **ops,
		    size_t *cap);

#endif
