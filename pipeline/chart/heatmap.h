/* heatmap.h — a grid of values as a gnuplot `with image` chart (used by
 * ppagg's overview: bubble share, compute, idle and coverage over the
 * pipeline stage × data-parallel replica grid, and the what-if S_w map).
 *
 * A heatmap has nx columns and ny rows of cells; a cell holds a value
 * (NaN: no data, drawn grey) and a hover text. heatmap_write() writes one
 * self-contained script PREFIX.gp (the cells inline as a datablock) whose
 * outputs are PREFIX.png and PREFIX.svg under the pp_png/pp_svg guard of
 * gnuplot.h; in the SVG, hovering a cell shows its text. Row 0 is drawn at
 * the top. Small grids print each value in its cell.
 */
#ifndef HEATMAP_H
#define HEATMAP_H

#include <stdbool.h>
#include <stddef.h>

struct heatmap;
struct strbuf;

/* Colour scales: light to dark red for "higher is worse", the reverse
 * for "lower is worse" (heatmap_set_centre(): diverging from white). */
enum heatmap_scale { HEATMAP_HIGH_BAD, HEATMAP_LOW_BAD };

/* An nx × ny grid of NaN cells (nx, ny >= 1); never NULL. */
struct heatmap *heatmap_new(int nx, int ny);
void heatmap_free(struct heatmap *h);

/* Title, axis labels, colour-box label (copied; NULL = none). */
void heatmap_set_labels(struct heatmap *h, const char *title, const char *xlabel,
			const char *ylabel, const char *cblabel);
void heatmap_set_scale(struct heatmap *h, enum heatmap_scale s);
/* Fixes the colour range (values outside take its end colours); without
 * it the range is the data's. lo < hi. */
void heatmap_set_range(struct heatmap *h, double lo, double hi);
/* Colours each row y against its own centre row_centre[y] (ny values,
 * copied; the overview: the stage's median cell): a cell's colour is its
 * value minus its row's centre, on a scale from -d to +d, d the largest
 * such difference and at least min_half. So cells within min_half of
 * their row's centre stay near white, and one far cell takes the dark end.
 * The better side is light blue, the worse side orange to dark red (the
 * scale's direction); the colour box shows the difference, and its label
 * the cblabel, d and min_half ("vs its stage's median, ±19.9 ms (at least
 * ±6.8)"). A cell more than 60 % of the way to the worse end is dark
 * (white text). Cells still print and hover their own values. Wins over
 * heatmap_set_range(). */
void heatmap_set_centres(struct heatmap *h, const double *row_centre, double min_half);
/* How values are printed in their cells and on the colour box: with
 * `decimals` decimals and a unit after them (e.g. 1 and " %"; copied,
 * at most 7 bytes). Default: 2 decimals, no unit. More decimals (up to 6)
 * when the colour range needs them to tell its tics apart: a fifth of the
 * range must show in the last decimal. */
void heatmap_set_number(struct heatmap *h, int decimals, const char *unit);
/* Which outputs the script makes (default both; neither means both). */
void heatmap_set_formats(struct heatmap *h, bool png, bool svg);

/* Sets cell (x, y): 0 <= x < nx, 0 <= y < ny (PP_EINVAL otherwise). hover
 * may be NULL. */
int heatmap_set(struct heatmap *h, int x, int y, double value, const char *hover);

/* Writes PREFIX.gp (the script names its outputs by base name and runs in
 * PREFIX's folder). 0, or PP_EIO with the reason appended to err. */
int heatmap_write(const struct heatmap *h, const char *prefix, struct strbuf *err);

#endif
