/* gnuplot.h — finding gnuplot and running it over chart scripts, for every
 * chart of ours (ppsim's Gantt chart, ppagg's timelines).
 *
 * A script PREFIX.gp names its outputs by base name (PREFIX.png,
 * PREFIX.svg), so gnuplot runs in the script's folder. Before it runs,
 * whatever stands at those names is removed, so gnuplot creates new files
 * instead of writing through a symlink someone planted there. gnuplot gets
 * /dev/null as stdin and stdout; its stderr is kept for the message when it
 * fails.
 */
#ifndef GNUPLOT_H
#define GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>

/* Whether gnuplot is on PATH; its path into exe. */
bool gnuplot_find(char *exe, size_t n);

/* One script to render, and how it went. */
struct gnuplot_job {
	const char *script; /* path of a .gp file */
	bool failed;
	char why[512]; /* when failed: "gnuplot failed on 'x.gp' (exit 1): <its error line>" */
};

/* Renders the scripts, at most `parallel` at once. Returns 0 when gnuplot
 * ran on every job (each job says whether it failed); PP_ENOTFOUND when
 * gnuplot is not on PATH, PP_EIO when it cannot be started (err says why;
 * no job ran). */
int gnuplot_render(struct gnuplot_job *jobs, size_t n, int parallel, char *err, size_t errlen);

#endif
