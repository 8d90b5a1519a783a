/* gnuplot.c — see gnuplot.h. The jobs run on a proc.h runner: up to
 * `parallel` children, the next job started from the exit callback of the
 * one before. */
#include "gnuplot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/proc.h"
#include "util/pp.h"
#include "util/strbuf.h"

bool gnuplot_find(char *exe, size_t n)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		return false;
	while (*path) {
		size_t len = strcspn(path, ":");
		if (len && len + 10 < n) {
			memcpy(exe, path, len);
			memcpy(exe + len, "/gnuplot", 9);
			if (access(exe, X_OK) == 0)
				return true;
		}
		path += len + (path[len] == ':');
	}
	return false;
}

struct render {
	struct proc_runner *runner;
	struct gnuplot_job *jobs;
	size_t n, next;
	int parallel, running;
	const char *exe;
};

/* One running job: its folder and argv live until it finishes. */
struct run {
	struct render *R;
	struct gnuplot_job *job;
	struct strbuf dir;
	char *argv[3];
};

/* Removes what stands at the PNG and SVG names of script (…/x.gp). */
static void clear_outputs(const char *script)
{
	static const char *const ext[] = { ".png", ".svg" };
	size_t n = strlen(script);
	struct strbuf sb = STRBUF_INIT;
	if (n <= 3 || strcmp(script + n - 3, ".gp"))
		return;
	for (int i = 0; i < 2; i++) {
		strbuf_reset(&sb);
		strbuf_add(&sb, script, n - 3);
		strbuf_addstr(&sb, ext[i]);
		unlink(sb.buf);
	}
	strbuf_release(&sb);
}

/* gnuplot's message: from its last '"x.gp" line N: ...' line to the end
 * (a "system error: ..." may follow), lines joined with "; "; else its last
 * line that is not only blanks and the '^' marking the column (the lines
 * before repeat the script). */
static void message(const char *text, char *out, size_t n)
{
	const char *from = NULL, *last = NULL;
	for (const char *s = text; *s;) {
		size_t len = strcspn(s, "\n");
		if (strspn(s, " ^\r") < len) {
			last = s;
			if (memmem(s, len, "\" line ", 7))
				from = s;
		}
		s += len + (s[len] == '\n');
	}
	struct strbuf sb = STRBUF_INIT;
	for (const char *s = from ? from : last; s && *s;) {
		size_t len = strcspn(s, "\r\n");
		if (len && strspn(s, " ^") < len)
			strbuf_addf(&sb, "%s%.*s", sb.len ? "; " : "", (int)len, s);
		s += len;
		s += strspn(s, "\r\n");
		if (!from)
			break;
	}
	snprintf(out, n, "%s", sb.buf);
	strbuf_release(&sb);
}

static void start_jobs(struct render *R);

static void on_gnuplot_exit(struct proc *p, const struct proc_status *st)
{
	struct run *run = proc_data(p);
	struct gnuplot_job *j = run->job;
	char line[400];
	if (st->term_signal || st->exit_status != 0) {
		message(st->err, line, sizeof(line));
		j->failed = true;
		snprintf(j->why, sizeof(j->why), "gnuplot failed on '%s' (%s %d)%s%s", j->script,
			 st->term_signal ? "signal" : "exit",
			 st->term_signal ? st->term_signal : (int)st->exit_status,
			 *line ? ": " : "", line);
	}
	struct render *R = run->R;
	R->running--;
	strbuf_release(&run->dir);
	free(run);
	start_jobs(R);
}

static void start_jobs(struct render *R)
{
	char err[300];
	while (R->next < R->n && R->running < R->parallel) {
		struct gnuplot_job *j = &R->jobs[R->next++];
		const char *slash = strrchr(j->script, '/');
		struct run *run = xcalloc(1, sizeof(*run));
		run->R = R;
		run->job = j;
		strbuf_init(&run->dir, 0);
		if (slash)
			strbuf_add(&run->dir, j->script,
				   slash == j->script ? 1 : (size_t)(slash - j->script));
		else
			strbuf_addstr(&run->dir, ".");
		run->argv[0] = (char *)R->exe;
		run->argv[1] = (char *)(slash ? slash + 1 : j->script);
		clear_outputs(j->script);
		struct proc_spec spec = { run->argv, run->dir.buf, PROC_NULL,       PROC_NULL,
					  PROC_PIPE, NULL,         on_gnuplot_exit, run };
		if (proc_spawn(R->runner, &spec, NULL, err, sizeof(err))) {
			j->failed = true;
			snprintf(j->why, sizeof(j->why), "%s", err);
			strbuf_release(&run->dir);
			free(run);
			continue;
		}
		R->running++;
	}
}

int gnuplot_render(struct gnuplot_job *jobs, size_t n, int parallel, char *err, size_t errlen)
{
	char exe[4096];
	int rc;
	for (size_t i = 0; i < n; i++) {
		jobs[i].failed = false;
		jobs[i].why[0] = '\0';
	}
	if (!gnuplot_find(exe, sizeof(exe))) {
		snprintf(err, errlen, "gnuplot is not on PATH");
		return PP_ENOTFOUND;
	}
	struct render R = { NULL, jobs, n, 0, parallel < 1 ? 1 : parallel, 0, exe };
	if (!(R.runner = proc_runner_new(err, errlen)))
		return PP_EIO;
	start_jobs(&R);
	rc = proc_runner_run(R.runner, err, errlen);
	proc_runner_free(R.runner);
	return rc;
}
