/* advise.c — the advisor's runs: checks, the calibration replay, the
 * alternatives, their memory and the best option (advise.h).
 *
 * Design note. Every row is one sim_run() of pipeline/sim/ (megatron timing
 * model) on the op times advise_model.c builds, so a row costs one
 * simulation and the whole answer about a dozen (docs/advisor.md,
 * "Speed"). rows[0] replays the schedule the job ran on its measured
 * per-chunk medians; it must run, the alternatives need not: one that cannot
 * (Megatron's or DeepSeek's constraints, a layer count that does not divide)
 * is a row with valid = false and the reason in its notes, so that a user
 * sees why it is not offered. A step is the simulated pipeline + the measured
 * tail + the time outside the pipeline, both kept as measured.
 */
#include "advise.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise_int.h"
#include "util/config.h"
#include "util/pp.h"
#include "util/strbuf.h"

void advise_input_init(struct advise_input *in)
{
	memset(in, 0, sizeof(*in));
	in->strategy = SIM_1F1B;
	in->warmup = SCHED_CORE;
	in->vpp = 1;
}

void advise_settings_init(struct advise_settings *set)
{
	memset(set, 0, sizeof(*set));
	set->zb_w_share = 0.4;
	set->w_memory_share = 32.0 / 34.0;
	set->chunk_overhead_ns = 0.0;
	set->mbs_efficiency = 1.0;
	set->p2p_ns = 0.0;
	set->overlap_hidden = 0.0;
	set->calibration_tolerance = 0.05;
	set->min_gain = 0.01;
	set->memory_limit_gib = 0.0;
	set->max_layer_moves = 2;
}

/* The [advise] section (config.example.ini, docs/advisor.md §7), one row a key:
 * where its value goes, its range, and the factor from the file's unit to
 * the field's (milliseconds to nanoseconds); whole ones are counts (int). */
static const struct setting {
	const char *key;
	size_t off;
	double min, max, scale;
	bool whole;
} settings[] = {
	{ "zb_w_share", offsetof(struct advise_settings, zb_w_share), 0, 1, 1, false },
	{ "w_memory_share", offsetof(struct advise_settings, w_memory_share), 0, 1, 1, false },
	{ "chunk_overhead_ms", offsetof(struct advise_settings, chunk_overhead_ns), 0, 1e6, 1e6,
	  false },
	{ "mbs_efficiency", offsetof(struct advise_settings, mbs_efficiency), 0.1, 10, 1, false },
	{ "p2p_ms", offsetof(struct advise_settings, p2p_ns), 0, 1e6, 1e6, false },
	{ "overlap_hidden", offsetof(struct advise_settings, overlap_hidden), 0, 1, 1, false },
	{ "calibration_tolerance", offsetof(struct advise_settings, calibration_tolerance), 1e-6, 1,
	  1, false },
	{ "min_gain", offsetof(struct advise_settings, min_gain), 0, 1, 1, false },
	{ "memory_limit_gib", offsetof(struct advise_settings, memory_limit_gib), 0, 1e9, 1,
	  false },
	{ "max_layer_moves", offsetof(struct advise_settings, max_layer_moves), 0, 64, 1, true },
	{ "layers", offsetof(struct advise_settings, layers), 1, 1000000, 1, true },
};
#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

size_t advise_settings_check_known(const struct config *cfg)
{
	const char *known[NSETTINGS + 1];
	for (size_t i = 0; i < NSETTINGS; i++)
		known[i] = settings[i].key;
	known[NSETTINGS] = NULL;
	return config_check_known(cfg, "advise", known);
}

int advise_settings_load(struct advise_settings *set, const struct config *cfg, struct strbuf *err)
{
	struct strbuf key = STRBUF_INIT;
	int rc = 0;
	advise_settings_init(set);
	advise_settings_check_known(cfg);
	for (size_t i = 0; i < NSETTINGS && rc >= 0; i++) {
		const struct setting *s = &settings[i];
		char *to = (char *)set + s->off;
		strbuf_reset(&key);
		strbuf_addf(&key, "advise.%s", s->key);
		if (s->whole) {
			long v;
			rc = config_get_long_in(cfg, key.buf, (long)s->min, (long)s->max, &v, err);
			if (rc == 0)
				*(int *)to = (int)v;
		} else {
			double v;
			rc = config_get_double_in(cfg, key.buf, s->min, s->max, &v, err);
			if (rc == 0)
				*(double *)to = v * s->scale;
		}
	}
	strbuf_release(&key);
	return rc < 0 ? rc : 0;
}

static const char *const modelled_names[ADVISE_MOD_NBITS] = {
	"p2p",     "overhead", "outside", "layers",     "chunk_split",
	"w_share", "overlap",  "mbs",     "layer_rate", "memory_fit",
};

const char *advise_modelled_name(unsigned bit)
{
	for (int i = 0; i < ADVISE_MOD_NBITS; i++)
		if (bit == 1u << i)
			return modelled_names[i];
	return "?";
}

void advise_modelled_format(unsigned modelled, struct strbuf *sb)
{
	bool first = true;
	for (int i = 0; i < ADVISE_MOD_NBITS; i++)
		if (modelled & (1u << i)) {
			if (!first)
				strbuf_addch(sb, ',');
			strbuf_addstr(sb, modelled_names[i]);
			first = false;
		}
}

const char *advise_row_schedule(const struct advise_row *row)
{
	return row->kind == ADVISE_CURRENT ? "current" : sim_strategy_name(row->strategy);
}

void advise_layers_format(const struct advise_result *res, const struct advise_row *row,
			  struct strbuf *sb)
{
	if (!row->layers)
		return;
	for (int s = 0; s < res->pp; s++)
		strbuf_addf(sb, "%s%d", s ? "," : "", row->layers[s]);
}

/* ---- checks ------------------------------------------------------------ */

static bool finite_ge0(double x)
{
	return isfinite(x) && x >= 0;
}

static int check_stats(const struct advise_input *in, const struct advise_stat *st,
		       const char *what, struct strbuf *err)
{
	for (int s = 0; s < in->pp; s++)
		for (int c = 0; c < in->vpp; c++)
			if (!finite_ge0(st[advise_at(in, s, c)].median)) {
				strbuf_addf(err,
					    "%s time of stage %d, chunk %d is not a finite "
					    "number >= 0",
					    what, s, c);
				return PP_EINVAL;
			}
	return 0;
}

static int check_input(const struct advise_input *in, const struct advise_settings *set,
		       struct strbuf *err)
{
	int want_vpp;
	if (in->pp < 1 || in->vpp < 1 || in->microbatches < 1) {
		strbuf_addf(err, "pp, vpp and micro-batches must be >= 1 (got %d, %d, %d)", in->pp,
			    in->vpp, in->microbatches);
		return PP_EINVAL;
	}
	switch (in->strategy) {
	case SIM_1F1B:
	case SIM_ZB1P:
	case SIM_1F1B_OVERLAP: want_vpp = 1; break;
	case SIM_INTERLEAVE: want_vpp = in->vpp >= 2 ? in->vpp : 2; break;
	case SIM_DUALPIPE_V: want_vpp = 2; break;
	default:
		strbuf_addf(err, "the advisor cannot replay a job that ran %s",
			    sim_strategy_name(in->strategy));
		return PP_EINVAL;
	}
	if (in->vpp != want_vpp) {
		strbuf_addf(err, "%s runs %s chunks per stage, not %d",
			    sim_strategy_name(in->strategy),
			    in->strategy == SIM_INTERLEAVE ? "two or more"
			    : want_vpp == 1                ? "one"
							   : "two",
			    in->vpp);
		return PP_EINVAL;
	}
	if (!in->fwd || !in->bwd) {
		strbuf_addstr(err, "forward and backward times are required");
		return PP_EINVAL;
	}
	if (check_stats(in, in->fwd, "forward", err) || check_stats(in, in->bwd, "backward", err) ||
	    (in->wgrad && check_stats(in, in->wgrad, "weight-gradient", err)))
		return PP_EINVAL;
	for (int s = 0; in->layers && s < in->pp; s++)
		if (in->layers[s] < in->vpp || in->layers[s] % in->vpp) {
			strbuf_addf(err, "stage %d: its %d layers do not divide into %d chunks", s,
				    in->layers[s], in->vpp);
			return PP_EINVAL;
		}
	for (int s = 0; in->overhead_ns && s < in->pp; s++)
		if (!finite_ge0(in->overhead_ns[s])) {
			strbuf_addf(err, "per-op overhead of stage %d is not a finite number >= 0",
				    s);
			return PP_EINVAL;
		}
	if (!finite_ge0(in->p2p_ns) || !finite_ge0(in->tail_ns) || !finite_ge0(in->outside_ns)) {
		strbuf_addstr(err, "p2p, tail and outside times must be finite numbers >= 0");
		return PP_EINVAL;
	}
	if (!(isfinite(in->step_ns) && in->step_ns > 0)) {
		strbuf_addstr(err, "the measured step must be a finite number > 0");
		return PP_EINVAL;
	}
	if (in->micro_batch_size < 0 || in->global_batch < 0) {
		strbuf_addstr(err, "micro-batch size and global batch must be >= 0 (0: unknown)");
		return PP_EINVAL;
	}
	if (!(set->zb_w_share >= 0 && set->zb_w_share <= 1) ||
	    !(set->w_memory_share >= 0 && set->w_memory_share <= 1) ||
	    !(set->overlap_hidden >= 0 && set->overlap_hidden <= 1) || !(set->mbs_efficiency > 0) ||
	    !finite_ge0(set->chunk_overhead_ns) || !finite_ge0(set->p2p_ns) ||
	    !(set->calibration_tolerance > 0) || !finite_ge0(set->min_gain) ||
	    !finite_ge0(set->memory_limit_gib) || set->max_layer_moves < 0) {
		strbuf_addstr(err, "an advisor setting is out of its range (config.example.ini "
				   "[advise] lists them)");
		return PP_EINVAL;
	}
	return 0;
}

/* ---- rows --------------------------------------------------------------- */

struct advise_ctx {
	const struct advise_input *in;
	const struct advise_settings *set;
	struct advise_model mod;
	struct advise_result *res;
	size_t cap;
	unsigned base_modelled; /* the input's modelled bits, on every row */
};

/* Appends fmt to *field, after sep when it holds text already. */
static void field_addf(char **field, const char *sep, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void field_addf(char **field, const char *sep, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	strbuf_addstr(&sb, *field);
	if (sb.len)
		strbuf_addstr(&sb, sep);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(*field);
	*field = strbuf_detach(&sb, NULL);
}

#define NOTE(row, ...) field_addf(&(row)->notes, "; ", __VA_ARGS__)
#define KNOB(row, ...) field_addf(&(row)->knobs, " ", __VA_ARGS__)

static struct advise_row *row_new(struct advise_ctx *X, const struct advise_cand *c)
{
	struct advise_result *res = X->res;
	PP_GROW(res->rows, res->nrows, X->cap, 16);
	struct advise_row *row = &res->rows[res->nrows++];
	memset(row, 0, sizeof(*row));
	row->kind = c->kind;
	row->strategy = c->strategy;
	row->vpp = c->strategy == SIM_DUALPIPE_V ? 2 : c->v;
	row->microbatches = c->m;
	row->micro_batch_size =
		X->in->micro_batch_size ? (int)lround(X->in->micro_batch_size * c->mbs_factor) : 0;
	row->step_ns = row->pipeline_ns = row->delta = NAN;
	row->bubble = row->activation = row->memory_gib = NAN;
	row->stage_units = xcalloc((size_t)X->in->pp, sizeof(double));
	row->modelled = X->base_modelled;
	row->knobs = xstrdup("");
	row->notes = xstrdup("");
	return row;
}

/* Marks row as one that cannot run here, with the reason. */
static void row_invalid(struct advise_row *row, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void row_invalid(struct advise_row *row, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	row->valid = false;
	NOTE(row, "%s", sb.buf);
	strbuf_release(&sb);
}

/* Simulates candidate c into row. Returns sim_run()'s code; on failure the
 * row is invalid with the simulator's message. */
static int simulate(struct advise_ctx *X, const struct advise_cand *c, struct advise_row *row)
{
	const struct advise_input *in = X->in;
	struct advise_times t;
	struct sim_config sc;
	struct sim_result r;
	struct strbuf e = STRBUF_INIT;
	int rc;

	advise_times_build(&X->mod, c, &t);
	sim_config_init(&sc);
	sc.strategy = c->strategy;
	sc.warmup = in->warmup;
	sc.devices = in->pp;
	sc.stages = t.N;
	sc.microbatches = c->m;
	sc.group_size = c->group_size;
	sc.p2p = X->mod.p2p;
	sc.forward = t.f;
	sc.backward = t.b;
	sc.backward_d = t.d;
	sc.backward_w = t.w;
	sc.overlapped = t.fb;
	rc = sim_run(&sc, &r, &e);
	X->res->simulations++;
	if (rc) {
		row_invalid(row, "%s", e.buf);
	} else {
		double bubble = 0;
		row->valid = true;
		row->pipeline_ns = r.makespan;
		row->step_ns = r.makespan + in->tail_ns + in->outside_ns;
		row->delta = (row->step_ns - in->step_ns) / in->step_ns;
		for (int d = 0; d < r.ndevices; d++)
			bubble += r.devices[d].bubble;
		row->bubble = bubble / r.ndevices;
		sim_peak_inflight(&r, t.units, X->set->w_memory_share, row->stage_units);
	}
	sim_result_release(&r);
	advise_times_release(&t);
	strbuf_release(&e);
	return rc;
}

/* The model's bits a candidate rests on beyond the input's. */
static unsigned cand_modelled(const struct advise_ctx *X, const struct advise_cand *c)
{
	unsigned m = 0;
	if (!c->measured_chunks) {
		m |= ADVISE_MOD_CHUNK_SPLIT;
		if (!X->mod.layers_known)
			m |= ADVISE_MOD_LAYERS;
	}
	if (advise_split(c->strategy) && !X->mod.w_measured)
		m |= ADVISE_MOD_W_SHARE;
	if (advise_paired(c->strategy))
		m |= ADVISE_MOD_OVERLAP;
	if (c->mbs_factor != 1.0)
		m |= ADVISE_MOD_MBS;
	return m;
}

/* The measured chunks apply when the candidate keeps the job's chunks per
 * stage, their placement (DualPipe-V's V differs from the interleaved order)
 * and its layers. */
static bool same_chunks(const struct advise_input *in, enum sim_strategy s, int v)
{
	bool v_shape = s == SIM_DUALPIPE_V, v_shape0 = in->strategy == SIM_DUALPIPE_V;
	return v == in->vpp && v_shape == v_shape0;
}

static struct advise_row *add_cand(struct advise_ctx *X, struct advise_cand *c)
{
	struct advise_row *row = row_new(X, c);
	row->modelled |= cand_modelled(X, c);
	simulate(X, c, row);
	return row;
}

static struct advise_cand cand_of(struct advise_ctx *X, enum advise_kind kind, enum sim_strategy s,
				  int v, int m)
{
	struct advise_cand c = { .kind = kind,
				 .strategy = s,
				 .v = v,
				 .m = m,
				 .mbs_factor = 1.0,
				 .lambda = X->mod.lambda };
	c.measured_chunks = same_chunks(X->in, s, v);
	if (s == SIM_INTERLEAVE && X->in->strategy == SIM_INTERLEAVE && v == X->in->vpp)
		c.group_size = X->in->group_size;
	return c;
}

/* Layers per stage as Megatron's knob gives them, when every stage has the
 * same count; 0 otherwise (or unknown). */
static int uniform_layers(const struct advise_input *in)
{
	if (!in->layers)
		return 0;
	for (int s = 1; s < in->pp; s++)
		if (in->layers[s] != in->layers[0])
			return 0;
	return in->layers[0];
}

static void add_interleave(struct advise_ctx *X, int v)
{
	const struct advise_input *in = X->in;
	struct advise_cand c = cand_of(X, ADVISE_SCHEDULE, SIM_INTERLEAVE, v, in->microbatches);
	struct advise_row *row = row_new(X, &c);
	int lu = uniform_layers(in);
	row->modelled |= cand_modelled(X, &c);
	if (in->pp < 2) {
		row_invalid(row, "interleaving needs two or more pipeline stages");
		return;
	}
	for (int s = 0; in->layers && s < in->pp; s++)
		if (in->layers[s] % v) {
			row_invalid(row, "stage %d's %d layers do not divide into %d chunks", s,
				    in->layers[s], v);
			return;
		}
	if (simulate(X, &c, row))
		return;
	if (lu)
		KNOB(row, "--num-layers-per-virtual-pipeline-stage %d", lu / v);
	else if (in->layers)
		NOTE(row,
		     "%d chunks per stage of uneven stages (every stage's layer count "
		     "divides by %d)",
		     v, v);
	else
		NOTE(row, "layer count unknown: VPP %d assumes every stage's layers divide by %d",
		     v, v);
}

/* VPP sizes to try: every v >= 2 that divides every stage's layer count
 * (other than the job's), or 2 and 4 when the layers are unknown. A job
 * whose layers allow none gets one invalid row saying so. */
static void add_interleaves(struct advise_ctx *X)
{
	const struct advise_input *in = X->in;
	int maxl = 0, tried = 0;
	if (in->pp < 2) {
		add_interleave(X, 2); /* invalid: no pipeline to interleave */
		return;
	}
	if (!in->layers) {
		for (int v = 2; v <= 4; v += 2)
			if (!(in->strategy == SIM_INTERLEAVE && v == in->vpp))
				add_interleave(X, v);
		return;
	}
	for (int s = 0; s < in->pp; s++)
		if (in->layers[s] > maxl)
			maxl = in->layers[s];
	for (int v = 2; v <= maxl; v++) {
		bool divides = true;
		for (int s = 0; s < in->pp && divides; s++)
			divides = in->layers[s] % v == 0;
		if (!divides || (in->strategy == SIM_INTERLEAVE && v == in->vpp))
			continue;
		add_interleave(X, v);
		tried++;
	}
	if (!tried && !(in->strategy == SIM_INTERLEAVE))
		add_interleave(X, 2); /* invalid: says which stage does not divide */
}

static void add_schedules(struct advise_ctx *X)
{
	const struct advise_input *in = X->in;
	int m = in->microbatches;
	if (in->strategy != SIM_1F1B) {
		struct advise_cand c = cand_of(X, ADVISE_SCHEDULE, SIM_1F1B, 1, m);
		struct advise_row *row = add_cand(X, &c);
		if (row->valid && in->vpp > 1)
			NOTE(row,
			     "no virtual pipeline (drop --num-layers-per-virtual-pipeline-stage)");
	}
	add_interleaves(X);
	if (in->strategy != SIM_ZB1P) {
		struct advise_cand c = cand_of(X, ADVISE_SCHEDULE, SIM_ZB1P, 1, m);
		struct advise_row *row = add_cand(X, &c);
		if (row->valid)
			NOTE(row, "backward split into input and weight gradients (ZB-H1)");
	}
	if (in->strategy != SIM_1F1B_OVERLAP) {
		struct advise_cand c = cand_of(X, ADVISE_SCHEDULE, SIM_1F1B_OVERLAP, 1, m);
		struct advise_row *row = add_cand(X, &c);
		if (row->valid && X->set->overlap_hidden == 0)
			NOTE(row,
			     "overlapped pairs hide nothing by default (overlap_hidden 0): the "
			     "deeper warm-up costs memory for no gain unless the job has "
			     "communication to hide");
	}
	if (in->strategy != SIM_DUALPIPE_V) {
		struct advise_cand c = cand_of(X, ADVISE_SCHEDULE, SIM_DUALPIPE_V, 2, m);
		struct advise_row *row = row_new(X, &c);
		row->modelled |= cand_modelled(X, &c);
		if (in->pp % 2 || in->pp < 2)
			row_invalid(row, "DualPipe-V needs an even number of pipeline stages");
		else if (m < 2 * in->pp)
			row_invalid(row,
				    "DualPipe-V needs at least 2 x pp = %d micro-batches (the job "
				    "runs %d)",
				    2 * in->pp, m);
		else {
			bool odd = false;
			for (int s = 0; in->layers && s < in->pp; s++)
				odd |= in->layers[s] % 2 != 0;
			if (odd)
				row_invalid(row, "DualPipe-V needs an even layer count on every "
						 "stage (two chunks)");
			else
				simulate(X, &c, row);
		}
	}
}

static void add_microbatches(struct advise_ctx *X)
{
	const struct advise_input *in = X->in;
	int m = in->microbatches, mbs = in->micro_batch_size;
	for (int dir = 0; dir < 2; dir++) {
		int m2 = dir == 0 ? m / 2 : 2 * m;
		struct advise_cand c = cand_of(X, ADVISE_MICROBATCHES, in->strategy, in->vpp, m2);
		c.mbs_factor = dir == 0 ? 2.0 : 0.5;
		struct advise_row *row = row_new(X, &c);
		row->modelled |= cand_modelled(X, &c);
		if (dir == 0 && (m % 2 || m2 < 1)) {
			row->microbatches = m2 < 1 ? 1 : m2;
			row_invalid(row, "an odd micro-batch count cannot be halved");
			continue;
		}
		if (dir == 1 && mbs && mbs % 2) {
			row_invalid(row, "an odd micro-batch size cannot be halved");
			continue;
		}
		if (simulate(X, &c, row))
			continue;
		if (mbs)
			KNOB(row, "--micro-batch-size %d", row->micro_batch_size);
		else
			NOTE(row, "micro-batch size %s (size unknown%s)",
			     dir == 0 ? "doubled" : "halved", dir == 1 ? ": assumed even" : "");
		if (in->global_batch)
			NOTE(row, "the same global batch of %ld samples", in->global_batch);
		if (X->set->mbs_efficiency == 1.0)
			NOTE(row, "time per sample assumed independent of the micro-batch size "
				  "(mbs_efficiency 1)");
	}
}

/* A stage's time per micro-batch under the job's schedule: every chunk's
 * forward and backward and their per-op overheads. */
static double stage_time(const struct advise_model *mod, int s)
{
	double t = 0;
	for (int c = 0; c < mod->v0; c++) {
		int i = s * mod->v0 + c;
		t += mod->meas[AK_F][i] + mod->meas[AK_B][i] + mod->meas[AK_W][i];
		t += 2 * (mod->overhead[s] + mod->set->chunk_overhead_ns);
	}
	return t;
}

static double layer_time(const struct advise_model *mod, int s)
{
	return mod->rate[AK_F][s] + mod->rate[AK_B][s] + mod->rate[AK_W][s];
}

static void add_move(struct advise_ctx *X, int from, int to, int k)
{
	const struct advise_input *in = X->in;
	int p = in->pp;
	double *lambda = xcalloc((size_t)p, sizeof(double));
	struct advise_cand c =
		cand_of(X, ADVISE_REBALANCE, in->strategy, in->vpp, in->microbatches);
	struct advise_row *row;
	bool middle_equal = true;

	for (int s = 0; s < p; s++)
		lambda[s] = in->layers[s] + (s == from ? -k : 0) + (s == to ? k : 0);
	c.lambda = lambda;
	c.measured_chunks = false;
	row = row_new(X, &c);
	row->modelled |= cand_modelled(X, &c) | ADVISE_MOD_LAYER_RATE;
	row->layers = xcalloc((size_t)p, sizeof(int));
	for (int s = 0; s < p; s++)
		row->layers[s] = (int)lambda[s];
	if (!simulate(X, &c, row)) {
		for (int s = 2; s < p - 1; s++)
			middle_equal &= row->layers[s] == row->layers[1];
		NOTE(row, "%d layer%s moved from stage %d to stage %d", k, k > 1 ? "s" : "", from,
		     to);
		if (middle_equal && p >= 2)
			KNOB(row,
			     "--decoder-first-pipeline-num-layers %d "
			     "--decoder-last-pipeline-num-layers %d",
			     row->layers[0], row->layers[p - 1]);
		else
			NOTE(row, "the middle stages differ: needs a per-stage layout "
				  "(Megatron-core's --pipeline-model-parallel-layout)");
	}
	free(lambda);
}

/* Moves 1..max_layer_moves layers (times VPP, so that the chunks still
 * divide) off the slowest stage: to the other end of the pipeline when the
 * slowest is the first or the last stage (what Megatron's first/last knobs
 * express), and to the stage that would then be least loaded. */
static void add_rebalances(struct advise_ctx *X)
{
	const struct advise_input *in = X->in;
	const struct advise_model *mod = &X->mod;
	int p = in->pp, slow = 0;

	if (p < 2 || X->set->max_layer_moves < 1)
		return;
	if (!in->layers) {
		struct advise_cand c =
			cand_of(X, ADVISE_REBALANCE, in->strategy, in->vpp, in->microbatches);
		struct advise_row *row = row_new(X, &c);
		row_invalid(row, "layer counts unknown: no layers to move");
		return;
	}
	for (int s = 1; s < p; s++)
		if (stage_time(mod, s) > stage_time(mod, slow))
			slow = s;
	for (int j = 1; j <= X->set->max_layer_moves; j++) {
		int k = j * in->vpp, best = -1, end = -1;
		double best_t = INFINITY;
		if (in->layers[slow] - k < in->vpp)
			break;
		for (int s = 0; s < p; s++) {
			double t;
			if (s == slow)
				continue;
			t = stage_time(mod, s) + k * layer_time(mod, s);
			if (t < best_t) {
				best_t = t;
				best = s;
			}
		}
		if (slow == 0 || slow == p - 1)
			end = slow == 0 ? p - 1 : 0;
		if (end >= 0)
			add_move(X, slow, end, k);
		if (best >= 0 && best != end)
			add_move(X, slow, best, k);
	}
}

/* ---- calibration, memory, the best option ------------------------------- */

static void calibrate(struct advise_ctx *X)
{
	const struct advise_input *in = X->in;
	struct advise_result *res = X->res;
	const struct advise_row *cur = &res->rows[0];
	double err = cur->delta, tol = X->set->calibration_tolerance;
	struct strbuf sb = STRBUF_INIT;

	res->calibration_error = err;
	res->calibrated = fabs(err) <= tol;
	if (!res->calibrated) {
		strbuf_addf(&sb,
			    "the replay is %.1f %% %s than the measured step (more than %.0f %%)",
			    100 * fabs(err), err < 0 ? "shorter" : "longer", 100 * tol);
		if (in->outside_ns > 0.25 * in->step_ns)
			strbuf_addf(&sb,
				    "; %.0f %% of the step is outside the pipeline, which no "
				    "schedule changes",
				    100 * in->outside_ns / in->step_ns);
		if (err < 0) {
			const struct advise_stat *sets[] = { in->fwd, in->bwd };
			double worst = 0;
			int ws = -1, wk = 0, fewest = -1;
			for (int k = 0; k < 2; k++)
				for (int i = 0; i < in->pp * in->vpp; i++) {
					const struct advise_stat *st = &sets[k][i];
					double spread = (st->p90 - st->p10) / st->median;
					if (isfinite(spread) && spread > worst) {
						worst = spread;
						ws = i / in->vpp;
						wk = k;
					}
					if (fewest < 0 || st->samples < fewest)
						fewest = st->samples;
				}
			strbuf_addstr(&sb, "; the job waits longer than its median op times "
					   "explain");
			if (ws >= 0 && worst > 0.1)
				strbuf_addf(&sb,
					    " (%s times vary: p10..p90 spans %.0f %% of the median "
					    "on stage %d)",
					    wk ? "backward" : "forward", 100 * worst, ws);
			if (fewest >= 0 && fewest < 5)
				strbuf_addf(&sb, "; some medians rest on %d sample%s", fewest,
					    fewest == 1 ? "" : "s");
			if (!in->p2p_measured || !in->overhead_ns)
				strbuf_addstr(&sb, "; p2p time or per-op overhead not measured");
		} else {
			strbuf_addstr(&sb, "; the measured op times include waiting (e.g. a "
					   "receive inside a timed forward), or the measured step "
					   "is not the whole pipeline");
		}
	}
	res->calibration_note = strbuf_detach(&sb, NULL);
}

static void memory_rows(struct advise_ctx *X)
{
	struct advise_result *res = X->res;
	const struct advise_memory_fit *fit = &res->memory;
	int p = X->in->pp;
	double cur_peak = 0;
	for (int s = 0; s < p; s++)
		cur_peak = fmax(cur_peak, res->rows[0].stage_units[s]);
	for (size_t i = 0; i < res->nrows; i++) {
		struct advise_row *row = &res->rows[i];
		double peak = 0;
		if (!row->valid)
			continue;
		for (int s = 0; s < p; s++)
			peak = fmax(peak, row->stage_units[s]);
		row->activation = cur_peak > 0 ? peak / cur_peak : NAN;
		if (!fit->ok)
			continue;
		row->stage_gib = xcalloc((size_t)p, sizeof(double));
		row->memory_gib = 0;
		for (int s = 0; s < p; s++) {
			row->stage_gib[s] =
				fit->base_gib[s] + fit->gib_per_unit * row->stage_units[s];
			row->memory_gib = fmax(row->memory_gib, row->stage_gib[s]);
		}
		if (row->kind != ADVISE_CURRENT)
			row->modelled |= ADVISE_MOD_MEMORY;
		if (row->kind == ADVISE_REBALANCE)
			NOTE(row, "memory: the weights and optimizer state of moved layers are "
				  "not counted");
	}
}

static void choose_best(struct advise_ctx *X)
{
	struct advise_result *res = X->res;
	const struct advise_settings *set = X->set;
	double replay = res->rows[0].step_ns, limit = set->memory_limit_gib;
	struct strbuf sb = STRBUF_INIT;
	int best = -1;

	for (size_t i = 1; i < res->nrows; i++) {
		const struct advise_row *row = &res->rows[i];
		if (!row->valid || !(row->step_ns < replay * (1 - set->min_gain)))
			continue;
		if (limit > 0 && isfinite(row->memory_gib) && row->memory_gib > limit)
			continue;
		if (best < 0 || row->step_ns < res->rows[best].step_ns)
			best = (int)i;
	}
	if (!res->calibrated) {
		strbuf_addf(&sb, "no best option claimed: %s", res->calibration_note);
		best = -1;
	} else if (best < 0) {
		strbuf_addf(&sb, "no alternative is %.0f %% faster than the replay%s",
			    100 * set->min_gain, limit > 0 ? " within the memory limit" : "");
	} else {
		const struct advise_row *b = &res->rows[best];
		strbuf_addf(&sb, "%s, VPP %d, %d micro-batches", sim_strategy_name(b->strategy),
			    b->vpp, b->microbatches);
		if (b->layers) {
			strbuf_addstr(&sb, ", layers ");
			advise_layers_format(res, b, &sb);
		}
		strbuf_addf(&sb, ": %.1f %% faster than the replay",
			    100 * (1 - b->step_ns / replay));
		if (isfinite(b->memory_gib))
			strbuf_addf(&sb, ", peak %.1f GiB", b->memory_gib);
		else if (isfinite(b->activation))
			strbuf_addf(&sb, ", %.2fx the activation memory", b->activation);
		strbuf_addf(&sb, " (calibration %+.1f %%)", 100 * res->calibration_error);
	}
	res->best = best;
	res->best_note = strbuf_detach(&sb, NULL);
}

int advise_run(const struct advise_input *in, const struct advise_settings *set,
	       struct advise_result *res, struct strbuf *err)
{
	struct advise_ctx X = { .in = in, .set = set, .res = res };
	struct advise_cand cur;
	int rc;

	memset(res, 0, sizeof(*res));
	res->best = -1;
	if ((rc = check_input(in, set, err)))
		return rc;
	res->pp = in->pp;
	res->measured_step_ns = in->step_ns;
	advise_model_init(&X.mod, in, set);
	if (!in->p2p_measured)
		X.base_modelled |= ADVISE_MOD_P2P;
	if (!in->overhead_ns)
		X.base_modelled |= ADVISE_MOD_OVERHEAD;
	if (!in->outside_measured)
		X.base_modelled |= ADVISE_MOD_OUTSIDE;

	cur = cand_of(&X, ADVISE_CURRENT, in->strategy, in->vpp, in->microbatches);
	cur.group_size = in->group_size;
	if (simulate(&X, &cur, row_new(&X, &cur))) {
		strbuf_addf(err, "the schedule the job ran cannot be replayed: %s",
			    res->rows[0].notes);
		rc = PP_EINVAL;
		goto out;
	}
	res->rows[0].modelled |= cand_modelled(&X, &cur);
	calibrate(&X);
	advise_memory_fit(in, res->rows[0].stage_units, &res->memory);
	add_schedules(&X);
	add_microbatches(&X);
	add_rebalances(&X);
	memory_rows(&X);
	choose_best(&X);
out:
	advise_model_release(&X.mod);
	return rc;
}

void advise_result_release(struct advise_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->nrows; i++) {
		struct advise_row *row = &res->rows[i];
		PP_FREE_ALL(row->layers, row->stage_units, row->stage_gib, row->knobs, row->notes);
	}
	free(res->rows);
	free(res->calibration_note);
	free(res->best_note);
	advise_memory_fit_release(&res->memory);
	memset(res, 0, sizeof(*res));
}
