/* batch.c — the ppbatch coordinator: walk the tree, skip what is stored,
 * run the rest on the worker pool, decide the ranks, record and summarise
 * the run.
 *
 *   settings → walk (+ shard) → open db → stored traces (legacy rows of a
 *   version-2 file adopted) → plan: skip or task → pool → every reported
 *   trace has its row → ranks resolved, conflicts reported → runs row,
 *   summary, exit status
 *
 * The options arrive merged (cmd/ppbatch.c: defaults, [batch], flags); the
 * database defaults to <input>/pptrace.db.
 * The coordinator writes to the database only what no worker could: entries
 * that are not traces (walk errors), tasks whose worker crashed twice or timed
 * out, the adoption of legacy rows, the ranks and the runs row. A trace is
 * identified by where it was laid out (walk.h, docs/contracts.md §8).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "checkpointer.h"
#include "model/patterns.h"
#include "pool.h"
#include "storage/db.h"
#include "util/cmp.h"
#include "util/pp.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "walk.h"
#include "worker.h"

struct stored {
	char *path, *folder;
	int64_t bytes, mtime_ns;
	int status, fail_kind;
	bool legacy;
};

struct stored_list {
	struct stored *v; /* sorted by path */
	size_t n, alloc;
};

struct settings {
	int processes;
	const char *pattern;
	double timeout_s;
	bool salvage;
	int busy_ms;
};

struct batch {
	const struct batch_opts *o;
	struct strbuf *err; /* batch_run()'s: its errors, printed by cmd/ */
	struct settings set;
	struct db *db;
	struct strbuf db_path; /* as given */
	char *real_db;         /* canonical, for the workers and the runs row */
	struct walk_list files;
	size_t *tasks; /* indices into files */
	size_t ntasks;
	bool *sent; /* files[i] was analysed or recorded by this run */
	struct stored_list stored;
	int64_t run_id;
	struct db_run run; /* its counters are the run's: ok, partial,
				 * failed, skipped, bytes */
	char host[256];
	struct strbuf shard;
	int64_t skipped_failed; /* skipped, but stored as failed earlier */
	int64_t conflicts;      /* traces in a rank conflict, in the walked
				 * iterations */
	struct conflict_group { /* the rank whose conflicting traces
				  * show_conflict() is collecting */
		bool open, has_iteration;
		int64_t iteration, rank, ntraces;
		char *folder;
		int npaths;          /* paths in paths (at most CONFLICT_PATHS) */
		struct strbuf paths; /* "'a', 'b'" */
	} cg;
	int64_t conflict_ranks; /* conflict warnings, shown or not */
	int64_t *iters;         /* the walked iteration numbers, sorted */
	size_t niters;
	const char **folders; /* the walked folders without one, sorted */
	size_t nfolders;
	struct strbuf failures; /* "path: reason" lines */
	struct progress prog;
	int64_t unchecked;         /* trace bytes stored since the last checkpoint */
	struct checkpointer *ckpt; /* while the pool runs; NULL: on b->db */
};

/* The workers never checkpoint (DB_NO_CHECKPOINT): the coordinator copies
 * the WAL into the database once this many trace bytes were stored since
 * the last time (~8 MiB of WAL), on its checkpoint thread, and at the end
 * when it closes. Rarely: each is two fdatasyncs. */
#define CHECKPOINT_BYTES ((int64_t)256 << 20)

/* At most this many lines of each list in the summary. */
#define SHOW_MAX 10
/* At most this many traces named in a rank conflict's warning. */
#define CONFLICT_PATHS 3

/* ---- what is stored ---- */

static void collect_stored(void *ctx, const struct db_stored *s)
{
	struct stored_list *l = ctx;
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 256;
		l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
	}
	l->v[l->n++] = (struct stored){ xstrdup(s->path), xstrdup(s->folder ? s->folder : ""),
					s->bytes,         s->mtime_ns,
					s->status,        s->fail_kind,
					s->legacy };
}

static int cmp_stored(const void *a, const void *b)
{
	return strcmp(((const struct stored *)a)->path, ((const struct stored *)b)->path);
}

static void stored_release(struct stored_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].folder);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Reads every stored trace into b->stored. 0 or PP_EDB (in b->err). */
static int load_stored(struct batch *b)
{
	stored_release(&b->stored);
	if (db_trace_each(b->db, collect_stored, &b->stored))
		return pp_err(b->err, PP_EDB, "%s", db_errmsg(b->db));
	if (b->stored.n)
		qsort(b->stored.v, b->stored.n, sizeof(*b->stored.v), cmp_stored);
	return 0;
}

static struct stored *find_stored(const struct batch *b, const char *path)
{
	struct stored key = { .path = (char *)path };
	return b->stored.n ? bsearch(&key, b->stored.v, b->stored.n, sizeof(key), cmp_stored)
			   : NULL;
}

/* Already stored with the same size and mtime, and not a failure that a
 * re-run may cure (crash, timeout). */
static bool is_stored(const struct batch *b, const struct walk_file *f)
{
	const struct stored *s = find_stored(b, f->key);
	return s && s->bytes == f->bytes && s->mtime_ns == f->mtime_ns &&
	       !(s->status == DB_STATUS_FAILED &&
		 (s->fail_kind == DB_FAIL_CRASH || s->fail_kind == DB_FAIL_TIMEOUT));
}

static bool stored_failed(const struct batch *b, const struct walk_file *f)
{
	const struct stored *s = find_stored(b, f->key);
	return s && s->status == DB_STATUS_FAILED;
}

/* Rows written before schema version 3 carry the file's canonical path
 * (the old identity). Each walked trace takes over the legacy row of its
 * own key, else the one of its file in the same folder, so an upgraded
 * database is not analysed again. A file reached through two names (or
 * two folders) had one row: the other names are analysed as new traces. */
static int adopt_legacy(struct batch *b)
{
	size_t nlegacy = 0, nadopted = 0;
	for (size_t i = 0; i < b->stored.n; i++)
		nlegacy += b->stored.v[i].legacy;
	if (!nlegacy)
		return 0;
	if (db_adopt_begin(b->db))
		goto fail;
	for (size_t i = 0; i < b->files.n; i++) {
		const struct walk_file *f = &b->files.v[i];
		struct stored *s = find_stored(b, f->key);
		if (!s)
			s = find_stored(b, f->real);
		if (!s || !s->legacy || strcmp(s->folder, f->folder))
			continue;
		struct db_trace t;
		worker_trace_row(&t, f, 0);
		if (db_trace_adopt(b->db, s->path, &t))
			goto fail;
		s->legacy = false; /* one name adopts it */
		nadopted++;
	}
	if (db_adopt_commit(b->db))
		goto fail;
	if (!b->o->quiet)
		fprintf(stderr,
			"%s: %zu trace%s stored by an older pptrace took the path "
			"they were found at (not analysed again)\n",
			pp_progname(), nadopted, nadopted == 1 ? "" : "s");
	return load_stored(b);
fail:
	pp_err(b->err, PP_EDB, "cannot adopt the traces of an older database: %s",
	       db_errmsg(b->db));
	db_trace_rollback(b->db);
	return PP_EDB;
}

/* ---- outcomes ---- */

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
	const char *what = failed ? "failed" : out->status == DB_STATUS_PARTIAL ? "partial" : "ok";
	if (failed) {
		b->run.failed++;
		add_failure(b, f->path, out->msg);
	} else if (out->status == DB_STATUS_PARTIAL) {
		b->run.partial++;
	} else {
		b->run.ok++;
	}
	b->run.bytes += f->bytes;
	b->sent[f - b->files.v] = true;
	strbuf_addf(&line, "%s: [%lld/%lld] %s %s (%.1f MB, %.2f s)", pp_progname(),
		    (long long)(b->prog.files_done + 1), (long long)b->prog.files_total, what,
		    f->path, (double)f->bytes / 1e6, (double)out->elapsed_ns / 1e9);
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

static void task_done(void *ctx, size_t i, const struct worker_outcome *o, bool recorded)
{
	struct batch *b = ctx;
	const struct walk_file *f = &b->files.v[b->tasks[i]];
	if (!recorded) {
		struct db_trace t;
		worker_trace_row(&t, f, b->run_id);
		t.status = o->status;
		t.fail_kind = o->fail_kind;
		t.error = o->msg;
		if (db_trace_store_empty(b->db, &t))
			pp_err(b->err, PP_EDB, "cannot record failure of '%s': %s", f->path,
			       db_errmsg(b->db));
	}
	b->unchecked += f->bytes;
	if (b->unchecked >= CHECKPOINT_BYTES) {
		b->unchecked = 0;
		if (!b->ckpt) {
			if (db_checkpoint(b->db))
				warn("%s", db_errmsg(b->db));
		} else {
			struct strbuf why = STRBUF_INIT;
			if (checkpointer_error(b->ckpt, &why))
				warn("%s", why.buf); /* of an earlier request */
			strbuf_release(&why);
			checkpointer_request(b->ckpt);
		}
	}
	count_outcome(b, f, o);
}

static void tick(void *ctx)
{
	progress_tick(&((struct batch *)ctx)->prog);
}

/* ---- the phases ---- */

/* Settings: the options arrive merged (cmd/ppbatch.c: defaults, [batch],
 * flags). The workers read [patterns]: a bad set is a usage error here,
 * once, not a worker exiting before it has started (pool.h). */
static int settings(const struct batch_opts *o, struct settings *s, struct strbuf *err)
{
	s->processes = o->processes;
	s->pattern = o->pattern;
	s->timeout_s = o->timeout_s;
	s->salvage = o->salvage;
	s->busy_ms = o->busy_timeout_ms;
	struct patterns *pats = patterns_new(o->config, err);
	if (!pats)
		return PP_EINVAL;
	patterns_free(pats);
	return 0;
}

/* The walk found no trace file at all: a wrong --input, --folders or
 * --pattern would otherwise look like a finished run of nothing. */
static void warn_nothing_found(const struct batch *b)
{
	const struct batch_opts *o = b->o;
	struct strbuf sb;
	strbuf_init(&sb, 0);
	if (o->nfolders) {
		strbuf_addf(&sb, "the folders of '%s' matching", o->input);
		for (int i = 0; i < o->nfolders; i++)
			strbuf_addf(&sb, "%s '%s'", i ? "," : "", o->folders[i]);
	} else {
		strbuf_addf(&sb, "'%s' or its folders", o->input);
	}
	strbuf_addstr(&sb, " (file names ");
	walk_describe_patterns(b->set.pattern, &sb);
	warn("found no trace file in %s): nothing to analyse", sb.buf);
	strbuf_release(&sb);
}

/* Walks the tree, opens the database and reads what it holds. A PP_EXIT_*
 * code, errors reported. */
static int open_all(struct batch *b)
{
	const struct batch_opts *o = b->o;
	if (o->db) {
		strbuf_addstr(&b->db_path, o->db);
	} else {
		strbuf_addstr(&b->db_path, o->input);
		if (b->db_path.len && b->db_path.buf[b->db_path.len - 1] != '/')
			strbuf_addch(&b->db_path, '/');
		strbuf_addstr(&b->db_path, "pptrace.db");
	}
	struct walk_opts wo = { o->input, o->folders, o->nfolders, b->set.pattern };
	if (walk_dir(&wo, &b->files, b->err))
		return PP_EXIT_USAGE;
	if (!b->files.n && !o->quiet)
		warn_nothing_found(b);
	walk_shard(&b->files, o->shard_index, o->shard_count);
	b->sent = xcalloc(b->files.n + 1, sizeof(*b->sent));
	struct strbuf why = STRBUF_INIT;
	if (!(b->db = db_open(b->db_path.buf, 0, b->set.busy_ms, &why))) {
		/* Trace folders are often another user's or read-only. */
		pp_err(b->err, PP_EDB, "%s%s", why.buf,
		       o->db ? ""
			     : " (the default database is in the input folder; --db puts it "
			       "elsewhere)");
		strbuf_release(&why);
		return PP_EXIT_FATAL;
	}
	strbuf_release(&why);
	b->real_db = realpath(b->db_path.buf, NULL);
	if (load_stored(b) || adopt_legacy(b))
		return PP_EXIT_FATAL;
	return PP_EXIT_OK;
}

/* Records the run and decides, file by file, between skip and task; the
 * entries that are not traces are recorded here as failed. Recording the run
 * is the coordinator's first write: when the database refuses it (db_open()
 * refuses a read-only file, folder or mount; left are, e.g., a -wal or -shm
 * file it may not write), every worker would analyse its trace only to fail
 * storing it, so the batch stops here. PP_EXIT_OK or PP_EXIT_FATAL
 * (why in b->err). */
static int plan(struct batch *b)
{
	const struct batch_opts *o = b->o;
	int64_t bytes_total = 0;
	gethostname(b->host, sizeof(b->host) - 1);
	if (o->shard_count > 1)
		strbuf_addf(&b->shard, "%d/%d", o->shard_index, o->shard_count);
	b->run = (struct db_run){ .host = b->host,
				  .input = o->input,
				  .db = b->real_db ? b->real_db : b->db_path.buf,
				  .shard = b->shard.len ? b->shard.buf : NULL,
				  .processes = b->set.processes };
	if (db_run_begin(b->db, &b->run, &b->run_id)) {
		pp_err(b->err, PP_EDB, "cannot write database '%s': %s", b->db_path.buf,
		       db_errmsg(b->db));
		return PP_EXIT_FATAL;
	}
	b->tasks = xcalloc(b->files.n + 1, sizeof(*b->tasks));
	for (size_t i = 0; i < b->files.n; i++) {
		struct walk_file *f = &b->files.v[i];
		if (!o->force && !f->error && is_stored(b, f)) {
			b->run.skipped++;
			b->skipped_failed += stored_failed(b, f);
		} else {
			bytes_total += f->bytes;
		}
	}
	progress_init(&b->prog, stderr, isatty(2), o->quiet, (int64_t)b->files.n - b->run.skipped,
		      bytes_total);
	for (size_t i = 0; i < b->files.n; i++) {
		struct walk_file *f = &b->files.v[i];
		if (f->error) {
			/* Not a trace: recorded here as failed, never sent out. */
			struct worker_ctx ctx = { .db = b->db, .run_id = b->run_id };
			struct worker_outcome out;
			worker_process(&ctx, f, &out);
			count_outcome(b, f, &out);
		} else if (o->force || !is_stored(b, f)) {
			b->tasks[b->ntasks++] = i;
		}
	}
	return PP_EXIT_OK;
}

/* Runs the tasks on the pool: 0, PP_EINTR, or PP_EIO (why in b->err). */
static int run_pool(struct batch *b)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		progress_finish(&b->prog);
		pp_err(b->err, PP_EIO, "cannot find my own executable: /proc/self/exe unreadable");
		return PP_EIO;
	}
	exe[n] = '\0';
	char *argv[12];
	int ac = 0;
	argv[ac++] = exe;
	argv[ac++] = "--worker";
	argv[ac++] = "--db";
	const char *db = b->real_db ? b->real_db : b->db_path.buf;
	argv[ac++] = (char *)db;
	if (b->o->config_path) {
		argv[ac++] = "--config";
		argv[ac++] = (char *)b->o->config_path;
	}
	if (b->set.salvage)
		argv[ac++] = "--salvage";
	/* The pool starts at most one worker per task: the automatic threads
	 * (worker_threads_for()) count those that run at once. */
	int workers = (size_t)b->set.processes < b->ntasks ? b->set.processes : (int)b->ntasks;
	char threads[16];
	snprintf(threads, sizeof(threads), "%d",
		 b->o->worker_threads ? b->o->worker_threads
				      : worker_threads_for(workers > 0 ? workers : 1));
	argv[ac++] = "--worker-threads";
	argv[ac++] = threads;
	argv[ac] = NULL;
	struct pool_opts po = { argv, b->set.processes, b->set.timeout_s, b, task_line, task_done,
				tick };
	/* While the thread checkpoints, the loop's own connection does not:
	 * a failure recorded after a big trace would copy its WAL here. */
	struct strbuf why = STRBUF_INIT;
	if (b->ntasks && !(b->ckpt = checkpointer_start(db, b->set.busy_ms, &why)))
		warn("%s: checkpoints on the event loop", why.buf);
	else if (b->ckpt)
		db_auto_checkpoint(b->db, false);
	strbuf_reset(&why);
	int rc = pool_run(&po, b->ntasks, b->err);
	if (b->ckpt) {
		if (checkpointer_stop(b->ckpt, &why))
			warn("%s", why.buf);
		b->ckpt = NULL;
		db_auto_checkpoint(b->db, true);
	}
	strbuf_release(&why);
	progress_finish(&b->prog);
	return rc;
}

/* "N ok" must mean N rows: every trace this run analysed or recorded has
 * its row. A missing one is counted and reported as failed. */
static int verify_rows(struct batch *b)
{
	if (load_stored(b))
		return PP_EDB;
	for (size_t i = 0; i < b->files.n; i++) {
		const struct walk_file *f = &b->files.v[i];
		if (!b->sent[i] || find_stored(b, f->key))
			continue;
		pp_err(b->err, PP_EDB, "'%s' was analysed but has no row in the database", f->path);
		add_failure(b, f->path, "analysed but not stored");
		b->run.failed++;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The iterations this run walked: their numbers, and the folders of those
 * without a number (an iteration's traces, docs/contracts.md §8). */
static void walked_iterations(struct batch *b)
{
	b->iters = xcalloc(b->files.n + 1, sizeof(*b->iters));
	b->folders = xcalloc(b->files.n + 1, sizeof(*b->folders));
	for (size_t i = 0; i < b->files.n; i++) {
		const struct walk_file *f = &b->files.v[i];
		if (f->has_iteration)
			b->iters[b->niters++] = f->iteration;
		else
			b->folders[b->nfolders++] = f->folder;
	}
	qsort(b->iters, b->niters, sizeof(*b->iters), cmp_i64);
	qsort(b->folders, b->nfolders, sizeof(*b->folders), cmp_str);
}

/* Whether this run walked a trace of the iteration. */
static bool walked(const struct batch *b, bool has_iteration, int64_t iteration, const char *folder)
{
	if (has_iteration)
		return b->niters &&
		       bsearch(&iteration, b->iters, b->niters, sizeof(*b->iters), cmp_i64);
	return folder && b->nfolders &&
	       bsearch(&folder, b->folders, b->nfolders, sizeof(*b->folders), cmp_str);
}

static void iteration_name(struct strbuf *sb, bool has_iteration, int64_t iteration,
			   const char *folder)
{
	if (has_iteration)
		strbuf_addf(sb, "iteration %lld", (long long)iteration);
	else
		strbuf_addf(sb, "folder %s", folder ? folder : "?");
}

static void show_shared(void *ctx, const struct db_shared_rank *s)
{
	struct batch *b = ctx;
	if (b->o->quiet || !walked(b, s->has_iteration, s->iteration, s->folder))
		return;
	struct strbuf sb = STRBUF_INIT;
	iteration_name(&sb, s->has_iteration, s->iteration, s->folder);
	warn("%s: %lld traces have header rank %lld ('%s' … '%s'): each one whose file name "
	     "has a rank takes that rank (docs/contracts.md §8)",
	     sb.buf, (long long)s->ntraces, (long long)s->header_rank, s->first, s->last);
	strbuf_release(&sb);
}

/* Warns about the rank collected in b->cg, one line for all its traces
 * (the first SHOW_MAX ranks), and empties it. */
static void flush_conflict(struct batch *b)
{
	struct conflict_group *g = &b->cg;
	if (!g->open)
		return;
	if (b->conflict_ranks++ < SHOW_MAX) {
		struct strbuf sb = STRBUF_INIT;
		iteration_name(&sb, g->has_iteration, g->iteration, g->folder);
		if (g->ntraces > g->npaths)
			strbuf_addf(&g->paths, " and %lld more",
				    (long long)(g->ntraces - g->npaths));
		warn("rank conflict: %s, rank %lld is claimed by %lld traces (%s): none of them "
		     "is aggregated",
		     sb.buf, (long long)g->rank, (long long)g->ntraces, g->paths.buf);
		strbuf_release(&sb);
	}
	free(g->folder);
	g->folder = NULL;
	strbuf_reset(&g->paths);
	g->open = false;
}

/* Rows come ordered by iteration (folder without one), rank, path: the
 * traces of one rank are consecutive. */
static void show_conflict(void *ctx, const struct db_conflict *c)
{
	struct batch *b = ctx;
	struct conflict_group *g = &b->cg;
	if (!walked(b, c->has_iteration, c->iteration, c->folder))
		return;
	b->conflicts++;
	bool same = g->open && g->rank == c->rank && g->has_iteration == c->has_iteration &&
		    (c->has_iteration ? g->iteration == c->iteration
				      : !strcmp(g->folder, c->folder ? c->folder : ""));
	if (!same) {
		flush_conflict(b);
		*g = (struct conflict_group){ .open = true,
					      .has_iteration = c->has_iteration,
					      .iteration = c->iteration,
					      .rank = c->rank,
					      .ntraces = c->ntraces,
					      .folder = xstrdup(c->folder ? c->folder : ""),
					      .paths = g->paths };
	}
	if (g->npaths < CONFLICT_PATHS) {
		strbuf_addf(&g->paths, "%s'%s'", g->npaths ? ", " : "", c->path);
		g->npaths++;
	}
}

/* Decides every trace's rank and reports, for the iterations this run
 * walked, the shared header ranks and the conflicts (b->conflicts). */
static int resolve_ranks(struct batch *b)
{
	walked_iterations(b);
	if (db_resolve_ranks(b->db) || db_shared_header_ranks(b->db, show_shared, b) ||
	    db_rank_conflicts(b->db, show_conflict, b))
		return pp_err(b->err, PP_EDB, "%s", db_errmsg(b->db));
	flush_conflict(b);
	if (b->conflict_ranks > SHOW_MAX)
		warn("rank conflict: %lld more ranks (SELECT * FROM rank_conflicts)",
		     (long long)(b->conflict_ranks - SHOW_MAX));
	return 0;
}

/* A file reached through several names (or folders) is a trace for each:
 * said once, because users often do not expect it. */
static int cmp_real(const void *pa, const void *pb)
{
	const struct walk_file *a = *(const struct walk_file *const *)pa;
	const struct walk_file *b = *(const struct walk_file *const *)pb;
	int c = strcmp(a->real, b->real);
	return c ? c : strcmp(a->key, b->key);
}

static void note_duplicates(const struct batch *b)
{
	const struct walk_file **v = xcalloc(b->files.n + 1, sizeof(*v));
	size_t n = 0, shown = 0, dups = 0;
	for (size_t i = 0; i < b->files.n; i++)
		if (!b->files.v[i].error)
			v[n++] = &b->files.v[i];
	qsort(v, n, sizeof(*v), cmp_real);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(v[i]->real, v[i - 1]->real))
			continue;
		dups++;
		if (shown++ < SHOW_MAX)
			fprintf(stderr,
				"%s: note: '%s' and '%s' are the same file: analysed as "
				"two traces (docs/contracts.md §8)\n",
				pp_progname(), v[i - 1]->path, v[i]->path);
	}
	if (dups > SHOW_MAX)
		fprintf(stderr, "%s: note: %zu more paths lead to a file reached before\n",
			pp_progname(), dups - SHOW_MAX);
	free(v);
}

static void print_summary(struct batch *b, double secs, bool interrupted)
{
	double mb = (double)b->run.bytes / 1e6;
	printf("%s: %zu files: %lld ok, %lld partial, %lld failed, %lld skipped", pp_progname(),
	       b->files.n, (long long)b->run.ok, (long long)b->run.partial,
	       (long long)b->run.failed, (long long)b->run.skipped);
	if (b->skipped_failed)
		printf(" (%lld of them failed before; --force retries)",
		       (long long)b->skipped_failed);
	printf(" in %.1f s (%.1f MB, %.1f MB/s)%s\n", secs, mb, secs > 0 ? mb / secs : 0,
	       interrupted ? " — interrupted: the same command again resumes" : "");
	if (b->conflicts)
		printf("rank conflicts: %lld traces claim a rank another trace of their "
		       "iteration claims (SELECT * FROM rank_conflicts)\n",
		       (long long)b->conflicts);
	if (b->failures.len) {
		printf("failures:\n");
		const char *s = b->failures.buf;
		while (*s) {
			const char *nl = strchr(s, '\n');
			printf("  %.*s\n", (int)(nl - s), s);
			s = nl + 1;
		}
	}
	printf("database: %s\n", b->db_path.buf);
	fflush(stdout);
}

/* --quiet prints errors only, and a trace that failed is one: without the
 * summary, each gets an error line, so that exit status 1 is explained. */
static void quiet_failures(const struct batch *b)
{
	const char *s = b->failures.buf;
	while (s && *s) {
		const char *nl = strchr(s, '\n');
		pp_err(b->err, PP_EIO, "%.*s", (int)(nl - s), s);
		s = nl + 1;
	}
	if (b->skipped_failed)
		pp_err(b->err, PP_EIO,
		       "%lld trace%s that failed in an earlier run %s skipped (--force analyses "
		       "them again; SELECT path, error FROM ranks WHERE status = 'failed')",
		       (long long)b->skipped_failed, b->skipped_failed == 1 ? "" : "s",
		       b->skipped_failed == 1 ? "was" : "were");
}

/* Completes the runs row, prints the summary; the exit status. */
static int finish(struct batch *b, int prc, double secs)
{
	struct db_run *run = &b->run;
	run->state = prc == PP_EINTR ? "interrupted" : prc ? "failed" : "done";
	run->files = (int64_t)b->files.n;
	run->seconds = secs;
	run->failures = b->failures.len ? b->failures.buf : NULL;
	if (b->run_id && db_run_finish(b->db, b->run_id, run))
		warn("%s", db_errmsg(b->db));
	if (!b->o->quiet || prc)
		print_summary(b, secs, prc == PP_EINTR);
	else
		quiet_failures(b);
	return prc == PP_EINTR                                      ? PP_EXIT_INTR
	       : prc                                                ? PP_EXIT_FATAL
	       : b->run.failed || b->skipped_failed || b->conflicts ? PP_EXIT_PARTIAL
								    : PP_EXIT_OK;
}

int batch_run(const struct batch_opts *o, struct strbuf *err)
{
	struct batch b;
	int rc;

	memset(&b, 0, sizeof(b));
	b.o = o;
	b.err = err;
	strbuf_init(&b.failures, 0);
	strbuf_init(&b.db_path, 0);
	strbuf_init(&b.shard, 0);
	strbuf_init(&b.cg.paths, 0);
	if (settings(o, &b.set, err)) {
		rc = PP_EXIT_USAGE;
		goto out;
	}
	if ((rc = open_all(&b)))
		goto out;
	if (!o->quiet)
		note_duplicates(&b);
	if ((rc = plan(&b)))
		goto out;
	int64_t t0 = pp_now_ns();
	int prc = run_pool(&b);
	double secs = (double)(pp_now_ns() - t0) / 1e9;
	if (prc != PP_EINTR && (verify_rows(&b) || resolve_ranks(&b)))
		prc = PP_EIO;
	rc = finish(&b, prc, secs);
out:
	db_close(b.db);
	stored_release(&b.stored);
	PP_FREE_ALL(b.tasks, b.sent, b.iters, b.folders, b.real_db);
	walk_list_release(&b.files);
	strbuf_release(&b.failures);
	strbuf_release(&b.db_path);
	strbuf_release(&b.shard);
	strbuf_release(&b.cg.paths);
	free(b.cg.folder);
	return rc;
}
