/* heatmap.c — see heatmap.h. Design note: the cells are one datablock
 * "x y value ..." plotted `with image` (one plot element, whatever the grid
 * size), coloured by a column of its own (the value, or its difference
 * from its row's centre); NaN cells are transparent, so a grey rectangle
 * behind the grid shows (white is a centred scale's middle). The SVG
 * adds one invisible hypertext point per cell, sized to the cell, so the
 * whole cell answers the mouse. Text in commands is single-quoted (no
 * escapes but ''), text in datablocks double-quoted with '"' replaced;
 * every terminal is noenhanced. */
#include "heatmap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnuplot.h"
#include "util/pp.h"

struct heatmap {
	int nx, ny;
	double *v;
	char **hover;
	char *title, *xlabel, *ylabel, *cblabel;
	int decimals;
	char unit[8];
	enum heatmap_scale scale;
	bool fixed;
	double lo, hi;
	double *centre; /* heatmap_set_centres(): per row, or NULL */
	double min_half;
	bool no_png, no_svg;
};

static char *dup_or_null(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

struct heatmap *heatmap_new(int nx, int ny)
{
	struct heatmap *h = xcalloc(1, sizeof(*h));
	h->nx = nx < 1 ? 1 : nx;
	h->ny = ny < 1 ? 1 : ny;
	size_t n = (size_t)h->nx * (size_t)h->ny;
	h->v = xmalloc(n * sizeof(*h->v));
	h->hover = xcalloc(n, sizeof(*h->hover));
	for (size_t i = 0; i < n; i++)
		h->v[i] = NAN;
	h->decimals = 2;
	return h;
}

void heatmap_free(struct heatmap *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < (size_t)h->nx * (size_t)h->ny; i++)
		free(h->hover[i]);
	void *own[] = { h->hover, h->v, h->centre, h->title, h->xlabel, h->ylabel, h->cblabel, h };
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		free(own[i]);
}

void heatmap_set_labels(struct heatmap *h, const char *title, const char *xlabel,
			const char *ylabel, const char *cblabel)
{
	char **to[] = { &h->title, &h->xlabel, &h->ylabel, &h->cblabel };
	const char *from[] = { title, xlabel, ylabel, cblabel };
	for (int i = 0; i < 4; i++) {
		free(*to[i]);
		*to[i] = dup_or_null(from[i]);
	}
}

void heatmap_set_scale(struct heatmap *h, enum heatmap_scale s)
{
	h->scale = s;
}

void heatmap_set_range(struct heatmap *h, double lo, double hi)
{
	h->fixed = lo < hi;
	h->lo = lo;
	h->hi = hi;
}

void heatmap_set_centres(struct heatmap *h, const double *row_centre, double min_half)
{
	free(h->centre);
	h->centre = xmalloc((size_t)h->ny * sizeof(double));
	memcpy(h->centre, row_centre, (size_t)h->ny * sizeof(double));
	h->min_half = min_half > 0 ? min_half : 0;
}

void heatmap_set_number(struct heatmap *h, int decimals, const char *unit)
{
	h->decimals = decimals < 0 ? 0 : decimals > 9 ? 9 : decimals;
	snprintf(h->unit, sizeof(h->unit), "%s", unit ? unit : "");
}

void heatmap_set_formats(struct heatmap *h, bool png, bool svg)
{
	h->no_png = !png && svg;
	h->no_svg = !svg && png;
}

int heatmap_set(struct heatmap *h, int x, int y, double value, const char *hover)
{
	if (x < 0 || y < 0 || x >= h->nx || y >= h->ny)
		return PP_EINVAL;
	size_t i = (size_t)y * (size_t)h->nx + (size_t)x;
	h->v[i] = value;
	free(h->hover[i]);
	h->hover[i] = dup_or_null(hover);
	return 0;
}

/* A tick every `step` cells so that at most about 32 labels show. */
static void write_tics(FILE *f, const char *axis, int n)
{
	int step = n <= 32 ? 1 : (n + 31) / 32;
	fprintf(f, "set %s (", axis);
	for (int i = 0; i < n; i += step)
		fprintf(f, "%s'%d' %d", i ? ", " : "", i, i);
	fputs(") scale 0\n", f);
}

static void write_plot(FILE *f, const struct heatmap *h, bool labels, bool hover, double ps)
{
	fputs("plot $cells using 1:2:7 with image notitle", f);
	if (labels)
		fputs(", \\\n     $cells using 1:2:4:6 with labels font ',9' tc rgb variable notitle",
		      f);
	if (hover)
		fprintf(f,
			", \\\n     $cells using 1:2:5 with labels hypertext point pt 5 ps %.2f "
			"lc rgb '#ff000000' notitle",
			ps);
	fputc('\n', f);
	(void)h;
}

/* What colours cell i: its value, or its difference from its row's
 * centre. */
static double colour_of(const struct heatmap *h, size_t i)
{
	return h->centre ? h->v[i] - h->centre[i / (size_t)h->nx] : h->v[i];
}

/* The colour range: centred, from -d to d (d: the farthest cell, at least
 * min_half, never 0); else fixed, else the data's; a range of one value
 * (or none) is widened around it so that gnuplot can draw it. */
static void colour_range(const struct heatmap *h, double *lo, double *hi)
{
	size_t n = (size_t)h->nx * (size_t)h->ny;
	*lo = INFINITY;
	*hi = -INFINITY;
	for (size_t i = 0; i < n; i++)
		if (isfinite(colour_of(h, i))) {
			*lo = colour_of(h, i) < *lo ? colour_of(h, i) : *lo;
			*hi = colour_of(h, i) > *hi ? colour_of(h, i) : *hi;
		}
	if (h->centre) {
		double d = h->min_half;
		d = -*lo > d ? -*lo : d;
		d = *hi > d ? *hi : d;
		*lo = -(d > 0 ? d : 0.5);
		*hi = d > 0 ? d : 0.5;
	} else if (h->fixed) {
		*lo = h->lo;
		*hi = h->hi;
	} else if (!(*hi > *lo)) {
		double mid = isfinite(*lo) ? *lo : 0;
		*lo = mid - (mid ? fabs(mid) * 0.05 : 0.5);
		*hi = mid + (mid ? fabs(mid) * 0.05 : 0.5);
	}
}

/* Enough decimals to tell the colour bar's tics apart (gnuplot puts about
 * five over the range) and the cells with them: idle times of 0.47-0.73 ms
 * at one decimal read 0.5, 0.5, 0.6, 0.6, 0.7 ms. */
static int cell_decimals(const struct heatmap *h, double lo, double hi)
{
	int decimals = h->decimals;
	double step = (hi - lo) / 5;
	if (step > 0 && isfinite(step)) {
		int need = (int)ceil(-log10(step));
		decimals = need > decimals ? (need > 6 ? 6 : need) : decimals;
	}
	return decimals;
}

/* How bad colour value c is on the range [lo, hi]: 0 at the good end (a
 * centred range: at its middle, 0), 1 at the bad end. */
static double badness(const struct heatmap *h, double c, double lo, double hi)
{
	bool low = h->scale == HEATMAP_LOW_BAD;
	if (!h->centre)
		return low ? (hi - c) / (hi - lo) : (c - lo) / (hi - lo);
	return low ? (c < 0 ? c / lo : 0) : (c > 0 ? c / hi : 0);
}

/* The datablock $cells: x y value label hover text_colour colour, one line
 * a cell; a cell beyond 60 % of the way to the bad end, where the palette
 * turns red, is dark: its text is white. */
static void write_cells(FILE *f, const struct heatmap *h, double lo, double hi, int decimals)
{
	char num[64];
	size_t n = (size_t)h->nx * (size_t)h->ny;
	fputs("$cells << EOD\n# x y value label hover text_colour colour\n", f);
	for (size_t i = 0; i < n; i++) {
		int x = (int)(i % (size_t)h->nx), y = (int)(i / (size_t)h->nx);
		double v = h->v[i], c = colour_of(h, i);
		if (isfinite(v)) {
			snprintf(num, sizeof(num), "%.*f%s", decimals, v, h->unit);
			fprintf(f, "%d %d %.9g \"%s\" ", x, y, v, num);
		} else {
			fprintf(f, "%d %d NaN \"\" ", x, y);
		}
		gnuplot_put_dq(f, h->hover[i] ? h->hover[i] : "no data");
		fprintf(f, " %d %.9g\n",
			isfinite(c) && badness(h, c, lo, hi) > 0.6 ? 0xffffff : 0x202020, c);
	}
	fputs("EOD\n", f);
}

/* The palette. Centred: white in the middle (no difference), light blue
 * towards the good end, orange to dark red towards the bad one; else light
 * to dark red. */
static void write_palette(FILE *f, const struct heatmap *h)
{
	static const char *const palette[2][2] = {
		{ "(0 '#fff5eb', 0.35 '#fdae6b', 0.7 '#e6550d', 1 '#7f2704')",
		  "(0 '#7f2704', 0.3 '#e6550d', 0.65 '#fdae6b', 1 '#fff5eb')" },
		{ "(0 '#c6dbef', 0.5 '#f7f7f7', 0.75 '#fdae6b', 0.9 '#e6550d', 1 '#7f2704')",
		  "(0 '#7f2704', 0.1 '#e6550d', 0.25 '#fdae6b', 0.5 '#f7f7f7', 1 '#c6dbef')" },
	};
	fprintf(f, "set palette defined %s\n",
		palette[h->centre != NULL][h->scale == HEATMAP_LOW_BAD]);
}

/* Titles (a centred scale's rule in the colour box's label), axes, tics,
 * the palette, the grey of cells without data and the colour box. */
static void write_frame(FILE *f, const struct heatmap *h, double lo, double hi, int decimals)
{
	static const char *const what[] = { "title", "xlabel", "ylabel", "cblabel" };
	char legend[160];
	if (h->centre) {
		int k = snprintf(legend, sizeof(legend), "%s%s±%.*f%s",
				 h->cblabel ? h->cblabel : "", h->cblabel ? ", " : "", decimals, hi,
				 h->unit);
		if (h->min_half > 0 && k > 0 && (size_t)k < sizeof(legend))
			snprintf(legend + k, sizeof(legend) - (size_t)k, " (at least ±%.*f)",
				 decimals, h->min_half);
	}
	const char *const text[] = { h->title, h->xlabel, h->ylabel,
				     h->centre ? legend : h->cblabel };
	gnuplot_put_titles(f, what, text, 4, 13, 11);
	fprintf(f, "set xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\n", h->nx - 1, h->ny - 1);
	fprintf(f, "set cbrange [%.9g:%.9g]\n", lo, hi);
	write_tics(f, "xtics", h->nx);
	write_tics(f, "ytics", h->ny);
	write_palette(f, h);
	fputs("set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind "
	      "fillcolor rgb '#d0d0d0' fillstyle solid 1.0 noborder\n"
	      "set tics out nomirror\nset border 15 lc rgb '#888888'\nset key off\n"
	      "set colorbox vertical user origin screen 0.84, graph 0 size screen 0.025, graph 1\n"
	      "set rmargin at screen 0.81\n",
	      f);
	fprintf(f, "set format cb '%%%s.%df", h->centre ? "+" : "", decimals);
	for (const char *u = h->unit; *u; u++)
		fputs(*u == '%' ? "%%" : *u == '\'' ? "''" : (char[]){ *u, 0 }, f);
	fputs("'\n", f);
}

/* The PNG and SVG outputs, each under its guard (gnuplot.h), sized to the
 * grid: cells at least 14 pixels, the plot between 760 and 1600 wide. */
static void write_outputs(FILE *f, const struct heatmap *h, const char *base)
{
	int cw = h->nx <= 16 ? 56 : h->nx <= 64 ? 22 : 14;
	int ch = h->ny <= 16 ? 34 : h->ny <= 64 ? 18 : 12;
	int w = 260 + cw * h->nx, hh = 170 + ch * h->ny;
	w = w < 760 ? 760 : w > 1600 ? 1600 : w;
	hh = hh < 360 ? 360 : hh > 1600 ? 1600 : hh;
	bool labels = h->nx <= 16 && h->ny <= 32;
	/* The hover point covers the cell: a point-size unit is about 4.5
	 * pixels in the svg terminal, pt 5 a square of 2 units. */
	double cell_px = (double)(w - 280) / h->nx, cell_py = (double)(hh - 170) / h->ny;
	double ps = (cell_px < cell_py ? cell_px : cell_py) / 9.0;
	ps = ps < 0.5 ? 0.5 : ps;
	gnuplot_write_formats(f);
	if (!h->no_png) {
		gnuplot_begin_output(f, false);
		fprintf(f,
			"set terminal pngcairo noenhanced size %d,%d font ',10' "
			"background '#ffffff'\nset output '%s.png'\n",
			w, hh, base);
		write_plot(f, h, labels, false, ps);
		fputs("}\n", f);
	}
	if (!h->no_svg) {
		gnuplot_begin_output(f, true);
		fprintf(f,
			"set terminal svg noenhanced size %d,%d font ',10' mouse standalone "
			"background '#ffffff'\nset output '%s.svg'\n",
			w, hh, base);
		write_plot(f, h, labels, true, ps);
		fputs("}\n", f);
	}
	fputs("unset output\n", f);
}

/*   header → $cells → frame (titles, axes, palette) → outputs */
static int write_script(FILE *f, const char *base, const void *ctx)
{
	const struct heatmap *h = ctx;
	double lo, hi;
	fprintf(f,
		"# Heatmap written by pptrace. Run in this folder: gnuplot %s.gp\n"
		"# (makes %s.png and %s.svg). Data: x y value label hover text_colour\n"
		"# colour; row 0 on top; colour: %s.\n",
		base, base, base, h->centre ? "the value minus its row's centre" : "the value");
	colour_range(h, &lo, &hi);
	int decimals = cell_decimals(h, lo, hi);
	write_cells(f, h, lo, hi, decimals);
	write_frame(f, h, lo, hi, decimals);
	write_outputs(f, h, base);
	return ferror(f) ? PP_EIO : 0;
}

int heatmap_write(const struct heatmap *h, const char *prefix, struct strbuf *err)
{
	return gnuplot_write_script(prefix, write_script, h, err);
}
