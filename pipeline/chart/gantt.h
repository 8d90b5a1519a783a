/* gantt.h — a generic Gantt-chart emitter (used by ppsim and ppagg).
 *
 * A chart has rows (top to bottom, with labels), classes (legend entries
 * with a colour) and boxes. A box sits in one row from x0 to x1 and covers a
 * vertical slice of the row's band, so overlapping categories stay visible.
 * gantt_write() writes one self-contained gnuplot script PREFIX.gp (data
 * inline as datablocks, one boxxyerror plot per class, text noenhanced) and,
 * when asked, runs gnuplot on it to render PREFIX.png (pngcairo) and
 * PREFIX.svg (hover text as hypertext labels). Linear in the number of
 * boxes; strings are copied, so callers may pass temporaries.
 */
#ifndef GANTT_H
#define GANTT_H

#include <stdbool.h>
#include <stddef.h>

struct gantt;
struct strbuf;

struct gantt_box {
	int row;           /* from gantt_add_row() */
	int cls;           /* from gantt_add_class() */
	double x0, x1;     /* x0 <= x1, in the x axis unit (ms for our tools) */
	double y_off;      /* top of the box within the row band, 0..1 */
	double height;     /* fraction of the band, 0 < height <= 1 - y_off */
	const char *label; /* short text drawn inside when it fits, or NULL */
	const char *hover; /* SVG tooltip, or NULL */
};

/* An empty chart; never NULL (docs/contracts.md: out of memory). */
struct gantt *gantt_new(void);
void gantt_free(struct gantt *g);

/* Title and axis labels (NULL/"" = none). The chart is 1600 pixels wide,
 * its height grows with the number of rows. */
void gantt_set_title(struct gantt *g, const char *title);
void gantt_set_xlabel(struct gantt *g, const char *xlabel);
void gantt_set_ylabel(struct gantt *g, const char *ylabel);

/* Which files the script makes (default both). At least one must be set;
 * with neither, both are made. */
void gantt_set_formats(struct gantt *g, bool png, bool svg);
/* Draws a dashed rule above row (a separator between groups of rows).
 * Rules for rows outside the chart are ignored. */
void gantt_add_rule(struct gantt *g, int row);

/* Hover text composed by gnuplot (the SVG only): expr is a gnuplot string
 * expression over the columns of a box's hover line: $1 and $2 its centre,
 * $3 its row, $4 its class, $5 and $6 its x0 and x1, then the words of the
 * box's `hover` ($7, $8, ...: numbers, or strings through strcol()); the
 * array class_name[] holds the class names (class_name[$4+1]). Each box
 * then carries a few words instead of its whole text, so a script of
 * thousands of blocks is a fraction of the size. Without it (NULL) each
 * box's `hover` is its text. */
void gantt_set_hover_format(struct gantt *g, const char *expr);

/* Appends a row below the previous ones; returns its index. */
int gantt_add_row(struct gantt *g, const char *label);
/* Appends a legend entry; color is "#rrggbb" or NULL for the next colour of
 * a built-in palette. Returns its index. */
int gantt_add_class(struct gantt *g, const char *name, const char *color);
/* Adds a box. Returns 0, or PP_EINVAL for a bad row/class/extent (the box
 * is then ignored). */
int gantt_add_box(struct gantt *g, const struct gantt_box *b);

/* Writes PREFIX.gp; the script names its outputs by their base names, and
 * is run in PREFIX's folder, so the folder can be moved. With render, runs
 * gnuplot on it (gnuplot.h) to make PREFIX.png and PREFIX.svg.
 * Returns 0; PP_ENOTFOUND when render was asked but gnuplot is not on PATH
 * (the script is written); PP_EIO when writing or gnuplot failed (message
 * appended to err, including gnuplot's error line). */
int gantt_write(const struct gantt *g, const char *prefix, bool render, struct strbuf *err);
/* Writes <dir>/<base>.gp into the open folder dirfd (gnuplot.h's
 * gnuplot_write_script_at: no path walk); no rendering. 0 or PP_EIO. */
int gantt_write_at(const struct gantt *g, int dirfd, const char *dir, const char *base,
		   struct strbuf *err);

#endif
