/* pool.c — the worker pool on proc.h's supervised processes (see pool.h).
 *
 * Life of one worker (struct pworker, one per spawned process):
 *
 *   spawn ──► IDLE ──write task──► BUSY ──reply──► IDLE ──no task──► stdin
 *               ▲                   │ │                              closed
 *               │       deadline: killed│ │exit/signal                 │
 *               │                   ▼ ▼                                 ▼
 *   respawn ◄── FINISHED (proc.h: exit seen AND stdout at EOF) ◄───── exit
 *
 * When a worker finishes, a task still assigned is retried once (crash) or
 * failed (second crash, timeout) unless the pool was interrupted; the slot
 * is respawned while tasks remain. The runner returns when no worker is
 * left.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "proc/proc.h"
#include "storage/db.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "worker.h"

struct pool;

struct pworker {
	struct pool *pool;
	struct proc *proc;
	int slot;
	long task;  /* -1 when idle */
	bool ready; /* WORKER_READY read: the worker started */
};

struct pool {
	const struct pool_opts *o;
	struct proc_runner *runner;
	struct pworker **slots;
	size_t ntasks, next; /* next fresh task */
	size_t *retry;       /* FIFO of tasks to retry (each at most once) */
	size_t retry_head, retry_tail;
	unsigned char *attempts;
	int nsignals; /* SIGINT/SIGTERM received */
	bool fatal;
	struct strbuf *err; /* the caller's: the first fatal failure */
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

static void stop_all(struct pool *p, int sig)
{
	for (int i = 0; i < p->o->nworkers; i++) {
		struct pworker *w = p->slots[i];
		if (w) {
			proc_kill(w->proc, sig);
			proc_close_stdin(w->proc);
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

/* Gives w its next task, or closes its stdin when there is none. */
static void dispatch(struct pworker *w)
{
	struct pool *p = w->pool;
	if (stopping(p) || !tasks_pending(p)) {
		proc_close_stdin(w->proc);
		return;
	}
	size_t task = p->retry_head < p->retry_tail ? p->retry[p->retry_head++] : p->next++;
	struct strbuf sb = STRBUF_INIT;
	p->o->task_line(p->o->ctx, task, &sb);
	strbuf_addch(&sb, '\n');
	w->task = (long)task;
	proc_write(w->proc, sb.buf, sb.len);
	strbuf_release(&sb);
	if (p->o->timeout_s > 0)
		proc_deadline(w->proc, p->o->timeout_s);
}

/* A task that ended without a reply: failed, or queued for its one retry. */
static void task_lost(struct pool *p, size_t task, const struct proc_status *st)
{
	char msg[256];
	if (st->timed_out) {
		snprintf(msg, sizeof(msg), "timed out after %g s: worker killed", p->o->timeout_s);
		fail_task(p, task, DB_FAIL_TIMEOUT, msg);
		return;
	}
	if (st->term_signal) {
		const char *abbrev = sigabbrev_np(st->term_signal);
		snprintf(msg, sizeof(msg), "worker killed by signal SIG%s", abbrev ? abbrev : "?");
	} else {
		snprintf(msg, sizeof(msg), "worker exited with status %lld",
			 (long long)st->exit_status);
	}
	if (p->attempts[task]++ == 0) {
		p->retry[p->retry_tail++] = task;
	} else {
		size_t n = strlen(msg);
		snprintf(msg + n, sizeof(msg) - n, " (twice)");
		fail_task(p, task, DB_FAIL_CRASH, msg);
	}
}

static void on_worker_exit(struct proc *proc, const struct proc_status *st)
{
	struct pworker *w = proc_data(proc);
	struct pool *p = w->pool;
	if (!w->ready && !st->timed_out && !stopping(p) && st->term_signal == 0 &&
	    st->exit_status != 0) {
		pp_err(p->err, PP_EIO, "worker exited with status %lld before it started",
		       (long long)st->exit_status);
		p->fatal = true;
		stop_all(p, SIGTERM);
	} else if (w->task >= 0 && !stopping(p)) {
		task_lost(p, (size_t)w->task, st);
	}
	p->slots[w->slot] = NULL;
	if (!stopping(p) && tasks_pending(p))
		spawn_worker(p, w->slot);
	free(w);
}

static void on_reply(struct proc *proc, char *line, size_t len)
{
	struct pworker *w = proc_data(proc);
	struct worker_outcome out;
	if (!w->ready) {
		/* Anything else first is not a worker of this build: as if it
		 * had exited before it started. */
		if (len == strlen(WORKER_READY) && !memcmp(line, WORKER_READY, len)) {
			w->ready = true;
			return;
		}
		struct pool *p = w->pool;
		if (!p->fatal)
			pp_err(p->err, PP_EIO, "worker's first line is not '%s'", WORKER_READY);
		p->fatal = true;
		stop_all(p, SIGTERM);
		return;
	}
	if (w->task < 0)
		return; /* nothing asked: ignore */
	if (worker_reply_decode(line, &out)) {
		memset(&out, 0, sizeof(out));
		out.status = DB_STATUS_FAILED;
		out.fail_kind = DB_FAIL_CRASH;
		snprintf(out.msg, sizeof(out.msg), "malformed worker reply");
	}
	size_t task = (size_t)w->task;
	w->task = -1;
	/* The next task first: done() may take a while (recording a failure),
	 * which the worker need not wait for. None for a worker being killed
	 * for its deadline whose reply was read late (libuv runs expired
	 * timers before it reads pipes, so a busy loop reads a reply written
	 * in time after the kill): that task would fail as timed out unrun. */
	if (!proc_timed_out(proc)) {
		proc_deadline(proc, 0);
		dispatch(w);
	}
	w->pool->o->done(w->pool->o->ctx, task, &out, true);
}

/* A worker's message (a fatal error, a sanitizer's report) is passed on
 * whole, line by line, so that it does not land on the progress bar's line
 * (util/progress.h). */
static void on_worker_err(struct proc *proc, const char *line, size_t len)
{
	(void)proc;
	(void)len;
	pp_report_line(line);
}

static void spawn_worker(struct pool *p, int slot)
{
	struct pworker *w = xcalloc(1, sizeof(*w));
	struct proc_spec spec = { p->o->argv, NULL,           PROC_PIPE, PROC_PIPE,    PROC_PIPE,
				  on_reply,   on_worker_exit, w,         on_worker_err };
	w->pool = p;
	w->slot = slot;
	w->task = -1;
	if (proc_spawn(p->runner, &spec, &w->proc, p->err)) {
		free(w);
		p->fatal = true;
		stop_all(p, SIGTERM);
		return;
	}
	p->slots[slot] = w;
	dispatch(w);
}

static void on_signal(void *ctx, int signum)
{
	struct pool *p = ctx;
	/* First signal: terminate workers; a second one kills them. */
	stop_all(p, p->nsignals++ ? SIGKILL : SIGTERM);
	(void)signum;
}

int pool_run(const struct pool_opts *o, size_t ntasks, struct strbuf *err)
{
	struct pool p;
	struct strbuf why = STRBUF_INIT;
	int rc;

	if (ntasks == 0)
		return 0;
	memset(&p, 0, sizeof(p));
	p.o = o;
	p.ntasks = ntasks;
	p.err = err;
	if (!(p.runner = proc_runner_new(err)))
		return PP_EIO;
	if (proc_runner_watch_signals(p.runner, on_signal, &p, &why))
		warn("%s: ^C will not stop the workers cleanly", why.buf);
	strbuf_reset(&why);
	if (o->tick && proc_runner_tick(p.runner, 200, o->tick, o->ctx, &why))
		warn("%s: no progress display", why.buf);
	strbuf_release(&why);
	p.slots = xcalloc((size_t)o->nworkers, sizeof(*p.slots));
	p.retry = xcalloc(ntasks, sizeof(*p.retry));
	p.attempts = xcalloc(ntasks, 1);
	int n = o->nworkers < 1 ? 1 : o->nworkers;
	if ((size_t)n > ntasks)
		n = (int)ntasks;
	for (int i = 0; i < n && !p.fatal; i++)
		spawn_worker(&p, i);
	if (proc_runner_run(p.runner, err))
		p.fatal = true;
	rc = p.fatal ? PP_EIO : p.nsignals ? PP_EINTR : 0;
	proc_runner_free(p.runner);
	free(p.slots);
	free(p.retry);
	free(p.attempts);
	return rc;
}
