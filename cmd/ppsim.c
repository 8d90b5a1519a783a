/* ppsim — simulate a pipeline-parallel schedule: per-device busy/idle/
 * bubble, makespan, JSON, Gantt chart. Thin: defaults, then the config file
 * (its [sim] section, or a JSON or YAML config), then the options, into
 * struct sim_input; then sim_run() and the sim_report_* outputs. */
#include <stdlib.h>
#include <string.h>

#include "agg/agg.h"
#include "report/report.h"
#include "sim/sim.h"
#include "sim/sim_input.h"
#include "sim/sim_report.h"
#include "util/cli.h"
#include "util/config.h"
#include "util/pp.h"
#include "util/strbuf.h"

enum {
	O_STRATEGY = 1,
	O_DEVICES,
	O_STAGES,
	O_MICRO,
	O_P2P,
	O_FWD,
	O_BWD,
	O_BWD_D,
	O_BWD_W,
	O_OVERLAP,
	O_GROUP,
	O_MODEL,
	O_WARMUP,
	O_CONFIG,
	O_OUTPUT,
	O_NOVIS,
	O_JSON,
	O_FROM_DB,
	O_ITERATIONS
};

static const struct cli_opt options[] = {
	{ "strategy", 0, "<name>",
	  "1f1b (default), interleave, zb1p, 1f1b_overlap, "
	  "1f1b_interleave_overlap, dualpipe, dualpipe_v",
	  O_STRATEGY, 0 },
	{ "devices", 'p', "<p>", "pipeline devices (default: from --stages)", O_DEVICES, 0 },
	{ "stages", 0, "<n>", "pipeline stages (default: from --devices)", O_STAGES, 0 },
	{ "num-stages", 's', "<n>", "same as --stages (pipeline.py's spelling)", O_STAGES, 0 },
	{ "microbatches", 'm', "<m>", "micro-batches per iteration", O_MICRO, 0 },
	{ "num-batches", 'b', "<m>", "same as --microbatches", O_MICRO, 0 },
	{ "p2p", 0, "<t>", "P2P latency between stages (default 0)", O_P2P, 0 },
	{ "p2p-time", 0, "<t>", "same as --p2p", O_P2P, 0 },
	{ "forward", 0, "<t>[,<t>...]", "forward time, one or one per stage (default 1)", O_FWD,
	  CLI_MULTI },
	{ "forward-times", 'f', "<t>...", "same as --forward", O_FWD, CLI_MULTI },
	{ "backward", 0, "<t>[,<t>...]", "whole backward time (default 2)", O_BWD, CLI_MULTI },
	{ "backward-times", 0, "<t>...", "same as --backward (also -bw)", O_BWD, CLI_MULTI },
	{ "backward-d", 0, "<t>[,<t>...]", "input-gradient backward (split schedules, default 1)",
	  O_BWD_D, CLI_MULTI },
	{ "backward-w", 0, "<t>[,<t>...]", "weight-gradient backward (split schedules, default 1)",
	  O_BWD_W, CLI_MULTI },
	{ "overlapped", 0, "<t>[,<t>...]", "overlapped forward+backward pair (default F + B)",
	  O_OVERLAP, CLI_MULTI },
	{ "group-size", 'g', "<g>", "interleave: micro-batches per group (default p)", O_GROUP, 0 },
	{ "model", 0, "<model>",
	  "megatron (default) or reference (bit-exact PP-Schedule-Visualization)", O_MODEL, 0 },
	{ "warmup", 0, "<rule>",
	  "interleave with m = p: core (Megatron core's clamped warm-up, default) or legacy "
	  "(Megatron-LM up to 2023: every forward first)",
	  O_WARMUP, 0 },
	{ "config", 'c', "<file>",
	  "INI file ([sim] section; [advise] with --from-db), JSON or YAML (.yaml) config",
	  O_CONFIG, 0 },
	{ "output", 'o', "<prefix>", "chart files <prefix>.gp/.png/.svg (default ppsim-<strategy>)",
	  O_OUTPUT, 0 },
	{ "no-visualization", 0, NULL, "do not write the chart", O_NOVIS, 0 },
	{ "json", 0, NULL, "print one JSON object instead of the table", O_JSON, 0 },
	{ "from-db", 0, "<db>",
	  "the schedule advisor alone on a pptrace database (docs/advisor.md): print its table",
	  O_FROM_DB, 0 },
	{ "iterations", 0, "<n|folder>...",
	  "with --from-db: the iterations measured (default: all)", O_ITERATIONS, CLI_MULTI },
	{ NULL, 0, NULL, NULL, 0, 0 }
};

static const struct cli_cmd cmd = {
	"ppsim",
	"ppsim [--strategy <name>] --devices <p> [--stages <n>] --microbatches <m>\n"
	"             [--p2p <t>] [--forward <t>] [--backward <t>] [--backward-d <t>]\n"
	"             [--backward-w <t>] [--overlapped <t>] [--group-size <g>]\n"
	"             [--model megatron|reference] [--warmup core|legacy] [--config <file>]\n"
	"             [--output <prefix>] [--no-visualization] [--json]\n"
	"   or: ppsim --from-db <db> [--iterations <n>...] [--config <file>]",
	"Simulate a pipeline-parallel schedule and report makespan and bubbles per device.",
	options,
	"  ppsim --strategy interleave --devices 4 --stages 8 --microbatches 8 -o il\n"
	"  ppsim --num-stages 4 --num-batches 8 --forward-times 1 1 1 1.5 --no-visualization\n"
	"  ppsim --from-db run.db --iterations 10 11 12",
	"  0  everything worked (without gnuplot the chart is its script alone)\n"
	"  2  usage error, invalid parameters, or a schedule that deadlocks\n"
	"  3  the chart could not be written or rendered; with --from-db: the database\n"
	"     cannot be read, or holds no pipeline the advisor can answer for\n"
};

/* id, or CLI_ERR after saying so when the command line ended with an
 * operand: ppsim takes none. */
static int no_operands(const struct cli_state *st, int id)
{
	if (id == CLI_END && st->npos) {
		error("unexpected argument '%s'", st->pos[0]);
		cli_usage(&cmd);
		return CLI_ERR;
	}
	return id;
}

/* Canonical sim_input key of a setting option, or NULL. */
static const char *key_of(int id)
{
	static const char *const keys[] = {
		[O_STRATEGY] = "strategy",  [O_DEVICES] = "devices",  [O_STAGES] = "stages",
		[O_MICRO] = "microbatches", [O_P2P] = "p2p",          [O_FWD] = "forward",
		[O_BWD] = "backward",       [O_BWD_D] = "backward_d", [O_BWD_W] = "backward_w",
		[O_OVERLAP] = "overlapped", [O_GROUP] = "group_size", [O_MODEL] = "model",
		[O_WARMUP] = "warmup",      [O_OUTPUT] = "output",
	};
	return id > 0 && id < (int)(sizeof(keys) / sizeof(keys[0])) ? keys[id] : NULL;
}

/* Loads the config file (the [sim] section of an INI file, or a JSON or
 * YAML config) into in. */
static int load_config(struct sim_input *in, const char *path)
{
	struct strbuf err = STRBUF_INIT;
	struct config *cfg = NULL;
	size_t n = strlen(path);
	bool yaml = (n > 5 && !strcmp(path + n - 5, ".yaml")) ||
		    (n > 4 && !strcmp(path + n - 4, ".yml"));
	int rc;
	if (sim_input_is_json(path))
		rc = sim_input_load_json(in, path, &err);
	else if (yaml)
		rc = sim_input_load_yaml(in, path, &err);
	else if (!(cfg = config_load(path, &err)))
		rc = PP_EINVAL;
	else
		rc = sim_input_load_ini(in, cfg, &err);
	config_free(cfg);
	if (rc)
		error_lines(err.buf);
	strbuf_release(&err);
	return rc ? -1 : 0;
}

/* Applies the options over what the config file set (the command line
 * wins). A list option's arguments are joined with commas. */
static int parse_args(struct cli_state *st, struct sim_input *in)
{
	int id;
	while ((id = cli_next(&cmd, st)) > 0) {
		if (id == O_CONFIG)
			continue; /* loaded first: cli_find_config() */
		if (id == O_NOVIS) {
			in->no_visualization = true;
			continue;
		}
		if (id == O_JSON) {
			in->json = true;
			continue;
		}
		struct strbuf sb = STRBUF_INIT;
		if (!st->args) /* --name=value */
			strbuf_addstr(&sb, st->arg);
		for (int i = 0; st->args && i < st->nargs; i++)
			strbuf_addf(&sb, "%s%s", i ? "," : "", st->args[i]);
		struct strbuf err = STRBUF_INIT;
		int rc = sim_input_set(in, key_of(id), sb.buf, &err);
		strbuf_release(&sb);
		if (rc) {
			error_lines(err.buf);
			strbuf_release(&err);
			return CLI_ERR;
		}
	}
	return no_operands(st, id);
}

/* --from-db: the schedule advisor alone (ppagg's analysis of the database
 * with nothing stored, agg/agg.h's AGG_ADVISE_ONLY), its table on stdout. The
 * config file's [advise] section sets the models. */
static int from_db(const char *db, char **iters, int niters, const char *config)
{
	struct strbuf err = STRBUF_INIT;
	struct agg_job job;
	struct agg_opts o = { .db = db,
			      .iterations = iters,
			      .niterations = niters,
			      .threshold = 0.10,
			      .vpp = 1,
			      .quiet = true,
			      .rank_charts = AGG_RC_NONE,
			      .mode = AGG_ADVISE_ONLY };
	o.config = config ? config_load(config, &err) : config_new();
	if (!o.config) {
		error_lines(err.buf);
		strbuf_release(&err);
		return PP_EXIT_USAGE;
	}
	struct advise_settings adv;
	if (advise_settings_load(&adv, o.config, &err)) {
		error_lines(err.buf);
		strbuf_release(&err);
		config_free(o.config);
		return PP_EXIT_USAGE;
	}
	o.advise = &adv;
	int rc = agg_analyse(&o, &job, &err);
	if (rc == PP_EINVAL)
		rc = PP_EXIT_USAGE;
	else if (rc)
		rc = PP_EXIT_FATAL;
	else
		rc = report_advice_table(stdout, &job, &err) ? PP_EXIT_FATAL : PP_EXIT_OK;
	error_lines(err.buf);
	strbuf_release(&err);
	agg_job_release(&job);
	config_free(o.config);
	return rc;
}

/* The --from-db command line: only --iterations and --config go with it. */
static int from_db_args(struct cli_state *st, const char **db, char ***iters, int *niters)
{
	int id;
	while ((id = cli_next(&cmd, st)) > 0) {
		if (id == O_FROM_DB)
			*db = st->arg;
		else if (id == O_ITERATIONS) {
			*iters = st->args;
			*niters = st->nargs;
		} else if (id != O_CONFIG) {
			error("--from-db takes only --iterations and --config (the schedule comes "
			      "from the database)");
			return CLI_ERR;
		}
	}
	return no_operands(st, id);
}

/* Whether the command line names --from-db (before any parsing). */
static bool wants_db(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--from-db") || !strncmp(argv[i], "--from-db=", 10))
			return true;
	return false;
}

/* pipeline.py spells the backward times "-bw": make it a long option. */
static void rewrite_seed_flags(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-bw"))
			argv[i] = "--backward-times";
}

/* The chart prefix: --output without a .png/.svg/.gp suffix (pipeline.py
 * names a .png), else ppsim-<strategy>. */
static char *chart_prefix(const struct sim_input *in)
{
	struct strbuf sb = STRBUF_INIT;
	static const char *const sfx[] = { ".png", ".svg", ".gp", ".jpg", ".pdf" };
	if (!in->output) {
		strbuf_addf(&sb, "ppsim-%s", sim_strategy_name(in->cfg.strategy));
		return strbuf_detach(&sb, NULL);
	}
	strbuf_addstr(&sb, in->output);
	for (size_t k = 0; k < sizeof(sfx) / sizeof(sfx[0]); k++) {
		size_t n = strlen(sfx[k]);
		if (sb.len > n && !strcmp(sb.buf + sb.len - n, sfx[k])) {
			sb.len -= n;
			sb.buf[sb.len] = '\0';
			break;
		}
	}
	return strbuf_detach(&sb, NULL);
}

int main(int argc, char **argv)
{
	struct sim_input in;
	struct sim_result res = { 0 };
	struct cli_state st;
	const char *config = NULL;
	struct strbuf err = STRBUF_INIT;
	int rc;

	pp_set_progname("ppsim");
	rewrite_seed_flags(argc, argv);
	sim_input_init(&in);
	cli_init(&st, argc, argv);
	rc = cli_find_config(&cmd, argc, argv, &config);
	if (rc == CLI_END && wants_db(argc, argv)) {
		const char *db = NULL;
		char **iters = NULL;
		int niters = 0;
		rc = from_db_args(&st, &db, &iters, &niters);
		rc = rc == CLI_HELP  ? PP_EXIT_OK
		     : rc == CLI_ERR ? PP_EXIT_USAGE
				     : from_db(db, iters, niters, config);
		goto out;
	}
	if (rc == CLI_END && config && load_config(&in, config))
		rc = CLI_ERR;
	if (rc == CLI_END)
		rc = parse_args(&st, &in);
	if (rc == CLI_HELP || rc == CLI_ERR) {
		rc = rc == CLI_HELP ? PP_EXIT_OK : PP_EXIT_USAGE;
		goto out;
	}
	if (sim_input_finish(&in, &err)) {
		error_lines(err.buf);
		rc = PP_EXIT_USAGE;
		goto out;
	}
	if (in.cfg.strategy == SIM_1F1B_INTERLEAVE_OVERLAP && in.cfg.group_size > 0 &&
	    in.cfg.group_size != in.cfg.devices)
		warn("--group-size is ignored by 1f1b_interleave_overlap (fixed to the devices)");
	rc = sim_run(&in.cfg, &res, &err);
	if (rc) {
		error_lines(err.buf);
		rc = PP_EXIT_USAGE;
		goto out;
	}
	if (in.json)
		sim_report_json(stdout, &in.cfg, &res);
	else
		sim_report_table(stdout, &in.cfg, &res);
	if (!in.no_visualization) {
		char *prefix = chart_prefix(&in);
		int crc = sim_report_chart(&in.cfg, &res, prefix, true, &err);
		if (crc == PP_ENOTFOUND)
			warn("%s", err.buf);
		else if (crc)
			error_lines(err.buf);
		else if (!in.json)
			printf("chart: %s.gp, %s.png, %s.svg\n", prefix, prefix, prefix);
		free(prefix);
		rc = crc && crc != PP_ENOTFOUND ? PP_EXIT_FATAL : PP_EXIT_OK;
	}
out:
	sim_result_release(&res);
	sim_input_release(&in);
	cli_release(&st);
	strbuf_release(&err);
	return rc;
}
