/* Unit tests for the PP-timer dump reader (pipeline/batch/pptimer.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "batch/pptimer.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

static void test_names(void **state)
{
	(void)state;
	struct pptimer_name n;
	struct strbuf why = STRBUF_INIT;
	assert_int_equal(
		pptimer_parse_name("event_times_PP4_VPP2_TPxCPxDP_rank_3_pp_rank_1_rank_13.json",
				   &n, &why),
		0);
	assert_int_equal(n.pp, 4);
	assert_int_equal(n.vpp, 2);
	assert_false(n.vpp_none);
	assert_int_equal(n.dp_rank, 3);
	assert_int_equal(n.pp_rank, 1);
	assert_int_equal(n.rank, 13);
	/* the patch writes VPPNone without virtual stages: v = 1 */
	assert_int_equal(
		pptimer_parse_name("event_times_PP8_VPPNone_TPxCPxDP_rank_0_pp_rank_7_rank_7.json",
				   &n, &why),
		0);
	assert_int_equal(n.vpp, 1);
	assert_true(n.vpp_none);
	static const struct {
		const char *name, *why;
	} bad[] = {
		{ "other.json", "does not start with event_times_PP" },
		{ "event_times_PP4_rank_0.json", "no _VPP" },
		{ "event_times_PP4_VPPx_TPxCPxDP_rank_0_pp_rank_1_rank_1.json",
		  "neither a number nor None" },
		{ "event_times_PP4_VPP1_pp_rank_1_rank_1.json", "no _TPxCPxDP_rank_" },
		{ "event_times_PP4_VPP1_TPxCPxDP_rank_0_rank_1.json", "no _pp_rank_" },
		{ "event_times_PP4_VPP1_TPxCPxDP_rank_0_pp_rank_1.json", "no _rank_" },
		{ "event_times_PP4_VPP1_TPxCPxDP_rank_0_pp_rank_1_rank_1.json.bak",
		  "does not end" },
		{ "event_times_PP4_VPP1_TPxCPxDP_rank_0_pp_rank_4_rank_4.json",
		  "below the PP size" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strbuf_reset(&why);
		assert_int_equal(pptimer_parse_name(bad[i].name, &n, &why), PP_EPARSE);
		if (!strstr(why.buf, bad[i].why))
			fail_msg("%s: '%s' lacks '%s'", bad[i].name, why.buf, bad[i].why);
	}
	strbuf_release(&why);
}

static char *write_tmp(const char *text)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/pptimer-test-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* Step i of f is (phase, chunk, micro-batch) over [start_ns, end_ns);
 * -1: a time not checked. */
static void expect_step(const struct pptimer_file *f, size_t i, int phase, int chunk, int mb,
			int64_t start_ns, int64_t end_ns)
{
	const struct pptimer_step *st = &f->steps[i];
	assert_int_equal(st->phase, phase);
	assert_int_equal(st->chunk, chunk);
	assert_int_equal(st->mb, mb);
	if (start_ns >= 0)
		assert_int_equal(st->start_ns, start_ns);
	if (end_ns >= 0)
		assert_int_equal(st->end_ns, end_ns);
}

static void test_read_plain(void **state)
{
	(void)state;
	struct pptimer_file f;
	struct strbuf err = STRBUF_INIT;
	char *path = write_tmp("{\"forward-0-start\": 0.5, \"forward-0-end\": 1.25,\n"
			       " \"backward-0-start\": 3.000001, \"backward-0-end\": 5,\n"
			       " \"forward-1-start\": 1.25, \"forward-1-end\": 2.5,\n"
			       " \"backward-1-start\": 5.5,\n"
			       " \"total-execution-time\": 9.75, \"note\": [1, {\"x\": 2}]}");
	strbuf_reset(&err);
	assert_int_equal(pptimer_read(path, false, &f, &err), 0);
	unlink(path);
	assert_int_equal(f.n, 4);
	/* sorted by (phase, chunk, mb) */
	expect_step(&f, 0, 1, 0, 0, 500000, 1250000);
	expect_step(&f, 2, 2, 0, 0, 3000001, 5000000);
	assert_true(f.steps[3].has_start);
	assert_false(f.steps[3].has_end);
	assert_true(f.has_total);
	assert_int_equal(f.total_ns, 9750000);
	assert_int_equal(f.unknown_keys, 1);
	assert_string_equal(f.first_unknown, "note");
	pptimer_file_release(&f);
	strbuf_release(&err);
}

static void test_read_vpp(void **state)
{
	(void)state;
	struct pptimer_file f;
	struct strbuf err = STRBUF_INIT;
	char *path = write_tmp("{\"forward-1-3-start\": 10, \"forward-1-3-end\": 11.5,"
			       " \"backward-0-2-end\": 20, \"forward-3-start\": 1}");
	strbuf_reset(&err);
	assert_int_equal(pptimer_read(path, true, &f, &err), 0);
	assert_int_equal(f.n, 2);
	expect_step(&f, 0, 1, 1, 3, 10000000, 11500000);
	expect_step(&f, 1, 2, 0, 2, -1, 20000000);
	assert_false(f.steps[1].has_start);
	/* a key without a chunk is not an event of a VPP dump */
	assert_int_equal(f.unknown_keys, 1);
	pptimer_file_release(&f);
	/* read as a plain dump, the chunked keys are not understood */
	strbuf_reset(&err);
	assert_int_equal(pptimer_read(path, false, &f, &err), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.unknown_keys, 3);
	pptimer_file_release(&f);
	unlink(path);

	path = write_tmp("{\"forward-0-start\": 1,, }");
	strbuf_reset(&err);
	assert_int_equal(pptimer_read(path, false, &f, &err), PP_EPARSE);
	assert_non_null(strstr(err.buf, "expected a key"));
	unlink(path);
	strbuf_reset(&err);
	assert_int_equal(pptimer_read("/nonexistent/x.json", false, &f, &err), PP_EIO);
	strbuf_release(&err);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_names),
		  cmocka_unit_test(test_read_plain),
		  cmocka_unit_test(test_read_vpp),
	  })
