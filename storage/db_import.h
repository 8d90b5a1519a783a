/* db_import.h — what an import of another format records beside its
 * traces, and what ppagg reads of it (docs/database.md, "Imports").
 *
 * An import (ppbatch --format pp-timer or primus) stores its ranks as
 * traces with steps (db.h). It also records:
 * - the import itself (table import_t, view `imports`): the format and the
 *   sizes it knows (pp, vpp, dp, tp, ep, world, micro-batches, iterations,
 *   layers), so that ppagg finds the topology and the VPP without flags;
 * - per trace, its pipeline stage and what the dump read beside the steps
 *   (table reading_t, view `readings`): the schedule call's total time and
 *   the stage's peak memory;
 * - per trace, the weight-gradient calls of zero-bubble schedules (table
 *   wgrad_t, view `wgrad_steps`).
 * Readings and weight-gradient rows are keyed by the trace's path (its
 * identity): storing the same path again replaces them, and the views join
 * them to the trace of that path, so rows of a trace stored again by
 * another route are never joined to the wrong one.
 *
 * Writes follow db.h's conventions: inside a trace transaction
 * (db_trace_begin() .. db_trace_commit()) or a bulk one, errors sticky.
 * Reads return 0, a callback's non-zero value, or PP_EDB with db_errmsg()
 * (not sticky).
 */
#ifndef DB_IMPORT_H
#define DB_IMPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"

/* One import: its identity (the dump folder or the input, canonical) and
 * what it knows; 0 where it does not know a size. */
struct db_import {
	const char *path;
	const char *format; /* "pp-timer", "primus" */
	int pp_size, vpp_size;
	int dp_size, tp_size, ep_size, world_size;
	int microbatches, iterations, num_layers;
};

/* Records imp (replacing an import of the same path). With own_traces,
 * the import owns every trace whose path starts with "PATH#" and replaces
 * them all: they are deleted with their readings and weight-gradient rows
 * (*removed counts them), which needs a bulk transaction (db_bulk_begin()).
 * Without it, the row alone is written in its own transaction when none is
 * open. 0, PP_EINVAL or PP_EDB (sticky). */
int db_import_record(struct db *db, const struct db_import *imp, bool own_traces, int64_t *removed);

/* What a dump read for one trace beside its steps. */
struct db_reading {
	const char *path; /* the trace's identity */
	int stage;        /* its pipeline stage */
	bool has_total;
	int64_t total_ns; /* the schedule call */
	bool has_memory;
	double memory_gib; /* peak memory (Primus: max_memory_reserved) */
};
/* Stores r (replacing the trace's reading). Inside a transaction. */
int db_reading_add(struct db *db, const struct db_reading *r);

/* One weight-gradient call of a zero-bubble schedule. */
struct db_wgrad {
	const char *path; /* the trace's identity */
	int64_t seq;      /* in time order */
	int chunk, mb;    /* -1 when unknown */
	int64_t start_ns, end_ns;
};
/* Deletes the weight-gradient rows of path (before its new ones).
 * Inside a transaction. */
int db_wgrad_clear(struct db *db, const char *path);
int db_wgrad_add(struct db *db, const struct db_wgrad *w);

/* ---- reads (ppagg, ppsim --from-db) ---- */

/* The most recent import (*found 0 when there is none). */
struct db_import_info {
	char format[16];
	int pp_size, vpp_size;
	int dp_size, tp_size, ep_size, world_size;
	int microbatches, iterations, num_layers;
};
int db_import_latest(struct db *db, struct db_import_info *out, int *found);

/* Calls fn with every (stage, rank) pair the readings give, ordered by
 * stage, then rank. */
int db_import_stages(struct db *db, int (*fn)(void *ctx, int stage, int64_t rank), void *ctx);

/* One reading of an iteration (view readings). */
struct db_agg_reading {
	int64_t rank;
	int stage;
	bool has_total;
	int64_t total_ns;
	bool has_memory;
	double memory_gib;
};
/* The readings of iteration, ordered by stage, then rank. */
int db_import_readings(struct db *db, int64_t iteration,
		       int (*fn)(void *ctx, const struct db_agg_reading *r), void *ctx);

/* One weight-gradient call of an iteration (view wgrad_steps). */
struct db_agg_wgrad {
	int64_t rank, seq;
	int chunk, mb; /* -1 when unknown */
	int64_t start_ns, end_ns;
};
/* The weight-gradient calls of iteration, ordered by rank, then seq. */
int db_import_wgrads(struct db *db, int64_t iteration,
		     int (*fn)(void *ctx, const struct db_agg_wgrad *w), void *ctx);

#endif
