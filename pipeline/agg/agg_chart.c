/* agg_chart.c — ppagg's gnuplot scripts and per-rank CSVs (docs/semantics.md §8).
 *
 * Every chart is one self-contained script: the data inline as datablocks,
 * the boxes drawn `with boxxyerror` (never `set object`, which is
 * quadratic), text `noenhanced`, and the plot commands written once per
 * output format so that `gnuplot timeline.gp` in the chart's folder rebuilds
 * the PNG and the SVG. Timelines go through the generic Gantt emitter
 * (gantt.h); the overlap bars are written here. The SVG is `mouse
 * standalone`: each block has an invisible hypertext point at its centre
 * whose hover text names rank, category, step, start and duration.
 *
 * Rows are drawn top-down in the given order; each category occupies its
 * own vertical band of the row (agg_cat_styles), so overlapping categories
 * stay visible.
 */
#include "agg_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chart/gantt.h"
#include "chart/gnuplot.h"
#include "util/pp.h"
#include "util/safefile.h"

const struct agg_cat_style agg_cat_styles[AGG_NCATS] = {
	[AGG_CAT_BWD_COMP] = { RR_BWD_COMP, "#F29BB8", -0.34, 0.34 },
	[AGG_CAT_FWD_COMP] = { RR_FWD_COMP, "#7EA6E6", -0.28, 0.28 },
	[AGG_CAT_RECOMPUTE] = { RR_BWD_COMP_RECOMPUTE, "#5F2BEB", 0.34, 0.45 },
	[AGG_CAT_FWD_COMM] = { RR_FWD_COMM, "#E69F00", -0.45, -0.34 },
	[AGG_CAT_BWD_COMM] = { RR_BWD_COMM, "#B5403A", -0.45, -0.34 },
	[AGG_CAT_DP_COMM] = { RR_DP_COMM, "#3FC9C2", -0.20, 0.20 },
	[AGG_CAT_PP_COMM] = { RR_PP_COMM, "#9A6BC9", -0.12, 0.12 },
	[AGG_CAT_OPT_COMP] = { RR_OPT_COMP, "#0B5528", -0.07, 0.07 },
};

int agg_cat_of(enum rr_category c, bool recompute)
{
	if (recompute)
		return c == RR_BWD_COMP ? AGG_CAT_RECOMPUTE : -1;
	for (int k = 0; k < AGG_NCATS; k++)
		if (k != AGG_CAT_RECOMPUTE && agg_cat_styles[k].category == c)
			return k;
	return -1;
}

const char *agg_phase_name(enum rr_phase p)
{
	const char *n = rr_phase_name(p);
	return n ? n : "-";
}

int agg_mkdir_p(const char *path)
{
	char err[512];
	if (safe_mkdir_p(path, err, sizeof(err)))
		return error("cannot create '%s': %s", path, err), PP_EIO;
	return 0;
}

/* An output folder, open: files are created relative to fd (no path walk
 * per file); path names it in messages. */
struct outdir {
	const char *path;
	int fd;
};

/* Creates (mkdir -p, no planted symlink followed) and opens a folder. */
static int outdir_open(struct outdir *od, const char *path)
{
	char err[512];
	od->path = path;
	od->fd = -1;
	if (safe_mkdirs(AT_FDCWD, path, 0, &od->fd, err, sizeof(err)))
		return error("cannot create '%s': %s", path, err), PP_EIO;
	return 0;
}

/* Starts writing od/name through sf (a temporary file renamed into place
 * by close_file(), never following a planted symlink); path receives the
 * full name. Returns sf->fp or NULL after reporting why. */
static FILE *open_in(const struct outdir *od, const char *name, struct strbuf *path,
		     struct safefile *sf)
{
	char err[512];
	strbuf_reset(path);
	strbuf_addf(path, "%s/%s", od->path, name);
	if (safefile_open(sf, od->fd, name, err, sizeof(err))) {
		error("cannot write '%s': %s", path->buf, err);
		return NULL;
	}
	return sf->fp;
}

static int close_file(struct safefile *sf, const char *path)
{
	char err[512];
	if (safefile_commit(sf, err, sizeof(err)))
		return error("cannot write '%s': %s", path, err), PP_EIO;
	return 0;
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* Terminal lines for one format; body_fn writes the plot commands. */
static void emit_terminal(FILE *f, bool svg, int w, int h, const char *stem)
{
	if (svg)
		fprintf(f,
			"set terminal svg size %d,%d dynamic mouse standalone "
			"font 'Sans,11' noenhanced background '#ffffff'\n"
			"set output '%s.svg'\n",
			w, h, stem);
	else
		fprintf(f,
			"set terminal pngcairo size %d,%d font 'Sans,11' noenhanced "
			"background '#ffffff'\nset output '%s.png'\n",
			w, h, stem);
}

struct row {
	const struct agg_rank *r;
	const char *label;
	int64_t t0; /* time origin of this row */
};

/* Writes one timeline through the Gantt emitter (gantt.h): one row per
 * entry of rows, top-down; a dashed rule above each row whose sep flag is
 * set (model replicas); one legend class per category present. */
static int write_timeline(const struct outdir *od, const char *stem, const char *title,
			  const struct row *rows, int n, const int *sep,
			  const struct agg_chart_opts *co, const char *xlabel,
			  struct agg_jobs *jobs)
{
	struct gantt *g = gantt_new();
	int cls[AGG_NCATS];
	bool present[AGG_NCATS] = { false };
	char hover[256], err[512];
	for (int i = 0; i < n; i++)
		for (size_t b = 0; b < rows[i].r->nblocks; b++)
			present[rows[i].r->blocks[b].cat] = true;
	for (int c = 0; c < AGG_NCATS; c++)
		cls[c] = present[c]
				 ? gantt_add_class(g, rr_category_name(agg_cat_styles[c].category),
						   agg_cat_styles[c].color)
				 : -1;
	gantt_set_title(g, title);
	gantt_set_xlabel(g, xlabel);
	gantt_set_ylabel(g, "rank");
	gantt_set_formats(g, co->png, co->svg);
	gantt_set_hover_format(g, "sprintf('rank %d %s\\nstep %s %d, %d kernels\\n%.3f ms + "
				  "%.3f ms', $7, class_name[$4+1], strcol(8), $9, $10, $5, $6-$5)");
	for (int i = 0; i < n; i++) {
		const struct agg_rank *r = rows[i].r;
		int row = gantt_add_row(g, rows[i].label);
		if (sep && sep[i])
			gantt_add_rule(g, row);
		for (size_t b = 0; b < r->nblocks; b++) {
			const struct agg_block *k = &r->blocks[b];
			const struct agg_cat_style *st = &agg_cat_styles[k->cat];
			/* Row band = centre ± 0.45; y_off counts from its top. */
			double y_off = (0.45 - st->hi) / 0.9, h = (st->hi - st->lo) / 0.9;
			if (h > 1 - y_off)
				h = 1 - y_off;
			/* The words of the hover format set below. */
			snprintf(hover, sizeof(hover), "%d %s %d %d", r->in.rank,
				 agg_phase_name(k->phase), k->seq, k->kernels);
			struct gantt_box box = { row,
						 cls[k->cat],
						 ms(k->s - rows[i].t0),
						 ms(k->e - rows[i].t0),
						 y_off,
						 h,
						 NULL,
						 hover };
			gantt_add_box(g, &box);
		}
	}
	struct strbuf prefix = STRBUF_INIT;
	strbuf_addf(&prefix, "%s/%s", od->path, stem);
	int rc = agg_jobs_script(jobs, gantt_write_at(g, od->fd, od->path, stem, err, sizeof(err)),
				 err, prefix.buf, co);
	strbuf_release(&prefix);
	gantt_free(g);
	return rc;
}

/* rank_<r>/overlap: per micro-batch stacked comp-only / overlap /
 * comm-only bars and the wall-clock line, forward and backward panels. */
static int write_overlap(const struct outdir *od, const struct agg_iter *it,
			 const struct agg_rank *r, const struct agg_chart_opts *co,
			 struct agg_jobs *jobs)
{
	int nph[2] = { 0, 0 }; /* steps of RR_FWD, RR_BWD */
	for (size_t i = 0; i < r->nsteps; i++)
		if (r->steps[i].phase == RR_FWD || r->steps[i].phase == RR_BWD)
			nph[r->steps[i].phase]++;
	if (!nph[RR_FWD] && !nph[RR_BWD])
		return 0;
	struct strbuf path = STRBUF_INIT;
	struct safefile sf;
	FILE *f = open_in(od, "overlap.gp", &path, &sf);
	if (!f) {
		strbuf_release(&path);
		return PP_EIO;
	}
	fprintf(f,
		"# pptrace ppagg chart: iteration %d, rank %d, compute/communication "
		"overlap per micro-batch\n",
		it->iteration, r->in.rank);
	bool chunks = false; /* VPP > 1: steps are (chunk, micro-batch) pairs */
	for (size_t i = 0; i < r->nsteps; i++)
		chunks |= r->steps[i].chunk > 0;
	/* The hover text is composed by gnuplot from the columns, so each
	 * number is written once. */
	for (int ph = RR_FWD; ph <= RR_BWD; ph++) {
		fprintf(f,
			"$%s << EOD\n# mbs comp_only_ms overlap_ms comm_only_ms wall_ms chunk "
			"microbatch\n",
			agg_phase_name(ph));
		for (size_t i = 0; i < r->nsteps; i++) {
			const struct agg_step *s = &r->steps[i];
			if (s->phase == ph)
				fprintf(f, "%d %.6f %.6f %.6f %.6f %d %d\n", s->seq,
					ms(s->comp - s->overlap), ms(s->overlap),
					ms(s->comm - s->overlap), ms(s->wall), s->chunk,
					s->microbatch);
		}
		fputs("EOD\n", f);
	}
	int maxn = nph[RR_FWD] > nph[RR_BWD] ? nph[RR_FWD] : nph[RR_BWD];
	fprintf(f, "rank = %d\n", r->in.rank);
	fprintf(f,
		"hover(ph) = sprintf('rank %%d %%s %s\\nwall %%.3f ms\\ncomputation only "
		"%%.3f ms\\noverlap %%.3f ms\\ncommunication only %%.3f ms', rank, ph, %s, $5, "
		"$2, $3, $4)\n",
		chunks ? "step %d: chunk %d, mbs %d" : "mbs %d", chunks ? "$1, $6, $7" : "$1");
	fputs("set style fill solid 1.0 noborder\nset boxwidth 0.6\n"
	      "set grid ytics lc rgb '#dddddd' lt 1\nset ylabel 'time (ms)'\n"
	      "set yrange [0:*]\nset border 3\n"
	      "set key outside right top vertical Left reverse samplen 2\nset xtics nomirror out\n"
	      "set ytics nomirror\n",
	      f);
	fprintf(f, "set xlabel '%s'\n",
		chunks ? "step in program order (VPP: chunk and "
			 "micro-batch in the hover text)"
		       : "micro-batch (mbs)");
	fprintf(f, "set xrange [-0.7:%.1f]\n", maxn - 0.3);
	if (maxn <= 48)
		fputs("set xtics 1\n", f);
	fputs("bars(d) = sprintf(\"plot %s using 1:($2+$3+$4) with boxes lc rgb '#3FC9C2' "
	      "title 'communication only', '' using 1:($2+$3) with boxes lc rgb '#C7B3E6' "
	      "title 'overlap', '' using 1:2 with boxes lc rgb '#7EA6E6' title "
	      "'computation only', '' using 1:5 with linespoints lw 2 pt 7 ps 0.8 lc rgb "
	      "'#6A1B9A' title 'wall clock'\", d)\n"
	      "tips(d) = sprintf(\", %s using 1:5:(hover('%s')) with labels hypertext point "
	      "pt 5 ps 1.5 lc rgb '#FF000000' notitle\", d, d[2:])\n",
	      f);
	bool fmt[2] = { co->png, co->svg };
	gnuplot_write_formats(f);
	for (int k = 0; k < 2; k++) {
		if (!fmt[k])
			continue;
		gnuplot_begin_output(f, k == 1);
		emit_terminal(f, k == 1, 1400, 1000, "overlap");
		fprintf(f,
			"set multiplot layout 2,1 title \"Computation and communication overlap, "
			"rank %d, iteration %d\" font 'Sans,14'\n",
			r->in.rank, it->iteration);
		for (int ph = RR_FWD; ph <= RR_BWD; ph++) {
			const char *d = ph == RR_FWD ? "$fwd" : "$bwd";
			fprintf(f, "set title '%s'\n", ph == RR_FWD ? "Forward" : "Backward");
			if (k == 1)
				fprintf(f, "eval bars('%s').tips('%s')\n", d, d);
			else
				fprintf(f, "eval bars('%s')\n", d);
		}
		fputs("unset multiplot\nunset output\n}\n", f);
	}
	int rc = close_file(&sf, path.buf);
	if (!rc) /* not written by gnuplot_write_script(), which would */
		gnuplot_clear_outputs(path.buf);
	if (!rc)
		agg_jobs_add(jobs, path.buf, co->render_png,
			     co->render_svg && (!co->overlap_png_only || !co->render_png));
	strbuf_release(&path);
	return rc;
}

static int write_rank_csvs(const struct outdir *od, const struct agg_rank *r)
{
	struct strbuf path = STRBUF_INIT;
	struct safefile sf;
	int rc = 0;
	FILE *f = open_in(od, "steps.csv", &path, &sf);
	if (!f) {
		rc = PP_EIO;
		goto out;
	}
	fputs("phase,seq,cpu_start_ns,cpu_end_ns,start_ns,end_ns,wall_ns,comp_ns,comm_ns,"
	      "overlap_ns,comp_only_ns,comm_only_ns,kernels,chunk,microbatch\n",
	      f);
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct agg_step *s = &r->steps[i];
		fprintf(f, "%s,%d,%lld,%lld,", agg_phase_name(s->phase), s->seq,
			(long long)s->cpu_s, (long long)s->cpu_e);
		if (s->has_kernels)
			fprintf(f, "%lld,%lld,", (long long)s->s, (long long)s->e);
		else
			fputs(",,", f);
		fprintf(f, "%lld,%lld,%lld,%lld,%lld,%lld,%d,", (long long)s->wall,
			(long long)s->comp, (long long)s->comm, (long long)s->overlap,
			(long long)(s->comp - s->overlap), (long long)(s->comm - s->overlap),
			s->kernels);
		if (s->chunk >= 0)
			fprintf(f, "%d,%d\n", s->chunk, s->microbatch);
		else
			fputs(",\n", f);
	}
	if ((rc = close_file(&sf, path.buf)))
		goto out;
	f = open_in(od, "categories.csv", &path, &sf);
	if (!f) {
		rc = PP_EIO;
		goto out;
	}
	fputs("category,kernels,sum_ns,busy_ns\n", f);
	for (size_t i = 0; i < r->ncats; i++)
		fprintf(f, "%s,%lld,%lld,%lld\n", rr_category_name(r->cats[i].category),
			(long long)r->cats[i].kernels, (long long)r->cats[i].sum,
			(long long)r->cats[i].busy);
	rc = close_file(&sf, path.buf);
out:
	strbuf_release(&path);
	return rc;
}

int agg_chart_rank(const char *dir, const struct agg_iter *it, const struct agg_rank *r,
		   const struct agg_chart_opts *co, struct agg_jobs *jobs)
{
	struct outdir od;
	if (outdir_open(&od, dir))
		return PP_EIO;
	int rc = write_rank_csvs(&od, r);
	if (rc || !r->in.ok)
		goto out;
	if (r->nblocks) {
		char label[32], title[160];
		snprintf(label, sizeof(label), "rank %d", r->in.rank);
		snprintf(title, sizeof(title), "Rank %d timeline, iteration %d", r->in.rank,
			 it->iteration);
		struct row row = { r, label, r->in.win_s };
		rc = write_timeline(&od, "timeline", title, &row, 1, NULL, co,
				    "time since the rank's first GPU event (ms)", jobs);
	}
	if (!rc)
		rc = write_overlap(&od, it, r, co, jobs);
out:
	close(od.fd);
	return rc;
}

int agg_chart_rows(const char *dir, const char *title, const struct agg_iter *it, const int *ranks,
		   const int *split, int n, const struct agg_chart_opts *co, struct agg_jobs *jobs)
{
	struct outdir od;
	if (outdir_open(&od, dir))
		return PP_EIO;
	struct row *rows = xcalloc((size_t)n + 1, sizeof(*rows));
	char(*labels)[48] = xcalloc((size_t)n + 1, sizeof(*labels));
	int k = 0, rc = 0;
	int64_t t0 = INT64_MAX;
	for (int i = 0; i < n; i++) {
		const struct agg_rank *r = agg_iter_rank(it, ranks[i]);
		if (r && r->in.has_window && r->in.win_s < t0)
			t0 = r->in.win_s;
	}
	for (int i = 0; i < n; i++) {
		const struct agg_rank *r = agg_iter_rank(it, ranks[i]);
		if (!r)
			continue;
		if (split && split[i] >= 0)
			snprintf(labels[k], sizeof(labels[k]), "pp %d · rank %d", split[i],
				 r->in.rank);
		else
			snprintf(labels[k], sizeof(labels[k]), "rank %d", r->in.rank);
		rows[k] = (struct row){ r, labels[k], co->individual ? r->in.win_s : t0 };
		k++;
	}
	int *sep = NULL;
	if (split) {
		sep = xcalloc((size_t)n + 1, sizeof(int));
		for (int i = 1; i < n; i++)
			sep[i] = split[i] != split[i - 1];
	}
	char full[256];
	snprintf(full, sizeof(full), "%s (%s alignment)", title,
		 co->individual ? "individual" : "global");
	rc = write_timeline(&od, "timeline", full, rows, k, sep, co,
			    co->individual ? "time since each rank's first GPU event (ms)"
			    : split        ? "time since the replica's first GPU event (ms)"
					   : "time since the group's first GPU event (ms)",
			    jobs);
	free(sep);
	free(rows);
	free(labels);
	close(od.fd);
	return rc;
}
