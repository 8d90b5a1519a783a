/* worker.h — analysing one trace into the database, and the worker process.
 *
 * worker_process() is the whole job for one file: open the reader, feed
 * every event to the classifier, store the rank in one transaction (or the
 * failure with the reader's message), then drop the per-trace arena.
 * worker_serve() (batch.h) is the body of `ppbatch --worker`: once it has
 * opened the database it writes the line WORKER_READY, then reads tasks
 * from stdin and answers each on stdout (the protocol of pool.h), so the
 * coordinator can supervise it as a separate process.
 */
#ifndef WORKER_H
#define WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A worker's first line: it has started (the database is open). */
#define WORKER_READY "ready"

struct db;
struct db_trace;
struct patterns;
struct strbuf;
struct walk_file;

struct worker_ctx {
	struct db *db;               /* borrowed */
	const struct patterns *pats; /* borrowed */
	bool salvage;                /* keep the events before a truncation */
	int64_t run_id;              /* runs.id, 0 = none */
	int threads;                 /* 2 or more: read (or inflate) the
				      * file on a thread of its own */
};

/* The outcome of one trace, as recorded in the database. */
struct worker_outcome {
	int status;    /* DB_STATUS_* */
	int fail_kind; /* DB_FAIL_* */
	int64_t elapsed_ns;
	char msg[1024]; /* the error (failed), what was salvaged
			      * (partial), or "" */
};

/* Analyses f into ctx->db. Returns 0 when the outcome (ok, partial or
 * failed) was recorded; PP_EDB when even that could not be written (out
 * says why). */
int worker_process(struct worker_ctx *ctx, const struct walk_file *f, struct worker_outcome *out);

/* The database row of f without an outcome: its identity (walk.h), folder,
 * iteration, file-name rank, size and mtime; run_id 0 = none. */
void worker_trace_row(struct db_trace *t, const struct walk_file *f, int64_t run_id);

/* How many threads each of `workers` workers takes by default: 2 when the
 * machine's cores are at least twice the workers, else 1. */
int worker_threads_for(int workers);

/* The task line for f (pool.h protocol), appended to sb without '\n'. */
void worker_task_encode(struct strbuf *sb, const struct walk_file *f, int64_t run_id);

/* Parses a reply line of worker_serve() (modified in place) into out.
 * Returns 0 or PP_EPARSE. */
int worker_reply_decode(char *line, struct worker_outcome *out);

#endif
