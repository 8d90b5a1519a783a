/* agg.c — agg_analyse(), the sequence of ppagg's data layer (agg.h):
 *
 *   open db → iterations → load them → topology (file → sizes → inferred
 *   → the op trace's workers → none) → the VPP, once (agg.vpp, or the
 *   schedule's when it fits only another: agg_vpp_decide()) → per
 *   iteration: labels, agg_compute, its line on stderr, the overview's
 *   numbers → the render plan (the detailed iterations, then per
 *   iteration what the report shows) → one transaction rewriting
 *   pp_groups/pipelines/stragglers rows → the analyses, in the order of
 *   analyses[] (the user annotations: agg_annot.c; the what-if:
 *   agg_whatif.c; the schedule advisor: agg_advice.c; why the pipeline
 *   waits: agg_why.c; the comparison with a baseline: agg_compare.c), each
 *   storing its own rows.
 *
 * Missing ranks, failed ranks, rank conflicts and a missing topology
 * degrade the job (job->partial for missing, failed or conflicting
 * inputs); they never stop it. Every other failure stops it with a message.
 */
#include "agg_int.h"

#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agg_timeline.h"
#include "storage/db.h"
#include "util/config.h"
#include "util/pp.h"

/* One run of agg_analyse(). */
struct run {
	const struct agg_opts *o;
	struct agg_job *job;
	struct strbuf *err; /* agg_analyse()'s */
	int *iters;         /* the iterations' numbers, ascending */
	int niters;
	int import_vpp; /* the VPP a PP-timer or Primus import records, 0 none */
};

static char *path_join(const char *a, const char *b)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s/%s", a, b);
	return strbuf_detach(&sb, NULL);
}

/* Each line of notes on stderr: a warning "<what>: <line>", or a note
 * "<prog>: <what>: note: <line>". */
static void print_notes(const char *what, const char *notes, bool warning)
{
	for (const char *p = notes; *p;) {
		int n = (int)strcspn(p, "\n");
		if (warning)
			warn("%s: %.*s", what, n, p);
		else
			fprintf(stderr, "%s: %s: note: %.*s\n", pp_progname(), what, n, p);
		p += n + (p[n] == '\n');
	}
}

/* A failed library call into R->err: the database's message for PP_EDB,
 * else pp_strerror(rc). Returns rc. */
static int db_error(const struct run *R, int rc)
{
	return pp_err(R->err, rc, "%s", rc == PP_EDB ? db_errmsg(R->job->db) : pp_strerror(rc));
}

/* The topology file comes before the sizes (docs/ppagg.md "Topology"): sizes
 * given on the command line or in [agg] that disagree with it are ignored,
 * and said so rather than silently. */
static void sizes_overridden(const struct agg_opts *o, const struct topology *t)
{
	const char *name[] = { "tp", "pp", "dp", "cp", "ep" };
	int given[] = { o->tp, o->pp, o->dp, o->cp, o->ep };
	int file[] = { t->tp, t->pp, t->dp, t->cp, t->ep };
	struct strbuf g = STRBUF_INIT, f = STRBUF_INIT;
	for (int i = 0; i < 5; i++)
		if (given[i] > 0 && file[i] > 0 && given[i] != file[i]) {
			strbuf_addf(&g, "%s%s %d", g.len ? ", " : "", name[i], given[i]);
			strbuf_addf(&f, "%s%s %d", f.len ? ", " : "", name[i], file[i]);
		}
	if (g.len)
		warn("sizes %s (command line or [agg]) ignored: the topology file '%s' says %s "
		     "and comes first; remove the file from the folder to use the sizes",
		     g.buf, t->origin.buf, f.buf);
	strbuf_release(&g);
	strbuf_release(&f);
}

/* docs/semantics.md §7: the file, else sizes, else the sizes and stages a
 * PP-timer or Primus import records, else inference, else the workers an
 * op-trace import records, else none. */
static int find_topology(struct run *R)
{
	const struct agg_opts *o = R->o;
	struct topology *t = &R->job->topo;
	const char **dirs = xcalloc((size_t)R->niters + 1, sizeof(*dirs));
	char **owned = xcalloc((size_t)R->niters + 1, sizeof(*owned));
	dirs[0] = R->job->base;
	for (int i = 0; i < R->niters; i++)
		if (R->job->its[i].folder)
			dirs[i + 1] = owned[i] = path_join(R->job->base, R->job->its[i].folder);
	char *file = topo_find_file(dirs, (size_t)R->niters + 1);
	for (int i = 0; i < R->niters; i++)
		free(owned[i]);
	free(owned);
	free(dirs);
	if (file) {
		int rc = topo_load_file(t, file);
		if (rc) {
			warn("topology file '%s' not usable (%s); trying other sources", file,
			     pp_strerror(rc));
			print_notes("topology", t->notes.buf, true);
			topo_release(t);
		}
		free(file);
	}
	if (t->source == TOPO_SRC_FILE)
		sizes_overridden(o, t);
	if (t->source == TOPO_SRC_NONE && o->pp > 0) {
		int tp = o->tp ? o->tp : 1, cp = o->cp ? o->cp : 1, ep = o->ep ? o->ep : 1;
		int dp = o->dp;
		if (!dp) {
			int maxrank = 0;
			for (int i = 0; i < R->niters; i++)
				for (size_t k = 0; k < R->job->its[i].nranks; k++)
					if (R->job->its[i].ranks[k].in.rank > maxrank)
						maxrank = R->job->its[i].ranks[k].in.rank;
			long per = (long)tp * o->pp * cp * ep;
			dp = (int)((maxrank + per) / per);
		}
		int rc = topo_from_sizes(t, tp, o->pp, dp, cp, ep);
		if (rc) {
			return pp_err(R->err, rc,
				      "invalid parallel sizes tp %d pp %d dp %d cp %d ep %d", tp,
				      o->pp, dp, cp, ep);
		}
		strbuf_addf(&t->origin, "sizes given%s, layout tp-cp-ep-dp-pp",
			    o->dp ? "" : " (dp from the highest rank)");
	}
	/* an import's sizes come after the ones given, before inference */
	int irc = agg_import_topology(R->job->db, t, &R->import_vpp);
	if (irc)
		return db_error(R, irc);
	if (t->source == TOPO_SRC_NONE && R->niters) {
		int rc = agg_load_process_groups(R->job->db, R->iters[0], t);
		if (rc)
			return db_error(R, rc);
		rc = topo_infer_finish(t);
		if (rc) {
			topo_release(t);
			topo_init(t);
		}
	}
	if (t->source == TOPO_SRC_NONE && R->niters) {
		int rc = agg_whatif_topology(R->job->db, R->iters, R->niters, t);
		if (rc)
			return db_error(R, rc);
	}
	if (t->source == TOPO_SRC_NONE) {
		warn("no topology: no unique_parallel_groups_*.txt in '%s' or its iteration folders, "
		     "no --pp/--tp/--dp, and the traces carry no process-group ranks; PP groups, "
		     "pipelines and stragglers are skipped (rank charts are still written)",
		     R->job->base);
		return 0;
	}
	if (!o->quiet) {
		fprintf(stderr,
			"%s: topology from %s: %s (tp %d, pp %d, dp %d, cp %d, ep %d, "
			"%zu PP groups, %zu model replicas",
			pp_progname(), topo_source_name(t->source), t->origin.buf, t->tp, t->pp,
			t->dp, t->cp, t->ep, t->groups[TOPO_PP].n, t->groups[TOPO_MODEL].n);
		if (t->global_batch)
			fprintf(stderr, ", global batch size %d", t->global_batch);
		fputs(")\n", stderr);
	}
	print_notes("topology", t->notes.buf, true);
	topo_index(t);
	return 0;
}

static void report_iteration(struct run *R, const struct agg_iter *it)
{
	const struct topology *t = &R->job->topo;
	for (size_t i = 0; i < it->nranks; i++) {
		const struct agg_rank *r = &it->ranks[i];
		if (r->ntraces > 1)
			warn("iteration %d: rank conflict, not aggregated: %s", it->iteration,
			     r->error);
		else if (!r->in.ok)
			warn("iteration %d: rank %d failed: %s", it->iteration, r->in.rank,
			     r->error ? r->error : "(no message)");
	}
	for (size_t i = 0; i < it->nunranked; i++)
		warn("iteration %d: trace without a rank (neither its header nor its file "
		     "name gives one), not aggregated: %s",
		     it->iteration, it->unranked[i]);
	if (it->nconflicts || it->nunranked)
		R->job->partial = 1;
	for (size_t g = 0; g < t->groups[TOPO_PP].n; g++) {
		const struct topo_group *pg = &t->groups[TOPO_PP].v[g];
		struct strbuf miss = STRBUF_INIT;
		int n = agg_group_absent(it, pg->ranks, pg->n, &miss);
		if (n) {
			warn("iteration %d: PP group %zu incomplete, not drawn and no pipeline row; "
			     "rank%s not analysed: %s",
			     it->iteration, g, n > 1 ? "s" : "", miss.buf);
			R->job->partial = 1;
		}
		strbuf_release(&miss);
	}
	if (R->o->quiet)
		return;
	int64_t worst = -1;
	double worst_ratio = 0;
	int worst_g = -1;
	for (size_t p = 0; p < it->res.npipes; p++)
		if (it->res.pipes[p].bubble_ratio > worst_ratio || worst < 0) {
			worst = it->res.pipes[p].measured;
			worst_ratio = it->res.pipes[p].bubble_ratio;
			worst_g = it->res.pipes[p].pp_group;
		}
	fprintf(stderr, "%s: iteration %d: %d rank%s ok, %d failed", pp_progname(), it->iteration,
		it->nok, it->nok == 1 ? "" : "s", it->nfailed);
	if (it->nconflicts)
		fprintf(stderr, ", %d in conflict", it->nconflicts);
	fprintf(stderr, ", %zu pipeline%s", it->res.npipes, it->res.npipes == 1 ? "" : "s");
	if (worst_g >= 0)
		fprintf(stderr, ", largest bubble %.1f %% in PP group %d (%.3f ms)",
			100 * worst_ratio, worst_g, (double)worst / 1e6);
	if (agg_strag_not_computed(it))
		fprintf(stderr, ", stragglers not computed (%s)", AGG_STRAG_NA);
	else
		fprintf(stderr, ", %zu straggler%s", it->res.nstrag,
			it->res.nstrag == 1 ? "" : "s");
	for (size_t s = 0; s < it->res.nstrag; s++)
		fprintf(stderr, "%s rank %d (+%.1f %%)", s ? "," : ":", it->res.strag[s].rank,
			100 * it->res.strag[s].excess);
	fputc('\n', stderr);
}

char *agg_base_folder(const struct agg_opts *o)
{
	if (o->base && !o->input)
		return xstrdup(o->base);
	char *a = xstrdup(o->input ? o->input : o->db);
	char *base = xstrdup(dirname(a));
	free(a);
	return base;
}

static void resolve_paths(struct run *R)
{
	const struct agg_opts *o = R->o;
	R->job->base = agg_base_folder(o);
	R->job->db_path = o->db ? xstrdup(o->db) : path_join(R->job->base, "pptrace.db");
}

static char *input_name(const struct agg_opts *o)
{
	char *a = xstrdup(o->input);
	size_t n = strlen(a);
	while (n > 1 && a[n - 1] == '/')
		a[--n] = '\0';
	char *name = xstrdup(basename(a));
	free(a);
	return name;
}

/* Whether dir holds a pptrace.db: then --input was given the folder
 * ppbatch took as its own --input, whose database --input's parent lacks. */
static bool holds_db(const char *dir)
{
	char *db = path_join(dir, "pptrace.db");
	bool yes = access(db, F_OK) == 0;
	free(db);
	return yes;
}

/* Whether dir holds trace files itself: ppbatch then took it as one
 * iteration folder, so its pptrace.db is that iteration's database
 * (docs/ppbatch.md: `--input run42/iteration_15` works). */
static bool holds_traces(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool yes = false;
	while (d && !yes && (e = readdir(d)))
		yes = e->d_name[0] != '.' && strstr(e->d_name, ".json");
	if (d)
		closedir(d);
	return yes;
}

/* Nothing matched: say what the database holds, so that a mistyped
 * --iterations or --input is put right in one step. */
static void no_iteration(const struct run *R)
{
	int *all = NULL, nall = 0, missing = 0;
	struct strbuf sb = STRBUF_INIT;
	if ((R->o->niterations || R->o->input) &&
	    !agg_load_iterations(R->job->db, NULL, 0, &all, &nall, &missing) && nall) {
		strbuf_addstr(&sb, ": it holds iteration");
		strbuf_addstr(&sb, nall > 1 ? "s " : " ");
		for (int i = 0; i < nall && i < 10; i++)
			strbuf_addf(&sb, "%s%d", i ? ", " : "", all[i]);
		if (nall > 10)
			strbuf_addf(&sb, ", ... (%d in all)", nall);
	}
	pp_err(R->err, PP_ENOTFOUND, "no iteration to aggregate in '%s'%s", R->job->db_path,
	       sb.buf);
	free(all);
	strbuf_release(&sb);
}

/* Opens the database and loads the selected iterations. */
static int load(struct run *R)
{
	const struct agg_opts *o = R->o;
	char *inname = NULL;
	int rc, nmissing = 0;
	struct strbuf err = STRBUF_INIT;
	R->job->db = db_open(R->job->db_path, DB_EXISTING, 30000, &err);
	if (!R->job->db) {
		bool own_db = o->input && !o->db && holds_db(o->input);
		if (own_db && holds_traces(o->input))
			pp_err(R->err, PP_EDB,
			       "--input '%s' holds its own pptrace.db (ppbatch was given this "
			       "iteration folder): use --base-folder '%s' (ppagg's --input reads "
			       "the database of the folder above, '%s')",
			       o->input, o->input, R->job->db_path);
		else if (own_db)
			pp_err(R->err, PP_EDB,
			       "--input '%s' is a base folder (it holds pptrace.db), not an "
			       "iteration folder: use --base-folder '%s', or --input "
			       "'%s/iteration_<n>' (ppbatch's --input is the base folder; ppagg's "
			       "is one iteration)",
			       o->input, o->input, o->input);
		else if (access(R->job->db_path, F_OK) != 0)
			pp_err(R->err, PP_EDB, "%s (run ppbatch first?)", err.buf);
		else /* there, but not one ppagg can use: ppbatch is no answer */
			pp_err(R->err, PP_EDB, "%s", err.buf);
		strbuf_release(&err);
		return PP_EDB;
	}
	/* Ranks as docs/contracts.md §8 decides them, also when the ppbatch
	 * run that stored the traces was stopped before it could. */
	if ((rc = db_resolve_ranks(R->job->db)))
		return db_error(R, rc);
	if (o->input)
		inname = input_name(o);
	rc = agg_load_iterations(R->job->db, inname ? &inname : o->iterations,
				 inname ? 1 : o->niterations, &R->iters, &R->niters, &nmissing);
	free(inname);
	if (rc)
		return db_error(R, rc);
	if (!R->niters) {
		no_iteration(R);
		return PP_ENOTFOUND;
	}
	R->job->partial = nmissing > 0;
	R->job->its = xcalloc((size_t)R->niters, sizeof(*R->job->its));
	R->job->niters = (size_t)R->niters;
	for (int i = 0; i < R->niters; i++)
		if ((rc = agg_load(R->job->db, R->iters[i], &R->job->its[i])))
			return db_error(R, rc);
	return 0;
}

/* The topology file's global batch size against the micro-batches the
 * traces show: each pipeline runs m micro-batches of one size, so
 * global batch = dp * m * size. A mismatch means forward steps are missing
 * or the topology is not the job's. */
static void check_global_batch(const struct run *R, const struct agg_iter *it, int vpp)
{
	const struct topology *t = &R->job->topo;
	int steps = 0;
	if (!t->global_batch || !t->dp)
		return;
	for (size_t i = 0; i < it->nranks; i++)
		if (it->ranks[i].in.ok && it->ranks[i].in.megatron && it->ranks[i].in.nfwd > steps)
			steps = it->ranks[i].in.nfwd;
	int m = steps / vpp;
	if (m > 0 && t->global_batch % ((long)t->dp * m))
		warn("iteration %d: %d micro-batches per pipeline (forward steps) do not divide "
		     "the topology file's global batch size %d over dp %d",
		     it->iteration, m, t->global_batch, t->dp);
}

/* The VPP of the job, decided once from agg.vpp and the schedule
 * (docs/ppagg.md "VPP"); a warning when the two disagree. */
static void decide_vpp(struct run *R)
{
	struct agg_vpp *v = &R->job->vpp;
	bool set = config_get(R->o->config, "agg.vpp") != NULL;
	int cfg = R->o->vpp > 0 ? R->o->vpp : 1;
	if (!set && R->import_vpp > 0) /* agg.vpp comes first, then the import's */
		cfg = R->import_vpp;
	agg_vpp_decide(R->job->its, R->job->niters,
		       R->job->topo.source != TOPO_SRC_NONE ? &R->job->topo : NULL, cfg, v);
	const char *dflt = set                 ? ""
			   : R->import_vpp > 0 ? " (not set: the import's)"
					       : " (not set: the default)";
	if (v->from == AGG_VPP_SCHEDULE)
		warn("vpp: agg.vpp = %d%s overridden by the schedule's vpp %d: %s; step labels, ideal "
		     "pipelines and the what-if use %d",
		     v->cfg, dflt, v->vpp, v->why.buf, v->vpp);
	else if (v->from == AGG_VPP_AMBIGUOUS || v->from == AGG_VPP_NO_FIT)
		warn("vpp: the schedule does not settle the virtual pipeline size: %s; agg.vpp = "
		     "%d%s is used everywhere",
		     v->why.buf, v->cfg, dflt);
}

/* What --charts names that the job lacks: said, never fatal (the rest of
 * the report is written). */
static void charts_absent(const struct run *R)
{
	const struct agg_charts *c = &R->o->charts;
	const struct topology *t = &R->job->topo;
	struct strbuf sb = STRBUF_INIT;
	for (int k = 0; k < c->niterations; k++) {
		bool found = false;
		for (size_t i = 0; i < R->job->niters && !found; i++)
			found = R->job->its[i].iteration == c->iterations[k];
		if (!found)
			strbuf_addf(&sb, "%siteration=%d", sb.len ? ", " : "", c->iterations[k]);
	}
	for (int k = 0; k < c->nranks; k++) {
		bool found = false;
		for (size_t i = 0; i < R->job->niters && !found; i++)
			found = agg_iter_rank(&R->job->its[i], c->ranks[k]) != NULL;
		if (!found)
			strbuf_addf(&sb, "%srank=%d", sb.len ? ", " : "", c->ranks[k]);
	}
	for (int k = 0; k < c->ngroups; k++)
		if ((size_t)c->groups[k] >= t->groups[TOPO_PP].n)
			strbuf_addf(&sb, "%sgroup=%d", sb.len ? ", " : "", c->groups[k]);
	for (int k = 0; k < c->nreplicas; k++)
		if ((size_t)c->replicas[k] >= t->groups[TOPO_MODEL].n)
			strbuf_addf(&sb, "%sreplica=%d", sb.len ? ", " : "", c->replicas[k]);
	if (sb.len)
		warn("--charts %s: not in the aggregated iterations or the topology; nothing to "
		     "draw",
		     sb.buf);
	strbuf_release(&sb);
}

/* The render plan: the iterations the report details, then per iteration
 * the charts it shows (docs/ppagg.md "What the report shows"). */
static void plan(struct run *R)
{
	const struct agg_opts *o = R->o;
	struct agg_job *job = R->job;
	size_t ndetailed = 0;
	agg_plan_iterations(job->its, job->niters, &o->charts,
			    o->charts.all || o->rank_charts == AGG_RC_ALL);
	for (size_t i = 0; i < job->niters; i++)
		ndetailed += job->its[i].plan.detail != 0;
	for (size_t i = 0; i < job->niters; i++)
		agg_plan_compute(&job->its[i], &job->topo, o, ndetailed);
	charts_absent(R);
}

/* Labels, computes and reports every iteration and its overview, plans
 * the report, then stores ppagg's rows. */
static int compute(struct run *R)
{
	const struct agg_opts *o = R->o;
	const struct topology *t = &R->job->topo;
	decide_vpp(R);
	struct agg_params params = { o->threshold, R->job->vpp.vpp, R->job->vpp.warmup };
	int rc;
	for (int i = 0; i < R->niters; i++) {
		struct agg_iter *it = &R->job->its[i];
		if (t->source != TOPO_SRC_NONE) {
			agg_label_steps(it, t->pp, params.vpp);
			struct agg_rank_in *in = xmalloc((it->nranks + 1) * sizeof(*in));
			for (size_t k = 0; k < it->nranks; k++)
				in[k] = it->ranks[k].in;
			agg_compute(t, in, it->nranks, &params, &it->res);
			free(in);
			check_global_batch(R, it, params.vpp);
		}
		if (it->nfailed)
			R->job->partial = 1;
		report_iteration(R, it);
		agg_overview_compute(it, t, o->charts.ranks, o->charts.nranks);
	}
	plan(R);
	if (o->mode == AGG_FULL && (rc = agg_store(R->job->db, R->job->its, (size_t)R->niters)))
		return db_error(R, rc);
	return 0;
}

/* The what-if analysis (agg_whatif.h): one line when it cannot be made. */
static int whatif(struct run *R)
{
	struct agg_job *job = R->job;
	struct agg_whatif *w = &job->whatif;
	int rc = agg_whatif_run(job->db, job->its, job->niters, &job->topo, job->vpp.vpp,
				job->vpp.rule, R->o->threshold, w);
	if (rc)
		return db_error(R, rc);
	if (w->state == AGG_WI_INCOMPLETE || w->state == AGG_WI_REJECTED) {
		/* An op trace was imported for this; the ops of Kineto traces
		 * come with every run, whose other outputs stand. */
		warn("what-if: not computed: %s", w->why.buf);
		R->job->partial |= !w->kineto;
	} else if (w->state == AGG_WI_NO_OPS && !R->o->quiet) {
		fprintf(stderr, "%s: what-if: no ops in these iterations: %s\n", pp_progname(),
			AGG_WI_OPS_FROM);
	}
	if (!R->o->quiet)
		print_notes("what-if", w->notes.buf, false);
	return 0;
}

/* The schedule advisor (agg_advice.h): its calibration and best option on
 * stderr, or why there is none. */
static int advise(struct run *R)
{
	struct agg_job *job = R->job;
	struct agg_advice *a = &job->advice;
	int rc = agg_advice_run(job->db, job->its, job->niters, &job->topo, job->vpp.vpp,
				job->vpp.warmup, R->o->advise, R->o->mode != AGG_ADVISE_ONLY, a);
	if (rc)
		return db_error(R, rc);
	if (a->state == AGG_ADV_FAILED)
		warn("advice: not computed: %s", a->why.buf);
	if (R->o->quiet)
		return 0;
	if (a->state == AGG_ADV_NONE) {
		fprintf(stderr, "%s: advice: note: %s\n", pp_progname(), a->why.buf);
		return 0;
	}
	if (a->state != AGG_ADV_DONE)
		return 0;
	const struct advise_result *r = &a->res;
	fprintf(stderr,
		"%s: advice: calibration %+.2f %% (replay %.1f ms against the measured %.1f "
		"ms)%s",
		pp_progname(), 100 * r->calibration_error, r->rows[0].step_ns / 1e6,
		r->measured_step_ns / 1e6, r->calibrated ? "" : ": answers not ranked");
	if (r->best >= 0) {
		struct strbuf sb = STRBUF_INIT;
		agg_advice_label(a, &r->rows[r->best], &sb);
		fprintf(stderr, "; best: %s, %.1f ms (%+.1f %%)", sb.buf,
			r->rows[r->best].step_ns / 1e6, 100 * r->rows[r->best].delta);
		strbuf_release(&sb);
	}
	fprintf(stderr, "; advised in %.3f s\n", a->seconds);
	return 0;
}

/* Why the pipeline waits (agg_why.h), on the what-if analysis' engine for
 * the critical path: one line for what could not be analysed, one with
 * what was found. */
static int why(struct run *R)
{
	struct agg_job *job = R->job;
	struct agg_why *w = &job->why;
	const struct agg_whatif *wi = &job->whatif;
	struct strbuf sb = STRBUF_INIT;
	if (wi->state == AGG_WI_NO_OPS)
		strbuf_addstr(&sb, "no ops, so no what-if model to walk");
	else if (wi->state != AGG_WI_DONE)
		strbuf_addf(&sb, "the what-if analysis was not made: %s", wi->why.buf);
	job->timelines = xcalloc(job->niters + 1, sizeof(*job->timelines));
	int rc = agg_why_run(job->db, job->its, job->niters, &job->topo, job->vpp.vpp, wi->engine,
			     sb.buf, R->o->why_rows, job->timelines, w);
	strbuf_reset(&sb);
	if (rc) {
		strbuf_release(&sb);
		return db_error(R, rc);
	}
	agg_why_incomplete(w, &sb);
	if (w->state == AGG_WHY_NONE && !R->o->quiet)
		fprintf(stderr, "%s: why: not analysed: %s\n", pp_progname(), w->why.buf);
	else if (sb.len)
		warn("why: incomplete: %s%s%s", sb.buf,
		     w->path.nsteps ? "" : "; no critical path: ",
		     w->path.nsteps ? "" : w->no_path.buf);
	if (w->state == AGG_WHY_DONE && !R->o->quiet) {
		fprintf(stderr,
			"%s: why: %zu pipeline transfers in %zu p2p kernels, %zu collective "
			"instances of %zu groups, ",
			pp_progname(), w->r.np2p, w->r.nkernels, w->r.ncolls, w->ngroups);
		if (w->path.nsteps)
			fprintf(stderr, "the critical path of %zu step%s", w->path.nsteps,
				w->path.nsteps == 1 ? "" : "s");
		else if (!sb.len)
			fprintf(stderr, "no critical path (%s)", w->no_path.buf);
		else
			fputs("no critical path", stderr);
		fprintf(stderr, "; %.2f s (CPU %.2f s)\n", w->seconds, w->cpu_seconds);
	}
	strbuf_release(&sb);
	return 0;
}

/* The comparison with a baseline (agg_compare.h): its sentence, or why it
 * could not be made (the run is then partial); without --compare it only
 * records the job's shape and empties the comparison's views. */
static int compare(struct run *R)
{
	struct agg_job *job = R->job;
	struct agg_compare *c = &job->compare;
	int rc = agg_compare_run(job->db, job->db_path, job->its, job->niters,
				 job->topo.source != TOPO_SRC_NONE ? &job->topo : NULL, &job->vpp,
				 &R->o->compare, c);
	if (rc)
		return db_error(R, rc);
	if (c->state == AGG_CMP_FAILED) {
		warn("compare: not compared: %s", c->why.buf);
		job->partial = true;
	} else if (c->state == AGG_CMP_DONE) {
		if (!R->o->quiet || c->r.regression)
			fprintf(stderr, "%s: compared with %s (iterations %s): %s\n", pp_progname(),
				c->baseline, c->base_iters.buf, c->r.sentence.buf);
		if (!R->o->quiet)
			print_notes("compare", c->r.missing.buf, false);
		if (c->r.regression)
			warn("compare: regression: the step time grew %.1f %% (noise %.1f %%, "
			     "threshold %.1f %%, compare.regression_threshold)",
			     100 * c->r.metric[CMP_STEP].change, 100 * c->r.metric[CMP_STEP].noise,
			     100 * c->params.threshold);
	}
	return 0;
}

/* The table of user annotations (agg_annot.h): its line on stderr. */
static int annotations(struct run *R)
{
	struct agg_job *job = R->job;
	struct agg_annot *a = &job->annot;
	int rc = agg_annot_run(job->db, job->its, job->niters, &job->topo, a);
	if (rc)
		return db_error(R, rc);
	if (!R->o->quiet && a->nnames)
		fprintf(stderr, "%s: annotations: %zu names with GPU time\n", pp_progname(),
			a->nnames);
	return 0;
}

/* The analyses that run after the numbers, in this order: each reads its
 * rows through storage, runs its engine, stores its rows, fills its member
 * of struct agg_job and says on stderr what it found (docs/architecture.md,
 * "Adding an analysis to ppagg"). Each returns 0, or a negative PP_E* code
 * with why in R->err, which stops ppagg. */
static int (*const analyses[])(struct run *R) = {
	annotations, whatif, advise, why, compare,
};

/* ppsim --from-db (AGG_ADVISE_ONLY): the schedule advisor alone. */
static int (*const advise_alone[])(struct run *R) = { advise };

int agg_analyse(const struct agg_opts *o, struct agg_job *job, struct strbuf *err)
{
	struct run R = { .o = o, .job = job, .err = err };
	memset(job, 0, sizeof(*job));
	job->started_ns = pp_now_ns();
	job->threshold = o->threshold;
	job->mode = o->mode;
	topo_init(&job->topo);
	strbuf_init(&job->vpp.why, 0);
	agg_whatif_init(&job->whatif);
	agg_why_init(&job->why);
	agg_compare_init(&job->compare);
	agg_advice_init(&job->advice);
	agg_annot_init(&job->annot);
	resolve_paths(&R);
	int rc = load(&R);
	if (!rc)
		rc = find_topology(&R);
	if (!rc)
		rc = compute(&R);
	int (*const *todo)(struct run *) = o->mode == AGG_ADVISE_ONLY ? advise_alone : analyses;
	size_t ntodo = o->mode == AGG_ADVISE_ONLY   ? sizeof(advise_alone) / sizeof(advise_alone[0])
		       : o->mode == AGG_CHARTS_ONLY ? 0
						    : sizeof(analyses) / sizeof(analyses[0]);
	for (size_t i = 0; !rc && i < ntodo; i++)
		rc = todo[i](&R);
	free(R.iters);
	job->analysed_ns = pp_now_ns();
	return rc;
}

void agg_job_release(struct agg_job *job)
{
	for (size_t i = 0; job->its && i < job->niters; i++)
		agg_iter_release(&job->its[i]);
	free(job->its);
	topo_release(&job->topo);
	strbuf_release(&job->vpp.why);
	agg_whatif_release(&job->whatif);
	agg_why_release(&job->why);
	for (size_t i = 0; job->timelines && i < job->niters; i++)
		agg_timeline_release(&job->timelines[i]);
	free(job->timelines);
	agg_compare_release(&job->compare);
	agg_advice_release(&job->advice);
	agg_annot_release(&job->annot);
	db_close(job->db);
	free(job->base);
	free(job->db_path);
	memset(job, 0, sizeof(*job));
}
