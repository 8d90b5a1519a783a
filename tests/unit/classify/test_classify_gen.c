/* The real proof: classify ppgen trace trees (reader → classifier) and
 * compare ranks / category_stats / steps and the what-if ops with the
 * generator's exact truth (DIR/.truth/ CSV files, docs/contracts.md §4), as
 * sets of CSV lines. The ops' worker, chunk and micro-batch labels come from
 * the tree's topology file and the layout's --vpp, as ppagg gives them
 * (rr_vpp_label()). ppgen is taken from $PP_FAST_BIN (or build/bin);
 * without it the tests are skipped. */
#include <ctype.h>
#include <dirent.h>
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
#include "read/trace_read.h"
#include "util/arena.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

enum { F_RANKS, F_CATS, F_STEPS, F_OPS, F_N };
static const char *const truth_files[F_N] = { "ranks.csv", "category_stats.csv", "steps.csv",
					      "ops.csv" };

/* What labels a rank's ops: the tree's topology and VPP. */
struct layout {
	struct topology t;
	int vpp;
};

/* rank[_-]?(\d+) followed by '.' or '_' (docs/semantics.md §2), or -1. */
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

/* The rank's op rows, labelled as ppagg labels them. */
static void emit_ops(struct unit_lines *out, long it, long rank, const struct rank_result *r,
		     const struct layout *lay)
{
	const struct topology *t = &lay->t;
	assert_true(rank >= 0 && rank < t->nrank);
	int dp = t->model_of[rank], stage = t->stage_of[rank], P = t->pp;
	for (size_t i = 0; i < r->nops; i++) {
		const struct rr_op *o = &r->ops[i];
		int mc = o->mc, gmc = -1, mb = o->mb_id;
		if (o->step_seq >= 0) {
			int32_t chunk, micro;
			bool bwd = o->optype == OP_BWD_COMPUTE || o->optype == OP_GRADS_RS;
			assert_int_equal(
				rr_vpp_label(o->step_seq, bwd, P, lay->vpp, &chunk, &micro), 0);
			mc = chunk;
			if (o->optype == OP_FWD_COMPUTE || o->optype == OP_BWD_COMPUTE) {
				mb = micro;
				gmc = chunk * P + stage;
			}
		}
		char buf[256];
		snprintf(buf, sizeof(buf), "%ld,%ld,%d,%d,%s,%d,%d,%d,%d,%lld,%lld", it, rank, dp,
			 stage, op_type_name(o->optype), (int)o->seq_id, mc, gmc, mb,
			 (long long)o->start_ns, (long long)o->end_ns);
		unit_lines_add(out, buf);
	}
}

static void emit(struct unit_lines out[F_N], long it, long rank, const struct rank_result *r,
		 const struct layout *lay)
{
	char buf[512];
	if (r->has_window)
		snprintf(buf, sizeof(buf),
			 "%ld,%ld,%s,%lld,%lld,%lld,%lld,%lld,"
			 "%lld,%lld,%lld,%.6f",
			 it, rank, rr_mode_name(r->mode), (long long)r->window_start_ns,
			 (long long)r->window_end_ns, (long long)r->gpu_busy_ns,
			 (long long)r->idle_ns, (long long)r->bubble_ns, (long long)r->comp_busy_ns,
			 (long long)r->comm_busy_ns, (long long)r->overlap_ns, r->coverage);
	else
		snprintf(buf, sizeof(buf), "%ld,%ld,%s,,,,,,,,,", it, rank, rr_mode_name(r->mode));
	unit_lines_add(&out[F_RANKS], buf);
	for (int c = 0; c < RR_NCATEGORIES; c++) {
		const struct rr_category_stat *s = &r->categories[c];
		if (!s->kernels)
			continue;
		snprintf(buf, sizeof(buf), "%ld,%ld,%s,%lld,%lld,%lld", it, rank,
			 rr_category_name(c), (long long)s->kernels, (long long)s->sum_ns,
			 (long long)s->busy_ns);
		unit_lines_add(&out[F_CATS], buf);
	}
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct rr_step *s = &r->steps[i];
		int n = snprintf(buf, sizeof(buf), "%ld,%ld,%s,%d,%lld,%lld,", it, rank,
				 rr_phase_name(s->phase), s->seq, (long long)s->cpu_start_ns,
				 (long long)s->cpu_end_ns);
		if (s->has_kernels)
			snprintf(buf + n, sizeof(buf) - (size_t)n,
				 "%lld,%lld,%lld,%lld,%lld,%lld,%lld", (long long)s->start_ns,
				 (long long)s->end_ns, (long long)s->wall_ns, (long long)s->comp_ns,
				 (long long)s->comm_ns, (long long)s->overlap_ns,
				 (long long)s->kernels);
		else
			snprintf(buf + n, sizeof(buf) - (size_t)n, ",,0,0,0,0,0");
		unit_lines_add(&out[F_STEPS], buf);
	}
	emit_ops(&out[F_OPS], it, rank, r, lay);
}

static void classify_one(const char *path, long it, const char *fname, const struct patterns *pats,
			 const struct layout *lay, struct unit_lines out[F_N])
{
	struct arena a = ARENA_INIT;
	struct trace_reader_opts o = { .salvage = false };
	struct trace_reader *rd = trace_reader_open(path, &o);
	struct rank_result *r = unit_classify_reader(path, rd, pats, &a, NULL, 0);
	const struct trace_header *h = trace_reader_header(rd);
	emit(out, it, h->has_rank ? (long)h->rank : rank_from_name(fname), r, lay);
	trace_reader_close(rd);
	arena_release(&a);
}

static void classify_tree(const char *dir, const struct patterns *pats, const struct layout *lay,
			  struct unit_lines out[F_N])
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
			classify_one(path, it, f->d_name, pats, lay, out);
		}
		closedir(sd);
	}
	closedir(d);
}

/* Compares as sorted sets; prints the first differences. */
static int compare(const char *what, struct unit_lines *got, struct unit_lines *exp)
{
	size_t bad = unit_lines_diff(what, got, exp, 12);
	print_message("%s: %zu lines, truth %zu lines%s\n", what, got->n, exp->n,
		      bad ? " — DIFFERENT" : " — equal");
	return (int)bad;
}

static const char *ppgen_path(char *buf, size_t n)
{
	const char *bin = getenv("PP_FAST_BIN");
	snprintf(buf, n, "%s/ppgen", bin ? bin : "build/bin");
	return access(buf, X_OK) ? NULL : buf;
}

static void run_layout(void **state)
{
	struct strbuf cerr = STRBUF_INIT;
	const char *args = *state;
	char gen[4096], tmpl[] = "/tmp/pptrace-clsgen.XXXXXX", cmd[8192];
	if (!ppgen_path(gen, sizeof(gen))) {
		print_message("# skip: ppgen is not built (PP_FAST_BIN or "
			      "build/bin)\n");
		skip();
	}
	assert_non_null(mkdtemp(tmpl));
	snprintf(cmd, sizeof(cmd), "%s --quiet --out %s/tree %s", gen, tmpl, args);
	print_message("%s\n", cmd);
	assert_int_equal(system(cmd), 0);

	struct patterns *pats = patterns_new(NULL, &cerr);
	struct unit_lines got[F_N] = { { 0 } }, exp[F_N] = { { 0 } };
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/tree", tmpl);
	struct layout lay = { .t = TOPOLOGY_INIT, .vpp = 1 };
	const char *v = strstr(args, "--vpp ");
	if (v)
		lay.vpp = atoi(v + 6);
	const char *dirs[] = { dir };
	char *topo = topo_find_file(dirs, 1);
	assert_non_null(topo);
	assert_int_equal(topo_load_file(&lay.t, topo), 0);
	topo_index(&lay.t);
	free(topo);
	classify_tree(dir, pats, &lay, got);
	topo_release(&lay.t);
	int bad = 0;
	for (int i = 0; i < F_N; i++) {
		char path[8192];
		snprintf(path, sizeof(path), "%s/.truth/%s", dir, truth_files[i]);
		unit_lines_read_csv(&exp[i], path);
		bad += compare(truth_files[i], &got[i], &exp[i]);
		unit_lines_release(&got[i]);
		unit_lines_release(&exp[i]);
	}
	patterns_free(pats);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
	if (!bad)
		assert_int_equal(system(cmd), 0);
	assert_int_equal(bad, 0);
}

#define LAYOUT(name, args)                                   \
	{                                                    \
		name, run_layout, NULL, NULL, (void *)(args) \
	}

UNIT_MAIN(NULL, NULL,
	  {
		  LAYOUT("default", ""),
		  LAYOUT("tp2_pp4_dp2_two_iterations",
			 "--tp 2 --pp 4 --dp 2 --microbatches 8 --iterations 15,16"),
		  LAYOUT("vpp2_recompute_relative_gzip",
			 "--pp 2 --vpp 2 --dp 2 --microbatches 4 --recompute "
			 "--time-format relative --gzip"),
		  LAYOUT("cp_ep_recompute", "--tp 2 --pp 2 --cp 2 --ep 2 --dp 2 --microbatches 6 "
					    "--recompute --ranks 0-3,16"),
		  LAYOUT("vpp4_many_microbatches", "--pp 4 --vpp 4 --microbatches 12 --layers 2 "
						   "--iterations 3 --ranks 0,3"),
		  LAYOUT("straggler_nasty", "--pp 2 --dp 2 --straggler 1:1.5 --nasty "
					    "string-ids,unsorted,unicode,control-chars,orphans,"
					    "zero-dur,big-ids,bom,whitespace,nan"),
		  LAYOUT("vpp2_finish_forward_gather_clocks",
			 "--tp 2 --pp 4 --vpp 2 --dp 2 --microbatches 8 --layers 2 "
			 "--grad-reduce finish --param-gather forward --gpus-per-host 4 "
			 "--clock-skew-max 700"),
		  LAYOUT("vpp3_all_warmup",
			 "--pp 3 --vpp 3 --microbatches 3 --layers 1 --iterations 1,2"),
		  LAYOUT("no_pipeline", "--pp 1 --dp 4 --tp 2 --microbatches 3 --layers 1"),
	  })
