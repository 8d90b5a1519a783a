/* topology.h — the parallel layout of a Megatron-LM job (docs/semantics.md §7): which
 * ranks form each tensor-, pipeline-, data-, expert- and context-parallel
 * group and each model replica.
 *
 * Three sources, tried in this order by the caller: the
 * `unique_parallel_groups_*.txt` file (topo_parse_text / topo_load_file),
 * sizes with the tp-cp-ep-dp-pp layout (topo_from_sizes), and inference from
 * the process-group args recorded in the traces (topo_infer_*). Groups keep
 * their source order; PP group ranks are in stage order. All memory belongs
 * to the struct and is freed by topo_release().
 */
#ifndef TOPOLOGY_H
#define TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>

#include "util/strbuf.h"

enum topo_kind { TOPO_TP, TOPO_PP, TOPO_DP, TOPO_EP, TOPO_CP, TOPO_MODEL, TOPO_NKINDS };

enum topo_source {
	TOPO_SRC_NONE = 0, /* nothing known */
	TOPO_SRC_FILE,     /* unique_parallel_groups_*.txt */
	TOPO_SRC_SIZES,    /* --tp/--pp/... or the config file */
	TOPO_SRC_INFERRED, /* process-group args of the traces */
	TOPO_SRC_OPS,      /* the workers an op-trace import records */
	TOPO_SRC_IMPORT    /* the sizes and stages a PP-timer or Primus import
			    * records */
};

struct topo_group {
	int number; /* as numbered by the source (file: from 1, model from 0) */
	int n;      /* number of ranks */
	int *ranks; /* n ranks; PP groups in stage order */
};

struct topo_groups {
	size_t n, alloc;
	struct topo_group *v;
};

struct topology {
	/* Sizes; 0 when unknown. world = tp*cp*ep*dp*pp when derived. */
	int tp, pp, dp, cp, ep, world;
	int global_batch; /* "Global Batch Size: N" of a file; 0 unknown */
	struct topo_groups groups[TOPO_NKINDS];
	enum topo_source source;
	struct strbuf origin; /* e.g. the file path or "--tp/--pp flags" */
	struct strbuf notes;  /* one line per thing not understood or fixed up */
	/* Built by topo_index(): per rank (0..nrank-1), -1 when in no group. */
	int nrank;
	int *pp_of, *stage_of, *dp_of, *model_of;
};

#define TOPOLOGY_INIT                                       \
	{                                                   \
		.origin = STRBUF_INIT, .notes = STRBUF_INIT \
	}

void topo_init(struct topology *t);
/* Frees every group, index and note; t is left as after topo_init(). */
void topo_release(struct topology *t);

/* Parses the text of a topology file (lenient: header lines "TP Size: 2" or
 * "TP (Tensor Parallel) Size: 2", sections "PIPELINE PARALLEL (PP) GROUPS" or
 * "UNIQUE PP GROUPS" with "Group K: [r, ...]" lines, the model section's
 * groups after its second dashed line). The other lines real files carry
 * are understood: the banner, "Timestamp: ...", "Global Batch Size: N"
 * (t->global_batch), "Total groups: N" after a section, "Total model
 * replicas (DP): N" and the STATISTICS block (Total/Valid/Error Ranks); the
 * counts are checked against what the file lists. Lines it cannot use, and
 * counts that disagree, are listed in t->notes as "<name>:<line>: ...".
 * Missing sizes are derived from the groups; missing PP/DP/model groups
 * from the sizes. Returns 0, or PP_EPARSE when no group and no size could
 * be read. */
int topo_parse_text(struct topology *t, const char *text, size_t len, const char *name);
/* Reads and parses path; PP_EIO when it cannot be read. */
int topo_load_file(struct topology *t, const char *path);
/* The newest (mtime, then name) unique_parallel_groups_*.txt among the
 * directories (NULL entries skipped); a malloc'd path or NULL if none. */
char *topo_find_file(const char *const *dirs, size_t ndirs);

/* Builds every group from sizes (each >= 1) with the layout
 * rank = tp + TP*(cp + CP*(ep + EP*(dp + DP*pp))); a model replica is the
 * ranks with one dp coordinate. Returns 0, or PP_EINVAL (a size below 1, or
 * more than 10,000,000 ranks). */
int topo_from_sizes(struct topology *t, int tp, int pp, int dp, int cp, int ep);

/* Inference: feed each distinct (process-group description, ranks text)
 * pair seen in the traces, e.g. ("PIPELINE_MODEL_PARALLEL_GROUP",
 * "[0, 8, 16, 24]"), then call topo_infer_finish(). Descriptions other than
 * Megatron's TENSOR_/PIPELINE_/CONTEXT_/EXPERT_MODEL_/DATA_PARALLEL_GROUP are
 * ignored. finish sorts groups by first rank, derives sizes and model
 * replicas (dp coordinate = position in the DP group) and returns 0, or
 * PP_ENOTFOUND when no PP group was seen. */
int topo_infer_add(struct topology *t, const char *desc, const char *ranks);
int topo_infer_finish(struct topology *t);

/* Builds the groups of a DP x PP grid of workers, one rank each (an op
 * trace holds one representative worker per (dp_rank, stage)):
 * rank_at[d * pp + s] is the rank of replica d, stage s. PP groups are the
 * replicas in stage order, DP groups the stages in replica order, model
 * replicas the PP groups' ranks ascending; sizes tp = cp = ep = 1. Returns
 * 0 or PP_EINVAL (a size below 1, a rank below 0 or twice). */
int topo_from_grid(struct topology *t, int dp, int pp, const int *rank_at);

/* Builds the per-rank index arrays (pp_of, stage_of, dp_of, model_of).
 * Call again after changing groups. */
void topo_index(struct topology *t);

/* Parses "[0, 8, 16]" (brackets optional, commas or blanks) into a malloc'd
 * array; returns the count, or -1 on malformed text (nothing allocated). */
int topo_parse_ranks(const char *s, int **out);

const char *topo_source_name(enum topo_source s); /* "file", "sizes", ... */

#endif
