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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "batch/pool.h"
#include "batch/worker.h"
#include "util/pp.h"
#include "util/strbuf.h"

struct seen {
	int done, recorded;
	char msg[1024]; /* the last outcome's */
	char order[64]; /* the tasks' numbers in the order they ended */
	bool rec[8];    /* task i's recorded */
	char msgs[8][128];
	size_t block_after; /* i + 1: done() of task i blocks 1.5 s */
};

static void task_line(void *ctx, size_t i, struct strbuf *sb)
{
	(void)ctx;
	strbuf_addf(sb, "task %zu", i);
}

static void done(void *ctx, size_t i, const struct worker_outcome *o, bool recorded)
{
	struct seen *s = ctx;
	if (s->block_after == i + 1)
		usleep(1500 * 1000); /* the event loop is busy: see its test */
	s->done++;
	s->recorded += recorded;
	snprintf(s->msg, sizeof(s->msg), "%s", o->msg);
	size_t n = strlen(s->order);
	snprintf(s->order + n, sizeof(s->order) - n, "%zu", i);
	if (i < 8) {
		s->rec[i] = recorded;
		snprintf(s->msgs[i], sizeof(s->msgs[i]), "%.100s", o->msg);
	}
}

/* Runs ntasks tasks on nworkers workers `sh -c script` with a per-task
 * timeout (0 = none); returns pool_run()'s code. */
static int run_pool(const char *script, int nworkers, size_t ntasks, double timeout_s,
		    struct seen *s, char *err, size_t errlen)
{
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	struct pool_opts o = { .argv = argv,
			       .nworkers = nworkers,
			       .timeout_s = timeout_s,
			       .ctx = s,
			       .task_line = task_line,
			       .done = done };
	memset(s, 0, sizeof(*s));
	err[0] = '\0';
	return pool_run(&o, ntasks, err, errlen);
}

static int run_timed(const char *script, size_t ntasks, double timeout_s, struct seen *s, char *err,
		     size_t errlen)
{
	return run_pool(script, 1, ntasks, timeout_s, s, err, errlen);
}

static int run(const char *script, size_t ntasks, struct seen *s, char *err, size_t errlen)
{
	return run_timed(script, ntasks, 0, s, err, errlen);
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

/* A reply line whose message is the task line. */
#define REPLY(var) "printf '0\\t0\\t1\\t'; echo \"$" var "\"; "
/* Reads a task, asks for a second one and reads it: holds two. */
#define HOLD_TWO "read a; echo " WORKER_MORE "; read b; "

/* After WORKER_MORE the worker holds a second task, before it has replied
 * to the first (its `read b` would wait for ever otherwise: the 30 s
 * timeout would fail task 0), and the replies end the tasks in order. */
static void test_more_gives_a_second_task(void **state)
{
	(void)state;
	struct seen s;
	char err[256];
	assert_int_equal(run_timed("echo " WORKER_READY "; read a; echo " WORKER_MORE
				   "; read b; " REPLY("a")
					   REPLY("b") "while read c; do " REPLY("c") "done",
				   4, 30, &s, err, sizeof(err)),
			 0);
	assert_int_equal(s.done, 4);
	assert_int_equal(s.recorded, 4);
	assert_string_equal(s.order, "0123");
	assert_string_equal(s.msgs[0], "task 0");
	assert_string_equal(s.msgs[1], "task 1");
	/* With nothing left to give, WORKER_MORE is ignored. */
	assert_int_equal(run_timed("echo " WORKER_READY "; read a; echo " WORKER_MORE
				   "; " REPLY("a") "while read c; do " REPLY("c") "done",
				   1, 30, &s, err, sizeof(err)),
			 0);
	assert_string_equal(s.order, "0");
	assert_true(s.rec[0]);
}

/* Near the end a second task is withheld: with 2 workers and 3 tasks, one
 * task waits after the first two are given, fewer than the workers, so
 * WORKER_MORE gets nothing. These workers reply only once they hold a
 * second task, so each of them hangs until its 1 s timeout: all three
 * tasks time out. (Given the task, the first worker to ask would have
 * served two of them.) */
static void test_more_withheld_near_the_end(void **state)
{
	(void)state;
	struct seen s;
	char err[256];
	assert_int_equal(run_pool("echo " WORKER_READY "; read a; echo " WORKER_MORE
				  "; read b; " REPLY("a")
					  REPLY("b") "while read c; do " REPLY("c") "done",
				  2, 3, 1, &s, err, sizeof(err)),
			 0);
	assert_int_equal(s.done, 3);
	assert_int_equal(s.recorded, 0);
	for (int i = 0; i < 3; i++)
		assert_string_equal(s.msgs[i], "timed out after 1 s: worker killed");
}

/* Makes tmpl (mkstemp's) the name of a file that does not exist: the
 * scripts below create it to tell a first worker from its replacement. */
static void unused_name(char *tmpl)
{
	int fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	close(fd);
	unlink(tmpl);
}

/* A worker that dies holding two tasks loses both: each is retried once
 * (here by the replacement worker, which serves them). */
static void test_crash_with_two_tasks_retries_both(void **state)
{
	(void)state;
	struct seen s;
	char err[256], script[1024], mark[] = "/tmp/pptrace-pool-XXXXXX";
	unused_name(mark);
	snprintf(script, sizeof(script),
		 "echo " WORKER_READY
		 "; if [ -e %s ]; then while read c; do " REPLY("c") "done; else : >%s; " HOLD_TWO
								     "exit 3; fi",
		 mark, mark);
	assert_int_equal(run(script, 3, &s, err, sizeof(err)), 0);
	unlink(mark);
	assert_int_equal(s.done, 3);
	assert_int_equal(s.recorded, 3);
	assert_string_equal(s.msgs[0], "task 0");
	assert_string_equal(s.msgs[1], "task 1");
	assert_string_equal(s.msgs[2], "task 2");
}

/* The first task's timeout kills the worker and fails that task only; the
 * second one it held is retried, and its own retry is kept: the next
 * worker's crash on it is retried once more. */
static void test_timeout_keeps_the_second_tasks_retry(void **state)
{
	(void)state;
	struct seen s;
	char err[256], script[1024], mark[] = "/tmp/pptrace-pool-XXXXXX";
	unused_name(mark);
	/* 1st worker: holds tasks 0 and 1, hangs. 2nd: exits on task 1. 3rd:
	 * serves. */
	snprintf(script, sizeof(script),
		 "echo " WORKER_READY "; if [ ! -e %s ]; then : >%s; " HOLD_TWO
		 "exec sleep 600; elif [ ! -e %s.2 ]; then : >%s.2; read a; exit 4; "
		 "else while read c; do " REPLY("c") "done; fi",
		 mark, mark, mark, mark);
	assert_int_equal(run_timed(script, 2, 1, &s, err, sizeof(err)), 0);
	char mark2[sizeof(mark) + 2];
	snprintf(mark2, sizeof(mark2), "%s.2", mark);
	unlink(mark);
	unlink(mark2);
	assert_int_equal(s.done, 2);
	assert_false(s.rec[0]);
	assert_string_equal(s.msgs[0], "timed out after 1 s: worker killed");
	assert_true(s.rec[1]);
	assert_string_equal(s.msgs[1], "task 1");
}

/* A retried task runs alone: it is neither given as a second task nor
 * given one. Here task 1 crashes any worker that holds it. The first
 * worker holds tasks 0 and 1 and dies: both are retried. Had its
 * replacement been given task 1 as a second to task 0, its crash would
 * have failed task 0 "(twice)" though task 0 never crashed anything. The
 * replacement asks for more on each task and replies once its `head`
 * finds no second line within 2 s (a withheld task can only pass late,
 * never fail the test). */
static void test_retried_task_runs_alone(void **state)
{
	(void)state;
	struct seen s;
	char err[256], script[1024], mark[] = "/tmp/pptrace-pool-XXXXXX";
	unused_name(mark);
	snprintf(script, sizeof(script),
		 "echo " WORKER_READY "; if [ ! -e %s ]; then : >%s; " HOLD_TWO "exit 3; fi; "
		 "while read a; do [ \"$a\" = 'task 1' ] && exit 3; echo " WORKER_MORE
		 "; b=$(timeout 2 head -n 1); [ -n \"$b\" ] && exit 3; " REPLY("a") "done",
		 mark, mark);
	assert_int_equal(run(script, 3, &s, err, sizeof(err)), 0);
	unlink(mark);
	assert_int_equal(s.done, 3);
	assert_true(s.rec[0]);
	assert_string_equal(s.msgs[0], "task 0");
	assert_false(s.rec[1]);
	assert_string_equal(s.msgs[1], "worker exited with status 3 (twice)");
	assert_true(s.rec[2]);
	assert_string_equal(s.msgs[2], "task 2");
}

/* A reply that reaches the loop after its worker's deadline fired (the
 * loop was busy: here done() of task 0 blocks it 1.5 s while the worker
 * replies to task 1 at once, and libuv runs expired timers before it
 * reads): task 1 is recorded, and no task is given to the dying worker,
 * where task 2 failed "timed out" without ever running. (If the worker
 * were slower than 1.5 s to reply, the test would pass without the
 * race, never fail.) */
static void test_late_reply_gives_no_task_to_a_killed_worker(void **state)
{
	(void)state;
	struct seen s;
	char err[256];
	memset(&s, 0, sizeof(s));
	char *argv[] = { "/bin/sh", "-c",
			 "echo " WORKER_READY "; while read c; do " REPLY("c") "done", NULL };
	struct pool_opts o = { .argv = argv,
			       .nworkers = 1,
			       .timeout_s = 1,
			       .ctx = &s,
			       .task_line = task_line,
			       .done = done };
	s.block_after = 1;
	assert_int_equal(pool_run(&o, 3, err, sizeof(err)), 0);
	assert_int_equal(s.done, 3);
	assert_true(s.rec[1]);
	assert_string_equal(s.msgs[1], "task 1");
	assert_true(s.rec[2]);
	assert_string_equal(s.msgs[2], "task 2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_before_ready_stops_the_run),
		cmocka_unit_test(test_first_line_not_ready_stops_the_run),
		cmocka_unit_test(test_exit_after_ready_fails_the_task),
		cmocka_unit_test(test_more_gives_a_second_task),
		cmocka_unit_test(test_more_withheld_near_the_end),
		cmocka_unit_test(test_crash_with_two_tasks_retries_both),
		cmocka_unit_test(test_timeout_keeps_the_second_tasks_retry),
		cmocka_unit_test(test_retried_task_runs_alone),
		cmocka_unit_test(test_late_reply_gives_no_task_to_a_killed_worker),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
