/* annotate.c — GPU time per user annotation (docs/classification.md "User
 * annotations"): which annotation names each GPU event counts in, and how
 * many ranges ("calls") of each name hold one.
 *
 * A GPU event counts in the innermost `user_annotation` range of its
 * launching thread that holds its launch (ProfilerStep#N and nccl:<op>
 * ranges are not annotations: iterations and collectives), and in every
 * `gpu_user_annotation` range of its stream that holds its start; once per
 * name. The metrics (unions by type) are taken by rank_metrics_compute()'s
 * sweep, which feeds each event into the accumulators of its names.
 */
#include <stdlib.h>
#include <string.h>

#include "classify_int.h"
#include "util/arena.h"

enum { MAX_NAMES = 16 }; /* names of one event; deeper GPU nesting is cut */

/* The annotation row of name id, made on first sight. */
static uint32_t row_of(struct vec *rows, int32_t *row_of_name, uint32_t name)
{
	if (row_of_name[name] < 0) {
		struct rr_annotation *a = vec_push(rows);
		a->name_id = name;
		row_of_name[name] = (int32_t)(rows->n - 1);
	}
	return (uint32_t)row_of_name[name];
}

/* Adds name to the set names[0..*n) unless it is there or full. */
static void add_name(uint32_t *names, int *n, uint32_t name)
{
	for (int i = 0; i < *n; i++)
		if (names[i] == name)
			return;
	if (*n < MAX_NAMES)
		names[(*n)++] = name;
}

/* calls: per name, the CPU ranges holding one of its events, or the GPU
 * ranges when they are more. A CPU range is projected on each stream its
 * kernels ran on, so GPU ranges count per stream and the busiest stream
 * gives the name's count (the nest is sorted by stream). */
static void count_calls(const struct nest *cpu, const struct nest *gpu, const int32_t *row_of_name,
			struct rr_annotation *rows, size_t nrows, struct arena *a)
{
	int64_t *on_stream = arena_calloc(a, nrows + 1, sizeof(*on_stream));
	for (size_t i = 0; i < cpu->n; i++)
		if (cpu->v[i].hits)
			rows[row_of_name[cpu->v[i].val]].calls++;
	for (size_t i = 0, first = 0; i <= gpu->n; i++) {
		if (i == gpu->n || gpu->v[i].thread != gpu->v[first].thread) {
			for (size_t j = first; j < i; j++) { /* the stream's counts */
				int32_t r = row_of_name[gpu->v[j].val];
				if (r < 0) /* a name without events: no row */
					continue;
				if (on_stream[r] > rows[r].calls)
					rows[r].calls = on_stream[r];
				on_stream[r] = 0;
			}
			first = i;
		}
		if (i < gpu->n && gpu->v[i].hits)
			on_stream[row_of_name[gpu->v[i].val]]++;
	}
}

void annotate_kernels(struct classify *c, struct rank_result *res, int64_t base, struct nest *cpu,
		      struct nest *gpu, struct ann_members *m)
{
	const struct claunch *launches = c->launches.data;
	struct vec rows, idx;
	memset(m, 0, sizeof(*m));
	res->annotations = NULL;
	res->nannotations = 0;
	if (!cpu->n && !gpu->n)
		return;
	int32_t *row_of_name = arena_alloc(c->arena, (c->names.n + 1) * sizeof(*row_of_name));
	for (size_t i = 0; i < c->names.n; i++)
		row_of_name[i] = -1;
	vec_init(&rows, sizeof(struct rr_annotation));
	vec_init(&idx, sizeof(uint32_t));
	m->first = arena_alloc(c->arena, (res->nkernels + 1) * sizeof(*m->first));
	for (size_t i = 0; i < res->nkernels; i++) {
		const struct rr_kernel *k = &res->kernels[i];
		uint32_t names[MAX_NAMES];
		int nn = 0;
		m->first[i] = (uint32_t)idx.n;
		if (cpu->n && !k->orphan) {
			const struct claunch *l = &launches[cmap_get(&c->corr, k->correlation)];
			long s = nest_find(cpu, l->thread, l->ts, false);
			if (s >= 0) {
				cpu->v[s].hits++;
				add_name(names, &nn, cpu->v[s].val);
			}
		}
		if (gpu->n) {
			int64_t ts = k->start_ns - base;
			for (long s = nest_find(gpu, (uint32_t)k->stream, ts, true); s >= 0;
			     s = gpu->v[s].parent) {
				if (!nest_holds(&gpu->v[s], ts, true))
					continue;
				gpu->v[s].hits++;
				add_name(names, &nn, gpu->v[s].val);
			}
		}
		for (int j = 0; j < nn; j++)
			*(uint32_t *)vec_push(&idx) = row_of(&rows, row_of_name, names[j]);
	}
	m->first[res->nkernels] = (uint32_t)idx.n;
	count_calls(cpu, gpu, row_of_name, rows.data, rows.n, c->arena);
	res->nannotations = rows.n;
	res->annotations = arena_alloc(c->arena, (rows.n + 1) * sizeof(*res->annotations));
	if (rows.n)
		memcpy(res->annotations, rows.data, rows.n * sizeof(*res->annotations));
	m->nann = rows.n;
	m->idx = arena_alloc(c->arena, (idx.n + 1) * sizeof(*m->idx));
	if (idx.n)
		memcpy(m->idx, idx.data, idx.n * sizeof(*m->idx));
	vec_release(&rows);
	vec_release(&idx);
}
