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
 * BUSY holds one task, or two after the worker's WORKER_MORE (the first
 * one's reply then leaves it BUSY with the second).
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
	/* The tasks it holds, oldest first: none when idle; a second one
	 * after the worker asked for it (WORKER_MORE) while it stores the
	 * first in the background. Replies come in this order. */
	size_t task[2];
	int ntasks;
	bool ready; /* WORKER_READY read: the worker started */
	bool late;  /* a reply read after its deadline killed it */
};

struct pool {
	const struct pool_opts *o;
	struct proc_runner *runner;
	struct pworker **slots;
	int nslots;          /* workers run at once: nworkers, at most ntasks */
	size_t ntasks, next; /* next fresh task */
	size_t *retry;       /* FIFO of tasks to retry (each at most once) */
	size_t retry_head, retry_tail;
	unsigned char *attempts;
	int nsignals; /* SIGINT/SIGTERM received */
	bool fatal;
	char *err;
	size_t errlen;
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

/* Gives w a next task, or closes its stdin when there is none. The
 * deadline runs for the oldest task held (a second one's starts when the
 * first one replies). */
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
	w->task[w->ntasks++] = task;
	proc_write(w->proc, sb.buf, sb.len);
	strbuf_release(&sb);
	if (p->o->timeout_s > 0 && w->ntasks == 1)
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
		snprintf(p->err, p->errlen, "worker exited with status %lld before it started",
			 (long long)st->exit_status);
		p->fatal = true;
		stop_all(p, SIGTERM);
	} else if (!stopping(p)) {
		/* A task killed for the timeout of another one (the first one
		 * held, or one whose reply came late) is not at fault: its one
		 * retry is not used up. */
		for (int k = 0; k < w->ntasks; k++) {
			if (st->timed_out && (k > 0 || w->late))
				p->retry[p->retry_tail++] = w->task[k];
			else
				task_lost(p, w->task[k], st);
		}
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
		snprintf(p->err, p->errlen, "worker's first line is not '%s'", WORKER_READY);
		p->fatal = true;
		stop_all(p, SIGTERM);
		return;
	}
	if (w->ntasks == 0)
		return; /* nothing asked: ignore */
	if (len == strlen(WORKER_MORE) && !memcmp(line, WORKER_MORE, len)) {
		/* Only while every other worker still finds a task when it
		 * asks: near the end, a second task here could leave another
		 * worker idle while this one does both. Nothing more to give:
		 * stdin closes after its last reply. A retried task runs
		 * alone (neither held with one nor given as one): a crash
		 * then ends only the task that caused it, not an innocent
		 * one's last try. */
		struct pool *p = w->pool;
		size_t retries = p->retry_tail - p->retry_head;
		size_t pending = retries + (p->ntasks - p->next);
		if (w->ntasks == 1 && !stopping(p) && !proc_timed_out(proc) &&
		    pending >= (size_t)p->nslots && retries == 0 && p->attempts[w->task[0]] == 0)
			dispatch(w);
		return;
	}
	if (worker_reply_decode(line, &out)) {
		memset(&out, 0, sizeof(out));
		out.status = DB_STATUS_FAILED;
		out.fail_kind = DB_FAIL_CRASH;
		snprintf(out.msg, sizeof(out.msg), "malformed worker reply");
	}
	size_t task = w->task[0];
	w->task[0] = w->task[1];
	w->ntasks--;
	/* The next task first: done() may checkpoint the database (tens of
	 * ms of fdatasync), which the worker need not wait for. None for a
	 * worker being killed for its deadline, whose reply was read late
	 * (the loop was busy): the task would fail as timed out unrun. */
	if (proc_timed_out(proc)) {
		w->late = true;
	} else if (w->ntasks == 0) {
		proc_deadline(proc, 0);
		dispatch(w);
	} else if (w->pool->o->timeout_s > 0) {
		proc_deadline(proc, w->pool->o->timeout_s);
	}
	w->pool->o->done(w->pool->o->ctx, task, &out, true);
}

static void spawn_worker(struct pool *p, int slot)
{
	struct pworker *w = xcalloc(1, sizeof(*w));
	struct proc_spec spec = { p->o->argv,   NULL,     PROC_PIPE,      PROC_PIPE,
				  PROC_INHERIT, on_reply, on_worker_exit, w };
	w->pool = p;
	w->slot = slot;
	if (proc_spawn(p->runner, &spec, &w->proc, p->err, p->errlen)) {
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

int pool_run(const struct pool_opts *o, size_t ntasks, char *err, size_t errlen)
{
	struct pool p;
	char why[256];
	int rc;

	if (ntasks == 0)
		return 0;
	memset(&p, 0, sizeof(p));
	p.o = o;
	p.ntasks = ntasks;
	p.err = err;
	p.errlen = errlen;
	if (!(p.runner = proc_runner_new(err, errlen)))
		return PP_EIO;
	if (proc_runner_watch_signals(p.runner, on_signal, &p, why, sizeof(why)))
		warn("%s: ^C will not stop the workers cleanly", why);
	if (o->tick && proc_runner_tick(p.runner, 200, o->tick, o->ctx, why, sizeof(why)))
		warn("%s: no progress display", why);
	p.slots = xcalloc((size_t)o->nworkers, sizeof(*p.slots));
	/* Each entry of the retry FIFO is owed to one task's end: a task's
	 * own first crash (attempts: once per task), or the deadline of the
	 * task its worker held first, which ends it (failed, or replied
	 * late), and a kill requeues at most one other task. A task may come
	 * back more than twice, but never more than 2 x ntasks entries in
	 * all. */
	p.retry = xcalloc(2 * ntasks, sizeof(*p.retry));
	p.attempts = xcalloc(ntasks, 1);
	int n = o->nworkers < 1 ? 1 : o->nworkers;
	if ((size_t)n > ntasks)
		n = (int)ntasks;
	p.nslots = n;
	for (int i = 0; i < n && !p.fatal; i++)
		spawn_worker(&p, i);
	if (proc_runner_run(p.runner, why, sizeof(why))) {
		snprintf(err, errlen, "%s", why);
		p.fatal = true;
	}
	rc = p.fatal ? PP_EIO : p.nsignals ? PP_EINTR : 0;
	proc_runner_free(p.runner);
	free(p.slots);
	free(p.retry);
	free(p.attempts);
	return rc;
}
