/* optype.h — the op types of the what-if analysis (docs/whatif.md §1.2):
 * what an operation of a training step is, spelled as the op-trace format
 * and the database's `ops` view spell it ("forward-compute", ...).
 *
 * This enum and its names are the one definition: the what-if engine
 * (whatif/) models them, the database stores these values as its op type
 * codes and writes its optype_codes table from op_type_name() (schema.c),
 * and the importers parse them with op_type_parse().
 */
#ifndef OPTYPE_H
#define OPTYPE_H

#include <stdbool.h>
#include <stddef.h>

enum op_type {
	OP_FWD_COMPUTE = 0, /* forward-compute */
	OP_BWD_COMPUTE,     /* backward-compute */
	OP_FWD_SEND,        /* forward-send */
	OP_FWD_RECV,        /* forward-recv */
	OP_BWD_SEND,        /* backward-send */
	OP_BWD_RECV,        /* backward-recv */
	OP_PARAMS_AG,       /* params-all-gather */
	OP_GRADS_RS,        /* grads-reduce-scatter */
	OP_SEP_AR,          /* separate-grads-all-reduce */
	OP_LAYERNORM,       /* layernorm-grads-all-reduce */
	OP_EMBEDDING,       /* embedding-grads-all-reduce */
	OP_CLIP,            /* optimizer-clip-main-grad */
	OP_OPTIMIZER,       /* optimizer */
	OP_GC,              /* gc */
	OP_NTYPES
};

/* The type's name, e.g. "forward-compute"; "?" outside the enum. */
const char *op_type_name(int type);
/* The type named s[0..n), or -1. */
int op_type_parse(const char *s, size_t n);
/* True when s[0..n) names one of Megatron's combined p2p calls, which the
 * model does not take as one op (e.g. "forward-send-backward-recv"). */
bool op_type_is_combined(const char *s, size_t n);

#endif
