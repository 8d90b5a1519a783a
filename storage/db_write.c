/* db_write.c — the writer of the analysis tables (db_int.h): ppagg's rows,
 * the why analysis', the comparison's and the advisor's each replace the
 * rows of the last run in one IMMEDIATE transaction of their own, so a
 * reader sees the last run whole or the one before.
 *
 * A writer prepares its table's statements and COMMIT and ROLLBACK up front
 * (a rollback then needs no prepare, which could fail), begins, runs the
 * table's deletes, and leaves the inserts to its module. Errors are noted,
 * not sticky (db_note_sql_error()): the writer rolls back itself, and only
 * a transaction it began (BEGIN fails inside another one, which a ROLLBACK
 * would end).
 */
#include <sqlite3.h>
#include <stdlib.h>

#include "db.h"
#include "db_int.h"
#include "util/pp.h"
#include "util/strbuf.h"

/* The statements a writer prepares after its table's. */
enum { END_BEGIN, END_COMMIT, END_ROLLBACK, END_COUNT };

/* db_writer_run() on statements from..to-1, up to the first failure. */
static int run_range(struct db_writer *w, int from, int to, const char *what)
{
	int rc = 0;
	for (int i = from; i < to && !rc; i++)
		rc = db_writer_run(w, i, what);
	return rc;
}

void *db_writer_new(struct db *db, const struct db_write_table *t, size_t size)
{
	static const char *const end_sql[END_COUNT] = { "BEGIN IMMEDIATE", "COMMIT", "ROLLBACK" };
	struct db_writer *w = xcalloc(1, size);
	sqlite3 *c = db_sqlite(db);
	struct strbuf what = STRBUF_INIT;
	int rc = SQLITE_OK;
	w->db = db;
	w->t = t;
	w->st = xcalloc((size_t)t->n + END_COUNT, sizeof(*w->st));
	for (int i = 0; i < t->n && rc == SQLITE_OK; i++)
		rc = sqlite3_prepare_v2(c, t->sql[i], -1, &w->st[i], NULL);
	for (int i = 0; i < END_COUNT && rc == SQLITE_OK; i++)
		rc = sqlite3_prepare_v2(c, end_sql[i], -1, &w->st[t->n + i], NULL);
	if (rc != SQLITE_OK) {
		strbuf_addf(&what, "cannot prepare the writes of %s", t->what);
		rc = db_note_sql_error(db, what.buf);
		goto out;
	}
	strbuf_addf(&what, "cannot start writing %s", t->what);
	if ((rc = db_writer_run(w, t->n + END_BEGIN, what.buf)))
		goto out;
	w->open = true;
	strbuf_reset(&what);
	strbuf_addf(&what, "cannot delete the old rows of %s", t->what);
	rc = run_range(w, t->clear_from, t->clear_to, what.buf);
out:
	strbuf_release(&what);
	if (rc) {
		db_writer_rollback(w);
		w = NULL;
	}
	return w;
}

int db_writer_run(struct db_writer *w, int i, const char *what)
{
	return db_step_reset(w->db, w->st[i], what);
}

int db_writer_put(struct db_writer *w, int i, const struct db_val *v, int n, const char *what)
{
	db_bind_vals(w->st[i], 1, v, n);
	return db_writer_run(w, i, what);
}

int db_writer_put_i64s(struct db_writer *w, int i, const int64_t *v, const bool *have, int n,
		       const char *what)
{
	db_bind_i64s(w->st[i], 1, v, have, n);
	return db_writer_run(w, i, what);
}

/* Finalizes w's statements and frees it (and what its module added after
 * it: db_writer_new() allocated the whole). */
static void writer_free(struct db_writer *w)
{
	for (int i = 0; i < w->t->n + END_COUNT; i++)
		sqlite3_finalize(w->st[i]);
	free(w->st);
	free(w);
}

int db_writer_end(struct db_writer *w, int rc)
{
	if (!rc) {
		struct strbuf what = STRBUF_INIT;
		strbuf_addf(&what, "cannot commit %s", w->t->what);
		if (!(rc = db_writer_run(w, w->t->n + END_COMMIT, what.buf)))
			w->open = false;
		strbuf_release(&what);
	}
	db_writer_rollback(w);
	return rc;
}

void db_writer_rollback(struct db_writer *w)
{
	if (!w)
		return;
	if (w->open)
		sqlite3_step(w->st[w->t->n + END_ROLLBACK]);
	writer_free(w);
}
