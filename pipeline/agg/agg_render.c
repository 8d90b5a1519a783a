/* agg_render.c — runs gnuplot over ppagg's chart scripts, several at once.
 *
 * Each job is fork + chdir(script folder) + execvp("gnuplot", script):
 * no shell, so paths are never interpreted. At most `processes` children
 * run at a time; stderr of each goes to <script>.err, which is removed when
 * gnuplot succeeds and reported (first lines) when it fails.
 */
#include "agg_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chart/gantt.h"
#include "util/pp.h"

static bool have_gnuplot(void)
{
	const char *path = getenv("PATH");
	if (!path)
		return false;
	struct strbuf sb = STRBUF_INIT;
	bool found = false;
	while (*path && !found) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		strbuf_reset(&sb);
		strbuf_add(&sb, path, n);
		strbuf_addstr(&sb, "/gnuplot");
		found = access(sb.buf, X_OK) == 0;
		path += n + (end ? 1 : 0);
	}
	strbuf_release(&sb);
	return found;
}

struct job {
	pid_t pid;
	char *script; /* full path */
};

static pid_t start(const char *script)
{
	const char *slash = strrchr(script, '/');
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	/* Child: only async-signal-safe calls until exec. */
	if (slash) {
		char dir[4096];
		size_t n = (size_t)(slash - script);
		if (n >= sizeof(dir))
			_exit(126);
		memcpy(dir, script, n);
		dir[n] = '\0';
		if (chdir(dir))
			_exit(126);
	}
	const char *base = slash ? slash + 1 : script;
	char err[512];
	size_t bl = strlen(base);
	if (bl + 5 < sizeof(err)) {
		memcpy(err, base, bl);
		memcpy(err + bl, ".err", 5);
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0666);
		if (fd >= 0) {
			dup2(fd, 2);
			close(fd);
		}
	}
	int devnull = open("/dev/null", O_RDWR);
	if (devnull >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
		close(devnull);
	}
	gantt_clear_outputs(base);
	char *argv[] = { "gnuplot", (char *)base, NULL };
	execvp("gnuplot", argv);
	_exit(127);
}

static bool finish(const char *script, int status)
{
	struct strbuf err = STRBUF_INIT;
	strbuf_addf(&err, "%s.err", script);
	bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!ok) {
		char line[300] = "";
		FILE *f = fopen(err.buf, "r");
		if (f) {
			if (!fgets(line, sizeof(line), f))
				line[0] = '\0';
			fclose(f);
		}
		line[strcspn(line, "\n")] = '\0';
		warn("gnuplot failed on '%s'%s%s (see %s)", script, *line ? ": " : "", line,
		     err.buf);
	} else {
		unlink(err.buf);
	}
	strbuf_release(&err);
	return ok;
}

int agg_render(const struct strbuf *jobs, int processes, double *ms, bool quiet)
{
	int64_t t0 = pp_now_ns();
	*ms = 0;
	if (!jobs->len)
		return 0;
	if (!have_gnuplot()) {
		warn("gnuplot is not installed: wrote the .gp scripts but no PNG/SVG");
		return 0;
	}
	if (processes < 1)
		processes = 1;
	struct job *run = calloc((size_t)processes, sizeof(*run));
	if (!run)
		return error("%s", pp_strerror(PP_ENOMEM)), 1;
	int failed = 0, active = 0;
	const char *p = jobs->buf;
	for (;;) {
		while (active < processes && *p) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			char *script = malloc(n + 1);
			if (!script) {
				failed++;
				break;
			}
			memcpy(script, p, n);
			script[n] = '\0';
			p += n + (nl ? 1 : 0);
			pid_t pid = start(script);
			if (pid < 0) {
				warn("cannot start gnuplot: %s", strerror(errno));
				free(script);
				failed++;
				continue;
			}
			for (int i = 0; i < processes; i++)
				if (!run[i].pid) {
					run[i] = (struct job){ pid, script };
					break;
				}
			active++;
		}
		if (!active)
			break;
		int status;
		pid_t pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < processes; i++)
			if (run[i].pid == pid) {
				if (!finish(run[i].script, status))
					failed++;
				free(run[i].script);
				run[i] = (struct job){ 0, NULL };
				active--;
				break;
			}
	}
	free(run);
	*ms = (double)(pp_now_ns() - t0) / 1e6;
	if (!quiet)
		fprintf(stderr, "%s: rendered %s charts in %.1f s\n", pp_progname(),
			failed ? "some" : "all", *ms / 1e3);
	return failed;
}
