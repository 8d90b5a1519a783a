/* pptimer.c — import of Megatron PP-timer dumps (docs/semantics.md §10), see pptimer.h.
 *
 * pptimer_run() walks --input like ppbatch does (BASE itself, or its
 * iteration folders), keeps per folder one file per pipeline stage (the
 * TPxCPxDP rank 0 files: one pipeline), lists every other *.json file with
 * the reason it was skipped, and stores each kept file as one trace: a
 * forward/backward step per recorded (chunk, micro-batch), with its GPU
 * times, no kernels. Events that were never recorded are reported as
 * warnings (status partial), never guessed. Times are ns since the rank's
 * start event, so the ranks of one dump share an approximate origin.
 */
#include "pptimer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "classify/rank_metrics.h"
#include "model/rank_result.h"
#include "read/json_scan.h"
#include "storage/db.h"
#include "storage/db_import.h"
#include "util/cmp.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "walk.h"

/* ---- names ---- */

/* Reads digits at *s into *v; advances *s. */
static bool take_num(const char **s, int64_t *v)
{
	const char *p = *s;
	int64_t x = 0;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9') {
		if (x > (INT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (*p++ - '0');
	}
	*s = p;
	*v = x;
	return true;
}

static bool take_lit(const char **s, const char *lit)
{
	size_t n = strlen(lit);
	if (strncmp(*s, lit, n))
		return false;
	*s += n;
	return true;
}

int pptimer_parse_name(const char *base, struct pptimer_name *out, struct strbuf *why)
{
	const char *s = base;
	int64_t pp = 0, vpp = 1, r = 0, st = 0, g = 0;
	const char *bad = NULL;
	memset(out, 0, sizeof(*out));
	if (!take_lit(&s, "event_times_PP") || !take_num(&s, &pp))
		bad = "does not start with event_times_PP<p>";
	else if (!take_lit(&s, "_VPP"))
		bad = "no _VPP<v> after the PP size";
	else if (take_lit(&s, "None"))
		out->vpp_none = true;
	else if (!take_num(&s, &vpp))
		bad = "VPP size is neither a number nor None";
	if (!bad && (!take_lit(&s, "_TPxCPxDP_rank_") || !take_num(&s, &r)))
		bad = "no _TPxCPxDP_rank_<r>";
	if (!bad && (!take_lit(&s, "_pp_rank_") || !take_num(&s, &st)))
		bad = "no _pp_rank_<s>";
	if (!bad && (!take_lit(&s, "_rank_") || !take_num(&s, &g)))
		bad = "no _rank_<global rank>";
	if (!bad && strcmp(s, ".json"))
		bad = "does not end in _rank_<g>.json";
	if (!bad && (pp < 1 || pp > 1000000 || vpp < 1 || vpp > 1000000 || st >= pp))
		bad = "sizes out of range (pp_rank must be below the PP size)";
	if (bad)
		return pp_err(why, PP_EPARSE,
			      "name is not event_times_PP{p}_VPP{v}_TPxCPxDP_rank_{r}"
			      "_pp_rank_{s}_rank_{g}.json: %s",
			      bad);
	out->pp = (int)pp;
	out->vpp = (int)vpp;
	out->dp_rank = r;
	out->pp_rank = (int)st;
	out->rank = g;
	return 0;
}

/* ---- contents ---- */

struct event {
	int phase, chunk, mb;
	bool is_end;
	int64_t ns;
};

/* "forward-3-start" / "backward-1-7-end" into ev; false when the key is not
 * a step event of this layout. */
static bool parse_key(const char *k, bool vpp, struct event *ev)
{
	int64_t a = 0, b = 0;
	if (take_lit(&k, "forward-"))
		ev->phase = 1;
	else if (take_lit(&k, "backward-"))
		ev->phase = 2;
	else
		return false;
	if (!take_num(&k, &a))
		return false;
	if (vpp && (!take_lit(&k, "-") || !take_num(&k, &b)))
		return false;
	if (take_lit(&k, "-start"))
		ev->is_end = false;
	else if (take_lit(&k, "-end"))
		ev->is_end = true;
	else
		return false;
	if (*k || a > 1000000 || b > 100000000)
		return false;
	ev->chunk = vpp ? (int)a : 0;
	ev->mb = vpp ? (int)b : (int)a;
	return true;
}

static int cmp_event(const void *x, const void *y)
{
	const struct event *a = x, *b = y;
	const int64_t ka[] = { a->phase, a->chunk, a->mb, a->is_end };
	const int64_t kb[] = { b->phase, b->chunk, b->mb, b->is_end };
	return cmp_i64s(ka, kb, 4);
}

/* Milliseconds text [s, e) to ns (rounded to nearest). The text is a JSON
 * number checked by js_doc_check(), so strtod stops where it ends. */
static bool ms_to_ns(const char *s, const char *e, int64_t *ns)
{
	char *end;
	double ms = strtod(s, &end);
	if (end != e || !isfinite(ms) || fabs(ms) > 9e9)
		return false;
	*ns = llround(ms * 1e6);
	return true;
}

void pptimer_file_release(struct pptimer_file *f)
{
	if (!f)
		return;
	free(f->steps);
	memset(f, 0, sizeof(*f));
}

struct events {
	struct event *v;
	size_t n, alloc;
};

/* One member of the dump: a step event into ev, total-execution-time into
 * out, anything else counted as unknown. */
static void take_member(const struct js_item *m, bool vpp, struct events *ev,
			struct pptimer_file *out)
{
	char key[256];
	size_t kn = m->keylen < sizeof(key) ? m->keylen : sizeof(key) - 1;
	kn = m->key_esc ? js_unescape(m->key, kn, key) : (memcpy(key, m->key, kn), kn);
	key[kn] = '\0';
	bool is_num = *m->v == '-' || (*m->v >= '0' && *m->v <= '9');
	struct event e;
	if (is_num && !strcmp(key, "total-execution-time")) {
		/* the last one counts, even when it is out of range */
		int64_t ns = 0;
		out->has_total = ms_to_ns(m->v, m->vend, &ns);
		out->total_ns = out->has_total ? ns : 0;
	} else if (is_num && parse_key(key, vpp, &e) && ms_to_ns(m->v, m->vend, &e.ns)) {
		if (ev->n == ev->alloc) {
			ev->alloc = ev->alloc ? 2 * ev->alloc : 256;
			ev->v = xrealloc(ev->v, ev->alloc * sizeof(*ev->v));
		}
		ev->v[ev->n++] = e;
	} else if (!out->unknown_keys++) {
		snprintf(out->first_unknown, sizeof(out->first_unknown), "%.60s", key);
	}
}

/* The steps of out from the start and end events of each (phase, chunk, mb). */
static void merge_steps(struct events *ev, struct pptimer_file *out)
{
	if (ev->n) /* qsort's base must not be NULL, even for 0 elements */
		qsort(ev->v, ev->n, sizeof(*ev->v), cmp_event);
	out->steps = xmalloc((ev->n ? ev->n : 1) * sizeof(*out->steps));
	for (size_t i = 0; i < ev->n; i++) {
		const struct event *e = &ev->v[i];
		struct pptimer_step *st = out->n ? &out->steps[out->n - 1] : NULL;
		if (!st || st->phase != e->phase || st->chunk != e->chunk || st->mb != e->mb) {
			st = &out->steps[out->n++];
			memset(st, 0, sizeof(*st));
			st->phase = e->phase;
			st->chunk = e->chunk;
			st->mb = e->mb;
		}
		if (e->is_end) {
			st->has_end = true;
			st->end_ns = e->ns;
		} else {
			st->has_start = true;
			st->start_ns = e->ns;
		}
	}
}

int pptimer_read(const char *path, bool vpp, struct pptimer_file *out, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	struct events ev = { 0 };
	struct js_stack stack = { 0 };
	struct js_iter it;
	struct js_item m;
	const char *v, *vend;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if ((rc = js_doc_load(path, &text, &v, &vend, &stack, err)))
		goto out;
	const char *end = text.buf + text.len;
	if (*v != '{') {
		rc = pp_err(err, PP_EPARSE, "%s: not a JSON object", path);
		goto out;
	}
	js_iter_init(&it, v, end, &stack);
	while (js_iter_next(&it, &m))
		take_member(&m, vpp, &ev, out);
	merge_steps(&ev, out);
out:
	strbuf_release(&text);
	free(ev.v);
	js_stack_release(&stack);
	return rc;
}

/* ---- import ---- */

static const char *const phase_word[] = { "", "forward", "backward" };

/* Chunks whose micro-batches are counted (a VPP size beyond it counts as
 * this many). */
#define MAX_CHUNKS 64

struct stage_file {
	const struct walk_file *wf;
	struct pptimer_name name;
	struct pptimer_file data;
	bool loaded;
};

/* One folder's import: its files by pipeline stage and what they hold. */
struct folder_import {
	struct db *db;
	const struct pptimer_opts *o;
	struct strbuf *err; /* pptimer_run()'s */
	int P, V;           /* --pp-size, --vpp-size */
	const char *folder;
	int64_t iteration;
	struct stage_file *sf; /* [P] */
	/* Micro-batches per (phase, chunk) over the pipeline's ranks. */
	int mb_count[3][MAX_CHUNKS];
};

/* What pptimer_run() counts over the folders. */
struct import_counts {
	int ranks, skipped, partial, failed;
	int microbatches; /* the most a folder's chunk had */
};

static int cmp_step_time(const void *x, const void *y)
{
	const struct pptimer_step *a = x, *b = y;
	const int64_t ka[] = { a->phase, a->start_ns, a->chunk, a->mb };
	const int64_t kb[] = { b->phase, b->start_ns, b->chunk, b->mb };
	return cmp_i64s(ka, kb, 4);
}

/* The database row of a stage's file without its outcome. */
static struct db_trace stage_row(const struct folder_import *fi, const struct stage_file *sf)
{
	return (struct db_trace){
		.path = sf->wf->key,
		.file = sf->wf->real,
		.folder = fi->folder,
		.has_iteration = true,
		.iteration = fi->iteration,
		.has_name_rank = true,
		.name_rank = sf->name.rank,
		.bytes = sf->wf->bytes,
		.mtime_ns = sf->wf->mtime_ns,
	};
}

/* The events f never recorded, one line each into warnings (the first 50,
 * then how many more): half-recorded steps, and (chunk, mb) that other
 * ranks of the pipeline have but this one lacks. Returns how many. */
static size_t list_missing(const struct folder_import *fi, const struct pptimer_file *f,
			   struct strbuf *warnings)
{
	size_t nwarn = 0;
	int nch = fi->V < MAX_CHUNKS ? fi->V : MAX_CHUNKS;
	for (size_t i = 0; i < f->n; i++) {
		const struct pptimer_step *s = &f->steps[i];
		if (s->has_start && s->has_end && s->end_ns >= s->start_ns)
			continue;
		if (nwarn++ < 50)
			strbuf_addf(warnings, "%s%s of chunk %d micro-batch %d: %s\n", "",
				    phase_word[s->phase], s->chunk, s->mb,
				    !s->has_start ? "no start event"
				    : !s->has_end ? "no end event"
						  : "ends before it starts");
	}
	/* The steps are sorted by (phase, chunk, mb) (pptimer_read): one merge
	 * pass; gaps are counted, only the first 50 are listed (a dump naming
	 * micro-batch 10^8 must not take 10^8 x steps). */
	size_t at = 0;
	for (int ph = 1; ph <= 2; ph++)
		for (int c = 0; c < nch; c++) {
			int next = 0, count = fi->mb_count[ph][c];
			while (at < f->n && (f->steps[at].phase < ph ||
					     (f->steps[at].phase == ph && f->steps[at].chunk < c)))
				at++;
			for (;; at++) {
				bool here = at < f->n && f->steps[at].phase == ph &&
					    f->steps[at].chunk == c && f->steps[at].mb < count;
				int upto = here ? f->steps[at].mb : count;
				for (int mb = next; mb < upto; mb++) {
					if (nwarn >= 50) { /* count the rest of the gap */
						nwarn += (size_t)(upto - mb);
						break;
					}
					nwarn++;
					strbuf_addf(warnings,
						    "%s of chunk %d micro-batch %d: "
						    "never recorded\n",
						    phase_word[ph], c, mb);
				}
				if (!here)
					break;
				next = f->steps[at].mb + 1;
			}
		}
	if (nwarn > 50)
		strbuf_addf(warnings, "... %zu more missing events\n", nwarn - 50);
	return nwarn;
}

/* Keeps f's complete steps, in time order per phase; returns how many. */
static size_t keep_complete(struct pptimer_file *f)
{
	size_t kept = 0;
	for (size_t i = 0; i < f->n; i++)
		if (f->steps[i].has_start && f->steps[i].has_end &&
		    f->steps[i].end_ns >= f->steps[i].start_ns)
			f->steps[kept++] = f->steps[i];
	f->n = kept;
	qsort(f->steps, f->n, sizeof(*f->steps), cmp_step_time);
	return kept;
}

/* t's rank metrics over f's steps: each is a forward or backward step's
 * computation, a named category, so covered (docs/ppsim.md). */
static void set_metrics(struct db_trace *t, const struct pptimer_file *f)
{
	struct rm_interval *iv = xmalloc((f->n + 1) * sizeof(*iv));
	struct rank_result m = { 0 };
	for (size_t i = 0; i < f->n; i++)
		iv[i] = (struct rm_interval){ f->steps[i].start_ns, f->steps[i].end_ns,
					      RM_COMP | RM_COVERED };
	rank_metrics_totals(iv, f->n, &m);
	free(iv);
	db_trace_set_metrics(t, &m);
}

/* Stores t and f's steps (seq in time order per phase) and its reading
 * (stage, total-execution-time) in one transaction; on failure nothing is
 * stored and the error does not stick. */
static int store_steps(struct db *db, const struct db_trace *t, const struct pptimer_file *f,
		       int vpp, int stage)
{
	struct db_reading rd = {
		.path = t->path, .stage = stage, .has_total = f->has_total, .total_ns = f->total_ns
	};
	int rc = db_trace_begin(db, t);
	if (!rc)
		rc = db_reading_add(db, &rd);
	int64_t seq[3] = { 0, 0, 0 };
	for (size_t i = 0; i < f->n && !rc; i++) {
		const struct pptimer_step *s = &f->steps[i];
		struct db_step ds = {
			.phase = s->phase == 1 ? RR_FWD : RR_BWD,
			.seq = seq[s->phase]++,
			.has_times = true,
			.start_ns = s->start_ns,
			.end_ns = s->end_ns,
			.comp_ns = s->end_ns - s->start_ns,
			.chunk = vpp > 1 ? s->chunk : -1,
			.mbs = s->mb,
		};
		rc = db_trace_add_step(db, &ds);
	}
	rc = rc ? rc : db_trace_commit(db);
	if (rc)
		db_trace_rollback(db); /* the error must not stick to the next rank */
	return rc;
}

/*   missing events listed → complete steps kept → metrics → the trace with
 *   its steps (partial when events are missing), or failed without any */
static int store_rank(struct folder_import *fi, struct stage_file *sf, int *partial)
{
	struct pptimer_file *f = &sf->data;
	struct strbuf warnings = STRBUF_INIT;
	size_t nwarn = list_missing(fi, f, &warnings);
	size_t kept = keep_complete(f);
	int rc;

	struct db_trace t = stage_row(fi, sf);
	t.status = nwarn ? DB_STATUS_PARTIAL : DB_STATUS_OK;
	t.warnings = warnings.len ? warnings.buf : NULL;
	t.mode = DB_MODE_MEGATRON;
	t.events = (int64_t)(2 * kept + (size_t)f->has_total);
	t.role_rule = "pp-timer";
	set_metrics(&t, f);
	if (!f->n) {
		t.status = DB_STATUS_FAILED;
		t.fail_kind = DB_FAIL_INPUT;
		t.error = "no complete forward or backward step in the dump";
		rc = db_trace_store_empty(fi->db, &t);
	} else {
		*partial += nwarn > 0;
		rc = store_steps(fi->db, &t, f, fi->V, sf->name.pp_rank);
	}
	if (nwarn && !fi->o->quiet)
		warn("%s: %zu missing event%s (stage %d, rank %lld): %.*s", sf->wf->path, nwarn,
		     nwarn == 1 ? "" : "s", sf->name.pp_rank, (long long)sf->name.rank,
		     (int)strcspn(warnings.buf, "\n"), warnings.buf);
	strbuf_release(&warnings);
	return rc;
}

/* Whether the file wf of the folder is one of its pipeline's stages,
 * taken as fi->sf[its stage]; when it is not, why (empty) says so. */
static bool pick_file(struct folder_import *fi, const struct walk_file *wf, struct strbuf *why)
{
	const char *base = strrchr(wf->path, '/');
	struct pptimer_name nm;
	base = base ? base + 1 : wf->path;
	if (wf->error)
		strbuf_addstr(why, wf->error);
	else if (pptimer_parse_name(base, &nm, why))
		;
	else if (nm.pp != fi->P)
		strbuf_addf(why, "PP size %d in the name, --pp-size is %d", nm.pp, fi->P);
	else if (nm.vpp != fi->V)
		strbuf_addf(why, "VPP %d%s in the name, --vpp-size is %d", nm.vpp,
			    nm.vpp_none ? " (None)" : "", fi->V);
	else if (nm.dp_rank != 0)
		strbuf_addf(why,
			    "TPxCPxDP rank %lld: a replica of pipeline stage %d "
			    "(only rank 0 files describe distinct pipelines)",
			    (long long)nm.dp_rank, nm.pp_rank);
	else if (fi->sf[nm.pp_rank].wf)
		strbuf_addf(why, "a second file for pp_rank %d (kept %s)", nm.pp_rank,
			    fi->sf[nm.pp_rank].wf->path);
	else {
		fi->sf[nm.pp_rank].wf = wf;
		fi->sf[nm.pp_rank].name = nm;
		return true;
	}
	return false;
}

/* Reads stage s's dump and counts its micro-batches into fi->mb_count. A
 * dump that cannot be read is stored as failed (counts->failed). 0, or
 * PP_EDB when even that cannot be stored. */
static int read_stage(struct folder_import *fi, int s, struct import_counts *counts)
{
	struct stage_file *sf = &fi->sf[s];
	struct strbuf why = STRBUF_INIT; /* the row's error, and fi->err's */
	if (pptimer_read(sf->wf->path, fi->V > 1, &sf->data, &why)) {
		pp_err(fi->err, PP_EPARSE, "%s", why.buf);
		struct db_trace t = stage_row(fi, sf);
		t.status = DB_STATUS_FAILED;
		t.fail_kind = DB_FAIL_INPUT;
		t.error = why.buf;
		counts->failed++;
		sf->wf = NULL;
		int rc = db_trace_store_empty(fi->db, &t);
		strbuf_release(&why);
		return rc;
	}
	sf->loaded = true;
	if (sf->data.unknown_keys && !fi->o->quiet)
		warn("%s: %zu key%s not understood (first: '%s')%s", sf->wf->path,
		     sf->data.unknown_keys, sf->data.unknown_keys == 1 ? "" : "s",
		     sf->data.first_unknown, fi->V > 1 ? "" : "; is this a VPP dump (--vpp-size)?");
	for (size_t i = 0; i < sf->data.n; i++) {
		const struct pptimer_step *st = &sf->data.steps[i];
		if (st->chunk < MAX_CHUNKS && st->mb + 1 > fi->mb_count[st->phase][st->chunk])
			fi->mb_count[st->phase][st->chunk] = st->mb + 1;
	}
	return 0;
}

/* Imports the files [lo, hi) of one folder:
 *   one file per stage picked (the others listed with why) → the dumps read,
 *   the micro-batches of every chunk counted → each rank stored */
static int import_folder(struct db *db, const struct pptimer_opts *o, const struct walk_list *l,
			 size_t lo, size_t hi, struct import_counts *counts, struct strbuf *err)
{
	struct folder_import fi = { .db = db,
				    .o = o,
				    .err = err,
				    .P = o->pp_size,
				    .V = o->vpp_size > 0 ? o->vpp_size : 1,
				    .folder = l->v[lo].folder };
	struct strbuf why = STRBUF_INIT;
	int rc = 0;

	fi.sf = xcalloc((size_t)fi.P, sizeof(*fi.sf));
	if (!walk_iteration_from_folder(fi.folder, &fi.iteration) && !o->quiet)
		printf("%s: no iteration number in the folder name; stored as iteration 0\n",
		       fi.folder);
	for (size_t i = lo; i < hi; i++) {
		strbuf_reset(&why);
		if (pick_file(&fi, &l->v[i], &why))
			continue;
		counts->skipped++;
		if (!o->quiet)
			printf("skipped %s: %s\n", l->v[i].path, why.buf);
	}
	strbuf_release(&why);
	for (int s = 0; s < fi.P && !rc; s++) {
		if (fi.sf[s].wf) {
			rc = read_stage(&fi, s, counts);
			continue;
		}
		if (!o->quiet)
			printf("%s: no dump for pp_rank %d\n", fi.folder, s);
		counts->partial++;
	}
	/* forward and backward cover the same micro-batches */
	for (int c = 0; c < MAX_CHUNKS; c++) {
		int m = fi.mb_count[1][c] > fi.mb_count[2][c] ? fi.mb_count[1][c]
							      : fi.mb_count[2][c];
		fi.mb_count[1][c] = fi.mb_count[2][c] = c < fi.V ? m : 0;
		if (c < fi.V && m > counts->microbatches)
			counts->microbatches = m;
	}
	for (int s = 0; s < fi.P && !rc; s++) {
		if (!fi.sf[s].loaded)
			continue;
		rc = store_rank(&fi, &fi.sf[s], &counts->partial);
		if (rc)
			pp_err(err, PP_EDB, "%s: cannot store: %s", fi.sf[s].wf->path,
			       db_errmsg(db));
		else
			counts->ranks++;
	}
	for (int s = 0; s < fi.P; s++)
		pptimer_file_release(&fi.sf[s].data);
	free(fi.sf);
	return rc;
}

/* The import's sizes (storage/db_import.h), for ppagg's topology and VPP:
 * its identity is the canonical --input. 0 or PP_EDB. */
static int record_import(struct db *db, const struct pptimer_opts *o, int microbatches)
{
	char *real = realpath(o->input, NULL);
	int64_t removed;
	struct db_import imp = {
		.path = real ? real : o->input,
		.format = "pp-timer",
		.pp_size = o->pp_size,
		.vpp_size = o->vpp_size > 0 ? o->vpp_size : 1,
		.microbatches = microbatches,
		.num_layers = o->layers,
	};
	int rc = db_import_record(db, &imp, false, &removed);
	free(real);
	return rc;
}

int pptimer_run(const struct pptimer_opts *o, struct strbuf *err)
{
	struct walk_opts wo = { o->input, o->folders, o->nfolders, "*.json" };
	struct walk_list l = { 0 };
	struct strbuf dbpath = STRBUF_INIT;
	struct db *db = NULL;
	struct import_counts n = { 0 };
	int rc = PP_EXIT_OK;

	if (walk_dir(&wo, &l, err))
		return PP_EXIT_FATAL;
	if (o->db)
		strbuf_addstr(&dbpath, o->db);
	else
		strbuf_addf(&dbpath, "%s/pptrace.db", o->input);
	db = db_open(dbpath.buf, 0, 0, err);
	if (!db) {
		rc = PP_EXIT_FATAL;
		goto out;
	}
	for (size_t lo = 0, hi; lo < l.n; lo = hi) {
		for (hi = lo + 1; hi < l.n && !strcmp(l.v[hi].folder, l.v[lo].folder); hi++)
			;
		if (import_folder(db, o, &l, lo, hi, &n, err)) {
			rc = PP_EXIT_FATAL;
			goto out;
		}
	}
	if (n.ranks && record_import(db, o, n.microbatches)) {
		pp_err(err, PP_EDB, "cannot record the import: %s", db_errmsg(db));
		rc = PP_EXIT_FATAL;
		goto out;
	}
	if (!o->quiet)
		printf("pp-timer: %d rank%s imported (%d with missing events, %d failed), "
		       "%d file%s skipped, into %s\n",
		       n.ranks, n.ranks == 1 ? "" : "s", n.partial, n.failed, n.skipped,
		       n.skipped == 1 ? "" : "s", dbpath.buf);
	if (!n.ranks) {
		pp_err(err, PP_ENOTFOUND, "no PP-timer dump of PP size %d found under '%s'",
		       o->pp_size, o->input);
		rc = PP_EXIT_FATAL;
	} else if (n.partial || n.failed) {
		rc = PP_EXIT_PARTIAL;
	}
out:
	db_close(db);
	walk_list_release(&l);
	strbuf_release(&dbpath);
	return rc;
}
