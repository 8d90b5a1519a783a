/* ranks.c — which trace is which rank (see db_resolve_ranks() in db.h and
 * docs/contracts.md §8).
 *
 * An iteration's traces are those with its number, or, without a number,
 * those of its folder. Each trace claims a rank: its header's
 * (distributedInfo.rank), else its file name's. Real jobs write rank 0, or
 * a node-local rank, into every header, so a header rank claimed by several
 * traces of one iteration is not trusted: each of those traces that has a
 * rank in its file name takes that one (rank_note says so). What several
 * traces still claim after that is a conflict: kept, listed (the
 * rank_conflicts view, ppbatch's summary, ppagg's report), never
 * aggregated. A trace that claims nothing (written by another tool) keeps
 * the rank it has. The rules look at every stored trace each time, so the
 * result depends only on what is stored, not on the order it was stored
 * in.
 */
#include <sqlite3.h>

#include "db.h"
#include "db_int.h"
#include "util/pp.h"

/* "Another trace of t's iteration has t's header rank." */
#define SHARED_HEADER                                                     \
	"header_rank IS NOT NULL AND EXISTS (SELECT 1 FROM traces o"      \
	" WHERE o.header_rank = traces.header_rank"                       \
	" AND o.iteration IS traces.iteration"                            \
	" AND (traces.iteration IS NOT NULL OR o.folder = traces.folder)" \
	" AND o.id != traces.id)"

#define SHARED_NOTE                                                         \
	"'header rank ' || header_rank || ' is shared with other traces of" \
	" the iteration: rank from the file name'"

enum { R_BEGIN, R_CLAIM, R_NAME, R_COMMIT, R_ROLLBACK, R_CONFLICTS, R_SHARED, R_COUNT };

/* In enum order. The updates write only the rows that change. */
static const char *const rank_sql[R_COUNT] = {
	"BEGIN IMMEDIATE",
	"UPDATE traces SET rank = coalesce(header_rank, name_rank), rank_note = NULL"
	" WHERE coalesce(header_rank, name_rank) IS NOT NULL"
	" AND (rank IS NOT coalesce(header_rank, name_rank) OR rank_note IS NOT NULL)"
	" AND NOT (name_rank IS NOT NULL AND " SHARED_HEADER ")",
	"UPDATE traces SET rank = name_rank, rank_note = " SHARED_NOTE
	" WHERE name_rank IS NOT NULL AND " SHARED_HEADER
	" AND (rank IS NOT name_rank OR rank_note IS NOT " SHARED_NOTE ")",
	"COMMIT",
	"ROLLBACK",
	"SELECT iteration, folder, rank, path, traces FROM rank_conflicts"
	" ORDER BY iteration, CASE WHEN iteration IS NULL THEN folder END, rank, path",
	"SELECT iteration, min(folder), header_rank, count(*), min(path), max(path)"
	" FROM traces WHERE header_rank IS NOT NULL"
	" GROUP BY iteration, CASE WHEN iteration IS NULL THEN folder END, header_rank"
	" HAVING count(*) > 1 ORDER BY iteration, header_rank",
};

static const char *const rank_what[R_COUNT] = {
	"cannot resolve ranks",
	"cannot resolve ranks",
	"cannot resolve ranks",
	"cannot resolve ranks",
	"cannot resolve ranks",
	"cannot list rank conflicts",
	"cannot list shared header ranks",
};

/* Steps statement q, which returns no row. */
static int exec_one(struct db *db, int q)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db_sqlite(db), rank_sql[q], -1, &st, NULL) != SQLITE_OK)
		return db_note_sql_error(db, rank_what[q]);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_note_sql_error(db, rank_what[q]);
}

int db_resolve_ranks(struct db *db)
{
	int rc = exec_one(db, R_BEGIN);
	if (rc)
		return rc;
	if ((rc = exec_one(db, R_CLAIM)) || (rc = exec_one(db, R_NAME)) ||
	    (rc = exec_one(db, R_COMMIT)))
		exec_one(db, R_ROLLBACK);
	return rc;
}

/* Runs query q, handing each row to row(st, fn, ctx). */
static int each(struct db *db, int q, void (*row)(sqlite3_stmt *st, void (*fn)(void), void *ctx),
		void (*fn)(void), void *ctx)
{
	sqlite3_stmt *st;
	int s;
	if (sqlite3_prepare_v2(db_sqlite(db), rank_sql[q], -1, &st, NULL) != SQLITE_OK)
		return db_note_sql_error(db, rank_what[q]);
	while ((s = sqlite3_step(st)) == SQLITE_ROW)
		row(st, fn, ctx);
	sqlite3_finalize(st);
	return s == SQLITE_DONE ? 0 : db_note_sql_error(db, rank_what[q]);
}

/* The (iteration, folder) that the rows of both queries start with. */
static void row_where(sqlite3_stmt *st, bool *has_iteration, int64_t *iteration,
		      const char **folder)
{
	*has_iteration = sqlite3_column_type(st, 0) != SQLITE_NULL;
	*iteration = sqlite3_column_int64(st, 0);
	*folder = (const char *)sqlite3_column_text(st, 1);
}

static void conflict_row(sqlite3_stmt *st, void (*fn)(void), void *ctx)
{
	struct db_conflict c = { .rank = sqlite3_column_int64(st, 2),
				 .path = (const char *)sqlite3_column_text(st, 3),
				 .ntraces = sqlite3_column_int64(st, 4) };
	row_where(st, &c.has_iteration, &c.iteration, &c.folder);
	((void (*)(void *, const struct db_conflict *))fn)(ctx, &c);
}

static void shared_row(sqlite3_stmt *st, void (*fn)(void), void *ctx)
{
	struct db_shared_rank r = { .header_rank = sqlite3_column_int64(st, 2),
				    .ntraces = sqlite3_column_int64(st, 3),
				    .first = (const char *)sqlite3_column_text(st, 4),
				    .last = (const char *)sqlite3_column_text(st, 5) };
	row_where(st, &r.has_iteration, &r.iteration, &r.folder);
	((void (*)(void *, const struct db_shared_rank *))fn)(ctx, &r);
}

int db_rank_conflicts(struct db *db, void (*fn)(void *ctx, const struct db_conflict *c), void *ctx)
{
	return each(db, R_CONFLICTS, conflict_row, (void (*)(void))fn, ctx);
}

int db_shared_header_ranks(struct db *db, void (*fn)(void *ctx, const struct db_shared_rank *s),
			   void *ctx)
{
	return each(db, R_SHARED, shared_row, (void (*)(void))fn, ctx);
}
