/* Unit tests for the process runner (pipeline/proc/proc.h), with real child
 * processes (/bin/sh, cat, sleep): stdout lines (a last one written just
 * before exiting included), exit status and signal, stdin, kept stderr,
 * the working folder, deadlines, spawn failures, children spawned from
 * callbacks, and the SIGINT/SIGTERM watch. Every wait is on an event (an
 * exit, a line, a signal), never on time. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "proc/proc.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

/* What the callbacks saw. */
struct seen {
	struct strbuf lines; /* each line followed by '|' */
	int exits;
	struct proc_status st;
	char err[256];
	struct proc_runner *r;
	int chain_left;   /* test_chain: children still to spawn */
	int signals;      /* test_signals */
	struct proc *cat; /* test_signals: the child to end on a signal */
};

static void on_line(struct proc *p, char *line, size_t len)
{
	struct seen *s = proc_data(p);
	assert_int_equal(strlen(line), len);
	strbuf_addf(&s->lines, "%s|", line);
}

static void on_exit_cb(struct proc *p, const struct proc_status *st)
{
	struct seen *s = proc_data(p);
	s->exits++;
	s->st = *st;
	snprintf(s->err, sizeof(s->err), "%s", st->err);
}

static struct proc_runner *runner(void)
{
	struct strbuf err = STRBUF_INIT;
	struct proc_runner *r = proc_runner_new(&err);
	assert_non_null(r);
	return r;
}

static struct proc *spawn(struct proc_runner *r, struct seen *s, char *const *argv,
			  enum proc_stdio in, enum proc_stdio err)
{
	struct strbuf why = STRBUF_INIT;
	struct proc *p = NULL;
	struct proc_spec spec = { argv, NULL, in, PROC_PIPE, err, on_line, on_exit_cb, s, NULL };
	if (proc_spawn(r, &spec, &p, &why))
		fail_msg("spawn %s: %s", argv[0], why.buf);
	return p;
}

static void run(struct proc_runner *r)
{
	struct strbuf err = STRBUF_INIT;
	assert_int_equal(proc_runner_run(r, &err), 0);
	proc_runner_free(r);
}

static void test_lines_status_stderr(void **state)
{
	struct seen s = { .lines = STRBUF_INIT };
	char *argv[] = { "/bin/sh", "-c", "printf 'a\\nbb\\n'; echo oops >&2; printf last; exit 3",
			 NULL };
	(void)state;
	struct proc_runner *r = runner();
	spawn(r, &s, argv, PROC_NULL, PROC_PIPE);
	run(r);
	assert_int_equal(s.exits, 1);
	assert_string_equal(s.lines.buf, "a|bb|last|");
	assert_int_equal(s.st.exit_status, 3);
	assert_int_equal(s.st.term_signal, 0);
	assert_false(s.st.timed_out);
	assert_string_equal(s.err, "oops\n");
	strbuf_release(&s.lines);
}

static void on_err_line(struct proc *p, const char *line, size_t len)
{
	struct seen *s = proc_data(p);
	assert_int_equal(strlen(line), len);
	strbuf_addf(&s->lines, "%.20s(%zu)|", line, len);
}

/* The child waits on its stdin after "two\nthr": stderr is read up to
 * "thr", and the rest of that line comes only once "two" was delivered. */
static void on_err_line_go_on(struct proc *p, const char *line, size_t len)
{
	on_err_line(p, line, len);
	if (!strcmp(line, "two"))
		proc_close_stdin(p);
}

/* A stderr pipe delivered line by line, a line written in two parts whole,
 * the last one without '\n' too, and still kept for the exit report. */
static void test_stderr_lines(void **state)
{
	struct seen s = { .lines = STRBUF_INIT };
	char *argv[] = { "/bin/sh", "-c",
			 "echo one >&2; printf 'two\\nthr' >&2; read go; echo ee >&2; "
			 "printf end >&2",
			 NULL };
	(void)state;
	struct strbuf why = STRBUF_INIT;
	struct proc_runner *r = runner();
	struct proc_spec spec = { argv,    NULL,       PROC_PIPE, PROC_PIPE,        PROC_PIPE,
				  on_line, on_exit_cb, &s,        on_err_line_go_on };
	assert_int_equal(proc_spawn(r, &spec, NULL, &why), 0);
	run(r);
	assert_int_equal(s.exits, 1);
	assert_string_equal(s.lines.buf, "one(3)|two(3)|three(5)|end(3)|");
	assert_string_equal(s.err, "one\ntwo\nthree\nend");
	strbuf_release(&s.lines);
}

static void test_stdin(void **state)
{
	struct seen s = { .lines = STRBUF_INIT };
	char *argv[] = { "cat", NULL };
	(void)state;
	struct proc_runner *r = runner();
	struct proc *p = spawn(r, &s, argv, PROC_PIPE, PROC_INHERIT);
	proc_write(p, "x\ny", 3);
	proc_write(p, "\n", 1);
	proc_close_stdin(p);
	proc_close_stdin(p); /* idempotent */
	run(r);
	assert_string_equal(s.lines.buf, "x|y|");
	assert_int_equal(s.st.exit_status, 0);
	assert_string_equal(s.err, ""); /* stderr not a pipe: nothing kept */
	strbuf_release(&s.lines);
}

static void test_signal_and_deadline(void **state)
{
	struct seen s = { .lines = STRBUF_INIT }, t = { .lines = STRBUF_INIT };
	char *killed[] = { "/bin/sh", "-c", "kill -TERM $$", NULL };
	char *sleeper[] = { "sleep", "600", NULL };
	(void)state;
	struct proc_runner *r = runner();
	spawn(r, &s, killed, PROC_NULL, PROC_INHERIT);
	proc_deadline(spawn(r, &t, sleeper, PROC_NULL, PROC_INHERIT), 0.05);
	run(r);
	assert_int_equal(s.st.term_signal, SIGTERM);
	assert_false(s.st.timed_out);
	assert_int_equal(t.st.term_signal, SIGKILL);
	assert_true(t.st.timed_out);
	strbuf_release(&s.lines);
	strbuf_release(&t.lines);
}

static void test_cwd_and_spawn_failure(void **state)
{
	struct seen s = { .lines = STRBUF_INIT };
	char *pwd[] = { "/bin/sh", "-c", "pwd -P", NULL };
	char *missing[] = { "/nonexistent/prog", NULL };
	struct strbuf err = STRBUF_INIT;
	struct proc *p = NULL;
	(void)state;
	struct proc_runner *r = runner();
	struct proc_spec spec = { pwd,     "/",        PROC_NULL, PROC_PIPE, PROC_INHERIT,
				  on_line, on_exit_cb, &s,        NULL };
	assert_int_equal(proc_spawn(r, &spec, &p, &err), 0);
	spec.argv = missing;
	assert_int_equal(proc_spawn(r, &spec, NULL, &err), PP_EIO);
	assert_string_equal(err.buf, "cannot start '/nonexistent/prog': no such file or directory");
	strbuf_release(&err);
	run(r);
	assert_int_equal(s.exits, 1); /* the failed spawn has no callback */
	assert_string_equal(s.lines.buf, "/|");
	strbuf_release(&s.lines);
}

/* Each child spawns the next from its exit callback. */
static void chain_exit(struct proc *p, const struct proc_status *st)
{
	struct seen *s = proc_data(p);
	char *argv[] = { "/bin/sh", "-c", "echo $$", NULL };
	struct strbuf err = STRBUF_INIT;
	struct proc_spec spec = { argv,    NULL,       PROC_NULL, PROC_PIPE, PROC_INHERIT,
				  on_line, chain_exit, s,         NULL };
	on_exit_cb(p, st);
	if (s->chain_left-- > 0)
		assert_int_equal(proc_spawn(s->r, &spec, NULL, &err), 0);
}

static void test_chain(void **state)
{
	struct seen s = { .lines = STRBUF_INIT };
	char *argv[] = { "true", NULL };
	struct strbuf err = STRBUF_INIT;
	(void)state;
	s.r = runner();
	s.chain_left = 4;
	struct proc_spec spec = { argv,    NULL,       PROC_NULL, PROC_PIPE, PROC_INHERIT,
				  on_line, chain_exit, &s,        NULL };
	assert_int_equal(proc_spawn(s.r, &spec, NULL, &err), 0);
	run(s.r);
	assert_int_equal(s.exits, 5);
	int lines = 0;
	for (const char *c = s.lines.buf; *c; c++)
		lines += *c == '|';
	assert_int_equal(lines, 4);
	strbuf_release(&s.lines);
}

/* A signal to this process reaches on_signal, not the default action. */
static void signal_tick(void *ctx)
{
	struct seen *s = ctx;
	if (s->signals == 0 && s->exits == 0)
		kill(getpid(), SIGTERM); /* once: on_signal counts it */
}

static void on_signal(void *ctx, int signum)
{
	struct seen *s = ctx;
	assert_int_equal(signum, SIGTERM);
	s->signals++;
	proc_close_stdin(s->cat); /* cat ends at end of file */
}

static void test_signals(void **state)
{
	struct seen s = { .lines = STRBUF_INIT };
	char *argv[] = { "cat", NULL };
	struct strbuf err = STRBUF_INIT;
	(void)state;
	struct proc_runner *r = runner();
	assert_int_equal(proc_runner_watch_signals(r, on_signal, &s, &err), 0);
	assert_int_equal(proc_runner_tick(r, 5, signal_tick, &s, &err), 0);
	s.cat = spawn(r, &s, argv, PROC_PIPE, PROC_INHERIT);
	run(r);
	assert_int_equal(s.signals, 1);
	assert_int_equal(s.exits, 1);
	assert_int_equal(s.st.exit_status, 0);
	strbuf_release(&s.lines);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_lines_status_stderr),
		  cmocka_unit_test(test_stderr_lines),
		  cmocka_unit_test(test_stdin),
		  cmocka_unit_test(test_signal_and_deadline),
		  cmocka_unit_test(test_cwd_and_spawn_failure),
		  cmocka_unit_test(test_chain),
		  cmocka_unit_test(test_signals),
	  })
