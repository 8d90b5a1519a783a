/* cli.c — table-driven command-line parsing; see cli.h. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pp.h"

void cli_init(struct cli_state *st, int argc, char **argv)
{
	memset(st, 0, sizeof(*st));
	st->argc = argc;
	st->argv = argv;
	st->i = 1;
	st->pos = xcalloc((size_t)argc + 1, sizeof(char *));
}

void cli_release(struct cli_state *st)
{
	free(st->pos);
	st->pos = NULL;
}

/* The option that arg, the text after "--" ("name" or "name=value"),
 * names; NULL when cmd has none. */
static const struct cli_opt *find_long(const struct cli_cmd *cmd, const char *arg)
{
	size_t len = strcspn(arg, "=");
	for (const struct cli_opt *o = cmd->opts; o && o->name; o++)
		if (strlen(o->name) == len && !strncmp(o->name, arg, len))
			return o;
	return NULL;
}

static const struct cli_opt *find_short(const struct cli_cmd *cmd, int c)
{
	for (const struct cli_opt *o = cmd->opts; o && o->name; o++)
		if (o->short_name == c)
			return o;
	return NULL;
}

/* Whether a is one of cmd's long options (--name or --name=value), --help
 * included (every command's help lists it). */
static bool is_long_opt(const struct cli_cmd *cmd, const char *a)
{
	return a[0] == '-' && a[1] == '-' && a[2] &&
	       (find_long(cmd, a + 2) || !strcmp(a, "--help"));
}

static int take_args(const struct cli_cmd *cmd, struct cli_state *st, const struct cli_opt *o,
		     const char *inline_arg)
{
	st->opt = o;
	st->arg = NULL;
	st->args = NULL;
	st->nargs = 0;
	if (!o->arg) {
		if (inline_arg) {
			fprintf(stderr, "%s: error: option --%s takes no value\n", cmd->name,
				o->name);
			cli_usage(cmd);
			return CLI_ERR;
		}
		return o->id;
	}
	if (inline_arg) {
		st->arg = inline_arg;
		st->args = NULL;
		st->nargs = 1;
		return o->id;
	}
	if (st->i >= st->argc || is_long_opt(cmd, st->argv[st->i])) {
		fprintf(stderr, "%s: error: option --%s needs a value %s", cmd->name, o->name,
			o->arg);
		if (st->i < st->argc) /* `--iterations --no-render`: a value forgotten */
			fprintf(stderr, ", not the option '%s' (--%s=%s if that is the value)",
				st->argv[st->i], o->name, st->argv[st->i]);
		fputc('\n', stderr);
		cli_usage(cmd);
		return CLI_ERR;
	}
	st->args = &st->argv[st->i];
	st->arg = st->argv[st->i++];
	st->nargs = 1;
	if (o->flags & CLI_MULTI) {
		while (st->i < st->argc && st->argv[st->i][0] != '-') {
			st->i++;
			st->nargs++;
		}
	}
	return o->id;
}

int cli_next(const struct cli_cmd *cmd, struct cli_state *st)
{
	if (st->bundle && *st->bundle) {
		const struct cli_opt *o = find_short(cmd, *st->bundle);
		if (!o) {
			fprintf(stderr, "%s: error: unknown option -%c\n", cmd->name, *st->bundle);
			cli_usage(cmd);
			return CLI_ERR;
		}
		st->bundle++;
		if (o->arg && *st->bundle) {
			const char *a = st->bundle;
			st->bundle = NULL;
			return take_args(cmd, st, o, a);
		}
		return take_args(cmd, st, o, NULL);
	}
	st->bundle = NULL;
	while (st->i < st->argc) {
		char *a = st->argv[st->i++];
		if (!strcmp(a, "--")) {
			while (st->i < st->argc)
				st->pos[st->npos++] = st->argv[st->i++];
			return CLI_END;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			cli_help(cmd, stdout);
			return CLI_HELP;
		}
		if (a[0] == '-' && a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			const struct cli_opt *o = find_long(cmd, a + 2);
			if (!o) {
				fprintf(stderr, "%s: error: unknown option '%s'\n", cmd->name, a);
				cli_usage(cmd);
				return CLI_ERR;
			}
			return take_args(cmd, st, o, eq ? eq + 1 : NULL);
		}
		if (a[0] == '-' && a[1]) {
			st->bundle = a + 1;
			return cli_next(cmd, st);
		}
		st->pos[st->npos++] = a;
	}
	return CLI_END;
}

int cli_find_config(const struct cli_cmd *cmd, int argc, char **argv, const char **path)
{
	const struct cli_opt *config = find_long(cmd, "config");
	struct cli_state st;
	int id;
	*path = NULL;
	cli_init(&st, argc, argv);
	while ((id = cli_next(cmd, &st)) > 0)
		if (config && id == config->id)
			*path = st.arg;
	cli_release(&st);
	return id;
}

void cli_usage(const struct cli_cmd *cmd)
{
	fprintf(stderr, "usage: %s\n", cmd->synopsis);
	fprintf(stderr, "Try '%s --help' for more information.\n", cmd->name);
}

void cli_help(const struct cli_cmd *cmd, FILE *out)
{
	fprintf(out, "usage: %s\n\n%s\n\noptions:\n", cmd->synopsis, cmd->summary);
	for (const struct cli_opt *o = cmd->opts; o && o->name; o++) {
		char left[64], sh[8] = "    ";
		if (o->short_name)
			snprintf(sh, sizeof(sh), "-%c, ", o->short_name);
		snprintf(left, sizeof(left), "%s--%s%s%s%s", sh, o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "", (o->flags & CLI_MULTI) ? "..." : "");
		fprintf(out, "  %-30s %s\n", left, o->help);
	}
	fprintf(out, "  %-30s %s\n", "-h, --help", "show this help and exit");
	fprintf(out, "\nexit status:\n%s",
		cmd->exit_status ? cmd->exit_status
				 : "  0  everything worked\n"
				   "  1  some inputs failed (the others were processed)\n"
				   "  2  usage error or invalid parameters\n"
				   "  3  fatal error, nothing was done\n"
				   "  130 interrupted (SIGINT/SIGTERM); running again resumes\n");
	if (cmd->example)
		fprintf(out, "\nexample:\n%s\n", cmd->example);
}

int cli_bad_value(const struct cli_cmd *cmd, const struct cli_state *st, const char *why)
{
	fprintf(stderr, "%s: error: invalid value '%s' for --%s: %s\n", cmd->name,
		st->arg ? st->arg : "", st->opt ? st->opt->name : "?", why);
	cli_usage(cmd);
	return CLI_ERR;
}

int cli_int_arg(const struct cli_cmd *cmd, const struct cli_state *st, long min, long max, int *out)
{
	char why[96];
	long v;
	if (cli_parse_long(st->arg, min, max, &v)) {
		snprintf(why, sizeof(why), "expected an integer from %ld to %ld", min, max);
		return cli_bad_value(cmd, st, why);
	}
	*out = (int)v;
	return 0;
}

int cli_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < min || v > max)
		return PP_EINVAL;
	*out = v;
	return 0;
}

int cli_parse_range(const char *s, size_t len, long min, long max, long *lo, long *hi)
{
	char buf[64];
	if (!len || len >= sizeof(buf))
		return PP_EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (cli_parse_long(buf, min, max, lo) ||
	    cli_parse_long(dash ? dash + 1 : buf, min, max, hi) || *hi < *lo)
		return PP_EINVAL;
	return 0;
}

int cli_parse_choice(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

int cli_parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v))
		return PP_EINVAL;
	*out = v;
	return 0;
}
