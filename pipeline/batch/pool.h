/* pool.h — a libuv loop that runs tasks on supervised worker processes.
 *
 * Spawns up to nworkers copies of argv (e.g. `ppbatch --worker …`), gives
 * each one task line at a time on its stdin and reads one reply line per
 * task from its stdout, after the line WORKER_READY that a worker writes
 * once it has started (worker.h has the line formats). Supervision:
 *   - a worker that exits with a non-zero status before WORKER_READY cannot
 *     start (no database, bad config), as the others could not: pool_run()
 *     stops and fails;
 *   - a worker killed by a signal or exiting during a task once started
 *     (a crash, out of memory, a sanitizer's report) is replaced and the
 *     task retried once; the second time the task fails with the signal's
 *     name or the exit status (outcome not yet recorded in the database);
 *   - a task running longer than timeout_s is killed and fails (no retry);
 *     a reply read after the deadline fired (the loop was busy) still ends
 *     its task, and the dying worker gets no other;
 *   - SIGINT/SIGTERM: no new tasks, workers are terminated, pool_run()
 *     returns PP_EINTR after every worker has exited.
 * The processes themselves run on proc.h.
 */
#ifndef POOL_H
#define POOL_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;
struct worker_outcome;

struct pool_opts {
	char **argv;      /* worker command, NULL-terminated; argv[0] = path */
	int nworkers;     /* >= 1 */
	double timeout_s; /* per task; 0 = none */
	void *ctx;        /* passed to the callbacks */
	/* Appends the line of task i (no '\n') to sb. */
	void (*task_line)(void *ctx, size_t i, struct strbuf *sb);
	/* Task i ended. recorded: the worker stored the outcome itself;
	 * false for crashes and timeouts, which the caller must record. */
	void (*done)(void *ctx, size_t i, const struct worker_outcome *o, bool recorded);
	/* About every 200 ms while tasks run (progress display); may be NULL. */
	void (*tick)(void *ctx);
};

/* Runs tasks 0..ntasks-1 in order. Returns 0 when every task ended (each
 * one reported through done), PP_EINTR when interrupted by a signal, or
 * PP_EIO with a message appended to err when workers cannot be run (spawn failure,
 * a worker exiting before WORKER_READY). */
int pool_run(const struct pool_opts *o, size_t ntasks, struct strbuf *err);

#endif
