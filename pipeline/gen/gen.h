/* gen.h — ppgen: synthetic Megatron-LM trace trees with exact ground truth.
 *
 * gen_run() writes DIR/unique_parallel_groups_<ts>.txt, one Kineto trace per
 * rank and iteration in DIR/iteration_N/, and the expected analysis results
 * in DIR/.truth/ (docs/contracts.md §4). The work is split into gen_layout
 * (ranks, groups, topology text), gen_sched (program order of the pipeline
 * schedule), gen_prog (per-rank programs, categories by construction),
 * gen_sim (the cluster-wide timing),
 * gen_write (the trace writer, nasty quirks), gen_ops (the what-if op table
 * of a rank) and gen_truth (the CSVs).
 */
#ifndef GEN_H
#define GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

struct gen_straggler {
	int rank;
	double factor; /* compute kernel durations are multiplied by it */
};

/* Every rank of a pipeline stage computes `factor` times slower. */
struct gen_slow_stage {
	int stage; /* -1: the last stage */
	double factor;
};

/* The clock of every rank of one host runs offset_ns ahead of true time. */
struct gen_clock_skew {
	int host;
	int64_t offset_ns;
};

/* Model variants (gen_opts.variant). */
enum {
	/* every gradient reduce-scatter in finalize_model_grads, none
	 * overlapping backward (--grad-reduce finish) */
	GEN_GRAD_REDUCE_FINISH = 1,
	/* parameter all-gathers before each chunk's first forward, none after
	 * the optimizer (--param-gather forward) */
	GEN_PARAM_GATHER_FORWARD = 2,
	/* current Megatron core's warm-up: with m == pp the interleaved
	 * schedule clamps it instead of running every forward first
	 * (--warmup core) */
	GEN_WARMUP_CORE = 4
};

struct gen_opts {
	const char *out;        /* output folder (created) */
	int tp, pp, dp, cp, ep; /* parallel sizes, >= 1 */
	int vpp;                /* virtual pipeline chunks per stage, >= 1 */
	int microbatches;
	const int *iterations; /* iteration numbers, ascending */
	int niterations;
	int layers;     /* transformer layers per model chunk */
	int kpl;        /* compute kernels per layer */
	bool recompute; /* full activation recompute in backward */
	const struct gen_straggler *stragglers;
	int nstragglers;
	const struct gen_slow_stage *slow_stages;
	int nslow_stages;
	double slow_compute; /* every compute kernel's duration times it; 0 = 1 */
	/* The data-parallel collectives of every DP group holding one of these
	 * ranks take slow_dp_factor times as long (0 ranks: none). */
	const int *slow_dp_ranks;
	int nslow_dp_ranks;
	double slow_dp_factor;
	unsigned variant;  /* GEN_GRAD_REDUCE_FINISH | GEN_PARAM_GATHER_FORWARD | GEN_WARMUP_CORE */
	int gpus_per_host; /* ranks per host: device ids, clock offsets; 0 = 8 */
	const struct gen_clock_skew *skews; /* explicit host offsets */
	int nskews;
	int64_t skew_max_ns; /* other hosts but host 0: a random offset in
				   * [-max, max] from the seed; 0 = none */
	uint64_t seed;
	bool gzip;        /* write .json.gz */
	bool relative;    /* ts relative to baseTimeNanoseconds */
	bool quiet;       /* no summary line */
	const int *ranks; /* ranks to write; NULL: all */
	int nranks;
	unsigned nasty;   /* GN_* flags of gen_model.h */
	int64_t start_ns; /* clock of the first iteration; 0: default */
};

/* ppgen's defaults (docs/ppgen.md): TP, PP, DP, CP, EP, VPP 1, 8
 * micro-batches, 4 layers of 8 kernels, seed 1, 8 GPUs a host, iteration 15;
 * no output folder. */
void gen_opts_init(struct gen_opts *o);

/* Generates the tree. Returns 0, PP_EINVAL (bad parameters), PP_EIO,
 * PP_ECYCLE, or PP_EINTR when SIGINT/SIGTERM stopped it, with the message
 * appended to err (util/pp.h); after an error the traces written so far
 * stay, the one being written and .truth's new content do not. Warnings
 * (an earlier run's iteration folder) go to stderr. */
int gen_run(const struct gen_opts *o, struct strbuf *err);

/* Parses a comma-separated list of nasty option names into GN_* flags;
 * returns PP_EINVAL and names the bad item in err (appended). "all" = every option
 * except truncate. */
int gen_parse_nasty(const char *list, unsigned *out, struct strbuf *err);
/* Parses "0-3,8,12" into a newly allocated ascending, de-duplicated list. */
int gen_parse_int_list(const char *s, int **out, int *n);
/* Parses "HOST:OFFSET_US,..." (offsets in µs, up to 3 decimals, |offset| <=
 * 1 s) into a newly allocated list (*out, *n). PP_EINVAL with the bad item
 * named in err (appended). */
int gen_parse_clock_skew(const char *s, struct gen_clock_skew **out, int *n, struct strbuf *err);

#endif
