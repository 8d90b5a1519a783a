/* pool.c — supervised worker processes on a libuv loop (see pool.h).
 *
 * Life of one worker (struct pworker, heap-allocated per spawn):
 *
 *   spawn ──► IDLE ──write task──► BUSY ──reply──► IDLE ──no task──► stdin
 *               ▲                   │ │                              closed
 *               │         timeout: kill│ │exit/signal                   │
 *               │                   ▼ ▼                                 ▼
 *   respawn ◄── FINALIZED ◄── (exit seen AND stdout at EOF) ◄───────── exit
 *
 * A worker is finalized only when both its exit callback ran and its stdout
 * reached EOF, so a reply written just before exiting is never lost. At
 * finalization a task still assigned is retried once (crash) or failed
 * (second crash, timeout) unless the pool was interrupted; the slot is
 * respawned while tasks remain. The struct is freed in the close callback
 * of the last of its four handles. The loop ends when no worker is live and
 * the signal and tick handles are closed.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "pool.h"
#include "storage/db.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "worker.h"

struct pool;

struct pworker {
	struct pool *pool;
	int slot;
	uv_process_t proc;
	uv_pipe_t in, out;     /* child's stdin (we write), stdout (we read) */
	uv_timer_t timer;      /* --timeout of the current task */
	int open_handles;      /* freed when it drops to 0 */
	bool exited, eof, finalized, in_closed, timed_out, replied_once;
	int64_t exit_status;
	int term_signal;
	long task;             /* -1 when idle */
	struct strbuf rbuf;    /* partial reply line */
};

struct pool {
	const struct pool_opts *o;
	uv_loop_t loop;
	uv_signal_t sigint, sigterm;
	uv_timer_t tick;
	struct pworker **slots;
	size_t ntasks, next;   /* next fresh task */
	size_t *retry;         /* FIFO of tasks to retry (each at most once) */
	size_t retry_head, retry_tail;
	unsigned char *attempts;
	int live;              /* workers spawned and not finalized */
	int nsignals;          /* SIGINT/SIGTERM received */
	bool fatal, globals_closed;
	char *err;
	size_t errlen;
};

struct wreq {
	uv_write_t req;
	char *buf;
};

static void spawn_worker(struct pool *p, int slot);

static bool stopping(const struct pool *p)
{
	return p->nsignals > 0 || p->fatal;
}

static bool tasks_pending(const struct pool *p)
{
	return p->retry_head < p->retry_tail || p->next < p->ntasks;
}

static void on_close(uv_handle_t *h)
{
	struct pworker *w = h->data;
	if (--w->open_handles == 0) {
		strbuf_release(&w->rbuf);
		free(w);
	}
}

static void on_global_close(uv_handle_t *h)
{
	(void)h;
}

static void close_globals(struct pool *p)
{
	if (p->globals_closed)
		return;
	p->globals_closed = true;
	uv_close((uv_handle_t *)&p->sigint, on_global_close);
	uv_close((uv_handle_t *)&p->sigterm, on_global_close);
	uv_close((uv_handle_t *)&p->tick, on_global_close);
}

static void close_stdin(struct pworker *w)
{
	if (w->in_closed)
		return;
	w->in_closed = true;
	uv_close((uv_handle_t *)&w->in, on_close);
}

static void kill_worker(struct pworker *w, int sig)
{
	if (!w->exited) {
		int rc = uv_process_kill(&w->proc, sig);
		if (rc < 0 && rc != UV_ESRCH)
			warn("cannot signal worker %d: %s", (int)w->proc.pid,
			     uv_strerror(rc));
	}
}

static void stop_all(struct pool *p, int sig)
{
	for (int i = 0; i < p->o->nworkers; i++) {
		struct pworker *w = p->slots[i];
		if (w && !w->finalized) {
			kill_worker(w, sig);
			close_stdin(w);
		}
	}
}

static void fail_task(struct pool *p, size_t task, int kind, const char *msg)
{
	struct worker_outcome out;
	memset(&out, 0, sizeof(out));
	out.status = DB_STATUS_FAILED;
	out.fail_kind = kind;
	snprintf(out.msg, sizeof(out.msg), "%s", msg);
	p->o->done(p->o->ctx, task, &out, false);
}

static void on_write(uv_write_t *req, int status)
{
	struct wreq *wr = (struct wreq *)req;
	(void)status; /* a dead worker is noticed by its exit callback */
	free(wr->buf);
	free(wr);
}

static void on_timeout(uv_timer_t *t)
{
	struct pworker *w = t->data;
	w->timed_out = true;
	kill_worker(w, SIGKILL);
}

/* Gives w its next task, or closes its stdin when there is none. */
static void dispatch(struct pworker *w)
{
	struct pool *p = w->pool;
	size_t task;
	int rc;
	if (stopping(p) || !tasks_pending(p)) {
		close_stdin(w);
		return;
	}
	task = p->retry_head < p->retry_tail ? p->retry[p->retry_head++]
					     : p->next++;
	struct strbuf sb = STRBUF_INIT;
	p->o->task_line(p->o->ctx, task, &sb);
	strbuf_addch(&sb, '\n');
	struct wreq *wr = xcalloc(1, sizeof(*wr));
	size_t len;
	wr->buf = strbuf_detach(&sb, &len);
	uv_buf_t b = uv_buf_init(wr->buf, (unsigned)len);
	w->task = (long)task;
	w->timed_out = false;
	if ((rc = uv_write(&wr->req, (uv_stream_t *)&w->in, &b, 1, on_write)) < 0) {
		/* The worker is dying; its exit callback retries the task. */
		free(wr->buf);
		free(wr);
		return;
	}
	if (p->o->timeout_s > 0) {
		uint64_t ms = (uint64_t)(p->o->timeout_s * 1000.0);
		if ((rc = uv_timer_start(&w->timer, on_timeout, ms ? ms : 1, 0)) < 0)
			warn("cannot start timer: %s", uv_strerror(rc));
	}
}

static void finalize(struct pworker *w)
{
	struct pool *p = w->pool;
	char msg[256];
	if (w->finalized || !w->exited || !w->eof)
		return;
	w->finalized = true;
	uv_timer_stop(&w->timer);
	if (!w->replied_once && !w->timed_out && !stopping(p) &&
	    w->term_signal == 0 && w->exit_status != 0) {
		snprintf(p->err, p->errlen,
			 "worker exited with status %lld before its first reply",
			 (long long)w->exit_status);
		p->fatal = true;
		stop_all(p, SIGTERM);
	} else if (w->task >= 0 && !stopping(p)) {
		size_t task = (size_t)w->task;
		if (w->timed_out) {
			snprintf(msg, sizeof(msg), "timed out after %g s: worker killed",
				 p->o->timeout_s);
			fail_task(p, task, DB_FAIL_TIMEOUT, msg);
		} else {
			if (w->term_signal) {
				const char *abbrev = sigabbrev_np(w->term_signal);
				snprintf(msg, sizeof(msg), "worker killed by signal SIG%s",
					 abbrev ? abbrev : "?");
			} else {
				snprintf(msg, sizeof(msg), "worker exited with status %lld",
					 (long long)w->exit_status);
			}
			if (p->attempts[task]++ == 0) {
				p->retry[p->retry_tail++] = task;
			} else {
				size_t n = strlen(msg);
				snprintf(msg + n, sizeof(msg) - n, " (twice)");
				fail_task(p, task, DB_FAIL_CRASH, msg);
			}
		}
	}
	w->task = -1;
	close_stdin(w);
	uv_close((uv_handle_t *)&w->out, on_close);
	uv_close((uv_handle_t *)&w->timer, on_close);
	uv_close((uv_handle_t *)&w->proc, on_close);
	p->slots[w->slot] = NULL;
	p->live--;
	if (!stopping(p) && tasks_pending(p))
		spawn_worker(p, w->slot);
	if (p->live == 0)
		close_globals(p);
}

static void on_exit_cb(uv_process_t *proc, int64_t status, int sig)
{
	struct pworker *w = proc->data;
	w->exited = true;
	w->exit_status = status;
	w->term_signal = sig;
	finalize(w);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct pworker *w = h->data;
	strbuf_grow(&w->rbuf, suggested);
	*buf = uv_buf_init(w->rbuf.buf + w->rbuf.len,
			   (unsigned)(w->rbuf.alloc - w->rbuf.len - 1));
}

static void handle_reply(struct pworker *w, char *line)
{
	struct pool *p = w->pool;
	struct worker_outcome out;
	if (w->task < 0)
		return; /* nothing asked: ignore */
	if (worker_reply_decode(line, &out)) {
		memset(&out, 0, sizeof(out));
		out.status = DB_STATUS_FAILED;
		out.fail_kind = DB_FAIL_CRASH;
		snprintf(out.msg, sizeof(out.msg), "malformed worker reply");
	}
	uv_timer_stop(&w->timer);
	size_t task = (size_t)w->task;
	w->task = -1;
	w->replied_once = true;
	p->o->done(p->o->ctx, task, &out, true);
	dispatch(w);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct pworker *w = s->data;
	(void)buf;
	if (nread < 0) {
		uv_read_stop(s);
		w->eof = true;
		finalize(w);
		return;
	}
	w->rbuf.len += (size_t)nread;
	w->rbuf.buf[w->rbuf.len] = '\0';
	char *nl;
	while ((nl = memchr(w->rbuf.buf, '\n', w->rbuf.len))) {
		size_t n = (size_t)(nl - w->rbuf.buf) + 1;
		char *line = xmalloc(n + 1);
		memcpy(line, w->rbuf.buf, n);
		line[n] = '\0';
		memmove(w->rbuf.buf, w->rbuf.buf + n, w->rbuf.len - n + 1);
		w->rbuf.len -= n;
		handle_reply(w, line);
		free(line);
	}
}

static void spawn_worker(struct pool *p, int slot)
{
	struct pworker *w = xcalloc(1, sizeof(*w));
	uv_process_options_t po;
	uv_stdio_container_t stdio[3];
	int rc;

	w->pool = p;
	w->slot = slot;
	w->task = -1;
	strbuf_init(&w->rbuf, 256);
	w->proc.data = w->in.data = w->out.data = w->timer.data = w;
	uv_pipe_init(&p->loop, &w->in, 0);
	uv_pipe_init(&p->loop, &w->out, 0);
	uv_timer_init(&p->loop, &w->timer);
	w->open_handles = 4;

	memset(&po, 0, sizeof(po));
	stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
	stdio[0].data.stream = (uv_stream_t *)&w->in;
	stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[1].data.stream = (uv_stream_t *)&w->out;
	stdio[2].flags = UV_INHERIT_FD;
	stdio[2].data.fd = 2;
	po.file = p->o->argv[0];
	po.args = p->o->argv;
	po.stdio = stdio;
	po.stdio_count = 3;
	po.exit_cb = on_exit_cb;
	if ((rc = uv_spawn(&p->loop, &w->proc, &po)) < 0) {
		snprintf(p->err, p->errlen, "cannot start worker '%s': %s",
			 p->o->argv[0], uv_strerror(rc));
		p->fatal = true;
		w->finalized = true;
		uv_close((uv_handle_t *)&w->in, on_close);
		uv_close((uv_handle_t *)&w->out, on_close);
		uv_close((uv_handle_t *)&w->timer, on_close);
		uv_close((uv_handle_t *)&w->proc, on_close);
		stop_all(p, SIGTERM);
		if (p->live == 0)
			close_globals(p);
		return;
	}
	p->slots[slot] = w;
	p->live++;
	if ((rc = uv_read_start((uv_stream_t *)&w->out, on_alloc, on_read)) < 0) {
		warn("cannot read from worker: %s", uv_strerror(rc));
		kill_worker(w, SIGKILL);
		w->eof = true;
		return;
	}
	dispatch(w);
}

static void on_signal(uv_signal_t *h, int signum)
{
	struct pool *p = h->data;
	/* First signal: terminate workers; a second one kills them. */
	stop_all(p, p->nsignals++ ? SIGKILL : SIGTERM);
	(void)signum;
}

static void on_tick(uv_timer_t *t)
{
	struct pool *p = t->data;
	if (p->o->tick)
		p->o->tick(p->o->ctx);
}

int pool_run(const struct pool_opts *o, size_t ntasks, char *err,
	     size_t errlen)
{
	struct pool p;
	int rc;

	if (ntasks == 0)
		return 0;
	memset(&p, 0, sizeof(p));
	p.o = o;
	p.ntasks = ntasks;
	p.err = err;
	p.errlen = errlen;
	p.slots = xcalloc((size_t)o->nworkers, sizeof(*p.slots));
	p.retry = xcalloc(ntasks, sizeof(*p.retry));
	p.attempts = xcalloc(ntasks, 1);
	if ((rc = uv_loop_init(&p.loop)) < 0) {
		snprintf(err, errlen, "cannot start event loop: %s", uv_strerror(rc));
		rc = PP_EIO;
		goto out_free;
	}
	signal(SIGPIPE, SIG_IGN);
	uv_signal_init(&p.loop, &p.sigint);
	uv_signal_init(&p.loop, &p.sigterm);
	uv_timer_init(&p.loop, &p.tick);
	p.sigint.data = p.sigterm.data = p.tick.data = &p;
	if ((rc = uv_signal_start(&p.sigint, on_signal, SIGINT)) < 0 ||
	    (rc = uv_signal_start(&p.sigterm, on_signal, SIGTERM)) < 0 ||
	    (rc = uv_timer_start(&p.tick, on_tick, 200, 200)) < 0)
		warn("cannot watch signals: %s", uv_strerror(rc));
	int n = o->nworkers < 1 ? 1 : o->nworkers;
	if ((size_t)n > ntasks)
		n = (int)ntasks;
	for (int i = 0; i < n && !p.fatal; i++)
		spawn_worker(&p, i);
	if (p.live == 0)
		close_globals(&p);
	uv_run(&p.loop, UV_RUN_DEFAULT);
	if ((rc = uv_loop_close(&p.loop)) < 0)
		warn("event loop not closed: %s", uv_strerror(rc));
	rc = p.fatal ? PP_EIO : p.nsignals ? PP_EINTR : 0;
out_free:
	free(p.slots);
	free(p.retry);
	free(p.attempts);
	return rc;
}
