/* agg_compare.c — ppagg's comparison with a baseline, see agg_compare.h:
 *
 *   this run's shape → (with a baseline) the baseline opened read-only,
 *   what its version holds (db_cmp_caps) → its iterations (--compare-
 *   iterations, else those it aggregated, else all) → both runs read the
 *   same way (load_run: pipelines, categories, steps, ops, process groups,
 *   placement, the what-if) → cmp_compare() → one transaction: the shape
 *   and the comparison's rows, deleted and written again.
 */
#include "agg_compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agg_iter.h"
#include "agg_vpp.h"
#include "model/rank_result.h"
#include "storage/db_compare.h"
#include "storage/db_agg.h"
#include "topology.h"
#include "util/cmp.h"
#include "util/pp.h"

void agg_compare_init(struct agg_compare *c)
{
	memset(c, 0, sizeof(*c));
	strbuf_init(&c->why, 0);
	strbuf_init(&c->base_iters, 0);
	strbuf_init(&c->new_iters, 0);
	strbuf_init(&c->r.sentence, 0);
	strbuf_init(&c->r.missing, 0);
}

void agg_compare_release(struct agg_compare *c)
{
	strbuf_release(&c->why);
	strbuf_release(&c->base_iters);
	strbuf_release(&c->new_iters);
	cmp_result_release(&c->r);
	cmp_keys_release(&c->keys);
	agg_compare_init(c);
}

/* ---- one run, read from its database --------------------------------- */

/* What the loader knows of one rank in one iteration. */
struct rank_it {
	bool present, has_cat;
	int64_t cat_compute; /* fwd + bwd computation busy */
	int64_t nfwd, fwd_ns, bwd_ns;
};

struct load {
	struct cmp_run *run;
	struct cmp_keys *keys;
	size_t iter;
	struct rank_it *info; /* [rank * niters + iter] */
	int nrank;            /* ranks with info: 0 .. nrank-1 */
	int cap;              /* ranks info has room for */
	double step, bubble_sum;
	int npipes;
	/* placement */
	int *stage, *dp, *vpp_of;
	int nplace, capplace, pp, vpp;
};

/* The info of (rank, L->iter); NULL for a negative or absurd rank. */
static struct rank_it *info_of(struct load *L, int64_t rank)
{
	if (rank < 0 || rank > 10000000)
		return NULL;
	if (rank >= L->cap) {
		int cap = L->cap ? L->cap : 64;
		while (cap <= rank)
			cap *= 2;
		size_t per = L->run->niters;
		L->info = xrealloc(L->info, (size_t)cap * per * sizeof(*L->info));
		memset(L->info + (size_t)L->cap * per, 0,
		       (size_t)(cap - L->cap) * per * sizeof(*L->info));
		L->cap = cap;
	}
	if (rank >= L->nrank)
		L->nrank = (int)rank + 1;
	struct rank_it *x = &L->info[(size_t)rank * L->run->niters + L->iter];
	x->present = true;
	return x;
}

static int on_category(void *ctx, int64_t rank, const char *category, int64_t busy_ns)
{
	struct load *L = ctx;
	struct rank_it *x = info_of(L, rank);
	if (!x)
		return 0;
	x->has_cat = true;
	if (!strcmp(category, rr_category_name(RR_FWD_COMP)) ||
	    !strcmp(category, rr_category_name(RR_BWD_COMP)))
		x->cat_compute += busy_ns;
	cmp_run_add(L->run, L->iter, (int)rank, CMP_CATEGORY,
		    cmp_key(L->keys, CMP_CATEGORY, category), busy_ns);
	return 0;
}

static int on_steps(void *ctx, int64_t rank, const char *phase, int64_t steps, int64_t comp_ns)
{
	struct load *L = ctx;
	struct rank_it *x = info_of(L, rank);
	if (!x)
		return 0;
	if (!strcmp(phase, "fwd")) {
		x->nfwd = steps;
		x->fwd_ns = comp_ns;
	} else {
		x->bwd_ns = comp_ns;
	}
	return 0;
}

static int on_op(void *ctx, int64_t rank, const char *optype, int64_t ops, int64_t ns)
{
	struct load *L = ctx;
	(void)ops;
	if (!info_of(L, rank))
		return 0;
	cmp_run_add(L->run, L->iter, (int)rank, CMP_OPTYPE, cmp_key(L->keys, CMP_OPTYPE, optype),
		    ns);
	return 0;
}

/* A process group's kind as compare_groups names it: tp, pp, dp, ep, cp,
 * else its description ("" for none). */
static const char *group_key(const char *desc)
{
	enum rr_pg_kind k = rr_pg_kind_of(desc);
	return k == RR_PG_UNKNOWN ? desc : rr_pg_kind_name(k);
}

static int on_group(void *ctx, int64_t rank, const char *desc, int64_t kernels, int64_t ns)
{
	struct load *L = ctx;
	(void)kernels;
	if (!info_of(L, rank))
		return 0;
	cmp_run_add(L->run, L->iter, (int)rank, CMP_GROUP,
		    cmp_key(L->keys, CMP_GROUP, group_key(desc)), ns);
	return 0;
}

static int on_pipeline(void *ctx, int pp_group, int64_t measured_ns, double bubble_ratio)
{
	struct load *L = ctx;
	(void)pp_group;
	cmp_run_add_pipe(L->run, L->iter, (double)measured_ns, bubble_ratio);
	L->step = (double)measured_ns > L->step ? (double)measured_ns : L->step;
	L->bubble_sum += bubble_ratio;
	L->npipes++;
	return 0;
}

static int on_place(void *ctx, const struct db_cmp_place *p)
{
	struct load *L = ctx;
	if (p->rank < 0 || p->rank > 10000000 || p->stage < 0)
		return 0;
	if (p->rank >= L->capplace) {
		int cap = L->capplace ? L->capplace : 64;
		while (cap <= p->rank)
			cap *= 2;
		L->stage = xrealloc(L->stage, (size_t)cap * sizeof(int));
		L->dp = xrealloc(L->dp, (size_t)cap * sizeof(int));
		for (int r = L->capplace; r < cap; r++)
			L->stage[r] = L->dp[r] = -1;
		L->capplace = cap;
	}
	L->stage[p->rank] = p->stage;
	L->dp[p->rank] = p->dp_rank;
	if (p->rank >= L->nplace)
		L->nplace = (int)p->rank + 1;
	L->pp = p->pp_size > L->pp ? p->pp_size : L->pp;
	L->pp = p->stage + 1 > L->pp ? p->stage + 1 : L->pp;
	L->vpp = p->vpp > L->vpp ? p->vpp : L->vpp;
	return 0;
}

static int on_whatif_step(void *ctx, int64_t iteration, int64_t t_ns, int64_t t_ideal_ns)
{
	struct load *L = ctx;
	int i = cmp_run_iter(L->run, (int)iteration);
	if (i >= 0) {
		L->run->t_ns[i] = (double)t_ns;
		L->run->t_ideal_ns[i] = (double)t_ideal_ns;
		L->run->has_whatif = true;
	}
	return 0;
}

/* The shape the placement gives (an older file, or one ppagg of this
 * version has not recorded yet): pp, vpp, dp, the ranks of a (replica,
 * stage) cell, the ranks. */
static void shape_from_placement(const struct load *L, struct cmp_shape *s)
{
	int ranks = 0, dp = 0;
	for (int r = 0; r < L->nplace; r++)
		if (L->stage[r] >= 0) {
			ranks++;
			dp = L->dp[r] + 1 > dp ? L->dp[r] + 1 : dp;
		}
	s->pp = L->pp;
	s->vpp = L->vpp > 0 ? L->vpp : 0;
	s->ranks = ranks;
	s->dp = dp;
	s->tp = dp && L->pp && ranks % (dp * L->pp) == 0 ? ranks / (dp * L->pp) : 0;
	s->split = false;
}

/* Micro-batches per pipeline: the lower median over the first iteration's
 * ranks of their forward steps, over vpp. */
static int microbatches(const struct load *L, int vpp)
{
	int *v = xmalloc(((size_t)L->nrank + 1) * sizeof(int)), n = 0, mb = 0;
	for (int r = 0; r < L->nrank && vpp > 0; r++) {
		const struct rank_it *x = &L->info[(size_t)r * L->run->niters];
		if (x->present && x->nfwd > 0)
			v[n++] = (int)x->nfwd;
	}
	if (n) {
		qsort(v, (size_t)n, sizeof(int), cmp_int);
		mb = v[(n - 1) / 2] / vpp;
	}
	free(v);
	return mb;
}

/* Reads the run in db (iterations iters[0..n)) into run. shape: the
 * recorded or known shape (NULL: from the file's agg_shape, else its
 * placement). Notes what the file lacks into missing ("the baseline" or
 * "the new run": who). */
static int load_run(struct db *db, const int *iters, size_t n, const struct cmp_shape *shape,
		    struct cmp_keys *keys, struct cmp_run *run, const char *who,
		    struct strbuf *missing)
{
	struct db_cmp_caps caps;
	struct load L = { .run = run, .keys = keys };
	int rc = db_cmp_caps(db, &caps);
	cmp_run_init(run, iters, n);
	for (size_t i = 0; i < n && !rc; i++) {
		L.iter = i;
		L.step = 0;
		L.bubble_sum = 0;
		L.npipes = 0;
		rc = db_cmp_pipelines(db, iters[i], on_pipeline, &L);
		if (!rc && L.npipes) {
			run->step_ns[i] = L.step;
			run->bubble[i] = L.bubble_sum / L.npipes;
		}
		if (!rc)
			rc = db_cmp_categories(db, iters[i], on_category, &L);
		if (!rc)
			rc = db_cmp_steps(db, iters[i], on_steps, &L);
		if (!rc && caps.ops)
			rc = db_cmp_ops(db, iters[i], on_op, &L);
		if (!rc)
			rc = db_cmp_groups(db, iters[i], on_group, &L);
	}
	if (!rc)
		rc = db_cmp_placement(db, &caps, iters[0], on_place, &L);
	bool found = false;
	struct db_cmp_whatif w;
	if (!rc && caps.whatif)
		rc = db_cmp_whatif(db, &w, &found);
	if (!rc && found)
		rc = db_cmp_whatif_steps(db, on_whatif_step, &L);
	struct db_cmp_shape rec;
	bool recorded = false;
	if (!rc && !shape)
		rc = db_cmp_shape(db, &caps, &rec, &recorded);
	if (rc)
		goto out;
	/* the ranks */
	int nrank = L.nrank > L.nplace ? L.nrank : L.nplace;
	cmp_run_ranks(run, nrank);
	for (int r = 0; r < L.nplace; r++)
		run->stage[r] = L.stage[r];
	for (int r = 0; r < L.nrank; r++)
		for (size_t i = 0; i < n; i++) {
			const struct rank_it *x = &L.info[(size_t)r * n + i];
			size_t at = i * (size_t)nrank + (size_t)r;
			if (!x->present)
				continue;
			run->present[at] = 1;
			/* an import stores steps, no kernels: its compute is its
			 * steps' (docs/compare.md) */
			if (!x->has_cat && (x->fwd_ns || x->bwd_ns)) {
				cmp_run_add(
					run, i, r, CMP_CATEGORY,
					cmp_key(keys, CMP_CATEGORY, rr_category_name(RR_FWD_COMP)),
					x->fwd_ns);
				cmp_run_add(
					run, i, r, CMP_CATEGORY,
					cmp_key(keys, CMP_CATEGORY, rr_category_name(RR_BWD_COMP)),
					x->bwd_ns);
			}
			run->compute[at] = x->has_cat ? x->cat_compute : x->fwd_ns + x->bwd_ns;
			run->has_compute[at] = x->has_cat || x->fwd_ns || x->bwd_ns;
		}
	/* the shape */
	if (shape) {
		run->shape = *shape;
	} else if (recorded) {
		run->shape = (struct cmp_shape){ (int)rec.ranks, (int)rec.tp,           (int)rec.cp,
						 (int)rec.ep,    (int)rec.pp,           (int)rec.dp,
						 (int)rec.vpp,   (int)rec.microbatches, true };
	} else {
		shape_from_placement(&L, &run->shape);
		strbuf_addf(missing,
			    "%s: schema version %d records no shape (agg_shape): pp, dp and the "
			    "ranks per cell come from its topology rows%s\n",
			    who, caps.version,
			    caps.topology_size ? "" : ", the VPP and micro-batches are not known");
	}
	if (!run->shape.mb)
		run->shape.mb = microbatches(&L, run->shape.vpp);
	/* the what-if */
	if (found && run->has_whatif) {
		snprintf(run->verdict, sizeof(run->verdict), "%s", w.verdict);
		if (w.first_iteration != iters[0] || w.last_iteration != iters[n - 1] ||
		    w.iterations != (int64_t)n)
			strbuf_addf(
				missing,
				"%s: its what-if analysed iterations %lld-%lld: S is taken from "
				"its steps in the compared iterations, the verdict from all\n",
				who, (long long)w.first_iteration, (long long)w.last_iteration);
	} else if (!caps.whatif) {
		strbuf_addf(missing, "%s: schema version %d has no what-if: S is not compared\n",
			    who, caps.version);
	}
	if (!caps.aggregated)
		strbuf_addf(missing,
			    "%s: not aggregated by ppagg (no pp_groups rows): no step time, bubble "
			    "or stages; run ppagg on it once\n",
			    who);
	if (!caps.ops)
		strbuf_addf(missing, "%s: schema version %d has no ops: op types not compared\n",
			    who, caps.version);
out:
	PP_FREE_ALL(L.info, L.stage, L.dp, L.vpp_of);
	return rc;
}

/* ---- the run's iterations and shape ---------------------------------- */

struct iters {
	int *v;
	size_t n, cap;
};

static int add_iter(void *ctx, int64_t it)
{
	struct iters *I = ctx;
	for (size_t i = 0; i < I->n; i++)
		if (I->v[i] == it)
			return 0;
	PP_GROW(I->v, I->n, I->cap, 16);
	I->v[I->n++] = (int)it;
	return 0;
}

/* The baseline's iterations: those named, else those it aggregated, else
 * every one. */
static int base_iterations(struct db *db, const struct agg_compare_opts *o, struct iters *I,
			   struct strbuf *why)
{
	int rc = 0, found = 0;
	for (int i = 0; i < o->niterations && !rc; i++) {
		rc = db_agg_iterations(db, o->iterations[i], add_iter, I, &found);
		if (!rc && !found)
			strbuf_addf(why, "%s'%s'", why->len ? ", " : "", o->iterations[i]);
	}
	if (!rc && !o->niterations)
		rc = db_cmp_aggregated(db, add_iter, I);
	if (!rc && !o->niterations && !I->n)
		rc = db_agg_iterations(db, NULL, add_iter, I, &found);
	if (I->n)
		qsort(I->v, I->n, sizeof(int), cmp_int);
	return rc;
}

/* This run's shape: its topology's sizes, the VPP it decided and the
 * micro-batches (the lower median over the first iteration's whole ranks
 * of their forward steps, over the VPP: what load_run() finds in a file
 * without agg_shape). */
static struct cmp_shape new_shape(const struct agg_iter *its, size_t n, const struct topology *t,
				  const struct agg_vpp *vpp)
{
	struct cmp_shape s = { 0 };
	if (!t || !t->pp)
		return s;
	s = (struct cmp_shape){ .tp = t->tp ? t->tp : 1,
				.cp = t->cp ? t->cp : 1,
				.ep = t->ep ? t->ep : 1,
				.pp = t->pp,
				.dp = t->dp,
				.vpp = vpp && vpp->vpp > 0 ? vpp->vpp : 1,
				.split = true };
	s.ranks = s.tp * s.cp * s.ep * s.pp * s.dp;
	if (!n)
		return s;
	int *v = xmalloc((its[0].nranks + 1) * sizeof(int)), k = 0;
	for (size_t i = 0; i < its[0].nranks; i++)
		if (agg_rank_whole(&its[0].ranks[i]) && its[0].ranks[i].in.nfwd > 0)
			v[k++] = its[0].ranks[i].in.nfwd;
	if (k) {
		qsort(v, (size_t)k, sizeof(int), cmp_int);
		s.mb = v[(k - 1) / 2] / s.vpp;
	}
	free(v);
	return s;
}

static void list_iters(struct strbuf *sb, const int *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, "%s%d", i ? ", " : "", v[i]);
}

/* Whether a and b name the same file. */
static bool same_file(const char *a, const char *b)
{
	struct stat x, y;
	return a && b && !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* ---- storing --------------------------------------------------------- */

static const char *const metric_name[CMP_NMETRICS] = { "step_ns", "bubble", "whatif_s" };

static void put_judgement(struct db_cmp_summary *row, const struct cmp_judgement *j)
{
	row->base.num = j->base;
	row->new_.num = j->new_;
	row->change = j->change;
	row->noise = j->noise;
	row->noise_from = cmp_from_name(j->from);
	row->flagged = j->from == CMP_FROM_NONE ? -1 : j->flagged;
}

static int store_summary(struct db_cmp_writer *w, const struct cmp_result *r)
{
	int rc = 0;
	for (int m = 0; m < CMP_NMETRICS && !rc; m++) {
		if (!r->has_metric[m])
			continue;
		struct db_cmp_summary row = { .metric = metric_name[m] };
		put_judgement(&row, &r->metric[m]);
		rc = db_cmp_add_summary(w, &row);
	}
	if (!rc && (r->verdict_base[0] || r->verdict_new[0])) {
		bool known = r->verdict_base[0] && r->verdict_new[0];
		bool differ = strcmp(r->verdict_base, r->verdict_new) != 0;
		struct db_cmp_summary row = {
			.metric = "whatif_verdict",
			.base = { r->verdict_base[0] ? r->verdict_base : NULL, NAN, false },
			.new_ = { r->verdict_new[0] ? r->verdict_new : NULL, NAN, false },
			.change = NAN,
			.noise = NAN,
			.flagged = known ? r->verdict_flagged : -1,
			.note = !known    ? "one run has no what-if analysis of these iterations"
				: !differ ? NULL
				: r->verdict_flagged
					? "the verdict changed with S beyond its noise"
					: "the verdict changed but S is within its noise",
		};
		rc = db_cmp_add_summary(w, &row);
	}
	for (size_t i = 0; i < r->nshape && !rc; i++) {
		const struct cmp_shape_row *s = &r->shape[i];
		struct db_cmp_summary row = { .metric = s->name,
					      .base = { NULL, s->base, true },
					      .new_ = { NULL, s->new_, true },
					      .change = NAN,
					      .noise = NAN,
					      .flagged = 1,
					      .note = s->note.buf };
		rc = db_cmp_add_summary(w, &row);
	}
	return rc;
}

static int store(struct db *db, const struct cmp_shape *shape, const struct agg_compare *c)
{
	struct db_cmp_writer *w = db_cmp_begin(db);
	if (!w)
		return PP_EDB;
	struct db_cmp_shape s = { shape->ranks, shape->tp, shape->cp,  shape->ep,
				  shape->pp,    shape->dp, shape->vpp, shape->mb };
	int rc = db_cmp_set_shape(w, &s);
	if (!rc && c->state == AGG_CMP_DONE) {
		const struct cmp_result *r = &c->r;
		struct db_cmp_run run = { .baseline = c->baseline,
					  .baseline_version = c->baseline_version,
					  .base_iterations = c->base_iters.buf,
					  .new_iterations = c->new_iters.buf,
					  .compared_at = (int64_t)time(NULL),
					  .threshold = c->params.threshold,
					  .noise_floor = c->params.floor,
					  .min_share = c->params.min_share,
					  .regression = r->regression,
					  .sentence = r->sentence.buf,
					  .missing = r->missing.len ? r->missing.buf : NULL };
		rc = db_cmp_add_run(w, &run);
		if (!rc)
			rc = store_summary(w, r);
		for (size_t i = 0; i < r->nkeys && !rc; i++) {
			const struct cmp_key_row *k = &r->keys[i];
			struct db_cmp_key row = { .dim = k->dim,
						  .stage = k->stage,
						  .key = c->keys.name[k->dim][k->key],
						  .base_ns = k->j.base,
						  .new_ns = k->j.new_,
						  .change = k->j.change,
						  .noise = k->j.noise,
						  .noise_from = cmp_from_name(k->j.from),
						  .flagged = k->j.flagged };
			rc = db_cmp_add_key(w, &row);
		}
		for (size_t i = 0; i < r->nranks && !rc; i++) {
			const struct cmp_rank_row *k = &r->rank[i];
			/* no file of ours records a rank's host (docs/compare.md) */
			struct db_cmp_rank row = { .rank = k->rank,
						   .stage = k->stage,
						   .host = NULL,
						   .base_ns = k->j.base,
						   .new_ns = k->j.new_,
						   .change = k->j.change,
						   .stage_change = k->stage_change,
						   .deviation = k->deviation,
						   .noise = k->j.noise,
						   .noise_from = cmp_from_name(k->j.from),
						   .flagged = k->j.flagged };
			rc = db_cmp_add_rank(w, &row);
		}
	}
	if (rc) {
		db_cmp_rollback(w);
		return rc;
	}
	return db_cmp_commit(w);
}

/* ---- the whole -------------------------------------------------------- */

/* Opens the baseline, reads both runs and compares them into c; a
 * baseline that cannot be compared leaves AGG_CMP_FAILED and why. Returns
 * PP_EDB only for this run's database. */
static int compare(struct db *db, const char *db_path, const struct agg_iter *its, size_t n,
		   const struct cmp_shape *shape, const struct agg_compare_opts *o,
		   struct agg_compare *c)
{
	struct iters I = { 0 };
	struct cmp_run base, cur;
	struct strbuf missing = STRBUF_INIT, absent = STRBUF_INIT;
	int rc = 0;
	memset(&base, 0, sizeof(base));
	memset(&cur, 0, sizeof(cur));
	c->state = AGG_CMP_FAILED;
	if (same_file(o->baseline, db_path)) {
		strbuf_addf(&c->why, "'%s' is this run's own database: compare with another run's",
			    o->baseline);
		return 0;
	}
	struct strbuf err = STRBUF_INIT;
	struct db *bdb = db_open(o->baseline, DB_READONLY | DB_ANY_VERSION, 30000, &err);
	if (!bdb) {
		strbuf_addstr(&c->why, err.buf);
		strbuf_release(&err);
		return 0;
	}
	struct db_cmp_caps caps;
	int brc = db_cmp_caps(bdb, &caps);
	c->baseline_version = caps.version;
	if (!brc)
		brc = base_iterations(bdb, o, &I, &absent);
	if (!brc && absent.len) {
		strbuf_addf(&c->why, "the baseline '%s' has no iteration %s", o->baseline,
			    absent.buf);
		goto out;
	}
	if (!brc && !I.n) {
		strbuf_addf(&c->why, "the baseline '%s' holds no iteration", o->baseline);
		goto out;
	}
	if (!brc)
		brc = load_run(bdb, I.v, I.n, NULL, &c->keys, &base, "the baseline", &missing);
	if (brc) {
		strbuf_reset(&c->why);
		strbuf_addf(&c->why, "cannot read the baseline '%s': %s", o->baseline,
			    db_errmsg(bdb));
		goto out;
	}
	int *mine = xmalloc((n + 1) * sizeof(int));
	for (size_t i = 0; i < n; i++)
		mine[i] = its[i].iteration;
	rc = load_run(db, mine, n, shape, &c->keys, &cur, "the new run", &missing);
	list_iters(&c->new_iters, mine, n);
	free(mine);
	if (rc)
		goto out;
	list_iters(&c->base_iters, I.v, I.n);
	cmp_result_release(&c->r);
	cmp_compare(&base, &cur, &c->keys, &c->params, &c->r);
	strbuf_addstr(&missing, c->r.missing.buf); /* the files' notes first */
	strbuf_reset(&c->r.missing);
	strbuf_addstr(&c->r.missing, missing.buf);
	c->state = AGG_CMP_DONE;
out:
	cmp_run_release(&base);
	cmp_run_release(&cur);
	strbuf_release(&missing);
	strbuf_release(&absent);
	free(I.v);
	db_close(bdb);
	return rc;
}

int agg_compare_run(struct db *db, const char *db_path, const struct agg_iter *its, size_t n,
		    const struct topology *t, const struct agg_vpp *vpp,
		    const struct agg_compare_opts *o, struct agg_compare *c)
{
	int64_t t0 = pp_now_ns();
	struct cmp_shape shape = new_shape(its, n, t, vpp);
	int rc = 0;
	c->baseline = o->baseline;
	c->params = (struct cmp_params){ .floor = o->noise_floor,
					 .min_share = o->min_share,
					 .threshold = o->threshold,
					 .k = 3 };
	if (o->baseline)
		rc = compare(db, db_path, its, n, &shape, o, c);
	if (!rc)
		rc = store(db, &shape, c);
	c->seconds = (double)(pp_now_ns() - t0) / 1e9;
	return rc;
}
