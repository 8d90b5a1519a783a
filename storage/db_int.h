/* db_int.h — what the files of storage/ share about a struct db; not for
 * the layers above (they use db.h).
 */
#ifndef DB_INT_H
#define DB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;
struct sqlite3;
struct sqlite3_stmt;

/* Sets db_errmsg() to "what: <SQLite's message>" without making the error
 * sticky (for reads and for writers with their own transaction, which
 * roll back themselves). Returns PP_EDB. */
int db_note_sql_error(struct db *db, const char *what);
/* The same with a message of its own. Returns code. */
int db_note_error(struct db *db, int code, const char *msg);

/* Steps st (its bindings set by the caller), then resets it and clears
 * its bindings: 0 when it ran to its end, else db_note_sql_error(db, what).
 * For writers with their own transaction (db_agg.c, db_why.c). */
int db_step_reset(struct db *db, struct sqlite3_stmt *st, const char *what);

/* Runs sql (statements without parameters) on c; on failure writes
 * SQLite's message to err and returns PP_EDB. */
int db_exec(struct sqlite3 *c, const char *sql, char *err, size_t errlen);

/* Binds v[0..n) to the columns col, col+1, … of s; where have is given, a
 * value whose have[i] is false stays NULL. */
void db_bind_i64s(struct sqlite3_stmt *s, int col, const int64_t *v, const bool *have, int n);

#endif
