/* db_trace.c — the trace write of the pptrace database (db.h): one trace
 * per transaction, with its kernels, steps, categories, annotations and ops;
 * bulk imports and op-trace sources. Invariants: db_int.h.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "db_int.h"
#include "krows.h"
#include "util/htab.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "util/utf8.h"

/* ---- intern map ---- */

static struct intern_slot *intern_find(struct intern *m, const char *s, size_t n, uint64_t h)
{
	if (!m->cap)
		return NULL;
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct intern_slot *sl = &m->slots[i];
		if (!sl->key)
			return sl;
		if (sl->hash == h && sl->len == n && !memcmp(sl->key, s, n))
			return sl;
	}
}

static void intern_put(struct intern *m, const char *s, size_t n, uint64_t h, int64_t id)
{
	if ((m->used + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 1024;
		struct intern_slot *ns = xcalloc(ncap, sizeof(*ns));
		for (size_t i = 0; i < m->cap; i++) {
			struct intern_slot *o = &m->slots[i];
			if (!o->key)
				continue;
			size_t j = o->hash & (ncap - 1);
			while (ns[j].key)
				j = (j + 1) & (ncap - 1);
			ns[j] = *o;
		}
		free(m->slots);
		m->slots = ns;
		m->cap = ncap;
	}
	struct intern_slot *sl = intern_find(m, s, n, h);
	sl->key = xstrndup(s, n);
	sl->len = n;
	sl->hash = h;
	sl->id = id;
	m->used++;
}

/* 0 when a trace's transaction is open and no error is pending, else the
 * error (the pending one, or PP_EINVAL). */
static int in_trace(struct db *db)
{
	if (db->err_code)
		return db->err_code;
	return db->in_txn ? 0 : db_fail(db, PP_EINVAL, "no trace transaction is open");
}

/* Statement id of the open trace, cleared, ?1 bound to the trace; NULL
 * with *rc the pending error, PP_EINVAL when no trace is open, or PP_EDB
 * when it cannot be prepared. */
static sqlite3_stmt *trace_stmt(struct db *db, enum db_stmt id, int *rc)
{
	sqlite3_stmt *s = (*rc = in_trace(db)) ? NULL : db_stmt_ready(db, id, rc);
	if (s)
		sqlite3_bind_int64(s, 1, db->cur_trace);
	return s;
}

/* Runs the deletion id with ?1 = arg. */
static int delete_rows(struct db *db, enum db_stmt id, int64_t arg, const char *what)
{
	sqlite3_stmt *s = db_stmt(db, id);
	if (!s)
		return PP_EDB;
	sqlite3_bind_int64(s, 1, arg);
	return db_step_done(db, s, what);
}

/* ---- one trace ---- */

/* Deletes trace id and every row of it. */
static int delete_trace(struct db *db, int64_t id)
{
	if (delete_rows(db, S_DEL_KERNELS, id, "cannot delete kernels") ||
	    delete_rows(db, S_DEL_STEPS, id, "cannot delete steps") ||
	    delete_rows(db, S_DEL_CATS, id, "cannot delete categories") ||
	    delete_rows(db, S_DEL_ANNS, id, "cannot delete annotations") ||
	    delete_rows(db, S_DEL_OPS, id, "cannot delete ops") ||
	    delete_rows(db, S_DEL_OP_WORKER, id, "cannot delete ops") ||
	    delete_rows(db, S_DEL_TRACE, id, "cannot delete trace"))
		return PP_EDB;
	return 0;
}

static int remove_trace(struct db *db, const char *path)
{
	sqlite3_stmt *s = db_stmt(db, S_FIND_TRACE);
	if (!s)
		return PP_EDB;
	db_bind_text(s, 1, path);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		sqlite3_reset(s);
		return 0;
	}
	if (rc != SQLITE_ROW) {
		sqlite3_reset(s);
		return db_fail_sql(db, "cannot look up trace");
	}
	int64_t id = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return delete_trace(db, id);
}

static int insert_trace(struct db *db, const struct db_trace *t)
{
	sqlite3_stmt *s = db_stmt(db, S_INS_TRACE);
	if (!s)
		return PP_EDB;
	const bool ok = t->status != DB_STATUS_FAILED;
	/* The integer columns, each NULL unless have. */
	const struct {
		int col;
		bool have;
		int64_t v;
	} num[] = {
		{ 3, t->has_iteration, t->iteration },
		{ 5, t->bytes >= 0, t->bytes },
		{ 6, true, t->mtime_ns },
		{ 7, true, t->status },
		{ 8, true, ok ? 0 : t->fail_kind },
		{ 11, ok, t->mode },
		{ 21, t->events != 0, t->events },
		{ 22, ok, t->kernels },
		{ 26, t->elapsed_ns != 0, t->elapsed_ns },
		{ 27, t->run_id != 0, t->run_id },
		{ 28, true, (int64_t)time(NULL) },
		{ 30, t->has_header_rank, t->header_rank },
		{ 31, t->has_name_rank, t->name_rank },
	};
	for (size_t i = 0; i < sizeof(num) / sizeof(num[0]); i++)
		if (num[i].have)
			sqlite3_bind_int64(s, num[i].col, num[i].v);
	const char *text[] = { t->path,       t->folder,     t->error,     t->warnings,
			       t->fwd_thread, t->bwd_thread, t->role_rule, t->file };
	const int text_col[] = { 1, 2, 9, 10, 23, 24, 25, 29 };
	for (int i = 0; i < 8; i++)
		db_bind_text(s, text_col[i], text[i]);
	if (t->has_metrics) {
		const int64_t m[] = { t->window_start_ns, t->window_end_ns, t->gpu_busy_ns,
				      t->idle_ns,         t->bubble_ns,     t->comp_busy_ns,
				      t->comm_busy_ns,    t->overlap_ns };
		db_bind_i64s(s, 12, m, NULL, 8);
		sqlite3_bind_double(s, 20, t->coverage);
	}
	if (db_step_done(db, s, "cannot insert trace"))
		return PP_EDB;
	db->cur_trace = sqlite3_last_insert_rowid(db->conn);
	return 0;
}

int db_trace_begin(struct db *db, const struct db_trace *t)
{
	if (db->err_code)
		return db->err_code;
	if (db->readonly)
		return db_fail(db, PP_EDB, "database is open read-only");
	if (db->in_txn)
		return db_fail(db, PP_EINVAL, "a trace transaction is already open");
	if (!db->bulk && db_begin(db))
		return PP_EDB;
	db->in_txn = true;
	db->next_kidx = 0;
	db->nkrow = 0;
	db->kappend = -1;
	db->next_oidx = 0;
	db->nop = 0;
	db->window_start_ns = t->has_metrics ? t->window_start_ns : 0;
	if (!t->path)
		return db_fail(db, PP_EINVAL, "trace without a path");
	if (remove_trace(db, t->path) || insert_trace(db, t))
		return PP_EDB;
	if (db->cur_trace <= 0 || db->cur_trace >= (INT64_C(1) << 30))
		return db_fail(db, PP_EDB, "trace id %lld out of range", (long long)db->cur_trace);
	return 0;
}

/* The id of text in table names/pgroups, inserting it when new. */
static int intern_id(struct db *db, struct intern *m, enum db_stmt find, enum db_stmt ins,
		     const char *a, size_t alen, const char *b, int64_t *id)
{
	/* Key: a, then (for pgroups) a unit separator and b. */
	char stackkey[512];
	size_t blen = b ? strlen(b) : 0;
	size_t klen = alen + (b ? 1 + blen : 0);
	char *key = klen < sizeof(stackkey) ? stackkey : xmalloc(klen + 1);
	struct strbuf fix = STRBUF_INIT, fixb = STRBUF_INIT;
	int rc = 0;
	memcpy(key, a, alen);
	if (b) {
		key[alen] = '\x1f';
		memcpy(key + alen + 1, b, blen);
	}
	uint64_t h = pp_hash_bytes(key, klen, 0);
	struct intern_slot *sl = intern_find(m, key, klen, h);
	if (sl && sl->key) {
		*id = sl->id;
		goto out;
	}
	/* Stored text is valid UTF-8 (utf8.h); the cache key stays raw. */
	if (!utf8_valid(a, alen)) {
		utf8_sanitize(&fix, a, alen);
		a = fix.buf;
		alen = fix.len;
	}
	if (b && !utf8_valid(b, blen)) {
		utf8_sanitize(&fixb, b, blen);
		b = fixb.buf;
		blen = fixb.len;
	}
	sqlite3_stmt *s = db_stmt(db, find);
	if (!s) {
		rc = PP_EDB;
		goto out;
	}
	sqlite3_bind_text(s, 1, a, (int)alen, SQLITE_STATIC);
	if (b)
		sqlite3_bind_text(s, 2, b, (int)blen, SQLITE_STATIC);
	int st = sqlite3_step(s);
	if (st == SQLITE_ROW) {
		*id = sqlite3_column_int64(s, 0);
		sqlite3_reset(s);
	} else if (st == SQLITE_DONE) {
		sqlite3_reset(s);
		if (!(s = db_stmt(db, ins))) {
			rc = PP_EDB;
			goto out;
		}
		sqlite3_bind_text(s, 1, a, (int)alen, SQLITE_STATIC);
		if (b)
			sqlite3_bind_text(s, 2, b, (int)blen, SQLITE_STATIC);
		if ((rc = db_step_done(db, s, "cannot intern name")))
			goto out;
		*id = sqlite3_last_insert_rowid(db->conn);
	} else {
		sqlite3_reset(s);
		rc = db_fail_sql(db, "cannot look up name");
		goto out;
	}
	intern_put(m, key, klen, h, *id);
out:
	if (key != stackkey)
		free(key);
	strbuf_release(&fix);
	strbuf_release(&fixb);
	return rc;
}

int db_intern_name(struct db *db, const char *name, size_t len, int64_t *id)
{
	if (db->err_code)
		return db->err_code;
	return intern_id(db, &db->names, S_FIND_NAME, S_INS_NAME, name, len, NULL, id);
}

/* Whether the open trace's rows so far are the last of kernel_t, so that
 * the next ones can be appended with SQLite's own rowids (max + 1). True
 * in every normal run (a new trace has the largest id); checked once per
 * trace, because rows of a deleted trace row could remain after a user's
 * hand-made DELETE. */
static int rows_are_last(struct db *db, int64_t first_rowid)
{
	sqlite3_stmt *s = db_stmt(db, S_MAX_KROW);
	if (!s)
		return -1;
	if (sqlite3_step(s) != SQLITE_ROW) {
		db_fail_sql(db, "cannot read kernel_t");
		sqlite3_reset(s);
		return -1;
	}
	int last = sqlite3_column_int64(s, 0) == first_rowid - 1;
	sqlite3_reset(s);
	return last;
}

/* Inserts the buffered kernel rows in one statement. After the trace's
 * first batch, while its rows are kernel_t's last, batches are appended
 * with rowid max + 1: no uniqueness seek, which an explicit rowid costs on
 * every row. Verified, so that a surprise is an error, never a wrong
 * rowid. */
static int flush_kernels(struct db *db)
{
	int n = db->nkrow;
	db->nkrow = 0;
	if (!n)
		return 0;
	bool first = !(db->krow[0][0] & ((INT64_C(1) << DB_KROW_SHIFT) - 1));
	if (!first && db->kappend < 0 && (db->kappend = rows_are_last(db, db->krow[0][0])) < 0)
		return PP_EDB;
	bool append = !first && db->kappend == 1;
	struct krows rows = { (const int64_t(*)[KROWS_COLS])db->krow, db->knull, n };
	sqlite3_stmt *s = db_stmt_rebound(db, append ? S_INS_KERNELS : S_INS_KERNELS_ID);
	if (!s)
		return PP_EDB;
	/* Unbound, pp_krows would yield no row: a silent loss. */
	if (krows_bind(s, 1, &rows) != SQLITE_OK)
		return db_fail_sql(db, "cannot insert kernels");
	if (db_step_done(db, s, "cannot insert kernels"))
		return PP_EDB;
	if (append && sqlite3_last_insert_rowid(db->conn) != db->krow[n - 1][0])
		return db_fail(db, PP_EDB, "kernel rows are not at the end of kernel_t");
	return 0;
}

int db_intern_pgroup(struct db *db, const char *desc, const char *ranks, int64_t *id)
{
	*id = 0;
	if (db->err_code)
		return db->err_code;
	if (!(desc && *desc) && !(ranks && *ranks))
		return 0;
	const char *d = desc ? desc : "";
	return intern_id(db, &db->pgroups, S_FIND_PG, S_INS_PG, d, strlen(d), ranks ? ranks : "",
			 id);
}

/* Appends kernel k's row to the batch (flushed when full); its phase and
 * seq are those of step st, or none when st is NULL. */
static inline int put_kernel(struct db *db, const struct rr_kernel *k, const struct rr_step *st,
			     int64_t name_id, int64_t pg_id)
{
	const int phase = st ? st->phase : RR_NOPHASE;
	int64_t *row = db->krow[db->nkrow];
	uint16_t nulls = 0;
	row[0] = (db->cur_trace << DB_KROW_SHIFT) | (int64_t)db->next_kidx;
	row[1] = DB_KCODE(k->category, k->type, k->recompute, phase, k->coll);
	row[2] = st ? st->seq : -1;
	nulls |= (phase < 0) << 2;
	row[3] = name_id;
	row[4] = k->stream;
	nulls |= (k->stream < 0) << 4;
	row[5] = k->start_ns - db->window_start_ns;
	row[6] = k->dur_ns;
	row[7] = k->correlation;
	nulls |= !k->has_correlation << 7;
	row[8] = pg_id;
	nulls |= !pg_id << 8;
	db->knull[db->nkrow++] = nulls;
	if (db->nkrow == KBATCH && flush_kernels(db))
		return PP_EDB;
	db->next_kidx++;
	return 0;
}

int db_trace_add_kernel(struct db *db, const struct db_kernel *dk)
{
	int64_t name_id, pg_id;
	int rc = in_trace(db);
	if (rc)
		return rc;
	if (db->next_kidx >= (UINT64_C(1) << DB_KROW_SHIFT))
		return db_fail(db, PP_EDB, "too many kernels in one trace");
	name_id = dk->name_id;
	if (!name_id &&
	    db_intern_name(db, dk->name ? dk->name : "", dk->name ? dk->name_len : 0, &name_id))
		return PP_EDB;
	if (db_intern_pgroup(db, dk->pg_desc, dk->pg_ranks, &pg_id))
		return PP_EDB;
	return put_kernel(db, dk->k, dk->step, name_id, pg_id);
}

int db_trace_add_kernels(struct db *db, const struct rr_kernel *k, size_t n,
			 const int64_t *name_ids, size_t nnames, const int64_t *pg_ids,
			 size_t ngroups, const struct rr_step *steps, size_t nsteps)
{
	int rc = in_trace(db);
	if (rc)
		return rc;
	if (n > (UINT64_C(1) << DB_KROW_SHIFT) - db->next_kidx)
		return db_fail(db, PP_EDB, "too many kernels in one trace");
	for (size_t i = 0; i < n; i++) {
		size_t name = k[i].name_id < nnames ? k[i].name_id : nnames;
		int64_t pg = k[i].pg >= 0 && (size_t)k[i].pg < ngroups ? pg_ids[k[i].pg] : 0;
		if (put_kernel(db, &k[i], rr_kernel_step(steps, nsteps, &k[i]), name_ids[name], pg))
			return PP_EDB;
	}
	return 0;
}

/* Inserts a row of the open trace by statement id: ?1 the trace, v[0..n)
 * from ?2 on (have as db_bind_i64s()'s). */
static int insert_row(struct db *db, enum db_stmt id, const int64_t *v, const bool *have, int n,
		      const char *what)
{
	int rc;
	sqlite3_stmt *s = trace_stmt(db, id, &rc);
	if (!s)
		return rc;
	db_bind_i64s(s, 2, v, have, n);
	return db_step_done(db, s, what);
}

int db_trace_add_step(struct db *db, const struct db_step *p)
{
	const bool times = p->kernels || p->has_times;
	const int64_t v[] = { DB_PHASE_CODE(p->phase),
			      p->seq,
			      p->cpu_start_ns,
			      p->cpu_end_ns,
			      p->start_ns,
			      p->end_ns,
			      p->comp_ns,
			      p->comm_ns,
			      p->overlap_ns,
			      p->kernels,
			      p->chunk,
			      p->mbs };
	const bool have[] = { true, true, p->has_cpu, p->has_cpu, times,         times,
			      true, true, true,       true,       p->chunk >= 0, p->mbs >= 0 };
	return insert_row(db, S_INS_STEP, v, have, 12, "cannot insert step");
}

int db_trace_add_category(struct db *db, const struct db_category *c)
{
	const int64_t v[] = { c->category, c->kernels, c->sum_ns, c->busy_ns };
	return insert_row(db, S_INS_CAT, v, NULL, 4, "cannot insert category");
}

int db_trace_add_annotation(struct db *db, const struct db_annotation *a)
{
	const int64_t v[] = { a->name_id, a->calls,   a->kernels,   a->gpu_ns,
			      a->comp_ns, a->comm_ns, a->overlap_ns };
	return insert_row(db, S_INS_ANN, v, NULL, 7, "cannot insert annotation");
}

/* Inserts the buffered op rows: a full batch in one statement, the rest
 * row by row. */
static int flush_ops(struct db *db)
{
	int n = db->nop, per = n == OBATCH ? OBATCH : 1;
	db->nop = 0;
	for (int r = 0; r < n; r += per) {
		sqlite3_stmt *s = db_stmt_rebound(db, per == OBATCH ? S_INS_OPS : S_INS_OP);
		if (!s)
			return PP_EDB;
		for (int k = 0; k < per; k++) {
			for (int c = 0; c < OCOLS - 1; c++)
				sqlite3_bind_int64(s, k * OCOLS + c + 1, db->orow[r + k][c]);
			if (db->orow[r + k][OCOLS - 1] >= 0) /* step_seq, else NULL */
				sqlite3_bind_int64(s, (k + 1) * OCOLS, db->orow[r + k][OCOLS - 1]);
			else
				sqlite3_bind_null(s, (k + 1) * OCOLS);
		}
		if (db_step_done(db, s, "cannot insert ops"))
			return PP_EDB;
	}
	return 0;
}

int db_trace_add_op(struct db *db, const struct db_op *op)
{
	int rc = in_trace(db);
	if (rc)
		return rc;
	if (db->next_oidx >= (UINT64_C(1) << DB_KROW_SHIFT))
		return db_fail(db, PP_EDB, "too many ops in one trace");
	int64_t *row = db->orow[db->nop++];
	row[0] = (db->cur_trace << DB_KROW_SHIFT) | (int64_t)db->next_oidx++;
	row[1] = op->optype;
	row[2] = op->seq_id;
	row[3] = op->mc;
	row[4] = op->gmc;
	row[5] = op->mb_id;
	row[6] = op->start_ns - db->window_start_ns;
	row[7] = op->end_ns - op->start_ns;
	row[8] = op->has_step ? op->step_seq : -1;
	return db->nop == OBATCH ? flush_ops(db) : 0;
}

int db_trace_set_worker(struct db *db, int64_t source_id, int dp_rank, int stage)
{
	int rc;
	sqlite3_stmt *s = trace_stmt(db, S_INS_OP_WORKER, &rc);
	if (!s)
		return rc;
	if (source_id > 0)
		sqlite3_bind_int64(s, 2, source_id);
	sqlite3_bind_int(s, 3, dp_rank);
	sqlite3_bind_int(s, 4, stage);
	return db_step_done(db, s, "cannot insert the ops' worker");
}

int db_bulk_begin(struct db *db)
{
	if (db->err_code)
		return db->err_code;
	if (db->in_txn || db->bulk)
		return db_fail(db, PP_EINVAL, "a transaction is already open");
	if (db_begin(db))
		return PP_EDB;
	db->bulk = true;
	return 0;
}

int db_bulk_commit(struct db *db)
{
	if (!db->bulk || db->in_txn)
		db_fail(db, PP_EINVAL, "no bulk transaction to commit");
	db->bulk = false;
	return db_commit(db);
}

/* The id of the source at path, or 0; -1 on an error. */
static int64_t find_source(struct db *db, const char *path)
{
	sqlite3_stmt *s = db_stmt(db, S_FIND_SOURCE);
	if (!s)
		return -1;
	db_bind_text(s, 1, path);
	int rc = sqlite3_step(s);
	int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_fail_sql(db, "cannot look up an op-trace import");
		return -1;
	}
	return id;
}

int db_delete_traces_under(struct db *db, const char *prefix, int64_t *n)
{
	size_t len = strlen(prefix);
	char *hi = xstrdup(prefix);
	int64_t *ids = NULL;
	size_t nids = 0, cap = 0;
	int rc = 0;
	hi[len - 1]++; /* callers' prefixes end in '#': never 0xff */
	sqlite3_stmt *s = db_stmt(db, S_TRACES_UNDER);
	if (!s) {
		free(hi);
		return PP_EDB;
	}
	db_bind_text(s, 1, prefix);
	db_bind_text(s, 2, hi);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (nids == cap) {
			cap = cap ? 2 * cap : 256;
			ids = xrealloc(ids, cap * sizeof(*ids));
		}
		ids[nids++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_reset(s);
	free(hi);
	rc = rc == SQLITE_DONE ? 0 : db_fail_sql(db, "cannot list an import's traces");
	for (size_t i = 0; i < nids && !rc; i++)
		rc = delete_trace(db, ids[i]);
	free(ids);
	*n = (int64_t)nids;
	return rc;
}

int db_op_source_replace(struct db *db, const struct db_op_source *src, int64_t *id,
			 int64_t *removed)
{
	struct strbuf prefix = STRBUF_INIT;
	int rc = 0;
	*removed = 0;
	if (db->err_code)
		return db->err_code;
	if (!db->bulk || db->in_txn)
		return db_fail(db, PP_EINVAL, "an op-trace import needs a bulk transaction");
	strbuf_addf(&prefix, "%s#", src->path);
	int64_t old = find_source(db, src->path);
	if (old < 0 || db_delete_traces_under(db, prefix.buf, removed) ||
	    (old > 0 && delete_rows(db, S_DEL_SOURCE, old, "cannot delete an op-trace import"))) {
		rc = PP_EDB;
		goto out;
	}
	sqlite3_stmt *s = db_stmt(db, S_INS_SOURCE);
	if (!s) {
		rc = PP_EDB;
		goto out;
	}
	db_bind_text(s, 1, src->path);
	db_bind_text(s, 2, src->file);
	sqlite3_bind_int64(s, 3, src->bytes);
	sqlite3_bind_int64(s, 4, src->mtime_ns);
	sqlite3_bind_int64(s, 5, (int64_t)time(NULL));
	db_bind_text(s, 6, src->meta_path);
	db_bind_text(s, 7, src->schema_path);
	if (src->has_meta) {
		const int64_t v[] = { src->run_id,   src->dp_size,  src->pp_size,   src->tp_size,
				      src->dsp_size, src->vpp_size, src->world_size };
		db_bind_text(s, 8, src->trial_name);
		for (int i = 0; i < 7; i++)
			sqlite3_bind_int64(s, 9 + i, v[i]);
	}
	db_bind_text(s, 16, src->optype_order);
	if ((rc = db_step_done(db, s, "cannot record an op-trace import")))
		goto out;
	*id = sqlite3_last_insert_rowid(db->conn);
out:
	strbuf_release(&prefix);
	return rc;
}

int db_trace_commit(struct db *db)
{
	if (!db->in_txn && !db->err_code)
		return db_fail(db, PP_EINVAL, "no trace transaction is open");
	/* Inside a bulk transaction the trace's rows are written, not
	 * committed; any error rolls all of it back (db_commit()). */
	if (!db->err_code && !flush_kernels(db) && !flush_ops(db) && db->bulk) {
		db->in_txn = false;
		return 0;
	}
	int rc = db_commit(db);
	if (!rc)
		db->in_txn = false;
	return rc;
}

int db_trace_store_empty(struct db *db, const struct db_trace *t)
{
	db_trace_begin(db, t); /* an error is sticky: commit reports it */
	return db_trace_commit(db);
}
