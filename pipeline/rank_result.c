/* rank_result.c — names of the enums of rank_result.h (contracts §2). */
#include "rank_result.h"

static const char *const category_names[RR_NCATEGORIES] = {
	"fwd_computation", "fwd_communication", "bwd_computation",
	"bwd_communication", "pp_communication", "dp_communication",
	"optimizer_computation", "memory", "other", "computation",
	"communication", "bwd_computation_recompute",
	"bwd_communication_recompute"
};

const char *rr_category_name(enum rr_category c)
{
	return (unsigned)c < RR_NCATEGORIES ? category_names[c] : "?";
}

const char *rr_type_name(enum rr_type t)
{
	static const char *const n[] = { "comp", "comm", "mem" };
	return (unsigned)t < 3 ? n[t] : "?";
}

const char *rr_phase_name(enum rr_phase p)
{
	static const char *const n[RR_NPHASES] = { "fwd", "bwd", "pp", "dp",
						   "opt" };
	return p >= 0 && p < RR_NPHASES ? n[p] : NULL;
}

const char *rr_mode_name(enum rr_mode m)
{
	return m == RR_GENERIC ? "generic" : "megatron";
}

const char *rr_pg_kind_name(enum rr_pg_kind k)
{
	static const char *const n[] = { "unknown", "tp", "pp", "dp", "ep",
					 "cp" };
	return (unsigned)k < 6 ? n[k] : "unknown";
}

const char *rr_role_rule_name(enum rr_role_rule r)
{
	static const char *const n[] = { "none", "flows", "forward_step",
					 "pt_autograd_name", "bwd_launches",
					 "same_thread" };
	return (unsigned)r < 6 ? n[r] : "none";
}
