/* Unit tests for the shared helpers: arena, strbuf, cli, config. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/arena.h"
#include "util/cli.h"
#include "util/cmp.h"
#include "util/config.h"
#include "util/hugepage.h"
#include "util/interval.h"
#include "util/pp.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

static void test_arena_alignment_and_growth(void **state)
{
	(void)state;
	struct arena a = ARENA_INIT;
	char *first = arena_alloc(&a, 3);
	assert_non_null(first);
	assert_int_equal((uintptr_t)first % 16, 0);
	for (int i = 0; i < 10000; i++) {
		char *p = arena_alloc(&a, (size_t)(i % 300) + 1);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
		memset(p, 0xab, (size_t)(i % 300) + 1);
	}
	char *big = arena_alloc(&a, 5u << 20); /* larger than any block so far */
	assert_non_null(big);
	memset(big, 1, 5u << 20);
	assert_string_equal(arena_strndup(&a, "kernel_x", 6), "kernel");
	arena_release(&a);
	assert_null(a.head);
	assert_int_equal(a.used, 0);
}

static void test_strbuf_basics(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	assert_string_equal(sb.buf, "");
	strbuf_addstr(&sb, "rank ");
	strbuf_addf(&sb, "%d of %s", 7, "pp");
	assert_string_equal(sb.buf, "rank 7 of pp");
	for (int i = 0; i < 1000; i++)
		strbuf_addch(&sb, 'x');
	assert_int_equal(sb.len, 12 + 1000);
	strbuf_reset(&sb);
	strbuf_add_json_str(&sb, "a\"b\\\n\x01", 6);
	assert_string_equal(sb.buf, "\"a\\\"b\\\\\\n\\u0001\"");
	const char *folders[][2] = { { "a/b/c.db", "a/b" },
				     { "c.db", "." },
				     { "/c.db", "/" },
				     { "/a/c.db", "/a" },
				     { "a/", "a" } };
	for (size_t i = 0; i < sizeof(folders) / sizeof(folders[0]); i++) {
		strbuf_reset(&sb);
		strbuf_add_folder(&sb, folders[i][0]);
		assert_string_equal(sb.buf, folders[i][1]);
	}
	strbuf_release(&sb);
}

enum { O_DB = 1, O_ITER, O_QUIET, O_CONFIG };
static const struct cli_opt opts[] = { { "db", 'd', "<path>", "database file", O_DB, 0 },
				       { "iterations", 0, "<n>", "iterations", O_ITER, CLI_MULTI },
				       { "quiet", 'q', NULL, "no progress", O_QUIET, 0 },
				       { "config", 'c', "<file>", "config file", O_CONFIG, 0 },
				       { NULL, 0, NULL, NULL, 0, 0 } };
static const struct cli_cmd cmd = { "t", "t [-q] [--db <path>]", "test", opts, NULL, NULL };

static void test_cli_forms(void **state)
{
	(void)state;
	char *argv[] = { "t",      "-q", "--db=x.db", "pos1", "--iterations", "15", "16",
			 "-dy.db", "--", "-notopt",   NULL };
	struct cli_state st;
	cli_init(&st, 10, argv);
	assert_int_equal(cli_next(&cmd, &st), O_QUIET);
	assert_int_equal(cli_next(&cmd, &st), O_DB);
	assert_string_equal(st.arg, "x.db");
	assert_int_equal(cli_next(&cmd, &st), O_ITER);
	assert_int_equal(st.nargs, 2);
	assert_string_equal(st.args[1], "16");
	assert_int_equal(cli_next(&cmd, &st), O_DB);
	assert_string_equal(st.arg, "y.db");
	assert_int_equal(cli_next(&cmd, &st), CLI_END);
	assert_int_equal(st.npos, 2);
	assert_string_equal(st.pos[0], "pos1");
	assert_string_equal(st.pos[1], "-notopt");
	cli_release(&st);

	/* Errors at the first word: an unknown option; a value forgotten (the
	 * next word is one of the command's options, in any form; the value
	 * may still be given inline, below), --help too: `--db --help` does
	 * not take "--help" as the path. */
	static char *errors[][3] = { { "t", "--nope", NULL },
				     { "t", "--iterations", "--quiet" },
				     { "t", "--db", "--config=a.ini" },
				     { "t", "--db", "--help" } };
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		char *words[4] = { errors[i][0], errors[i][1], errors[i][2], NULL };
		cli_init(&st, words[2] ? 3 : 2, words);
		assert_int_equal(cli_next(&cmd, &st), CLI_ERR);
		cli_release(&st);
	}
	char *inline_val[] = { "t", "--db=--quiet", "--db", "--nope", NULL };
	cli_init(&st, 4, inline_val);
	assert_int_equal(cli_next(&cmd, &st), O_DB);
	assert_string_equal(st.arg, "--quiet");
	assert_int_equal(cli_next(&cmd, &st), O_DB); /* not an option of t: a value */
	assert_string_equal(st.arg, "--nope");
	cli_release(&st);
	/* The config file is found before the other options are applied: the
	 * last --config in any form; not a "-c" that is another option's value
	 * or after "--". */
	const char *path;
	char *cfg1[] = { "t", "--db", "-c", "-qca.ini", "--config=b.ini", "--", "-c", "z", NULL };
	assert_int_equal(cli_find_config(&cmd, 8, cfg1, &path), CLI_END);
	assert_string_equal(path, "b.ini");
	char *cfg2[] = { "t", "-q", "pos", NULL };
	assert_int_equal(cli_find_config(&cmd, 3, cfg2, &path), CLI_END);
	assert_null(path);
	char *cfg3[] = { "t", "-c", NULL };
	assert_int_equal(cli_find_config(&cmd, 2, cfg3, &path), CLI_ERR);
	long v;
	assert_int_equal(cli_parse_long("12", 0, 100, &v), 0);
	assert_int_equal(v, 12);
	assert_int_not_equal(cli_parse_long("12x", 0, 100, &v), 0);
	assert_int_not_equal(cli_parse_long("101", 0, 100, &v), 0);
	long lo, hi;
	assert_int_equal(cli_parse_range("8-15,3", 4, 0, 100, &lo, &hi), 0); /* its 4 bytes */
	assert_true(lo == 8 && hi == 15);
	assert_int_equal(cli_parse_range("7", 1, 0, 100, &lo, &hi), 0);
	assert_true(lo == 7 && hi == 7);
	const char *ranges[] = { "", "-", "3-", "-3", "5-4", "1-101", "a", "1-2-3" };
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		assert_int_not_equal(
			cli_parse_range(ranges[i], strlen(ranges[i]), 0, 100, &lo, &hi), 0);
}

/* The shared sort and search helpers: comparators, the floor search, the
 * growth of an array, quoting and the choice among words. */
/* pp_err_prefix() puts a caller's context before what its callee
 * appended: at the start of err, after an earlier line, and alone when
 * the callee said nothing. */
static void test_pp_err_prefix(void **state)
{
	(void)state;
	struct strbuf err = STRBUF_INIT;
	size_t mark = err.len;
	pp_err(&err, PP_EIO, "refusing to follow symlink 'out'");
	assert_int_equal(pp_err_prefix(&err, mark, PP_EINVAL, "cannot create '%s': ", "out"),
			 PP_EINVAL);
	assert_string_equal(err.buf, "cannot create 'out': refusing to follow symlink 'out'");
	mark = err.len;
	pp_err(&err, PP_EIO, "no space");
	pp_err_prefix(&err, mark, PP_EIO, "%s: ", "a.csv");
	assert_string_equal(err.buf, "cannot create 'out': refusing to follow symlink 'out'\n"
				     "a.csv: no space");
	mark = err.len;
	pp_err_prefix(&err, mark, PP_EIO, "b.csv: ");
	assert_string_equal(err.buf + mark, "\nb.csv: ");
	strbuf_setlen(&err, mark);
	assert_string_equal(err.buf + err.len - 8, "no space");
	strbuf_release(&err);
}

/* pp_err() appends one message a line and returns the code; error_lines()
 * prints each line as error() does, nothing for none. */
static void test_pp_err_and_error_lines(void **state)
{
	(void)state;
	struct strbuf err = STRBUF_INIT;
	assert_int_equal(pp_err(&err, PP_EINVAL, "first %d", 1), PP_EINVAL);
	assert_int_equal(pp_err(&err, PP_EIO, "second"), PP_EIO);
	assert_string_equal(err.buf, "first 1\nsecond");
	FILE *f = tmpfile();
	assert_non_null(f);
	fflush(stderr);
	int saved = dup(2);
	assert_true(saved >= 0 && dup2(fileno(f), 2) == 2);
	int none = error_lines("");
	int two = error_lines(err.buf);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	assert_int_equal(none, -1);
	assert_int_equal(two, -1);
	char out[256] = { 0 };
	rewind(f);
	size_t n = fread(out, 1, sizeof(out) - 1, f);
	fclose(f);
	out[n] = '\0';
	/* two lines: "<prog>: error: first 1", "<prog>: error: second" */
	char *second = strchr(out, '\n');
	assert_non_null(second);
	*second++ = '\0';
	assert_non_null(strstr(out, "error: first 1"));
	char *end = strchr(second, '\n');
	assert_non_null(end);
	assert_string_equal(end, "\n");
	*end = '\0';
	assert_non_null(strstr(second, "error: second"));
	strbuf_release(&err);
}

static void test_cmp_grow_quote_choice(void **state)
{
	(void)state;
	int iv[] = { 3, -1, 2, -1 };
	qsort(iv, 4, sizeof(*iv), cmp_int);
	assert_int_equal(iv[0], -1);
	assert_int_equal(iv[1], -1);
	assert_int_equal(iv[3], 3);
	int64_t lv[] = { INT64_MAX, INT64_MIN, 0 };
	qsort(lv, 3, sizeof(*lv), cmp_i64);
	assert_true(lv[0] == INT64_MIN && lv[1] == 0 && lv[2] == INT64_MAX);
	double dv[] = { 2.5, -0.5, 1 };
	qsort(dv, 3, sizeof(*dv), cmp_double);
	assert_true(dv[0] == -0.5 && dv[1] == 1 && dv[2] == 2.5);

	/* The median sorts; the quantile interpolates in sorted values. */
	double mv[] = { 4, 1, 3, 2 };
	assert_true(cmp_median(mv, 4) == 2.5);
	assert_true(mv[0] == 1 && mv[3] == 4);
	assert_true(cmp_median(mv, 3) == 2);
	assert_true(isnan(cmp_median(mv, 0)));
	assert_true(cmp_quantile(mv, 4, 0.5) == 2.5);
	assert_true(cmp_quantile(mv, 4, 0.25) == 1.75);
	assert_true(cmp_quantile(mv, 4, 1) == 4);
	assert_true(cmp_quantile(mv, 1, 0.9) == 1);

	/* The last value <= x; 0 below the first and for none. */
	int64_t steps[] = { 10, 20, 20, 30 };
	assert_int_equal(cmp_floor_i64(steps, 4, 5), 0);
	assert_int_equal(cmp_floor_i64(steps, 4, 10), 0);
	assert_int_equal(cmp_floor_i64(steps, 4, 25), 2);
	assert_int_equal(cmp_floor_i64(steps, 4, 30), 3);
	assert_int_equal(cmp_floor_i64(steps, 4, 99), 3);
	assert_int_equal(cmp_floor_i64(steps, 0, 99), 0);

	int *v = NULL;
	size_t n = 0, cap = 0;
	for (int i = 0; i < 100; i++) {
		PP_GROW(v, n, cap, 8);
		v[n++] = i;
	}
	assert_int_equal(cap, 128);
	assert_int_equal(v[99], 99);
	free(v);

	struct strbuf sb = STRBUF_INIT;
	strbuf_add_quoted(&sb, "it's", '\'');
	strbuf_add_quoted(&sb, "a,\"b\"", '"');
	strbuf_add_quoted(&sb, "", '"');
	assert_string_equal(sb.buf, "'it''s'\"a,\"\"b\"\"\"\"\"");
	strbuf_release(&sb);

	static const char *const words[] = { "png", "svg" };
	assert_int_equal(cli_parse_choice("svg", words, 2), 1);
	assert_int_equal(cli_parse_choice("png", words, 2), 0);
	assert_int_equal(cli_parse_choice("xpngx", words, 2), -1);
	assert_int_equal(cli_parse_choice("pn", words, 2), -1);
	assert_int_equal(cli_parse_choice("", words, 2), -1);
}

enum fmt { FMT_PNG, FMT_SVG };
static const char *const fmt_names[] = { [FMT_PNG] = "png", [FMT_SVG] = "svg" };
const char *fmt_name(enum fmt v);
int fmt_parse(const char *s, enum fmt *out);
CLI_CHOICE_FUNCS(fmt, enum fmt, fmt_names)

static void test_cli_choice_funcs(void **state)
{
	(void)state;
	enum fmt f = FMT_PNG;
	assert_string_equal(fmt_name(FMT_SVG), "svg");
	assert_string_equal(fmt_name((enum fmt)7), "png"); /* out of range: the default's */
	assert_int_equal(fmt_parse("svg", &f), 0);
	assert_int_equal(f, FMT_SVG);
	assert_int_equal(fmt_parse("svgx", &f), PP_EINVAL);
	assert_int_equal(f, FMT_SVG);
}

static void test_config_load_and_types(void **state)
{
	(void)state;
	char path[] = "/tmp/pptrace-cfg-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "[batch]\nprocesses = 4\nforce = yes\n"
			   "[patterns]\nforward_step = *forward_step* *fwd*\n"
			   "[agg]\nthreshold = 0.1\nbad = x\n";
	assert_int_equal(write(fd, text, strlen(text)), (long)strlen(text));
	close(fd);
	struct strbuf err = STRBUF_INIT;
	struct config *cfg = config_load(path, &err);
	unlink(path);
	assert_non_null(cfg);
	long n = 0;
	assert_int_equal(config_get_long(cfg, "batch.processes", &n, &err), 0);
	assert_int_equal(n, 4);
	bool b = false;
	assert_int_equal(config_get_bool(cfg, "batch.force", &b, &err), 0);
	assert_true(b);
	double d = 0;
	assert_int_equal(config_get_double(cfg, "agg.threshold", &d, &err), 0);
	assert_true(d > 0.099 && d < 0.101);
	assert_int_equal(config_get_long(cfg, "agg.bad", &n, &err), PP_EINVAL);
	assert_non_null(strstr(err.buf, "config key agg.bad: expected an integer, got 'x'"));
	strbuf_reset(&err);
	assert_int_equal(config_get_long(cfg, "agg.none", &n, &err), 1);
	assert_int_equal(config_get_long_in(cfg, "batch.processes", 1, 3, &n, &err), PP_EINVAL);
	char want[300]; /* the message names the file (config_path()) */
	snprintf(want, sizeof(want),
		 "%s: config key batch.processes: expected an integer from 1 to 3, got '4'", path);
	assert_string_equal(err.buf, want);
	strbuf_reset(&err);
	assert_string_equal(config_path(cfg), path);
	assert_string_equal(config_path(NULL), "config");
	assert_int_equal(config_get_long_in(cfg, "batch.processes", 1, 4, &n, &err), 0);
	assert_int_equal(config_get_double_in(cfg, "agg.threshold", 0.2, 1, &d, &err), PP_EINVAL);
	assert_int_equal(config_get_double_in(cfg, "agg.none", 0.2, 1, &d, &err), 1);
	assert_null(config_get(cfg, "x.y"));
	config_free(cfg);
	strbuf_reset(&err);
	assert_null(config_load("/nonexistent/x.ini", &err));
	assert_non_null(strstr(err.buf, "cannot open"));
	strbuf_release(&err);
}

static void test_interval_union_overlap(void **state)
{
	(void)state;
	struct ivl a[] = { { 10, 20 }, { 0, 5 }, { 15, 30 }, { 40, 40 }, { 5, 6 } };
	size_t ka = ivl_merge(a, 5);
	assert_int_equal(ka, 2); /* [0,6) and [10,30) */
	assert_int_equal(ivl_total(a, ka), 26);
	struct ivl b[] = { { 4, 12 }, { 25, 50 } };
	size_t kb = ivl_merge(b, 2);
	assert_int_equal(ivl_overlap(a, ka, b, kb), 2 + 2 + 5);
	assert_int_equal(ivl_union(NULL, 0), 0);
}

/* A growing array through hugepage_realloc keeps its bytes, also once its
 * big blocks grow by moving their pages; without a ulimit -v those are
 * 2 MiB aligned. */
static void test_hugepage_realloc(void **state)
{
	(void)state;
	size_t cap = 1000, used = 0;
	unsigned char *p = hugepage_realloc(NULL, 0, 0, cap);
	assert_non_null(p);
	for (size_t size = 4000; size <= ((size_t)40 << 20); size *= 4) {
		for (; used < cap; used++)
			p[used] = (unsigned char)(used * 7);
		p = hugepage_realloc(p, cap, used, size);
		assert_non_null(p);
		cap = size;
		for (size_t i = 0; i < used; i++)
			if (p[i] != (unsigned char)(i * 7))
				fail_msg("byte %zu lost growing to %zu", i, size);
		struct rlimit rl;
		if (size >= ((size_t)2 << 20) && getrlimit(RLIMIT_AS, &rl) == 0 &&
		    rl.rlim_cur == RLIM_INFINITY)
			assert_int_equal((uintptr_t)p % ((uintptr_t)2 << 20), 0);
	}
	hugepage_advise(p, cap);
	hugepage_free(p, cap);
	hugepage_free(NULL, 0);
}

/* A warning, an error or a line passed on clears the progress bar first, so that it does not
 * follow the bar on its line; after progress_finish() nothing is cleared. */
static void test_progress_gives_way_to_messages(void **state)
{
	(void)state;
	FILE *out = tmpfile();
	assert_non_null(out);
	struct progress p;
	progress_init(&p, out, true, false, 3, 100);
	progress_file_done(&p, 50, false, "a.json: ok");
	assert_true(p.drawn);
	long drawn_at = ftell(out);
	warn("something");
	assert_false(p.drawn);
	char tail[8] = "";
	assert_int_equal(fseek(out, drawn_at, SEEK_SET), 0);
	assert_int_equal(fread(tail, 1, sizeof(tail), out), 4);
	assert_memory_equal(tail, "\r\033[K", 4);
	assert_int_equal(fseek(out, 0, SEEK_END), 0);
	progress_file_done(&p, 40, false, "b.json: ok");
	assert_true(p.drawn);
	pp_report_line("ppbatch: fatal: a worker's message, passed on");
	assert_false(p.drawn);
	progress_file_done(&p, 10, false, "c.json: ok");
	assert_true(p.drawn);
	progress_finish(&p);
	long finished_at = ftell(out);
	p.drawn = true; /* as if a bar were shown: no hook is left to clear it */
	error("something else");
	assert_int_equal(ftell(out), finished_at);
	fclose(out);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_arena_alignment_and_growth),
		  cmocka_unit_test(test_strbuf_basics),
		  cmocka_unit_test(test_cli_forms),
		  cmocka_unit_test(test_cmp_grow_quote_choice),
		  cmocka_unit_test(test_cli_choice_funcs),
		  cmocka_unit_test(test_pp_err_and_error_lines),
		  cmocka_unit_test(test_pp_err_prefix),
		  cmocka_unit_test(test_config_load_and_types),
		  cmocka_unit_test(test_interval_union_overlap),
		  cmocka_unit_test(test_hugepage_realloc),
		  cmocka_unit_test(test_progress_gives_way_to_messages),
	  })
