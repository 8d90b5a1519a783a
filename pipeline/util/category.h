/* category.h — the names of the kernel categories and of the step phases
 * (docs/semantics.md §5), as the database and the expected results of ppgen
 * write them. The analysis (model/rank_result.h) and ppgen (gen/gen_model.h)
 * share only util/, so the one table of names is here; their enums list the
 * categories and phases in the order of these tables (each asserts the count).
 */
#ifndef CATEGORY_H
#define CATEGORY_H

#define PP_NMEGATRON_CATEGORIES 9 /* the categories of Megatron mode, first */
#define PP_NCATEGORY_NAMES 13     /* then generic mode's two and the two subset rows */
#define PP_NPHASE_NAMES 5

/* Indexed by enum rr_category; the first PP_NMEGATRON_CATEGORIES by enum
 * gen_cat too. The last two are the subset rows of category_stats (the
 * recomputed part of bwd_computation and bwd_communication). */
extern const char *const pp_category_names[PP_NCATEGORY_NAMES];

/* Indexed by enum rr_phase and enum gen_phase: "fwd", "bwd", "pp", "dp", "opt". */
extern const char *const pp_phase_names[PP_NPHASE_NAMES];

#endif
