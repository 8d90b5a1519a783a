/* krows.h — pp_krows, a table-valued function over a buffer of kernel_t
 * rows in memory; internal to storage/ (db_trace.c's kernel batches).
 *
 * `INSERT INTO kernel_t(...) SELECT ... FROM pp_krows(?1)` with ?1 bound by
 * krows_bind() reads the rows straight from the buffer: no sqlite3_bind_*
 * per value (binding was a fifth of a kernel row's cost, docs/ppbatch.md).
 * The module is eponymous (nothing is written into the database file) and
 * exists only on the connections that krows_register() was called for.
 */
#ifndef KROWS_H
#define KROWS_H

#include <stdint.h>

struct sqlite3;
struct sqlite3_stmt;

/* Columns of a row: kernel_t's rowid, then its columns in table order
 * (code, seq, name_id, stream, start, dur, correlation, pg_id). */
#define KROWS_COLS 9

/* n rows; column c of row r is row[r][c], or NULL where bit c of nulls[r]
 * is set. The buffer must stay unchanged while a statement reads it. */
struct krows {
	const int64_t (*row)[KROWS_COLS];
	const uint16_t *nulls;
	int n;
};

/* Registers pp_krows on conn. SQLite's result code (SQLITE_OK = 0). */
int krows_register(struct sqlite3 *conn);

/* Binds k as parameter i of s (a statement reading pp_krows(?i)). SQLite's
 * result code. */
int krows_bind(struct sqlite3_stmt *s, int i, const struct krows *k);

#endif
