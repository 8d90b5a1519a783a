/* progress.c — progress bar or log lines (see progress.h). */
#include <stdio.h>
#include <string.h>

#include "progress.h"
#include "pp.h"

static void clear_line(struct progress *p)
{
	if (p->drawn) {
		fputs("\r\033[K", p->out);
		fflush(p->out);
		p->drawn = false;
	}
}

/* Before a warning or an error: the bar gives way, and the next tick
 * draws it again below the message. */
static void clear_for_report(void *ctx)
{
	clear_line(ctx);
}

void progress_init(struct progress *p, FILE *out, bool tty, bool quiet, int64_t files_total,
		   int64_t bytes_total)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->tty = tty;
	p->quiet = quiet;
	p->files_total = files_total;
	p->bytes_total = bytes_total;
	p->t0_ns = pp_now_ns();
	if (tty && !quiet)
		pp_set_report_hook(clear_for_report, p);
}

double progress_mbps(const struct progress *p)
{
	double s = (double)(pp_now_ns() - p->t0_ns) / 1e9;
	return s > 0 ? (double)p->bytes_done / 1e6 / s : 0;
}

static void draw(struct progress *p)
{
	enum { WIDTH = 30 };
	double frac = p->bytes_total > 0 ? (double)p->bytes_done / (double)p->bytes_total
		      : p->files_total   ? (double)p->files_done / (double)p->files_total
					 : 1;
	double mbps = progress_mbps(p);
	char bar[WIDTH + 1], eta[32] = "--:--";
	int fill = (int)(frac * WIDTH + 0.5);
	for (int i = 0; i < WIDTH; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[WIDTH] = '\0';
	if (mbps > 0 && p->bytes_done > 0) {
		long s = (long)((double)(p->bytes_total - p->bytes_done) / 1e6 / mbps);
		snprintf(eta, sizeof(eta), "%ld:%02ld", s / 60, s % 60);
	}
	fprintf(p->out, "\r\033[K[%s] %lld/%lld files, %.1f MB/s, ETA %s", bar,
		(long long)p->files_done, (long long)p->files_total, mbps, eta);
	if (p->failed)
		fprintf(p->out, ", %lld failed", (long long)p->failed);
	fflush(p->out);
	p->drawn = true;
	p->last_draw_ns = pp_now_ns();
}

void progress_file_done(struct progress *p, int64_t bytes, bool failed, const char *line)
{
	p->files_done++;
	p->bytes_done += bytes;
	p->failed += failed;
	if (p->quiet)
		return;
	if (p->tty) {
		if (failed) {
			clear_line(p);
			fprintf(p->out, "%s\n", line);
		}
		draw(p);
	} else {
		fprintf(p->out, "%s\n", line);
		fflush(p->out);
	}
}

void progress_tick(struct progress *p)
{
	if (!p->quiet && p->tty && pp_now_ns() - p->last_draw_ns > 100000000)
		draw(p);
}

void progress_finish(struct progress *p)
{
	if (!p->quiet && p->tty) {
		clear_line(p);
		pp_set_report_hook(NULL, NULL);
	}
}
