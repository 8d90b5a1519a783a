/* The why engine against ppgen's exact answers (docs/why.md "How it is
 * checked"): ppgen trees of several shapes are read and classified in
 * process (reader → classifier: the ops and communication kernels ppbatch
 * stores), fed to the engine with the tree's topology, and compared with
 * .truth/p2p.csv, p2p_kernels.csv and collectives.csv, which ppgen takes
 * from its own simulation. The checks are the issue's: wait + transfer =
 * each p2p kernel's duration exactly; the transfer within 2 µs of the
 * truth for >= 95 % of the p2p kernels and transfers; the last arriver
 * right for >= 99 % of the collective instances and the transfer after it
 * within 2 µs; a slow rank last in >= 90 % of its data-parallel
 * collectives and on the critical path; the path's segments adding up to
 * the step time. Pairs and instances of ranks that were not written are
 * reported incomplete, never measured. ppgen is taken from $PP_FAST_BIN (or
 * build/bin); without it the tests are skipped. */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agg/topology.h"
#include "classify/classify.h"
#include "model/optype.h"
#include "model/patterns.h"
#include "model/rank_result.h"
#include "read/trace_read.h"
#include "tests/unit/unit.h"
#include "util/arena.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "whatif/whatif.h"
#include "why/why.h"

#define TOL_NS 2000

/* What a layout expects beyond the common checks. */
struct layout {
	const char *name, *args;
	int vpp;
	int slow_rank;   /* --straggler's rank, or -1 */
	int slow_stage;  /* --slow-stage's stage, or -1 */
	bool incomplete; /* --ranks leaves some out */
};

/* The job as read: the groups interned across ranks, every rank's ops
 * (for the critical path's table) and which ranks were written. */
struct job {
	struct why *w;
	struct topology t;
	int vpp;
	/* per group: its description, its ranks as the trace and as the truth
	 * spell them ("[0, 8]", "0 8") */
	char **gdesc, **gtext, **granks;
	size_t ngroups;
	struct why_op *ops; /* every op row, for the what-if table */
	size_t nops, capops;
	bool *written;
	int nwritten;
};

static long rank_from_name(const char *name)
{
	for (const char *p = strstr(name, "rank"); p; p = strstr(p + 1, "rank")) {
		const char *d = p + 4;
		if (*d == '_' || *d == '-')
			d++;
		if (!isdigit((unsigned char)*d))
			continue;
		char *end;
		long r = strtol(d, &end, 10);
		if (*end == '.' || *end == '_')
			return r;
	}
	return -1;
}

/* The engine's index of a process group, added at its first sight. */
static int32_t group_index(struct job *J, const struct rr_group *g)
{
	for (size_t i = 0; i < J->ngroups; i++)
		if (!strcmp(J->gdesc[i], g->desc) && !strcmp(J->gtext[i], g->ranks))
			return (int32_t)i;
	int *rk = NULL;
	int n = topo_parse_ranks(g->ranks, &rk);
	assert_true(n > 0);
	int32_t *r32 = xmalloc((size_t)n * sizeof(*r32));
	for (int i = 0; i < n; i++)
		r32[i] = rk[i];
	struct why_group wg = { g->desc, g->ranks, r32, n, g->kind };
	int32_t idx = why_add_group(J->w, &wg);
	assert_int_equal(idx, (int32_t)J->ngroups);
	J->gdesc = xrealloc(J->gdesc, (J->ngroups + 1) * sizeof(char *));
	J->granks = xrealloc(J->granks, (J->ngroups + 1) * sizeof(char *));
	J->gtext = xrealloc(J->gtext, (J->ngroups + 1) * sizeof(char *));
	J->gdesc[J->ngroups] = xstrdup(g->desc);
	J->gtext[J->ngroups] = xstrdup(g->ranks);
	/* as the truth spells it: "0 8" */
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%d", i ? " " : "", rk[i]);
	J->granks[J->ngroups] = strbuf_detach(&sb, NULL);
	J->ngroups++;
	free(rk);
	free(r32);
	return idx;
}

/* What ppagg's glue does with one stored rank (docs/why.md "For the
 * glue"): its trace, its ops, its communication kernels of a group that
 * are not pipeline sends and receives. */
static void feed(struct job *J, long it, long rank, const struct rank_result *r)
{
	struct why_trace tr = { it, (int32_t)rank, r->has_window ? r->bubble_ns : -1 };
	why_add_trace(J->w, &tr);
	J->written[rank] = true;
	J->nwritten++;
	for (size_t i = 0; i < r->nops; i++) {
		const struct rr_op *o = &r->ops[i];
		struct why_op x = { .iteration = it,
				    .start_ns = o->start_ns,
				    .end_ns = o->end_ns,
				    .rank = (int32_t)rank,
				    .seq_id = o->seq_id,
				    .step_seq = o->step_seq,
				    .mc = o->mc,
				    .mb_id = o->mb_id,
				    .optype = o->optype };
		why_add_op(J->w, &x);
		if (J->nops == J->capops) {
			J->capops = J->capops ? 2 * J->capops : 4096;
			J->ops = xrealloc(J->ops, J->capops * sizeof(*J->ops));
		}
		J->ops[J->nops++] = x;
	}
	int32_t *gi = xmalloc((r->ngroups + 1) * sizeof(*gi));
	for (size_t g = 0; g < r->ngroups; g++)
		gi[g] = -2; /* not looked up yet */
	for (size_t i = 0; i < r->nkernels; i++) {
		const struct rr_kernel *k = &r->kernels[i];
		if (k->type != RR_COMM || k->pg < 0 || k->category == RR_PP_COMM)
			continue;
		const struct rr_group *g = &r->groups[k->pg];
		if (!*g->desc || !*g->ranks)
			continue;
		if (gi[k->pg] == -2)
			gi[k->pg] = group_index(J, g);
		struct why_kernel x = { it,
					k->start_ns,
					k->dur_ns,
					k->has_correlation ? k->correlation : (int64_t)i,
					(int32_t)rank,
					gi[k->pg] };
		why_add_kernel(J->w, &x);
	}
	free(gi);
}

static void classify_one(struct job *J, const char *path, long it, const char *fname,
			 const struct patterns *pats)
{
	struct arena a = ARENA_INIT;
	struct trace_reader_opts o = { .salvage = false };
	struct trace_reader *rd = trace_reader_open(path, &o);
	struct classify *c = classify_new(pats, &a);
	struct trace_event ev;
	struct rank_result *r;
	int rc;
	while ((rc = trace_reader_next(rd, &ev)) == 1)
		classify_feed(c, &ev);
	assert_int_equal(rc, 0);
	const struct trace_header *h = trace_reader_header(rd);
	assert_int_equal(classify_finish(c, h, &r), 0);
	classify_free(c);
	feed(J, it, h->has_rank ? (long)h->rank : rank_from_name(fname), r);
	trace_reader_close(rd);
	arena_release(&a);
}

static void read_tree(struct job *J, const char *dir, const struct patterns *pats)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	assert_non_null(d);
	while ((e = readdir(d))) {
		char sub[8192];
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		DIR *sd = opendir(sub);
		if (!sd)
			continue;
		const char *us = strrchr(e->d_name, '_');
		long it = us ? strtol(us + 1, NULL, 10) : -1;
		struct dirent *f;
		while ((f = readdir(sd))) {
			char path[8192 + 512];
			if (f->d_name[0] == '.' || !strstr(f->d_name, ".json"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", sub, f->d_name);
			classify_one(J, path, it, f->d_name, pats);
		}
		closedir(sd);
	}
	closedir(d);
}

/* ---- the truth ------------------------------------------------------ */

/* One CSV line split at commas (no quoting in these files). */
struct row {
	char *buf;
	char *f[16];
	int n;
};

static bool next_row(FILE *fp, struct row *r)
{
	static char line[4096];
	if (!fgets(line, sizeof(line), fp))
		return false;
	line[strcspn(line, "\r\n")] = '\0';
	r->n = 0;
	for (char *p = line; r->n < 16;) {
		r->f[r->n++] = p;
		char *c = strchr(p, ',');
		if (!c)
			break;
		*c = '\0';
		p = c + 1;
	}
	return true;
}

static FILE *open_truth(const char *dir, const char *name)
{
	char path[8192];
	snprintf(path, sizeof(path), "%s/.truth/%s", dir, name);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	struct row r;
	assert_true(next_row(f, &r)); /* the header */
	return f;
}

static long long num(const char *s)
{
	return strtoll(s, NULL, 10);
}

static const struct why_p2p_kernel *find_kernel(const struct why_result *r, long it, long rank,
						long seq)
{
	size_t lo = 0, hi = r->nkernels;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct why_p2p_kernel *k = &r->kernels[mid];
		long long kx[3] = { k->iteration, k->rank, k->seq }, ky[3] = { it, rank, seq };
		int c = kx[0] != ky[0]   ? (kx[0] < ky[0] ? -1 : 1)
			: kx[1] != ky[1] ? (kx[1] < ky[1] ? -1 : 1)
			: kx[2] != ky[2] ? (kx[2] < ky[2] ? -1 : 1)
					 : 0;
		if (c < 0)
			lo = mid + 1;
		else if (c > 0)
			hi = mid;
		else
			return k;
	}
	return NULL;
}

/* The p2p kernels and transfers: exact sums, transfers within TOL_NS. */
static void check_p2p(const char *dir, const struct job *J, const struct why_result *r)
{
	FILE *f = open_truth(dir, "p2p_kernels.csv");
	struct row x;
	size_t n = 0, close = 0, missing_peer = 0, incomplete = 0;
	int64_t worst = 0;
	while (next_row(f, &x)) {
		const struct why_p2p_kernel *k =
			find_kernel(r, num(x.f[0]), num(x.f[1]), num(x.f[2]));
		assert_non_null(k);
		assert_int_equal(k->dur_ns, num(x.f[4]));
		if (k->status != WHY_OK) {
			incomplete++;
			continue;
		}
		assert_int_equal(k->wait_ns + k->transfer_ns, k->dur_ns);
		int64_t d = llabs(k->transfer_ns - num(x.f[6]));
		worst = d > worst ? d : worst;
		close += d <= TOL_NS;
		n++;
	}
	fclose(f);
	print_message(
		"# p2p kernels: %zu measured, transfer within 2 us: %zu (%.2f %%), worst %lld "
		"ns; %zu incomplete\n",
		n, close, n ? 100.0 * (double)close / (double)n : 0.0, (long long)worst,
		incomplete);
	assert_true(n > 0);
	assert_true(close * 100 >= n * 95);
	assert_int_equal(n + incomplete, r->nkernels);

	/* Every transfer: its peer, micro-batch and chunk exactly; numbers
	 * exactly when the peer was written, none otherwise. */
	f = open_truth(dir, "p2p.csv");
	size_t rows = 0, rclose = 0, measured = 0;
	size_t *first = xmalloc((r->nkernels + 1) * sizeof(*first));
	for (size_t i = 0; i <= r->nkernels; i++)
		first[i] = r->np2p;
	for (size_t i = r->np2p; i-- > 0;)
		first[r->p2p[i].kernel] = i;
	while (next_row(f, &x)) {
		long it = (long)num(x.f[0]), rank = (long)num(x.f[1]), kseq = (long)num(x.f[2]);
		const struct why_p2p_kernel *k = find_kernel(r, it, rank, kseq);
		assert_non_null(k);
		int dir_ = !strcmp(x.f[4], "backward"), role = !strcmp(x.f[5], "recv");
		const struct why_p2p *p = NULL;
		size_t ki = (size_t)(k - r->kernels);
		for (size_t i = first[ki]; i < r->np2p && r->p2p[i].kernel == (int32_t)ki && !p;
		     i++)
			if (r->p2p[i].dir == dir_ && r->p2p[i].role == role)
				p = &r->p2p[i];
		if (!p)
			print_message("no transfer %s\n", x.f[0]);
		assert_non_null(p);
		assert_int_equal(p->peer_rank, num(x.f[3]));
		assert_int_equal(p->microbatch, num(x.f[6]));
		assert_int_equal(p->chunk, num(x.f[7]));
		rows++;
		if (!J->written[p->peer_rank]) {
			assert_int_equal(p->status, WHY_PEER_MISSING);
			missing_peer++;
			continue;
		}
		assert_int_equal(p->status, WHY_OK);
		assert_int_equal(p->wait_ns + p->transfer_ns, p->dur_ns);
		measured++;
		rclose += llabs(p->transfer_ns - num(x.f[11])) <= TOL_NS;
	}
	fclose(f);
	free(first);
	print_message("# p2p transfers: %zu (every one of the engine's), %zu measured, within 2 "
		      "us: %zu; %zu with a peer not written\n",
		      rows, measured, rclose, missing_peer);
	assert_int_equal(rows, r->np2p);
	assert_true(rclose * 100 >= measured * 95);
	assert_int_equal(missing_peer, r->p2p_unpaired);
}

/* The collective instances: the last arriver among the truth's (ties
 * within 1 µs), the transfer within TOL_NS. */
static void check_colls(const char *dir, const struct job *J, const struct why_result *r)
{
	FILE *f = open_truth(dir, "collectives.csv");
	struct row x;
	size_t n = 0, right = 0, close = 0;
	bool *seen = xcalloc(r->ncolls + 1, 1);
	while (next_row(f, &x)) {
		long it = (long)num(x.f[0]), seq = (long)num(x.f[3]);
		const struct why_coll *c = NULL;
		for (size_t i = 0; i < r->ncolls && !c; i++) {
			const struct why_coll *y = &r->colls[i];
			if (y->iteration == it && y->seq == seq &&
			    !strcmp(J->gdesc[y->group], x.f[1]) &&
			    !strcmp(J->granks[y->group], x.f[2]))
				c = y;
		}
		if (!c)
			print_message("no instance %s %s %s #%s\n", x.f[0], x.f[1], x.f[2], x.f[3]);
		assert_non_null(c);
		seen[c - r->colls] = true;
		assert_int_equal(c->status, WHY_OK);
		assert_int_equal(c->size, num(x.f[4]));
		n++;
		char tied[4096];
		snprintf(tied, sizeof(tied), " %s ", x.f[10]);
		char me[32];
		snprintf(me, sizeof(me), " %d ", (int)c->last_rank);
		right += strstr(tied, me) != NULL;
		close += llabs(c->transfer_ns - num(x.f[11])) <= TOL_NS &&
			 llabs(c->skew_ns - num(x.f[7])) <= TOL_NS;
	}
	fclose(f);
	/* The engine's complete instances are the truth's, no more. */
	for (size_t i = 0; i < r->ncolls; i++)
		assert_true(seen[i] || r->colls[i].status != WHY_OK);
	free(seen);
	print_message("# collective instances: %zu, last arriver right: %zu (%.2f %%), transfer "
		      "and skew within 2 us: %zu; %zu incomplete\n",
		      n, right, n ? 100.0 * (double)right / (double)n : 0.0, close,
		      r->colls_incomplete);
	assert_true(n > 0);
	assert_true(right * 100 >= n * 99);
	assert_true(close * 100 >= n * 99);
}

/* ---- the critical path ---------------------------------------------- */

/* The what-if table of the cells' workers (each cell's lowest rank), their
 * times corrected by the engine's offsets, labelled as ppagg labels them;
 * then the path. Returns false when the grid is not whole. */
static bool cpath(struct job *J, const struct why_result *r, struct whatif **e, struct why_cpath *c)
{
	struct topology *t = &J->t;
	int *rep = xmalloc((size_t)t->nrank * sizeof(*rep));
	for (int k = 0; k < t->nrank; k++)
		rep[k] = 0;
	for (int k = 0; k < t->nrank; k++) {
		bool lowest = true;
		for (int q = 0; q < k && lowest; q++)
			lowest = !(t->model_of[q] == t->model_of[k] &&
				   t->stage_of[q] == t->stage_of[k]);
		rep[k] = lowest;
		if (lowest && !J->written[k]) {
			free(rep);
			return false;
		}
	}
	struct wi_table tab;
	wi_table_init(&tab);
	for (size_t i = 0; i < J->nops; i++) {
		const struct why_op *o = &J->ops[i];
		if (!rep[o->rank])
			continue;
		int stage = t->stage_of[o->rank];
		int64_t off = why_clock_offset(r, o->rank);
		struct wi_op w = { .step = o->iteration,
				   .start_ns = o->start_ns - off,
				   .end_ns = o->end_ns - off,
				   .rank = o->rank,
				   .seq_id = o->seq_id,
				   .dp_rank = (int16_t)t->model_of[o->rank],
				   .stage = (int16_t)stage,
				   .mc = o->mc,
				   .gmc = -1,
				   .mb_id = o->mb_id,
				   .optype = o->optype };
		if (o->step_seq >= 0) {
			int32_t chunk, mb;
			bool bwd = o->optype == OP_BWD_COMPUTE || o->optype == OP_GRADS_RS;
			assert_int_equal(rr_vpp_label(o->step_seq, bwd, t->pp, J->vpp, &chunk, &mb),
					 0);
			w.mc = (int16_t)chunk;
			if (o->optype == OP_FWD_COMPUTE || o->optype == OP_BWD_COMPUTE) {
				w.mb_id = (int16_t)mb;
				w.gmc = (int16_t)(chunk * t->pp + stage);
			}
		}
		wi_table_add(&tab, &w, 0);
	}
	free(rep);
	char err[1024];
	int rc = whatif_new(&tab, NULL, e, err, sizeof(err));
	if (rc)
		print_message("%s\n", err);
	assert_int_equal(rc, 0);
	wi_table_release(&tab);
	why_cpath_run(*e, c);
	return true;
}

static void check_cpath(const struct why_cpath *c, const struct whatif *e, int slow_rank,
			int slow_stage)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t si = 0, k = 0; si < c->nsteps; si++) {
		int64_t t = c->step_start_ns[si], sum = 0;
		bool slow = false;
		int64_t last_stage = 0;
		for (; k < c->nseg && c->seg[k].iteration == c->step_iteration[si]; k++) {
			const struct why_seg *s = &c->seg[k];
			assert_int_equal(s->start_ns, t);
			t += s->dur_ns;
			sum += s->dur_ns;
			slow |= s->rank == slow_rank;
			if (s->stage == slow_stage && s->kind == WHY_SEG_OP &&
			    (s->optype == OP_FWD_COMPUTE || s->optype == OP_BWD_COMPUTE))
				last_stage += s->dur_ns;
		}
		assert_int_equal(sum, c->step_ns[si]);
		strbuf_reset(&sb);
		why_cpath_sentence(c, si, 3, &sb);
		print_message("# step %lld: %s\n", (long long)c->step_iteration[si], sb.buf);
		if (slow_rank >= 0)
			assert_true(slow);
		if (slow_stage >= 0)
			assert_true(last_stage * 2 > sum);
	}
	/* The step time is the what-if analysis' recorded span. */
	struct whatif_result wr;
	whatif_run((struct whatif *)e, &wr);
	for (size_t si = 0; si < c->nsteps; si++)
		assert_int_equal(c->step_ns[si], llround(wr.t_base[si]));
	whatif_result_release(&wr);
	strbuf_release(&sb);
}

/* ---- one layout ----------------------------------------------------- */

static const char *ppgen_path(char *buf, size_t n)
{
	const char *bin = getenv("PP_FAST_BIN");
	snprintf(buf, n, "%s/ppgen", bin ? bin : "build/bin");
	return access(buf, X_OK) ? NULL : buf;
}

static void run_layout(void **state)
{
	const struct layout *L = *state;
	char gen[4096], tmpl[] = "/tmp/pptrace-whygen.XXXXXX", cmd[8192], err[256];
	if (!ppgen_path(gen, sizeof(gen))) {
		print_message("# skip: ppgen is not built (PP_FAST_BIN or build/bin)\n");
		skip();
	}
	assert_non_null(mkdtemp(tmpl));
	snprintf(cmd, sizeof(cmd), "%s --quiet --out %s/tree %s", gen, tmpl, L->args);
	print_message("%s\n", cmd);
	assert_int_equal(system(cmd), 0);
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/tree", tmpl);

	struct job J = { .t = TOPOLOGY_INIT, .vpp = L->vpp };
	const char *dirs[] = { dir };
	char *topo = topo_find_file(dirs, 1);
	assert_non_null(topo);
	assert_int_equal(topo_load_file(&J.t, topo), 0);
	topo_index(&J.t);
	free(topo);
	struct why_opts o = { .pp = J.t.pp, .vpp = L->vpp };
	J.w = why_new(&o);
	J.written = xcalloc((size_t)J.t.nrank + 1, 1);
	for (int k = 0; k < J.t.nrank; k++) {
		struct why_rank x = { k, J.t.pp_of[k], J.t.stage_of[k], J.t.model_of[k] };
		why_add_rank(J.w, &x);
	}
	struct patterns *pats = patterns_new(NULL, err, sizeof(err));
	read_tree(&J, dir, pats);
	patterns_free(pats);

	struct why_result r;
	struct strbuf e = STRBUF_INIT;
	assert_int_equal(why_run(J.w, &r, &e), 0);
	strbuf_release(&e);
	print_message("# notes: %s", r.notes.buf);
	print_message("# clock error %lld ns, corrected %d\n", (long long)r.clock_error_ns,
		      r.clock_corrected);

	check_p2p(dir, &J, &r);
	check_colls(dir, &J, &r);
	if (L->slow_rank >= 0) {
		bool found = false;
		for (size_t i = 0; i < r.ncoll_ranks; i++) {
			const struct why_coll_rank *x = &r.coll_ranks[i];
			if (x->rank != L->slow_rank || x->kind != RR_PG_DP)
				continue;
			found = true;
			print_message(
				"# rank %d: last at %lld of %lld DP instances (chance %.2f) by "
				"%lld ns on average, late %d\n",
				L->slow_rank, (long long)x->times_last, (long long)x->instances,
				x->chance, (long long)x->last_by_ns, x->late);
			assert_true(x->times_last * 10 >= x->instances * 9);
			assert_true(x->late);
		}
		assert_true(found);
		/* The slow rank holds its whole replica back: its pipeline
		 * partners arrive last at their own DP collectives too, the other
		 * replicas' ranks never more often than chance. */
		for (size_t i = 0; i < r.ncoll_ranks; i++)
			if (r.coll_ranks[i].kind == RR_PG_DP && r.coll_ranks[i].late)
				assert_int_equal(J.t.model_of[r.coll_ranks[i].rank],
						 J.t.model_of[L->slow_rank]);
	}
	struct whatif *we = NULL;
	struct why_cpath c;
	bool whole = cpath(&J, &r, &we, &c);
	assert_true(whole || L->incomplete);
	if (whole) {
		check_cpath(&c, we, L->slow_rank, L->slow_stage);
		why_cpath_release(&c);
		whatif_free(we);
	}

	why_result_release(&r);
	why_free(J.w);
	for (size_t i = 0; i < J.ngroups; i++) {
		free(J.gdesc[i]);
		free(J.gtext[i]);
		free(J.granks[i]);
	}
	free(J.gdesc);
	free(J.gtext);
	free(J.granks);
	free(J.ops);
	free(J.written);
	topo_release(&J.t);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
	assert_int_equal(system(cmd), 0);
}

static const struct layout layouts[] = {
	{ "pp4_dp2", "--pp 4 --dp 2 -m 8 --layers 1 --iterations 3,4", 1, -1, -1, false },
	{ "vpp2", "--pp 4 --vpp 2 --dp 2 -m 8 --layers 1", 2, -1, -1, false },
	{ "tp2_vpp2", "--tp 2 --pp 2 --vpp 2 --dp 2 -m 4 --layers 1", 2, -1, -1, false },
	{ "straggler", "--pp 4 --dp 2 -m 8 --layers 1 --iterations 1-4 --straggler 2:1.8", 1, 2, -1,
	  false },
	{ "slow_last_stage", "--pp 4 --dp 2 -m 8 --layers 1 --slow-stage last:1.6", 1, -1, 3,
	  false },
	{ "shifted_clocks",
	  "--tp 2 --pp 4 --dp 2 -m 8 --layers 1 --iterations 1-4 --gpus-per-host 2 "
	  "--clock-skew-max 700 --straggler 4:1.5",
	  1, 4, -1, false },
	{ "missing_ranks", "--pp 4 --dp 2 -m 8 --layers 1 --ranks 0-5", 1, -1, -1, true },
};

#define LAYOUT(i)                                                            \
	{                                                                    \
		layouts[i].name, run_layout, NULL, NULL, (void *)&layouts[i] \
	}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LAYOUT(0), LAYOUT(1), LAYOUT(2), LAYOUT(3), LAYOUT(4), LAYOUT(5), LAYOUT(6),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
