/* sim.c — validation, queue assembly and the timing pass of the simulator.
 *
 * Design note. An entry (single op or overlapped pair) starts at
 *   max over its dependencies of (dependency's end + gap), 0.0 if none,
 * and ends at start + duration; see docs/sim-model.md §3 for the edges and gaps.
 * The order of floating-point operations is the reference's, so that
 * SIM_MODEL_REFERENCE matches it bit for bit: a pair's fallback duration is
 * (F + B) before it is added to the start; busy time sums (end - start) in
 * queue order; the ideal is accumulated F(s) then B(s), times m, over p.
 *
 * The timing pass is a worklist over devices, not recursion. Each device
 * has a cursor on its queue; it advances while the entry under the cursor
 * has all data dependencies done (its queue predecessor is done by
 * construction). A device blocked on an entry of device x joins x's
 * waiter list and goes back on the ready stack when x completes that entry.
 * Every entry is timed once and waiter lists hold the few neighbours that
 * feed on a device, so the pass is linear in the number of ops in practice
 * (O(ops x p) at worst). Devices still blocked when the stack is empty are a
 * dependency cycle. The queues live in the result's op array itself (an
 * op's end < 0 means "not timed yet"), which keeps the memory touched small.
 */
#include "sim.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"
#include "util/cli.h"
#include "util/hugepage.h"
#include "util/pp.h"
#include "util/strbuf.h"

/* Upper bound on stages x micro-batches, to keep the index table sane. */
#define SIM_MAX_CELLS (1L << 22)

static const char *const strategy_names[SIM_NSTRATEGIES] = {
	"1f1b",     "interleave", "zb1p", "1f1b_overlap", "1f1b_interleave_overlap",
	"dualpipe", "dualpipe_v"
};

const char *sim_strategy_name(enum sim_strategy s)
{
	return (unsigned)s < SIM_NSTRATEGIES ? strategy_names[s] : "?";
}

int sim_strategy_parse(const char *name, enum sim_strategy *out)
{
	char buf[64];
	size_t n = strlen(name);
	if (n >= sizeof(buf))
		return PP_EINVAL;
	for (size_t i = 0; i <= n; i++)
		buf[i] = name[i] == '-' ? '_' : name[i];
	if (!strcmp(buf, "1f1b_interleave") || !strcmp(buf, "interleaved")) {
		*out = SIM_INTERLEAVE;
		return 0;
	}
	for (int i = 0; i < SIM_NSTRATEGIES; i++)
		if (!strcmp(buf, strategy_names[i])) {
			*out = (enum sim_strategy)i;
			return 0;
		}
	return PP_EINVAL;
}

static const char *const model_names[] = {
	[SIM_MODEL_MEGATRON] = "megatron", [SIM_MODEL_REFERENCE] = "reference"
};

CLI_CHOICE_FUNCS(sim_model, enum sim_model, model_names)

const char *sim_op_type_name(enum sim_op_type t)
{
	static const char *const names[SIM_NTYPES] = { "F", "B", "D", "W" };
	return (unsigned)t < SIM_NTYPES ? names[t] : "?";
}

void sim_config_init(struct sim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->strategy = SIM_1F1B;
	cfg->model = SIM_MODEL_MEGATRON;
}

void sim_result_release(struct sim_result *res)
{
	if (!res)
		return;
	free(res->devices);
	free(res->ops);
	memset(res, 0, sizeof(*res));
}

int sim_fail(struct sim_sched *S, int rc, const char *fmt, ...)
{
	va_list ap;
	if (S->rc)
		return S->rc;
	S->rc = rc;
	if (S->err) {
		va_start(ap, fmt);
		pp_verr(S->err, rc, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static bool stage_on_device(const struct sim_sched *S, int s, int d)
{
	switch (S->cfg->strategy) {
	case SIM_INTERLEAVE:
	case SIM_1F1B_INTERLEAVE_OVERLAP: return s % S->p == d;
	case SIM_DUALPIPE:
	case SIM_DUALPIPE_V: return s == d || s == S->N - 1 - d;
	default: return s / (S->N / S->p) == d;
	}
}

/* Checks op (b, s, t) and claims its index slot for op S->n. */
static bool sim_claim(struct sim_sched *S, int b, int s, int t)
{
	int d = S->cur_dev;
	if (b < 0 || b >= S->m)
		return sim_fail(S, PP_EINVAL,
				"%s with %d micro-batches: device %d would need "
				"micro-batch %d (too few micro-batches for this "
				"schedule)",
				sim_strategy_name(S->cfg->strategy), S->m, d, b),
		       false;
	if (s < 0 || s >= S->N || !stage_on_device(S, s, d))
		return sim_fail(S, PP_EINVAL, "device %d: stage %d is not placed on it", d, s),
		       false;
	int32_t *slot = &S->idx[((size_t)b * (size_t)S->N + (size_t)s) * SIM_NTYPES + (size_t)t];
	if (*slot)
		return sim_fail(S, PP_EINVAL,
				"%s with %d micro-batches: operation %s(mb %d, stage %d) "
				"is scheduled twice (devices %d and %d)",
				sim_strategy_name(S->cfg->strategy), S->m, sim_op_type_name(t), b,
				s, S->ops[*slot - 1].device, d),
		       false;
	if (S->n == S->cap)
		return sim_fail(S, PP_EINVAL, "device %d: too many operations", d), false;
	*slot = (int32_t)S->n + 1;
	return true;
}

/* Ops are written with end = -1: "not timed yet" for the timing pass. */
void sim_emit(struct sim_sched *S, int b, int s, int t)
{
	if (S->rc || !sim_claim(S, b, s, t))
		return;
	S->ops[S->n++] = (struct sim_op){ S->cur_dev, s, b, (uint8_t)t, 0, 0.0, -1.0 };
}

void sim_emit_pair(struct sim_sched *S, int bf, int sf, int bb, int sb)
{
	if (S->rc || !sim_claim(S, bf, sf, SIM_F))
		return;
	S->ops[S->n++] = (struct sim_op){ S->cur_dev, sf, bf, SIM_F, 1, 0.0, -1.0 };
	if (!sim_claim(S, bb, sb, SIM_B))
		return;
	S->ops[S->n++] = (struct sim_op){ S->cur_dev, sb, bb, SIM_B, 1, 0.0, -1.0 };
}

/* The checks of every strategy (docs/sim-model.md §5): the strategy, the
 * sizes, the times; sets the chunks per device (v) and the group size (g). */
static int check_shape(struct sim_sched *S)
{
	const struct sim_config *c = S->cfg;
	int p = c->devices, N = c->stages, m = c->microbatches;
	const double *arrs[] = { c->forward, c->backward, c->backward_d, c->backward_w,
				 c->overlapped };
	static const char *const arrnames[] = { "forward", "backward", "backward_d", "backward_w",
						"overlapped" };

	if ((unsigned)c->strategy >= SIM_NSTRATEGIES)
		return sim_fail(S, PP_EINVAL, "unknown strategy %d", (int)c->strategy);
	if (p < 1 || N < 1 || m < 1)
		return sim_fail(S, PP_EINVAL,
				"devices, stages and micro-batches must be >= 1 "
				"(got %d, %d, %d)",
				p, N, m);
	if ((long)N * m > SIM_MAX_CELLS)
		return sim_fail(S, PP_EINVAL,
				"stages x micro-batches = %ld is more than the %ld supported",
				(long)N * m, SIM_MAX_CELLS);
	if (!(c->p2p >= 0) || !isfinite(c->p2p))
		return sim_fail(S, PP_EINVAL, "p2p latency must be a finite number >= 0");
	for (size_t k = 0; k < sizeof(arrs) / sizeof(arrs[0]); k++)
		for (int s = 0; arrs[k] && s < N; s++)
			if ((!(arrs[k][s] >= 0) || !isfinite(arrs[k][s])) &&
			    !(k == 4 && isnan(arrs[k][s]))) /* NaN: no FB time */
				return sim_fail(S, PP_EINVAL,
						"%s time of stage %d must be a finite "
						"number >= 0",
						arrnames[k], s);
	if (N % p)
		return sim_fail(S, PP_EINVAL, "stages (%d) must be a multiple of devices (%d)", N,
				p);
	S->v = N / p;
	S->g = c->group_size > 0 ? c->group_size : p;
	return 0;
}

/* 1f1b, zb1p, 1f1b_overlap: one stage per device; the reference model's
 * warm-up needs enough micro-batches (the megatron model clamps it). */
static int check_one_stage_each(struct sim_sched *S)
{
	const struct sim_config *c = S->cfg;
	int p = c->devices, N = c->stages, m = c->microbatches;
	const char *name = sim_strategy_name(c->strategy);
	if (N != p)
		return sim_fail(S, PP_EINVAL,
				"%s needs stages = devices (got %d stages, %d devices)", name, N,
				p);
	if (S->reference && c->strategy != SIM_1F1B_OVERLAP && m < p - 1)
		return sim_fail(S, PP_EINVAL,
				"%s in the reference model needs micro-batches >= "
				"devices - 1 = %d (got %d); the megatron model "
				"clamps the warmup",
				name, p - 1, m);
	if (S->reference && c->strategy == SIM_1F1B_OVERLAP && m < 2 * p - 1)
		return sim_fail(S, PP_EINVAL,
				"%s in the reference model needs micro-batches >= "
				"2 x devices - 1 = %d (got %d); the megatron model "
				"clamps the warmup",
				name, 2 * p - 1, m);
	return 0;
}

/* interleave, 1f1b_interleave_overlap: Megatron's rules on the group size
 * (the reference model has none). */
static int check_interleave(struct sim_sched *S)
{
	const struct sim_config *c = S->cfg;
	int p = c->devices, m = c->microbatches;
	int g = c->strategy == SIM_INTERLEAVE ? S->g : p;
	const char *name = sim_strategy_name(c->strategy);
	if (S->reference)
		return 0;
	if (g < p || g > m)
		return sim_fail(S, PP_EINVAL,
				"%s: Megatron needs devices <= group size <= "
				"micro-batches (got p=%d, g=%d, m=%d)%s",
				name, p, g, m,
				c->strategy == SIM_INTERLEAVE
					? ""
					: "; the group size is fixed to p for this strategy");
	if (m % g != 0 && m % g < p)
		return sim_fail(S, PP_EINVAL,
				"%s: Megatron needs micro-batches mod group size to "
				"be 0 or >= devices (got m=%d, g=%d, p=%d)",
				name, m, g, p);
	return 0;
}

/* dualpipe: an even number of devices, one stage each, and an even number
 * of micro-batches; dualpipe_v: two stages each (a V). Both need enough
 * micro-batches for the warm-up of their two directions. */
static int check_dualpipe(struct sim_sched *S)
{
	int p = S->cfg->devices, N = S->cfg->stages, m = S->cfg->microbatches;
	bool ref = S->reference;
	if (S->cfg->strategy == SIM_DUALPIPE_V) {
		int need = ref ? 2 * p - 1 : 2 * p;
		if (N != 2 * p || p % 2)
			return sim_fail(S, PP_EINVAL,
					"dualpipe_v needs an even number of devices and stages = "
					"2 x devices (got %d devices, %d stages)",
					p, N);
		if (m < need)
			return sim_fail(
				S, PP_EINVAL,
				ref ? "dualpipe_v in the reference model needs micro-batches "
				      ">= 2 x devices - 1 = %d (got %d)"
				    : "dualpipe_v needs micro-batches >= 2 x devices = %d "
				      "(got %d)",
				need, m);
		return 0;
	}
	int need = ref ? 2 * p - 2 : 2 * p;
	if (N != p || p % 2)
		return sim_fail(S, PP_EINVAL,
				"dualpipe needs an even number of devices and stages = "
				"devices (got %d devices, %d stages)",
				p, N);
	if (m % 2 || m < need)
		return sim_fail(S, PP_EINVAL,
				ref ? "dualpipe in the reference model needs an even number "
				      "of micro-batches >= 2 x devices - 2 = %d (got %d)"
				    : "dualpipe needs an even number of micro-batches >= "
				      "2 x devices = %d (got %d)",
				need, m);
	return 0;
}

/* Parameter checks of docs/sim-model.md §5 (both models) and, for the megatron
 * model, Megatron's and deepseek's own rules: the shape, then the
 * strategy's. */
static int sim_validate(struct sim_sched *S)
{
	int rc = check_shape(S);
	if (rc)
		return rc;
	switch (S->cfg->strategy) {
	case SIM_1F1B:
	case SIM_ZB1P:
	case SIM_1F1B_OVERLAP: return check_one_stage_each(S);
	case SIM_INTERLEAVE:
	case SIM_1F1B_INTERLEAVE_OVERLAP: return check_interleave(S);
	case SIM_DUALPIPE:
	case SIM_DUALPIPE_V: return check_dualpipe(S);
	default: return 0;
	}
}

/* "F(mb 3, stage 5)" or "F(mb 3, stage 5)+B(mb 1, stage 6)" for the
 * entry that starts at op k. */
static void describe_entry(struct strbuf *sb, const struct sim_sched *S, size_t k)
{
	const struct sim_op *o = &S->ops[k];
	strbuf_addf(sb, "%s(mb %d, stage %d)", sim_op_type_name(o->type), o->batch, o->stage);
	if (o->paired)
		strbuf_addf(sb, "+B(mb %d, stage %d)", o[1].batch, o[1].stage);
}

/* Every (mb, stage) needs F and exactly one of B / D, and W iff D. */
static int sim_check_complete(struct sim_sched *S)
{
	for (int b = 0; b < S->m; b++)
		for (int s = 0; s < S->N; s++) {
			bool f = sim_lookup(S, b, s, SIM_F) >= 0;
			bool bb = sim_lookup(S, b, s, SIM_B) >= 0;
			bool dd = sim_lookup(S, b, s, SIM_D) >= 0;
			bool ww = sim_lookup(S, b, s, SIM_W) >= 0;
			const char *miss = !f           ? "F"
					   : !bb && !dd ? "B"
					   : bb && dd   ? "B and D"
					   : dd != ww   ? "W"
							: NULL;
			if (miss)
				return sim_fail(
					S, PP_EINVAL,
					"%s with %d micro-batches: %s of micro-batch %d "
					"on stage %d %s",
					sim_strategy_name(S->cfg->strategy), S->m, miss, b, s,
					bb && dd ? "are both scheduled" : "is never scheduled");
		}
	return 0;
}

/* Per-stage durations with defaults. */
struct sim_times {
	double *t[SIM_NTYPES];
	double *fb; /* NULL: F + B of the forward's stage */
};

static void times_init(struct sim_times *T, const struct sim_config *c, int N)
{
	static const double defaults[SIM_NTYPES] = { 1.0, 2.0, 1.0, 1.0 };
	const double *given[SIM_NTYPES] = { c->forward, c->backward, c->backward_d, c->backward_w };
	memset(T, 0, sizeof(*T));
	for (int k = 0; k < SIM_NTYPES; k++) {
		T->t[k] = xmalloc((size_t)N * sizeof(double));
		for (int s = 0; s < N; s++)
			T->t[k][s] = given[k] ? given[k][s] : defaults[k];
	}
	T->fb = (double *)c->overlapped;
}

static void times_release(struct sim_times *T)
{
	for (int k = 0; k < SIM_NTYPES; k++)
		free(T->t[k]);
}

/* Index of (b, s)'s backward-input op: D if scheduled, else B (or -1). */
static int32_t bwd_input(const struct sim_sched *S, int b, int s)
{
	int32_t x = sim_lookup(S, b, s, SIM_D);
	return x >= 0 ? x : sim_lookup(S, b, s, SIM_B);
}

/* The data dependency of single op (b, s, t) on device dev: its op index,
 * or -1 for none; *gap is the latency on the edge. */
static int32_t data_dep(const struct sim_sched *S, int b, int s, int t, int dev, double *gap)
{
	double L = S->cfg->p2p;
	int32_t x = -1;
	*gap = L;
	if (t == SIM_F) {
		if (s > 0)
			x = sim_lookup(S, b, s - 1, SIM_F);
	} else if (t == SIM_W) {
		if (!S->reference) {
			*gap = 0.0;
			return bwd_input(S, b, s);
		}
		return s < S->N - 1 ? bwd_input(S, b, s) : -1;
	} else if (s < S->N - 1) {
		x = bwd_input(S, b, s + 1);
	}
	if (x >= 0 && !S->reference && S->ops[x].device == dev)
		*gap = 0.0;
	return x;
}

/* The gap after queue predecessor `prev` before `cur` (the sync-P2P rule). */
static double queue_gap(const struct sim_sched *S, const struct sim_op *prev,
			const struct sim_op *cur)
{
	double L = S->cfg->p2p;
	int32_t r = -1;
	if (!(L > 0) || prev->paired || cur->paired || prev->stage != cur->stage ||
	    (prev->type == SIM_F) != (cur->type == SIM_F))
		return 0.0;
	if (!S->reference && cur->type == SIM_W)
		return 0.0;
	if (prev->type == SIM_F) {
		if (prev->stage < S->N - 1)
			r = sim_lookup(S, prev->batch, prev->stage + 1, SIM_F);
	} else if (prev->type != SIM_W && prev->stage > 0) {
		r = bwd_input(S, prev->batch, prev->stage - 1);
	}
	if (r < 0 || S->ops[r].paired)
		return 0.0;
	if (!S->reference && S->ops[r].device == prev->device)
		return 0.0;
	return L;
}

/* Worklist state, all per device. A device blocked on an entry of device x
 * is linked into x's waiter list; x checks its (short) list after each
 * entry it completes. */
struct sim_pass {
	size_t *next;        /* cursor into ops */
	int32_t *blocked_on; /* first op of the entry it waits for */
	int32_t *wait_head;  /* devices blocked on one of this device's ops */
	int32_t *wait_next;  /* next device in the same waiter list */
	int32_t *stack;      /* runnable devices */
};

static void cycle_message(struct sim_sched *S, const struct sim_pass *P)
{
	struct strbuf sb = STRBUF_INIT;
	int d = 0, first;
	while (P->next[d] >= S->dev_start[d + 1])
		d++;
	first = d;
	strbuf_addstr(&sb, "dependency cycle (deadlock): ");
	for (int hop = 0; hop < 6; hop++) {
		int32_t x = P->blocked_on[d];
		if (hop)
			strbuf_addstr(&sb, "; ");
		strbuf_addf(&sb, "device %d cannot run ", d);
		describe_entry(&sb, S, P->next[d]);
		strbuf_addstr(&sb, " before ");
		describe_entry(&sb, S, (size_t)x);
		d = S->ops[x].device;
		strbuf_addf(&sb, " on device %d", d);
		if (d == first || P->next[d] >= S->dev_start[d + 1])
			break;
	}
	sim_fail(S, PP_ECYCLE, "%s", sb.buf);
	strbuf_release(&sb);
}

/* Times every entry in place (start/end of S->ops). */
static int sim_time(struct sim_sched *S, const struct sim_times *T, struct sim_pass *P)
{
	struct sim_op *ops = S->ops;
	size_t sp = 0;
	int p = S->p;
	for (int d = p - 1; d >= 0; d--) {
		P->next[d] = S->dev_start[d];
		P->wait_head[d] = -1;
		P->stack[sp++] = d;
	}
	while (sp) {
		int d = P->stack[--sp];
		size_t endq = S->dev_start[d + 1];
		while (P->next[d] < endq) {
			size_t k = P->next[d];
			struct sim_op *o = &ops[k];
			int32_t dep[2];
			double gap[2];
			int nd = 0;
			dep[nd] = data_dep(S, o->batch, o->stage, o->type, d, &gap[nd]);
			nd += dep[nd] >= 0;
			if (o->paired) {
				dep[nd] = data_dep(S, o[1].batch, o[1].stage, SIM_B, d, &gap[nd]);
				nd += dep[nd] >= 0;
			}
			int32_t blocked = -1;
			for (int j = 0; j < nd; j++)
				if (ops[dep[j]].end < 0) {
					blocked = dep[j];
					break;
				}
			if (blocked >= 0) {
				if (ops[blocked].paired && ops[blocked].type == SIM_B)
					blocked--; /* the pair's entry starts at its F */
				int owner = ops[blocked].device;
				P->blocked_on[d] = blocked;
				P->wait_next[d] = P->wait_head[owner];
				P->wait_head[owner] = d;
				break;
			}
			double start = 0.0, dur;
			for (int j = 0; j < nd; j++) {
				double t = ops[dep[j]].end + gap[j];
				if (t > start)
					start = t;
			}
			if (k > S->dev_start[d]) {
				double t = ops[k - 1].end + queue_gap(S, &ops[k - 1], o);
				if (t > start)
					start = t;
			}
			if (!o->paired)
				dur = T->t[o->type][o->stage];
			else if (T->fb && isnan(T->fb[o->stage]))
				return sim_fail(S, PP_EINVAL,
						"no overlapped time for stage %d "
						"(device %d runs a pair there)",
						o->stage, d);
			else if (T->fb)
				dur = T->fb[o->stage];
			else
				dur = T->t[SIM_F][o->stage] + T->t[SIM_B][o->stage];
			o->start = start;
			o->end = start + dur;
			if (o->paired) {
				o[1].start = o->start;
				o[1].end = o->end;
			}
			P->next[d] += o->paired ? 2 : 1;
			for (int32_t *w = &P->wait_head[d]; *w >= 0;) {
				if (P->blocked_on[*w] == (int32_t)k) {
					P->stack[sp++] = *w;
					*w = P->wait_next[*w];
				} else {
					w = &P->wait_next[*w];
				}
			}
		}
	}
	for (int d = 0; d < p; d++)
		if (P->next[d] < S->dev_start[d + 1]) {
			cycle_message(S, P);
			return S->rc;
		}
	return 0;
}

/* Busy per device (sum of end - start in queue order, a pair once),
 * makespan, bubbles and the reference's ideal and rate. */
static void sim_summarise(const struct sim_sched *S, const struct sim_times *T,
			  struct sim_result *res)
{
	double makespan = 0.0;
	const struct sim_op *o = res->ops, *end = res->ops + res->nops;
	for (int d = 0; d < S->p; d++) {
		double busy = 0.0;
		while (o < end && o->device == d) {
			busy += o->end - o->start;
			if (o->end > makespan)
				makespan = o->end;
			o += o->paired ? 2 : 1;
		}
		res->devices[d].busy = busy;
	}
	res->makespan = makespan;
	for (int d = 0; d < S->p; d++) {
		struct sim_device *dv = &res->devices[d];
		dv->idle = makespan - dv->busy;
		dv->bubble = makespan > 0 ? dv->idle / makespan : 0.0;
	}
	double ideal = 0.0;
	for (int s = 0; s < S->N; s++) {
		ideal += T->t[SIM_F][s];
		ideal += T->t[SIM_B][s];
	}
	ideal = ideal * (double)S->m / (double)S->p;
	res->ideal = ideal;
	res->reference_bubble_rate = ideal > 0 ? (makespan - ideal) / ideal : 0.0;
}

/* The big per-op tables, with transparent huge pages asked for before the
 * first touch (util/hugepage.h): they are written once front to back, and
 * page faults dominate otherwise. */
static void *big_alloc(size_t n, bool zero)
{
	void *p = zero ? xcalloc(1, n) : xmalloc(n);
	hugepage_advise(p, n);
	return p;
}

int sim_run(const struct sim_config *cfg, struct sim_result *res, struct strbuf *err)
{
	struct sim_sched S = { .cfg = cfg, .err = err };
	struct sim_times T;
	struct sim_pass P;
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&P, 0, sizeof(P));
	memset(&T, 0, sizeof(T));
	S.p = cfg->devices;
	S.N = cfg->stages;
	S.m = cfg->microbatches;
	S.reference = cfg->model == SIM_MODEL_REFERENCE;
	S.split = cfg->strategy == SIM_ZB1P || cfg->strategy == SIM_DUALPIPE ||
		  cfg->strategy == SIM_DUALPIPE_V;
	if ((rc = sim_validate(&S)))
		goto out;

	/* Large zeroed/untouched blocks: pages are mapped only when used. */
	size_t cells = (size_t)S.m * (size_t)S.N;
	S.cap = cells * (S.split ? 4 : 2);
	S.idx = big_alloc(cells * SIM_NTYPES * sizeof(*S.idx), true);
	S.ops = big_alloc(S.cap * sizeof(*S.ops), false);
	S.dev_start = xmalloc(((size_t)S.p + 1) * sizeof(*S.dev_start));
	times_init(&T, cfg, S.N);
	for (int d = 0; d < S.p && !S.rc; d++) {
		S.cur_dev = d;
		S.dev_start[d] = S.n;
		sim_order_device(&S, d);
	}
	S.dev_start[S.p] = S.n;
	if (S.rc || (rc = sim_check_complete(&S))) {
		rc = S.rc;
		goto out;
	}

	size_t p = (size_t)S.p;
	P.next = xmalloc(p * sizeof(size_t));
	P.blocked_on = xmalloc(p * sizeof(int32_t));
	P.wait_head = xmalloc(p * sizeof(int32_t));
	P.wait_next = xmalloc(p * sizeof(int32_t));
	P.stack = xmalloc(p * sizeof(int32_t));
	res->devices = xcalloc(p, sizeof(*res->devices));
	if ((rc = sim_time(&S, &T, &P)))
		goto out;
	res->ndevices = S.p;
	res->ops = S.ops;
	res->nops = S.n;
	S.ops = NULL;
	sim_summarise(&S, &T, res);
	/* Every time is finite, but their sums may not be (--forward 1e308). */
	if (!isfinite(res->makespan) || !isfinite(res->ideal)) {
		rc = sim_fail(&S, PP_EINVAL,
			      "the op times are too large: the makespan or the ideal exceeds the "
			      "largest number (%g)",
			      DBL_MAX);
	}
out:
	if (rc)
		sim_result_release(res);
	PP_FREE_ALL(P.next, P.blocked_on, P.wait_head, P.wait_next, P.stack);
	times_release(&T);
	free(S.idx);
	free(S.ops);
	free(S.dev_start);
	return rc;
}
