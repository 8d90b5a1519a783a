/* The why engine against ppgen's exact answers (docs/why.md "How it is
 * checked"): ppgen trees of several shapes are stored by the real ppbatch
 * and analysed by ppagg's data layer (agg_analyse(), whose why analysis is
 * the glue of docs/why.md §7; why_load.c), and the engine's results
 * compared with .truth/p2p.csv,
 * p2p_kernels.csv and collectives.csv, which ppgen takes from its own
 * simulation. The checks are the issue's: wait + transfer =
 * each p2p kernel's duration exactly; the transfer within 2 µs of the
 * truth for >= 95 % of the p2p kernels and transfers; the last arriver
 * right for >= 99 % of the collective instances and the transfer after it
 * within 2 µs; a slow rank last in >= 90 % of its data-parallel
 * collectives and on the critical path; the path's segments adding up to
 * the step time. Pairs and instances of ranks that were not written are
 * reported incomplete, never measured. ppgen and ppbatch are taken from
 * $PP_FAST_BIN (or build/bin); without them the tests are skipped. */
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

#include "agg/agg.h"
#include "model/optype.h"
#include "model/rank_result.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "whatif/whatif.h"
#include "why/why.h"
#include "why_load.h"
#include "tests/unit/unit.h"

#define TOL_NS 2000

/* What a layout expects beyond the common checks. */
struct layout {
	const char *name, *args;
	int vpp;
	int slow_rank;   /* --straggler's rank, or -1 */
	int slow_stage;  /* --slow-stage's stage, or -1 */
	bool incomplete; /* --ranks leaves some out */
};

/* The job as ppagg analysed it, which ranks were written (have a trace),
 * the groups' ranks as the truth spells them. */
struct job {
	struct agg_job a;
	bool *written;
	char **granks; /* per engine group: "0 8" */
};

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
			    !strcmp(J->a.why.groups[y->group].desc, x.f[1]) &&
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

static void check_cpath(const struct why_cpath *c, const struct whatif_result *wr, int slow_rank,
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
	assert_int_equal(c->nsteps, wr->nsteps);
	for (size_t si = 0; si < c->nsteps; si++)
		assert_int_equal(c->step_ns[si], llround(wr->t_base[si]));
	strbuf_release(&sb);
}

/* ---- one layout ----------------------------------------------------- */

static void run_layout(void **state)
{
	const struct layout *L = *state;
	char tmpl[] = "/tmp/pptrace-whygen.XXXXXX", cmd[4200], dir[4096], dbpath[4096];
	int made = why_load_tmp_tree(tmpl, L->args, dir, dbpath, sizeof(dir));
	SKIP_UNLESS(made != 1);
	assert_int_equal(made, 0);

	struct job J;
	assert_int_equal(why_load_analyse(dbpath, L->vpp, AGG_WHY_ROWS_ALL, &J.a), 0);
	assert_int_equal(J.a.why.state, AGG_WHY_DONE);
	const struct agg_why *w = &J.a.why;
	const struct why_result *r = &w->r;
	const struct topology *t = &J.a.topo;
	J.granks = xcalloc(w->ngroups + 1, sizeof(*J.granks));
	for (size_t g = 0; g < w->ngroups; g++) { /* "[0, 8]" as "0 8" */
		struct strbuf sb = STRBUF_INIT;
		for (const char *p = w->groups[g].ranks; *p; p++)
			if (*p != '[' && *p != ']' && *p != ',')
				strbuf_addch(&sb, *p);
		J.granks[g] = strbuf_detach(&sb, NULL);
	}
	print_message("# notes: %s", r->notes.buf);
	print_message("# clock error %lld ns, corrected %d\n", (long long)r->clock_error_ns,
		      r->clock_corrected);
	J.written = xcalloc((size_t)t->nrank + 1, 1);
	for (size_t i = 0; i < r->nbubbles; i++) /* one per trace */
		J.written[r->bubbles[i].rank] = true;

	check_p2p(dir, &J, r);
	check_colls(dir, &J, r);
	if (L->slow_rank >= 0) {
		bool found = false;
		for (size_t i = 0; i < r->ncoll_ranks; i++) {
			const struct why_coll_rank *x = &r->coll_ranks[i];
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
		for (size_t i = 0; i < r->ncoll_ranks; i++)
			if (r->coll_ranks[i].kind == RR_PG_DP && r->coll_ranks[i].late)
				assert_int_equal(t->model_of[r->coll_ranks[i].rank],
						 t->model_of[L->slow_rank]);
	}
	/* The path needs every cell's worker: a tree that lacks some has none. */
	bool whole = w->path.nsteps > 0;
	if (!whole)
		print_message("# no critical path: %s\n", w->no_path.buf);
	assert_true(whole != L->incomplete);
	if (whole)
		check_cpath(&w->path, &J.a.whatif.r, L->slow_rank, L->slow_stage);

	for (size_t g = 0; g < w->ngroups; g++)
		free(J.granks[g]);
	free(J.granks);
	free(J.written);
	agg_job_release(&J.a);
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

UNIT_MAIN(NULL, NULL,
	  {
		  LAYOUT(0),
		  LAYOUT(1),
		  LAYOUT(2),
		  LAYOUT(3),
		  LAYOUT(4),
		  LAYOUT(5),
		  LAYOUT(6),
	  })
