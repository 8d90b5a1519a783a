/* report.h — ppagg's output layer: the charts (gnuplot scripts, rendered
 * by gnuplot), the CSVs, the Perfetto JSON and the HTML report of an
 * analysed job (struct agg_job, agg/agg.h), and the summary line
 * (docs/ppagg.md "Output folder", "Pages").
 *
 * report_write() only reads the job, except for the timelines' blocks,
 * which it reads from the database one iteration at a time
 * (agg/agg_timeline.h). The files: report.c (report_write(): the
 * sequence, the analyses' sections), report_paths.c (every output's path,
 * and its files written safely), report_csv.c, report_chart.c (the rank,
 * PP-group and model-replica timelines and overlap charts),
 * report_overview.c (the heatmaps and step chart), report_render.c (the
 * render queue, gnuplot), report_html.c (index.html and the iteration
 * pages), report_whatif.c (the what-if's section, charts and JSON).
 */
#ifndef REPORT_H
#define REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>

struct agg_job;
struct strbuf;
struct topology;

/* How the outputs are written. */
struct report_opts {
	const char *out; /* --out; NULL = <base>/pptrace */
	bool individual; /* --time-alignment individual: each row's time starts
			  * at its own first event */
	bool png, svg;   /* --format: the outputs each script makes */
	bool render;     /* false with --no-render: scripts only */
	int processes;   /* gnuplot processes (--processes) */
	bool quiet;      /* --quiet: no summary line */
	/* --perfetto-ranks: the ranks of why/ranks.json (NULL: no file), and
	 * the events above which it holds fewer iterations
	 * (agg.perfetto_max_events). */
	const char *perfetto_ranks;
	size_t perfetto_max_events;
};

/* The default of agg.perfetto_max_events: what Perfetto's UI opens well. */
enum { REPORT_PERFETTO_MAX_EVENTS = 1000000 };

/* Marks in sel[0..nrank) the ranks that spec names (--perfetto-ranks,
 * docs/ppagg.md): comma-separated ranks ("9"), ranges ("8-15"), PP groups
 * ("pp_group=1") and model replicas ("replica=0", also ranges), numbered
 * from 0 as ppagg numbers them in t. With t NULL only the syntax is
 * checked. 0, or PP_EINVAL with why appended to err. */
int report_perfetto_ranks(const char *spec, const struct topology *t, int nrank, bool *sel,
			  struct strbuf *err);

/* The output folder: --out, else <base>/pptrace (job->base). malloc'd. */
char *report_out(const struct agg_job *job, const struct report_opts *o);

/* Whether a charts-only run (AGG_CHARTS_ONLY) can add its charts to
 * the report in the output folder: the folder holds index.html and the page
 * of every iteration job details (none asked of a job not analysed yet),
 * whose group and replica charts a page links. */
bool report_can_add_charts(const struct agg_job *job, const struct report_opts *o);

/* Writes the outputs of job (agg_analyse() succeeded on it) under the
 * output folder: per iteration its CSVs and chart scripts, the analyses'
 * files, iterations.csv; renders the scripts the render plan asks for
 * (each failure reported, the others go on); writes index.html and the
 * iteration pages; prints the summary line. Returns 0 with *nfailed the
 * number of charts gnuplot failed to render, or a negative PP_E* code with
 * why (a file that cannot be written, the database) appended to err; what
 * failed to render is a warning, or in err when gnuplot could not run. Of a
 * charts-only job (agg_job.mode is AGG_CHARTS_ONLY) it writes the charts its plans name
 * (agg_plan.only_rank, ...) and the iteration pages, nothing else. */
int report_write(const struct agg_job *job, const struct report_opts *o, int *nfailed,
		 struct strbuf *err);

/* The schedule advisor's answer for job (agg/agg_advice.h) as a text
 * table on f: the inputs, the calibration, one line per schedule, the best
 * option (ppsim --from-db). Returns 0, or PP_ENOTFOUND with why there is
 * none (no pipeline, or inputs it could not measure) appended to err. */
int report_advice_table(FILE *f, const struct agg_job *job, struct strbuf *err);

#endif
