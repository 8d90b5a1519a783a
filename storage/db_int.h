/* db_int.h — what the files of storage/ share about a struct db; not for
 * the layers above (they use db.h).
 *
 * The handle's three jobs are three files:
 *   db.c        the connection: open (pragmas, schema), close, checkpoints,
 *               the statements it keeps, transactions, the error state
 *   db_trace.c  the trace write: one trace per transaction (its kernels,
 *               steps, categories, annotations and ops), bulk imports,
 *               op-trace sources
 *   db_runs.c   the run log (runs) and what a run reads back of the
 *               traces: the stored list, the adoption of legacy rows
 *
 * Invariants:
 * - err_code != 0 makes every writing call fail until db_trace_rollback()
 *   (sticky); errmsg says what went wrong first.
 * - in_txn is true between a successful db_trace_begin() (or
 *   db_adopt_begin()) and the matching commit or rollback; cur_trace is the
 *   trace's id and next_kidx the index of its next kernel (kernel rowid =
 *   cur_trace << 32 | next_kidx).
 * - bulk is true between db_bulk_begin() and db_bulk_commit(): the trace
 *   transactions inside it neither begin nor commit, so the whole import is
 *   one transaction; any failure rolls all of it back.
 * - The name/process-group caches map text to committed ids, plus ids added
 *   by the open transaction; a rollback clears them, since those ids vanish.
 * - Kernels and ops are buffered (KBATCH and OBATCH rows per statement);
 *   an op's index within its trace is next_oidx.
 */
#ifndef DB_INT_H
#define DB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "krows.h"

struct sqlite3;
struct strbuf;
struct sqlite3_stmt;

/* The statements a handle prepares on first use and keeps (struct db.st),
 * by the file that runs them; their SQL is db.c's table. */
enum db_stmt {
	/* db.c: transactions */
	S_BEGIN,
	S_COMMIT,
	S_ROLLBACK,
	/* db_trace.c */
	S_FIND_TRACE,
	S_DEL_KERNELS,
	S_DEL_STEPS,
	S_DEL_CATS,
	S_DEL_ANNS,
	S_DEL_TRACE,
	S_INS_TRACE,
	S_INS_STEP,
	S_INS_CAT,
	S_INS_ANN,
	S_FIND_NAME,
	S_INS_NAME,
	S_FIND_PG,
	S_INS_PG,
	S_INS_KERNELS,
	S_INS_KERNELS_ID,
	S_MAX_KROW,
	S_DEL_OPS,
	S_DEL_OP_WORKER,
	S_INS_OP,
	S_INS_OPS,
	S_INS_OP_WORKER,
	S_TRACES_UNDER,
	S_FIND_SOURCE,
	S_DEL_SOURCE,
	S_INS_SOURCE,
	/* db_runs.c */
	S_EACH,
	S_RUN_BEGIN,
	S_RUN_FINISH,
	S_ADOPT,
	S_COUNT
};

/* Open-addressing map from text to id: filled by db_trace.c, emptied by
 * db.c when a transaction is abandoned or the handle closed. */
struct intern {
	struct intern_slot {
		char *key; /* NULL = empty */
		size_t len;
		uint64_t hash;
		int64_t id;
	} * slots;
	size_t cap, used; /* cap is a power of two */
};

/* Kernels are buffered and inserted KBATCH rows per statement, read by
 * the statement from the buffer itself (pp_krows, krows.h): one
 * sqlite3_step per batch and no sqlite3_bind_* per value. */
#define KBATCH 256
/* Ops likewise, with their rowid (op_t is only ever written by one trace
 * transaction at a time and rows are few per trace). */
#define OCOLS 9
#define OBATCH 32

#define DB_AGG_NSTMT 16 /* db_agg.c's queries */

struct db {
	struct sqlite3 *conn;
	int busy_timeout_ms;
	struct sqlite3_stmt *st[S_COUNT]; /* prepared on first use, then reused */
	/* db_agg.c's reads, kept between calls (those not being read). */
	struct sqlite3_stmt *agg_st[DB_AGG_NSTMT];
	bool readonly;
	int err_code;
	char errmsg[512];
	/* The open transaction (db_trace.c, db_runs.c). */
	bool in_txn;
	bool bulk; /* inside db_bulk_begin(): traces do not commit */
	int64_t cur_trace;
	int64_t window_start_ns; /* of the open trace: kernel start base */
	uint64_t next_kidx;
	struct intern names, pgroups;
	/* Kernel rows not yet inserted (< KBATCH); column c of row r is
	 * krow[r][c], NULL where bit c of knull[r] is set. */
	int64_t krow[KBATCH][KROWS_COLS];
	uint16_t knull[KBATCH];
	int nkrow;
	int kappend;                 /* the trace's rows are kernel_t's last: 1 yes,
				      * 0 no, -1 not known yet */
	int64_t orow[OBATCH][OCOLS]; /* op rows not yet inserted */
	int nop;
	uint64_t next_oidx;
};

/* ---- errors (db.c) ---- */

/* Makes code the sticky error with the message fmt, unless one is pending
 * (the first error is the one reported). Returns code. */
int db_fail(struct db *db, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* db_fail(db, PP_EDB, "what: <SQLite's message>"). */
int db_fail_sql(struct db *db, const char *what);
/* Sets db_errmsg() to "what: <SQLite's message>" without making the error
 * sticky (for reads and for writers with their own transaction, which
 * roll back themselves). Returns PP_EDB. */
int db_note_sql_error(struct db *db, const char *what);
/* The same with a message of its own. Returns code. */
int db_note_error(struct db *db, int code, const char *msg);

/* ---- statements (db.c) ---- */

/* Statement id, prepared on the first call and kept; reset and with its
 * bindings cleared (callers bind only the values that are present; the
 * rest are NULL). NULL after a failed prepare (sticky error). */
struct sqlite3_stmt *db_stmt(struct db *db, enum db_stmt id);
/* The same with its old bindings in place, for statements whose every
 * parameter is bound on each use (kernel rows). */
struct sqlite3_stmt *db_stmt_rebound(struct db *db, enum db_stmt id);
/* db_stmt() when no error is pending; else NULL with *rc the pending error
 * (or PP_EDB when the statement cannot be prepared). */
struct sqlite3_stmt *db_stmt_ready(struct db *db, enum db_stmt id, int *rc);
/* Steps a statement that returns no row and resets it. 0, or PP_EDB with
 * "what: <SQLite's message>" as the sticky error. */
int db_step_done(struct db *db, struct sqlite3_stmt *s, const char *what);
/* Steps st (its bindings set by the caller), then resets it and clears
 * its bindings: 0 when it ran to its end, else db_note_sql_error(db, what)
 * (not sticky). For writers with their own transaction (db_agg.c,
 * db_why.c). */
int db_step_reset(struct db *db, struct sqlite3_stmt *st, const char *what);
/* Binds v[0..n) to the columns col, col+1, … of s; where have is given, a
 * value whose have[i] is false stays NULL. */
void db_bind_i64s(struct sqlite3_stmt *s, int col, const int64_t *v, const bool *have, int n);
/* Binds text v (static for the statement's use) to column i; NULL stays
 * NULL. */
void db_bind_text(struct sqlite3_stmt *s, int i, const char *v);
/* Binds v (a time in ns) to column i rounded to the nearest integer; a
 * value that is not finite, or beyond an int64_t, stays NULL. */
void db_bind_ns(struct sqlite3_stmt *s, int i, double v);

/* One value of a row to bind (db_bind_vals(), db_writer_put()): NULL, an
 * integer, a real or a text (static for the statement's use). Made by the
 * functions below, which say when a value is NULL. */
struct db_val {
	enum { DB_VAL_NULL, DB_VAL_INT, DB_VAL_REAL, DB_VAL_TEXT } kind;
	int64_t i;
	double r;
	const char *s;
};
static inline struct db_val db_int(int64_t v)
{
	return (struct db_val){ .kind = DB_VAL_INT, .i = v };
}
/* v, or NULL when have is false. */
static inline struct db_val db_int_if(bool have, int64_t v)
{
	return (struct db_val){ .kind = have ? DB_VAL_INT : DB_VAL_NULL, .i = v };
}
/* v as it is (SQLite stores a NaN as NULL, an infinity as such). */
static inline struct db_val db_double(double v)
{
	return (struct db_val){ .kind = DB_VAL_REAL, .r = v };
}
/* v, or NULL when v is not finite. */
struct db_val db_real(double v);
/* v (ns) rounded, or NULL when not finite or beyond an int64_t
 * (db_bind_ns()). */
struct db_val db_ns(double v);
/* v, or NULL when v is NULL. */
static inline struct db_val db_text(const char *v)
{
	return (struct db_val){ .kind = v ? DB_VAL_TEXT : DB_VAL_NULL, .s = v };
}
/* Binds v[0..n) to the columns col, col+1, … of s. */
void db_bind_vals(struct sqlite3_stmt *s, int col, const struct db_val *v, int n);

/* Runs sql (statements without parameters) on c; on failure appends
 * SQLite's message to err and returns PP_EDB. (schema.c) */
int db_exec(struct sqlite3 *c, const char *sql, struct strbuf *err);

/* Deletes every trace whose path starts with prefix (which ends in '#':
 * an import's traces) with all their rows; *n counts them. Inside a
 * transaction; 0 or PP_EDB (sticky). (db_trace.c) */
int db_delete_traces_under(struct db *db, const char *prefix, int64_t *n);

/* ---- transactions (db.c) ---- */

/* BEGIN IMMEDIATE: waits for other writers up to the busy timeout. 0, the
 * pending error, or PP_EDB (sticky). */
int db_begin(struct db *db);
/* COMMIT, unless an error is pending. When one is, or the commit fails,
 * rolls back (db_trace_rollback()) and returns the error, whose message
 * db_errmsg() still gives. 0 on success. */
int db_commit(struct db *db);
/* db_trace_rollback() (db.h) is db.c's too: it ends whichever transaction
 * is open (a trace's, a bulk import's, an adoption's), drops the caches'
 * ids and the buffered rows, and clears the error. */

/* ---- the analyses' writer (db_write.c) ---- */

/* What a module writes: its statements (its enum's order), of which
 * sql[clear_from..clear_to) are the deletes run after BEGIN (none when
 * equal), and what it writes for messages ("cannot commit <what>: …"). */
struct db_write_table {
	const char *const *sql;
	int n, clear_from, clear_to;
	const char *what;
};

/* A transaction of the analysis tables' rows. Modules embed it as the
 * first member of their writer (struct db_agg_writer, …), so a pointer to
 * theirs converts to one to it, NULL included. */
struct db_writer {
	struct db *db;
	const struct db_write_table *t;
	struct sqlite3_stmt **st; /* t->sql's, then COMMIT and ROLLBACK */
	bool open;                /* the transaction is ours and open */
};

/* Allocates size bytes (zeroed; a struct db_writer first), prepares t's
 * statements, begins an IMMEDIATE transaction and runs t's deletes.
 * NULL on failure, with db_errmsg() (not sticky) and nothing left open. */
void *db_writer_new(struct db *db, const struct db_write_table *t, size_t size);
/* Steps statement i (its bindings set by the caller) and resets it; 0 or
 * PP_EDB with "what: <SQLite's message>" (not sticky). */
int db_writer_run(struct db_writer *w, int i, const char *what);
/* Binds v[0..n) from ?1 on to statement i and runs it (db_writer_run()). */
int db_writer_put(struct db_writer *w, int i, const struct db_val *v, int n, const char *what);
/* Binds v[0..n) from ?1 on to statement i, those whose have[k] is false as
 * NULL (db_bind_i64s()), and runs it (db_writer_run()). */
int db_writer_put_i64s(struct db_writer *w, int i, const int64_t *v, const bool *have, int n,
		       const char *what);
/* The two above for a row that is the array v (not a pointer), its length
 * the number of values. */
#define DB_WRITER_PUT(w, i, v, what) \
	db_writer_put((w), (i), (v), (int)(sizeof(v) / sizeof((v)[0])), (what))
#define DB_WRITER_PUT_I64S(w, i, v, have, what) \
	db_writer_put_i64s((w), (i), (v), (have), (int)(sizeof(v) / sizeof((v)[0])), (what))
/* Ends w and frees it (what db_writer_new() allocated): commits when rc is
 * 0, else (or when the commit fails) rolls back. Returns rc, or the
 * commit's PP_EDB. */
int db_writer_end(struct db_writer *w, int rc);
/* Rolls back what the writer began and frees it; NULL is a no-op. */
void db_writer_rollback(struct db_writer *w);

/* ---- reads (db_read.c) ---- */

/* A read's statement, or NULL after db_note_sql_error(db, what) (not
 * sticky). sql is constant text: every call passes one (docs/security.md,
 * "SQL only with bound values"; its checker follows the calls). */
struct sqlite3_stmt *db_read_prepare(struct db *db, const char *sql, const char *what);
/* Steps st (its parameters bound by the caller) to its end, handing each
 * row to row(st, ctx) until one returns non-zero, and finalizes it: 0, the
 * callback's value, or PP_EDB after db_note_sql_error(db, what). A NULL st
 * (a failed db_read_prepare()) is PP_EDB, its error noted already. */
int db_read_rows(struct db *db, struct sqlite3_stmt *st,
		 int (*row)(struct sqlite3_stmt *st, void *ctx), void *ctx, const char *what);
/* The same, leaving st to the caller (not finalized; a statement kept for
 * the next read). A NULL st is PP_EDB, its error noted already. */
int db_read_each(struct db *db, struct sqlite3_stmt *st,
		 int (*row)(struct sqlite3_stmt *st, void *ctx), void *ctx, const char *what);

#endif
