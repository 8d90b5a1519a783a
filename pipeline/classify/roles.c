/* roles.c — the forward and backward threads of a rank (docs/semantics.md §4).
 *
 * Rule: of the two threads with most fwdbwd flow endpoints, the one whose
 * share of outgoing (s) endpoints is larger is the forward thread. When there
 * are not two such threads: forward = the thread with most root-most
 * forward_step slices; backward = a thread named pt_autograd_* (the one with
 * most launches if several), else the thread other than the forward thread
 * with most launches inside backward-step windows, else the forward thread.
 */
#include <stdio.h>
#include <string.h>

#include "classify.h"
#include "classify_int.h"
#include "util/arena.h"

static struct cthread *thr(struct classify *c, int i)
{
	return &VEC_AT(&c->threads, struct cthread, i);
}

/* a has a larger share of s endpoints than b (ties: more s, then a first). */
static bool larger_share(const struct cthread *a, const struct cthread *b)
{
	int64_t ta = a->flows_s + a->flows_f, tb = b->flows_s + b->flows_f;
	/* a.s/ta vs b.s/tb without division; counts are far below 2^31. */
	if (a->flows_s * tb != b->flows_s * ta)
		return a->flows_s * tb > b->flows_s * ta;
	return a->flows_s >= b->flows_s;
}

static void by_flows(struct classify *c, int *first, int *second)
{
	*first = *second = -1;
	for (int i = 0; i < (int)c->threads.n; i++) {
		int64_t n = thr(c, i)->flows_s + thr(c, i)->flows_f;
		if (!n)
			continue;
		if (*first < 0 || n > thr(c, *first)->flows_s + thr(c, *first)->flows_f) {
			*second = *first;
			*first = i;
		} else if (*second < 0 || n > thr(c, *second)->flows_s + thr(c, *second)->flows_f) {
			*second = i;
		}
	}
}

/* Counts, per thread, launches inside backward-step windows (backward_step
 * roots on the forward thread, any launching thread): every launch event,
 * also those repeating a correlation, as a survey's second pass does. */
static void count_bwd_launches(struct classify *c)
{
	const struct croots *r = &c->roots[PAT_BACKWARD_STEP];
	const struct vec *v[2] = { &c->launches, &c->dup_launches };
	for (int k = 0; k < 2; k++) {
		const struct claunch *l = v[k]->data;
		for (size_t i = 0; i < v[k]->n; i++)
			if (roots_find(r, (uint32_t)c->fwd, l[i].ts) >= 0)
				thr(c, (int)l[i].thread)->bwd_launches++;
	}
}

static void describe(struct classify *c, int i, enum rr_role_rule rule, struct rr_thread *out)
{
	char buf[32];
	out->found = i >= 0;
	out->rule = rule;
	out->pid = out->tid = out->name = "";
	if (i < 0)
		return;
	const struct cthread *t = thr(c, i);
	if (t->pid_str) {
		out->pid = t->pid_s;
	} else {
		snprintf(buf, sizeof(buf), "%lld", (long long)t->pid);
		out->pid = arena_strndup(c->arena, buf, strlen(buf));
	}
	if (t->tid_str) {
		out->tid = t->tid_s;
	} else {
		snprintf(buf, sizeof(buf), "%lld", (long long)t->tid);
		out->tid = arena_strndup(c->arena, buf, strlen(buf));
	}
	if (!out->pid)
		out->pid = "";
	if (!out->tid)
		out->tid = "";
	out->name = t->name ? t->name : "";
}

int roles_decide(struct classify *c, struct rank_result *res)
{
	int a, b;
	enum rr_role_rule frule = RR_ROLE_NONE, brule = RR_ROLE_NONE;
	const struct croots *fr = &c->roots[PAT_FORWARD_STEP];

	for (int i = 0; i < (int)c->threads.n; i++)
		thr(c, i)->fwd_steps = 0; /* a survey decides twice */
	for (size_t i = 0; i < fr->n; i++)
		thr(c, (int)fr->v[i].thread)->fwd_steps++;
	by_flows(c, &a, &b);
	c->fwd = c->bwd = -1;
	if (b >= 0) {
		bool a_fwd = larger_share(thr(c, a), thr(c, b));
		c->fwd = a_fwd ? a : b;
		c->bwd = a_fwd ? b : a;
		frule = brule = RR_ROLE_FLOWS;
		goto out;
	}
	for (int i = 0; i < (int)c->threads.n; i++)
		if (thr(c, i)->fwd_steps &&
		    (c->fwd < 0 || thr(c, i)->fwd_steps > thr(c, c->fwd)->fwd_steps))
			c->fwd = i;
	if (c->fwd >= 0)
		frule = RR_ROLE_FORWARD_STEP;
	for (int i = 0; i < (int)c->threads.n; i++) {
		const char *name = thr(c, i)->name;
		if (name && !strncmp(name, "pt_autograd_", 12) &&
		    (c->bwd < 0 || thr(c, i)->launches > thr(c, c->bwd)->launches))
			c->bwd = i;
	}
	if (c->bwd >= 0) {
		brule = RR_ROLE_AUTOGRAD_NAME;
		goto out;
	}
	if (c->fwd < 0)
		goto out;
	/* A survey keeps no launches: its second pass counted them. */
	if (c->survey && !c->launch_pass)
		return CLASSIFY_AGAIN;
	if (!c->survey)
		count_bwd_launches(c);
	for (int i = 0; i < (int)c->threads.n; i++)
		if (i != c->fwd && thr(c, i)->bwd_launches &&
		    (c->bwd < 0 || thr(c, i)->bwd_launches > thr(c, c->bwd)->bwd_launches))
			c->bwd = i;
	if (c->bwd >= 0) {
		brule = RR_ROLE_BWD_LAUNCHES;
	} else {
		c->bwd = c->fwd;
		brule = RR_ROLE_SAME_THREAD;
	}
out:
	describe(c, c->fwd, frule, &res->fwd_thread);
	describe(c, c->bwd, brule, &res->bwd_thread);
	return 0;
}
