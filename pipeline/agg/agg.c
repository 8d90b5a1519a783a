/* agg.c — the ppagg driver: resolve iterations and topology, compute and
 * store the metrics, write charts, CSVs and the report, render.
 *
 *   open db → iterations → load them → topology (file → sizes → inferred
 *   → none) → the VPP, once (agg.vpp, or the schedule's when it fits only
 *   another: agg_vpp_decide()) → per iteration: labels, agg_compute, report
 *   → one transaction rewriting pp_groups/pipelines/stragglers rows
 *   → the what-if analysis of the iterations' ops (agg_whatif.c)
 *   → per iteration: load blocks, overview (grid, worst and flagged ranks),
 *     CSVs, chart scripts (each queued with the outputs the render plan
 *     gives it, or none), drop blocks
 *   → render the queued scripts → index.html, iteration pages → summary
 * Missing ranks, failed ranks, rank conflicts and a missing topology degrade
 * the output (and the exit code to 1 for missing, failed or conflicting
 * inputs); they never stop it. Every other failure stops it with a message
 * and exit code 3.
 */
#include "agg_int.h"
#include "agg_whatif.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/rank_result.h"
#include "storage/db.h"
#include "topology.h"
#include "util/config.h"
#include "util/pp.h"
#include "util/safefile.h"

struct run {
	const struct agg_opts *o;
	char *base, *db_path, *out;
	struct db *db;
	struct topology topo;
	int *iters;
	int niters;
	struct agg_iter *its;
	struct agg_jobs jobs;
	int partial;        /* inputs missing, failed or conflicting */
	struct agg_vpp vpp; /* the VPP every part uses (agg_vpp_decide()) */
	struct agg_whatif whatif;
};

static char *path_join(const char *a, const char *b)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s/%s", a, b);
	return strbuf_detach(&sb, NULL);
}

static void print_notes(const struct topology *t)
{
	const char *p = t->notes.buf;
	while (*p) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);
		warn("topology: %.*s", n, p);
		p += n + (nl ? 1 : 0);
	}
}

/* Reports a failed library call: the database's message for PP_EDB, else
 * pp_strerror(rc). */
static int db_error(struct run *R, int rc)
{
	error("%s", rc == PP_EDB ? db_errmsg(R->db) : pp_strerror(rc));
	return rc;
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

/* docs/semantics.md §7: the file, else sizes, else inference, else the
 * workers an op-trace import records, else none. */
static int find_topology(struct run *R)
{
	const struct agg_opts *o = R->o;
	struct topology *t = &R->topo;
	const char **dirs = xcalloc((size_t)R->niters + 1, sizeof(*dirs));
	char **owned = xcalloc((size_t)R->niters + 1, sizeof(*owned));
	dirs[0] = R->base;
	for (int i = 0; i < R->niters; i++)
		if (R->its[i].folder)
			dirs[i + 1] = owned[i] = path_join(R->base, R->its[i].folder);
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
			print_notes(t);
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
				for (size_t k = 0; k < R->its[i].nranks; k++)
					if (R->its[i].ranks[k].in.rank > maxrank)
						maxrank = R->its[i].ranks[k].in.rank;
			long per = (long)tp * o->pp * cp * ep;
			dp = (int)((maxrank + per) / per);
		}
		int rc = topo_from_sizes(t, tp, o->pp, dp, cp, ep);
		if (rc) {
			error("invalid parallel sizes tp %d pp %d dp %d cp %d ep %d", tp, o->pp, dp,
			      cp, ep);
			return rc;
		}
		strbuf_addf(&t->origin, "sizes given%s, layout tp-cp-ep-dp-pp",
			    o->dp ? "" : " (dp from the highest rank)");
	}
	if (t->source == TOPO_SRC_NONE && R->niters) {
		int rc = agg_load_process_groups(R->db, R->iters[0], t);
		if (rc)
			return db_error(R, rc);
		rc = topo_infer_finish(t);
		if (rc) {
			topo_release(t);
			topo_init(t);
		}
	}
	if (t->source == TOPO_SRC_NONE && R->niters) {
		int rc = agg_whatif_topology(R->db, R->iters, R->niters, t);
		if (rc)
			return db_error(R, rc);
	}
	if (t->source == TOPO_SRC_NONE) {
		warn("no topology: no unique_parallel_groups_*.txt in '%s' or its iteration folders, "
		     "no --pp/--tp/--dp, and the traces carry no process-group ranks; PP groups, "
		     "pipelines and stragglers are skipped (rank charts are still written)",
		     R->base);
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
	print_notes(t);
	topo_index(t);
	return 0;
}

/* Output files are written to a temporary name and renamed into place,
 * never through a symlink planted in the output folder (safefile.h). */
static FILE *out_open(struct safefile *sf, const char *path)
{
	char err[256];
	if (safefile_open_path(sf, path, err, sizeof(err))) {
		warn("%s", err);
		return NULL;
	}
	return sf->fp;
}

static int out_close(struct safefile *sf)
{
	char err[256];
	if (safefile_commit(sf, err, sizeof(err))) {
		warn("%s", err);
		return PP_EIO;
	}
	return 0;
}

/* Opens dir/name as p (out_open) and writes its header line. */
static FILE *csv_open(struct safefile *sf, struct strbuf *p, const char *dir, const char *name,
		      const char *header)
{
	strbuf_reset(p);
	strbuf_addf(p, "%s/%s", dir, name);
	FILE *f = out_open(sf, p->buf);
	if (f)
		fputs(header, f);
	return f;
}

/* Two CSV fields a,b (or two empty ones) and then end. */
static void put_pair(FILE *f, bool have, int64_t a, int64_t b, const char *end)
{
	if (have)
		fprintf(f, "%lld,%lld%s", (long long)a, (long long)b, end);
	else
		fprintf(f, ",%s", end);
}

static int write_iter_csvs(struct run *R, const struct agg_iter *it, const char *dir)
{
	struct strbuf p = STRBUF_INIT;
	const struct agg_result *res = &it->res;
	int rc = 0;
	FILE *f;
	struct safefile sf;
	if (!(f = csv_open(&sf, &p, dir, "pp_groups.csv",
			   "iteration,pp_group,stage,rank,complete,group_window_start_ns,"
			   "group_window_end_ns,group_idle_ns,group_bubble_ns\n")))
		goto fail;
	for (size_t i = 0; i < res->npp; i++) {
		const struct agg_pp_row *r = &res->pp[i];
		fprintf(f, "%d,%d,%d,%d,%d,", it->iteration, r->pp_group, r->stage, r->rank,
			r->complete);
		put_pair(f, r->has_window, r->gw_s, r->gw_e, ",");
		put_pair(f, r->has_rank, r->idle, r->bubble, "\n");
	}
	if (out_close(&sf) ||
	    !(f = csv_open(&sf, &p, dir, "pipelines.csv",
			   "iteration,pp_group,measured_ns,ideal_ns,gap_ns,bubble_ratio\n")))
		goto fail;
	for (size_t i = 0; i < res->npipes; i++) {
		const struct agg_pipeline_row *r = &res->pipes[i];
		fprintf(f, "%d,%d,%lld,", it->iteration, r->pp_group, (long long)r->measured);
		put_pair(f, r->has_ideal, r->ideal, r->gap, ",");
		fprintf(f, "%.6f\n", r->bubble_ratio);
	}
	if (out_close(&sf) ||
	    !(f = csv_open(&sf, &p, dir, "stragglers.csv",
			   "iteration,rank,group_kind,group,metric,value_ns,median_ns,excess\n")))
		goto fail;
	for (size_t i = 0; i < res->nstrag; i++) {
		const struct agg_straggler_row *r = &res->strag[i];
		fprintf(f, "%d,%d,%s,%d,%s,%lld,%lld,%.6f\n", it->iteration, r->rank, r->group_kind,
			r->group, r->metric, (long long)r->value, (long long)r->median, r->excess);
	}
	if (out_close(&sf))
		goto fail;
	goto out;
fail:
	rc = error("cannot write '%s': %s", p.buf, strerror(errno));
	rc = PP_EIO;
out:
	strbuf_release(&p);
	(void)R;
	return rc;
}

static bool group_complete(const struct agg_iter *it, const struct topo_group *g)
{
	for (int i = 0; i < g->n; i++) {
		const struct agg_rank *r = agg_iter_rank(it, g->ranks[i]);
		if (!r || !r->in.ok)
			return false;
	}
	return true;
}

static int model_chart(struct run *R, struct agg_iter *it, const char *idir, size_t m,
		       const struct agg_chart_opts *co)
{
	const struct topology *t = &R->topo;
	const struct topo_group *mg = &t->groups[TOPO_MODEL].v[m];
	if (!group_complete(it, mg) || !mg->n)
		return 0;
	int *rows = xmalloc((size_t)mg->n * sizeof(int));
	int *split = xmalloc((size_t)mg->n * sizeof(int));
	int n = 0;
	/* PP groups whose first rank is in this replica, in topology order. */
	for (size_t g = 0; g < t->groups[TOPO_PP].n; g++) {
		const struct topo_group *pg = &t->groups[TOPO_PP].v[g];
		int r0 = pg->ranks[0];
		if (r0 >= t->nrank || t->model_of[r0] != (int)m)
			continue;
		for (int s = 0; s < pg->n && n < mg->n; s++) {
			rows[n] = pg->ranks[s];
			split[n++] = (int)g;
		}
	}
	char dir[4096 + 64], title[160];
	snprintf(dir, sizeof(dir), "%s/model_group_%zu", idir, m);
	snprintf(title, sizeof(title), "Model replica %zu, iteration %d: %d ranks", m,
		 it->iteration, n);
	int rc = agg_chart_rows(dir, title, it, rows, split, n, co, &R->jobs);
	free(rows);
	free(split);
	return rc;
}

/* The render plan (docs/ppagg.md, "What is rendered"): what of co's
 * formats is rendered now for one chart. full: the chart is rendered in
 * every format; png_only: as a PNG (its SVG can be made later from the
 * script); neither: the script only. */
static void plan(const struct run *R, struct agg_chart_opts *co, bool full, bool png_only)
{
	bool on = R->o->render && (full || png_only);
	co->render_png = on && co->png;
	co->render_svg = on && co->svg && full;
	if (on && png_only && !full && !co->png) /* --format svg: the SVG it is */
		co->render_svg = true;
}

/* Whether PP group g holds a straggler (its SVG is rendered too). */
static bool group_has_straggler(const struct agg_iter *it, const struct topo_group *pg)
{
	for (int s = 0; s < pg->n; s++)
		for (size_t k = 0; k < it->res.nstrag; k++)
			if (it->res.strag[k].rank == pg->ranks[s])
				return true;
	return false;
}

static int iteration_outputs(struct run *R, struct agg_iter *it)
{
	const struct topology *t = &R->topo;
	const struct agg_opts *o = R->o;
	struct agg_chart_opts co = { .individual = o->individual, .png = o->png, .svg = o->svg };
	char idir[4096], dir[4096 + 64];
	snprintf(idir, sizeof(idir), "%s/iteration_%d", R->out, it->iteration);
	int rc = agg_load_blocks(R->db, it);
	if (rc)
		return db_error(R, rc);
	if (agg_mkdir_p(idir))
		return PP_EIO;
	agg_overview_compute(it, t, o->rank_list, o->nrank_list);
	/* auto: every rank chart while the run draws at most that many
	 * (ranks × iterations): an imported op trace of 16 ranks and 44 steps
	 * would otherwise render 1,400 charts. */
	it->ov.all = o->rank_charts == AGG_RC_ALL ||
		     (o->rank_charts == AGG_RC_AUTO &&
		      (int64_t)it->nranks * R->niters <= AGG_AUTO_ALL_RANKS);
	rc = write_iter_csvs(R, it, idir);
	snprintf(dir, sizeof(dir), "%s/overview", idir);
	plan(R, &co, true, false);
	if (!rc)
		rc = agg_chart_overview(dir, it, &co, &R->jobs);
	for (size_t i = 0; i < it->nranks && !rc; i++) {
		bool mine = it->ov.all || (o->rank_charts != AGG_RC_NONE && it->ov.flag[i] != 0);
		/* At scale a flagged rank's overlap chart is a PNG (its SVG, with
		 * the numbers of steps.csv as hover text, is one gnuplot away). */
		plan(R, &co, mine, false);
		co.overlap_png_only = !it->ov.all;
		snprintf(dir, sizeof(dir), "%s/rank_%d", idir, it->ranks[i].in.rank);
		rc = agg_chart_rank(dir, it, &it->ranks[i], &co, &R->jobs);
	}
	co.overlap_png_only = false;
	for (size_t p = 0; p < it->res.npipes && !rc; p++) {
		int g = it->res.pipes[p].pp_group;
		const struct topo_group *pg = &t->groups[TOPO_PP].v[g];
		plan(R, &co, it->ov.all || group_has_straggler(it, pg), true);
		char title[160];
		snprintf(dir, sizeof(dir), "%s/pp_group_%d", idir, g);
		snprintf(title, sizeof(title), "PP group %d, iteration %d: ranks", g,
			 it->iteration);
		struct strbuf tt = STRBUF_INIT;
		strbuf_addstr(&tt, title);
		for (int s = 0; s < pg->n && s < 16; s++)
			strbuf_addf(&tt, "%s%d", s ? ", " : " ", pg->ranks[s]);
		if (pg->n > 16)
			strbuf_addstr(&tt, ", …");
		rc = agg_chart_rows(dir, tt.buf, it, pg->ranks, NULL, pg->n, &co, &R->jobs);
		strbuf_release(&tt);
	}
	plan(R, &co, it->ov.all, true);
	for (size_t m = 0; m < t->groups[TOPO_MODEL].n && !rc; m++)
		rc = model_chart(R, it, idir, m, &co);
	/* Blocks are only needed for the scripts: free them now. */
	for (size_t i = 0; i < it->nranks; i++) {
		free(it->ranks[i].blocks);
		it->ranks[i].blocks = NULL;
		it->ranks[i].nblocks = it->ranks[i].ablocks = 0;
	}
	return rc;
}

/* docs/semantics.md §6: where VPP is known, each fwd/bwd step gets its model chunk and
 * micro-batch (Megatron's interleaved order; with vpp 1, chunk 0 and the
 * micro-batch is the step's seq). Needs the pipeline size, so only with a
 * topology. Labels recorded in the database (PP-timer imports name every
 * step) win: only the unknown ones are computed. */
static void label_steps(struct agg_iter *it, int pp, int vpp)
{
	if (pp < 1 || vpp < 1)
		return;
	for (size_t i = 0; i < it->nranks; i++)
		for (size_t j = 0; j < it->ranks[i].nsteps; j++) {
			struct agg_step *s = &it->ranks[i].steps[j];
			int32_t chunk, mb;
			if ((s->phase != RR_FWD && s->phase != RR_BWD) ||
			    (s->chunk >= 0 && s->microbatch >= 0))
				continue;
			rr_vpp_label(s->seq, s->phase == RR_BWD, pp, vpp, &chunk, &mb);
			if (s->chunk < 0)
				s->chunk = chunk;
			if (s->microbatch < 0)
				s->microbatch = mb;
		}
}

static void report_iteration(struct run *R, const struct agg_iter *it)
{
	const struct topology *t = &R->topo;
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
		R->partial = 1;
	for (size_t g = 0; g < t->groups[TOPO_PP].n; g++) {
		const struct topo_group *pg = &t->groups[TOPO_PP].v[g];
		struct strbuf miss = STRBUF_INIT;
		int n = agg_group_absent(it, pg->ranks, pg->n, &miss);
		if (n) {
			warn("iteration %d: PP group %zu incomplete, not drawn and no pipeline row; "
			     "rank%s not analysed: %s",
			     it->iteration, g, n > 1 ? "s" : "", miss.buf);
			R->partial = 1;
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

static int write_comparison(struct run *R)
{
	char *path = path_join(R->out, "iterations.csv");
	struct safefile sf;
	FILE *f = out_open(&sf, path);
	int rc = 0;
	if (!f) {
		rc = error("cannot write '%s': %s", path, strerror(errno));
		free(path);
		return PP_EIO;
	}
	fputs("iteration,ranks_ok,ranks_failed,iteration_ns,mean_bubble_ratio,slowest_stage,"
	      "slowest_stage_compute_ns,stragglers\n",
	      f);
	for (int i = 0; i < R->niters; i++) {
		const struct agg_iter *it = &R->its[i];
		int64_t tmax = 0;
		double b = 0;
		for (size_t p = 0; p < it->res.npipes; p++) {
			if (it->res.pipes[p].measured > tmax)
				tmax = it->res.pipes[p].measured;
			b += it->res.pipes[p].bubble_ratio;
		}
		fprintf(f, "%d,%d,%d,%lld,%.6f,", it->iteration, it->nok, it->nfailed,
			(long long)tmax, it->res.npipes ? b / (double)it->res.npipes : 0.0);
		if (it->res.slowest_stage >= 0)
			fprintf(f, "%d,%lld,", it->res.slowest_stage,
				(long long)it->res.slowest_compute);
		else
			fputs(",,", f);
		fputc('"', f);
		for (size_t s = 0; s < it->res.nstrag; s++)
			fprintf(f, "%s%d", s ? " " : "", it->res.strag[s].rank);
		fputs("\"\n", f);
	}
	if (out_close(&sf))
		rc = PP_EIO;
	free(path);
	return rc;
}

/* BASE: --base-folder, else the parent of --input, else the database's
 * folder (where ppbatch puts it by default). */
static void resolve_paths(struct run *R)
{
	const struct agg_opts *o = R->o;
	if (o->input || !o->base) {
		char *a = xstrdup(o->input ? o->input : o->db);
		R->base = xstrdup(dirname(a));
		free(a);
	} else {
		R->base = xstrdup(o->base);
	}
	R->db_path = o->db ? xstrdup(o->db) : path_join(R->base, "pptrace.db");
	R->out = o->out ? xstrdup(o->out) : path_join(R->base, "pptrace");
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
	    !agg_load_iterations(R->db, NULL, 0, &all, &nall, &missing) && nall) {
		strbuf_addstr(&sb, ": it holds iteration");
		strbuf_addstr(&sb, nall > 1 ? "s " : " ");
		for (int i = 0; i < nall && i < 10; i++)
			strbuf_addf(&sb, "%s%d", i ? ", " : "", all[i]);
		if (nall > 10)
			strbuf_addf(&sb, ", ... (%d in all)", nall);
	}
	error("no iteration to aggregate in '%s'%s", R->db_path, sb.buf);
	free(all);
	strbuf_release(&sb);
}

/* Opens the database and loads the selected iterations. */
static int load(struct run *R)
{
	const struct agg_opts *o = R->o;
	char err[1024], *inname = NULL;
	int rc, nmissing = 0;
	R->db = db_open(R->db_path, DB_EXISTING, 30000, err, sizeof(err));
	if (!R->db) {
		bool own_db = o->input && !o->db && holds_db(o->input);
		if (own_db && holds_traces(o->input))
			error("--input '%s' holds its own pptrace.db (ppbatch was given this "
			      "iteration folder): use --base-folder '%s' (ppagg's --input reads the "
			      "database of the folder above, '%s')",
			      o->input, o->input, R->db_path);
		else if (own_db)
			error("--input '%s' is a base folder (it holds pptrace.db), not an iteration "
			      "folder: use --base-folder '%s', or --input '%s/iteration_<n>' "
			      "(ppbatch's --input is the base folder; ppagg's is one iteration)",
			      o->input, o->input, o->input);
		else if (access(R->db_path, F_OK) != 0)
			error("%s (run ppbatch first?)", err);
		else /* there, but not one ppagg can use: ppbatch is no answer */
			error("%s", err);
		return PP_EDB;
	}
	/* Ranks as docs/contracts.md §8 decides them, also when the ppbatch
	 * run that stored the traces was stopped before it could. */
	if ((rc = db_resolve_ranks(R->db)))
		return db_error(R, rc);
	if (o->input)
		inname = input_name(o);
	rc = agg_load_iterations(R->db, inname ? &inname : o->iterations,
				 inname ? 1 : o->niterations, &R->iters, &R->niters, &nmissing);
	free(inname);
	if (rc)
		return db_error(R, rc);
	if (!R->niters) {
		no_iteration(R);
		return PP_ENOTFOUND;
	}
	R->partial = nmissing > 0;
	R->its = xcalloc((size_t)R->niters, sizeof(*R->its));
	for (int i = 0; i < R->niters; i++)
		if ((rc = agg_load(R->db, R->iters[i], &R->its[i])))
			return db_error(R, rc);
	return 0;
}

/* The topology file's global batch size against the micro-batches the
 * traces show: each pipeline runs m micro-batches of one size, so
 * global batch = dp * m * size. A mismatch means forward steps are missing
 * or the topology is not the job's. */
static void check_global_batch(const struct run *R, const struct agg_iter *it, int vpp)
{
	const struct topology *t = &R->topo;
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
	struct agg_vpp *v = &R->vpp;
	agg_vpp_decide(R->its, (size_t)R->niters, R->topo.source != TOPO_SRC_NONE ? &R->topo : NULL,
		       R->o->vpp > 0 ? R->o->vpp : 1, v);
	const char *dflt = config_get(R->o->config, "agg.vpp") ? "" : " (not set: the default)";
	if (v->from == AGG_VPP_SCHEDULE)
		warn("vpp: agg.vpp = %d%s overridden by the schedule's vpp %d: %s; step labels, ideal "
		     "pipelines and the what-if use %d",
		     v->cfg, dflt, v->vpp, v->why.buf, v->vpp);
	else if (v->from == AGG_VPP_AMBIGUOUS || v->from == AGG_VPP_NO_FIT)
		warn("vpp: the schedule does not settle the virtual pipeline size: %s; agg.vpp = "
		     "%d%s is used everywhere",
		     v->why.buf, v->cfg, dflt);
}

/* Labels, computes and reports every iteration, then stores ppagg's rows. */
static int compute(struct run *R)
{
	const struct agg_opts *o = R->o;
	decide_vpp(R);
	struct agg_params params = { o->threshold, R->vpp.vpp, R->vpp.warmup };
	int rc;
	for (int i = 0; i < R->niters; i++) {
		struct agg_iter *it = &R->its[i];
		if (R->topo.source != TOPO_SRC_NONE) {
			label_steps(it, R->topo.pp, params.vpp);
			struct agg_rank_in *in = xmalloc((it->nranks + 1) * sizeof(*in));
			for (size_t k = 0; k < it->nranks; k++)
				in[k] = it->ranks[k].in;
			agg_compute(&R->topo, in, it->nranks, &params, &it->res);
			free(in);
			check_global_batch(R, it, params.vpp);
		}
		if (it->nfailed)
			R->partial = 1;
		report_iteration(R, it);
	}
	if ((rc = agg_store(R->db, R->its, (size_t)R->niters)))
		return db_error(R, rc);
	return 0;
}

/* The what-if analysis (agg_whatif.h): one line when it cannot be made. */
static int whatif(struct run *R)
{
	struct agg_whatif *w = &R->whatif;
	int rc = agg_whatif_run(R->db, R->its, (size_t)R->niters, &R->topo, R->vpp.vpp, R->vpp.rule,
				R->o->threshold, w);
	if (rc)
		return db_error(R, rc);
	if (w->state == AGG_WI_INCOMPLETE || w->state == AGG_WI_REJECTED) {
		/* An op trace was imported for this; the ops of Kineto traces
		 * come with every run, whose other outputs stand. */
		warn("what-if: not computed: %s", w->why.buf);
		R->partial |= !w->kineto;
	} else if (w->state == AGG_WI_NO_OPS && !R->o->quiet) {
		fprintf(stderr, "%s: what-if: no ops in these iterations: %s\n", pp_progname(),
			AGG_WI_OPS_FROM);
	}
	for (const char *p = w->notes.buf; *p && !R->o->quiet;) {
		int n = (int)strcspn(p, "\n");
		fprintf(stderr, "%s: what-if: note: %.*s\n", pp_progname(), n, p);
		p += n + (p[n] == '\n');
	}
	return 0;
}

/* CSVs, chart scripts and iterations.csv (each writer reports its own
 * errors). */
static int write_outputs(struct run *R)
{
	if (agg_mkdir_p(R->out))
		return PP_EIO;
	for (int i = 0; i < R->niters; i++)
		if (iteration_outputs(R, &R->its[i]))
			return PP_EIO;
	/* The what-if charts: few and at the top of the report, always rendered. */
	struct agg_chart_opts co = { .png = R->o->png, .svg = R->o->svg };
	plan(R, &co, true, false);
	if (agg_whatif_charts(R->out, &R->whatif, &co, &R->jobs))
		return PP_EIO;
	return write_comparison(R);
}

static void summary(struct run *R, int64_t t0, int64_t t_agg, int64_t t_files, double render_ms)
{
	const struct agg_opts *o = R->o;
	size_t nscripts = R->jobs.written, nrendered = R->jobs.n;
	if (o->quiet)
		return;
	struct strbuf head = STRBUF_INIT;
	agg_whatif_headline(&R->whatif, &head);
	fprintf(stderr,
		"%s: %d iteration%s aggregated in %.2f s, %zu chart scripts written "
		"in %.2f s%s; %s%sreport: %s/index.html\n",
		pp_progname(), R->niters, R->niters == 1 ? "" : "s", (double)(t_agg - t0) / 1e9,
		nscripts, (double)(t_files - t_agg) / 1e9,
		o->render ? "" : " (not rendered: --no-render)", head.buf, head.len ? "; " : "",
		R->out);
	strbuf_release(&head);
	if (o->render && nrendered)
		fprintf(stderr, "%s: rendering: %zu charts, %.1f ms per chart (%d processes)\n",
			pp_progname(), nrendered, render_ms / (double)nrendered, o->processes);
}

int agg_run(const struct agg_opts *o)
{
	struct run R = { .o = o, .vpp = { .why = STRBUF_INIT } };
	int exit_code = PP_EXIT_FATAL, nfail_render = 0;
	double render_ms = 0;
	int64_t t0 = pp_now_ns();
	topo_init(&R.topo);
	agg_whatif_init(&R.whatif);
	resolve_paths(&R);
	if (load(&R) || find_topology(&R) || compute(&R) || whatif(&R))
		goto out;
	int64_t t_agg = pp_now_ns();
	if (write_outputs(&R))
		goto out;
	int64_t t_files = pp_now_ns();
	if (o->render)
		nfail_render = agg_render(&R.jobs, o->processes, &render_ms, o->quiet);
	struct agg_opts shown = *o;
	shown.db = R.db_path;
	if (agg_html_write(R.out, &shown, &R.topo, &R.vpp, R.its, (size_t)R.niters, &R.whatif))
		goto out;
	summary(&R, t0, t_agg, t_files, render_ms);
	exit_code = R.partial || nfail_render ? PP_EXIT_PARTIAL : PP_EXIT_OK;
out:
	if (R.its)
		for (int i = 0; i < R.niters; i++)
			agg_iter_release(&R.its[i]);
	free(R.its);
	free(R.iters);
	topo_release(&R.topo);
	agg_whatif_release(&R.whatif);
	strbuf_release(&R.vpp.why);
	db_close(R.db);
	agg_jobs_release(&R.jobs);
	free(R.base);
	free(R.db_path);
	free(R.out);
	return exit_code;
}
