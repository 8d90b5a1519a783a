/* unit.h — what the cmocka tests share (include it after <cmocka.h>). */
#ifndef UNIT_H
#define UNIT_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

/* Ends the test as skipped unless cond holds; when it does not, cond has
 * printed "# skip: why" (tests/run-tests.sh shows those lines). */
#define SKIP_UNLESS(cond)       \
	do {                    \
		if (!(cond)) {  \
			skip(); \
			return; \
		}               \
	} while (0)

/* The folder of the shared reference data: $PP_SHARED, else
 * $PP_ROOT/../shared written into buf (tests/run-tests.sh sets PP_ROOT);
 * NULL when neither variable is set. */
static inline const char *unit_shared_dir(char *buf, size_t n)
{
	const char *shared = getenv("PP_SHARED"), *root = getenv("PP_ROOT");
	if (shared && *shared)
		return shared;
	if (!root || !*root)
		return NULL;
	snprintf(buf, n, "%s/../shared", root);
	return buf;
}

/* ---- unit.c: helpers of several test files ---- */

/* A growable list of owned strings: lines of a result and of its truth,
 * compared as sets. Starts zeroed; unit_lines_release() frees it. */
struct unit_lines {
	char **v;
	size_t n, cap;
};

/* Appends a copy of s. */
void unit_lines_add(struct unit_lines *l, const char *s);

/* Frees the strings and the list and leaves l empty, ready for reuse. */
void unit_lines_release(struct unit_lines *l);

/* Sorts the lines (strcmp order). */
void unit_lines_sort(struct unit_lines *l);

/* Adds the lines of the CSV file at path but its header (asserts that the
 * file opens and has one), without their line ends. */
void unit_lines_read_csv(struct unit_lines *l, const char *path);

/* Sorts got and want and compares them as sorted sets: prints up to max
 * differences as "what: got LINE" or "what: expected LINE" and returns how
 * many it printed (0: equal). */
size_t unit_lines_diff(const char *what, struct unit_lines *got, struct unit_lines *want,
		       size_t max);

/* The rows of a query as text, columns joined by '|' (NULL as "NULL"),
 * each row ended by '\n'; the caller frees it. Fails the test when sql does not
 * prepare or its steps end in an error. */
char *unit_rows(sqlite3 *c, const char *sql);

/* Asserts that unit_rows(c, sql) is expect. */
void unit_assert_rows(sqlite3 *c, const char *sql, const char *expect);

struct db;
struct strbuf;

/* Appends the whole file at path to sb (strbuf_read_file()); asserts that
 * it reads, printing why when it does not. */
void unit_slurp(struct strbuf *sb, const char *path);

/* Makes a new folder /tmp/pptrace-NAME.XXXXXX, its path in buf (n bytes
 * at least 32 + strlen(name)): 0, or -1 when it cannot (a fixture's
 * set-up returns it). */
int unit_mkdtemp(char *buf, size_t n, const char *name);

/* Removes the folder dir and all below it: 0, or -1 when rm fails. */
int unit_rm_rf(const char *dir);

/* The folder of a group of tests that write files: unit_tmp_setup(), the
 * group's set-up, makes it (unit_mkdtemp() with the test binary's name)
 * and unit_tmp_teardown() removes it with all in it. */
extern char unit_tmp[64];
int unit_tmp_setup(void **state);
int unit_tmp_teardown(void **state);

struct arena;
struct patterns;
struct rank_result;
struct trace_pg;
struct trace_reader;

/* Feeds every event of rd (the trace named what) to a classifier of pats
 * (its memory from a) and finishes it with rd's header, whose pg_config
 * npgs entries pgs replace when not NULL: the rank's result, in a. Asserts
 * that the reader ends without error (printed as "what: error" when it
 * does not) and that the classifier finishes. */
struct rank_result *unit_classify_reader(const char *what, struct trace_reader *rd,
					 const struct patterns *pats, struct arena *a,
					 const struct trace_pg *pgs, size_t npgs);

struct gen_opts;

/* Sets *o to a small tree's options in out: tp, dp, cp, ep and vpp 1, two
 * layers a chunk of 8 compute kernels, seed 1, no summary line; pp stages,
 * microbatches and the n iterations as given. The test sets what else it
 * varies. */
void unit_gen_opts(struct gen_opts *o, const char *out, int pp, int microbatches,
		   const int *iterations, int n);

/* Writes the synthetic trace tree of o (gen_run()); fails the test with
 * gen_run()'s message when it does not. */
void unit_gen(const struct gen_opts *o);

/* The main() of a test file: runs the braced list of CMUnitTest entries
 * that follows setup and teardown ({ cmocka_unit_test(f), ... }) as one
 * group, with the group's setup and teardown (NULL for none); exits
 * non-zero when a test fails. */
#define UNIT_MAIN(setup, teardown, ...)                                \
	int main(void)                                                 \
	{                                                              \
		const struct CMUnitTest tests[] = __VA_ARGS__;         \
		return cmocka_run_group_tests(tests, setup, teardown); \
	}

/* db_open() (no busy timeout), its message copied into err[0..n), for a
 * test's assertions on it. */
struct db *unit_db_open(const char *path, unsigned flags, char *err, size_t n);

#endif
