/* agg_render.c — renders ppagg's chart scripts with gnuplot, `processes` at
 * a time (chart/gnuplot.h runs them, many scripts per gnuplot process); a
 * failed chart is reported with gnuplot's error line and the others go on.
 * Each script is rendered in the formats the render plan chose for it
 * (agg.c): the scripts themselves always make every --format output. */
#include "agg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart/gnuplot.h"
#include "util/pp.h"

void agg_jobs_add(struct agg_jobs *j, const char *script, bool png, bool svg)
{
	j->written++;
	if (!png && !svg)
		return;
	if (j->n == j->alloc) {
		j->alloc = j->alloc ? 2 * j->alloc : 256;
		j->v = xrealloc(j->v, j->alloc * sizeof(*j->v));
	}
	j->v[j->n++] = (struct agg_job){ xstrdup(script), png, svg };
}

void agg_jobs_release(struct agg_jobs *j)
{
	for (size_t i = 0; i < j->n; i++)
		free(j->v[i].script);
	free(j->v);
	memset(j, 0, sizeof(*j));
}

int agg_jobs_script(struct agg_jobs *j, int rc, const char *err, const char *prefix,
		    const struct agg_chart_opts *co)
{
	if (rc) {
		error("%s", err);
		return PP_EIO;
	}
	struct strbuf gp = STRBUF_INIT;
	strbuf_addf(&gp, "%s.gp", prefix);
	agg_jobs_add(j, gp.buf, co->render_png, co->render_svg);
	strbuf_release(&gp);
	return 0;
}

int agg_render(const struct agg_jobs *jobs, int processes, double *ms, bool quiet)
{
	int64_t t0 = pp_now_ns();
	char err[512];
	int failed = 0;
	*ms = 0;
	if (!jobs->n)
		return 0;
	struct gnuplot_job *job = xcalloc(jobs->n, sizeof(*job));
	for (size_t i = 0; i < jobs->n; i++)
		job[i] = (struct gnuplot_job){ .script = jobs->v[i].script,
					       .no_png = !jobs->v[i].png,
					       .no_svg = !jobs->v[i].svg };
	int rc = gnuplot_render(job, jobs->n, processes, err, sizeof(err));
	if (rc == PP_ENOTFOUND) {
		warn("gnuplot is not installed: wrote the .gp scripts but no PNG/SVG");
	} else if (rc) {
		error("%s", err);
		failed = (int)jobs->n;
	} else {
		for (size_t i = 0; i < jobs->n; i++)
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
	return failed;
}
