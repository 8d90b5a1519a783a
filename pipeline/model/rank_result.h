/* rank_result.h — everything the classifier derives from one rank's trace
 * (docs/semantics.md §4–§6, docs/contracts.md §1–§2): mode, thread roles, the classified
 * GPU events, steps, per-category and per-rank metrics, process groups.
 *
 * Produced by classify_finish(); every pointer inside points into the arena
 * given to classify_new() and lives as long as that arena. Times are absolute
 * int64 nanoseconds (docs/contracts.md §1). Plain data: the storage writes it as is.
 */
#ifndef RANK_RESULT_H
#define RANK_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collective.h"

/* Categories. The first nine are Megatron mode, the next three generic mode,
 * the last two are the subset rows of category_stats only (never a kernel's
 * category). Names via rr_category_name(). This enum and that name table
 * (util/category.h's, which ppgen writes too) are the one definition: the
 * database stores these values as its category codes and writes its
 * category_codes table from the names (schema.c), and every other module
 * derives its names from them. */
enum rr_category {
	RR_FWD_COMP,           /* fwd_computation */
	RR_FWD_COMM,           /* fwd_communication */
	RR_BWD_COMP,           /* bwd_computation */
	RR_BWD_COMM,           /* bwd_communication */
	RR_PP_COMM,            /* pp_communication */
	RR_DP_COMM,            /* dp_communication */
	RR_OPT_COMP,           /* optimizer_computation */
	RR_MEMORY,             /* memory (both modes) */
	RR_OTHER,              /* other */
	RR_COMPUTATION,        /* computation (generic) */
	RR_COMMUNICATION,      /* communication (generic) */
	RR_BWD_COMP_RECOMPUTE, /* bwd_computation_recompute (subset row) */
	RR_BWD_COMM_RECOMPUTE, /* bwd_communication_recompute (subset row) */
	RR_NCATEGORIES
};

/* Kernel type ("comp", "comm", "mem" in the database's kernels view). */
enum rr_type { RR_COMP, RR_COMM, RR_MEM };

/* Step phases (rr_phase_name(): "fwd", "bwd", "pp", "dp", "opt").
 * RR_NOPHASE (-1) = not attributed to any step. Like the categories, the
 * one definition: the database's phase code is the value + 1 (0 = none)
 * and its phase_codes table is written from rr_phase_name(). */
enum rr_phase { RR_NOPHASE = -1, RR_FWD, RR_BWD, RR_PP, RR_DP, RR_OPT, RR_NPHASES };

enum rr_mode { RR_MEGATRON, RR_GENERIC }; /* "megatron", "generic" */

/* Process-group kind from the description text (rr_pg_kind_of(), named by
 * rr_pg_kind_name(): "unknown", "tp", "pp", "dp", "ep", "cp"); topology
 * mapping is ppagg's. */
enum rr_pg_kind { RR_PG_UNKNOWN, RR_PG_TP, RR_PG_PP, RR_PG_DP, RR_PG_EP, RR_PG_CP };

/* Which rule of docs/semantics.md §4 decided a thread role. */
enum rr_role_rule {
	RR_ROLE_NONE,          /* no such thread: not found */
	RR_ROLE_FLOWS,         /* the two threads with most fwdbwd endpoints */
	RR_ROLE_FORWARD_STEP,  /* forward: the thread holding forward_step slices */
	RR_ROLE_AUTOGRAD_NAME, /* backward: the thread named pt_autograd_* */
	RR_ROLE_BWD_LAUNCHES,  /* backward: most launches in backward windows */
	RR_ROLE_SAME_THREAD    /* backward: the forward thread itself */
};

/* One CPU thread with a role. pid/tid as text (they may be strings in the
 * trace; integers are printed in decimal). */
struct rr_thread {
	bool found;
	const char *pid, *tid; /* "" when !found */
	const char *name;      /* thread_name metadata or "" */
	enum rr_role_rule rule;
};

/* One GPU event (kernel, memcpy, memset), in file order. 48 bytes: a
 * worker holds one per kernel of its trace (docs/ppbatch.md,
 * "Performance"). Its phase and seq are its step's (rr_kernel_step(),
 * rr_kernel_phase(), rr_kernel_seq()). */
struct rr_kernel {
	int64_t start_ns, dur_ns; /* absolute start; dur may be 0 */
	int64_t correlation;      /* args.correlation; valid if has_correlation */
	int64_t stream;           /* args.stream, else the tid number; -1
				    * when unknown */
	uint32_t name_id;         /* index into rank_result.names */
	int32_t step;             /* index into rank_result.steps or -1 */
	int32_t pg;               /* index into rank_result.groups or -1 */
	uint8_t category;         /* enum rr_category (never a subset row) */
	uint8_t coll;             /* enum rr_coll: a comm kernel's collective */
	uint8_t type;             /* enum rr_type */
	bool recompute : 1;       /* launched inside a recompute slice (bwd) */
	bool has_correlation : 1;
	bool orphan : 1; /* no launch with its correlation in the file */
	/* coll comes from the kernel's name, not from its own args: the
	 * classifier then looks for the CPU side's collective (internal). */
	bool coll_by_name : 1;
};

/* One root-most step slice (docs/contracts.md §2). Kernel metrics are over the
 * kernels attributed to it (memory kernels excluded); when kernels == 0,
 * has_kernels is false and start/end must be stored as NULL. */
struct rr_step {
	int8_t phase;     /* enum rr_phase */
	int32_t seq;      /* 0.. in cpu_start order per phase */
	uint32_t name_id; /* the slice's name, index into names */
	int64_t cpu_start_ns, cpu_end_ns;
	bool has_kernels;
	int64_t start_ns, end_ns, wall_ns;
	int64_t comp_ns, comm_ns, overlap_ns;
	int64_t kernels;
};

struct rr_category_stat {
	int64_t kernels, sum_ns, busy_ns;
};

/* A process group seen in NCCL kernel args or record_param_comms parents. */
struct rr_group {
	const char *name;  /* "Process Group Name" or "" */
	const char *desc;  /* "Process Group Description" or "" */
	const char *ranks; /* "Process Group Ranks" as written, e.g. "[0, 8]" */
	enum rr_pg_kind kind;
	int64_t kernels; /* comm kernels carrying it */
};

/* Generic mode: one iteration window per root-most ProfilerStep#N
 * annotation (docs/semantics.md §5); kernels whose launch lies inside it (any thread). */
struct rr_iteration {
	int64_t number; /* N of ProfilerStep#N; -1 if not a number */
	int64_t cpu_start_ns, cpu_end_ns;
	bool has_kernels;
	int64_t start_ns, end_ns; /* first kernel start, last kernel end */
	int64_t busy_ns;          /* union of its GPU events */
	int64_t kernels;
};

/* The GPU time of one user annotation name (docs/classification.md "User
 * annotations"): every GPU event whose launch lies in the innermost
 * `user_annotation` range of its thread, or that lies in a
 * `gpu_user_annotation` range on its stream, of that name (once per name). */
struct rr_annotation {
	uint32_t name_id; /* index into rank_result.names */
	/* Ranges of the name holding one of its GPU events: its CPU ranges,
	 * or the GPU ranges on its busiest stream when they are more. */
	int64_t calls;
	int64_t kernels;                      /* its GPU events */
	int64_t gpu_ns;                       /* union of its GPU events (memory included) */
	int64_t comp_ns, comm_ns, overlap_ns; /* unions by type, and their overlap */
};

struct rr_counters {
	int64_t events;          /* events fed */
	int64_t cpu_slices;      /* X events that are not GPU events */
	int64_t launches;        /* CPU events with args.correlation */
	int64_t gpu_events;      /* kernel + gpu_memcpy + gpu_memset */
	int64_t orphans;         /* GPU events with no launch */
	int64_t kept_slices;     /* CPU slices matching a pattern set */
	int64_t flows;           /* fwdbwd flow endpoints */
	int64_t unmatched_flows; /* fwdbwd ids with only an s or only an f */
};

/* One op of the what-if analysis (docs/whatif.md §1), derived from a
 * Megatron-mode trace by the rules of docs/contracts.md §4.1. The worker
 * knows neither the pipeline size nor VPP nor its stage: a compute op, and
 * an all-gather or reduce-scatter launched inside a forward or backward
 * step, name that step (step_seq, the seq of its phase: fwd for
 * forward-compute and params-all-gather, bwd for backward-compute and
 * grads-reduce-scatter) and ppagg labels them (rr_vpp_label(): mc, and
 * mb_id of a compute op; gmc = mc * PP + stage). */
struct rr_op {
	int64_t start_ns, end_ns; /* absolute, like the kernels */
	int32_t seq_id;           /* among the rank's ops of the type, by start */
	int32_t step_seq;         /* the step whose labels apply, or -1 */
	int16_t mc, mb_id;        /* as they are when step_seq is -1; -1 = none */
	uint8_t optype;           /* enum op_type (model/optype.h) */
};

/* Number of pattern sets (patterns.h enum pat_set); mirrored here so
 * rank_result.h has no dependency. */
#define RR_NPATSETS 9

struct rank_result {
	enum rr_mode mode;
	/* From classify_new_survey(): no kernels, categories, groups, orphans
	 * or metrics (nkernels 0, has_window false). */
	bool survey;
	struct rr_thread fwd_thread, bwd_thread;

	/* Per-rank metrics (docs/semantics.md §6, docs/contracts.md §2). has_window is false when
	 * the trace has no GPU events: store the metrics as NULL then. */
	bool has_window;
	int64_t window_start_ns, window_end_ns;
	int64_t gpu_busy_ns, idle_ns, bubble_ns;
	int64_t comp_busy_ns, comm_busy_ns, overlap_ns;
	double coverage; /* 0..1 */

	const char **names; /* interned kernel and step names */
	size_t nnames;
	struct rr_kernel *kernels;
	size_t nkernels;
	struct rr_step *steps; /* sorted by (phase, seq) */
	size_t nsteps;
	/* Indexed by enum rr_category; store only rows with kernels > 0. */
	struct rr_category_stat categories[RR_NCATEGORIES];
	struct rr_group *groups;
	size_t ngroups;
	struct rr_iteration *iterations; /* ProfilerStep windows, time order */
	size_t niterations;
	/* Per user annotation name, most GPU time first (then name id); none
	 * in a survey. */
	struct rr_annotation *annotations;
	size_t nannotations;
	struct rr_counters counters;

	/* For --inspect: root-most steps found per pattern set (enum pat_set;
	 * for comm_kernel/mem_kernel: distinct GPU events matching), and the
	 * ProfilerStep#N annotations seen. */
	int64_t steps_per_set[RR_NPATSETS];

	/* The what-if ops (Megatron mode; none in generic mode or a survey),
	 * sorted by optype, then seq_id. */
	struct rr_op *ops;
	size_t nops;

	const char **warnings; /* human-readable, e.g. "no forward thread" */
	size_t nwarnings;
};

/* The step of kernel k among steps[0..nsteps), whose phase and seq are
 * the kernel's; NULL without one (k->step -1 or out of range). */
static inline const struct rr_step *rr_kernel_step(const struct rr_step *steps, size_t nsteps,
						   const struct rr_kernel *k)
{
	return k->step >= 0 && (size_t)k->step < nsteps ? &steps[k->step] : NULL;
}

/* Kernel k's phase (enum rr_phase; RR_NOPHASE without a step) and its
 * step's seq within that phase (-1 without a step). */
static inline int rr_kernel_phase(const struct rank_result *r, const struct rr_kernel *k)
{
	const struct rr_step *st = rr_kernel_step(r->steps, r->nsteps, k);
	return st ? st->phase : RR_NOPHASE;
}

static inline int32_t rr_kernel_seq(const struct rank_result *r, const struct rr_kernel *k)
{
	const struct rr_step *st = rr_kernel_step(r->steps, r->nsteps, k);
	return st ? st->seq : -1;
}

struct strbuf;

/* Appends what `ppbatch --inspect` shows about a classified rank: mode,
 * thread roles with their rules, steps per pattern set, counters, rank
 * metrics and warnings. As indented text lines, or (json) as one JSON
 * object. */
void rank_result_describe(const struct rank_result *r, struct strbuf *sb, bool json);

/* The VPP model chunk and micro-batch of a rank's seq-th forward (backward
 * when backward) step, following Megatron's interleaved schedule (forward:
 * groups of pp_size micro-batches per chunk in turn; backward: the chunks in
 * reverse); vpp 1: chunk 0, micro-batch seq. Returns 0, or PP_EINVAL for
 * sizes < 1. ppagg labels its steps with it (ppbatch does not know VPP). */
int rr_vpp_label(int64_t seq, bool backward, int pp_size, int vpp, int32_t *chunk,
		 int32_t *microbatch);

const char *rr_category_name(enum rr_category c); /* "?" when invalid */
const char *rr_phase_name(enum rr_phase p);       /* NULL for RR_NOPHASE */
const char *rr_mode_name(enum rr_mode m);
const char *rr_pg_kind_name(enum rr_pg_kind k);
/* The kind a process group's description names (Megatron's
 * TENSOR_MODEL_PARALLEL_GROUP, ...; EXPERT_DATA_PARALLEL_GROUP is ep);
 * RR_PG_UNKNOWN for combined groups (..._AND_...), NULL and others. */
enum rr_pg_kind rr_pg_kind_of(const char *desc);
const char *rr_role_rule_name(enum rr_role_rule r); /* "flows", ... */

#endif
