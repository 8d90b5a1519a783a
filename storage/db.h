/* db.h — writing analysed traces into the pptrace SQLite database.
 *
 * One handle per process. db_open() sets WAL mode, a busy timeout and the
 * schema (schema.h); statements are prepared once and reused. A trace is
 * stored in exactly one transaction: db_trace_begin() … add kernels, steps,
 * category rows … db_trace_commit(). Storing a trace that is already there
 * (same path: its identity, docs/contracts.md §8) replaces it. Errors are
 * sticky: after a failed call every writing call returns PP_EDB until
 * db_trace_rollback() (which also resets the error); db_errmsg() says what
 * went wrong first.
 *
 * The sections below and their files: the connection (db.c), the trace
 * write (db_trace.c), a classified rank (db_rank.c), the stored traces and
 * the run log (db_runs.c), the ranks (ranks.c).
 */
#ifndef DB_H
#define DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/rank_result.h"
#include "schema.h"

struct db;
struct sqlite3;
struct strbuf;

enum {
	DB_READONLY = 1u << 0, /* open an existing database for reading only */
	/* A pool worker: never copy the WAL into the database (no automatic
	 * checkpoint, none at close). Its coordinator does, with
	 * db_checkpoint(), while the workers go on parsing. */
	DB_NO_CHECKPOINT = 1u << 1,
	DB_EXISTING = 1u << 2, /* read-write, but never create the file */
	/* With DB_READONLY: a file of any version up to this pptrace's, read
	 * as it is (a baseline to compare with: storage/db_compare.h), without
	 * a lock and without creating -wal or -shm files beside it (SQLite's
	 * immutable mode) unless its -wal holds transactions. */
	DB_ANY_VERSION = 1u << 3
};

/* ---- the connection (db.c) ---- */

/* Opens (creating if needed) the database at path. Returns NULL with a
 * message appended to err on failure (cannot open, not a pptrace database,
 * newer schema; without DB_READONLY or DB_EXISTING, a file it may not
 * write: "cannot write database"). busy_timeout_ms: how long to wait for
 * another writer (0 = 10 minutes). */
struct db *db_open(const char *path, unsigned flags, int busy_timeout_ms, struct strbuf *err);
/* Rolls back an open transaction and closes. Accepts NULL. */
void db_close(struct db *db);
/* Copies what it can of the WAL into the database without waiting for
 * anyone (a PASSIVE checkpoint). Returns 0, or PP_EDB (message in
 * db_errmsg, not sticky) on an error other than "busy". */
int db_checkpoint(struct db *db);
/* Turns SQLite's automatic checkpoint (at a commit that finds 256 pages,
 * 16 MiB, in the WAL) off or back on, for a connection whose checkpoints a
 * thread runs meanwhile (pipeline/batch/checkpointer.h): the coordinator's,
 * whose event loop would otherwise copy a big trace's WAL when it records
 * a failure. */
void db_auto_checkpoint(struct db *db, bool on);
/* The first error message since the last reset ("" when none). */
const char *db_errmsg(const struct db *db);
/* The underlying connection (for read queries in tools and tests). */
struct sqlite3 *db_sqlite(struct db *db);

/* ---- the trace write (db_trace.c) ---- */

/* One trace file: identity, outcome and whole-rank metrics. Strings may be
 * NULL; they are copied by SQLite before the call returns. */
struct db_trace {
	const char *path;   /* the identity: realpath(BASE)/folder/name as
				* laid out (walk.h), symlinks not followed */
	const char *file;   /* the file read (canonical path), or NULL */
	const char *folder; /* iteration folder's base name */
	bool has_iteration;
	int64_t iteration;
	/* The rank claims; the stored rank is the header's, else the file
	 * name's, until db_resolve_ranks() decides with the other traces of
	 * the iteration. */
	bool has_header_rank; /* distributedInfo.rank of the trace */
	int64_t header_rank;
	bool has_name_rank; /* rank_NNNN in the file name */
	int64_t name_rank;
	int64_t bytes;        /* file size; < 0: none (NULL) */
	int64_t mtime_ns;     /* file modification time */
	int status;           /* DB_STATUS_* */
	int fail_kind;        /* DB_FAIL_* (0 unless failed) */
	const char *error;    /* why it failed / what was salvaged */
	const char *warnings; /* newline-separated warnings, or NULL */
	int mode;             /* DB_MODE_* (stored unless failed) */
	bool has_metrics;     /* the fields below are set */
	int64_t window_start_ns, window_end_ns;
	int64_t gpu_busy_ns, idle_ns, bubble_ns;
	int64_t comp_busy_ns, comm_busy_ns, overlap_ns;
	double coverage;
	int64_t events;                                  /* trace events read (0 = unknown) */
	int64_t kernels;                                 /* GPU events stored */
	const char *fwd_thread, *bwd_thread, *role_rule; /* thread roles */
	int64_t elapsed_ns;                              /* worker time spent on the trace */
	int64_t run_id;                                  /* runs.id of the ppbatch run, 0 = none */
};

/* One GPU event: the classifier's record as it is (its start_ns is
 * absolute; it is stored relative to the trace's window_start_ns; a
 * stream < 0 is NULL), with what the record only indexes in its
 * rank_result: the name and the process group. */
struct db_kernel {
	const struct rr_kernel *k;  /* its name_id, step and pg are not read */
	const struct rr_step *step; /* its phase and seq, or NULL: none */
	int64_t name_id;            /* id from db_intern_name(), or 0: intern name */
	const char *name;           /* kernel name (interned by the db) */
	size_t name_len;
	const char *pg_desc;  /* process group description, or NULL */
	const char *pg_ranks; /* e.g. "[0, 8, 16]", or NULL */
};

/* One step (docs/semantics.md §6; docs/contracts.md §2). */
struct db_step {
	enum rr_phase phase; /* RR_FWD..RR_OPT */
	int64_t seq;
	bool has_cpu; /* cpu_start/cpu_end known */
	int64_t cpu_start_ns, cpu_end_ns;
	int64_t kernels; /* 0: start/end stored as NULL (unless has_times) */
	bool has_times;  /* start/end known without kernels (PP-timer) */
	int64_t start_ns, end_ns;
	int64_t comp_ns, comm_ns, overlap_ns;
	int64_t chunk, mbs; /* VPP labels; -1 = unknown */
};

/* One category_stats row. */
struct db_category {
	enum rr_category category;
	int64_t kernels, sum_ns, busy_ns;
};

/* The names.id of a kernel name, inserted when new. Inside a trace
 * transaction (the id is valid only if it commits). 0 or PP_EDB. */
int db_intern_name(struct db *db, const char *name, size_t len, int64_t *id);

/* Starts the transaction of one trace: BEGIN IMMEDIATE (waits for other
 * writers up to the busy timeout), removes any stored trace with the same
 * path, inserts t. Returns 0 or PP_EDB. */
int db_trace_begin(struct db *db, const struct db_trace *t);
int db_trace_add_kernel(struct db *db, const struct db_kernel *k);
/* The pgroups id of the process group (desc, ranks), inserted when new; 0 when both
 * are empty or NULL (stored as NULL). Inside a trace transaction. 0 or
 * PP_EDB. */
int db_intern_pgroup(struct db *db, const char *desc, const char *ranks, int64_t *id);
/* n GPU events at once, as db_trace_add_kernel() would store them one by
 * one: kernel i's name id is name_ids[k[i].name_id], or name_ids[nnames]
 * when name_id >= nnames; its process group id pg_ids[k[i].pg] when 0 <=
 * pg < ngroups, else NULL; its phase and seq those of steps[k[i].step]
 * when 0 <= step < nsteps, else none. The ids are db_intern_name()'s and
 * db_intern_pgroup()'s. No per-kernel call: the rows go straight into the
 * insert batches (docs/ppbatch.md, "Performance"). 0 or PP_EDB. */
int db_trace_add_kernels(struct db *db, const struct rr_kernel *k, size_t n,
			 const int64_t *name_ids, size_t nnames, const int64_t *pg_ids,
			 size_t ngroups, const struct rr_step *steps, size_t nsteps);
int db_trace_add_step(struct db *db, const struct db_step *s);
int db_trace_add_category(struct db *db, const struct db_category *c);

/* The GPU time of one user annotation name in the open trace (the
 * annotations view; rank_result.h's struct rr_annotation). */
struct db_annotation {
	int64_t name_id; /* db_intern_name()'s id of the name */
	int64_t calls, kernels, gpu_ns, comp_ns, comm_ns, overlap_ns;
};
int db_trace_add_annotation(struct db *db, const struct db_annotation *a);

/* One op of the what-if analysis (the ops view, docs/whatif.md §1). */
struct db_op {
	int optype;               /* enum op_type (model/optype.h) */
	int32_t seq_id;           /* among the trace's ops of its type */
	int16_t mc, gmc, mb_id;   /* chunk, global chunk, micro-batch; -1 = none */
	int64_t start_ns, end_ns; /* absolute; stored relative to the trace's
				    * window_start_ns (so set has_metrics) */
	bool has_step;            /* ppagg labels the op from a step: */
	int32_t step_seq;         /* the seq of the fwd/bwd step whose VPP
				    * labels give mc (and mb_id of a compute)
				    * and gmc (struct rr_op) */
};
/* Adds an op to the open trace. 0 or PP_EDB. */
int db_trace_add_op(struct db *db, const struct db_op *op);
/* Records the open trace's worker, for sources that give it with the ops
 * (an op-trace import: source_id from db_op_source_replace()); traces
 * without one take theirs from ppagg's topology. 0 or PP_EDB. */
int db_trace_set_worker(struct db *db, int64_t source_id, int dp_rank, int stage);
/* Commits; on failure rolls back and returns PP_EDB. */
int db_trace_commit(struct db *db);
/* Abandons the trace's transaction (if any) and resets the error state. */
void db_trace_rollback(struct db *db);

/* One transaction around several traces (an op-trace import): between
 * db_bulk_begin() and db_bulk_commit(), db_trace_begin() and
 * db_trace_commit() neither begin nor commit, so readers see all of the
 * traces or none. Any error (sticky, as always) rolls the whole of it back:
 * db_trace_rollback() ends the bulk transaction too. 0, PP_EINVAL or
 * PP_EDB; db_bulk_commit() rolls back when it fails. */
int db_bulk_begin(struct db *db);
int db_bulk_commit(struct db *db);

/* An op-trace import (ppbatch --format optrace). Its traces' paths start
 * with "PATH#". */
struct db_op_source {
	const char *path; /* the identity: the file as given */
	const char *file; /* the file read (canonical path) */
	int64_t bytes, mtime_ns;
	const char *meta_path, *schema_path; /* or NULL */
	bool has_meta;                       /* the fields below come from a meta yaml */
	const char *trial_name;
	int64_t run_id, dp_size, pp_size, tp_size, dsp_size, vpp_size, world_size;
	const char *optype_order; /* the schema's names, comma-separated; NULL
				      * = alphabetical */
};
/* Inside a bulk transaction: deletes the import stored at src->path, if
 * any (its traces with all their rows: *removed counts them), and records
 * src; *id is its id for db_trace_set_worker(). 0, PP_EINVAL or PP_EDB. */
int db_op_source_replace(struct db *db, const struct db_op_source *src, int64_t *id,
			 int64_t *removed);

/* Records a trace that produced no data (status failed, or any status
 * without kernels) in its own transaction. */
int db_trace_store_empty(struct db *db, const struct db_trace *t);

/* ---- a classified rank (db_rank.c) ---- */

struct rank_result;
/* Sets t's whole-rank metrics (has_metrics, window, gpu_busy, idle, bubble,
 * comp/comm busy, overlap, coverage) to r's: the classifier's, or those
 * rank_metrics_totals() computed over an import's intervals. */
void db_trace_set_metrics(struct db_trace *t, const struct rank_result *r);
/* Stores a classified rank in one transaction: t supplies the identity and
 * outcome (status ok or partial); the metrics, thread roles, warnings,
 * kernels, steps and category rows come from r (t's metric fields are
 * ignored). Returns 0, or PP_EDB with db_errmsg() (nothing is stored). */
int db_store_rank(struct db *db, const struct db_trace *t, const struct rank_result *r);

/* ---- the stored traces and the run log (db_runs.c) ---- */

/* What is stored about one trace (for the skip check). */
struct db_stored {
	const char *path; /* its identity */
	const char *folder;
	int64_t bytes, mtime_ns;
	int status, fail_kind;
	/* Stored by a pptrace before schema version 3: path is the canonical
	 * path of the file (the old identity) and the file-name rank is not
	 * known. db_trace_adopt() gives it its laid-out identity. */
	bool legacy;
};
/* Calls fn for every stored trace; the strings live until fn returns.
 * Returns 0 or PP_EDB. */
int db_trace_each(struct db *db, void (*fn)(void *ctx, const struct db_stored *s), void *ctx);
/* Gives the legacy row at old_path the identity of t (path, file, the
 * file-name rank; the rank it had counts as its header's) without
 * analysing it again. Call between db_adopt_begin() and db_adopt_commit()
 * (one transaction for all). 0, or PP_EDB with db_errmsg(). */
int db_adopt_begin(struct db *db);
int db_trace_adopt(struct db *db, const char *old_path, const struct db_trace *t);
int db_adopt_commit(struct db *db);

/* The runs table: one row per ppbatch invocation. */
struct db_run {
	const char *host, *input, *db, *shard;
	int processes;
	const char *state; /* "running", "done", "interrupted" */
	int64_t files, ok, partial, failed, skipped, bytes;
	double seconds;
	const char *failures; /* one "path: reason" per line, or NULL */
};
/* Inserts a run (state "running"); sets *id. */
int db_run_begin(struct db *db, const struct db_run *r, int64_t *id);
/* Updates the run's state and counters. */
int db_run_finish(struct db *db, int64_t id, const struct db_run *r);

/* ---- the ranks (ranks.c) ---- */

/* Ranks (docs/contracts.md §8). Within an iteration (its folder when it has
 * no number), a trace's rank is its header's, else its file name's; when a
 * header rank is claimed by several traces, each of them that has a rank
 * in its file name takes that one instead (rank_note says why). Ranks that
 * several traces still claim are conflicts (the rank_conflicts view).
 * Recomputed for every stored trace, in one transaction; rows that do not
 * change are not written. 0 or PP_EDB. */
int db_resolve_ranks(struct db *db);

/* One trace of a rank conflict (the rank_conflicts view). */
struct db_conflict {
	bool has_iteration;
	int64_t iteration;
	const char *folder, *path;
	int64_t rank;
	int64_t ntraces; /* traces claiming the rank */
};
/* A header rank shared by several traces of one iteration, whose ranks
 * were therefore taken from their file names. */
struct db_shared_rank {
	bool has_iteration;
	int64_t iteration;
	const char *folder; /* one of the iteration's folders */
	int64_t header_rank;
	int64_t ntraces;
	const char *first, *last; /* two of the traces (smallest, largest path) */
};
/* Call fn for each conflict row (ordered by iteration, then the folder
 * when there is no iteration, rank, path: the rows of one conflict are
 * consecutive) / each shared header rank (by iteration, rank). 0 or PP_EDB. */
int db_rank_conflicts(struct db *db, void (*fn)(void *ctx, const struct db_conflict *c), void *ctx);
int db_shared_header_ranks(struct db *db, void (*fn)(void *ctx, const struct db_shared_rank *s),
			   void *ctx);

#endif
