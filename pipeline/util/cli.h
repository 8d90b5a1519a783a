/* cli.h — one option table per command drives parsing, --help and the
 * usage text of docs/usage.md.
 *
 * A command declares a `struct cli_cmd` with its options; cli_next() walks
 * argv and returns one option at a time. Accepted forms: --name value,
 * --name=value, -x value, -xvalue, bundled flags -ab, and "--" to end
 * options. Options marked CLI_MULTI take every following argument up to the
 * next one that starts with '-' (for `--iterations 15 16`). A separate
 * value that is one of the command's own long options is refused as a
 * value forgotten (`--iterations --no-render`); `--name=value` still takes
 * anything.
 */
#ifndef CLI_H
#define CLI_H

#include <stdio.h>

enum { CLI_MULTI = 1 };

struct cli_opt {
	const char *name; /* long name without "--" */
	int short_name;   /* single letter or 0 */
	const char *arg;  /* placeholder such as "<n>", NULL for a flag */
	const char *help; /* one line */
	int id;           /* returned by cli_next; must be > 0 */
	unsigned flags;   /* CLI_MULTI */
};

struct cli_cmd {
	const char *name;           /* "ppbatch" */
	const char *synopsis;       /* git notation, one or more lines */
	const char *summary;        /* one sentence */
	const struct cli_opt *opts; /* terminated by an entry with name NULL */
	const char *example;        /* one or more example lines */
	/* The lines under "exit status:" in --help, each "  N  what"; NULL for
	 * the statuses ppbatch and ppagg share (cli.c). */
	const char *exit_status;
};

struct cli_state {
	int argc;
	char **argv;
	int i;              /* next argv index */
	const char *bundle; /* rest of a bundled short-option group */
	int npos;           /* positional arguments collected so far */
	char **pos;         /* positional arguments, in order (points into argv) */
	/* Set by cli_next: */
	const char *arg; /* the option's argument (first one for CLI_MULTI) */
	char **args;     /* CLI_MULTI: all arguments, nargs of them */
	int nargs;
	const struct cli_opt *opt;
};

enum {
	CLI_END = 0,  /* no more options; positionals are in st->pos */
	CLI_ERR = -1, /* usage error, already reported on stderr */
	CLI_HELP = -2 /* --help / -h was printed on stdout */
};

/* Prepares st to walk argv[1..argc). pos is allocated with room for argc. */
void cli_init(struct cli_state *st, int argc, char **argv);
void cli_release(struct cli_state *st);
/* The id of the next option, or CLI_END / CLI_ERR / CLI_HELP. */
int cli_next(const struct cli_cmd *cmd, struct cli_state *st);
/* Every command applies its settings in one order: its defaults, then the
 * config file (--config), then the command-line flags. For that, before
 * the real walk, this walks the options once and stores the argument of the
 * last option named "config" in *path (NULL when there is none). Returns
 * CLI_END, or CLI_ERR / CLI_HELP as cli_next() (already reported: the
 * command then exits without a second walk). */
int cli_find_config(const struct cli_cmd *cmd, int argc, char **argv, const char **path);
/* Full help: synopsis, summary, options, exit codes, example. */
void cli_help(const struct cli_cmd *cmd, FILE *out);
/* "usage: <synopsis>" plus a hint, on stderr. */
void cli_usage(const struct cli_cmd *cmd);
/* Reports "invalid value for --name: ..." and returns CLI_ERR. */
int cli_bad_value(const struct cli_cmd *cmd, const struct cli_state *st, const char *why);

/* The option's argument as an integer in [min, max] into *out: 0, or
 * CLI_ERR after reporting "invalid value for --name: expected an integer
 * from MIN to MAX". */
int cli_int_arg(const struct cli_cmd *cmd, const struct cli_state *st, long min, long max,
		int *out);

/* Strict number parsers: the whole string must be a number in range. */
int cli_parse_long(const char *s, long min, long max, long *out);
int cli_parse_double(const char *s, double *out);
/* The len bytes at s as "N" or "N-M" (min <= N <= M <= max) into *lo and
 * *hi (both N for "N"): 0 or PP_EINVAL. */
int cli_parse_range(const char *s, size_t len, long min, long max, long *lo, long *hi);
/* The index of s among the words names[0..n) (exactly), or -1. */
int cli_parse_choice(const char *s, const char *const *names, int n);

/* Defines the name <-> value pair of an enum whose values 0..n-1 are named
 * by the array names[] (indexed by the enum, n its length):
 *   const char *PREFIX_name(TYPE v): names[v]; names[0], the default's
 *     name, for a value out of range;
 *   int PREFIX_parse(const char *s, TYPE *out): the value named s (exactly)
 *     into *out, 0; PP_EINVAL (util/pp.h) and *out untouched otherwise.
 * The module's header declares both. */
#define CLI_CHOICE_FUNCS(prefix, type, names)                                         \
	const char *prefix##_name(type v)                                             \
	{                                                                             \
		size_t i = (size_t)v;                                                 \
		return names[i < sizeof(names) / sizeof(*(names)) ? i : 0];           \
	}                                                                             \
	int prefix##_parse(const char *s, type *out)                                  \
	{                                                                             \
		int i = cli_parse_choice(s, names, sizeof(names) / sizeof(*(names))); \
		if (i < 0)                                                            \
			return PP_EINVAL;                                             \
		*out = (type)i;                                                       \
		return 0;                                                             \
	}

#endif
