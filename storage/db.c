/* db.c — the connection of a struct db (db.h, db_int.h): open (pragmas,
 * schema), close, checkpoints, the prepared statements it keeps,
 * transactions and the sticky error state. The trace write is db_trace.c's,
 * the run log and adoption db_runs.c's.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "db_int.h"
#include "krows.h"
#include "util/pp.h"
#include "util/strbuf.h"

/* A batch of ops (db_trace.c): OBATCH rows of OCOLS values. */
#define OROW "(?,?,?,?,?,?,?,?,?)"
#define OROW4 OROW "," OROW "," OROW "," OROW
#define OROW16 OROW4 "," OROW4 "," OROW4 "," OROW4
_Static_assert(OBATCH == 32 && OCOLS == 9, "S_INS_OPS inserts 2 x OROW16");
_Static_assert(OBATCH *OCOLS <= 999, "SQLite's smallest parameter limit");

/* The SQL of enum db_stmt, in its order: grouped by the file that runs it. */
static const char *const stmt_sql[] = {
	/* transactions */
	"BEGIN IMMEDIATE",
	"COMMIT",
	"ROLLBACK",
	/* db_trace.c */
	"SELECT id FROM traces WHERE path = ?1",
	"DELETE FROM kernel_t WHERE rowid >= (?1 << 32) "
	"AND rowid < ((?1 + 1) << 32)",
	"DELETE FROM step_t WHERE trace_id = ?1",
	"DELETE FROM category_t WHERE trace_id = ?1",
	"DELETE FROM annotation_t WHERE trace_id = ?1",
	"DELETE FROM traces WHERE id = ?1",
	/* rank: the header's claim, else the file name's, until
	 * db_resolve_ranks() decides with the iteration's other traces. */
	"INSERT INTO traces(path, folder, iteration, rank, bytes, mtime_ns,"
	" status, fail_kind, error, warnings, mode, window_start_ns,"
	" window_end_ns, gpu_busy_ns, idle_ns, bubble_ns, comp_busy_ns,"
	" comm_busy_ns, overlap_ns, coverage, events, kernels, fwd_thread,"
	" bwd_thread, role_rule, elapsed_ns, run_id, analysed_at, file,"
	" header_rank, name_rank)"
	" VALUES(?1,?2,?3,coalesce(?30,?31),?5,?6,?7,?8,?9,?10,?11,?12,?13,"
	"?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25,?26,?27,?28,?29,"
	"?30,?31)",
	"INSERT INTO step_t(trace_id, phase, seq, cpu_start_ns,"
	" cpu_end_ns, start_ns, end_ns, comp_ns, comm_ns,"
	" overlap_ns, kernels, chunk, mbs)"
	" VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
	"INSERT INTO category_t(trace_id, category, kernels,"
	" sum_ns, busy_ns) VALUES(?1,?2,?3,?4,?5)",
	"INSERT INTO annotation_t(trace_id, name_id, calls, kernels, gpu_ns,"
	" comp_ns, comm_ns, overlap_ns) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)",
	"SELECT id FROM names WHERE name = ?1",
	"INSERT INTO names(name) VALUES(?1)",
	"SELECT id FROM pgroups WHERE descr = ?1 AND ranks = ?2",
	"INSERT INTO pgroups(descr, ranks) VALUES(?1, ?2)",
	/* OR FAIL: no statement journal (ABORT would keep one to undo a
	 * half-done multi-row statement; any error rolls back the whole
	 * trace transaction anyway). */
	"INSERT OR FAIL INTO kernel_t(code, seq, name_id, stream,"
	" start, dur, correlation, pg_id) SELECT code, seq, name_id, stream,"
	" start, dur, correlation, pg_id FROM pp_krows(?1)",
	"INSERT OR FAIL INTO kernel_t(rowid, code, seq, name_id, stream,"
	" start, dur, correlation, pg_id) SELECT id, code, seq, name_id,"
	" stream, start, dur, correlation, pg_id FROM pp_krows(?1)",
	"SELECT max(rowid) FROM kernel_t",
	"DELETE FROM op_t WHERE rowid >= (?1 << 32) AND rowid < ((?1 + 1) << 32)",
	"DELETE FROM op_worker WHERE trace_id = ?1",
	"INSERT INTO op_t(rowid, optype, seq_id, mc, gmc, mb_id, start, dur, step_seq)"
	" VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)",
	"INSERT INTO op_t(rowid, optype, seq_id, mc, gmc, mb_id, start, dur, step_seq)"
	" VALUES " OROW16 "," OROW16,
	"INSERT INTO op_worker(trace_id, source_id, dp_rank, stage)"
	" VALUES(?1,?2,?3,?4)",
	/* The traces of an import: paths that start with ?1 ("FILE#"); ?2 is
	 * ?1 with its last byte incremented ("FILE$"). */
	"SELECT id FROM traces WHERE path >= ?1 AND path < ?2",
	"SELECT id FROM op_source WHERE path = ?1",
	"DELETE FROM op_source WHERE id = ?1",
	"INSERT INTO op_source(path, file, bytes, mtime_ns, imported_at,"
	" meta_path, schema_path, trial_name, run_id, dp_size, pp_size,"
	" tp_size, dsp_size, vpp_size, world_size, optype_order)"
	" VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)",
	/* db_runs.c */
	"SELECT path, bytes, mtime_ns, status, fail_kind, folder, file IS NULL"
	" FROM traces",
	"INSERT INTO runs(started_at, host, input, db, shard,"
	" processes, state) VALUES(?1,?2,?3,?4,?5,?6,'running')",
	"UPDATE runs SET finished_at = ?2, state = ?3,"
	" files = ?4, ok = ?5, partial = ?6, failed = ?7,"
	" skipped = ?8, bytes = ?9, seconds = ?10, failures = ?11"
	" WHERE id = ?1",
	"UPDATE traces SET path = ?2, file = ?3, name_rank = ?4"
	" WHERE path = ?1 AND file IS NULL",
};
_Static_assert(sizeof(stmt_sql) / sizeof(stmt_sql[0]) == S_COUNT, "one SQL text per statement id");

/* ---- errors ---- */

int db_fail(struct db *db, int code, const char *fmt, ...)
{
	if (!db->err_code) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(db->errmsg, sizeof(db->errmsg), fmt, ap);
		va_end(ap);
		db->err_code = code;
	}
	return code;
}

int db_fail_sql(struct db *db, const char *what)
{
	return db_fail(db, PP_EDB, "%s: %s", what, sqlite3_errmsg(db->conn));
}

int db_note_sql_error(struct db *db, const char *what)
{
	snprintf(db->errmsg, sizeof(db->errmsg), "%s: %s", what, sqlite3_errmsg(db->conn));
	return PP_EDB;
}

int db_note_error(struct db *db, int code, const char *msg)
{
	snprintf(db->errmsg, sizeof(db->errmsg), "%s", msg);
	return code;
}

const char *db_errmsg(const struct db *db)
{
	return db->errmsg;
}

/* ---- statements ---- */

sqlite3_stmt *db_stmt_rebound(struct db *db, enum db_stmt id)
{
	sqlite3_stmt *s = db->st[id];
	if (!s) {
		if (sqlite3_prepare_v3(db->conn, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &s,
				       NULL) != SQLITE_OK) {
			db_fail_sql(db, "cannot prepare statement");
			return NULL;
		}
		db->st[id] = s;
	} else {
		sqlite3_reset(s);
	}
	return s;
}

sqlite3_stmt *db_stmt(struct db *db, enum db_stmt id)
{
	sqlite3_stmt *s = db_stmt_rebound(db, id);
	if (s)
		sqlite3_clear_bindings(s);
	return s;
}

sqlite3_stmt *db_stmt_ready(struct db *db, enum db_stmt id, int *rc)
{
	sqlite3_stmt *s = NULL;
	if (!(*rc = db->err_code) && !(s = db_stmt(db, id)))
		*rc = PP_EDB;
	return s;
}

int db_step_done(struct db *db, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return db_fail_sql(db, what);
	return 0;
}

int db_step_reset(struct db *db, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : db_note_sql_error(db, what);
}

void db_bind_i64s(sqlite3_stmt *s, int col, const int64_t *v, const bool *have, int n)
{
	for (int i = 0; i < n; i++)
		if (!have || have[i])
			sqlite3_bind_int64(s, col + i, v[i]);
}

void db_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
}

void db_bind_ns(sqlite3_stmt *s, int i, double v)
{
	const struct db_val x = db_ns(v);
	db_bind_vals(s, i, &x, 1);
}

struct db_val db_real(double v)
{
	return (struct db_val){ .kind = isfinite(v) ? DB_VAL_REAL : DB_VAL_NULL, .r = v };
}

struct db_val db_ns(double v)
{
	if (!(isfinite(v) && fabs(v) < 0x1p63)) /* llround() of those is unspecified */
		return (struct db_val){ .kind = DB_VAL_NULL };
	return (struct db_val){ .kind = DB_VAL_INT, .i = llround(v) };
}

void db_bind_vals(sqlite3_stmt *s, int col, const struct db_val *v, int n)
{
	for (int i = 0; i < n; i++)
		if (v[i].kind == DB_VAL_INT)
			sqlite3_bind_int64(s, col + i, v[i].i);
		else if (v[i].kind == DB_VAL_REAL)
			sqlite3_bind_double(s, col + i, v[i].r);
		else if (v[i].kind == DB_VAL_TEXT)
			sqlite3_bind_text(s, col + i, v[i].s, -1, SQLITE_STATIC);
}

/* ---- transactions ---- */

int db_begin(struct db *db)
{
	if (db->err_code)
		return db->err_code;
	sqlite3_stmt *s = db_stmt(db, S_BEGIN);
	if (!s || db_step_done(db, s, "cannot start transaction"))
		return PP_EDB;
	return 0;
}

int db_commit(struct db *db)
{
	sqlite3_stmt *s;
	if (!db->err_code && (s = db_stmt(db, S_COMMIT)))
		db_step_done(db, s, "cannot commit");
	if (!db->err_code)
		return 0;
	/* The rollback clears the error: keep it for the caller. */
	int rc = db->err_code;
	char msg[sizeof(db->errmsg)];
	memcpy(msg, db->errmsg, sizeof(msg));
	db_trace_rollback(db);
	memcpy(db->errmsg, msg, sizeof(msg));
	return rc;
}

/* Frees the map's keys and slots: empty, as a new one. */
static void intern_clear(struct intern *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->used = 0;
}

void db_trace_rollback(struct db *db)
{
	/* Also when SQLite has ended the transaction itself (some errors
	 * do): the ids interned in it are gone either way. ROLLBACK's own
	 * failure is not reported: there may be no transaction left. */
	if (db->in_txn || !sqlite3_get_autocommit(db->conn)) {
		sqlite3_stmt *s = db_stmt(db, S_ROLLBACK);
		if (s) {
			sqlite3_step(s);
			sqlite3_reset(s);
		}
		intern_clear(&db->names);
		intern_clear(&db->pgroups);
	}
	db->in_txn = false;
	db->bulk = false;
	db->nkrow = 0;
	db->nop = 0;
	db->err_code = 0;
	db->errmsg[0] = '\0';
}

/* ---- open / close ---- */

/* Waits for another writer in 1 ms steps up to the busy timeout. SQLite's
 * own handler backs off to 100 ms sleeps, which leaves a worker idle long
 * after a short transaction of another worker has committed. */
static int busy_wait(void *ctx, int count)
{
	const struct db *db = ctx;
	if ((int64_t)count >= db->busy_timeout_ms)
		return 0;
	sqlite3_sleep(1);
	return 1;
}

static int exec_pragma(sqlite3 *c, const char *sql, struct strbuf *err)
{
	char *msg = NULL;
	int rc, tries = 0;
	/* Switching a database another process is just creating into WAL mode
	 * can fail with "database is locked" without SQLite's busy handler
	 * being asked (two ppbatch runs started at once on a new file, t0813):
	 * retry for up to a minute. */
	while ((rc = sqlite3_exec(c, sql, NULL, NULL, &msg)) == SQLITE_BUSY && tries++ < 60000) {
		sqlite3_free(msg);
		msg = NULL;
		sqlite3_sleep(1);
	}
	if (rc != SQLITE_OK) {
		pp_err(err, PP_EDB, "%s: %s", sql, msg ? msg : sqlite3_errmsg(c));
		sqlite3_free(msg);
		return PP_EDB;
	}
	return 0;
}

/* The database's size in pages: 0 for a file SQLite has not written. */
static int64_t page_count(sqlite3 *c)
{
	sqlite3_stmt *s;
	int64_t n = -1;
	if (sqlite3_prepare_v2(c, "PRAGMA page_count", -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

/* Why a database could not be opened, as ": reason" in why (or ""):
 * SQLite says "unable to open database file" for a missing folder, a
 * folder the user may not write, a folder at the path and more, and its
 * system errno is that of its last attempt (a read-only retry: "No such
 * file or directory" when the folder is only not writable). */
static void open_failure(const char *path, bool write, bool create, int sys_errno, char *why,
			 size_t len)
{
	struct stat st;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			snprintf(why, len, ": it is a folder");
		else if (access(path, write ? R_OK | W_OK : R_OK))
			snprintf(why, len, ": %s", strerror(errno));
		else
			snprintf(why, len, "%s%s", sys_errno ? ": " : "",
				 sys_errno ? strerror(sys_errno) : "");
		return;
	}
	if (errno != ENOENT) {
		snprintf(why, len, ": %s", strerror(errno));
		return;
	}
	struct strbuf dir = STRBUF_INIT;
	strbuf_add_folder(&dir, path);
	if (stat(dir.buf, &st))
		snprintf(why, len, ": folder '%s': %s", dir.buf, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		snprintf(why, len, ": '%s' is not a folder", dir.buf);
	else if (!create)
		snprintf(why, len, ": %s", strerror(ENOENT));
	else if (access(dir.buf, W_OK | X_OK))
		snprintf(why, len, ": cannot create a file in folder '%s': %s", dir.buf,
			 strerror(errno));
	else
		snprintf(why, len, "%s%s", sys_errno ? ": " : "",
			 sys_errno ? strerror(sys_errno) : "");
	strbuf_release(&dir);
}

/* A baseline to compare with (DB_ANY_VERSION) is read without a lock and
 * without the -wal and -shm files a read-only connection would otherwise
 * create beside it (a folder it must not change): "file:PATH?immutable=1",
 * PATH's %, ? and # escaped. Not when a -wal file holds transactions: they
 * are part of the file's content (a run still writing it), read the usual
 * way. Returns whether uri was made. */
static bool immutable_uri(const char *path, struct strbuf *uri)
{
	struct strbuf wal = STRBUF_INIT;
	struct stat st;
	strbuf_addf(&wal, "%s-wal", path);
	bool busy = !stat(wal.buf, &st) && st.st_size > 0;
	strbuf_release(&wal);
	if (busy)
		return false;
	strbuf_addstr(uri, "file:");
	for (const char *p = path; *p; p++)
		if (*p == '%' || *p == '?' || *p == '#')
			strbuf_addf(uri, "%%%02X", (unsigned char)*p);
		else
			strbuf_addch(uri, *p);
	strbuf_addstr(uri, "?immutable=1");
	return true;
}

/* Opens the connection of db at path and sets what the handle relies on:
 * no read-only file taken for a writable one, pp_krows, the checkpoint
 * policy of flags and the busy handler. 0, or PP_EDB with the message in
 * err. */
static int open_connection(struct db *db, const char *path, unsigned flags, struct strbuf *err)
{
	struct strbuf uri = STRBUF_INIT;
	int oflags = (flags & DB_READONLY)   ? SQLITE_OPEN_READONLY
		     : (flags & DB_EXISTING) ? SQLITE_OPEN_READWRITE
					     : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	/* pptrace never shares a connection between threads (the coordinator
	 * is one libuv loop, workers are processes): no per-call mutexes. */
	oflags |= SQLITE_OPEN_NOMUTEX;
	/* Memory statistics cost a global mutex per allocation; we never read
	 * them. Only possible before SQLite initialises: later calls fail
	 * harmlessly with SQLITE_MISUSE. */
	static bool configured;
	if (!configured) {
		sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
		configured = true;
	}
	if ((flags & DB_READONLY) && (flags & DB_ANY_VERSION) && immutable_uri(path, &uri))
		oflags |= SQLITE_OPEN_URI;
	int orc = sqlite3_open_v2(uri.len ? uri.buf : path, &db->conn, oflags, NULL);
	strbuf_release(&uri);
	if (orc != SQLITE_OK) {
		char why[PATH_MAX + 128];
		open_failure(path, !(oflags & SQLITE_OPEN_READONLY), oflags & SQLITE_OPEN_CREATE,
			     db->conn ? sqlite3_system_errno(db->conn) : 0, why, sizeof(why));
		pp_err(err, PP_EDB, "cannot open database '%s': %s%s", path,
		       db->conn ? sqlite3_errmsg(db->conn) : "out of memory", why);
		return PP_EDB;
	}
	/* A writer given a file it may only read (its mode, a read-only
	 * mount): SQLite opens it read-only, and the first read would leave
	 * -wal and -shm files with that read-only mode, which a chmod of the
	 * database does not give back, so the next run could not write
	 * either. Refused before that read. */
	if ((oflags & SQLITE_OPEN_CREATE) && sqlite3_db_readonly(db->conn, "main") == 1) {
		char why[PATH_MAX + 128];
		open_failure(path, true, true, 0, why, sizeof(why));
		pp_err(err, PP_EDB, "cannot write database '%s'%s", path,
		       why[0] ? why : ": it opens read-only");
		return PP_EDB;
	}
	if (krows_register(db->conn) != SQLITE_OK) {
		pp_err(err, PP_EDB, "cannot open database '%s': %s", path,
		       sqlite3_errmsg(db->conn));
		return PP_EDB;
	}
	db_auto_checkpoint(db, !(flags & DB_NO_CHECKPOINT));
	if (flags & DB_NO_CHECKPOINT)
		sqlite3_db_config(db->conn, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_busy_handler(db->conn, busy_wait, db);
	return 0;
}

/* The pragmas of a writer (fresh: SQLite has not written the file yet)
 * and of every connection. 0, or PP_EDB with the message appended to why. */
static int set_pragmas(sqlite3 *c, unsigned flags, bool fresh, struct strbuf *why)
{
	bool writer = !(flags & DB_READONLY);
	/* 64 KiB pages (only effective when the file is new, so before WAL
	 * mode writes the header): a worker writes its trace's kernels in one
	 * bulk transaction, and every page is a pwrite to the WAL and a pread
	 * plus pwrite at the checkpoint. 16x fewer system calls than 4 KiB
	 * pages, for a database ~3 % larger.
	 * A new database is created without a single sync: switching it to
	 * WAL is a rollback-journal transaction (four syncs) and the schema
	 * the WAL's first (two more), ~4 ms of a small run. Nothing is stored
	 * yet, and a crash meanwhile leaves a file that is empty, or lacks
	 * the schema, which the next open creates; synchronous returns to
	 * NORMAL before anything else is written (db_open()). */
	if (writer && (exec_pragma(c, "PRAGMA page_size = 65536", why) ||
		       (fresh ? exec_pragma(c, "PRAGMA synchronous = OFF", why)
			      : exec_pragma(c, "PRAGMA synchronous = NORMAL", why)) ||
		       exec_pragma(c, "PRAGMA journal_mode = WAL", why)))
		return PP_EDB;
	/* secure_delete (on in Debian's build) zeroes every deleted cell:
	 * replacing a re-analysed trace's kernels cost 10x more with it.
	 * Nothing in the database is secret (docs/security.md). */
	if (exec_pragma(c,
			"PRAGMA temp_store = MEMORY; "
			"PRAGMA cache_size = -8192; PRAGMA foreign_keys = OFF; "
			"PRAGMA secure_delete = OFF",
			why))
		return PP_EDB;
	/* A worker's trace is one transaction (~3 % of the trace's bytes in
	 * pages). Spilled mid-transaction, pages that change again (the
	 * b-tree's right edge) are rewritten in the WAL, and the commit then
	 * reads back every frame after the first rewritten one to redo the
	 * checksums: on a 1 GB trace 464 frames, 30 MB. Dirty pages stay in
	 * memory up to ~96 MiB (1535 pages) instead: 3 % of a trace is
	 * within a worker's budget of 64 MiB + 10 % of it
	 * (docs/reliability.md). Not 1536: SQLite also reads the number as a
	 * boolean, modulo 256, and 0 would turn spilling off altogether. */
	if ((flags & DB_NO_CHECKPOINT) && exec_pragma(c, "PRAGMA cache_spill = 1535", why))
		return PP_EDB;
	return 0;
}

/*   connect → pragmas → schema (created or migrated; checked when read-only)
 *   → a fresh file's synchronous back to NORMAL */
struct db *db_open(const char *path, unsigned flags, int busy_timeout_ms, struct strbuf *err)
{
	struct db *db = xcalloc(1, sizeof(*db));
	struct strbuf why = STRBUF_INIT; /* the callees' messages, after the path */
	db->readonly = flags & DB_READONLY;
	db->busy_timeout_ms = busy_timeout_ms > 0 ? busy_timeout_ms : 600000;
	if (open_connection(db, path, flags, err))
		goto out_fail;
	bool fresh = !db->readonly && page_count(db->conn) == 0;
	if (set_pragmas(db->conn, flags, fresh, &why)) {
		pp_err(err, PP_EDB, "cannot open database '%s': %s", path, why.buf);
		goto out_fail;
	}
	int rc = !db->readonly              ? schema_apply(db->conn, &why)
		 : (flags & DB_ANY_VERSION) ? schema_check_readable(db->conn, &why)
					    : schema_check(db->conn, &why);
	if (!rc && fresh)
		rc = exec_pragma(db->conn, "PRAGMA synchronous = NORMAL", &why);
	if (rc) {
		pp_err(err, PP_EDB, "database '%s': %s", path, why.buf);
		goto out_fail;
	}
	strbuf_release(&why);
	return db;

out_fail:
	strbuf_release(&why);
	sqlite3_close(db->conn);
	free(db);
	return NULL;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	if (db->in_txn)
		db_trace_rollback(db);
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(db->st[i]);
	for (int i = 0; i < DB_AGG_NSTMT; i++)
		sqlite3_finalize(db->agg_st[i]);
	sqlite3_close(db->conn);
	intern_clear(&db->names);
	intern_clear(&db->pgroups);
	free(db);
}

int db_checkpoint(struct db *db)
{
	int rc = sqlite3_wal_checkpoint_v2(db->conn, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	if (rc == SQLITE_OK || rc == SQLITE_BUSY)
		return 0;
	/* Not sticky: nothing stored is at risk, a later checkpoint (or the
	 * next open) catches up. */
	if (!db->err_code)
		snprintf(db->errmsg, sizeof(db->errmsg), "cannot checkpoint: %s",
			 sqlite3_errmsg(db->conn));
	return PP_EDB;
}

void db_auto_checkpoint(struct db *db, bool on)
{
	/* The threshold counts pages: 256 x 64 KiB keeps the WAL near 16 MiB
	 * (the default 1000 would let it reach 64 MiB). */
	sqlite3_wal_autocheckpoint(db->conn, on ? 256 : 0);
}

struct sqlite3 *db_sqlite(struct db *db)
{
	return db->conn;
}
