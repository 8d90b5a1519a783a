/* The why analysis through the database, as ppagg runs it (agg_analyse(),
 * its glue agg/agg_why.c: docs/why.md §7): a ppgen tree (TP 2, PP 4, VPP 2,
 * DP 2, two iterations, shifted host clocks, a straggler) stored by the
 * real ppbatch, analysed by ppagg's data layer, which writes the why views;
 * then the views equal ppgen's truth: p2p and
 * p2p_kernels row for row (ppgen's syncing kernels end together, so its
 * clocks are recovered to the nanosecond and every number is exact),
 * collectives with the last arriver among the truth's, rank_clocks the
 * generator's offsets, the critical path covering each step, the why view's
 * counts. ppgen and ppbatch are taken from $PP_FAST_BIN (or build/bin);
 * without them the test is skipped. */
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

#include "agg/agg.h"
#include "storage/db.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "why/why.h"
#include "why_load.h"
#include "tests/unit/unit.h"

/* The query's rows as CSV lines (NULL as an empty field). */
static void query(struct db *db, const char *sql, struct unit_lines *out)
{
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL), SQLITE_OK);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct strbuf sb = STRBUF_INIT;
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const unsigned char *t = sqlite3_column_text(st, i);
			strbuf_addf(&sb, "%s%s", i ? "," : "", t ? (const char *)t : "");
		}
		unit_lines_add(out, sb.buf);
		strbuf_release(&sb);
	}
	assert_int_equal(rc, SQLITE_DONE);
	sqlite3_finalize(st);
}

static void truth(const char *dir, const char *name, struct unit_lines *out)
{
	char path[8192];
	snprintf(path, sizeof(path), "%s/.truth/%s", dir, name);
	unit_lines_read_csv(out, path);
}

/* Equal as sets of lines; prints the first differences. */
static void same(const char *what, struct unit_lines *got, struct unit_lines *want)
{
	size_t bad = unit_lines_diff(what, got, want, 8);
	print_message("# %s: %zu rows, truth %zu\n", what, got->n, want->n);
	assert_int_equal(bad, 0);
	unit_lines_release(got);
	unit_lines_release(want);
}

/* The rows of sql equal the lines of the truth file name in dir (what
 * names them in the messages). */
static void same_as_truth(struct db *db, const char *sql, const char *dir, const char *name,
			  const char *what)
{
	struct unit_lines got = { 0 }, want = { 0 };
	query(db, sql, &got);
	truth(dir, name, &want);
	same(what, &got, &want);
}

static void test_through_the_database(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/pptrace-whydb.XXXXXX", cmd[4200], dir[4096], dbpath[4096];
	int made = why_load_tmp_tree(tmpl,
				     "--tp 2 --pp 4 --vpp 2 --dp 2 -m 8 --layers 1 "
				     "--iterations 3,4 --gpus-per-host 2 --clock-skew-max 500 "
				     "--straggler 2:1.5",
				     dir, dbpath, sizeof(dir));
	SKIP_UNLESS(made != 1);
	assert_int_equal(made, 0);
	struct agg_job job;
	assert_int_equal(why_load_analyse(dbpath, 2, AGG_WHY_ROWS_AUTO, &job), 0);
	const struct why_result *r = &job.why.r;
	print_message("# %s", r->notes.buf);
	struct db *db = job.db;

	struct unit_lines got = { 0 }, want = { 0 };
	same_as_truth(
		db,
		"SELECT iteration, rank, kernel, peer_rank, direction, role, microbatch, chunk,"
		" start_ns, dur_ns, wait_ns, transfer_ns FROM p2p",
		dir, "p2p.csv", "p2p");
	same_as_truth(db,
		      "SELECT iteration, rank, kernel, start_ns, dur_ns, wait_ns, transfer_ns,"
		      " waited_for FROM p2p_kernels",
		      dir, "p2p_kernels.csv", "p2p_kernels");
	/* The instances, their last arriver aside (any of the truth's tied ones
	 * is right): the group's ranks as the truth spells them. */
	query(db,
	      "SELECT iteration, pg, replace(replace(replace(ranks, '[', ''), ']', ''), ',', ''),"
	      " seq, size, first_ns, last_ns, skew_ns, first_rank, transfer_ns FROM collectives"
	      " WHERE status = 'ok'",
	      &got);
	truth(dir, "collectives.csv", &want);
	struct unit_lines tied = { 0 };
	for (size_t i = 0; i < want.n; i++) { /* drop last_rank, keep last_ranks aside */
		char *f[12], *p = want.v[i];
		for (int k = 0; k < 12; k++) {
			f[k] = p;
			p = strchr(p, ',');
			if (p)
				*p++ = '\0';
		}
		char line[4096];
		snprintf(line, sizeof(line), "%s,%s,%s,%s, %s ", f[0], f[1], f[2], f[3], f[10]);
		unit_lines_add(&tied, line);
		snprintf(line, sizeof(line), "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s", f[0], f[1], f[2],
			 f[3], f[4], f[5], f[6], f[7], f[8], f[11]);
		free(want.v[i]);
		want.v[i] = xstrdup(line);
	}
	same("collectives", &got, &want);
	query(db,
	      "SELECT iteration, pg, replace(replace(replace(ranks, '[', ''), ']', ''), ',', ''),"
	      " seq, ' ' || last_rank || ' ' FROM collectives WHERE status = 'ok'",
	      &got);
	assert_int_equal(got.n, tied.n);
	unit_lines_sort(&got);
	unit_lines_sort(&tied);
	for (size_t i = 0; i < got.n; i++) {
		char *g = strrchr(got.v[i], ','), *w = strrchr(tied.v[i], ',');
		assert_int_equal(g - got.v[i], w - tied.v[i]);
		assert_memory_equal(got.v[i], tied.v[i], (size_t)(g - got.v[i]));
		assert_non_null(strstr(w + 1, g + 1));
	}
	unit_lines_release(&got);
	unit_lines_release(&tied);
	same_as_truth(db, "SELECT rank, offset_ns FROM rank_clocks", dir, "clock_offsets.csv",
		      "rank_clocks");
	/* The critical path: each step's segments follow one another and
	 * cover it. */
	query(db,
	      "SELECT iteration, count(*), sum(dur_ns) = max(start_ns + dur_ns) - min(start_ns),"
	      " sum(start_ns <> prev) FROM (SELECT iteration, start_ns, dur_ns,"
	      " lag(start_ns + dur_ns, 1, start_ns) OVER (PARTITION BY iteration ORDER BY seq)"
	      " AS prev FROM critical_path) GROUP BY iteration",
	      &got);
	assert_int_equal(got.n, 2);
	for (size_t i = 0; i < got.n; i++)
		assert_non_null(strstr(got.v[i], ",1,0"));
	unit_lines_release(&got);
	query(db,
	      "SELECT count(*) FROM critical_path WHERE rank = 2 AND optype = 'backward-compute'",
	      &got);
	assert_true(atoi(got.v[0]) > 0); /* the straggler is on the path */
	unit_lines_release(&got);
	query(db,
	      "SELECT iterations, p2p_transfers, p2p_unpaired, p2p_kernels_incomplete,"
	      " collectives_incomplete, critical_path_steps, clock_error_ns, clocks_corrected"
	      " FROM why",
	      &got);
	char expect[256];
	snprintf(expect, sizeof(expect), "2,%zu,0,0,0,2,0,1", r->np2p);
	assert_string_equal(got.v[0], expect);
	unit_lines_release(&got);

	agg_job_release(&job);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
	assert_int_equal(system(cmd), 0);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_through_the_database),
	  })
