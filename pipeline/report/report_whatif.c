/* report_whatif.c — the what-if analysis in the report (docs/ppagg.md,
 * "What if"), a struct report_section: the section at the top of
 * index.html (S in one sentence, S_t
 * per op group, the top workers, M_W / M_S and the verdict), the S_w
 * heatmap over the stage × replica grid (chart/heatmap.h, colour range
 * 1–1.5), the measured-against-ideal timeline of one step of the slowest
 * worker's replica (chart/gantt.h, the PP-group chart's style), and the
 * same step as Chrome trace-event JSON for Perfetto's UI: one process per
 * stage and scenario (measured, ideal), one track per worker (a second
 * track where a worker's ops overlap, since a track holds nested events
 * only), op names and micro-batch ids as args.
 *
 * The step shown is the one with the largest per-step slowdown; its ops
 * come from the engine before ppagg frees it (agg/agg_whatif.c), and so do
 * the headline of the summary line and the names of the workers.
 */
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart/gantt.h"
#include "chart/heatmap.h"
#include "model/optype.h"
#include "util/pp.h"

/* What the report's charts of the what-if show: all of them, always (few,
 * and at the top of the report). */
#define SHOW AGG_SHOW_ALL

/* Appends how the report names a worker: "rank 0 (dp 0, stage 0)" with one
 * rank per cell; "dp 1 / stage 2 (rank 5 of ranks 4-5 is the slow one)";
 * "dp 1 / stage 2 (ranks 4-5)" when no rank of the cell stands out. */
static void worker_name(const struct agg_whatif *w, const struct wi_worker *wk, struct strbuf *sb)
{
	const struct agg_wi_cell *c = agg_whatif_cell(w, wk->dp_rank, wk->stage);
	if (!c)
		strbuf_addf(sb, "rank %d (dp %d, stage %d)", (int)wk->rank, wk->dp_rank, wk->stage);
	else if (c->slow >= 0)
		strbuf_addf(sb, "dp %d / stage %d (rank %d of ranks %s is the slow one)",
			    wk->dp_rank, wk->stage, c->slow, c->ranks);
	else
		strbuf_addf(sb, "dp %d / stage %d (ranks %s)", wk->dp_rank, wk->stage, c->ranks);
}

/* The worker at (dp, stage), or NULL. */
static const struct wi_worker *worker_at(const struct whatif_result *r, int dp, int stage)
{
	for (size_t i = 0; i < r->nworkers; i++)
		if (r->workers[i].dp_rank == dp && r->workers[i].stage == stage)
			return &r->workers[i];
	return NULL;
}

/* ---- the S_w heatmap ---- */

static int sw_heatmap(struct report *R, const struct agg_whatif *w)
{
	const struct whatif_result *r = &w->r;
	struct heatmap *h = heatmap_new(w->shape.dp, w->shape.pp);
	struct strbuf hover = STRBUF_INIT;
	heatmap_set_labels(h, "What if: S_w per worker (stage x data-parallel replica)",
			   "data-parallel replica (dp_rank)", "pipeline stage", "S_w");
	heatmap_set_range(h, 1.0, 1.5);
	heatmap_set_number(h, 3, "");
	heatmap_set_formats(h, R->o->png, R->o->svg);
	for (size_t i = 0; i < r->nworkers; i++) {
		const struct wi_worker *wk = &r->workers[i];
		strbuf_reset(&hover);
		worker_name(w, wk, &hover);
		strbuf_addf(&hover, "\\nS_w %.3f\\nS_dp %.3f, S_pp %.3f", wk->s_w, wk->s_dp,
			    wk->s_pp);
		heatmap_set(h, wk->dp_rank, wk->stage, wk->s_w, hover.buf);
	}
	strbuf_release(&hover);
	struct strbuf prefix = STRBUF_INIT;
	report_path(&prefix, R, RF_WHATIF_SW, 0, 0);
	int rc = report_queue_script(R, heatmap_write(h, prefix.buf, R->err), prefix.buf, SHOW);
	strbuf_release(&prefix);
	heatmap_free(h);
	return rc;
}

/* ---- the step timeline ---- */

/* An op type's colour and band, in the PP-group chart's style: compute
 * tall, pipeline transfers thin, data-parallel collectives in between. */
static void op_style(int optype, const char **color, double *lo, double *hi)
{
	switch (optype) {
	case OP_FWD_COMPUTE: *color = "#7EA6E6", *lo = -0.28, *hi = 0.28; return;
	case OP_BWD_COMPUTE: *color = "#F29BB8", *lo = -0.34, *hi = 0.34; return;
	case OP_FWD_SEND:
	case OP_FWD_RECV:
	case OP_BWD_SEND:
	case OP_BWD_RECV: *color = "#9A6BC9", *lo = -0.12, *hi = 0.12; return;
	case OP_CLIP:
	case OP_OPTIMIZER: *color = "#0B5528", *lo = -0.07, *hi = 0.07; return;
	case OP_GC: *color = "#999999", *lo = -0.07, *hi = 0.07; return;
	default: *color = "#3FC9C2", *lo = -0.20, *hi = 0.20; return;
	}
}

static int step_chart(struct report *R, const struct agg_whatif *w, int d)
{
	const struct agg_wi_step *st = &w->step;
	int pp = w->shape.pp, cls[OP_NTYPES];
	char label[64], hover[256];
	struct gantt *g = gantt_new();
	snprintf(label, sizeof(label), "What if: step %lld of replica %d, measured and ideal",
		 (long long)w->r.step[st->index], d);
	gantt_set_title(g, label);
	gantt_set_xlabel(g, "time since the step's start (ms)");
	gantt_set_ylabel(g, "stage");
	gantt_set_formats(g, R->o->png, R->o->svg);
	for (int t = 0; t < OP_NTYPES; t++) {
		const char *color;
		double lo, hi;
		op_style(t, &color, &lo, &hi);
		cls[t] = -1;
		for (size_t v = 0; v < st->nodes && cls[t] < 0; v++)
			if (st->op[(size_t)d * st->nodes + v].optype == t)
				cls[t] = gantt_add_class(g, op_type_name(t), color);
	}
	for (int s = 0; s < pp; s++)
		for (int ideal = 0; ideal < 2; ideal++) {
			snprintf(label, sizeof(label), "stage %d %s", s,
				 ideal ? "ideal" : "measured");
			int row = gantt_add_row(g, label);
			if (ideal == 0 && s > 0)
				gantt_add_rule(g, row);
			for (size_t v = 0; v < st->nodes; v++) {
				const struct agg_wi_op *o = &st->op[(size_t)d * st->nodes + v];
				if (o->stage != s || o->placeholder || o->optype < 0 ||
				    o->optype >= OP_NTYPES || cls[o->optype] < 0)
					continue;
				const char *color;
				double lo, hi, x0 = (ideal ? o->is : o->ms) / 1e6,
					       x1 = (ideal ? o->ie : o->me) / 1e6;
				op_style(o->optype, &color, &lo, &hi);
				snprintf(hover, sizeof(hover),
					 "stage %d, dp %d, %s\\n%s, micro-batch %d, chunk %d\\n"
					 "%.3f ms + %.3f ms",
					 s, d, ideal ? "ideal" : "measured",
					 op_type_name(o->optype), (int)o->seq, (int)o->mc, x0,
					 x1 - x0);
				struct gantt_box b = { row,
						       cls[o->optype],
						       x0,
						       x1 > x0 ? x1 : x0,
						       (0.45 - hi) / 0.9,
						       (hi - lo) / 0.9,
						       NULL,
						       hover };
				gantt_add_box(g, &b);
			}
		}
	struct strbuf prefix = STRBUF_INIT;
	report_path(&prefix, R, RF_WHATIF_STEP, 0, 0);
	int rc =
		report_queue_script(R, gantt_write(g, prefix.buf, false, R->err), prefix.buf, SHOW);
	strbuf_release(&prefix);
	gantt_free(g);
	return rc;
}

/* ---- Perfetto (Chrome trace-event JSON) ---- */

/* Whether replica d goes into the JSON: every replica of a job of at most
 * 64 workers, else the replicas of the workers M_W names (at least the
 * slowest worker's). */
static bool json_replica(const struct agg_whatif *w, int d)
{
	const struct whatif_result *r = &w->r;
	if ((long)w->shape.dp * w->shape.pp <= 64)
		return true;
	size_t n = r->n_mw ? r->n_mw : 1;
	for (size_t i = 0; i < n && i < r->nworkers; i++)
		if (r->workers[i].dp_rank == d)
			return true;
	return false;
}

struct jop {
	long long s, e; /* ns, rounded: the file's µs with 3 decimals are exact */
	const struct agg_wi_op *o;
};

static int cmp_jop(const void *a, const void *b)
{
	const struct jop *x = a, *y = b;
	return x->s < y->s ? -1 : x->s > y->s ? 1 : x->e > y->e ? -1 : x->e < y->e;
}

/* The file's time origin: the earliest op it holds, measured or ideal, when
 * that is before the step's own origin -- the simulated ideal may start a
 * little before the measured step, and trace-event times are >= 0. */
static long long json_origin(const struct agg_whatif *w)
{
	const struct agg_wi_step *st = &w->step;
	long long origin = 0;
	for (int d = 0; d < st->dp; d++) {
		if (!json_replica(w, d))
			continue;
		for (size_t i = 0; i < st->nodes; i++) {
			const struct agg_wi_op *o = &st->op[(size_t)d * st->nodes + i];
			if (o->placeholder)
				continue;
			long long m = llround(o->ms), id = llround(o->is);
			origin = m < origin ? m : origin;
			origin = id < origin ? id : origin;
		}
	}
	return origin;
}

/* The events of one worker in one scenario; returns the tracks used. A
 * track keeps its events disjoint: an op that starts before the track's
 * last end goes to the next track (report_lane()). */
static int json_worker(struct report_trace *T, const struct agg_whatif *w, int d, int s, bool ideal,
		       int pid)
{
	const struct agg_wi_step *st = &w->step;
	struct jop *v = xmalloc((st->nodes + 1) * sizeof(*v));
	struct report_lanes lanes = { .n = 0 };
	char args[256];
	size_t n = 0;
	for (size_t i = 0; i < st->nodes; i++) {
		const struct agg_wi_op *o = &st->op[(size_t)d * st->nodes + i];
		if (o->stage == s && !o->placeholder) {
			long long b = llround(ideal ? o->is : o->ms),
				  e = llround(ideal ? o->ie : o->me);
			v[n++] = (struct jop){ b, e > b ? e : b, o };
		}
	}
	qsort(v, n, sizeof(*v), cmp_jop);
	for (size_t i = 0; i < n; i++) {
		int t = report_lane(&lanes, v[i].s, v[i].e);
		snprintf(args, sizeof(args),
			 "\"microbatch\":%d,\"chunk\":%d,\"op\":\"%s_%d_%d\",\"dp_rank\":%d,"
			 "\"stage\":%d",
			 (int)v[i].o->seq, (int)v[i].o->mc, op_type_name(v[i].o->optype),
			 (int)v[i].o->seq, s, d, s);
		report_trace_slice(T, pid, d * 16 + t + 1, v[i].s, v[i].e,
				   op_type_name(v[i].o->optype), ideal ? "ideal" : "measured",
				   args);
	}
	free(v);
	return lanes.n;
}

/* The step as Chrome trace-event JSON into the open folder dir. */
static int perfetto(const struct report_dir *dir, const struct agg_whatif *w)
{
	const struct whatif_result *r = &w->r;
	struct strbuf path = STRBUF_INIT, rel = STRBUF_INIT;
	struct safefile sf;
	struct report_trace T;
	char name[160];
	report_rel(&rel, RF_WHATIF_JSON, 0, 0);
	FILE *f = report_open(dir, report_leaf(rel.buf), &path, &sf);
	strbuf_release(&rel);
	if (!f) {
		strbuf_release(&path);
		return PP_EIO;
	}
	snprintf(name, sizeof(name), "\"source\":\"pptrace ppagg what-if\",\"step\":%lld",
		 (long long)r->step[w->step.index]);
	report_trace_begin(&T, f, name, json_origin(w));
	for (int s = 0; s < w->shape.pp; s++)
		for (int ideal = 0; ideal < 2; ideal++) {
			int pid = 2 * s + ideal + 1;
			snprintf(name, sizeof(name), "stage %d, %s", s,
				 ideal ? "ideal (simulated)" : "measured");
			report_trace_name(&T, pid, -1, name);
			report_trace_order(&T, pid, -1, pid);
			for (int d = 0; d < w->shape.dp; d++) {
				if (!json_replica(w, d))
					continue;
				int tracks = json_worker(&T, w, d, s, ideal, pid);
				const struct wi_worker *wk = worker_at(r, d, s);
				for (int t = 0; t < (tracks ? tracks : 1); t++) {
					snprintf(name, sizeof(name), "dp %d (rank %d)%s", d,
						 wk ? (int)wk->rank : -1, t ? " overlapping" : "");
					report_trace_name(&T, pid, d * 16 + t + 1, name);
				}
			}
		}
	report_trace_end(&T);
	int rc = report_commit(&sf, path.buf, dir->err);
	strbuf_release(&path);
	return rc;
}

/* A run without what-if files removes those an earlier run wrote, so that
 * the what-if folder never shows another run's analysis (docs/ppagg.md). */
static void remove_stale(const struct report *R)
{
	static const struct report_name names[] = {
		{ RF_WHATIF_SW, ".gp" },   { RF_WHATIF_SW, ".png" },   { RF_WHATIF_SW, ".svg" },
		{ RF_WHATIF_STEP, ".gp" }, { RF_WHATIF_STEP, ".png" }, { RF_WHATIF_STEP, ".svg" },
		{ RF_WHATIF_JSON, "" },
	};
	report_remove(R, RF_WHATIF, names, sizeof(names) / sizeof(names[0]));
}

static int report_whatif_files(struct report *R)
{
	const struct agg_whatif *w = &R->job->whatif;
	if (w->state != AGG_WI_DONE || w->r.verdict == WI_VERDICT_NONE || !w->r.nworkers ||
	    !w->step.op) {
		remove_stale(R);
		return 0;
	}
	struct report_dir d;
	int rc = report_dir_open_at(&d, R, RF_WHATIF, 0, 0);
	if (!rc)
		rc = sw_heatmap(R, w);
	if (!rc)
		rc = step_chart(R, w, w->r.workers[0].dp_rank);
	if (!rc)
		rc = perfetto(&d, w);
	report_dir_close(&d);
	return rc;
}

/* ---- the section of index.html ---- */

static int cmp_ratio_desc(const void *a, const void *b, void *ratio)
{
	const double *r = ratio;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return r[x] > r[y] ? -1 : r[x] < r[y] ? 1 : (x > y) - (x < y);
}

static void st_table(struct strbuf *h, const struct wi_decomp *g)
{
	if (!g->present || !g->n)
		return;
	size_t *idx = xmalloc(g->n * sizeof(size_t));
	for (size_t i = 0; i < g->n; i++)
		idx[i] = i;
	qsort_r(idx, g->n, sizeof(size_t), cmp_ratio_desc, g->ratio);
	strbuf_addstr(h, "<table><caption>S_t: the ideal with one op group given back its "
			 "recorded times</caption><tr><th>op group</th><th>S_t</th></tr>\n");
	for (size_t i = 0; i < g->n; i++) {
		strbuf_addstr(h, "<tr><td>");
		report_html_escape(h, wi_group_name(g->key[idx[i]]));
		strbuf_addf(h, "</td><td>%.3f</td></tr>\n", g->ratio[idx[i]]);
	}
	strbuf_addstr(h, "</table>\n");
	free(idx);
}

static void workers_table(struct strbuf *h, const struct agg_whatif *w)
{
	const struct whatif_result *r = &w->r;
	bool clock = w->has_clock && w->clock.offset_ns;
	strbuf_addf(h,
		    "<table><caption>Top workers by S_w (min of their replica's and their "
		    "stage's give-back)</caption><tr><th>rank</th>%s<th>dp</th><th>stage</th>"
		    "<th>S_w</th><th>S_dp</th><th>S_pp</th>%s</tr>\n",
		    w->cells ? "<th>cell's ranks: the slow one</th>" : "",
		    clock ? "<th>clock offset (µs)</th>" : "");
	for (size_t i = 0; i < r->nworkers && i < 10; i++) {
		const struct wi_worker *wk = &r->workers[i];
		const struct agg_wi_cell *c = agg_whatif_cell(w, wk->dp_rank, wk->stage);
		strbuf_addf(h, "<tr><td>%d%s</td>", (int)wk->rank, i < r->n_mw ? " (M_W)" : "");
		if (c && c->slow >= 0)
			strbuf_addf(h, "<td>%s: <b>rank %d</b> (compute +%.0f %%)</td>", c->ranks,
				    c->slow, 100 * c->excess);
		else if (w->cells)
			strbuf_addf(h, "<td>%s: none</td>", c ? c->ranks : "");
		strbuf_addf(h, "<td>%d</td><td>%d</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>",
			    wk->dp_rank, wk->stage, wk->s_w, wk->s_dp, wk->s_pp);
		if (clock)
			strbuf_addf(
				h, "<td>%.1f</td>",
				(double)w->clock.offset_ns[wk->stage * w->clock.dp + wk->dp_rank] /
					1e3);
		strbuf_addstr(h, "</tr>\n");
	}
	strbuf_addstr(h, "</table>\n");
}

/* What the verdict says, in the words of docs/whatif.md §6. */
static const char *verdict_meaning(enum wi_verdict v)
{
	switch (v) {
	case WI_VERDICT_WORKER:
		return "making the top 3 % of workers ideal removes at least half of the slowdown: "
		       "M_W ≥ ½";
	case WI_VERDICT_STAGE:
		return "making the last pipeline stage ideal removes at least half of the "
		       "slowdown: M_S ≥ ½";
	case WI_VERDICT_SPREAD:
		return "neither the top 3 % of workers nor the last stage remove half of the "
		       "slowdown: it is spread over the job";
	default: return "S below the threshold: nothing to explain";
	}
}

/* Which rank speaks for a cell, the clocks, and the notes: what the numbers
 * rest on (docs/whatif.md §4.1, §9.1). */
static void basis(struct strbuf *h, const struct agg_whatif *w)
{
	strbuf_addstr(h, "<p class=\"basis\">");
	if (w->ranks_per_cell > 1)
		strbuf_addf(
			h,
			"Each (replica, stage) cell holds %d ranks (TP × CP × EP); the analysis "
			"takes the %s as the cell's worker: a slow tensor-parallel partner shows "
			"through the collectives its worker waits in. A cell's slow rank is the one "
			"whose own compute (forward + backward compute kernels) is more than "
			"%.0f %% (agg.straggler_threshold) above the cell's lower median: its "
			"partners wait in communication, it computes. ",
			w->ranks_per_cell, w->cell_ops ? w->cell_ops : "lowest rank",
			100 * w->margin);
	if (w->has_clock && w->clock.offset_ns) {
		int64_t worst = 0;
		for (int i = 0; i < w->clock.dp * w->clock.pp; i++)
			if (llabs(w->clock.offset_ns[i]) > llabs(worst))
				worst = w->clock.offset_ns[i];
		strbuf_addf(
			h,
			"Clocks: offsets estimated from ops that end together (largest %.1f µs, "
			"error %.1f µs); times %s before the analysis. ",
			(double)worst / 1e3, (double)w->clock.error_ns / 1e3,
			w->clock_corrected ? "corrected" : "left as recorded (within the error)");
	}
	strbuf_addstr(h, "</p>\n");
	if (w->notes.len) {
		strbuf_addstr(h, "<details><summary>Notes of the analysis</summary><pre>");
		report_html_escape(h, w->notes.buf);
		strbuf_addstr(h, "</pre></details>\n");
	}
}

/* "Without stragglers this job would run 1.97× faster; one worker, rank 0
 * (dp 0, stage 0), explains 100 % of it." */
static void sentence(struct strbuf *h, const struct agg_whatif *w)
{
	const struct whatif_result *r = &w->r;
	strbuf_addf(h,
		    "<p class=\"headline\">Without stragglers this job would run <b>%.2f×</b> "
		    "faster",
		    r->s);
	if (r->n_mw && isfinite(r->m_w)) {
		if (r->n_mw == 1)
			strbuf_addstr(h, "; one worker, ");
		else
			strbuf_addf(h, "; %zu workers, ", r->n_mw);
		struct strbuf name = STRBUF_INIT;
		for (size_t i = 0; i < r->n_mw && i < r->nworkers; i++) {
			strbuf_reset(&name);
			worker_name(w, &r->workers[i], &name);
			strbuf_addstr(h, !i ? "" : i + 1 == r->n_mw ? " and " : ", ");
			report_html_escape(h, name.buf);
		}
		strbuf_release(&name);
		/* A share can leave [0, 1] (docs/whatif.md §5): the sentence says
		 * at most all of it, the verdict line the exact M_W. */
		double share = r->m_w < 0 ? 0 : r->m_w > 1 ? 1 : r->m_w;
		strbuf_addf(h, ", explain%s <b>%.0f %%</b> of it", r->n_mw == 1 ? "s" : "",
			    100 * share);
	}
	strbuf_addstr(h, ".</p>\n");
}

static void report_whatif_html(const struct report *R, struct strbuf *h)
{
	const struct agg_whatif *w = &R->job->whatif;
	const struct whatif_result *r = &w->r;
	struct strbuf rel = STRBUF_INIT;
	strbuf_addstr(h, "<section id=\"whatif\">\n<h2>What if</h2>\n");
	switch (w->state) {
	case AGG_WI_NO_OPS:
		strbuf_addstr(
			h,
			"<p>No what-if analysis: the aggregated traces hold no ops; " AGG_WI_OPS_FROM
			" (docs/whatif.md).</p>\n</section>\n");
		return;
	case AGG_WI_INCOMPLETE:
	case AGG_WI_REJECTED: report_html_not_done(h, "No what-if analysis", w->why.buf); return;
	case AGG_WI_DONE: break;
	}
	if (r->verdict == WI_VERDICT_NONE) {
		strbuf_addf(h,
			    "<p>What if: S = %.3f, below the %.2f threshold: no straggler worth "
			    "explaining (%zu ops).</p>\n</section>\n",
			    r->s, WHATIF_THRESHOLD, w->nops);
		return;
	}
	sentence(h, w);
	report_rel(&rel, RF_WHATIF_JSON, 0, 0);
	strbuf_addf(h,
		    "<p>Verdict: <b>%s</b> (%s). M_W = %.3f: the share of the slowdown that making "
		    "the top %zu worker%s ideal removes; M_S = %.3f: the same for the last stage. "
		    "S = mean step time without launch delays / mean step time of the ideal "
		    "(every op at its type's typical duration), over %zu step%s and %zu ops, "
		    "analysed in %.2f s (docs/whatif.md). Measured and ideal step in "
		    "Perfetto: <a href=\"%s\">%s</a> (open it at ui.perfetto.dev).</p>\n",
		    wi_verdict_name(r->verdict), verdict_meaning(r->verdict), r->m_w, r->n_mw,
		    r->n_mw == 1 ? "" : "s", r->m_s, r->nsteps, r->nsteps == 1 ? "" : "s", w->nops,
		    w->seconds, rel.buf, rel.buf);
	strbuf_addstr(h, "<div class=\"grid\">\n");
	basis(h, w);
	st_table(h, &r->by_group);
	workers_table(h, w);
	strbuf_addstr(h, "</div>\n<div class=\"grid\">\n");
	report_html_chart_of(h, R, RF_WHATIF_SW,
			     "S_w per worker over the stage × replica grid (colours from 1 to 1.5)",
			     false);
	report_html_chart_of(
		h, R, RF_WHATIF_STEP,
		"One step of the slowest worker's replica: measured, and the simulated "
		"ideal below each stage",
		false);
	strbuf_addstr(h, "</div>\n</section>\n");
	strbuf_release(&rel);
}

/* "what-if: S 1.973, verdict worker, M_W 1.002 (1 worker), M_S -0.001;
 * top workers: rank 0 (dp 0, stage 0) 1.973, ... (117216 ops in 0.21 s)"
 * (three workers), or that S is below the threshold, or that it was not
 * computed; nothing without ops. */
static void report_whatif_headline(const struct report *R, struct strbuf *sb)
{
	const struct agg_whatif *w = &R->job->whatif;
	const struct whatif_result *r = &w->r;
	switch (w->state) {
	case AGG_WI_NO_OPS: return;
	case AGG_WI_INCOMPLETE:
	case AGG_WI_REJECTED: strbuf_addstr(sb, "what-if: not computed"); return;
	case AGG_WI_DONE: break;
	}
	strbuf_addf(sb, "what-if: S %.3f", r->s);
	if (r->verdict == WI_VERDICT_NONE) {
		strbuf_addf(sb, " (below %.2f: no straggler worth explaining; %zu ops in %.2f s)",
			    WHATIF_THRESHOLD, w->nops, w->seconds);
		return;
	}
	strbuf_addf(sb, ", verdict %s, M_W %.3f (%zu worker%s), M_S %.3f; top workers:",
		    wi_verdict_name(r->verdict), r->m_w, r->n_mw, r->n_mw == 1 ? "" : "s", r->m_s);
	for (size_t i = 0; i < r->nworkers && i < 3; i++) {
		strbuf_addstr(sb, i ? ", " : " ");
		worker_name(w, &r->workers[i], sb);
		strbuf_addf(sb, " %.3f", r->workers[i].s_w);
	}
	strbuf_addf(sb, " (%zu ops in %.2f s)", w->nops, w->seconds);
}

const struct report_section report_whatif_section = { report_whatif_files, report_whatif_html,
						      report_whatif_headline };
