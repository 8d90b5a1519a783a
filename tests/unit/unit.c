/* unit.c — see unit.h. Linked into every unit test binary. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "classify/classify.h"
#include "gen/gen.h"
#include "read/trace_read.h"
#include "storage/db.h"
#include "util/arena.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

void unit_lines_add(struct unit_lines *l, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = xstrdup(s);
}

void unit_lines_release(struct unit_lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void unit_lines_sort(struct unit_lines *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), cmp_line);
}

void unit_lines_read_csv(struct unit_lines *l, const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f)); /* the header */
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\r\n")] = '\0';
		unit_lines_add(l, buf);
	}
	fclose(f);
}

size_t unit_lines_diff(const char *what, struct unit_lines *got, struct unit_lines *want,
		       size_t max)
{
	size_t i = 0, j = 0, bad = 0;
	unit_lines_sort(got);
	unit_lines_sort(want);
	while ((i < got->n || j < want->n) && bad < max) {
		int c = i == got->n ? 1 : j == want->n ? -1 : strcmp(got->v[i], want->v[j]);
		if (!c) {
			i++;
			j++;
			continue;
		}
		if (c < 0)
			print_message("%s: got      %s\n", what, got->v[i++]);
		else
			print_message("%s: expected %s\n", what, want->v[j++]);
		bad++;
	}
	return bad;
}

char *unit_rows(sqlite3 *c, const char *sql)
{
	sqlite3_stmt *s;
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(sqlite3_prepare_v2(c, sql, -1, &s, NULL), SQLITE_OK);
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(s); i++) {
			const unsigned char *t = sqlite3_column_text(s, i);
			strbuf_addf(&sb, "%s%s", i ? "|" : "", t ? (const char *)t : "NULL");
		}
		strbuf_addch(&sb, '\n');
	}
	if (rc != SQLITE_DONE)
		fail_msg("%s: %s", sql, sqlite3_errmsg(c));
	sqlite3_finalize(s);
	return strbuf_detach(&sb, NULL);
}

void unit_assert_rows(sqlite3 *c, const char *sql, const char *expect)
{
	char *got = unit_rows(c, sql);
	assert_string_equal(got, expect);
	free(got);
}

void unit_slurp(struct strbuf *sb, const char *path)
{
	struct strbuf err = STRBUF_INIT;
	int rc = strbuf_read_file(sb, path, 0, &err);
	if (rc)
		print_message("%s\n", err.buf);
	strbuf_release(&err);
	assert_int_equal(rc, 0);
}

int unit_mkdtemp(char *buf, size_t n, const char *name)
{
	if ((size_t)snprintf(buf, n, "/tmp/pptrace-%s.XXXXXX", name) >= n)
		return -1;
	return mkdtemp(buf) ? 0 : -1;
}

int unit_rm_rf(const char *dir)
{
	struct strbuf cmd = STRBUF_INIT;
	strbuf_addf(&cmd, "rm -rf '%s'", dir);
	int rc = system(cmd.buf) == 0 ? 0 : -1;
	strbuf_release(&cmd);
	return rc;
}

char unit_tmp[64];

int unit_tmp_setup(void **state)
{
	(void)state;
	return unit_mkdtemp(unit_tmp, sizeof(unit_tmp), program_invocation_short_name);
}

int unit_tmp_teardown(void **state)
{
	(void)state;
	return unit_rm_rf(unit_tmp);
}

struct rank_result *unit_classify_reader(const char *what, struct trace_reader *rd,
					 const struct patterns *pats, struct arena *a,
					 const struct trace_pg *pgs, size_t npgs)
{
	struct classify *c = classify_new(pats, a);
	struct trace_event ev;
	struct rank_result *r;
	int rc;
	assert_non_null(c);
	while ((rc = trace_reader_next(rd, &ev)) == 1)
		classify_feed(c, &ev);
	if (rc)
		print_message("%s: %s\n", what, trace_reader_error(rd));
	assert_int_equal(rc, 0);
	struct trace_header h = *trace_reader_header(rd);
	if (pgs) {
		h.pgs = pgs;
		h.npgs = npgs;
	}
	assert_int_equal(classify_finish(c, &h, &r), 0);
	classify_free(c);
	return r;
}

void unit_gen_opts(struct gen_opts *o, const char *out, int pp, int microbatches,
		   const int *iterations, int n)
{
	gen_opts_init(o); /* ppgen's defaults, but for: */
	o->out = out;
	o->pp = pp;
	o->microbatches = microbatches;
	o->iterations = iterations;
	o->niterations = n;
	o->layers = 2;
	o->quiet = true;
}

void unit_gen(const struct gen_opts *o)
{
	struct strbuf err = STRBUF_INIT;
	int rc = gen_run(o, &err);
	if (rc)
		fail_msg("gen_run: %s", err.buf);
	strbuf_release(&err);
}

struct db *unit_db_open(const char *path, unsigned flags, char *err, size_t n)
{
	struct strbuf why = STRBUF_INIT;
	struct db *db = db_open(path, flags, 0, &why);
	if (n)
		snprintf(err, n, "%s", why.buf);
	strbuf_release(&why);
	return db;
}
