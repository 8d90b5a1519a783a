/* Unit tests for pipeline/batch/walk.c: names, folders, order, shards, bad
 * entries, the identity of a trace (key). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "batch/walk.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

static void test_rank_from_name(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		long long rank;
	} cases[] = {
		{ "rank_0004_iter_15.pt.trace.json", 4 },
		{ "rank4.1767.pt.trace.json", 4 },
		{ "worker-rank-12.json.gz", 12 },
		{ "Rank_7_x.json", 7 },
		{ "ranking_3.json", -1 }, /* "ranking": no digits after rank */
		{ "rank12abc.json", -1 }, /* digits not followed by . or _ */
		{ "host_rank.json", -1 },
		{ "ranked_rank_9.json", 9 }, /* first *matching* occurrence */
		{ "trace.json", -1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t r = -1;
		bool ok = walk_rank_from_name(cases[i].name, &r);
		if (cases[i].rank < 0) {
			assert_false(ok);
		} else {
			assert_true(ok);
			assert_int_equal(r, cases[i].rank);
		}
	}
}

static void test_iteration_from_folder(void **state)
{
	(void)state;
	int64_t it = -1;
	assert_true(walk_iteration_from_folder("iteration_15", &it));
	assert_int_equal(it, 15);
	assert_true(walk_iteration_from_folder("run_a_iter_3", &it));
	assert_int_equal(it, 3);
	assert_true(walk_iteration_from_folder("42", &it));
	assert_int_equal(it, 42);
	assert_false(walk_iteration_from_folder("iteration_x", &it));
	assert_false(walk_iteration_from_folder("traces", &it));
}

static void touch(const char *dir, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s/%s", dir, name);
	FILE *f = fopen(sb.buf, "w");
	assert_non_null(f);
	fputs("{}", f);
	fclose(f);
	strbuf_release(&sb);
}

static char *mk(const char *base, const char *sub)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s/%s", base, sub);
	assert_int_equal(mkdir(sb.buf, 0755), 0);
	return strbuf_detach(&sb, NULL);
}

static const char *base_of(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static void test_walk_tree(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/pptrace-test-walk.XXXXXX";
	char *base = mkdtemp(tmpl);
	assert_non_null(base);
	char *i16 = mk(base, "iteration_16"), *i15 = mk(base, "iteration_15");
	char *truth = mk(base, ".truth");
	char *other = mk(base, "notes");
	touch(i15, "rank_10_iter_15.pt.trace.json");
	touch(i15, "rank_2_iter_15.pt.trace.json.gz");
	touch(i15, "README.txt");
	touch(i15, ".hidden.json");
	touch(i16, "rank_0_iter_16.json");
	touch(i16, "noname.json");
	touch(truth, "ranks.json");
	touch(other, "x.json");
	free(mk(i16, "rank_1_iter_16.json")); /* a directory named like a trace */
	struct strbuf loop = STRBUF_INIT;
	strbuf_addf(&loop, "%s/rank_5_iter_16.json", i16);
	assert_int_equal(symlink(loop.buf, loop.buf), 0); /* a looping link */

	char *folders[] = { "iteration_*" };
	struct walk_opts o = { base, folders, 1, NULL };
	struct walk_list l = { 0 };
	struct strbuf err = STRBUF_INIT;
	assert_int_equal(walk_dir(&o, &l, &err), 0);
	const char *expect[] = {
		"rank_2_iter_15.pt.trace.json.gz",
		"rank_10_iter_15.pt.trace.json",
		"rank_0_iter_16.json",
		"rank_1_iter_16.json",
		"rank_5_iter_16.json",
		"noname.json",
	};
	assert_int_equal(l.n, 6);
	for (size_t i = 0; i < l.n; i++)
		assert_string_equal(base_of(l.v[i].path), expect[i]);
	assert_string_equal(l.v[0].folder, "iteration_15");
	assert_int_equal(l.v[0].iteration, 15);
	assert_int_equal(l.v[1].rank, 10);
	assert_null(l.v[0].error);
	assert_int_equal(l.v[0].bytes, 2);
	assert_non_null(strstr(l.v[3].error, "is a directory"));
	assert_non_null(strstr(l.v[4].error, "cannot stat"));
	assert_false(l.v[5].has_rank);
	assert_int_equal(l.v[0].real[0], '/');

	/* Shards 0/2 and 1/2 interleave and together give the whole list. */
	walk_shard(&l, 1, 2);
	assert_int_equal(l.n, 3);
	assert_string_equal(base_of(l.v[0].path), expect[1]);
	assert_string_equal(base_of(l.v[1].path), expect[3]);
	assert_string_equal(base_of(l.v[2].path), expect[5]);
	walk_list_release(&l);

	/* A missing input is an error of the walk. */
	struct walk_opts bad = { "/nonexistent/pptrace", NULL, 0, NULL };
	assert_int_equal(walk_dir(&bad, &l, &err), PP_EIO);
	assert_non_null(strstr(err.buf, "cannot read input folder"));

	/* Input that is itself an iteration folder. */
	struct walk_opts flat = { i15, NULL, 0, "*.json*" };
	assert_int_equal(walk_dir(&flat, &l, &err), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.v[0].folder, "iteration_15");
	walk_list_release(&l);

	struct strbuf rm = STRBUF_INIT;
	strbuf_addf(&rm, "rm -rf '%s'", base);
	assert_int_equal(system(rm.buf), 0);
	strbuf_release(&rm);
	strbuf_release(&loop);
	free(i15);
	free(i16);
	free(truth);
	free(other);
	strbuf_release(&err);
}

/* The identity is where a trace was laid out, under the canonical BASE:
 * two names for one file and one file in two folders are distinct traces;
 * another spelling of BASE (a symlink to it) gives the same keys. */
static void test_keys_are_the_layout(void **state)
{
	char tmpl[] = "/tmp/pptrace-test-walk.XXXXXX";
	char *base = mkdtemp(tmpl);
	struct strbuf err = STRBUF_INIT;
	(void)state;
	assert_non_null(base);
	char *i1 = mk(base, "iteration_1"), *i2 = mk(base, "iteration_2");
	touch(i1, "rank_0000.json");
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, c = STRBUF_INIT, alias = STRBUF_INIT;
	strbuf_addf(&a, "%s/rank_0000.json", i1);
	strbuf_addf(&b, "%s/rank_0001.json", i1);
	strbuf_addf(&c, "%s/rank_0000.json", i2);
	strbuf_addf(&alias, "%s-alias", base);
	assert_int_equal(symlink(a.buf, b.buf), 0); /* a second name */
	assert_int_equal(symlink(a.buf, c.buf), 0); /* a second folder */
	assert_int_equal(symlink(base, alias.buf), 0);

	char *real = realpath(base, NULL);
	struct walk_opts o = { alias.buf, NULL, 0, NULL };
	struct walk_list l = { 0 };
	assert_int_equal(walk_dir(&o, &l, &err), 0);
	assert_int_equal(l.n, 3);
	const char *keys[] = { "iteration_1/rank_0000.json", "iteration_1/rank_0001.json",
			       "iteration_2/rank_0000.json" };
	for (size_t i = 0; i < l.n; i++) {
		struct strbuf want = STRBUF_INIT;
		strbuf_addf(&want, "%s/%s", real, keys[i]);
		assert_string_equal(l.v[i].key, want.buf);
		strbuf_release(&want);
		/* All three read the same file. */
		assert_string_equal(l.v[i].real, l.v[0].real);
		assert_string_equal(base_of(l.v[i].real), "rank_0000.json");
	}
	walk_list_release(&l);

	struct strbuf rm = STRBUF_INIT;
	strbuf_addf(&rm, "rm -rf '%s' '%s'", base, alias.buf);
	assert_int_equal(system(rm.buf), 0);
	strbuf_release(&rm);
	strbuf_release(&a);
	strbuf_release(&b);
	strbuf_release(&c);
	strbuf_release(&alias);
	free(real);
	free(i1);
	free(i2);
	strbuf_release(&err);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_rank_from_name),
		  cmocka_unit_test(test_iteration_from_folder),
		  cmocka_unit_test(test_walk_tree),
		  cmocka_unit_test(test_keys_are_the_layout),
	  })
