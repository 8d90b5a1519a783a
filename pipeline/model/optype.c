/* optype.c — the op types' names (see optype.h). */
#include "optype.h"

#include <string.h>

static const char *const optype_names[OP_NTYPES] = {
	[OP_FWD_COMPUTE] = "forward-compute",
	[OP_BWD_COMPUTE] = "backward-compute",
	[OP_FWD_SEND] = "forward-send",
	[OP_FWD_RECV] = "forward-recv",
	[OP_BWD_SEND] = "backward-send",
	[OP_BWD_RECV] = "backward-recv",
	[OP_PARAMS_AG] = "params-all-gather",
	[OP_GRADS_RS] = "grads-reduce-scatter",
	[OP_SEP_AR] = "separate-grads-all-reduce",
	[OP_LAYERNORM] = "layernorm-grads-all-reduce",
	[OP_EMBEDDING] = "embedding-grads-all-reduce",
	[OP_CLIP] = "optimizer-clip-main-grad",
	[OP_OPTIMIZER] = "optimizer",
	[OP_GC] = "gc",
};

const char *op_type_name(int optype)
{
	return optype >= 0 && optype < OP_NTYPES ? optype_names[optype] : "?";
}

int op_type_parse(const char *s, size_t n)
{
	for (int i = 0; i < OP_NTYPES; i++)
		if (strlen(optype_names[i]) == n && !memcmp(optype_names[i], s, n))
			return i;
	return -1;
}

bool op_type_is_combined(const char *s, size_t n)
{
	/* Megatron's combined calls, as the reference's helper lists them. */
	static const char *const combined[] = {
		"forward-send-backward-recv", "backward-send-forward-recv",
		"forward-send-forward-recv",  "backward-send-backward-recv",
		"forward-backward-send-recv",
	};
	for (size_t i = 0; i < sizeof(combined) / sizeof(combined[0]); i++)
		if (strlen(combined[i]) == n && !memcmp(combined[i], s, n))
			return true;
	return false;
}
