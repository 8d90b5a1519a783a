/* report.c — report_write(), the sequence of ppagg's output layer
 * (report.h):
 *
 *   the output folder → per iteration the report details: its timelines'
 *   blocks (of the ranks drawn; read now, dropped after), its CSVs, the
 *   overview's charts, per rank shown its CSVs and charts, the PP-group
 *   and model-replica charts shown (each script queued with what the
 *   render plan asks of it, or not) → the analyses' files, in the
 *   order of sections[] → iterations.csv → gnuplot renders the queue →
 *   the iteration pages and index.html (the analyses' sections first) →
 *   the summary line (with each analysis's headline).
 *
 * A charts-only run (agg_job.mode is AGG_CHARTS_ONLY) writes of all this the charts
 * --charts names, renders them and rewrites the iteration pages.
 *
 * A file that cannot be written stops it with a message; a chart gnuplot
 * fails on does not.
 */
#include "report_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/pp.h"

/* The analyses' parts of the report, in the order of their sections on
 * index.html (docs/architecture.md, "Adding an analysis to ppagg"). The
 * user annotations come right after the comparison when no rank is in
 * Megatron mode (they are then the job's main summary), else last, after
 * what the categories tell (order()). */
enum { S_COMPARE, S_ANNOT, S_WHATIF, S_WHY, S_ADVICE, NSECTIONS };
static const struct report_section *const sections[NSECTIONS] = {
	[S_COMPARE] = &report_compare_section, [S_ANNOT] = &report_annot_section,
	[S_WHATIF] = &report_whatif_section,   [S_WHY] = &report_why_section,
	[S_ADVICE] = &report_advice_section,
};

/* The sections of job in their order on index.html. */
static void order(const struct agg_job *job, struct report_section *v)
{
	static const int generic[NSECTIONS] = { S_COMPARE, S_ANNOT, S_WHATIF, S_WHY, S_ADVICE };
	static const int megatron[NSECTIONS] = { S_COMPARE, S_WHATIF, S_WHY, S_ADVICE, S_ANNOT };
	for (size_t k = 0; k < NSECTIONS; k++)
		v[k] = *sections[(job->annot.generic ? generic : megatron)[k]];
}

/* Rank i of it: its folder, CSVs and charts. */
static int rank_files(struct report *R, const struct agg_iter *it, size_t i,
		      const struct agg_blocks *bl)
{
	const struct agg_rank *r = &it->ranks[i];
	struct report_dir d;
	int rc = report_dir_open_at(&d, R, RF_RANK, it->iteration, r->in.rank);
	if (!rc)
		rc = report_rank_csvs(&d, it->iteration, r);
	if (!rc)
		rc = report_rank_charts(R, &d, it, i, bl);
	report_dir_close(&d);
	return rc;
}

/* The files of one iteration the report details: what its plan shows (a
 * charts-only run: the charts --charts names, agg_plan.only_rank, ...).
 * Its timelines' blocks are only needed for the scripts: read here (of the
 * ranks drawn) and dropped at the end. */
static int iteration_files(struct report *R, const struct agg_iter *it)
{
	const struct topology *t = &R->job->topo;
	const struct agg_plan *p = &it->plan;
	bool only = p->only_rank != NULL;
	struct agg_timeline tl;
	if (!p->detail)
		return 0;
	int rc = agg_timeline_load(R->job, it, &tl, R->err);
	if (!rc && !only)
		rc = report_iteration_csvs(R, it);
	if (!rc && !only)
		rc = report_overview_charts(R, it);
	for (size_t i = 0; i < it->nranks && !rc; i++)
		if (only ? p->only_rank[i]
			 : p->rank_timeline[i] != AGG_SHOW_NONE ||
				    p->rank_overlap[i] != AGG_SHOW_NONE)
			rc = rank_files(R, it, i, &tl.rank[i]);
	for (size_t k = 0; k < it->res.npipes && !rc; k++) {
		size_t g = (size_t)it->res.pipes[k].pp_group;
		if (only ? p->only_pp[g] : p->pp_group[g] != AGG_SHOW_NONE)
			rc = report_pp_group_chart(R, it, &tl, g);
	}
	for (size_t m = 0; m < t->groups[TOPO_MODEL].n && !rc; m++)
		if (only ? p->only_model[m] : p->model_group[m] != AGG_SHOW_NONE)
			rc = report_model_group_chart(R, it, &tl, m);
	agg_timeline_release(&tl);
	return rc;
}

/* Every file but the pages (each writer appends its own errors to R->err);
 * a charts-only run writes the charts asked for alone. */
static int write_files(struct report *R)
{
	int rc = report_mkdir(R->out, R->err);
	for (size_t i = 0; i < R->job->niters && !rc; i++)
		rc = iteration_files(R, &R->job->its[i]);
	if (R->job->mode == AGG_CHARTS_ONLY)
		return rc;
	for (size_t k = 0; k < R->nsections && !rc; k++)
		rc = R->sections[k].files(R);
	return rc ? rc : report_iterations_csv(R);
}

static void summary(const struct report *R, int64_t t_files, double render_ms)
{
	const struct agg_job *job = R->job;
	const struct report_opts *o = R->o;
	size_t nscripts = R->queue.written, nrendered = R->queue.n;
	const char *norender = o->render ? "" : " (not rendered: --no-render)";
	if (o->quiet)
		return;
	/* The analyses' headlines, each followed by "; ". */
	struct strbuf head = STRBUF_INIT, one = STRBUF_INIT;
	for (size_t k = 0; k < R->nsections && job->mode != AGG_CHARTS_ONLY; k++) {
		strbuf_reset(&one);
		R->sections[k].headline(R, &one);
		if (one.len)
			strbuf_addf(&head, "%s; ", one.buf);
	}
	if (job->mode == AGG_CHARTS_ONLY)
		fprintf(stderr,
			"%s: --charts: %zu chart scripts written in %.2f s%s from the database (no "
			"analysis run again); the iteration pages link them, index.html is left as "
			"it was: %s/index.html\n",
			pp_progname(), nscripts, (double)(t_files - job->started_ns) / 1e9,
			norender, R->out);
	else
		fprintf(stderr,
			"%s: %zu iteration%s aggregated in %.2f s, %zu chart scripts written "
			"in %.2f s%s; %sreport: %s/index.html\n",
			pp_progname(), job->niters, job->niters == 1 ? "" : "s",
			(double)(job->analysed_ns - job->started_ns) / 1e9, nscripts,
			(double)(t_files - job->analysed_ns) / 1e9, norender, head.buf, R->out);
	strbuf_release(&head);
	strbuf_release(&one);
	if (o->render && nrendered)
		fprintf(stderr, "%s: rendering: %zu charts, %.1f ms per chart (%d processes)\n",
			pp_progname(), nrendered, render_ms / (double)nrendered, o->processes);
}

int report_write(const struct agg_job *job, const struct report_opts *o, int *nfailed,
		 struct strbuf *err)
{
	struct report_section v[NSECTIONS];
	struct report R = { .job = job, .o = o, .err = err, .sections = v, .nsections = NSECTIONS };
	double render_ms = 0;
	*nfailed = 0;
	order(job, v);
	R.out = report_out(job, o);
	int rc = write_files(&R);
	int64_t t_files = pp_now_ns();
	if (!rc && o->render)
		*nfailed = report_render(&R.queue, o->processes, &render_ms, o->quiet, err);
	if (!rc)
		rc = report_html_write(&R);
	if (!rc)
		summary(&R, t_files, render_ms);
	report_queue_release(&R.queue);
	free(R.out);
	return rc;
}

bool report_can_add_charts(const struct agg_job *job, const struct report_opts *o)
{
	char *out = report_out(job, o);
	struct strbuf path = STRBUF_INIT;
	bool yes = true;
	for (size_t i = 0; i <= job->niters && yes; i++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/", out);
		if (i == job->niters)
			report_rel(&path, RF_INDEX, 0, 0);
		else if (job->its[i].plan.detail)
			report_rel(&path, RF_PAGE, job->its[i].iteration, 0);
		else
			continue;
		yes = access(path.buf, F_OK) == 0;
	}
	strbuf_release(&path);
	free(out);
	return yes;
}
