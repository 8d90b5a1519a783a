/* agg_compare_calc.h — the comparison of two runs (docs/compare.md): from
 * the numbers of a baseline and of a new run, what changed, by how much,
 * whether beyond the noise, and the one sentence that says it. Pure
 * functions: no SQL, no files; agg_compare.c reads both runs from their
 * databases and stores the result.
 *
 * A run is its iterations' numbers: per iteration the step time (its
 * longest pipeline) and bubble share, every pipeline (the spread of a
 * single iteration), per rank and iteration its compute and its samples —
 * the time of one category, op type or process-group kind — the stage of
 * each rank, the shape of the job, and the what-if's per-step times and
 * verdict. Names of categories, op types and group kinds are interned in
 * one struct cmp_keys that both runs share.
 */
#ifndef AGG_COMPARE_CALC_H
#define AGG_COMPARE_CALC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

/* What a sample's time is of (compare_categories, compare_optypes,
 * compare_groups). */
enum cmp_dim { CMP_CATEGORY, CMP_OPTYPE, CMP_GROUP, CMP_NDIMS };

/* Where a noise comes from (docs/compare.md "Noise"). */
enum cmp_from {
	CMP_FROM_NONE,       /* nothing compared */
	CMP_FROM_ITERATIONS, /* the iteration-to-iteration spread of both runs */
	CMP_FROM_RANKS,      /* one iteration: the spread of same-role ranks */
	CMP_FROM_PIPELINES,  /* one iteration: the spread of the pipelines */
	CMP_FROM_FLOOR       /* the floor (compare.noise_floor) was larger */
};
const char *cmp_from_name(enum cmp_from f); /* "iterations", ...; NULL for NONE */

/* The names of each dimension's keys, shared by both runs. */
struct cmp_keys {
	char **name[CMP_NDIMS];
	size_t n[CMP_NDIMS], cap[CMP_NDIMS];
};
/* The index of name in dimension d, added when new. */
int cmp_key(struct cmp_keys *k, enum cmp_dim d, const char *name);
void cmp_keys_release(struct cmp_keys *k);

/* The job's shape; 0 where not known. tp is tp·cp·ep when !split (a file
 * that records only the ranks of a (replica, stage) cell). */
struct cmp_shape {
	int ranks, tp, cp, ep, pp, dp, vpp, mb;
	bool split;
};

struct cmp_pipe {
	size_t iter; /* index into the run's iterations */
	double ns, bubble;
};

struct cmp_sample {
	uint32_t iter; /* index into the run's iterations */
	int32_t rank;
	uint16_t dim, key;
	int64_t ns;
};

/* One run's numbers (agg_compare.c fills it; cmp_run_release() frees). */
struct cmp_run {
	size_t niters;
	int *iteration;  /* the iterations' numbers, ascending */
	double *step_ns; /* per iteration: its longest pipeline; NaN: none */
	double *bubble;  /* per iteration: its pipelines' mean bubble share */
	struct cmp_pipe *pipes;
	size_t npipes, cappipes;
	int nrank;         /* ranks are 0 .. nrank-1 */
	int *stage;        /* per rank: its stage, -1 not placed */
	uint8_t *present;  /* [iter * nrank + rank]: a rank of the iteration */
	int64_t *compute;  /* [iter * nrank + rank]: forward + backward compute */
	bool *has_compute; /* ... known */
	struct cmp_sample *v;
	size_t nv, capv;
	bool has_dim[CMP_NDIMS];
	struct cmp_shape shape;
	bool has_whatif;           /* the what-if of these iterations */
	double *t_ns, *t_ideal_ns; /* per iteration, NaN: no what-if step */
	char verdict[16];          /* "" when unknown */
};
/* Sizes the per-iteration arrays (niters iterations); everything unknown.
 * Samples and pipelines can be added at once; the per-rank arrays come
 * with cmp_run_ranks(), once the highest rank is known. */
void cmp_run_init(struct cmp_run *r, const int *iterations, size_t niters);
/* Sizes the per-rank arrays for ranks below nrank: none placed or present. */
void cmp_run_ranks(struct cmp_run *r, int nrank);
/* Index of iteration number it, or -1. */
int cmp_run_iter(const struct cmp_run *r, int it);
void cmp_run_add(struct cmp_run *r, size_t iter, int rank, enum cmp_dim d, int key, int64_t ns);
void cmp_run_add_pipe(struct cmp_run *r, size_t iter, double ns, double bubble);
void cmp_run_release(struct cmp_run *r);

/* A compared value. Relative changes and noises: 0.05 = 5 %. */
struct cmp_judgement {
	double base, new_;  /* means over the iterations (NaN: not known) */
	double change;      /* new_ / base - 1; NaN when not defined */
	double noise;       /* how large a change must be to be flagged */
	enum cmp_from from; /* where the noise comes from */
	bool flagged;
};

struct cmp_key_row {
	enum cmp_dim dim;
	int stage; /* -1: the whole job (sums over its ranks) */
	int key;
	int nranks; /* ranks of the stage in the baseline */
	struct cmp_judgement j;
	/* Explained by the flagged ranks: without them the stage's change is
	 * within its noise (the row stays flagged; the sentence names the
	 * ranks instead). */
	bool explained;
};

struct cmp_rank_row {
	int rank, stage;
	struct cmp_judgement j; /* of its compute; flagged: its deviation is */
	double stage_change;    /* the lower median of its stage's changes */
	double deviation;       /* change - stage_change */
};

/* A row of compare_summary for a shape parameter that differs. */
struct cmp_shape_row {
	const char *name; /* "pp", "vpp", ... */
	int base, new_;
	struct strbuf note;
};

enum cmp_metric { CMP_STEP, CMP_BUBBLE, CMP_S, CMP_NMETRICS };

struct cmp_params {
	double floor;     /* compare.noise_floor: the least noise */
	double min_share; /* compare.min_share: the least change, of the step */
	double threshold; /* compare.regression_threshold: on the step */
	double k;         /* noises are k spreads (3) */
};

struct cmp_result {
	struct cmp_judgement metric[CMP_NMETRICS];
	bool has_metric[CMP_NMETRICS];
	char verdict_base[16], verdict_new[16]; /* "" when unknown */
	bool verdict_flagged;
	struct cmp_shape_row *shape;
	size_t nshape;
	bool stages, ranks; /* compared by stage / rank by rank */
	struct cmp_key_row *keys;
	size_t nkeys;
	struct cmp_rank_row *rank;
	size_t nranks;
	bool regression; /* the step grew beyond its noise and the threshold */
	struct strbuf sentence;
	struct strbuf missing; /* what was not compared and why, one per line */
};

/* Compares new_ with base. Both use the names of keys. r is released with
 * cmp_result_release(). */
void cmp_compare(const struct cmp_run *base, const struct cmp_run *new_,
		 const struct cmp_keys *keys, const struct cmp_params *p, struct cmp_result *r);
void cmp_result_release(struct cmp_result *r);

/* How the sentence names a key: "data-parallel collectives", ... */
void cmp_key_words(const struct cmp_keys *keys, enum cmp_dim d, int key, struct strbuf *sb);

/* Ranks as ranges, "0–3, 8" (en dash), ascending, each once. */
void cmp_format_ranks(const int *rank, size_t n, struct strbuf *sb);

#endif
