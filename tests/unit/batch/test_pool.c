/* pool_run(): the line WORKER_READY (pool.h, docs/ppbatch.md "Crashes"),
 * with real child processes (/bin/sh scripts as workers). A worker that
 * exits before that line, or whose first line is something else, stops the
 * run; a worker that exits after it loses only the task it holds, which
 * is retried once and then fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "batch/pool.h"
#include "batch/worker.h"
#include "util/pp.h"
#include "util/strbuf.h"

struct seen {
	int done, recorded;
	char msg[1024]; /* the last outcome's */
};

static void task_line(void *ctx, size_t i, struct strbuf *sb)
{
	(void)ctx;
	strbuf_addf(sb, "task %zu", i);
}

static void done(void *ctx, size_t i, const struct worker_outcome *o, bool recorded)
{
	struct seen *s = ctx;
	(void)i;
	s->done++;
	s->recorded += recorded;
	snprintf(s->msg, sizeof(s->msg), "%s", o->msg);
}

/* Runs ntasks tasks on one worker `sh -c script`; returns pool_run()'s
 * code. */
static int run(const char *script, size_t ntasks, struct seen *s, char *err, size_t errlen)
{
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	struct pool_opts o = {
		.argv = argv, .nworkers = 1, .ctx = s, .task_line = task_line, .done = done
	};
	memset(s, 0, sizeof(*s));
	err[0] = '\0';
	return pool_run(&o, ntasks, err, errlen);
}

static void test_exit_before_ready_stops_the_run(void **state)
{
	(void)state;
	struct seen s;
	char err[256];
	assert_int_equal(run("exit 3", 2, &s, err, sizeof(err)), PP_EIO);
	assert_string_equal(err, "worker exited with status 3 before it started");
	assert_int_equal(s.done, 0);
}

static void test_first_line_not_ready_stops_the_run(void **state)
{
	(void)state;
	struct seen s;
	char err[256];
	assert_int_equal(run("echo hello; cat >/dev/null", 2, &s, err, sizeof(err)), PP_EIO);
	assert_string_equal(err, "worker's first line is not '" WORKER_READY "'");
	assert_int_equal(s.done, 0);
}

/* Before the ready line, this exit during the first task stopped the whole
 * run (PP_EIO) instead of failing the task. */
static void test_exit_after_ready_fails_the_task(void **state)
{
	(void)state;
	struct seen s;
	char err[256];
	assert_int_equal(run("echo " WORKER_READY "; read task; exit 3", 2, &s, err, sizeof(err)),
			 0);
	assert_int_equal(s.done, 2);
	assert_int_equal(s.recorded, 0);
	assert_string_equal(s.msg, "worker exited with status 3 (twice)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_before_ready_stops_the_run),
		cmocka_unit_test(test_first_line_not_ready_stops_the_run),
		cmocka_unit_test(test_exit_after_ready_fails_the_task),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
