/* checkpointer.h — the coordinator's WAL checkpoints, off its event loop.
 *
 * Workers never copy the WAL into the database (DB_NO_CHECKPOINT): their
 * coordinator asks for a PASSIVE checkpoint every so many stored trace
 * bytes (batch.c). One takes 20-60 ms on the benchmark VM, mostly two
 * fdatasyncs; run on the event loop, it kept a worker that replied
 * meanwhile, or asked for its next trace, waiting for it. So a thread of
 * its own runs them, on its own connection to the database. Requests made
 * while one runs are merged into one more.
 */
#ifndef CHECKPOINTER_H
#define CHECKPOINTER_H

#include <stdbool.h>
#include <stddef.h>

struct checkpointer;
struct strbuf;

/* Starts the thread with its own connection to the database at path (an
 * existing pptrace database); NULL with the reason appended to err when it cannot:
 * the caller then checkpoints on its own connection (db_checkpoint()). */
struct checkpointer *checkpointer_start(const char *path, int busy_timeout_ms, struct strbuf *err);

/* Asks for a checkpoint; returns at once. */
void checkpointer_request(struct checkpointer *c);

/* The thread prints nothing (its caller's progress line would tear): the
 * first checkpoint that failed since the last look, if any, has its
 * message appended to msg (true), else false. */
bool checkpointer_error(struct checkpointer *c, struct strbuf *msg);

/* Waits for the checkpoints asked for, stops the thread, closes its
 * connection; then as checkpointer_error(). Accepts NULL (false). */
bool checkpointer_stop(struct checkpointer *c, struct strbuf *msg);

#endif
