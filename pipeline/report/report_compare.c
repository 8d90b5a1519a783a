/* report_compare.c — the comparison with a baseline in the report
 * (docs/compare.md "In the report"), a struct report_section: the
 * "Compared with ..." section first on index.html (the sentence, the
 * summary table, the per-stage changes of the categories and the process
 * groups with the flagged ones highlighted, the ranks that differ most from
 * their stage, what was not compared) and the CSVs of the comparison's
 * views in compare/. A run without a comparison removes the CSVs an
 * earlier run wrote.
 */
#include "report_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/pp.h"

/* The files of compare/, each a view's CSV. */
static const enum report_file csv_files[] = { RF_COMPARE_SUMMARY, RF_COMPARE_CATEGORIES,
					      RF_COMPARE_OPTYPES, RF_COMPARE_GROUPS,
					      RF_COMPARE_RANKS };
enum { NCSV = sizeof(csv_files) / sizeof(csv_files[0]) };

static const char *const metric_name[CMP_NMETRICS] = { "step_ns", "bubble", "whatif_s" };

/* ---- CSVs ----------------------------------------------------------- */

/* Appends a CSV row, a field per letter of cols, each from the next
 * argument as the view stores it: 'r' a double (a ratio, "%.6f"), 'n' a
 * double of ns rounded to an integer, both empty when not finite; 'i' an
 * int (a rank, stage or flag), empty when negative; 's' a const char *, empty
 * when NULL; '-' an empty field, from no argument. */
static void put_row(struct strbuf *sb, const char *cols, ...)
{
	va_list ap;
	va_start(ap, cols);
	for (const char *c = cols; *c; c++) {
		if (c != cols)
			strbuf_addch(sb, ',');
		if (*c == 'r' || *c == 'n') {
			double v = va_arg(ap, double);
			if (isfinite(v) && *c == 'r')
				strbuf_addf(sb, "%.6f", v);
			else if (isfinite(v))
				strbuf_addf(sb, "%lld", (long long)llround(v));
		} else if (*c == 'i') {
			int v = va_arg(ap, int);
			if (v >= 0)
				strbuf_addf(sb, "%d", v);
		} else if (*c == 's') {
			report_csv_text(sb, va_arg(ap, const char *));
		}
	}
	va_end(ap);
	strbuf_addch(sb, '\n');
}

static void summary_csv(const struct agg_compare *c, struct strbuf *sb)
{
	const struct cmp_result *r = &c->r;
	strbuf_addstr(sb, "metric,base,new,change,noise,flagged,note,noise_from\n");
	for (int m = 0; m < CMP_NMETRICS; m++) {
		const struct cmp_judgement *j = &r->metric[m];
		if (!r->has_metric[m])
			continue;
		put_row(sb, "srrrri-s", metric_name[m], j->base, j->new_, j->change, j->noise,
			j->flagged, cmp_from_name(j->from));
	}
	if (r->verdict_base[0] || r->verdict_new[0])
		strbuf_addf(sb, "whatif_verdict,%s,%s,,,%d,,\n", r->verdict_base, r->verdict_new,
			    r->verdict_flagged);
	for (size_t i = 0; i < r->nshape; i++) {
		strbuf_addf(sb, "%s,%d,%d,,,1,", r->shape[i].name, r->shape[i].base,
			    r->shape[i].new_);
		report_csv_text(sb, r->shape[i].note.buf);
		strbuf_addstr(sb, ",\n");
	}
}

static void keys_csv(const struct agg_compare *c, enum cmp_dim d, struct strbuf *sb)
{
	static const char *const col[CMP_NDIMS] = { "category", "optype", "kind" };
	strbuf_addf(sb, "stage,%s,base_ns,new_ns,change,noise,flagged,noise_from\n", col[d]);
	for (size_t i = 0; i < c->r.nkeys; i++) {
		const struct cmp_key_row *k = &c->r.keys[i];
		if (k->dim != d)
			continue;
		put_row(sb, "isnnrris", k->stage, c->keys.name[d][k->key], k->j.base, k->j.new_,
			k->j.change, k->j.noise, k->j.flagged, cmp_from_name(k->j.from));
	}
}

static void ranks_csv(const struct agg_compare *c, struct strbuf *sb)
{
	strbuf_addstr(sb, "rank,stage,change,stage_change,flagged,host,base_ns,new_ns,deviation,"
			  "noise,noise_from\n");
	for (size_t i = 0; i < c->r.nranks; i++) {
		const struct cmp_rank_row *k = &c->r.rank[i];
		put_row(sb, "iirri-nnrrs", k->rank, k->stage, k->j.change, k->stage_change,
			k->j.flagged, k->j.base, k->j.new_, k->deviation, k->j.noise,
			cmp_from_name(k->j.from));
	}
}

static int report_compare_files(struct report *R)
{
	const struct agg_compare *c = &R->job->compare;
	const char *names[NCSV];
	struct strbuf rel[NCSV], sb = STRBUF_INIT;
	int rc = 0;
	for (size_t i = 0; i < NCSV; i++) {
		strbuf_init(&rel[i], 0);
		report_rel(&rel[i], csv_files[i], 0, 0);
		names[i] = report_leaf(rel[i].buf);
	}
	if (c->state != AGG_CMP_DONE)
		report_remove_stale(R, RF_COMPARE, names, NCSV);
	for (size_t i = 0; i < NCSV && c->state == AGG_CMP_DONE && !rc; i++) {
		strbuf_reset(&sb);
		switch (csv_files[i]) {
		case RF_COMPARE_SUMMARY: summary_csv(c, &sb); break;
		case RF_COMPARE_CATEGORIES: keys_csv(c, CMP_CATEGORY, &sb); break;
		case RF_COMPARE_OPTYPES: keys_csv(c, CMP_OPTYPE, &sb); break;
		case RF_COMPARE_GROUPS: keys_csv(c, CMP_GROUP, &sb); break;
		default: ranks_csv(c, &sb); break;
		}
		rc = report_write_file(R, csv_files[i], 0, 0, &sb);
	}
	for (size_t i = 0; i < NCSV; i++)
		strbuf_release(&rel[i]);
	strbuf_release(&sb);
	return rc;
}

/* ---- the section of index.html ---------------------------------------- */

#define FLAG_STYLE " style=\"background:#fdd;font-weight:bold\""

static void pct(struct strbuf *h, double v)
{
	if (isfinite(v))
		strbuf_addf(h, "%+.1f %%", 100 * v);
}

static void value(struct strbuf *h, int m, double v)
{
	if (!isfinite(v))
		return;
	if (m == CMP_STEP)
		strbuf_addf(h, "%.3f ms", v / 1e6);
	else if (m == CMP_BUBBLE)
		strbuf_addf(h, "%.1f %%", 100 * v);
	else
		strbuf_addf(h, "%.3f", v);
}

static void summary_table(struct strbuf *h, const struct cmp_result *r)
{
	static const char *const title[CMP_NMETRICS] = { "step time (longest pipeline)",
							 "bubble share", "what-if S" };
	strbuf_addstr(h, "<table><caption>The job</caption><tr><th>what</th><th>baseline</th>"
			 "<th>new</th><th>change</th><th>noise</th><th>note</th></tr>\n");
	for (int m = 0; m < CMP_NMETRICS; m++) {
		const struct cmp_judgement *j = &r->metric[m];
		if (!r->has_metric[m])
			continue;
		strbuf_addf(h, "<tr%s><td>%s</td><td>", j->flagged ? FLAG_STYLE : "", title[m]);
		value(h, m, j->base);
		strbuf_addstr(h, "</td><td>");
		value(h, m, j->new_);
		strbuf_addstr(h, "</td><td>");
		pct(h, j->change);
		strbuf_addf(h, "</td><td>\u00b1%.1f %% (%s)</td><td>%s</td></tr>\n", 100 * j->noise,
			    cmp_from_name(j->from) ? cmp_from_name(j->from) : "-",
			    j->flagged ? "beyond the noise" : "");
	}
	if (r->verdict_base[0] || r->verdict_new[0]) {
		strbuf_addf(h, "<tr%s><td>what-if verdict</td><td>",
			    r->verdict_flagged ? FLAG_STYLE : "");
		report_html_escape(h, r->verdict_base);
		strbuf_addstr(h, "</td><td>");
		report_html_escape(h, r->verdict_new);
		strbuf_addstr(h, "</td><td></td><td></td><td></td></tr>\n");
	}
	for (size_t i = 0; i < r->nshape; i++) {
		strbuf_addf(h,
			    "<tr" FLAG_STYLE
			    "><td>%s</td><td>%d</td><td>%d</td><td></td><td></td><td>",
			    r->shape[i].name, r->shape[i].base, r->shape[i].new_);
		report_html_escape(h, r->shape[i].note.buf);
		strbuf_addstr(h, "</td></tr>\n");
	}
	strbuf_addstr(h, "</table>\n");
}

/* The keys of dimension d as rows, the stages as columns: each cell the
 * change, flagged ones highlighted, the hover title the times. */
static void key_matrix(struct strbuf *h, const struct agg_compare *c, enum cmp_dim d,
		       const char *caption)
{
	const struct cmp_result *r = &c->r;
	int maxstage = -1;
	bool any = false;
	for (size_t i = 0; i < r->nkeys; i++)
		if (r->keys[i].dim == d) {
			any = true;
			maxstage = r->keys[i].stage > maxstage ? r->keys[i].stage : maxstage;
		}
	if (!any)
		return;
	strbuf_addf(h, "<table><caption>%s</caption><tr><th></th>", caption);
	if (maxstage < 0)
		strbuf_addstr(h, "<th>whole job</th>");
	for (int s = 0; s <= maxstage; s++)
		strbuf_addf(h, "<th>stage %d</th>", s);
	strbuf_addstr(h, "</tr>\n");
	for (size_t key = 0; key < c->keys.n[d]; key++) {
		bool has = false;
		for (size_t i = 0; i < r->nkeys && !has; i++)
			has = r->keys[i].dim == d && r->keys[i].key == (int)key;
		if (!has)
			continue;
		strbuf_addstr(h, "<tr><td>");
		report_html_escape(h, c->keys.name[d][key][0] ? c->keys.name[d][key] : "(none)");
		strbuf_addstr(h, "</td>");
		for (int s = maxstage < 0 ? -1 : 0; s <= (maxstage < 0 ? -1 : maxstage); s++) {
			const struct cmp_key_row *k = NULL;
			for (size_t i = 0; i < r->nkeys && !k; i++)
				if (r->keys[i].dim == d && r->keys[i].key == (int)key &&
				    r->keys[i].stage == s)
					k = &r->keys[i];
			if (!k) {
				strbuf_addstr(h, "<td></td>");
				continue;
			}
			strbuf_addf(h,
				    "<td%s title=\"%.3f ms \u2192 %.3f ms, noise \u00b1%.1f %%\">",
				    k->j.flagged ? FLAG_STYLE : "", k->j.base / 1e6,
				    k->j.new_ / 1e6, 100 * k->j.noise);
			pct(h, k->j.change);
			strbuf_addstr(h, "</td>");
		}
		strbuf_addstr(h, "</tr>\n");
	}
	strbuf_addstr(h, "</table>\n");
}

static int cmp_deviation(const void *a, const void *b)
{
	double x = fabs((*(const struct cmp_rank_row *const *)a)->deviation);
	double y = fabs((*(const struct cmp_rank_row *const *)b)->deviation);
	return (x < y) - (x > y);
}

/* The ten ranks whose change differs most from their stage's. */
static void ranks_table(struct strbuf *h, const struct cmp_result *r)
{
	if (!r->nranks)
		return;
	const struct cmp_rank_row **v = xmalloc(r->nranks * sizeof(*v));
	for (size_t i = 0; i < r->nranks; i++)
		v[i] = &r->rank[i];
	qsort(v, r->nranks, sizeof(*v), cmp_deviation);
	strbuf_addstr(h, "<table><caption>The ranks whose compute changed most against their "
			 "stage</caption><tr><th>rank</th><th>stage</th><th>compute (ms)</th>"
			 "<th>change</th><th>its stage</th><th>noise</th></tr>\n");
	for (size_t i = 0; i < r->nranks && i < 10; i++) {
		strbuf_addf(h, "<tr%s><td>%d</td><td>%d</td><td>%.3f \u2192 %.3f</td><td>",
			    v[i]->j.flagged ? FLAG_STYLE : "", v[i]->rank, v[i]->stage,
			    v[i]->j.base / 1e6, v[i]->j.new_ / 1e6);
		pct(h, v[i]->j.change);
		strbuf_addstr(h, "</td><td>");
		pct(h, v[i]->stage_change);
		strbuf_addf(h, "</td><td>\u00b1%.1f %%</td></tr>\n", 100 * v[i]->j.noise);
	}
	strbuf_addstr(h, "</table>\n");
	free(v);
}

static void report_compare_html(const struct report *R, struct strbuf *h)
{
	const struct agg_compare *c = &R->job->compare;
	if (c->state == AGG_CMP_NONE)
		return;
	strbuf_addstr(h, "<section id=\"baseline\">\n<h2>Compared with ");
	report_html_escape(h, c->baseline);
	strbuf_addstr(h, "</h2>\n");
	if (c->state == AGG_CMP_FAILED) {
		report_html_not_done(h, "Not compared", c->why.buf);
		return;
	}
	const struct cmp_result *r = &c->r;
	strbuf_addf(h, "<p class=\"headline\"%s>", r->regression ? FLAG_STYLE : "");
	report_html_escape(h, r->sentence.buf);
	strbuf_addstr(h, "</p>\n<p class=\"note\">");
	if (r->regression)
		strbuf_addf(h,
			    "<b>Regression</b>: the step time grew beyond its noise and the "
			    "%.1f %% threshold (compare.regression_threshold; ppagg exits 4). ",
			    100 * c->params.threshold);
	strbuf_addstr(h, "Baseline iterations ");
	report_html_escape(h, c->base_iters.buf);
	strbuf_addf(h, " (schema version %d), this run's ", c->baseline_version);
	report_html_escape(h, c->new_iters.buf);
	strbuf_addf(h,
		    ". A change is flagged when it is larger than its noise — %.0f times the "
		    "spread of the iterations of both runs (one iteration: of same-role ranks or "
		    "pipelines), at least %.1f %% (compare.noise_floor) — and amounts to %.1f %% "
		    "of the step or more (compare.min_share); docs/compare.md. CSVs: ",
		    c->params.k, 100 * c->params.floor, 100 * c->params.min_share);
	for (size_t i = 0; i < NCSV; i++) {
		struct strbuf rel = STRBUF_INIT;
		report_rel(&rel, csv_files[i], 0, 0);
		strbuf_addf(h, "%s<a href=\"%s\">%s</a>", i ? ", " : "", rel.buf, rel.buf);
		strbuf_release(&rel);
	}
	strbuf_addstr(h, ".</p>\n<div class=\"grid\">\n");
	summary_table(h, r);
	ranks_table(h, r);
	strbuf_addstr(h, "</div>\n");
	key_matrix(h, c, CMP_CATEGORY, "Categories: change per stage (mean per rank)");
	key_matrix(h, c, CMP_GROUP, "Process groups: change of their kernels' time per stage");
	if (r->missing.len) {
		strbuf_addstr(h, "<details><summary>Not compared</summary><pre>");
		report_html_escape(h, r->missing.buf);
		strbuf_addstr(h, "</pre></details>\n");
	}
	strbuf_addstr(h, "</section>\n");
}

/* "compared with run42/pptrace.db: step +6.8 % (noise ±0.4 %), regression",
 * or that it could not be compared; nothing without --compare. */
static void report_compare_headline(const struct report *R, struct strbuf *sb)
{
	const struct agg_compare *c = &R->job->compare;
	if (c->state == AGG_CMP_NONE)
		return;
	strbuf_addf(sb, "compared with %s: ", c->baseline);
	if (c->state == AGG_CMP_FAILED) {
		strbuf_addstr(sb, "not compared");
		return;
	}
	const struct cmp_judgement *j = &c->r.metric[CMP_STEP];
	if (c->r.has_metric[CMP_STEP] && isfinite(j->change))
		strbuf_addf(sb, "step %+.1f %% (noise \u00b1%.1f %%)", 100 * j->change,
			    100 * j->noise);
	else
		strbuf_addstr(sb, "step not compared");
	if (c->r.regression)
		strbuf_addstr(sb, ", regression");
	strbuf_addf(sb, " (in %.2f s)", c->seconds);
}

const struct report_section report_compare_section = { report_compare_files, report_compare_html,
						       report_compare_headline };
