/* category.c — the names of category.h. */
#include "category.h"

const char *const pp_category_names[PP_NCATEGORY_NAMES] = {
	"fwd_computation",
	"fwd_communication",
	"bwd_computation",
	"bwd_communication",
	"pp_communication",
	"dp_communication",
	"optimizer_computation",
	"memory",
	"other",
	"computation",
	"communication",
	"bwd_computation_recompute",
	"bwd_communication_recompute",
};

const char *const pp_phase_names[PP_NPHASE_NAMES] = { "fwd", "bwd", "pp", "dp", "opt" };
