/* report_annot.c — the user annotations' part of the report (agg_annot.h,
 * docs/ppagg.md "User annotations"): per group (stage, rank or the job)
 * its AGG_ANN_TOP annotation names with the most GPU time on index.html,
 * every name in annotations/annotations.csv, and in generic mode the
 * heaviest name in the summary line.
 */
#include "report_int.h"

#include <stdio.h>

static const char *by_name(enum agg_ann_by by)
{
	switch (by) {
	case AGG_ANN_STAGE: return "stage";
	case AGG_ANN_RANK: return "rank";
	default: return "job";
	}
}

static void csv(const struct agg_annot *a, struct strbuf *sb)
{
	strbuf_addstr(sb, "group_kind,group,group_ranks,name,ranks,calls,kernels,gpu_ns,comp_ns,"
			  "comm_ns,overlap_ns,rank_min_gpu_ns,rank_max_gpu_ns,rank_max,"
			  "share\n");
	for (size_t g = 0; g < a->ngroups; g++) {
		const struct agg_ann_group *G = &a->groups[g];
		for (size_t i = 0; i < G->nrows; i++) {
			const struct agg_ann_row *r = &G->rows[i];
			strbuf_addf(sb, "%s,", by_name(a->by));
			if (G->id >= 0)
				strbuf_addf(sb, "%d", G->id);
			strbuf_addf(sb, ",%d,", G->nranks);
			strbuf_add_quoted(sb, r->name, '"');
			strbuf_addf(sb, ",%d,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%d,%.6f\n",
				    r->nranks, (long long)r->calls, (long long)r->kernels,
				    (long long)r->gpu_ns, (long long)r->comp_ns,
				    (long long)r->comm_ns, (long long)r->overlap_ns,
				    (long long)r->min_ns, (long long)r->max_ns, r->max_rank,
				    r->share);
		}
	}
}

static int report_annot_files(struct report *R)
{
	const struct agg_annot *a = &R->job->annot;
	struct strbuf rel = STRBUF_INIT, sb = STRBUF_INIT;
	int rc = 0;
	report_rel(&rel, RF_ANNOT_CSV, 0, 0);
	const char *name = report_leaf(rel.buf);
	if (!a->nnames) {
		report_remove_stale(R, RF_ANNOT, &name, 1);
	} else {
		csv(a, &sb);
		rc = report_write_file(R, RF_ANNOT_CSV, 0, 0, &sb);
	}
	strbuf_release(&rel);
	strbuf_release(&sb);
	return rc;
}

static void ms(struct strbuf *h, int64_t ns)
{
	strbuf_addf(h, "<td>%.3f</td>", (double)ns / 1e6);
}

static void group_table(struct strbuf *h, enum agg_ann_by by, const struct agg_ann_group *G)
{
	strbuf_addstr(h, "<table class=\"annotations\"><caption>");
	if (by == AGG_ANN_JOB)
		strbuf_addstr(h, "every rank");
	else
		strbuf_addf(h, "%s %d", by_name(by), G->id);
	if (by != AGG_ANN_RANK)
		strbuf_addf(h, " (%d rank%s)", G->nranks, G->nranks == 1 ? "" : "s");
	strbuf_addf(h, ": %.3f ms in annotations, %zu name%s", (double)G->gpu_ns / 1e6, G->nrows,
		    G->nrows == 1 ? "" : "s");
	if (G->nrows > AGG_ANN_TOP)
		strbuf_addf(h, ", the %d with the most GPU time", AGG_ANN_TOP);
	strbuf_addstr(h, "</caption>\n<tr><th>annotation</th><th>calls</th><th>GPU (ms)</th>"
			 "<th>compute (ms)</th><th>comm (ms)</th><th>overlap (ms)</th>"
			 "<th>share of the step</th>");
	if (by != AGG_ANN_RANK)
		strbuf_addstr(h, "<th>per rank min (ms)</th><th>per rank max (ms)</th>"
				 "<th>max on rank</th>");
	strbuf_addstr(h, "</tr>\n");
	for (size_t i = 0; i < G->nrows && i < AGG_ANN_TOP; i++) {
		const struct agg_ann_row *r = &G->rows[i];
		strbuf_addstr(h, "<tr><td>");
		report_html_escape(h, r->name);
		strbuf_addf(h, "</td><td>%lld</td>", (long long)r->calls);
		ms(h, r->gpu_ns);
		ms(h, r->comp_ns);
		ms(h, r->comm_ns);
		ms(h, r->overlap_ns);
		strbuf_addf(h, "<td>%.1f %%</td>", 100 * r->share);
		if (by != AGG_ANN_RANK) {
			ms(h, r->min_ns);
			ms(h, r->max_ns);
			strbuf_addf(h, "<td>%d</td>", r->max_rank);
		}
		strbuf_addstr(h, "</tr>\n");
	}
	strbuf_addstr(h, "</table>\n");
}

static void report_annot_html(const struct report *R, struct strbuf *h)
{
	const struct agg_annot *a = &R->job->annot;
	strbuf_addstr(h, "<section id=\"annotations\">\n<h2>User annotations</h2>\n<p>");
	if (!a->nnames) {
		strbuf_addstr(h, "No GPU time under a user annotation in these traces "
				 "(record_function ranges, user_annotation events).</p>\n"
				 "</section>\n");
		return;
	}
	strbuf_addf(h,
		    "GPU time of the kernels launched under each annotation (the innermost "
		    "one), summed over the iterations%s; share of the step = GPU time over "
		    "the ranks' step windows. Every name: <a href=\"",
		    a->by == AGG_ANN_STAGE ? " and the ranks of each pipeline stage"
		    : a->by == AGG_ANN_JOB ? " and every rank"
					   : "");
	report_rel(h, RF_ANNOT_CSV, 0, 0);
	strbuf_addstr(h, "\">");
	report_rel(h, RF_ANNOT_CSV, 0, 0);
	strbuf_addstr(h, "</a>; the database's view <code>annotations</code> holds each "
			 "trace's.</p>\n");
	for (size_t g = 0; g < a->ngroups; g++)
		if (a->groups[g].nrows)
			group_table(h, a->by, &a->groups[g]);
	strbuf_addstr(h, "</section>\n");
}

static void report_annot_headline(const struct report *R, struct strbuf *sb)
{
	const struct agg_annot *a = &R->job->annot;
	const struct agg_ann_row *top = NULL;
	if (!a->generic)
		return;
	for (size_t g = 0; g < a->ngroups; g++)
		if (a->groups[g].nrows && (!top || a->groups[g].rows[0].share > top->share))
			top = &a->groups[g].rows[0];
	if (top)
		strbuf_addf(sb, "top annotation %s %.1f %% of the step", top->name,
			    100 * top->share);
}

const struct report_section report_annot_section = { report_annot_files, report_annot_html,
						     report_annot_headline };
