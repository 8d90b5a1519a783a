/* report_csv.c — ppagg's CSVs (docs/ppagg.md "Output folder"): per iteration
 * its PP-group, pipeline and straggler rows (the database's, as files),
 * per rank its steps and category stats, and iterations.csv, the
 * comparison of the iterations. Times in integer ns; a value that is not
 * known is an empty field.
 */
#include "report_int.h"

#include <stdio.h>
#include <string.h>

#include "util/pp.h"

/* Two CSV fields a,b (or two empty ones) and then end. */
static void put_pair(FILE *f, bool have, int64_t a, int64_t b, const char *end)
{
	if (have)
		fprintf(f, "%lld,%lld%s", (long long)a, (long long)b, end);
	else
		fprintf(f, ",%s", end);
}

static void pp_groups(FILE *f, const void *arg)
{
	const struct agg_iter *it = arg;
	const struct agg_result *res = &it->res;
	fputs("iteration,pp_group,stage,rank,complete,group_window_start_ns,"
	      "group_window_end_ns,group_idle_ns,group_bubble_ns\n",
	      f);
	for (size_t i = 0; i < res->npp; i++) {
		const struct agg_pp_row *r = &res->pp[i];
		fprintf(f, "%d,%d,%d,%d,%d,", it->iteration, r->pp_group, r->stage, r->rank,
			r->complete);
		put_pair(f, r->has_window, r->gw_s, r->gw_e, ",");
		put_pair(f, r->has_rank, r->idle, r->bubble, "\n");
	}
}

static void pipelines(FILE *f, const void *arg)
{
	const struct agg_iter *it = arg;
	const struct agg_result *res = &it->res;
	fputs("iteration,pp_group,measured_ns,ideal_ns,gap_ns,bubble_ratio\n", f);
	for (size_t i = 0; i < res->npipes; i++) {
		const struct agg_pipeline_row *r = &res->pipes[i];
		fprintf(f, "%d,%d,%lld,", it->iteration, r->pp_group, (long long)r->measured);
		put_pair(f, r->has_ideal, r->ideal, r->gap, ",");
		fprintf(f, "%.6f\n", r->bubble_ratio);
	}
}

static void stragglers(FILE *f, const void *arg)
{
	const struct agg_iter *it = arg;
	const struct agg_result *res = &it->res;
	fputs("iteration,rank,group_kind,group,metric,value_ns,median_ns,excess\n", f);
	for (size_t i = 0; i < res->nstrag; i++) {
		const struct agg_straggler_row *r = &res->strag[i];
		fprintf(f, "%d,%d,%s,%d,%s,%lld,%lld,%.6f\n", it->iteration, r->rank, r->group_kind,
			r->group, r->metric, (long long)r->value, (long long)r->median, r->excess);
	}
}

int report_iteration_csvs(const struct report *R, const struct agg_iter *it)
{
	struct report_dir d;
	int I = it->iteration;
	int rc = report_dir_open_at(&d, R, RF_ITERATION, I, 0);
	if (!rc)
		rc = report_write_put(&d, RF_PP_GROUPS, I, 0, pp_groups, it);
	if (!rc)
		rc = report_write_put(&d, RF_PIPELINES, I, 0, pipelines, it);
	if (!rc)
		rc = report_write_put(&d, RF_STRAGGLERS, I, 0, stragglers, it);
	report_dir_close(&d);
	return rc;
}

static void steps(FILE *f, const void *arg)
{
	const struct agg_rank *r = arg;
	fputs("phase,seq,cpu_start_ns,cpu_end_ns,start_ns,end_ns,wall_ns,comp_ns,comm_ns,"
	      "overlap_ns,comp_only_ns,comm_only_ns,kernels,chunk,microbatch\n",
	      f);
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct agg_step *s = &r->steps[i];
		fprintf(f, "%s,%d,%lld,%lld,", report_phase_name(s->phase), s->seq,
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
}

static void categories(FILE *f, const void *arg)
{
	const struct agg_rank *r = arg;
	fputs("category,kernels,sum_ns,busy_ns\n", f);
	for (size_t i = 0; i < r->ncats; i++)
		fprintf(f, "%s,%lld,%lld,%lld\n", rr_category_name(r->cats[i].category),
			(long long)r->cats[i].kernels, (long long)r->cats[i].sum,
			(long long)r->cats[i].busy);
}

int report_rank_csvs(const struct report_dir *d, int it, const struct agg_rank *r)
{
	int rc = report_write_put(d, RF_RANK_STEPS, it, r->in.rank, steps, r);
	return rc ? rc : report_write_put(d, RF_RANK_CATEGORIES, it, r->in.rank, categories, r);
}

int report_iterations_csv(const struct report *R)
{
	const struct agg_job *job = R->job;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "iteration,ranks_ok,ranks_failed,iteration_ns,mean_bubble_ratio,"
			   "slowest_stage,slowest_stage_compute_ns,stragglers\n");
	for (size_t i = 0; i < job->niters; i++) {
		const struct agg_iter *it = &job->its[i];
		int64_t tmax = 0;
		double b = 0;
		for (size_t p = 0; p < it->res.npipes; p++) {
			if (it->res.pipes[p].measured > tmax)
				tmax = it->res.pipes[p].measured;
			b += it->res.pipes[p].bubble_ratio;
		}
		strbuf_addf(&sb, "%d,%d,%d,%lld,%.6f,", it->iteration, it->nok, it->nfailed,
			    (long long)tmax, it->res.npipes ? b / (double)it->res.npipes : 0.0);
		if (it->res.slowest_stage >= 0)
			strbuf_addf(&sb, "%d,%lld,", it->res.slowest_stage,
				    (long long)it->res.slowest_compute);
		else
			strbuf_addstr(&sb, ",,");
		strbuf_addch(&sb, '"');
		for (size_t s = 0; s < it->res.nstrag; s++)
			strbuf_addf(&sb, "%s%d", s ? " " : "", it->res.strag[s].rank);
		strbuf_addstr(&sb, "\"\n");
	}
	int rc = report_write_file(R, RF_ITERATIONS, 0, 0, &sb);
	strbuf_release(&sb);
	return rc;
}

void report_csv_text(struct strbuf *sb, const char *s)
{
	if (!s || !*s)
		return;
	if (strpbrk(s, ",\"\n\r"))
		strbuf_add_quoted(sb, s, '"');
	else
		strbuf_addstr(sb, s);
}
