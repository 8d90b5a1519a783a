/* primus.c — Primus `pp_data` dumps (docs/primus.md): primus_load() reads
 * and checks a whole dump (primus.h), primus_run() (batch.h) stores it.
 *
 *   config.json → every pp_rank_<s>.json (iterations, their numbers and
 *   arrays checked) → the same iterations in every file → calls labelled
 *   (recorded, or Megatron's order) and checked (each (chunk, micro-batch)
 *   once) → one bulk transaction: the import, then per (iteration, stage)
 *   one trace with its forward/backward steps, its reading (total, memory)
 *   and its weight-gradient calls.
 *
 * Nothing is stored unless the whole dump is good; storing it again
 * replaces every trace of the earlier import of the same folder.
 */
#include "primus.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch.h"
#include "classify/rank_metrics.h"
#include "model/rank_result.h"
#include "read/json_scan.h"
#include "storage/db.h"
#include "storage/db_import.h"
#include "util/cmp.h"
#include "util/pp.h"
#include "util/strbuf.h"

/* ---- reading ---- */

/* The arrays of an iteration, in this order. */
enum arr {
	A_FWD_START,
	A_FWD_END,
	A_FWD_MB,
	A_FWD_CHUNK,
	A_BWD_START,
	A_BWD_END,
	A_BWD_MB,
	A_BWD_CHUNK,
	A_W_START,
	A_W_END,
	A_W_MB,
	A_W_CHUNK,
	A_COUNT
};
static const char *const arr_name[A_COUNT] = {
	"fwd_start",   "fwd_end",   "fwd_minibatch",   "fwd_chunk",
	"bwd_start",   "bwd_end",   "bwd_minibatch",   "bwd_chunk",
	"wgrad_start", "wgrad_end", "wgrad_minibatch", "wgrad_chunk",
};

/* One iteration of one file as read, before the checks across files. */
struct raw_iter {
	int64_t iteration;
	const char *pos; /* its key in the text, for messages */
	bool has_total, has_memory;
	double total, memory; /* ms, GiB */
	double *a[A_COUNT];
	size_t n[A_COUNT];
	bool has[A_COUNT];
};

/* One file as read. */
struct raw_file {
	char path[4200];
	struct strbuf text;
	struct raw_iter *it;
	size_t n, cap;
};

/* Where in a file: "PATH:LINE: byte OFFSET: " into err. */
static void where(struct strbuf *err, const char *path, const struct strbuf *text, const char *at)
{
	strbuf_addf(err, "%s:%d: byte %td: ", path, js_line_of(text->buf, at), at - text->buf);
}

/* The value's text, cut to 40 bytes, for "found ...". */
static void found(struct strbuf *err, const struct js_item *m)
{
	int n = (int)(m->vend - m->v);
	strbuf_addf(err, "found '%.*s%s'", n > 40 ? 40 : n, m->v, n > 40 ? "..." : "");
}

static bool key_is(const struct js_item *m, const char *k)
{
	return !m->key_esc && m->keylen == strlen(k) && !memcmp(m->key, k, m->keylen);
}

static bool is_number(const struct js_item *m)
{
	return *m->v == '-' || (*m->v >= '0' && *m->v <= '9');
}

/* A JSON number's value (the text passed js_doc_check()). */
static bool number(const struct js_item *m, double *v)
{
	char *e;
	if (!is_number(m))
		return false;
	*v = strtod(m->v, &e);
	return e == m->vend && isfinite(*v);
}

/* A whole number in [lo, hi]. */
static bool whole(const struct js_item *m, long lo, long hi, int *v)
{
	double d;
	if (!number(m, &d) || d != floor(d) || d < (double)lo || d > (double)hi)
		return false;
	*v = (int)d;
	return true;
}

static int read_config(const char *dir, struct primus_config *c, struct strbuf *err)
{
	static const char *const keys[] = { "world_size", "dp_size", "tp_size", "ep_size",
					    "pp_size",    "vp_size", "num_mbs", "train_iters" };
	int *dst[] = { &c->world, &c->dp,  &c->tp,           &c->ep,
		       &c->pp,    &c->vpp, &c->microbatches, &c->iterations };
	char path[4200];
	struct strbuf text = STRBUF_INIT;
	struct js_stack st = { 0 };
	struct js_iter it;
	struct js_item m;
	const char *v, *vend;
	int rc;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "%s/config.json", dir);
	if ((rc = js_doc_load(path, &text, &v, &vend, &st, err)))
		goto out;
	if (*v != '{') {
		strbuf_addf(err, "%s: not a JSON object", path);
		rc = PP_EPARSE;
		goto out;
	}
	js_iter_init(&it, v, text.buf + text.len, &st);
	while (!rc && js_iter_next(&it, &m))
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			if (!key_is(&m, keys[k]))
				continue;
			if (*m.v == 'n') /* null: not set (vp_size without VPP) */
				*dst[k] = 0;
			else if (!whole(&m, 1, 10000000, dst[k])) {
				where(err, path, &text, m.v);
				strbuf_addf(err, "%s: expected a whole number >= 1, ", keys[k]);
				found(err, &m);
				rc = PP_EPARSE;
			}
		}
	if (!rc && c->pp < 1) {
		strbuf_addf(err, "%s: no pp_size (the pipeline-parallel size)", path);
		rc = PP_EPARSE;
	}
	if (!rc && c->vpp < 1)
		c->vpp = 1;
	if (!rc && c->pp * (int64_t)c->vpp > 4096) {
		strbuf_addf(err, "%s: pp_size %d x vp_size %d: more than 4096 model chunks", path,
			    c->pp, c->vpp);
		rc = PP_EPARSE;
	}
out:
	strbuf_release(&text);
	js_stack_release(&st);
	return rc;
}

/* The numbers of the array m into *out (*n of them). */
static int read_array(const struct raw_file *f, const struct js_item *m, const char *end,
		      struct js_stack *st, const char *iter, double **out, size_t *n,
		      struct strbuf *err)
{
	struct js_iter it;
	struct js_item e;
	size_t cap = 0;
	char key[32];
	snprintf(key, sizeof(key), "%.*s", (int)m->keylen, m->key);
	if (*m->v != '[') {
		where(err, f->path, &f->text, m->v);
		strbuf_addf(err, "iteration %s, %s: expected an array, ", iter, key);
		found(err, m);
		return PP_EPARSE;
	}
	js_iter_init(&it, m->v, end, st);
	while (js_iter_next(&it, &e)) {
		double v;
		if (!number(&e, &v)) {
			where(err, f->path, &f->text, e.v);
			strbuf_addf(err, "iteration %s, %s[%zu]: expected a number, ", iter, key,
				    *n);
			found(err, &e);
			return PP_EPARSE;
		}
		PP_GROW(*out, *n, cap, 64);
		(*out)[(*n)++] = v;
	}
	return 0;
}

/* One iteration's object m (its key: the iteration number). */
static int read_iter(struct raw_file *f, const struct js_item *m, const char *end,
		     struct js_stack *st, struct primus_dump *d, struct strbuf *err)
{
	struct js_iter it;
	struct js_item e;
	char iter[32];
	long long num = 0;
	char *stop;
	snprintf(iter, sizeof(iter), "%.*s", m->keylen < 24 ? (int)m->keylen : 24, m->key);
	errno = 0;
	num = strtoll(iter, &stop, 10);
	if (m->keylen == 0 || m->keylen > 18 || *stop || iter[0] == '-' || iter[0] == '+' ||
	    errno) {
		where(err, f->path, &f->text, m->key);
		strbuf_addf(err, "key \"%s\": expected an iteration number", iter);
		return PP_EPARSE;
	}
	if (*m->v != '{') {
		where(err, f->path, &f->text, m->v);
		strbuf_addf(err, "iteration %s: expected an object, ", iter);
		found(err, m);
		return PP_EPARSE;
	}
	PP_GROW(f->it, f->n, f->cap, 32);
	struct raw_iter *r = &f->it[f->n++];
	memset(r, 0, sizeof(*r));
	r->iteration = num;
	r->pos = m->key;
	js_iter_init(&it, m->v, end, st);
	while (js_iter_next(&it, &e)) {
		int a;
		for (a = 0; a < A_COUNT && !key_is(&e, arr_name[a]); a++)
			;
		if (a < A_COUNT) {
			if (r->has[a]) {
				where(err, f->path, &f->text, e.key);
				strbuf_addf(err, "iteration %s: %s given twice", iter, arr_name[a]);
				return PP_EPARSE;
			}
			r->has[a] = true;
			int rc = read_array(f, &e, end, st, iter, &r->a[a], &r->n[a], err);
			if (rc)
				return rc;
		} else if (key_is(&e, "total") || key_is(&e, "memory")) {
			bool tot = key_is(&e, "total");
			double v;
			if (!number(&e, &v) || v < 0) {
				where(err, f->path, &f->text, e.v);
				strbuf_addf(err, "iteration %s, %s: expected a number >= 0, ", iter,
					    tot ? "total" : "memory");
				found(err, &e);
				return PP_EPARSE;
			}
			*(tot ? &r->total : &r->memory) = v;
			*(tot ? &r->has_total : &r->has_memory) = true;
		} else if (!d->unknown_keys++) {
			snprintf(d->first_unknown, sizeof(d->first_unknown), "%.*s",
				 e.keylen < 60 ? (int)e.keylen : 60, e.key);
		}
	}
	return 0;
}

static void raw_file_release(struct raw_file *f)
{
	for (size_t i = 0; i < f->n; i++)
		for (int a = 0; a < A_COUNT; a++)
			free(f->it[i].a[a]);
	free(f->it);
	strbuf_release(&f->text);
	memset(f, 0, sizeof(*f));
}

static int cmp_raw_iter(const void *x, const void *y)
{
	const struct raw_iter *a = x, *b = y;
	return (a->iteration > b->iteration) - (a->iteration < b->iteration);
}

static int read_file(struct raw_file *f, struct primus_dump *d, struct strbuf *err)
{
	struct js_stack st = { 0 };
	struct js_iter it;
	struct js_item m;
	const char *v, *vend;
	int rc = js_doc_load(f->path, &f->text, &v, &vend, &st, err);
	if (rc)
		goto out;
	const char *end = f->text.buf + f->text.len;
	if (*v != '{') {
		strbuf_addf(err, "%s: not a JSON object (iteration number -> its arrays)", f->path);
		rc = PP_EPARSE;
		goto out;
	}
	js_iter_init(&it, v, end, &st);
	while (!rc && js_iter_next(&it, &m))
		rc = read_iter(f, &m, end, &st, d, err);
	if (!rc && !f->n) {
		strbuf_addf(err, "%s: no iteration", f->path);
		rc = PP_EPARSE;
	}
	if (!rc) {
		if (f->n)
			qsort(f->it, f->n, sizeof(*f->it), cmp_raw_iter);
		for (size_t i = 1; i < f->n && !rc; i++)
			if (f->it[i].iteration == f->it[i - 1].iteration) {
				where(err, f->path, &f->text, f->it[i].pos);
				strbuf_addf(err, "iteration %lld given twice",
					    (long long)f->it[i].iteration);
				rc = PP_EPARSE;
			}
	}
out:
	js_stack_release(&st);
	return rc;
}

/* ---- checks and labels ---- */

/* "PATH: iteration N: " into err. */
static void at_iter(struct strbuf *err, const struct raw_file *f, const struct raw_iter *r)
{
	strbuf_addf(err, "%s: iteration %lld: ", f->path, (long long)r->iteration);
}

/* The calls of one kind (base: A_FWD_START, A_BWD_START or A_W_START) of
 * iteration r into *out, labelled; checked. */
static int take_calls(const struct primus_dump *d, const struct raw_file *f,
		      const struct raw_iter *r, int kind, struct primus_call **out, size_t *nout,
		      bool *labelled, struct strbuf *err)
{
	const int base = kind * 4;
	const int P = d->cfg.pp, V = d->cfg.vpp, M = d->microbatches;
	size_t n = r->n[base];
	*out = NULL;
	*nout = 0;
	if (r->has[base] != r->has[base + 1]) {
		at_iter(err, f, r);
		strbuf_addf(err, "%s without %s", arr_name[r->has[base] ? base : base + 1],
			    arr_name[r->has[base] ? base + 1 : base]);
		return PP_EPARSE;
	}
	for (int a = base + 1; a < base + 4; a++)
		if (r->has[a] && r->n[a] != n) {
			at_iter(err, f, r);
			strbuf_addf(err, "%s has %zu entries, %s %zu", arr_name[a], r->n[a],
				    arr_name[base], n);
			return PP_EPARSE;
		}
	if (!r->has[base])
		return 0;
	if (V > 1 && !r->has[base + 3] && M % P) {
		at_iter(err, f, r);
		strbuf_addf(err,
			    "no %s: the calls of an interleaved dump follow Megatron's order, "
			    "which needs the micro-batches (%d) to be a multiple of pp_size (%d)",
			    arr_name[base + 3], M, P);
		return PP_EPARSE;
	}
	*labelled |= r->has[base + 2] || r->has[base + 3];
	struct primus_call *c = xcalloc(n ? n : 1, sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		double s = r->a[base][i], e = r->a[base + 1][i];
		int32_t chunk = 0, mb = (int32_t)i;
		if (V > 1 || !r->has[base + 2])
			rr_vpp_label((int64_t)i, kind != PRIMUS_FWD, P, V, &chunk, &mb);
		const double lab[2] = { r->has[base + 2] ? r->a[base + 2][i] : mb,
					r->has[base + 3] ? r->a[base + 3][i] : chunk };
		const int lim[2] = { M, V };
		for (int k = 0; k < 2; k++)
			if (lab[k] != floor(lab[k]) || lab[k] < 0 || lab[k] >= lim[k]) {
				at_iter(err, f, r);
				strbuf_addf(err, "%s[%zu] = %g: expected a whole number below %d",
					    arr_name[base + 2 + k], i, lab[k], lim[k]);
				free(c);
				return PP_EPARSE;
			}
		if (!(e >= s) || fabs(s) > 9e9 || fabs(e) > 9e9) {
			at_iter(err, f, r);
			strbuf_addf(err, "call %zu ends (%s %g) before it starts (%s %g)", i,
				    arr_name[base + 1], e, arr_name[base], s);
			free(c);
			return PP_EPARSE;
		}
		c[i] = (struct primus_call){ llround(s * 1e6), llround(e * 1e6), (int)lab[0],
					     (int)lab[1] };
	}
	/* every (chunk, micro-batch) once */
	size_t cells = (size_t)M * (size_t)V;
	char *seen = xcalloc(cells ? cells : 1, 1);
	for (size_t i = 0; i < n; i++) {
		size_t at = (size_t)c[i].chunk * (size_t)M + (size_t)c[i].mb;
		if (seen[at]++) {
			at_iter(err, f, r);
			strbuf_addf(err, "%s[%zu]: chunk %d micro-batch %d a second time",
				    arr_name[base], i, c[i].chunk, c[i].mb);
			free(seen);
			free(c);
			return PP_EPARSE;
		}
	}
	free(seen);
	*out = c;
	*nout = n;
	return 0;
}

/* The calls of every iteration of file f (stage s) into d->at. */
static int check_file(struct primus_dump *d, const struct raw_file *f, int s, struct strbuf *err)
{
	const size_t want = (size_t)d->microbatches * (size_t)d->cfg.vpp;
	for (size_t i = 0; i < d->niters; i++) {
		const struct raw_iter *r = &f->it[i];
		struct primus_iter *x = &d->at[(size_t)s * d->niters + i];
		x->iteration = r->iteration;
		x->has_total = r->has_total;
		x->total_ns = llround(r->total * 1e6);
		x->has_memory = r->has_memory;
		x->memory_gib = r->memory;
		for (int k = 0; k < PRIMUS_NKINDS; k++) {
			int rc = take_calls(d, f, r, k, &x->calls[k], &x->ncalls[k], &d->labelled,
					    err);
			if (rc)
				return rc;
		}
		if (x->ncalls[PRIMUS_FWD] != want || x->ncalls[PRIMUS_BWD] != want) {
			at_iter(err, f, r);
			strbuf_addf(err,
				    "%zu forward and %zu backward calls; expected %zu each "
				    "(%d micro-batches x vp_size %d)",
				    x->ncalls[PRIMUS_FWD], x->ncalls[PRIMUS_BWD], want,
				    d->microbatches, d->cfg.vpp);
			return PP_EPARSE;
		}
		if (x->ncalls[PRIMUS_WGRAD] && x->ncalls[PRIMUS_WGRAD] != want) {
			at_iter(err, f, r);
			strbuf_addf(err, "%zu weight-gradient calls; expected none or %zu",
				    x->ncalls[PRIMUS_WGRAD], want);
			return PP_EPARSE;
		}
		d->has_wgrad |= x->ncalls[PRIMUS_WGRAD] > 0;
	}
	return 0;
}

/* The iterations of every file must be the first file's. */
static int same_iterations(const struct raw_file *files, int P, struct strbuf *err)
{
	for (int s = 1; s < P; s++) {
		const struct raw_file *a = &files[0], *b = &files[s];
		size_t i = 0;
		while (i < a->n && i < b->n && a->it[i].iteration == b->it[i].iteration)
			i++;
		if (i == a->n && i == b->n)
			continue;
		bool b_lacks = i < a->n && (i == b->n || a->it[i].iteration < b->it[i].iteration);
		const struct raw_file *has = b_lacks ? a : b, *lacks = b_lacks ? b : a;
		strbuf_addf(err, "%s: no iteration %lld, which %s has", lacks->path,
			    (long long)has->it[i].iteration, has->path);
		return PP_EPARSE;
	}
	return 0;
}

int primus_load(const char *dir, struct primus_dump *d, struct strbuf *err)
{
	struct raw_file *files = NULL;
	int rc, P;
	memset(d, 0, sizeof(*d));
	if ((rc = read_config(dir, &d->cfg, err)))
		return rc;
	P = d->cfg.pp;
	files = xcalloc((size_t)P, sizeof(*files));
	for (int s = 0; s < P && !rc; s++) {
		struct stat sb;
		strbuf_init(&files[s].text, 0);
		snprintf(files[s].path, sizeof(files[s].path), "%s/pp_rank_%d.json", dir, s);
		if (stat(files[s].path, &sb)) {
			strbuf_addf(err, "%s: %s (config.json says pp_size %d)", files[s].path,
				    strerror(errno), P);
			rc = PP_EIO;
		} else {
			rc = read_file(&files[s], d, err);
		}
	}
	if (!rc)
		rc = same_iterations(files, P, err);
	if (!rc) {
		const struct raw_iter *r0 = &files[0].it[0];
		size_t nf = r0->n[A_FWD_START];
		d->microbatches = d->cfg.microbatches;
		if (!d->microbatches) {
			if (!nf || nf % (size_t)d->cfg.vpp) {
				at_iter(err, &files[0], r0);
				strbuf_addf(err,
					    "%zu forward calls, not a multiple of vp_size %d "
					    "(config.json has no num_mbs)",
					    nf, d->cfg.vpp);
				rc = PP_EPARSE;
			}
			d->microbatches = (int)(nf / (size_t)d->cfg.vpp);
		}
	}
	if (!rc) {
		d->niters = files[0].n;
		d->iters = xcalloc(d->niters, sizeof(*d->iters));
		for (size_t i = 0; i < d->niters; i++)
			d->iters[i] = files[0].it[i].iteration;
		d->at = xcalloc((size_t)P * d->niters, sizeof(*d->at));
		for (int s = 0; s < P && !rc; s++)
			rc = check_file(d, &files[s], s, err);
	}
	for (int s = 0; s < P; s++)
		raw_file_release(&files[s]);
	free(files);
	return rc;
}

void primus_dump_release(struct primus_dump *d)
{
	for (size_t i = 0; d->at && i < (size_t)d->cfg.pp * d->niters; i++)
		for (int k = 0; k < PRIMUS_NKINDS; k++)
			free(d->at[i].calls[k]);
	free(d->at);
	free(d->iters);
	memset(d, 0, sizeof(*d));
}

/* ---- storing ---- */

static int cmp_call_time(const void *x, const void *y)
{
	const struct primus_call *a = x, *b = y;
	const int64_t ka[] = { a->start_ns, a->end_ns, a->chunk, a->mb };
	const int64_t kb[] = { b->start_ns, b->end_ns, b->chunk, b->mb };
	return cmp_i64s(ka, kb, 4);
}

/* What one import run shares. */
struct store {
	struct db *db;
	const struct primus_dump *d;
	const char *real;       /* the dump folder, canonical */
	int64_t rank_stride;    /* global rank of stage s: s x this */
	int64_t *bytes, *mtime; /* per stage file */
	char **file;            /* per stage: the file, canonical */
};

/* Stores stage s of iteration i as one trace. */
static int store_trace(struct store *S, int s, size_t i)
{
	const struct primus_dump *d = S->d;
	const struct primus_iter *x = primus_at(d, s, i);
	struct strbuf path = STRBUF_INIT, folder = STRBUF_INIT;
	size_t n = x->ncalls[PRIMUS_FWD] + x->ncalls[PRIMUS_BWD] + x->ncalls[PRIMUS_WGRAD];
	struct rm_interval *iv = xmalloc((n + 1) * sizeof(*iv));
	struct rank_result m = { 0 };
	size_t k = 0;
	int rc;

	strbuf_addf(&path, "%s#%lld/pp_rank_%d.json", S->real, (long long)x->iteration, s);
	strbuf_addf(&folder, "iteration_%lld", (long long)x->iteration);
	for (int kind = 0; kind < PRIMUS_NKINDS; kind++)
		for (size_t c = 0; c < x->ncalls[kind]; c++)
			iv[k++] = (struct rm_interval){ x->calls[kind][c].start_ns,
							x->calls[kind][c].end_ns,
							RM_COMP | RM_COVERED };
	rank_metrics_totals(iv, k, &m);
	free(iv);
	struct db_trace t = {
		.path = path.buf,
		.file = S->file[s],
		.folder = folder.buf,
		.has_iteration = true,
		.iteration = x->iteration,
		.has_name_rank = true,
		.name_rank = (int64_t)s * S->rank_stride,
		.bytes = S->bytes[s],
		.mtime_ns = S->mtime[s],
		.status = DB_STATUS_OK,
		.mode = DB_MODE_MEGATRON,
		.events = (int64_t)n,
		.role_rule = "primus",
	};
	db_trace_set_metrics(&t, &m);
	rc = db_trace_begin(S->db, &t);
	for (int kind = 0; kind < PRIMUS_NKINDS && !rc; kind++) {
		size_t nc = x->ncalls[kind];
		struct primus_call *c = xmalloc((nc + 1) * sizeof(*c));
		if (nc)
			memcpy(c, x->calls[kind], nc * sizeof(*c));
		qsort(c, nc, sizeof(*c), cmp_call_time);
		for (size_t j = 0; j < nc && !rc; j++) {
			if (kind == PRIMUS_WGRAD) {
				struct db_wgrad w = { path.buf, (int64_t)j,    c[j].chunk,
						      c[j].mb,  c[j].start_ns, c[j].end_ns };
				rc = db_wgrad_add(S->db, &w);
				continue;
			}
			struct db_step ds = {
				.phase = kind == PRIMUS_FWD ? RR_FWD : RR_BWD,
				.seq = (int64_t)j,
				.has_times = true,
				.start_ns = c[j].start_ns,
				.end_ns = c[j].end_ns,
				.comp_ns = c[j].end_ns - c[j].start_ns,
				.chunk = d->cfg.vpp > 1 ? c[j].chunk : -1,
				.mbs = c[j].mb,
			};
			rc = db_trace_add_step(S->db, &ds);
		}
		free(c);
	}
	struct db_reading rd = { path.buf,     s, x->has_total, x->total_ns, x->has_memory,
				 x->memory_gib };
	if (!rc)
		rc = db_reading_add(S->db, &rd);
	if (!rc)
		rc = db_trace_commit(S->db);
	strbuf_release(&path);
	strbuf_release(&folder);
	return rc;
}

/* The whole dump in one transaction: nothing of it, or all. */
static int store_dump(struct store *S, const struct primus_opts *o, int64_t *removed)
{
	const struct primus_dump *d = S->d;
	struct db_import imp = {
		.path = S->real,
		.format = "primus",
		.pp_size = d->cfg.pp,
		.vpp_size = d->cfg.vpp,
		.dp_size = d->cfg.dp,
		.tp_size = d->cfg.tp,
		.ep_size = d->cfg.ep,
		.world_size = d->cfg.world,
		.microbatches = d->microbatches,
		.iterations = (int)d->niters,
		.num_layers = o->layers,
	};
	int rc = db_bulk_begin(S->db);
	if (!rc)
		rc = db_import_record(S->db, &imp, true, removed);
	for (size_t i = 0; i < d->niters && !rc; i++)
		for (int s = 0; s < d->cfg.pp && !rc; s++)
			rc = store_trace(S, s, i);
	if (!rc)
		rc = db_bulk_commit(S->db);
	if (rc)
		db_trace_rollback(S->db);
	return rc;
}

int primus_run(const struct primus_opts *o, struct strbuf *err)
{
	struct primus_dump d;
	struct strbuf dbpath = STRBUF_INIT;
	struct store S = { 0 };
	int64_t removed = 0;
	int rc = PP_EXIT_OK;

	if (primus_load(o->input, &d, err)) {
		pp_err(err, PP_EPARSE,
		       "nothing stored: '%s' is not a Primus pp_data dump pptrace can read "
		       "(docs/primus.md)",
		       o->input);
		rc = PP_EXIT_FATAL;
		goto out;
	}
	S.d = &d;
	S.bytes = xcalloc((size_t)d.cfg.pp, sizeof(*S.bytes));
	S.mtime = xcalloc((size_t)d.cfg.pp, sizeof(*S.mtime));
	S.file = xcalloc((size_t)d.cfg.pp, sizeof(*S.file));
	S.real = realpath(o->input, NULL);
	if (!S.real) {
		pp_err(err, PP_EIO, "%s: %s", o->input, strerror(errno));
		rc = PP_EXIT_FATAL;
		goto out;
	}
	S.rank_stride = d.cfg.world > 0 && d.cfg.world % d.cfg.pp == 0 ? d.cfg.world / d.cfg.pp : 1;
	for (int s = 0; s < d.cfg.pp; s++) {
		struct stat sb;
		char p[4200];
		snprintf(p, sizeof(p), "%s/pp_rank_%d.json", o->input, s);
		S.file[s] = realpath(p, NULL);
		if (!stat(p, &sb)) {
			S.bytes[s] = (int64_t)sb.st_size;
			S.mtime[s] = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
		}
	}
	if (o->db)
		strbuf_addstr(&dbpath, o->db);
	else
		strbuf_addf(&dbpath, "%s/pptrace.db", o->input);
	S.db = db_open(dbpath.buf, 0, 0, err);
	if (!S.db) {
		rc = PP_EXIT_FATAL;
		goto out;
	}
	if (d.unknown_keys && !o->quiet)
		warn("%s: %zu key%s of the iterations not understood (first: '%s'), ignored",
		     o->input, d.unknown_keys, d.unknown_keys == 1 ? "" : "s", d.first_unknown);
	if (store_dump(&S, o, &removed)) {
		pp_err(err, PP_EDB, "%s: cannot store: %s", o->input, db_errmsg(S.db));
		rc = PP_EXIT_FATAL;
		goto out;
	}
	if (!o->quiet) {
		printf("primus: %d stage%s x %zu iteration%s imported (pp %d, vpp %d, "
		       "%d micro-batches%s%s), into %s",
		       d.cfg.pp, d.cfg.pp == 1 ? "" : "s", d.niters, d.niters == 1 ? "" : "s",
		       d.cfg.pp, d.cfg.vpp, d.microbatches,
		       d.labelled ? "" : (d.cfg.vpp > 1 ? ", calls in Megatron's order" : ""),
		       d.has_wgrad ? ", weight-gradient calls" : "", dbpath.buf);
		if (removed)
			printf("; %lld trace%s of the earlier import replaced", (long long)removed,
			       removed == 1 ? "" : "s");
		putchar('\n');
	}
out:
	for (int s = 0; S.file && s < d.cfg.pp; s++)
		free(S.file[s]);
	PP_FREE_ALL(S.file, S.bytes, S.mtime, (char *)S.real);
	db_close(S.db);
	primus_dump_release(&d);
	strbuf_release(&dbpath);
	return rc;
}
