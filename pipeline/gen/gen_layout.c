/* gen_layout.c — rank coordinates, groups, topology text. */
#include "gen_layout.h"

#include <stdbool.h>
#include <stdlib.h>

#include "util/pp.h"

int gen_layout_init(struct gen_layout *l, int tp, int cp, int ep, int dp, int pp)
{
	int v[GEN_NDIM] = { tp, cp, ep, dp, pp };
	long world = 1;
	for (int d = 0; d < GEN_NDIM; d++) {
		if (v[d] < 1)
			return PP_EINVAL;
		world *= v[d];
		if (world > 1000000)
			return PP_EINVAL;
		l->size[d] = v[d];
	}
	l->world = (int)world;
	return 0;
}

static int stride(const struct gen_layout *l, enum gen_dim dim)
{
	int s = 1;
	for (int d = 0; d < (int)dim; d++)
		s *= l->size[d];
	return s;
}

const char *gen_layout_pg_desc(enum gen_dim dim)
{
	static const char *const desc[GEN_NGROUPS] = { [GEN_TP] = "TENSOR_MODEL_PARALLEL_GROUP",
						       [GEN_CP] = "CONTEXT_PARALLEL_GROUP",
						       [GEN_EP] = "EXPERT_MODEL_PARALLEL_GROUP",
						       [GEN_DP] = "DATA_PARALLEL_GROUP",
						       [GEN_PP] = "PIPELINE_MODEL_PARALLEL_GROUP",
						       [GEN_EMB] = "EMBEDDING_GROUP",
						       [GEN_WORLD] = "default_pg" };
	return dim >= 0 && dim < GEN_NGROUPS ? desc[dim] : "";
}

int gen_layout_coord(const struct gen_layout *l, int rank, enum gen_dim dim)
{
	return rank / stride(l, dim) % l->size[dim];
}

int gen_layout_with(const struct gen_layout *l, int rank, enum gen_dim dim, int v)
{
	int s = stride(l, dim);
	return rank - gen_layout_coord(l, rank, dim) * s + v * s;
}

int gen_layout_group_size(const struct gen_layout *l, enum gen_dim dim)
{
	if (dim == GEN_EMB)
		return l->size[GEN_PP] > 1 ? 2 : 1;
	return dim == GEN_WORLD ? l->world : l->size[dim];
}

int gen_layout_ngroups(const struct gen_layout *l, enum gen_dim dim)
{
	if (dim == GEN_EMB)
		dim = GEN_PP;
	return dim == GEN_WORLD ? 1 : l->world / l->size[dim];
}

/* The lowest rank of each group, in ascending order, enumerates the groups:
 * it is the rank with coordinate 0 along dim; removing that digit from the
 * mixed-radix number gives a dense index that preserves the order. */
int gen_layout_group_of(const struct gen_layout *l, int rank, enum gen_dim dim)
{
	if (dim == GEN_EMB)
		dim = GEN_PP;
	if (dim == GEN_WORLD)
		return 0;
	int s = stride(l, dim);
	int low = rank % s, high = rank / (s * l->size[dim]);
	return low + s * high;
}

void gen_layout_group_ranks(const struct gen_layout *l, enum gen_dim dim, int g, int *out)
{
	if (dim == GEN_WORLD) {
		for (int i = 0; i < l->world; i++)
			out[i] = i;
		return;
	}
	bool emb = dim == GEN_EMB;
	if (emb)
		dim = GEN_PP;
	int s = stride(l, dim);
	int low = g % s, high = g / s;
	int base = low + high * s * l->size[dim];
	if (emb) { /* the first and the last stage */
		out[0] = base;
		if (l->size[dim] > 1)
			out[1] = base + (l->size[dim] - 1) * s;
		return;
	}
	for (int i = 0; i < l->size[dim]; i++)
		out[i] = base + i * s;
}

static void write_ranks(FILE *f, const int *r, int n)
{
	fputc('[', f);
	for (int i = 0; i < n; i++)
		fprintf(f, i ? ", %d" : "%d", r[i]);
	fputs("]\n", f);
}

static const char dashes[] = "--------------------------------------------------";

static void write_section(FILE *f, const struct gen_layout *l, enum gen_dim dim, const char *title)
{
	int *r = xcalloc((size_t)l->size[dim], sizeof(*r));
	fprintf(f, "%s\n%s\n", title, dashes);
	for (int g = 0; g < gen_layout_ngroups(l, dim); g++) {
		gen_layout_group_ranks(l, dim, g, r);
		fprintf(f, "Group %d: ", g + 1);
		write_ranks(f, r, l->size[dim]);
	}
	fputc('\n', f);
	free(r);
}

int gen_layout_write_topology(const struct gen_layout *l, FILE *f)
{
	fprintf(f,
		"TP Size: %d\nPP Size: %d\nCP Size: %d\nEP Size: %d\nDP Size: %d\n"
		"World Size: %d\n\n",
		l->size[GEN_TP], l->size[GEN_PP], l->size[GEN_CP], l->size[GEN_EP], l->size[GEN_DP],
		l->world);
	write_section(f, l, GEN_TP, "TENSOR PARALLEL (TP) GROUPS");
	write_section(f, l, GEN_PP, "PIPELINE PARALLEL (PP) GROUPS");
	write_section(f, l, GEN_DP, "DATA PARALLEL (DP) GROUPS");
	if (l->size[GEN_CP] > 1)
		write_section(f, l, GEN_CP, "CONTEXT PARALLEL (CP) GROUPS");
	write_section(f, l, GEN_EP, "EXPERT PARALLEL (EP) GROUPS");

	/* A model replica: every rank with the same dp coordinate. */
	int per = l->world / l->size[GEN_DP];
	int *r = xcalloc((size_t)per, sizeof(*r));
	fprintf(f,
		"FULL MODEL RANK GROUPS (by DP Rank)\n%s\n"
		"Each group holds every rank of one model replica (order tp-cp-ep-dp-pp)\n%s\n",
		dashes, dashes);
	for (int d = 0; d < l->size[GEN_DP]; d++) {
		int n = 0;
		for (int rank = 0; rank < l->world; rank++)
			if (gen_layout_coord(l, rank, GEN_DP) == d)
				r[n++] = rank;
		fprintf(f, "Group %d: ", d);
		write_ranks(f, r, n);
	}
	free(r);
	return ferror(f) ? PP_EIO : 0;
}
