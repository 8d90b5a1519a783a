/* gnuplot.h — finding gnuplot and running it over chart scripts, for every
 * chart of ours (ppsim's Gantt chart, ppagg's timelines, heatmaps and the
 * step distribution).
 *
 * A script PREFIX.gp names its outputs by base name (PREFIX.png,
 * PREFIX.svg), so gnuplot runs in the script's folder. Every script opens
 * its outputs under the guard that gnuplot_write_formats() writes: the
 * variables pp_png and pp_svg (1 unless set before the script runs) say
 * which outputs it makes, so `gnuplot x.gp` makes both and
 * `gnuplot -e 'pp_svg=0' x.gp` only the PNG.
 *
 * Rendering: one gnuplot process takes many scripts in turn (its stdin
 * says, per script, `reset session; cd '<folder>'; pp_png=…; load '<x.gp>'`
 * and it answers on stdout when the script is done, with gnuplot's error
 * number), so the start-up of gnuplot (about 40 ms, the most of a small
 * chart's time) is paid once per process, not once per chart. A script
 * that fails there, or that was running when its process died, is run
 * again alone (`gnuplot x.gp` in its folder) for its exit status and
 * gnuplot's own message. Before a script runs, whatever stands at its
 * output names is removed, so gnuplot creates new files instead of writing
 * through a symlink someone planted there.
 */
#ifndef GNUPLOT_H
#define GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether gnuplot is on PATH; its path into exe. */
bool gnuplot_find(char *exe, size_t n);

/* One script to render, and how it went. */
struct strbuf;

struct gnuplot_job {
	const char *script;  /* path of a .gp file */
	bool no_png, no_svg; /* outputs to skip (both false: make both) */
	bool failed;
	char why[512]; /* when failed: "gnuplot failed on 'x.gp' (exit 1): <its error line>" */
};

/* Renders the scripts, at most `parallel` gnuplot processes at once.
 * Returns 0 when gnuplot ran on every job (each job says whether it
 * failed); PP_ENOTFOUND when gnuplot is not on PATH, PP_EIO when it cannot
 * be started (the reason appended to err; no job ran). */
int gnuplot_render(struct gnuplot_job *jobs, size_t n, int parallel, struct strbuf *err);

/* Removes what stands at the PNG and SVG names of script (…/x.gp): no
 * image of an earlier run may outlive a script written anew. The writers
 * below do so for the scripts they write, a job before it renders (a failed
 * job leaves none); a script written otherwise calls this. */
void gnuplot_clear_outputs(const char *script);

/* Writes the lines that give pp_png and pp_svg their default (1) unless
 * the caller set them; once per script, before its first output. */
void gnuplot_write_formats(FILE *f);
/* Opens the block that makes one output: `if (pp_svg) {` or `if (pp_png) {`.
 * The terminal, output and plot commands follow; close it with "}\n". */
void gnuplot_begin_output(FILE *f, bool svg);

/* A single-quoted gnuplot string ('' for a quote) and a double-quoted
 * datablock field (no escapes exist there: '"' becomes '\''); control
 * characters become blanks. */
void gnuplot_put_sq(FILE *f, const char *s);
void gnuplot_put_dq(FILE *f, const char *s);
/* "set <what[i]> '<text[i]>' font ',<pt>'" for each of the n texts given
 * (NULL: none): the first (the title) at title_pt points, the rest at
 * label_pt. */
void gnuplot_put_titles(FILE *f, const char *const what[], const char *const text[], int n,
			int title_pt, int label_pt);

/* Writes the script PREFIX.gp through write(f, base, ctx), base being
 * PREFIX's last component: to a temporary name renamed into place, never
 * through a planted symlink (safefile.h); then removes PREFIX.png and
 * PREFIX.svg, an earlier run's images (gnuplot_clear_outputs()). 0, or
 * PP_EINVAL (prefix names a folder) / PP_EIO with the reason appended to
 * err. */
int gnuplot_write_script(const char *prefix,
			 int (*write)(FILE *f, const char *base, const void *ctx), const void *ctx,
			 struct strbuf *err);
/* The same for <dir>/<base>.gp in the open folder dirfd (dir names it in
 * messages): no path walk, for writers of many files in one folder. */
int gnuplot_write_script_at(int dirfd, const char *dir, const char *base,
			    int (*write)(FILE *f, const char *base, const void *ctx),
			    const void *ctx, struct strbuf *err);

#endif
