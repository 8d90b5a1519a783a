/* batch.h — the modes of `ppbatch`: one options struct and one entry each.
 *
 * cmd/ppbatch.c reads the command line (defaults, then the [batch] section
 * of the config file, then the flags), picks the mode, checks that mode's
 * arguments, fills the mode's struct and calls its entry:
 *
 *   mode, chosen by       options               entry            file
 *   (default)             struct batch_opts     batch_run()      batch.c
 *   --inspect             struct inspect_opts   inspect_run()    inspect.c
 *   --merge               struct merge_opts     merge_run()      merge.c
 *   --format pp-timer     struct pptimer_opts   pptimer_run()    pptimer.c
 *   --format primus       struct primus_opts    primus_run()     primus.c
 *   --format optrace      struct opimport_opts  opimport_run()   opimport.c
 *   --worker (internal)   struct worker_opts    worker_serve()   worker.c
 *
 * Each entry returns a PP_EXIT_* code and appends its errors to err, one a
 * line (pp_err(), util/pp.h), for cmd/ppbatch.c to print once when it
 * returns; its progress, warnings and summary it prints itself. A new
 * mode is a struct and an entry here and a row in cmd/ppbatch.c's modes[].
 * Strings and arrays are borrowed from the caller for the entry's duration.
 */
#ifndef BATCH_H
#define BATCH_H

#include <stdbool.h>

struct config;
struct strbuf;

/* Analyse a trace tree into the database (docs/ppbatch.md). */
struct batch_opts {
	const char *input;           /* --input DIR: the BASE folder */
	char **folders;              /* --folders: glob patterns over folder names */
	int nfolders;                /* 0 = every folder ("*") */
	const char *pattern;         /* --pattern: glob over file names; NULL = the
				      * walk's own (walk.h) */
	const char *db;              /* --db; NULL = <input>/pptrace.db */
	const char *config_path;     /* --config, passed on to the workers; or NULL */
	const struct config *config; /* never NULL (may be empty): its [patterns]
				      * for the classifier */
	int processes;               /* --processes, >= 1 */
	int busy_timeout_ms;         /* batch.busy_timeout_ms, >= 1 */
	bool force;                  /* --force: re-analyse stored traces */
	bool salvage;                /* --salvage: keep events before a truncation */
	int shard_index;             /* --shard I/N: 0 <= I < N */
	int shard_count;             /* 1 = no sharding */
	double timeout_s;            /* --timeout, >= 0; 0 = none */
	bool quiet;                  /* --quiet: no progress output */
	int worker_threads;          /* --worker-threads: 1 or 2; 0 = 2 when the
				      * cores are at least twice the workers */
};
int batch_run(const struct batch_opts *o, struct strbuf *err);

/* --inspect FILE...: describe trace files, store nothing. */
struct inspect_opts {
	const struct config *config; /* never NULL: [patterns] */
	bool salvage;                /* --salvage */
	bool json;                   /* --json: one JSON object per file */
	bool full;                   /* --full: the whole classifier instead of a
				      * survey (classify_new_survey) */
	bool no_classify;            /* --no-classify: reader only */
	char **files;                /* the trace files, nfiles >= 1 */
	int nfiles;
};
int inspect_run(const struct inspect_opts *o, struct strbuf *err);

/* --merge --db OUT SHARD.db...: shard databases into one. */
struct merge_opts {
	const char *db; /* --db: the database merged into; required */
	char **files;   /* the shard databases; at least one */
	int nfiles;
	bool quiet; /* --quiet: no summary line */
};
int merge_run(const struct merge_opts *o, struct strbuf *err);

/* --format pp-timer: Megatron PP-timer dumps (pptimer.h). */
struct pptimer_opts {
	const char *input; /* --input DIR: BASE, or one iteration folder */
	char **folders;    /* --folders, as struct batch_opts's */
	int nfolders;
	const char *db; /* --db; NULL = <input>/pptrace.db */
	int pp_size;    /* --pp-size; required (>= 1) */
	int vpp_size;   /* --vpp-size; 1 when absent */
	int layers;     /* --layers: the model's transformer layers; 0 unknown */
	bool quiet;     /* --quiet */
};
int pptimer_run(const struct pptimer_opts *o, struct strbuf *err);

/* --format primus: a Primus pp_data dump (primus.h, docs/primus.md). */
struct primus_opts {
	const char *input; /* --input DIR: config.json and pp_rank_<s>.json */
	const char *db;    /* --db; NULL = <input>/pptrace.db */
	int layers;        /* --layers: the model's transformer layers; 0 unknown */
	bool quiet;        /* --quiet */
};
int primus_run(const struct primus_opts *o, struct strbuf *err);

/* --format optrace: an op trace of the what-if analysis (docs/whatif.md). */
struct opimport_opts {
	const char *input;  /* --input FILE: the op-trace CSV */
	const char *db;     /* --db; NULL = pptrace.db next to the file */
	const char *meta;   /* --meta: the job's meta yaml, or NULL */
	const char *schema; /* --schema: the op types' order, or NULL */
	bool quiet;         /* --quiet */
};
int opimport_run(const struct opimport_opts *o, struct strbuf *err);

/* --worker: a worker process of batch_run()'s pool (worker.h): serves
 * tasks until EOF on stdin; PP_EXIT_FATAL when the database cannot be
 * opened. */
struct worker_opts {
	const char *db;              /* --db; required */
	const struct config *config; /* never NULL: [patterns] */
	bool salvage;                /* --salvage */
	int threads;                 /* --worker-threads; 0 = auto */
};
int worker_serve(const struct worker_opts *o, struct strbuf *err);

#endif
