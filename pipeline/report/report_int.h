/* report_int.h — what the files of ppagg's output layer share: the run
 * (struct report), every output's path and the files written safely
 * (report_paths.c), the render queue (report_render.c), the writers of the
 * CSVs (report_csv.c), the charts (report_chart.c, report_overview.c) and
 * the pages (report_html.c), the trace-event JSON (report_trace.c), and
 * the sections the analyses add to the report (the comparison's:
 * report_compare.c; the user annotations': report_annot.c; the what-if's:
 * report_whatif.c; why the pipeline waits: report_why.c; the advisor's:
 * report_advice.c). Internal to pipeline/report/.
 */
#ifndef REPORT_INT_H
#define REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "agg/agg.h"
#include "agg/agg_timeline.h"
#include "report.h"
#include "util/safefile.h"
#include "util/strbuf.h"

/* ---- the render queue (report_render.c) ---- */

/* A script to render, with the outputs to make now. */
struct report_script {
	char *path;
	bool png, svg;
};
struct report_queue {
	struct report_script *v; /* those to render */
	size_t n, alloc;
	size_t written; /* every script written, rendered or not */
};

/* ---- one run (report.c) ---- */

struct report_section;

struct report {
	const struct agg_job *job;
	const struct report_opts *o;
	struct strbuf *err;        /* report_write()'s: what failed, one a line */
	char *out;                 /* the output folder (report_out()) */
	struct report_queue queue; /* the scripts */
	/* The analyses' parts of the report, in the order of their sections
	 * on index.html. */
	const struct report_section *sections;
	size_t nsections;
};

/* An analysis's part of the report (docs/architecture.md, "Adding an
 * analysis to ppagg"). Each reads the analysis's member of R->job. */
struct report_section {
	/* Writes its files: charts (queued with report_queue_script()), CSVs,
	 * JSON; removes what an earlier run wrote that this one does not.
	 * Called after the iterations' files, before rendering. 0 or PP_EIO
	 * with why in R->err. */
	int (*files)(struct report *R);
	/* Appends its section of index.html (between the header and the
	 * iterations); a line saying why when there is nothing to show. */
	void (*html)(const struct report *R, struct strbuf *h);
	/* Appends its part of the summary line ("what-if: S 1.087, ..."), or
	 * nothing. */
	void (*headline)(const struct report *R, struct strbuf *sb);
};

/* ---- every output's path (report_paths.c) ---- */

/* The outputs, each named by its kind, its iteration (it) and the rank,
 * group or metric it is about (id): the one place that spells the report's
 * folders and file names (docs/ppagg.md "Output folder"). A chart is named by its
 * stem: add ".gp", ".png" or ".svg". */
enum report_file {
	RF_INDEX,                /* index.html */
	RF_ITERATIONS,           /* iterations.csv */
	RF_PAGE,                 /* iteration_<it>.html */
	RF_ITERATION,            /* iteration_<it> */
	RF_PP_GROUPS,            /* iteration_<it>/pp_groups.csv */
	RF_PIPELINES,            /* iteration_<it>/pipelines.csv */
	RF_STRAGGLERS,           /* iteration_<it>/stragglers.csv */
	RF_OVERVIEW,             /* iteration_<it>/overview */
	RF_OVERVIEW_MAP,         /* iteration_<it>/overview/<key of metric id> */
	RF_OVERVIEW_STEPS,       /* iteration_<it>/overview/steps */
	RF_RANK,                 /* iteration_<it>/rank_<id> */
	RF_RANK_TIMELINE,        /* iteration_<it>/rank_<id>/timeline */
	RF_RANK_OVERLAP,         /* iteration_<it>/rank_<id>/overlap */
	RF_RANK_STEPS,           /* iteration_<it>/rank_<id>/steps.csv */
	RF_RANK_CATEGORIES,      /* iteration_<it>/rank_<id>/categories.csv */
	RF_PP_GROUP,             /* iteration_<it>/pp_group_<id> */
	RF_PP_GROUP_TIMELINE,    /* iteration_<it>/pp_group_<id>/timeline */
	RF_MODEL_GROUP,          /* iteration_<it>/model_group_<id> */
	RF_MODEL_GROUP_TIMELINE, /* iteration_<it>/model_group_<id>/timeline */
	RF_WHATIF,               /* whatif */
	RF_WHATIF_SW,            /* whatif/sw: the S_w heatmap */
	RF_WHATIF_STEP,          /* whatif/step: one step, measured and ideal */
	RF_WHATIF_JSON,          /* whatif/timeline.json: the same for Perfetto */
	RF_ANNOT,                /* annotations: the user annotations */
	RF_ANNOT_CSV,            /* annotations/annotations.csv: every name per group */
	RF_ADVICE,               /* advice */
	RF_ADVICE_CSV,           /* advice/advice.csv: the advice view */
	RF_ADVICE_MEMORY_CSV,    /* advice/advice_memory.csv */
	RF_ADVICE_CHART,         /* advice/step_memory: step time against memory */
	RF_WHY,                  /* why */
	RF_WHY_HOPS,             /* why/hops: wait vs transfer per stage pair */
	RF_WHY_JSON,             /* why/ranks.json: the chosen ranks for Perfetto */
	RF_COMPARE,              /* compare: the comparison with a baseline */
	RF_COMPARE_SUMMARY,      /* compare/summary.csv: the compare_summary view */
	RF_COMPARE_CATEGORIES,   /* compare/categories.csv: compare_categories */
	RF_COMPARE_OPTYPES,      /* compare/optypes.csv: compare_optypes */
	RF_COMPARE_GROUPS,       /* compare/groups.csv: compare_groups */
	RF_COMPARE_RANKS,        /* compare/ranks.csv: compare_ranks */
	RF_NFILES                /* not an output: how many there are */
};

/* Appends the path of output f relative to the output folder. */
void report_rel(struct strbuf *sb, enum report_file f, int it, long id);
/* Appends "<out>/" and the path of output f. */
void report_path(struct strbuf *sb, const struct report *R, enum report_file f, int it, long id);
/* The last component of a path: the name of a file in its folder. */
const char *report_leaf(const char *path);

/* ---- files (report_paths.c) ---- */

/* Output files are written to a temporary name and renamed into place,
 * never through a symlink planted in the output area (util/safefile.h).
 * Each function appends what failed to err (the report_dir's for
 * report_open()) and returns PP_EIO, or 0. */

/* An output folder, created (mkdir -p) and open: its files are created
 * relative to fd (no path walk per file). */
struct report_dir {
	const char *path; /* names it in messages: borrowed, or own */
	int fd;
	struct strbuf *err; /* borrowed; report_open()'s messages go there */
	char *own;          /* the path report_dir_open_at() made */
};
int report_dir_open(struct report_dir *d, const char *path, struct strbuf *err);
/* report_dir_open() of the folder of output f (of iteration it, about id),
 * its messages to R->err. */
int report_dir_open_at(struct report_dir *d, const struct report *R, enum report_file f, int it,
		       long id);
/* Closes d (also after its open failed). */
void report_dir_close(struct report_dir *d);
/* mkdir -p without keeping the folder open. */
int report_mkdir(const char *path, struct strbuf *err);
/* Starts writing the file name in d; path receives "<d>/<name>". Returns
 * sf->fp, or NULL with why appended to d->err. */
FILE *report_open(const struct report_dir *d, const char *name, struct strbuf *path,
		  struct safefile *sf);
/* Finishes the file report_open() started (path names it). */
int report_commit(struct safefile *sf, const char *path, struct strbuf *err);
/* Removes the files names[0..n) (leaf names) that an earlier run wrote to
 * the folder f and this one does not, so that the folder never shows
 * another run's analysis; the folder too when it is left empty. Only these
 * names, relative to the folder opened without following a symlink inside
 * the output area (util/safefile.h); a failure is a warning. */
void report_remove_stale(const struct report *R, enum report_file folder, const char *const *names,
			 size_t n);
/* Appends s as a text field of a CSV: as it is, or quoted when it holds a
 * comma, a quote or a line break; nothing for NULL or "". */
void report_csv_text(struct strbuf *sb, const char *s);

/* Writes the file f with the content sb, its folder made when missing
 * (report_dir_open()). */
int report_write_file(const struct report *R, enum report_file f, int it, long id,
		      const struct strbuf *sb);
/* Writes the file f (of iteration it, about id) in its open folder d, the
 * content by put(fp, arg). */
int report_write_put(const struct report_dir *d, enum report_file f, int it, long id,
		     void (*put)(FILE *, const void *), const void *arg);
/* A file of an analysis's folder: output f, plus ext (".gp", or ""). */
struct report_name {
	enum report_file f;
	const char *ext;
};
/* report_remove_stale() of the outputs names[0..n) of the folder dir,
 * named by their report_file and extension. */
void report_remove(const struct report *R, enum report_file dir, const struct report_name *names,
		   size_t n);

/* ---- the render queue (report_render.c) ---- */

/* Counts a written script; queues it (copied) with the outputs show asks
 * of the --format ones, none with --no-render. */
void report_queue_add(struct report *R, const char *script, enum agg_show show);
/* After a chart writer returned rc for <prefix>.gp (its message appended
 * to R->err): PP_EIO when it failed, else report_queue_add()s the script. */
int report_queue_script(struct report *R, int rc, const char *prefix, enum agg_show show);
/* Finishes a chart script written by hand at path (report_open()): commits
 * it, removes the images an earlier run rendered from it
 * (gnuplot_clear_outputs()) and queues it. 0 or PP_EIO (why in R->err). */
int report_commit_script(struct report *R, struct safefile *sf, const char *path,
			 enum agg_show show);
void report_queue_release(struct report_queue *q);
/* Runs gnuplot on every queued script, at most processes at a time
 * (chart/gnuplot.h). Returns the number of scripts that failed (each a
 * warning; all of them, with why in err, when gnuplot could not run); *ms
 * gets the wall time. 0 and a warning when gnuplot is not installed. */
int report_render(const struct report_queue *q, int processes, double *ms, bool quiet,
		  struct strbuf *err);

/* ---- CSVs (report_csv.c) ---- */

/* <iteration>/pp_groups.csv, pipelines.csv and stragglers.csv. */
int report_iteration_csvs(const struct report *R, const struct agg_iter *it);
/* steps.csv and categories.csv of rank r of iteration it, in its open
 * folder d. */
int report_rank_csvs(const struct report_dir *d, int it, const struct agg_rank *r);
/* iterations.csv: one line per iteration. */
int report_iterations_csv(const struct report *R);

/* ---- charts (report_chart.c, report_overview.c) ---- */

/* The phase's name for charts and CSVs; "-" for RR_NOPHASE. */
const char *report_phase_name(enum rr_phase p);
/* Writes the outputs of a w × h chart into its script f: the guard of
 * gnuplot_write_formats(), then for the PNG and the SVG (with hover text),
 * each when --format makes it (both when it names neither), the block of
 * gnuplot_begin_output() that sets the terminal and writes <stem>.png or
 * <stem>.svg, with the plot commands plot(f, svg, arg) writes in it (whole
 * lines; "unset output" and the block's end follow). */
void report_write_outputs(FILE *f, const struct report_opts *o, int w, int h, const char *stem,
			  void (*plot)(FILE *f, bool svg, const void *arg), const void *arg);
/* The timeline (when it has blocks) and the overlap chart of rank i of it,
 * in its open folder d, rendered as it->plan says. */
int report_rank_charts(struct report *R, const struct report_dir *d, const struct agg_iter *it,
		       size_t i, const struct agg_blocks *bl);
/* The timeline of PP group g (topology order) of it. */
int report_pp_group_chart(struct report *R, const struct agg_iter *it,
			  const struct agg_timeline *tl, size_t g);
/* The timeline of model replica m of it, its PP groups in topology order;
 * nothing unless every rank of the replica is analysed. */
int report_model_group_chart(struct report *R, const struct agg_iter *it,
			     const struct agg_timeline *tl, size_t m);
/* The overview charts of it (report_overview.c): one heatmap per metric
 * over the stage × replica grid, and the step times per stage. Nothing
 * without a grid. */
int report_overview_charts(struct report *R, const struct agg_iter *it);

/* ---- pages (report_html.c) ---- */

/* Appends s to sb with &<>"' escaped. */
void report_html_escape(struct strbuf *sb, const char *s);
/* Appends a <figure> for the chart whose files are out/<rel>.{png,svg,gp}:
 * the image that exists (lazily loaded when lazy), the caption, links to the
 * script and the SVG, or how to render it when gnuplot made none. */
void report_html_chart(struct strbuf *h, const struct report *R, const char *rel,
		       const char *caption, bool lazy);
/* report_html_chart() of the output f that stands once in the report
 * (report_rel(f, 0, 0)). */
void report_html_chart_of(struct strbuf *h, const struct report *R, enum report_file f,
			  const char *caption, bool lazy);
/* Ends a section that has nothing more to show: "<p>lead: why.</p>". */
void report_html_not_done(struct strbuf *h, const char *lead, const char *why);
/* index.html (the analyses' sections, then the summary, overview and worst
 * ranks of every iteration) and iteration_<N>.html (its pipelines, group
 * charts, ranks and rank charts). */
int report_html_write(const struct report *R);

/* ---- Chrome trace-event JSON for Perfetto (report_trace.c) ---- */

/* One file of trace events (the JSON Object Format ui.perfetto.dev and
 * chrome://tracing open), written event by event; times are ns, counted
 * from origin, written as µs with three decimals. */
struct report_trace {
	FILE *f;
	bool first;
	long long origin;
	size_t events; /* complete events written */
	struct strbuf sb;
};
/* Writes the head: displayTimeUnit, otherData with the members other
 * (JSON text without the braces, or NULL), the start of traceEvents. */
void report_trace_begin(struct report_trace *t, FILE *f, const char *other, long long origin);
/* A metadata event: what (process_name, ...), args {key: value}, value
 * JSON text. */
void report_trace_meta(struct report_trace *t, int pid, int tid, const char *what, const char *key,
		       const char *value);
/* The name of process pid (tid < 0) or of track (pid, tid). */
void report_trace_name(struct report_trace *t, int pid, int tid, const char *name);
/* The sort index of process pid (tid < 0) or of track (pid, tid). */
void report_trace_order(struct report_trace *t, int pid, int tid, long sort_index);
/* A complete event [s, e) (clamped to the origin), named name (escaped
 * here) in category cat, with the args members args (JSON text without
 * the braces) or none. */
void report_trace_slice(struct report_trace *t, int pid, int tid, long long s, long long e,
			const char *name, const char *cat, const char *args);
/* Ends the array and the object; the caller closes f. */
void report_trace_end(struct report_trace *t);

/* The lanes of one track: an event that starts before a lane's last end
 * goes to the next lane, so each lane holds disjoint events (the format
 * nests the complete events of one track). Events come by start. */
enum { REPORT_LANES = 16 };
struct report_lanes {
	long long last[REPORT_LANES];
	int n; /* lanes used */
};
/* The lane of [s, e): the first whose last event ended by s (beyond
 * REPORT_LANES the last one). */
int report_lane(struct report_lanes *l, long long s, long long e);

/* ---- the analyses' sections, each defined at the end of its file ---- */

extern const struct report_section report_compare_section; /* report_compare.c */
extern const struct report_section report_annot_section;   /* report_annot.c */
extern const struct report_section report_whatif_section;  /* report_whatif.c */
extern const struct report_section report_why_section;     /* report_why.c */
extern const struct report_section report_advice_section;  /* report_advice.c */

#endif
