/* agg_overview.c — what shows a whole job at once (docs/ppagg.md,
 * "Overview"): per rank four numbers (bubble share, forward+backward
 * compute, idle, coverage), folded onto the (pipeline stage × data-parallel
 * replica) grid, the distribution of step times per stage, the worst ranks
 * per number, and the flagged ranks whose own charts are rendered.
 *
 * Folding: a cell holds every rank of one stage of one model replica (its
 * TP, CP and EP ranks); it shows the worst of them (the highest bubble
 * share, compute and idle; the lowest coverage) and names that rank, so one
 * slow GPU is never averaged away by its healthy TP peers.
 */
#include "agg_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart/gnuplot.h"
#include "chart/heatmap.h"
#include "topology.h"
#include "util/pp.h"

const struct agg_metric_info agg_metrics[AGG_NMETRICS] = {
	[AGG_M_BUBBLE] = { "bubble", "bubble share", " %", false,
			   "group bubble / PP-group window: the share of the pipeline's time "
			   "this GPU did no work but pipeline communication" },
	[AGG_M_COMPUTE] = { "compute", "forward+backward compute", " ms", false,
			    "busy time of fwd_computation and bwd_computation kernels" },
	[AGG_M_IDLE] = { "idle", "idle time", " ms", false,
			 "PP-group window minus the GPU's busy time" },
	[AGG_M_COVERAGE] = { "coverage", "coverage", " %", true,
			     "share of GPU busy time that landed in a named category" },
};

bool agg_rank_metric(const struct agg_iter *it, const int *pp_row, size_t i, enum agg_metric m,
		     double *v)
{
	const struct agg_rank *r = &it->ranks[i];
	const struct agg_pp_row *p = pp_row && pp_row[i] >= 0 ? &it->res.pp[pp_row[i]] : NULL;
	if (!r->in.ok || !r->in.has_window)
		return false;
	switch (m) {
	case AGG_M_BUBBLE:
		if (!p || !p->has_rank || p->gw_e <= p->gw_s)
			return false;
		*v = 100.0 * (double)p->bubble / (double)(p->gw_e - p->gw_s);
		return true;
	case AGG_M_COMPUTE:
		if (!r->in.megatron)
			return false;
		*v = (double)r->in.compute / 1e6;
		return true;
	case AGG_M_IDLE: *v = (double)(p && p->has_rank ? p->idle : r->idle) / 1e6; return true;
	default: *v = 100.0 * r->coverage; return true;
	}
}

/* The index of every rank's pp_groups row, -1 for none. */
static int *pp_rows(const struct agg_iter *it)
{
	int *row = xmalloc((it->nranks + 1) * sizeof(int));
	for (size_t i = 0; i < it->nranks; i++)
		row[i] = -1;
	for (size_t k = 0; k < it->res.npp; k++) {
		const struct agg_pp_row *p = &it->res.pp[k];
		const struct agg_rank *r = agg_iter_rank(it, p->rank);
		if (r)
			row[r - it->ranks] = (int)k;
	}
	return row;
}

static bool worse(enum agg_metric m, double a, double b)
{
	return agg_metrics[m].low_bad ? a < b : a > b;
}

/* Keeps the AGG_TOP worst (value, rank) pairs, worst first. */
static void top_add(struct agg_overview *ov, enum agg_metric m, int rank, double v)
{
	int n = ov->ntop[m], k = n;
	if (n == AGG_TOP && !worse(m, v, ov->topv[m][n - 1]))
		return;
	if (n < AGG_TOP)
		ov->ntop[m]++;
	else
		k = n - 1;
	while (k > 0 && worse(m, v, ov->topv[m][k - 1])) {
		ov->topv[m][k] = ov->topv[m][k - 1];
		ov->top[m][k] = ov->top[m][k - 1];
		k--;
	}
	ov->topv[m][k] = v;
	ov->top[m][k] = rank;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Quartiles by linear interpolation between order statistics. */
static double quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)pos;
	double f = pos - (double)lo;
	return lo + 1 < n ? v[lo] + f * (v[lo + 1] - v[lo]) : v[lo];
}

static void dist_of(double *v, size_t n, struct agg_dist *d)
{
	d->n = n;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	d->min = v[0];
	d->q1 = quantile(v, n, 0.25);
	d->med = quantile(v, n, 0.5);
	d->q3 = quantile(v, n, 0.75);
	d->max = v[n - 1];
}

/* Every fwd (phase RR_FWD) or bwd step with kernels of the ranks of each
 * stage, in ms. */
static void step_dists(struct agg_iter *it, const struct topology *t, int phase,
		       struct agg_dist *out)
{
	struct agg_overview *ov = &it->ov;
	size_t *count = xcalloc((size_t)ov->nstage + 1, sizeof(size_t));
	for (size_t i = 0; i < it->nranks; i++) {
		int rk = it->ranks[i].in.rank;
		if (!it->ranks[i].in.ok || rk >= t->nrank || t->stage_of[rk] < 0 ||
		    t->stage_of[rk] >= ov->nstage)
			continue;
		for (size_t j = 0; j < it->ranks[i].nsteps; j++)
			count[t->stage_of[rk]] += it->ranks[i].steps[j].phase == phase &&
						  it->ranks[i].steps[j].has_kernels;
	}
	for (int s = 0; s < ov->nstage; s++) {
		double *v = xmalloc((count[s] + 1) * sizeof(double));
		size_t n = 0;
		for (size_t i = 0; i < it->nranks; i++) {
			int rk = it->ranks[i].in.rank;
			if (!it->ranks[i].in.ok || rk >= t->nrank || t->stage_of[rk] != s)
				continue;
			for (size_t j = 0; j < it->ranks[i].nsteps; j++) {
				const struct agg_step *st = &it->ranks[i].steps[j];
				if (st->phase == phase && st->has_kernels)
					v[n++] = (double)st->wall / 1e6;
			}
		}
		dist_of(v, n, &out[s]);
		free(v);
	}
	free(count);
}

/* Folds every rank into its (stage, replica) cell. */
static void fill_grid(struct agg_iter *it, const struct topology *t, const int *row)
{
	struct agg_overview *ov = &it->ov;
	size_t ncell = (size_t)ov->nstage * (size_t)ov->nrep;
	ov->cells = xcalloc(ncell + 1, sizeof(*ov->cells));
	for (size_t c = 0; c < ncell; c++) {
		struct agg_cell *cell = &ov->cells[c];
		for (int m = 0; m < AGG_NMETRICS; m++)
			cell->rank[m] = -1;
		cell->fwd_rank = cell->bwd_rank = -1;
		cell->fwd_ms = cell->bwd_ms = NAN;
	}
	for (size_t i = 0; i < it->nranks; i++) {
		int rk = it->ranks[i].in.rank;
		if (rk >= t->nrank || t->stage_of[rk] < 0 || t->model_of[rk] < 0 ||
		    t->stage_of[rk] >= ov->nstage || t->model_of[rk] >= ov->nrep)
			continue;
		struct agg_cell *cell = &ov->cells[(size_t)t->stage_of[rk] * (size_t)ov->nrep +
						   (size_t)t->model_of[rk]];
		const struct agg_rank_in *in = &it->ranks[i].in;
		cell->nranks++;
		for (int m = 0; m < AGG_NMETRICS; m++) {
			double v;
			if (agg_rank_metric(it, row, i, m, &v) &&
			    (cell->rank[m] < 0 || worse(m, v, cell->v[m]))) {
				cell->rank[m] = rk;
				cell->v[m] = v;
			}
		}
		if (in->ok && in->fwd_med >= 0 &&
		    (cell->fwd_rank < 0 || (double)in->fwd_med / 1e6 > cell->fwd_ms)) {
			cell->fwd_rank = rk;
			cell->fwd_ms = (double)in->fwd_med / 1e6;
		}
		if (in->ok && in->bwd_med >= 0 &&
		    (cell->bwd_rank < 0 || (double)in->bwd_med / 1e6 > cell->bwd_ms)) {
			cell->bwd_rank = rk;
			cell->bwd_ms = (double)in->bwd_med / 1e6;
		}
	}
}

void agg_overview_compute(struct agg_iter *it, const struct topology *t, const int *listed,
			  int nlisted)
{
	struct agg_overview *ov = &it->ov;
	int *row = pp_rows(it);
	ov->flag = xcalloc(it->nranks + 1, 1);
	for (int m = 0; m < AGG_NMETRICS; m++)
		for (size_t i = 0; i < it->nranks; i++) {
			double v;
			if (agg_rank_metric(it, row, i, m, &v))
				top_add(ov, m, it->ranks[i].in.rank, v);
		}
	if (t->source != TOPO_SRC_NONE && t->groups[TOPO_PP].n && t->groups[TOPO_MODEL].n &&
	    t->nrank) {
		ov->nrep = (int)t->groups[TOPO_MODEL].n;
		for (int r = 0; r < t->nrank; r++)
			if (t->stage_of[r] + 1 > ov->nstage)
				ov->nstage = t->stage_of[r] + 1;
	}
	if (ov->nstage > 0 && ov->nrep > 0) {
		fill_grid(it, t, row);
		ov->fwd = xcalloc((size_t)ov->nstage, sizeof(*ov->fwd));
		ov->bwd = xcalloc((size_t)ov->nstage, sizeof(*ov->bwd));
		step_dists(it, t, RR_FWD, ov->fwd);
		step_dists(it, t, RR_BWD, ov->bwd);
	} else {
		ov->nstage = ov->nrep = 0;
	}
	/* Flagged ranks: their own charts are rendered. */
	for (size_t s = 0; s < it->res.nstrag; s++) {
		struct agg_rank *r = agg_iter_rank(it, it->res.strag[s].rank);
		if (r)
			ov->flag[r - it->ranks] |= AGG_FLAG_STRAGGLER;
	}
	for (int m = 0; m < AGG_NMETRICS; m++)
		for (int k = 0; k < ov->ntop[m]; k++) {
			struct agg_rank *r = agg_iter_rank(it, ov->top[m][k]);
			ov->flag[r - it->ranks] |= AGG_FLAG_TOP;
		}
	for (size_t i = 0; i < it->nranks; i++)
		if (!it->ranks[i].in.ok)
			ov->flag[i] |= AGG_FLAG_FAILED;
	for (int k = 0; k < nlisted; k++) {
		struct agg_rank *r = agg_iter_rank(it, listed[k]);
		if (r)
			ov->flag[r - it->ranks] |= AGG_FLAG_LISTED;
	}
	for (size_t i = 0; i < it->nranks; i++)
		ov->nflagged += ov->flag[i] != 0;
	free(row);
}

void agg_overview_release(struct agg_overview *ov)
{
	free(ov->cells);
	free(ov->fwd);
	free(ov->bwd);
	free(ov->flag);
	memset(ov, 0, sizeof(*ov));
}

/* ---- charts ---- */

static int heatmap_chart(const char *dir, const struct agg_iter *it, enum agg_metric m,
			 const struct agg_chart_opts *co, struct agg_jobs *jobs)
{
	const struct agg_overview *ov = &it->ov;
	const struct agg_metric_info *mi = &agg_metrics[m];
	struct heatmap *h = heatmap_new(ov->nrep, ov->nstage);
	char title[160], hover[256], err[512];
	snprintf(title, sizeof(title), "%s, iteration %d (worst rank of each cell)", mi->title,
		 it->iteration);
	heatmap_set_labels(h, title, "data-parallel replica", "pipeline stage", mi->title);
	heatmap_set_scale(h, mi->low_bad ? HEATMAP_LOW_BAD : HEATMAP_HIGH_BAD);
	heatmap_set_number(h, 1, mi->unit);
	heatmap_set_formats(h, co->png, co->svg);
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
	struct strbuf prefix = STRBUF_INIT;
	strbuf_addf(&prefix, "%s/%s", dir, mi->key);
	int rc = agg_jobs_script(jobs, heatmap_write(h, prefix.buf, err, sizeof(err)), err,
				 prefix.buf, co);
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
	const struct agg_chart_opts *co;
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
	gnuplot_write_formats(f);
	bool fmt[2] = { ctx->co->png, ctx->co->svg };
	if (!fmt[0] && !fmt[1])
		fmt[0] = fmt[1] = true;
	for (int k = 0; k < 2; k++) {
		if (!fmt[k])
			continue;
		gnuplot_begin_output(f, k == 1);
		if (k)
			fprintf(f,
				"set terminal svg size %d,900 dynamic mouse standalone font 'Sans,11' "
				"noenhanced background '#ffffff'\nset output '%s.svg'\n",
				w, base);
		else
			fprintf(f,
				"set terminal pngcairo size %d,900 font 'Sans,11' noenhanced "
				"background '#ffffff'\nset output '%s.png'\n",
				w, base);
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
		steps_plot(f, "fwd", k == 1);
		fputs("set title 'Backward steps'\n", f);
		steps_plot(f, "bwd", k == 1);
		fputs("unset multiplot\nunset output\n}\n", f);
	}
	return 0;
}

int agg_chart_overview(const char *dir, const struct agg_iter *it, const struct agg_chart_opts *co,
		       struct agg_jobs *jobs)
{
	char err[512];
	if (!it->ov.nstage)
		return 0;
	if (agg_mkdir_p(dir))
		return PP_EIO;
	for (int m = 0; m < AGG_NMETRICS; m++)
		if (heatmap_chart(dir, it, m, co, jobs))
			return PP_EIO;
	struct steps_ctx ctx = { it, co };
	struct strbuf prefix = STRBUF_INIT;
	strbuf_addf(&prefix, "%s/steps", dir);
	int rc = agg_jobs_script(
		jobs, gnuplot_write_script(prefix.buf, write_steps, &ctx, err, sizeof(err)), err,
		prefix.buf, co);
	strbuf_release(&prefix);
	return rc;
}
