/* gen_layout.h — ppgen's cluster layout: rank coordinates, process groups
 * and the topology file (docs/semantics.md §7), written with its own code so that the
 * topology parser is tested against an independent writer.
 *
 * Ranks are laid out tp fastest, then cp, ep, dp, pp:
 * rank = tp + TP·(cp + CP·(ep + EP·(dp + DP·pp))).
 */
#ifndef GEN_LAYOUT_H
#define GEN_LAYOUT_H

#include <stdio.h>

/* The parallel dimensions, then two more kinds of process group that
 * collectives use: the embedding group (the first and the last rank of a
 * pipeline; one rank when pp = 1) and the world. Functions that take a
 * gen_dim accept all GEN_NGROUPS kinds unless they say otherwise. */
enum gen_dim {
	GEN_TP,
	GEN_CP,
	GEN_EP,
	GEN_DP,
	GEN_PP,
	GEN_NDIM,
	GEN_EMB = GEN_NDIM,
	GEN_WORLD,
	GEN_NGROUPS
};

struct gen_layout {
	int size[GEN_NDIM]; /* TP, CP, EP, DP, PP sizes, each >= 1 */
	int world;          /* product of the sizes */
};

/* Fills l from the sizes; returns PP_EINVAL when a size is < 1 or the
 * world exceeds 1,000,000 ranks. */
int gen_layout_init(struct gen_layout *l, int tp, int cp, int ep, int dp, int pp);
/* Coordinate of rank along dim (< GEN_NDIM). */
int gen_layout_coord(const struct gen_layout *l, int rank, enum gen_dim dim);
/* Rank with the coordinates of `rank` except `dim` (< GEN_NDIM) set to v. */
int gen_layout_with(const struct gen_layout *l, int rank, enum gen_dim dim, int v);
/* Members of one group of this kind: size[dim]; 2 for GEN_EMB (1 when
 * pp = 1), world for GEN_WORLD. */
int gen_layout_group_size(const struct gen_layout *l, enum gen_dim dim);
/* Number of groups along dim (world / size[dim]; GEN_EMB: the pipelines). */
int gen_layout_ngroups(const struct gen_layout *l, enum gen_dim dim);
/* Index (0-based, ordered by the group's lowest rank) of the group along
 * dim that holds rank; GEN_EMB: its pipeline's, whatever its stage. */
int gen_layout_group_of(const struct gen_layout *l, int rank, enum gen_dim dim);
/* Ranks of group g along dim, ascending (gen_layout_group_size() of them)
 * into out. */
void gen_layout_group_ranks(const struct gen_layout *l, enum gen_dim dim, int g, int *out);
/* The process group's description as the traces give it
 * ("TENSOR_MODEL_PARALLEL_GROUP", ..., "EMBEDDING_GROUP", "default_pg"). */
const char *gen_layout_pg_desc(enum gen_dim dim);
/* Writes the topology text (header, TP/PP/DP/[CP]/EP sections numbered
 * from 1, FULL MODEL RANK GROUPS numbered from 0). Returns 0 or PP_EIO. */
int gen_layout_write_topology(const struct gen_layout *l, FILE *f);

#endif
