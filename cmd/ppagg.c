/* ppagg — pipeline-group and model-replica timelines, bubbles, stragglers,
 * charts and an HTML report from a ppbatch database. Thin: parses options
 * (and the [agg] section of the config file) into what to analyse (struct
 * agg_opts) and how to write it (struct report_opts), then agg_analyse()
 * and report_write(). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agg/agg.h"
#include "report/report.h"
#include "util/cli.h"
#include "util/config.h"
#include "util/hugepage.h"
#include "util/pp.h"
#include "util/strbuf.h"

enum {
	O_BASE = 1,
	O_ITER,
	O_INPUT,
	O_DB,
	O_OUT,
	O_ALIGN,
	O_PROCESSES,
	O_FORMAT,
	O_NO_RENDER,
	O_CHARTS,
	O_RANK_CHARTS,
	O_TP,
	O_PP,
	O_DP,
	O_CP,
	O_EP,
	O_CONFIG,
	O_QUIET,
	O_PERFETTO,
	O_COMPARE,
	O_COMPARE_ITER
};

static const struct cli_opt options[] = {
	{ "base-folder", 'b', "<dir>", "folder holding iteration_N/ and pptrace.db", O_BASE, 0 },
	{ "iterations", 0, "<n|folder>", "iterations to aggregate (default: all)", O_ITER,
	  CLI_MULTI },
	{ "input", 'i', "<dir>", "one iteration folder, e.g. DIR/iteration_15", O_INPUT, 0 },
	{ "db", 0, "<path>", "database (default: <base>/pptrace.db); alone, its folder is <base>",
	  O_DB, 0 },
	{ "out", 'o', "<dir>", "output folder (default: <base>/pptrace)", O_OUT, 0 },
	{ "time-alignment", 0, "<mode>", "global (default) or individual", O_ALIGN, 0 },
	{ "processes", 'j', "<n>", "parallel gnuplot processes (default: cores)", O_PROCESSES, 0 },
	{ "format", 0, "<list>", "chart formats: png,svg (default both)", O_FORMAT, 0 },
	{ "no-render", 0, NULL, "write .gp scripts, CSVs and HTML but do not run gnuplot",
	  O_NO_RENDER, 0 },
	{ "charts", 0, "<what>",
	  "more than the report shows: rank=<ranks>, group=<groups>, replica=<replicas>, "
	  "iteration=<iterations> (lists such as 0-7,77; repeatable), or all (every chart's "
	  "script and CSV)",
	  O_CHARTS, 0 },
	{ "rank-charts", 0, "<which>",
	  "older spelling: the report's rank charts, auto (default), flagged or none; all is "
	  "--charts all with everything rendered, a list is --charts rank=<list>",
	  O_RANK_CHARTS, 0 },
	{ "tp", 0, "<n>", "tensor-parallel size (when there is no topology file)", O_TP, 0 },
	{ "pp", 0, "<n>", "pipeline-parallel size", O_PP, 0 },
	{ "dp", 0, "<n>", "data-parallel size (default: from the highest rank)", O_DP, 0 },
	{ "cp", 0, "<n>", "context-parallel size", O_CP, 0 },
	{ "ep", 0, "<n>", "expert-parallel size", O_EP, 0 },
	{ "perfetto-ranks", 0, "<ranks>",
	  "one Perfetto timeline of these ranks (why/ranks.json): ranks and ranges such as 8-15, "
	  "pp_group=<g>, replica=<m>",
	  O_PERFETTO, 0 },
	{ "compare", 0, "<db>",
	  "compare with a baseline run's database (docs/compare.md); exit 4 on a regression",
	  O_COMPARE, 0 },
	{ "compare-iterations", 0, "<n>",
	  "the baseline's iterations, numbers or folders (default: those it aggregated)",
	  O_COMPARE_ITER, CLI_MULTI },
	{ "config", 'c', "<file>",
	  "INI configuration file ([agg], [compare] and [advise] sections)", O_CONFIG, 0 },
	{ "quiet", 'q', NULL, "only warnings and errors", O_QUIET, 0 },
	{ NULL, 0, NULL, NULL, 0, 0 }
};

static const struct cli_cmd cmd = {
	"ppagg",
	"ppagg --base-folder <dir> [--iterations <n>...] [--db <path>] [--out <dir>]\n"
	"             [--time-alignment global|individual] [-j <n>] [--format png,svg] [--no-render]\n"
	"             [--charts rank=<ranks>|group=<groups>|replica=<m>|iteration=<n>|all]...\n"
	"             [--perfetto-ranks <ranks>]\n"
	"             [--tp <n> --pp <n> --dp <n> --cp <n> --ep <n>]\n"
	"             [--compare <db> [--compare-iterations <n>...]] [--config <file>] [--quiet]\n"
	"   or: ppagg --input <dir>/iteration_<n> [options]\n"
	"   or: ppagg --db <path> [--iterations <n>...] [--out <dir>] [options]",
	"Pipeline groups, bubbles, stragglers, timeline charts and an HTML report from a "
	"ppbatch database.",
	options,
	"  ppagg --base-folder /data/run42 --iterations 15 16 -j 8\n"
	"  ppagg --input /data/run42/iteration_15 --time-alignment individual --no-render\n"
	"  ppagg --base-folder /data/run42 --charts rank=5,17 --charts group=3\n"
	"  ppagg --base-folder /data/run42 --perfetto-ranks pp_group=3   # why/ranks.json\n"
	"  ppagg --db ar.db --out ar-report     # an imported op trace: the what-if analysis\n"
	"  ppagg --base-folder /data/run43 --compare /data/run42/pptrace.db",
	"  0  everything worked\n"
	"  1  some inputs failed (the others were processed), or --compare could not compare\n"
	"  2  usage error or invalid parameters\n"
	"  3  fatal error, nothing was done\n"
	"  4  --compare found a regression: the step time grew beyond its noise and\n"
	"     compare.regression_threshold (4 wins over 1)\n"
	"  130 interrupted (SIGINT/SIGTERM); running again resumes\n"
};

static const char *const known_keys[] = { "straggler_threshold",
					  "vpp",
					  "processes",
					  "format",
					  "time_alignment",
					  "rank_charts",
					  "charts",
					  "tp_collective_rows",
					  "perfetto_max_events",
					  "tp",
					  "pp",
					  "dp",
					  "cp",
					  "ep",
					  NULL };
static const char *const compare_keys[] = { "regression_threshold", "noise_floor", "min_share",
					    NULL };

/* Both halves of ppagg's options. */
struct opts {
	struct agg_opts agg;
	struct report_opts out;
	bool charts_given;             /* --charts on the command line */
	struct advise_settings advise; /* [advise]: agg.advise points here */
};

/* --format / agg.format: png, svg or both, separated by a comma, each
 * word exactly. 0 or PP_EINVAL. */
static int parse_format(const char *s, struct report_opts *o)
{
	o->png = o->svg = false;
	for (const char *p = s;; p++) {
		size_t n = strcspn(p, ",");
		if (n == 3 && !strncmp(p, "png", 3))
			o->png = true;
		else if (n == 3 && !strncmp(p, "svg", 3))
			o->svg = true;
		else
			return PP_EINVAL;
		p += n;
		if (!*p)
			return 0;
	}
}

/* The integer settings: one check each, the same for the flag and for the
 * config key ([agg] vpp has no flag), and where in struct opts each goes. */
static const struct int_setting {
	int id;          /* option id, 0 when there is no flag */
	const char *key; /* config key */
	long min, max;
	const char *why;
	size_t at; /* offsetof the int it sets in struct opts */
} int_settings[] = {
	{ O_PROCESSES, "agg.processes", 1, 4096, "expected a number from 1 to 4096",
	  offsetof(struct opts, out.processes) },
	{ O_TP, "agg.tp", 1, 1000000, "expected a positive number", offsetof(struct opts, agg.tp) },
	{ O_PP, "agg.pp", 1, 1000000, "expected a positive number", offsetof(struct opts, agg.pp) },
	{ O_DP, "agg.dp", 1, 1000000, "expected a positive number", offsetof(struct opts, agg.dp) },
	{ O_CP, "agg.cp", 1, 1000000, "expected a positive number", offsetof(struct opts, agg.cp) },
	{ O_EP, "agg.ep", 1, 1000000, "expected a positive number", offsetof(struct opts, agg.ep) },
	{ 0, "agg.vpp", 1, 1000000, "expected a positive number", offsetof(struct opts, agg.vpp) },
};

static int *int_target(struct opts *o, const struct int_setting *s)
{
	return (int *)(void *)((char *)o + s->at);
}

static const struct int_setting *int_setting_of(int id)
{
	for (size_t i = 0; i < sizeof(int_settings) / sizeof(int_settings[0]); i++)
		if (int_settings[i].id == id)
			return &int_settings[i];
	return NULL;
}

/* A list of numbers and ranges ("0-7,77") appended to *v (*n of them).
 * 0 or PP_EINVAL. */
static int parse_list(const char *s, int **v, int *n)
{
	for (const char *p = s;; p++) {
		size_t len = strcspn(p, ",");
		long lo, hi;
		if (cli_parse_range(p, len, 0, 1000000, &lo, &hi))
			return PP_EINVAL;
		*v = xrealloc(*v, ((size_t)*n + (size_t)(hi - lo) + 1) * sizeof(int));
		for (long r = lo; r <= hi; r++)
			(*v)[(*n)++] = (int)r;
		p += len;
		if (!*p)
			return 0;
	}
}

/* --rank-charts / agg.rank_charts, the older spelling: a mode, or a list of
 * ranks ("0-7,77"), which is --charts rank=<list>. 0 or PP_EINVAL. */
static int parse_rank_charts(const char *s, struct agg_opts *o)
{
	static const char *const modes[] = { "auto", "all", "flagged", "none" };
	int m = cli_parse_choice(s, modes, 4);
	if (m >= 0) {
		o->rank_charts = (enum agg_rank_charts)m;
		o->charts.all |= o->rank_charts == AGG_RC_ALL;
		return 0;
	}
	o->rank_charts = AGG_RC_AUTO;
	return parse_list(s, &o->charts.ranks, &o->charts.nranks);
}

/* One --charts value (or the words of agg.charts): all, or
 * <kind>=<list>. 0 or PP_EINVAL. */
static int parse_charts(const char *s, struct agg_charts *c)
{
	static const char *const kinds[] = { "rank=", "group=", "replica=", "iteration=" };
	int **lists[] = { &c->ranks, &c->groups, &c->replicas, &c->iterations };
	int *counts[] = { &c->nranks, &c->ngroups, &c->nreplicas, &c->niterations };
	if (!strcmp(s, "all")) {
		c->all = true;
		return 0;
	}
	for (int k = 0; k < 4; k++)
		if (!strncmp(s, kinds[k], strlen(kinds[k])))
			return parse_list(s + strlen(kinds[k]), lists[k], counts[k]);
	return PP_EINVAL;
}

static void charts_release(struct agg_charts *c)
{
	PP_FREE_ALL(c->ranks, c->groups, c->replicas, c->iterations);
}

#define CHARTS_EXPECTED                                                                   \
	"expected all, rank=<list>, group=<list>, replica=<list> or iteration=<list>, a " \
	"list such as 0-7,77"

static int parse_args(struct opts *o, struct cli_state *st, const char **format, const char **align,
		      const char **config)
{
	struct agg_opts *a = &o->agg;
	const struct int_setting *is;
	long v;
	int id;
	while ((id = cli_next(&cmd, st)) > 0) {
		switch (id) {
		case O_BASE: a->base = st->arg; break;
		case O_ITER:
			a->iterations = st->args;
			a->niterations = st->nargs;
			break;
		case O_INPUT: a->input = st->arg; break;
		case O_DB: a->db = st->arg; break;
		case O_OUT: o->out.out = st->arg; break;
		case O_ALIGN: *align = st->arg; break;
		case O_FORMAT: *format = st->arg; break;
		case O_NO_RENDER: o->out.render = false; break;
		case O_CHARTS:
			o->charts_given = true;
			if (parse_charts(st->arg, &a->charts))
				return cli_bad_value(&cmd, st, CHARTS_EXPECTED);
			break;
		case O_RANK_CHARTS:
			a->rank_charts_given = true;
			if (parse_rank_charts(st->arg, a))
				return cli_bad_value(&cmd, st,
						     "expected auto, all, flagged, none or "
						     "a rank list such as 0-7,77");
			break;
		case O_PERFETTO: {
			struct strbuf err = STRBUF_INIT;
			bool bad = report_perfetto_ranks(st->arg, NULL, 0, NULL, &err) != 0;
			if (!bad)
				o->out.perfetto_ranks = st->arg;
			else
				cli_bad_value(&cmd, st, err.buf);
			strbuf_release(&err);
			if (bad)
				return CLI_ERR;
			break;
		}
		case O_CONFIG: *config = st->arg; break;
		case O_COMPARE: a->compare.baseline = st->arg; break;
		case O_COMPARE_ITER:
			a->compare.iterations = st->args;
			a->compare.niterations = st->nargs;
			break;
		case O_QUIET: a->quiet = o->out.quiet = true; break;
		case O_PROCESSES:
		case O_TP:
		case O_PP:
		case O_DP:
		case O_CP:
		case O_EP:
			is = int_setting_of(id);
			if (cli_parse_long(st->arg, is->min, is->max, &v))
				return cli_bad_value(&cmd, st, is->why);
			*int_target(o, is) = (int)v;
			break;
		}
	}
	return id;
}

/* Config values fill what the command line left unset, checked as the
 * flags are. Returns 0 or -1 after reporting the key and its value. */
static int apply_config(struct opts *o, const char **format, const char **align)
{
	struct agg_opts *a = &o->agg;
	const char *path = config_path(a->config);
	struct strbuf err = STRBUF_INIT; /* names the file: config_path() */
	config_check_known(a->config, "agg", known_keys);
	for (size_t i = 0; i < sizeof(int_settings) / sizeof(int_settings[0]); i++) {
		const struct int_setting *is = &int_settings[i];
		const char *s = config_get(a->config, is->key);
		long v;
		int *to = int_target(o, is);
		if (!s)
			continue;
		if (cli_parse_long(s, is->min, is->max, &v))
			return error("%s: %s = '%s': %s", path, is->key, s, is->why);
		if (!is->id || !*to) /* no flag, or the flag was not given */
			*to = (int)v;
	}
	int rc = config_get_double(a->config, "agg.straggler_threshold", &a->threshold, &err);
	if (rc < 0)
		goto bad;
	if (a->threshold < 0)
		return error("%s: agg.straggler_threshold = %g: expected a number >= 0", path,
			     a->threshold);
	static const struct {
		const char *key;
		double min, max;
	} fractions[] = {
		{ "compare.regression_threshold", 0, 100 },
		{ "compare.noise_floor", 0, 100 },
		{ "compare.min_share", 0, 1 },
	};
	double *to[] = { &a->compare.threshold, &a->compare.noise_floor, &a->compare.min_share };
	config_check_known(a->config, "compare", compare_keys);
	for (size_t i = 0; i < sizeof(fractions) / sizeof(fractions[0]); i++)
		if (config_get_double_in(a->config, fractions[i].key, fractions[i].min,
					 fractions[i].max, to[i], &err) < 0)
			goto bad;
	const char *rc_key = config_get(a->config, "agg.rank_charts");
	if (rc_key && !a->rank_charts_given && parse_rank_charts(rc_key, a))
		return error("%s: agg.rank_charts = '%s': expected auto, all, flagged, none "
			     "or a rank list such as 0-7,77",
			     path, rc_key);
	const char *ch = config_get(a->config, "agg.charts");
	for (const char *p = ch; p && *p;) {
		size_t n = strcspn(p, " \t");
		char word[256];
		if (n && n < sizeof(word)) {
			memcpy(word, p, n);
			word[n] = '\0';
		}
		if (n && (n >= sizeof(word) || parse_charts(word, &a->charts)))
			return error("%s: agg.charts = '%s': " CHARTS_EXPECTED
				     " (several separated by spaces)",
				     path, ch);
		p += n + strspn(p + n, " \t");
	}
	struct strbuf aerr = STRBUF_INIT;
	int bad = advise_settings_load(&o->advise, a->config, &aerr);
	error_lines(aerr.buf);
	strbuf_release(&aerr);
	if (bad)
		return -1;
	a->advise = &o->advise;
	const char *rows = config_get(a->config, "agg.tp_collective_rows");
	if (rows && !strcmp(rows, "all"))
		a->why_rows = AGG_WHY_ROWS_ALL;
	else if (rows && !strcmp(rows, "none"))
		a->why_rows = AGG_WHY_ROWS_NONE;
	else if (rows && strcmp(rows, "auto"))
		return error("%s: agg.tp_collective_rows = '%s': expected auto, all or none", path,
			     rows);
	const char *maxev = config_get(a->config, "agg.perfetto_max_events");
	long v;
	if (maxev && cli_parse_long(maxev, 1000, 1000000000, &v))
		return error("%s: agg.perfetto_max_events = '%s': expected a number from 1000 to "
			     "1000000000",
			     path, maxev);
	if (maxev)
		o->out.perfetto_max_events = (size_t)v;
	if (!*format)
		*format = config_get(a->config, "agg.format");
	if (!*align)
		*align = config_get(a->config, "agg.time_alignment");
	return 0;
bad:
	error_lines(err.buf);
	strbuf_release(&err);
	return -1;
}

/* Exit status 4: --compare found a regression (docs/compare.md). It wins
 * over 1: a cron job alerts on it, and the warnings say what else failed. */
enum { EXIT_REGRESSION = 4 };

/* Whether this run may write only the charts --charts names (docs/ppagg.md,
 * "Charts on demand"): the --charts entries name ranks, PP groups or
 * replicas and nothing else, nothing asks for an analysis's output
 * (--compare, --perfetto-ranks), and the output folder holds a report
 * (report_can_add_charts(); run() checks its iterations' pages too). */
static bool charts_only(const struct opts *o)
{
	const struct agg_charts *c = &o->agg.charts;
	if (!o->charts_given || c->all || c->niterations ||
	    !(c->nranks || c->ngroups || c->nreplicas) || o->agg.compare.baseline ||
	    o->out.perfetto_ranks)
		return false;
	struct agg_job where = { .base = agg_base_folder(&o->agg) };
	bool yes = report_can_add_charts(&where, &o->out);
	free(where.base);
	return yes;
}

/* The library's part: analyse, then write; the exit status from both. */
static int run(struct opts *o)
{
	struct agg_job job;
	struct strbuf err = STRBUF_INIT;
	int nfailed = 0;
	o->agg.mode = charts_only(o) ? AGG_CHARTS_ONLY : AGG_FULL;
	int rc = agg_analyse(&o->agg, &job, &err);
	if (!rc && job.mode == AGG_CHARTS_ONLY && !report_can_add_charts(&job, &o->out)) {
		warn("the report does not show every iteration asked for yet: writing it whole");
		agg_job_release(&job);
		o->agg.mode = AGG_FULL;
		rc = agg_analyse(&o->agg, &job, &err);
	}
	if (!rc)
		rc = report_write(&job, &o->out, &nfailed, &err);
	error_lines(err.buf);
	strbuf_release(&err);
	bool partial = job.partial;
	bool regression = job.compare.state == AGG_CMP_DONE && job.compare.r.regression;
	agg_job_release(&job);
	return rc                   ? PP_EXIT_FATAL
	       : regression         ? EXIT_REGRESSION
	       : partial || nfailed ? PP_EXIT_PARTIAL
				    : PP_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct opts o = { .agg = { .threshold = 0.10,
				   .vpp = 1,
				   .compare = { .threshold = AGG_COMPARE_THRESHOLD,
						.noise_floor = AGG_COMPARE_NOISE_FLOOR,
						.min_share = AGG_COMPARE_MIN_SHARE } },
			  .out = { .render = true,
				   .png = true,
				   .svg = true,
				   .perfetto_max_events = REPORT_PERFETTO_MAX_EVENTS } };
	const char *format = NULL, *align = NULL, *config = NULL;
	struct cli_state st;
	struct strbuf err = STRBUF_INIT;
	int rc;

	/* Its heap holds the iterations' numbers, the timelines and SQLite's
	 * pages: on huge pages half the first-touch faults (8,000 -> 4,300 on
	 * the what-if sample; docs/performance.md). */
	hugepage_heap_restart(argv);
	pp_set_progname("ppagg");
	cli_init(&st, argc, argv);
	rc = parse_args(&o, &st, &format, &align, &config);
	if (rc == CLI_HELP || rc == CLI_ERR) {
		cli_release(&st);
		return rc == CLI_HELP ? PP_EXIT_OK : PP_EXIT_USAGE;
	}
	o.agg.config = config ? config_load(config, &err) : config_new();
	if (!o.agg.config) {
		error_lines(err.buf);
		strbuf_release(&err);
		rc = PP_EXIT_USAGE;
		goto out;
	}
	rc = PP_EXIT_USAGE;
	if (apply_config(&o, &format, &align))
		goto out;
	if (format && parse_format(format, &o.out)) {
		error("invalid format '%s': expected png, svg or png,svg", format);
		goto out;
	}
	if (align && strcmp(align, "global") && strcmp(align, "individual")) {
		error("invalid time alignment '%s': expected global or individual", align);
		goto out;
	}
	o.out.individual = align && !strcmp(align, "individual");
	if (!o.out.processes)
		o.out.processes = pp_cores();
	if ((o.agg.base && o.agg.input) || (!o.agg.base && !o.agg.input && !o.agg.db) || st.npos) {
		error(st.npos ? "unexpected argument '%s'"
			      : "give --base-folder, --input or --db (not both of the first two)%s",
		      st.npos ? st.pos[0] : "");
		cli_usage(&cmd);
		goto out;
	}
	rc = run(&o);
out:
	config_free(o.agg.config);
	charts_release(&o.agg.charts);
	cli_release(&st);
	return rc;
}
