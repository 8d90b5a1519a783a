/* db_int.h — what the files of storage/ share about a struct db; not for
 * the layers above (they use db.h).
 */
#ifndef DB_INT_H
#define DB_INT_H

struct db;

/* Sets db_errmsg() to "what: <SQLite's message>" without making the error
 * sticky (for reads and for writers with their own transaction, which
 * roll back themselves). Returns PP_EDB. */
int db_note_sql_error(struct db *db, const char *what);
/* The same with a message of its own. Returns code. */
int db_note_error(struct db *db, int code, const char *msg);

#endif
