/* report_chart.c — ppagg's timelines and overlap charts (docs/semantics.md
 * §8): per rank, per PP group, per model replica.
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
 * own vertical band of the row (styles[]), so overlapping categories stay
 * visible. Which charts are written, and which of them rendered now, is
 * the render plan's (agg/agg_iter.h, struct agg_plan).
 */
#include "report_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart/gantt.h"
#include "chart/gnuplot.h"
#include "util/pp.h"

/* How a drawn category (enum agg_cat) looks: its colour and its box's
 * extent relative to the row centre. */
static const struct style {
	const char *color; /* "#rrggbb" */
	double lo, hi;
} styles[AGG_NCATS] = {
	[AGG_CAT_BWD_COMP] = { "#F29BB8", -0.34, 0.34 },
	[AGG_CAT_FWD_COMP] = { "#7EA6E6", -0.28, 0.28 },
	[AGG_CAT_RECOMPUTE] = { "#5F2BEB", 0.34, 0.45 },
	[AGG_CAT_FWD_COMM] = { "#E69F00", -0.45, -0.34 },
	[AGG_CAT_BWD_COMM] = { "#B5403A", -0.45, -0.34 },
	[AGG_CAT_DP_COMM] = { "#3FC9C2", -0.20, 0.20 },
	[AGG_CAT_PP_COMM] = { "#9A6BC9", -0.12, 0.12 },
	[AGG_CAT_OPT_COMP] = { "#0B5528", -0.07, 0.07 },
};

const char *report_phase_name(enum rr_phase p)
{
	const char *n = rr_phase_name(p);
	return n ? n : "-";
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* Opens output svg (else the PNG) of a w × h chart written to <stem>.svg
 * or <stem>.png: gnuplot_begin_output()'s block and the terminal lines. */
static void begin_output(FILE *f, bool svg, int w, int h, const char *stem)
{
	gnuplot_begin_output(f, svg);
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

void report_write_outputs(FILE *f, const struct report_opts *o, int w, int h, const char *stem,
			  void (*plot)(FILE *f, bool svg, const void *arg), const void *arg)
{
	gnuplot_write_formats(f);
	for (int k = 0; k < 2; k++) {
		bool svg = k == 1;
		if (!(svg ? o->svg : o->png) && (o->png || o->svg))
			continue;
		begin_output(f, svg, w, h, stem);
		plot(f, svg, arg);
		fputs("unset output\n}\n", f);
	}
}

struct row {
	const struct agg_rank *r;
	const struct agg_blocks *bl;
	const char *label;
	int64_t t0; /* time origin of this row */
};

/* Writes the timeline <d>/<stem>.gp through the Gantt emitter (gantt.h):
 * one row per entry of rows, top-down; a dashed rule above each row whose
 * sep flag is set (model replicas); one legend class per category present. */
static int write_timeline(struct report *R, const struct report_dir *d, const char *stem,
			  const char *title, const struct row *rows, int n, const int *sep,
			  const char *xlabel, enum agg_show show)
{
	struct gantt *g = gantt_new();
	int cls[AGG_NCATS];
	bool present[AGG_NCATS] = { false };
	char hover[256];
	for (int i = 0; i < n; i++)
		for (size_t b = 0; b < rows[i].bl->n; b++)
			present[rows[i].bl->v[b].cat] = true;
	for (int c = 0; c < AGG_NCATS; c++)
		cls[c] = present[c] ? gantt_add_class(g, rr_category_name(agg_cat_category[c]),
						      styles[c].color)
				    : -1;
	gantt_set_title(g, title);
	gantt_set_xlabel(g, xlabel);
	gantt_set_ylabel(g, "rank");
	gantt_set_formats(g, R->o->png, R->o->svg);
	gantt_set_hover_format(g, "sprintf('rank %d %s\\nstep %s %d, %d kernels\\n%.3f ms + "
				  "%.3f ms', $7, class_name[$4+1], strcol(8), $9, $10, $5, $6-$5)");
	for (int i = 0; i < n; i++) {
		const struct agg_rank *r = rows[i].r;
		int row = gantt_add_row(g, rows[i].label);
		if (sep && sep[i])
			gantt_add_rule(g, row);
		for (size_t b = 0; b < rows[i].bl->n; b++) {
			const struct agg_block *k = &rows[i].bl->v[b];
			const struct style *st = &styles[k->cat];
			/* Row band = centre ± 0.45; y_off counts from its top. */
			double y_off = (0.45 - st->hi) / 0.9, h = (st->hi - st->lo) / 0.9;
			if (h > 1 - y_off)
				h = 1 - y_off;
			/* The words of the hover format set below. */
			snprintf(hover, sizeof(hover), "%d %s %d %d", r->in.rank,
				 report_phase_name(k->phase), k->seq, k->kernels);
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
	strbuf_addf(&prefix, "%s/%s", d->path, stem);
	int rc = report_queue_script(R, gantt_write_at(g, d->fd, d->path, stem, R->err), prefix.buf,
				     show);
	strbuf_release(&prefix);
	gantt_free(g);
	return rc;
}

/* The overlap chart's plots; title: the rank and the iteration. */
static void overlap_plot(FILE *f, bool svg, const void *title)
{
	const int *t = title;
	fprintf(f,
		"set multiplot layout 2,1 title \"Computation and communication overlap, "
		"rank %d, iteration %d\" font 'Sans,14'\n",
		t[0], t[1]);
	for (int ph = RR_FWD; ph <= RR_BWD; ph++) {
		const char *data = ph == RR_FWD ? "$fwd" : "$bwd";
		fprintf(f, "set title '%s'\n", ph == RR_FWD ? "Forward" : "Backward");
		if (svg)
			fprintf(f, "eval bars('%s').tips('%s')\n", data, data);
		else
			fprintf(f, "eval bars('%s')\n", data);
	}
	fputs("unset multiplot\n", f);
}

/* A rank's overlap chart: per micro-batch stacked comp-only / overlap /
 * comm-only bars and the wall-clock line, forward and backward panels. */
static int write_overlap(struct report *R, const struct report_dir *d, const struct agg_iter *it,
			 const struct agg_rank *r, enum agg_show show)
{
	int nph[2] = { 0, 0 }; /* steps of RR_FWD, RR_BWD */
	for (size_t i = 0; i < r->nsteps; i++)
		if (r->steps[i].phase == RR_FWD || r->steps[i].phase == RR_BWD)
			nph[r->steps[i].phase]++;
	if (!nph[RR_FWD] && !nph[RR_BWD])
		return 0;
	struct strbuf path = STRBUF_INIT, rel = STRBUF_INIT;
	struct safefile sf;
	char base[64], name[80];
	report_rel(&rel, RF_RANK_OVERLAP, it->iteration, r->in.rank);
	snprintf(base, sizeof(base), "%s", report_leaf(rel.buf));
	snprintf(name, sizeof(name), "%s.gp", base);
	strbuf_release(&rel);
	FILE *f = report_open(d, name, &path, &sf);
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
			report_phase_name(ph));
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
	const int title[2] = { r->in.rank, it->iteration };
	report_write_outputs(f, R->o, 1400, 1000, base, overlap_plot, title);
	int rc = report_commit_script(R, &sf, path.buf, show);
	strbuf_release(&path);
	return rc;
}

int report_rank_charts(struct report *R, const struct report_dir *d, const struct agg_iter *it,
		       size_t i, const struct agg_blocks *bl)
{
	const struct agg_rank *r = &it->ranks[i];
	int rc = 0;
	if (!r->in.ok)
		return 0;
	if (bl->n && it->plan.rank_timeline[i] != AGG_SHOW_NONE) {
		struct strbuf stem = STRBUF_INIT;
		char label[32], title[160];
		report_rel(&stem, RF_RANK_TIMELINE, it->iteration, r->in.rank);
		snprintf(label, sizeof(label), "rank %d", r->in.rank);
		snprintf(title, sizeof(title), "Rank %d timeline, iteration %d", r->in.rank,
			 it->iteration);
		struct row row = { r, bl, label, r->in.win_s };
		rc = write_timeline(R, d, report_leaf(stem.buf), title, &row, 1, NULL,
				    "time since the rank's first GPU event (ms)",
				    it->plan.rank_timeline[i]);
		strbuf_release(&stem);
	}
	if (!rc && it->plan.rank_overlap[i] != AGG_SHOW_NONE)
		rc = write_overlap(R, d, it, r, it->plan.rank_overlap[i]);
	return rc;
}

/* The timeline of a group's ranks (n rank ids, top-down) into output f,
 * titled title. split[i]: the PP group of ranks[i] in a model replica's
 * chart (a rule between two groups), NULL for a PP group's. */
static int group_chart(struct report *R, enum report_file f, const struct agg_iter *it, long id,
		       const struct agg_timeline *tl, const char *title, const int *ranks,
		       const int *split, int n, enum agg_show show)
{
	struct strbuf stem = STRBUF_INIT;
	report_path(&stem, R, f, it->iteration, id);
	const char *base = report_leaf(stem.buf);
	stem.buf[base - stem.buf - 1] = '\0'; /* the folder */
	struct report_dir d;
	if (report_dir_open(&d, stem.buf, R->err)) {
		strbuf_release(&stem);
		return PP_EIO;
	}
	bool individual = R->o->individual;
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
		rows[k] = (struct row){ r, &tl->rank[r - it->ranks], labels[k],
					individual ? r->in.win_s : t0 };
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
		 individual ? "individual" : "global");
	rc = write_timeline(R, &d, base, full, rows, k, sep,
			    individual ? "time since each rank's first GPU event (ms)"
			    : split    ? "time since the replica's first GPU event (ms)"
				       : "time since the group's first GPU event (ms)",
			    show);
	free(sep);
	free(rows);
	free(labels);
	report_dir_close(&d);
	strbuf_release(&stem);
	return rc;
}

int report_pp_group_chart(struct report *R, const struct agg_iter *it,
			  const struct agg_timeline *tl, size_t g)
{
	const struct topo_group *pg = &R->job->topo.groups[TOPO_PP].v[g];
	struct strbuf title = STRBUF_INIT;
	strbuf_addf(&title, "PP group %zu, iteration %d: ranks", g, it->iteration);
	for (int s = 0; s < pg->n && s < 16; s++)
		strbuf_addf(&title, "%s%d", s ? ", " : " ", pg->ranks[s]);
	if (pg->n > 16)
		strbuf_addstr(&title, ", …");
	int rc = group_chart(R, RF_PP_GROUP_TIMELINE, it, (long)g, tl, title.buf, pg->ranks, NULL,
			     pg->n, it->plan.pp_group[g]);
	strbuf_release(&title);
	return rc;
}

static bool group_complete(const struct agg_iter *it, const struct topo_group *g)
{
	for (int i = 0; i < g->n; i++) {
		const struct agg_rank *r = agg_iter_rank(it, g->ranks[i]);
		if (!r || !r->in.ok)
			return false;
	}
	return true;
}

int report_model_group_chart(struct report *R, const struct agg_iter *it,
			     const struct agg_timeline *tl, size_t m)
{
	const struct topology *t = &R->job->topo;
	const struct topo_group *mg = &t->groups[TOPO_MODEL].v[m];
	if (!group_complete(it, mg) || !mg->n)
		return 0;
	int *rows = xmalloc((size_t)mg->n * sizeof(int));
	int *split = xmalloc((size_t)mg->n * sizeof(int));
	int n = 0;
	/* PP groups whose first rank is in this replica, in topology order. */
	for (size_t g = 0; g < t->groups[TOPO_PP].n; g++) {
		const struct topo_group *pg = &t->groups[TOPO_PP].v[g];
		int r0 = pg->ranks[0];
		if (r0 >= t->nrank || t->model_of[r0] != (int)m)
			continue;
		for (int s = 0; s < pg->n && n < mg->n; s++) {
			rows[n] = pg->ranks[s];
			split[n++] = (int)g;
		}
	}
	char title[160];
	snprintf(title, sizeof(title), "Model replica %zu, iteration %d: %d ranks", m,
		 it->iteration, n);
	int rc = group_chart(R, RF_MODEL_GROUP_TIMELINE, it, (long)m, tl, title, rows, split, n,
			     it->plan.model_group[m]);
	free(rows);
	free(split);
	return rc;
}
