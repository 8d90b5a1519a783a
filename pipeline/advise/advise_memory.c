/* advise_memory.c — the memory fit (docs/advisor.md, "Memory in GiB").
 *
 * Design note. A stage's peak memory is modelled as a part that no schedule
 * changes (weights, gradients, optimizer state, the embedding's or the loss's
 * buffers, the allocator's reserve) plus gib_per_unit for each layer x
 * micro-batch of activation it holds at its peak. One run gives one reading
 * per stage and a different in-flight count per stage (1F1B: P - s), so a
 * line through the middle stages' (units, reading) points gives gib_per_unit
 * and their common part; the middle stages hold the same layers and nothing
 * else, the first and last stage are kept out of the fit because their extras
 * would bend it. Each stage's own schedule-independent part is then its
 * reading minus gib_per_unit x its units, so a stage's prediction for the
 * replay is its reading exactly and the residuals of the line say how well
 * one activation size explains every stage.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "advise_int.h"
#include "util/pp.h"
#include "util/strbuf.h"

static void fit_fail(struct advise_memory_fit *fit, const char *why)
{
	free(fit->note);
	fit->note = xstrdup(why);
	fit->ok = false;
}

void advise_memory_fit(const struct advise_input *in, const double *units,
		       struct advise_memory_fit *fit)
{
	int p = in->pp;
	int lo = 1, hi = p - 2, n = 0;
	double su = 0, sm = 0, suu = 0, sum_ = 0;

	memset(fit, 0, sizeof(*fit));
	fit->note = xstrdup("");
	fit->gib_per_unit = NAN;
	fit->common_gib = NAN;
	fit->rms_gib = NAN;
	if (!in->memory_gib) {
		fit_fail(fit, "the job recorded no memory readings");
		return;
	}
	fit->base_gib = xcalloc((size_t)p, sizeof(double));
	fit->residual_gib = xcalloc((size_t)p, sizeof(double));
	fit->measured_gib = xcalloc((size_t)p, sizeof(double));
	for (int s = 0; s < p; s++) {
		fit->measured_gib[s] = in->memory_gib[s];
		fit->base_gib[s] = NAN;
		fit->residual_gib[s] = NAN;
	}
	/* The middle stages when there are at least two; else every stage. */
	if (p < 4) {
		lo = 0;
		hi = p - 1;
	}
	for (int s = lo; s <= hi; s++) {
		double m = in->memory_gib[s];
		if (!isfinite(m))
			continue;
		n++;
		su += units[s];
		sm += m;
		suu += units[s] * units[s];
		sum_ += units[s] * m;
	}
	fit->fit_first = lo;
	fit->fit_last = hi;
	double var = suu - su * su / (n ? n : 1);
	if (n < 2 || !(var > 1e-12 * (suu > 0 ? suu : 1))) {
		fit_fail(fit, n < 2 ? "fewer than two stages with a memory reading to fit"
				    : "the stages hold the same activation: memory per "
				      "activation unit cannot be told from the rest");
		return;
	}
	double a = (sum_ - su * sm / n) / var;
	double b = (sm - a * su) / n;
	if (!(a > 0)) {
		fit_fail(fit, "memory does not grow with the activation in flight: no "
			      "activation size fits the readings");
		return;
	}
	fit->gib_per_unit = a;
	fit->common_gib = b;
	double ss = 0;
	for (int s = 0; s < p; s++) {
		double m = in->memory_gib[s];
		if (!isfinite(m)) {
			fit->base_gib[s] = b;
			continue;
		}
		fit->base_gib[s] = m - a * units[s];
		fit->residual_gib[s] = m - (b + a * units[s]);
		if (s >= lo && s <= hi)
			ss += fit->residual_gib[s] * fit->residual_gib[s];
	}
	fit->rms_gib = sqrt(ss / n);
	fit->ok = true;
}

void advise_memory_fit_release(struct advise_memory_fit *fit)
{
	if (!fit)
		return;
	PP_FREE_ALL(fit->base_gib, fit->residual_gib, fit->measured_gib, fit->note);
	memset(fit, 0, sizeof(*fit));
}
