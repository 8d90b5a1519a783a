/* ppbatch — analyse Kineto traces of a Megatron-LM job into one SQLite
 * database; also --inspect, --merge, --format pp-timer, --format primus
 * and --format optrace. Thin: the command line is read once (defaults, the [batch]
 * section of the config file, then the flags) into the options struct of
 * every mode that takes each option (struct cmdline); the mode it names
 * (modes[]) checks its arguments and calls its entry of batch.h. */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch/batch.h"
#include "util/cli.h"
#include "util/config.h"
#include "util/hugepage.h"
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
	O_LAYERS,
	O_WORKER_THREADS,
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
	{ "processes", 'j', "<n>", "worker processes (default: the cores it may run on)",
	  O_PROCESSES, 0 },
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
	  "rank metrics, user annotations, kernels no pattern took) as the workers do; "
	  "memory grows with the kernels",
	  O_FULL, 0 },
	{ "no-classify", 0, NULL, "with --inspect: only read (no thread roles or steps)",
	  O_NO_CLASSIFY, 0 },
	{ "merge", 0, NULL, "merge the shard databases given as arguments into --db", O_MERGE, 0 },
	{ "format", 0, "<fmt>", "input format: kineto (default), pp-timer, primus or optrace",
	  O_FORMAT, 0 },
	{ "pp-size", 0, "<n>", "pp-timer: pipeline-parallel size", O_PP_SIZE, 0 },
	{ "vpp-size", 0, "<n>", "pp-timer: virtual pipeline size (default 1)", O_VPP_SIZE, 0 },
	{ "layers", 0, "<n>",
	  "pp-timer, primus: the model's transformer layers (for the schedule advisor)", O_LAYERS,
	  0 },
	{ "meta", 0, "<yaml>", "optrace: the job's meta yaml (sizes; default: all 1)", O_META, 0 },
	{ "schema", 0, "<json>", "optrace: schema json (op type order; default alphabetical)",
	  O_SCHEMA, 0 },
	{ "worker-threads", 0, "<n>",
	  "threads per worker: 1, 2 to read (or inflate gzip) on a second one, or 0 (the "
	  "default): 2 when the cores are at least twice the workers",
	  O_WORKER_THREADS, 0 },
	{ "worker", 0, NULL, "internal: run as a pool worker", O_WORKER, 0 },
	{ NULL, 0, NULL, NULL, 0, 0 }
};

static const struct cli_cmd cmd = {
	"ppbatch",
	"ppbatch --input <dir> [--folders <glob>...] [--db <path>] [-j <n>] [--force]\n"
	"               [--salvage] [--shard <i>/<n>] [--timeout <s>] [--quiet] [--config <file>]\n"
	"               [--worker-threads <n>]\n"
	"   or: ppbatch --inspect [--json] [--salvage] [--full | --no-classify] <trace>...\n"
	"   or: ppbatch --merge --db <out.db> <shard.db>...\n"
	"   or: ppbatch --format pp-timer --input <dir> --pp-size <p> [--vpp-size <v>] [--layers <n>]\n"
	"               [--db <path>]\n"
	"   or: ppbatch --format primus --input <dump dir> [--layers <n>] [--db <path>]\n"
	"   or: ppbatch --format optrace --input <trace.csv[.gz]> [--meta <yaml>] [--schema <json>]\n"
	"               [--db <path>]",
	"Classify the GPU work of every rank's PyTorch-profiler trace into one SQLite database.",
	options,
	"  ppbatch --input /data/run42 --folders 'iteration_1*' -j 8\n"
	"  ppbatch --inspect --json rank_0000_iter_15.pt.trace.json.gz\n"
	"  ppbatch --format optrace --input trace-AR.csv.gz --meta meta-AR.yaml --db ar.db\n"
	"  ppbatch --format primus --input pp_data --layers 64 --db run.db",
	NULL /* the shared exit statuses */
};

/* The command line: each option is stored in the options struct of every
 * mode that takes it (parse_args() says which), and checked whatever the
 * mode (-j x is an error with --inspect too). */
struct cmdline {
	unsigned given;     /* bit O_x: the option was on the command line */
	const char *format; /* --format: the mode, unless a mode's flag is given */
	char **files;       /* the arguments that are not options */
	int nfiles;
	struct config *config; /* never NULL */
	struct batch_opts analyse;
	struct inspect_opts inspect;
	struct merge_opts merge;
	struct pptimer_opts pptimer;
	struct primus_opts primus;
	struct opimport_opts optrace;
	struct worker_opts worker;
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

static const char *const batch_keys[] = { "processes",       "pattern",        "timeout", "salvage",
					  "busy_timeout_ms", "worker_threads", NULL };

/* [batch] keys override the defaults; the command line overrides them. */
static int apply_config(struct cmdline *cl, const struct config *cfg)
{
	struct batch_opts *o = &cl->analyse;
	long procs = o->processes, busy = o->busy_timeout_ms, threads = o->worker_threads;
	struct strbuf err = STRBUF_INIT; /* names the file: config_path() */
	if (config_get_long_in(cfg, "batch.processes", 1, 4096, &procs, &err) < 0 ||
	    config_get_long_in(cfg, "batch.busy_timeout_ms", 1, INT_MAX, &busy, &err) < 0 ||
	    config_get_double_in(cfg, "batch.timeout", 0, 1e9, &o->timeout_s, &err) < 0 ||
	    config_get_bool(cfg, "batch.salvage", &o->salvage, &err) < 0 ||
	    config_get_long_in(cfg, "batch.worker_threads", 0, 2, &threads, &err) < 0) {
		error_lines(err.buf);
		strbuf_release(&err);
		return -1;
	}
	o->processes = (int)procs;
	o->worker_threads = cl->worker.threads = (int)threads;
	o->busy_timeout_ms = (int)busy;
	if (config_get(cfg, "batch.pattern"))
		o->pattern = config_get(cfg, "batch.pattern");
	cl->inspect.salvage = cl->worker.salvage = o->salvage;
	return 0;
}

/* A usage error: "ppbatch: error: MSG" (NULL: already said), then the
 * synopsis when asked; returns the exit status. */
static int refuse(bool synopsis, const char *msg)
{
	if (msg)
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
	if (needs_input && !given(cl, O_INPUT))
		return refuse(true, "--input is required");
	if (cl->nfiles) {
		error("unexpected argument '%s' (--input takes one folder; trace files go with "
		      "--inspect, shard databases with --merge)",
		      cl->files[0]);
		return refuse(true, NULL);
	}
	if ((cl->optrace.meta || cl->optrace.schema) && strcmp(format, "optrace"))
		return refuse(false, "--meta and --schema go with --format optrace");
	if ((cl->pptimer.pp_size || cl->pptimer.vpp_size != 1) && strcmp(format, "pp-timer"))
		return refuse(false, "--pp-size and --vpp-size go with --format pp-timer");
	if (given(cl, O_LAYERS) && strcmp(format, "pp-timer") && strcmp(format, "primus"))
		return refuse(false, "--layers goes with --format pp-timer or primus");
	return 0;
}

static int run_analyse(const struct cmdline *cl, struct strbuf *err)
{
	int rc = refuse_strays(cl, "kineto", true);
	return rc ? rc : batch_run(&cl->analyse, err);
}

static int run_inspect(const struct cmdline *cl, struct strbuf *err)
{
	const struct inspect_opts *o = &cl->inspect;
	if (!o->nfiles)
		return refuse(true, "--inspect needs at least one trace file");
	if (given(cl, O_MERGE))
		return refuse(true, "--inspect and --merge exclude each other");
	if (o->full && o->no_classify)
		return refuse(false, "--full and --no-classify exclude each other");
	return inspect_run(o, err);
}

static int run_merge(const struct cmdline *cl, struct strbuf *err)
{
	if (given(cl, O_INPUT))
		return refuse(true, "--merge takes the shard databases as arguments, not --input");
	if (!cl->merge.db || !cl->merge.nfiles)
		return refuse(false, "--merge needs --db <out.db> and at least one shard database");
	return merge_run(&cl->merge, err);
}

static int run_pptimer(const struct cmdline *cl, struct strbuf *err)
{
	int rc = refuse_strays(cl, "pp-timer", true);
	if (rc)
		return rc;
	if (cl->pptimer.pp_size < 1)
		return refuse(false, "--format pp-timer needs --pp-size");
	return pptimer_run(&cl->pptimer, err);
}

static int run_primus(const struct cmdline *cl, struct strbuf *err)
{
	int rc = refuse_strays(cl, "primus", true);
	return rc ? rc : primus_run(&cl->primus, err);
}

static int run_optrace(const struct cmdline *cl, struct strbuf *err)
{
	int rc = refuse_strays(cl, "optrace", true);
	return rc ? rc : opimport_run(&cl->optrace, err);
}

static int run_worker(const struct cmdline *cl, struct strbuf *err)
{
	int rc = refuse_strays(cl, "kineto", false);
	if (rc)
		return rc;
	if (!cl->worker.db)
		return refuse(false, "--worker needs --db");
	return worker_serve(&cl->worker, err);
}

/* The modes. The first whose option was given runs; without one, the one
 * --format names (kineto by default). A new mode: its options struct and
 * entry (batch.h), its struct in struct cmdline and in the cases of
 * parse_args() for the options it takes, a run_ function above, a row here
 * and a synopsis line. */
static const struct mode {
	int flag;           /* O_x that picks it, or 0 */
	const char *format; /* the --format value that picks it, or NULL */
	int (*run)(const struct cmdline *cl, struct strbuf *err);
} modes[] = {
	{ O_INSPECT, NULL, run_inspect }, /* describe trace files */
	{ O_MERGE, NULL, run_merge },     /* shard databases into one */
	{ O_WORKER, NULL, run_worker },   /* internal: a worker of the pool */
	{ 0, "kineto", run_analyse },     /* the default: a tree of Kineto traces */
	{ 0, "pp-timer", run_pptimer },   /* Megatron PP-timer dumps */
	{ 0, "primus", run_primus },      /* Primus pp_data dumps */
	{ 0, "optrace", run_optrace },    /* an op trace of the what-if analysis */
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

/* Each option into the options struct of every mode that takes it. */
static int parse_args(struct cmdline *cl, struct cli_state *st)
{
	struct batch_opts *a = &cl->analyse;
	double d;
	int id, rc = 0;
	while (!rc && (id = cli_next(&cmd, st)) > 0) {
		cl->given |= 1u << id;
		switch (id) {
		case O_INPUT:
			a->input = cl->pptimer.input = cl->primus.input = cl->optrace.input =
				st->arg;
			break;
		case O_FOLDERS:
			a->folders = cl->pptimer.folders = st->args;
			a->nfolders = cl->pptimer.nfolders = st->nargs;
			break;
		case O_PATTERN: a->pattern = st->arg; break;
		case O_DB:
			a->db = cl->merge.db = cl->pptimer.db = cl->primus.db = cl->optrace.db =
				cl->worker.db = st->arg;
			break;
		case O_CONFIG: break; /* applied first: cli_find_config() */
		case O_PROCESSES: rc = cli_int_arg(&cmd, st, 1, 4096, &a->processes); break;
		case O_FORCE: a->force = true; break;
		case O_SALVAGE: a->salvage = cl->inspect.salvage = cl->worker.salvage = true; break;
		case O_SHARD:
			if (parse_shard(st->arg, &a->shard_index, &a->shard_count))
				return cli_bad_value(&cmd, st, "expected I/N with 0 <= I < N");
			break;
		case O_TIMEOUT:
			if (cli_parse_double(st->arg, &d) || d < 0)
				return cli_bad_value(&cmd, st, "expected seconds >= 0");
			a->timeout_s = d;
			break;
		case O_QUIET:
			a->quiet = cl->merge.quiet = cl->pptimer.quiet = cl->primus.quiet =
				cl->optrace.quiet = true;
			break;
		case O_JSON: cl->inspect.json = true; break;
		case O_NO_CLASSIFY: cl->inspect.no_classify = true; break;
		case O_FULL: cl->inspect.full = true; break;
		case O_FORMAT:
			if (!find_format(st->arg))
				return bad_format(st);
			cl->format = st->arg;
			break;
		case O_PP_SIZE: rc = cli_int_arg(&cmd, st, 1, 100000, &cl->pptimer.pp_size); break;
		case O_VPP_SIZE:
			rc = cli_int_arg(&cmd, st, 1, 100000, &cl->pptimer.vpp_size);
			break;
		case O_LAYERS:
			rc = cli_int_arg(&cmd, st, 1, 1000000, &cl->pptimer.layers);
			cl->primus.layers = cl->pptimer.layers;
			break;
		case O_META: cl->optrace.meta = st->arg; break;
		case O_SCHEMA: cl->optrace.schema = st->arg; break;
		case O_WORKER_THREADS:
			rc = cli_int_arg(&cmd, st, 0, 2, &a->worker_threads);
			cl->worker.threads = a->worker_threads;
			break;
		}
	}
	return rc ? rc : id;
}

int main(int argc, char **argv)
{
	struct cmdline cl = {
		.format = "kineto",
		.analyse = { .processes = pp_cores(), .busy_timeout_ms = 600000, .shard_count = 1 },
		.pptimer = { .vpp_size = 1 }
	};
	const char *config_path;
	struct cli_state st;
	struct strbuf err = STRBUF_INIT;
	int rc;

	pp_set_progname("ppbatch");
	/* A worker's heap holds its trace's kernels and SQLite's dirty pages,
	 * ~7 % of the trace, each page written once. */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--worker"))
			hugepage_heap_restart(argv);
	rc = cli_find_config(&cmd, argc, argv, &config_path);
	if (rc == CLI_HELP || rc == CLI_ERR)
		return rc == CLI_HELP ? PP_EXIT_OK : PP_EXIT_USAGE;
	cl.config = config_path ? config_load(config_path, &err) : config_new();
	if (!cl.config) {
		error_lines(err.buf);
		strbuf_release(&err);
		return PP_EXIT_USAGE;
	}
	cl.analyse.config_path = config_path;
	cl.analyse.config = cl.inspect.config = cl.worker.config = cl.config;
	if (config_path && apply_config(&cl, cl.config)) {
		config_free(cl.config);
		return PP_EXIT_USAGE;
	}
	cli_init(&st, argc, argv);
	rc = parse_args(&cl, &st);
	cl.files = cl.inspect.files = cl.merge.files = st.pos;
	cl.nfiles = cl.inspect.nfiles = cl.merge.nfiles = st.npos;
	if (!given(&cl, O_WORKER)) /* once, not again in every worker */
		config_check_known(cl.config, "batch", batch_keys);
	if (rc != CLI_ERR) {
		struct strbuf errs = STRBUF_INIT;
		rc = find_mode(&cl)->run(&cl, &errs);
		error_lines(errs.buf);
		strbuf_release(&errs);
	} else {
		rc = PP_EXIT_USAGE;
	}
	config_free(cl.config);
	cli_release(&st);
	return rc;
}
