/* batch.h — the options of `ppbatch` and its entry points.
 *
 * cmd/ppbatch.c fills struct batch_opts (defaults, then the [batch] section
 * of the config file, then the command line) and calls exactly one of:
 *   inspect_run()  --inspect: describe trace files (pipeline/batch/inspect.c)
 *   pptimer_run()  --format pp-timer: import PP-timer dumps (pipeline/batch/pptimer.c)
 *   opimport_run() --format optrace: import an op trace (pipeline/batch/opimport.c)
 *   merge_run()    --merge: merge shard databases (pipeline/batch/merge.c)
 *   batch_run()    otherwise: analyse a trace tree into the database
 *                  (pipeline/batch/batch.c)
 * Each returns a PP_EXIT_* code.
 */
#ifndef BATCH_H
#define BATCH_H

#include <stdbool.h>

struct config;

struct batch_opts {
	const char *input;       /* --input DIR: the BASE folder */
	char **folders;          /* --folders: glob patterns over folder names */
	int nfolders;            /* 0 = every folder ("*") */
	const char *pattern;     /* --pattern: glob over file names */
	const char *db;          /* --db; NULL = <input>/pptrace.db */
	const char *config_path; /* --config (passed on to the workers) */
	struct config *config;   /* loaded config (never NULL; may be empty):
				 * its [patterns] for the classifier */
	int processes;           /* --processes, >= 1 */
	int busy_timeout_ms;     /* batch.busy_timeout_ms, >= 1 */
	bool force;              /* --force: re-analyse stored traces */
	bool salvage;            /* --salvage: keep events before a truncation */
	int shard_index;         /* --shard I/N: 0 <= I < N */
	int shard_count;         /* 1 = no sharding */
	double timeout_s;        /* --timeout, >= 0; 0 = none */
	bool quiet;              /* --quiet: no progress output */
	bool json;               /* --json (with --inspect) */
	bool no_classify;        /* --no-classify (with --inspect): reader only */
	bool full;               /* --full (with --inspect): the whole classifier
				 * instead of a survey (classify_new_survey) */
	bool inspect;            /* --inspect FILE... */
	bool merge;              /* --merge SHARD.db... */
	const char *format;      /* --format: "kineto" (default), "pp-timer" or
				 * "optrace" */
	const char *meta;        /* --meta (optrace): the job's meta yaml */
	const char *schema;      /* --schema (optrace): the op types' order */
	int pp_size;             /* --pp-size (pp-timer) */
	int vpp_size;            /* --vpp-size (pp-timer); 1 when absent */
	char **files;            /* positional arguments (files for --inspect,
				 * shard databases for --merge) */
	int nfiles;
	bool worker; /* --worker: internal, run as a pool worker */
};

int inspect_run(const struct batch_opts *o);
int pptimer_run(const struct batch_opts *o);
int opimport_run(const struct batch_opts *o);
int merge_run(const struct batch_opts *o);
int batch_run(const struct batch_opts *o);

#endif
