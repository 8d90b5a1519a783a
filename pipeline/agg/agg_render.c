/* agg_render.c — renders ppagg's chart scripts with gnuplot, `processes` at
 * a time (chart/gnuplot.h runs them); a failed chart is reported with
 * gnuplot's error line and the others go on. */
#include "agg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart/gnuplot.h"
#include "util/pp.h"

int agg_render(const struct strbuf *jobs, int processes, double *ms, bool quiet)
{
	int64_t t0 = pp_now_ns();
	char err[512];
	size_t n = 0;
	int failed = 0;
	*ms = 0;
	if (!jobs->len)
		return 0;
	/* One script per line: a copy to cut into NUL-terminated paths. */
	char *list = xstrdup(jobs->buf);
	for (const char *s = list; *s; s++)
		n += *s == '\n' || !s[1];
	struct gnuplot_job *job = xcalloc(n, sizeof(*job));
	n = 0;
	for (char *s = list, *next; *s; s = next) {
		size_t len = strcspn(s, "\n");
		next = s + len + (s[len] == '\n');
		s[len] = '\0';
		job[n++].script = s;
	}
	int rc = gnuplot_render(job, n, processes, err, sizeof(err));
	if (rc == PP_ENOTFOUND) {
		warn("gnuplot is not installed: wrote the .gp scripts but no PNG/SVG");
	} else if (rc) {
		error("%s", err);
		failed = (int)n;
	} else {
		for (size_t i = 0; i < n; i++)
			if (job[i].failed) {
				warn("%s", job[i].why);
				failed++;
			}
		*ms = (double)(pp_now_ns() - t0) / 1e6;
		if (!quiet)
			fprintf(stderr, "%s: rendered %s charts in %.1f s\n", pp_progname(),
				failed ? "some" : "all", *ms / 1e3);
	}
	free(job);
	free(list);
	return failed;
}
