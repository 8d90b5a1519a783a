/* proc.h — supervised child processes on one libuv loop. The only module
 * that uses libuv; ppbatch's worker pool and the gnuplot renderer run their
 * children here.
 *
 * A runner owns the loop, and optionally a SIGINT/SIGTERM watch and a
 * periodic tick. A child is a program and its arguments (no shell), a
 * working folder, and for each of stdin, stdout and stderr: /dev/null, ours
 * (inherited) or a pipe. Writes to a stdin pipe are queued; a stdout pipe is
 * delivered line by line; a stderr pipe is kept (its last 8 KiB) for the
 * exit report, and delivered line by line too when asked. A deadline kills
 * the child (SIGKILL) when it passes.
 *
 * A child is finished when it has exited AND its stdout and stderr pipes
 * reached end of file, so nothing it wrote before exiting is lost. Then
 * on_exit runs, once; the child's memory is released after it returns, so
 * the struct proc must not be used after on_exit. proc_runner_run() returns
 * when no child is left, unfinished or spawned by a callback.
 *
 *   struct proc_runner *r = proc_runner_new(err, sizeof(err));
 *   proc_spawn(r, &spec, &p, err, sizeof(err));   (more, also from callbacks)
 *   proc_runner_run(r);
 *   proc_runner_free(r);
 *
 * Functions that can fail return 0 or PP_EIO with the reason in err
 * ("cannot start 'gnuplot': no such file or directory"); allocation
 * failure ends the process (docs/contracts.md).
 */
#ifndef PROC_H
#define PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proc_runner;
struct strbuf;
struct proc;

enum proc_stdio {
	PROC_NULL,    /* /dev/null */
	PROC_INHERIT, /* the runner's own stream */
	PROC_PIPE     /* stdin: proc_write(); stdout: on_line; stderr: kept */
};

/* How a child ended. */
struct proc_status {
	int64_t exit_status; /* when term_signal is 0 */
	int term_signal;     /* the signal that ended it, or 0 */
	bool timed_out;      /* its deadline passed: killed with SIGKILL */
	const char *err;     /* the last 8 KiB of a stderr pipe, or "" */
};

struct proc_spec {
	char *const *argv; /* NULL-terminated; argv[0] a path or a name on PATH */
	const char *cwd;   /* working folder, or NULL for ours */
	enum proc_stdio in, out, err;
	/* A line of a stdout pipe, without its '\n', NUL-terminated; the
	 * callback may modify it. A last line without '\n' is delivered too. */
	void (*on_line)(struct proc *p, char *line, size_t len);
	/* The child finished (see above). */
	void (*on_exit)(struct proc *p, const struct proc_status *st);
	void *data; /* proc_data() */
	/* Optional: each line of a stderr pipe as it arrives, as on_line but
	 * read-only (the tail is still kept for the exit report), e.g. to
	 * pass a child's messages on (util/pp.h, pp_report_line()). */
	void (*on_err_line)(struct proc *p, const char *line, size_t len);
};

/* A runner with its loop; NULL with the reason appended to err. Ignores SIGPIPE in
 * this process (a child that dies while we write to it is noticed by its
 * exit). */
struct proc_runner *proc_runner_new(struct strbuf *err);
/* Frees a runner whose proc_runner_run() returned (or that never ran a
 * child). Accepts NULL. */
void proc_runner_free(struct proc_runner *r);

/* Calls on_signal(ctx, signum) for every SIGINT and SIGTERM the process
 * receives while the runner runs (instead of the default: dying). */
int proc_runner_watch_signals(struct proc_runner *r, void (*on_signal)(void *ctx, int signum),
			      void *ctx, struct strbuf *err);
/* Calls tick(ctx) every ms milliseconds while the runner runs. */
int proc_runner_tick(struct proc_runner *r, unsigned ms, void (*tick)(void *ctx), void *ctx,
		     struct strbuf *err);

/* Starts a child; *out (may be NULL) is its handle until on_exit returns.
 * On failure no callback runs. */
int proc_spawn(struct proc_runner *r, const struct proc_spec *s, struct proc **out,
	       struct strbuf *err);

/* Runs the loop until every child finished. Returns 0, or PP_EIO when the
 * loop failed (its message appended to err). */
int proc_runner_run(struct proc_runner *r, struct strbuf *err);

/* Queues len bytes (copied) for the child's stdin pipe. A child that is
 * gone is noticed by its exit, not here. */
void proc_write(struct proc *p, const char *buf, size_t len);
/* Closes the child's stdin pipe (end of file for the child). Idempotent. */
void proc_close_stdin(struct proc *p);
/* Sends sig unless the child has exited already. */
void proc_kill(struct proc *p, int sig);
/* Kills the child with SIGKILL after `seconds` (from now; > 0), replacing
 * any earlier deadline; 0 cancels it. */
void proc_deadline(struct proc *p, double seconds);
/* Whether the deadline fired: the child is being killed, though lines it
 * wrote before may still be read. */
bool proc_timed_out(const struct proc *p);
int proc_pid(const struct proc *p);
void *proc_data(const struct proc *p);

#endif
