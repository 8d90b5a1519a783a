/* agg_annot.c — the table of user annotations (agg_annot.h).
 *
 * Every row of the `annotations` view of an aggregated rank becomes one
 * record (group, name, rank); sorted by those, the records of one rank in
 * several iterations are summed, then the ranks of one (group, name) are
 * folded into a row. One pass over the records after one sort.
 */
#include "agg_annot.h"

#include <stdlib.h>
#include <string.h>

#include "agg_iter.h"
#include "storage/db_agg.h"
#include "topology.h"
#include "util/pp.h"

struct rec {
	int group, rank;
	char *name;
	int64_t calls, kernels, gpu, comp, comm, overlap;
};

struct load {
	const struct agg_iter *it;
	const struct topology *t;
	enum agg_ann_by by;
	struct rec *v;
	size_t n, alloc;
};

void agg_annot_init(struct agg_annot *a)
{
	memset(a, 0, sizeof(*a));
}

void agg_annot_release(struct agg_annot *a)
{
	for (size_t g = 0; g < a->ngroups; g++) {
		for (size_t i = 0; i < a->groups[g].nrows; i++)
			free(a->groups[g].rows[i].name);
		free(a->groups[g].rows);
	}
	free(a->groups);
	agg_annot_init(a);
}

/* The group of an aggregated rank of it, or -2 when it has none. */
static int group_of(const struct topology *t, enum agg_ann_by by, const struct agg_rank *r)
{
	if (!r || r->ntraces > 1 || !r->in.ok)
		return -2;
	if (by == AGG_ANN_JOB)
		return -1;
	if (by == AGG_ANN_RANK)
		return r->in.rank;
	if (r->in.rank < 0 || r->in.rank >= t->nrank || t->stage_of[r->in.rank] < 0)
		return -2;
	return t->stage_of[r->in.rank];
}

static int add_row(void *ctx, const struct db_agg_annotation *a)
{
	struct load *L = ctx;
	const struct agg_rank *r = agg_iter_rank(L->it, (int)a->rank);
	int g = group_of(L->t, L->by, r);
	if (g < -1 || r->trace_id != a->trace_id)
		return 0;
	PP_GROW(L->v, L->n, L->alloc, 256);
	L->v[L->n++] =
		(struct rec){ g,         (int)a->rank, xstrdup(a->name), a->calls,     a->kernels,
			      a->gpu_ns, a->comp_ns,   a->comm_ns,       a->overlap_ns };
	return 0;
}

static int cmp_int(int a, int b)
{
	return (a > b) - (a < b);
}

static int cmp_rec(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;
	int c = cmp_int(a->group, b->group);
	if (!c)
		c = strcmp(a->name, b->name);
	return c ? c : cmp_int(a->rank, b->rank);
}

static int cmp_row(const void *pa, const void *pb)
{
	const struct agg_ann_row *a = pa, *b = pb;
	if (a->gpu_ns != b->gpu_ns)
		return a->gpu_ns > b->gpu_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_name(const void *pa, const void *pb)
{
	return strcmp(*(char *const *)pa, *(char *const *)pb);
}

/* The groups: every aggregated rank's, with its window, whether it has
 * annotations or not (a rank without one counts in the spread). */
static void make_groups(struct agg_annot *a, const struct agg_iter *its, size_t n,
			const struct topology *t)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < its[i].nranks; k++) {
			const struct agg_rank *r = &its[i].ranks[k];
			int id = group_of(t, a->by, r);
			if (id < -1)
				continue;
			size_t g = 0;
			while (g < a->ngroups && a->groups[g].id != id)
				g++;
			if (g == a->ngroups) {
				a->groups = xrealloc(a->groups, (g + 1) * sizeof(*a->groups));
				a->groups[g] = (struct agg_ann_group){ .id = id };
				a->ngroups++;
			}
			if (r->in.has_window)
				a->groups[g].window += r->in.win_e - r->in.win_s;
			/* Ranks counted once: iterations load the same ranks
			 * mostly; a rank first seen in a later one adds. */
			bool seen = false;
			for (size_t j = 0; j < i && !seen; j++) {
				const struct agg_rank *o = agg_iter_rank(&its[j], r->in.rank);
				seen = group_of(t, a->by, o) == id;
			}
			a->groups[g].nranks += !seen;
		}
	for (size_t g = 1; g < a->ngroups; g++) /* by id: few groups */
		for (size_t j = g; j > 0 && a->groups[j - 1].id > a->groups[j].id; j--) {
			struct agg_ann_group x = a->groups[j];
			a->groups[j] = a->groups[j - 1];
			a->groups[j - 1] = x;
		}
}

static struct agg_ann_group *find_group(struct agg_annot *a, int id)
{
	for (size_t g = 0; g < a->ngroups; g++)
		if (a->groups[g].id == id)
			return &a->groups[g];
	return NULL;
}

/* Folds the sorted records v[0..n) into the groups' rows. */
static void fold(struct agg_annot *a, struct rec *v, size_t n)
{
	size_t i = 0;
	while (i < n) {
		struct agg_ann_group *g = find_group(a, v[i].group);
		struct agg_ann_row row = { .name = v[i].name, .min_ns = INT64_MAX, .max_rank = -1 };
		size_t j = i;
		while (j < n && v[j].group == v[i].group && !strcmp(v[j].name, v[i].name)) {
			int64_t one = 0; /* this rank's GPU time, every iteration */
			size_t k = j;
			for (; k < n && v[k].group == v[j].group && v[k].rank == v[j].rank &&
			       !strcmp(v[k].name, v[j].name);
			     k++) {
				row.calls += v[k].calls;
				row.kernels += v[k].kernels;
				row.gpu_ns += v[k].gpu;
				row.comp_ns += v[k].comp;
				row.comm_ns += v[k].comm;
				row.overlap_ns += v[k].overlap;
				one += v[k].gpu;
				if (k > j)
					free(v[k].name);
			}
			row.nranks++;
			if (one < row.min_ns)
				row.min_ns = one;
			if (one > row.max_ns || row.max_rank < 0) {
				row.max_ns = one;
				row.max_rank = v[j].rank;
			}
			if (j > i)
				free(v[j].name);
			j = k;
		}
		if (row.nranks < g->nranks)
			row.min_ns = 0;
		row.share = g->window > 0 ? (double)row.gpu_ns / (double)g->window : 0;
		g->gpu_ns += row.gpu_ns;
		g->rows = xrealloc(g->rows, (g->nrows + 1) * sizeof(*g->rows));
		g->rows[g->nrows++] = row;
		i = j;
	}
}

/* The distinct names over the groups. */
static size_t count_names(const struct agg_annot *a)
{
	size_t n = 0, k = 0;
	for (size_t g = 0; g < a->ngroups; g++)
		n += a->groups[g].nrows;
	char **all = xmalloc((n + 1) * sizeof(*all));
	for (size_t g = 0; g < a->ngroups; g++)
		for (size_t i = 0; i < a->groups[g].nrows; i++)
			all[k++] = a->groups[g].rows[i].name;
	qsort(all, n, sizeof(*all), cmp_name);
	size_t d = 0;
	for (size_t i = 0; i < n; i++)
		d += !i || strcmp(all[i - 1], all[i]);
	free(all);
	return d;
}

int agg_annot_run(struct db *db, const struct agg_iter *its, size_t n, const struct topology *t,
		  struct agg_annot *a)
{
	struct load L = { .t = t };
	size_t nranks = 0;
	int rc = 0;
	agg_annot_release(a);
	a->generic = true;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < its[i].nranks; k++)
			if (its[i].ranks[k].in.ok && its[i].ranks[k].in.megatron)
				a->generic = false;
		if (its[i].nranks > nranks)
			nranks = its[i].nranks;
	}
	a->by = t->source != TOPO_SRC_NONE ? AGG_ANN_STAGE
		: nranks <= AGG_ANN_RANKS  ? AGG_ANN_RANK
					   : AGG_ANN_JOB;
	L.by = a->by;
	make_groups(a, its, n, t);
	for (size_t i = 0; i < n && !rc; i++) {
		L.it = &its[i];
		rc = db_agg_annotations(db, its[i].iteration, add_row, &L);
	}
	if (!rc) {
		if (L.n)
			qsort(L.v, L.n, sizeof(*L.v), cmp_rec);
		fold(a, L.v, L.n);
		for (size_t g = 0; g < a->ngroups; g++)
			if (a->groups[g].nrows)
				qsort(a->groups[g].rows, a->groups[g].nrows,
				      sizeof(*a->groups[g].rows), cmp_row);
		a->nnames = count_names(a);
	} else {
		for (size_t i = 0; i < L.n; i++)
			free(L.v[i].name);
		agg_annot_release(a);
	}
	free(L.v);
	return rc;
}
