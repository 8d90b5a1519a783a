/* worker.c — one trace into the database; the `--worker` process loop.
 *
 * Task and reply lines (see pool.h) are tab-separated; text fields escape
 * '\\', '\t' and '\n' as \\, \t, \n so any path survives the pipe.
 */
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static void outcome_set(struct worker_outcome *out, int status, int kind, const char *msg)
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

static int record_failure(struct worker_ctx *ctx, const struct walk_file *f,
			  struct worker_outcome *out)
{
	struct db_trace t;
	worker_trace_row(&t, f, ctx->run_id);
	t.status = DB_STATUS_FAILED;
	t.fail_kind = out->fail_kind;
	t.error = out->msg;
	t.elapsed_ns = out->elapsed_ns;
	if (db_trace_store_empty(ctx->db, &t)) {
		snprintf(out->msg, sizeof(out->msg), "cannot record failure: %s",
			 db_errmsg(ctx->db));
		return PP_EDB;
	}
	return 0;
}

int worker_process(struct worker_ctx *ctx, const struct walk_file *f, struct worker_outcome *out)
{
	int64_t t0 = pp_now_ns();
	struct trace_reader_opts ro = { .salvage = ctx->salvage, .read_thread = ctx->threads > 1 };
	struct trace_reader *r = NULL;
	struct arena a = ARENA_INIT;
	struct classify *c = NULL;
	struct rank_result *res = NULL;
	struct trace_event ev;
	char warnbuf[256] = "";
	int rc;

	memset(out, 0, sizeof(*out));
	if (f->error) {
		outcome_set(out, DB_STATUS_FAILED, DB_FAIL_INPUT, f->error);
		goto out_failed;
	}
	r = trace_reader_open(f->path, &ro);
	if (*trace_reader_error(r)) {
		outcome_set(out, DB_STATUS_FAILED, DB_FAIL_INPUT, trace_reader_error(r));
		goto out_failed;
	}
	c = classify_new(ctx->pats, &a);
	while ((rc = trace_reader_next(r, &ev)) == 1)
		classify_feed(c, &ev);
	if (rc < 0) {
		const char *why = trace_reader_error(r);
		outcome_set(out, DB_STATUS_FAILED, DB_FAIL_INPUT, *why ? why : pp_strerror(rc));
		goto out_failed;
	}
	const struct trace_header *h = trace_reader_header(r);
	classify_finish(c, h, &res);

	struct db_trace t;
	worker_trace_row(&t, f, ctx->run_id);
	if (h->has_rank) {
		/* Which one is the trace's rank is decided with the other
		 * traces of the iteration (db_resolve_ranks()). */
		if (f->has_rank && f->rank != h->rank)
			snprintf(warnbuf, sizeof(warnbuf),
				 "rank %lld from the trace header differs from "
				 "rank %lld in the file name",
				 (long long)h->rank, (long long)f->rank);
		t.has_header_rank = true;
		t.header_rank = h->rank;
	}
	t.warnings = *warnbuf ? warnbuf : NULL;
	t.status = DB_STATUS_OK;
	if (trace_reader_truncated(r)) {
		const char *why = trace_reader_error(r);
		snprintf(out->msg, sizeof(out->msg),
			 "truncated trace salvaged: %llu events kept%s%s",
			 (unsigned long long)trace_reader_events(r), *why ? ": " : "", why);
		t.status = DB_STATUS_PARTIAL;
		t.error = out->msg;
	}
	t.elapsed_ns = pp_now_ns() - t0;
	out->status = t.status;
	out->elapsed_ns = t.elapsed_ns;
	if (db_store_rank(ctx->db, &t, res)) {
		outcome_set(out, DB_STATUS_FAILED, DB_FAIL_INPUT, NULL);
		snprintf(out->msg, sizeof(out->msg), "cannot store: %s", db_errmsg(ctx->db));
		rc = PP_EDB;
		goto out_release;
	}
	rc = 0;
	goto out_release;

out_failed:
	out->elapsed_ns = pp_now_ns() - t0;
	rc = record_failure(ctx, f, out);
out_release:
	classify_free(c);
	trace_reader_close(r);
	arena_release(&a);
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

void worker_task_encode(struct strbuf *sb, const struct walk_file *f, int64_t run_id)
{
	const char *text[] = { f->path, f->key, f->real, f->folder };
	for (int i = 0; i < 4; i++) {
		if (i)
			strbuf_addch(sb, '\t');
		add_escaped(sb, text[i]);
	}
	strbuf_addf(sb, "\t%d\t%lld\t%d\t%lld\t%lld\t%lld\t%lld", f->has_iteration,
		    (long long)f->iteration, f->has_rank, (long long)f->rank, (long long)f->bytes,
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

int worker_threads_for(int workers)
{
	return pp_cores() >= 2 * workers ? 2 : 1;
}

int worker_serve(const struct worker_opts *o, struct strbuf *err)
{
	struct worker_ctx ctx = { .salvage = o->salvage,
				  .threads = o->threads ? o->threads : worker_threads_for(1) };
	struct patterns *pats = NULL;
	struct db *db = NULL;
	struct strbuf reply = STRBUF_INIT;
	char *line = NULL;
	size_t cap = 0;
	int rc = PP_EXIT_OK;

	/* ^C reaches the whole process group: the coordinator decides. */
	signal(SIGINT, SIG_IGN);
	if (!(pats = patterns_new(o->config, err)))
		return PP_EXIT_USAGE;
	if (!(db = db_open(o->db, DB_NO_CHECKPOINT, 0, err))) {
		rc = PP_EXIT_FATAL;
		goto out;
	}
	ctx.db = db;
	ctx.pats = pats;
	/* Started: the coordinator now counts any exit of this process as the
	 * loss of the task it holds (retried once), not as a worker that
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
		struct walk_file f;
		struct worker_outcome out;
		if (task_decode(line, &f, &ctx.run_id)) {
			pp_err(err, PP_EPARSE, "malformed task line");
			rc = PP_EXIT_FATAL;
			break;
		}
		if (stop_at && *stop_at && !fnmatch(stop_at, f.path, 0))
			raise(SIGSTOP);
		worker_process(&ctx, &f, &out);
		strbuf_reset(&reply);
		strbuf_addf(&reply, "%d\t%d\t%lld\t", out.status, out.fail_kind,
			    (long long)out.elapsed_ns);
		add_escaped(&reply, out.msg);
		strbuf_addch(&reply, '\n');
		if (fwrite(reply.buf, 1, reply.len, stdout) != reply.len || fflush(stdout)) {
			rc = PP_EXIT_FATAL; /* the coordinator is gone */
			break;
		}
	}
	/* The end of the tasks, or a failed read (out of memory in getline()
	 * among others): that one must not look like a clean exit. */
	if (!rc && ferror(stdin)) {
		pp_err(err, PP_EIO, "cannot read the next task: %s", strerror(errno));
		rc = PP_EXIT_FATAL;
	}
out:
	free(line);
	strbuf_release(&reply);
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
