/* db_import.c — an import's own rows and ppagg's reads of them (db_import.h).
 *
 * The statements are prepared per call: an import writes a few rows per
 * trace, ppagg reads them once per iteration.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db_import.h"
#include "db_int.h"
#include "util/pp.h"
#include "util/strbuf.h"

/* Prepares sql into *st; on failure the error is sticky. */
static int prepare(struct db *db, const char *sql, sqlite3_stmt **st, const char *what)
{
	if (db->err_code)
		return db->err_code;
	if (sqlite3_prepare_v2(db->conn, sql, -1, st, NULL) != SQLITE_OK) {
		*st = NULL;
		return db_fail_sql(db, what);
	}
	return 0;
}

/* Steps a prepared write and finalizes it. */
static int run_write(struct db *db, sqlite3_stmt *st, const char *what)
{
	int rc = db_step_done(db, st, what);
	sqlite3_finalize(st);
	return rc;
}

/* Binds v to column i, NULL when v <= 0 (a size the import does not know). */
static void bind_size(sqlite3_stmt *st, int i, int v)
{
	if (v > 0)
		sqlite3_bind_int(st, i, v);
}

/* The rows of an import's tables whose path is in [?1, ?2). */
enum { DEL_READINGS, DEL_WGRAD };
static const char *const delete_sql[] = {
	[DEL_READINGS] = "DELETE FROM reading_t WHERE path >= ?1 AND path < ?2",
	[DEL_WGRAD] = "DELETE FROM wgrad_t WHERE path >= ?1 AND path < ?2",
};

/* Deletes the rows of table (DEL_*) whose path starts with prefix (ending
 * in '#'). */
static int delete_under(struct db *db, int table, const char *prefix)
{
	sqlite3_stmt *st;
	char *hi = xstrdup(prefix);
	hi[strlen(hi) - 1]++;
	int rc = prepare(db, delete_sql[table], &st, "cannot delete an import's rows");
	if (!rc) {
		db_bind_text(st, 1, prefix);
		db_bind_text(st, 2, hi);
		rc = run_write(db, st, "cannot delete an import's rows");
	}
	free(hi);
	return rc;
}

static int insert_import(struct db *db, const struct db_import *imp)
{
	sqlite3_stmt *st;
	int rc = prepare(db,
			 "INSERT OR REPLACE INTO import_t(path, format, imported_at, pp_size,"
			 " vpp_size, dp_size, tp_size, ep_size, world_size, microbatches,"
			 " iterations, num_layers) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
			 &st, "cannot record the import");
	if (rc)
		return rc;
	const int v[] = { imp->pp_size,      imp->vpp_size,   imp->dp_size,
			  imp->tp_size,      imp->ep_size,    imp->world_size,
			  imp->microbatches, imp->iterations, imp->num_layers };
	db_bind_text(st, 1, imp->path);
	db_bind_text(st, 2, imp->format);
	sqlite3_bind_int64(st, 3, (int64_t)time(NULL));
	for (int i = 0; i < 9; i++)
		bind_size(st, 4 + i, v[i]);
	return run_write(db, st, "cannot record the import");
}

int db_import_record(struct db *db, const struct db_import *imp, bool own_traces, int64_t *removed)
{
	int rc;
	*removed = 0;
	if (db->err_code)
		return db->err_code;
	if (!own_traces) {
		bool own_txn = !db->in_txn && !db->bulk;
		if (own_txn && (rc = db_begin(db)))
			return rc;
		rc = insert_import(db, imp);
		return own_txn ? db_commit(db) : rc;
	}
	if (!db->bulk || db->in_txn)
		return db_fail(db, PP_EINVAL,
			       "an import that owns its traces needs a bulk "
			       "transaction");
	struct strbuf prefix = STRBUF_INIT;
	strbuf_addf(&prefix, "%s#", imp->path);
	rc = db_delete_traces_under(db, prefix.buf, removed);
	if (!rc)
		rc = delete_under(db, DEL_READINGS, prefix.buf);
	if (!rc)
		rc = delete_under(db, DEL_WGRAD, prefix.buf);
	if (!rc)
		rc = insert_import(db, imp);
	strbuf_release(&prefix);
	return rc;
}

int db_reading_add(struct db *db, const struct db_reading *r)
{
	sqlite3_stmt *st;
	int rc = prepare(db,
			 "INSERT OR REPLACE INTO reading_t(path, stage, total_ns, memory_gib)"
			 " VALUES(?1,?2,?3,?4)",
			 &st, "cannot store a reading");
	if (rc)
		return rc;
	db_bind_text(st, 1, r->path);
	sqlite3_bind_int(st, 2, r->stage);
	if (r->has_total)
		sqlite3_bind_int64(st, 3, r->total_ns);
	if (r->has_memory)
		db_bind_real(st, 4, r->memory_gib);
	return run_write(db, st, "cannot store a reading");
}

int db_wgrad_clear(struct db *db, const char *path)
{
	sqlite3_stmt *st;
	int rc = prepare(db, "DELETE FROM wgrad_t WHERE path = ?1", &st,
			 "cannot delete weight-gradient calls");
	if (rc)
		return rc;
	db_bind_text(st, 1, path);
	return run_write(db, st, "cannot delete weight-gradient calls");
}

int db_wgrad_add(struct db *db, const struct db_wgrad *w)
{
	sqlite3_stmt *st;
	int rc = prepare(db,
			 "INSERT INTO wgrad_t(path, seq, chunk, mbs, start_ns, end_ns)"
			 " VALUES(?1,?2,?3,?4,?5,?6)",
			 &st, "cannot store a weight-gradient call");
	if (rc)
		return rc;
	db_bind_text(st, 1, w->path);
	sqlite3_bind_int64(st, 2, w->seq);
	if (w->chunk >= 0)
		sqlite3_bind_int(st, 3, w->chunk);
	if (w->mb >= 0)
		sqlite3_bind_int(st, 4, w->mb);
	sqlite3_bind_int64(st, 5, w->start_ns);
	sqlite3_bind_int64(st, 6, w->end_ns);
	return run_write(db, st, "cannot store a weight-gradient call");
}

/* ---- reads ---- */

/* Prepares a read (not sticky on failure). */
static int prepare_read(struct db *db, const char *sql, sqlite3_stmt **st, const char *what)
{
	if (sqlite3_prepare_v2(db->conn, sql, -1, st, NULL) != SQLITE_OK) {
		*st = NULL;
		return db_note_sql_error(db, what);
	}
	return 0;
}

/* Finalizes st after its loop: 0 when it ran to its end (s), the
 * callback's rc, or PP_EDB. */
static int end_read(struct db *db, sqlite3_stmt *st, int s, int rc, const char *what)
{
	if (!rc && s != SQLITE_DONE)
		rc = db_note_sql_error(db, what);
	sqlite3_finalize(st);
	return rc;
}

int db_import_latest(struct db *db, struct db_import_info *out, int *found)
{
	static const char what[] = "cannot read the imports";
	sqlite3_stmt *st;
	memset(out, 0, sizeof(*out));
	*found = 0;
	int rc = prepare_read(db,
			      "SELECT format, pp_size, vpp_size, dp_size, tp_size, ep_size,"
			      " world_size, microbatches, iterations, num_layers FROM import_t"
			      " ORDER BY imported_at DESC, id DESC LIMIT 1",
			      &st, what);
	if (rc)
		return rc;
	int s = sqlite3_step(st);
	if (s == SQLITE_ROW) {
		int *v[] = { &out->pp_size,      &out->vpp_size,   &out->dp_size,
			     &out->tp_size,      &out->ep_size,    &out->world_size,
			     &out->microbatches, &out->iterations, &out->num_layers };
		const char *f = (const char *)sqlite3_column_text(st, 0);
		snprintf(out->format, sizeof(out->format), "%s", f ? f : "");
		for (int i = 0; i < 9; i++)
			*v[i] = sqlite3_column_int(st, 1 + i);
		*found = 1;
		s = sqlite3_step(st);
	}
	return end_read(db, st, s, 0, what);
}

int db_import_stages(struct db *db, int (*fn)(void *ctx, int stage, int64_t rank), void *ctx)
{
	static const char what[] = "cannot read the readings' stages";
	sqlite3_stmt *st;
	int rc = prepare_read(db,
			      "SELECT DISTINCT r.stage, t.rank FROM reading_t r"
			      " JOIN traces t ON t.path = r.path WHERE t.rank IS NOT NULL"
			      " ORDER BY 1, 2",
			      &st, what);
	if (rc)
		return rc;
	int s;
	while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
		rc = fn(ctx, sqlite3_column_int(st, 0), sqlite3_column_int64(st, 1));
	return end_read(db, st, s, rc, what);
}

int db_import_readings(struct db *db, int64_t iteration,
		       int (*fn)(void *ctx, const struct db_agg_reading *r), void *ctx)
{
	static const char what[] = "cannot read the readings";
	sqlite3_stmt *st;
	int rc = prepare_read(db,
			      "SELECT t.rank, r.stage, r.total_ns, r.memory_gib FROM reading_t r"
			      " JOIN traces t ON t.path = r.path"
			      " WHERE t.iteration = ?1 AND t.rank IS NOT NULL ORDER BY 2, 1",
			      &st, what);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, iteration);
	int s;
	while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_agg_reading r = {
			.rank = sqlite3_column_int64(st, 0),
			.stage = sqlite3_column_int(st, 1),
			.has_total = sqlite3_column_type(st, 2) != SQLITE_NULL,
			.total_ns = sqlite3_column_int64(st, 2),
			.has_memory = sqlite3_column_type(st, 3) != SQLITE_NULL,
			.memory_gib = sqlite3_column_double(st, 3),
		};
		rc = fn(ctx, &r);
	}
	return end_read(db, st, s, rc, what);
}

int db_import_wgrads(struct db *db, int64_t iteration,
		     int (*fn)(void *ctx, const struct db_agg_wgrad *w), void *ctx)
{
	static const char what[] = "cannot read the weight-gradient calls";
	sqlite3_stmt *st;
	int rc =
		prepare_read(db,
			     "SELECT t.rank, w.seq, coalesce(w.chunk, -1), coalesce(w.mbs, -1),"
			     " w.start_ns, w.end_ns FROM wgrad_t w JOIN traces t ON t.path = w.path"
			     " WHERE t.iteration = ?1 AND t.rank IS NOT NULL ORDER BY 1, 2",
			     &st, what);
	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, iteration);
	int s;
	while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_agg_wgrad w = {
			.rank = sqlite3_column_int64(st, 0),
			.seq = sqlite3_column_int64(st, 1),
			.chunk = sqlite3_column_int(st, 2),
			.mb = sqlite3_column_int(st, 3),
			.start_ns = sqlite3_column_int64(st, 4),
			.end_ns = sqlite3_column_int64(st, 5),
		};
		rc = fn(ctx, &w);
	}
	return end_read(db, st, s, rc, what);
}
