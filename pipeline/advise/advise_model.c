/* advise_model.c — the op times and activation units of a candidate schedule
 * (docs/advisor.md, "The models").
 *
 * Design note. From the measured per-(stage, chunk) medians the model keeps
 * each stage's compute per layer and two extras: what the first stage
 * (embedding) and the last stage (loss, output layer) spend beyond the
 * middle stages' median rate per layer. A chunk of a candidate then takes
 *   chunk_overhead + g(f) x (layers in the chunk x its stage's rate
 *                            + the extra when it is the model's first or last
 *                              stage)
 *   + the stage's per-op overhead (F, B, D; not W, which sends nothing),
 * with g(f) = f x mbs_efficiency^log2(f) for a micro-batch f times the
 * measured size. A candidate with the measured chunks, placement and layers
 * uses the measured per-chunk medians instead, so that the replay is the job's
 * own times and nothing else. An unsplit backward is B + W when W is measured;
 * split schedules take (1 - zb_w_share) x B as D and the rest as W when it is
 * not. An overlapped pair lasts F + B of its two stages with one per-op
 * overhead and overlap_hidden x the shorter of the two computes taken off.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "advise_int.h"
#include "util/cmp.h"
#include "util/pp.h"

bool advise_split(enum sim_strategy s)
{
	return s == SIM_ZB1P || s == SIM_DUALPIPE || s == SIM_DUALPIPE_V;
}

bool advise_paired(enum sim_strategy s)
{
	return s == SIM_1F1B_OVERLAP || s == SIM_1F1B_INTERLEAVE_OVERLAP || s == SIM_DUALPIPE ||
	       s == SIM_DUALPIPE_V;
}

int advise_stage_device(enum sim_strategy s, int pp, int N, int k)
{
	if (s == SIM_DUALPIPE_V)
		return k < pp ? k : N - 1 - k;
	return k % pp;
}

int advise_stage_chunk(enum sim_strategy s, int pp, int k)
{
	if (s == SIM_DUALPIPE_V)
		return k < pp ? 0 : 1;
	return k / pp;
}

void advise_model_init(struct advise_model *mod, const struct advise_input *in,
		       const struct advise_settings *set)
{
	int p = in->pp, v0 = in->vpp;
	const struct advise_stat *src[AK_N] = { in->fwd, in->bwd, in->wgrad };
	double *mid = xcalloc((size_t)p * (size_t)v0 * 2, sizeof(double));

	memset(mod, 0, sizeof(*mod));
	mod->in = in;
	mod->set = set;
	mod->pp = p;
	mod->v0 = v0;
	mod->layers_known = in->layers != NULL;
	mod->w_measured = in->wgrad != NULL;
	mod->lambda = xcalloc((size_t)p, sizeof(double));
	mod->overhead = xcalloc((size_t)p, sizeof(double));
	for (int s = 0; s < p; s++) {
		mod->lambda[s] = in->layers ? (double)in->layers[s] : 1.0;
		mod->overhead[s] = in->overhead_ns ? in->overhead_ns[s] : 0.0;
	}
	mod->p2p = in->p2p_measured ? in->p2p_ns : set->p2p_ns;

	/* The job's own stages in model order: stage k of the schedule that
	 * ran is chunk `ch` of device `dev`; the first and the last of them hold
	 * the extras, the others give the median rate per layer. */
	int N0 = in->strategy == SIM_DUALPIPE_V ? 2 * p : p * v0;
	int first_i = 0;
	int last_i = advise_stage_device(in->strategy, p, N0, N0 - 1) * v0 +
		     advise_stage_chunk(in->strategy, p, N0 - 1);
	for (int k = 0; k < AK_N; k++) {
		mod->meas[k] = xcalloc((size_t)p * (size_t)v0, sizeof(double));
		mod->rate[k] = xcalloc((size_t)p, sizeof(double));
		for (int i = 0; i < p * v0; i++) {
			double x = src[k] ? src[k][i].median - set->chunk_overhead_ns : 0.0;
			mod->meas[k][i] = x > 0 ? x : 0.0;
		}
		double rmid = NAN;
		int nmid = 0;
		for (int st = 1; st < N0 - 1; st++) {
			int dev = advise_stage_device(in->strategy, p, N0, st);
			int ch = advise_stage_chunk(in->strategy, p, st);
			mid[nmid++] = mod->meas[k][dev * v0 + ch] / (mod->lambda[dev] / v0);
		}
		if (nmid)
			rmid = cmp_median(mid, (size_t)nmid);
		mod->first[k] =
			nmid ? fmax(0.0, mod->meas[k][first_i] - mod->lambda[0] / v0 * rmid) : 0.0;
		mod->last[k] = nmid ? fmax(0.0, mod->meas[k][last_i] -
							mod->lambda[last_i / v0] / v0 * rmid)
				    : 0.0;
		for (int s = 0; s < p; s++) {
			double total = 0.0;
			for (int c = 0; c < v0; c++)
				total += mod->meas[k][s * v0 + c];
			if (s == first_i / v0)
				total -= mod->first[k];
			if (s == last_i / v0)
				total -= mod->last[k];
			mod->rate[k][s] = total / mod->lambda[s];
		}
	}
	free(mid);
}

void advise_model_release(struct advise_model *mod)
{
	if (!mod)
		return;
	for (int k = 0; k < AK_N; k++) {
		free(mod->meas[k]);
		free(mod->rate[k]);
	}
	free(mod->lambda);
	free(mod->overhead);
	memset(mod, 0, sizeof(*mod));
}

/* Compute time of op kind k on stage `st` (device dev, chunk ch) of a
 * candidate with N stages, before the micro-batch scaling. */
static double compute_of(const struct advise_model *mod, const struct advise_cand *c, int kind,
			 int st, int N, int dev, int ch)
{
	if (c->measured_chunks)
		return mod->meas[kind][dev * mod->v0 + ch];
	double x = c->lambda[dev] / c->v * mod->rate[kind][dev];
	if (st == 0)
		x += mod->first[kind];
	if (st == N - 1)
		x += mod->last[kind];
	return x;
}

void advise_times_build(const struct advise_model *mod, const struct advise_cand *c,
			struct advise_times *t)
{
	const struct advise_settings *set = mod->set;
	int p = mod->pp;
	int N = c->strategy == SIM_DUALPIPE_V ? 2 * p : p * c->v;
	int v = c->strategy == SIM_DUALPIPE_V ? 2 : c->v;
	double f = c->mbs_factor;
	double g = f == 1.0 ? 1.0 : f * pow(set->mbs_efficiency, log2(f));
	double co = set->chunk_overhead_ns;
	double *cf = xcalloc((size_t)N, sizeof(double));
	double *cb = xcalloc((size_t)N, sizeof(double));

	memset(t, 0, sizeof(*t));
	t->N = N;
	t->f = xcalloc((size_t)N, sizeof(double));
	t->b = xcalloc((size_t)N, sizeof(double));
	t->d = xcalloc((size_t)N, sizeof(double));
	t->w = xcalloc((size_t)N, sizeof(double));
	t->units = xcalloc((size_t)N, sizeof(double));
	for (int k = 0; k < N; k++) {
		int dev = advise_stage_device(c->strategy, p, N, k);
		int ch = advise_stage_chunk(c->strategy, p, k);
		double o = mod->overhead[dev];
		double xf = g * compute_of(mod, c, AK_F, k, N, dev, ch);
		double xb = g * compute_of(mod, c, AK_B, k, N, dev, ch);
		double xw = mod->w_measured ? g * compute_of(mod, c, AK_W, k, N, dev, ch) : 0.0;
		double xd;
		if (!mod->w_measured) {
			xw = set->zb_w_share * xb;
			xd = xb - xw;
		} else {
			xd = xb;
			xb += xw;
		}
		cf[k] = xf;
		cb[k] = xb;
		t->f[k] = co + xf + o;
		t->b[k] = co + xb + o;
		t->d[k] = co + xd + o;
		t->w[k] = xw;
		t->units[k] = c->lambda[dev] / v * f;
	}
	if (advise_paired(c->strategy)) {
		t->fb = xcalloc((size_t)N, sizeof(double));
		for (int k = 0; k < N; k++) {
			int partner = c->strategy == SIM_DUALPIPE_V ? N - 1 - k : k;
			int dev = advise_stage_device(c->strategy, p, N, k);
			t->fb[k] = t->f[k] + t->b[partner] - mod->overhead[dev] -
				   set->overlap_hidden * fmin(cf[k], cb[partner]);
		}
	}
	free(cf);
	free(cb);
}

void advise_times_release(struct advise_times *t)
{
	if (!t)
		return;
	PP_FREE_ALL(t->f, t->b, t->d, t->w, t->fb, t->units);
	memset(t, 0, sizeof(*t));
}
