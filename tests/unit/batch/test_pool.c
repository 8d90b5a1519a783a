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
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "batch/pool.h"
#include "batch/worker.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

struct seen {
	int done, recorded;
	char msg[1024]; /* the last outcome's */
	bool rec[8];    /* task i's recorded */
	char msgs[8][128];
	size_t block_after; /* i + 1: done() of task i blocks the loop */
	const char *fifo;   /* ... until a line reaches this FIFO, then 1.5 s */
};

static void task_line(void *ctx, size_t i, struct strbuf *sb)
{
	(void)ctx;
	strbuf_addf(sb, "task %zu", i);
}

static void done(void *ctx, size_t i, const struct worker_outcome *o, bool recorded)
{
	struct seen *s = ctx;
	if (s->block_after == i + 1) {
		/* The event loop is busy (see its test): until the worker has
		 * replied, then past the worker's 1 s deadline. */
		char buf[16];
		int fd = open(s->fifo, O_RDONLY);
		assert_true(fd >= 0);
		assert_true(read(fd, buf, sizeof(buf)) > 0);
		close(fd);
		usleep(1500 * 1000);
	}
	s->done++;
	s->recorded += recorded;
	snprintf(s->msg, sizeof(s->msg), "%s", o->msg);
	if (i < 8) {
		s->rec[i] = recorded;
		snprintf(s->msgs[i], sizeof(s->msgs[i]), "%.100s", o->msg);
	}
}

/* Runs ntasks tasks on one worker `sh -c script`; returns pool_run()'s
 * code, its message in err. */
static int run(const char *script, size_t ntasks, struct seen *s, char *err, size_t errlen)
{
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	struct pool_opts o = {
		.argv = argv, .nworkers = 1, .ctx = s, .task_line = task_line, .done = done
	};
	struct strbuf msg = STRBUF_INIT;
	memset(s, 0, sizeof(*s));
	int rc = pool_run(&o, ntasks, &msg);
	snprintf(err, errlen, "%s", msg.buf);
	strbuf_release(&msg);
	return rc;
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

/* A reply that reaches the loop after its worker's deadline fired (the
 * loop was busy: here done() of task 0 blocks it until the worker has
 * replied to task 1 and written to a FIFO, then 1.5 s more, past task 1's
 * 1 s deadline; libuv runs expired timers before it reads): task 1 is
 * recorded, and no task is given to the dying worker, where task 2 failed
 * "timed out" without ever running. */
static void test_late_reply_gives_no_task_to_a_killed_worker(void **state)
{
	(void)state;
	struct seen s;
	char dir[] = "/tmp/pptrace-pool-XXXXXX", fifo[64], script[256];
	struct strbuf err = STRBUF_INIT;
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/replied", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	snprintf(script, sizeof(script),
		 "echo " WORKER_READY "; while read c; do " REPLY(
			 "c") "if [ \"$c\" = 'task 1' ]; then echo replied > '%s'; fi; done",
		 fifo);
	char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct pool_opts o = { .argv = argv,
			       .nworkers = 1,
			       .timeout_s = 1,
			       .ctx = &s,
			       .task_line = task_line,
			       .done = done };
	memset(&s, 0, sizeof(s));
	s.block_after = 1;
	s.fifo = fifo;
	assert_int_equal(pool_run(&o, 3, &err), 0);
	strbuf_release(&err);
	assert_int_equal(s.done, 3);
	assert_true(s.rec[1]);
	assert_string_equal(s.msgs[1], "task 1");
	assert_true(s.rec[2]);
	assert_string_equal(s.msgs[2], "task 2");
	assert_int_equal(unlink(fifo), 0);
	assert_int_equal(rmdir(dir), 0);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_exit_before_ready_stops_the_run),
		  cmocka_unit_test(test_first_line_not_ready_stops_the_run),
		  cmocka_unit_test(test_exit_after_ready_fails_the_task),
		  cmocka_unit_test(test_late_reply_gives_no_task_to_a_killed_worker),
	  })
