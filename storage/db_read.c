/* db_read.c — the one loop of the analysis reads (db_int.h): ppagg's
 * (db_agg.c), the why analysis's (db_why.c), the comparison's
 * (db_compare.c) and the imports' (db_import.c) prepare a query, hand each
 * row to a callback until one stops them, and note an error without making
 * it sticky.
 */
#include <sqlite3.h>

#include "db.h"
#include "db_int.h"
#include "util/pp.h"

sqlite3_stmt *db_read_prepare(struct db *db, const char *sql, const char *what)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL) != SQLITE_OK) {
		db_note_sql_error(db, what);
		return NULL;
	}
	return st;
}

int db_read_each(struct db *db, sqlite3_stmt *st, int (*row)(sqlite3_stmt *st, void *ctx),
		 void *ctx, const char *what)
{
	int s = SQLITE_DONE, rc = 0;
	if (!st)
		return PP_EDB;
	while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
		rc = row(st, ctx);
	if (!rc && s != SQLITE_DONE)
		rc = db_note_sql_error(db, what);
	return rc;
}

int db_read_rows(struct db *db, sqlite3_stmt *st, int (*row)(sqlite3_stmt *st, void *ctx),
		 void *ctx, const char *what)
{
	int rc = db_read_each(db, st, row, ctx, what);
	sqlite3_finalize(st);
	return rc;
}
