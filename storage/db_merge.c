/* db_merge.c — copying one shard database into another (`ppbatch --merge`).
 *
 * Each shard is ATTACHed and copied in one transaction. A trace is
 * identified by its path: when OUT already holds it, the better row wins
 * (not failed over failed; then the newer file; then the later analysis),
 * and an equal row is left alone — so merging twice, or merging shards that
 * overlap, gives the same database without duplicates. Failed traces are
 * copied as failed. A trace's annotations, ops and their worker come with it; op-trace
 * imports (op_source) are matched by their path like traces.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_merge.h"
#include "db.h"
#include "db_int.h"
#include "util/pp.h"
#include "util/strbuf.h"

enum {
	M_LIST,
	M_FIND,
	M_DEL_K,
	M_DEL_S,
	M_DEL_C,
	M_DEL_A,
	M_DEL_O,
	M_DEL_W,
	M_DEL_T,
	M_INS_T,
	M_INS_K,
	M_INS_S,
	M_INS_C,
	M_INS_A,
	M_INS_O,
	M_INS_W,
	M_COUNT
};

/* In enum order (M_LIST ...). */
static const char *const merge_sql[M_COUNT] = {
	"SELECT id, path, status, mtime_ns, analysed_at FROM shard.traces"
	" ORDER BY id",
	"SELECT id, status, mtime_ns, analysed_at, bytes FROM main.traces"
	" WHERE path = ?1",
	"DELETE FROM main.kernel_t WHERE rowid >= (?1 << 32)"
	" AND rowid < ((?1 + 1) << 32)",
	"DELETE FROM main.step_t WHERE trace_id = ?1",
	"DELETE FROM main.category_t WHERE trace_id = ?1",
	"DELETE FROM main.annotation_t WHERE trace_id = ?1",
	"DELETE FROM main.op_t WHERE rowid >= (?1 << 32) AND rowid < ((?1 + 1) << 32)",
	"DELETE FROM main.op_worker WHERE trace_id = ?1",
	"DELETE FROM main.traces WHERE id = ?1",
	/* Every traces column but id and run_id, twice (SQL stays one literal). */
	"INSERT INTO main.traces(path, folder, iteration, rank, bytes, mtime_ns,"
	" status, fail_kind, error, warnings, mode, window_start_ns,"
	" window_end_ns, gpu_busy_ns, idle_ns, bubble_ns, comp_busy_ns,"
	" comm_busy_ns, overlap_ns, coverage, events, kernels, fwd_thread,"
	" bwd_thread, role_rule, elapsed_ns, analysed_at, file, header_rank,"
	" name_rank, rank_note, run_id)"
	" SELECT path, folder, iteration, rank, bytes, mtime_ns,"
	" status, fail_kind, error, warnings, mode, window_start_ns,"
	" window_end_ns, gpu_busy_ns, idle_ns, bubble_ns, comp_busy_ns,"
	" comm_busy_ns, overlap_ns, coverage, events, kernels, fwd_thread,"
	" bwd_thread, role_rule, elapsed_ns, analysed_at, file, header_rank,"
	" name_rank, rank_note, ?2"
	" FROM shard.traces WHERE id = ?1",
	"INSERT INTO main.kernel_t(rowid, code, seq, name_id, stream,"
	" start, dur, correlation, pg_id)"
	" SELECT (?2 << 32) | (k.rowid & 4294967295), k.code, k.seq,"
	" nm.new, k.stream, k.start, k.dur, k.correlation, pm.new"
	" FROM shard.kernel_t k JOIN temp.name_map nm ON nm.old = k.name_id"
	" LEFT JOIN temp.pg_map pm ON pm.old = k.pg_id"
	" WHERE k.rowid >= (?1 << 32) AND k.rowid < ((?1 + 1) << 32)"
	" ORDER BY k.rowid",
	"INSERT INTO main.step_t SELECT ?2, phase, seq, cpu_start_ns,"
	" cpu_end_ns, start_ns, end_ns, comp_ns, comm_ns, overlap_ns,"
	" kernels, chunk, mbs FROM shard.step_t WHERE trace_id = ?1",
	"INSERT INTO main.category_t SELECT ?2, category, kernels,"
	" sum_ns, busy_ns FROM shard.category_t WHERE trace_id = ?1",
	"INSERT INTO main.annotation_t SELECT ?2, nm.new, a.calls, a.kernels,"
	" a.gpu_ns, a.comp_ns, a.comm_ns, a.overlap_ns FROM shard.annotation_t a"
	" JOIN temp.name_map nm ON nm.old = a.name_id WHERE a.trace_id = ?1",
	"INSERT INTO main.op_t(rowid, optype, seq_id, mc, gmc, mb_id, start, dur, step_seq)"
	" SELECT (?2 << 32) | (o.rowid & 4294967295), o.optype, o.seq_id, o.mc,"
	" o.gmc, o.mb_id, o.start, o.dur, o.step_seq FROM shard.op_t o"
	" WHERE o.rowid >= (?1 << 32) AND o.rowid < ((?1 + 1) << 32)"
	" ORDER BY o.rowid",
	"INSERT INTO main.op_worker(trace_id, source_id, dp_rank, stage)"
	" SELECT ?2, sm.new, w.dp_rank, w.stage FROM shard.op_worker w"
	" LEFT JOIN temp.src_map sm ON sm.old = w.source_id WHERE w.trace_id = ?1",
};

/* Interns the shard's names and process groups into OUT and maps ids. */
static const char *const prepare_sql[] = {
	"INSERT OR IGNORE INTO main.names(name) SELECT name FROM shard.names",
	"INSERT OR IGNORE INTO main.pgroups(descr, ranks)"
	" SELECT descr, ranks FROM shard.pgroups",
	"DROP TABLE IF EXISTS temp.name_map",
	"DROP TABLE IF EXISTS temp.pg_map",
	"CREATE TEMP TABLE name_map(old INTEGER PRIMARY KEY, new INTEGER)",
	"CREATE TEMP TABLE pg_map(old INTEGER PRIMARY KEY, new INTEGER)",
	"INSERT INTO temp.name_map SELECT s.id, m.id FROM shard.names s"
	" JOIN main.names m ON m.name = s.name",
	"INSERT INTO temp.pg_map SELECT s.id, m.id FROM shard.pgroups s"
	" JOIN main.pgroups m ON m.descr = s.descr AND m.ranks = s.ranks",
	"INSERT OR IGNORE INTO main.op_source(path, file, bytes, mtime_ns, imported_at,"
	" meta_path, schema_path, trial_name, run_id, dp_size, pp_size, tp_size,"
	" dsp_size, vpp_size, world_size, optype_order)"
	" SELECT path, file, bytes, mtime_ns, imported_at, meta_path, schema_path,"
	" trial_name, run_id, dp_size, pp_size, tp_size, dsp_size, vpp_size,"
	" world_size, optype_order FROM shard.op_source",
	"DROP TABLE IF EXISTS temp.src_map",
	"CREATE TEMP TABLE src_map(old INTEGER PRIMARY KEY, new INTEGER)",
	"INSERT INTO temp.src_map SELECT s.id, m.id FROM shard.op_source s"
	" JOIN main.op_source m ON m.path = s.path",
};

/* Whether the shard's row (s_*) should replace OUT's (o_*). */
static bool better(int s_status, int64_t s_mtime, int64_t s_at, int o_status, int64_t o_mtime,
		   int64_t o_at)
{
	bool s_failed = s_status == DB_STATUS_FAILED, o_failed = o_status == DB_STATUS_FAILED;
	if (s_failed != o_failed)
		return o_failed;
	if (s_mtime != o_mtime)
		return s_mtime > o_mtime;
	return s_at > o_at;
}

static int step_done(sqlite3 *c, sqlite3_stmt *s, struct strbuf *err)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		pp_err(err, PP_EDB, "%s", sqlite3_errmsg(c));
		return PP_EDB;
	}
	return 0;
}

static int copy_trace(sqlite3 *c, sqlite3_stmt **st, int64_t old_id, int64_t replace_id,
		      int64_t run_id, struct strbuf *err)
{
	if (replace_id) {
		for (int i = M_DEL_K; i <= M_DEL_T; i++) {
			sqlite3_bind_int64(st[i], 1, replace_id);
			if (step_done(c, st[i], err))
				return PP_EDB;
		}
	}
	sqlite3_bind_int64(st[M_INS_T], 1, old_id);
	if (run_id)
		sqlite3_bind_int64(st[M_INS_T], 2, run_id);
	else
		sqlite3_bind_null(st[M_INS_T], 2);
	if (step_done(c, st[M_INS_T], err))
		return PP_EDB;
	int64_t new_id = sqlite3_last_insert_rowid(c);
	for (int i = M_INS_K; i <= M_INS_W; i++) {
		sqlite3_bind_int64(st[i], 1, old_id);
		sqlite3_bind_int64(st[i], 2, new_id);
		if (step_done(c, st[i], err))
			return PP_EDB;
	}
	return 0;
}

/* Merges one attached shard inside the open transaction. */
static int merge_traces(sqlite3 *c, int64_t run_id, struct db_merge_stats *ms, struct strbuf *err)
{
	sqlite3_stmt *st[M_COUNT] = { 0 };
	int rc = 0;
	for (int i = 0; i < M_COUNT; i++) {
		if (sqlite3_prepare_v2(c, merge_sql[i], -1, &st[i], NULL) != SQLITE_OK) {
			pp_err(err, PP_EDB, "%s", sqlite3_errmsg(c));
			rc = PP_EDB;
			goto out;
		}
	}
	int src;
	while ((src = sqlite3_step(st[M_LIST])) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st[M_LIST], 0);
		int status = sqlite3_column_int(st[M_LIST], 2);
		int64_t mtime = sqlite3_column_int64(st[M_LIST], 3);
		int64_t at = sqlite3_column_int64(st[M_LIST], 4);
		int64_t have = 0;
		sqlite3_bind_value(st[M_FIND], 1, sqlite3_column_value(st[M_LIST], 1));
		int f = sqlite3_step(st[M_FIND]);
		if (f == SQLITE_ROW) {
			have = sqlite3_column_int64(st[M_FIND], 0);
			if (!better(status, mtime, at, sqlite3_column_int(st[M_FIND], 1),
				    sqlite3_column_int64(st[M_FIND], 2),
				    sqlite3_column_int64(st[M_FIND], 3))) {
				sqlite3_reset(st[M_FIND]);
				ms->unchanged++;
				continue;
			}
		} else if (f != SQLITE_DONE) {
			pp_err(err, PP_EDB, "%s", sqlite3_errmsg(c));
			rc = PP_EDB;
			goto out;
		}
		sqlite3_reset(st[M_FIND]);
		if ((rc = copy_trace(c, st, id, have, run_id, err)))
			goto out;
		if (have)
			ms->replaced++;
		else
			ms->added++;
	}
	if (src != SQLITE_DONE) {
		pp_err(err, PP_EDB, "%s", sqlite3_errmsg(c));
		rc = PP_EDB;
	}
out:
	for (int i = 0; i < M_COUNT; i++)
		sqlite3_finalize(st[i]);
	return rc;
}

int db_merge_shard(struct db *out, const char *path, int64_t run_id, struct db_merge_stats *ms,
		   struct strbuf *err)
{
	sqlite3 *c = db_sqlite(out);
	sqlite3_stmt *s = NULL;
	struct stat sb;
	int rc, v = -1;

	if (stat(path, &sb) != 0) {
		return pp_err(err, PP_ENOTFOUND, "shard '%s' is missing", path);
	}
	if (access(path, R_OK) != 0) {
		return pp_err(err, PP_EDB, "shard '%s' is unreadable", path);
	}
	/* Read-only, so a damaged or foreign file is never modified. */
	struct strbuf uri = STRBUF_INIT;
	strbuf_addstr(&uri, "file:");
	for (const char *p = path; *p; p++) {
		if (*p == '?' || *p == '#' || *p == '%')
			strbuf_addf(&uri, "%%%02X", (unsigned char)*p);
		else
			strbuf_addch(&uri, *p);
	}
	strbuf_addstr(&uri, "?mode=ro");
	if (sqlite3_prepare_v2(c, "ATTACH DATABASE ?1 AS shard", -1, &s, NULL) != SQLITE_OK) {
		pp_err(err, PP_EDB, "%s", sqlite3_errmsg(c));
		strbuf_release(&uri);
		return PP_EDB;
	}
	sqlite3_bind_text(s, 1, uri.buf, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	strbuf_release(&uri);
	if (rc != SQLITE_DONE) {
		return pp_err(err, PP_EDB, "shard '%s' is unreadable: %s", path, sqlite3_errmsg(c));
	}
	if (sqlite3_prepare_v2(c, "PRAGMA shard.user_version", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (v != SCHEMA_VERSION) {
		rc = pp_err(err, PP_EDB, "shard '%s' is unreadable: %s", path,
			    v < 0    ? sqlite3_errmsg(c)
			    : v == 0 ? "not a pptrace database"
				     : "another schema version");
		goto out_detach;
	}
	size_t mark = err->len;
	if ((rc = db_exec(c, "BEGIN IMMEDIATE", err)))
		goto out_detach;
	for (size_t i = 0; !rc && i < sizeof(prepare_sql) / sizeof(prepare_sql[0]); i++)
		rc = db_exec(c, prepare_sql[i], err);
	if (rc || (rc = merge_traces(c, run_id, ms, err)) || (rc = db_exec(c, "COMMIT", err))) {
		pp_err_prefix(err, mark, rc, "cannot merge shard '%s': ", path);
		sqlite3_exec(c, "ROLLBACK", NULL, NULL, NULL);
	}
out_detach:
	sqlite3_exec(c, "DROP TABLE IF EXISTS temp.name_map", NULL, NULL, NULL);
	sqlite3_exec(c, "DROP TABLE IF EXISTS temp.pg_map", NULL, NULL, NULL);
	sqlite3_exec(c, "DROP TABLE IF EXISTS temp.src_map", NULL, NULL, NULL);
	sqlite3_exec(c, "DETACH DATABASE shard", NULL, NULL, NULL);
	return rc;
}
