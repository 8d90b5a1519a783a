/* The what-if engine on hand-made op sets: each rule of the dependency model
 * (docs/whatif.md §3), the replay property, the validation messages, and the
 * metrics and verdicts on synthetic jobs with known stragglers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/pp.h"
#include "whatif/wi_ops.h"
#include "whatif/wi_optrace.h"
#include "whatif/whatif.h"
#include "wi_synth.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

/* One op of a hand-made slice; the slice lists each stage's ops in time
 * order (stage after stage is fine: only per-stage order matters). */
struct hop {
	int stage, type, mc, gmc;
};

#define F(s, mc, g)                      \
	{                                \
		s, OP_FWD_COMPUTE, mc, g \
	}
#define B(s, mc, g)                      \
	{                                \
		s, OP_BWD_COMPUTE, mc, g \
	}
#define OP(s, t)             \
	{                    \
		s, t, -1, -1 \
	}
/* A chunk's (gmc 0) parameter all-gather and gradient reduce-scatter. */
#define AG(s)                          \
	{                              \
		s, OP_PARAMS_AG, 0, -1 \
	}
#define RS(s)                         \
	{                             \
		s, OP_GRADS_RS, 0, -1 \
	}
#define END(s) OP(s, OP_GC), OP(s, OP_LAYERNORM), OP(s, OP_CLIP), OP(s, OP_OPTIMIZER)

/* Adds the slice for every step in [0, steps) and dp rank in [0, dp):
 * op k starts at k·100 µs plus a lane-dependent jitter, lasts 50 µs plus
 * another; seq_ids count per (stage, type). */
static void add_job(struct wi_table *t, const struct hop *ops, size_t n, int steps, int dp)
{
	int32_t seq[8][OP_NTYPES];
	for (int st = 0; st < steps; st++)
		for (int d = 0; d < dp; d++) {
			memset(seq, 0, sizeof(seq));
			for (size_t k = 0; k < n; k++) {
				const struct hop *h = &ops[k];
				int64_t jit = (int64_t)((st * 7 + d * 13 + (int)k * 5) % 11) * 1000;
				struct wi_op o = {
					.step = 10 + 3 * st,
					.start_ns = (int64_t)k * 100000 + jit,
					.rank = h->stage * dp + d,
					.seq_id = seq[h->stage][h->type]++,
					.dp_rank = (int16_t)d,
					.stage = (int16_t)h->stage,
					.mc = (int16_t)h->mc,
					.gmc = (int16_t)h->gmc,
					.mb_id = -1,
					.optype = (uint8_t)h->type,
				};
				o.end_ns = o.start_ns + 50000 + 3 * jit;
				wi_table_add(t, &o, (uint32_t)k + 2);
			}
		}
}

static struct whatif *build(const struct hop *ops, size_t n, int steps, int dp)
{
	struct wi_table t;
	struct strbuf err = STRBUF_INIT;
	struct whatif *e = NULL;
	wi_table_init(&t);
	add_job(&t, ops, n, steps, dp);
	strbuf_reset(&err);
	int rc = whatif_new(&t, NULL, &e, &err);
	if (rc)
		print_message("whatif_new: %s\n", err.buf);
	assert_int_equal(rc, 0);
	wi_table_release(&t);
	return e;
	strbuf_release(&err);
}

static long node(const struct whatif *e, int stage, int type, int seq)
{
	long v = whatif_find(e, stage, type, seq);
	if (v < 0)
		print_message("no node %s_%d_%d\n", op_type_name(type), seq, stage);
	assert_true(v >= 0);
	return v;
}

/* The names of v's predecessors, sorted, comma-separated. */
static void preds_of(const struct whatif *e, long v, char *buf, size_t len)
{
	const int32_t *p;
	size_t n = whatif_node_preds(e, (size_t)v, &p);
	char names[16][96];
	assert_true(n <= 16);
	for (size_t i = 0; i < n; i++)
		whatif_node_name(e, (size_t)p[i], names[i], sizeof(names[i]));
	qsort(names, n, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(buf);
		snprintf(buf + l, len - l, "%s%s", i ? "," : "", names[i]);
	}
}

static void expect_preds(const struct whatif *e, int stage, int type, int seq, const char *want)
{
	char got[1024];
	preds_of(e, node(e, stage, type, seq), got, sizeof(got));
	if (strcmp(got, want))
		print_message("%s_%d_%d: preds %s, want %s\n", op_type_name(type), seq, stage, got,
			      want);
	assert_string_equal(got, want);
}

/* The sorted member names of v's sync group ("" for a local op). */
static void expect_group(const struct whatif *e, int stage, int type, int seq, const char *want)
{
	const int32_t *m;
	long v = node(e, stage, type, seq);
	size_t n = whatif_node_group(e, (size_t)v, &m);
	char names[8][96], got[1024] = "";
	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++)
		whatif_node_name(e, (size_t)m[i], names[i], sizeof(names[i]));
	qsort(names, n, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(got);
		snprintf(got + l, sizeof(got) - l, "%s%s", i ? "," : "", names[i]);
	}
	if (strcmp(got, want))
		print_message("group of %s_%d_%d: %s, want %s\n", op_type_name(type), seq, stage,
			      got, want);
	assert_string_equal(got, want);
}

/* Replaying the recorded durations and launch delays gives back every
 * recorded start and end, to the bit. */
static void expect_replay(struct whatif *e)
{
	struct whatif_shape sh;
	whatif_shape(e, &sh);
	size_t n = sh.nsteps * (size_t)sh.dp * sh.nodes;
	double *rs = malloc(n * sizeof(double)), *re = malloc(n * sizeof(double));
	double *ss = malloc(n * sizeof(double)), *se = malloc(n * sizeof(double));
	assert_non_null(rs);
	assert_non_null(re);
	assert_non_null(ss);
	assert_non_null(se);
	whatif_recorded(e, rs, re);
	whatif_timeline(e, WI_SCEN_BASE, ss, se);
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		if (rs[i] != ss[i] || re[i] != se[i]) {
			if (!bad++)
				print_message(
					"op %zu: recorded [%.0f, %.0f], replayed [%.0f, %.0f]\n", i,
					rs[i], re[i], ss[i], se[i]);
		}
	assert_int_equal(bad, 0);
	free(rs);
	free(re);
	free(ss);
	free(se);
}

/* PP 1, no DP: the compute chain and the no-DP end chain; the missing
 * embedding all-reduce becomes a one-member placeholder group. */
static void test_one_stage(void **state)
{
	(void)state;
	static const struct hop ops[] = {
		F(0, 0, 0), B(0, 0, 0), F(0, 0, 0), B(0, 0, 0), END(0),
	};
	struct whatif *e = build(ops, sizeof(ops) / sizeof(ops[0]), 3, 1);
	struct whatif_shape sh;
	whatif_shape(e, &sh);
	assert_int_equal(sh.pp, 1);
	assert_int_equal(sh.dp, 1);
	assert_false(sh.use_dp);
	expect_preds(e, 0, OP_FWD_COMPUTE, 0, "");
	expect_preds(e, 0, OP_BWD_COMPUTE, 0, "forward-compute_0_0");
	expect_preds(e, 0, OP_FWD_COMPUTE, 1, "backward-compute_0_0");
	expect_preds(e, 0, OP_GC, 0, "backward-compute_1_0");
	expect_preds(e, 0, OP_LAYERNORM, 0, "gc_0_0");
	expect_preds(e, 0, OP_EMBEDDING, 0, "layernorm-grads-all-reduce_0_0");
	expect_preds(e, 0, OP_CLIP, 0, "embedding-grads-all-reduce_0_0");
	expect_preds(e, 0, OP_OPTIMIZER, 0, "optimizer-clip-main-grad_0_0");
	expect_group(e, 0, OP_EMBEDDING, 0, "embedding-grads-all-reduce_0_0");
	expect_group(e, 0, OP_CLIP, 0, "optimizer-clip-main-grad_0_0");
	expect_group(e, 0, OP_GC, 0, "");
	struct whatif_node nd;
	whatif_node(e, (size_t)node(e, 0, OP_EMBEDDING, 0), &nd);
	assert_true(nd.placeholder);
	assert_non_null(strstr(whatif_notes(e), "embedding-grads-all-reduce_0_0"));
	expect_replay(e);
	whatif_free(e);
}

/* PP 2, VPP 1: matching, pairing across stages, a type-1 no-op (a recv
 * recorded after the last backward started), the first backward exchange
 * waiting for the warm-up forward, the embedding pair. */
static void test_pp2(void **state)
{
	(void)state;
	static const struct hop ops[] = {
		F(0, 0, 0),
		OP(0, OP_FWD_SEND),
		F(0, 0, 0),
		OP(0, OP_FWD_SEND),
		OP(0, OP_BWD_RECV),
		B(0, 0, 0),
		OP(0, OP_BWD_RECV),
		B(0, 0, 0),
		OP(0, OP_BWD_RECV), /* type-1 no-op */
		END(0),
		OP(0, OP_EMBEDDING),
		OP(1, OP_FWD_RECV),
		F(1, 0, 1),
		B(1, 0, 1),
		OP(1, OP_BWD_SEND),
		OP(1, OP_FWD_RECV),
		F(1, 0, 1),
		B(1, 0, 1),
		OP(1, OP_BWD_SEND),
		END(1),
		OP(1, OP_EMBEDDING),
	};
	struct whatif *e = build(ops, sizeof(ops) / sizeof(ops[0]), 2, 1);
	expect_preds(e, 0, OP_FWD_SEND, 0, "forward-compute_0_0");
	expect_preds(e, 0, OP_FWD_SEND, 1, "forward-compute_1_0,forward-send_0_0");
	expect_preds(e, 1, OP_FWD_RECV, 0, "");
	expect_preds(e, 1, OP_FWD_RECV, 1, "forward-compute_0_1,forward-recv_0_1");
	expect_preds(e, 1, OP_FWD_COMPUTE, 1, "backward-compute_0_1,forward-recv_1_1");
	expect_preds(e, 1, OP_BWD_SEND, 0, "backward-compute_0_1");
	/* First backward of stage 0 at position 2: its recv also waits for the
	 * compute two before it. */
	expect_preds(e, 0, OP_BWD_RECV, 0, "forward-compute_0_0");
	expect_preds(e, 0, OP_BWD_RECV, 1, "backward-compute_0_0,backward-recv_0_0");
	expect_preds(e, 0, OP_BWD_COMPUTE, 1, "backward-compute_0_0,backward-recv_1_0");
	expect_preds(e, 0, OP_BWD_RECV, 2, "backward-recv_1_0"); /* stream only */
	expect_group(e, 0, OP_FWD_SEND, 1, "forward-recv_1_1,forward-send_1_0");
	expect_group(e, 1, OP_BWD_SEND, 0, "backward-recv_0_0,backward-send_0_1");
	expect_group(e, 0, OP_BWD_RECV, 2, "backward-recv_2_0");
	expect_group(e, 0, OP_EMBEDDING, 0,
		     "embedding-grads-all-reduce_0_0,embedding-grads-all-reduce_0_1");
	expect_preds(e, 1, OP_EMBEDDING, 0, "layernorm-grads-all-reduce_0_1");
	expect_group(e, 1, OP_CLIP, 0, "optimizer-clip-main-grad_0_0,optimizer-clip-main-grad_0_1");
	expect_replay(e);
	whatif_free(e);
}

/* One stage of a PP 2 × VPP 2 job: each compute with its recv before and
 * its send after; chunks c0 then c1 forward, c1 then c0 backward. */
#define VSTAGE(s, skip_first_frecv)                                                         \
	OP(s, OP_FWD_RECV), F(s, 0, s), OP(s, OP_FWD_SEND), OP(s, OP_FWD_RECV), F(s, 0, s), \
		OP(s, OP_FWD_SEND), OP(s, OP_FWD_RECV), F(s, 1, 2 + s), OP(s, OP_FWD_SEND), \
		OP(s, OP_FWD_RECV), F(s, 1, 2 + s), OP(s, OP_FWD_SEND), OP(s, OP_BWD_RECV), \
		B(s, 1, 2 + s), OP(s, OP_BWD_SEND), OP(s, OP_BWD_RECV), B(s, 1, 2 + s),     \
		OP(s, OP_BWD_SEND), OP(s, OP_BWD_RECV), B(s, 0, s), OP(s, OP_BWD_SEND),     \
		OP(s, OP_BWD_RECV), B(s, 0, s), OP(s, OP_BWD_SEND), END(s), OP(s, OP_EMBEDDING)

/* VPP 2: chunk ids, type-2 no-ops (the model's first chunk has no
 * forward-recv partner, its last no forward-send partner) and the mod-PP
 * wrap-around: stage 1's chunk 0 feeds stage 0's chunk 1. */
static void test_vpp2(void **state)
{
	(void)state;
	static const struct hop ops[] = { VSTAGE(0, 0), VSTAGE(1, 0) };
	struct whatif *e = build(ops, sizeof(ops) / sizeof(ops[0]), 2, 1);
	struct whatif_shape sh;
	whatif_shape(e, &sh);
	assert_int_equal(sh.vpp, 2);
	/* Type-2 no-ops keep their compute edges but sync alone. */
	expect_group(e, 0, OP_FWD_RECV, 0, "forward-recv_0_0");
	expect_preds(e, 0, OP_FWD_COMPUTE, 0, "forward-recv_0_0");
	expect_group(e, 1, OP_FWD_SEND, 2, "forward-send_2_1");
	expect_preds(e, 1, OP_FWD_SEND, 2, "forward-compute_2_1,forward-send_1_1");
	expect_group(e, 1, OP_BWD_RECV, 0, "backward-recv_0_1");
	expect_group(e, 0, OP_BWD_SEND, 2, "backward-send_2_0");
	/* Wrap-around: the first launched forward-send of stage 1 (gmc 1)
	 * pairs with the first launched forward-recv of stage 0 (gmc 2). */
	expect_group(e, 1, OP_FWD_SEND, 0, "forward-recv_2_0,forward-send_0_1");
	expect_group(e, 0, OP_FWD_SEND, 0, "forward-recv_0_1,forward-send_0_0");
	expect_group(e, 1, OP_BWD_SEND, 2, "backward-recv_2_0,backward-send_2_1");
	expect_group(e, 0, OP_BWD_SEND, 0, "backward-recv_2_1,backward-send_0_0");
	/* First backward at position 4: waits for the compute two before. */
	expect_preds(e, 0, OP_BWD_RECV, 0, "forward-compute_2_0");
	expect_preds(e, 0, OP_BWD_SEND, 0, "backward-compute_0_0,forward-compute_2_0");
	expect_replay(e);
	whatif_free(e);
}

/* VPP 2 with stage 0's first forward-recv missing: n−1 recvs match
 * computes 1.., the first compute has none. */
static void test_vpp2_shift(void **state)
{
	(void)state;
	static const struct hop full[] = { VSTAGE(0, 0), VSTAGE(1, 0) };
	size_t n = sizeof(full) / sizeof(full[0]);
	struct hop *ops = malloc(n * sizeof(*ops));
	assert_non_null(ops);
	memcpy(ops, full + 1, (n - 1) * sizeof(*ops)); /* drop stage 0's first recv */
	struct whatif *e = build(ops, n - 1, 2, 1);
	expect_preds(e, 0, OP_FWD_COMPUTE, 0, "");
	expect_preds(e, 0, OP_FWD_COMPUTE, 1, "forward-compute_0_0,forward-recv_0_0");
	expect_preds(e, 0, OP_FWD_RECV, 0, "forward-compute_0_0");
	expect_group(e, 0, OP_FWD_RECV, 0, "forward-recv_0_0"); /* gmc 0: no peer */
	expect_group(e, 0, OP_FWD_RECV, 1, "forward-recv_1_0,forward-send_0_1");
	expect_replay(e);
	whatif_free(e);
	free(ops);
}

/* DP 2, non-overlapped: the DP stream, the last all-gather of a chunk
 * gating its first forward, reduce-scatters in the end chain, DP sync. */
static void test_dp(void **state)
{
	(void)state;
	static const struct hop ops[] = {
		AG(0),      AG(0),          F(0, 0, 0),          B(0, 0, 0),          F(0, 0, 0),
		B(0, 0, 0), OP(0, OP_GC),   OP(0, OP_LAYERNORM), OP(0, OP_EMBEDDING), RS(0),
		RS(0),      OP(0, OP_CLIP), OP(0, OP_OPTIMIZER),
	};
	struct whatif *e = build(ops, sizeof(ops) / sizeof(ops[0]), 3, 2);
	struct whatif_shape sh;
	whatif_shape(e, &sh);
	assert_true(sh.use_dp);
	assert_false(sh.overlapped_dp);
	expect_preds(e, 0, OP_PARAMS_AG, 1, "params-all-gather_0_0");
	expect_preds(e, 0, OP_FWD_COMPUTE, 0, "params-all-gather_1_0");
	expect_preds(e, 0, OP_GRADS_RS, 0, "embedding-grads-all-reduce_0_0,params-all-gather_1_0");
	expect_preds(e, 0, OP_GRADS_RS, 1, "grads-reduce-scatter_0_0");
	expect_preds(e, 0, OP_CLIP, 0, "grads-reduce-scatter_1_0");
	struct whatif_node nd;
	whatif_node(e, (size_t)node(e, 0, OP_GRADS_RS, 1), &nd);
	assert_true(nd.comm && nd.dp_sync);
	whatif_node(e, (size_t)node(e, 0, OP_EMBEDDING, 0), &nd);
	assert_true(nd.comm && !nd.dp_sync);
	whatif_node(e, (size_t)node(e, 0, OP_LAYERNORM, 0), &nd);
	assert_false(nd.comm);
	expect_replay(e);
	whatif_free(e);
}

/* Overlapped DP (a separate-grads-all-reduce exists): the first
 * reduce-scatter of a chunk waits for its last backward; layernorm waits
 * for the last reduce-scatter and gc; the separate all-reduce sits
 * between embedding and clip. */
static void test_dp_overlapped(void **state)
{
	(void)state;
	static const struct hop ops[] = {
		AG(0),
		F(0, 0, 0),
		B(0, 0, 0),
		F(0, 0, 0),
		B(0, 0, 0),
		RS(0),
		OP(0, OP_GC),
		OP(0, OP_LAYERNORM),
		OP(0, OP_EMBEDDING),
		OP(0, OP_SEP_AR),
		OP(0, OP_CLIP),
		OP(0, OP_OPTIMIZER),
	};
	struct whatif *e = build(ops, sizeof(ops) / sizeof(ops[0]), 2, 2);
	struct whatif_shape sh;
	whatif_shape(e, &sh);
	assert_true(sh.overlapped_dp);
	expect_preds(e, 0, OP_GRADS_RS, 0, "backward-compute_1_0,params-all-gather_0_0");
	expect_preds(e, 0, OP_LAYERNORM, 0, "gc_0_0,grads-reduce-scatter_0_0");
	expect_preds(e, 0, OP_SEP_AR, 0, "embedding-grads-all-reduce_0_0");
	expect_preds(e, 0, OP_CLIP, 0, "separate-grads-all-reduce_0_0");
	expect_replay(e);
	whatif_free(e);
}

/* An all-gather recorded after the optimizer closes a cycle (it gates the
 * first forward, and the DP stream puts it after the reduce-scatter). */
static void test_cycle(void **state)
{
	(void)state;
	static const struct hop ops[] = {
		F(0, 0, 0),          B(0, 0, 0),          OP(0, OP_GC),
		OP(0, OP_LAYERNORM), OP(0, OP_EMBEDDING), RS(0),
		OP(0, OP_CLIP),      OP(0, OP_OPTIMIZER), AG(0),
	};
	struct wi_table t;
	struct strbuf err = STRBUF_INIT;
	struct whatif *e = NULL;
	wi_table_init(&t);
	add_job(&t, ops, sizeof(ops) / sizeof(ops[0]), 1, 2);
	strbuf_reset(&err);
	assert_int_equal(whatif_new(&t, NULL, &e, &err), PP_ECYCLE);
	assert_null(e);
	assert_non_null(strstr(err.buf, "cycle"));
	assert_non_null(strstr(err.buf, "params-all-gather_0_0"));
	wi_table_release(&t);
	strbuf_release(&err);
}

/* A valid two-stage job with DP 2, as rows to break in the error tests. */
static void valid_rows(struct wi_table *t)
{
	static const struct hop ops[] = {
		F(0, 0, 0),
		OP(0, OP_FWD_SEND),
		OP(0, OP_BWD_RECV),
		B(0, 0, 0),
		AG(0),
		RS(0),
		END(0),
		OP(1, OP_FWD_RECV),
		F(1, 0, 1),
		B(1, 0, 1),
		OP(1, OP_BWD_SEND),
		AG(1),
		RS(1),
		END(1),
	};
	add_job(t, ops, sizeof(ops) / sizeof(ops[0]), 2, 2);
}

static const struct wi_op *find_row(struct wi_table *t, int64_t step, int dp, int stage, int type,
				    int seq)
{
	for (size_t i = 0; i < t->n; i++) {
		struct wi_op *o = &t->ops[i];
		if (o->step == step && o->dp_rank == dp && o->stage == stage && o->optype == type &&
		    o->seq_id == seq)
			return o;
	}
	fail_msg("no row");
	return NULL;
}

static void expect_error(struct wi_table *t, int code, const char *part)
{
	struct strbuf err = STRBUF_INIT;
	struct whatif *e = NULL;
	snprintf(t->src, sizeof(t->src), "job.csv");
	strbuf_reset(&err);
	int rc = whatif_new(t, NULL, &e, &err);
	if (rc != code || !strstr(err.buf, part))
		print_message("got %d '%s', want %d with '%s'\n", rc, err.buf, code, part);
	assert_int_equal(rc, code);
	assert_non_null(strstr(err.buf, part));
	assert_null(e);
	wi_table_release(t);
	strbuf_release(&err);
}

enum edit {
	E_DROP_BWD,
	E_DROP_OPT,
	E_SEQ_GAP,
	E_LACKS,
	E_EXTRA,
	E_TWICE,
	E_TWO_RANKS,
	E_NEG_DUR,
	E_OPT1,
	E_EMPTY
};

static void edit_and_expect(enum edit what, int code, const char *part)
{
	struct wi_table t;
	wi_table_init(&t);
	if (what != E_EMPTY)
		valid_rows(&t);
	struct wi_op *o;
	switch (what) {
	case E_DROP_BWD: /* backward-compute_0_1 of every slice becomes a gc_1 */
		for (size_t i = 0; i < t.n; i++)
			if (t.ops[i].stage == 1 && t.ops[i].optype == OP_BWD_COMPUTE)
				t.ops[i].optype = OP_FWD_COMPUTE, t.ops[i].seq_id = 1;
		break;
	case E_DROP_OPT:
		for (size_t i = 0; i < t.n; i++)
			if (t.ops[i].stage == 0 && t.ops[i].optype == OP_OPTIMIZER)
				t.ops[i].optype = OP_FWD_SEND, t.ops[i].seq_id = 1;
		break;
	case E_SEQ_GAP:
		o = (struct wi_op *)find_row(&t, 10, 0, 0, OP_FWD_SEND, 0);
		o->seq_id = 2;
		break;
	case E_LACKS:
		o = (struct wi_op *)find_row(&t, 13, 1, 1, OP_GC, 0);
		*o = t.ops[--t.n];
		break;
	case E_EXTRA:
		o = (struct wi_op *)find_row(&t, 13, 1, 1, OP_GC, 0);
		o->seq_id = 1;
		break;
	case E_TWICE:
		o = (struct wi_op *)find_row(&t, 13, 1, 1, OP_GC, 0);
		o->optype = OP_LAYERNORM;
		break;
	case E_TWO_RANKS:
		o = (struct wi_op *)find_row(&t, 13, 1, 1, OP_GC, 0);
		o->rank = 99;
		break;
	case E_NEG_DUR:
		o = (struct wi_op *)find_row(&t, 13, 1, 1, OP_GC, 0);
		o->end_ns = o->start_ns - 1;
		break;
	case E_OPT1:
		o = (struct wi_op *)find_row(&t, 10, 0, 0, OP_LAYERNORM, 0);
		o->optype = OP_OPTIMIZER;
		o->seq_id = 1;
		break;
	case E_EMPTY: break;
	}
	expect_error(&t, code, part);
}

static void test_validation(void **state)
{
	(void)state;
	edit_and_expect(E_DROP_BWD, PP_EPARSE,
			"stage 1 has 2 forward-compute and 0 backward-compute");
	edit_and_expect(E_DROP_OPT, PP_EPARSE, "stage 0 has no optimizer op");
	edit_and_expect(E_SEQ_GAP, PP_EPARSE,
			"seq_ids of forward-send on stage 0 are not contiguous");
	edit_and_expect(E_LACKS, PP_EPARSE, "step 13, dp_rank 1 lacks gc_0_1");
	edit_and_expect(E_EXTRA, PP_EPARSE, "job.csv:");
	edit_and_expect(E_EXTRA, PP_EPARSE, "gc_1_1 (step 13, dp_rank 1) is not an op of step 10");
	edit_and_expect(E_TWICE, PP_EPARSE,
			"layernorm-grads-all-reduce_0_1 appears twice in step 13, dp_rank 1");
	edit_and_expect(E_TWO_RANKS, PP_EPARSE, "one rank per (dp_rank, stage)");
	edit_and_expect(E_NEG_DUR, PP_EPARSE, "duration is negative");
	edit_and_expect(E_OPT1, PP_EPARSE, "optimizer_1_0: the model has one optimizer op");
	edit_and_expect(E_EMPTY, PP_EPARSE, "no rows");
}

/* Model rules that reject an op set. */
static void test_model_errors(void **state)
{
	(void)state;
	struct wi_table t;
	/* DP collectives in a job without DP. */
	static const struct hop nodp[] = { AG(0), F(0, 0, 0), B(0, 0, 0), END(0) };
	wi_table_init(&t);
	add_job(&t, nodp, sizeof(nodp) / sizeof(nodp[0]), 1, 1);
	expect_error(&t, PP_EPARSE, "no data parallelism");
	/* Embedding all-reduce on a middle stage. */
	static const struct hop mid[] = {
		F(0, 0, 0),
		OP(0, OP_FWD_SEND),
		OP(0, OP_BWD_RECV),
		B(0, 0, 0),
		END(0),
		OP(1, OP_FWD_RECV),
		F(1, 0, 1),
		OP(1, OP_FWD_SEND),
		OP(1, OP_BWD_RECV),
		B(1, 0, 1),
		OP(1, OP_BWD_SEND),
		END(1),
		OP(1, OP_EMBEDDING),
		OP(2, OP_FWD_RECV),
		F(2, 0, 2),
		B(2, 0, 2),
		OP(2, OP_BWD_SEND),
		END(2),
	};
	wi_table_init(&t);
	add_job(&t, mid, sizeof(mid) / sizeof(mid[0]), 1, 1);
	expect_error(&t, PP_EPARSE, "embedding-grads-all-reduce on stage 1");
	/* A middle stage without its forward-recv. */
	static const struct hop norecv[] = {
		F(0, 0, 0), OP(0, OP_FWD_SEND), OP(0, OP_BWD_RECV), B(0, 0, 0), END(0),
		F(1, 0, 1), OP(1, OP_FWD_SEND), OP(1, OP_BWD_RECV), B(1, 0, 1), OP(1, OP_BWD_SEND),
		END(1),     OP(2, OP_FWD_RECV), F(2, 0, 2),         B(2, 0, 2), OP(2, OP_BWD_SEND),
		END(2),
	};
	wi_table_init(&t);
	add_job(&t, norecv, sizeof(norecv) / sizeof(norecv[0]), 1, 1);
	expect_error(&t, PP_EPARSE,
		     "stage 1 has 0 launched forward-recv ops for 1 forward-compute");
	/* Two launched forward-sends on stage 0, one forward-recv on stage 1. */
	static const struct hop unpaired[] = {
		F(0, 0, 0), OP(0, OP_FWD_SEND), F(0, 0, 0), OP(0, OP_FWD_SEND),
		B(0, 0, 0), B(0, 0, 0),         END(0),     OP(1, OP_FWD_RECV),
		F(1, 0, 1), B(1, 0, 1),         F(1, 0, 1), B(1, 0, 1),
		END(1),
	};
	wi_table_init(&t);
	add_job(&t, unpaired, sizeof(unpaired) / sizeof(unpaired[0]), 1, 1);
	expect_error(&t, PP_EPARSE, "has no peer");
}

/* The metrics on synthetic jobs with known causes. */
static void run_synth(const struct wi_synth *c, struct whatif **e, struct whatif_result *r)
{
	*e = wi_synth_engine(c);
	assert_non_null(*e);
	whatif_run(*e, r);
}

static void test_verdicts(void **state)
{
	(void)state;
	struct wi_synth c;
	struct whatif *e;
	struct whatif_result r;

	/* No straggler: S below the threshold, nothing decomposed, M_W NULL. */
	wi_synth_defaults(&c, 4, 4, 8, 3);
	c.seed = 11;
	run_synth(&c, &e, &r);
	assert_true(r.s < 1.03);
	assert_false(r.by_group.present);
	assert_false(r.by_dp.present);
	assert_true(isnan(r.m_w));
	assert_true(isnan(r.workers[0].s_w));
	assert_int_equal(r.verdict, WI_VERDICT_NONE);
	expect_replay(e);
	whatif_result_release(&r);
	whatif_free(e);

	/* One slow worker (dp 2, stage 1): first among the workers, M_W ≈ 1. */
	wi_synth_slow(&c, 1.8, 2, 1);
	run_synth(&c, &e, &r);
	assert_true(r.s >= 1.03);
	assert_true(r.by_dp.present && r.by_stage.present && r.by_group.present);
	assert_int_equal(r.workers[0].dp_rank, 2);
	assert_int_equal(r.workers[0].stage, 1);
	assert_int_equal(r.workers[0].rank, 1 * 4 + 2);
	assert_int_equal(r.n_mw, 1);
	assert_true(r.m_w > 0.8);
	assert_int_equal(r.verdict, WI_VERDICT_WORKER);
	/* S_w = min(S_dp, S_pp). */
	for (size_t i = 0; i < r.nworkers; i++)
		assert_true(r.workers[i].s_w == fmin(r.workers[i].s_dp, r.workers[i].s_pp));
	whatif_result_release(&r);
	whatif_free(e);

	/* A slow last stage: M_S ≈ 1, verdict stage. */
	c.slow = 1;
	c.last_stage = 1.6;
	run_synth(&c, &e, &r);
	assert_true(r.s >= 1.03);
	assert_true(r.m_s > 0.8);
	assert_int_equal(r.verdict, WI_VERDICT_STAGE);
	whatif_result_release(&r);
	whatif_free(e);
}

/* A 40 ms stall before replica 0's first forward on stage 0 in every step
 * (data loading): launch_slowdown passes the threshold and its
 * decomposition puts the stall on first-op, replica 0 and stage 0. */
static void test_launch_decomposition(void **state)
{
	(void)state;
	struct wi_synth c;
	wi_synth_defaults(&c, 2, 3, 4, 3);
	struct wi_table t;
	struct strbuf err = STRBUF_INIT;
	wi_table_init(&t);
	wi_synth_job(&t, &c);
	for (size_t i = 0; i < t.n; i++) {
		struct wi_op *o = &t.ops[i];
		if (o->dp_rank == 0 && o->stage == 0 && o->optype != OP_PARAMS_AG) {
			o->start_ns += 40000000;
			o->end_ns += 40000000;
		}
	}
	struct whatif *e;
	struct whatif_result r;
	strbuf_reset(&err);
	assert_int_equal(whatif_new(&t, NULL, &e, &err), 0);
	whatif_run(e, &r);
	assert_true(r.s_launch >= 1.03);
	assert_true(r.l_by_group.present && r.l_by_dp.present && r.l_by_stage.present);
	size_t best = 0;
	for (size_t i = 1; i < r.l_by_group.n; i++)
		if (r.l_by_group.ratio[i] > r.l_by_group.ratio[best])
			best = i;
	assert_int_equal(r.l_by_group.key[best], WI_G_FIRST_OP);
	assert_true(r.l_by_group.ratio[best] > 1.03);
	assert_true(r.l_by_dp.ratio[0] > 1.03 && r.l_by_dp.ratio[1] < 1.001);
	assert_true(r.l_by_stage.ratio[0] > 1.03);
	whatif_result_release(&r);
	whatif_free(e);
	wi_table_release(&t);
	strbuf_release(&err);
}

/* S_dp on two lanes per step gives the same bits as on every lane. */
static void test_two_lane_shortcut(void **state)
{
	(void)state;
	struct wi_synth c;
	wi_synth_defaults(&c, 3, 5, 6, 4);
	c.seed = 5;
	wi_synth_slow(&c, 1.5, 3, 2);
	struct wi_table t;
	struct strbuf err = STRBUF_INIT;
	wi_table_init(&t);
	wi_synth_job(&t, &c);
	struct whatif_opts all = { .all_lanes = true };
	struct whatif *e1, *e2;
	strbuf_reset(&err);
	assert_int_equal(whatif_new(&t, NULL, &e1, &err), 0);
	strbuf_reset(&err);
	assert_int_equal(whatif_new(&t, &all, &e2, &err), 0);
	struct whatif_result r1, r2;
	whatif_run(e1, &r1);
	whatif_run(e2, &r2);
	assert_true(r1.by_dp.present);
	assert_int_equal(r1.by_dp.n, 5);
	assert_memory_equal(r1.by_dp.ratio, r2.by_dp.ratio, 5 * sizeof(double));
	assert_memory_equal(r1.by_dp.per_step, r2.by_dp.per_step, 5 * 4 * sizeof(double));
	whatif_result_release(&r1);
	whatif_result_release(&r2);
	whatif_free(e1);
	whatif_free(e2);
	wi_table_release(&t);
	strbuf_release(&err);
}

/* tests/fixtures/whatif/pp2dp2.csv: a hand-made PP 2 × DP 2 job (2 steps,
 * 2 micro-batches, 1F1B) in the reference's CSV format, through the reader
 * and the engine. Replica 1's stage-0 computes are 3× slow in step 7; the
 * file has no layernorm rows (placeholders) and a backward-recv recorded
 * after stage 0's last backward started (a type-1 no-op). */
static void test_fixture_csv(void **state)
{
	(void)state;
	const char *root = getenv("PP_ROOT") ? getenv("PP_ROOT") : ".";
	char csv[4096], yaml[4096];
	struct strbuf err = STRBUF_INIT;
	snprintf(csv, sizeof(csv), "%s/tests/fixtures/whatif/pp2dp2.csv", root);
	snprintf(yaml, sizeof(yaml), "%s/tests/fixtures/whatif/pp2dp2.yaml", root);
	struct wi_table t;
	wi_table_init(&t);
	strbuf_reset(&err);
	int rc = wi_optrace_read(csv, &t, &err);
	if (rc)
		fail_msg("%s", err.buf);
	strbuf_reset(&err);
	assert_int_equal(wi_optrace_read_meta(yaml, &t.meta, &err), 0);
	t.has_meta = true;
	assert_int_equal(t.n, 116);
	struct whatif *e;
	struct whatif_result r;
	strbuf_reset(&err);
	assert_int_equal(whatif_new(&t, NULL, &e, &err), 0);
	wi_table_release(&t);
	assert_non_null(strstr(whatif_notes(e), "layernorm-grads-all-reduce_0_1"));
	expect_group(e, 0, OP_BWD_RECV, 2, "backward-recv_2_0");
	expect_preds(e, 0, OP_BWD_RECV, 2, "backward-recv_1_0");
	expect_group(e, 0, OP_BWD_RECV, 0, "backward-recv_0_0,backward-send_0_1");
	expect_replay(e);
	whatif_run(e, &r);
	assert_true(r.s > 1.1);
	assert_int_equal(r.workers[0].rank, 1);
	assert_int_equal(r.workers[0].dp_rank, 1);
	assert_int_equal(r.workers[0].stage, 0);
	assert_int_equal(r.verdict, WI_VERDICT_WORKER);
	whatif_result_release(&r);
	whatif_free(e);
	strbuf_release(&err);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_one_stage),
		  cmocka_unit_test(test_pp2),
		  cmocka_unit_test(test_vpp2),
		  cmocka_unit_test(test_vpp2_shift),
		  cmocka_unit_test(test_dp),
		  cmocka_unit_test(test_dp_overlapped),
		  cmocka_unit_test(test_cycle),
		  cmocka_unit_test(test_validation),
		  cmocka_unit_test(test_model_errors),
		  cmocka_unit_test(test_verdicts),
		  cmocka_unit_test(test_launch_decomposition),
		  cmocka_unit_test(test_fixture_csv),
		  cmocka_unit_test(test_two_lane_shortcut),
	  })
