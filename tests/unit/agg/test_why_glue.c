/* Unit tests for ppagg's why glue (pipeline/agg/agg_why.c, docs/why.md §7)
 * on one small ppgen tree (TP 2 x PP 2 x DP 2, stored by the real ppbatch
 * and analysed once by agg_analyse()), then agg_why_run() again on what the
 * job holds, changed: without a topology nothing is analysed and the why
 * row says why; without the what-if engine there is no critical path and
 * the notes say why; a rank whose trace ppagg does not aggregate (a
 * conflict) brings no rows, so its neighbours' pairs and its groups'
 * instances are incomplete, counted and never measured; the collectives view
 * lists the tensor-parallel instances or not as agg.tp_collective_rows
 * says, the per-rank summary always; a group's kind comes from the
 * topology, else its description; one trace's kernels read back for the
 * merged timeline are the kernels view's. ppgen and ppbatch come from
 * $PP_FAST_BIN (or build/bin); without them the tests are skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "agg/agg.h"
#include "agg/agg_timeline.h"
#include "model/rank_result.h"
#include "storage/db.h"
#include "tests/unit/why/why_load.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

struct fixture {
	char tmpl[64];
	char db[256];
	struct agg_job job;
};

static int setup(void **state)
{
	struct fixture *F = xcalloc(1, sizeof(*F));
	snprintf(F->tmpl, sizeof(F->tmpl), "/tmp/pptrace-whyglue.XXXXXX");
	if (!mkdtemp(F->tmpl))
		return -1;
	int made = why_load_tree(F->tmpl, "--tp 2 --pp 2 --dp 2 -m 4 --layers 1");
	if (made) {
		rmdir(F->tmpl);
		free(F);
		*state = NULL;
		return made == 1 ? 0 : -1;
	}
	snprintf(F->db, sizeof(F->db), "%s/tree/pptrace.db", F->tmpl);
	if (why_load_analyse(F->db, 1, AGG_WHY_ROWS_AUTO, &F->job))
		return -1;
	*state = F;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *F = *state;
	char cmd[128];
	if (!F)
		return 0;
	agg_job_release(&F->job);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", F->tmpl);
	int rc = system(cmd);
	free(F);
	return rc ? -1 : 0;
}

/* Asserts the rows of sql on the job's database (unit_rows()). */
static void assert_rows(struct fixture *F, const char *sql, const char *expect)
{
	unit_assert_rows(db_sqlite(F->job.db), sql, expect);
}

/* agg_why_run() again on the job's iterations into w. */
static void rerun(struct fixture *F, const struct topology *t, const struct whatif *e,
		  const char *no_path, enum agg_why_rows rows, struct agg_why *w)
{
	const struct agg_job *j = &F->job;
	agg_why_init(w);
	assert_int_equal(
		agg_why_run(j->db, j->its, j->niters, t, j->vpp.vpp, e, no_path, rows, NULL, w), 0);
}

#define SKIP_WITHOUT_TREE(F)                                                                   \
	do {                                                                                   \
		if (!(F)) {                                                                    \
			print_message("# skip: ppgen or ppbatch is not built (PP_FAST_BIN or " \
				      "build/bin)\n");                                         \
			skip();                                                                \
		}                                                                              \
	} while (0)

static void test_analysed(void **state)
{
	struct fixture *F = *state;
	SKIP_WITHOUT_TREE(F);
	const struct agg_why *w = &F->job.why;
	assert_int_equal(w->state, AGG_WHY_DONE);
	assert_int_equal(w->ntraces, 8);
	assert_true(w->nops > 0 && w->nkernels > 0);
	assert_true(w->path.nsteps == 1 && w->inner_rows);
	struct strbuf sb = STRBUF_INIT;
	agg_why_incomplete(w, &sb);
	assert_string_equal(sb.buf, "");
	strbuf_release(&sb);
	/* the kinds: every group the topology has, by its ranks */
	assert_rows(
		F,
		"SELECT group_concat(kind, ',') FROM (SELECT DISTINCT kind FROM collectives ORDER BY 1)",
		"default_pg,dp,pp,tp\n");
	assert_rows(
		F,
		"SELECT count(*) = (SELECT collectives FROM why), (SELECT critical_path_steps FROM why)"
		" FROM collectives",
		"1|1\n");
	assert_string_equal(agg_why_kind_name(RR_PG_TP, "TENSOR_MODEL_PARALLEL_GROUP"), "tp");
	assert_string_equal(agg_why_kind_name(RR_PG_UNKNOWN, "EMBEDDING_GROUP"), "EMBEDDING_GROUP");
	assert_int_equal(rr_pg_kind_of("EXPERT_DATA_PARALLEL_GROUP"), RR_PG_EP);
	assert_int_equal(rr_pg_kind_of("TENSOR_AND_DATA_PARALLEL_GROUP"), RR_PG_UNKNOWN);
}

static void test_no_topology(void **state)
{
	struct fixture *F = *state;
	SKIP_WITHOUT_TREE(F);
	struct topology none = TOPOLOGY_INIT;
	struct agg_why w;
	rerun(F, &none, NULL, "no what-if model here", AGG_WHY_ROWS_AUTO, &w);
	assert_int_equal(w.state, AGG_WHY_NONE);
	assert_string_equal(w.why.buf,
			    "no topology (the pipelines and their stages are not known)");
	assert_int_equal(w.path.nsteps, 0);
	assert_string_equal(w.no_path.buf, "no what-if model here");
	assert_rows(
		F,
		"SELECT (SELECT count(*) FROM p2p) + (SELECT count(*) FROM collectives) + (SELECT"
		" count(*) FROM critical_path), iterations, p2p_kernels, notes FROM why",
		"0|1|0|not analysed: no topology (the pipelines and their stages "
		"are not known)\ncritical path: none: no what-if model here\n\n");
	agg_why_release(&w);
}

static void test_conflict(void **state)
{
	struct fixture *F = *state;
	SKIP_WITHOUT_TREE(F);
	struct agg_iter *it = &F->job.its[0];
	struct agg_rank *r = agg_iter_rank(it, 5);
	assert_non_null(r);
	int64_t id = r->trace_id;
	r->trace_id = 0; /* as a rank in conflict: its traces are not aggregated */
	struct agg_why w;
	rerun(F, &F->job.topo, NULL, "", AGG_WHY_ROWS_AUTO, &w);
	r->trace_id = id;
	assert_int_equal(w.state, AGG_WHY_DONE);
	assert_int_equal(w.ntraces, 7);
	struct strbuf sb = STRBUF_INIT;
	agg_why_incomplete(&w, &sb);
	print_message("# %s\n", sb.buf);
	assert_non_null(strstr(sb.buf, " pipeline transfers ("));
	assert_non_null(strstr(sb.buf, " peer missing"));
	assert_non_null(strstr(sb.buf, " collective instances ("));
	assert_non_null(strstr(sb.buf, " rank missing"));
	strbuf_release(&sb);
	assert_rows(
		F,
		"SELECT (SELECT count(*) FROM p2p_kernels WHERE rank = 5), (SELECT count(*) FROM p2p"
		" WHERE peer_rank = 5 AND (status <> 'peer missing' OR wait_ns IS NOT NULL)),"
		" (SELECT count(*) > 0 FROM p2p WHERE peer_rank = 5), p2p_unpaired > 0,"
		" collectives_incomplete > 0 FROM why",
		"0|0|1|1|1\n");
	char *got = unit_rows(db_sqlite(F->job.db),
			      "SELECT count(*), count(last_rank) FROM collectives WHERE status ="
			      " 'rank missing' AND missing_rank = 5");
	assert_int_not_equal(atoi(got), 0);
	assert_non_null(strstr(got, "|0\n"));
	free(got);
	agg_why_release(&w);
}

static void test_rows(void **state)
{
	struct fixture *F = *state;
	SKIP_WITHOUT_TREE(F);
	struct agg_why w;
	rerun(F, &F->job.topo, NULL, "", AGG_WHY_ROWS_NONE, &w);
	assert_true(w.inner_instances > 0 && !w.inner_rows);
	char want[512];
	snprintf(want, sizeof(want), "0|%zu|1|%zu\n", w.r.ncoll_ranks, w.r.ncolls);
	assert_rows(F,
		    "SELECT (SELECT count(*) FROM collectives WHERE kind = 'tp'), count(*),"
		    " sum(pg_kind = 'tp') > 0, (SELECT collectives FROM why) FROM collective_ranks",
		    want);
	agg_why_release(&w);
	rerun(F, &F->job.topo, NULL, "", AGG_WHY_ROWS_ALL, &w);
	assert_true(w.inner_rows);
	assert_rows(F, "SELECT count(*) > 0 FROM collectives WHERE kind = 'tp'", "1\n");
	agg_why_release(&w);
}

struct count {
	size_t n;
	int64_t first;
};

static int count_kernel(void *ctx, const struct agg_why_kernel *k)
{
	struct count *c = ctx;
	if (!c->n++)
		c->first = k->start_ns;
	assert_true(k->dur_ns >= 0 && k->name[0]);
	return 0;
}

static void test_kernels(void **state)
{
	struct fixture *F = *state;
	SKIP_WITHOUT_TREE(F);
	const struct agg_iter *it = &F->job.its[0];
	struct count c = { 0, 0 };
	struct strbuf err = STRBUF_INIT;
	char want[128];
	assert_int_equal(agg_why_kernels(F->job.db, it, 3, count_kernel, &c, &err), 0);
	snprintf(want, sizeof(want), "%zu\n", c.n);
	assert_rows(F, "SELECT count(*) FROM kernels WHERE rank = 3", want);
	c.n = 0;
	assert_int_equal(agg_why_kernels(F->job.db, it, 999, count_kernel, &c, &err), 0);
	assert_int_equal(c.n, 0); /* no such rank: nothing */
	strbuf_release(&err);
}

/* The blocks the why analysis' scan keeps are those the report's own scan
 * would load, block for block, and the report takes them once. */
static void test_kept_blocks(void **state)
{
	struct fixture *F = *state;
	SKIP_WITHOUT_TREE(F);
	struct agg_job *j = &F->job;
	struct strbuf err = STRBUF_INIT;
	assert_non_null(j->timelines);
	for (size_t i = 0; i < j->niters; i++) {
		const struct agg_iter *it = &j->its[i];
		struct agg_timeline kept, scanned;
		assert_non_null(j->timelines[i].rank);
		assert_int_equal(agg_timeline_load(j, it, &kept, &err), 0); /* taken */
		assert_null(j->timelines[i].rank);
		assert_int_equal(agg_timeline_load(j, it, &scanned, &err), 0); /* scanned */
		assert_int_equal(kept.nranks, scanned.nranks);
		size_t blocks = 0;
		for (size_t r = 0; r < kept.nranks; r++) {
			assert_int_equal(kept.rank[r].n, scanned.rank[r].n);
			for (size_t b = 0; b < kept.rank[r].n; b++) {
				const struct agg_block *x = &kept.rank[r].v[b],
						       *y = &scanned.rank[r].v[b];
				assert_true(x->s == y->s && x->e == y->e && x->seq == y->seq &&
					    x->cat == y->cat && x->phase == y->phase &&
					    x->kernels == y->kernels);
			}
			blocks += kept.rank[r].n;
		}
		assert_true(blocks > 0);
		agg_timeline_release(&kept);
		agg_timeline_release(&scanned);
	}
	strbuf_release(&err);
}

UNIT_MAIN(setup, teardown,
	  {
		  cmocka_unit_test(test_analysed),
		  cmocka_unit_test(test_kept_blocks),
		  cmocka_unit_test(test_no_topology),
		  cmocka_unit_test(test_conflict),
		  cmocka_unit_test(test_rows),
		  cmocka_unit_test(test_kernels),
	  })
