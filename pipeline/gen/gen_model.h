/* gen_model.h — ppgen's in-memory model of one iteration of a cluster: per
 * rank the CPU slices (python_function / user_annotation frames) and the GPU
 * work (kernels, memcpy, memset) with their launches, each kernel carrying
 * the category, step and recompute flag it has by construction (docs/semantics.md §5).
 *
 * gen_sim_build() (gen_prog.c) writes the programs (what each rank does, in
 * order) and gen_sim_run() (gen_sim.c) gives every event its time by simulating all ranks on one
 * clock: kernels start after their launch and after the previous kernel of
 * their stream, collectives end together on every member, a receive ends
 * after the matching send's data arrived. The writer (gen_write) and the
 * truth (gen_truth) only read the result.
 */
#ifndef GEN_MODEL_H
#define GEN_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "gen.h"
#include "gen_layout.h"
#include "util/category.h"

enum gen_thread { GT_MAIN, GT_BWD };
enum gen_stream { GS_COMP, GS_TP, GS_PP, GS_DP, GS_N };
enum gen_kkind { GK_KERNEL, GK_MEMCPY, GK_MEMSET };
enum gen_launch { GL_KERNEL, GL_GRAPH, GL_GRAPH_FOLLOW, GL_MEMCPY, GL_MEMSET, GL_NONE };
enum gen_type { GY_COMP, GY_COMM, GY_MEM };
enum gen_cat {
	GC_FWD_COMP,
	GC_FWD_COMM,
	GC_BWD_COMP,
	GC_BWD_COMM,
	GC_PP,
	GC_DP,
	GC_OPT,
	GC_MEM,
	GC_OTHER,
	GC_N
};
enum gen_phase { GP_FWD, GP_BWD, GP_PP, GP_DP, GP_OPT, GP_N };
/* Their names: util/category.h's tables, which they index. */
_Static_assert(GC_N == PP_NMEGATRON_CATEGORIES, "enum gen_cat indexes category.h");
_Static_assert(GP_N == PP_NPHASE_NAMES, "enum gen_phase indexes category.h");
enum gen_slice_cat { GSC_PYTHON, GSC_ANNOTATION, GSC_CPU_OP };

/* Nasty real-world quirks (--nasty). */
enum {
	GN_TRUNCATE = 1 << 0,
	GN_STRING_IDS = 1 << 1,
	GN_UNSORTED = 1 << 2,
	GN_UNICODE = 1 << 3,
	GN_CONTROL = 1 << 4,
	GN_ORPHANS = 1 << 5,
	GN_ZERO_DUR = 1 << 6,
	GN_BIG_IDS = 1 << 7,
	GN_BOM = 1 << 8,
	GN_WHITESPACE = 1 << 9,
	GN_NAN = 1 << 10,
	GN_LONG_NAMES = 1 << 11
};

enum {
	GF_RECOMPUTE = 1, /* launched inside a recompute slice */
	GF_FWDBWD_S = 2,  /* its cpu_op starts a fwdbwd flow */
	GF_FWDBWD_F = 4,  /* its cpu_op ends a fwdbwd flow */
	GF_NO_AC2G_F = 8, /* the ac2g flow has no finish event */
	GF_STARTED = 16,  /* simulator: launched, waiting for peers */
	GF_SYNC = 32      /* the CPU waits for it to end (torch.cuda.synchronize) */
};

/* What a kernel is in the what-if op table (docs/contracts.md §4), where its
 * step does not say it: forward/backward compute and p2p ops come from the
 * steps, these from single kernels. */
enum gen_wop {
	GW_NONE,   /* a step's kernel, or no op of its own (the loss all-reduce) */
	GW_RS,     /* a DP reduce-scatter of gradients: grads-reduce-scatter */
	GW_AG,     /* a DP all-gather of parameters before the forwards */
	GW_AG_OPT, /* a DP all-gather of parameters after the optimizer step:
		    * part of optimizer */
	GW_LN,     /* the TP all-reduce of finalize_model_grads: layernorm grads */
	GW_EMB,    /* the embedding-group all-reduce of finalize_model_grads */
	GW_CLIP,   /* the grad norm: optimizer-clip-main-grad */
	GW_OPT     /* optimizer computation */
};

extern const int gen_stream_ids[GS_N];

struct gen_kernel {
	int64_t ts, dur; /* GPU start and duration, absolute ns */
	int64_t lts;     /* launch start (ns) */
	const char *name;
	const char *op;                   /* enclosing cpu_op name; NULL: none */
	const char *coll_name;            /* "Collective name" for comm kernels */
	int32_t ldur;                     /* launch duration (ns) */
	uint32_t corr;                    /* correlation id */
	int32_t seq;                      /* step seq within phase, -1 when none */
	int32_t pg_idx;                   /* group index along pg_dim */
	int32_t nelems;                   /* "In msg nelems" */
	uint32_t flow;                    /* fwdbwd flow id when GF_FWDBWD_* */
	int32_t coll;                     /* sim: collective seq within its group, -1 none */
	int32_t send_tag[2], recv_tag[2]; /* sim: p2p tags [forward, backward],
					   * -1 none */
	uint8_t stream, kind, launch, cat, type, thread, flags, depmask;
	int8_t phase, pg_dim; /* -1 when none */
	uint8_t wop;          /* enum gen_wop */
	int8_t wchunk;        /* model chunk of a GW_RS / GW_AG, else -1 */
};

struct gen_slice {
	int64_t ts, te; /* ns */
	const char *name;
	uint8_t thread, cat;
	uint8_t step_mask; /* bit p: a root-most step of phase p */
	int8_t call;       /* a p2p_communication call: its GF_* (gen_sched.h),
				* else -1 */
	int16_t chunk;     /* forward / backward step: model chunk, else -1 */
	int32_t mb;        /* forward / backward step: micro-batch, else -1 */
	int32_t seq[GP_N]; /* its seq in each phase of step_mask */
};

struct gen_rank {
	int rank, stage;
	double straggle; /* compute duration factor (1 = none) */
	struct gen_kernel *k;
	int nk, capk;
	struct gen_slice *s;
	int ns, caps;
	uint32_t *items; /* program: (op << 28) | index */
	int nitems, capitems;
	/* Simulator state. */
	int pc;
	int64_t clock;
	int64_t stream_free[GS_N];
	int64_t graph_lts;
	int32_t graph_ldur;
	uint64_t rng;
};

struct gen_cfg {
	struct gen_layout lay;
	int vpp, microbatches, layers, kpl;
	bool recompute;
	unsigned nasty;
	unsigned variant; /* GEN_GRAD_REDUCE_FINISH | GEN_PARAM_GATHER_FORWARD */
	uint64_t seed;
	int iteration;
	int64_t t0;             /* iteration start, ns */
	const double *straggle; /* per rank factor, world entries */
	const double *dp_slow;  /* per rank: its DP group's collective duration
				 * factor (--slow-dp), world entries; NULL = 1 */
};

struct gen_cluster;
struct strbuf;

/* Builds every rank's program for one iteration (gen_prog.c). Returns NULL with a message
 * appended to err on invalid parameters. */
struct gen_cluster *gen_sim_build(const struct gen_cfg *cfg, struct strbuf *err);
/* Gives every slice and kernel its time. Returns 0, or PP_ECYCLE when the
 * programs deadlock (a bug). */
int gen_sim_run(struct gen_cluster *c);
/* Moves every time of rank r by offset_ns[r] (its host's clock offset);
 * call after gen_sim_end(). */
void gen_sim_shift(struct gen_cluster *c, const int64_t *offset_ns);
struct gen_rank *gen_sim_rank(struct gen_cluster *c, int rank);
/* When the sending (recv false) or the receiving kernel of the p2p
 * transfer tag started, in true time; -1 when none did. */
int64_t gen_sim_p2p_start(const struct gen_cluster *c, int tag, bool recv);
/* What a p2p tag names (gen_prog.c): the PP group, the producing virtual
 * stage, the micro-batch and the direction (0 forward, 1 backward). */
void gen_p2p_tag_decode(const struct gen_cfg *c, int tag, int *group, int *vs, int *mb, int *dir);
/* Latest GPU end over all ranks (to start the next iteration after it). */
int64_t gen_sim_end(const struct gen_cluster *c);
void gen_sim_free(struct gen_cluster *c);

/* Small deterministic PRNG (splitmix64). */
uint64_t gen_rand(uint64_t *state);
/* Hash of a few integers, for values every rank must agree on. */
uint64_t gen_hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d);

#endif
