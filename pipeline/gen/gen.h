/* gen.h — ppgen: synthetic Megatron-LM trace trees with exact ground truth.
 *
 * gen_run() writes DIR/unique_parallel_groups_<ts>.txt, one Kineto trace per
 * rank and iteration in DIR/iteration_N/, and the expected analysis results
 * in DIR/.truth/ (docs/contracts.md §4). The work is split into gen_layout
 * (ranks, groups, topology text), gen_sched (program order of the pipeline
 * schedule), gen_prog (per-rank programs, categories by construction),
 * gen_sim (the cluster-wide timing),
 * gen_write (the trace writer, nasty quirks) and gen_truth (the CSVs).
 */
#ifndef GEN_H
#define GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gen_straggler {
	int rank;
	double factor;   /* compute kernel durations are multiplied by it */
};

struct gen_opts {
	const char *out;          /* output folder (created) */
	int tp, pp, dp, cp, ep;   /* parallel sizes, >= 1 */
	int vpp;                  /* virtual pipeline chunks per stage, >= 1 */
	int microbatches;
	const int *iterations;    /* iteration numbers, ascending */
	int niterations;
	int layers;               /* transformer layers per model chunk */
	int kpl;                  /* compute kernels per layer */
	bool recompute;           /* full activation recompute in backward */
	const struct gen_straggler *stragglers;
	int nstragglers;
	uint64_t seed;
	bool gzip;                /* write .json.gz */
	bool relative;            /* ts relative to baseTimeNanoseconds */
	bool quiet;               /* no summary line */
	const int *ranks;         /* ranks to write; NULL: all */
	int nranks;
	unsigned nasty;           /* GN_* flags of gen_model.h */
	int64_t start_ns;         /* clock of the first iteration; 0: default */
};

/* Generates the tree. Returns 0, PP_EINVAL (bad parameters, reported),
 * PP_EIO or PP_ECYCLE; errors are printed with error(). */
int gen_run(const struct gen_opts *o);

/* Parses a comma-separated list of nasty option names into GN_* flags;
 * returns PP_EINVAL and names the bad item in err. "all" = every option
 * except truncate. */
int gen_parse_nasty(const char *list, unsigned *out, char *err, size_t errlen);
/* Parses "0-3,8,12" into a newly allocated ascending, de-duplicated list. */
int gen_parse_int_list(const char *s, int **out, int *n);

#endif
