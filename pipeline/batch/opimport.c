/* opimport.c — `ppbatch --format optrace`: an op-trace file into the
 * database's ops (docs/whatif.md §1, docs/database.md).
 *
 *   read the CSV (+ meta yaml, + schema json) → validate it whole with the
 *   what-if engine (whatif_new: every rule of docs/whatif.md §2, the model
 *   built once) → one transaction: the file's earlier import removed, one
 *   trace per (step, rank) with its ops, its worker and its compute steps
 *   → ranks resolved, conflicts reported.
 *
 * Nothing is stored unless the whole file is valid, and a re-run replaces
 * the import whose identity is the file as given (realpath of its folder,
 * then its name): the same rows again. Each trace's path is
 * "FILE#step=S/rank=R", its folder the file's name, its iteration the step.
 * Its ranks row is a rank's window of ops: busy = union of its ops, comp
 * and comm the unions of compute-like and communication ops, bubble
 * leaving out the pipeline sends and receives (as for kernels).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "classify/rank_metrics.h"
#include "model/optype.h"
#include "model/rank_result.h"
#include "storage/db.h"
#include "util/cmp.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "walk.h"
#include "whatif/wi_optrace.h"
#include "whatif/whatif.h"

/* What the import read and checked. */
struct import {
	const struct opimport_opts *o;
	struct walk_file wf; /* the op trace: identity, size, mtime */
	struct wi_table t;
	struct whatif_shape shape;
	struct strbuf order; /* the schema's op type order, or empty */
	struct strbuf dbpath;
	size_t *idx; /* rows sorted by (step, rank, start, type, seq) */
	size_t ntraces;
	int64_t replaced;  /* traces of an earlier import of the file */
	int64_t conflicts; /* of its traces, those in a rank conflict */
};

/* Compute-like ops count as computation in the ranks view, the rest
 * (p2p, collectives, the clip's all-reduce) as communication. */
static bool is_comp(int ty)
{
	return ty == OP_FWD_COMPUTE || ty == OP_BWD_COMPUTE || ty == OP_OPTIMIZER || ty == OP_GC;
}

static bool is_pp(int ty)
{
	return ty >= OP_FWD_SEND && ty <= OP_BWD_RECV;
}

static int cmp_row(const void *a, const void *b, void *table)
{
	const struct wi_table *t = table;
	const struct wi_op *x = &t->ops[*(const size_t *)a];
	const struct wi_op *y = &t->ops[*(const size_t *)b];
	const int64_t kx[] = { x->step, x->rank, x->start_ns, x->optype, x->seq_id };
	const int64_t ky[] = { y->step, y->rank, y->start_ns, y->optype, y->seq_id };
	return cmp_i64s(kx, ky, 5);
}

/* Reads and validates everything; the exit code on failure, with the
 * message in err. */
static int load(struct import *im, struct strbuf *err)
{
	const struct opimport_opts *o = im->o;
	struct whatif *e = NULL;
	size_t mark = err->len;
	int rc;
	walk_file_at(o->input, &im->wf);
	if (im->wf.error) {
		pp_err(err, PP_EINVAL, "%s", im->wf.error);
		return PP_EXIT_USAGE;
	}
	if ((rc = wi_optrace_read(o->input, &im->t, err)) ||
	    (o->meta && (rc = wi_optrace_read_meta(o->meta, &im->t.meta, err))) ||
	    (o->schema && (rc = wi_optrace_read_schema(o->schema, &im->t, err)))) {
		/* A file that cannot be opened is a bad parameter; one that
		 * cannot be read or understood, a failed input. The message
		 * starts at mark, after pp_err()'s newline when err held one. */
		const char *why = err->buf + mark + (mark > 0);
		return !strncmp(why, "cannot open", 11) ? PP_EXIT_USAGE : PP_EXIT_PARTIAL;
	}
	im->t.has_meta = o->meta != NULL;
	if (!im->t.n) {
		pp_err(err, PP_EPARSE, "%s: no op rows after the header", o->input);
		return PP_EXIT_PARTIAL;
	}
	if (whatif_new(&im->t, NULL, &e, err))
		return PP_EXIT_PARTIAL;
	whatif_shape(e, &im->shape);
	if (!o->quiet && *whatif_notes(e)) {
		const char *p = whatif_notes(e);
		while (*p) {
			int n = (int)strcspn(p, "\n");
			printf("%s: note: %.*s\n", o->input, n, p);
			p += n + (p[n] == '\n');
		}
	}
	whatif_free(e);
	if (o->schema) {
		uint8_t by_rank[OP_NTYPES];
		for (int ty = 0; ty < OP_NTYPES; ty++)
			by_rank[im->t.order[ty]] = (uint8_t)ty;
		for (int k = 0; k < OP_NTYPES; k++)
			strbuf_addf(&im->order, "%s%s", k ? "," : "", op_type_name(by_rank[k]));
	}
	im->idx = xmalloc(im->t.n * sizeof(*im->idx));
	for (size_t i = 0; i < im->t.n; i++)
		im->idx[i] = i;
	qsort_r(im->idx, im->t.n, sizeof(*im->idx), cmp_row, &im->t);
	return 0;
}

/* The rank metrics of one trace's ops (rows idx[lo, hi)) into t
 * (docs/database.md: every op covered, the pipeline's sends and receives
 * out of the bubble). */
static void metrics(const struct import *im, size_t lo, size_t hi, struct db_trace *t)
{
	struct rm_interval *v = xmalloc((hi - lo) * sizeof(*v));
	struct rank_result r = { 0 };
	for (size_t k = lo; k < hi; k++) {
		const struct wi_op *op = &im->t.ops[im->idx[k]];
		unsigned kind = (is_comp(op->optype) ? RM_COMP : RM_COMM) |
				(is_pp(op->optype) ? RM_PP : 0) | RM_COVERED;
		v[k - lo] = (struct rm_interval){ op->start_ns, op->end_ns, kind };
	}
	rank_metrics_totals(v, hi - lo, &r); /* in start order: idx sorts so */
	db_trace_set_metrics(t, &r);
	free(v);
}

/* Stores the trace of rows idx[lo, hi): one (step, rank). */
static int store_trace(struct db *db, struct import *im, int64_t source, size_t lo, size_t hi,
		       struct strbuf *path)
{
	const struct wi_op *first = &im->t.ops[im->idx[lo]];
	const char *base = strrchr(im->wf.key, '/');
	strbuf_reset(path);
	strbuf_addf(path, "%s#step=%lld/rank=%d", im->wf.key, (long long)first->step,
		    (int)first->rank);
	struct db_trace t = {
		.path = path->buf,
		.file = im->wf.real,
		.folder = base ? base + 1 : im->wf.key,
		.has_iteration = true,
		.iteration = first->step,
		.has_header_rank = true, /* the op trace's claim */
		.header_rank = first->rank,
		.bytes = -1, /* the file's size is the import's (op_source) */
		.mtime_ns = im->wf.mtime_ns,
		.status = DB_STATUS_OK,
		.mode = DB_MODE_OPTRACE,
		.events = (int64_t)(hi - lo),
		.kernels = 0,
	};
	metrics(im, lo, hi, &t);
	int rc = db_trace_begin(db, &t);
	if (!rc)
		rc = db_trace_set_worker(db, source, first->dp_rank, first->stage);
	for (size_t k = lo; k < hi && !rc; k++) {
		const struct wi_op *op = &im->t.ops[im->idx[k]];
		struct db_op dop = { .optype = op->optype,
				     .seq_id = op->seq_id,
				     .mc = op->mc,
				     .gmc = op->gmc,
				     .mb_id = op->mb_id,
				     .start_ns = op->start_ns,
				     .end_ns = op->end_ns };
		rc = db_trace_add_op(db, &dop);
		if (!rc && (op->optype == OP_FWD_COMPUTE || op->optype == OP_BWD_COMPUTE)) {
			/* The computes are the trace's fwd/bwd steps, so that
			 * ppagg draws them as PP-timer steps are drawn. */
			struct db_step st = {
				.phase = op->optype == OP_FWD_COMPUTE ? RR_FWD : RR_BWD,
				.seq = op->seq_id,
				.has_times = true,
				.start_ns = op->start_ns,
				.end_ns = op->end_ns,
				.comp_ns = op->end_ns - op->start_ns,
				.chunk = op->mc,
				.mbs = op->mb_id,
			};
			rc = db_trace_add_step(db, &st);
		}
	}
	return rc ? rc : db_trace_commit(db);
}

/* One transaction: the earlier import of the file out, this one in. */
static int store(struct db *db, struct import *im)
{
	const struct opimport_opts *o = im->o;
	const struct wi_meta *m = &im->t.meta;
	struct db_op_source src = {
		.path = im->wf.key,
		.file = im->wf.real,
		.bytes = im->wf.bytes,
		.mtime_ns = im->wf.mtime_ns,
		.meta_path = o->meta,
		.schema_path = o->schema,
		.has_meta = im->t.has_meta,
		.trial_name = m->trial_name,
		.run_id = m->run_id,
		.dp_size = m->dp_size,
		.pp_size = m->pp_size,
		.tp_size = m->tp_size,
		.dsp_size = m->dsp_size,
		.vpp_size = m->vpp_size,
		.world_size = m->world_size,
		.optype_order = im->order.len ? im->order.buf : NULL,
	};
	struct strbuf path = STRBUF_INIT;
	int64_t source = 0;
	int rc = db_bulk_begin(db);
	if (!rc)
		rc = db_op_source_replace(db, &src, &source, &im->replaced);
	for (size_t lo = 0, hi; lo < im->t.n && !rc; lo = hi) {
		const struct wi_op *a = &im->t.ops[im->idx[lo]];
		for (hi = lo + 1; hi < im->t.n; hi++) {
			const struct wi_op *b = &im->t.ops[im->idx[hi]];
			if (b->step != a->step || b->rank != a->rank)
				break;
		}
		rc = store_trace(db, im, source, lo, hi, &path);
		im->ntraces++;
	}
	rc = rc ? (db_trace_rollback(db), rc) : db_bulk_commit(db);
	strbuf_release(&path);
	if (!rc)
		rc = db_resolve_ranks(db);
	return rc;
}

/* Counts the conflicts that involve this import's traces and names a few. */
static void show_conflict(void *ctx, const struct db_conflict *c)
{
	struct import *im = ctx;
	size_t n = strlen(im->wf.key);
	if (strncmp(c->path, im->wf.key, n) || c->path[n] != '#')
		return;
	if (im->conflicts++ < 3)
		warn("rank conflict: iteration %lld, rank %lld is also claimed by another trace "
		     "of the database (SELECT * FROM rank_conflicts)",
		     (long long)c->iteration, (long long)c->rank);
}

int opimport_run(const struct opimport_opts *o, struct strbuf *err)
{
	struct import im = { .o = o, .order = STRBUF_INIT, .dbpath = STRBUF_INIT };
	struct db *db = NULL;
	int rc;
	wi_table_init(&im.t);
	if ((rc = load(&im, err)))
		goto out;
	if (o->db) {
		strbuf_addstr(&im.dbpath, o->db);
	} else {
		const char *slash = strrchr(o->input, '/');
		strbuf_addf(&im.dbpath, "%.*s/pptrace.db", slash ? (int)(slash - o->input) : 1,
			    slash ? o->input : ".");
	}
	rc = PP_EXIT_FATAL;
	if (!(db = db_open(im.dbpath.buf, 0, 0, err)))
		goto out;
	if (store(db, &im)) {
		pp_err(err, PP_EDB, "%s: cannot store the ops: %s", o->input, db_errmsg(db));
		goto out;
	}
	if (db_rank_conflicts(db, show_conflict, &im)) {
		pp_err(err, PP_EDB, "%s", db_errmsg(db));
		goto out;
	}
	if (!o->quiet) {
		printf("optrace: %s: %zu steps x %zu workers (DP %d x PP %d", o->input,
		       im.shape.nsteps, (size_t)im.shape.dp * (size_t)im.shape.pp, im.shape.dp,
		       im.shape.pp);
		if (im.shape.vpp > 1)
			printf(", VPP %d", im.shape.vpp);
		printf("), %zu ops in %zu traces into %s", im.t.n, im.ntraces, im.dbpath.buf);
		if (im.replaced)
			printf(" (replacing the %lld traces of its earlier import)",
			       (long long)im.replaced);
		putchar('\n');
	}
	if (im.conflicts > 3)
		warn("rank conflict: %lld more of the import's traces (SELECT * FROM "
		     "rank_conflicts)",
		     (long long)(im.conflicts - 3));
	rc = im.conflicts ? PP_EXIT_PARTIAL : PP_EXIT_OK;
out:
	db_close(db);
	walk_file_release(&im.wf);
	wi_table_release(&im.t);
	free(im.idx);
	strbuf_release(&im.order);
	strbuf_release(&im.dbpath);
	return rc;
}
