/* gnuplot.c — see gnuplot.h. The jobs run on a proc.h runner, at most
 * `parallel` gnuplot processes at a time:
 *
 *   batch process: stdin ◄── one job's commands ── next job from the queue
 *                  stdout ──► "pptrace-done <errno>" ─┘  (0: rendered)
 *                  end of queue: stdin closed, gnuplot exits
 *   single process: `gnuplot -e 'pp_png=…' x.gp` in the script's folder,
 *                  for a job that failed in a batch, was running when its
 *                  batch process died, or whose folder cannot be quoted
 *
 * A job is started only after the one before it in the same process is
 * done, so the queue is shared fairly between the processes.
 */
#include "gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/proc.h"
#include "util/pp.h"
#include "util/safefile.h"
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

void gnuplot_write_formats(FILE *f)
{
	fputs("# Outputs: PNG and SVG unless pp_png/pp_svg are set to 0 first,\n"
	      "# e.g. gnuplot -e 'pp_svg=0' <this script>.\n"
	      "if (!exists(\"pp_png\")) pp_png = 1\n"
	      "if (!exists(\"pp_svg\")) pp_svg = 1\n",
	      f);
}

void gnuplot_begin_output(FILE *f, bool svg)
{
	fputs(svg ? "if (pp_svg) {\n" : "if (pp_png) {\n", f);
}

void gnuplot_put_sq(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; s && *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
	fputc('\'', f);
}

void gnuplot_put_dq(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++)
		fputc(*s == '"' ? '\'' : (unsigned char)*s < 0x20 ? ' ' : *s, f);
	fputc('"', f);
}

void gnuplot_put_titles(FILE *f, const char *const what[], const char *const text[], int n,
			int title_pt, int label_pt)
{
	for (int i = 0; i < n; i++) {
		if (!text[i])
			continue;
		fprintf(f, "set %s ", what[i]);
		gnuplot_put_sq(f, text[i]);
		fprintf(f, " font ',%d'\n", i ? label_pt : title_pt);
	}
}

/* Removes what stands at stem.png and stem.svg in dirfd (AT_FDCWD: stem
 * is a path): the images of a script written anew are an earlier run's. */
static void clear_outputs_at(int dirfd, const char *stem)
{
	static const char *const ext[] = { ".png", ".svg" };
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < 2; i++) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s%s", stem, ext[i]);
		unlinkat(dirfd, sb.buf, 0);
	}
	strbuf_release(&sb);
}

void gnuplot_clear_outputs(const char *script)
{
	size_t n = strlen(script);
	if (n <= 3 || strcmp(script + n - 3, ".gp"))
		return;
	char *stem = xstrdup(script);
	stem[n - 3] = '\0';
	clear_outputs_at(AT_FDCWD, stem);
	free(stem);
}

/* Writes the script into sf (opened: path names it, stem is its name less
 * ".gp" in dirfd), commits it and clears its earlier images. */
static int write_opened(struct safefile *sf, const char *path, int dirfd, const char *stem,
			const char *base, int (*write)(FILE *f, const char *base, const void *ctx),
			const void *ctx, struct strbuf *err)
{
	size_t mark = err->len;
	if (write(sf->fp, base, ctx) || ferror(sf->fp)) {
		safefile_abort(sf);
		return pp_err(err, PP_EIO, "cannot write '%s': %s", path, strerror(errno));
	}
	if (safefile_commit(sf, err))
		return pp_err_prefix(err, mark, PP_EIO, "cannot write '%s': ", path);
	clear_outputs_at(dirfd, stem);
	return 0;
}

int gnuplot_write_script(const char *prefix,
			 int (*write)(FILE *f, const char *base, const void *ctx), const void *ctx,
			 struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	const char *slash = strrchr(prefix, '/');
	const char *base = slash ? slash + 1 : prefix;
	struct safefile sf;
	size_t mark = err->len;
	int rc;
	if (!*base)
		return pp_err(err, PP_EINVAL, "output prefix '%s' names a folder, not a file",
			      prefix);
	strbuf_addf(&path, "%s.gp", prefix);
	if (safefile_open_path(&sf, path.buf, err))
		rc = pp_err_prefix(err, mark, PP_EIO, "cannot write '%s': ", path.buf);
	else
		rc = write_opened(&sf, path.buf, AT_FDCWD, prefix, base, write, ctx, err);
	strbuf_release(&path);
	return rc;
}

int gnuplot_write_script_at(int dirfd, const char *dir, const char *base,
			    int (*write)(FILE *f, const char *base, const void *ctx),
			    const void *ctx, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT, name = STRBUF_INIT;
	struct safefile sf;
	size_t mark = err->len;
	int rc;
	strbuf_addf(&path, "%s/%s.gp", dir, base);
	strbuf_addf(&name, "%s.gp", base);
	if (safefile_open(&sf, dirfd, name.buf, err))
		rc = pp_err_prefix(err, mark, PP_EIO, "cannot write '%s': ", path.buf);
	else
		rc = write_opened(&sf, path.buf, dirfd, base, base, write, ctx, err);
	strbuf_release(&path);
	strbuf_release(&name);
	return rc;
}

struct render {
	struct proc_runner *runner;
	struct gnuplot_job *jobs;
	size_t n, next;              /* the batch queue: jobs[next..n) */
	struct gnuplot_job **single; /* jobs to run alone */
	size_t nsingle, asingle;
	int parallel, running;
	const char *exe;
	char cwd[PATH_MAX];
};

/* One gnuplot process: a batch worker (job = the script in flight, or
 * NULL) or a single run. */
struct run {
	struct render *R;
	struct proc *p;
	struct gnuplot_job *job;
	bool batch;
	struct strbuf dir, cmd;
	char *argv[5];
};

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

/* The folder of a script into dir ("." when it has none). */
static void script_dir(const char *script, struct strbuf *dir)
{
	const char *slash = strrchr(script, '/');
	strbuf_reset(dir);
	if (slash)
		strbuf_add(dir, script, slash == script ? 1 : (size_t)(slash - script));
	else
		strbuf_addstr(dir, ".");
}

static const char *script_base(const char *script)
{
	const char *slash = strrchr(script, '/');
	return slash ? slash + 1 : script;
}

/* A batch process quotes the folder and name in single quotes (where ''
 * is a quote); a line break or other control character cannot be quoted,
 * so such a script runs alone. */
static bool batchable(const char *script)
{
	for (const unsigned char *s = (const unsigned char *)script; *s; s++)
		if (*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

static void add_single(struct render *R, struct gnuplot_job *j)
{
	PP_GROW(R->single, R->nsingle, R->asingle, 8);
	R->single[R->nsingle++] = j;
}

static void formats_cmd(struct strbuf *sb, const struct gnuplot_job *j)
{
	strbuf_addf(sb, "pp_png=%d; pp_svg=%d", j->no_png ? 0 : 1, j->no_svg ? 0 : 1);
}

/* Gives a batch process its next job, or closes its stdin at the end of
 * the queue. */
static void feed(struct run *run)
{
	struct render *R = run->R;
	run->job = NULL;
	while (R->next < R->n && !batchable(R->jobs[R->next].script))
		add_single(R, &R->jobs[R->next++]);
	if (R->next >= R->n) {
		proc_close_stdin(run->p);
		return;
	}
	struct gnuplot_job *j = run->job = &R->jobs[R->next++];
	struct strbuf *c = &run->cmd;
	gnuplot_clear_outputs(j->script);
	script_dir(j->script, &run->dir);
	strbuf_reset(c);
	strbuf_addstr(c, "reset session\nreset errors\nset print '-'\ncd ");
	if (run->dir.buf[0] != '/') {
		struct strbuf abs = STRBUF_INIT;
		strbuf_addf(&abs, "%s/%s", R->cwd, run->dir.buf);
		strbuf_add_quoted(c, abs.buf, '\'');
		strbuf_release(&abs);
	} else {
		strbuf_add_quoted(c, run->dir.buf, '\'');
	}
	strbuf_addch(c, '\n');
	formats_cmd(c, j);
	strbuf_addstr(c, "\nload ");
	strbuf_add_quoted(c, script_base(j->script), '\'');
	strbuf_addstr(c, "\nprint sprintf('pptrace-done %d', GPVAL_ERRNO)\n");
	proc_write(run->p, c->buf, c->len);
}

static void on_batch_line(struct proc *p, char *line, size_t len)
{
	struct run *run = proc_data(p);
	(void)len;
	if (strncmp(line, "pptrace-done ", 13) || !run->job)
		return;
	if (strcmp(line + 13, "0"))
		add_single(run->R, run->job); /* failed: again alone, for its message */
	feed(run);
}

static void start_jobs(struct render *R);

static void release_run(struct run *run)
{
	strbuf_release(&run->dir);
	strbuf_release(&run->cmd);
	free(run);
}

static void on_gnuplot_exit(struct proc *p, const struct proc_status *st)
{
	struct run *run = proc_data(p);
	struct gnuplot_job *j = run->job;
	struct render *R = run->R;
	char line[400];
	if (run->batch) {
		if (j) /* it died with a script in flight */
			add_single(R, j);
	} else if (st->term_signal || st->exit_status != 0) {
		message(st->err, line, sizeof(line));
		j->failed = true;
		snprintf(j->why, sizeof(j->why), "gnuplot failed on '%s' (%s %d)%s%s", j->script,
			 st->term_signal ? "signal" : "exit",
			 st->term_signal ? st->term_signal : (int)st->exit_status,
			 *line ? ": " : "", line);
	}
	R->running--;
	release_run(run);
	start_jobs(R);
}

static bool spawn(struct render *R, struct run *run, enum proc_stdio in, enum proc_stdio out,
		  void (*on_line)(struct proc *, char *, size_t))
{
	struct strbuf err = STRBUF_INIT;
	struct proc_spec spec = { run->argv, run->dir.buf,    in,  out, PROC_PIPE,
				  on_line,   on_gnuplot_exit, run, NULL };
	if (proc_spawn(R->runner, &spec, &run->p, &err)) {
		if (run->job) {
			run->job->failed = true;
			snprintf(run->job->why, sizeof(run->job->why), "%s", err.buf);
		}
		strbuf_release(&err);
		return false;
	}
	R->running++;
	return true;
}

static void start_single(struct render *R, struct gnuplot_job *j)
{
	struct run *run = xcalloc(1, sizeof(*run));
	run->R = R;
	run->job = j;
	strbuf_init(&run->dir, 0);
	strbuf_init(&run->cmd, 0);
	script_dir(j->script, &run->dir);
	formats_cmd(&run->cmd, j);
	run->argv[0] = (char *)R->exe;
	run->argv[1] = "-e";
	run->argv[2] = run->cmd.buf;
	run->argv[3] = (char *)script_base(j->script);
	gnuplot_clear_outputs(j->script);
	if (!spawn(R, run, PROC_NULL, PROC_NULL, NULL))
		release_run(run);
}

static void start_batch(struct render *R)
{
	struct run *run = xcalloc(1, sizeof(*run));
	run->R = R;
	run->batch = true;
	strbuf_init(&run->dir, 0);
	strbuf_init(&run->cmd, 0);
	strbuf_addstr(&run->dir, R->cwd);
	run->argv[0] = (char *)R->exe;
	if (!spawn(R, run, PROC_PIPE, PROC_PIPE, on_batch_line)) {
		/* Nothing ran: every job left is reported as not started. */
		for (; R->next < R->n; R->next++) {
			R->jobs[R->next].failed = true;
			snprintf(R->jobs[R->next].why, sizeof(R->jobs[R->next].why),
				 "cannot start gnuplot for '%s'", R->jobs[R->next].script);
		}
		release_run(run);
		return;
	}
	feed(run);
}

static void start_jobs(struct render *R)
{
	while (R->running < R->parallel) {
		if (R->nsingle)
			start_single(R, R->single[--R->nsingle]);
		else if (R->next < R->n)
			start_batch(R);
		else
			break;
	}
}

int gnuplot_render(struct gnuplot_job *jobs, size_t n, int parallel, struct strbuf *err)
{
	char exe[4096];
	int rc;
	for (size_t i = 0; i < n; i++) {
		jobs[i].failed = false;
		jobs[i].why[0] = '\0';
	}
	if (!gnuplot_find(exe, sizeof(exe))) {
		return pp_err(err, PP_ENOTFOUND, "gnuplot is not on PATH");
	}
	struct render R = {
		.jobs = jobs, .n = n, .parallel = parallel < 1 ? 1 : parallel, .exe = exe
	};
	if (!getcwd(R.cwd, sizeof(R.cwd))) {
		return pp_err(err, PP_EIO, "cannot find the current folder");
	}
	if (!(R.runner = proc_runner_new(err)))
		return PP_EIO;
	start_jobs(&R);
	rc = proc_runner_run(R.runner, err);
	proc_runner_free(R.runner);
	free(R.single);
	return rc;
}
