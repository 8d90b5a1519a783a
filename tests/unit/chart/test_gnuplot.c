/* Unit tests for the gnuplot renderer (pipeline/chart/gnuplot.h) and the
 * heatmap emitter (heatmap.h), with the real gnuplot: many scripts through
 * few processes, each in its own folder and with its own outputs; a
 * failing script in the middle is reported alone with gnuplot's message
 * and the scripts after it still render; a folder whose name cannot be
 * quoted for a batch runs alone; a heatmap script renders with a hover
 * text per cell, with the decimals its colour range needs. Skipped (with
 * the reason) when gnuplot is not installed.
 * And the Gantt emitter's legend (gantt.h): its rows below the plot get
 * room, not a bottom margin of 6 lines whatever the legend holds: the
 * what-if's measured-vs-ideal step chart, whose 15 op types make a legend
 * of three rows, would have its x axis's label drawn under the legend's
 * box. Those scripts are written, not rendered: the margin and
 * the height are what the script says. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "chart/gantt.h"
#include "chart/gnuplot.h"
#include "chart/heatmap.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

static bool have_gnuplot(void)
{
	char exe[4096];
	if (gnuplot_find(exe, sizeof(exe)))
		return true;
	print_message("# skip: no gnuplot on PATH\n");
	return false;
}

static bool is_file(const char *dir, const char *name)
{
	struct strbuf p = STRBUF_INIT;
	struct stat st;
	strbuf_addf(&p, "%s/%s", dir, name);
	bool ok = stat(p.buf, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
	strbuf_release(&p);
	return ok;
}

/* dir/c.gp: a plot of `body` (a valid expression, or a bad one). */
static void write_chart(const char *dir, const char *body)
{
	struct strbuf p = STRBUF_INIT;
	mkdir(dir, 0755);
	strbuf_addf(&p, "%s/c.gp", dir);
	FILE *f = fopen(p.buf, "w");
	assert_non_null(f);
	gnuplot_write_formats(f);
	for (int svg = 0; svg < 2; svg++) {
		gnuplot_begin_output(f, svg);
		fprintf(f, "set terminal %s size 200,150\nset output 'c.%s'\nplot %s\n}\n",
			svg ? "svg" : "pngcairo", svg ? "svg" : "png", body);
	}
	fputs("unset output\n", f);
	fclose(f);
	strbuf_release(&p);
}

static void test_batch(void **state)
{
	(void)state;
	SKIP_UNLESS(have_gnuplot());
	enum { N = 9 };
	struct gnuplot_job job[N];
	char dir[N][128], script[N][160];
	struct strbuf err = STRBUF_INIT;
	memset(job, 0, sizeof(job));
	for (int i = 0; i < N; i++) {
		/* Job 4 fails; job 6's folder has a line break in its name. */
		snprintf(dir[i], sizeof(dir[i]), "%s/c%d%s", unit_tmp, i, i == 6 ? "\nx" : "'q");
		write_chart(dir[i], i == 4 ? "no_such_function(x)" : "sin(x)");
		assert_true(snprintf(script[i], sizeof(script[i]), "%s/c.gp", dir[i]) <
			    (int)sizeof(script[i]));
		job[i].script = script[i];
		job[i].no_svg = i == 2;
		job[i].no_png = i == 3;
	}
	assert_int_equal(gnuplot_render(job, N, 2, &err), 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(job[i].failed, i == 4);
		assert_int_equal(is_file(dir[i], "c.png"), i != 3 && i != 4);
		assert_int_equal(is_file(dir[i], "c.svg"), i != 2 && i != 4);
	}
	assert_non_null(strstr(job[4].why, "gnuplot failed on '"));
	assert_non_null(strstr(job[4].why, "(exit 1): \"c.gp\" line "));
	assert_non_null(strstr(job[4].why, "no_such_function"));
	strbuf_release(&err);
}

static void test_heatmap(void **state)
{
	char prefix[128];
	struct strbuf err = STRBUF_INIT;
	(void)state;
	struct heatmap *h = heatmap_new(3, 2);
	heatmap_set_labels(h, "t", "replica", "stage", "share");
	heatmap_set_number(h, 1, " %");
	assert_int_equal(heatmap_set(h, 3, 0, 1, NULL), PP_EINVAL);
	assert_int_equal(heatmap_set(h, 2, 1, 42.5, "stage 1, replica 2\\nrank 7: 42.5 %"), 0);
	assert_int_equal(heatmap_set(h, 0, 0, 10, "stage 0, replica 0\\nrank 0: 10 %"), 0);
	snprintf(prefix, sizeof(prefix), "%s/heat", unit_tmp);
	assert_int_equal(heatmap_write(h, prefix, &err), 0);
	heatmap_free(h);
	SKIP_UNLESS(have_gnuplot());
	struct strbuf p = STRBUF_INIT, svg = STRBUF_INIT;
	strbuf_addf(&p, "%s.gp", prefix);
	struct gnuplot_job job = { .script = p.buf };
	assert_int_equal(gnuplot_render(&job, 1, 1, &err), 0);
	assert_false(job.failed);
	assert_true(is_file(unit_tmp, "heat.png"));
	strbuf_reset(&p);
	strbuf_addf(&p, "%s.svg", prefix);
	unit_slurp(&svg, p.buf);
	assert_non_null(
		strstr(svg.buf, "showHypertext(evt,'stage 1, replica 2\\nrank 7: 42.5 %')"));
	/* Every cell answers the mouse, the empty ones too. */
	size_t hovers = 0;
	for (const char *s = svg.buf; (s = strstr(s, "onmousemove=\"gnuplot_svg.showHypertext"));
	     s++)
		hovers++;
	assert_int_equal(hovers, 6);
	strbuf_release(&p);
	strbuf_release(&svg);
	strbuf_release(&err);
}

/* The script of a 2 x 1 heatmap of a and b in ms, one decimal asked for. */
static void heat_script(const char *name, double a, double b, struct strbuf *gp)
{
	char prefix[128];
	struct strbuf err = STRBUF_INIT;
	struct heatmap *h = heatmap_new(2, 1);
	heatmap_set_number(h, 1, " ms");
	heatmap_set(h, 0, 0, a, NULL);
	heatmap_set(h, 1, 0, b, NULL);
	snprintf(prefix, sizeof(prefix), "%s/%s", unit_tmp, name);
	assert_int_equal(heatmap_write(h, prefix, &err), 0);
	heatmap_free(h);
	strbuf_reset(gp);
	unit_slurp(gp, strcat(prefix, ".gp"));
	strbuf_release(&err);
}

/* A heatmap's numbers get the decimals its colour range needs: with one
 * decimal, the overview's idle map (values 0.47-0.73 ms) would label its
 * colour bar 0.5, 0.5, 0.6, 0.6, 0.7 ms and its cells alike. */
static void test_heatmap_decimals(void **state)
{
	(void)state;
	struct strbuf gp = STRBUF_INIT;
	heat_script("narrow", 0.473232, 0.729587, &gp);
	assert_non_null(strstr(gp.buf, "\nset format cb '%.2f ms'\n"));
	assert_non_null(strstr(gp.buf, "\"0.47 ms\""));
	assert_non_null(strstr(gp.buf, "\"0.73 ms\""));
	/* A wide range keeps the decimals asked for. */
	heat_script("wide", 67.33, 87.8, &gp);
	assert_non_null(strstr(gp.buf, "\nset format cb '%.1f ms'\n"));
	assert_non_null(strstr(gp.buf, "\"87.8 ms\""));
	strbuf_release(&gp);
}

/* Writes a chart of 8 rows with n classes, one box each for the first
 * boxed, and appends its script to gp. */
static void script(const char *const *names, int n, int boxed, const char *base, struct strbuf *gp)
{
	struct gantt *g = gantt_new();
	struct strbuf err = STRBUF_INIT;
	for (int r = 0; r < 8; r++) {
		char row[16];
		snprintf(row, sizeof(row), "row %d", r);
		gantt_add_row(g, row);
	}
	for (int c = 0; c < n; c++) {
		int k = gantt_add_class(g, names[c], NULL);
		struct gantt_box b = { c % 8, k, c, c + 1, 0, 1, NULL, NULL };
		if (c < boxed)
			assert_int_equal(gantt_add_box(g, &b), 0);
	}
	struct strbuf prefix = STRBUF_INIT;
	strbuf_addf(&prefix, "%s/%s", unit_tmp, base);
	assert_int_equal(gantt_write(g, prefix.buf, false, &err), 0);
	gantt_free(g);
	strbuf_addstr(&prefix, ".gp");
	unit_slurp(gp, prefix.buf);
	strbuf_release(&prefix);
	strbuf_release(&err);
}

static void test_legend_rows(void **state)
{
	(void)state;
	/* The what-if's op types: three rows of five at 1600 pixels. */
	static const char *const ops[] = {
		"forward-compute",
		"backward-compute",
		"forward-send",
		"forward-recv",
		"backward-send",
		"backward-recv",
		"params-all-gather",
		"grads-reduce-scatter",
		"separate-grads-all-reduce",
		"layernorm-grads-all-reduce",
		"embedding-grads-all-reduce",
		"optimizer-clip-main-grad",
		"optimizer",
		"gc",
		"pp-other",
	};
	struct strbuf gp = STRBUF_INIT;
	script(ops, 15, 15, "ops", &gp);
	assert_non_null(strstr(gp.buf, "\nset bmargin 7\n"));
	assert_non_null(strstr(gp.buf, "set terminal svg noenhanced size 1600,456 "));

	/* ppagg's seven categories: two rows, as before. */
	static const char *const cats[] = {
		"bwd_computation",       "fwd_computation",  "fwd_communication",
		"bwd_communication",     "dp_communication", "pp_communication",
		"optimizer_computation",
	};
	strbuf_reset(&gp);
	script(cats, 7, 7, "cats", &gp);
	assert_non_null(strstr(gp.buf, "\nset bmargin 6\n"));
	assert_non_null(strstr(gp.buf, "set terminal svg noenhanced size 1600,442 "));

	/* Classes without a box are not in the legend. */
	strbuf_reset(&gp);
	script(ops, 15, 4, "few", &gp);
	assert_non_null(strstr(gp.buf, "\nset bmargin 6\n"));
	strbuf_release(&gp);
}

/* Creates tmp/name with a byte in it. */
static void touch(const char *name)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", unit_tmp, name);
	int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	assert_true(fd >= 0 && write(fd, "x", 1) == 1);
	close(fd);
}

/* A script written anew takes the images an earlier run rendered of it
 * away, whoever writes it and whether or not it is rendered, not only
 * ppagg's job list: a chart another writer leaves unrendered (ppsim
 * without gnuplot) must not keep the earlier run's image. */
static void test_rewrite_clears_images(void **state)
{
	(void)state;
	struct strbuf err = STRBUF_INIT;
	struct heatmap *h = heatmap_new(1, 1);
	heatmap_set(h, 0, 0, 1.0, NULL);
	touch("stale.png");
	touch("stale.svg");
	struct strbuf prefix = STRBUF_INIT;
	strbuf_addf(&prefix, "%s/stale", unit_tmp);
	assert_int_equal(heatmap_write(h, prefix.buf, &err), 0);
	heatmap_free(h);
	assert_true(is_file(unit_tmp, "stale.gp"));
	assert_false(is_file(unit_tmp, "stale.png"));
	assert_false(is_file(unit_tmp, "stale.svg"));
	/* The same through an open folder (gantt_write_at()). */
	struct gantt *g = gantt_new();
	gantt_add_row(g, "row");
	touch("at.png");
	touch("at.svg");
	int dirfd = open(unit_tmp, O_RDONLY | O_DIRECTORY);
	assert_true(dirfd >= 0);
	assert_int_equal(gantt_write_at(g, dirfd, unit_tmp, "at", &err), 0);
	close(dirfd);
	gantt_free(g);
	assert_true(is_file(unit_tmp, "at.gp"));
	assert_false(is_file(unit_tmp, "at.png"));
	assert_false(is_file(unit_tmp, "at.svg"));
	strbuf_release(&prefix);
	strbuf_release(&err);
}

UNIT_MAIN(unit_tmp_setup, unit_tmp_teardown,
	  {
		  cmocka_unit_test(test_batch),
		  cmocka_unit_test(test_heatmap),
		  cmocka_unit_test(test_heatmap_decimals),
		  cmocka_unit_test(test_legend_rows),
		  cmocka_unit_test(test_rewrite_clears_images),
	  })
