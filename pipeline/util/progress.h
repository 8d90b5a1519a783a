/* progress.h — what ppbatch shows while it runs.
 *
 * On a terminal: one status line redrawn in place (files done/total, MB/s,
 * ETA); otherwise one plain log line per finished file, fit for log files.
 * With quiet it shows nothing: the caller reports failed files itself
 * (error(), util/pp.h). Output goes to stderr.
 */
#ifndef PROGRESS_H
#define PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct progress {
	FILE *out;
	bool tty, quiet;
	int64_t files_total, bytes_total;
	int64_t files_done, bytes_done, failed;
	int64_t t0_ns, last_draw_ns;
	bool drawn; /* a status line is on screen */
};

/* Starts the clock. tty: draw a bar (else log lines); quiet: show nothing.
 * A bar gives way to every error() and warn() (pp_set_report_hook()) until
 * progress_finish(), which must come before p goes away. */
void progress_init(struct progress *p, FILE *out, bool tty, bool quiet, int64_t files_total,
		   int64_t bytes_total);
/* One file finished (failed or not); line is the log line for non-TTY
 * output and, when failed, printed in every mode but quiet. */
void progress_file_done(struct progress *p, int64_t bytes, bool failed, const char *line);
/* Redraws the bar if due (call it periodically). */
void progress_tick(struct progress *p);
/* Clears the bar before the summary. */
void progress_finish(struct progress *p);
/* Throughput so far in MB/s (10^6 bytes). */
double progress_mbps(const struct progress *p);

#endif
