/* report_html.c — ppagg's report. index.html stays small whatever the job's
 * size: the comparison of iterations, then per detailed iteration its
 * summary, failed ranks and incomplete groups, the overview (heatmaps over
 * the stage × replica grid, step times per stage), the worst ranks and the
 * stragglers (an iteration not detailed: its problems only).
 * iteration_<N>.html, per detailed iteration, holds what grows with the
 * job: the pipelines, the PP-group and model-replica charts, the table of
 * every rank and the rank charts. The pages link only to what this run
 * wrote (the render plan, agg/agg_iter.h) and say how to get the rest
 * (--charts). Links are relative, all text from the database or the file
 * system is escaped. A chart is shown as its PNG (else its SVG) and links
 * to its SVG, where the hover text lives; a chart that was not rendered
 * says how to render it. An inline script counts loaded images into
 * body[data-images] so that a headless browser can check a page
 * (tests/e2e). The analyses add their sections to index.html through the
 * report's sections (struct report_section); every path comes from
 * report_paths.c.
 */
#include "report_int.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "util/pp.h"

void report_html_escape(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '"': strbuf_addstr(sb, "&quot;"); break;
		case '\'': strbuf_addstr(sb, "&#39;"); break;
		default: strbuf_addch(sb, *s);
		}
	}
}

/* Whether <out>/<rel> is a file. */
static bool exists(const struct report *R, const char *rel)
{
	struct strbuf p = STRBUF_INIT;
	struct stat st;
	strbuf_addf(&p, "%s/%s", R->out, rel);
	bool ok = stat(p.buf, &st) == 0 && S_ISREG(st.st_mode);
	strbuf_release(&p);
	return ok;
}

void report_html_chart(struct strbuf *h, const struct report *R, const char *rel,
		       const char *caption, bool lazy)
{
	struct strbuf p = STRBUF_INIT;
	const char *ext[] = { "png", "svg" };
	bool has[2];
	for (int k = 0; k < 2; k++) {
		strbuf_reset(&p);
		strbuf_addf(&p, "%s.%s", rel, ext[k]);
		has[k] = exists(R, p.buf);
	}
	strbuf_addstr(h, "<figure>");
	int k = has[0] ? 0 : has[1] ? 1 : -1;
	if (k >= 0) {
		strbuf_addstr(h, "<a href=\"");
		report_html_escape(h, rel);
		strbuf_addf(h, ".%s\"><img src=\"", has[1] ? "svg" : "png");
		report_html_escape(h, rel);
		strbuf_addf(h, ".%s\" alt=\"", ext[k]);
		report_html_escape(h, caption);
		strbuf_addf(h, "\"%s></a>", lazy ? " loading=\"lazy\"" : "");
	}
	strbuf_addstr(h, "<figcaption>");
	report_html_escape(h, caption);
	strbuf_addstr(h, " — <a href=\"");
	report_html_escape(h, rel);
	strbuf_addstr(h, ".gp\">gnuplot script</a>");
	if (has[1]) {
		strbuf_addstr(h, ", <a href=\"");
		report_html_escape(h, rel);
		strbuf_addstr(h, ".svg\">SVG with hover text</a>");
	} else {
		const char *slash = strrchr(rel, '/');
		strbuf_addstr(h, k >= 0 ? " (no SVG rendered: <code>" : " (not rendered: <code>");
		strbuf_addstr(h, "gnuplot ");
		report_html_escape(h, slash ? slash + 1 : rel);
		strbuf_addstr(h, ".gp</code> in <code>");
		strbuf_reset(&p);
		strbuf_add(&p, rel, slash ? (size_t)(slash - rel) : 0);
		report_html_escape(h, slash ? p.buf : ".");
		strbuf_addstr(h, "</code> makes it)");
	}
	strbuf_addstr(h, "</figcaption></figure>\n");
	strbuf_release(&p);
}

void report_html_chart_of(struct strbuf *h, const struct report *R, enum report_file f,
			  const char *caption, bool lazy)
{
	struct strbuf rel = STRBUF_INIT;
	report_rel(&rel, f, 0, 0);
	report_html_chart(h, R, rel.buf, caption, lazy);
	strbuf_release(&rel);
}

void report_html_not_done(struct strbuf *h, const char *lead, const char *why)
{
	strbuf_addf(h, "<p>%s: ", lead);
	report_html_escape(h, why);
	strbuf_addstr(h, ".</p>\n</section>\n");
}

/* rel is "<stem>.gp" of an existing script: points it at the SVG, else the
 * PNG, else leaves the script. */
static void best_href(const struct report *R, struct strbuf *rel)
{
	const char *ext[] = { ".svg", ".png" };
	size_t stem = rel->len - 3;
	for (int k = 0; k < 2; k++) {
		rel->len = stem;
		rel->buf[stem] = '\0';
		strbuf_addstr(rel, ext[k]);
		if (exists(R, rel->buf))
			return;
	}
	rel->len = stem;
	rel->buf[stem] = '\0';
	strbuf_addstr(rel, ".gp");
}

static void ranks_list(struct strbuf *h, const int *ranks, int n)
{
	for (int i = 0; i < n; i++)
		strbuf_addf(h, "%s<a href=\"#r%d\">%d</a>", i ? ", " : "", ranks[i], ranks[i]);
}

/* Appends the link to rank on the page of iteration it: "iteration_<it>.html#r<rank>". */
static void rank_href(struct strbuf *h, int it, int rank)
{
	report_rel(h, RF_PAGE, it, 0);
	strbuf_addf(h, "#r%d", rank);
}

/* Whether iteration it has a section on index.html: it is detailed, or it
 * has ranks or groups to report (failed, in conflict, without a rank,
 * incomplete). */
static bool has_section(const struct topology *t, const struct agg_iter *it)
{
	if (it->plan.detail || it->nfailed || it->nconflicts || it->nunranked)
		return true;
	struct strbuf miss = STRBUF_INIT;
	int n = 0;
	for (size_t g = 0; !n && g < t->groups[TOPO_PP].n; g++)
		n = agg_group_absent(it, t->groups[TOPO_PP].v[g].ranks, t->groups[TOPO_PP].v[g].n,
				     &miss);
	strbuf_release(&miss);
	return n > 0;
}

/* How to get what the report does not show: the same command again, with
 * --charts. */
static void how_to_get(struct strbuf *h, const char *what)
{
	strbuf_addf(h,
		    "run ppagg again with the same options and <code>--charts %s</code> (it adds "
		    "them to this report)",
		    what);
}

static double msd(int64_t ns)
{
	return (double)ns / 1e6;
}

static double mean_bubble(const struct agg_iter *it)
{
	double s = 0;
	for (size_t i = 0; i < it->res.npipes; i++)
		s += it->res.pipes[i].bubble_ratio;
	return it->res.npipes ? s / (double)it->res.npipes : 0;
}

/* Which iterations the report details, and how to get another. */
static void detail_note(struct strbuf *h, const struct agg_iter *its, size_t n)
{
	static const struct {
		int bit;
		const char *what;
	} why[] = { { AGG_DETAIL_SLOWEST, "the slowest" },
		    { AGG_DETAIL_MEDIAN, "the median" },
		    { AGG_DETAIL_FASTEST, "the fastest" },
		    { AGG_DETAIL_ASKED, "asked for" } };
	size_t nd = 0;
	for (size_t i = 0; i < n; i++)
		nd += its[i].plan.detail != 0;
	if (nd == n)
		return;
	strbuf_addf(h, "<p class=\"note\">The report details %zu of the %zu iterations (", nd, n);
	bool first = true;
	for (size_t k = 0; k < sizeof(why) / sizeof(why[0]); k++)
		for (size_t i = 0; i < n; i++)
			if (its[i].plan.detail & why[k].bit) {
				strbuf_addf(h, "%s%s: <a href=\"#iter-%d\">%d</a>",
					    first ? "" : "; ", why[k].what, its[i].iteration,
					    its[i].iteration);
				first = false;
			}
	strbuf_addstr(h, "); the others have their line here and their rows in the database. "
			 "To see another's overview, charts and page, ");
	how_to_get(h, "iteration=&lt;n&gt;");
	strbuf_addstr(h, ".</p>\n");
}

static void comparison(struct strbuf *h, const struct topology *t, const struct agg_iter *its,
		       size_t n)
{
	strbuf_addstr(h, "<h2 id=\"compare\">Iterations</h2>\n<table><tr><th>iteration</th>"
			 "<th>ranks ok</th><th>failed</th><th>iteration time (ms)</th>"
			 "<th>mean bubble</th><th>largest gap to ideal (ms)</th>"
			 "<th>slowest stage</th><th>stragglers</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		const struct agg_iter *it = &its[i];
		int64_t gap = 0;
		bool has_gap = false;
		for (size_t p = 0; p < it->res.npipes; p++)
			if (it->res.pipes[p].has_ideal &&
			    (!has_gap || it->res.pipes[p].gap > gap)) {
				gap = it->res.pipes[p].gap;
				has_gap = true;
			}
		if (has_section(t, it))
			strbuf_addf(h, "<tr><td><a href=\"#iter-%d\">%d</a></td>", it->iteration,
				    it->iteration);
		else
			strbuf_addf(h, "<tr><td>%d</td>", it->iteration);
		strbuf_addf(h, "<td>%d</td><td>%d</td><td>%.3f</td><td>%.2f %%</td>", it->nok,
			    it->nfailed, msd(agg_iter_time(it)), 100 * mean_bubble(it));
		if (has_gap)
			strbuf_addf(h, "<td>%.3f</td>", msd(gap));
		else
			strbuf_addstr(h, "<td>–</td>");
		if (it->res.slowest_stage >= 0)
			strbuf_addf(h, "<td>stage %d (%.3f ms compute)</td>", it->res.slowest_stage,
				    msd(it->res.slowest_compute));
		else
			strbuf_addstr(h, "<td>–</td>");
		strbuf_addstr(h, "<td>");
		for (size_t s = 0; s < it->res.nstrag; s++) {
			strbuf_addstr(h, s ? ", " : "");
			if (it->plan.detail) {
				strbuf_addstr(h, "<a href=\"");
				rank_href(h, it->iteration, it->res.strag[s].rank);
				strbuf_addstr(h, "\">");
			}
			strbuf_addf(h, "rank %d%s (+%.1f %%)", it->res.strag[s].rank,
				    it->plan.detail ? "</a>" : "", 100 * it->res.strag[s].excess);
		}
		if (agg_strag_not_computed(it))
			strbuf_addstr(h, "not computed");
		else if (!it->res.nstrag)
			strbuf_addstr(h, "none");
		strbuf_addstr(h, "</td></tr>\n");
	}
	strbuf_addstr(h, "</table>\n");
	detail_note(h, its, n);
}

/* Ranks claimed by several traces and traces without a rank: listed, never
 * aggregated (docs/contracts.md §8). */
static void conflicts_section(struct strbuf *h, const struct agg_iter *it)
{
	if (it->nconflicts) {
		strbuf_addstr(h, "<h3>Rank conflicts (not aggregated)</h3>\n<ul>\n");
		for (size_t i = 0; i < it->nranks; i++) {
			if (it->ranks[i].ntraces < 2)
				continue;
			strbuf_addstr(h, "<li>");
			report_html_escape(h, it->ranks[i].error);
			strbuf_addstr(h, "</li>\n");
		}
		strbuf_addstr(h, "</ul>\n");
	}
	if (it->nunranked) {
		strbuf_addstr(h, "<h3>Traces without a rank (not aggregated)</h3>\n<ul>\n");
		for (size_t i = 0; i < it->nunranked; i++) {
			strbuf_addstr(h, "<li>");
			report_html_escape(h, it->unranked[i]);
			strbuf_addstr(h, "</li>\n");
		}
		strbuf_addstr(h, "</ul>\n");
	}
}

static void failed_ranks(struct strbuf *h, const struct agg_iter *it)
{
	if (!it->nfailed)
		return;
	/* A long list is folded: the first screen stays small. */
	if (it->nfailed > 10)
		strbuf_addf(h, "<details><summary>%d failed ranks</summary>\n", it->nfailed);
	strbuf_addstr(h, "<h3>Failed ranks</h3>\n<table><tr><th>rank</th><th>trace</th>"
			 "<th>error</th></tr>\n");
	for (size_t i = 0; i < it->nranks; i++) {
		const struct agg_rank *r = &it->ranks[i];
		if (r->in.ok || r->ntraces > 1)
			continue;
		strbuf_addf(h, "<tr><td>%d</td><td>", r->in.rank);
		report_html_escape(h, r->path);
		strbuf_addstr(h, "</td><td>");
		report_html_escape(h, r->error);
		strbuf_addstr(h, "</td></tr>\n");
	}
	strbuf_addstr(h, "</table>\n");
	if (it->nfailed > 10)
		strbuf_addstr(h, "</details>\n");
}

/* Incomplete groups and why each of their ranks is not analysed. */
static void incomplete_groups(struct strbuf *h, const struct topology *t, const struct agg_iter *it)
{
	bool any_incomplete = false;
	struct strbuf miss = STRBUF_INIT;
	for (int kind = TOPO_PP; kind <= TOPO_MODEL; kind += TOPO_MODEL - TOPO_PP) {
		const struct topo_groups *gs = &t->groups[kind];
		for (size_t g = 0; g < gs->n; g++) {
			strbuf_reset(&miss);
			int missing = agg_group_absent(it, gs->v[g].ranks, gs->v[g].n, &miss);
			if (!missing)
				continue;
			if (!any_incomplete)
				strbuf_addstr(h, "<h3>Incomplete groups (not drawn)</h3>\n<ul>\n");
			any_incomplete = true;
			strbuf_addf(h, "<li>%s %zu: rank%s not analysed: %s</li>\n",
				    kind == TOPO_PP ? "PP group" : "model replica", g,
				    missing > 1 ? "s" : "", miss.buf);
		}
	}
	strbuf_release(&miss);
	if (any_incomplete)
		strbuf_addstr(h, "</ul>\n");
}

static void pipelines_table(struct strbuf *h, const struct topology *t, const struct agg_iter *it)
{
	if (!it->res.npipes)
		return;
	strbuf_addstr(
		h,
		"<h3 id=\"pipelines\">Pipelines</h3>\n<table><tr><th>PP group</th><th>ranks (stage "
		"order)</th><th>measured (ms)</th><th>ideal (ms)</th><th>gap (ms)</th>"
		"<th>bubble</th></tr>\n");
	for (size_t p = 0; p < it->res.npipes; p++) {
		const struct agg_pipeline_row *pr = &it->res.pipes[p];
		const struct topo_group *g = &t->groups[TOPO_PP].v[pr->pp_group];
		if (it->plan.pp_group[pr->pp_group] != AGG_SHOW_NONE)
			strbuf_addf(h, "<tr><td><a href=\"#pp%d\">%d</a></td><td>", pr->pp_group,
				    pr->pp_group);
		else
			strbuf_addf(h, "<tr><td>%d</td><td>", pr->pp_group);
		ranks_list(h, g->ranks, g->n);
		strbuf_addf(h, "</td><td>%.3f</td>", msd(pr->measured));
		if (pr->has_ideal)
			strbuf_addf(h, "<td>%.3f</td><td>%.3f</td>", msd(pr->ideal), msd(pr->gap));
		else
			strbuf_addstr(h, "<td>–</td><td>–</td>");
		strbuf_addf(h, "<td>%.2f %%</td></tr>\n", 100 * pr->bubble_ratio);
	}
	strbuf_addstr(h, "</table>\n");
}

/* A straggler's comparison group: "DP group 3 (ranks 5, 7)" -- spelled out,
 * since "dp 3" names a model replica everywhere else in the report. */
static void straggler_group(struct strbuf *h, const struct topology *t,
			    const struct agg_straggler_row *sr)
{
	const struct topo_groups *dp = &t->groups[TOPO_DP];
	if (strcmp(sr->group_kind, "dp") != 0) {
		strbuf_addf(h, "stage %d (no DP groups)", sr->group);
		return;
	}
	strbuf_addf(h, "DP group %d", sr->group);
	if (sr->group < 0 || (size_t)sr->group >= dp->n)
		return;
	const struct topo_group *g = &dp->v[sr->group];
	if (g->n > 8) {
		strbuf_addf(h, " (%d ranks)", g->n);
		return;
	}
	strbuf_addstr(h, " (ranks ");
	for (int i = 0; i < g->n; i++)
		strbuf_addf(h, "%s%d", i ? ", " : "", g->ranks[i]);
	strbuf_addch(h, ')');
}

static void stragglers_table(struct strbuf *h, const struct topology *t, const struct agg_iter *it)
{
	strbuf_addstr(h, "<h3>Stragglers</h3>\n");
	if (agg_strag_not_computed(it)) {
		strbuf_addstr(h, "<p>Not computed: " AGG_STRAG_NA ".</p>\n");
		return;
	}
	if (!it->res.nstrag) {
		strbuf_addstr(h, "<p>None above the threshold.</p>\n");
		return;
	}
	strbuf_addstr(h, "<table><tr><th>rank</th><th>compared with</th><th>fwd+bwd compute (ms)"
			 "</th><th>group median (ms)</th><th>excess</th></tr>\n");
	for (size_t s = 0; s < it->res.nstrag; s++) {
		const struct agg_straggler_row *sr = &it->res.strag[s];
		if (it->plan.detail) {
			strbuf_addstr(h, "<tr><td><a href=\"");
			rank_href(h, it->iteration, sr->rank);
			strbuf_addf(h, "\">%d</a></td><td>", sr->rank);
		} else {
			strbuf_addf(h, "<tr><td>%d</td><td>", sr->rank);
		}
		straggler_group(h, t, sr);
		strbuf_addf(h, "</td><td>%.3f</td><td>%.3f</td><td>+%.1f %%</td></tr>\n",
			    msd(sr->value), msd(sr->median), 100 * sr->excess);
	}
	strbuf_addstr(h, "</table>\n");
}

/* The timelines of the PP groups and of the model replicas the plan
 * shows; how to get the others. */
static void group_charts(struct strbuf *h, const struct report *R, const struct agg_iter *it,
			 bool lazy)
{
	const struct topology *t = &R->job->topo;
	const struct agg_plan *p = &it->plan;
	struct strbuf rel = STRBUF_INIT, cap = STRBUF_INIT, miss = STRBUF_INIT;
	int I = it->iteration;
	size_t hidden = 0;
	strbuf_addstr(h, "<h3 id=\"pp-groups\">PP groups</h3>\n");
	for (size_t k = 0; k < it->res.npipes; k++) {
		int g = it->res.pipes[k].pp_group;
		if (p->pp_group[g] == AGG_SHOW_NONE) {
			hidden++;
			continue;
		}
		strbuf_reset(&rel);
		report_rel(&rel, RF_PP_GROUP_TIMELINE, I, g);
		strbuf_reset(&cap);
		strbuf_addf(&cap, "PP group %d, iteration %d", g, I);
		strbuf_addf(h, "<div id=\"pp%d\">", g);
		report_html_chart(h, R, rel.buf, cap.buf, lazy);
		strbuf_addstr(h, "</div>\n");
	}
	if (hidden) {
		strbuf_addf(
			h,
			"<p class=\"note\">%zu of the %zu pipelines are drawn here: those of the "
			"stragglers and the %d slowest. For another, ",
			it->res.npipes - hidden, it->res.npipes, AGG_TOP_GROUPS);
		how_to_get(h, "group=&lt;g&gt;");
		strbuf_addstr(h, ".</p>\n");
	}
	strbuf_addstr(h, "<h3 id=\"replicas\">Model replicas</h3>\n");
	hidden = 0;
	for (size_t m = 0; m < t->groups[TOPO_MODEL].n; m++) {
		if (p->model_group[m] == AGG_SHOW_NONE) {
			hidden++;
			continue;
		}
		strbuf_reset(&rel);
		report_rel(&rel, RF_MODEL_GROUP_TIMELINE, I, (long)m);
		strbuf_reset(&cap);
		strbuf_addf(&cap, "Model replica %zu, iteration %d", m, I);
		/* A replica with a rank not analysed has no chart. */
		const struct topo_group *mg = &t->groups[TOPO_MODEL].v[m];
		strbuf_reset(&miss);
		if (mg->n && !agg_group_absent(it, mg->ranks, mg->n, &miss))
			report_html_chart(h, R, rel.buf, cap.buf, lazy);
	}
	if (hidden) {
		strbuf_addf(h,
			    "<p class=\"note\">%zu of the %zu model replicas are drawn here: those "
			    "of the stragglers and of the slowest pipeline. For another, ",
			    t->groups[TOPO_MODEL].n - hidden, t->groups[TOPO_MODEL].n);
		how_to_get(h, "replica=&lt;m&gt;");
		strbuf_addstr(h, ".</p>\n");
	}
	strbuf_release(&rel);
	strbuf_release(&cap);
	strbuf_release(&miss);
}

/* Whether the page draws PP group g's chart (anchor #pp<g>): the plan
 * shows it and it is complete (it has its pipeline row). */
static bool group_drawn(const struct agg_iter *it, int g)
{
	if (g < 0 || it->plan.pp_group[g] == AGG_SHOW_NONE)
		return false;
	for (size_t k = 0; k < it->res.npipes; k++)
		if (it->res.pipes[k].pp_group == g)
			return true;
	return false;
}

/* Whether the plan writes a chart of rank i of it. */
static bool rank_shown(const struct agg_iter *it, size_t i)
{
	return it->plan.rank_timeline[i] != AGG_SHOW_NONE ||
	       it->plan.rank_overlap[i] != AGG_SHOW_NONE;
}

/* One row of the ranks table: links to what this run wrote of the rank. */
static void rank_row(struct strbuf *h, const struct report *R, const struct agg_iter *it, size_t i)
{
	static const enum report_file files[] = { RF_RANK_TIMELINE, RF_RANK_OVERLAP, RF_RANK_STEPS,
						  RF_RANK_CATEGORIES };
	const struct topology *t = &R->job->topo;
	const struct agg_rank *r = &it->ranks[i];
	struct strbuf rel = STRBUF_INIT;
	char name[64];
	int I = it->iteration, rk = r->in.rank;
	strbuf_addf(h, "<tr id=\"r%d\"><td>%d</td><td>", rk, rk);
	report_html_escape(h, r->status);
	strbuf_addstr(h, "</td><td>");
	report_html_escape(h, r->mode);
	strbuf_addstr(h, "</td><td>");
	if (rk < t->nrank && t->pp_of[rk] >= 0 && group_drawn(it, t->pp_of[rk]))
		strbuf_addf(h, "<a href=\"#pp%d\">%d</a> · %d", t->pp_of[rk], t->pp_of[rk],
			    t->stage_of[rk]);
	else if (rk < t->nrank && t->pp_of[rk] >= 0)
		strbuf_addf(h, "%d · %d", t->pp_of[rk], t->stage_of[rk]);
	strbuf_addstr(h, "</td>");
	if (r->in.has_window)
		strbuf_addf(h, "<td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.1f %%</td>",
			    msd(r->in.win_e - r->in.win_s), msd(r->in.gpu_busy), msd(r->in.bubble),
			    100 * r->coverage);
	else
		strbuf_addstr(h, "<td>–</td><td>–</td><td>–</td><td>–</td>");
	strbuf_addstr(h, "<td>");
	for (int k = 0; k < 4 && rank_shown(it, i); k++) {
		bool chart = k < 2; /* a chart's stem: its script, SVG or PNG */
		strbuf_reset(&rel);
		report_rel(&rel, files[k], I, rk);
		snprintf(name, sizeof(name), "%s", report_leaf(rel.buf));
		if (chart)
			strbuf_addstr(&rel, ".gp");
		if (!exists(R, rel.buf))
			continue;
		if (chart)
			best_href(R, &rel);
		strbuf_addstr(h, "<a href=\"");
		report_html_escape(h, rel.buf);
		strbuf_addf(h, "\">%s</a> ", name);
	}
	strbuf_addstr(h, "</td><td>");
	for (size_t j = 0; j < R->job->niters; j++) {
		const struct agg_iter *other = &R->job->its[j];
		if (other == it || !other->plan.detail || !agg_iter_rank(other, rk))
			continue;
		strbuf_addstr(h, "<a href=\"");
		rank_href(h, other->iteration, rk);
		strbuf_addf(h, "\">%d</a> ", other->iteration);
	}
	strbuf_addstr(h, "</td></tr>\n");
	strbuf_release(&rel);
}

/* The rendered rank charts, those not rendered named with how to render
 * them, and how to get the charts of the other ranks. */
static void rank_charts(struct strbuf *h, const struct report *R, const struct agg_iter *it,
			bool lazy)
{
	struct strbuf rel = STRBUF_INIT, cap = STRBUF_INIT;
	size_t shown = 0, scripts = 0, ranks = 0;
	char kind[64];
	strbuf_addstr(h, "<h3 id=\"rank-charts\">Rank charts</h3>\n");
	for (size_t i = 0; i < it->nranks; i++) {
		const struct agg_rank *r = &it->ranks[i];
		if (!rank_shown(it, i))
			continue;
		ranks++;
		for (int k = 0; k < 2; k++) {
			strbuf_reset(&rel);
			report_rel(&rel, k ? RF_RANK_OVERLAP : RF_RANK_TIMELINE, it->iteration,
				   r->in.rank);
			snprintf(kind, sizeof(kind), "%s", report_leaf(rel.buf));
			strbuf_addstr(&rel, ".png");
			bool png = exists(R, rel.buf);
			rel.len -= 4;
			rel.buf[rel.len] = '\0';
			strbuf_addstr(&rel, ".svg");
			bool svg = exists(R, rel.buf);
			rel.len -= 4;
			rel.buf[rel.len] = '\0';
			strbuf_addstr(&rel, ".gp");
			bool gp = exists(R, rel.buf);
			rel.len -= 3;
			rel.buf[rel.len] = '\0';
			scripts += gp;
			if (!png && !svg)
				continue;
			strbuf_reset(&cap);
			strbuf_addf(&cap, "Rank %d %s, iteration %d", r->in.rank, kind,
				    it->iteration);
			report_html_chart(h, R, rel.buf, cap.buf, lazy);
			shown++;
		}
	}
	if (shown < scripts)
		strbuf_addf(
			h,
			"<p>%zu of the %zu rank charts written are rendered (the flagged ranks: "
			"stragglers, the worst ranks, those asked for). To render one: "
			"<code>cd iteration_%d/rank_&lt;r&gt; &amp;&amp; gnuplot timeline.gp "
			"overlap.gp</code>.</p>\n",
			shown, scripts, it->iteration);
	if (ranks < it->nranks) {
		strbuf_addf(h,
			    "<p>The report shows the charts of %zu of the %zu ranks (the flagged "
			    "ones: the stragglers, the worst ranks of each overview number, those "
			    "asked for); the database holds what the others need. For another "
			    "rank's charts and CSVs, ",
			    ranks, it->nranks);
		how_to_get(h, "rank=&lt;r&gt;");
		strbuf_addstr(h, "; several: <code>--charts rank=0-7,77</code>; every chart's "
				 "script: <code>--charts all</code>.</p>\n");
	}
	strbuf_release(&rel);
	strbuf_release(&cap);
}

/* How a cell of the overview folds its ranks, said once. */
static void fold_note(struct strbuf *h, const struct topology *t)
{
	int per = t->tp * (t->cp ? t->cp : 1) * (t->ep ? t->ep : 1);
	strbuf_addf(h,
		    "<p class=\"note\">A cell is one pipeline stage of one data-parallel replica: "
		    "its %d rank%s (TP %d × CP %d × EP %d). Each map shows the <b>worst</b> rank "
		    "of the cell (the highest bubble share, compute and idle time; the lowest "
		    "coverage), and its hover text names that rank, so one slow GPU is not "
		    "averaged away by its tensor-parallel peers. White: no data.</p>\n",
		    per, per == 1 ? "" : "s", t->tp, t->cp ? t->cp : 1, t->ep ? t->ep : 1);
}

/* The best link for a rank's charts: its timeline's SVG, PNG or script,
 * when this run wrote it. */
static void rank_chart_link(struct strbuf *h, const struct report *R, const struct agg_iter *it,
			    int rk)
{
	const struct agg_rank *r = agg_iter_rank(it, rk);
	if (!r || it->plan.rank_timeline[r - it->ranks] == AGG_SHOW_NONE)
		return;
	struct strbuf rel = STRBUF_INIT;
	report_rel(&rel, RF_RANK_TIMELINE, it->iteration, rk);
	strbuf_addstr(&rel, ".gp");
	if (exists(R, rel.buf)) {
		best_href(R, &rel);
		strbuf_addstr(h, " <a href=\"");
		report_html_escape(h, rel.buf);
		strbuf_addstr(h, "\">timeline</a>");
	}
	strbuf_release(&rel);
}

/* The heatmaps, the step times per stage, the worst ranks. */
static void overview(struct strbuf *h, const struct report *R, const struct agg_iter *it)
{
	const struct topology *t = &R->job->topo;
	const struct agg_overview *ov = &it->ov;
	struct strbuf rel = STRBUF_INIT, cap = STRBUF_INIT;
	int I = it->iteration;
	strbuf_addf(h, "<h3 id=\"i%d-overview\">Overview</h3>\n", I);
	if (!ov->nstage) {
		strbuf_addstr(h, "<p>No overview: without a topology the ranks have no place in a "
				 "stage × replica grid.</p>\n");
	} else {
		fold_note(h, t);
		strbuf_addf(h,
			    "<p class=\"note\">Colours: in the bubble, compute and idle maps each "
			    "cell is compared with the median cell of its stage, on a scale of at "
			    "least ±%.0f %% of the median compute (idle, compute) or ±%.0f points "
			    "(bubble), so an even job stays pale and a straggler stands out "
			    "(docs/ppagg.md, \"Overview\"); coverage runs up to 100 %%.</p>\n",
			    100 * R->job->threshold, 50 * R->job->threshold);
		strbuf_addstr(h, "<div class=\"grid\">\n");
		for (int m = 0; m < AGG_NMETRICS; m++) {
			strbuf_reset(&rel);
			report_rel(&rel, RF_OVERVIEW_MAP, I, m);
			strbuf_reset(&cap);
			strbuf_addf(&cap, "%s (%s)", agg_metrics[m].title, agg_metrics[m].means);
			report_html_chart(h, R, rel.buf, cap.buf, false);
		}
		strbuf_addstr(h, "</div>\n");
		strbuf_reset(&rel);
		report_rel(&rel, RF_OVERVIEW_STEPS, I, 0);
		report_html_chart(
			h, R, rel.buf,
			"Step times per stage: boxes of every forward and backward step (quartiles, "
			"whiskers at min and max), and one dot per replica (its slowest rank's median "
			"step, coloured by replica): a slow stage lifts its box, a slow replica its "
			"dots in every stage",
			false);
	}
	strbuf_addf(h, "<h3 id=\"i%d-worst\">Worst ranks</h3>\n<div class=\"grid\">\n", I);
	for (int m = 0; m < AGG_NMETRICS; m++) {
		strbuf_addf(h,
			    "<table><caption>%s (%s)</caption><tr><th>rank</th><th>%s</th>"
			    "<th>stage · replica</th><th>charts</th></tr>\n",
			    agg_metrics[m].title, agg_metrics[m].low_bad ? "lowest" : "highest",
			    agg_metrics[m].unit + 1);
		for (int k = 0; k < ov->ntop[m]; k++) {
			int rk = ov->top[m][k];
			strbuf_addstr(h, "<tr><td><a href=\"");
			rank_href(h, I, rk);
			strbuf_addf(h, "\">%d</a></td><td>%.2f</td><td>", rk, ov->topv[m][k]);
			if (rk < t->nrank && t->stage_of[rk] >= 0)
				strbuf_addf(h, "%d · %d", t->stage_of[rk], t->model_of[rk]);
			strbuf_addstr(h, "</td><td>");
			rank_chart_link(h, R, it, rk);
			strbuf_addstr(h, "</td></tr>\n");
		}
		if (!ov->ntop[m])
			strbuf_addstr(h,
				      "<tr><td colspan=\"4\">no rank has this number</td></tr>\n");
		strbuf_addstr(h, "</table>\n");
	}
	strbuf_addstr(h, "</div>\n");
	strbuf_release(&rel);
	strbuf_release(&cap);
}

/* The section of one iteration on index.html: its summary, its problems
 * and, when the report details it, its overview and worst ranks. */
static void iteration_summary(struct strbuf *h, const struct report *R, const struct agg_iter *it)
{
	static const struct {
		enum report_file f;
		const char *text;
	} csvs[] = { { RF_PP_GROUPS, "pp_groups" },
		     { RF_PIPELINES, "pipelines" },
		     { RF_STRAGGLERS, "stragglers" } };
	const struct topology *t = &R->job->topo;
	int I = it->iteration;
	strbuf_addf(h, "<section id=\"iter-%d\">\n<h2>Iteration %d</h2>\n<p>", I, I);
	report_html_escape(h, it->folder);
	strbuf_addf(h, ": %d ranks analysed, %d failed. ", it->nok, it->nfailed);
	if (it->plan.detail) {
		strbuf_addstr(h, "<a href=\"");
		report_rel(h, RF_PAGE, I, 0);
		strbuf_addstr(h, "\"><b>Details</b>: pipelines, PP-group and model-replica charts, "
				 "every rank</a>. CSV: ");
		for (size_t k = 0; k < sizeof(csvs) / sizeof(csvs[0]); k++) {
			strbuf_addf(h, "%s<a href=\"", k ? ", " : "");
			report_rel(h, csvs[k].f, I, 0);
			strbuf_addf(h, "\">%s</a>", csvs[k].text);
		}
		strbuf_addstr(h, ". ");
	} else {
		strbuf_addstr(h, "Not detailed in this report: ");
		how_to_get(h, "iteration=&lt;n&gt;");
		strbuf_addstr(h, " to see its overview, charts and page. ");
	}
	strbuf_addstr(h, "<a href=\"#compare\">back to the comparison</a></p>\n");
	failed_ranks(h, it);
	conflicts_section(h, it);
	incomplete_groups(h, t, it);
	if (it->plan.detail)
		overview(h, R, it);
	stragglers_table(h, t, it);
	strbuf_addstr(h, "</section>\n");
}

/* iteration_<N>.html: what grows with the job. */
static void iteration_page(struct strbuf *h, const struct report *R, const struct agg_iter *it)
{
	const struct topology *t = &R->job->topo;
	int I = it->iteration;
	size_t nimg = 0;
	for (size_t i = 0; i < it->nranks; i++)
		nimg += 2 * rank_shown(it, i);
	for (size_t k = 0; k < it->res.npipes; k++)
		nimg += it->plan.pp_group[it->res.pipes[k].pp_group] != AGG_SHOW_NONE;
	for (size_t m = 0; m < t->groups[TOPO_MODEL].n; m++)
		nimg += it->plan.model_group[m] != AGG_SHOW_NONE;
	bool lazy = nimg > 30;
	strbuf_addf(h, "<h1>pptrace: iteration %d</h1>\n<p><a href=\"", I);
	report_rel(h, RF_INDEX, 0, 0);
	strbuf_addf(h, "#iter-%d\">back to the summary and overview</a>. ", I);
	report_html_escape(h, it->folder);
	strbuf_addf(h,
		    ": %d ranks analysed, %d failed.</p>\n<nav><a href=\"#pipelines\">pipelines"
		    "</a><a href=\"#pp-groups\">PP groups</a><a href=\"#replicas\">model "
		    "replicas</a><a href=\"#ranks\">ranks</a><a href=\"#rank-charts\">rank "
		    "charts</a></nav>\n",
		    it->nok, it->nfailed);
	pipelines_table(h, t, it);
	group_charts(h, R, it, lazy);
	strbuf_addstr(h, "<h3 id=\"ranks\">Ranks</h3>\n<table><tr><th>rank</th><th>status</th>"
			 "<th>mode</th><th>PP group · stage</th><th>window (ms)</th><th>GPU busy "
			 "(ms)</th><th>bubble (ms)</th><th>coverage</th><th>charts</th><th>other "
			 "iterations</th></tr>\n");
	for (size_t i = 0; i < it->nranks; i++)
		rank_row(h, R, it, i);
	strbuf_addstr(h, "</table>\n");
	rank_charts(h, R, it, lazy);
}

static const char css[] =
	"body{font-family:sans-serif;margin:1.5em;color:#222}"
	"table{border-collapse:collapse;margin:.5em 0}"
	"td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}"
	"th{background:#f3f3f3}td:first-child{text-align:left}"
	"caption{font-weight:bold;text-align:left;padding:.2em 0}"
	"figure{margin:1em 0}img{max-width:100%;border:1px solid #eee}"
	".grid{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}"
	".grid figure{flex:1 1 30em;max-width:48%}.note{color:#555}"
	"nav a{margin-right:1em}section{border-top:2px solid #ddd;margin-top:2em}";

static const char js[] = "window.addEventListener('load',function(){var im=document.images,ok=0;"
			 "for(var i=0;i<im.length;i++)if(im[i].complete&&im[i].naturalWidth>0)ok++;"
			 "document.body.setAttribute('data-images',ok+'/'+im.length);});";

static void page_begin(struct strbuf *h, const char *title)
{
	strbuf_addf(h,
		    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		    "<title>%s</title><style>%s</style></head>\n<body>\n",
		    title, css);
}

static void page_end(struct strbuf *h)
{
	strbuf_addf(h, "<script>%s</script>\n</body></html>\n", js);
}

/* The VPP ppagg used and what it rests on (docs/ppagg.md "VPP"). */
static void vpp_line(struct strbuf *h, const struct agg_vpp *v)
{
	switch (v->from) {
	case AGG_VPP_UNTOLD:
		strbuf_addf(h, ". VPP %d (agg.vpp; the schedule does not tell: ", v->vpp);
		break;
	case AGG_VPP_CONFIRMED: strbuf_addf(h, ". VPP %d (agg.vpp; ", v->vpp); break;
	case AGG_VPP_SCHEDULE:
		strbuf_addf(h,
			    ". <b>VPP %d, read off the schedule: agg.vpp = %d "
			    "overridden</b> (",
			    v->vpp, v->cfg);
		break;
	case AGG_VPP_AMBIGUOUS:
	case AGG_VPP_NO_FIT:
		strbuf_addf(h,
			    ". <b>VPP %d (agg.vpp): the schedule does not settle "
			    "it</b> (",
			    v->vpp);
		break;
	}
	report_html_escape(h, v->why.buf);
	strbuf_addstr(h, ")");
}

static void index_header(struct strbuf *h, const struct report *R)
{
	const struct agg_job *job = R->job;
	const struct topology *t = &job->topo;
	strbuf_addstr(h, "<h1>pptrace: pipeline report</h1>\n<nav>");
	for (size_t i = 0; i < job->niters; i++) {
		int I = job->its[i].iteration;
		if (!job->its[i].plan.detail)
			continue;
		strbuf_addf(h, "<a href=\"#iter-%d\">iteration %d</a><a href=\"", I, I);
		report_rel(h, RF_PAGE, I, 0);
		strbuf_addstr(h, "\">(details)</a>");
	}
	strbuf_addstr(h, "</nav>\n<p>Database: ");
	report_html_escape(h, job->db_path);
	strbuf_addstr(h, ". Topology: ");
	if (t->source == TOPO_SRC_NONE) {
		strbuf_addstr(h, "none found (no PP groups, pipelines or stragglers)");
	} else {
		report_html_escape(h, topo_source_name(t->source));
		strbuf_addstr(h, " (");
		report_html_escape(h, t->origin.buf);
		strbuf_addf(h, "), TP %d, PP %d, DP %d, CP %d, EP %d, world %d", t->tp, t->pp,
			    t->dp, t->cp, t->ep, t->world);
		if (t->global_batch)
			strbuf_addf(h, ", global batch size %d", t->global_batch);
		vpp_line(h, &job->vpp);
	}
	strbuf_addf(h,
		    ". Times in ms; bubble = group window minus the rank's GPU time outside "
		    "pipeline communication. Straggler threshold %.0f %% over the DP-group "
		    "median. Comparison: <a href=\"",
		    100 * job->threshold);
	report_rel(h, RF_ITERATIONS, 0, 0);
	strbuf_addstr(h, "\">");
	report_rel(h, RF_ITERATIONS, 0, 0);
	strbuf_addstr(h, "</a>.</p>\n");
	if (t->notes.len) {
		strbuf_addstr(h, "<details><summary>Topology notes</summary><pre>");
		report_html_escape(h, t->notes.buf);
		strbuf_addstr(h, "</pre></details>\n");
	}
}

int report_html_write(const struct report *R)
{
	const struct agg_job *job = R->job;
	struct strbuf h = STRBUF_INIT;
	char title[64];
	int rc = 0;
	for (size_t i = 0; i < job->niters && !rc; i++) {
		if (!job->its[i].plan.detail)
			continue;
		strbuf_reset(&h);
		snprintf(title, sizeof(title), "pptrace: iteration %d", job->its[i].iteration);
		page_begin(&h, title);
		iteration_page(&h, R, &job->its[i]);
		page_end(&h);
		rc = report_write_file(R, RF_PAGE, job->its[i].iteration, 0, &h);
	}
	if (!rc && job->mode != AGG_CHARTS_ONLY) { /* else the earlier run's stays */
		strbuf_reset(&h);
		page_begin(&h, "pptrace report");
		index_header(&h, R);
		for (size_t k = 0; k < R->nsections; k++)
			R->sections[k].html(R, &h);
		comparison(&h, &job->topo, job->its, job->niters);
		for (size_t i = 0; i < job->niters; i++)
			if (has_section(&job->topo, &job->its[i]))
				iteration_summary(&h, R, &job->its[i]);
		page_end(&h);
		rc = report_write_file(R, RF_INDEX, 0, 0, &h);
	}
	strbuf_release(&h);
	return rc;
}
