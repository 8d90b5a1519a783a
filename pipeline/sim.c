/* sim.c — validation, queue assembly and the timing pass of the simulator.
 *
 * Design note. An entry (single op or overlapped pair) starts at
 *   max over its dependencies of (dependency's end + gap), 0.0 if none,
 * and ends at start + duration; see SIM-MODEL.md §3 for the edges and gaps.
 * The order of floating-point operations is the reference's, so that
 * SIM_MODEL_REFERENCE matches it bit for bit: a pair's fallback duration is
 * (F + B) before it is added to the start; busy time sums (end - start) in
 * queue order; the ideal is accumulated F(s) then B(s), times m, over p.
 *
 * The timing pass is a worklist over devices, not recursion. Each device
 * has a cursor on its queue; it advances while the entry under the cursor
 * has all data dependencies done (its queue predecessor is done by
 * construction). A device blocked on entry x is chained into x's waiter
 * list and put back on the ready stack when x completes. Every entry is
 * timed once and every block costs O(1), so the pass is linear in the
 * number of edges. Devices still blocked when the stack is empty are a
 * dependency cycle.
 */
#include "sim.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp.h"
#include "sim_int.h"
#include "strbuf.h"

/* Upper bound on stages x micro-batches, to keep the index table sane. */
#define SIM_MAX_CELLS (1L << 22)

static const char *const strategy_names[SIM_NSTRATEGIES] = {
	"1f1b", "interleave", "zb1p", "1f1b_overlap", "1f1b_interleave_overlap",
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

const char *sim_model_name(enum sim_model m)
{
	return m == SIM_MODEL_REFERENCE ? "reference" : "megatron";
}

int sim_model_parse(const char *name, enum sim_model *out)
{
	if (!strcmp(name, "megatron"))
		*out = SIM_MODEL_MEGATRON;
	else if (!strcmp(name, "reference"))
		*out = SIM_MODEL_REFERENCE;
	else
		return PP_EINVAL;
	return 0;
}

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
	if (S->errlen) {
		va_start(ap, fmt);
		vsnprintf(S->err, S->errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static bool stage_on_device(const struct sim_sched *S, int s, int d)
{
	switch (S->cfg->strategy) {
	case SIM_INTERLEAVE:
	case SIM_1F1B_INTERLEAVE_OVERLAP:
		return s % S->p == d;
	case SIM_DUALPIPE:
	case SIM_DUALPIPE_V:
		return s == d || s == S->N - 1 - d;
	default:
		return s / (S->N / S->p) == d;
	}
}

static bool sim_grow(struct sim_sched *S)
{
	if (S->n < S->alloc)
		return true;
	size_t na = S->alloc ? S->alloc * 2 : 1024;
	struct sim_entry *e = realloc(S->e, na * sizeof(*e));
	if (!e) {
		sim_fail(S, PP_ENOMEM, "out of memory");
		return false;
	}
	S->e = e;
	S->alloc = na;
	return true;
}

/* Checks op (b, s, t) and claims its index slot for entry S->n. */
static bool sim_claim(struct sim_sched *S, int b, int s, int t)
{
	int d = S->cur_dev;
	if (b < 0 || b >= S->m)
		return sim_fail(S, PP_EINVAL,
				"%s with %d micro-batches: device %d would need "
				"micro-batch %d (too few micro-batches for this "
				"schedule)", sim_strategy_name(S->cfg->strategy),
				S->m, d, b), false;
	if (s < 0 || s >= S->N || !stage_on_device(S, s, d))
		return sim_fail(S, PP_EINVAL, "device %d: stage %d is not placed on it",
				d, s), false;
	int32_t *slot = &S->idx[((size_t)b * (size_t)S->N + (size_t)s) * SIM_NTYPES + (size_t)t];
	if (*slot >= 0)
		return sim_fail(S, PP_EINVAL,
				"%s with %d micro-batches: operation %s(mb %d, stage %d) "
				"is scheduled twice (devices %d and %d)",
				sim_strategy_name(S->cfg->strategy), S->m,
				sim_op_type_name(t), b, s, S->e[*slot].device, d), false;
	*slot = (int32_t)S->n;
	return true;
}

void sim_emit(struct sim_sched *S, int b, int s, int t)
{
	if (S->rc || !sim_grow(S) || !sim_claim(S, b, s, t))
		return;
	S->e[S->n++] = (struct sim_entry){ S->cur_dev, b, s, -1, -1, (uint8_t)t };
}

void sim_emit_pair(struct sim_sched *S, int bf, int sf, int bb, int sb)
{
	if (S->rc || !sim_grow(S) || !sim_claim(S, bf, sf, SIM_F) ||
	    !sim_claim(S, bb, sb, SIM_B))
		return;
	S->e[S->n++] = (struct sim_entry){ S->cur_dev, bf, sf, bb, sb, SIM_F };
}

/* Parameter checks of SIM-MODEL.md §5 (both models) and, for the megatron
 * model, Megatron's and deepseek's own rules. */
static int sim_validate(struct sim_sched *S)
{
	const struct sim_config *c = S->cfg;
	int p = c->devices, N = c->stages, m = c->microbatches;
	const char *name = sim_strategy_name(c->strategy);
	const double *arrs[] = { c->forward, c->backward, c->backward_d,
				 c->backward_w, c->overlapped };
	static const char *const arrnames[] = { "forward", "backward", "backward_d",
						"backward_w", "overlapped" };

	if ((unsigned)c->strategy >= SIM_NSTRATEGIES)
		return sim_fail(S, PP_EINVAL, "unknown strategy %d", (int)c->strategy);
	if (p < 1 || N < 1 || m < 1)
		return sim_fail(S, PP_EINVAL,
				"devices, stages and micro-batches must be >= 1 "
				"(got %d, %d, %d)", p, N, m);
	if ((long)N * m > SIM_MAX_CELLS)
		return sim_fail(S, PP_EINVAL,
				"stages x micro-batches = %ld is more than the %ld supported",
				(long)N * m, SIM_MAX_CELLS);
	if (!(c->p2p >= 0) || !isfinite(c->p2p))
		return sim_fail(S, PP_EINVAL, "p2p latency must be a finite number >= 0");
	for (size_t k = 0; k < sizeof(arrs) / sizeof(arrs[0]); k++)
		for (int s = 0; arrs[k] && s < N; s++)
			if (!(arrs[k][s] >= 0) || !isfinite(arrs[k][s]))
				return sim_fail(S, PP_EINVAL,
						"%s time of stage %d must be a finite "
						"number >= 0", arrnames[k], s);
	if (N % p)
		return sim_fail(S, PP_EINVAL,
				"stages (%d) must be a multiple of devices (%d)", N, p);
	S->v = N / p;
	S->g = c->group_size > 0 ? c->group_size : p;

	switch (c->strategy) {
	case SIM_1F1B:
	case SIM_ZB1P:
	case SIM_1F1B_OVERLAP:
		if (N != p)
			return sim_fail(S, PP_EINVAL,
					"%s needs stages = devices (got %d stages, %d devices)",
					name, N, p);
		if (S->reference && c->strategy != SIM_1F1B_OVERLAP && m < p - 1)
			return sim_fail(S, PP_EINVAL,
					"%s in the reference model needs micro-batches >= "
					"devices - 1 = %d (got %d); the megatron model "
					"clamps the warmup", name, p - 1, m);
		if (S->reference && c->strategy == SIM_1F1B_OVERLAP && m < 2 * p - 1)
			return sim_fail(S, PP_EINVAL,
					"%s in the reference model needs micro-batches >= "
					"2 x devices - 1 = %d (got %d); the megatron model "
					"clamps the warmup", name, 2 * p - 1, m);
		break;
	case SIM_INTERLEAVE:
	case SIM_1F1B_INTERLEAVE_OVERLAP: {
		int g = c->strategy == SIM_INTERLEAVE ? S->g : p;
		if (S->reference)
			break;
		if (g < p || g > m)
			return sim_fail(S, PP_EINVAL,
					"%s: Megatron needs devices <= group size <= "
					"micro-batches (got p=%d, g=%d, m=%d)%s", name, p, g, m,
					c->strategy == SIM_INTERLEAVE ? "" :
					"; the group size is fixed to p for this strategy");
		if (m % g != 0 && m % g < p)
			return sim_fail(S, PP_EINVAL,
					"%s: Megatron needs micro-batches mod group size to "
					"be 0 or >= devices (got m=%d, g=%d, p=%d)",
					name, m, g, p);
		break;
	}
	case SIM_DUALPIPE:
		if (N != p || p % 2)
			return sim_fail(S, PP_EINVAL,
					"dualpipe needs an even number of devices and stages = "
					"devices (got %d devices, %d stages)", p, N);
		if (S->reference && (m % 2 || m < 2 * p - 2))
			return sim_fail(S, PP_EINVAL,
					"dualpipe in the reference model needs an even number "
					"of micro-batches >= 2 x devices - 2 = %d (got %d)",
					2 * p - 2, m);
		if (!S->reference && (m % 2 || m < 2 * p))
			return sim_fail(S, PP_EINVAL,
					"dualpipe needs an even number of micro-batches >= "
					"2 x devices = %d (got %d)", 2 * p, m);
		break;
	case SIM_DUALPIPE_V:
		if (N != 2 * p || p % 2)
			return sim_fail(S, PP_EINVAL,
					"dualpipe_v needs an even number of devices and stages = "
					"2 x devices (got %d devices, %d stages)", p, N);
		if (S->reference && m < 2 * p - 1)
			return sim_fail(S, PP_EINVAL,
					"dualpipe_v in the reference model needs micro-batches "
					">= 2 x devices - 1 = %d (got %d)", 2 * p - 1, m);
		if (!S->reference && m < 2 * p)
			return sim_fail(S, PP_EINVAL,
					"dualpipe_v needs micro-batches >= 2 x devices = %d "
					"(got %d)", 2 * p, m);
		break;
	default:
		break;
	}
	return 0;
}

static void describe_entry(struct strbuf *sb, const struct sim_sched *S, int32_t i)
{
	const struct sim_entry *e = &S->e[i];
	strbuf_addf(sb, "%s(mb %d, stage %d)", sim_op_type_name(e->type),
		    e->batch, e->stage);
	if (e->batch2 >= 0)
		strbuf_addf(sb, "+B(mb %d, stage %d)", e->batch2, e->stage2);
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
			const char *miss = !f ? "F" : !bb && !dd ? "B" :
					   bb && dd ? "B and D" : dd != ww ? "W" : NULL;
			if (miss)
				return sim_fail(S, PP_EINVAL,
						"%s with %d micro-batches: %s of micro-batch %d "
						"on stage %d %s", sim_strategy_name(S->cfg->strategy),
						S->m, miss, b, s,
						bb && dd ? "are both scheduled" : "is never scheduled");
		}
	return 0;
}

/* Per-stage durations with defaults. */
struct sim_times {
	double *t[SIM_NTYPES];
	double *fb; /* NULL: F + B of the forward's stage */
};

static int times_init(struct sim_times *T, const struct sim_config *c, int N)
{
	static const double defaults[SIM_NTYPES] = { 1.0, 2.0, 1.0, 1.0 };
	const double *given[SIM_NTYPES] = { c->forward, c->backward, c->backward_d,
					    c->backward_w };
	memset(T, 0, sizeof(*T));
	for (int k = 0; k < SIM_NTYPES; k++) {
		T->t[k] = malloc((size_t)N * sizeof(double));
		if (!T->t[k])
			return PP_ENOMEM;
		for (int s = 0; s < N; s++)
			T->t[k][s] = given[k] ? given[k][s] : defaults[k];
	}
	T->fb = (double *)c->overlapped;
	return 0;
}

static void times_release(struct sim_times *T)
{
	for (int k = 0; k < SIM_NTYPES; k++)
		free(T->t[k]);
}

/* The backward-input op of (b, s): D if scheduled, else B. */
static int32_t bwd_input(const struct sim_sched *S, int b, int s)
{
	int32_t x = sim_lookup(S, b, s, SIM_D);
	return x >= 0 ? x : sim_lookup(S, b, s, SIM_B);
}

/* The data dependency of single op (b, s, t) on device dev, or -1. */
static int32_t data_dep(const struct sim_sched *S, int b, int s, int t, int dev,
			double *gap)
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
		if (s < S->N - 1)
			x = bwd_input(S, b, s);
		return x;
	} else if (s < S->N - 1) {
		x = bwd_input(S, b, s + 1);
	}
	if (x >= 0 && !S->reference && S->e[x].device == dev)
		*gap = 0.0;
	return x;
}

/* The gap after queue predecessor `prev` before `cur` (the sync-P2P rule). */
static double queue_gap(const struct sim_sched *S, const struct sim_entry *prev,
			const struct sim_entry *cur)
{
	double L = S->cfg->p2p;
	int32_t r = -1;
	if (!(L > 0) || prev->batch2 >= 0 || cur->batch2 >= 0 ||
	    prev->stage != cur->stage || (prev->type == SIM_F) != (cur->type == SIM_F))
		return 0.0;
	if (!S->reference && cur->type == SIM_W)
		return 0.0;
	if (prev->type == SIM_F) {
		if (prev->stage < S->N - 1)
			r = sim_lookup(S, prev->batch, prev->stage + 1, SIM_F);
	} else if (prev->type != SIM_W && prev->stage > 0) {
		r = bwd_input(S, prev->batch, prev->stage - 1);
	}
	if (r < 0 || S->e[r].batch2 >= 0)
		return 0.0;
	if (!S->reference && S->e[r].device == prev->device)
		return 0.0;
	return L;
}

struct sim_pass {
	double *start, *end;
	uint8_t *done;
	int32_t *wait_head; /* per entry: first device blocked on it */
	int32_t *wait_next; /* per device: next device in the same list */
	int32_t *blocked_on;/* per device: the entry it waits for */
	int32_t *stack;
	size_t *next;       /* per device: cursor into e */
};

static void cycle_message(struct sim_sched *S, const struct sim_pass *P)
{
	struct strbuf sb = STRBUF_INIT;
	int d = 0;
	while (P->next[d] >= S->dev_start[d + 1])
		d++;
	strbuf_addstr(&sb, "dependency cycle (deadlock): ");
	for (int hop = 0; hop < 4; hop++) {
		int32_t i = (int32_t)P->next[d], x = P->blocked_on[d];
		if (hop)
			strbuf_addstr(&sb, "; ");
		strbuf_addf(&sb, "device %d cannot run ", d);
		describe_entry(&sb, S, i);
		strbuf_addstr(&sb, " before ");
		describe_entry(&sb, S, x);
		strbuf_addf(&sb, " on device %d", S->e[x].device);
		d = S->e[x].device;
		if (P->next[d] >= S->dev_start[d + 1])
			break;
	}
	sim_fail(S, PP_ECYCLE, "%s", sb.buf);
	strbuf_release(&sb);
}

/* Times every entry; fills P->start / P->end. */
static int sim_time(struct sim_sched *S, const struct sim_times *T, struct sim_pass *P)
{
	size_t sp = 0;
	int p = S->p;
	for (int d = p - 1; d >= 0; d--) {
		P->next[d] = S->dev_start[d];
		P->stack[sp++] = d;
	}
	while (sp) {
		int d = P->stack[--sp];
		size_t endq = S->dev_start[d + 1];
		while (P->next[d] < endq) {
			size_t i = P->next[d];
			const struct sim_entry *e = &S->e[i];
			int32_t dep[2];
			double gap[2];
			int nd = 0;
			dep[nd] = data_dep(S, e->batch, e->stage, e->type, d, &gap[nd]);
			if (dep[nd] >= 0)
				nd++;
			if (e->batch2 >= 0) {
				dep[nd] = data_dep(S, e->batch2, e->stage2, SIM_B, d, &gap[nd]);
				if (dep[nd] >= 0)
					nd++;
			}
			int blocked = -1;
			for (int k = 0; k < nd; k++)
				if (!P->done[dep[k]]) {
					blocked = dep[k];
					break;
				}
			if (blocked >= 0) {
				P->blocked_on[d] = blocked;
				P->wait_next[d] = P->wait_head[blocked];
				P->wait_head[blocked] = d;
				break;
			}
			double start = 0.0, dur;
			for (int k = 0; k < nd; k++) {
				double t = P->end[dep[k]] + gap[k];
				if (t > start)
					start = t;
			}
			if (i > S->dev_start[d]) {
				double t = P->end[i - 1] + queue_gap(S, &S->e[i - 1], e);
				if (t > start)
					start = t;
			}
			if (e->batch2 < 0)
				dur = T->t[e->type][e->stage];
			else if (T->fb)
				dur = T->fb[e->stage];
			else
				dur = T->t[SIM_F][e->stage] + T->t[SIM_B][e->stage];
			P->start[i] = start;
			P->end[i] = start + dur;
			P->done[i] = 1;
			for (int32_t w = P->wait_head[i]; w >= 0; w = P->wait_next[w])
				P->stack[sp++] = w;
			P->wait_head[i] = -1;
			P->next[d]++;
		}
	}
	for (int d = 0; d < p; d++)
		if (P->next[d] < S->dev_start[d + 1]) {
			cycle_message(S, P);
			return S->rc;
		}
	return 0;
}

static int sim_collect(struct sim_sched *S, const struct sim_times *T,
		       const struct sim_pass *P, struct sim_result *res)
{
	size_t nops = S->n;
	for (size_t i = 0; i < S->n; i++)
		nops += S->e[i].batch2 >= 0;
	res->ndevices = S->p;
	res->devices = calloc((size_t)S->p, sizeof(*res->devices));
	res->ops = malloc((nops ? nops : 1) * sizeof(*res->ops));
	if (!res->devices || !res->ops)
		return sim_fail(S, PP_ENOMEM, "out of memory");
	res->nops = nops;

	double makespan = 0.0;
	size_t k = 0;
	for (int d = 0; d < S->p; d++) {
		double busy = 0.0;
		for (size_t i = S->dev_start[d]; i < S->dev_start[d + 1]; i++) {
			const struct sim_entry *e = &S->e[i];
			busy += P->end[i] - P->start[i];
			if (P->end[i] > makespan)
				makespan = P->end[i];
			res->ops[k++] = (struct sim_op){ d, e->stage, e->batch, e->type,
							 e->batch2 >= 0, P->start[i], P->end[i] };
			if (e->batch2 >= 0)
				res->ops[k++] = (struct sim_op){ d, e->stage2, e->batch2, SIM_B,
								 1, P->start[i], P->end[i] };
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
	return 0;
}

int sim_run(const struct sim_config *cfg, struct sim_result *res, char *err,
	    size_t errlen)
{
	struct sim_sched S = { .cfg = cfg, .err = err, .errlen = errlen };
	struct sim_times T;
	struct sim_pass P;
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&P, 0, sizeof(P));
	memset(&T, 0, sizeof(T));
	if (errlen)
		err[0] = '\0';
	S.p = cfg->devices;
	S.N = cfg->stages;
	S.m = cfg->microbatches;
	S.reference = cfg->model == SIM_MODEL_REFERENCE;
	S.split = cfg->strategy == SIM_ZB1P || cfg->strategy == SIM_DUALPIPE ||
		  cfg->strategy == SIM_DUALPIPE_V;
	if ((rc = sim_validate(&S)))
		goto out;

	size_t cells = (size_t)S.m * (size_t)S.N * SIM_NTYPES;
	S.idx = malloc(cells * sizeof(*S.idx));
	S.dev_start = malloc(((size_t)S.p + 1) * sizeof(*S.dev_start));
	if (!S.idx || !S.dev_start || times_init(&T, cfg, S.N)) {
		rc = sim_fail(&S, PP_ENOMEM, "out of memory");
		goto out;
	}
	memset(S.idx, 0xff, cells * sizeof(*S.idx));
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

	P.start = malloc(S.n * sizeof(double) + 1);
	P.end = malloc(S.n * sizeof(double) + 1);
	P.done = calloc(S.n + 1, 1);
	P.wait_head = malloc((S.n + 1) * sizeof(int32_t));
	P.wait_next = malloc((size_t)S.p * sizeof(int32_t));
	P.blocked_on = malloc((size_t)S.p * sizeof(int32_t));
	P.stack = malloc((size_t)S.p * sizeof(int32_t));
	P.next = malloc((size_t)S.p * sizeof(size_t));
	if (!P.start || !P.end || !P.done || !P.wait_head || !P.wait_next ||
	    !P.blocked_on || !P.stack || !P.next) {
		rc = sim_fail(&S, PP_ENOMEM, "out of memory");
		goto out;
	}
	memset(P.wait_head, 0xff, (S.n + 1) * sizeof(int32_t));
	if ((rc = sim_time(&S, &T, &P)))
		goto out;
	rc = sim_collect(&S, &T, &P, res);
out:
	if (rc)
		sim_result_release(res);
	free(P.start);
	free(P.end);
	free(P.done);
	free(P.wait_head);
	free(P.wait_next);
	free(P.blocked_on);
	free(P.stack);
	free(P.next);
	times_release(&T);
	free(S.idx);
	free(S.dev_start);
	free(S.e);
	return rc;
}
