/* Unit tests for the heatmap's colour scale (pipeline/chart/heatmap.h), on
 * the scripts it writes: each row against its own centre with a least
 * half width (heatmap_set_centres(), the overview's maps: a stage against
 * its median cell), an even grid stays near white and none of its cells
 * is dark, rows at different levels too, while one far cell takes the
 * dark end; the scale runs the other way for "lower is worse" and states
 * its rule in the colour box's label. Without centres the scale is the
 * data's range, as before. The scripts are read, not rendered
 * (test_gnuplot.c renders one). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "chart/heatmap.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

/* The forward+backward compute of an even 1,024-rank ppgen job's cells
 * (ms): 1 % apart. */
static const double even[8] = { 67.33, 67.52, 67.61, 67.63, 67.70, 67.84, 68.05, 68.21 };

/* Writes h as <unit_tmp>/<name>.gp into gp, and frees h. */
static void script(struct heatmap *h, const char *name, struct strbuf *gp)
{
	char prefix[128], path[160];
	struct strbuf err = STRBUF_INIT;
	snprintf(prefix, sizeof(prefix), "%s/%s", unit_tmp, name);
	assert_int_equal(heatmap_write(h, prefix, &err), 0);
	heatmap_free(h);
	strbuf_reset(gp);
	snprintf(path, sizeof(path), "%s.gp", prefix);
	unit_slurp(gp, path);
	strbuf_release(&err);
}

/* Column k from the end (1: the last) of cell (x, y)'s line in the
 * script's datablock. */
static const char *cell_column(const char *gp, int x, int y, int k)
{
	char key[32];
	snprintf(key, sizeof(key), "\n%d %d ", x, y);
	const char *line = strstr(strstr(gp, "$cells << EOD"), key);
	assert_non_null(line);
	const char *sp = strchr(line + 1, '\n');
	for (int i = 0; i < k; i++) {
		if (i)
			sp--;
		while (sp > line && sp[-1] != ' ')
			sp--;
	}
	return sp;
}

/* The text colour of cell (x, y) (the column before the colour):
 * 0xffffff when the cell is dark. */
static long text_colour(const char *gp, int x, int y)
{
	return strtol(cell_column(gp, x, y, 2), NULL, 10);
}

/* The colour column (the last) of cell (x, y). */
static double colour_of(const char *gp, int x, int y)
{
	return strtod(cell_column(gp, x, y, 1), NULL);
}

/* The script's colour range. */
static void cbrange(const char *gp, double *lo, double *hi)
{
	const char *s = strstr(gp, "\nset cbrange [");
	assert_non_null(s);
	assert_int_equal(sscanf(s, "\nset cbrange [%lf:%lf]", lo, hi), 2);
}

static struct heatmap *row_of(const double *v, int n, enum heatmap_scale scale)
{
	struct heatmap *h = heatmap_new(n, 1);
	heatmap_set_labels(h, "compute", "replica", "stage", "vs its stage's median");
	heatmap_set_number(h, 1, " ms");
	heatmap_set_scale(h, scale);
	for (int i = 0; i < n; i++)
		assert_int_equal(heatmap_set(h, i, 0, v[i], NULL), 0);
	return h;
}

/* An even job looks even: the scale spans the least half width around
 * the row's median, so 1 % of noise stays near white, and no cell is
 * dark. */
static void test_even_is_even(void **state)
{
	(void)state;
	struct strbuf gp = STRBUF_INIT;
	double lo, hi, med = 67.63;
	struct heatmap *h = row_of(even, 8, HEATMAP_HIGH_BAD);
	heatmap_set_centres(h, &med, 6.763);
	script(h, "even", &gp);
	cbrange(gp.buf, &lo, &hi);
	assert_true(fabs(lo + 6.763) < 1e-9 && fabs(hi - 6.763) < 1e-9);
	for (int x = 0; x < 8; x++) {
		assert_int_equal(text_colour(gp.buf, x, 0), 0x202020);
		assert_true(fabs(colour_of(gp.buf, x, 0) - (even[x] - med)) < 1e-6);
	}
	/* The cells print their own values. */
	assert_non_null(strstr(gp.buf, "\"68.2 ms\""));
	assert_non_null(strstr(gp.buf, "set palette defined (0 '#c6dbef', 0.5 '#f7f7f7', "));
	assert_non_null(strstr(gp.buf, "set cblabel 'vs its stage''s median, ±6.8 ms "
				       "(at least ±6.8)'"));
	assert_non_null(strstr(gp.buf, "set format cb '%+.1f ms'"));
	/* The data's own range made the slowest of them the darkest. */
	h = row_of(even, 8, HEATMAP_HIGH_BAD);
	script(h, "minmax", &gp);
	cbrange(gp.buf, &lo, &hi);
	assert_true(lo == 67.33 && hi == 68.21);
	assert_int_equal(text_colour(gp.buf, 7, 0), 0xffffff);
	strbuf_release(&gp);
}

/* A straggler takes the dark end and is the only dark cell. */
static void test_straggler_stands_out(void **state)
{
	(void)state;
	struct strbuf gp = STRBUF_INIT;
	double v[9], lo, hi, med = 67.63;
	memcpy(v, even, sizeof(even));
	v[8] = 87.53;
	struct heatmap *h = row_of(v, 9, HEATMAP_HIGH_BAD);
	heatmap_set_centres(h, &med, 6.763);
	script(h, "straggler", &gp);
	cbrange(gp.buf, &lo, &hi);
	assert_true(fabs(hi - 19.9) < 1e-6 && fabs(lo + 19.9) < 1e-6);
	assert_int_equal(text_colour(gp.buf, 8, 0), 0xffffff);
	for (int x = 0; x < 8; x++)
		assert_int_equal(text_colour(gp.buf, x, 0), 0x202020);
	assert_non_null(strstr(gp.buf, ", ±19.9 ms (at least ±6.8)'"));
	strbuf_release(&gp);
}

/* Rows at different levels (the bubble share falls from the first stage
 * to the last by design): each against its own centre, none dark. */
static void test_rows(void **state)
{
	(void)state;
	struct strbuf gp = STRBUF_INIT;
	static const double v[2][4] = { { 28.5, 29.2, 28.6, 28.7 }, { 11.6, 11.4, 11.3, 11.8 } };
	double med[2] = { 28.6, 11.4 };
	struct heatmap *h = heatmap_new(4, 2);
	heatmap_set_number(h, 1, " %");
	for (int y = 0; y < 2; y++)
		for (int x = 0; x < 4; x++)
			heatmap_set(h, x, y, v[y][x], NULL);
	heatmap_set_centres(h, med, 5);
	script(h, "rows", &gp);
	for (int y = 0; y < 2; y++)
		for (int x = 0; x < 4; x++) {
			assert_int_equal(text_colour(gp.buf, x, y), 0x202020);
			assert_true(fabs(colour_of(gp.buf, x, y) - (v[y][x] - med[y])) < 1e-6);
		}
	assert_non_null(strstr(gp.buf, "set cblabel '±5.0 % (at least ±5.0)'"));
	strbuf_release(&gp);
}

/* Lower is worse (coverage-like): a low cell is dark, a high one is not. */
static void test_low_bad(void **state)
{
	(void)state;
	struct strbuf gp = STRBUF_INIT;
	double v[4] = { 90, 90.5, 91, 60 }, med = 90.5;
	struct heatmap *h = row_of(v, 4, HEATMAP_LOW_BAD);
	heatmap_set_centres(h, &med, 2);
	script(h, "low", &gp);
	assert_int_equal(text_colour(gp.buf, 3, 0), 0xffffff);
	for (int x = 0; x < 3; x++)
		assert_int_equal(text_colour(gp.buf, x, 0), 0x202020);
	assert_non_null(strstr(gp.buf, "set palette defined (0 '#7f2704', "));
	assert_non_null(strstr(gp.buf, ", 0.5 '#f7f7f7', 1 '#c6dbef')"));
	strbuf_release(&gp);
}

UNIT_MAIN(unit_tmp_setup, unit_tmp_teardown,
	  {
		  cmocka_unit_test(test_even_is_even),
		  cmocka_unit_test(test_straggler_stands_out),
		  cmocka_unit_test(test_rows),
		  cmocka_unit_test(test_low_bad),
	  })
