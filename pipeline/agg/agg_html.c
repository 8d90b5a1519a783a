/* agg_html.c — index.html at the root of ppagg's output: the comparison of
 * iterations, per iteration the pipelines, stragglers, incomplete groups,
 * failed ranks, every chart and a table of ranks. Links are relative, all
 * text from the database or the file system is escaped. A chart is shown
 * as its PNG (else its SVG) and links to its SVG, where the hover text
 * lives; a chart that was not rendered links to its .gp script.
 * An inline script counts loaded images into body[data-images] so that a
 * headless browser can check the page (tests/e2e).
 */
#include "agg_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topology.h"
#include "util/pp.h"
#include "util/safefile.h"

void agg_html_escape(struct strbuf *sb, const char *s)
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

static bool exists(const char *out, const char *rel)
{
	struct strbuf p = STRBUF_INIT;
	struct stat st;
	strbuf_addf(&p, "%s/%s", out, rel);
	bool ok = stat(p.buf, &st) == 0 && S_ISREG(st.st_mode);
	strbuf_release(&p);
	return ok;
}

/* A chart <figure> for the chart whose files are <rel>.{png,svg,gp}. */
static void chart(struct strbuf *h, const char *out, const char *rel, const char *caption,
		  bool lazy)
{
	struct strbuf p = STRBUF_INIT;
	const char *ext[] = { "png", "svg" };
	strbuf_addstr(h, "<figure>");
	bool shown = false;
	for (int k = 0; k < 2 && !shown; k++) {
		strbuf_reset(&p);
		strbuf_addf(&p, "%s.%s", rel, ext[k]);
		if (!exists(out, p.buf))
			continue;
		strbuf_addstr(h, "<a href=\"");
		agg_html_escape(h, rel);
		strbuf_addstr(h, ".svg\">");
		strbuf_addstr(h, "<img src=\"");
		agg_html_escape(h, p.buf);
		strbuf_addstr(h, "\" alt=\"");
		agg_html_escape(h, caption);
		strbuf_addf(h, "\"%s></a>", lazy ? " loading=\"lazy\"" : "");
		shown = true;
	}
	strbuf_addstr(h, "<figcaption>");
	agg_html_escape(h, caption);
	strbuf_addstr(h, " — <a href=\"");
	agg_html_escape(h, rel);
	strbuf_addstr(h, ".gp\">gnuplot script</a>");
	if (shown) {
		strbuf_addstr(h, ", <a href=\"");
		agg_html_escape(h, rel);
		strbuf_addstr(h, ".svg\">SVG with hover text</a>");
	} else {
		strbuf_addstr(h, " (not rendered)");
	}
	strbuf_addstr(h, "</figcaption></figure>\n");
	strbuf_release(&p);
}

/* rel is "<stem>.gp" of an existing script: points it at the SVG, else the
 * PNG, else leaves the script. */
static void best_href(const char *out, struct strbuf *rel)
{
	const char *ext[] = { ".svg", ".png" };
	size_t stem = rel->len - 3;
	for (int k = 0; k < 2; k++) {
		rel->len = stem;
		rel->buf[stem] = '\0';
		strbuf_addstr(rel, ext[k]);
		if (exists(out, rel->buf))
			return;
	}
	rel->len = stem;
	rel->buf[stem] = '\0';
	strbuf_addstr(rel, ".gp");
}

static void ranks_list(struct strbuf *h, const int *ranks, int n, int iteration)
{
	for (int i = 0; i < n; i++)
		strbuf_addf(h, "%s<a href=\"#i%d-r%d\">%d</a>", i ? ", " : "", iteration, ranks[i],
			    ranks[i]);
}

static double msd(int64_t ns)
{
	return (double)ns / 1e6;
}

/* Iteration time: the longest pipeline, else the longest rank window. */
static int64_t iter_time(const struct agg_iter *it)
{
	int64_t best = 0;
	for (size_t i = 0; i < it->res.npipes; i++)
		if (it->res.pipes[i].measured > best)
			best = it->res.pipes[i].measured;
	if (!best)
		for (size_t i = 0; i < it->nranks; i++)
			if (it->ranks[i].in.has_window &&
			    it->ranks[i].in.win_e - it->ranks[i].in.win_s > best)
				best = it->ranks[i].in.win_e - it->ranks[i].in.win_s;
	return best;
}

static double mean_bubble(const struct agg_iter *it)
{
	double s = 0;
	for (size_t i = 0; i < it->res.npipes; i++)
		s += it->res.pipes[i].bubble_ratio;
	return it->res.npipes ? s / (double)it->res.npipes : 0;
}

static void comparison(struct strbuf *h, const struct agg_iter *its, size_t n)
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
			if (it->res.pipes[p].has_ideal && (!has_gap || it->res.pipes[p].gap > gap)) {
				gap = it->res.pipes[p].gap;
				has_gap = true;
			}
		strbuf_addf(h, "<tr><td><a href=\"#iter-%d\">%d</a></td><td>%d</td><td>%d</td>"
			       "<td>%.3f</td><td>%.2f %%</td>",
			    it->iteration, it->iteration, it->nok, it->nfailed, msd(iter_time(it)),
			    100 * mean_bubble(it));
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
		for (size_t s = 0; s < it->res.nstrag; s++)
			strbuf_addf(h, "%s<a href=\"#i%d-r%d\">rank %d</a> (+%.1f %%)", s ? ", " : "",
				    it->iteration, it->res.strag[s].rank, it->res.strag[s].rank,
				    100 * it->res.strag[s].excess);
		if (!it->res.nstrag)
			strbuf_addstr(h, "none");
		strbuf_addstr(h, "</td></tr>\n");
	}
	strbuf_addstr(h, "</table>\n");
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
			agg_html_escape(h, it->ranks[i].error);
			strbuf_addstr(h, "</li>\n");
		}
		strbuf_addstr(h, "</ul>\n");
	}
	if (it->nunranked) {
		strbuf_addstr(h, "<h3>Traces without a rank (not aggregated)</h3>\n<ul>\n");
		for (size_t i = 0; i < it->nunranked; i++) {
			strbuf_addstr(h, "<li>");
			agg_html_escape(h, it->unranked[i]);
			strbuf_addstr(h, "</li>\n");
		}
		strbuf_addstr(h, "</ul>\n");
	}
}

static void failed_ranks(struct strbuf *h, const struct agg_iter *it)
{
	if (!it->nfailed)
		return;
	strbuf_addstr(h, "<h3>Failed ranks</h3>\n<table><tr><th>rank</th><th>trace</th>"
			 "<th>error</th></tr>\n");
	for (size_t i = 0; i < it->nranks; i++) {
		const struct agg_rank *r = &it->ranks[i];
		if (r->in.ok || r->ntraces > 1)
			continue;
		strbuf_addf(h, "<tr><td>%d</td><td>", r->in.rank);
		agg_html_escape(h, r->path);
		strbuf_addstr(h, "</td><td>");
		agg_html_escape(h, r->error);
		strbuf_addstr(h, "</td></tr>\n");
	}
	strbuf_addstr(h, "</table>\n");
}

/* Incomplete groups and their missing ranks. */
static void incomplete_groups(struct strbuf *h, const struct topology *t, const struct agg_iter *it)
{
	bool any_incomplete = false;
	for (int kind = TOPO_PP; kind <= TOPO_MODEL; kind += TOPO_MODEL - TOPO_PP) {
		const struct topo_groups *gs = &t->groups[kind];
		for (size_t g = 0; g < gs->n; g++) {
			int missing = 0;
			for (int i = 0; i < gs->v[g].n; i++) {
				const struct agg_rank *r = agg_iter_rank(it, gs->v[g].ranks[i]);
				missing += !r || !r->in.ok;
			}
			if (!missing)
				continue;
			if (!any_incomplete)
				strbuf_addstr(h, "<h3>Incomplete groups (not drawn)</h3>\n<ul>\n");
			any_incomplete = true;
			strbuf_addf(h, "<li>%s %zu: missing or failed rank%s ",
				    kind == TOPO_PP ? "PP group" : "model group", g,
				    missing > 1 ? "s" : "");
			int k = 0;
			for (int i = 0; i < gs->v[g].n; i++) {
				const struct agg_rank *r = agg_iter_rank(it, gs->v[g].ranks[i]);
				if (!r || !r->in.ok)
					strbuf_addf(h, "%s%d", k++ ? ", " : "", gs->v[g].ranks[i]);
			}
			strbuf_addstr(h, "</li>\n");
		}
	}
	if (any_incomplete)
		strbuf_addstr(h, "</ul>\n");
}

static void pipelines_table(struct strbuf *h, const struct topology *t, const struct agg_iter *it)
{
	int I = it->iteration;
	if (!it->res.npipes)
		return;
	strbuf_addstr(h, "<h3>Pipelines</h3>\n<table><tr><th>PP group</th><th>ranks (stage "
			 "order)</th><th>measured (ms)</th><th>ideal (ms)</th><th>gap (ms)</th>"
			 "<th>bubble</th></tr>\n");
	for (size_t p = 0; p < it->res.npipes; p++) {
		const struct agg_pipeline_row *pr = &it->res.pipes[p];
		const struct topo_group *g = &t->groups[TOPO_PP].v[pr->pp_group];
		strbuf_addf(h, "<tr><td><a href=\"#i%d-pp%d\">%d</a></td><td>", I, pr->pp_group,
			    pr->pp_group);
		ranks_list(h, g->ranks, g->n, I);
		strbuf_addf(h, "</td><td>%.3f</td>", msd(pr->measured));
		if (pr->has_ideal)
			strbuf_addf(h, "<td>%.3f</td><td>%.3f</td>", msd(pr->ideal), msd(pr->gap));
		else
			strbuf_addstr(h, "<td>–</td><td>–</td>");
		strbuf_addf(h, "<td>%.2f %%</td></tr>\n", 100 * pr->bubble_ratio);
	}
	strbuf_addstr(h, "</table>\n");
}

static void stragglers_table(struct strbuf *h, const struct agg_iter *it)
{
	strbuf_addstr(h, "<h3>Stragglers</h3>\n");
	if (!it->res.nstrag) {
		strbuf_addstr(h, "<p>None above the threshold.</p>\n");
		return;
	}
	strbuf_addstr(h, "<table><tr><th>rank</th><th>group</th><th>fwd+bwd compute (ms)"
			 "</th><th>group median (ms)</th><th>excess</th></tr>\n");
	for (size_t s = 0; s < it->res.nstrag; s++) {
		const struct agg_straggler_row *sr = &it->res.strag[s];
		strbuf_addf(h,
			    "<tr><td><a href=\"#i%d-r%d\">%d</a></td><td>%s %d</td>"
			    "<td>%.3f</td><td>%.3f</td><td>+%.1f %%</td></tr>\n",
			    it->iteration, sr->rank, sr->rank, sr->group_kind, sr->group,
			    msd(sr->value), msd(sr->median), 100 * sr->excess);
	}
	strbuf_addstr(h, "</table>\n");
}

/* The chart at rel (no extension) with its caption, when its script exists. */
static void chart_if_written(struct strbuf *h, const char *out, const char *rel,
			     const char *caption, bool lazy)
{
	struct strbuf gp = STRBUF_INIT;
	strbuf_addf(&gp, "%s.gp", rel);
	if (exists(out, gp.buf))
		chart(h, out, rel, caption, lazy);
	strbuf_release(&gp);
}

/* The timelines of the PP groups and of the model replicas. */
static void group_charts(struct strbuf *h, const char *out, const struct topology *t,
			 const struct agg_iter *it, bool lazy)
{
	struct strbuf rel = STRBUF_INIT, cap = STRBUF_INIT;
	int I = it->iteration;
	strbuf_addstr(h, "<h3>PP groups</h3>\n");
	for (size_t p = 0; p < it->res.npipes; p++) {
		int g = it->res.pipes[p].pp_group;
		strbuf_reset(&rel);
		strbuf_addf(&rel, "iteration_%d/pp_group_%d/timeline", I, g);
		strbuf_reset(&cap);
		strbuf_addf(&cap, "PP group %d, iteration %d", g, I);
		strbuf_addf(h, "<div id=\"i%d-pp%d\">", I, g);
		chart(h, out, rel.buf, cap.buf, lazy);
		strbuf_addstr(h, "</div>\n");
	}
	strbuf_addstr(h, "<h3>Model replicas</h3>\n");
	for (size_t m = 0; m < t->groups[TOPO_MODEL].n; m++) {
		strbuf_reset(&rel);
		strbuf_addf(&rel, "iteration_%d/model_group_%zu/timeline", I, m);
		strbuf_reset(&cap);
		strbuf_addf(&cap, "Model replica %zu, iteration %d", m, I);
		chart_if_written(h, out, rel.buf, cap.buf, lazy);
	}
	strbuf_release(&rel);
	strbuf_release(&cap);
}

/* One row of the ranks table. */
static void rank_row(struct strbuf *h, const char *out, const struct topology *t,
		     const struct agg_iter *it, const struct agg_rank *r,
		     const struct agg_iter *its, size_t n)
{
	static const char *const names[] = { "timeline", "overlap", "steps.csv", "categories.csv" };
	struct strbuf rel = STRBUF_INIT;
	int I = it->iteration, rk = r->in.rank;
	strbuf_addf(h, "<tr id=\"i%d-r%d\"><td>%d</td><td>", I, rk, rk);
	agg_html_escape(h, r->status);
	strbuf_addstr(h, "</td><td>");
	agg_html_escape(h, r->mode);
	strbuf_addstr(h, "</td><td>");
	if (rk < t->nrank && t->pp_of[rk] >= 0)
		strbuf_addf(h, "<a href=\"#i%d-pp%d\">%d</a> · %d", I, t->pp_of[rk], t->pp_of[rk],
			    t->stage_of[rk]);
	strbuf_addstr(h, "</td>");
	if (r->in.has_window)
		strbuf_addf(h, "<td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.1f %%</td>",
			    msd(r->in.win_e - r->in.win_s), msd(r->in.gpu_busy), msd(r->in.bubble),
			    100 * r->coverage);
	else
		strbuf_addstr(h, "<td>–</td><td>–</td><td>–</td><td>–</td>");
	strbuf_addstr(h, "<td>");
	for (int k = 0; k < 4; k++) {
		strbuf_reset(&rel);
		strbuf_addf(&rel, "iteration_%d/rank_%d/%s%s", I, rk, names[k], k < 2 ? ".gp" : "");
		if (!exists(out, rel.buf))
			continue;
		if (k < 2)
			best_href(out, &rel);
		strbuf_addstr(h, "<a href=\"");
		agg_html_escape(h, rel.buf);
		strbuf_addf(h, "\">%s</a> ", names[k]);
	}
	strbuf_addstr(h, "</td><td>");
	for (size_t j = 0; j < n; j++)
		if (&its[j] != it && agg_iter_rank(&its[j], rk))
			strbuf_addf(h, "<a href=\"#i%d-r%d\">%d</a> ", its[j].iteration, rk,
				    its[j].iteration);
	strbuf_addstr(h, "</td></tr>\n");
	strbuf_release(&rel);
}

/* The timeline and overlap charts of every rank, folded away. */
static void rank_charts(struct strbuf *h, const char *out, const struct agg_iter *it, bool lazy)
{
	struct strbuf rel = STRBUF_INIT, cap = STRBUF_INIT;
	strbuf_addstr(h, "<details><summary>Rank charts</summary>\n");
	for (size_t i = 0; i < it->nranks; i++) {
		const struct agg_rank *r = &it->ranks[i];
		for (int k = 0; k < 2; k++) {
			const char *kind = k ? "overlap" : "timeline";
			strbuf_reset(&rel);
			strbuf_addf(&rel, "iteration_%d/rank_%d/%s", it->iteration, r->in.rank,
				    kind);
			strbuf_reset(&cap);
			strbuf_addf(&cap, "Rank %d %s, iteration %d", r->in.rank, kind,
				    it->iteration);
			chart_if_written(h, out, rel.buf, cap.buf, lazy);
		}
	}
	strbuf_addstr(h, "</details>\n");
	strbuf_release(&rel);
	strbuf_release(&cap);
}

static void iteration_section(struct strbuf *h, const char *out, const struct topology *t,
			      const struct agg_iter *it, const struct agg_iter *its, size_t n,
			      bool lazy)
{
	int I = it->iteration;
	strbuf_addf(h, "<section id=\"iter-%d\">\n<h2>Iteration %d</h2>\n<p>", I, I);
	agg_html_escape(h, it->folder);
	strbuf_addf(h,
		    ": %d ranks analysed, %d failed. CSV: <a href=\"iteration_%d/pp_groups.csv\">"
		    "pp_groups</a>, <a href=\"iteration_%d/pipelines.csv\">pipelines</a>, "
		    "<a href=\"iteration_%d/stragglers.csv\">stragglers</a>. "
		    "<a href=\"#compare\">back to the comparison</a></p>\n",
		    it->nok, it->nfailed, I, I, I);
	failed_ranks(h, it);
	conflicts_section(h, it);
	incomplete_groups(h, t, it);
	pipelines_table(h, t, it);
	stragglers_table(h, it);
	group_charts(h, out, t, it, lazy);
	strbuf_addstr(h, "<h3>Ranks</h3>\n<table><tr><th>rank</th><th>status</th><th>mode</th>"
			 "<th>PP group · stage</th><th>window (ms)</th><th>GPU busy (ms)</th>"
			 "<th>bubble (ms)</th><th>coverage</th><th>charts</th><th>other iterations"
			 "</th></tr>\n");
	for (size_t i = 0; i < it->nranks; i++)
		rank_row(h, out, t, it, &it->ranks[i], its, n);
	strbuf_addstr(h, "</table>\n");
	rank_charts(h, out, it, lazy);
	strbuf_addstr(h, "</section>\n");
}

static const char css[] =
	"body{font-family:sans-serif;margin:1.5em;color:#222}"
	"table{border-collapse:collapse;margin:.5em 0}"
	"td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}"
	"th{background:#f3f3f3}td:first-child{text-align:left}"
	"figure{margin:1em 0}img{max-width:100%;border:1px solid #eee}"
	"nav a{margin-right:1em}section{border-top:2px solid #ddd;margin-top:2em}";

static const char js[] =
	"window.addEventListener('load',function(){var im=document.images,ok=0;"
	"for(var i=0;i<im.length;i++)if(im[i].complete&&im[i].naturalWidth>0)ok++;"
	"document.body.setAttribute('data-images',ok+'/'+im.length);});";

int agg_html_write(const char *out, const struct agg_opts *o, const struct topology *t,
		   const struct agg_iter *its, size_t n)
{
	struct strbuf h = STRBUF_INIT, path = STRBUF_INIT;
	size_t nimg = 0;
	for (size_t i = 0; i < n; i++)
		nimg += 2 * its[i].nranks + its[i].res.npipes + t->groups[TOPO_MODEL].n;
	bool lazy = nimg > 300;
	strbuf_addf(&h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			"<title>pptrace report</title><style>%s</style></head>\n<body>\n"
			"<h1>pptrace: pipeline report</h1>\n<nav>",
		    css);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&h, "<a href=\"#iter-%d\">iteration %d</a>", its[i].iteration,
			    its[i].iteration);
	strbuf_addstr(&h, "</nav>\n<p>Database: ");
	agg_html_escape(&h, o->db);
	strbuf_addstr(&h, ". Topology: ");
	if (t->source == TOPO_SRC_NONE) {
		strbuf_addstr(&h, "none found (no PP groups, pipelines or stragglers)");
	} else {
		agg_html_escape(&h, topo_source_name(t->source));
		strbuf_addstr(&h, " (");
		agg_html_escape(&h, t->origin.buf);
		strbuf_addf(&h, "), TP %d, PP %d, DP %d, CP %d, EP %d, world %d", t->tp, t->pp, t->dp,
			    t->cp, t->ep, t->world);
		if (t->global_batch)
			strbuf_addf(&h, ", global batch size %d", t->global_batch);
	}
	strbuf_addf(&h, ". Times in ms; bubble = group window minus the rank's GPU time outside "
			"pipeline communication. Straggler threshold %.0f %% over the DP-group "
			"median. Comparison: <a href=\"iterations.csv\">iterations.csv</a>.</p>\n",
		    100 * o->threshold);
	if (t->notes.len) {
		strbuf_addstr(&h, "<details><summary>Topology notes</summary><pre>");
		agg_html_escape(&h, t->notes.buf);
		strbuf_addstr(&h, "</pre></details>\n");
	}
	comparison(&h, its, n);
	for (size_t i = 0; i < n; i++)
		iteration_section(&h, out, t, &its[i], its, n, lazy);
	strbuf_addf(&h, "<script>%s</script>\n</body></html>\n", js);
	strbuf_addf(&path, "%s/index.html", out);
	int rc = 0;
	char err[512];
	/* Temporary file renamed into place, no symlink followed (safefile.h). */
	int dfd = -1;
	if (safe_opendir(AT_FDCWD, out, 0, &dfd, err, sizeof(err)) ||
	    safefile_write(dfd, "index.html", h.buf, h.len, err, sizeof(err))) {
		error("cannot write '%s': %s", path.buf, err);
		rc = PP_EIO;
	}
	if (dfd >= 0)
		close(dfd);
	strbuf_release(&h);
	strbuf_release(&path);
	return rc;
}
