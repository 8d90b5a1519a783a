/* worker.c — one trace into the database; the `--worker` process loop.
 *
 * Task and reply lines (see pool.h) are tab-separated; text fields escape
 * '\\', '\t' and '\n' as \\, \t, \n so any path survives the pipe.
 */
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"
#include "batch.h"
#include "classify/classify.h"
#include "model/patterns.h"
#include "read/trace_read.h"
#include "storage/db.h"
#include "util/arena.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "walk.h"

static void outcome_set(struct worker_outcome *out, int status, int kind,
			const char *msg)
{
	out->status = status;
	out->fail_kind = kind;
	snprintf(out->msg, sizeof(out->msg), "%s", msg ? msg : "");
}

void worker_trace_row(struct db_trace *t, const struct walk_file *f, int64_t run_id)
{
	memset(t, 0, sizeof(*t));
	t->path = f->key;
	t->file = f->real;
	t->folder = f->folder;
	t->has_iteration = f->has_iteration;
	t->iteration = f->iteration;
	t->has_name_rank = f->has_rank;
	t->name_rank = f->rank;
	t->bytes = f->bytes;
	t->mtime_ns = f->mtime_ns;
	t->run_id = run_id;
}

/* One trace between its analysis and its storing, owning everything the
 * store needs, so that the store can run on another thread while the
 * worker reads its next trace (worker_serve()). Heap-allocated: t points
 * into warnbuf and out. */
struct worker_job {
	struct worker_ctx ctx; /* a copy: the next task changes run_id */
	struct walk_file f;    /* strings in line, or the caller's */
	char *line;            /* the task line (worker_serve()), or NULL */
	int64_t t0;
	struct arena a;
	struct classify *c;
	struct trace_reader *r;
	struct rank_result *res; /* NULL: store out as a failure */
	struct db_trace t;
	char warnbuf[256];
	struct worker_outcome out;
};

static int record_failure(struct worker_job *j)
{
	struct worker_outcome *out = &j->out;
	struct db_trace t;
	worker_trace_row(&t, &j->f, j->ctx.run_id);
	t.status = DB_STATUS_FAILED;
	t.fail_kind = out->fail_kind;
	t.error = out->msg;
	t.elapsed_ns = out->elapsed_ns;
	if (db_trace_store_empty(j->ctx.db, &t)) {
		snprintf(out->msg, sizeof(out->msg), "cannot record failure: %s",
			 db_errmsg(j->ctx.db));
		return PP_EDB;
	}
	return 0;
}

/* Reads and classifies j->f: on success j->res and j->t are the rank to
 * store; else j->res is NULL and j->out the failure. No database use. */
static void job_analyse(struct worker_job *j)
{
	struct trace_reader_opts ro = { .salvage = j->ctx.salvage };
	struct worker_outcome *out = &j->out;
	const struct walk_file *f = &j->f;
	struct trace_event ev;
	int rc;

	j->t0 = pp_now_ns();
	j->a = (struct arena)ARENA_INIT;
	memset(out, 0, sizeof(*out));
	if (f->error) {
		outcome_set(out, DB_STATUS_FAILED, DB_FAIL_INPUT, f->error);
		goto failed;
	}
	j->r = trace_reader_open(f->path, &ro);
	if (*trace_reader_error(j->r)) {
		outcome_set(out, DB_STATUS_FAILED, DB_FAIL_INPUT, trace_reader_error(j->r));
		goto failed;
	}
	j->c = classify_new(j->ctx.pats, &j->a);
	while ((rc = trace_reader_next(j->r, &ev)) == 1)
		classify_feed(j->c, &ev);
	if (rc < 0) {
		const char *why = trace_reader_error(j->r);
		outcome_set(out, DB_STATUS_FAILED, DB_FAIL_INPUT,
			    *why ? why : pp_strerror(rc));
		goto failed;
	}
	const struct trace_header *h = trace_reader_header(j->r);
	classify_finish(j->c, h, &j->res);

	struct db_trace *t = &j->t;
	worker_trace_row(t, f, j->ctx.run_id);
	if (h->has_rank) {
		/* Which one is the trace's rank is decided with the other
		 * traces of the iteration (db_resolve_ranks()). */
		if (f->has_rank && f->rank != h->rank)
			snprintf(j->warnbuf, sizeof(j->warnbuf),
				 "rank %lld from the trace header differs from "
				 "rank %lld in the file name",
				 (long long)h->rank, (long long)f->rank);
		t->has_header_rank = true;
		t->header_rank = h->rank;
	}
	t->warnings = *j->warnbuf ? j->warnbuf : NULL;
	t->status = DB_STATUS_OK;
	if (trace_reader_truncated(j->r)) {
		const char *why = trace_reader_error(j->r);
		snprintf(out->msg, sizeof(out->msg),
			 "truncated trace salvaged: %llu events kept%s%s",
			 (unsigned long long)trace_reader_events(j->r), *why ? ": " : "", why);
		t->status = DB_STATUS_PARTIAL;
		t->error = out->msg;
	}
	t->elapsed_ns = pp_now_ns() - j->t0;
	out->status = t->status;
	out->elapsed_ns = t->elapsed_ns;
	return;

failed:
	j->res = NULL;
	out->elapsed_ns = pp_now_ns() - j->t0;
}

/* Frees j and the trace's memory. */
static void job_free(struct worker_job *j)
{
	classify_free(j->c);
	trace_reader_close(j->r);
	arena_release(&j->a);
	free(j->line);
	free(j);
}

/* Stores what job_analyse() found.
 * Returns 0 when the outcome (ok, partial or failed) was recorded, PP_EDB
 * when even that could not be written (j->out says why). */
static int job_store(struct worker_job *j)
{
	int rc = 0;
	if (!j->res) {
		rc = record_failure(j);
	} else if (db_store_rank(j->ctx.db, &j->t, j->res)) {
		outcome_set(&j->out, DB_STATUS_FAILED, DB_FAIL_INPUT, NULL);
		snprintf(j->out.msg, sizeof(j->out.msg), "cannot store: %s", db_errmsg(j->ctx.db));
		rc = PP_EDB;
	}
	return rc;
}

int worker_process(struct worker_ctx *ctx, const struct walk_file *f, struct worker_outcome *out)
{
	struct worker_job *j = xcalloc(1, sizeof(*j));
	j->ctx = *ctx;
	j->f = *f;
	job_analyse(j);
	int rc = job_store(j);
	*out = j->out;
	job_free(j);
	return rc;
}

/* ---- the pipe protocol ---- */

static void add_escaped(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		case '\n': strbuf_addstr(sb, "\\n"); break;
		default: strbuf_addch(sb, *s);
		}
	}
}

/* Splits line in place at tabs into at most max fields, unescaping each. */
static int split_fields(char *line, char **field, int max)
{
	int n = 0;
	char *w = line, *start = line;
	for (char *p = line;; p++) {
		if (*p == '\t' || *p == '\0' || *p == '\n') {
			bool end = *p != '\t';
			*w++ = '\0';
			if (n < max)
				field[n++] = start;
			if (end)
				break;
			start = w;
		} else if (*p == '\\' && p[1]) {
			p++;
			*w++ = *p == 't' ? '\t' : *p == 'n' ? '\n' : *p;
		} else {
			*w++ = *p;
		}
	}
	return n;
}

void worker_task_encode(struct strbuf *sb, const struct walk_file *f,
			int64_t run_id)
{
	const char *text[] = { f->path, f->key, f->real, f->folder };
	for (int i = 0; i < 4; i++) {
		if (i)
			strbuf_addch(sb, '\t');
		add_escaped(sb, text[i]);
	}
	strbuf_addf(sb, "\t%d\t%lld\t%d\t%lld\t%lld\t%lld\t%lld",
		    f->has_iteration, (long long)f->iteration, f->has_rank,
		    (long long)f->rank, (long long)f->bytes,
		    (long long)f->mtime_ns, (long long)run_id);
}

static int task_decode(char *line, struct walk_file *f, int64_t *run_id)
{
	char *fld[11];
	if (split_fields(line, fld, 11) != 11)
		return PP_EPARSE;
	memset(f, 0, sizeof(*f));
	f->path = fld[0];
	f->key = fld[1];
	f->real = fld[2];
	f->folder = fld[3];
	f->has_iteration = atoi(fld[4]);
	f->iteration = strtoll(fld[5], NULL, 10);
	f->has_rank = atoi(fld[6]);
	f->rank = strtoll(fld[7], NULL, 10);
	f->bytes = strtoll(fld[8], NULL, 10);
	f->mtime_ns = strtoll(fld[9], NULL, 10);
	*run_id = strtoll(fld[10], NULL, 10);
	return 0;
}

/* Writes j's reply line. 0, or PP_EIO when the coordinator is gone. */
static int send_reply(const struct worker_job *j)
{
	const struct worker_outcome *out = &j->out;
	struct strbuf reply = STRBUF_INIT;
	strbuf_addf(&reply, "%d\t%d\t%lld\t", out->status, out->fail_kind,
		    (long long)out->elapsed_ns);
	add_escaped(&reply, out->msg);
	strbuf_addch(&reply, '\n');
	int rc =
		fwrite(reply.buf, 1, reply.len, stdout) != reply.len || fflush(stdout) ? PP_EIO : 0;
	strbuf_release(&reply);
	return rc;
}

/* Stores a job, replies, frees it: the end of every task. */
static int finish_job(struct worker_job *j)
{
	job_store(j);
	int rc = send_reply(j);
	job_free(j);
	return rc;
}

/* The one trace a worker may be storing in the background. */
struct background {
	pthread_t thread;
	struct worker_job *job; /* NULL: none */
	int rc;                 /* finish_job()'s */
};

static void *background_main(void *arg)
{
	struct background *bg = arg;
	bg->rc = finish_job(bg->job);
	return NULL;
}

/* Waits for the background store, if any. Its rc. */
static int background_wait(struct background *bg)
{
	if (!bg->job)
		return 0;
	pthread_join(bg->thread, NULL);
	bg->job = NULL;
	return bg->rc;
}

/* Ends j, the only job now: in the background when another process holds
 * the database's write lock, so that this one reads its next trace
 * meanwhile instead of waiting (the coordinator is asked for it with
 * WORKER_MORE), else here. 0, or PP_EIO when the coordinator is gone. */
static int end_job(struct background *bg, struct worker_job *j)
{
	/* Without a coordinator to ask (the line cannot be written), the
	 * trace is still stored: its reply then fails. */
	if (db_writer_busy(j->ctx.db) && fputs(WORKER_MORE "\n", stdout) != EOF &&
	    !fflush(stdout)) {
		bg->job = j;
		if (!pthread_create(&bg->thread, NULL, background_main, bg))
			return 0;
		bg->job = NULL;
	}
	return finish_job(j);
}

int worker_serve(const struct batch_opts *o)
{
	char err[512];
	struct worker_ctx ctx = { .salvage = o->salvage };
	struct patterns *pats = NULL;
	struct db *db = NULL;
	struct background bg = { .job = NULL };
	char *line = NULL;
	size_t cap = 0;
	int rc = PP_EXIT_OK;

	/* ^C reaches the whole process group: the coordinator decides. A
	 * coordinator gone is seen as a failed write (EPIPE), after the trace
	 * in hand was stored, not as a SIGPIPE at any write. */
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (!o->db) {
		error("--worker needs --db");
		return PP_EXIT_USAGE;
	}
	if (!(pats = patterns_new(o->config, err, sizeof(err)))) {
		error("%s", err);
		return PP_EXIT_USAGE;
	}
	if (!(db = db_open(o->db, DB_NO_CHECKPOINT, 0, err, sizeof(err)))) {
		error("%s", err);
		rc = PP_EXIT_FATAL;
		goto out;
	}
	ctx.db = db;
	ctx.pats = pats;
	/* Started: the coordinator now counts any exit of this process as the
	 * loss of the tasks it holds (retried once), not as a worker that
	 * cannot start (pool.h). */
	if (fputs(WORKER_READY "\n", stdout) == EOF || fflush(stdout)) {
		rc = PP_EXIT_FATAL;
		goto out;
	}
	/* For tests only: a glob over trace paths. A worker given such a task
	 * stops itself (SIGSTOP) before reading the file, so that a test can
	 * kill or interrupt a worker that provably holds a known task instead
	 * of racing it (tests/e2e/t0404). */
	const char *stop_at = getenv("PPTRACE_TEST_WORKER_STOP");
	while (getline(&line, &cap, stdin) > 0) {
		struct worker_job *j = xcalloc(1, sizeof(*j));
		j->ctx = ctx;
		j->line = xstrdup(line);
		if (task_decode(j->line, &j->f, &j->ctx.run_id)) {
			error("malformed task line");
			job_free(j);
			rc = PP_EXIT_FATAL;
			break;
		}
		if (stop_at && *stop_at && !fnmatch(stop_at, j->f.path, 0)) {
			/* Holding this task only: the one before has replied. */
			if (background_wait(&bg)) {
				job_free(j);
				rc = PP_EXIT_FATAL;
				break;
			}
			raise(SIGSTOP);
		}
		job_analyse(j);
		/* One connection: the previous trace is stored first. */
		if (background_wait(&bg)) {
			/* The coordinator is gone: the trace in hand is still
			 * stored (its reply fails), so the next run skips it. */
			finish_job(j);
			rc = PP_EXIT_FATAL;
			break;
		}
		if (end_job(&bg, j)) {
			rc = PP_EXIT_FATAL;
			break;
		}
	}
	if (background_wait(&bg))
		rc = PP_EXIT_FATAL;
	/* The end of the tasks, or a failed read (out of memory in getline()
	 * among others): that one must not look like a clean exit. */
	if (!rc && ferror(stdin)) {
		error("cannot read the next task: %s", strerror(errno));
		rc = PP_EXIT_FATAL;
	}
out:
	free(line);
	db_close(db);
	patterns_free(pats);
	return rc;
}

int worker_reply_decode(char *line, struct worker_outcome *out)
{
	char *fld[4];
	if (split_fields(line, fld, 4) != 4)
		return PP_EPARSE;
	out->status = atoi(fld[0]);
	out->fail_kind = atoi(fld[1]);
	out->elapsed_ns = strtoll(fld[2], NULL, 10);
	snprintf(out->msg, sizeof(out->msg), "%s", fld[3]);
	return 0;
}
