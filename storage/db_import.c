/* db_import.c — an import's own rows and ppagg's reads of them (db_import.h).
 *
 * The statements are prepared per call: an import writes a few rows per
 * trace, ppagg reads them once per iteration.
 */
#include <math.h>
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

/* Runs the write stmt with v[0..n) bound from ?1 on (sticky on failure). */
static int write_row(struct db *db, const char *stmt, const struct db_val *v, int n,
		     const char *what)
{
	sqlite3_stmt *st;
	int rc = prepare(db, stmt, &st, what);
	if (rc)
		return rc;
	db_bind_vals(st, 1, v, n);
	rc = db_step_done(db, st, what);
	sqlite3_finalize(st);
	return rc;
}

/* v, or NULL when v <= 0 (a size the import does not know). */
static struct db_val size(int v)
{
	return db_int_if(v > 0, v);
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
	char *hi = xstrdup(prefix);
	hi[strlen(hi) - 1]++;
	const struct db_val v[] = { db_text(prefix), db_text(hi) };
	int rc = write_row(db, delete_sql[table], v, 2, "cannot delete an import's rows");
	free(hi);
	return rc;
}

static int insert_import(struct db *db, const struct db_import *imp)
{
	const struct db_val v[] = { db_text(imp->path),          db_text(imp->format),
				    db_int((int64_t)time(NULL)), size(imp->pp_size),
				    size(imp->vpp_size),         size(imp->dp_size),
				    size(imp->tp_size),          size(imp->ep_size),
				    size(imp->world_size),       size(imp->microbatches),
				    size(imp->iterations),       size(imp->num_layers) };
	return write_row(db,
			 "INSERT OR REPLACE INTO import_t(path, format, imported_at, pp_size,"
			 " vpp_size, dp_size, tp_size, ep_size, world_size, microbatches,"
			 " iterations, num_layers) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
			 v, 12, "cannot record the import");
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
	const struct db_val v[] = { db_text(r->path), db_int(r->stage),
				    db_int_if(r->has_total, r->total_ns),
				    db_real(r->has_memory ? r->memory_gib : NAN) };
	return write_row(db,
			 "INSERT OR REPLACE INTO reading_t(path, stage, total_ns, memory_gib)"
			 " VALUES(?1,?2,?3,?4)",
			 v, 4, "cannot store a reading");
}

int db_wgrad_clear(struct db *db, const char *path)
{
	const struct db_val v[] = { db_text(path) };
	return write_row(db, "DELETE FROM wgrad_t WHERE path = ?1", v, 1,
			 "cannot delete weight-gradient calls");
}

int db_wgrad_add(struct db *db, const struct db_wgrad *w)
{
	const struct db_val v[] = { db_text(w->path),
				    db_int(w->seq),
				    db_int_if(w->chunk >= 0, w->chunk),
				    db_int_if(w->mb >= 0, w->mb),
				    db_int(w->start_ns),
				    db_int(w->end_ns) };
	return write_row(db,
			 "INSERT INTO wgrad_t(path, seq, chunk, mbs, start_ns, end_ns)"
			 " VALUES(?1,?2,?3,?4,?5,?6)",
			 v, 6, "cannot store a weight-gradient call");
}

/* ---- reads ---- */

/* The one row of db_import_latest(). */
struct latest {
	struct db_import_info *out;
	int *found;
};

static int row_latest(sqlite3_stmt *st, void *arg)
{
	struct latest *l = arg;
	struct db_import_info *out = l->out;
	int *v[] = { &out->pp_size,      &out->vpp_size,   &out->dp_size,
		     &out->tp_size,      &out->ep_size,    &out->world_size,
		     &out->microbatches, &out->iterations, &out->num_layers };
	const char *f = (const char *)sqlite3_column_text(st, 0);
	snprintf(out->format, sizeof(out->format), "%s", f ? f : "");
	for (int i = 0; i < 9; i++)
		*v[i] = sqlite3_column_int(st, 1 + i);
	*l->found = 1;
	return 0;
}

int db_import_latest(struct db *db, struct db_import_info *out, int *found)
{
	static const char what[] = "cannot read the imports";
	struct latest l = { out, found };
	memset(out, 0, sizeof(*out));
	*found = 0;
	sqlite3_stmt *st =
		db_read_prepare(db,
				"SELECT format, pp_size, vpp_size, dp_size, tp_size, ep_size,"
				" world_size, microbatches, iterations, num_layers FROM import_t"
				" ORDER BY imported_at DESC, id DESC LIMIT 1",
				what);
	return db_read_rows(db, st, row_latest, &l, what);
}

/* The reads of db_import_stages(), _readings() and _wgrads(): ?1 the
 * iteration, where they have one. */
enum { R_STAGES, R_READINGS, R_WGRADS, R_COUNT };
static const char *const read_sql[R_COUNT] = {
	"SELECT DISTINCT r.stage, t.rank FROM reading_t r"
	" JOIN traces t ON t.path = r.path WHERE t.rank IS NOT NULL ORDER BY 1, 2",
	"SELECT t.rank, r.stage, r.total_ns, r.memory_gib FROM reading_t r"
	" JOIN traces t ON t.path = r.path"
	" WHERE t.iteration = ?1 AND t.rank IS NOT NULL ORDER BY 2, 1",
	"SELECT t.rank, w.seq, coalesce(w.chunk, -1), coalesce(w.mbs, -1),"
	" w.start_ns, w.end_ns FROM wgrad_t w JOIN traces t ON t.path = w.path"
	" WHERE t.iteration = ?1 AND t.rank IS NOT NULL ORDER BY 1, 2",
};
static const char *const read_what[R_COUNT] = {
	"cannot read the readings' stages",
	"cannot read the readings",
	"cannot read the weight-gradient calls",
};

/* The caller's callback of one kind of row, and its context. */
struct visit {
	void *ctx;
	union {
		int (*stage)(void *ctx, int stage, int64_t rank);
		int (*reading)(void *ctx, const struct db_agg_reading *r);
		int (*wgrad)(void *ctx, const struct db_agg_wgrad *w);
	} fn;
};

/* Runs read q (?1 = iteration, where it has one) and hands every row
 * to row() until one returns non-zero: 0, that value, or PP_EDB. */
static int read_rows(struct db *db, int q, int64_t iteration, int (*row)(sqlite3_stmt *st, void *v),
		     struct visit *v)
{
	sqlite3_stmt *st = db_read_prepare(db, read_sql[q], read_what[q]);
	if (st && sqlite3_bind_parameter_count(st))
		sqlite3_bind_int64(st, 1, iteration);
	return db_read_rows(db, st, row, v, read_what[q]);
}

static int row_stage(sqlite3_stmt *st, void *arg)
{
	const struct visit *v = arg;
	return v->fn.stage(v->ctx, sqlite3_column_int(st, 0), sqlite3_column_int64(st, 1));
}

static int row_reading(sqlite3_stmt *st, void *arg)
{
	const struct visit *v = arg;
	struct db_agg_reading r = {
		.rank = sqlite3_column_int64(st, 0),
		.stage = sqlite3_column_int(st, 1),
		.has_total = sqlite3_column_type(st, 2) != SQLITE_NULL,
		.total_ns = sqlite3_column_int64(st, 2),
		.has_memory = sqlite3_column_type(st, 3) != SQLITE_NULL,
		.memory_gib = sqlite3_column_double(st, 3),
	};
	return v->fn.reading(v->ctx, &r);
}

static int row_wgrad(sqlite3_stmt *st, void *arg)
{
	const struct visit *v = arg;
	struct db_agg_wgrad w = { sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
				  sqlite3_column_int(st, 2),   sqlite3_column_int(st, 3),
				  sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5) };
	return v->fn.wgrad(v->ctx, &w);
}

int db_import_stages(struct db *db, int (*fn)(void *ctx, int stage, int64_t rank), void *ctx)
{
	struct visit v = { ctx, { .stage = fn } };
	return read_rows(db, R_STAGES, 0, row_stage, &v);
}

int db_import_readings(struct db *db, int64_t iteration,
		       int (*fn)(void *ctx, const struct db_agg_reading *r), void *ctx)
{
	struct visit v = { ctx, { .reading = fn } };
	return read_rows(db, R_READINGS, iteration, row_reading, &v);
}

int db_import_wgrads(struct db *db, int64_t iteration,
		     int (*fn)(void *ctx, const struct db_agg_wgrad *w), void *ctx)
{
	struct visit v = { ctx, { .wgrad = fn } };
	return read_rows(db, R_WGRADS, iteration, row_wgrad, &v);
}
