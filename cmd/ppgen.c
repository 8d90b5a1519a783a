/* ppgen — write a synthetic Megatron-LM trace tree (topology, one Kineto
 * trace per rank and iteration) with its exact expected analysis results.
 * Thin: parses options into struct gen_opts and calls gen_run(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "util/cli.h"
#include "util/config.h"
#include "util/pp.h"

enum {
	O_OUT = 1, O_TP, O_PP, O_DP, O_CP, O_EP, O_VPP, O_MB, O_ITER, O_LAYERS, O_KPL,
	O_RECOMPUTE, O_STRAGGLER, O_SEED, O_GZIP, O_RANKS, O_TIME_FORMAT, O_NASTY, O_CONFIG,
	O_QUIET
};

static const struct cli_opt options[] = {
	{ "out", 'o', "<dir>", "output folder (created)", O_OUT, 0 },
	{ "tp", 0, "<n>", "tensor-parallel size (default 1)", O_TP, 0 },
	{ "pp", 0, "<n>", "pipeline-parallel size (default 1)", O_PP, 0 },
	{ "dp", 0, "<n>", "data-parallel size (default 1)", O_DP, 0 },
	{ "cp", 0, "<n>", "context-parallel size (default 1)", O_CP, 0 },
	{ "ep", 0, "<n>", "expert-parallel size (default 1)", O_EP, 0 },
	{ "vpp", 0, "<n>", "virtual pipeline chunks per stage: interleaved 1F1B (default 1)", O_VPP, 0 },
	{ "microbatches", 'm', "<n>", "micro-batches per iteration (default 8)", O_MB, 0 },
	{ "iterations", 0, "<list>", "iteration numbers, e.g. 15,16 (default 15)", O_ITER, CLI_MULTI },
	{ "layers", 0, "<n>", "transformer layers per model chunk (default 4)", O_LAYERS, 0 },
	{ "kernels-per-layer", 0, "<n>", "compute kernels per layer (default 8)", O_KPL, 0 },
	{ "recompute", 0, NULL, "recompute activations inside backward", O_RECOMPUTE, 0 },
	{ "straggler", 0, "<rank>:<factor>", "slow down a rank's compute kernels (repeatable)", O_STRAGGLER, 0 },
	{ "seed", 0, "<n>", "jitter seed (default 1)", O_SEED, 0 },
	{ "gzip", 'z', NULL, "write .json.gz files", O_GZIP, 0 },
	{ "ranks", 0, "<list>", "write only these ranks, e.g. 0-3,8 (all are simulated)", O_RANKS, 0 },
	{ "time-format", 0, "<fmt>", "absolute (default) or relative (baseTimeNanoseconds)", O_TIME_FORMAT, 0 },
	{ "nasty", 0, "<list>", "real-world quirks: truncate,string-ids,unsorted,unicode,control-chars,orphans,zero-dur,big-ids,bom,whitespace,nan,long-names,all", O_NASTY, 0 },
	{ "config", 'c', "<file>", "INI configuration file (section [gen])", O_CONFIG, 0 },
	{ "quiet", 'q', NULL, "no summary line", O_QUIET, 0 },
	{ NULL, 0, NULL, NULL, 0, 0 }
};

static const struct cli_cmd cmd = {
	"ppgen",
	"ppgen --out <dir> [--tp <n>] [--pp <n>] [--dp <n>] [--cp <n>] [--ep <n>] [--vpp <n>]\n"
	"             [--microbatches <n>] [--iterations <list>] [--layers <n>]\n"
	"             [--kernels-per-layer <n>] [--recompute] [--straggler <rank>:<factor>]...\n"
	"             [--seed <n>] [--gzip] [--ranks <list>] [--time-format absolute|relative]\n"
	"             [--nasty <list>] [--config <file>] [--quiet]",
	"Write a synthetic Megatron-LM profiler trace tree with its exact expected results in <dir>/.truth.",
	options,
	"  ppgen --out /tmp/c16 --tp 2 --pp 4 --dp 2 --microbatches 8 --iterations 15,16\n"
	"  ppgen --out /tmp/big --layers 2000 --kernels-per-layer 64 --microbatches 4"
};

struct args {
	struct gen_opts o;
	int *iters, *ranks;
	struct gen_straggler *strag;
	const char *config_path;
};

static int parse_iterations(struct args *a, const struct cli_state *st)
{
	char buf[4096] = "";
	size_t len = 0;
	for (int i = 0; i < st->nargs; i++) {
		int n = snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "", st->args[i]);
		if (n < 0 || (size_t)n >= sizeof(buf) - len)
			return cli_bad_value(&cmd, st, "list too long");
		len += (size_t)n;
	}
	free(a->iters);
	if (gen_parse_int_list(buf, &a->iters, &a->o.niterations))
		return cli_bad_value(&cmd, st, "expected numbers such as 15,16");
	a->o.iterations = a->iters;
	return 0;
}

static int parse_straggler(struct args *a, const struct cli_state *st)
{
	const char *colon = strchr(st->arg, ':');
	long rank;
	double f;
	char head[32];
	size_t n = colon ? (size_t)(colon - st->arg) : 0;
	if (!colon || !n || n >= sizeof(head))
		return cli_bad_value(&cmd, st, "expected <rank>:<factor>, e.g. 5:1.3");
	memcpy(head, st->arg, n);
	head[n] = '\0';
	if (cli_parse_long(head, 0, 1000000, &rank) || cli_parse_double(colon + 1, &f) ||
	    f <= 0 || f > 1000)
		return cli_bad_value(&cmd, st, "expected <rank>:<factor> with factor in (0, 1000]");
	a->strag = xrealloc(a->strag, (size_t)(a->o.nstragglers + 1) * sizeof(*a->strag));
	a->strag[a->o.nstragglers++] = (struct gen_straggler){ (int)rank, f };
	a->o.stragglers = a->strag;
	return 0;
}

static int parse_args(struct args *a, struct cli_state *st)
{
	struct gen_opts *o = &a->o;
	char err[256];
	long v;
	int id, rc = 0;
	while (!rc && (id = cli_next(&cmd, st)) > 0) {
		switch (id) {
		case O_OUT: o->out = st->arg; break;
		case O_TP: rc = cli_int_arg(&cmd, st, 1, 1000000, &o->tp); break;
		case O_PP: rc = cli_int_arg(&cmd, st, 1, 1000000, &o->pp); break;
		case O_DP: rc = cli_int_arg(&cmd, st, 1, 1000000, &o->dp); break;
		case O_CP: rc = cli_int_arg(&cmd, st, 1, 1000000, &o->cp); break;
		case O_EP: rc = cli_int_arg(&cmd, st, 1, 1000000, &o->ep); break;
		case O_VPP: rc = cli_int_arg(&cmd, st, 1, 64, &o->vpp); break;
		case O_MB: rc = cli_int_arg(&cmd, st, 1, 100000, &o->microbatches); break;
		case O_ITER: rc = parse_iterations(a, st); break;
		case O_LAYERS: rc = cli_int_arg(&cmd, st, 1, 10000000, &o->layers); break;
		case O_KPL: rc = cli_int_arg(&cmd, st, 1, 100000, &o->kpl); break;
		case O_RECOMPUTE: o->recompute = true; break;
		case O_STRAGGLER: rc = parse_straggler(a, st); break;
		case O_SEED:
			if (cli_parse_long(st->arg, 0, 2147483647L, &v))
				return cli_bad_value(&cmd, st, "expected a number >= 0");
			o->seed = (uint64_t)v;
			break;
		case O_GZIP: o->gzip = true; break;
		case O_RANKS:
			free(a->ranks);
			if (gen_parse_int_list(st->arg, &a->ranks, &o->nranks))
				return cli_bad_value(&cmd, st, "expected ranks such as 0-3,8");
			o->ranks = a->ranks;
			break;
		case O_TIME_FORMAT:
			if (strcmp(st->arg, "absolute") && strcmp(st->arg, "relative"))
				return cli_bad_value(&cmd, st, "expected absolute or relative");
			o->relative = !strcmp(st->arg, "relative");
			break;
		case O_NASTY:
			if (gen_parse_nasty(st->arg, &o->nasty, err, sizeof(err)))
				return cli_bad_value(&cmd, st, err);
			break;
		case O_CONFIG: break; /* applied first: cli_find_config() */
		case O_QUIET: o->quiet = true; break;
		}
	}
	return rc ? rc : id;
}

/* [gen] keys override the defaults; the command line overrides them. */
static int apply_config(struct args *a, const char *path)
{
	static const char *const known[] = {
		"microbatches", "layers", "kernels_per_layer", "seed", "gzip", "time_format",
		"vpp", NULL
	};
	struct gen_opts *o = &a->o;
	long mb = o->microbatches, layers = o->layers, kpl = o->kpl, vpp = o->vpp;
	long seed = (long)o->seed;
	char err[512];
	struct config *cfg = config_load(path, err, sizeof(err));
	int rc = 0;
	if (!cfg)
		return error("%s", err);
	config_check_known(cfg, "gen", known);
	const char *tf = config_get(cfg, "gen.time_format");
	if (config_get_long_in(cfg, "gen.microbatches", 1, 10000000, &mb, err, sizeof(err)) < 0 ||
	    config_get_long_in(cfg, "gen.layers", 1, 10000000, &layers, err, sizeof(err)) < 0 ||
	    config_get_long_in(cfg, "gen.kernels_per_layer", 1, 10000000, &kpl, err, sizeof(err)) <
		    0 ||
	    config_get_long_in(cfg, "gen.vpp", 1, 64, &vpp, err, sizeof(err)) < 0 ||
	    config_get_long_in(cfg, "gen.seed", 0, 2147483647L, &seed, err, sizeof(err)) < 0 ||
	    config_get_bool(cfg, "gen.gzip", &o->gzip, err, sizeof(err)) < 0)
		rc = error("%s: %s", path, err);
	else if (tf && strcmp(tf, "absolute") && strcmp(tf, "relative"))
		rc = error(
			"%s: config key gen.time_format: expected absolute or relative, got '%s'",
			path, tf);
	else if (tf)
		o->relative = !strcmp(tf, "relative");
	o->microbatches = (int)mb;
	o->layers = (int)layers;
	o->kpl = (int)kpl;
	o->vpp = (int)vpp;
	o->seed = (uint64_t)seed;
	config_free(cfg);
	return rc;
}

int main(int argc, char **argv)
{
	static const int default_iter[] = { 15 };
	struct args a = { .o = { .tp = 1, .pp = 1, .dp = 1, .cp = 1, .ep = 1, .vpp = 1,
				 .microbatches = 8, .layers = 4, .kpl = 8, .seed = 1,
				 .iterations = default_iter, .niterations = 1 } };
	struct cli_state st;
	int rc;

	pp_set_progname("ppgen");
	rc = cli_find_config(&cmd, argc, argv, &a.config_path);
	if (rc == CLI_END && a.config_path && apply_config(&a, a.config_path))
		rc = CLI_ERR;
	cli_init(&st, argc, argv);
	if (rc == CLI_END)
		rc = parse_args(&a, &st);
	if (rc == CLI_HELP || rc == CLI_ERR) {
		rc = rc == CLI_HELP ? PP_EXIT_OK : PP_EXIT_USAGE;
	} else if (!a.o.out || st.npos) {
		error(st.npos ? "unexpected argument '%s'" : "--out is required",
		      st.npos ? st.pos[0] : "");
		cli_usage(&cmd);
		rc = PP_EXIT_USAGE;
	} else {
		rc = gen_run(&a.o);
		rc = rc == 0 ? PP_EXIT_OK : rc == PP_EINVAL ? PP_EXIT_USAGE : PP_EXIT_FATAL;
	}
	free(a.iters);
	free(a.ranks);
	free(a.strag);
	cli_release(&st);
	return rc;
}
