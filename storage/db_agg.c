/* db_agg.c — ppagg's reads and writes (see db_agg.h).
 *
 * Every read is one query per iteration, ordered so that ppagg can fill its
 * ranks in one pass; the orders by category and phase *name* are the ones
 * its CSVs and chart scripts have always had. The blocks are grouped here,
 * not in SQL: the query streams each trace's kernels (a CROSS JOIN keeps
 * the traces the outer loop, so a trace's kernels come together, in rowid
 * order), and each trace's kernels are sorted in C by (category name,
 * phase name, seq, recompute) and folded into blocks. SQLite's GROUP BY
 * sorted every kernel of the iteration through its record sorter: 11,000
 * instructions a kernel, 61 % of a 1,024-rank ppagg run (callgrind).
 */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "db_agg.h"
#include "db_why.h"
#include "db_int.h"
#include "util/pp.h"

enum {
	Q_ITERATIONS,
	Q_TRACES,
	Q_CATEGORIES,
	Q_STEP_TRACES,
	Q_STEPS,
	Q_BLOCKS,
	Q_TRACE_BLOCKS,
	Q_BLOCKS_WHY,
	Q_GROUPS,
	Q_OP_TRACES,
	Q_OP_ROWS,
	Q_OP_SOURCE,
	Q_OP_WORKERS,
	Q_ANNOTATIONS,
	Q_HAS_STEPS,
	Q_COUNT
};

/* The timeline blocks' kernels of the traces that match `where`. */
#define BLOCKS_SQL(where)                                                              \
	"SELECT t.id, t.rank, k.code, k.seq, t.window_start_ns + k.start, k.dur"       \
	" FROM traces t CROSS JOIN kernel_t k"                                         \
	" ON k.rowid >= (t.id << 32) AND k.rowid < ((t.id + 1) << 32)"                 \
	" WHERE " where " AND EXISTS (SELECT 1 FROM step_t s WHERE s.trace_id = t.id)" \
	" AND k.seq IS NOT NULL AND (k.code & 15) NOT IN (?2, ?3)"

/* In enum order. */
static const char *const query_sql[Q_COUNT] = {
	"SELECT DISTINCT iteration FROM traces WHERE iteration IS NOT NULL"
	" AND (?1 IS NULL OR folder = ?1 OR CAST(iteration AS TEXT) = ?1)"
	" ORDER BY iteration",

	"SELECT id, rank, folder, path, error, status, mode, window_start_ns,"
	" window_end_ns, gpu_busy_ns, idle_ns, bubble_ns, comp_busy_ns,"
	" comm_busy_ns, overlap_ns, coverage FROM traces WHERE iteration = ?1"
	" ORDER BY rank, path",

	"SELECT t.id, t.rank, s.category, s.kernels, s.sum_ns, s.busy_ns"
	" FROM traces t JOIN category_t s ON s.trace_id = t.id"
	" JOIN category_codes c ON c.code = s.category"
	" WHERE t.iteration = ?1 ORDER BY t.rank, c.name",

	/* The iteration's traces, in id order: db_agg_steps() reads each
	 * one's steps by Q_STEPS, a search of step_t's primary key (a join
	 * let SQLite scan every step of the database once per iteration: 44
	 * iterations of an op trace took 2 G instructions; the order by rank
	 * and phase name sorted every row through a temporary B-tree, and the
	 * trace's columns on every row cost a third of reading a step). */
	"SELECT id, rank FROM traces WHERE iteration = ?1 ORDER BY id",

	/* The steps of one trace, in (phase code, seq) order: steps_flush()
	 * puts the phases in name order. */
	"SELECT phase, seq, cpu_start_ns, cpu_end_ns, start_ns, end_ns, comp_ns, comm_ns,"
	" overlap_ns, kernels, chunk, mbs FROM step_t WHERE trace_id = ?1 ORDER BY phase, seq",

	/* ?2, ?3: the category codes left out (memory, other). A kernel's
	 * seq is its step's, and every step has its row: a trace without
	 * steps (not Megatron) is not scanned (the EXISTS is tested once per
	 * trace, in the outer loop). */
	BLOCKS_SQL("t.iteration = ?1"),

	/* The same, of one trace (a rowid look-up). */
	BLOCKS_SQL("t.id = ?1"),

	/* Every kernel of the iteration: the blocks' rows (the columns of the
	 * query above) and the why analysis' (db_why_kernels(): correlation,
	 * rowid, process group), filtered in C. */
	"SELECT t.id, t.rank, k.code, k.seq, t.window_start_ns + k.start, k.dur, k.correlation,"
	" k.rowid, k.pg_id FROM traces t CROSS JOIN kernel_t k"
	" ON k.rowid >= (t.id << 32) AND k.rowid < ((t.id + 1) << 32)"
	" WHERE t.iteration = ?1",

	/* The groups the iteration's kernels name. "+id" keeps SQLite from
	 * driving the query by the list: it scans pgroups (a handful of rows)
	 * and tests each usable one against the kernels' pg_id, a list built
	 * once, at the first test, so a job without such groups never scans
	 * its kernels (through the kernels view it was four subqueries a
	 * kernel). The order does not matter: topo_infer_finish() sorts. */
	"SELECT descr, ranks FROM pgroups WHERE descr <> '' AND ranks <> ''"
	" AND +id IN (SELECT k.pg_id FROM traces t CROSS JOIN kernel_t k"
	" ON k.rowid >= (t.id << 32) AND k.rowid < ((t.id + 1) << 32)"
	" WHERE t.iteration = ?1 AND k.pg_id IS NOT NULL)",

	/* The traces of the iteration with the worker their ops record
	 * (imports; the others take theirs from the caller's topology), in id
	 * order: each trace's ops are then read by Q_OP_ROWS, so a row carries
	 * no column of its trace (a trace's columns on every op row were half
	 * the cost of reading an op). */
	"SELECT t.id, t.rank, w.trace_id IS NOT NULL, w.dp_rank, w.stage, w.source_id,"
	" t.window_start_ns FROM traces t LEFT JOIN op_worker w ON w.trace_id = t.id"
	" WHERE t.iteration = ?1 ORDER BY t.id",

	/* The ops of one trace (its rowid range), in the order stored. */
	"SELECT optype, seq_id, mc, gmc, mb_id, start, dur, step_seq FROM op_t"
	" WHERE rowid >= ?1 AND rowid < ?2 ORDER BY rowid",

	"SELECT id, path, trial_name IS NOT NULL, trial_name, run_id, dp_size, pp_size,"
	" tp_size, dsp_size, vpp_size, world_size, optype_order"
	" FROM op_source WHERE id = ?1",

	"SELECT t.id, t.rank, w.dp_rank, w.stage FROM traces t"
	" JOIN op_worker w ON w.trace_id = t.id WHERE t.iteration = ?1 ORDER BY t.id",

	"SELECT t.id, t.rank, n.name, a.calls, a.kernels, a.gpu_ns, a.comp_ns, a.comm_ns,"
	" a.overlap_ns FROM traces t JOIN annotation_t a ON a.trace_id = t.id"
	" JOIN names n ON n.id = a.name_id WHERE t.iteration = ?1"
	" ORDER BY t.rank, a.gpu_ns DESC, n.name",

	"SELECT 1 FROM step_t WHERE trace_id = ?1 LIMIT 1",
};

_Static_assert(Q_COUNT <= DB_AGG_NSTMT, "struct db keeps a statement of each query");

/* Query q's statement: the one a finished read gave back, else prepared
 * (NULL, SQLite's message in the connection, when it cannot be). A read
 * holds it until give(): a callback that runs the same query meanwhile
 * prepares its own. Preparing each query again for every iteration was 4 %
 * of ppagg's instructions on 44 iterations of an op trace. */
static sqlite3_stmt *take(struct db *db, int q)
{
	sqlite3_stmt *st = db->agg_st[q];
	db->agg_st[q] = NULL;
	if (!st && sqlite3_prepare_v3(db_sqlite(db), query_sql[q], -1, SQLITE_PREPARE_PERSISTENT,
				      &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

/* Gives back query q's statement st (NULL: none), reset, its values
 * unbound, for the next read (finalized when another is kept already). */
static void give(struct db *db, int q, sqlite3_stmt *st)
{
	if (!st)
		return;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (db->agg_st[q])
		sqlite3_finalize(st);
	else
		db->agg_st[q] = st;
}

static const char *const what[Q_COUNT] = {
	"cannot list iterations",
	"cannot read traces",
	"cannot read category_stats",
	"cannot read steps",
	"cannot read steps",
	"cannot read kernels",
	"cannot read kernels",
	"cannot read kernels",
	"cannot read process groups",
	"cannot read ops",
	"cannot read ops",
	"cannot read an op-trace import",
	"cannot read the ops' workers",
	"cannot read annotations",
	"cannot read steps",
};

/* The caller's callback of one kind of row, and its context. */
struct visit {
	void *ctx;
	union {
		int (*iteration)(void *ctx, int64_t iteration);
		int (*trace)(void *ctx, const struct db_agg_trace *t);
		int (*category)(void *ctx, const struct db_agg_category *c);
		int (*group)(void *ctx, const char *desc, const char *ranks);
		int (*source)(void *ctx, const struct db_agg_op_source *s);
		int (*worker)(void *ctx, const struct db_agg_op_worker *w);
		int (*annotation)(void *ctx, const struct db_agg_annotation *a);
	} fn;
};

static const char *col_text(sqlite3_stmt *st, int c)
{
	return (const char *)sqlite3_column_text(st, c);
}

static bool col_null(sqlite3_stmt *st, int c)
{
	return sqlite3_column_type(st, c) == SQLITE_NULL;
}

static int64_t col(sqlite3_stmt *st, int c)
{
	return sqlite3_column_int64(st, c);
}

/* A row callback of each() and the rows it was handed. */
struct counted {
	int (*row)(sqlite3_stmt *st, const struct visit *v);
	const struct visit *v;
	int n;
};

static int count_row(sqlite3_stmt *st, void *arg)
{
	struct counted *c = arg;
	c->n++;
	return c->row(st, c->v);
}

/* Runs query q (?1 = iteration, or name for Q_ITERATIONS) and hands every
 * row to row() until one returns non-zero; *nrows counts them. */
static int each(struct db *db, int q, int64_t iteration, const char *name,
		int (*row)(sqlite3_stmt *st, const struct visit *v), const struct visit *v,
		int *nrows)
{
	struct counted c = { row, v, 0 };
	sqlite3_stmt *st = take(db, q);
	if (!st)
		return db_note_sql_error(db, what[q]);
	if (q != Q_ITERATIONS)
		sqlite3_bind_int64(st, 1, iteration);
	else if (name)
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int rc = db_read_each(db, st, count_row, &c, what[q]);
	give(db, q, st);
	if (nrows)
		*nrows = c.n;
	return rc;
}

static int row_iteration(sqlite3_stmt *st, const struct visit *v)
{
	return v->fn.iteration(v->ctx, col(st, 0));
}

static int row_trace(sqlite3_stmt *st, const struct visit *v)
{
	struct db_agg_trace t = {
		.id = col(st, 0),
		.has_rank = !col_null(st, 1),
		.rank = col(st, 1),
		.folder = col_text(st, 2),
		.path = col_text(st, 3),
		.error = col_text(st, 4),
		.status = (int)col(st, 5),
		.has_mode = !col_null(st, 6),
		.mode = (int)col(st, 6),
		.has_window = !col_null(st, 7),
		.window_start_ns = col(st, 7),
		.window_end_ns = col(st, 8),
		.gpu_busy_ns = col(st, 9),
		.idle_ns = col(st, 10),
		.bubble_ns = col(st, 11),
		.comp_busy_ns = col(st, 12),
		.comm_busy_ns = col(st, 13),
		.overlap_ns = col(st, 14),
		.coverage = sqlite3_column_double(st, 15),
	};
	return v->fn.trace(v->ctx, &t);
}

static int row_category(sqlite3_stmt *st, const struct visit *v)
{
	struct db_agg_category c = {
		.trace_id = col(st, 0),
		.rank = col(st, 1),
		.category = (enum rr_category)col(st, 2),
		.kernels = col(st, 3),
		.sum_ns = col(st, 4),
		.busy_ns = col(st, 5),
	};
	return v->fn.category(v->ctx, &c);
}

/* Step row st of trace t (Q_STEP_TRACES' row). */
static void read_step(sqlite3_stmt *t, sqlite3_stmt *st, struct db_agg_step *p)
{
	bool timed = !col_null(st, 4);
	*p = (struct db_agg_step){
		.trace_id = col(t, 0),
		.rank = col(t, 1),
		.phase = (enum rr_phase)(col(st, 0) - 1),
		.seq = col(st, 1),
		.cpu_start_ns = col(st, 2),
		.cpu_end_ns = col(st, 3),
		.has_times = timed,
		.start_ns = col(st, 4),
		.end_ns = col(st, 5),
		.wall_ns = timed && !col_null(st, 5) ? col(st, 5) - col(st, 4) : 0,
		.comp_ns = col(st, 6),
		.comm_ns = col(st, 7),
		.overlap_ns = col(st, 8),
		.kernels = col(st, 9),
		.chunk = col_null(st, 10) ? -1 : col(st, 10),
		.mbs = col_null(st, 11) ? -1 : col(st, 11),
	};
}

/* One kernel of a block query row, with its sort key: the order of its
 * category's name, of its phase's name, its seq and recompute flag. */
struct bkernel {
	uint64_t key;
	int64_t s, e, seq;
	int cat, ph;
	bool rc;
};

/* The kernels of one trace, grouped into blocks (see the top of the file). */
struct bgroup {
	int64_t trace_id, rank;
	struct bkernel *k;
	size_t n, alloc;
	uint8_t cat_order[16], ph_order[8];
	int (*fn)(void *ctx, const struct db_agg_block *b);
	void *ctx;
};

static int cmp_bkernel(const void *a, const void *b)
{
	uint64_t x = ((const struct bkernel *)a)->key, y = ((const struct bkernel *)b)->key;
	return x < y ? -1 : x > y;
}

/* Position of name i among n names in strcmp order (SQLite's BINARY). */
static uint8_t name_order(const char *(*name)(int), int i, int n)
{
	uint8_t pos = 0;
	for (int j = 0; j < n; j++)
		if (j != i &&
		    (strcmp(name(j), name(i)) < 0 || (!strcmp(name(j), name(i)) && j < i)))
			pos++;
	return pos;
}

static const char *cat_name(int c)
{
	return rr_category_name((enum rr_category)c);
}

static const char *ph_name(int code)
{
	const char *n = rr_phase_name((enum rr_phase)(code - 1));
	return n ? n : "";
}

/* The sort orders of g's categories and phase codes: their names' (the
 * blocks' order in SQL), 255 for a code beyond them. */
static void bgroup_orders(struct bgroup *g)
{
	for (int c = 0; c < 16; c++)
		g->cat_order[c] =
			c < RR_NCATEGORIES ? name_order(cat_name, c, RR_NCATEGORIES) : 255;
	for (int p = 0; p < 8; p++)
		g->ph_order[p] =
			p >= 1 && p <= RR_NPHASES ? name_order(ph_name, p, RR_NPHASES + 1) : 255;
}

/* Sorts the trace's kernels and calls fn once per block. */
static int bgroup_flush(struct bgroup *g)
{
	int rc = 0;
	qsort(g->k, g->n, sizeof(*g->k), cmp_bkernel);
	for (size_t i = 0; i < g->n && !rc;) {
		const struct bkernel *k = &g->k[i];
		struct db_agg_block b = { .trace_id = g->trace_id,
					  .rank = g->rank,
					  .category = (enum rr_category)k->cat,
					  .phase = (enum rr_phase)(k->ph - 1),
					  .seq = k->seq,
					  .recompute = k->rc,
					  .start_ns = k->s,
					  .end_ns = k->e };
		for (; i < g->n && g->k[i].key == k->key; i++) {
			b.start_ns = g->k[i].s < b.start_ns ? g->k[i].s : b.start_ns;
			b.end_ns = g->k[i].e > b.end_ns ? g->k[i].e : b.end_ns;
			b.kernels++;
		}
		rc = g->fn(g->ctx, &b);
	}
	g->n = 0;
	return rc;
}

static int row_block(sqlite3_stmt *st, struct bgroup *g)
{
	int64_t id = col(st, 0), code = col(st, 2), seq = col(st, 3), s = col(st, 4);
	int rc = 0;
	if (g->n && id != g->trace_id)
		rc = bgroup_flush(g);
	g->trace_id = id;
	g->rank = col(st, 1);
	if (g->n == g->alloc) {
		g->alloc = g->alloc ? 2 * g->alloc : 4096;
		g->k = xrealloc(g->k, g->alloc * sizeof(*g->k));
	}
	struct bkernel *k = &g->k[g->n++];
	k->cat = (int)(code & 15);
	k->ph = (int)(code >> 7 & 7);
	k->rc = (code >> 6) & 1;
	k->seq = seq;
	k->s = s;
	k->e = s + col(st, 5);
	/* seq fits 40 bits (a step number), the orders 8 each. */
	k->key = (uint64_t)g->cat_order[k->cat] << 56 |
		 (uint64_t)(k->ph < 8 ? g->ph_order[k->ph] : 255) << 48 |
		 ((uint64_t)seq & 0x7fffffffffULL) << 1 | (uint64_t)k->rc;
	return rc;
}

static int row_group(sqlite3_stmt *st, const struct visit *v)
{
	return v->fn.group(v->ctx, col_text(st, 0), col_text(st, 1));
}

static int row_source(sqlite3_stmt *st, const struct visit *v)
{
	struct db_agg_op_source s = {
		.id = col(st, 0),
		.path = col_text(st, 1),
		.has_meta = col(st, 2) != 0,
		.trial_name = col_text(st, 3),
		.run_id = col(st, 4),
		.dp_size = col(st, 5),
		.pp_size = col(st, 6),
		.tp_size = col(st, 7),
		.dsp_size = col(st, 8),
		.vpp_size = col(st, 9),
		.world_size = col(st, 10),
		.optype_order = col_text(st, 11),
	};
	return v->fn.source(v->ctx, &s);
}

static int row_worker(sqlite3_stmt *st, const struct visit *v)
{
	struct db_agg_op_worker w = { col(st, 0), col(st, 1), (int)col(st, 2), (int)col(st, 3) };
	return v->fn.worker(v->ctx, &w);
}

static int row_annotation(sqlite3_stmt *st, const struct visit *v)
{
	struct db_agg_annotation a = {
		.trace_id = col(st, 0),
		.rank = col(st, 1),
		.name = col_text(st, 2),
		.calls = col(st, 3),
		.kernels = col(st, 4),
		.gpu_ns = col(st, 5),
		.comp_ns = col(st, 6),
		.comm_ns = col(st, 7),
		.overlap_ns = col(st, 8),
	};
	return v->fn.annotation(v->ctx, &a);
}

int db_agg_annotations(struct db *db, int64_t iteration,
		       int (*fn)(void *ctx, const struct db_agg_annotation *a), void *ctx)
{
	struct visit v = { ctx, { .annotation = fn } };
	return each(db, Q_ANNOTATIONS, iteration, NULL, row_annotation, &v, NULL);
}

int db_agg_iterations(struct db *db, const char *name, int (*fn)(void *ctx, int64_t iteration),
		      void *ctx, int *found)
{
	struct visit v = { ctx, { .iteration = fn } };
	return each(db, Q_ITERATIONS, 0, name, row_iteration, &v, found);
}

int db_agg_traces(struct db *db, int64_t iteration,
		  int (*fn)(void *ctx, const struct db_agg_trace *t), void *ctx)
{
	struct visit v = { ctx, { .trace = fn } };
	return each(db, Q_TRACES, iteration, NULL, row_trace, &v, NULL);
}

int db_agg_categories(struct db *db, int64_t iteration,
		      int (*fn)(void *ctx, const struct db_agg_category *c), void *ctx)
{
	struct visit v = { ctx, { .category = fn } };
	return each(db, Q_CATEGORIES, iteration, NULL, row_category, &v, NULL);
}

/* The n steps of one trace, in (phase code, seq) order, to fn with the
 * phases in name order (codes by[0..]); a code without a name is left
 * out, as the join with phase_codes left it out. */
static int steps_flush(const struct db_agg_step *v, size_t n, const int *by,
		       int (*fn)(void *ctx, const struct db_agg_step *s), void *ctx)
{
	int rc = 0;
	for (int k = 0; k < RR_NPHASES && !rc; k++)
		for (size_t i = 0; i < n && !rc; i++)
			if (v[i].phase == by[k])
				rc = fn(ctx, &v[i]);
	return rc;
}

int db_agg_steps(struct db *db, int64_t iteration,
		 int (*fn)(void *ctx, const struct db_agg_step *s), void *ctx)
{
	sqlite3_stmt *t = NULL, *st = NULL;
	struct db_agg_step *v = NULL;
	size_t alloc = 0;
	int by[RR_NPHASES], s = SQLITE_DONE, ss = SQLITE_DONE, rc = 0;
	for (int code = 1; code <= RR_NPHASES; code++)
		by[name_order(ph_name, code, RR_NPHASES + 1) - 1] = code - 1;
	if (!(t = take(db, Q_STEP_TRACES)) || !(st = take(db, Q_STEPS))) {
		rc = db_note_sql_error(db, what[Q_STEPS]);
		goto out;
	}
	sqlite3_bind_int64(t, 1, iteration);
	while (!rc && (s = sqlite3_step(t)) == SQLITE_ROW) {
		size_t n = 0;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, col(t, 0));
		while ((ss = sqlite3_step(st)) == SQLITE_ROW) {
			if (n == alloc) {
				alloc = alloc ? 2 * alloc : 256;
				v = xrealloc(v, alloc * sizeof(*v));
			}
			read_step(t, st, &v[n++]);
		}
		if (ss != SQLITE_DONE)
			rc = db_note_sql_error(db, what[Q_STEPS]);
		else
			rc = steps_flush(v, n, by, fn, ctx);
	}
	if (!rc && s != SQLITE_DONE)
		rc = db_note_sql_error(db, what[Q_STEP_TRACES]);
out:
	give(db, Q_STEPS, st);
	give(db, Q_STEP_TRACES, t);
	free(v);
	return rc;
}

/* The blocks of query q (Q_BLOCKS or Q_TRACE_BLOCKS) for each of the n
 * keys (an iteration, or trace ids), one statement rebound per key. */
static int blocks(struct db *db, int q, const int64_t *keys, size_t n,
		  int (*fn)(void *ctx, const struct db_agg_block *b), void *ctx)
{
	struct bgroup g = { .fn = fn, .ctx = ctx };
	sqlite3_stmt *st;
	int s = SQLITE_DONE, rc = 0;
	bgroup_orders(&g);
	if (!(st = take(db, q)))
		return db_note_sql_error(db, what[q]);
	sqlite3_bind_int(st, 2, RR_MEMORY);
	sqlite3_bind_int(st, 3, RR_OTHER);
	for (size_t i = 0; i < n && !rc; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, keys[i]);
		while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
			rc = row_block(st, &g);
		if (!rc && s != SQLITE_DONE)
			rc = db_note_sql_error(db, what[q]);
	}
	give(db, q, st);
	if (!rc && g.n)
		rc = bgroup_flush(&g);
	free(g.k);
	return rc;
}

int db_agg_blocks(struct db *db, int64_t iteration,
		  int (*fn)(void *ctx, const struct db_agg_block *b), void *ctx)
{
	return blocks(db, Q_BLOCKS, &iteration, 1, fn, ctx);
}

int db_agg_trace_blocks(struct db *db, const int64_t *trace_ids, size_t n,
			int (*fn)(void *ctx, const struct db_agg_block *b), void *ctx)
{
	return blocks(db, Q_TRACE_BLOCKS, trace_ids, n, fn, ctx);
}

/* The combined scan: per trace whether it has steps (its kernels make
 * blocks only then, as the EXISTS of Q_BLOCKS says), the blocks grouped as
 * db_agg_blocks() groups them, the communication kernels of a group handed
 * on as db_why_kernels() hands them. */
struct bscan {
	struct bgroup g;
	sqlite3_stmt *steps; /* does trace ?1 have a step */
	int64_t trace_id;
	bool has_steps;
	int (*kfn)(void *ctx, const struct db_why_kernel *k);
};

static int scan_row(struct db *db, sqlite3_stmt *st, struct bscan *S)
{
	int64_t id = col(st, 0), code = col(st, 2);
	int rc = 0, cat = (int)(code & 15);
	if (id != S->trace_id) {
		S->trace_id = id;
		sqlite3_bind_int64(S->steps, 1, id);
		int s = sqlite3_step(S->steps);
		if (s != SQLITE_ROW && s != SQLITE_DONE)
			return db_note_sql_error(db, "cannot read steps");
		S->has_steps = s == SQLITE_ROW;
		sqlite3_reset(S->steps);
	}
	if (S->has_steps && !col_null(st, 3) && cat != RR_MEMORY && cat != RR_OTHER)
		rc = row_block(st, &S->g);
	if (!rc && (code >> 4 & 3) == RR_COMM && cat != RR_PP_COMM && !col_null(st, 8)) {
		struct db_why_kernel k = {
			.trace_id = id,
			.rank = col(st, 1),
			.pg_id = col(st, 8),
			.category = cat,
			.start_ns = col(st, 4),
			.dur_ns = col(st, 5),
			.order = col_null(st, 6) ? col(st, 7) & 4294967295 : col(st, 6),
		};
		rc = S->kfn(S->g.ctx, &k);
	}
	return rc;
}

int db_agg_blocks_why(struct db *db, int64_t iteration,
		      int (*fn)(void *ctx, const struct db_agg_block *b),
		      int (*kfn)(void *ctx, const struct db_why_kernel *k), void *ctx)
{
	struct bscan S = { .g = { .fn = fn, .ctx = ctx }, .trace_id = -1, .kfn = kfn };
	sqlite3_stmt *st;
	int s = SQLITE_DONE, rc = 0;
	bgroup_orders(&S.g);
	if (!(S.steps = take(db, Q_HAS_STEPS)))
		return db_note_sql_error(db, what[Q_HAS_STEPS]);
	if (!(st = take(db, Q_BLOCKS_WHY))) {
		give(db, Q_HAS_STEPS, S.steps);
		return db_note_sql_error(db, what[Q_BLOCKS_WHY]);
	}
	sqlite3_bind_int64(st, 1, iteration);
	while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
		rc = scan_row(db, st, &S);
	if (!rc && s != SQLITE_DONE)
		rc = db_note_sql_error(db, what[Q_BLOCKS_WHY]);
	give(db, Q_BLOCKS_WHY, st);
	give(db, Q_HAS_STEPS, S.steps);
	if (!rc && S.g.n)
		rc = bgroup_flush(&S.g);
	free(S.g.k);
	return rc;
}

int db_agg_process_groups(struct db *db, int64_t iteration,
			  int (*fn)(void *ctx, const char *desc, const char *ranks), void *ctx)
{
	struct visit v = { ctx, { .group = fn } };
	return each(db, Q_GROUPS, iteration, NULL, row_group, &v, NULL);
}

/* The ops of each trace of iteration (kineto: only of those that record no
 * worker) to fn: Q_OP_TRACES drives, Q_OP_ROWS is rebound per trace. */
static int ops(struct db *db, int64_t iteration, bool kineto,
	       int (*fn)(void *ctx, const struct db_agg_op *o), void *ctx)
{
	sqlite3_stmt *t = NULL, *o = NULL;
	int s = SQLITE_DONE, so = SQLITE_DONE, rc = 0;
	if (!(t = take(db, Q_OP_TRACES)) || !(o = take(db, Q_OP_ROWS))) {
		rc = db_note_sql_error(db, what[Q_OP_TRACES]);
		goto out;
	}
	sqlite3_bind_int64(t, 1, iteration);
	while (!rc && (s = sqlite3_step(t)) == SQLITE_ROW) {
		struct db_agg_op x = {
			.trace_id = col(t, 0),
			.rank = col(t, 1),
			.has_worker = col(t, 2) != 0,
			.dp_rank = (int)col(t, 3),
			.stage = (int)col(t, 4),
			.source_id = col(t, 5),
		};
		/* Without a window the times are NULL, as the sum with it. */
		bool timed = !col_null(t, 6);
		int64_t base = col(t, 6);
		if (kineto && x.has_worker)
			continue;
		sqlite3_reset(o);
		sqlite3_bind_int64(o, 1, x.trace_id << 32);
		sqlite3_bind_int64(o, 2, (x.trace_id + 1) << 32);
		while (!rc && (so = sqlite3_step(o)) == SQLITE_ROW) {
			x.optype = (int)col(o, 0);
			x.seq_id = (int32_t)col(o, 1);
			x.mc = (int16_t)col(o, 2);
			x.gmc = (int16_t)col(o, 3);
			x.mb_id = (int16_t)col(o, 4);
			x.start_ns = timed ? base + col(o, 5) : 0;
			x.end_ns = timed ? x.start_ns + col(o, 6) : 0;
			x.has_step = !col_null(o, 7);
			x.step_seq = (int32_t)col(o, 7);
			rc = fn(ctx, &x);
		}
		if (!rc && so != SQLITE_DONE)
			rc = db_note_sql_error(db, what[Q_OP_ROWS]);
	}
	if (!rc && s != SQLITE_DONE)
		rc = db_note_sql_error(db, what[Q_OP_TRACES]);
out:
	give(db, Q_OP_ROWS, o);
	give(db, Q_OP_TRACES, t);
	return rc;
}

int db_agg_ops(struct db *db, int64_t iteration, int (*fn)(void *ctx, const struct db_agg_op *o),
	       void *ctx)
{
	return ops(db, iteration, false, fn, ctx);
}

int db_agg_kineto_ops(struct db *db, int64_t iteration,
		      int (*fn)(void *ctx, const struct db_agg_op *o), void *ctx)
{
	return ops(db, iteration, true, fn, ctx);
}

int db_agg_op_source(struct db *db, int64_t id,
		     int (*fn)(void *ctx, const struct db_agg_op_source *s), void *ctx, int *found)
{
	struct visit v = { ctx, { .source = fn } };
	return each(db, Q_OP_SOURCE, id, NULL, row_source, &v, found);
}

int db_agg_op_workers(struct db *db, int64_t iteration,
		      int (*fn)(void *ctx, const struct db_agg_op_worker *w), void *ctx)
{
	struct visit v = { ctx, { .worker = fn } };
	return each(db, Q_OP_WORKERS, iteration, NULL, row_worker, &v, NULL);
}

/* ---- the writer ---- */

enum {
	W_DEL_PP,
	W_DEL_PIPE,
	W_DEL_STRAG,
	W_INS_PP,
	W_INS_PIPE,
	W_INS_STRAG,
	W_DEL_TOPO,
	W_INS_TOPO,
	W_DEL_WI,
	W_DEL_WI_OPTYPE,
	W_DEL_WI_WORKER,
	W_DEL_WI_STEP,
	W_INS_WI,
	W_INS_WI_OPTYPE,
	W_INS_WI_WORKER,
	W_INS_WI_STEP,
	W_COUNT
};

/* In enum order. */
static const char *const write_sql[W_COUNT] = {
	"DELETE FROM agg_pp_group WHERE iteration = ?1",
	"DELETE FROM agg_pipeline WHERE iteration = ?1",
	"DELETE FROM agg_straggler WHERE iteration = ?1",
	"INSERT INTO agg_pp_group(iteration, pp_group, stage, rank, complete,"
	" group_window_start_ns, group_window_end_ns, group_idle_ns,"
	" group_bubble_ns) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	"INSERT INTO agg_pipeline(iteration, pp_group, measured_ns, ideal_ns,"
	" gap_ns, bubble_ratio) VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
	"INSERT INTO agg_straggler(iteration, rank, group_kind, grp, metric,"
	" value_ns, median_ns, excess) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	"DELETE FROM agg_topology",
	"INSERT INTO agg_topology(rank, pp_group, stage, dp_rank, pp_size, vpp)"
	" VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
	"DELETE FROM agg_whatif",
	"DELETE FROM agg_whatif_optype",
	"DELETE FROM agg_whatif_worker",
	"DELETE FROM agg_whatif_step",
	"INSERT INTO agg_whatif(id, iterations, first_iteration, last_iteration, t_base_ns,"
	" t_ns, t_ideal_ns, slowdown, launch_slowdown, m_w, m_w_add, m_s, m_s_add,"
	" m_w_ranks, verdict, ranks_per_cell, cell_ops, vpp, clock_error_ns, notes)"
	" VALUES(1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
	" ?17, ?18, ?19)",
	"INSERT INTO agg_whatif_optype(optype, slowdown) VALUES(?1, ?2)",
	"INSERT INTO agg_whatif_worker(rank, dp_rank, stage, s_dp, s_pp, slowdown,"
	" clock_offset_ns, slow_rank) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	"INSERT INTO agg_whatif_step(iteration, t_ns, t_ideal_ns, slowdown)"
	" VALUES(?1, ?2, ?3, ?4)",
};

/* No deletes at the start: db_agg_clear() and the clear functions delete
 * what ppagg replaces. */
static const struct db_write_table table = { write_sql, W_COUNT, 0, 0, "ppagg's rows" };

struct db_agg_writer {
	struct db_writer w;
};

/* Steps statement i (its bindings set by the caller) and resets it.
 * Ratios are bound as they are: SQLite stores a NaN (no ratio) as NULL
 * and keeps an infinity. */
static int run(struct db_agg_writer *w, int i, const char *why)
{
	return db_writer_run(&w->w, i, why);
}

struct db_agg_writer *db_agg_begin(struct db *db)
{
	return db_writer_new(db, &table, sizeof(struct db_agg_writer));
}

int db_agg_clear(struct db_agg_writer *w, int64_t iteration)
{
	for (int i = W_DEL_PP; i <= W_DEL_STRAG; i++) {
		sqlite3_bind_int64(w->w.st[i], 1, iteration);
		if (run(w, i, "cannot delete old ppagg rows"))
			return PP_EDB;
	}
	return 0;
}

static void bind_opt(sqlite3_stmt *st, int col, bool have, int64_t v)
{
	if (have)
		sqlite3_bind_int64(st, col, v);
}

int db_agg_add_pp_group(struct db_agg_writer *w, const struct db_agg_pp_group *r)
{
	const int64_t v[] = { r->iteration,     r->pp_group, r->stage,
			      r->rank,          r->complete, r->window_start_ns,
			      r->window_end_ns, r->idle_ns,  r->bubble_ns };
	const bool have[] = { true,          true,          true,        true,       true,
			      r->has_window, r->has_window, r->has_rank, r->has_rank };
	return DB_WRITER_PUT_I64S(&w->w, W_INS_PP, v, have, "cannot write pp_groups");
}

int db_agg_add_pipeline(struct db_agg_writer *w, const struct db_agg_pipeline *r)
{
	const int64_t v[] = { r->iteration, r->pp_group, r->measured_ns, r->ideal_ns, r->gap_ns };
	const bool have[] = { true, true, true, r->has_ideal, r->has_ideal };
	sqlite3_bind_double(w->w.st[W_INS_PIPE], 6, r->bubble_ratio);
	return DB_WRITER_PUT_I64S(&w->w, W_INS_PIPE, v, have, "cannot write pipelines");
}

int db_agg_add_straggler(struct db_agg_writer *w, const struct db_agg_straggler *r)
{
	sqlite3_stmt *s = w->w.st[W_INS_STRAG];
	sqlite3_bind_int64(s, 1, r->iteration);
	sqlite3_bind_int(s, 2, r->rank);
	sqlite3_bind_text(s, 3, r->group_kind, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 4, r->group);
	sqlite3_bind_text(s, 5, r->metric, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 6, r->value_ns);
	sqlite3_bind_int64(s, 7, r->median_ns);
	sqlite3_bind_double(s, 8, r->excess);
	return run(w, W_INS_STRAG, "cannot write stragglers");
}

int db_agg_clear_topology(struct db_agg_writer *w)
{
	return run(w, W_DEL_TOPO, "cannot delete ppagg's topology");
}

int db_agg_add_topology(struct db_agg_writer *w, const struct db_agg_topology *r)
{
	const int64_t v[] = { r->rank, r->pp_group, r->stage, r->dp_rank, r->pp_size, r->vpp };
	const bool have[] = { true, true, true, true, r->pp_size > 0, r->vpp > 0 };
	return DB_WRITER_PUT_I64S(&w->w, W_INS_TOPO, v, have, "cannot write ppagg's topology");
}

int db_agg_clear_whatif(struct db_agg_writer *w)
{
	for (int i = W_DEL_WI; i <= W_DEL_WI_STEP; i++)
		if (run(w, i, "cannot delete the what-if rows"))
			return PP_EDB;
	return 0;
}

int db_agg_add_whatif(struct db_agg_writer *w, const struct db_agg_whatif *r)
{
	sqlite3_stmt *s = w->w.st[W_INS_WI];
	const int64_t it[] = { r->iterations, r->first_iteration, r->last_iteration };
	db_bind_i64s(s, 1, it, NULL, 3);
	const double t[] = { r->t_base_ns, r->t_ns, r->t_ideal_ns };
	for (int i = 0; i < 3; i++)
		db_bind_ns(s, 4 + i, t[i]);
	const double ratio[] = { r->slowdown, r->launch_slowdown, r->m_w, r->m_w_add,
				 r->m_s,      r->m_s_add };
	for (int i = 0; i < 6; i++)
		sqlite3_bind_double(s, 7 + i, ratio[i]);
	if (r->m_w_ranks)
		sqlite3_bind_text(s, 13, r->m_w_ranks, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 14, r->verdict, -1, SQLITE_STATIC);
	bind_opt(s, 15, r->ranks_per_cell > 0, r->ranks_per_cell);
	if (r->cell_ops)
		sqlite3_bind_text(s, 16, r->cell_ops, -1, SQLITE_STATIC);
	bind_opt(s, 17, r->vpp > 0, r->vpp);
	bind_opt(s, 18, r->has_clock_error, r->clock_error_ns);
	if (r->notes)
		sqlite3_bind_text(s, 19, r->notes, -1, SQLITE_STATIC);
	return run(w, W_INS_WI, "cannot write whatif");
}

int db_agg_add_whatif_optype(struct db_agg_writer *w, const char *optype, double slowdown)
{
	sqlite3_stmt *s = w->w.st[W_INS_WI_OPTYPE];
	sqlite3_bind_text(s, 1, optype, -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 2, slowdown);
	return run(w, W_INS_WI_OPTYPE, "cannot write whatif_optypes");
}

int db_agg_add_whatif_worker(struct db_agg_writer *w, const struct db_agg_whatif_worker *r)
{
	sqlite3_stmt *s = w->w.st[W_INS_WI_WORKER];
	sqlite3_bind_int64(s, 1, r->rank);
	sqlite3_bind_int(s, 2, r->dp_rank);
	sqlite3_bind_int(s, 3, r->stage);
	sqlite3_bind_double(s, 4, r->s_dp);
	sqlite3_bind_double(s, 5, r->s_pp);
	sqlite3_bind_double(s, 6, r->slowdown);
	bind_opt(s, 7, r->has_clock_offset, r->clock_offset_ns);
	bind_opt(s, 8, r->slow_rank >= 0, r->slow_rank);
	return run(w, W_INS_WI_WORKER, "cannot write whatif_workers");
}

int db_agg_add_whatif_step(struct db_agg_writer *w, int64_t iteration, double t_ns,
			   double t_ideal_ns, double slowdown)
{
	sqlite3_stmt *s = w->w.st[W_INS_WI_STEP];
	sqlite3_bind_int64(s, 1, iteration);
	db_bind_ns(s, 2, t_ns);
	db_bind_ns(s, 3, t_ideal_ns);
	sqlite3_bind_double(s, 4, slowdown);
	return run(w, W_INS_WI_STEP, "cannot write whatif_steps");
}

int db_agg_commit(struct db_agg_writer *w)
{
	return db_writer_end(&w->w, 0);
}

void db_agg_rollback(struct db_agg_writer *w)
{
	db_writer_rollback((struct db_writer *)w);
}
