/* report_advice.c — the schedule advisor's part of the report
 * (docs/advisor.md §6, docs/ppagg.md "Output folder"): advice/advice.csv
 * and advice/advice_memory.csv (the views' rows), the chart
 * advice/step_memory (predicted step time against peak memory, the current
 * point marked), the section "What would another schedule give?" of
 * index.html and the best option on the summary line. A job without a
 * pipeline gets none of it (and an earlier run's files are removed).
 */
#include "report_int.h"

#include <math.h>
#include <string.h>

#include "chart/gnuplot.h"
#include "util/pp.h"

/* ---- files ---- */

/* A number of a CSV with its decimals: empty for NaN. */
static void put_num(FILE *f, double v, int decimals)
{
	if (isfinite(v))
		fprintf(f, "%.*f", decimals, v);
}

/* A text field of a CSV (report_csv_text()). */
static void put_text(FILE *f, const char *s)
{
	struct strbuf q = STRBUF_INIT;
	report_csv_text(&q, s);
	fputs(q.buf, f);
	strbuf_release(&q);
}

static const char *kind_name(enum advise_kind k)
{
	static const char *const n[] = { "current", "schedule", "microbatches", "layers" };
	return k <= ADVISE_REBALANCE ? n[k] : "?";
}

/* advice.csv: the advice view's columns, one line per row. */
static void advice_csv(FILE *f, const void *arg)
{
	const struct agg_advice *a = arg;
	const struct advise_result *r = &a->res;
	struct strbuf sb = STRBUF_INIT;
	fputs("row,schedule,vpp,microbatches,layers,step_ns,measured_step_ns,delta,bubble,"
	      "activation_memory,memory_gib,modelled,notes,valid,kind,micro_batch_size,"
	      "pipeline_ns,megatron_options,best\n",
	      f);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct advise_row *w = &r->rows[i];
		fprintf(f, "%zu,%s,%d,%d,", i, advise_row_schedule(w), w->vpp, w->microbatches);
		strbuf_reset(&sb);
		advise_layers_format(r, w, &sb);
		put_text(f, sb.buf);
		fputc(',', f);
		put_num(f, round(w->step_ns), 0);
		fprintf(f, ",%.0f,", round(r->measured_step_ns));
		put_num(f, w->delta, 6);
		fputc(',', f);
		put_num(f, w->bubble, 6);
		fputc(',', f);
		put_num(f, w->activation, 6);
		fputc(',', f);
		put_num(f, w->memory_gib, 3);
		fputc(',', f);
		strbuf_reset(&sb);
		advise_modelled_format(w->modelled, &sb);
		put_text(f, sb.buf);
		fputc(',', f);
		put_text(f, w->notes);
		fprintf(f, ",%d,%s,", w->valid, kind_name(w->kind));
		if (w->micro_batch_size > 0)
			fprintf(f, "%d", w->micro_batch_size);
		fputc(',', f);
		put_num(f, round(w->pipeline_ns), 0);
		fputc(',', f);
		put_text(f, w->knobs);
		fprintf(f, ",%d\n", (int)i == r->best);
	}
	strbuf_release(&sb);
}

/* advice_memory.csv: per row and stage. */
static void memory_csv(FILE *f, const void *arg)
{
	const struct agg_advice *a = arg;
	const struct advise_result *r = &a->res;
	struct strbuf sb = STRBUF_INIT;
	fputs("row,schedule,vpp,microbatches,layers,stage,memory_gib,measured_gib,units\n", f);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct advise_row *w = &r->rows[i];
		strbuf_reset(&sb);
		advise_layers_format(r, w, &sb);
		for (int s = 0; s < r->pp; s++) {
			fprintf(f, "%zu,%s,%d,%d,", i, advise_row_schedule(w), w->vpp,
				w->microbatches);
			put_text(f, sb.buf);
			fprintf(f, ",%d,", s);
			put_num(f, w->stage_gib ? w->stage_gib[s] : NAN, 3);
			fputc(',', f);
			put_num(f,
				i == 0 && r->memory.measured_gib ? r->memory.measured_gib[s] : NAN,
				3);
			fputc(',', f);
			put_num(f, w->stage_units ? w->stage_units[s] : NAN, 3);
			fputc('\n', f);
		}
	}
	strbuf_release(&sb);
}

struct chart_ctx {
	const struct agg_advice *a;
	const struct report_opts *o;
};

/* The x value of a row: its peak GiB with a memory fit, else its
 * activation relative to the replay's. */
static double mem_x(const struct agg_advice *a, const struct advise_row *w)
{
	return a->res.memory.ok ? w->memory_gib : w->activation;
}

/* One datablock line per valid row: x, step (ms), label, hover text, and
 * where its label goes (above and below in turn, so that close points keep
 * their labels apart). */
static void chart_data(FILE *f, const struct agg_advice *a, bool current)
{
	const struct advise_result *r = &a->res;
	struct strbuf sb = STRBUF_INIT;
	double lo = INFINITY, hi = -INFINITY;
	int n = 0;
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].valid) {
			lo = fmin(lo, r->rows[i].step_ns / 1e6);
			hi = fmax(hi, r->rows[i].step_ns / 1e6);
		}
	double dy = 0.025 * (hi > lo ? hi - lo : 1);
	fprintf(f, "$%s << EOD\n", current ? "current" : "rows");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct advise_row *w = &r->rows[i];
		if (!w->valid || (i == 0) != current || !isfinite(mem_x(a, w)))
			continue;
		strbuf_reset(&sb);
		agg_advice_label(a, w, &sb);
		fprintf(f, "%.4f %.3f %.3f ", mem_x(a, w), w->step_ns / 1e6,
			w->step_ns / 1e6 + (n++ % 2 ? -dy : dy));
		gnuplot_put_dq(f, sb.buf);
		strbuf_addf(&sb, ": %.1f ms (%+.1f %%)", w->step_ns / 1e6, 100 * w->delta);
		fputc(' ', f);
		gnuplot_put_dq(f, sb.buf);
		fputc('\n', f);
	}
	fputs("EOD\n", f);
	strbuf_release(&sb);
}

/* The advice chart's plot; svg: with the hover text. */
static void chart_plot(FILE *f, bool svg, const void *vctx)
{
	const struct chart_ctx *ctx = vctx;
	const struct advise_result *r = &ctx->a->res;
	fprintf(f,
		"set title 'What would another schedule give? (calibration %+.1f %%%s)' "
		"font 'Sans,14'\n"
		"set xlabel '%s'\nset ylabel 'predicted step time (ms)'\n"
		"set grid lc rgb '#dddddd' lt 1\nset border 3\nset xtics nomirror\n"
		"set ytics nomirror\nset key top right\nset offsets graph 0.08, graph 0.2, "
		"graph 0.08, graph 0.08\n"
		"set arrow from graph 0, first %.3f to graph 1, first %.3f nohead dt 2 "
		"lc rgb '#888888'\n",
		100 * r->calibration_error, r->calibrated ? "" : ": not ranked",
		r->memory.ok ? "predicted peak memory of the most loaded stage (GiB)"
			     : "peak activation memory, relative to the current schedule",
		r->measured_step_ns / 1e6, r->measured_step_ns / 1e6);
	fputs("plot $rows using 1:2 with points pt 7 ps 1.3 lc rgb '#1b9e77' "
	      "title 'alternatives', \\\n"
	      "     $rows using 1:3:4 with labels offset 0.8,0 left font ',9' "
	      "notitle, \\\n"
	      "     $current using 1:2 with points pt 9 ps 2.2 lc rgb '#d95f02' "
	      "title 'current (replay); dashed: measured step', \\\n"
	      "     $current using 1:2:4 with labels offset 0.8,-0.9 left font ',10' "
	      "tc rgb '#d95f02' notitle",
	      f);
	if (svg)
		fputs(", \\\n     $rows using 1:2:5 with labels hypertext point pt 7 "
		      "ps 1.5 lc rgb '#ff000000' notitle, \\\n     $current using 1:2:5 "
		      "with labels hypertext point pt 9 ps 2 lc rgb '#ff000000' notitle",
		      f);
	fputc('\n', f);
}

static int write_chart(FILE *f, const char *base, const void *vctx)
{
	const struct chart_ctx *ctx = vctx;
	fprintf(f,
		"# pptrace ppagg chart: the schedule advisor, predicted step time against "
		"peak memory. Run in this folder: gnuplot %s.gp\n",
		base);
	chart_data(f, ctx->a, false);
	chart_data(f, ctx->a, true);
	report_write_outputs(f, ctx->o, 1100, 650, base, chart_plot, ctx);
	return 0;
}

/* What a run with advice writes to advice/: a run without removes it. */
static const char *const advice_files[] = { "advice.csv", "advice_memory.csv", "step_memory.gp",
					    "step_memory.png", "step_memory.svg" };

static int report_advice_files(struct report *R)
{
	const struct agg_advice *a = &R->job->advice;
	if (a->state != AGG_ADV_DONE) {
		report_remove_stale(R, RF_ADVICE, advice_files,
				    sizeof(advice_files) / sizeof(advice_files[0]));
		return 0;
	}
	struct strbuf prefix = STRBUF_INIT;
	struct report_dir d;
	int rc = report_dir_open_at(&d, R, RF_ADVICE, 0, 0);
	if (!rc)
		rc = report_write_put(&d, RF_ADVICE_CSV, 0, 0, advice_csv, a);
	if (!rc)
		rc = report_write_put(&d, RF_ADVICE_MEMORY_CSV, 0, 0, memory_csv, a);
	if (!rc) {
		struct chart_ctx ctx = { a, R->o };
		report_path(&prefix, R, RF_ADVICE_CHART, 0, 0);
		rc = report_queue_script(
			R, gnuplot_write_script(prefix.buf, write_chart, &ctx, R->err), prefix.buf,
			AGG_SHOW_ALL);
	}
	report_dir_close(&d);
	strbuf_release(&prefix);
	return rc;
}

/* ---- the section of index.html ---- */

static void table(struct strbuf *h, const struct agg_advice *a)
{
	const struct advise_result *r = &a->res;
	struct strbuf sb = STRBUF_INIT;
	bool gib = r->memory.ok;
	strbuf_addf(h,
		    "<table><caption>Each schedule simulated with the job's measured times "
		    "(docs/advisor.md); the first row replays the schedule it ran</caption>\n"
		    "<tr><th>schedule</th><th>step (ms)</th><th>vs measured</th><th>bubble</th>"
		    "<th>activation</th>%s<th>modelled</th><th>Megatron options</th>"
		    "<th>notes</th></tr>\n",
		    gib ? "<th>peak GiB</th>" : "");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct advise_row *w = &r->rows[i];
		strbuf_reset(&sb);
		agg_advice_label(a, w, &sb);
		strbuf_addf(h, "<tr%s><td>", (int)i == r->best ? " class=\"best\"" : "");
		if ((int)i == r->best)
			strbuf_addstr(h, "<b>");
		report_html_escape(h, sb.buf);
		strbuf_addstr(h, (int)i == r->best ? " (best)</b></td>" : "</td>");
		if (w->valid) {
			strbuf_addf(
				h, "<td>%.1f</td><td>%+.1f %%</td><td>%.1f %%</td><td>%.2f</td>",
				w->step_ns / 1e6, 100 * w->delta, 100 * w->bubble, w->activation);
			if (gib)
				strbuf_addf(h, "<td>%.1f</td>", w->memory_gib);
		} else {
			strbuf_addf(h, "<td colspan=\"%d\">cannot run here</td>", gib ? 5 : 4);
		}
		strbuf_reset(&sb);
		advise_modelled_format(w->modelled, &sb);
		strbuf_addstr(h, "<td>");
		report_html_escape(h, sb.len ? sb.buf : "-");
		strbuf_addstr(h, "</td><td><code>");
		report_html_escape(h, w->knobs);
		strbuf_addstr(h, "</code></td><td>");
		report_html_escape(h, w->notes);
		strbuf_addstr(h, "</td></tr>\n");
	}
	strbuf_addstr(h, "</table>\n");
	strbuf_release(&sb);
}

static void report_advice_html(const struct report *R, struct strbuf *h)
{
	const struct agg_advice *a = &R->job->advice;
	const struct advise_result *r = &a->res;
	struct strbuf rel = STRBUF_INIT, sb = STRBUF_INIT;
	if (a->state == AGG_ADV_NONE)
		return; /* no pipeline: the note is on stderr */
	strbuf_addstr(h, "<section id=\"advice\">\n<h2>What would another schedule give?</h2>\n");
	if (a->state == AGG_ADV_FAILED) {
		report_html_not_done(h, "No advice", a->why.buf);
		return;
	}
	agg_advice_label(a, &r->rows[0], &sb);
	strbuf_addf(h,
		    "<p class=\"calibration\"><b>Calibration</b>: the replay of the schedule the "
		    "job ran (");
	report_html_escape(h, sb.buf);
	strbuf_addf(h,
		    ", PP %d, %d micro-batches) gives %.1f ms against the measured %.1f ms: "
		    "<b>%+.2f %%</b> (%s %.0f %%%s).",
		    r->pp, a->in.microbatches, r->rows[0].step_ns / 1e6, r->measured_step_ns / 1e6,
		    100 * r->calibration_error, r->calibrated ? "within" : "beyond",
		    100 * a->set.calibration_tolerance,
		    r->calibrated ? ": the answers below are ranked"
				  : ": the answers below are not ranked");
	if (r->calibration_note && *r->calibration_note) {
		strbuf_addstr(h, " ");
		report_html_escape(h, r->calibration_note);
	}
	strbuf_addstr(h, "</p>\n<p>");
	report_html_escape(h, r->best_note);
	strbuf_addstr(h, "</p>\n");
	table(h, a);
	report_html_chart_of(
		h, R, RF_ADVICE_CHART,
		"Predicted step time against peak memory; the current schedule marked, "
		"the dashed line the measured step",
		true);
	strbuf_addstr(h, "<p>Measured inputs: ");
	report_html_escape(h, a->inputs.buf);
	if (a->layers.len) {
		strbuf_addstr(h, "; layers per stage ");
		report_html_escape(h, a->layers.buf);
	}
	strbuf_addstr(h, ".");
	if (r->memory.ok)
		strbuf_addf(h,
			    " Memory fit: %.3f GiB per layer × micro-batch, common part %.2f GiB, "
			    "RMS of the residuals %.3f GiB.",
			    r->memory.gib_per_unit, r->memory.common_gib, r->memory.rms_gib);
	else if (r->memory.note && *r->memory.note) {
		strbuf_addstr(h, " No memory in GiB: ");
		report_html_escape(h, r->memory.note);
		strbuf_addstr(h, ".");
	}
	strbuf_reset(&rel);
	report_rel(&rel, RF_ADVICE_CSV, 0, 0);
	strbuf_addf(h, " Rows: <a href=\"%s\">advice.csv</a>", rel.buf);
	strbuf_reset(&rel);
	report_rel(&rel, RF_ADVICE_MEMORY_CSV, 0, 0);
	strbuf_addf(h,
		    ", per stage <a href=\"%s\">advice_memory.csv</a> (views advice and "
		    "advice_memory).</p>\n</section>\n",
		    rel.buf);
	strbuf_release(&rel);
	strbuf_release(&sb);
}

static void report_advice_headline(const struct report *R, struct strbuf *sb)
{
	const struct agg_advice *a = &R->job->advice;
	const struct advise_result *r = &a->res;
	if (a->state != AGG_ADV_DONE || r->best < 0)
		return;
	const struct advise_row *w = &r->rows[r->best];
	strbuf_addstr(sb, "advice: ");
	agg_advice_label(a, w, sb);
	strbuf_addf(sb, " %+.1f %% (calibration %+.1f %%)", 100 * w->delta,
		    100 * r->calibration_error);
}

/* ---- the text table (ppsim --from-db) ---- */

int report_advice_table(FILE *f, const struct agg_job *job, struct strbuf *err)
{
	const struct agg_advice *a = &job->advice;
	const struct advise_result *r = &a->res;
	struct strbuf sb = STRBUF_INIT;
	if (a->state != AGG_ADV_DONE) {
		return pp_err(err, PP_ENOTFOUND, "no advice for '%s': %s", job->db_path,
			      a->why.buf);
	}
	fprintf(f, "advice for %s\n", job->db_path);
	fprintf(f, "inputs: %s%s%s\n", a->inputs.buf, a->layers.len ? "; layers per stage " : "",
		a->layers.buf);
	agg_advice_label(a, &r->rows[0], &sb);
	fprintf(f,
		"calibration: %s, PP %d, %d micro-batches: replay %.1f ms against the measured "
		"%.1f ms: %+.2f %% (%s %.0f %%)%s%s\n",
		sb.buf, r->pp, a->in.microbatches, r->rows[0].step_ns / 1e6,
		r->measured_step_ns / 1e6, 100 * r->calibration_error,
		r->calibrated ? "within" : "beyond: not ranked,",
		100 * a->set.calibration_tolerance,
		r->calibration_note && *r->calibration_note ? "; " : "",
		r->calibration_note ? r->calibration_note : "");
	fprintf(f, "\n%-34s %10s %8s %7s %10s %9s  %s\n", "schedule", "step (ms)", "change",
		"bubble", "activation", "peak GiB", "modelled / notes");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct advise_row *w = &r->rows[i];
		strbuf_reset(&sb);
		agg_advice_label(a, w, &sb);
		if ((int)i == r->best)
			strbuf_addstr(&sb, " *");
		fprintf(f, "%-34s ", sb.buf);
		if (w->valid) {
			fprintf(f, "%10.1f %+7.1f%% %6.1f%% %10.2f ", w->step_ns / 1e6,
				100 * w->delta, 100 * w->bubble, w->activation);
			if (isfinite(w->memory_gib))
				fprintf(f, "%9.1f", w->memory_gib);
			else
				fprintf(f, "%9s", "-");
		} else {
			fprintf(f, "%10s %8s %7s %10s %9s", "-", "-", "-", "-", "-");
		}
		strbuf_reset(&sb);
		advise_modelled_format(w->modelled, &sb);
		fprintf(f, "  %s%s%s%s%s\n", sb.buf, sb.len && *w->notes ? "; " : "", w->notes,
			*w->knobs ? "; " : "", w->knobs);
	}
	fprintf(f, "\nbest: %s\n", r->best_note);
	strbuf_release(&sb);
	return 0;
}

const struct report_section report_advice_section = { report_advice_files, report_advice_html,
						      report_advice_headline };
