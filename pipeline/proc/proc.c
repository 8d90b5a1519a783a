/* proc.c — see proc.h.
 *
 * Life of one child (struct proc, heap-allocated per spawn):
 *
 *   spawn ──► RUNNING ──exit callback──► EXITED ─┐
 *               │                                 ├─► FINISHED: on_exit, then
 *               └──stdout/stderr at EOF──► EOF ───┘   every handle closed
 *
 * FINISHED needs both the exit callback and end of file on every pipe the
 * child writes to, in either order, so a line written just before exiting
 * is always delivered. The struct is freed in the close callback of its last
 * handle (libuv's rule: memory of a handle lives until its close callback).
 * The runner's own handles (signal watches, tick) are closed when the last
 * child finished, which ends uv_run().
 */
#include "proc.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "util/pp.h"
#include "util/strbuf.h"

enum { ERR_KEEP = 8192 };

struct proc_runner {
	uv_loop_t loop;
	uv_signal_t sig[2]; /* SIGINT, SIGTERM */
	uv_timer_t tick;
	bool sig_open[2], tick_open, globals_closed, ran;
	int live; /* spawned, not finished */
	void (*on_signal)(void *ctx, int signum);
	void *signal_ctx;
	void (*on_tick)(void *ctx);
	void *tick_ctx;
};

struct proc {
	struct proc_runner *r;
	void (*on_line)(struct proc *p, char *line, size_t len);
	void (*on_exit)(struct proc *p, const struct proc_status *st);
	void (*on_err_line)(struct proc *p, const char *line, size_t len);
	void *data;
	uv_process_t proc;
	uv_pipe_t in, out, err;
	uv_timer_t deadline;
	bool has_in, has_out, has_err;
	bool exited, out_eof, err_eof, finished, in_closed, timed_out;
	int open_handles; /* freed when it drops to 0 */
	int64_t exit_status;
	int term_signal;
	struct strbuf outbuf; /* a partial stdout line */
	struct strbuf errbuf; /* the tail of stderr */
	size_t err_done;      /* errbuf's bytes before it were given to on_err_line */
};

struct wreq {
	uv_write_t req;
	char *buf;
};

static void on_global_close(uv_handle_t *h)
{
	(void)h;
}

static void close_globals(struct proc_runner *r)
{
	if (r->globals_closed)
		return;
	r->globals_closed = true;
	for (int i = 0; i < 2; i++)
		if (r->sig_open[i])
			uv_close((uv_handle_t *)&r->sig[i], on_global_close);
	if (r->tick_open)
		uv_close((uv_handle_t *)&r->tick, on_global_close);
}

struct proc_runner *proc_runner_new(struct strbuf *err)
{
	struct proc_runner *r = xcalloc(1, sizeof(*r));
	int rc = uv_loop_init(&r->loop);
	if (rc < 0) {
		pp_err(err, PP_EIO, "cannot start an event loop: %s", uv_strerror(rc));
		free(r);
		return NULL;
	}
	signal(SIGPIPE, SIG_IGN);
	return r;
}

void proc_runner_free(struct proc_runner *r)
{
	if (!r)
		return;
	if (!r->ran) { /* handles opened but never run: close them */
		close_globals(r);
		uv_run(&r->loop, UV_RUN_DEFAULT);
		uv_loop_close(&r->loop);
	}
	free(r);
}

static void on_signal(uv_signal_t *h, int signum)
{
	struct proc_runner *r = h->data;
	r->on_signal(r->signal_ctx, signum);
}

int proc_runner_watch_signals(struct proc_runner *r, void (*cb)(void *ctx, int signum), void *ctx,
			      struct strbuf *err)
{
	static const int signum[2] = { SIGINT, SIGTERM };
	r->on_signal = cb;
	r->signal_ctx = ctx;
	for (int i = 0; i < 2; i++) {
		int rc = uv_signal_init(&r->loop, &r->sig[i]);
		if (rc == 0) {
			r->sig_open[i] = true;
			r->sig[i].data = r;
			rc = uv_signal_start(&r->sig[i], on_signal, signum[i]);
		}
		if (rc < 0) {
			return pp_err(err, PP_EIO, "cannot watch SIG%s: %s",
				      sigabbrev_np(signum[i]), uv_strerror(rc));
		}
	}
	return 0;
}

static void on_tick(uv_timer_t *t)
{
	struct proc_runner *r = t->data;
	r->on_tick(r->tick_ctx);
}

int proc_runner_tick(struct proc_runner *r, unsigned ms, void (*tick)(void *ctx), void *ctx,
		     struct strbuf *err)
{
	int rc = uv_timer_init(&r->loop, &r->tick);
	r->on_tick = tick;
	r->tick_ctx = ctx;
	if (rc == 0) {
		r->tick_open = true;
		r->tick.data = r;
		rc = uv_timer_start(&r->tick, on_tick, ms, ms);
	}
	if (rc < 0) {
		return pp_err(err, PP_EIO, "cannot start a %u ms timer: %s", ms, uv_strerror(rc));
	}
	return 0;
}

int proc_runner_run(struct proc_runner *r, struct strbuf *err)
{
	int rc;
	r->ran = true;
	if (r->live == 0)
		close_globals(r);
	uv_run(&r->loop, UV_RUN_DEFAULT);
	if ((rc = uv_loop_close(&r->loop)) < 0) {
		return pp_err(err, PP_EIO, "event loop not closed: %s", uv_strerror(rc));
	}
	return 0;
}

/* ---- one child ---------------------------------------------------------- */

static void on_close(uv_handle_t *h)
{
	struct proc *p = h->data;
	if (--p->open_handles == 0) {
		strbuf_release(&p->outbuf);
		strbuf_release(&p->errbuf);
		free(p);
	}
}

static void close_handle(void *h)
{
	uv_close((uv_handle_t *)h, on_close);
}

void proc_close_stdin(struct proc *p)
{
	if (!p->has_in || p->in_closed)
		return;
	p->in_closed = true;
	close_handle(&p->in);
}

/* Closes every handle of p; the last close callback frees it. */
static void close_all(struct proc *p)
{
	proc_close_stdin(p);
	if (p->has_out)
		close_handle(&p->out);
	if (p->has_err)
		close_handle(&p->err);
	close_handle(&p->deadline);
	close_handle(&p->proc);
}

static void finish(struct proc *p)
{
	struct proc_runner *r = p->r;
	if (p->finished || !p->exited || (p->has_out && !p->out_eof) || (p->has_err && !p->err_eof))
		return;
	p->finished = true;
	uv_timer_stop(&p->deadline);
	if (p->outbuf.len && p->on_line) /* a last line without '\n' */
		p->on_line(p, p->outbuf.buf, p->outbuf.len);
	if (p->err_done < p->errbuf.len && p->on_err_line)
		p->on_err_line(p, p->errbuf.buf + p->err_done, p->errbuf.len - p->err_done);
	struct proc_status st = { p->exit_status, p->term_signal, p->timed_out, p->errbuf.buf };
	r->live--;
	if (p->on_exit)
		p->on_exit(p, &st);
	close_all(p);
	if (r->live == 0)
		close_globals(r);
}

static void on_exit_cb(uv_process_t *h, int64_t status, int sig)
{
	struct proc *p = h->data;
	p->exited = true;
	p->exit_status = status;
	p->term_signal = sig;
	finish(p);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct proc *p = h->data;
	struct strbuf *sb = h == (uv_handle_t *)&p->out ? &p->outbuf : &p->errbuf;
	strbuf_grow(sb, suggested);
	*buf = uv_buf_init(sb->buf + sb->len, (unsigned)(sb->alloc - sb->len - 1));
}

/* Takes the nread bytes a read of stream s put at the end of sb; at the
 * end of the stream (or an error: the same for us) stops reading, sets
 * *eof and returns false. */
static bool took(struct proc *p, uv_stream_t *s, ssize_t nread, struct strbuf *sb, bool *eof)
{
	if (nread < 0) {
		uv_read_stop(s);
		*eof = true;
		finish(p);
		return false;
	}
	sb->len += (size_t)nread;
	sb->buf[sb->len] = '\0';
	return true;
}

static void on_read_out(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct proc *p = s->data;
	struct strbuf *sb = &p->outbuf;
	char *nl;
	(void)buf;
	if (!took(p, s, nread, sb, &p->out_eof))
		return;
	size_t done = 0;
	while ((nl = memchr(sb->buf + done, '\n', sb->len - done))) {
		*nl = '\0';
		if (p->on_line)
			p->on_line(p, sb->buf + done, (size_t)(nl - sb->buf) - done);
		done = (size_t)(nl - sb->buf) + 1;
	}
	memmove(sb->buf, sb->buf + done, sb->len - done + 1);
	sb->len -= done;
}

static void on_read_err(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct proc *p = s->data;
	struct strbuf *sb = &p->errbuf;
	(void)buf;
	if (!took(p, s, nread, sb, &p->err_eof))
		return;
	char *nl;
	while (p->on_err_line &&
	       (nl = memchr(sb->buf + p->err_done, '\n', sb->len - p->err_done))) {
		*nl = '\0';
		p->on_err_line(p, sb->buf + p->err_done, (size_t)(nl - sb->buf) - p->err_done);
		*nl = '\n';
		p->err_done = (size_t)(nl - sb->buf) + 1;
	}
	if (sb->len > 2 * ERR_KEEP) { /* keep the tail: gnuplot's error is last */
		size_t cut = sb->len - ERR_KEEP;
		memmove(sb->buf, sb->buf + cut, ERR_KEEP);
		sb->len = ERR_KEEP;
		sb->buf[sb->len] = '\0';
		/* (a line longer than the tail is delivered from the tail on) */
		p->err_done = p->err_done > cut ? p->err_done - cut : 0;
	}
}

static void on_deadline(uv_timer_t *t)
{
	struct proc *p = t->data;
	p->timed_out = true;
	proc_kill(p, SIGKILL);
}

static void set_stdio(uv_stdio_container_t *c, enum proc_stdio mode, uv_pipe_t *pipe, int fd,
		      int dir)
{
	if (mode == PROC_PIPE) {
		c->flags = UV_CREATE_PIPE | dir;
		c->data.stream = (uv_stream_t *)pipe;
	} else if (mode == PROC_INHERIT) {
		c->flags = UV_INHERIT_FD;
		c->data.fd = fd;
	} else {
		c->flags = UV_IGNORE; /* libuv opens /dev/null for 0-2 */
	}
}

int proc_spawn(struct proc_runner *r, const struct proc_spec *s, struct proc **out,
	       struct strbuf *err)
{
	struct proc *p = xcalloc(1, sizeof(*p));
	uv_process_options_t po;
	uv_stdio_container_t stdio[3];
	int rc = 0;

	p->r = r;
	p->on_line = s->on_line;
	p->on_err_line = s->on_err_line;
	p->on_exit = s->on_exit;
	p->data = s->data;
	strbuf_init(&p->outbuf, 0);
	strbuf_init(&p->errbuf, 0);
	p->proc.data = p->in.data = p->out.data = p->err.data = p->deadline.data = p;
	p->has_in = s->in == PROC_PIPE;
	p->has_out = s->out == PROC_PIPE;
	p->has_err = s->err == PROC_PIPE;
	/* libuv's unix pipe and timer init cannot fail: only the spawn can. */
	if (p->has_in)
		uv_pipe_init(&r->loop, &p->in, 0);
	if (p->has_out)
		uv_pipe_init(&r->loop, &p->out, 0);
	if (p->has_err)
		uv_pipe_init(&r->loop, &p->err, 0);
	uv_timer_init(&r->loop, &p->deadline);
	memset(&po, 0, sizeof(po));
	set_stdio(&stdio[0], s->in, &p->in, 0, UV_READABLE_PIPE);
	set_stdio(&stdio[1], s->out, &p->out, 1, UV_WRITABLE_PIPE);
	set_stdio(&stdio[2], s->err, &p->err, 2, UV_WRITABLE_PIPE);
	po.file = s->argv[0];
	po.args = (char **)s->argv;
	po.cwd = s->cwd;
	po.stdio = stdio;
	po.stdio_count = 3;
	po.exit_cb = on_exit_cb;
	p->open_handles = 2 + p->has_in + p->has_out + p->has_err; /* + timer, process */
	if ((rc = uv_spawn(&r->loop, &p->proc, &po)) < 0) {
		/* The handles are freed by the loop: no callback of ours runs. */
		pp_err(err, PP_EIO, "cannot start '%s': %s", s->argv[0], uv_strerror(rc));
		p->finished = true;
		close_all(p);
		return PP_EIO;
	}
	r->live++;
	if (p->has_out && (rc = uv_read_start((uv_stream_t *)&p->out, on_alloc, on_read_out)) < 0)
		p->out_eof = true;
	if (rc == 0 && p->has_err &&
	    (rc = uv_read_start((uv_stream_t *)&p->err, on_alloc, on_read_err)) < 0)
		p->err_eof = true;
	if (rc < 0) {
		/* Unreadable: the child cannot be supervised. It is killed and
		 * finishes through its exit callback like any other. */
		warn("cannot read from '%s' (pid %d): %s", s->argv[0], (int)p->proc.pid,
		     uv_strerror(rc));
		p->out_eof = p->err_eof = true;
		proc_kill(p, SIGKILL);
	}
	if (out)
		*out = p;
	return 0;
}

static void on_write(uv_write_t *req, int status)
{
	struct wreq *wr = (struct wreq *)req;
	(void)status; /* a dead child is noticed by its exit callback */
	free(wr->buf);
	free(wr);
}

void proc_write(struct proc *p, const char *buf, size_t len)
{
	if (!p->has_in || p->in_closed)
		return;
	struct wreq *wr = xcalloc(1, sizeof(*wr));
	wr->buf = xmalloc(len ? len : 1);
	memcpy(wr->buf, buf, len);
	uv_buf_t b = uv_buf_init(wr->buf, (unsigned)len);
	if (uv_write(&wr->req, (uv_stream_t *)&p->in, &b, 1, on_write) < 0) {
		/* The child is dying: its exit callback tells. */
		free(wr->buf);
		free(wr);
	}
}

void proc_kill(struct proc *p, int sig)
{
	if (p->exited)
		return;
	int rc = uv_process_kill(&p->proc, sig);
	if (rc < 0 && rc != UV_ESRCH)
		warn("cannot signal process %d: %s", (int)p->proc.pid, uv_strerror(rc));
}

void proc_deadline(struct proc *p, double seconds)
{
	if (seconds <= 0) {
		uv_timer_stop(&p->deadline);
		return;
	}
	uint64_t ms = (uint64_t)(seconds * 1000.0);
	int rc = uv_timer_start(&p->deadline, on_deadline, ms ? ms : 1, 0);
	if (rc < 0)
		warn("cannot start the %g s deadline of process %d: %s", seconds, (int)p->proc.pid,
		     uv_strerror(rc));
}

bool proc_timed_out(const struct proc *p)
{
	return p->timed_out;
}

int proc_pid(const struct proc *p)
{
	return (int)p->proc.pid;
}

void *proc_data(const struct proc *p)
{
	return p->data;
}
