/* gen_truth.h — ppgen's expected results (docs/contracts.md §4), computed
 * from the model by docs/semantics.md §5–6: DIR/.truth/{ranks,category_stats,steps,
 * pp_groups,stragglers}.csv; the what-if op tables; the why analysis' p2p,
 * p2p_kernels and collectives (gen_why.h). Rows are appended in (iteration, rank) order,
 * so callers feed iterations ascending and ranks ascending.
 */
#ifndef GEN_TRUTH_H
#define GEN_TRUTH_H

#include <stdbool.h>
#include <stdint.h>

#include "gen_model.h"
#include "gen_ops.h"
#include "gen_why.h"

struct gen_truth;
struct strbuf;

/* What pp_groups needs from each rank. */
struct gen_rank_sum {
	bool present;
	int64_t win_s, win_e; /* window; win_s > win_e when no GPU events */
	int64_t busy;         /* union of all GPU events */
	int64_t busy_nonpp;   /* union of all but pp_communication */
};

/* Starts the CSV files with their headers in the .truth folder dirfd (dir:
 * its name for messages), each written through safefile.h until
 * gen_truth_close(), and writes optrace-meta.yaml for the job (lay, vpp).
 * Returns NULL with a message appended to err. */
struct gen_truth *gen_truth_open(int dirfd, const char *dir, const struct gen_layout *lay, int vpp,
				 struct strbuf *err);
/* Appends r's rows to ranks, category_stats and steps; fills *sum. */
void gen_truth_rank(struct gen_truth *t, int iteration, const struct gen_rank *r,
		    struct gen_rank_sum *sum);
/* Appends the pp_groups rows of every PP group whose ranks are all present
 * (sums has lay->world entries). */
void gen_truth_pp_groups(struct gen_truth *t, int iteration, const struct gen_layout *lay,
			 const struct gen_rank_sum *sums);
void gen_truth_straggler(struct gen_truth *t, int iteration, int rank);
/* Appends rank r's op rows (gen_ops_rank(), times in the rank's clock) to
 * ops.csv; dp is its data-parallel coordinate. */
void gen_truth_ops(struct gen_truth *t, int iteration, const struct gen_rank *r, int dp,
		   const struct gen_op *ops, size_t n);
/* Keeps the ops of the representative rank of (dp, stage) for optrace.csv;
 * offset_ns is the rank's clock offset (its times minus the true time). */
void gen_truth_optrace_add(struct gen_truth *t, const struct gen_rank *r, int dp, int64_t offset_ns,
			   const struct gen_op *ops, size_t n);
/* Writes the kept rows as one step of optrace.csv: true times in seconds
 * from the step's first start, rows by rank, type and seq. */
void gen_truth_optrace_step(struct gen_truth *t, int iteration);
/* Appends rank's p2p transfers and kernels (gen_why_p2p(), true time) to
 * p2p.csv and p2p_kernels.csv; sorts rows. */
void gen_truth_p2p(struct gen_truth *t, int iteration, int rank, struct gen_p2p_rows *rows);
/* Appends one collective instance (gen_why_collectives()) to
 * collectives.csv. */
void gen_truth_collective(struct gen_truth *t, int iteration, const struct gen_layout *lay,
			  const struct gen_coll *x, const int *tied, int ntied);
/* Writes clock_offsets.csv (`rank,offset_ns`, world rows). 0 or PP_EIO
 * with a message appended to err. */
int gen_truth_clock_offsets(struct gen_truth *t, const int64_t *offset_ns, int world,
			    struct strbuf *err);
/* Closes the files; returns 0 or PP_EIO (message appended to err; err may be NULL). */
int gen_truth_close(struct gen_truth *t, struct strbuf *err);
/* Discards the files being written (the earlier ones stay); t may be NULL. */
void gen_truth_abort(struct gen_truth *t);

#endif
