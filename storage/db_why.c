/* db_why.c — the why analysis' reads and writes (see db_why.h).
 *
 * The kernels are read as db_agg_blocks() reads them: a CROSS JOIN keeps
 * the traces the outer loop, so each trace's kernels are one rowid range,
 * tested against the (category, type) code and the process group in the
 * row, without an index. The writer deletes every row of the why tables
 * and inserts the new ones in one IMMEDIATE transaction, so readers see
 * the last run whole or the one before; the tables with a row per
 * transfer, kernel or instance take 32 rows per statement.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "db_int.h"
#include "db_why.h"
#include "util/pp.h"
#include "util/strbuf.h"

/* ---- reads ---------------------------------------------------------- */

/* ?1 iteration, ?2 the comm type, ?3 pp_communication's code. The code is
 * the first column and is tested first: most rows are not communication,
 * and their other columns are never decoded. Raw columns: the sums and the
 * order's fallback are done in C. */
static const char kernels_sql[] =
	"SELECT t.id, t.rank, t.window_start_ns, k.code, k.start, k.dur, k.correlation,"
	" k.rowid, k.pg_id FROM traces t CROSS JOIN kernel_t k"
	" ON k.rowid >= (t.id << 32) AND k.rowid < ((t.id + 1) << 32)"
	" WHERE t.iteration = ?1 AND (k.code >> 4) & 3 = ?2 AND (k.code & 15) <> ?3"
	" AND k.pg_id IS NOT NULL";

/* ?1 the trace. The name by a scalar subquery, as the kernels view does,
 * so that the trace's rowid range stays the only scan. */
static const char trace_kernels_sql[] =
	"SELECT (SELECT name FROM names WHERE id = k.name_id), k.stream, k.code,"
	" t.window_start_ns + k.start, k.dur"
	" FROM traces t CROSS JOIN kernel_t k"
	" ON k.rowid >= (t.id << 32) AND k.rowid < ((t.id + 1) << 32)"
	" WHERE t.id = ?1";

static const char groups_sql[] =
	"SELECT id, descr, ranks FROM pgroups WHERE descr <> '' AND ranks <> '' ORDER BY id";

/* The caller's callback of one kind of row, and its context. */
struct visit {
	void *ctx;
	int (*kernel)(void *ctx, const struct db_why_kernel *k);
	int (*trace_kernel)(void *ctx, const struct db_why_trace_kernel *k);
	int (*group)(void *ctx, const struct db_why_group *g);
};

static int row_kernel(sqlite3_stmt *st, void *arg)
{
	const struct visit *v = arg;
	struct db_why_kernel k = {
		.trace_id = sqlite3_column_int64(st, 0),
		.rank = sqlite3_column_int64(st, 1),
		.pg_id = sqlite3_column_int64(st, 8),
		.category = (int)(sqlite3_column_int64(st, 3) & 15),
		.start_ns = sqlite3_column_int64(st, 2) + sqlite3_column_int64(st, 4),
		.dur_ns = sqlite3_column_int64(st, 5),
		.order = sqlite3_column_type(st, 6) == SQLITE_NULL
				 ? sqlite3_column_int64(st, 7) & 4294967295
				 : sqlite3_column_int64(st, 6),
	};
	return v->kernel(v->ctx, &k);
}

int db_why_kernels(struct db *db, int64_t iteration,
		   int (*fn)(void *ctx, const struct db_why_kernel *k), void *ctx)
{
	static const char what[] = "cannot read the communication kernels";
	struct visit v = { .ctx = ctx, .kernel = fn };
	sqlite3_stmt *st = db_read_prepare(db, kernels_sql, what);
	if (st) {
		sqlite3_bind_int64(st, 1, iteration);
		sqlite3_bind_int(st, 2, RR_COMM);
		sqlite3_bind_int(st, 3, RR_PP_COMM);
	}
	return db_read_rows(db, st, row_kernel, &v, what);
}

static int row_trace_kernel(sqlite3_stmt *st, void *arg)
{
	const struct visit *v = arg;
	int64_t code = sqlite3_column_int64(st, 2);
	const char *name = (const char *)sqlite3_column_text(st, 0);
	struct db_why_trace_kernel k = {
		.name = name ? name : "",
		.stream = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1
								    : sqlite3_column_int64(st, 1),
		.category = (int)(code & 15),
		.coll = (int)(code >> 10 & 15),
		.start_ns = sqlite3_column_int64(st, 3),
		.dur_ns = sqlite3_column_int64(st, 4),
	};
	return v->trace_kernel(v->ctx, &k);
}

int db_why_trace_kernels(struct db *db, int64_t trace_id,
			 int (*fn)(void *ctx, const struct db_why_trace_kernel *k), void *ctx)
{
	static const char what[] = "cannot read a trace's kernels";
	struct visit v = { .ctx = ctx, .trace_kernel = fn };
	sqlite3_stmt *st = db_read_prepare(db, trace_kernels_sql, what);
	if (st)
		sqlite3_bind_int64(st, 1, trace_id);
	return db_read_rows(db, st, row_trace_kernel, &v, what);
}

static int row_group(sqlite3_stmt *st, void *arg)
{
	const struct visit *v = arg;
	struct db_why_group g = { sqlite3_column_int64(st, 0),
				  (const char *)sqlite3_column_text(st, 1),
				  (const char *)sqlite3_column_text(st, 2) };
	return v->group(v->ctx, &g);
}

int db_why_groups(struct db *db, int (*fn)(void *ctx, const struct db_why_group *g), void *ctx)
{
	static const char what[] = "cannot read process groups";
	struct visit v = { .ctx = ctx, .group = fn };
	return db_read_rows(db, db_read_prepare(db, groups_sql, what), row_group, &v, what);
}

/* ---- the writer ---------------------------------------------------- */

/* The three big tables take their rows BATCH at a time: each row is kept
 * as cells (its texts copied) until BATCH of them fill one multi-row
 * INSERT; db_why_commit() inserts the rest one by one. One statement step
 * per BATCH rows instead of per row. */
#define BATCH 32
#define P2P_COLS 15
#define KERNEL_COLS 12
#define COLL_COLS 13
#define R15 "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
#define R12 "(?,?,?,?,?,?,?,?,?,?,?,?)"
#define R13 "(?,?,?,?,?,?,?,?,?,?,?,?,?)"
#define R15x4 R15 "," R15 "," R15 "," R15
#define R15x16 R15x4 "," R15x4 "," R15x4 "," R15x4
#define R12x4 R12 "," R12 "," R12 "," R12
#define R12x16 R12x4 "," R12x4 "," R12x4 "," R12x4
#define R13x4 R13 "," R13 "," R13 "," R13
#define R13x16 R13x4 "," R13x4 "," R13x4 "," R13x4
#define P2P_INTO                                                                     \
	"INSERT INTO why_p2p(iteration, rank, kernel, direction, role, peer_rank,"   \
	" microbatch, chunk, start_ns, dur_ns, wait_ns, transfer_ns, peer_start_ns," \
	" bytes, status) VALUES "
#define KERNEL_INTO                                                                    \
	"INSERT INTO why_p2p_kernel(iteration, rank, stage, kernel, start_ns, dur_ns," \
	" wait_ns, transfer_ns, waited_for, side, transfers, status) VALUES "
#define COLL_INTO                                                                      \
	"INSERT INTO why_collective(iteration, grp, seq, size, present, first_ns,"     \
	" last_ns, skew_ns, first_rank, last_rank, transfer_ns, missing_rank, status)" \
	" VALUES "

enum {
	W_DEL_P2P,
	W_DEL_KERNEL,
	W_DEL_BUBBLE,
	W_DEL_HOP,
	W_DEL_COLL,
	W_DEL_COLL_RANK,
	W_DEL_CPATH,
	W_DEL_CLOCK,
	W_DEL_SUMMARY,
	W_DEL_GROUP,
	W_P2P,
	W_P2P_MANY,
	W_KERNEL,
	W_KERNEL_MANY,
	W_COLL,
	W_COLL_MANY,
	W_GROUP,
	W_BUBBLE,
	W_HOP,
	W_COLL_RANK,
	W_CPATH,
	W_CLOCK,
	W_SUMMARY,
	W_COUNT
};

/* In enum order. */
static const char *const write_sql[W_COUNT] = {
	"DELETE FROM why_p2p",
	"DELETE FROM why_p2p_kernel",
	"DELETE FROM why_bubble",
	"DELETE FROM why_hop",
	"DELETE FROM why_collective",
	"DELETE FROM why_collective_rank",
	"DELETE FROM why_cpath",
	"DELETE FROM why_clock",
	"DELETE FROM why_summary",
	"DELETE FROM why_group",
	P2P_INTO R15,
	P2P_INTO R15x16 "," R15x16,
	KERNEL_INTO R12,
	KERNEL_INTO R12x16 "," R12x16,
	COLL_INTO R13,
	COLL_INTO R13x16 "," R13x16,
	"INSERT INTO why_group(id, pg, pg_ranks, kind) VALUES(?1, ?2, ?3, ?4)",
	"INSERT INTO why_bubble(iteration, rank, stage, bubble_ns, wait_previous_ns, wait_next_ns,"
	" transfer_ns, no_work_ns, incomplete) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	"INSERT INTO why_hop(iteration, stage, peer_stage, kernels, wait_ns, transfer_ns)"
	" VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
	"INSERT INTO why_collective_rank(rank, pg_kind, instances, times_last, share_last, chance,"
	" mean_wait_ns, last_by_ns, late) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	"INSERT INTO why_cpath(iteration, seq, rank, dp_rank, stage, optype, op_seq, kind,"
	" placeholder, start_ns, dur_ns, op_start_ns, op_end_ns)"
	" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	"INSERT INTO why_clock(rank, offset_ns) VALUES(?1, ?2)",
	"INSERT INTO why_summary(id, iterations, first_iteration, last_iteration, p2p_transfers,"
	" p2p_unpaired, p2p_kernels, p2p_kernels_incomplete, collectives,"
	" collectives_incomplete, critical_path_steps, clock_error_ns, clocks_corrected, notes)"
	" VALUES(1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
};

static const struct db_write_table table = { write_sql, W_COUNT, W_DEL_P2P, W_DEL_GROUP + 1,
					     "the why analysis" };

/* One value of a buffered row: NULL, an integer, or a text at `text` in
 * the batch's buffer. */
struct cell {
	int64_t v;
	uint8_t kind;
};
enum { C_NULL, C_INT, C_TEXT };

struct batch {
	int one, many, ncol; /* statements, columns */
	const char *what;    /* for messages */
	struct cell cell[BATCH * P2P_COLS];
	int n; /* rows kept */
	struct strbuf text;
};

enum { B_P2P, B_KERNEL, B_COLL, B_COUNT };

struct db_why_writer {
	struct db_writer w;
	struct batch b[B_COUNT];
};

struct db_why_writer *db_why_begin(struct db *db)
{
	static const struct {
		int one, many, ncol;
		const char *what;
	} batches[B_COUNT] = {
		[B_P2P] = { W_P2P, W_P2P_MANY, P2P_COLS, "cannot write p2p" },
		[B_KERNEL] = { W_KERNEL, W_KERNEL_MANY, KERNEL_COLS, "cannot write p2p_kernels" },
		[B_COLL] = { W_COLL, W_COLL_MANY, COLL_COLS, "cannot write collectives" },
	};
	struct db_why_writer *w = db_writer_new(db, &table, sizeof(*w));
	if (!w)
		return NULL;
	for (int i = 0; i < B_COUNT; i++) {
		w->b[i].one = batches[i].one;
		w->b[i].many = batches[i].many;
		w->b[i].ncol = batches[i].ncol;
		w->b[i].what = batches[i].what;
		strbuf_init(&w->b[i].text, 0);
	}
	return w;
}

/* Binds cells c[0..n) of batch b to statement s from column col on. */
static void bind_cells(const struct batch *b, sqlite3_stmt *s, const struct cell *c, int n, int col)
{
	for (int i = 0; i < n; i++)
		if (c[i].kind == C_INT)
			sqlite3_bind_int64(s, col + i, c[i].v);
		else if (c[i].kind == C_TEXT)
			sqlite3_bind_text(s, col + i, b->text.buf + c[i].v, -1, SQLITE_STATIC);
}

/* Inserts batch b's kept rows: all at once when it is full, else one by
 * one. */
static int flush(struct db_why_writer *w, struct batch *b)
{
	int rc = 0;
	if (b->n == BATCH) {
		bind_cells(b, w->w.st[b->many], b->cell, BATCH * b->ncol, 1);
		rc = db_writer_run(&w->w, b->many, b->what);
	} else {
		for (int r = 0; r < b->n && !rc; r++) {
			bind_cells(b, w->w.st[b->one], b->cell + r * b->ncol, b->ncol, 1);
			rc = db_writer_run(&w->w, b->one, b->what);
		}
	}
	b->n = 0;
	strbuf_reset(&b->text);
	return rc;
}

/* v, or NULL when v is -1. */
static struct db_val opt(int64_t v)
{
	return db_int_if(v != -1, v);
}

/* Keeps row v (batch i's columns; its texts copied) and inserts the batch
 * when it is full. */
static int keep(struct db_why_writer *w, int i, const struct db_val *v)
{
	struct batch *b = &w->b[i];
	struct cell *c = b->cell + b->n * b->ncol;
	for (int k = 0; k < b->ncol; k++) {
		if (v[k].kind != DB_VAL_TEXT) {
			c[k] = (struct cell){ v[k].i, v[k].kind == DB_VAL_INT ? C_INT : C_NULL };
			continue;
		}
		c[k] = (struct cell){ (int64_t)b->text.len, C_TEXT };
		strbuf_add(&b->text, v[k].s, strlen(v[k].s) + 1);
	}
	return ++b->n == BATCH ? flush(w, b) : 0;
}

int db_why_add_p2p(struct db_why_writer *w, const struct db_why_p2p *r)
{
	const bool m = r->measured;
	const struct db_val v[P2P_COLS] = { db_int(r->iteration),
					    db_int(r->rank),
					    db_int(r->kernel),
					    db_text(r->direction),
					    db_text(r->role),
					    opt(r->peer_rank),
					    opt(r->microbatch),
					    opt(r->chunk),
					    db_int(r->start_ns),
					    db_int(r->dur_ns),
					    db_int_if(m, r->wait_ns),
					    db_int_if(m, r->transfer_ns),
					    db_int_if(m, r->peer_start_ns),
					    opt(r->bytes),
					    db_text(r->status) };
	return keep(w, B_P2P, v);
}

int db_why_add_p2p_kernel(struct db_why_writer *w, const struct db_why_p2p_kernel *r)
{
	const bool m = r->measured;
	const struct db_val v[KERNEL_COLS] = { db_int(r->iteration),
					       db_int(r->rank),
					       opt(r->stage),
					       db_int(r->kernel),
					       db_int(r->start_ns),
					       db_int(r->dur_ns),
					       db_int_if(m, r->wait_ns),
					       db_int_if(m, r->transfer_ns),
					       opt(r->waited_for),
					       db_text(r->side),
					       db_int(r->transfers),
					       db_text(r->status) };
	return keep(w, B_KERNEL, v);
}

int db_why_add_collective(struct db_why_writer *w, const struct db_why_collective *r)
{
	const bool m = r->measured;
	const struct db_val v[COLL_COLS] = { db_int(r->iteration),
					     db_int(r->group),
					     db_int(r->seq),
					     db_int(r->size),
					     db_int(r->present),
					     db_int_if(m, r->first_ns),
					     db_int_if(m, r->last_ns),
					     db_int_if(m, r->skew_ns),
					     db_int_if(m, r->first_rank),
					     db_int_if(m, r->last_rank),
					     db_int_if(m, r->transfer_ns),
					     opt(r->missing_rank),
					     db_text(r->status) };
	return keep(w, B_COLL, v);
}

int db_why_add_group(struct db_why_writer *w, const struct db_why_group_row *r)
{
	const struct db_val v[] = { db_int(r->id), db_text(r->pg_desc), db_text(r->pg_ranks),
				    db_text(r->pg_kind) };
	return DB_WRITER_PUT(&w->w, W_GROUP, v, "cannot write the collectives' groups");
}

int db_why_add_bubble(struct db_why_writer *w, const struct db_why_bubble *r)
{
	const struct db_val v[] = { db_int(r->iteration),    db_int(r->rank),
				    opt(r->stage),           opt(r->bubble_ns),
				    db_int(r->wait_prev_ns), db_int(r->wait_next_ns),
				    db_int(r->transfer_ns),  opt(r->no_work_ns),
				    db_int(r->incomplete) };
	return DB_WRITER_PUT(&w->w, W_BUBBLE, v, "cannot write p2p_bubbles");
}

int db_why_add_hop(struct db_why_writer *w, const struct db_why_hop *r)
{
	const int64_t v[] = { r->iteration, r->stage,   r->peer_stage,
			      r->kernels,   r->wait_ns, r->transfer_ns };
	return DB_WRITER_PUT_I64S(&w->w, W_HOP, v, NULL, "cannot write p2p_hops");
}

int db_why_add_collective_rank(struct db_why_writer *w, const struct db_why_collective_rank *r)
{
	const struct db_val v[] = { db_int(r->rank),          db_text(r->pg_kind),
				    db_int(r->instances),     db_int(r->times_last),
				    db_double(r->share_last), db_double(r->chance),
				    db_int(r->mean_wait_ns),  db_int(r->last_by_ns),
				    db_int(r->late) };
	return DB_WRITER_PUT(&w->w, W_COLL_RANK, v, "cannot write collective_ranks");
}

int db_why_add_segment(struct db_why_writer *w, const struct db_why_segment *r)
{
	const struct db_val v[] = { db_int(r->iteration), db_int(r->seq),    db_int(r->rank),
				    db_int(r->dp_rank),   db_int(r->stage),  opt(r->optype),
				    db_int(r->op_seq),    db_text(r->kind),  db_int(r->placeholder),
				    db_int(r->start_ns),  db_int(r->dur_ns), db_int(r->op_start_ns),
				    db_int(r->op_end_ns) };
	return DB_WRITER_PUT(&w->w, W_CPATH, v, "cannot write critical_path");
}

int db_why_add_clock(struct db_why_writer *w, int64_t rank, int64_t offset_ns)
{
	const struct db_val v[] = { db_int(rank), db_int(offset_ns) };
	return DB_WRITER_PUT(&w->w, W_CLOCK, v, "cannot write rank_clocks");
}

int db_why_set_summary(struct db_why_writer *w, const struct db_why_summary *r)
{
	const int64_t v[] = { r->iterations,
			      r->first_iteration,
			      r->last_iteration,
			      r->p2p_transfers,
			      r->p2p_unpaired,
			      r->p2p_kernels,
			      r->p2p_kernels_incomplete,
			      r->collectives,
			      r->collectives_incomplete,
			      r->critical_path_steps,
			      r->clock_error_ns,
			      r->clocks_corrected };
	const bool have[] = { true,
			      r->iterations > 0,
			      r->iterations > 0,
			      true,
			      true,
			      true,
			      true,
			      true,
			      true,
			      true,
			      r->has_clock_error,
			      true };
	db_bind_text(w->w.st[W_SUMMARY], 13, r->notes);
	return DB_WRITER_PUT_I64S(&w->w, W_SUMMARY, v, have, "cannot write why");
}

int db_why_commit(struct db_why_writer *w)
{
	int rc = 0;
	for (int i = 0; i < B_COUNT && !rc; i++)
		rc = flush(w, &w->b[i]);
	for (int i = 0; i < B_COUNT; i++)
		strbuf_release(&w->b[i].text);
	return db_writer_end(&w->w, rc);
}

void db_why_rollback(struct db_why_writer *w)
{
	for (int i = 0; w && i < B_COUNT; i++)
		strbuf_release(&w->b[i].text);
	db_writer_rollback((struct db_writer *)w);
}
