/* db.c — the write path of the pptrace database (see db.h).
 *
 * Invariants:
 * - in_txn is true between a successful db_trace_begin() and the matching
 *   commit/rollback; cur_trace is the trace's id and next_kidx the index of
 *   its next kernel (kernel rowid = cur_trace << 32 | next_kidx).
 * - err_code != 0 makes every writing call fail until rollback (sticky).
 * - The name/process-group caches map text to committed ids, plus ids added
 *   by the open transaction; a rollback clears them, since those ids vanish.
 * - bulk is true between db_bulk_begin() and db_bulk_commit(): the trace
 *   transactions inside it neither begin nor commit, so the whole import is
 *   one transaction; any failure rolls all of it back.
 * - Ops are buffered like kernels (nop rows, OBATCH per statement); their
 *   index within the trace is next_oidx.
 */
#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "db_int.h"
#include "krows.h"
#include "util/htab.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "util/utf8.h"

/* Open-addressing map from text to id. */
struct intern {
	struct intern_slot {
		char *key; /* NULL = empty */
		size_t len;
		uint64_t hash;
		int64_t id;
	} * slots;
	size_t cap, used; /* cap is a power of two */
};

enum stmt_id {
	S_BEGIN,
	S_COMMIT,
	S_ROLLBACK,
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
	S_EACH,
	S_RUN_BEGIN,
	S_RUN_FINISH,
	S_INS_KERNELS,
	S_INS_KERNELS_ID,
	S_MAX_KROW,
	S_ADOPT,
	S_DEL_OPS,
	S_DEL_OP_WORKER,
	S_INS_OP,
	S_INS_OPS,
	S_INS_OP_WORKER,
	S_TRACES_UNDER,
	S_FIND_SOURCE,
	S_DEL_SOURCE,
	S_INS_SOURCE,
	S_COUNT
};

/* Kernels are buffered and inserted KBATCH rows per statement, read by
 * the statement from the buffer itself (pp_krows, krows.h): one
 * sqlite3_step per batch and no sqlite3_bind_* per value. */
#define KBATCH 256
/* Ops likewise, with their rowid (op_t is only ever written by one trace
 * transaction at a time and rows are few per trace). */
#define OCOLS 9
#define OROW "(?,?,?,?,?,?,?,?,?)"
#define OROW4 OROW "," OROW "," OROW "," OROW
#define OROW16 OROW4 "," OROW4 "," OROW4 "," OROW4
#define OBATCH 32

/* In enum stmt_id order. */
static const char *const stmt_sql[S_COUNT] = {
	"BEGIN IMMEDIATE",
	"COMMIT",
	"ROLLBACK",
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
	"SELECT path, bytes, mtime_ns, status, fail_kind, folder, file IS NULL"
	" FROM traces",
	"INSERT INTO runs(started_at, host, input, db, shard,"
	" processes, state) VALUES(?1,?2,?3,?4,?5,?6,'running')",
	"UPDATE runs SET finished_at = ?2, state = ?3,"
	" files = ?4, ok = ?5, partial = ?6, failed = ?7,"
	" skipped = ?8, bytes = ?9, seconds = ?10, failures = ?11"
	" WHERE id = ?1",
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
	"UPDATE traces SET path = ?2, file = ?3, name_rank = ?4"
	" WHERE path = ?1 AND file IS NULL",
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
};

_Static_assert(sizeof(stmt_sql) / sizeof(stmt_sql[0]) == S_COUNT, "one SQL text per statement id");

struct db {
	sqlite3 *conn;
	int busy_timeout_ms;
	sqlite3_stmt *st[S_COUNT]; /* prepared on first use, then reused */
	bool readonly;
	bool in_txn;
	int64_t cur_trace;
	int64_t window_start_ns; /* of the open trace: kernel start base */
	uint64_t next_kidx;
	int err_code;
	char errmsg[512];
	struct intern names, pgroups;
	/* Kernel rows not yet inserted (< KBATCH); column c of row r is
	 * krow[r][c], NULL where bit c of knull[r] is set. */
	int64_t krow[KBATCH][KROWS_COLS];
	uint16_t knull[KBATCH];
	int nkrow;
	int kappend;                 /* the trace's rows are kernel_t's last: 1 yes, 0 no,
		      * -1 not known yet */
	int64_t orow[OBATCH][OCOLS]; /* op rows not yet inserted */
	int nop;
	uint64_t next_oidx;
	bool bulk; /* inside db_bulk_begin(): traces do not commit */
};
_Static_assert(OBATCH *OCOLS <= 999, "SQLite's smallest parameter limit");

/* ---- intern map ---- */

static void intern_clear(struct intern *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->used = 0;
}

static struct intern_slot *intern_find(struct intern *m, const char *s, size_t n, uint64_t h)
{
	if (!m->cap)
		return NULL;
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct intern_slot *sl = &m->slots[i];
		if (!sl->key)
			return sl;
		if (sl->hash == h && sl->len == n && !memcmp(sl->key, s, n))
			return sl;
	}
}

static void intern_put(struct intern *m, const char *s, size_t n, uint64_t h, int64_t id)
{
	if ((m->used + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 1024;
		struct intern_slot *ns = xcalloc(ncap, sizeof(*ns));
		for (size_t i = 0; i < m->cap; i++) {
			struct intern_slot *o = &m->slots[i];
			if (!o->key)
				continue;
			size_t j = o->hash & (ncap - 1);
			while (ns[j].key)
				j = (j + 1) & (ncap - 1);
			ns[j] = *o;
		}
		free(m->slots);
		m->slots = ns;
		m->cap = ncap;
	}
	struct intern_slot *sl = intern_find(m, s, n, h);
	sl->key = xstrndup(s, n);
	sl->len = n;
	sl->hash = h;
	sl->id = id;
	m->used++;
}

/* ---- errors and statements ---- */

__attribute__((format(printf, 3, 4))) static int fail(struct db *db, int code, const char *fmt, ...)
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

static int fail_sql(struct db *db, const char *what)
{
	return fail(db, PP_EDB, "%s: %s", what, sqlite3_errmsg(db->conn));
}

int db_note_sql_error(struct db *db, const char *what)
{
	snprintf(db->errmsg, sizeof(db->errmsg), "%s: %s", what, sqlite3_errmsg(db->conn));
	return PP_EDB;
}

int db_step_reset(struct db *db, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : db_note_sql_error(db, what);
}

int db_note_error(struct db *db, int code, const char *msg)
{
	snprintf(db->errmsg, sizeof(db->errmsg), "%s", msg);
	return code;
}

/* The prepared statement id, reset, its old bindings still in place. For
 * statements whose every parameter is bound on each use (kernel rows). */
static sqlite3_stmt *stmt_rebound(struct db *db, enum stmt_id id)
{
	sqlite3_stmt *s = db->st[id];
	if (!s) {
		if (sqlite3_prepare_v3(db->conn, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &s,
				       NULL) != SQLITE_OK) {
			fail_sql(db, "cannot prepare statement");
			return NULL;
		}
		db->st[id] = s;
	} else {
		sqlite3_reset(s);
	}
	return s;
}

/* The prepared statement id, reset and with its bindings cleared (callers
 * bind only the values that are present; the rest are NULL). */
static sqlite3_stmt *stmt(struct db *db, enum stmt_id id)
{
	sqlite3_stmt *s = stmt_rebound(db, id);
	if (s)
		sqlite3_clear_bindings(s);
	return s;
}

/* Steps a statement that returns no row. */
static int run(struct db *db, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return fail_sql(db, what);
	return 0;
}

void db_bind_i64s(sqlite3_stmt *s, int col, const int64_t *v, const bool *have, int n)
{
	for (int i = 0; i < n; i++)
		if (!have || have[i])
			sqlite3_bind_int64(s, col + i, v[i]);
}

/* 0 when a trace's transaction is open and no error is pending, else the
 * error (the pending one, or PP_EINVAL). */
static int in_trace(struct db *db)
{
	if (db->err_code)
		return db->err_code;
	return db->in_txn ? 0 : fail(db, PP_EINVAL, "no trace transaction is open");
}

/* Statement id, cleared, when no error is pending; else NULL with *rc the
 * pending error, or PP_EDB when the statement cannot be prepared. */
static sqlite3_stmt *ready_stmt(struct db *db, enum stmt_id id, int *rc)
{
	sqlite3_stmt *s = NULL;
	if (!(*rc = db->err_code) && !(s = stmt(db, id)))
		*rc = PP_EDB;
	return s;
}

/* The same for a statement of the open trace, ?1 bound to the trace; NULL
 * with *rc set also when no trace is open. */
static sqlite3_stmt *trace_stmt(struct db *db, enum stmt_id id, int *rc)
{
	sqlite3_stmt *s = (*rc = in_trace(db)) ? NULL : ready_stmt(db, id, rc);
	if (s)
		sqlite3_bind_int64(s, 1, db->cur_trace);
	return s;
}

static int run_simple(struct db *db, enum stmt_id id, int64_t arg, const char *what)
{
	sqlite3_stmt *s = stmt(db, id);
	if (!s)
		return PP_EDB;
	sqlite3_bind_int64(s, 1, arg);
	return run(db, s, what);
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
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

static int exec_pragma(sqlite3 *c, const char *sql, char *err, size_t errlen)
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
		snprintf(err, errlen, "%s: %s", sql, msg ? msg : sqlite3_errmsg(c));
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

struct db *db_open(const char *path, unsigned flags, int busy_timeout_ms, char *err, size_t errlen)
{
	struct db *db = xcalloc(1, sizeof(*db));
	struct strbuf uri = STRBUF_INIT;
	int oflags = (flags & DB_READONLY)   ? SQLITE_OPEN_READONLY
		     : (flags & DB_EXISTING) ? SQLITE_OPEN_READWRITE
					     : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	db->readonly = flags & DB_READONLY;
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
		snprintf(err, errlen, "cannot open database '%s': %s%s", path,
			 db->conn ? sqlite3_errmsg(db->conn) : "out of memory", why);
		goto out_fail;
	}
	/* A writer given a file it may only read (its mode, a read-only
	 * mount): SQLite opens it read-only, and the first read would leave
	 * -wal and -shm files with that read-only mode, which a chmod of the
	 * database does not give back, so the next run could not write
	 * either. Refused before that read. */
	if ((oflags & SQLITE_OPEN_CREATE) && sqlite3_db_readonly(db->conn, "main") == 1) {
		char why[PATH_MAX + 128];
		open_failure(path, true, true, 0, why, sizeof(why));
		snprintf(err, errlen, "cannot write database '%s'%s", path,
			 why[0] ? why : ": it opens read-only");
		goto out_fail;
	}
	if (krows_register(db->conn) != SQLITE_OK) {
		snprintf(err, errlen, "cannot open database '%s': %s", path,
			 sqlite3_errmsg(db->conn));
		goto out_fail;
	}
	db_auto_checkpoint(db, !(flags & DB_NO_CHECKPOINT));
	if (flags & DB_NO_CHECKPOINT)
		sqlite3_db_config(db->conn, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	db->busy_timeout_ms = busy_timeout_ms > 0 ? busy_timeout_ms : 600000;
	sqlite3_busy_handler(db->conn, busy_wait, db);
	char why[400];
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
	 * NORMAL before anything else is written. */
	bool fresh = !db->readonly && page_count(db->conn) == 0;
	if (!db->readonly &&
	    (exec_pragma(db->conn, "PRAGMA page_size = 65536", why, sizeof(why)) ||
	     (fresh ? exec_pragma(db->conn, "PRAGMA synchronous = OFF", why, sizeof(why))
		    : exec_pragma(db->conn, "PRAGMA synchronous = NORMAL", why, sizeof(why))) ||
	     exec_pragma(db->conn, "PRAGMA journal_mode = WAL", why, sizeof(why)))) {
		snprintf(err, errlen, "cannot open database '%s': %s", path, why);
		goto out_fail;
	}
	/* secure_delete (on in Debian's build) zeroes every deleted cell:
	 * replacing a re-analysed trace's kernels cost 10x more with it.
	 * Nothing in the database is secret (docs/security.md). */
	if (exec_pragma(db->conn,
			"PRAGMA temp_store = MEMORY; "
			"PRAGMA cache_size = -8192; PRAGMA foreign_keys = OFF; "
			"PRAGMA secure_delete = OFF",
			why, sizeof(why))) {
		snprintf(err, errlen, "cannot open database '%s': %s", path, why);
		goto out_fail;
	}
	/* A worker's trace is one transaction (~3 % of the trace's bytes in
	 * pages). Spilled mid-transaction, pages that change again (the
	 * b-tree's right edge) are rewritten in the WAL, and the commit then
	 * reads back every frame after the first rewritten one to redo the
	 * checksums: on a 1 GB trace 464 frames, 30 MB. Dirty pages stay in
	 * memory up to ~96 MiB (1535 pages) instead: 3 % of a trace is
	 * within a worker's budget of 64 MiB + 10 % of it
	 * (docs/reliability.md). Not 1536: SQLite also reads the number as a
	 * boolean, modulo 256, and 0 would turn spilling off altogether. */
	if ((flags & DB_NO_CHECKPOINT) &&
	    exec_pragma(db->conn, "PRAGMA cache_spill = 1535", why, sizeof(why))) {
		snprintf(err, errlen, "cannot open database '%s': %s", path, why);
		goto out_fail;
	}
	int rc = !db->readonly              ? schema_apply(db->conn, why, sizeof(why))
		 : (flags & DB_ANY_VERSION) ? schema_check_readable(db->conn, why, sizeof(why))
					    : schema_check(db->conn, why, sizeof(why));
	if (!rc && fresh)
		rc = exec_pragma(db->conn, "PRAGMA synchronous = NORMAL", why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "database '%s': %s", path, why);
		goto out_fail;
	}
	return db;

out_fail:
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

const char *db_errmsg(const struct db *db)
{
	return db->errmsg;
}

struct sqlite3 *db_sqlite(struct db *db)
{
	return db->conn;
}

/* ---- one trace ---- */

/* Deletes trace id and every row of it. */
static int delete_trace(struct db *db, int64_t id)
{
	if (run_simple(db, S_DEL_KERNELS, id, "cannot delete kernels") ||
	    run_simple(db, S_DEL_STEPS, id, "cannot delete steps") ||
	    run_simple(db, S_DEL_CATS, id, "cannot delete categories") ||
	    run_simple(db, S_DEL_ANNS, id, "cannot delete annotations") ||
	    run_simple(db, S_DEL_OPS, id, "cannot delete ops") ||
	    run_simple(db, S_DEL_OP_WORKER, id, "cannot delete ops") ||
	    run_simple(db, S_DEL_TRACE, id, "cannot delete trace"))
		return PP_EDB;
	return 0;
}

static int remove_trace(struct db *db, const char *path)
{
	sqlite3_stmt *s = stmt(db, S_FIND_TRACE);
	if (!s)
		return PP_EDB;
	bind_text(s, 1, path);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		sqlite3_reset(s);
		return 0;
	}
	if (rc != SQLITE_ROW) {
		sqlite3_reset(s);
		return fail_sql(db, "cannot look up trace");
	}
	int64_t id = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return delete_trace(db, id);
}

static int insert_trace(struct db *db, const struct db_trace *t)
{
	sqlite3_stmt *s = stmt(db, S_INS_TRACE);
	if (!s)
		return PP_EDB;
	const bool ok = t->status != DB_STATUS_FAILED;
	/* The integer columns, each NULL unless have. */
	const struct {
		int col;
		bool have;
		int64_t v;
	} num[] = {
		{ 3, t->has_iteration, t->iteration },
		{ 5, t->bytes >= 0, t->bytes },
		{ 6, true, t->mtime_ns },
		{ 7, true, t->status },
		{ 8, true, ok ? 0 : t->fail_kind },
		{ 11, ok, t->mode },
		{ 21, t->events != 0, t->events },
		{ 22, ok, t->kernels },
		{ 26, t->elapsed_ns != 0, t->elapsed_ns },
		{ 27, t->run_id != 0, t->run_id },
		{ 28, true, (int64_t)time(NULL) },
		{ 30, t->has_header_rank, t->header_rank },
		{ 31, t->has_name_rank, t->name_rank },
	};
	for (size_t i = 0; i < sizeof(num) / sizeof(num[0]); i++)
		if (num[i].have)
			sqlite3_bind_int64(s, num[i].col, num[i].v);
	const char *text[] = { t->path,       t->folder,     t->error,     t->warnings,
			       t->fwd_thread, t->bwd_thread, t->role_rule, t->file };
	const int text_col[] = { 1, 2, 9, 10, 23, 24, 25, 29 };
	for (int i = 0; i < 8; i++)
		bind_text(s, text_col[i], text[i]);
	if (t->has_metrics) {
		const int64_t m[] = { t->window_start_ns, t->window_end_ns, t->gpu_busy_ns,
				      t->idle_ns,         t->bubble_ns,     t->comp_busy_ns,
				      t->comm_busy_ns,    t->overlap_ns };
		db_bind_i64s(s, 12, m, NULL, 8);
		sqlite3_bind_double(s, 20, t->coverage);
	}
	if (run(db, s, "cannot insert trace"))
		return PP_EDB;
	db->cur_trace = sqlite3_last_insert_rowid(db->conn);
	return 0;
}

int db_trace_begin(struct db *db, const struct db_trace *t)
{
	if (db->err_code)
		return db->err_code;
	if (db->readonly)
		return fail(db, PP_EDB, "database is open read-only");
	if (db->in_txn)
		return fail(db, PP_EINVAL, "a trace transaction is already open");
	sqlite3_stmt *s = db->bulk ? NULL : stmt(db, S_BEGIN);
	if (!db->bulk && (!s || run(db, s, "cannot start transaction")))
		return PP_EDB;
	db->in_txn = true;
	db->next_kidx = 0;
	db->nkrow = 0;
	db->kappend = -1;
	db->next_oidx = 0;
	db->nop = 0;
	db->window_start_ns = t->has_metrics ? t->window_start_ns : 0;
	if (!t->path)
		return fail(db, PP_EINVAL, "trace without a path");
	if (remove_trace(db, t->path) || insert_trace(db, t))
		return PP_EDB;
	if (db->cur_trace <= 0 || db->cur_trace >= (INT64_C(1) << 30))
		return fail(db, PP_EDB, "trace id %lld out of range", (long long)db->cur_trace);
	return 0;
}

/* The id of text in table names/pgroups, inserting it when new. */
static int intern_id(struct db *db, struct intern *m, enum stmt_id find, enum stmt_id ins,
		     const char *a, size_t alen, const char *b, int64_t *id)
{
	/* Key: a, then (for pgroups) a unit separator and b. */
	char stackkey[512];
	size_t blen = b ? strlen(b) : 0;
	size_t klen = alen + (b ? 1 + blen : 0);
	char *key = klen < sizeof(stackkey) ? stackkey : xmalloc(klen + 1);
	struct strbuf fix = STRBUF_INIT, fixb = STRBUF_INIT;
	int rc = 0;
	memcpy(key, a, alen);
	if (b) {
		key[alen] = '\x1f';
		memcpy(key + alen + 1, b, blen);
	}
	uint64_t h = pp_hash_bytes(key, klen, 0);
	struct intern_slot *sl = intern_find(m, key, klen, h);
	if (sl && sl->key) {
		*id = sl->id;
		goto out;
	}
	/* Stored text is valid UTF-8 (utf8.h); the cache key stays raw. */
	if (!utf8_valid(a, alen)) {
		utf8_sanitize(&fix, a, alen);
		a = fix.buf;
		alen = fix.len;
	}
	if (b && !utf8_valid(b, blen)) {
		utf8_sanitize(&fixb, b, blen);
		b = fixb.buf;
		blen = fixb.len;
	}
	sqlite3_stmt *s = stmt(db, find);
	if (!s) {
		rc = PP_EDB;
		goto out;
	}
	sqlite3_bind_text(s, 1, a, (int)alen, SQLITE_STATIC);
	if (b)
		sqlite3_bind_text(s, 2, b, (int)blen, SQLITE_STATIC);
	int st = sqlite3_step(s);
	if (st == SQLITE_ROW) {
		*id = sqlite3_column_int64(s, 0);
		sqlite3_reset(s);
	} else if (st == SQLITE_DONE) {
		sqlite3_reset(s);
		if (!(s = stmt(db, ins))) {
			rc = PP_EDB;
			goto out;
		}
		sqlite3_bind_text(s, 1, a, (int)alen, SQLITE_STATIC);
		if (b)
			sqlite3_bind_text(s, 2, b, (int)blen, SQLITE_STATIC);
		if ((rc = run(db, s, "cannot intern name")))
			goto out;
		*id = sqlite3_last_insert_rowid(db->conn);
	} else {
		sqlite3_reset(s);
		rc = fail_sql(db, "cannot look up name");
		goto out;
	}
	intern_put(m, key, klen, h, *id);
out:
	if (key != stackkey)
		free(key);
	strbuf_release(&fix);
	strbuf_release(&fixb);
	return rc;
}

int db_intern_name(struct db *db, const char *name, size_t len, int64_t *id)
{
	if (db->err_code)
		return db->err_code;
	return intern_id(db, &db->names, S_FIND_NAME, S_INS_NAME, name, len, NULL, id);
}

/* Whether the open trace's rows so far are the last of kernel_t, so that
 * the next ones can be appended with SQLite's own rowids (max + 1). True
 * in every normal run (a new trace has the largest id); checked once per
 * trace, because rows of a deleted trace row could remain after a user's
 * hand-made DELETE. */
static int rows_are_last(struct db *db, int64_t first_rowid)
{
	sqlite3_stmt *s = stmt(db, S_MAX_KROW);
	if (!s)
		return -1;
	if (sqlite3_step(s) != SQLITE_ROW) {
		fail_sql(db, "cannot read kernel_t");
		sqlite3_reset(s);
		return -1;
	}
	int last = sqlite3_column_int64(s, 0) == first_rowid - 1;
	sqlite3_reset(s);
	return last;
}

/* Inserts the buffered kernel rows in one statement. After the trace's
 * first batch, while its rows are kernel_t's last, batches are appended
 * with rowid max + 1: no uniqueness seek, which an explicit rowid costs on
 * every row. Verified, so that a surprise is an error, never a wrong
 * rowid. */
static int flush_kernels(struct db *db)
{
	int n = db->nkrow;
	db->nkrow = 0;
	if (!n)
		return 0;
	bool first = !(db->krow[0][0] & ((INT64_C(1) << DB_KROW_SHIFT) - 1));
	if (!first && db->kappend < 0 && (db->kappend = rows_are_last(db, db->krow[0][0])) < 0)
		return PP_EDB;
	bool append = !first && db->kappend == 1;
	struct krows rows = { (const int64_t(*)[KROWS_COLS])db->krow, db->knull, n };
	sqlite3_stmt *s = stmt_rebound(db, append ? S_INS_KERNELS : S_INS_KERNELS_ID);
	if (!s)
		return PP_EDB;
	/* Unbound, pp_krows would yield no row: a silent loss. */
	if (krows_bind(s, 1, &rows) != SQLITE_OK)
		return fail_sql(db, "cannot insert kernels");
	if (run(db, s, "cannot insert kernels"))
		return PP_EDB;
	if (append && sqlite3_last_insert_rowid(db->conn) != db->krow[n - 1][0])
		return fail(db, PP_EDB, "kernel rows are not at the end of kernel_t");
	return 0;
}

int db_intern_pgroup(struct db *db, const char *desc, const char *ranks, int64_t *id)
{
	*id = 0;
	if (db->err_code)
		return db->err_code;
	if (!(desc && *desc) && !(ranks && *ranks))
		return 0;
	const char *d = desc ? desc : "";
	return intern_id(db, &db->pgroups, S_FIND_PG, S_INS_PG, d, strlen(d), ranks ? ranks : "",
			 id);
}

/* Appends kernel k's row to the batch (flushed when full); its phase and
 * seq are those of step st, or none when st is NULL. */
static inline int put_kernel(struct db *db, const struct rr_kernel *k, const struct rr_step *st,
			     int64_t name_id, int64_t pg_id)
{
	const int phase = st ? st->phase : RR_NOPHASE;
	int64_t *row = db->krow[db->nkrow];
	uint16_t nulls = 0;
	row[0] = (db->cur_trace << DB_KROW_SHIFT) | (int64_t)db->next_kidx;
	row[1] = DB_KCODE(k->category, k->type, k->recompute, phase, k->coll);
	row[2] = st ? st->seq : -1;
	nulls |= (phase < 0) << 2;
	row[3] = name_id;
	row[4] = k->stream;
	nulls |= (k->stream < 0) << 4;
	row[5] = k->start_ns - db->window_start_ns;
	row[6] = k->dur_ns;
	row[7] = k->correlation;
	nulls |= !k->has_correlation << 7;
	row[8] = pg_id;
	nulls |= !pg_id << 8;
	db->knull[db->nkrow++] = nulls;
	if (db->nkrow == KBATCH && flush_kernels(db))
		return PP_EDB;
	db->next_kidx++;
	return 0;
}

int db_trace_add_kernel(struct db *db, const struct db_kernel *dk)
{
	int64_t name_id, pg_id;
	int rc = in_trace(db);
	if (rc)
		return rc;
	if (db->next_kidx >= (UINT64_C(1) << DB_KROW_SHIFT))
		return fail(db, PP_EDB, "too many kernels in one trace");
	name_id = dk->name_id;
	if (!name_id &&
	    db_intern_name(db, dk->name ? dk->name : "", dk->name ? dk->name_len : 0, &name_id))
		return PP_EDB;
	if (db_intern_pgroup(db, dk->pg_desc, dk->pg_ranks, &pg_id))
		return PP_EDB;
	return put_kernel(db, dk->k, dk->step, name_id, pg_id);
}

int db_trace_add_kernels(struct db *db, const struct rr_kernel *k, size_t n,
			 const int64_t *name_ids, size_t nnames, const int64_t *pg_ids,
			 size_t ngroups, const struct rr_step *steps, size_t nsteps)
{
	int rc = in_trace(db);
	if (rc)
		return rc;
	if (n > (UINT64_C(1) << DB_KROW_SHIFT) - db->next_kidx)
		return fail(db, PP_EDB, "too many kernels in one trace");
	for (size_t i = 0; i < n; i++) {
		size_t name = k[i].name_id < nnames ? k[i].name_id : nnames;
		int64_t pg = k[i].pg >= 0 && (size_t)k[i].pg < ngroups ? pg_ids[k[i].pg] : 0;
		if (put_kernel(db, &k[i], rr_kernel_step(steps, nsteps, &k[i]), name_ids[name], pg))
			return PP_EDB;
	}
	return 0;
}

int db_trace_add_step(struct db *db, const struct db_step *p)
{
	int rc;
	sqlite3_stmt *s = trace_stmt(db, S_INS_STEP, &rc);
	if (!s)
		return rc;
	const bool times = p->kernels || p->has_times;
	const int64_t v[] = { DB_PHASE_CODE(p->phase),
			      p->seq,
			      p->cpu_start_ns,
			      p->cpu_end_ns,
			      p->start_ns,
			      p->end_ns,
			      p->comp_ns,
			      p->comm_ns,
			      p->overlap_ns,
			      p->kernels,
			      p->chunk,
			      p->mbs };
	const bool have[] = { true, true, p->has_cpu, p->has_cpu, times,         times,
			      true, true, true,       true,       p->chunk >= 0, p->mbs >= 0 };
	db_bind_i64s(s, 2, v, have, 12);
	return run(db, s, "cannot insert step");
}

int db_trace_add_category(struct db *db, const struct db_category *c)
{
	int rc;
	sqlite3_stmt *s = trace_stmt(db, S_INS_CAT, &rc);
	if (!s)
		return rc;
	const int64_t v[] = { c->category, c->kernels, c->sum_ns, c->busy_ns };
	db_bind_i64s(s, 2, v, NULL, 4);
	return run(db, s, "cannot insert category");
}

int db_trace_add_annotation(struct db *db, const struct db_annotation *a)
{
	int rc;
	sqlite3_stmt *s = trace_stmt(db, S_INS_ANN, &rc);
	if (!s)
		return rc;
	const int64_t v[] = { a->name_id, a->calls,   a->kernels,   a->gpu_ns,
			      a->comp_ns, a->comm_ns, a->overlap_ns };
	db_bind_i64s(s, 2, v, NULL, 7);
	return run(db, s, "cannot insert annotation");
}

/* Inserts the buffered op rows: a full batch in one statement, the rest
 * row by row. */
static int flush_ops(struct db *db)
{
	int n = db->nop, per = n == OBATCH ? OBATCH : 1;
	db->nop = 0;
	for (int r = 0; r < n; r += per) {
		sqlite3_stmt *s = stmt_rebound(db, per == OBATCH ? S_INS_OPS : S_INS_OP);
		if (!s)
			return PP_EDB;
		for (int k = 0; k < per; k++) {
			for (int c = 0; c < OCOLS - 1; c++)
				sqlite3_bind_int64(s, k * OCOLS + c + 1, db->orow[r + k][c]);
			if (db->orow[r + k][OCOLS - 1] >= 0) /* step_seq, else NULL */
				sqlite3_bind_int64(s, (k + 1) * OCOLS, db->orow[r + k][OCOLS - 1]);
			else
				sqlite3_bind_null(s, (k + 1) * OCOLS);
		}
		if (run(db, s, "cannot insert ops"))
			return PP_EDB;
	}
	return 0;
}

int db_trace_add_op(struct db *db, const struct db_op *op)
{
	int rc = in_trace(db);
	if (rc)
		return rc;
	if (db->next_oidx >= (UINT64_C(1) << DB_KROW_SHIFT))
		return fail(db, PP_EDB, "too many ops in one trace");
	int64_t *row = db->orow[db->nop++];
	row[0] = (db->cur_trace << DB_KROW_SHIFT) | (int64_t)db->next_oidx++;
	row[1] = op->optype;
	row[2] = op->seq_id;
	row[3] = op->mc;
	row[4] = op->gmc;
	row[5] = op->mb_id;
	row[6] = op->start_ns - db->window_start_ns;
	row[7] = op->end_ns - op->start_ns;
	row[8] = op->has_step ? op->step_seq : -1;
	return db->nop == OBATCH ? flush_ops(db) : 0;
}

int db_trace_set_worker(struct db *db, int64_t source_id, int dp_rank, int stage)
{
	int rc;
	sqlite3_stmt *s = trace_stmt(db, S_INS_OP_WORKER, &rc);
	if (!s)
		return rc;
	if (source_id > 0)
		sqlite3_bind_int64(s, 2, source_id);
	sqlite3_bind_int(s, 3, dp_rank);
	sqlite3_bind_int(s, 4, stage);
	return run(db, s, "cannot insert the ops' worker");
}

int db_bulk_begin(struct db *db)
{
	if (db->err_code)
		return db->err_code;
	if (db->in_txn || db->bulk)
		return fail(db, PP_EINVAL, "a transaction is already open");
	sqlite3_stmt *s = stmt(db, S_BEGIN);
	if (!s || run(db, s, "cannot start transaction"))
		return PP_EDB;
	db->bulk = true;
	return 0;
}

int db_bulk_commit(struct db *db)
{
	if (db->err_code || !db->bulk || db->in_txn) {
		int rc = db->err_code ? db->err_code : PP_EINVAL;
		char msg[sizeof(db->errmsg)];
		snprintf(msg, sizeof(msg), "%s",
			 db->err_code ? db->errmsg : "no bulk transaction to commit");
		db_trace_rollback(db);
		memcpy(db->errmsg, msg, sizeof(msg));
		return rc;
	}
	sqlite3_stmt *s = stmt(db, S_COMMIT);
	db->bulk = false;
	if (!s || run(db, s, "cannot commit")) {
		char msg[sizeof(db->errmsg)];
		memcpy(msg, db->errmsg, sizeof(msg));
		db_trace_rollback(db);
		memcpy(db->errmsg, msg, sizeof(msg));
		return PP_EDB;
	}
	return 0;
}

/* The id of the source at path, or 0; -1 on an error. */
static int64_t find_source(struct db *db, const char *path)
{
	sqlite3_stmt *s = stmt(db, S_FIND_SOURCE);
	if (!s)
		return -1;
	bind_text(s, 1, path);
	int rc = sqlite3_step(s);
	int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		fail_sql(db, "cannot look up an op-trace import");
		return -1;
	}
	return id;
}

/* Deletes every trace whose path starts with prefix; *n counts them. */
static int delete_traces_under(struct db *db, const char *prefix, int64_t *n)
{
	size_t len = strlen(prefix);
	char *hi = xstrdup(prefix);
	int64_t *ids = NULL;
	size_t nids = 0, cap = 0;
	int rc = 0;
	hi[len - 1]++; /* callers' prefixes end in '#': never 0xff */
	sqlite3_stmt *s = stmt(db, S_TRACES_UNDER);
	if (!s) {
		free(hi);
		return PP_EDB;
	}
	bind_text(s, 1, prefix);
	bind_text(s, 2, hi);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (nids == cap) {
			cap = cap ? 2 * cap : 256;
			ids = xrealloc(ids, cap * sizeof(*ids));
		}
		ids[nids++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_reset(s);
	free(hi);
	rc = rc == SQLITE_DONE ? 0 : fail_sql(db, "cannot list an import's traces");
	for (size_t i = 0; i < nids && !rc; i++)
		rc = delete_trace(db, ids[i]);
	free(ids);
	*n = (int64_t)nids;
	return rc;
}

int db_op_source_replace(struct db *db, const struct db_op_source *src, int64_t *id,
			 int64_t *removed)
{
	struct strbuf prefix = STRBUF_INIT;
	int rc = 0;
	*removed = 0;
	if (db->err_code)
		return db->err_code;
	if (!db->bulk || db->in_txn)
		return fail(db, PP_EINVAL, "an op-trace import needs a bulk transaction");
	strbuf_addf(&prefix, "%s#", src->path);
	int64_t old = find_source(db, src->path);
	if (old < 0 || delete_traces_under(db, prefix.buf, removed) ||
	    (old > 0 && run_simple(db, S_DEL_SOURCE, old, "cannot delete an op-trace import"))) {
		rc = PP_EDB;
		goto out;
	}
	sqlite3_stmt *s = stmt(db, S_INS_SOURCE);
	if (!s) {
		rc = PP_EDB;
		goto out;
	}
	bind_text(s, 1, src->path);
	bind_text(s, 2, src->file);
	sqlite3_bind_int64(s, 3, src->bytes);
	sqlite3_bind_int64(s, 4, src->mtime_ns);
	sqlite3_bind_int64(s, 5, (int64_t)time(NULL));
	bind_text(s, 6, src->meta_path);
	bind_text(s, 7, src->schema_path);
	if (src->has_meta) {
		const int64_t v[] = { src->run_id,   src->dp_size,  src->pp_size,   src->tp_size,
				      src->dsp_size, src->vpp_size, src->world_size };
		bind_text(s, 8, src->trial_name);
		for (int i = 0; i < 7; i++)
			sqlite3_bind_int64(s, 9 + i, v[i]);
	}
	bind_text(s, 16, src->optype_order);
	if ((rc = run(db, s, "cannot record an op-trace import")))
		goto out;
	*id = sqlite3_last_insert_rowid(db->conn);
out:
	strbuf_release(&prefix);
	return rc;
}

int db_trace_commit(struct db *db)
{
	if (!db->in_txn && !db->err_code)
		return fail(db, PP_EINVAL, "no trace transaction is open");
	if (db->err_code) {
		int rc = db->err_code;
		char msg[sizeof(db->errmsg)];
		memcpy(msg, db->errmsg, sizeof(msg));
		db_trace_rollback(db);
		/* Keep the first error visible to the caller. */
		memcpy(db->errmsg, msg, sizeof(msg));
		return rc;
	}
	sqlite3_stmt *s = NULL;
	if (flush_kernels(db) || flush_ops(db) ||
	    (!db->bulk && (!(s = stmt(db, S_COMMIT)) || run(db, s, "cannot commit")))) {
		char msg[sizeof(db->errmsg)];
		memcpy(msg, db->errmsg, sizeof(msg));
		db_trace_rollback(db);
		memcpy(db->errmsg, msg, sizeof(msg));
		return PP_EDB;
	}
	db->in_txn = false;
	return 0;
}

void db_trace_rollback(struct db *db)
{
	if (db->in_txn || !sqlite3_get_autocommit(db->conn)) {
		sqlite3_stmt *s = stmt(db, S_ROLLBACK);
		if (s) {
			sqlite3_step(s);
			sqlite3_reset(s);
		}
		/* Ids interned in the abandoned transaction are gone. */
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

int db_trace_store_empty(struct db *db, const struct db_trace *t)
{
	db_trace_begin(db, t); /* an error is sticky: commit reports it */
	return db_trace_commit(db);
}

int db_trace_each(struct db *db, void (*fn)(void *ctx, const struct db_stored *s), void *ctx)
{
	sqlite3_stmt *s = stmt(db, S_EACH);
	int rc;
	if (!s)
		return PP_EDB;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct db_stored row = {
			.path = (const char *)sqlite3_column_text(s, 0),
			.bytes = sqlite3_column_int64(s, 1),
			.mtime_ns = sqlite3_column_int64(s, 2),
			.status = sqlite3_column_int(s, 3),
			.fail_kind = sqlite3_column_int(s, 4),
			.folder = (const char *)sqlite3_column_text(s, 5),
			.legacy = sqlite3_column_int(s, 6) != 0,
		};
		fn(ctx, &row);
	}
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : fail_sql(db, "cannot list traces");
}

int db_adopt_begin(struct db *db)
{
	if (db->err_code)
		return db->err_code;
	sqlite3_stmt *s = stmt(db, S_BEGIN);
	if (!s || run(db, s, "cannot start transaction"))
		return PP_EDB;
	db->in_txn = true;
	db->nkrow = 0;
	return 0;
}

int db_trace_adopt(struct db *db, const char *old_path, const struct db_trace *t)
{
	int rc;
	sqlite3_stmt *s = ready_stmt(db, S_ADOPT, &rc);
	if (!s)
		return rc;
	bind_text(s, 1, old_path);
	bind_text(s, 2, t->path);
	bind_text(s, 3, t->file);
	if (t->has_name_rank)
		sqlite3_bind_int64(s, 4, t->name_rank);
	return run(db, s, "cannot adopt a stored trace");
}

int db_adopt_commit(struct db *db)
{
	return db_trace_commit(db);
}

int db_run_begin(struct db *db, const struct db_run *r, int64_t *id)
{
	int rc;
	sqlite3_stmt *s = ready_stmt(db, S_RUN_BEGIN, &rc);
	if (!s)
		return rc;
	sqlite3_bind_int64(s, 1, (int64_t)time(NULL));
	bind_text(s, 2, r->host);
	bind_text(s, 3, r->input);
	bind_text(s, 4, r->db);
	bind_text(s, 5, r->shard);
	sqlite3_bind_int(s, 6, r->processes);
	if (run(db, s, "cannot record run")) {
		db->err_code = 0; /* not in a transaction: nothing to undo */
		return PP_EDB;
	}
	*id = sqlite3_last_insert_rowid(db->conn);
	return 0;
}

int db_run_finish(struct db *db, int64_t id, const struct db_run *r)
{
	int rc;
	sqlite3_stmt *s = ready_stmt(db, S_RUN_FINISH, &rc);
	if (!s)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, (int64_t)time(NULL));
	bind_text(s, 3, r->state);
	const int64_t v[] = { r->files, r->ok, r->partial, r->failed, r->skipped, r->bytes };
	db_bind_i64s(s, 4, v, NULL, 6);
	sqlite3_bind_double(s, 10, r->seconds);
	bind_text(s, 11, r->failures);
	if (run(db, s, "cannot record run")) {
		db->err_code = 0;
		return PP_EDB;
	}
	return 0;
}
