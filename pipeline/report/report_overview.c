/* report_overview.c — the overview's charts (docs/ppagg.md, "Overview"):
 * per metric a heatmap over the (pipeline stage × data-parallel replica)
 * grid (chart/heatmap.h), each cell its worst rank's value and named in the
 * hover text, and the step times per stage. The numbers are the data
 * layer's (agg_overview.c, struct agg_overview).
 */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "chart/gnuplot.h"
#include "chart/heatmap.h"
#include "util/cmp.h"
#include "util/pp.h"

/* The lower median of the n values of v that are not NaN (v is sorted in
 * place); NaN when there is none. */
static double median_of(double *v, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]))
			v[k++] = v[i];
	if (!k)
		return NAN;
	qsort(v, k, sizeof(*v), cmp_double);
	return v[(k - 1) / 2];
}

/* Value of metric m in cell (s, d); NaN without data. */
static double cell_value(const struct agg_overview *ov, int s, int d, enum agg_metric m)
{
	const struct agg_cell *c = &ov->cells[(size_t)s * (size_t)ov->nrep + (size_t)d];
	return c->rank[m] < 0 ? NAN : c->v[m];
}

/* Anchors the colour scale of metric m (docs/ppagg.md, "Overview"): each
 * stage's row against its median cell, at least a half width that noise
 * stays within: for compute and idle (ms) the straggler threshold of the
 * median compute cell, for the bubble share the threshold times 50
 * percentage points (5 at 0.10). Coverage keeps its fixed scale. */
static void anchor_scale(struct heatmap *h, const struct agg_overview *ov, double threshold,
			 enum agg_metric m)
{
	size_t ncell = (size_t)ov->nstage * (size_t)ov->nrep;
	double *v = xmalloc((ncell + 1) * sizeof(*v));
	double *centre = xmalloc(((size_t)ov->nstage + 1) * sizeof(*centre));
	for (int s = 0; s < ov->nstage; s++) {
		for (int d = 0; d < ov->nrep; d++)
			v[d] = cell_value(ov, s, d, m);
		centre[s] = median_of(v, (size_t)ov->nrep);
	}
	double half = 50 * threshold;
	if (m != AGG_M_BUBBLE) {
		for (size_t i = 0; i < ncell; i++)
			v[i] = cell_value(ov, (int)(i / (size_t)ov->nrep),
					  (int)(i % (size_t)ov->nrep), AGG_M_COMPUTE);
		double mc = median_of(v, ncell);
		half = isnan(mc) ? 0 : threshold * mc;
	}
	heatmap_set_centres(h, centre, half);
	free(centre);
	free(v);
}

static int heatmap_chart(struct report *R, const struct agg_iter *it, enum agg_metric m)
{
	const struct agg_overview *ov = &it->ov;
	const struct agg_metric_info *mi = &agg_metrics[m];
	struct heatmap *h = heatmap_new(ov->nrep, ov->nstage);
	char title[160], hover[256];
	snprintf(title, sizeof(title), "%s, iteration %d (worst rank of each cell)", mi->title,
		 it->iteration);
	heatmap_set_labels(h, title, "data-parallel replica", "pipeline stage",
			   m == AGG_M_COVERAGE ? mi->title : "vs its stage's median");
	heatmap_set_scale(h, mi->low_bad ? HEATMAP_LOW_BAD : HEATMAP_HIGH_BAD);
	heatmap_set_number(h, 1, mi->unit);
	heatmap_set_formats(h, R->o->png, R->o->svg);
	double lowest = 100;
	for (int s = 0; s < ov->nstage; s++)
		for (int d = 0; d < ov->nrep; d++) {
			const struct agg_cell *c =
				&ov->cells[(size_t)s * (size_t)ov->nrep + (size_t)d];
			if (c->rank[m] < 0) {
				snprintf(hover, sizeof(hover),
					 "stage %d, replica %d\\nno data (%d rank%s)", s, d,
					 c->nranks, c->nranks == 1 ? "" : "s");
				heatmap_set(h, d, s, NAN, hover);
				continue;
			}
			snprintf(hover, sizeof(hover),
				 "stage %d, replica %d\\nrank %d: %s %.2f%s\\n(worst of %d rank%s)",
				 s, d, c->rank[m], mi->title, c->v[m], mi->unit, c->nranks,
				 c->nranks == 1 ? "" : "s");
			heatmap_set(h, d, s, c->v[m], hover);
			lowest = c->v[m] < lowest ? c->v[m] : lowest;
		}
	/* Coverage on a fixed scale (a good trace is above 95 %): 99.9 %
	 * next to 100 % is no finding. */
	if (m == AGG_M_COVERAGE)
		heatmap_set_range(h, lowest < 80 ? floor(lowest) : 80, 100);
	else
		anchor_scale(h, ov, R->job->threshold, m);
	struct strbuf prefix = STRBUF_INIT;
	report_path(&prefix, R, RF_OVERVIEW_MAP, it->iteration, m);
	int rc = report_queue_script(R, heatmap_write(h, prefix.buf, R->err), prefix.buf,
				     it->plan.overview);
	strbuf_release(&prefix);
	heatmap_free(h);
	return rc;
}

/* steps.gp: per stage a box (quartiles) with whiskers (min, max) of every
 * step's time, and one dot per (stage, replica) cell (its slowest rank's
 * median step), shifted by replica and coloured by it: a slow stage lifts
 * its box, a slow replica puts its colour on top in every stage. */
struct steps_ctx {
	const struct agg_iter *it;
	const struct report_opts *o;
};

static void steps_data(FILE *f, const struct agg_overview *ov, bool bwd)
{
	const struct agg_dist *d = bwd ? ov->bwd : ov->fwd;
	const char *ph = bwd ? "bwd" : "fwd";
	fprintf(f, "$%s_box << EOD\n# stage min q1 median q3 max hover\n", ph);
	for (int s = 0; s < ov->nstage; s++) {
		if (!d[s].n)
			continue;
		fprintf(f,
			"%d %.6f %.6f %.6f %.6f %.6f \"stage %d, %s steps: %zu\\nmin %.3f ms\\n"
			"quartiles %.3f / %.3f / %.3f ms\\nmax %.3f ms\"\n",
			s, d[s].min, d[s].q1, d[s].med, d[s].q3, d[s].max, s, ph, d[s].n, d[s].min,
			d[s].q1, d[s].med, d[s].q3, d[s].max);
	}
	fprintf(f, "EOD\n$%s_dot << EOD\n# x median_ms replica hover\n", ph);
	double w = 0.7;
	for (int s = 0; s < ov->nstage; s++)
		for (int r = 0; r < ov->nrep; r++) {
			const struct agg_cell *c =
				&ov->cells[(size_t)s * (size_t)ov->nrep + (size_t)r];
			double v = bwd ? c->bwd_ms : c->fwd_ms;
			int rk = bwd ? c->bwd_rank : c->fwd_rank;
			if (rk < 0)
				continue;
			double x =
				s - w / 2 + w * (ov->nrep > 1 ? (double)r / (ov->nrep - 1) : 0.5);
			fprintf(f,
				"%.4f %.6f %d \"stage %d, replica %d: rank %d\\nmedian %s step "
				"%.3f ms\"\n",
				x, v, r, s, r, rk, ph, v);
		}
	fputs("EOD\n", f);
}

static void steps_plot(FILE *f, const char *ph, bool hover)
{
	fprintf(f,
		"plot $%s_box using 1:3:2:6:5 with candlesticks whiskerbars 0.5 lw 1.2 "
		"lc rgb '#555555' fs solid 0.25 title 'all steps: quartiles, min-max', \\\n"
		"     $%s_box using 1:4:4:4:4 with candlesticks lw 2 lc rgb '#222222' notitle, \\\n"
		"     $%s_dot using 1:2:3 with points pt 7 ps 0.7 lc palette "
		"title 'per replica: slowest rank''s median'",
		ph, ph, ph);
	if (hover)
		fprintf(f,
			", \\\n     $%s_box using 1:4:7 with labels hypertext point pt 5 ps 2 "
			"lc rgb '#ff000000' notitle, \\\n     $%s_dot using 1:2:4 with labels "
			"hypertext point pt 7 ps 1 lc rgb '#ff000000' notitle",
			ph, ph);
	fputc('\n', f);
}

/* The step chart's two panels; svg: with the hover text. */
static void steps_panels(FILE *f, bool svg, const void *vctx)
{
	const struct steps_ctx *ctx = vctx;
	const struct agg_overview *ov = &ctx->it->ov;
	fprintf(f,
		"set multiplot layout 2,1 title 'Step times per pipeline stage, "
		"iteration %d' font 'Sans,14'\n",
		ctx->it->iteration);
	fprintf(f,
		"set xrange [-0.6:%.1f]\nset xtics 1 out nomirror\nset ytics nomirror\n"
		"set xlabel 'pipeline stage'\nset ylabel 'step time (ms)'\n"
		"set grid ytics lc rgb '#dddddd' lt 1\nset border 3\nset boxwidth 0.8\n"
		"set key below samplen 2\n"
		"set palette defined (0 '#1b9e77', 0.25 '#7570b3', 0.5 '#e7298a', "
		"0.75 '#66a61e', 1 '#d95f02')\n"
		"set cbrange [0:%d]\nset cblabel 'data-parallel replica'\n",
		ov->nstage - 0.4, ov->nrep > 1 ? ov->nrep - 1 : 1);
	if (ov->nrep <= 16)
		fputs("set cbtics 1\n", f);
	fputs("set title 'Forward steps'\n", f);
	steps_plot(f, "fwd", svg);
	fputs("set title 'Backward steps'\n", f);
	steps_plot(f, "bwd", svg);
	fputs("unset multiplot\n", f);
}

static int write_steps(FILE *f, const char *base, const void *vctx)
{
	const struct steps_ctx *ctx = vctx;
	const struct agg_overview *ov = &ctx->it->ov;
	int w = 300 + 60 * ov->nstage;
	w = w < 1000 ? 1000 : w > 1800 ? 1800 : w;
	fprintf(f,
		"# pptrace ppagg chart: iteration %d, step times per pipeline stage. Run in "
		"this folder: gnuplot %s.gp\n",
		ctx->it->iteration, base);
	steps_data(f, ov, false);
	steps_data(f, ov, true);
	report_write_outputs(f, ctx->o, w, 900, base, steps_panels, ctx);
	return 0;
}

int report_overview_charts(struct report *R, const struct agg_iter *it)
{
	if (!it->ov.nstage)
		return 0;
	struct strbuf path = STRBUF_INIT;
	report_path(&path, R, RF_OVERVIEW, it->iteration, 0);
	int rc = report_mkdir(path.buf, R->err);
	for (int m = 0; m < AGG_NMETRICS && !rc; m++)
		rc = heatmap_chart(R, it, m);
	if (!rc) {
		struct steps_ctx ctx = { it, R->o };
		strbuf_reset(&path);
		report_path(&path, R, RF_OVERVIEW_STEPS, it->iteration, 0);
		rc = report_queue_script(R,
					 gnuplot_write_script(path.buf, write_steps, &ctx, R->err),
					 path.buf, it->plan.overview);
	}
	strbuf_release(&path);
	return rc;
}
