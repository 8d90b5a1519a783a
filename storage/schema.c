/* schema.c — every table and view of the pptrace database, and migrations.
 *
 * Design notes (docs/database.md is the user-facing description):
 * - Times are INTEGER nanoseconds. A kernel stores its start relative to its
 *   trace's window_start_ns (smaller varints); the `kernels` view adds it
 *   back.
 * - kernel_t is a rowid table whose rowid is (trace id << 32 | index): one
 *   trace's kernels are a rowid range, so deleting or reading one trace needs
 *   no index, and rows are appended in key order (cheap inserts).
 * - Category, type, recompute flag and phase are packed into kernel_t.code
 *   (see DB_KCODE); names and process groups are interned. Text appears only
 *   in the views, which are the stable interface (docs/contracts.md §3).
 * - Every statement is idempotent (IF NOT EXISTS), so a database at version
 *   N-1 is migrated by the steps after it and then the whole list.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "schema.h"
#include "util/pp.h"

static const char *const category_names[DB_CAT_COUNT] = {
	[DB_CAT_FWD_COMP] = "fwd_computation",
	[DB_CAT_FWD_COMM] = "fwd_communication",
	[DB_CAT_BWD_COMP] = "bwd_computation",
	[DB_CAT_BWD_COMM] = "bwd_communication",
	[DB_CAT_PP_COMM] = "pp_communication",
	[DB_CAT_DP_COMM] = "dp_communication",
	[DB_CAT_OPT_COMP] = "optimizer_computation",
	[DB_CAT_MEMORY] = "memory",
	[DB_CAT_OTHER] = "other",
	[DB_CAT_COMPUTATION] = "computation",
	[DB_CAT_COMMUNICATION] = "communication",
	[DB_CAT_BWD_COMP_RECOMPUTE] = "bwd_computation_recompute",
	[DB_CAT_BWD_COMM_RECOMPUTE] = "bwd_communication_recompute",
};

static const char *const phase_names[] = { NULL, "fwd", "bwd", "pp", "dp", "opt" };
static const char *const type_names[] = { "comp", "comm", "mem" };

const char *schema_category_name(int code)
{
	return code >= 0 && code < DB_CAT_COUNT ? category_names[code] : NULL;
}

const char *schema_phase_name(int code)
{
	return code > 0 && code <= DB_PHASE_OPT ? phase_names[code] : NULL;
}

const char *schema_type_name(int code)
{
	return code >= 0 && code <= DB_TYPE_MEM ? type_names[code] : NULL;
}

int schema_category_code(const char *name)
{
	for (int i = 0; i < DB_CAT_COUNT; i++)
		if (!strcmp(category_names[i], name))
			return i;
	return -1;
}

int schema_phase_code(const char *name)
{
	for (int i = 1; i <= DB_PHASE_OPT; i++)
		if (!strcmp(phase_names[i], name))
			return i;
	return -1;
}

/* The schema of version SCHEMA_VERSION, in creation order. */
static const char *const schema_sql[] = {
	/* ---- ppbatch: internal tables ---- */
	"CREATE TABLE IF NOT EXISTS names("
	" id INTEGER PRIMARY KEY,"
	" name TEXT NOT NULL UNIQUE)",

	/* Interned (description, ranks) pairs of communication kernels; ''
	 * stands for absent so that UNIQUE works. */
	"CREATE TABLE IF NOT EXISTS pgroups("
	" id INTEGER PRIMARY KEY,"
	" descr TEXT NOT NULL,"
	" ranks TEXT NOT NULL,"
	" UNIQUE(descr, ranks))",

	"CREATE TABLE IF NOT EXISTS runs("
	" id INTEGER PRIMARY KEY,"
	" started_at INTEGER NOT NULL,"   /* unix seconds */
	" finished_at INTEGER,"
	" host TEXT, input TEXT, db TEXT, shard TEXT,"
	" processes INTEGER,"
	" state TEXT NOT NULL,"           /* running / done / interrupted */
	" files INTEGER, ok INTEGER, partial INTEGER, failed INTEGER,"
	" skipped INTEGER, bytes INTEGER, seconds REAL,"
	" failures TEXT)",                /* one 'path: reason' per line */

	"CREATE TABLE IF NOT EXISTS traces("
	" id INTEGER PRIMARY KEY,"
	" path TEXT NOT NULL UNIQUE,"     /* canonical absolute path */
	" folder TEXT, iteration INTEGER, rank INTEGER,"
	" bytes INTEGER, mtime_ns INTEGER,"
	" status INTEGER NOT NULL,"       /* DB_STATUS_* */
	" fail_kind INTEGER NOT NULL DEFAULT 0," /* DB_FAIL_* */
	" error TEXT, warnings TEXT,"
	" mode INTEGER,"                  /* DB_MODE_* */
	" window_start_ns INTEGER, window_end_ns INTEGER,"
	" gpu_busy_ns INTEGER, idle_ns INTEGER, bubble_ns INTEGER,"
	" comp_busy_ns INTEGER, comm_busy_ns INTEGER, overlap_ns INTEGER,"
	" coverage REAL,"
	" events INTEGER, kernels INTEGER,"
	" fwd_thread TEXT, bwd_thread TEXT, role_rule TEXT,"
	" elapsed_ns INTEGER,"            /* worker time for this trace */
	" run_id INTEGER, analysed_at INTEGER)",

	"CREATE TABLE IF NOT EXISTS category_t("
	" trace_id INTEGER NOT NULL, category INTEGER NOT NULL,"
	" kernels INTEGER NOT NULL, sum_ns INTEGER NOT NULL,"
	" busy_ns INTEGER NOT NULL,"
	" PRIMARY KEY(trace_id, category)) WITHOUT ROWID",

	"CREATE TABLE IF NOT EXISTS step_t("
	" trace_id INTEGER NOT NULL, phase INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" cpu_start_ns INTEGER, cpu_end_ns INTEGER,"
	" start_ns INTEGER, end_ns INTEGER,"
	" comp_ns INTEGER NOT NULL, comm_ns INTEGER NOT NULL,"
	" overlap_ns INTEGER NOT NULL, kernels INTEGER NOT NULL,"
	" chunk INTEGER, mbs INTEGER,"     /* VPP labels when known */
	" PRIMARY KEY(trace_id, phase, seq)) WITHOUT ROWID",

	/* rowid = trace id << 32 | index; start relative to the trace's
	 * window_start_ns; code = DB_KCODE(...). */
	"CREATE TABLE IF NOT EXISTS kernel_t("
	" code INTEGER NOT NULL, seq INTEGER, name_id INTEGER NOT NULL,"
	" stream INTEGER, start INTEGER NOT NULL, dur INTEGER NOT NULL,"
	" correlation INTEGER, pg_id INTEGER)",

	/* ---- code tables (text of the integer codes) ---- */
	"CREATE TABLE IF NOT EXISTS category_codes("
	" code INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
	"INSERT OR IGNORE INTO category_codes VALUES"
	" (0,'fwd_computation'),(1,'fwd_communication'),(2,'bwd_computation'),"
	" (3,'bwd_communication'),(4,'pp_communication'),(5,'dp_communication'),"
	" (6,'optimizer_computation'),(7,'memory'),(8,'other'),"
	" (9,'computation'),(10,'communication'),"
	" (11,'bwd_computation_recompute'),(12,'bwd_communication_recompute')",
	"CREATE TABLE IF NOT EXISTS phase_codes("
	" code INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
	"INSERT OR IGNORE INTO phase_codes VALUES"
	" (1,'fwd'),(2,'bwd'),(3,'pp'),(4,'dp'),(5,'opt')",

	/* ---- ppbatch: the stable views (docs/contracts.md §3) ---- */
	"CREATE VIEW IF NOT EXISTS ranks AS SELECT"
	" t.iteration AS iteration, t.folder AS folder, t.rank AS rank,"
	" t.path AS path, t.bytes AS bytes,"
	" CASE t.status WHEN 0 THEN 'ok' WHEN 1 THEN 'partial' ELSE 'failed' END"
	"  AS status,"
	" t.error AS error,"
	" CASE t.mode WHEN 0 THEN 'megatron' WHEN 1 THEN 'generic' END AS mode,"
	" t.window_start_ns AS window_start_ns, t.window_end_ns AS window_end_ns,"
	" t.gpu_busy_ns AS gpu_busy_ns, t.idle_ns AS idle_ns,"
	" t.bubble_ns AS bubble_ns, t.comp_busy_ns AS comp_busy_ns,"
	" t.comm_busy_ns AS comm_busy_ns, t.overlap_ns AS overlap_ns,"
	" t.coverage AS coverage"
	" FROM traces t",

	"CREATE VIEW IF NOT EXISTS category_stats AS SELECT"
	" t.iteration AS iteration, t.rank AS rank, c.name AS category,"
	" s.kernels AS kernels, s.sum_ns AS sum_ns, s.busy_ns AS busy_ns"
	" FROM traces t JOIN category_t s ON s.trace_id = t.id"
	" JOIN category_codes c ON c.code = s.category",

	"CREATE VIEW IF NOT EXISTS steps AS SELECT"
	" t.iteration AS iteration, t.rank AS rank, p.name AS phase,"
	" s.seq AS seq, s.cpu_start_ns AS cpu_start_ns,"
	" s.cpu_end_ns AS cpu_end_ns, s.start_ns AS start_ns,"
	" s.end_ns AS end_ns,"
	" CASE WHEN s.start_ns IS NULL THEN 0 ELSE s.end_ns - s.start_ns END"
	"  AS wall_ns,"
	" s.comp_ns AS comp_ns, s.comm_ns AS comm_ns,"
	" s.overlap_ns AS overlap_ns, s.kernels AS kernels"
	" FROM traces t JOIN step_t s ON s.trace_id = t.id"
	" JOIN phase_codes p ON p.code = s.phase",

	/* Code and name lookups are scalar subqueries so that the planner
	 * keeps traces outside and one rowid range of kernel_t inside. */
	"CREATE VIEW IF NOT EXISTS kernels AS SELECT"
	" t.iteration AS iteration, t.rank AS rank,"
	" (SELECT name FROM category_codes WHERE code = (k.code & 15)) AS category,"
	" CASE (k.code >> 4) & 3 WHEN 0 THEN 'comp' WHEN 1 THEN 'comm'"
	"  ELSE 'mem' END AS type,"
	" (k.code >> 6) & 1 AS recompute,"
	" (SELECT name FROM phase_codes WHERE code = (k.code >> 7)) AS phase,"
	" k.seq AS seq,"
	" (SELECT name FROM names WHERE id = k.name_id) AS name,"
	" k.stream AS stream,"
	" t.window_start_ns + k.start AS start_ns, k.dur AS dur_ns,"
	" k.correlation AS correlation,"
	" (SELECT NULLIF(descr, '') FROM pgroups WHERE id = k.pg_id) AS pg_desc,"
	" (SELECT NULLIF(ranks, '') FROM pgroups WHERE id = k.pg_id) AS pg_ranks"
	" FROM traces t"
	" CROSS JOIN kernel_t k"
	" ON k.rowid >= (t.id << 32) AND k.rowid < ((t.id + 1) << 32)",

	/* ==== ppagg section: pp_groups, pipelines, stragglers ====
	 * Owned by the ppagg module (issue 5). Add its tables and views here;
	 * keep every statement idempotent (IF NOT EXISTS) and bump
	 * SCHEMA_VERSION when an existing table changes shape. */
	"CREATE TABLE IF NOT EXISTS agg_pp_group("
	" iteration INTEGER NOT NULL, pp_group INTEGER NOT NULL,"
	" stage INTEGER NOT NULL, rank INTEGER NOT NULL,"
	" complete INTEGER NOT NULL,"     /* 1 when every rank of the group is ok */
	" group_window_start_ns INTEGER, group_window_end_ns INTEGER,"
	" group_idle_ns INTEGER, group_bubble_ns INTEGER," /* NULL: rank missing */
	" PRIMARY KEY(iteration, pp_group, stage)) WITHOUT ROWID",

	"CREATE TABLE IF NOT EXISTS agg_pipeline("
	" iteration INTEGER NOT NULL, pp_group INTEGER NOT NULL,"
	" measured_ns INTEGER NOT NULL, ideal_ns INTEGER, gap_ns INTEGER,"
	" bubble_ratio REAL NOT NULL,"
	" PRIMARY KEY(iteration, pp_group)) WITHOUT ROWID",

	"CREATE TABLE IF NOT EXISTS agg_straggler("
	" iteration INTEGER NOT NULL, rank INTEGER NOT NULL,"
	" group_kind TEXT NOT NULL, grp INTEGER NOT NULL, metric TEXT NOT NULL,"
	" value_ns INTEGER NOT NULL, median_ns INTEGER NOT NULL,"
	" excess REAL NOT NULL,"
	" PRIMARY KEY(iteration, rank, metric)) WITHOUT ROWID",

	"CREATE VIEW IF NOT EXISTS pp_groups AS SELECT"
	" iteration, pp_group, stage, rank, complete, group_window_start_ns,"
	" group_window_end_ns, group_idle_ns, group_bubble_ns FROM agg_pp_group",

	"CREATE VIEW IF NOT EXISTS pipelines AS SELECT"
	" iteration, pp_group, measured_ns, ideal_ns, gap_ns, bubble_ratio"
	" FROM agg_pipeline",

	"CREATE VIEW IF NOT EXISTS stragglers AS SELECT"
	" iteration, rank, group_kind, grp AS \"group\", metric, value_ns,"
	" median_ns, excess FROM agg_straggler",

	/* ==== end of ppagg section ==== */
};

/* Migrations. Every statement of schema_sql is idempotent, so a file of an
 * older version is brought up to date by running schema_sql again, after
 * the steps (none so far) that change existing tables:
 *   1 -> 2: ppagg's tables and views added (created by schema_sql).
 * A step that alters a table goes into migrate_from() under its version. */
static int migrate_from(sqlite3 *db, int version, char *err, size_t errlen)
{
	(void)db;
	(void)err;
	(void)errlen;
	switch (version) {
	case 1:
		return 0;
	default:
		return 0;
	}
}

/* A literal (SQL is never formatted); keep it equal to SCHEMA_VERSION. */
#define SET_VERSION_SQL "PRAGMA user_version = 2"
_Static_assert(SCHEMA_VERSION == 2, "update SET_VERSION_SQL with SCHEMA_VERSION");

static int exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errlen, "%s", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return PP_EDB;
	}
	return 0;
}

/* Runs a constant query that yields one integer into *v. */
static int query_int(sqlite3 *db, const char *sql, int *v, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
		return PP_EDB;
	}
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int(st, 0);
	else
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : PP_EDB;
}

static int user_version(sqlite3 *db, int *v, char *err, size_t errlen)
{
	return query_int(db, "PRAGMA user_version", v, err, errlen);
}

/* Whether the file holds tables that pptrace did not create. */
static int foreign_tables(sqlite3 *db, int *n, char *err, size_t errlen)
{
	return query_int(db, "SELECT count(*) FROM sqlite_master WHERE "
			 "type = 'table' AND name NOT LIKE 'sqlite_%'", n, err, errlen);
}

int schema_check(sqlite3 *db, char *err, size_t errlen)
{
	int v = 0;
	if (user_version(db, &v, err, errlen))
		return PP_EDB;
	if (v != SCHEMA_VERSION) {
		snprintf(err, errlen, "schema version %d, expected %d", v,
			 SCHEMA_VERSION);
		return PP_EDB;
	}
	return 0;
}

int schema_apply(sqlite3 *db, char *err, size_t errlen)
{
	int v = 0, ntables = 0, rc;
	if (user_version(db, &v, err, errlen))
		return PP_EDB;
	if (v == SCHEMA_VERSION)
		return 0;
	if ((rc = exec(db, "BEGIN IMMEDIATE", err, errlen)))
		return rc;
	/* Re-read under the write lock: another process may have won. */
	if ((rc = user_version(db, &v, err, errlen)))
		goto out_rollback;
	if (v == SCHEMA_VERSION)
		return exec(db, "COMMIT", err, errlen);
	if (v > SCHEMA_VERSION) {
		snprintf(err, errlen,
			 "schema version %d is newer than this pptrace (%d): "
			 "use a newer pptrace or a new database file",
			 v, SCHEMA_VERSION);
		rc = PP_EDB;
		goto out_rollback;
	}
	if (v == 0) {
		if ((rc = foreign_tables(db, &ntables, err, errlen)))
			goto out_rollback;
		if (ntables) {
			snprintf(err, errlen, "not a pptrace database "
				 "(user_version 0 but %d tables)", ntables);
			rc = PP_EDB;
			goto out_rollback;
		}
	} else {
		for (int from = v; from < SCHEMA_VERSION; from++)
			if ((rc = migrate_from(db, from, err, errlen)))
				goto out_rollback;
	}
	for (size_t i = 0; i < sizeof(schema_sql) / sizeof(schema_sql[0]); i++)
		if ((rc = exec(db, schema_sql[i], err, errlen)))
			goto out_rollback;
	if ((rc = exec(db, SET_VERSION_SQL, err, errlen)))
		goto out_rollback;
	return exec(db, "COMMIT", err, errlen);

out_rollback:
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
