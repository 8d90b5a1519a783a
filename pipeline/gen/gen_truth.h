/* gen_truth.h — ppgen's expected results (docs/contracts.md §4), computed
 * from the model by docs/semantics.md §5–6: DIR/.truth/{ranks,category_stats,steps,
 * pp_groups,stragglers}.csv. Rows are appended in (iteration, rank) order,
 * so callers feed iterations ascending and ranks ascending.
 */
#ifndef GEN_TRUTH_H
#define GEN_TRUTH_H

#include <stdbool.h>
#include <stdint.h>

#include "gen_model.h"

struct gen_truth;

/* What pp_groups needs from each rank. */
struct gen_rank_sum {
	bool present;
	int64_t win_s, win_e;   /* window; win_s > win_e when no GPU events */
	int64_t busy;           /* union of all GPU events */
	int64_t busy_nonpp;     /* union of all but pp_communication */
};

/* Starts the CSV files with their headers in the .truth folder dirfd (dir:
 * its name for messages), each written through safefile.h until
 * gen_truth_close(). Returns NULL with a message in err. */
struct gen_truth *gen_truth_open(int dirfd, const char *dir, char *err, size_t errlen);
/* Appends r's rows to ranks, category_stats and steps; fills *sum. */
void gen_truth_rank(struct gen_truth *t, int iteration, const struct gen_rank *r,
		    struct gen_rank_sum *sum);
/* Appends the pp_groups rows of every PP group whose ranks are all present
 * (sums has lay->world entries). */
void gen_truth_pp_groups(struct gen_truth *t, int iteration, const struct gen_layout *lay,
			 const struct gen_rank_sum *sums);
void gen_truth_straggler(struct gen_truth *t, int iteration, int rank);
/* Closes the files; returns 0 or PP_EIO (message in err). */
int gen_truth_close(struct gen_truth *t, char *err, size_t errlen);

#endif
