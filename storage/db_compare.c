/* db_compare.c — the comparison's reads and writes (see db_compare.h).
 *
 * Reads keep to what every version since 1 has (the traces table's id,
 * iteration, rank and status; category_t, step_t and kernel_t keyed by the
 * trace; the code tables; the pp_groups and pipelines views) plus the
 * tables db_cmp_caps() found. Kernels and ops are read one trace's rowid
 * range at a time (a CROSS JOIN keeps the traces the outer loop); the
 * per-group sums of a trace's communication kernels are made here, not
 * by SQLite's GROUP BY, which would sort every kernel of the iteration.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_compare.h"
#include "db_int.h"
#include "util/pp.h"

/* The traces of iteration ?1 that may be a rank of it (db_compare.h): those
 * of a rank that several traces claim (Q_CONFLICTS) are left out in C, and
 * the code tables are looked up by scalar subqueries, so that the planner
 * keeps the traces outside and one trace's rows (a rowid range) inside. */
#define RANK_OF_IT " t.iteration = ?1 AND t.status = 0 AND t.rank IS NOT NULL"

enum {
	Q_TABLE,
	Q_COLUMN,
	Q_VERSION,
	Q_AGGREGATED,
	Q_ANY_AGGREGATED,
	Q_CATEGORIES,
	Q_STEPS,
	Q_OPS,
	Q_PGROUPS,
	Q_COMM,
	Q_CONFLICTS,
	Q_PIPELINES,
	Q_TOPOLOGY,
	Q_TOPOLOGY_SIZE,
	Q_PP_GROUPS,
	Q_SHAPE,
	Q_WHATIF,
	Q_WHATIF_STEPS,
	Q_COUNT
};

/* In enum order. */
static const char *const query_sql[Q_COUNT] = {
	"SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?1",
	"SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
	"PRAGMA user_version",
	"SELECT DISTINCT iteration FROM pp_groups WHERE iteration IS NOT NULL ORDER BY 1",
	"SELECT EXISTS (SELECT 1 FROM pp_groups)",
	"SELECT t.rank, (SELECT name FROM category_codes WHERE code = s.category), s.busy_ns"
	" FROM traces t JOIN category_t s ON s.trace_id = t.id WHERE" RANK_OF_IT,
	"SELECT t.rank, (SELECT name FROM phase_codes WHERE code = s.phase), count(*),"
	" sum(s.comp_ns) FROM traces t JOIN step_t s ON s.trace_id = t.id WHERE" RANK_OF_IT
	" GROUP BY t.id, s.phase",
	"SELECT rank, (SELECT name FROM optype_codes WHERE code = optype), n, ns FROM"
	" (SELECT t.rank AS rank, o.optype AS optype, count(*) AS n, sum(o.dur) AS ns"
	" FROM traces t CROSS JOIN op_t o"
	" ON o.rowid >= (t.id << 32) AND o.rowid < ((t.id + 1) << 32) WHERE" RANK_OF_IT
	" GROUP BY t.id, o.optype)",
	"SELECT id, descr FROM pgroups ORDER BY id",
	/* type (bits 4-5 of code) 1: communication */
	"SELECT t.rank, t.id, k.pg_id, k.dur FROM traces t CROSS JOIN kernel_t k"
	" ON k.rowid >= (t.id << 32) AND k.rowid < ((t.id + 1) << 32)"
	" WHERE (k.code >> 4 & 3) = 1 AND" RANK_OF_IT,
	"SELECT rank FROM traces WHERE iteration = ?1 AND rank IS NOT NULL"
	" GROUP BY rank HAVING count(*) > 1 ORDER BY rank",
	"SELECT pp_group, measured_ns, bubble_ratio FROM pipelines WHERE iteration = ?1"
	" ORDER BY pp_group",
	"SELECT rank, pp_group, stage, dp_rank, -1, -1 FROM agg_topology ORDER BY rank",
	"SELECT rank, pp_group, stage, dp_rank, coalesce(pp_size, -1), coalesce(vpp, -1)"
	" FROM agg_topology ORDER BY rank",
	"SELECT DISTINCT rank, pp_group, stage, -1, -1, -1 FROM pp_groups WHERE iteration = ?1"
	" ORDER BY rank",
	"SELECT coalesce(ranks, 0), coalesce(tp, 0), coalesce(cp, 0), coalesce(ep, 0),"
	" coalesce(pp, 0), coalesce(dp, 0), coalesce(vpp, 0), coalesce(microbatches, 0)"
	" FROM agg_shape",
	"SELECT iterations, first_iteration, last_iteration, slowdown, verdict FROM whatif",
	"SELECT iteration, t_ns, t_ideal_ns FROM whatif_steps"
	" WHERE t_ns IS NOT NULL AND t_ideal_ns IS NOT NULL ORDER BY iteration",
};

static const char *const what[Q_COUNT] = {
	"cannot list tables",
	"cannot list columns",
	"cannot read the schema version",
	"cannot list aggregated iterations",
	"cannot list aggregated iterations",
	"cannot read category_stats",
	"cannot read steps",
	"cannot read ops",
	"cannot read process groups",
	"cannot read kernels",
	"cannot read rank conflicts",
	"cannot read pipelines",
	"cannot read agg_topology",
	"cannot read agg_topology",
	"cannot read pp_groups",
	"cannot read agg_shape",
	"cannot read whatif",
	"cannot read whatif_steps",
};

/* A prepared query with ?1 (and ?2) bound: an integer, or text when s is
 * set. NULL after noting the error. */
static sqlite3_stmt *prepare(struct db *db, int q, int64_t arg, const char *s, const char *s2)
{
	sqlite3_stmt *st = db_read_prepare(db, query_sql[q], what[q]);
	if (!st)
		return NULL;
	if (s)
		sqlite3_bind_text(st, 1, s, -1, SQLITE_STATIC);
	else if (sqlite3_bind_parameter_count(st) >= 1)
		sqlite3_bind_int64(st, 1, arg);
	if (s2)
		sqlite3_bind_text(st, 2, s2, -1, SQLITE_STATIC);
	return st;
}

/* db_read_rows() of query q's statement st. */
static int each(struct db *db, int q, sqlite3_stmt *st, int (*row)(sqlite3_stmt *, void *),
		void *ctx)
{
	return db_read_rows(db, st, row, ctx, what[q]);
}

static int64_t col(sqlite3_stmt *st, int c)
{
	return sqlite3_column_int64(st, c);
}

static const char *col_text(sqlite3_stmt *st, int c)
{
	const char *s = (const char *)sqlite3_column_text(st, c);
	return s ? s : "";
}

static int row_int(sqlite3_stmt *st, void *ctx)
{
	*(int64_t *)ctx = col(st, 0);
	return 0;
}

/* The integer a query of one row yields (its first column). */
static int one_int(struct db *db, int q, const char *s, const char *s2, int64_t *v)
{
	*v = 0;
	return each(db, q, prepare(db, q, 0, s, s2), row_int, v);
}

int db_cmp_caps(struct db *db, struct db_cmp_caps *caps)
{
	int64_t v = 0, n = 0;
	memset(caps, 0, sizeof(*caps));
	int rc = one_int(db, Q_VERSION, NULL, NULL, &v);
	caps->version = (int)v;
	if (!rc)
		rc = one_int(db, Q_TABLE, "agg_topology", NULL, &n);
	caps->topology = n > 0;
	if (!rc && caps->topology)
		rc = one_int(db, Q_COLUMN, "agg_topology", "pp_size", &n);
	caps->topology_size = caps->topology && n > 0;
	if (!rc)
		rc = one_int(db, Q_TABLE, "op_t", NULL, &n);
	caps->ops = n > 0;
	if (!rc)
		rc = one_int(db, Q_TABLE, "whatif_steps", NULL, &n);
	caps->whatif = n > 0;
	if (!rc)
		rc = one_int(db, Q_TABLE, "agg_shape", NULL, &n);
	caps->shape = n > 0;
	if (!rc)
		rc = one_int(db, Q_TABLE, "pp_groups", NULL, &n);
	if (!rc && n > 0)
		rc = one_int(db, Q_ANY_AGGREGATED, NULL, NULL, &n);
	caps->aggregated = !rc && n > 0;
	return rc;
}

/* ---- reads ----------------------------------------------------------- */

struct iter_visit {
	int (*fn)(void *ctx, int64_t iteration);
	void *ctx;
};

static int row_iteration(sqlite3_stmt *st, void *ctx)
{
	struct iter_visit *v = ctx;
	return v->fn(v->ctx, col(st, 0));
}

int db_cmp_aggregated(struct db *db, int (*fn)(void *ctx, int64_t iteration), void *ctx)
{
	struct iter_visit v = { fn, ctx };
	return each(db, Q_AGGREGATED, prepare(db, Q_AGGREGATED, 0, NULL, NULL), row_iteration, &v);
}

/* The ranks of an iteration that several traces claim (docs/contracts.md
 * §8): none of their traces is a rank of it. */
struct conflicts {
	int64_t *rank;
	size_t n, cap;
};

static int row_conflict(sqlite3_stmt *st, void *ctx)
{
	struct conflicts *c = ctx;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->rank = xrealloc(c->rank, c->cap * sizeof(*c->rank));
	}
	c->rank[c->n++] = col(st, 0);
	return 0;
}

static bool in_conflict(const struct conflicts *c, int64_t rank)
{
	for (size_t i = 0; i < c->n; i++) /* ascending, usually none */
		if (c->rank[i] >= rank)
			return c->rank[i] == rank;
	return false;
}

/* A query of the iteration's ranks' rows (rank in column 0): its rows of
 * ranks in conflict left out. */
struct rank_rows {
	struct conflicts c;
	int (*row)(sqlite3_stmt *st, void *ctx);
	void *ctx;
};

static int row_of_rank(sqlite3_stmt *st, void *ctx)
{
	struct rank_rows *R = ctx;
	return in_conflict(&R->c, col(st, 0)) ? 0 : R->row(st, R->ctx);
}

static int each_rank(struct db *db, int q, int64_t iteration, int (*row)(sqlite3_stmt *, void *),
		     void *ctx)
{
	struct rank_rows R = { .row = row, .ctx = ctx };
	int rc = each(db, Q_CONFLICTS, prepare(db, Q_CONFLICTS, iteration, NULL, NULL),
		      row_conflict, &R.c);
	if (!rc)
		rc = each(db, q, prepare(db, q, iteration, NULL, NULL), row_of_rank, &R);
	free(R.c.rank);
	return rc;
}

struct cat_visit {
	int (*fn)(void *ctx, int64_t rank, const char *category, int64_t busy_ns);
	void *ctx;
};

static int row_category(sqlite3_stmt *st, void *ctx)
{
	struct cat_visit *v = ctx;
	return v->fn(v->ctx, col(st, 0), col_text(st, 1), col(st, 2));
}

int db_cmp_categories(struct db *db, int64_t iteration,
		      int (*fn)(void *ctx, int64_t rank, const char *category, int64_t busy_ns),
		      void *ctx)
{
	struct cat_visit v = { fn, ctx };
	return each_rank(db, Q_CATEGORIES, iteration, row_category, &v);
}

/* Rows (rank, name, count, sum) of the steps and the ops. */
struct count_visit {
	int (*fn)(void *ctx, int64_t rank, const char *name, int64_t n, int64_t ns);
	void *ctx;
	bool steps; /* only the fwd and bwd phases */
};

static int row_count(sqlite3_stmt *st, void *ctx)
{
	struct count_visit *v = ctx;
	const char *name = col_text(st, 1);
	if (v->steps && strcmp(name, "fwd") && strcmp(name, "bwd"))
		return 0;
	return v->fn(v->ctx, col(st, 0), name, col(st, 2), col(st, 3));
}

int db_cmp_steps(struct db *db, int64_t iteration,
		 int (*fn)(void *ctx, int64_t rank, const char *phase, int64_t steps,
			   int64_t comp_ns),
		 void *ctx)
{
	struct count_visit v = { fn, ctx, true };
	return each_rank(db, Q_STEPS, iteration, row_count, &v);
}

int db_cmp_ops(struct db *db, int64_t iteration,
	       int (*fn)(void *ctx, int64_t rank, const char *optype, int64_t ops, int64_t ns),
	       void *ctx)
{
	struct count_visit v = { fn, ctx, false };
	return each_rank(db, Q_OPS, iteration, row_count, &v);
}

/* The process groups' descriptions, and one trace's sums per group. */
struct group_sums {
	int64_t *id;      /* pgroups ids, ascending */
	char **desc;      /* their descriptions */
	size_t n, cap;    /* of id/desc */
	int64_t *kernels; /* per group (and [n]: no group) of the current trace */
	int64_t *ns;
	int64_t trace, rank;
	bool any;
	int (*fn)(void *ctx, int64_t rank, const char *desc, int64_t kernels, int64_t ns);
	void *ctx;
};

static int row_pgroup(sqlite3_stmt *st, void *ctx)
{
	struct group_sums *g = ctx;
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 64;
		g->id = xrealloc(g->id, g->cap * sizeof(*g->id));
		g->desc = xrealloc(g->desc, g->cap * sizeof(*g->desc));
	}
	g->id[g->n] = col(st, 0);
	g->desc[g->n++] = xstrdup(col_text(st, 1));
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The index of pgroups id in g (g->n for none or unknown). */
static size_t group_index(const struct group_sums *g, int64_t id)
{
	const int64_t *p = bsearch(&id, g->id, g->n, sizeof(*g->id), cmp_i64);
	return p ? (size_t)(p - g->id) : g->n;
}

static int flush_trace(struct group_sums *g)
{
	int rc = 0;
	for (size_t i = 0; i <= g->n && !rc && g->any; i++)
		if (g->kernels[i])
			rc = g->fn(g->ctx, g->rank, i < g->n ? g->desc[i] : "", g->kernels[i],
				   g->ns[i]);
	memset(g->kernels, 0, (g->n + 1) * sizeof(*g->kernels));
	memset(g->ns, 0, (g->n + 1) * sizeof(*g->ns));
	g->any = false;
	return rc;
}

static int row_comm(sqlite3_stmt *st, void *ctx)
{
	struct group_sums *g = ctx;
	int rc = 0;
	if (g->any && col(st, 1) != g->trace)
		rc = flush_trace(g);
	g->trace = col(st, 1);
	g->rank = col(st, 0);
	g->any = true;
	size_t i = sqlite3_column_type(st, 2) == SQLITE_NULL ? g->n : group_index(g, col(st, 2));
	g->kernels[i]++;
	g->ns[i] += col(st, 3);
	return rc;
}

int db_cmp_groups(struct db *db, int64_t iteration,
		  int (*fn)(void *ctx, int64_t rank, const char *desc, int64_t kernels, int64_t ns),
		  void *ctx)
{
	struct group_sums g = { .fn = fn, .ctx = ctx };
	int rc = each(db, Q_PGROUPS, prepare(db, Q_PGROUPS, 0, NULL, NULL), row_pgroup, &g);
	if (!rc) {
		g.kernels = xcalloc(g.n + 1, sizeof(*g.kernels));
		g.ns = xcalloc(g.n + 1, sizeof(*g.ns));
		rc = each_rank(db, Q_COMM, iteration, row_comm, &g);
		if (!rc)
			rc = flush_trace(&g);
	}
	for (size_t i = 0; i < g.n; i++)
		free(g.desc[i]);
	PP_FREE_ALL(g.desc, g.id, g.kernels, g.ns);
	return rc;
}

struct pipe_visit {
	int (*fn)(void *ctx, int pp_group, int64_t measured_ns, double bubble_ratio);
	void *ctx;
};

static int row_pipeline(sqlite3_stmt *st, void *ctx)
{
	struct pipe_visit *v = ctx;
	return v->fn(v->ctx, (int)col(st, 0), col(st, 1), sqlite3_column_double(st, 2));
}

int db_cmp_pipelines(struct db *db, int64_t iteration,
		     int (*fn)(void *ctx, int pp_group, int64_t measured_ns, double bubble_ratio),
		     void *ctx)
{
	struct pipe_visit v = { fn, ctx };
	return each(db, Q_PIPELINES, prepare(db, Q_PIPELINES, iteration, NULL, NULL), row_pipeline,
		    &v);
}

struct place_visit {
	int (*fn)(void *ctx, const struct db_cmp_place *p);
	void *ctx;
};

static int row_place(sqlite3_stmt *st, void *ctx)
{
	struct place_visit *v = ctx;
	struct db_cmp_place p = {
		.rank = col(st, 0),
		.pp_group = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : (int)col(st, 1),
		.stage = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : (int)col(st, 2),
		.dp_rank = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : (int)col(st, 3),
		.pp_size = (int)col(st, 4),
		.vpp = (int)col(st, 5),
	};
	return v->fn(v->ctx, &p);
}

int db_cmp_placement(struct db *db, const struct db_cmp_caps *caps, int64_t iteration,
		     int (*fn)(void *ctx, const struct db_cmp_place *p), void *ctx)
{
	struct place_visit v = { fn, ctx };
	int q = caps->topology_size ? Q_TOPOLOGY_SIZE : caps->topology ? Q_TOPOLOGY : Q_PP_GROUPS;
	return each(db, q, prepare(db, q, iteration, NULL, NULL), row_place, &v);
}

struct shape_read {
	struct db_cmp_shape *s;
	bool *found;
};

static int row_shape(sqlite3_stmt *st, void *ctx)
{
	struct shape_read *r = ctx;
	int64_t v[8];
	for (int i = 0; i < 8; i++)
		v[i] = col(st, i);
	*r->s = (struct db_cmp_shape){ v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7] };
	*r->found = true;
	return 0;
}

int db_cmp_shape(struct db *db, const struct db_cmp_caps *caps, struct db_cmp_shape *s, bool *found)
{
	struct shape_read r = { s, found };
	memset(s, 0, sizeof(*s));
	*found = false;
	if (!caps->shape)
		return 0;
	return each(db, Q_SHAPE, prepare(db, Q_SHAPE, 0, NULL, NULL), row_shape, &r);
}

struct whatif_read {
	struct db_cmp_whatif *w;
	bool *found;
};

static int row_whatif(sqlite3_stmt *st, void *ctx)
{
	struct whatif_read *r = ctx;
	r->w->iterations = col(st, 0);
	r->w->first_iteration = col(st, 1);
	r->w->last_iteration = col(st, 2);
	r->w->slowdown =
		sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
	snprintf(r->w->verdict, sizeof(r->w->verdict), "%s", col_text(st, 4));
	*r->found = true;
	return 0;
}

int db_cmp_whatif(struct db *db, struct db_cmp_whatif *w, bool *found)
{
	struct whatif_read r = { w, found };
	memset(w, 0, sizeof(*w));
	*found = false;
	return each(db, Q_WHATIF, prepare(db, Q_WHATIF, 0, NULL, NULL), row_whatif, &r);
}

struct step_visit {
	int (*fn)(void *ctx, int64_t iteration, int64_t t_ns, int64_t t_ideal_ns);
	void *ctx;
};

static int row_whatif_step(sqlite3_stmt *st, void *ctx)
{
	struct step_visit *v = ctx;
	return v->fn(v->ctx, col(st, 0), col(st, 1), col(st, 2));
}

int db_cmp_whatif_steps(struct db *db,
			int (*fn)(void *ctx, int64_t iteration, int64_t t_ns, int64_t t_ideal_ns),
			void *ctx)
{
	struct step_visit v = { fn, ctx };
	return each(db, Q_WHATIF_STEPS, prepare(db, Q_WHATIF_STEPS, 0, NULL, NULL), row_whatif_step,
		    &v);
}

/* ---- the writer -------------------------------------------------------- */

enum {
	W_DEL_SHAPE,
	W_DEL_RUN,
	W_DEL_SUMMARY,
	W_DEL_KEY,
	W_DEL_RANK,
	W_INS_SHAPE,
	W_INS_RUN,
	W_INS_SUMMARY,
	W_INS_KEY,
	W_INS_RANK,
	W_COUNT
};

/* In enum order. */
static const char *const write_sql[W_COUNT] = {
	"DELETE FROM agg_shape",
	"DELETE FROM compare_run",
	"DELETE FROM compare_summary_t",
	"DELETE FROM compare_key_t",
	"DELETE FROM compare_rank_t",
	"INSERT INTO agg_shape(id, ranks, tp, cp, ep, pp, dp, vpp, microbatches)"
	" VALUES(1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	"INSERT INTO compare_run(id, baseline, baseline_version, base_iterations,"
	" new_iterations, compared_at, threshold, noise_floor, min_share, regression, sentence,"
	" missing) VALUES(1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	"INSERT INTO compare_summary_t(metric, base, new, change, noise, noise_from, flagged,"
	" note) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	"INSERT INTO compare_key_t(dim, stage, key, base_ns, new_ns, change, noise, noise_from,"
	" flagged) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	"INSERT INTO compare_rank_t(rank, stage, host, base_ns, new_ns, change, stage_change,"
	" deviation, noise, noise_from, flagged) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
	" ?10, ?11)",
};

static const struct db_write_table table = { write_sql, W_COUNT, W_DEL_SHAPE, W_DEL_RANK + 1,
					     "the comparison" };

struct db_cmp_writer {
	struct db_writer w;
};

struct db_cmp_writer *db_cmp_begin(struct db *db)
{
	return db_writer_new(db, &table, sizeof(struct db_cmp_writer));
}

int db_cmp_set_shape(struct db_cmp_writer *w, const struct db_cmp_shape *s)
{
	const int64_t v[] = {
		s->ranks, s->tp, s->cp, s->ep, s->pp, s->dp, s->vpp, s->microbatches
	};
	const bool have[] = { v[0] > 0, v[1] > 0, v[2] > 0, v[3] > 0,
			      v[4] > 0, v[5] > 0, v[6] > 0, v[7] > 0 };
	return DB_WRITER_PUT_I64S(&w->w, W_INS_SHAPE, v, have, "cannot write agg_shape");
}

int db_cmp_add_run(struct db_cmp_writer *w, const struct db_cmp_run *r)
{
	const struct db_val v[] = { db_text(r->baseline),        db_int(r->baseline_version),
				    db_text(r->base_iterations), db_text(r->new_iterations),
				    db_int(r->compared_at),      db_real(r->threshold),
				    db_real(r->noise_floor),     db_real(r->min_share),
				    db_int(r->regression),       db_text(r->sentence),
				    db_text(r->missing) };
	return DB_WRITER_PUT(&w->w, W_INS_RUN, v, "cannot write comparison");
}

/* A value of the summary: a text, an integer (ns) or a real. */
static struct db_val value(const struct db_cmp_value *v)
{
	return v->text ? db_text(v->text) : v->integer ? db_ns(v->num) : db_real(v->num);
}

int db_cmp_add_summary(struct db_cmp_writer *w, const struct db_cmp_summary *r)
{
	const struct db_val v[] = { db_text(r->metric),
				    value(&r->base),
				    value(&r->new_),
				    db_real(r->change),
				    db_real(r->noise),
				    db_text(r->noise_from),
				    db_int_if(r->flagged >= 0, r->flagged),
				    db_text(r->note) };
	return DB_WRITER_PUT(&w->w, W_INS_SUMMARY, v, "cannot write compare_summary");
}

int db_cmp_add_key(struct db_cmp_writer *w, const struct db_cmp_key *r)
{
	const struct db_val v[] = { db_int(r->dim),    db_int_if(r->stage >= 0, r->stage),
				    db_text(r->key),   db_ns(r->base_ns),
				    db_ns(r->new_ns),  db_real(r->change),
				    db_real(r->noise), db_text(r->noise_from),
				    db_int(r->flagged) };
	return DB_WRITER_PUT(&w->w, W_INS_KEY, v,
			     "cannot write the compared categories, op types or groups");
}

int db_cmp_add_rank(struct db_cmp_writer *w, const struct db_cmp_rank *r)
{
	const struct db_val v[] = { db_int(r->rank),          db_int_if(r->stage >= 0, r->stage),
				    db_text(r->host),         db_ns(r->base_ns),
				    db_ns(r->new_ns),         db_real(r->change),
				    db_real(r->stage_change), db_real(r->deviation),
				    db_real(r->noise),        db_text(r->noise_from),
				    db_int(r->flagged) };
	return DB_WRITER_PUT(&w->w, W_INS_RANK, v, "cannot write compare_ranks");
}

int db_cmp_commit(struct db_cmp_writer *w)
{
	return db_writer_end(&w->w, 0);
}

void db_cmp_rollback(struct db_cmp_writer *w)
{
	db_writer_rollback((struct db_writer *)w);
}
