/* krows.c — the pp_krows table-valued function (see krows.h).
 *
 * The buffer arrives as a pointer value (sqlite3_bind_pointer(), type
 * "pp_krows"), so SQL text can never forge one: a statement that does not
 * bind it reads no rows. The only plan is a scan in buffer order, which is
 * kernel_t's rowid order.
 */
#include <sqlite3.h>
#include <string.h>

#include "krows.h"

#define KROWS_PTR_TYPE "pp_krows"

/* The hidden column that takes the buffer (after the KROWS_COLS ones). */
#define KROWS_ARG KROWS_COLS

struct krows_cursor {
	sqlite3_vtab_cursor base;
	const struct krows *k; /* NULL: nothing bound */
	int i;
	/* Row i and its NULL bits (the hidden column's always set), kept by
	 * xFilter and xNext: xColumn, called for every value, only reads. */
	const int64_t *row;
	unsigned nulls;
};

/* Points the cursor at row i; past the end, every column reads NULL. */
static void krows_at(struct krows_cursor *c)
{
	if (c->k && c->i < c->k->n) {
		c->row = c->k->row[c->i];
		c->nulls = c->k->nulls[c->i] | 1u << KROWS_ARG;
	} else {
		c->row = NULL;
		c->nulls = ~0u;
	}
}

static int krows_connect(sqlite3 *conn, void *aux, int argc, const char *const *argv,
			 sqlite3_vtab **vt, char **err)
{
	(void)aux;
	(void)argc;
	(void)argv;
	(void)err;
	int rc = sqlite3_declare_vtab(conn, "CREATE TABLE x(id, code, seq, name_id, stream,"
					    " start, dur, correlation, pg_id, buf HIDDEN)");
	if (rc != SQLITE_OK)
		return rc;
	if (!(*vt = sqlite3_malloc(sizeof(**vt))))
		return SQLITE_NOMEM;
	memset(*vt, 0, sizeof(**vt));
	return SQLITE_OK;
}

static int krows_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

/* The one plan: buf = ?, handed to xFilter as its only argument. */
static int krows_best_index(sqlite3_vtab *vt, sqlite3_index_info *ii)
{
	(void)vt;
	for (int i = 0; i < ii->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		if (c->iColumn != KROWS_ARG)
			continue;
		if (!c->usable || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
			return SQLITE_CONSTRAINT;
		ii->aConstraintUsage[i].argvIndex = 1;
		ii->aConstraintUsage[i].omit = 1;
		ii->estimatedCost = 1;
		ii->estimatedRows = 1000;
		ii->orderByConsumed = 0;
		return SQLITE_OK;
	}
	return SQLITE_CONSTRAINT;
}

static int krows_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **cur)
{
	(void)vt;
	struct krows_cursor *c = sqlite3_malloc(sizeof(*c));
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*cur = &c->base;
	return SQLITE_OK;
}

static int krows_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int krows_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxstr, int argc,
			sqlite3_value **argv)
{
	struct krows_cursor *c = (struct krows_cursor *)cur;
	(void)idx;
	(void)idxstr;
	c->k = argc == 1 ? sqlite3_value_pointer(argv[0], KROWS_PTR_TYPE) : NULL;
	c->i = 0;
	krows_at(c);
	return SQLITE_OK;
}

static int krows_next(sqlite3_vtab_cursor *cur)
{
	struct krows_cursor *c = (struct krows_cursor *)cur;
	c->i++;
	krows_at(c);
	return SQLITE_OK;
}

static int krows_eof(sqlite3_vtab_cursor *cur)
{
	const struct krows_cursor *c = (const struct krows_cursor *)cur;
	return !c->k || c->i >= c->k->n;
}

static int krows_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	const struct krows_cursor *c = (const struct krows_cursor *)cur;
	/* A column left unset is NULL, and so is the hidden one. */
	if (!(c->nulls >> col & 1))
		sqlite3_result_int64(ctx, c->row[col]);
	return SQLITE_OK;
}

static int krows_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((const struct krows_cursor *)cur)->i;
	return SQLITE_OK;
}

static const sqlite3_module krows_module = {
	.iVersion = 0,
	.xCreate = NULL, /* eponymous only: never in a schema */
	.xConnect = krows_connect,
	.xBestIndex = krows_best_index,
	.xDisconnect = krows_disconnect,
	.xDestroy = krows_disconnect,
	.xOpen = krows_open,
	.xClose = krows_close,
	.xFilter = krows_filter,
	.xNext = krows_next,
	.xEof = krows_eof,
	.xColumn = krows_column,
	.xRowid = krows_rowid,
};

int krows_register(sqlite3 *conn)
{
	return sqlite3_create_module(conn, "pp_krows", &krows_module, NULL);
}

int krows_bind(sqlite3_stmt *s, int i, const struct krows *k)
{
	return sqlite3_bind_pointer(s, i, (void *)k, KROWS_PTR_TYPE, NULL);
}
