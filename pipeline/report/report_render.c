/* report_render.c — the render queue and the renderer: every chart script
 * written is counted, and queued with the outputs the render plan gives it
 * (agg/agg_iter.h, struct agg_plan) of the --format ones; gnuplot then
 * renders the queue, `processes` at a time (chart/gnuplot.h runs them,
 * many scripts per gnuplot process). A failed chart is reported with
 * gnuplot's error line and the others go on. The scripts themselves always
 * make every --format output.
 */
#include "report_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart/gnuplot.h"
#include "util/pp.h"

void report_queue_add(struct report *R, const char *script, enum agg_show show)
{
	const struct report_opts *o = R->o;
	struct report_queue *q = &R->queue;
	bool on = o->render && show >= AGG_SHOW_IMAGE;
	bool png = on && o->png;
	bool svg = on && o->svg && (show == AGG_SHOW_ALL || !o->png);
	q->written++;
	if (!png && !svg)
		return;
	PP_GROW(q->v, q->n, q->alloc, 256);
	q->v[q->n++] = (struct report_script){ xstrdup(script), png, svg };
}

int report_queue_script(struct report *R, int rc, const char *prefix, enum agg_show show)
{
	if (rc)
		return PP_EIO;
	struct strbuf gp = STRBUF_INIT;
	strbuf_addf(&gp, "%s.gp", prefix);
	report_queue_add(R, gp.buf, show);
	strbuf_release(&gp);
	return 0;
}

int report_commit_script(struct report *R, struct safefile *sf, const char *path,
			 enum agg_show show)
{
	int rc = report_commit(sf, path, R->err);
	if (!rc) /* not written by gnuplot_write_script(), which would */
		gnuplot_clear_outputs(path);
	if (!rc)
		report_queue_add(R, path, show);
	return rc;
}

void report_queue_release(struct report_queue *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->v[i].path);
	free(q->v);
	memset(q, 0, sizeof(*q));
}

int report_render(const struct report_queue *q, int processes, double *ms, bool quiet,
		  struct strbuf *err)
{
	int64_t t0 = pp_now_ns();
	size_t mark = err->len;
	int failed = 0;
	*ms = 0;
	if (!q->n)
		return 0;
	struct gnuplot_job *job = xcalloc(q->n, sizeof(*job));
	for (size_t i = 0; i < q->n; i++)
		job[i] = (struct gnuplot_job){ .script = q->v[i].path,
					       .no_png = !q->v[i].png,
					       .no_svg = !q->v[i].svg };
	int rc = gnuplot_render(job, q->n, processes, err);
	if (rc == PP_ENOTFOUND) {
		strbuf_setlen(err, mark); /* a warning, not an error */
		warn("gnuplot is not installed: wrote the .gp scripts but no PNG/SVG");
	} else if (rc) {
		failed = (int)q->n;
	} else {
		for (size_t i = 0; i < q->n; i++)
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
