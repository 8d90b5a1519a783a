/* Unit tests for the Primus pp_data reader (pipeline/batch/primus.h): the
 * old and new formats and VPP 2 on the dumps of tests/fixtures/primus
 * (made from ppsim's schedules, so each call's label is known), and one
 * small bad dump for every error the reader reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "batch/primus.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

static char fixture[4096];

static const char *fix(const char *name)
{
	const char *root = getenv("PP_ROOT") ? getenv("PP_ROOT") : ".";
	snprintf(fixture, sizeof(fixture), "%s/tests/fixtures/primus/%s", root, name);
	return fixture;
}

static void load_ok(const char *dir, struct primus_dump *d)
{
	struct strbuf err = STRBUF_INIT;
	int rc = primus_load(dir, d, &err);
	if (rc)
		fail_msg("%s: %s", dir, err.buf);
	strbuf_release(&err);
}

/* PP 2, VPP 1, 4 micro-batches, 3 iterations, no labels: call i is
 * micro-batch i; times in ns; totals and memory kept; every iteration of
 * both files. */
static void test_old_format(void **state)
{
	(void)state;
	struct primus_dump d;
	load_ok(fix("pp2-old"), &d);
	assert_int_equal(d.cfg.pp, 2);
	assert_int_equal(d.cfg.vpp, 1);
	assert_int_equal(d.cfg.dp, 2);
	assert_int_equal(d.cfg.world, 4);
	assert_int_equal(d.microbatches, 4);
	assert_false(d.labelled);
	assert_false(d.has_wgrad);
	assert_int_equal(d.niters, 3);
	assert_int_equal(d.iters[0], 1);
	assert_int_equal(d.iters[2], 3);
	const struct primus_iter *x = primus_at(&d, 1, 1);
	assert_int_equal(x->iteration, 2);
	assert_int_equal(x->ncalls[PRIMUS_FWD], 4);
	assert_int_equal(x->ncalls[PRIMUS_BWD], 4);
	/* 1F1B, f 1 ms, b 2 ms: stage 1's first forward runs 1..2 ms */
	assert_int_equal(x->calls[PRIMUS_FWD][0].start_ns, 1000000);
	assert_int_equal(x->calls[PRIMUS_FWD][0].end_ns, 2000000);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(x->calls[PRIMUS_FWD][i].mb, i);
		assert_int_equal(x->calls[PRIMUS_BWD][i].mb, i);
		assert_int_equal(x->calls[PRIMUS_BWD][i].chunk, 0);
	}
	assert_true(x->has_total);
	assert_true(x->has_memory);
	assert_true(x->memory_gib == 30.0);
	primus_dump_release(&d);
}

/* VPP 2: an old dump's calls get Megatron's (micro-batch, chunk) in call
 * order, the same labels the new dump of the same schedule records; the
 * new dump's weight-gradient calls are kept with theirs. */
static void test_vpp2_labels(void **state)
{
	(void)state;
	struct primus_dump old, nu;
	load_ok(fix("pp2-vpp2-old"), &old);
	load_ok(fix("pp2-vpp2-new-wgrad"), &nu);
	assert_int_equal(old.cfg.vpp, 2);
	assert_false(old.labelled);
	assert_true(nu.labelled);
	assert_false(old.has_wgrad);
	assert_true(nu.has_wgrad);
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < old.niters; i++)
			for (int k = PRIMUS_FWD; k <= PRIMUS_BWD; k++) {
				const struct primus_iter *a = primus_at(&old, s, i),
							 *b = primus_at(&nu, s, i);
				assert_int_equal(a->ncalls[k], 8);
				for (size_t c = 0; c < 8; c++) {
					assert_int_equal(a->calls[k][c].mb, b->calls[k][c].mb);
					assert_int_equal(a->calls[k][c].chunk,
							 b->calls[k][c].chunk);
				}
			}
	const struct primus_iter *w = primus_at(&nu, 0, 2);
	assert_int_equal(w->ncalls[PRIMUS_WGRAD], 8);
	/* each W follows its input gradient: same labels, starts at its end */
	for (size_t c = 0; c < 8; c++) {
		assert_int_equal(w->calls[PRIMUS_WGRAD][c].mb, w->calls[PRIMUS_BWD][c].mb);
		assert_int_equal(w->calls[PRIMUS_WGRAD][c].chunk, w->calls[PRIMUS_BWD][c].chunk);
		assert_int_equal(w->calls[PRIMUS_WGRAD][c].start_ns,
				 w->calls[PRIMUS_BWD][c].end_ns);
	}
	primus_dump_release(&old);
	primus_dump_release(&nu);
}

/* ---- bad dumps ---- */

static char tmpdir[] = "/tmp/test_primus.XXXXXX";

static void put(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	if (!text) {
		unlink(path);
		return;
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

#define CFG "{\"pp_size\": 2, \"vp_size\": 1, \"num_mbs\": 2, \"train_iters\": 2}"
#define IT(n, fs, fe, bs, be)                                                               \
	"\"" #n "\": {\"total\": 9, \"memory\": 1, \"fwd_start\": " fs ", \"fwd_end\": " fe \
	", \"bwd_start\": " bs ", \"bwd_end\": " be "}"
#define GOOD IT(1, "[0, 1]", "[1, 2]", "[2, 4]", "[3, 5]")

/* Writes config and the two ranks (NULL: the good one), loads, expects
 * failure with want in the message. */
static void bad(const char *cfg, const char *r0, const char *r1, const char *want)
{
	struct primus_dump d;
	struct strbuf err = STRBUF_INIT;
	put("config.json", cfg);
	put("pp_rank_0.json", r0 ? r0 : "{" GOOD "}");
	put("pp_rank_1.json", r1 ? r1 : "{" GOOD "}");
	int rc = primus_load(tmpdir, &d, &err);
	if (!rc)
		fail_msg("loaded, expected an error with '%s'", want);
	if (!strstr(err.buf, want))
		fail_msg("'%s' lacks '%s'", err.buf, want);
	primus_dump_release(&d);
	strbuf_release(&err);
}

static void test_errors(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(tmpdir));
	struct primus_dump d;
	struct strbuf err = STRBUF_INIT;
	/* the good one first, so that each case below is its one fault */
	put("config.json", CFG);
	put("pp_rank_0.json", "{" GOOD "}");
	put("pp_rank_1.json", "{" GOOD "}");
	assert_int_equal(primus_load(tmpdir, &d, &err), 0);
	primus_dump_release(&d);
	strbuf_release(&err);

	bad(NULL, NULL, NULL, "config.json");
	bad("{\"pp_size\": 2,", NULL, NULL, "config.json:1: byte 14");
	bad("{\"vp_size\": 1}", NULL, NULL, "no pp_size");
	bad("{\"pp_size\": \"two\"}", NULL, NULL, "pp_size: expected a whole number >= 1");
	bad("{\"pp_size\": 2, \"num_mbs\": 0}", NULL, NULL, "num_mbs: expected a whole number");
	bad("{\"pp_size\": 3}", NULL, NULL, "pp_rank_2.json: No such file");
	bad(CFG, "[1, 2]", NULL, "pp_rank_0.json: not a JSON object");
	bad(CFG, "{" GOOD ", \"x\": {}}", NULL, "key \"x\": expected an iteration number");
	bad(CFG, "{\"1\": [1]}", NULL, "iteration 1: expected an object");
	bad(CFG, "{" IT(1, "[0, \"1\"]", "[1, 2]", "[2, 4]", "[3, 5]") "}", NULL,
	    "iteration 1, fwd_start[1]: expected a number, found '\"1\"'");
	bad(CFG, "{" IT(1, "[0, 1]", "[1]", "[2, 4]", "[3, 5]") "}", NULL,
	    "iteration 1: fwd_end has 1 entries, fwd_start 2");
	bad(CFG, "{" IT(1, "[0, 1]", "[1, 0.5]", "[2, 4]", "[3, 5]") "}", NULL,
	    "iteration 1: call 1 ends (fwd_end 0.5) before it starts (fwd_start 1)");
	bad(CFG, "{\"1\": {\"fwd_start\": [0, 1], \"bwd_start\": [2, 4], \"bwd_end\": [3, 5]}}",
	    NULL, "fwd_start without fwd_end");
	bad(CFG, "{" IT(1, "[0]", "[1]", "[2]", "[3]") "}",
	    "{" IT(1, "[0]", "[1]", "[2]", "[3]") "}",
	    "1 forward and 1 backward calls; expected 2 each (2 micro-batches x vp_size 1)");
	bad(CFG, NULL, "{" GOOD ", " IT(2, "[0, 1]", "[1, 2]", "[2, 4]", "[3, 5]") "}",
	    "pp_rank_0.json: no iteration 2, which");
	bad(CFG, "{" GOOD ", " GOOD "}", NULL, "iteration 1 given twice");
	bad(CFG,
	    "{\"1\": {\"fwd_start\": [0, 1], \"fwd_end\": [1, 2], \"fwd_minibatch\": [0, 0],"
	    " \"bwd_start\": [2, 4], \"bwd_end\": [3, 5]}}",
	    NULL, "fwd_start[1]: chunk 0 micro-batch 0 a second time");
	bad(CFG,
	    "{\"1\": {\"fwd_start\": [0, 1], \"fwd_end\": [1, 2], \"fwd_chunk\": [0, 1],"
	    " \"bwd_start\": [2, 4], \"bwd_end\": [3, 5]}}",
	    NULL, "fwd_chunk[1] = 1: expected a whole number below 1");
	bad(CFG,
	    "{\"1\": {\"fwd_start\": [0, 1], \"fwd_end\": [1, 2], \"bwd_start\": [2, 4],"
	    " \"bwd_end\": [3, 5], \"wgrad_start\": [3], \"wgrad_end\": [4]}}",
	    NULL, "1 weight-gradient calls; expected none or 2");
	bad(CFG, "{" GOOD, NULL, "pp_rank_0.json:1: byte");
	bad(CFG, "{\"1\": {\"total\": -1}}", NULL, "iteration 1, total: expected a number >= 0");
	bad("{\"pp_size\": 2, \"vp_size\": 2, \"num_mbs\": 3}", NULL, NULL,
	    "multiple of pp_size (2)");
	put("config.json", NULL);
	put("pp_rank_0.json", NULL);
	put("pp_rank_1.json", NULL);
	rmdir(tmpdir);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_old_format),
		  cmocka_unit_test(test_vpp2_labels),
		  cmocka_unit_test(test_errors),
	  })
