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
#include "util/strbuf.h"

enum {
	O_OUT = 1,
	O_TP,
	O_PP,
	O_DP,
	O_CP,
	O_EP,
	O_VPP,
	O_MB,
	O_ITER,
	O_LAYERS,
	O_KPL,
	O_RECOMPUTE,
	O_STRAGGLER,
	O_SLOW_STAGE,
	O_SLOW_COMPUTE,
	O_SLOW_DP,
	O_GRAD_REDUCE,
	O_PARAM_GATHER,
	O_WARMUP,
	O_GPUS_PER_HOST,
	O_CLOCK_SKEW,
	O_CLOCK_SKEW_MAX,
	O_SEED,
	O_GZIP,
	O_RANKS,
	O_TIME_FORMAT,
	O_NASTY,
	O_CONFIG,
	O_QUIET
};

static const struct cli_opt options[] = {
	{ "out", 'o', "<dir>", "output folder (created)", O_OUT, 0 },
	{ "tp", 0, "<n>", "tensor-parallel size (default 1)", O_TP, 0 },
	{ "pp", 0, "<n>", "pipeline-parallel size (default 1)", O_PP, 0 },
	{ "dp", 0, "<n>", "data-parallel size (default 1)", O_DP, 0 },
	{ "cp", 0, "<n>", "context-parallel size (default 1)", O_CP, 0 },
	{ "ep", 0, "<n>", "expert-parallel size (default 1)", O_EP, 0 },
	{ "vpp", 0, "<n>", "virtual pipeline chunks per stage: interleaved 1F1B (default 1)", O_VPP,
	  0 },
	{ "microbatches", 'm', "<n>", "micro-batches per iteration (default 8)", O_MB, 0 },
	{ "iterations", 0, "<list>", "iteration numbers, e.g. 15,16 (default 15)", O_ITER,
	  CLI_MULTI },
	{ "layers", 0, "<n>", "transformer layers per model chunk (default 4)", O_LAYERS, 0 },
	{ "kernels-per-layer", 0, "<n>", "compute kernels per layer (default 8)", O_KPL, 0 },
	{ "recompute", 0, NULL, "recompute activations inside backward", O_RECOMPUTE, 0 },
	{ "straggler", 0, "<rank>:<factor>", "slow down a rank's compute kernels (repeatable)",
	  O_STRAGGLER, 0 },
	{ "slow-stage", 0, "<stage>:<factor>",
	  "slow down every rank of a stage (0.., or last; repeatable)", O_SLOW_STAGE, 0 },
	{ "slow-compute", 0, "<factor>", "slow down every compute kernel of every rank",
	  O_SLOW_COMPUTE, 0 },
	{ "slow-dp", 0, "<ranks>:<factor>",
	  "slow down the DP collectives of the DP groups holding these ranks, e.g. 4-7:1.3",
	  O_SLOW_DP, 0 },
	{ "grad-reduce", 0, "<mode>",
	  "DP reduce-scatters: overlap (with backward, default) or finish", O_GRAD_REDUCE, 0 },
	{ "param-gather", 0, "<mode>", "DP all-gathers: optimizer (after it, default) or forward",
	  O_PARAM_GATHER, 0 },
	{ "warmup", 0, "<rule>",
	  "warm-up when m = pp, vpp > 1: legacy (all forwards first, default) or core (clamped)",
	  O_WARMUP, 0 },
	{ "gpus-per-host", 0, "<n>", "ranks per host: device ids and host clocks (default 8)",
	  O_GPUS_PER_HOST, 0 },
	{ "clock-skew", 0, "<list>", "host clock offsets in us, e.g. 1:250,3:-40.5 (repeatable)",
	  O_CLOCK_SKEW, 0 },
	{ "clock-skew-max", 0, "<us>", "random offsets in [-us, us] for every host but host 0",
	  O_CLOCK_SKEW_MAX, 0 },
	{ "seed", 0, "<n>", "jitter seed (default 1)", O_SEED, 0 },
	{ "gzip", 'z', NULL, "write .json.gz files", O_GZIP, 0 },
	{ "ranks", 0, "<list>", "write only these ranks, e.g. 0-3,8 (all are simulated)", O_RANKS,
	  0 },
	{ "time-format", 0, "<fmt>", "absolute (default) or relative (baseTimeNanoseconds)",
	  O_TIME_FORMAT, 0 },
	{ "nasty", 0, "<list>",
	  "real-world quirks: truncate,string-ids,unsorted,unicode,control-chars,orphans,zero-dur,big-ids,bom,whitespace,nan,long-names, or all (every one but truncate)",
	  O_NASTY, 0 },
	{ "config", 'c', "<file>", "INI configuration file (section [gen])", O_CONFIG, 0 },
	{ "quiet", 'q', NULL, "no summary line", O_QUIET, 0 },
	{ NULL, 0, NULL, NULL, 0, 0 }
};

static const struct cli_cmd cmd = {
	"ppgen",
	"ppgen --out <dir> [--tp <n>] [--pp <n>] [--dp <n>] [--cp <n>] [--ep <n>] [--vpp <n>]\n"
	"             [--microbatches <n>] [--iterations <list>] [--layers <n>]\n"
	"             [--kernels-per-layer <n>] [--recompute] [--straggler <rank>:<factor>]...\n"
	"             [--slow-stage <stage>:<factor>]... [--slow-compute <factor>]\n"
	"             [--slow-dp <ranks>:<factor>] [--grad-reduce overlap|finish]\n"
	"             [--param-gather optimizer|forward] [--warmup legacy|core]\n"
	"             [--gpus-per-host <n>] [--clock-skew <host>:<us>,...]...\n"
	"             [--clock-skew-max <us>] [--seed <n>] [--gzip] [--ranks <list>]\n"
	"             [--time-format absolute|relative] [--nasty <list>] [--config <file>]\n"
	"             [--quiet]",
	"Write a synthetic Megatron-LM profiler trace tree with its exact expected results in <dir>/.truth.",
	options,
	"  ppgen --out /tmp/c16 --tp 2 --pp 4 --dp 2 --microbatches 8 --iterations 15,16\n"
	"  ppgen --out /tmp/skew --pp 4 --dp 4 --gpus-per-host 4 --clock-skew-max 500 --slow-stage last:1.6\n"
	"  ppgen --out /tmp/big --layers 2000 --kernels-per-layer 64 --microbatches 4",
	"  0  everything worked\n"
	"  2  usage error or invalid parameters\n"
	"  3  could not write (the traces written stay, <dir>/.truth is left as it was)\n"
	"  130 interrupted (SIGINT/SIGTERM): as 3; running again writes the whole tree\n"
};

struct args {
	struct gen_opts o;
	int *iters, *ranks, *slow_dp;
	struct gen_straggler *strag;
	struct gen_slow_stage *slow;
	struct gen_clock_skew *skew;
	bool slow_flag, skew_flag; /* a flag replaces the config file's list */
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
		return cli_bad_value(
			&cmd, st,
			"expected numbers >= 0 such as 15,16 or a rising range such as "
			"10-12");
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
	if (cli_parse_long(head, 0, 1000000, &rank) || cli_parse_double(colon + 1, &f) || f <= 0 ||
	    f > 1000)
		return cli_bad_value(&cmd, st, "expected <rank>:<factor> with factor in (0, 1000]");
	a->strag = xrealloc(a->strag, (size_t)(a->o.nstragglers + 1) * sizeof(*a->strag));
	a->strag[a->o.nstragglers++] = (struct gen_straggler){ (int)rank, f };
	a->o.stragglers = a->strag;
	return 0;
}

/* --slow-dp <ranks>:<factor>: the ranks as --ranks takes them. */
static int parse_slow_dp(struct args *a, const struct cli_state *st)
{
	const char *colon = strrchr(st->arg, ':');
	char head[4096];
	double f;
	size_t n = colon ? (size_t)(colon - st->arg) : 0;
	free(a->slow_dp);
	a->slow_dp = NULL;
	if (!colon || !n || n >= sizeof(head))
		goto bad;
	memcpy(head, st->arg, n);
	head[n] = '\0';
	if (gen_parse_int_list(head, &a->slow_dp, &a->o.nslow_dp_ranks) ||
	    cli_parse_double(colon + 1, &f) || f <= 0 || f > 1000)
		goto bad;
	a->o.slow_dp_ranks = a->slow_dp;
	a->o.slow_dp_factor = f;
	return 0;
bad:
	return cli_bad_value(&cmd, st,
			     "expected <ranks>:<factor> with factor in (0, 1000], e.g. 4-7:1.3");
}

/* "<stage>:<factor>" or "last:<factor>" appended to the slow stages; the
 * reason appended to err when it is not one. */
static int add_slow_stage(struct args *a, const char *v, struct strbuf *err)
{
	const char *colon = strchr(v, ':');
	long stage = -1;
	double f;
	char head[32];
	size_t n = colon ? (size_t)(colon - v) : 0;
	if (!colon || !n || n >= sizeof(head))
		goto bad;
	memcpy(head, v, n);
	head[n] = '\0';
	if ((strcmp(head, "last") && cli_parse_long(head, 0, 1000000, &stage)) ||
	    cli_parse_double(colon + 1, &f) || f <= 0 || f > 1000)
		goto bad;
	a->slow = xrealloc(a->slow, (size_t)(a->o.nslow_stages + 1) * sizeof(*a->slow));
	a->slow[a->o.nslow_stages++] = (struct gen_slow_stage){ (int)stage, f };
	a->o.slow_stages = a->slow;
	return 0;
bad:
	return pp_err(
		err, PP_EINVAL,
		"expected <stage>:<factor> or last:<factor> with factor in (0, 1000], e.g. last:1.5");
}

/* "<host>:<us>,..." appended to the explicit host clock offsets. */
static int add_clock_skew(struct args *a, const char *v, struct strbuf *err)
{
	struct gen_clock_skew *list;
	int n;
	if (gen_parse_clock_skew(v, &list, &n, err))
		return PP_EINVAL;
	a->skew = xrealloc(a->skew, (size_t)(a->o.nskews + n + 1) * sizeof(*a->skew));
	memcpy(a->skew + a->o.nskews, list, (size_t)n * sizeof(*list));
	a->o.nskews += n;
	a->o.skews = a->skew;
	free(list);
	return 0;
}

/* The model variant named v for option bit `bit` (--grad-reduce,
 * --param-gather, --warmup): names[0] clears it, names[1] sets it. */
static int set_variant(struct gen_opts *o, unsigned bit, const char *const names[2], const char *v)
{
	for (int i = 0; i < 2; i++)
		if (!strcmp(v, names[i])) {
			o->variant = i ? o->variant | bit : o->variant & ~bit;
			return 0;
		}
	return PP_EINVAL;
}

static const char *const grad_reduce_names[2] = { "overlap", "finish" };
static const char *const param_gather_names[2] = { "optimizer", "forward" };
static const char *const warmup_names[2] = { "legacy", "core" };

/* --grad-reduce, --param-gather, --warmup. */
static int variant_flag(struct gen_opts *o, const struct cli_state *st, unsigned bit,
			const char *const names[2])
{
	char err[64];
	if (!set_variant(o, bit, names, st->arg))
		return 0;
	snprintf(err, sizeof(err), "expected %s or %s", names[0], names[1]);
	return cli_bad_value(&cmd, st, err);
}

/* --slow-stage, --clock-skew: the first flag replaces the config file's
 * list (*n entries), later ones add to it. */
static int list_flag(struct args *a, const struct cli_state *st, bool *seen, int *n,
		     int (*add)(struct args *, const char *, struct strbuf *))
{
	struct strbuf err = STRBUF_INIT;
	if (!*seen)
		*n = 0;
	*seen = true;
	int rc = add(a, st->arg, &err) ? cli_bad_value(&cmd, st, err.buf) : 0;
	strbuf_release(&err);
	return rc;
}

static int parse_args(struct args *a, struct cli_state *st)
{
	struct gen_opts *o = &a->o;
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
		case O_SLOW_STAGE:
			rc = list_flag(a, st, &a->slow_flag, &o->nslow_stages, add_slow_stage);
			break;
		case O_SLOW_COMPUTE:
			if (cli_parse_double(st->arg, &o->slow_compute) || o->slow_compute <= 0 ||
			    o->slow_compute > 1000)
				return cli_bad_value(&cmd, st, "expected a factor in (0, 1000]");
			break;
		case O_SLOW_DP: rc = parse_slow_dp(a, st); break;
		case O_GRAD_REDUCE:
			rc = variant_flag(o, st, GEN_GRAD_REDUCE_FINISH, grad_reduce_names);
			break;
		case O_PARAM_GATHER:
			rc = variant_flag(o, st, GEN_PARAM_GATHER_FORWARD, param_gather_names);
			break;
		case O_WARMUP: rc = variant_flag(o, st, GEN_WARMUP_CORE, warmup_names); break;
		case O_GPUS_PER_HOST:
			rc = cli_int_arg(&cmd, st, 1, 1000000, &o->gpus_per_host);
			break;
		case O_CLOCK_SKEW:
			rc = list_flag(a, st, &a->skew_flag, &o->nskews, add_clock_skew);
			break;
		case O_CLOCK_SKEW_MAX:
			if (cli_parse_long(st->arg, 0, 1000000, &v))
				return cli_bad_value(&cmd, st,
						     "expected microseconds from 0 to 1000000");
			o->skew_max_ns = (int64_t)v * 1000;
			break;
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
		case O_NASTY: {
			struct strbuf err = STRBUF_INIT;
			if (gen_parse_nasty(st->arg, &o->nasty, &err))
				rc = cli_bad_value(&cmd, st, err.buf);
			strbuf_release(&err);
			if (rc)
				return rc;
			break;
		}
		case O_CONFIG: break; /* applied first: cli_find_config() */
		case O_QUIET: o->quiet = true; break;
		}
	}
	return rc ? rc : id;
}

/* The [gen] keys that take the flags' text: slow_stage, clock_skew,
 * grad_reduce, param_gather, warmup. */
static int apply_config_strings(struct args *a, const struct config *cfg, const char *path)
{
	static const struct {
		const char *key, *expect;
	} keys[] = {
		{ "gen.slow_stage", NULL },
		{ "gen.clock_skew", NULL },
		{ "gen.grad_reduce", "expected overlap or finish" },
		{ "gen.param_gather", "expected optimizer or forward" },
		{ "gen.warmup", "expected legacy or core" },
	};
	struct strbuf err = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = config_get(cfg, keys[i].key);
		int rc = 0;
		if (!v)
			continue;
		switch (i) {
		case 0: rc = add_slow_stage(a, v, &err); break;
		case 1: rc = add_clock_skew(a, v, &err); break;
		case 2:
			rc = set_variant(&a->o, GEN_GRAD_REDUCE_FINISH, grad_reduce_names, v);
			break;
		case 3:
			rc = set_variant(&a->o, GEN_PARAM_GATHER_FORWARD, param_gather_names, v);
			break;
		case 4: rc = set_variant(&a->o, GEN_WARMUP_CORE, warmup_names, v); break;
		}
		if (rc) {
			rc = error("%s: config key %s: %s, got '%s'", path, keys[i].key,
				   keys[i].expect ? keys[i].expect : err.buf, v);
			strbuf_release(&err);
			return rc;
		}
	}
	return 0;
}

/* [gen] keys override the defaults; the command line overrides them. */
static int apply_config(struct args *a, const char *path)
{
	static const char *const known[] = {
		"microbatches",  "layers",     "kernels_per_layer", "seed",        "gzip",
		"time_format",   "vpp",        "slow_stage",        "grad_reduce", "param_gather",
		"gpus_per_host", "clock_skew", "clock_skew_max",    "warmup",      NULL
	};
	struct gen_opts *o = &a->o;
	long mb = o->microbatches, layers = o->layers, kpl = o->kpl, vpp = o->vpp;
	long seed = (long)o->seed, gph = o->gpus_per_host, skew_max = 0;
	struct strbuf err = STRBUF_INIT;
	struct config *cfg = config_load(path, &err);
	int rc = 0;
	if (!cfg) {
		rc = error_lines(err.buf);
		strbuf_release(&err);
		return rc;
	}
	config_check_known(cfg, "gen", known);
	const char *tf = config_get(cfg, "gen.time_format");
	if (config_get_long_in(cfg, "gen.microbatches", 1, 10000000, &mb, &err) < 0 ||
	    config_get_long_in(cfg, "gen.layers", 1, 10000000, &layers, &err) < 0 ||
	    config_get_long_in(cfg, "gen.kernels_per_layer", 1, 10000000, &kpl, &err) < 0 ||
	    config_get_long_in(cfg, "gen.vpp", 1, 64, &vpp, &err) < 0 ||
	    config_get_long_in(cfg, "gen.seed", 0, 2147483647L, &seed, &err) < 0 ||
	    config_get_long_in(cfg, "gen.gpus_per_host", 1, 1000000, &gph, &err) < 0 ||
	    config_get_long_in(cfg, "gen.clock_skew_max", 0, 1000000, &skew_max, &err) < 0 ||
	    config_get_bool(cfg, "gen.gzip", &o->gzip, &err) < 0)
		rc = error_lines(err.buf);
	else if (tf && strcmp(tf, "absolute") && strcmp(tf, "relative"))
		rc = error(
			"%s: config key gen.time_format: expected absolute or relative, got '%s'",
			path, tf);
	else
		rc = apply_config_strings(a, cfg, path);
	if (tf)
		o->relative = !strcmp(tf, "relative");
	if (config_get(cfg, "gen.clock_skew_max"))
		o->skew_max_ns = skew_max * 1000;
	o->gpus_per_host = (int)gph;
	o->microbatches = (int)mb;
	o->layers = (int)layers;
	o->kpl = (int)kpl;
	o->vpp = (int)vpp;
	o->seed = (uint64_t)seed;
	config_free(cfg);
	strbuf_release(&err);
	return rc;
}

int main(int argc, char **argv)
{
	struct args a = { 0 };
	struct cli_state st;
	int rc;

	pp_set_progname("ppgen");
	gen_opts_init(&a.o);
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
		struct strbuf err = STRBUF_INIT;
		rc = gen_run(&a.o, &err);
		error_lines(err.buf);
		strbuf_release(&err);
		rc = rc == 0           ? PP_EXIT_OK
		     : rc == PP_EINVAL ? PP_EXIT_USAGE
		     : rc == PP_EINTR  ? PP_EXIT_INTR
				       : PP_EXIT_FATAL;
	}
	PP_FREE_ALL(a.iters, a.ranks, a.slow_dp, a.strag, a.slow, a.skew);
	cli_release(&st);
	return rc;
}
