/* The why engine (docs/why.md) on hand-made rows whose waits are known:
 * exact wait and transfer of every p2p kernel and transfer (batched calls
 * with one peer and with two), the same numbers when a rank's clock is
 * shifted, a missing rank's pairs and instances reported as such, the
 * collectives' last arrivers, their transfer and the ranks that arrive last
 * too often; the critical path on the what-if engine's synthetic jobs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/optype.h"
#include "model/rank_result.h"
#include "util/pp.h"
#include "whatif/whatif.h"
#include "why/why.h"
#include "tests/unit/whatif/wi_synth.h"
#include "tests/unit/unit.h"

#define IT 15

static void op(struct why *w, int rank, int type, int64_t s, int64_t e, int seq)
{
	struct why_op o = { .iteration = IT,
			    .start_ns = s,
			    .end_ns = e,
			    .rank = rank,
			    .seq_id = seq,
			    .step_seq = -1,
			    .mc = -1,
			    .mb_id = -1,
			    .optype = (uint8_t)type };
	why_add_op(w, &o);
}

static void place(struct why *w, int rank, int group, int stage, int dp)
{
	struct why_rank r = { rank, group, stage, dp };
	why_add_rank(w, &r);
}

static void trace(struct why *w, int rank, int64_t bubble)
{
	struct why_trace t = { IT, rank, bubble };
	why_add_trace(w, &t);
}

/* A 1F1B pipeline of two stages and two micro-batches; rank 1's clock
 * reads off ns more than rank 0's. Calls (rank: interval, transfers):
 *   0: A [100,150] fwd-send mb0    B [250,600] fwd-send mb1 + bwd-recv mb0
 *      C [800,1000] bwd-recv mb1
 *   1: D [20,150] fwd-recv mb0     E [450,600] bwd-send mb0 + fwd-recv mb1
 *      F [900,1000] bwd-send mb1
 * Pairs: A-D, B-E (both transfers), C-F. */
static void two_stages(struct why *w, int64_t off, bool rank1)
{
	place(w, 0, 0, 0, 0);
	place(w, 1, 0, 1, 0);
	trace(w, 0, 700);
	op(w, 0, OP_FWD_COMPUTE, 0, 100, 0);
	op(w, 0, OP_FWD_SEND, 100, 150, 0);
	op(w, 0, OP_FWD_COMPUTE, 150, 250, 1);
	op(w, 0, OP_FWD_SEND, 250, 600, 1);
	op(w, 0, OP_BWD_RECV, 250, 600, 0);
	op(w, 0, OP_BWD_COMPUTE, 600, 800, 0);
	op(w, 0, OP_BWD_RECV, 800, 1000, 1);
	op(w, 0, OP_BWD_COMPUTE, 1000, 1200, 1);
	if (!rank1)
		return;
	trace(w, 1, 300);
	op(w, 1, OP_FWD_RECV, 20 + off, 150 + off, 0);
	op(w, 1, OP_FWD_COMPUTE, 150 + off, 250 + off, 0);
	op(w, 1, OP_BWD_COMPUTE, 250 + off, 450 + off, 0);
	op(w, 1, OP_BWD_SEND, 450 + off, 600 + off, 0);
	op(w, 1, OP_FWD_RECV, 450 + off, 600 + off, 1);
	op(w, 1, OP_FWD_COMPUTE, 600 + off, 700 + off, 1);
	op(w, 1, OP_BWD_COMPUTE, 700 + off, 900 + off, 1);
	op(w, 1, OP_BWD_SEND, 900 + off, 1000 + off, 1);
}

static void run(struct why *w, struct why_result *r)
{
	struct strbuf err = STRBUF_INIT;
	int rc = why_run(w, r, &err);
	if (rc)
		print_message("%s\n", err.buf);
	assert_int_equal(rc, 0);
	strbuf_release(&err);
}

/* An analysed job: the engine and its result (analysed_release()). */
struct analysed {
	struct why *w;
	struct why_result r;
};

/* two_stages(off, rank1) analysed (PP 2, keep_clocks as given). */
static void run_two_stages(struct analysed *a, int64_t off, bool rank1, bool keep_clocks)
{
	struct why_opts o = { .pp = 2, .vpp = 1, .keep_clocks = keep_clocks };
	a->w = why_new(&o);
	two_stages(a->w, off, rank1);
	run(a->w, &a->r);
}

static void analysed_release(struct analysed *a)
{
	why_result_release(&a->r);
	why_free(a->w);
}

static const struct why_p2p_kernel *kernel(const struct why_result *r, int rank, int seq)
{
	for (size_t i = 0; i < r->nkernels; i++)
		if (r->kernels[i].rank == rank && r->kernels[i].seq == seq)
			return &r->kernels[i];
	fail_msg("no kernel %d of rank %d", seq, rank);
	return NULL;
}

static void expect_kernel(const struct why_result *r, int rank, int seq, int64_t start,
			  int64_t wait, int64_t transfer, int waited_for, int side)
{
	const struct why_p2p_kernel *k = kernel(r, rank, seq);
	assert_int_equal(k->status, WHY_OK);
	assert_int_equal(k->start_ns, start);
	assert_int_equal(k->wait_ns, wait);
	assert_int_equal(k->transfer_ns, transfer);
	assert_int_equal(k->wait_ns + k->transfer_ns, k->dur_ns);
	assert_int_equal(k->waited_for, waited_for);
	assert_int_equal(k->side, side);
}

static void check_two_stages(const struct why_result *r)
{
	assert_int_equal(r->nkernels, 6);
	assert_int_equal(r->np2p, 8);
	assert_int_equal(r->p2p_unpaired, 0);
	expect_kernel(r, 0, 0, 100, 0, 50, -1, WHY_SIDE_NONE);    /* A */
	expect_kernel(r, 0, 1, 250, 200, 150, 1, WHY_SIDE_NEXT);  /* B */
	expect_kernel(r, 0, 2, 800, 100, 100, 1, WHY_SIDE_NEXT);  /* C */
	expect_kernel(r, 1, 0, 20, 80, 50, 0, WHY_SIDE_PREVIOUS); /* D */
	expect_kernel(r, 1, 1, 450, 0, 150, -1, WHY_SIDE_NONE);   /* E */
	expect_kernel(r, 1, 2, 900, 0, 100, -1, WHY_SIDE_NONE);   /* F */
	/* The transfers of B: micro-batch 1 forward, micro-batch 0 backward. */
	int seen = 0;
	for (size_t i = 0; i < r->np2p; i++) {
		const struct why_p2p *p = &r->p2p[i];
		assert_int_equal(p->status, WHY_OK);
		assert_int_equal(p->wait_ns + p->transfer_ns, p->dur_ns);
		assert_int_equal(p->chunk, 0);
		assert_int_equal(p->peer_rank, 1 - p->rank);
		if (p->rank == 0 && p->start_ns == 250) {
			seen++;
			assert_int_equal(p->microbatch, p->dir == WHY_FORWARD ? 1 : 0);
			assert_int_equal(p->role, p->dir == WHY_FORWARD ? WHY_SEND : WHY_RECV);
			assert_int_equal(p->peer_start_ns, 450);
			assert_int_equal(p->wait_ns, 200);
		}
	}
	assert_int_equal(seen, 2);
	/* Bubbles: rank 0 waits 300 for the next stage, its calls transfer 300. */
	assert_int_equal(r->nbubbles, 2);
	assert_int_equal(r->bubbles[0].wait_next_ns, 300);
	assert_int_equal(r->bubbles[0].wait_prev_ns, 0);
	assert_int_equal(r->bubbles[0].transfer_ns, 300);
	assert_int_equal(r->bubbles[0].no_work_ns, 100);
	assert_int_equal(r->bubbles[1].wait_prev_ns, 80);
	assert_int_equal(r->bubbles[1].no_work_ns, 0);
	/* Hops: stage 0's three kernels to stage 1, stage 1's to stage 0. */
	assert_int_equal(r->nhops, 2);
	assert_int_equal(r->hops[0].kernels, 3);
	assert_int_equal(r->hops[0].wait_ns, 300);
	assert_int_equal(r->hops[1].peer_stage, 0);
	assert_int_equal(r->hops[1].wait_ns, 80);
}

static void test_p2p_exact(void **state)
{
	(void)state;
	struct analysed a;
	run_two_stages(&a, 0, true, false);
	check_two_stages(&a.r);
	assert_false(a.r.clock_corrected);
	assert_int_equal(a.r.clock_error_ns, 0);
	analysed_release(&a);
}

/* Rank 1's clock 5 µs ahead: estimated from the pairs' ends, taken off,
 * the same numbers. */
static void test_p2p_shifted_clock(void **state)
{
	(void)state;
	struct analysed a;
	run_two_stages(&a, 5000, true, false);
	assert_true(a.r.clock_corrected);
	assert_int_equal(why_clock_offset(&a.r, 0), 0);
	assert_int_equal(why_clock_offset(&a.r, 1), 5000);
	check_two_stages(&a.r);
	analysed_release(&a);

	/* keep_clocks: the shift stays, and shows as waits. */
	run_two_stages(&a, 5000, true, true);
	assert_false(a.r.clock_corrected);
	assert_int_equal(a.r.clock_error_ns, -1);
	expect_kernel(&a.r, 0, 0, 100, 50, 0, 1, WHY_SIDE_NEXT);
	analysed_release(&a);
}

/* Rank 1 has no trace: rank 0's transfers and kernels say so, no numbers. */
static void test_missing_rank(void **state)
{
	(void)state;
	struct analysed a;
	run_two_stages(&a, 0, false, false);
	assert_int_equal(a.r.nkernels, 3);
	assert_int_equal(a.r.np2p, 4);
	assert_int_equal(a.r.p2p_unpaired, 4);
	assert_int_equal(a.r.kernels_incomplete, 3);
	for (size_t i = 0; i < a.r.np2p; i++) {
		assert_int_equal(a.r.p2p[i].status, WHY_PEER_MISSING);
		assert_int_equal(a.r.p2p[i].peer_rank, 1);
		assert_int_equal(a.r.p2p[i].wait_ns, 0);
	}
	for (size_t i = 0; i < a.r.nkernels; i++)
		assert_int_equal(a.r.kernels[i].status, WHY_PEER_MISSING);
	assert_int_equal(a.r.nbubbles, 1);
	assert_int_equal(a.r.bubbles[0].incomplete, 3);
	assert_int_equal(a.r.bubbles[0].no_work_ns, -1);
	analysed_release(&a);
}

/* One op of a table: op()'s arguments. */
struct op_row {
	int rank, type;
	int64_t s, e;
	int seq;
};

/* Stages 0 to 2, one rank each, with the ops of rows. */
static struct why *three_stages(const struct why_opts *o, const struct op_row *rows, size_t n)
{
	struct why *w = why_new(o);
	for (int s = 0; s < 3; s++) {
		place(w, s, 0, s, 0);
		trace(w, s, -1);
	}
	for (size_t i = 0; i < n; i++)
		op(w, rows[i].rank, rows[i].type, rows[i].s, rows[i].e, rows[i].seq);
	return w;
}

/* A middle stage's call sends micro-batch 0 on and receives micro-batch 1
 * in one kernel: two peers; the kernel waits for the later one, each
 * transfer for its own. Stage 0 sends at S0a [100,200], S0b [300,700];
 * stage 2 receives at R2a [50,650], R2b [900,1000]; stage 1: X [80,200]
 * recv mb0, Y [400,700] send mb0 + recv mb1, Z [900,1000] send mb1. */
static void test_two_peers(void **state)
{
	(void)state;
	static const struct op_row as_told[] = {
		{ 0, OP_FWD_COMPUTE, 0, 100, 0 },   { 0, OP_FWD_SEND, 100, 200, 0 },
		{ 0, OP_FWD_COMPUTE, 200, 300, 1 }, { 0, OP_FWD_SEND, 300, 700, 1 },
		{ 1, OP_FWD_RECV, 80, 200, 0 },     { 1, OP_FWD_COMPUTE, 200, 400, 0 },
		{ 1, OP_FWD_SEND, 400, 700, 0 },    { 1, OP_FWD_RECV, 400, 700, 1 },
		{ 1, OP_FWD_COMPUTE, 700, 900, 1 }, { 1, OP_FWD_SEND, 900, 1000, 1 },
		{ 2, OP_FWD_RECV, 50, 650, 0 },     { 2, OP_FWD_COMPUTE, 650, 800, 0 },
		{ 2, OP_FWD_RECV, 900, 1000, 1 },   { 2, OP_FWD_COMPUTE, 1000, 1100, 1 },
	};
	struct why_opts o = { .pp = 3, .vpp = 1 };
	struct why *w = three_stages(&o, as_told, sizeof(as_told) / sizeof(as_told[0]));
	struct why_result r;
	run(w, &r);
	assert_int_equal(r.p2p_unpaired, 0);
	assert_int_equal(r.np2p, 8);
	/* Y: its peers started at 300 (stage 0) and 50 (stage 2). */
	expect_kernel(&r, 1, 1, 400, 0, 300, -1, WHY_SIDE_NONE);
	/* S0b waits for Y until 400; R2a for Y until 400 too. */
	expect_kernel(&r, 0, 1, 300, 100, 300, 1, WHY_SIDE_NEXT);
	expect_kernel(&r, 2, 0, 50, 350, 250, 1, WHY_SIDE_PREVIOUS);
	expect_kernel(&r, 1, 0, 80, 20, 100, 0, WHY_SIDE_PREVIOUS);
	why_result_release(&r);
	why_free(w);

	/* Y starts at 100 instead (X at 20, its compute at 60, R2a at 250):
	 * both peers later, the last one (stage 0's S0b at 300) is the one it
	 * waited for. */
	struct op_row y_early[sizeof(as_told) / sizeof(as_told[0])];
	memcpy(y_early, as_told, sizeof(as_told));
	y_early[4].s = 20;
	y_early[5].s = 60;
	y_early[5].e = 90;
	y_early[6].s = y_early[7].s = 100;
	y_early[10].s = 250;
	w = three_stages(&o, y_early, sizeof(y_early) / sizeof(y_early[0]));
	run(w, &r);
	expect_kernel(&r, 1, 1, 100, 200, 400, 0, WHY_SIDE_PREVIOUS);
	for (size_t i = 0; i < r.np2p; i++)
		if (r.p2p[i].rank == 1 && r.p2p[i].start_ns == 100)
			assert_int_equal(r.p2p[i].wait_ns, r.p2p[i].role == WHY_SEND ? 150 : 200);
	why_result_release(&r);
	why_free(w);
}

/* Interleaved rows of stage 0 (PP 2, VPP 2): a receive feeding chunk 0
 * moves nothing (its peer chunk is outside the model) and is no transfer,
 * the wrap-around from stage 1's chunk 0 to stage 0's chunk 1 is one. */
static void test_vpp_noops(void **state)
{
	(void)state;
	struct why_opts o = { .pp = 2, .vpp = 2 };
	struct why *w = why_new(&o);
	struct why_result r;
	place(w, 0, 0, 0, 0);
	place(w, 1, 0, 1, 0);
	trace(w, 0, -1);
	trace(w, 1, -1);
	/* Stage 0, forward only: chunk 0 mb 0, 1, then chunk 1 mb 0, 1 (labels
	 * given). After each forward a send_forward_recv_forward; the call after
	 * forward k receives the input of forward k + 1. */
	const int16_t mc[4] = { 0, 0, 1, 1 }, mb[4] = { 0, 1, 0, 1 };
	for (int k = 0; k < 4; k++) {
		struct why_op c = { IT,    k * 1000, k * 1000 + 400, 0, k, -1,
				    mc[k], mb[k],    OP_FWD_COMPUTE };
		why_add_op(w, &c);
		/* send of forward k; recv of forward k + 1 (none after the last) */
		op(w, 0, OP_FWD_SEND, k * 1000 + 400, k * 1000 + 900, k);
		if (k < 3)
			op(w, 0, OP_FWD_RECV, k * 1000 + 400, k * 1000 + 900, k);
	}
	/* Stage 1: receives before each forward, sends after (chunk 1's go
	 * nowhere: the last virtual stage). */
	for (int k = 0; k < 4; k++) {
		struct why_op c = { IT,    k * 1000 + 950, k * 1000 + 1300, 1, k, -1,
				    mc[k], mb[k],          OP_FWD_COMPUTE };
		why_add_op(w, &c);
		op(w, 1, OP_FWD_RECV, k * 1000 + 500, k * 1000 + 900, k);
		op(w, 1, OP_FWD_SEND, k * 1000 + 1300, k * 1000 + 1350, k);
	}
	run(w, &r);
	/* Transfers: stage 0 sends 4 (chunk 0 to stage 1 chunk 0, chunk 1 to
	 * stage 1 chunk 1), receives 2 (chunk 1's inputs from stage 1's chunk
	 * 0); stage 1 receives 4, sends 2 (chunk 0's outputs). */
	size_t n[2][2] = { { 0 } };
	for (size_t i = 0; i < r.np2p; i++) {
		n[r.p2p[i].rank][r.p2p[i].role]++;
		assert_int_equal(r.p2p[i].status, WHY_OK);
		if (r.p2p[i].rank == 0 && r.p2p[i].role == WHY_RECV)
			assert_int_equal(r.p2p[i].chunk, 1);
	}
	assert_int_equal(n[0][WHY_SEND], 4);
	assert_int_equal(n[0][WHY_RECV], 2);
	assert_int_equal(n[1][WHY_RECV], 4);
	assert_int_equal(n[1][WHY_SEND], 2);
	assert_int_equal(r.p2p_unpaired, 0);
	why_result_release(&r);
	why_free(w);
}

/* ---- collectives ---------------------------------------------------- */

static void kern(struct why *w, int rank, int group, int64_t order, int64_t s, int64_t d)
{
	struct why_kernel k = { IT, s, d, order, rank, group };
	why_add_kernel(w, &k);
}

static int32_t group(struct why *w, const char *desc, int kind, const int32_t *ranks, int n)
{
	struct why_group g = { desc, "[...]", ranks, n, kind };
	return why_add_group(w, &g);
}

/* Four ranks of one DP group, ten instances: rank 2 arrives last nine
 * times, rank 1 once (instance 4); every instance ends at 1000 + 2000·q on
 * every member; rank 3's clock reads 7 µs ahead. Then a TP pair (0, 1)
 * and a TP pair (2, 3) where rank 3 launched one kernel more; the
 * expert-parallel all-to-all of ranks 0-3 (SendRecv kernels, ending
 * together) is a collective, no p2p. */
static void test_collectives(void **state)
{
	(void)state;
	struct why_opts o = { .pp = 1, .vpp = 1 };
	struct why *w = why_new(&o);
	struct why_result r;
	const int32_t dp[4] = { 3, 2, 1, 0 }, tp0[2] = { 0, 1 }, tp1[2] = { 2, 3 };
	int32_t g = group(w, "DATA_PARALLEL_GROUP", RR_PG_DP, dp, 4);
	int32_t t0 = group(w, "TENSOR_MODEL_PARALLEL_GROUP", RR_PG_TP, tp0, 2);
	int32_t t1 = group(w, "TENSOR_MODEL_PARALLEL_GROUP", RR_PG_TP, tp1, 2);
	int32_t ep = group(w, "EXPERT_MODEL_PARALLEL_GROUP", RR_PG_EP, dp, 4);
	for (int rk = 0; rk < 4; rk++) {
		place(w, rk, rk, 0, rk);
		trace(w, rk, -1);
	}
	for (int q = 0; q < 10; q++) {
		int64_t end = 1000 + 2000 * q;
		for (int rk = 0; rk < 4; rk++) {
			int64_t arrive = end - 600 + 50 * rk;
			bool last = q == 4 ? rk == 1 : rk == 2;
			if (last)
				arrive = end - 300;
			int64_t off = rk == 3 ? 7000 : 0;
			kern(w, rk, g, 10 * q, arrive + off, end - arrive);
			kern(w, rk, ep, 10 * q + 5, end + 100 + 10 * rk + off, 100 - 10 * rk);
		}
		kern(w, 0, t0, 10 * q + 1, end + 200, 100);
		kern(w, 1, t0, 10 * q + 1, end + 250, 50);
		kern(w, 2, t1, 10 * q + 1, end + 200, 100);
		kern(w, 3, t1, 10 * q + 1, end + 200 + 7000, 100);
	}
	kern(w, 3, t1, 1000, 50000 + 7000, 100);
	run(w, &r);
	assert_true(r.clock_corrected);
	assert_int_equal(why_clock_offset(&r, 3), 7000);
	assert_int_equal(r.np2p, 0);
	/* 10 DP + 10 EP + 10 TP (0, 1) + 11 TP (2, 3) instances, the last
	 * incomplete (rank 3's 11 kernels against rank 2's 10). */
	assert_int_equal(r.ncolls, 41);
	assert_int_equal(r.colls_incomplete, 11);
	size_t dps = 0;
	for (size_t i = 0; i < r.ncolls; i++) {
		const struct why_coll *c = &r.colls[i];
		if (c->group == t1) {
			assert_int_equal(c->status, WHY_COUNT_DIFFERS);
			assert_int_equal(c->missing_rank, 2);
			continue;
		}
		assert_int_equal(c->status, WHY_OK);
		if (c->group != g)
			continue;
		dps++;
		int64_t end = 1000 + 2000 * c->seq;
		assert_int_equal(c->last_rank, c->seq == 4 ? 1 : 2);
		assert_int_equal(c->last_ns, end - 300);
		assert_int_equal(c->transfer_ns, 300);
		assert_int_equal(c->first_rank, c->seq == 4 ? 0 : 0);
		assert_int_equal(c->skew_ns, 300);
		assert_int_equal(c->size, 4);
	}
	assert_int_equal(dps, 10);
	/* Rank 2 arrives last at 9 of 10 DP instances (chance 1/4): late. */
	bool found = false;
	for (size_t i = 0; i < r.ncoll_ranks; i++) {
		const struct why_coll_rank *x = &r.coll_ranks[i];
		if (x->kind != RR_PG_DP)
			continue;
		assert_int_equal(x->instances, 10);
		assert_true(fabs(x->chance - 0.25) < 1e-12);
		assert_int_equal(x->late, x->rank == 2);
		if (x->rank == 2) {
			found = true;
			assert_int_equal(x->times_last, 9);
			assert_true(fabs(x->share_last - 0.9) < 1e-12);
			/* waits 0 nine times, 200 once (behind rank 1) */
			assert_int_equal(x->mean_wait_ns, 20);
		}
	}
	assert_true(found);
	why_result_release(&r);

	/* Rank 1 without a trace: every instance of its groups is incomplete
	 * and names it. */
	why_free(w);
	w = why_new(&o);
	g = group(w, "DATA_PARALLEL_GROUP", RR_PG_DP, dp, 4);
	for (int rk = 0; rk < 4; rk++) {
		place(w, rk, rk, 0, rk);
		if (rk != 1)
			trace(w, rk, -1);
	}
	for (int q = 0; q < 3; q++)
		for (int rk = 0; rk < 4; rk++)
			if (rk != 1)
				kern(w, rk, g, q, 1000 * q + rk, 100);
	run(w, &r);
	assert_int_equal(r.ncolls, 3);
	for (size_t i = 0; i < r.ncolls; i++) {
		assert_int_equal(r.colls[i].status, WHY_RANK_MISSING);
		assert_int_equal(r.colls[i].missing_rank, 1);
		assert_int_equal(r.colls[i].present, 3);
	}
	assert_int_equal(r.ncoll_ranks, 0);
	why_result_release(&r);
	why_free(w);
}

/* ---- the critical path ---------------------------------------------- */

static void check_path(const struct why_cpath *c)
{
	assert_true(c->nseg > 0);
	for (size_t si = 0, k = 0; si < c->nsteps; si++) {
		int64_t t = c->step_start_ns[si], sum = 0;
		for (; k < c->nseg && c->seg[k].iteration == c->step_iteration[si]; k++) {
			assert_int_equal(c->seg[k].start_ns, t); /* contiguous */
			assert_true(c->seg[k].dur_ns > 0);
			t += c->seg[k].dur_ns;
			sum += c->seg[k].dur_ns;
		}
		assert_int_equal(sum, c->step_ns[si]);
	}
}

static void path_of(const struct wi_synth *s, struct whatif **e, struct why_cpath *c)
{
	*e = wi_synth_engine(s);
	assert_non_null(*e);
	why_cpath_run(*e, c);
	/* The step time: the span of the step's ops. */
	struct whatif_result r;
	whatif_run(*e, &r);
	for (size_t si = 0; si < c->nsteps; si++)
		assert_int_equal(c->step_ns[si], llround(r.t_base[si]));
	whatif_result_release(&r);
	check_path(c);
}

static void test_cpath(void **state)
{
	(void)state;
	struct wi_synth s;
	struct whatif *e;
	struct why_cpath c;

	/* A slow worker (dp 2, stage 1; rank 1·4 + 2): on the path of every
	 * step, and backward-compute on stage 1 its largest share. */
	wi_synth_defaults(&s, 4, 4, 8, 3);
	s.seed = 5;
	wi_synth_slow(&s, 1.8, 2, 1);
	path_of(&s, &e, &c);
	for (size_t si = 0; si < c.nsteps; si++) {
		bool on = false;
		for (size_t k = 0; k < c.nseg; k++)
			on |= c.seg[k].iteration == c.step_iteration[si] && c.seg[k].rank == 6 &&
			      c.seg[k].optype == OP_BWD_COMPUTE;
		assert_true(on);
	}
	assert_int_equal(c.by_rank[0].rank, 6);
	struct strbuf sb = STRBUF_INIT;
	why_cpath_sentence(&c, 0, 2, &sb);
	print_message("%s\n", sb.buf);
	assert_non_null(strstr(sb.buf, "% of the step is "));
	strbuf_release(&sb);
	why_cpath_release(&c);
	whatif_free(e);

	/* A slow last stage: its computes dominate the path. */
	wi_synth_defaults(&s, 4, 2, 8, 2);
	s.last_stage = 1.6;
	path_of(&s, &e, &c);
	int64_t last = 0, all = 0;
	for (size_t k = 0; k < c.nseg; k++) {
		all += c.seg[k].dur_ns;
		if (c.seg[k].stage == 3 && c.seg[k].kind == WHY_SEG_OP &&
		    (c.seg[k].optype == OP_FWD_COMPUTE || c.seg[k].optype == OP_BWD_COMPUTE))
			last += c.seg[k].dur_ns;
	}
	assert_true(last * 2 > all);
	why_cpath_release(&c);
	whatif_free(e);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_p2p_exact),
		  cmocka_unit_test(test_p2p_shifted_clock),
		  cmocka_unit_test(test_missing_rank),
		  cmocka_unit_test(test_two_peers),
		  cmocka_unit_test(test_vpp_noops),
		  cmocka_unit_test(test_collectives),
		  cmocka_unit_test(test_cpath),
	  })
