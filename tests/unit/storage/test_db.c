/* Unit tests for storage/: schema versioning and migration (from a real
 * version-2 schema), storing traces, the views, replacement, sticky errors,
 * failed traces, adoption of legacy rows, rank resolution, ops and op-trace
 * imports (bulk transactions, replacement, the ops view's coordinates), the
 * why analysis' reads and rows, the advisor's rows and the analyses' writer
 * (a failed write keeps the rows before it). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "schema_v2.h"
#include "model/optype.h"
#include "model/rank_result.h"
#include "storage/db.h"
#include "storage/db_advice.h"
#include "storage/db_agg.h"
#include "storage/db_import.h"
#include "storage/db_why.h"
#include "storage/schema.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

static char *tmp_db(void)
{
	char dir[64];
	assert_int_equal(unit_mkdtemp(dir, sizeof(dir), "test-db"), 0);
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s/t.db", dir);
	return strbuf_detach(&sb, NULL);
}

static void rm_db(char *path)
{
	*strrchr(path, '/') = '\0';
	assert_int_equal(unit_rm_rf(path), 0);
	free(path);
}

/* The database at path opened with flags; asserts that it opens (printing
 * why when it does not). */
static struct db *open_db(const char *path, unsigned flags)
{
	char err[512];
	struct db *db = unit_db_open(path, flags, err, sizeof(err));
	if (!db)
		print_message("%s\n", err);
	assert_non_null(db);
	return db;
}

/* Closes db and removes its folder. */
static void drop_db(struct db *db, char *path)
{
	db_close(db);
	rm_db(path);
}

/* The fixture of a test on a new database (db_setup(), db_teardown()): a
 * file in a folder of its own, opened before the test; closed and removed
 * with its folder after it, also after a failed one. */
struct fx {
	char *path;
	struct db *db;
};

static int db_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	f->path = tmp_db();
	f->db = open_db(f->path, 0);
	*state = f;
	return 0;
}

static int db_teardown(void **state)
{
	struct fx *f = *state;
	drop_db(f->db, f->path);
	free(f);
	return 0;
}

#define DB_TEST(test) cmocka_unit_test_setup_teardown(test, db_setup, db_teardown)

/* The fixture's database. */
static struct db *fx_db(void **state)
{
	return ((struct fx *)*state)->db;
}

/* Closes the fixture's database and opens its file again with flags. */
static struct db *fx_reopen(struct fx *f, unsigned flags)
{
	db_close(f->db);
	f->db = NULL;
	return f->db = open_db(f->path, flags);
}

static char *rows(struct db *db, const char *sql)
{
	return unit_rows(db_sqlite(db), sql);
}

static void assert_rows(struct db *db, const char *sql, const char *expect)
{
	unit_assert_rows(db_sqlite(db), sql, expect);
}

static struct db_trace sample_trace(const char *path, int64_t rank)
{
	struct db_trace t = {
		.path = path,
		.folder = "iteration_15",
		.has_iteration = true,
		.iteration = 15,
		.has_header_rank = true,
		.header_rank = rank,
		.bytes = 1000,
		.mtime_ns = 5,
		.status = DB_STATUS_OK,
		.has_metrics = true,
		.mode = DB_MODE_MEGATRON,
		.window_start_ns = 1700000000000000000,
		.window_end_ns = 1700000000000001000,
		.gpu_busy_ns = 600,
		.idle_ns = 400,
		.bubble_ns = 450,
		.comp_busy_ns = 500,
		.comm_busy_ns = 200,
		.overlap_ns = 100,
		.coverage = 0.75,
		.kernels = 2,
	};
	return t;
}

static void store_sample(struct db *db, const char *path, int64_t rank)
{
	struct db_trace t = sample_trace(path, rank);
	static const struct rr_step fwd0 = { .phase = RR_FWD, .seq = 0 };
	const struct rr_kernel r1 = {
		.category = RR_FWD_COMP,
		.type = RR_COMP,
		.step = 0,
		.stream = 7,
		.start_ns = 1700000000000000000,
		.dur_ns = 500,
		.has_correlation = true,
		.correlation = 42,
	};
	const struct rr_kernel r2 = {
		.category = RR_DP_COMM,
		.type = RR_COMM,
		.recompute = false,
		.step = -1,
		.stream = 9,
		.start_ns = 1700000000000000400,
		.dur_ns = 200,
		.coll = RR_COLL_ALLREDUCE,
	};
	struct db_kernel k1 = { .k = &r1, .step = &fwd0, .name = "sm90_gemm<128>", .name_len = 14 };
	struct db_kernel k2 = { .k = &r2,
				.name = "ncclDevKernel_AllReduce",
				.name_len = 23,
				.pg_desc = "DATA_PARALLEL_GROUP",
				.pg_ranks = "[0, 8]" };
	struct db_step s = { .phase = RR_FWD,
			     .seq = 0,
			     .has_cpu = true,
			     .cpu_start_ns = 10,
			     .cpu_end_ns = 20,
			     .kernels = 1,
			     .start_ns = 1700000000000000000,
			     .end_ns = 1700000000000000500,
			     .comp_ns = 500,
			     .chunk = -1,
			     .mbs = 0 };
	struct db_step empty = { .phase = RR_BWD, .seq = 0, .chunk = -1, .mbs = -1 };
	struct db_category c = { RR_FWD_COMP, 1, 500, 500 };
	struct db_annotation an = { 0, 4, 2, 700, 500, 200, 100 };
	assert_int_equal(db_trace_begin(db, &t), 0);
	assert_int_equal(db_trace_add_kernel(db, &k1), 0);
	assert_int_equal(db_trace_add_kernel(db, &k2), 0);
	assert_int_equal(db_trace_add_step(db, &s), 0);
	assert_int_equal(db_trace_add_step(db, &empty), 0);
	assert_int_equal(db_trace_add_category(db, &c), 0);
	assert_int_equal(db_intern_name(db, "attn(F)", 7, &an.name_id), 0);
	assert_int_equal(db_trace_add_annotation(db, &an), 0);
	assert_int_equal(db_trace_commit(db), 0);
}

static void test_schema_created_and_versioned(void **state)
{
	struct fx *f = *state;
	struct db *db = f->db;
	assert_rows(db, "PRAGMA user_version", "7\n");
	assert_rows(db, "PRAGMA journal_mode", "wal\n");
	/* Checkpoints at 256 pages; off while a thread runs them. */
	assert_rows(db, "PRAGMA wal_autocheckpoint", "256\n");
	db_auto_checkpoint(db, false);
	assert_rows(db, "PRAGMA wal_autocheckpoint", "0\n");
	db_auto_checkpoint(db, true);
	assert_rows(db, "PRAGMA wal_autocheckpoint", "256\n");
	/* Created without syncs, but what follows is written with NORMAL (1). */
	assert_rows(db, "PRAGMA synchronous", "1\n");
	assert_rows(db,
		    "SELECT name FROM sqlite_master WHERE type = 'view' "
		    "ORDER BY name",
		    "advice\nadvice_memory\nadvice_summary\nannotations\ncategory_stats\n"
		    "collective_ranks\ncollectives\ncompare_categories\ncompare_groups\n"
		    "compare_optypes\ncompare_ranks\ncompare_summary\ncomparison\n"
		    "critical_path\nimports\nkernels\nops\np2p\np2p_bubbles\np2p_hops\n"
		    "p2p_kernels\npipelines\npp_groups\nrank_clocks\nrank_conflicts\n"
		    "ranks\nreadings\nsteps\nstragglers\nwgrad_steps\nwhatif\n"
		    "whatif_optypes\nwhatif_steps\nwhatif_workers\nwhy\n");
	assert_rows(db, "SELECT count(*), min(name), max(name) FROM optype_codes",
		    "14|backward-compute|separate-grads-all-reduce\n");
	/* Reopening an up-to-date file changes nothing. */
	db = fx_reopen(f, 0);
	assert_rows(db, "SELECT count(*) FROM category_codes", "13\n");
	assert_rows(db, "PRAGMA synchronous", "1\n");
	/* A worker's connection keeps a trace's pages in memory up to 1535
	 * (0 would mean never spill at all). */
	db = fx_reopen(f, DB_NO_CHECKPOINT);
	assert_rows(db, "PRAGMA cache_spill", "1535\n");
}

/* A file made with the version-2 schema (schema_v2.h), holding one trace
 * as pptrace stored it then (canonical path, rank from the header). Version
 * 1: without ppagg's tables and views. Version 3: version 2 with the
 * identity columns of 3 (what version 3 added to existing tables); its
 * views are version 2's, which the upgrade replaces anyway. */
static char *make_old(int version)
{
	char *path = tmp_db();
	sqlite3 *c;
	assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
	assert_int_equal(sqlite3_exec(c, schema_v2_sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(
			c,
			"INSERT INTO names(id, name) VALUES (1, 'gemm');"
			"INSERT INTO traces(id, path, folder, iteration, rank, bytes, mtime_ns,"
			" status, mode, window_start_ns, window_end_ns, kernels)"
			" VALUES (1, '/real/iteration_3/rank_0000.json', 'iteration_3', 3, 4,"
			" 10, 5, 0, 0, 1000, 2000, 1);"
			"INSERT INTO kernel_t(rowid, code, seq, name_id, start, dur)"
			" VALUES (1 << 32, 128, 0, 1, 0, 100);",
			NULL, NULL, NULL),
		SQLITE_OK);
	if (version == 3)
		assert_int_equal(sqlite3_exec(c,
					      "ALTER TABLE traces ADD COLUMN file TEXT;"
					      "ALTER TABLE traces ADD COLUMN header_rank INTEGER;"
					      "ALTER TABLE traces ADD COLUMN name_rank INTEGER;"
					      "ALTER TABLE traces ADD COLUMN rank_note TEXT;"
					      "UPDATE traces SET header_rank = rank, file = path;",
					      NULL, NULL, NULL),
				 SQLITE_OK);
	if (version == 1)
		assert_int_equal(
			sqlite3_exec(
				c,
				"DROP VIEW pp_groups; DROP VIEW pipelines; DROP VIEW stragglers;"
				"DROP TABLE agg_pp_group; DROP TABLE agg_pipeline;"
				"DROP TABLE agg_straggler",
				NULL, NULL, NULL),
			SQLITE_OK);
	char pragma[64];
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", version);
	assert_int_equal(sqlite3_exec(c, pragma, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(c);
	return path;
}

static void collect_legacy(void *ctx, const struct db_stored *s)
{
	strbuf_addf(ctx, "%s|%s|%d\n", s->path, s->folder, s->legacy);
}

/* Versions 1 and 2 are brought to 4 in place: the old row keeps its data,
 * is marked legacy (file NULL), its rank counts as its header's; version 3
 * keeps its identity; the views are the current ones, the ops and what-if
 * tables there and empty. */
static void test_old_versions_are_migrated(void **state)
{
	(void)state;
	for (int version = 1; version <= 3; version++) {
		char *path = make_old(version);
		struct db *db = open_db(path, 0);
		assert_rows(db, "PRAGMA user_version", "7\n");
		bool legacy = version < 3;
		assert_rows(db,
			    "SELECT path, file IS NULL, header_rank, name_rank, rank, rank_note"
			    " FROM traces",
			    legacy ? "/real/iteration_3/rank_0000.json|1|4|NULL|4|NULL\n"
				   : "/real/iteration_3/rank_0000.json|0|4|NULL|4|NULL\n");
		assert_rows(
			db,
			"SELECT (SELECT count(*) FROM ops), (SELECT count(*) FROM whatif),"
			" (SELECT count(*) FROM whatif_workers), (SELECT count(*) FROM optype_codes)",
			"0|0|0|14\n");
		assert_rows(db,
			    "SELECT iteration, rank, category, phase, name, dur_ns"
			    " FROM kernels",
			    "3|4|fwd_computation|fwd|gemm|100\n");
		assert_rows(db, "SELECT count(*) FROM pp_groups", "0\n");
		assert_rows(db, "SELECT count(*) FROM rank_conflicts", "0\n");
		struct strbuf sb = STRBUF_INIT;
		assert_int_equal(db_trace_each(db, collect_legacy, &sb), 0);
		assert_string_equal(sb.buf,
				    legacy ? "/real/iteration_3/rank_0000.json|iteration_3|1\n"
					   : "/real/iteration_3/rank_0000.json|iteration_3|0\n");
		strbuf_release(&sb);
		/* The ranks of a migrated file resolve to what they were. */
		assert_int_equal(db_resolve_ranks(db), 0);
		assert_rows(db, "SELECT rank FROM ranks", "4\n");
		db_close(db);
		rm_db(path);
	}
}

/* A legacy row takes the identity it was found at; the rank it had stays
 * its header's, the file name's becomes known. */
static void test_legacy_row_adopted(void **state)
{
	char *path = make_old(2);
	struct db *db = open_db(path, 0);
	struct db_trace t = {
		.path = "/base/iteration_3/rank_0007.json",
		.file = "/real/iteration_3/rank_0000.json",
		.has_name_rank = true,
		.name_rank = 7,
	};
	(void)state;
	assert_int_equal(db_adopt_begin(db), 0);
	assert_int_equal(db_trace_adopt(db, "/real/iteration_3/rank_0000.json", &t), 0);
	assert_int_equal(db_adopt_commit(db), 0);
	assert_rows(db, "SELECT path, file, header_rank, name_rank, rank FROM traces",
		    "/base/iteration_3/rank_0007.json|/real/iteration_3/rank_0000.json|"
		    "4|7|4\n");
	assert_rows(db, "SELECT count(*) FROM kernels WHERE rank = 4", "1\n");
	drop_db(db, path);
}

/* An upgraded file gets the current view definitions (a CREATE VIEW IF NOT
 * EXISTS would keep the old ones) and code tables written from
 * model/rank_result.h's names. */
static void test_views_recreated_on_version_change(void **state)
{
	char *fresh = tmp_db(), *path = make_old(2);
	struct db *db = open_db(fresh, 0);
	(void)state;
	char *want = rows(db, "SELECT name, sql FROM sqlite_master WHERE type = 'view' "
			      "ORDER BY name");
	db_close(db);
	/* An older file: other view bodies, a stale code table. */
	sqlite3 *c;
	assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
	assert_int_equal(sqlite3_exec(c,
				      "DROP VIEW kernels; CREATE VIEW kernels AS SELECT 1 AS old;"
				      "UPDATE category_codes SET name = 'stale' WHERE code = 0;"
				      "DELETE FROM phase_codes WHERE code = 5",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(c);
	db = open_db(path, 0);
	char *got = rows(db, "SELECT name, sql FROM sqlite_master WHERE type = 'view' "
			     "ORDER BY name");
	assert_string_equal(got, want);
	for (int k = 0; k < RR_NCATEGORIES; k++) {
		struct strbuf q = STRBUF_INIT, e = STRBUF_INIT;
		strbuf_addf(&q, "SELECT name FROM category_codes WHERE code = %d", k);
		strbuf_addf(&e, "%s\n", rr_category_name(k));
		assert_rows(db, q.buf, e.buf);
		strbuf_release(&q);
		strbuf_release(&e);
	}
	assert_rows(db,
		    "SELECT group_concat(code || '=' || name, ' ') FROM "
		    "(SELECT * FROM phase_codes ORDER BY code)",
		    "1=fwd 2=bwd 3=pp 4=dp 5=opt\n");
	free(want);
	free(got);
	db_close(db);
	rm_db(path);
	rm_db(fresh);
}

/* A file of this version whose views another build of it wrote (here the
 * kernels view's names by a look-up per row, as they were) gets this
 * build's views when a writer opens it, its rows unchanged; a reader
 * leaves it as it is. */
static void test_views_recreated_within_a_version(void **state)
{
	struct fx *f = *state;
	struct db *db = f->db;
	store_sample(db, "/x/iteration_15/rank_3.json", 3);
	char *want = rows(db, "SELECT name, sql FROM sqlite_master WHERE type = 'view' "
			      "ORDER BY name");
	char *kernels = rows(db, "SELECT * FROM kernels");
	assert_int_equal(
		sqlite3_exec(db_sqlite(db),
			     "DROP VIEW kernels; CREATE VIEW kernels AS SELECT"
			     " t.iteration AS iteration, t.rank AS rank,"
			     " (SELECT name FROM category_codes WHERE code = (k.code & 15))"
			     " AS category, 'old' AS type FROM traces t CROSS JOIN kernel_t k"
			     " ON k.rowid >= (t.id << 32) AND k.rowid < ((t.id + 1) << 32)",
			     NULL, NULL, NULL),
		SQLITE_OK);
	db = fx_reopen(f, DB_READONLY);
	assert_rows(db, "SELECT DISTINCT type FROM kernels", "old\n");
	db_close(db);
	f->db = NULL;
	/* A connection that may only read the file (SQLite opens a file of
	 * mode 0444 so for a writer) takes it as it is. */
	sqlite3 *c;
	assert_int_equal(sqlite3_open_v2(f->path, &c, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	struct strbuf serr = STRBUF_INIT;
	assert_int_equal(schema_apply(c, &serr), 0);
	strbuf_release(&serr);
	sqlite3_close(c);
	db = fx_reopen(f, DB_READONLY);
	assert_rows(db, "SELECT DISTINCT type FROM kernels", "old\n");
	db = fx_reopen(f, 0);
	assert_rows(db, "PRAGMA user_version", "7\n");
	char *got = rows(db, "SELECT name, sql FROM sqlite_master WHERE type = 'view' "
			     "ORDER BY name");
	assert_string_equal(got, want);
	assert_rows(db, "SELECT * FROM kernels", kernels);
	free(got);
	free(kernels);
	free(want);
}

/* The kernels view names every code of kernel_t.code (category, phase,
 * collective: 14 bits) as the code tables do, NULL where they have no row:
 * its CASE expressions and model/'s names are one vocabulary. */
static void test_kernels_view_names_every_code(void **state)
{
	struct db *db = fx_db(state);
	assert_int_equal(sqlite3_exec(db_sqlite(db),
				      "INSERT INTO names(id, name) VALUES (1, 'k');"
				      "INSERT INTO traces(id, path, iteration, rank, status,"
				      " window_start_ns) VALUES (1, '/t', 1, 0, 0, 0);"
				      "WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1"
				      " FROM c WHERE x < 16383) INSERT INTO kernel_t(rowid, code,"
				      " name_id, start, dur, correlation) SELECT (1 << 32) + x, x,"
				      " 1, 0, 1, x FROM c",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	assert_rows(db,
		    "SELECT count(*), count(category), count(phase), count(collective)"
		    " FROM kernels WHERE category IS NOT"
		    " (SELECT name FROM category_codes WHERE code = correlation & 15)"
		    " OR phase IS NOT (SELECT name FROM phase_codes"
		    "  WHERE code = (correlation >> 7) & 7)"
		    " OR collective IS NOT (SELECT name FROM collective_codes"
		    "  WHERE code = (correlation >> 10) & 15)",
		    "0|0|0|0\n");
	/* Every name occurs: 13 categories, 5 phases, 13 collectives. */
	assert_rows(db,
		    "SELECT count(DISTINCT category), count(DISTINCT phase),"
		    " count(DISTINCT collective), count(*) FROM kernels",
		    "13|5|13|16384\n");
}

/* Stores a trace without kernels: identity, iteration (or none), claims. */
static void store_claim(struct db *db, const char *path, const char *folder, int64_t iteration,
			int64_t header, int64_t name)
{
	struct db_trace t = {
		.path = path,
		.folder = folder,
		.has_iteration = iteration >= 0,
		.iteration = iteration,
		.has_header_rank = header >= 0,
		.header_rank = header,
		.has_name_rank = name >= 0,
		.name_rank = name,
		.status = DB_STATUS_OK,
	};
	assert_int_equal(db_trace_store_empty(db, &t), 0);
}

static void collect_conflict(void *ctx, const struct db_conflict *c)
{
	strbuf_addf(ctx, "%lld|%s|%lld|%s|%lld\n",
		    c->has_iteration ? (long long)c->iteration : -1LL, c->folder,
		    (long long)c->rank, c->path, (long long)c->ntraces);
}

static void collect_shared(void *ctx, const struct db_shared_rank *r)
{
	strbuf_addf(ctx, "%lld|%lld|%lld|%s|%s\n", (long long)r->iteration,
		    (long long)r->header_rank, (long long)r->ntraces, r->first, r->last);
}

/* docs/contracts.md §8: a header rank shared in an iteration yields to the
 * file names; what is still shared is a conflict; other iterations, and
 * folders without a number, are apart. */
static void test_ranks_resolved(void **state)
{
	struct db *db = fx_db(state);
	struct strbuf sb = STRBUF_INIT;
	store_claim(db, "/i3/a", "iteration_3", 3, 0, 0);
	store_claim(db, "/i3/b", "iteration_3", 3, 0, 1);
	store_claim(db, "/i3/c", "iteration_3", 3, 0, -1); /* no name rank */
	store_claim(db, "/i3/d", "iteration_3", 3, 5, 2);  /* own header rank */
	store_claim(db, "/i3/e", "iteration_3", 3, -1, 6); /* failed: no header */
	store_claim(db, "/i4/a", "iteration_4", 4, 0, 7);  /* another iteration */
	store_claim(db, "/x/a", "x", -1, 1, 3);            /* folders: no number */
	store_claim(db, "/x/b", "x", -1, 1, 4);
	store_claim(db, "/y/a", "y", -1, 1, 9);
	/* Written by another tool: a rank, no claims. It keeps its rank. */
	assert_int_equal(sqlite3_exec(db_sqlite(db),
				      "INSERT INTO traces(path, folder,"
				      " iteration, rank, status) VALUES ('/z/a', 'z', 9, 2, 0)",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(db_resolve_ranks(db), 0);
	assert_rows(db, "SELECT path, rank, rank_note IS NOT NULL FROM traces ORDER BY path",
		    "/i3/a|0|1\n/i3/b|1|1\n/i3/c|0|0\n/i3/d|5|0\n/i3/e|6|0\n"
		    "/i4/a|0|0\n/x/a|3|1\n/x/b|4|1\n/y/a|1|0\n/z/a|2|0\n");
	assert_rows(db, "SELECT rank_note FROM traces WHERE path = '/i3/b'",
		    "header rank 0 is shared with other traces of the iteration: rank from "
		    "the file name\n");
	assert_int_equal(db_rank_conflicts(db, collect_conflict, &sb), 0);
	assert_string_equal(sb.buf, "3|iteration_3|0|/i3/a|2\n3|iteration_3|0|/i3/c|2\n");
	strbuf_reset(&sb);
	assert_int_equal(db_shared_header_ranks(db, collect_shared, &sb), 0);
	assert_string_equal(sb.buf, "0|1|2|/x/a|/x/b\n3|0|3|/i3/a|/i3/c\n");
	/* Resolving again writes nothing; a trace leaving the iteration
	 * gives the header rank back. */
	int before = sqlite3_total_changes(db_sqlite(db));
	assert_int_equal(db_resolve_ranks(db), 0);
	assert_int_equal(sqlite3_total_changes(db_sqlite(db)), before);
	assert_int_equal(sqlite3_exec(db_sqlite(db),
				      "DELETE FROM traces WHERE path IN "
				      "('/i3/a', '/i3/c', '/x/b')",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(db_resolve_ranks(db), 0);
	assert_rows(db,
		    "SELECT path, rank, rank_note FROM traces WHERE path IN "
		    "('/i3/b', '/x/a') ORDER BY path",
		    "/i3/b|0|NULL\n/x/a|1|NULL\n");
	strbuf_release(&sb);
}

static void test_newer_or_foreign_file_refused(void **state)
{
	(void)state;
	char err[512], *path = tmp_db();
	sqlite3 *c;
	assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
	assert_int_equal(sqlite3_exec(c, "CREATE TABLE x(a)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(c);
	assert_null(unit_db_open(path, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "not a pptrace database"));
	assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(c, "DROP TABLE x; PRAGMA user_version = 99", NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(c);
	assert_null(unit_db_open(path, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "schema version 99 is newer"));
	rm_db(path);
}

static void test_views_give_contract_values(void **state)
{
	struct db *db = fx_db(state);
	store_sample(db, "/x/iteration_15/rank_3.json", 3);
	assert_rows(db, "SELECT * FROM ranks",
		    "15|iteration_15|3|/x/iteration_15/rank_3.json|1000|ok|NULL|"
		    "megatron|1700000000000000000|1700000000000001000|600|400|450|"
		    "500|200|100|0.75\n");
	assert_rows(db, "SELECT * FROM kernels ORDER BY start_ns",
		    "15|3|fwd_computation|comp|0|fwd|0|sm90_gemm<128>|7|"
		    "1700000000000000000|500|42|NULL|NULL|NULL\n"
		    "15|3|dp_communication|comm|0|NULL|NULL|ncclDevKernel_AllReduce|9|"
		    "1700000000000000400|200|NULL|DATA_PARALLEL_GROUP|[0, 8]|all_reduce\n");
	assert_rows(db, "SELECT * FROM annotations", "15|3|attn(F)|4|700|500|200|100|2\n");
	assert_rows(db, "SELECT * FROM steps ORDER BY phase",
		    "15|3|bwd|0|NULL|NULL|NULL|NULL|0|0|0|0|0\n"
		    "15|3|fwd|0|10|20|1700000000000000000|1700000000000000500|"
		    "500|500|0|0|1\n");
	assert_rows(db, "SELECT * FROM category_stats", "15|3|fwd_computation|1|500|500\n");
}

static void test_restoring_a_path_replaces_it(void **state)
{
	struct db *db = fx_db(state);
	store_sample(db, "/a.json", 0);
	store_sample(db, "/b.json", 1);
	store_sample(db, "/a.json", 0);
	assert_rows(db, "SELECT rank, count(*) FROM kernels GROUP BY rank", "0|2\n1|2\n");
	assert_rows(db, "SELECT count(*) FROM traces", "2\n");
	assert_rows(db, "SELECT count(*) FROM names", "3\n");
	assert_rows(db, "SELECT rank, count(*) FROM annotations GROUP BY rank", "0|1\n1|1\n");
	assert_rows(db, "SELECT count(*) FROM steps", "4\n");
	assert_rows(db, "SELECT path, bytes, mtime_ns FROM traces ORDER BY path",
		    "/a.json|1000|5\n/b.json|1000|5\n");
}

static void test_errors_are_sticky_and_roll_back(void **state)
{
	struct db *db = fx_db(state);
	struct db_step s = { .phase = RR_FWD, .seq = 0, .chunk = -1, .mbs = -1 };
	struct db_trace t = sample_trace("/dup.json", 0);
	struct db_category c = { RR_OTHER, 1, 1, 1 };
	assert_int_equal(db_trace_add_step(db, &s), PP_EINVAL); /* no txn */
	db_trace_rollback(db);
	assert_int_equal(db_trace_begin(db, &t), 0);
	assert_int_equal(db_trace_add_step(db, &s), 0);
	assert_int_equal(db_trace_add_step(db, &s), PP_EDB);     /* same key */
	assert_int_equal(db_trace_add_category(db, &c), PP_EDB); /* sticky */
	assert_int_equal(db_trace_commit(db), PP_EDB);
	assert_non_null(strstr(db_errmsg(db), "cannot insert step"));
	assert_rows(db, "SELECT count(*) FROM traces", "0\n");
	/* The handle works again. */
	store_sample(db, "/ok.json", 1);
	assert_rows(db, "SELECT path FROM ranks", "/ok.json\n");
}

static void test_failed_trace_has_null_metrics(void **state)
{
	struct db *db = fx_db(state);
	struct db_trace t = {
		.path = "/iteration_2/rank_5.json",
		.folder = "iteration_2",
		.has_iteration = true,
		.iteration = 2,
		.has_name_rank = true,
		.name_rank = 5,
		.bytes = 77,
		.status = DB_STATUS_FAILED,
		.fail_kind = DB_FAIL_INPUT,
		.error = "byte 70: unexpected end",
	};
	assert_int_equal(db_trace_store_empty(db, &t), 0);
	assert_rows(db, "SELECT * FROM ranks",
		    "2|iteration_2|5|/iteration_2/rank_5.json|77|failed|"
		    "byte 70: unexpected end|NULL|NULL|NULL|NULL|NULL|NULL|NULL|"
		    "NULL|NULL|NULL\n");
}

static void test_kernels_view_uses_rowid_ranges(void **state)
{
	struct db *db = fx_db(state);
	char *plan = rows(db, "EXPLAIN QUERY PLAN SELECT * FROM kernels WHERE rank = 3");
	assert_non_null(strstr(plan, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"));
	free(plan);
}

/* Stores n kernels k = 0..n-1 (start k, dur k + 1, correlation k, stream
 * NULL for odd k) as one trace. */
static void store_many(struct db *db, const char *path, int64_t rank, int n)
{
	struct db_trace t = sample_trace(path, rank);
	t.window_start_ns = 0;
	assert_int_equal(db_trace_begin(db, &t), 0);
	for (int k = 0; k < n; k++) {
		const struct rr_kernel rk = {
			.category = RR_FWD_COMP,
			.type = RR_COMP,
			.step = -1,
			.stream = k & 1 ? -1 : 7,
			.start_ns = k,
			.dur_ns = k + 1,
			.has_correlation = true,
			.correlation = k,
		};
		struct db_kernel dk = { .k = &rk, .name = "k", .name_len = 1 };
		assert_int_equal(db_trace_add_kernel(db, &dk), 0);
	}
	assert_int_equal(db_trace_commit(db), 0);
}

/* Kernels go in batches of 256 (appended with SQLite's rowids while the
 * trace's rows are the table's last, explicit rowids otherwise, a partial
 * batch at the end), read from memory by pp_krows: every way gives the same
 * rows. */
static void test_kernel_batches(void **state)
{
	struct db *db = fx_db(state);
	const char *q = "SELECT rank, count(*), sum(start_ns), sum(dur_ns),"
			" sum(correlation), count(stream) FROM kernels GROUP BY rank";
	store_many(db, "/a", 0, 600);
	store_many(db, "/b", 1, 31);
	store_many(db, "/c", 2, 300);
	assert_rows(db, q,
		    "0|600|179700|180300|179700|300\n1|31|465|496|465|16\n"
		    "2|300|44850|45150|44850|150\n");
	/* Rows left past the last trace (a hand-made DELETE FROM traces):
	 * the next trace cannot append, and must not mix with them. */
	assert_int_equal(sqlite3_exec(db_sqlite(db),
				      "INSERT INTO kernel_t(rowid, code, name_id, start, dur)"
				      " VALUES ((9 << 32) + 5, 0, 1, 0, 0)",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	store_many(db, "/d", 3, 700);
	assert_rows(db, q,
		    "0|600|179700|180300|179700|300\n1|31|465|496|465|16\n"
		    "2|300|44850|45150|44850|150\n3|700|244650|245350|244650|350\n");
	assert_rows(db,
		    "SELECT count(*), min(rowid & 0xffffffff), max(rowid & 0xffffffff)"
		    " FROM kernel_t WHERE rowid >> 32 = 4",
		    "700|0|699\n");
	/* pp_krows reads only a buffer bound from C, and is no part of the
	 * file. */
	assert_rows(db, "SELECT count(*) FROM pp_krows(1)", "0\n");
	assert_rows(db, "SELECT count(*) FROM sqlite_master WHERE sql LIKE '%krows%'", "0\n");
}

/* Kernel i of test_kernels_at_once(): every nullable column both ways, three
 * names (and one name_id out of range), two process groups (one empty), step
 * i (phase i % 4 - 1, seq i / 4) when i % 4, else none or out of range. */
static struct rr_kernel varied_kernel(int i, int nsteps)
{
	return (struct rr_kernel){
		.category = (uint8_t)(i % RR_NCATEGORIES),
		.type = (uint8_t)(i % 3),
		.step = i % 4   ? i
			: i % 8 ? -1
				: nsteps + i,
		.recompute = i % 5 == 0,
		.stream = i % 7 ? i % 7 : -1,
		.start_ns = 1000 + 3 * i,
		.dur_ns = i % 11,
		.has_correlation = i % 6 != 0,
		.correlation = i % 6 ? 100000 + i : 0,
		.name_id = (uint32_t)(i % 4),
		.pg = i % 9 - 6, /* -6..2: none, group 0, 1, or out of range */
	};
}

/* db_trace_add_kernels() stores what db_trace_add_kernel() does kernel by
 * kernel: the same rows, names and process groups, across batches. */
static void test_kernels_at_once(void **state)
{
	struct db *db = fx_db(state);
	enum { N = 700 };
	static const char *const names[] = { "gemm", "nccl_all_reduce", "copy" };
	static const struct rr_group groups[] = {
		{ .name = "", .desc = "DATA_PARALLEL", .ranks = "[0, 1]" },
		{ .name = "", .desc = "", .ranks = "" }
	};
	struct rr_kernel *k = calloc(N, sizeof(*k));
	struct rr_step *steps = calloc(N, sizeof(*steps));
	for (int i = 0; i < N; i++) {
		k[i] = varied_kernel(i, N);
		steps[i] = (struct rr_step){ .phase = (int8_t)(i % 4 - 1), .seq = i / 4 };
	}

	struct db_trace t = sample_trace("/one", 0);
	assert_int_equal(db_trace_begin(db, &t), 0);
	for (int i = 0; i < N; i++) {
		struct db_kernel dk = { .k = &k[i] };
		if (k[i].step >= 0 && k[i].step < N)
			dk.step = &steps[k[i].step];
		if (k[i].name_id < 3) {
			dk.name = names[k[i].name_id];
			dk.name_len = strlen(dk.name);
		}
		if (k[i].pg >= 0 && k[i].pg < 2) {
			dk.pg_desc = groups[k[i].pg].desc;
			dk.pg_ranks = groups[k[i].pg].ranks;
		}
		assert_int_equal(db_trace_add_kernel(db, &dk), 0);
	}
	assert_int_equal(db_trace_commit(db), 0);

	int64_t name_ids[4], pg_ids[2];
	t = sample_trace("/all", 1);
	assert_int_equal(db_trace_begin(db, &t), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(db_intern_name(db, names[i], strlen(names[i]), &name_ids[i]), 0);
	assert_int_equal(db_intern_name(db, "", 0, &name_ids[3]), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(db_intern_pgroup(db, groups[i].desc, groups[i].ranks, &pg_ids[i]),
				 0);
	assert_int_equal(pg_ids[1], 0);
	assert_int_equal(db_trace_add_kernels(db, k, N, name_ids, 3, pg_ids, 2, steps, N), 0);
	assert_int_equal(db_trace_commit(db), 0);

#define KROWS_OF(trace)                                                              \
	"SELECT count(*), group_concat(r, ';') FROM (SELECT"                         \
	" printf('%d,%s,%d,%s,%d,%d,%s,%s', code, seq, name_id, stream, start, dur," \
	" correlation, pg_id) AS r FROM kernel_t WHERE rowid >> 32 = " trace " ORDER BY rowid)"
	char *one = rows(db, KROWS_OF("1")), *all = rows(db, KROWS_OF("2"));
#undef KROWS_OF
	assert_string_equal(one, all);
	assert_int_equal(strtol(one, NULL, 10), N);
	free(one);
	free(all);
	free(k);
	free(steps);
}

/* One trace of an op-trace import: n ops (forward computes) on worker
 * (dp, stage) of source (0: none, as a Kineto trace's ops). */
static void store_ops(struct db *db, const char *path, int64_t iteration, int64_t rank,
		      int64_t source, int dp, int stage, int n)
{
	struct db_trace t = sample_trace(path, rank);
	t.iteration = iteration;
	t.mode = DB_MODE_OPTRACE;
	t.bytes = -1;
	t.kernels = 0;
	assert_int_equal(db_trace_begin(db, &t), 0);
	if (source)
		assert_int_equal(db_trace_set_worker(db, source, dp, stage), 0);
	for (int i = 0; i < n; i++) {
		struct db_op op = { .optype = OP_FWD_COMPUTE,
				    .seq_id = i,
				    .mc = 0,
				    .gmc = (int16_t)stage,
				    .mb_id = (int16_t)i,
				    .start_ns = t.window_start_ns + 10 * i,
				    .end_ns = t.window_start_ns + 10 * i + 5 };
		assert_int_equal(db_trace_add_op(db, &op), 0);
	}
	assert_int_equal(db_trace_commit(db), 0);
}

static struct db_op_source sample_source(void)
{
	struct db_op_source src = { .path = "/d/t.csv",
				    .file = "/real/t.csv",
				    .bytes = 99,
				    .has_meta = true,
				    .trial_name = "AR",
				    .dp_size = 2,
				    .pp_size = 1,
				    .tp_size = 1,
				    .dsp_size = 1,
				    .vpp_size = 1,
				    .world_size = 2 };
	return src;
}

/* An import is one transaction that replaces the earlier import of the
 * same file; ops keep their order and times; the ops view takes the
 * recorded worker, else ppagg's topology. */
static void test_ops_and_imports(void **state)
{
	struct fx *f = *state;
	struct db *db = f->db;
	struct db_op_source src = sample_source();
	int64_t id = 0, removed = -1;
	/* Not outside a bulk transaction. */
	assert_int_equal(db_op_source_replace(db, &src, &id, &removed), PP_EINVAL);
	db_trace_rollback(db);
	assert_int_equal(db_bulk_begin(db), 0);
	assert_int_equal(db_op_source_replace(db, &src, &id, &removed), 0);
	assert_int_equal(removed, 0);
	store_ops(db, "/d/t.csv#step=1/rank=0", 1, 0, id, 0, 0, 40); /* > one batch */
	store_ops(db, "/d/t.csv#step=1/rank=1", 1, 1, id, 1, 0, 3);
	/* Before the commit another connection sees nothing. */
	sqlite3 *other;
	assert_int_equal(sqlite3_open(f->path, &other), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(other, "SELECT count(*) FROM ops", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), 0);
	sqlite3_finalize(st);
	sqlite3_close(other);
	assert_int_equal(db_bulk_commit(db), 0);
	assert_rows(db, "SELECT count(*), count(DISTINCT rank) FROM ops", "43|2\n");
	assert_rows(db,
		    "SELECT iteration, rank, dp_rank, stage, optype, seq_id, mc, gmc, mb_id,"
		    " start_ns, end_ns FROM ops WHERE rank = 1",
		    "1|1|1|0|forward-compute|0|0|0|0|1700000000000000000|1700000000000000005\n"
		    "1|1|1|0|forward-compute|1|0|0|1|1700000000000000010|1700000000000000015\n"
		    "1|1|1|0|forward-compute|2|0|0|2|1700000000000000020|1700000000000000025\n");
	assert_rows(db, "SELECT max(seq_id), sum(end_ns - start_ns) FROM ops WHERE rank = 0",
		    "39|200\n");
	assert_rows(db, "SELECT mode, bytes FROM ranks WHERE rank = 0", "optrace|NULL\n");

	/* Ops without a recorded worker take ppagg's topology. */
	store_ops(db, "/k/iteration_1/rank_0002.json", 1, 2, 0, 0, 0, 1);
	assert_rows(db, "SELECT dp_rank, stage FROM ops WHERE rank = 2", "NULL|NULL\n");
	assert_int_equal(
		sqlite3_exec(
			db_sqlite(db),
			"INSERT INTO agg_topology(rank, pp_group, stage, dp_rank) VALUES (2, 0, 1, 0)",
			NULL, NULL, NULL),
		SQLITE_OK);
	assert_rows(db, "SELECT dp_rank, stage FROM ops WHERE rank = 2", "0|1\n");
	/* Storing a trace again drops its old ops. */
	store_ops(db, "/k/iteration_1/rank_0002.json", 1, 2, 0, 0, 0, 2);
	assert_rows(db, "SELECT count(*) FROM ops WHERE rank = 2", "2\n");

	/* The same file again: its earlier traces go, the other trace stays. */
	assert_int_equal(db_bulk_begin(db), 0);
	assert_int_equal(db_op_source_replace(db, &src, &id, &removed), 0);
	assert_int_equal(removed, 2);
	store_ops(db, "/d/t.csv#step=2/rank=0", 2, 0, id, 0, 0, 1);
	assert_int_equal(db_bulk_commit(db), 0);
	assert_rows(db, "SELECT iteration, rank, count(*) FROM ops GROUP BY 1, 2 ORDER BY 1, 2",
		    "1|2|2\n2|0|1\n");
	assert_rows(db, "SELECT count(*), max(id) = min(id) FROM op_source", "1|1\n");
	assert_rows(db, "SELECT count(*) FROM op_worker", "1\n");
	assert_rows(db, "SELECT count(*) FROM traces", "2\n");

	/* A failure inside rolls all of it back: the import stays as it was. */
	assert_int_equal(db_bulk_begin(db), 0);
	assert_int_equal(db_op_source_replace(db, &src, &id, &removed), 0);
	struct db_op op = { 0 };
	assert_int_equal(db_trace_add_op(db, &op), PP_EINVAL); /* no trace open */
	assert_int_equal(db_bulk_commit(db), PP_EINVAL);
	assert_non_null(strstr(db_errmsg(db), "no trace transaction is open"));
	assert_rows(db, "SELECT iteration, rank, count(*) FROM ops GROUP BY 1, 2 ORDER BY 1, 2",
		    "1|2|2\n2|0|1\n");
	/* ... and the handle works again. */
	assert_int_equal(db_bulk_begin(db), 0);
	assert_int_equal(db_bulk_commit(db), 0);
}

/* Ops derived from a Kineto trace name the step whose VPP labels they take
 * (op_t.step_seq); the ops view labels them with ppagg's pipeline size and
 * VPP as rr_vpp_label() does, for every seq and both directions, and leaves
 * the stored labels of the others. */
static void test_ops_view_labels_steps(void **state)
{
	struct db *db = fx_db(state);
	struct db_trace t = sample_trace("/k/iteration_15/rank_0003.json", 3);
	t.kernels = 0;
	assert_int_equal(db_trace_begin(db, &t), 0);
	static const int types[] = { OP_FWD_COMPUTE, OP_BWD_COMPUTE, OP_PARAMS_AG, OP_GRADS_RS };
	for (int ty = 0; ty < 4; ty++)
		for (int seq = 0; seq < 24; seq++) {
			struct db_op op = { .optype = types[ty],
					    .seq_id = seq,
					    .mc = -1,
					    .gmc = -1,
					    .mb_id = -1,
					    .start_ns = t.window_start_ns + seq,
					    .end_ns = t.window_start_ns + seq + 1,
					    .has_step = true,
					    .step_seq = seq };
			assert_int_equal(db_trace_add_op(db, &op), 0);
		}
	struct db_op plain = { .optype = OP_GRADS_RS,
			       .seq_id = 24,
			       .mc = 1,
			       .gmc = -1,
			       .mb_id = -1,
			       .start_ns = t.window_start_ns,
			       .end_ns = t.window_start_ns };
	assert_int_equal(db_trace_add_op(db, &plain), 0);
	assert_int_equal(db_trace_commit(db), 0);
	assert_rows(db, "SELECT count(*), count(mc), count(dp_rank) FROM ops", "97|1|0\n");

	static const int sizes[][2] = { { 2, 2 }, { 4, 2 }, { 3, 1 }, { 2, 3 }, { 4, 4 } };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		int P = sizes[k][0], V = sizes[k][1], stage = P - 1;
		sqlite3_stmt *st;
		assert_int_equal(
			sqlite3_prepare_v2(db_sqlite(db),
					   "INSERT OR REPLACE INTO agg_topology(rank, pp_group,"
					   " stage, dp_rank, pp_size, vpp) VALUES (3, 0, ?1, 1,"
					   " ?2, ?3)",
					   -1, &st, NULL),
			SQLITE_OK);
		sqlite3_bind_int(st, 1, stage);
		sqlite3_bind_int(st, 2, P);
		sqlite3_bind_int(st, 3, V);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_finalize(st);
		struct strbuf want = STRBUF_INIT;
		for (int ty = 0; ty < 4; ty++)
			for (int seq = 0; seq < 24; seq++) {
				int32_t c, mb;
				bool bwd = types[ty] == OP_BWD_COMPUTE || types[ty] == OP_GRADS_RS;
				bool comp = ty < 2;
				assert_int_equal(rr_vpp_label(seq, bwd, P, V, &c, &mb), 0);
				strbuf_addf(&want, "%s|%d|%d|%d|%d|%d|%d\n",
					    op_type_name(types[ty]), seq, stage, c,
					    comp ? c * P + stage : -1, comp ? mb : -1, 1);
			}
		strbuf_addf(&want, "grads-reduce-scatter|24|%d|1|-1|-1|1\n", stage);
		assert_rows(
			db,
			"SELECT optype, seq_id, stage, mc, gmc, mb_id, dp_rank FROM ops"
			" ORDER BY optype = 'grads-reduce-scatter', optype = 'params-all-gather',"
			" optype = 'backward-compute', optype, seq_id",
			want.buf);
		strbuf_release(&want);
	}
}

/* A version-4 file (ops, ppagg's topology and what-if row as version 4
 * made them) is brought to 6 in place: its rows stay, the new columns are
 * NULL, its imported ops keep their labels in the ops view. */
static void test_version_4_is_migrated(void **state)
{
	char *path = make_old(3);
	sqlite3 *c;
	(void)state;
	assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(
			c,
			"CREATE TABLE op_t(optype INTEGER NOT NULL, seq_id INTEGER NOT NULL,"
			" mc INTEGER NOT NULL, gmc INTEGER NOT NULL, mb_id INTEGER NOT NULL,"
			" start INTEGER NOT NULL, dur INTEGER NOT NULL);"
			"CREATE TABLE op_worker(trace_id INTEGER PRIMARY KEY, source_id INTEGER,"
			" dp_rank INTEGER NOT NULL, stage INTEGER NOT NULL);"
			"CREATE TABLE agg_topology(rank INTEGER PRIMARY KEY, pp_group INTEGER,"
			" stage INTEGER, dp_rank INTEGER);"
			"CREATE TABLE agg_whatif(id INTEGER PRIMARY KEY CHECK (id = 1),"
			" iterations INTEGER NOT NULL, first_iteration INTEGER NOT NULL,"
			" last_iteration INTEGER NOT NULL, t_base_ns INTEGER, t_ns INTEGER,"
			" t_ideal_ns INTEGER, slowdown REAL, launch_slowdown REAL,"
			" m_w REAL, m_w_add REAL, m_s REAL, m_s_add REAL, m_w_ranks TEXT,"
			" verdict TEXT NOT NULL);"
			"INSERT INTO op_t(rowid, optype, seq_id, mc, gmc, mb_id, start, dur)"
			" VALUES ((1 << 32), 0, 0, 0, 1, 0, 10, 5);"
			"INSERT INTO op_worker VALUES (1, NULL, 0, 1);"
			"INSERT INTO agg_topology VALUES (4, 0, 1, 0);"
			"INSERT INTO agg_whatif(id, iterations, first_iteration, last_iteration,"
			" slowdown, verdict) VALUES (1, 1, 3, 3, 1.5, 'worker');"
			"PRAGMA user_version = 4",
			NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(c);
	struct db *db = open_db(path, 0);
	assert_rows(db, "PRAGMA user_version", "7\n");
	assert_rows(db,
		    "SELECT iteration, rank, dp_rank, stage, optype, mc, gmc, mb_id, start_ns,"
		    " end_ns FROM ops",
		    "3|4|0|1|forward-compute|0|1|0|1010|1015\n");
	assert_rows(db, "SELECT step_seq FROM op_t", "NULL\n");
	assert_rows(db, "SELECT rank, stage, pp_size, vpp FROM agg_topology", "4|1|NULL|NULL\n");
	assert_rows(db,
		    "SELECT slowdown, verdict, ranks_per_cell, cell_ops, vpp, clock_error_ns,"
		    " notes FROM whatif",
		    "1.5|worker|NULL|NULL|NULL|NULL|NULL\n");
	drop_db(db, path);
}

/* Turns the database at path into an older version's by sql (which sets
 * its user_version). */
static void make_older(const char *path, const char *sql)
{
	sqlite3 *c;
	assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
	assert_int_equal(sqlite3_exec(c, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(c);
}

/* A file of today's schema at path with one sample trace (rank 3, stored
 * as trace), made older by sql (make_older()), then opened again: the
 * migration has run and the file says today's version. */
static struct db *migrated_sample(const char *path, const char *trace, const char *sql)
{
	struct db *db = open_db(path, 0);
	store_sample(db, trace, 3);
	db_close(db);
	make_older(path, sql);
	db = open_db(path, 0);
	assert_rows(db, "PRAGMA user_version", "7\n");
	return db;
}

/* A version-5 file (a what-if worker row without slow_rank) is brought to 6
 * in place: the row stays, its slow_rank is NULL, the view shows it. */
static void test_version_5_is_migrated(void **state)
{
	char *path = make_old(3);
	(void)state;
	db_close(open_db(path, 0)); /* today's schema */
	make_older(path, "DROP VIEW whatif_workers; DROP TABLE agg_whatif_worker;"
			 "CREATE TABLE agg_whatif_worker(rank INTEGER PRIMARY KEY,"
			 " dp_rank INTEGER NOT NULL, stage INTEGER NOT NULL, s_dp REAL,"
			 " s_pp REAL, slowdown REAL, clock_offset_ns INTEGER);"
			 "INSERT INTO agg_whatif_worker VALUES (4, 1, 2, 1.5, 1.25, 1.25, 0);"
			 "PRAGMA user_version = 5");
	struct db *db = open_db(path, 0);
	assert_rows(db, "PRAGMA user_version", "7\n");
	assert_rows(db, "SELECT rank, dp_rank, stage, slowdown, slow_rank FROM whatif_workers",
		    "4|1|2|1.25|NULL\n");
	drop_db(db, path);
}

static int collect_annotation(void *ctx, const struct db_agg_annotation *a)
{
	strbuf_addf(ctx, "%lld|%s|%lld|%lld|%lld|%lld|%lld|%lld\n", (long long)a->rank, a->name,
		    (long long)a->calls, (long long)a->kernels, (long long)a->gpu_ns,
		    (long long)a->comp_ns, (long long)a->comm_ns, (long long)a->overlap_ns);
	return 0;
}

/* The report's read of the annotations: one iteration's rows by rank. */
static void test_annotations_read_for_the_report(void **state)
{
	struct db *db = fx_db(state);
	struct strbuf sb = STRBUF_INIT;
	store_sample(db, "/x/iteration_15/rank_3.json", 3);
	store_sample(db, "/x/iteration_15/rank_1.json", 1);
	assert_int_equal(db_agg_annotations(db, 16, collect_annotation, &sb), 0);
	assert_string_equal(sb.buf, "");
	assert_int_equal(db_agg_annotations(db, 15, collect_annotation, &sb), 0);
	assert_string_equal(sb.buf, "1|attn(F)|4|2|700|500|200|100\n"
				    "3|attn(F)|4|2|700|500|200|100\n");
	strbuf_release(&sb);
}

/* A version-6 file (no annotations, no collectives) is brought to 7 in
 * place: its kernels stay, with no collective; the annotations view is
 * there and empty; a trace stored after has both. */
static void test_version_6_is_migrated(void **state)
{
	char *path = tmp_db();
	(void)state;
	struct db *db = migrated_sample(path, "/x/iteration_15/rank_3.json",
					"DROP VIEW annotations; DROP TABLE annotation_t;"
					"DROP TABLE collective_codes; DROP VIEW kernels;"
					"UPDATE kernel_t SET code = code & 1023;"
					"PRAGMA user_version = 6");
	assert_rows(db, "SELECT name, type, collective FROM kernels ORDER BY start_ns",
		    "sm90_gemm<128>|comp|NULL\nncclDevKernel_AllReduce|comm|NULL\n");
	assert_rows(db, "SELECT count(*) FROM annotations", "0\n");
	assert_rows(db, "SELECT count(*), min(name), max(name) FROM collective_codes",
		    "13|all_gather|send_recv\n");
	store_sample(db, "/x/iteration_15/rank_3.json", 3);
	assert_rows(db, "SELECT collective FROM kernels WHERE type = 'comm'", "all_reduce\n");
	assert_rows(db, "SELECT name, calls FROM annotations", "attn(F)|4\n");
	drop_db(db, path);
}

/* A version-6 file (before the why analysis and the comparison) is
 * brought to 7: its rows stay, the why and comparison tables and views are
 * there and empty. */
static void test_version_6_gets_the_why_views(void **state)
{
	char *path = tmp_db();
	struct strbuf sql = STRBUF_INIT;
	(void)state;
	static const char *const why[] = { "p2p",
					   "p2p_kernels",
					   "p2p_bubbles",
					   "p2p_hops",
					   "collectives",
					   "collective_ranks",
					   "critical_path",
					   "rank_clocks",
					   "why",
					   "comparison",
					   "compare_summary",
					   "compare_categories",
					   "compare_optypes",
					   "compare_groups",
					   "compare_ranks" };
	for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++)
		strbuf_addf(&sql, "DROP VIEW %s;", why[i]);
	strbuf_addstr(&sql, "DROP TABLE why_p2p; DROP TABLE why_p2p_kernel;"
			    " DROP TABLE why_bubble; DROP TABLE why_hop;"
			    " DROP TABLE why_collective; DROP TABLE why_collective_rank;"
			    " DROP TABLE why_cpath; DROP TABLE why_clock;"
			    " DROP TABLE why_summary; DROP TABLE why_group;"
			    " DROP TABLE agg_shape; DROP TABLE compare_run;"
			    " DROP TABLE compare_summary_t; DROP TABLE compare_key_t;"
			    " DROP TABLE compare_rank_t; PRAGMA user_version = 6");
	struct db *db = migrated_sample(path, "/x/iteration_15/rank_0003.json", sql.buf);
	strbuf_release(&sql);
	assert_rows(db, "SELECT rank, bubble_ns FROM ranks", "3|450\n");
	assert_rows(db,
		    "SELECT (SELECT count(*) FROM p2p) + (SELECT count(*) FROM collectives) +"
		    " (SELECT count(*) FROM critical_path) + (SELECT count(*) FROM why)",
		    "0\n");
	assert_rows(
		db,
		"SELECT (SELECT count(*) FROM comparison) + (SELECT count(*) FROM compare_summary)"
		" + (SELECT count(*) FROM compare_categories) + (SELECT count(*) FROM"
		" compare_optypes) + (SELECT count(*) FROM compare_groups) + (SELECT count(*)"
		" FROM compare_ranks) + (SELECT count(*) FROM agg_shape)",
		"0\n");
	drop_db(db, path);
}

/* A version-6 file gets the imports' and the advisor's tables and views;
 * its traces keep their rows. */
static void test_version_6_gets_the_advice_views(void **state)
{
	char *path = tmp_db();
	(void)state;
	struct db *db =
		migrated_sample(path, "/x/iteration_15/rank_0003.json",
				"DROP VIEW imports; DROP VIEW readings; DROP VIEW wgrad_steps;"
				" DROP VIEW advice; DROP VIEW advice_memory;"
				" DROP VIEW advice_summary; DROP TABLE import_t;"
				" DROP TABLE reading_t; DROP TABLE wgrad_t;"
				" DROP TABLE agg_advice; DROP TABLE agg_advice_memory;"
				" DROP TABLE agg_advice_run; PRAGMA user_version = 6");
	assert_rows(db, "SELECT rank, bubble_ns FROM ranks", "3|450\n");
	assert_rows(db,
		    "SELECT (SELECT count(*) FROM imports) + (SELECT count(*) FROM readings) +"
		    " (SELECT count(*) FROM wgrad_steps) + (SELECT count(*) FROM advice) +"
		    " (SELECT count(*) FROM advice_memory) + (SELECT count(*) FROM advice_summary)",
		    "0\n");
	drop_db(db, path);
}

/* An import owns the traces under "PATH#": recording it again deletes them
 * with their readings and weight-gradient calls; readings of a path stored
 * again are replaced; the views join them to their trace by path. */
static void test_import_rows(void **state)
{
	struct db *db = fx_db(state);
	struct db_import imp = { .path = "/d",
				 .format = "primus",
				 .pp_size = 2,
				 .vpp_size = 1,
				 .microbatches = 4,
				 .num_layers = 8 };
	int64_t removed = -1;
	for (int round = 0; round < 2; round++) {
		assert_int_equal(db_bulk_begin(db), 0);
		assert_int_equal(db_import_record(db, &imp, true, &removed), 0);
		assert_int_equal(removed, round ? 2 : 0);
		for (int s = 0; s < 2; s++) {
			char p[32];
			snprintf(p, sizeof(p), "/d#1/pp_rank_%d.json", s);
			struct db_trace t = sample_trace(p, s);
			t.has_header_rank = false;
			t.has_name_rank = true;
			t.name_rank = 4 * s;
			struct db_reading r = { p, s, true, 3000 + s, s == 0, 80.5 };
			struct db_wgrad w = { p, 0, 0, 1, 10, 20 + s };
			assert_int_equal(db_trace_begin(db, &t), 0);
			assert_int_equal(db_reading_add(db, &r), 0);
			assert_int_equal(db_wgrad_add(db, &w), 0);
			assert_int_equal(db_trace_commit(db), 0);
		}
		assert_int_equal(db_bulk_commit(db), 0);
	}
	assert_rows(
		db,
		"SELECT format, pp_size, vpp_size, dp_size, microbatches, num_layers FROM imports",
		"primus|2|1|NULL|4|8\n");
	assert_rows(
		db,
		"SELECT iteration, rank, stage, total_ns, memory_gib FROM readings ORDER BY rank",
		"15|0|0|3000|80.5\n15|4|1|3001|NULL\n");
	assert_rows(db, "SELECT rank, seq, chunk, mbs, wall_ns FROM wgrad_steps ORDER BY rank",
		    "0|0|0|1|10\n4|0|0|1|11\n");
	struct db_import_info info;
	int found = 0;
	assert_int_equal(db_import_latest(db, &info, &found), 0);
	assert_int_equal(found, 1);
	assert_string_equal(info.format, "primus");
	assert_int_equal(info.pp_size, 2);
	assert_int_equal(info.num_layers, 8);
}

static int take_kernel(void *ctx, const struct db_why_kernel *k)
{
	strbuf_addf(ctx, "%lld %lld %lld %d %lld %lld %lld\n", (long long)k->trace_id,
		    (long long)k->rank, (long long)k->pg_id, k->category, (long long)k->start_ns,
		    (long long)k->dur_ns, (long long)k->order);
	return 0;
}

static int take_group(void *ctx, const struct db_why_group *g)
{
	strbuf_addf(ctx, "%lld %s %s\n", (long long)g->id, g->desc, g->ranks);
	return 0;
}

/* The kernels the why analysis reads: communication kernels of a group,
 * pipeline sends and receives left out; the groups; then its rows written
 * whole, twice, through the views. */
static void test_why_rows(void **state)
{
	struct db *db = fx_db(state);
	store_sample(db, "/x/iteration_15/rank_0003.json", 3);
	struct db_trace t = sample_trace("/x/iteration_15/rank_0004.json", 4);
	const struct rr_kernel pp = { .category = RR_PP_COMM,
				      .type = RR_COMM,
				      .step = -1,
				      .start_ns = 1700000000000000100,
				      .dur_ns = 50 };
	const struct rr_kernel tp = { .category = RR_FWD_COMM,
				      .type = RR_COMM,
				      .step = -1,
				      .start_ns = 1700000000000000300,
				      .dur_ns = 70,
				      .has_correlation = true,
				      .correlation = 77 };
	struct db_kernel k1 = { .k = &pp,
				.name = "ncclDevKernel_SendRecv",
				.name_len = 22,
				.pg_desc = "PIPELINE_MODEL_PARALLEL_GROUP",
				.pg_ranks = "[0, 4]" };
	struct db_kernel k2 = { .k = &tp,
				.name = "ncclDevKernel_AllReduce",
				.name_len = 23,
				.pg_desc = "TENSOR_MODEL_PARALLEL_GROUP",
				.pg_ranks = "[4, 5]" };
	assert_int_equal(db_trace_begin(db, &t), 0);
	assert_int_equal(db_trace_add_kernel(db, &k1), 0);
	assert_int_equal(db_trace_add_kernel(db, &k2), 0);
	assert_int_equal(db_trace_commit(db), 0);
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(db_why_kernels(db, 15, take_kernel, &sb), 0);
	/* rank 3's DP all-reduce (no correlation: its index, 1), rank 4's
	 * TP all-reduce; not the pipeline's SendRecv */
	assert_string_equal(sb.buf, "1 3 1 5 1700000000000000400 200 1\n"
				    "2 4 3 1 1700000000000000300 70 77\n");
	strbuf_reset(&sb);
	assert_int_equal(db_why_groups(db, take_group, &sb), 0);
	assert_string_equal(sb.buf, "1 DATA_PARALLEL_GROUP [0, 8]\n"
				    "2 PIPELINE_MODEL_PARALLEL_GROUP [0, 4]\n"
				    "3 TENSOR_MODEL_PARALLEL_GROUP [4, 5]\n");
	strbuf_release(&sb);

	for (int round = 0; round < 2; round++) {
		struct db_why_writer *w = db_why_begin(db);
		assert_non_null(w);
		struct db_why_p2p p = { 15, 3,   0,  "forward", "send", "ok", 4,   1,
					0,  100, 50, true,      30,     20,   130, -1 };
		assert_int_equal(db_why_add_p2p(w, &p), 0);
		struct db_why_p2p q = { 15, 4,  0,  "backward", "recv", "peer missing",
					5,  -1, -1, 200,        10,     false,
					0,  0,  0,  -1 };
		if (!round)
			assert_int_equal(db_why_add_p2p(w, &q), 0);
		struct db_why_p2p_kernel k = { 15, 3,  1, 0,      100, 50,  true,
					       30, 20, 4, "next", 1,   "ok" };
		assert_int_equal(db_why_add_p2p_kernel(w, &k), 0);
		struct db_why_bubble b = { 15, 3, 1, 450, 0, 30, 20, 400, 0 };
		assert_int_equal(db_why_add_bubble(w, &b), 0);
		struct db_why_hop h = { 15, 1, 2, 1, 30, 20 };
		assert_int_equal(db_why_add_hop(w, &h), 0);
		struct db_why_group_row g = { 7, "DATA_PARALLEL_GROUP", "[0, 8]", "dp" };
		assert_int_equal(db_why_add_group(w, &g), 0);
		struct db_why_collective c = { .iteration = 15,
					       .group = 7,
					       .size = 2,
					       .present = 2,
					       .measured = true,
					       .first_ns = 1000,
					       .last_ns = 1300,
					       .skew_ns = 300,
					       .first_rank = 8,
					       .transfer_ns = 90,
					       .missing_rank = -1,
					       .status = "ok" };
		assert_int_equal(db_why_add_collective(w, &c), 0);
		struct db_why_collective_rank cr = { 0, "dp", 10, 9, 0.9, 0.5, 12, 300, true };
		assert_int_equal(db_why_add_collective_rank(w, &cr), 0);
		struct db_why_segment s1 = { 15, 0, 3, 0, 1, -1, 0, "start", false, 0, 5, 0, 0 };
		struct db_why_segment s2 = { 15,    1, 3, 0, 1, OP_BWD_COMPUTE, 2, "op",
					     false, 5, 7, 5, 12 };
		assert_int_equal(db_why_add_segment(w, &s1), 0);
		assert_int_equal(db_why_add_segment(w, &s2), 0);
		assert_int_equal(db_why_add_clock(w, 3, round ? 0 : -250), 0);
		struct db_why_summary sum = {
			1, 15, 15, 2,    1, 1,          0,
			1, 0,  1,  true, 0, round == 0, round ? NULL : "clocks: corrected"
		};
		assert_int_equal(db_why_set_summary(w, &sum), 0);
		assert_int_equal(db_why_commit(w), 0);
	}
	assert_rows(db, "SELECT * FROM p2p",
		    "15|3|4|forward|send|1|0|100|30|20|NULL|50|0|130|ok\n");
	assert_rows(db, "SELECT * FROM p2p_kernels", "15|3|1|0|100|50|30|20|4|next|1|ok\n");
	assert_rows(db, "SELECT * FROM p2p_bubbles", "15|3|1|450|0|30|20|400|0\n");
	assert_rows(db, "SELECT * FROM p2p_hops", "15|1|2|1|30|20\n");
	assert_rows(db, "SELECT * FROM collectives",
		    "15|DATA_PARALLEL_GROUP|dp|0|[0, 8]|1000|1300|300|0|90|2|2|8|NULL|ok\n");
	assert_rows(db, "SELECT * FROM collective_ranks", "0|dp|10|9|0.9|12|0.5|300|1\n");
	assert_rows(db,
		    "SELECT iteration, seq, rank, optype, start_ns, dur_ns, kind FROM "
		    "critical_path ORDER BY seq",
		    "15|0|3|NULL|0|5|start\n15|1|3|backward-compute|5|7|op\n");
	assert_rows(db, "SELECT * FROM rank_clocks", "3|0\n");
	assert_rows(db, "SELECT * FROM why", "1|15|15|2|1|1|0|1|0|1|0|0|NULL\n");
	/* 70 rows: two statements of 32, six one by one. */
	struct db_why_writer *w = db_why_begin(db);
	assert_non_null(w);
	for (int i = 0; i < 70; i++) {
		struct db_why_p2p p = { 15, i,       0,  "forward", "send", "ok", 4,   1,
					0,  100 + i, 50, true,      30,     20,   130, -1 };
		assert_int_equal(db_why_add_p2p(w, &p), 0);
	}
	assert_int_equal(db_why_commit(w), 0);
	assert_rows(db, "SELECT count(*), sum(rank), sum(start_ns), min(status) FROM p2p",
		    "70|2415|9415|ok\n");
}

/* The advisor's rows replace the last run's whole; a write that fails (a
 * measured step that is not a number: its columns are NOT NULL) changes
 * nothing, and an analysis' writer does not start inside another
 * transaction nor end it. */
static void test_advice_rows(void **state)
{
	struct db *db = fx_db(state);
	struct db_advice_run run = { .source = "kineto",
				     .iterations = 2,
				     .first_iteration = 15,
				     .last_iteration = 16,
				     .pp = 4,
				     .vpp = 1,
				     .microbatches = 8,
				     .measured_step_ns = 1000.4,
				     .calibration_error = 0.01,
				     .calibrated = true,
				     .best_row = -1,
				     .gib_per_unit = NAN,
				     .common_gib = NAN,
				     .memory_rms_gib = NAN,
				     .layers = "",
				     .simulations = 3 };
	struct db_advice_row row = { .schedule = "current",
				     .kind = "current",
				     .vpp = 1,
				     .microbatches = 8,
				     .valid = true,
				     .step_ns = 990.6,
				     .pipeline_ns = NAN,
				     .measured_step_ns = 1000.4,
				     .delta = -0.01,
				     .bubble = NAN,
				     .activation = NAN,
				     .memory_gib = NAN };
	struct db_advice_memory mem = { 0, 2, 1.5, NAN, 3.25 };
	assert_int_equal(db_advice_write(db, &run, &row, 1, &mem, 1), 0);
	static const char summary[] = "SELECT source, first_iteration, layers, measured_step_ns,"
				      " calibration_error, best_row, gib_per_unit, simulations"
				      " FROM advice_summary";
	static const char advice[] = "SELECT row, schedule, step_ns, measured_step_ns, delta,"
				     " pipeline_ns, micro_batch_size, best FROM advice";
	const char *want_summary = "kineto|15|NULL|1000|0.01|NULL|NULL|3\n";
	const char *want_advice = "0|current|991|1000|-0.01|NULL|NULL|0\n";
	assert_rows(db, summary, want_summary);
	assert_rows(db, advice, want_advice);
	assert_rows(db, "SELECT row, stage, units, memory_gib, measured_gib FROM advice_memory",
		    "0|2|1.5|NULL|3.25\n");

	const double bad[] = { NAN, INFINITY, 1e300 };
	for (int i = 0; i < 3; i++) {
		struct db_advice_run r = run;
		struct db_advice_row w = row;
		r.measured_step_ns = bad[i];
		assert_int_equal(db_advice_write(db, &r, NULL, 0, NULL, 0), PP_EDB);
		assert_non_null(strstr(db_errmsg(db), "measured_step_ns"));
		w.measured_step_ns = bad[i];
		assert_int_equal(db_advice_write(db, &run, &w, 1, NULL, 0), PP_EDB);
		assert_rows(db, summary, want_summary);
		assert_rows(db, advice, want_advice);
	}

	/* Inside a trace's transaction the writer fails and leaves it open. */
	struct db_trace t = sample_trace("/x/iteration_15/rank_0005.json", 5);
	assert_int_equal(db_trace_begin(db, &t), 0);
	assert_null(db_why_begin(db));
	assert_int_equal(db_advice_write(db, NULL, NULL, 0, NULL, 0), PP_EDB);
	assert_int_equal(db_trace_commit(db), 0);
	assert_rows(db, "SELECT rank FROM traces", "5\n");
	assert_rows(db, advice, want_advice);

	/* No pipeline: the rows are cleared. */
	assert_int_equal(db_advice_write(db, NULL, NULL, 0, NULL, 0), 0);
	assert_rows(db,
		    "SELECT (SELECT count(*) FROM advice) + (SELECT count(*) FROM"
		    " advice_memory) + (SELECT count(*) FROM advice_summary)",
		    "0\n");
}

UNIT_MAIN(NULL, NULL,
	  {
		  DB_TEST(test_schema_created_and_versioned),
		  cmocka_unit_test(test_version_6_is_migrated),
		  DB_TEST(test_annotations_read_for_the_report),
		  cmocka_unit_test(test_old_versions_are_migrated),
		  cmocka_unit_test(test_legacy_row_adopted),
		  cmocka_unit_test(test_views_recreated_on_version_change),
		  DB_TEST(test_views_recreated_within_a_version),
		  DB_TEST(test_kernels_view_names_every_code),
		  DB_TEST(test_ranks_resolved),
		  cmocka_unit_test(test_newer_or_foreign_file_refused),
		  DB_TEST(test_views_give_contract_values),
		  DB_TEST(test_restoring_a_path_replaces_it),
		  DB_TEST(test_errors_are_sticky_and_roll_back),
		  DB_TEST(test_failed_trace_has_null_metrics),
		  DB_TEST(test_kernels_view_uses_rowid_ranges),
		  DB_TEST(test_kernel_batches),
		  DB_TEST(test_kernels_at_once),
		  DB_TEST(test_ops_and_imports),
		  DB_TEST(test_ops_view_labels_steps),
		  cmocka_unit_test(test_version_4_is_migrated),
		  cmocka_unit_test(test_version_5_is_migrated),
		  cmocka_unit_test(test_version_6_gets_the_why_views),
		  cmocka_unit_test(test_version_6_gets_the_advice_views),
		  DB_TEST(test_import_rows),
		  DB_TEST(test_why_rows),
		  DB_TEST(test_advice_rows),
	  })
