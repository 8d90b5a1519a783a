/* ppbatch — analyse Kineto traces of a Megatron-LM job into one SQLite
 * database; also --inspect, --merge and --format pp-timer. Thin: defaults,
 * the [batch] section of the config file, then the options, into struct
 * batch_opts; then one entry of batch.h. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch.h"
#include "util/cli.h"
#include "util/config.h"
#include "util/pp.h"

enum {
	O_INPUT = 1,
	O_FOLDERS,
	O_PATTERN,
	O_DB,
	O_CONFIG,
	O_PROCESSES,
	O_FORCE,
	O_SALVAGE,
	O_SHARD,
	O_TIMEOUT,
	O_QUIET,
	O_INSPECT,
	O_JSON,
	O_MERGE,
	O_FORMAT,
	O_PP_SIZE,
	O_VPP_SIZE,
	O_WORKER,
	O_NO_CLASSIFY,
	O_FULL,
	O_META,
	O_SCHEMA
};

static const struct cli_opt options[] = {
	{ "input", 'i', "<dir>", "base folder holding iteration_N/ folders (optrace: the file)",
	  O_INPUT, 0 },
	{ "folders", 0, "<glob>", "iteration folders to take (default: all)", O_FOLDERS,
	  CLI_MULTI },
	{ "pattern", 0, "<glob>", "trace file names (default: *.json, *.json.gz, *.pt.trace.json*)",
	  O_PATTERN, 0 },
	{ "db", 0, "<path>", "database file (default: <input>/pptrace.db, or next to the file)",
	  O_DB, 0 },
	{ "config", 'c', "<file>", "INI configuration file", O_CONFIG, 0 },
	{ "processes", 'j', "<n>", "worker processes (default: number of cores)", O_PROCESSES, 0 },
	{ "force", 'f', NULL, "re-analyse traces that are already stored", O_FORCE, 0 },
	{ "salvage", 0, NULL, "keep the complete events of a truncated trace", O_SALVAGE, 0 },
	{ "shard", 0, "<i>/<n>", "process only slice i (0-based) of n", O_SHARD, 0 },
	{ "timeout", 0, "<seconds>", "kill a worker that takes longer", O_TIMEOUT, 0 },
	{ "quiet", 'q', NULL,
	  "only warnings and errors: no progress, no summary; a failed trace is an error line",
	  O_QUIET, 0 },
	{ "inspect", 0, NULL, "describe the trace files given as arguments", O_INSPECT, 0 },
	{ "json", 0, NULL, "with --inspect: one JSON object per file", O_JSON, 0 },
	{ "full", 0, NULL,
	  "with --inspect: also classify every kernel (categories, orphans, "
	  "rank metrics) as the workers do; memory grows with the kernels",
	  O_FULL, 0 },
	{ "no-classify", 0, NULL, "with --inspect: only read (no thread roles or steps)",
	  O_NO_CLASSIFY, 0 },
	{ "merge", 0, NULL, "merge the shard databases given as arguments into --db", O_MERGE, 0 },
	{ "format", 0, "<fmt>", "input format: kineto (default), pp-timer or optrace", O_FORMAT,
	  0 },
	{ "pp-size", 0, "<n>", "pp-timer: pipeline-parallel size", O_PP_SIZE, 0 },
	{ "vpp-size", 0, "<n>", "pp-timer: virtual pipeline size (default 1)", O_VPP_SIZE, 0 },
	{ "meta", 0, "<yaml>", "optrace: the job's meta yaml (sizes; default: all 1)", O_META, 0 },
	{ "schema", 0, "<json>", "optrace: schema json (op type order; default alphabetical)",
	  O_SCHEMA, 0 },
	{ "worker", 0, NULL, "internal: run as a pool worker", O_WORKER, 0 },
	{ NULL, 0, NULL, NULL, 0, 0 }
};

static const struct cli_cmd cmd = {
	"ppbatch",
	"ppbatch --input <dir> [--folders <glob>...] [--db <path>] [-j <n>] [--force]\n"
	"               [--salvage] [--shard <i>/<n>] [--timeout <s>] [--quiet] [--config <file>]\n"
	"   or: ppbatch --inspect [--json] [--salvage] [--full | --no-classify] <trace>...\n"
	"   or: ppbatch --merge --db <out.db> <shard.db>...\n"
	"   or: ppbatch --format pp-timer --input <dir> --pp-size <p> [--vpp-size <v>] [--db <path>]\n"
	"   or: ppbatch --format optrace --input <trace.csv[.gz]> [--meta <yaml>] [--schema <json>]\n"
	"               [--db <path>]",
	"Classify the GPU work of every rank's PyTorch-profiler trace into one SQLite database.",
	options,
	"  ppbatch --input /data/run42 --folders 'iteration_1*' -j 8\n"
	"  ppbatch --inspect --json rank_0000_iter_15.pt.trace.json.gz\n"
	"  ppbatch --format optrace --input trace-AR.csv.gz --meta meta-AR.yaml --db ar.db",
	NULL /* the shared exit statuses */
};

static int parse_shard(const char *s, int *i, int *n)
{
	long a, b;
	const char *slash = strchr(s, '/');
	if (!slash)
		return PP_EINVAL;
	char head[32];
	size_t len = (size_t)(slash - s);
	if (len == 0 || len >= sizeof(head))
		return PP_EINVAL;
	memcpy(head, s, len);
	head[len] = '\0';
	if (cli_parse_long(head, 0, 1000000, &a) || cli_parse_long(slash + 1, 1, 1000000, &b) ||
	    a >= b)
		return PP_EINVAL;
	*i = (int)a;
	*n = (int)b;
	return 0;
}

static const char *const batch_keys[] = { "processes", "pattern",         "timeout",
					  "salvage",   "busy_timeout_ms", NULL };

/* [batch] keys override the defaults; the command line overrides them. */
static int apply_config(struct batch_opts *o, const struct config *cfg)
{
	long procs = o->processes, busy = o->busy_timeout_ms;
	char err[1024]; /* names the file: config_path() */
	if (config_get_long_in(cfg, "batch.processes", 1, 4096, &procs, err, sizeof(err)) < 0 ||
	    config_get_long_in(cfg, "batch.busy_timeout_ms", 1, INT_MAX, &busy, err, sizeof(err)) <
		    0 ||
	    config_get_double_in(cfg, "batch.timeout", 0, 1e9, &o->timeout_s, err, sizeof(err)) <
		    0 ||
	    config_get_bool(cfg, "batch.salvage", &o->salvage, err, sizeof(err)) < 0)
		return error("%s", err);
	o->processes = (int)procs;
	o->busy_timeout_ms = (int)busy;
	if (config_get(cfg, "batch.pattern"))
		o->pattern = config_get(cfg, "batch.pattern");
	return 0;
}

static int parse_args(struct batch_opts *o, struct cli_state *st)
{
	double d;
	int id, rc = 0;
	while (!rc && (id = cli_next(&cmd, st)) > 0) {
		switch (id) {
		case O_INPUT: o->input = st->arg; break;
		case O_FOLDERS:
			o->folders = st->args;
			o->nfolders = st->nargs;
			break;
		case O_PATTERN: o->pattern = st->arg; break;
		case O_DB: o->db = st->arg; break;
		case O_CONFIG: break; /* applied first: cli_find_config() */
		case O_PROCESSES: rc = cli_int_arg(&cmd, st, 1, 4096, &o->processes); break;
		case O_FORCE: o->force = true; break;
		case O_SALVAGE: o->salvage = true; break;
		case O_SHARD:
			if (parse_shard(st->arg, &o->shard_index, &o->shard_count))
				return cli_bad_value(&cmd, st, "expected I/N with 0 <= I < N");
			break;
		case O_TIMEOUT:
			if (cli_parse_double(st->arg, &d) || d < 0)
				return cli_bad_value(&cmd, st, "expected seconds >= 0");
			o->timeout_s = d;
			break;
		case O_QUIET: o->quiet = true; break;
		case O_INSPECT: o->inspect = true; break;
		case O_JSON: o->json = true; break;
		case O_NO_CLASSIFY: o->no_classify = true; break;
		case O_FULL: o->full = true; break;
		case O_MERGE: o->merge = true; break;
		case O_FORMAT:
			if (strcmp(st->arg, "kineto") && strcmp(st->arg, "pp-timer") &&
			    strcmp(st->arg, "optrace"))
				return cli_bad_value(&cmd, st,
						     "expected kineto, pp-timer or optrace");
			o->format = st->arg;
			break;
		case O_PP_SIZE: rc = cli_int_arg(&cmd, st, 1, 100000, &o->pp_size); break;
		case O_VPP_SIZE: rc = cli_int_arg(&cmd, st, 1, 100000, &o->vpp_size); break;
		case O_WORKER: o->worker = true; break;
		case O_META: o->meta = st->arg; break;
		case O_SCHEMA: o->schema = st->arg; break;
		}
	}
	return rc ? rc : id;
}

int main(int argc, char **argv)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	struct batch_opts o = { .shard_count = 1,
				.vpp_size = 1,
				.format = "kineto",
				.processes = cores < 1      ? 1
					     : cores > 4096 ? 4096
							    : (int)cores,
				.busy_timeout_ms = 600000 };
	struct cli_state st;
	char err[512];
	int rc;

	pp_set_progname("ppbatch");
	rc = cli_find_config(&cmd, argc, argv, &o.config_path);
	if (rc == CLI_HELP || rc == CLI_ERR)
		return rc == CLI_HELP ? PP_EXIT_OK : PP_EXIT_USAGE;
	o.config = o.config_path ? config_load(o.config_path, err, sizeof(err)) : config_new();
	if (!o.config) {
		error("%s", err);
		return PP_EXIT_USAGE;
	}
	if (o.config_path && apply_config(&o, o.config)) {
		config_free(o.config);
		return PP_EXIT_USAGE;
	}
	cli_init(&st, argc, argv);
	rc = parse_args(&o, &st);
	o.files = st.pos;
	o.nfiles = st.npos;
	if (!o.worker) /* once, not again in every worker */
		config_check_known(o.config, "batch", batch_keys);
	if (rc == CLI_ERR) {
		rc = PP_EXIT_USAGE;
	} else if (o.inspect && !o.nfiles) {
		error("--inspect needs at least one trace file");
		cli_usage(&cmd);
		rc = PP_EXIT_USAGE;
	} else if (o.inspect && o.merge) {
		error("--inspect and --merge exclude each other");
		cli_usage(&cmd);
		rc = PP_EXIT_USAGE;
	} else if (o.inspect && o.full && o.no_classify) {
		error("--full and --no-classify exclude each other");
		rc = PP_EXIT_USAGE;
	} else if (o.inspect) {
		rc = inspect_run(&o);
	} else if (o.merge && o.input) {
		error("--merge takes the shard databases as arguments, not --input");
		cli_usage(&cmd);
		rc = PP_EXIT_USAGE;
	} else if (o.merge) {
		rc = merge_run(&o);
	} else if (!o.worker && !o.input) {
		error("--input is required");
		cli_usage(&cmd);
		rc = PP_EXIT_USAGE;
	} else if (o.nfiles) {
		/* Only --inspect and --merge take files: a second folder after
		 * --input would otherwise be dropped without a word. */
		error("unexpected argument '%s' (--input takes one folder; trace files go "
		      "with --inspect, shard databases with --merge)",
		      o.files[0]);
		cli_usage(&cmd);
		rc = PP_EXIT_USAGE;
	} else if ((o.meta || o.schema) && strcmp(o.format, "optrace")) {
		error("--meta and --schema go with --format optrace");
		rc = PP_EXIT_USAGE;
	} else if ((o.pp_size || o.vpp_size != 1) && strcmp(o.format, "pp-timer")) {
		error("--pp-size and --vpp-size go with --format pp-timer");
		rc = PP_EXIT_USAGE;
	} else if (!strcmp(o.format, "pp-timer")) {
		rc = pptimer_run(&o);
	} else if (!strcmp(o.format, "optrace")) {
		rc = opimport_run(&o);
	} else {
		rc = batch_run(&o);
	}
	config_free(o.config);
	cli_release(&st);
	return rc;
}
