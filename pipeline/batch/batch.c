/* batch.c — the ppbatch coordinator: walk the tree, skip what is stored,
 * run the rest on the worker pool, record and summarise the run.
 *
 * The options arrive merged (cmd/ppbatch.c: defaults, [batch], flags); the
 * database defaults to <input>/pptrace.db.
 * The coordinator writes to the database only what no worker could: entries
 * that are not traces (walk errors), tasks whose worker crashed twice or timed
 * out, and the runs row.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "pool.h"
#include "storage/db.h"
#include "util/pp.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "walk.h"
#include "worker.h"

struct stored {
	char *path;
	int64_t bytes, mtime_ns;
	int status, fail_kind;
};

struct batch {
	const struct batch_opts *o;
	struct db *db;
	const char *db_path;
	struct walk_list files;
	size_t *tasks;          /* indices into files */
	size_t ntasks;
	struct stored *stored;  /* sorted by path */
	size_t nstored, stored_alloc;
	int64_t run_id;
	int64_t ok, partial, failed, skipped, bytes_done;
	int64_t skipped_failed; /* skipped, but stored as failed earlier */
	struct strbuf failures; /* "path: reason" lines */
	struct progress prog;
	int64_t unchecked;      /* trace bytes stored since the last checkpoint */
};

/* The workers never checkpoint (DB_NO_CHECKPOINT): the coordinator copies
 * the WAL into the database once this many trace bytes were stored since
 * the last time (~8 MiB of WAL), and at the end when it closes. Rarely:
 * the event loop waits for the checkpoint's two fdatasyncs. */
#define CHECKPOINT_BYTES ((int64_t)256 << 20)

static void collect_stored(void *ctx, const char *path, int64_t bytes,
			   int64_t mtime_ns, int status, int fail_kind)
{
	struct batch *b = ctx;
	if (b->nstored == b->stored_alloc) {
		b->stored_alloc = b->stored_alloc ? 2 * b->stored_alloc : 256;
		b->stored = xrealloc(b->stored, b->stored_alloc * sizeof(*b->stored));
	}
	b->stored[b->nstored++] = (struct stored){ xstrdup(path), bytes, mtime_ns,
						   status, fail_kind };
}

static int cmp_stored(const void *a, const void *b)
{
	return strcmp(((const struct stored *)a)->path,
		      ((const struct stored *)b)->path);
}

/* Already stored with the same size and mtime, and not a failure that a
 * re-run may cure (crash, timeout). */
static bool is_stored(const struct batch *b, const struct walk_file *f)
{
	struct stored key = { .path = f->real };
	const struct stored *s = b->nstored ? bsearch(&key, b->stored, b->nstored,
						      sizeof(*s), cmp_stored) : NULL;
	return s && s->bytes == f->bytes && s->mtime_ns == f->mtime_ns &&
	       !(s->status == DB_STATUS_FAILED &&
		 (s->fail_kind == DB_FAIL_CRASH || s->fail_kind == DB_FAIL_TIMEOUT));
}

static bool stored_failed(const struct batch *b, const struct walk_file *f)
{
	struct stored key = { .path = f->real };
	const struct stored *s = bsearch(&key, b->stored, b->nstored, sizeof(*s),
					 cmp_stored);
	return s && s->status == DB_STATUS_FAILED;
}

/* msg without a leading "path: " (the reader's messages name the file). */
static const char *strip_path(const char *path, const char *msg)
{
	size_t n = strlen(path);
	if (!strncmp(msg, path, n) && msg[n] == ':' && msg[n + 1] == ' ')
		return msg + n + 2;
	return msg;
}

static void add_failure(struct batch *b, const char *path, const char *msg)
{
	strbuf_addf(&b->failures, "%s: %s\n", path, strip_path(path, msg));
}

static void count_outcome(struct batch *b, const struct walk_file *f,
			  const struct worker_outcome *out)
{
	struct strbuf line = STRBUF_INIT;
	bool failed = out->status == DB_STATUS_FAILED;
	const char *what = failed ? "failed" :
			   out->status == DB_STATUS_PARTIAL ? "partial" : "ok";
	if (failed) {
		b->failed++;
		add_failure(b, f->path, out->msg);
	} else if (out->status == DB_STATUS_PARTIAL) {
		b->partial++;
	} else {
		b->ok++;
	}
	b->bytes_done += f->bytes;
	strbuf_addf(&line, "%s: [%lld/%lld] %s %s (%.1f MB, %.2f s)",
		    pp_progname(), (long long)(b->prog.files_done + 1),
		    (long long)b->prog.files_total, what, f->path,
		    (double)f->bytes / 1e6, (double)out->elapsed_ns / 1e9);
	if (*out->msg)
		strbuf_addf(&line, ": %s", strip_path(f->path, out->msg));
	progress_file_done(&b->prog, f->bytes, failed, line.buf);
	strbuf_release(&line);
}

static void task_line(void *ctx, size_t i, struct strbuf *sb)
{
	struct batch *b = ctx;
	worker_task_encode(sb, &b->files.v[b->tasks[i]], b->run_id);
}

static void task_done(void *ctx, size_t i, const struct worker_outcome *o,
		      bool recorded)
{
	struct batch *b = ctx;
	const struct walk_file *f = &b->files.v[b->tasks[i]];
	if (!recorded) {
		struct db_trace t = {
			.path = f->real, .folder = f->folder,
			.has_iteration = f->has_iteration, .iteration = f->iteration,
			.has_rank = f->has_rank, .rank = f->rank, .bytes = f->bytes,
			.mtime_ns = f->mtime_ns, .status = o->status,
			.fail_kind = o->fail_kind, .error = o->msg,
			.run_id = b->run_id,
		};
		if (db_trace_store_empty(b->db, &t))
			error("cannot record failure of '%s': %s", f->path,
			      db_errmsg(b->db));
	}
	b->unchecked += f->bytes;
	if (b->unchecked >= CHECKPOINT_BYTES) {
		b->unchecked = 0;
		if (db_checkpoint(b->db))
			warn("%s", db_errmsg(b->db));
	}
	count_outcome(b, f, o);
}

static void tick(void *ctx)
{
	progress_tick(&((struct batch *)ctx)->prog);
}

static void print_summary(struct batch *b, double secs, bool interrupted)
{
	double mb = (double)b->bytes_done / 1e6;
	printf("%s: %zu files: %lld ok, %lld partial, %lld failed, %lld skipped",
	       pp_progname(), b->files.n, (long long)b->ok, (long long)b->partial,
	       (long long)b->failed, (long long)b->skipped);
	if (b->skipped_failed)
		printf(" (%lld of them failed before; --force retries)",
		       (long long)b->skipped_failed);
	printf(" in %.1f s (%.1f MB, %.1f MB/s)%s\n", secs, mb,
	       secs > 0 ? mb / secs : 0, interrupted ? " — interrupted" : "");
	if (b->failures.len) {
		printf("failures:\n");
		const char *s = b->failures.buf;
		while (*s) {
			const char *nl = strchr(s, '\n');
			printf("  %.*s\n", (int)(nl - s), s);
			s = nl + 1;
		}
	}
	printf("database: %s\n", b->db_path);
	fflush(stdout);
}

int batch_run(const struct batch_opts *o)
{
	struct batch b;
	struct strbuf dbp = STRBUF_INIT, shard = STRBUF_INIT;
	char err[1024], exe[PATH_MAX], host[256] = "";
	const char *pattern = o->pattern;
	double timeout_s = o->timeout_s;
	bool salvage = o->salvage;
	int processes = o->processes, busy_ms = o->busy_timeout_ms, rc = PP_EXIT_FATAL;

	if (o->worker)
		return worker_serve(o);
	memset(&b, 0, sizeof(b));
	b.o = o;
	strbuf_init(&b.failures, 0);
	if (o->db) {
		strbuf_addstr(&dbp, o->db);
	} else {
		strbuf_addstr(&dbp, o->input);
		if (dbp.len && dbp.buf[dbp.len - 1] != '/')
			strbuf_addch(&dbp, '/');
		strbuf_addstr(&dbp, "pptrace.db");
	}
	char *real_db = realpath(dbp.buf, NULL);
	b.db_path = dbp.buf;

	struct walk_opts wo = { o->input, o->folders, o->nfolders, pattern };
	if (walk_dir(&wo, &b.files, err, sizeof(err))) {
		error("%s", err);
		rc = PP_EXIT_USAGE;
		goto out;
	}
	walk_shard(&b.files, o->shard_index, o->shard_count);
	if (!(b.db = db_open(dbp.buf, 0, busy_ms, err, sizeof(err)))) {
		error("%s", err);
		goto out;
	}
	free(real_db);
	real_db = realpath(dbp.buf, NULL);
	if (db_trace_each(b.db, collect_stored, &b)) {
		error("%s", db_errmsg(b.db));
		goto out;
	}
	if (b.nstored)
		qsort(b.stored, b.nstored, sizeof(*b.stored), cmp_stored);

	gethostname(host, sizeof(host) - 1);
	if (o->shard_count > 1)
		strbuf_addf(&shard, "%d/%d", o->shard_index, o->shard_count);
	struct db_run run = { .host = host, .input = o->input,
			      .db = real_db ? real_db : dbp.buf,
			      .shard = shard.len ? shard.buf : NULL,
			      .processes = processes };
	if (db_run_begin(b.db, &run, &b.run_id))
		warn("%s", db_errmsg(b.db));

	int64_t bytes_total = 0;
	b.tasks = xcalloc(b.files.n + 1, sizeof(*b.tasks));
	for (size_t i = 0; i < b.files.n; i++) {
		struct walk_file *f = &b.files.v[i];
		if (!o->force && !f->error && is_stored(&b, f)) {
			b.skipped++;
			b.skipped_failed += stored_failed(&b, f);
		}
		else
			bytes_total += f->bytes;
	}
	progress_init(&b.prog, stderr, isatty(2), o->quiet,
		      (int64_t)b.files.n - b.skipped, bytes_total);
	int64_t t0 = pp_now_ns();
	for (size_t i = 0; i < b.files.n; i++) {
		struct walk_file *f = &b.files.v[i];
		if (f->error) {
			/* Not a trace: recorded here as failed, never sent out. */
			struct worker_ctx ctx = { .db = b.db, .run_id = b.run_id };
			struct worker_outcome out;
			worker_process(&ctx, f, &out);
			count_outcome(&b, f, &out);
		} else if (o->force || !is_stored(&b, f)) {
			b.tasks[b.ntasks++] = i;
		}
	}

	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		error("cannot find my own executable: /proc/self/exe unreadable");
		goto out;
	}
	exe[n] = '\0';
	char *argv[10];
	int ac = 0;
	argv[ac++] = exe;
	argv[ac++] = "--worker";
	argv[ac++] = "--db";
	argv[ac++] = real_db ? real_db : dbp.buf;
	if (o->config_path) {
		argv[ac++] = "--config";
		argv[ac++] = (char *)o->config_path;
	}
	if (salvage)
		argv[ac++] = "--salvage";
	argv[ac] = NULL;
	struct pool_opts po = { argv, processes, timeout_s, &b, task_line,
				task_done, tick };
	int prc = pool_run(&po, b.ntasks, err, sizeof(err));
	progress_finish(&b.prog);
	double secs = (double)(pp_now_ns() - t0) / 1e9;
	if (prc == PP_EIO)
		error("%s", err);

	run.state = prc == PP_EINTR ? "interrupted" : prc ? "failed" : "done";
	run.files = (int64_t)b.files.n;
	run.ok = b.ok;
	run.partial = b.partial;
	run.failed = b.failed;
	run.skipped = b.skipped;
	run.bytes = b.bytes_done;
	run.seconds = secs;
	run.failures = b.failures.len ? b.failures.buf : NULL;
	if (b.run_id && db_run_finish(b.db, b.run_id, &run))
		warn("%s", db_errmsg(b.db));
	if (!o->quiet || prc)
		print_summary(&b, secs, prc == PP_EINTR);
	rc = prc == PP_EINTR ? PP_EXIT_INTR : prc ? PP_EXIT_FATAL :
	     b.failed || b.skipped_failed ? PP_EXIT_PARTIAL : PP_EXIT_OK;
out:
	db_close(b.db);
	for (size_t i = 0; i < b.nstored; i++)
		free(b.stored[i].path);
	free(b.stored);
	free(b.tasks);
	free(real_db);
	walk_list_release(&b.files);
	strbuf_release(&b.failures);
	strbuf_release(&dbp);
	strbuf_release(&shard);
	return rc;
}
