/* db_runs.c — the run log of the pptrace database (db.h: the runs table,
 * one row per ppbatch run) and what a run reads back of the traces: the
 * stored list (for the skip check) and the adoption of legacy rows.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <time.h>

#include "db.h"
#include "db_int.h"
#include "util/pp.h"

int db_trace_each(struct db *db, void (*fn)(void *ctx, const struct db_stored *s), void *ctx)
{
	sqlite3_stmt *s = db_stmt(db, S_EACH);
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
	return rc == SQLITE_DONE ? 0 : db_fail_sql(db, "cannot list traces");
}

/* The adoption is a transaction of the trace write's kind, without rows
 * to buffer: db_close() rolls it back, db_trace_commit() ends it. */
int db_adopt_begin(struct db *db)
{
	int rc = db_begin(db);
	if (rc)
		return rc;
	db->in_txn = true;
	db->nkrow = 0;
	return 0;
}

int db_trace_adopt(struct db *db, const char *old_path, const struct db_trace *t)
{
	int rc;
	sqlite3_stmt *s = db_stmt_ready(db, S_ADOPT, &rc);
	if (!s)
		return rc;
	db_bind_text(s, 1, old_path);
	db_bind_text(s, 2, t->path);
	db_bind_text(s, 3, t->file);
	if (t->has_name_rank)
		sqlite3_bind_int64(s, 4, t->name_rank);
	return db_step_done(db, s, "cannot adopt a stored trace");
}

int db_adopt_commit(struct db *db)
{
	return db_trace_commit(db);
}

int db_run_begin(struct db *db, const struct db_run *r, int64_t *id)
{
	int rc;
	sqlite3_stmt *s = db_stmt_ready(db, S_RUN_BEGIN, &rc);
	if (!s)
		return rc;
	sqlite3_bind_int64(s, 1, (int64_t)time(NULL));
	db_bind_text(s, 2, r->host);
	db_bind_text(s, 3, r->input);
	db_bind_text(s, 4, r->db);
	db_bind_text(s, 5, r->shard);
	sqlite3_bind_int(s, 6, r->processes);
	if (db_step_done(db, s, "cannot record run")) {
		db->err_code = 0; /* not in a transaction: nothing to undo */
		return PP_EDB;
	}
	*id = sqlite3_last_insert_rowid(db->conn);
	return 0;
}

int db_run_finish(struct db *db, int64_t id, const struct db_run *r)
{
	int rc;
	sqlite3_stmt *s = db_stmt_ready(db, S_RUN_FINISH, &rc);
	if (!s)
		return rc;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, (int64_t)time(NULL));
	db_bind_text(s, 3, r->state);
	const int64_t v[] = { r->files, r->ok, r->partial, r->failed, r->skipped, r->bytes };
	db_bind_i64s(s, 4, v, NULL, 6);
	sqlite3_bind_double(s, 10, r->seconds);
	db_bind_text(s, 11, r->failures);
	if (db_step_done(db, s, "cannot record run")) {
		db->err_code = 0;
		return PP_EDB;
	}
	return 0;
}
