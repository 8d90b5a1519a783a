/* db_rank.c — storing the classifier's rank_result (see db_store_rank()).
 *
 * The database's category, type and phase codes are rank_result's enums
 * (schema.h), so a kernel row is written as the classifier left it: no
 * copy and no translation of millions of kernels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "model/rank_result.h"
#include "util/pp.h"
#include "util/strbuf.h"

static void thread_text(struct strbuf *sb, const struct rr_thread *th)
{
	strbuf_reset(sb);
	if (!th->found)
		return;
	strbuf_addf(sb, "%s:%s", th->pid, th->tid);
	if (th->name && *th->name)
		strbuf_addf(sb, " %s", th->name);
}

void db_trace_set_metrics(struct db_trace *t, const struct rank_result *r)
{
	t->has_metrics = r->has_window;
	t->window_start_ns = r->window_start_ns;
	t->window_end_ns = r->window_end_ns;
	t->gpu_busy_ns = r->gpu_busy_ns;
	t->idle_ns = r->idle_ns;
	t->bubble_ns = r->bubble_ns;
	t->comp_busy_ns = r->comp_busy_ns;
	t->comm_busy_ns = r->comm_busy_ns;
	t->overlap_ns = r->overlap_ns;
	t->coverage = r->coverage;
}

/* Texts of the trace row that rank_row() builds. */
struct row_text {
	struct strbuf fwd, bwd, rule, warns;
};

/* The trace row of r: t's identity and outcome with r's metrics, thread
 * roles and warnings (texts kept in x). */
static void rank_row(struct db_trace *row, const struct db_trace *t, const struct rank_result *r,
		     struct row_text *x)
{
	*row = *t;
	thread_text(&x->fwd, &r->fwd_thread);
	thread_text(&x->bwd, &r->bwd_thread);
	strbuf_addf(&x->rule, "fwd=%s bwd=%s", rr_role_rule_name(r->fwd_thread.rule),
		    rr_role_rule_name(r->bwd_thread.rule));
	if (t->warnings)
		strbuf_addstr(&x->warns, t->warnings);
	for (size_t i = 0; i < r->nwarnings; i++) {
		if (x->warns.len)
			strbuf_addch(&x->warns, '\n');
		strbuf_addstr(&x->warns, r->warnings[i]);
	}
	db_trace_set_metrics(row, r);
	row->mode = r->mode == RR_GENERIC ? DB_MODE_GENERIC : DB_MODE_MEGATRON;
	row->kernels = (int64_t)r->nkernels;
	row->events = r->counters.events;
	row->fwd_thread = x->fwd.len ? x->fwd.buf : NULL;
	row->bwd_thread = x->bwd.len ? x->bwd.buf : NULL;
	row->role_rule = x->rule.buf;
	row->warnings = x->warns.len ? x->warns.buf : NULL;
}

/* The category rows with kernels. */
static int add_categories(struct db *db, const struct rank_result *r)
{
	for (int c = 0; c < RR_NCATEGORIES; c++) {
		const struct rr_category_stat *cs = &r->categories[c];
		if (cs->kernels <= 0)
			continue;
		struct db_category dc = { (enum rr_category)c, cs->kernels, cs->sum_ns,
					  cs->busy_ns };
		if (db_trace_add_category(db, &dc))
			return PP_EDB;
	}
	return 0;
}

static int add_steps(struct db *db, const struct rank_result *r)
{
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct rr_step *s = &r->steps[i];
		struct db_step ds = {
			.phase = s->phase,
			.seq = s->seq,
			.has_cpu = true,
			.cpu_start_ns = s->cpu_start_ns,
			.cpu_end_ns = s->cpu_end_ns,
			.kernels = s->has_kernels ? s->kernels : 0,
			.start_ns = s->start_ns,
			.end_ns = s->end_ns,
			.comp_ns = s->comp_ns,
			.comm_ns = s->comm_ns,
			.overlap_ns = s->overlap_ns,
			.chunk = -1,
			.mbs = -1, /* VPP labels: ppagg's (docs/contracts.md §3) */
		};
		if (db_trace_add_step(db, &ds))
			return PP_EDB;
	}
	return 0;
}

/* The kernels. Each name and process group is interned once, in the
 * order the kernels first use them (their ids as one kernel at a time
 * would give them); then the rows go in at once. */
static int add_kernels(struct db *db, const struct rank_result *r)
{
	/* name_ids[nnames]: the id of "", for a name_id out of range. */
	int64_t *name_ids = xcalloc(r->nnames + 1, sizeof(*name_ids));
	/* pg_ids[g] < 0: group g not interned yet (its id may be 0, NULL). */
	int64_t *pg_ids = xmalloc(r->ngroups * sizeof(*pg_ids));
	for (size_t g = 0; g < r->ngroups; g++)
		pg_ids[g] = -1;
	int rc = 0;
	for (size_t i = 0; i < r->nkernels && !rc; i++) {
		const struct rr_kernel *k = &r->kernels[i];
		size_t n = k->name_id < r->nnames ? k->name_id : r->nnames;
		if (!name_ids[n]) {
			const char *nm = n < r->nnames ? r->names[n] : "";
			rc = db_intern_name(db, nm, strlen(nm), &name_ids[n]);
		}
		if (!rc && k->pg >= 0 && (size_t)k->pg < r->ngroups && pg_ids[k->pg] < 0) {
			const struct rr_group *g = &r->groups[k->pg];
			rc = db_intern_pgroup(db, g->desc, g->ranks, &pg_ids[k->pg]);
		}
	}
	if (!rc)
		rc = db_trace_add_kernels(db, r->kernels, r->nkernels, name_ids, r->nnames, pg_ids,
					  r->ngroups, r->steps, r->nsteps);
	free(name_ids);
	free(pg_ids);
	return rc ? PP_EDB : 0;
}

/* The user annotations, their names interned like the kernels'. */
static int add_annotations(struct db *db, const struct rank_result *r)
{
	for (size_t i = 0; i < r->nannotations; i++) {
		const struct rr_annotation *a = &r->annotations[i];
		const char *nm = a->name_id < r->nnames ? r->names[a->name_id] : "";
		struct db_annotation da = { 0,          a->calls,   a->kernels,   a->gpu_ns,
					    a->comp_ns, a->comm_ns, a->overlap_ns };
		if (db_intern_name(db, nm, strlen(nm), &da.name_id) ||
		    db_trace_add_annotation(db, &da))
			return PP_EDB;
	}
	return 0;
}

/* The what-if ops; none for a salvaged trace, whose step is cut short (its
 * cell is then missing from the analysis, which says so). */
static int add_ops(struct db *db, const struct db_trace *t, const struct rank_result *r)
{
	for (size_t i = 0; t->status == DB_STATUS_OK && i < r->nops; i++) {
		const struct rr_op *o = &r->ops[i];
		struct db_op op = {
			.optype = o->optype,
			.seq_id = o->seq_id,
			.mc = o->mc,
			.gmc = -1, /* ppagg knows the stage */
			.mb_id = o->mb_id,
			.start_ns = o->start_ns,
			.end_ns = o->end_ns,
			.has_step = o->step_seq >= 0,
			.step_seq = o->step_seq,
		};
		if (db_trace_add_op(db, &op))
			return PP_EDB;
	}
	return 0;
}

int db_store_rank(struct db *db, const struct db_trace *t, const struct rank_result *r)
{
	struct db_trace row;
	struct row_text x = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };

	rank_row(&row, t, r, &x);
	/* Any error is sticky: the commit reports it and rolls back. A trace
	 * without GPU events still has its mode (metrics NULL). */
	if (!db_trace_begin(db, &row) && !add_categories(db, r) && !add_steps(db, r) &&
	    !add_kernels(db, r) && !add_annotations(db, r))
		add_ops(db, t, r);
	int rc = db_trace_commit(db);
	strbuf_release(&x.fwd);
	strbuf_release(&x.bwd);
	strbuf_release(&x.rule);
	strbuf_release(&x.warns);
	return rc;
}
