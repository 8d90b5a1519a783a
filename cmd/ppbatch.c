/* ppbatch — analyse Kineto traces of a Megatron-LM job into one SQLite
 * database; also --inspect, --merge, --format pp-timer and --format
 * optrace. Thin: the command line is read once (defaults, the [batch]
 * section of the config file, then the flags) into struct cmdline; the mode
 * it names (modes[]) checks its arguments, fills its own options struct and
 * calls its entry of batch.h. */
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch.h"
#include "util/cli.h"
#include "util/config.h"
#include "util/pp.h"
#include "util/strbuf.h"

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
	O_SCHEMA,
	O_COUNT
};
_Static_assert(O_COUNT <= 32, "struct cmdline's given is a bit mask");

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

/* The command line as given: every option, whichever mode takes it (a
 * value is checked whatever the mode, so -j x is an error with --inspect
 * too). A mode reads the fields it takes; struct batch_opts and the others
 * (batch.h) say what each means. */
struct cmdline {
	unsigned given; /* bit O_x: the option was on the command line */
	const char *input, *db, *pattern, *format, *meta, *schema;
	char **folders;
	int nfolders;
	char **files; /* the arguments that are not options */
	int nfiles;
	const char *config_path;
	struct config *config; /* never NULL */
	int processes, busy_timeout_ms, shard_index, shard_count, pp_size, vpp_size;
	double timeout_s;
	bool force, salvage, quiet, json, full, no_classify;
};

static bool given(const struct cmdline *cl, int id)
{
	return cl->given & (1u << id);
}

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
static int apply_config(struct cmdline *o, const struct config *cfg)
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

/* A usage error: "ppbatch: error: ...", then the synopsis when asked;
 * returns the exit status. */
__attribute__((format(printf, 2, 3))) static int refuse(bool synopsis, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	error("%s", msg);
	if (synopsis)
		cli_usage(&cmd);
	return PP_EXIT_USAGE;
}

/* What the modes other than --inspect and --merge refuse, in this order: no
 * --input (when they read one), arguments (only --inspect and --merge take
 * files: a second folder after --input would otherwise be dropped without a
 * word), and the options only another of them takes (format: the --format
 * of the mode that runs). The other options of other modes are ignored. */
static int refuse_strays(const struct cmdline *cl, const char *format, bool needs_input)
{
	if (needs_input && !cl->input)
		return refuse(true, "--input is required");
	if (cl->nfiles)
		return refuse(true,
			      "unexpected argument '%s' (--input takes one folder; trace "
			      "files go with --inspect, shard databases with --merge)",
			      cl->files[0]);
	if ((cl->meta || cl->schema) && strcmp(format, "optrace"))
		return refuse(false, "--meta and --schema go with --format optrace");
	if ((cl->pp_size || cl->vpp_size != 1) && strcmp(format, "pp-timer"))
		return refuse(false, "--pp-size and --vpp-size go with --format pp-timer");
	return 0;
}

static int run_analyse(const struct cmdline *cl)
{
	int rc = refuse_strays(cl, "kineto", true);
	if (rc)
		return rc;
	struct batch_opts o = {
		.input = cl->input,
		.folders = cl->folders,
		.nfolders = cl->nfolders,
		.pattern = cl->pattern,
		.db = cl->db,
		.config_path = cl->config_path,
		.config = cl->config,
		.processes = cl->processes,
		.busy_timeout_ms = cl->busy_timeout_ms,
		.force = cl->force,
		.salvage = cl->salvage,
		.shard_index = cl->shard_index,
		.shard_count = cl->shard_count,
		.timeout_s = cl->timeout_s,
		.quiet = cl->quiet,
	};
	return batch_run(&o);
}

static int run_inspect(const struct cmdline *cl)
{
	if (!cl->nfiles)
		return refuse(true, "--inspect needs at least one trace file");
	if (given(cl, O_MERGE))
		return refuse(true, "--inspect and --merge exclude each other");
	if (cl->full && cl->no_classify)
		return refuse(false, "--full and --no-classify exclude each other");
	struct inspect_opts o = { .config = cl->config,
				  .salvage = cl->salvage,
				  .json = cl->json,
				  .full = cl->full,
				  .no_classify = cl->no_classify,
				  .files = cl->files,
				  .nfiles = cl->nfiles };
	return inspect_run(&o);
}

static int run_merge(const struct cmdline *cl)
{
	if (cl->input)
		return refuse(true, "--merge takes the shard databases as arguments, not --input");
	if (!cl->db || !cl->nfiles)
		return refuse(false, "--merge needs --db <out.db> and at least one shard database");
	struct merge_opts o = {
		.db = cl->db, .files = cl->files, .nfiles = cl->nfiles, .quiet = cl->quiet
	};
	return merge_run(&o);
}

static int run_pptimer(const struct cmdline *cl)
{
	int rc = refuse_strays(cl, "pp-timer", true);
	if (rc)
		return rc;
	if (cl->pp_size < 1)
		return refuse(false, "--format pp-timer needs --pp-size");
	struct pptimer_opts o = { .input = cl->input,
				  .folders = cl->folders,
				  .nfolders = cl->nfolders,
				  .db = cl->db,
				  .pp_size = cl->pp_size,
				  .vpp_size = cl->vpp_size,
				  .quiet = cl->quiet };
	return pptimer_run(&o);
}

static int run_optrace(const struct cmdline *cl)
{
	int rc = refuse_strays(cl, "optrace", true);
	if (rc)
		return rc;
	struct opimport_opts o = { .input = cl->input,
				   .db = cl->db,
				   .meta = cl->meta,
				   .schema = cl->schema,
				   .quiet = cl->quiet };
	return opimport_run(&o);
}

static int run_worker(const struct cmdline *cl)
{
	int rc = refuse_strays(cl, "kineto", false);
	if (rc)
		return rc;
	if (!cl->db)
		return refuse(false, "--worker needs --db");
	struct worker_opts o = { .db = cl->db, .config = cl->config, .salvage = cl->salvage };
	return worker_serve(&o);
}

/* The modes. The first whose option was given runs; without one, the one
 * --format names (kineto by default). A new mode: its options struct and
 * entry (batch.h), a run_ function above, a row here, a synopsis line. */
static const struct mode {
	int flag;           /* O_x that picks it, or 0 */
	const char *format; /* the --format value that picks it, or NULL */
	int (*run)(const struct cmdline *cl);
} modes[] = {
	{ O_INSPECT, NULL, run_inspect }, { O_MERGE, NULL, run_merge },
	{ O_WORKER, NULL, run_worker },   { 0, "kineto", run_analyse },
	{ 0, "pp-timer", run_pptimer },   { 0, "optrace", run_optrace },
};

/* The mode --format name picks, or NULL. */
static const struct mode *find_format(const char *name)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (modes[i].format && !strcmp(modes[i].format, name))
			return &modes[i];
	return NULL;
}

/* The mode of the command line: never NULL (parse_args() checks --format). */
static const struct mode *find_mode(const struct cmdline *cl)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (modes[i].flag && given(cl, modes[i].flag))
			return &modes[i];
	return find_format(cl->format);
}

/* "invalid value 'x' for --format: expected kineto, pp-timer or optrace":
 * the values of modes[]. CLI_ERR. */
static int bad_format(const struct cli_state *st)
{
	struct strbuf why = STRBUF_INIT;
	const char *last = NULL;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!modes[i].format)
			continue;
		if (last)
			strbuf_addf(&why, "%s%s", why.len ? ", " : "expected ", last);
		last = modes[i].format;
	}
	strbuf_addf(&why, " or %s", last);
	int rc = cli_bad_value(&cmd, st, why.buf);
	strbuf_release(&why);
	return rc;
}

static int parse_args(struct cmdline *o, struct cli_state *st)
{
	double d;
	int id, rc = 0;
	while (!rc && (id = cli_next(&cmd, st)) > 0) {
		o->given |= 1u << id;
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
		case O_JSON: o->json = true; break;
		case O_NO_CLASSIFY: o->no_classify = true; break;
		case O_FULL: o->full = true; break;
		case O_FORMAT:
			if (!find_format(st->arg))
				return bad_format(st);
			o->format = st->arg;
			break;
		case O_PP_SIZE: rc = cli_int_arg(&cmd, st, 1, 100000, &o->pp_size); break;
		case O_VPP_SIZE: rc = cli_int_arg(&cmd, st, 1, 100000, &o->vpp_size); break;
		case O_META: o->meta = st->arg; break;
		case O_SCHEMA: o->schema = st->arg; break;
		}
	}
	return rc ? rc : id;
}

int main(int argc, char **argv)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	struct cmdline cl = { .shard_count = 1,
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
	rc = cli_find_config(&cmd, argc, argv, &cl.config_path);
	if (rc == CLI_HELP || rc == CLI_ERR)
		return rc == CLI_HELP ? PP_EXIT_OK : PP_EXIT_USAGE;
	cl.config = cl.config_path ? config_load(cl.config_path, err, sizeof(err)) : config_new();
	if (!cl.config) {
		error("%s", err);
		return PP_EXIT_USAGE;
	}
	if (cl.config_path && apply_config(&cl, cl.config)) {
		config_free(cl.config);
		return PP_EXIT_USAGE;
	}
	cli_init(&st, argc, argv);
	rc = parse_args(&cl, &st);
	cl.files = st.pos;
	cl.nfiles = st.npos;
	if (!given(&cl, O_WORKER)) /* once, not again in every worker */
		config_check_known(cl.config, "batch", batch_keys);
	rc = rc == CLI_ERR ? PP_EXIT_USAGE : find_mode(&cl)->run(&cl);
	config_free(cl.config);
	cli_release(&st);
	return rc;
}
