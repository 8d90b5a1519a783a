/* gantt.c — see gantt.h. Design note: boxes are bucketed by class with a
 * counting pass, then each class becomes one datablock plotted `with
 * boxxyerror` (one plot element per class, never one `set object` per box,
 * which is quadratic in gnuplot). Labels are emitted only for boxes wide
 * enough to hold them at the chart's pixel size; hover text goes into its
 * own datablock that only the SVG plot uses. Text in commands is single-
 * quoted (no escapes but ''), text in datablocks is double-quoted with '"'
 * replaced, and every terminal is noenhanced so '_' stays literal. */
#include "gantt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnuplot.h"
#include "util/arena.h"
#include "util/cmp.h"
#include "util/pp.h"
#include "util/safefile.h"
#include "util/strbuf.h"

struct gbox {
	int row, cls;
	double x0, x1, y0, y1; /* y in plot units: row r spans [r-0.45, r+0.45] */
	const char *label, *hover;
};

struct gantt {
	struct arena strings;
	char *title, *xlabel, *ylabel;
	char *hover_fmt; /* gantt_set_hover_format, or NULL */
	char **rows;
	int nrows, arows;
	char **cls_name;
	char (*cls_color)[8];
	int ncls, acls;
	struct gbox *boxes;
	size_t nboxes, aboxes;
	bool no_png, no_svg; /* gantt_set_formats */
	int *rules;          /* gantt_add_rule: rows with a rule above */
	int nrules, arules;
};

static const char *const palette[] = { "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
				       "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac" };

struct gantt *gantt_new(void)
{
	struct gantt *g = xcalloc(1, sizeof(*g));
	arena_init(&g->strings);
	return g;
}

void gantt_free(struct gantt *g)
{
	if (!g)
		return;
	arena_release(&g->strings);
	void *own[] = { g->rows, g->cls_name, g->cls_color, g->boxes, g->rules, g };
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		free(own[i]);
}

void gantt_set_formats(struct gantt *g, bool png, bool svg)
{
	g->no_png = !png && svg;
	g->no_svg = !svg && png;
}

void gantt_add_rule(struct gantt *g, int row)
{
	if (g->nrules == g->arules) {
		g->arules = g->arules ? 2 * g->arules : 8;
		g->rules = xrealloc(g->rules, (size_t)g->arules * sizeof(int));
	}
	g->rules[g->nrules++] = row;
}

static char *gstrdup(struct gantt *g, const char *s)
{
	if (!s || !*s)
		return NULL;
	return arena_strndup(&g->strings, s, strlen(s));
}

void gantt_set_hover_format(struct gantt *g, const char *expr)
{
	g->hover_fmt = gstrdup(g, expr);
}

void gantt_set_title(struct gantt *g, const char *title)
{
	g->title = gstrdup(g, title);
}

void gantt_set_xlabel(struct gantt *g, const char *xlabel)
{
	g->xlabel = gstrdup(g, xlabel);
}

void gantt_set_ylabel(struct gantt *g, const char *ylabel)
{
	g->ylabel = gstrdup(g, ylabel);
}

int gantt_add_row(struct gantt *g, const char *label)
{
	if (g->nrows == g->arows) {
		g->arows = g->arows ? 2 * g->arows : 16;
		g->rows = xrealloc(g->rows, (size_t)g->arows * sizeof(*g->rows));
	}
	g->rows[g->nrows] = gstrdup(g, label ? label : "");
	return g->nrows++;
}

int gantt_add_class(struct gantt *g, const char *name, const char *color)
{
	if (g->ncls == g->acls) {
		g->acls = g->acls ? 2 * g->acls : 8;
		g->cls_name = xrealloc(g->cls_name, (size_t)g->acls * sizeof(*g->cls_name));
		g->cls_color = xrealloc(g->cls_color, (size_t)g->acls * sizeof(*g->cls_color));
	}
	const char *c = color;
	bool ok =
		c && c[0] == '#' && strlen(c) == 7 && strspn(c + 1, "0123456789abcdefABCDEF") == 6;
	if (!ok)
		c = palette[(size_t)g->ncls % (sizeof(palette) / sizeof(palette[0]))];
	g->cls_name[g->ncls] = gstrdup(g, name ? name : "");
	memcpy(g->cls_color[g->ncls], c, 8);
	return g->ncls++;
}

int gantt_add_box(struct gantt *g, const struct gantt_box *b)
{
	if (b->row < 0 || b->row >= g->nrows || b->cls < 0 || b->cls >= g->ncls ||
	    !isfinite(b->x0) || !isfinite(b->x1) || b->x1 < b->x0 || !(b->y_off >= 0) ||
	    !(b->height > 0) || b->y_off + b->height > 1.0 + 1e-9)
		return PP_EINVAL;
	PP_GROW(g->boxes, g->nboxes, g->aboxes, 1024);
	struct gbox *x = &g->boxes[g->nboxes++];
	x->row = b->row;
	x->cls = b->cls;
	x->x0 = b->x0;
	x->x1 = b->x1;
	x->y0 = b->row - 0.45 + 0.9 * b->y_off;
	x->y1 = x->y0 + 0.9 * b->height;
	x->label = gstrdup(g, b->label);
	x->hover = gstrdup(g, b->hover);
	return 0;
}

struct layout {
	int w, h;
	double xmin, xmax;
	double px_per_x;   /* horizontal pixels per x unit in the plot area */
	double px_per_row; /* vertical pixels per row */
	int key_rows;      /* rows of the legend below the plot */
};

static void compute_layout(const struct gantt *g, struct layout *L)
{
	L->w = 1600;
	/* 34 pixels a row up to 64 rows, 22 for each row beyond (a 128-rank
	 * model replica stays readable); cairo's limit caps it. */
	L->h = 170 + 34 * (g->nrows < 64 ? g->nrows : 64) +
	       22 * (g->nrows > 64 ? g->nrows - 64 : 0);
	L->h = L->h < 360 ? 360 : L->h > 30000 ? 30000 : L->h;
	L->xmin = 0;
	L->xmax = 0;
	for (size_t i = 0; i < g->nboxes; i++) {
		if (i == 0 || g->boxes[i].x0 < L->xmin)
			L->xmin = g->boxes[i].x0;
		if (i == 0 || g->boxes[i].x1 > L->xmax)
			L->xmax = g->boxes[i].x1;
	}
	if (L->xmin > 0)
		L->xmin = 0;
	if (!(L->xmax > L->xmin))
		L->xmax = L->xmin + 1;
	L->px_per_x = (L->w - 200) / (L->xmax - L->xmin);
	L->px_per_row = g->nrows ? (L->h - 170.0) / g->nrows : 0;
}

/* The legend's rows. gnuplot fits as many columns of the horizontal key as
 * the width holds (a column about 8 px per character of the longest name
 * plus 10 for the sample and gaps: an underestimate of what fits, so the
 * rows are never more than counted here), then balances the entries over
 * the rows that needs. The bottom margin and the height grow with them, so
 * a legend of three rows (the what-if's 15 op types) does not cover the x
 * axis's label. */
static void key_layout(const struct gantt *g, const size_t *count, struct layout *L)
{
	int n = 0;
	size_t longest = 0;
	for (int c = 0; c < g->ncls; c++)
		if (count[c]) {
			size_t len = g->cls_name[c] ? strlen(g->cls_name[c]) : 0;
			n++;
			longest = len > longest ? len : longest;
		}
	int cols = (int)((L->w - 100) / (8 * (longest + 10)));
	cols = cols < 1 ? 1 : cols;
	L->key_rows = n ? (n + cols - 1) / cols : 0;
	if (L->key_rows > 2 && L->h < 30000)
		L->h += 14 * (L->key_rows - 2);
}

static int cmp_box(const void *x, const void *y)
{
	const struct gbox *a = *(const struct gbox *const *)x;
	const struct gbox *b = *(const struct gbox *const *)y;
	const double ka[] = { a->row, a->y0, a->y1, a->x0 };
	const double kb[] = { b->row, b->y0, b->y1, b->x0 };
	int c = cmp_f64s(ka, kb, 4);
	return c ? c : a < b ? -1 : a > b;
}

static bool label_fits(const struct layout *L, const struct gbox *b)
{
	double wpx = (b->x1 - b->x0) * L->px_per_x;
	double hpx = (b->y1 - b->y0) * L->px_per_row;
	return hpx >= 11 && wpx >= 6.5 * (double)strlen(b->label) + 4;
}

/* The plot command, once for both outputs: a string variable `boxes`
 * (one element per class) that each output's block evaluates, with the
 * labels and, in the SVG, the hover points appended. */
static void write_plot_vars(FILE *f, const struct gantt *g, const size_t *count)
{
	struct strbuf m = STRBUF_INIT;
	const char *sep = "plot ";
	for (int c = 0; c < g->ncls; c++) {
		if (!count[c])
			continue;
		strbuf_addf(&m,
			    "%s$c%d using (($1+$2)/2):(($3+$4)/2):1:2:3:4 with boxxyerror "
			    "fc rgb '%s' title '",
			    sep, c, g->cls_color[c]);
		for (const char *t = g->cls_name[c]; t && *t; t++)
			strbuf_addstr(&m, *t == '\'' ? "''" : (char[]){ *t, 0 });
		strbuf_addch(&m, '\'');
		sep = ", ";
	}
	if (!strcmp(sep, "plot ")) /* no boxes at all: an empty frame */
		strbuf_addstr(&m, "plot NaN notitle");
	fputs("boxes = ", f);
	gnuplot_put_sq(f, m.buf);
	fputs("\nlabels = \", $labels using 1:2:3 with labels font ',8' tc rgb '#202020' "
	      "notitle\"\n",
	      f);
	strbuf_reset(&m);
	strbuf_addstr(&m, ", $hover using 1:2:");
	if (g->hover_fmt) {
		strbuf_addch(&m, '(');
		strbuf_addstr(&m, g->hover_fmt);
		strbuf_addch(&m, ')');
	} else {
		strbuf_addch(&m, '3');
	}
	strbuf_addstr(&m, " with labels hypertext point pt 7 ps 0.8 lc rgb '#ff000000' notitle");
	fputs("hover = ", f);
	gnuplot_put_sq(f, m.buf);
	fputc('\n', f);
	if (g->hover_fmt) {
		fprintf(f, "array class_name[%d] = [", g->ncls > 0 ? g->ncls : 1);
		for (int c = 0; c < g->ncls; c++) {
			fputs(c ? ", " : "", f);
			gnuplot_put_sq(f, g->cls_name[c]);
		}
		fputs(g->ncls ? "]\n" : "'']\n", f);
	}
	strbuf_release(&m);
}

/* Writes v with at most `decimals` decimals (trailing zeros dropped)
 * followed by `end`. The scripts hold hundreds of thousands of numbers and
 * printf's conversion of a double was half of ppagg's instructions
 * (callgrind): numbers below 1e12 units are rounded to integers of 10^-d
 * and written digit by digit; others, and NaN, go through printf. */
static void put_num(FILE *f, double v, int decimals, char end)
{
	static const double scale[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };
	char buf[48], *p = buf + sizeof(buf);
	if (decimals < 0 || decimals > 6 || !(fabs(v) < 1e12)) {
		fprintf(f, "%.12g%c", v, end);
		return;
	}
	long long n = llround(v * scale[decimals]);
	bool neg = n < 0;
	unsigned long long u = neg ? 0ULL - (unsigned long long)n : (unsigned long long)n;
	*--p = end;
	bool any = false; /* a decimal written: zeros from here on stay */
	for (int d = 0; d < decimals; d++, u /= 10) {
		if (any || u % 10) {
			*--p = (char)('0' + u % 10);
			any = true;
		}
	}
	if (any)
		*--p = '.';
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (neg)
		*--p = '-';
	fwrite(p, 1, (size_t)(buf + sizeof(buf) - p), f);
}

/* One datablock per class, its boxes sorted: $c<k> << EOD ... EOD. count[c]
 * boxes of class c; order lists the boxes class by class. */
static void write_boxes(FILE *f, const struct gantt *g, const struct layout *L, const size_t *count,
			const size_t *order)
{
	const struct gbox **sorted = xmalloc((g->nboxes + 1) * sizeof(*sorted));
	double eps = 0.5 / L->px_per_x, narrow = 2.0 / L->px_per_x;
	size_t k = 0;
	for (int c = 0; c < g->ncls; c++) {
		if (!count[c])
			continue;
		for (size_t j = 0; j < count[c]; j++)
			sorted[j] = &g->boxes[order[k + j]];
		k += count[c];
		qsort(sorted, count[c], sizeof(*sorted), cmp_box);
		fprintf(f, "$c%d << EOD\n", c);
		/* Runs of sub-pixel boxes that touch (gaps under half a pixel)
		 * are drawn as one box: the same picture, far fewer elements. */
		for (size_t j = 0; j < count[c];) {
			const struct gbox *b = sorted[j++];
			double x0 = b->x0, x1 = b->x1;
			while (j < count[c] && sorted[j]->row == b->row && sorted[j]->y0 == b->y0 &&
			       sorted[j]->y1 == b->y1 && sorted[j]->x0 <= x1 + eps &&
			       (sorted[j]->x1 - sorted[j]->x0 < narrow || x1 - x0 < narrow)) {
				if (sorted[j]->x1 > x1)
					x1 = sorted[j]->x1;
				j++;
			}
			put_num(f, x0, 6, ' ');
			put_num(f, x1, 6, ' ');
			put_num(f, b->y0, 4, ' ');
			put_num(f, b->y1, 4, '\n');
		}
		fputs("EOD\n", f);
	}
	free(sorted);
}

/* The $labels or (hover) $hover datablock; returns its number of points. */
static size_t write_texts(FILE *f, const struct gantt *g, const struct layout *L, bool hover)
{
	size_t n = 0;
	fputs(hover ? "$hover << EOD\n" : "$labels << EOD\n", f);
	for (size_t i = 0; i < g->nboxes; i++) {
		const struct gbox *b = &g->boxes[i];
		const char *text = hover ? b->hover : b->label;
		bool show = hover ? text && (b->x1 - b->x0) * L->px_per_x >= 2.0
				  : text && label_fits(L, b);
		if (!show)
			continue;
		/* A text's place needs pixel precision only. */
		put_num(f, (b->x0 + b->x1) / 2, 4, ' ');
		put_num(f, (b->y0 + b->y1) / 2, 4, ' ');
		if (hover && g->hover_fmt) {
			put_num(f, b->row, 0, ' ');
			put_num(f, b->cls, 0, ' ');
			put_num(f, b->x0, 6, ' ');
			put_num(f, b->x1, 6, ' ');
			for (const char *t = text; *t; t++)
				fputc((unsigned char)*t < 0x20 || *t == '"' ? ' ' : *t, f);
		} else {
			gnuplot_put_dq(f, text);
		}
		fputc('\n', f);
		n++;
	}
	fputs(hover ? "EOD\n\n" : "EOD\n", f);
	return n;
}

/* Title, axes, rows, grid, key and the rules between groups of rows. */
static void write_settings(FILE *f, const struct gantt *g, const struct layout *L)
{
	static const char *const what[] = { "title", "xlabel", "ylabel" };
	const char *const text[] = { g->title, g->xlabel, g->ylabel };
	gnuplot_put_titles(f, what, text, 3, 14, 12);
	fprintf(f, "set xrange [%.12g:%.12g]\n", L->xmin, L->xmax);
	fprintf(f, "set yrange [%g:-0.5]\n", g->nrows ? g->nrows - 0.5 : 0.5);
	fputs("set ytics scale 0 (", f);
	for (int r = 0; r < g->nrows; r++) {
		if (r)
			fputs(", ", f);
		gnuplot_put_sq(f, g->rows[r]);
		fprintf(f, " %d", r);
	}
	fputs(")\n", f);
	fputs("set xtics out nomirror\n"
	      "set grid xtics lt 1 lw 0.5 lc rgb '#dddddd'\n"
	      "set key at screen 0.5, screen 0.01 center bottom horizontal box opaque reverse Left\n",
	      f);
	fprintf(f, "set bmargin %d\n", L->key_rows > 2 ? 4 + L->key_rows : 6);
	fputs("set style fill solid 0.95 border lc rgb '#ffffff'\n"
	      "set offsets 0, 0, 0, 0\n\n",
	      f);
	for (int i = 0; i < g->nrules; i++)
		if (g->rules[i] > 0 && g->rules[i] < g->nrows)
			fprintf(f,
				"set arrow from graph 0, first %g to graph 1, first %g "
				"nohead dt 2 lc rgb '#555555' front\n",
				g->rules[i] - 0.5, g->rules[i] - 0.5);
}

static int write_script(FILE *f, const char *base, const void *ctx)
{
	const struct gantt *g = ctx;
	struct layout L;
	size_t *count = xcalloc((size_t)g->ncls + 1, sizeof(size_t));
	size_t *order = xmalloc((g->nboxes + 1) * sizeof(size_t));
	size_t *pos = xcalloc((size_t)g->ncls + 1, sizeof(size_t));

	compute_layout(g, &L);
	for (size_t i = 0; i < g->nboxes; i++)
		count[g->boxes[i].cls]++;
	key_layout(g, count, &L);
	for (int c = 1; c <= g->ncls; c++)
		pos[c] = pos[c - 1] + count[c - 1];
	for (size_t i = 0; i < g->nboxes; i++)
		order[pos[g->boxes[i].cls]++] = i;

	fprintf(f,
		"# Gantt chart written by pptrace. Run in this folder: gnuplot %s.gp\n"
		"# (makes %s.png and %s.svg). Data: one datablock per class\n"
		"# (x0 x1 y0 y1; row r spans r-0.45 .. r+0.45), then labels and hover text.\n",
		base, base, base);
	write_boxes(f, g, &L, count, order);
	size_t nlabels = write_texts(f, g, &L, false);
	size_t nhover = write_texts(f, g, &L, true);
	write_settings(f, g, &L);
	write_plot_vars(f, g, count);
	gnuplot_write_formats(f);
	if (!g->no_png) {
		gnuplot_begin_output(f, false);
		/* libgd's png: a palette PNG, half the time and a third of the
		 * bytes of pngcairo (whose zlib pass is most of its time) for
		 * the same axis-aligned boxes; pngcairo where gnuplot lacks it. */
		fprintf(f,
			"if (strstrt(GPVAL_TERMINALS, ' png ') > 0) {\n"
			"set terminal png noenhanced size %d,%d font ',10'\n} else {\n"
			"set terminal pngcairo noenhanced size %d,%d font ',10'\n}\n",
			L.w, L.h, L.w, L.h);
		fprintf(f, "set output '%s.png'\n", base);
		fprintf(f, "eval boxes%s\n", nlabels ? ".labels" : "");
		fputs("}\n", f);
	}
	if (!g->no_svg) {
		gnuplot_begin_output(f, true);
		fprintf(f, "set terminal svg noenhanced size %d,%d font ',10' mouse standalone\n",
			L.w, L.h);
		fprintf(f, "set output '%s.svg'\n", base);
		fprintf(f, "eval boxes%s%s\n", nlabels ? ".labels" : "", nhover ? ".hover" : "");
		fputs("}\n", f);
	}
	fputs("unset output\n", f);

	free(count);
	free(order);
	free(pos);
	return ferror(f) ? PP_EIO : 0;
}

int gantt_write(const struct gantt *g, const char *prefix, bool render, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	int rc = gnuplot_write_script(prefix, write_script, g, err);
	if (rc || !render)
		return rc;
	strbuf_addf(&path, "%s.gp", prefix);
	struct gnuplot_job job = { .script = path.buf };
	size_t mark = err->len;
	rc = gnuplot_render(&job, 1, 1, err);
	if (rc == PP_ENOTFOUND) {
		strbuf_setlen(err, mark); /* said again, with what was written */
		pp_err(err, rc, "gnuplot is not on PATH; wrote '%s' only", path.buf);
	} else if (rc == 0 && job.failed) {
		rc = PP_EIO;
	}
	if (rc == PP_EIO && job.failed) {
		strbuf_setlen(err, mark); /* the job's own line says more */
		pp_err(err, rc, "%s", job.why);
	}
	strbuf_release(&path);
	return rc;
}

int gantt_write_at(const struct gantt *g, int dirfd, const char *dir, const char *base,
		   struct strbuf *err)
{
	return gnuplot_write_script_at(dirfd, dir, base, write_script, g, err);
}
