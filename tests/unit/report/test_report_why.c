/* Unit tests for the why analysis' part of the report: the ranks
 * --perfetto-ranks names (report_why.c: ranks, ranges, PP groups and model
 * replicas of a topology; what it refuses), and the trace-event writer the
 * merged timeline and the what-if's step share (report_trace.c: times as
 * µs with exact ns decimals from the origin, names escaped, one lane per
 * overlapping event so that a track's events never overlap). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agg/topology.h"
#include "report/report_int.h"
#include "util/pp.h"
#include "tests/unit/unit.h"

/* The ranks spec selects of topology t (NULL: syntax only) as "0,1,5". */
static int pick(const char *spec, const struct topology *t, char *out, size_t n, struct strbuf *err)
{
	bool sel[64] = { false };
	int rc = report_perfetto_ranks(spec, t, t ? t->nrank : 0, t ? sel : NULL, err);
	struct strbuf sb = STRBUF_INIT;
	for (int r = 0; t && r < t->nrank; r++)
		if (sel[r])
			strbuf_addf(&sb, "%s%d", sb.len ? "," : "", r);
	snprintf(out, n, "%s", sb.buf);
	strbuf_release(&sb);
	return rc;
}

static void test_ranks(void **state)
{
	(void)state;
	struct topology t = TOPOLOGY_INIT;
	struct strbuf err = STRBUF_INIT;
	char got[256];
	/* tp 2, pp 4, dp 2: rank = tp + 2 * (dp + 2 * pp) */
	assert_int_equal(topo_from_sizes(&t, 2, 4, 2, 1, 1), 0);
	topo_index(&t);
	assert_int_equal(pick("3", &t, got, sizeof(got), &err), 0);
	assert_string_equal(got, "3");
	assert_int_equal(pick("8-11,0", &t, got, sizeof(got), &err), 0);
	assert_string_equal(got, "0,8,9,10,11");
	assert_int_equal(pick("pp_group=1", &t, got, sizeof(got), &err), 0);
	assert_string_equal(got, "1,5,9,13");
	assert_int_equal(pick("replica=1", &t, got, sizeof(got), &err), 0);
	assert_string_equal(got, "2,3,6,7,10,11,14,15");
	assert_int_equal(pick("pp_group=0-1,15", &t, got, sizeof(got), &err), 0);
	assert_string_equal(got, "0,1,4,5,8,9,12,13,15");

	assert_int_equal(pick("pp_group=4", &t, got, sizeof(got), &err), PP_EINVAL);
	assert_string_equal(err.buf, "no PP group 4: the topology has PP groups 0-3");
	strbuf_reset(&err);
	assert_int_equal(pick("16", &t, got, sizeof(got), &err), PP_EINVAL);
	assert_string_equal(err.buf, "no rank 16 in these iterations (ranks 0-15)");
	strbuf_reset(&err);
	/* the syntax alone, as the command line checks it */
	assert_int_equal(pick("0-7,pp_group=9,replica=0", NULL, got, sizeof(got), &err), 0);
	const char *bad[] = { "",           "x",    "3-1",        "pp_group=",
			      "pp_group=a", "1,,2", "replica=-1", "99999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strbuf_reset(&err);
		assert_int_equal(pick(bad[i], NULL, got, sizeof(got), &err), PP_EINVAL);
		assert_true(err.len > 0);
	}
	strbuf_release(&err);
	topo_release(&t);
}

static void test_trace_writer(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct report_trace T;
	report_trace_begin(&T, f, "\"source\":\"test\"", 1000000);
	report_trace_name(&T, 3, -1, "rank \"2\"");
	report_trace_slice(&T, 3, 7, 1001500, 1002750, "k\\1", "fwd_computation", NULL);
	report_trace_slice(&T, 3, 7, 999000, 999500, "early", "x", "\"a\":1");
	report_trace_order(&T, 3, 7, 2);
	report_trace_end(&T);
	assert_int_equal(T.events, 2);
	fclose(f);
	assert_string_equal(
		buf,
		"{\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":\"test\"},\n\"traceEvents\":[\n"
		"{\"ph\":\"M\",\"pid\":3,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":"
		"\"rank \\\"2\\\"\"}},\n"
		"{\"ph\":\"X\",\"pid\":3,\"tid\":7,\"ts\":1.500,\"dur\":1.250,\"name\":\"k\\\\1\","
		"\"cat\":\"fwd_computation\"},\n"
		"{\"ph\":\"X\",\"pid\":3,\"tid\":7,\"ts\":0.000,\"dur\":0.000,\"name\":\"early\","
		"\"cat\":\"x\",\"args\":{\"a\":1}},\n"
		"{\"ph\":\"M\",\"pid\":3,\"tid\":7,\"name\":\"thread_sort_index\",\"args\":{"
		"\"sort_index\":2}}\n]}\n");
	free(buf);
}

static void test_lanes(void **state)
{
	(void)state;
	struct report_lanes l = { .n = 0 };
	/* by start: [0,10) lane 0; [5,8) overlaps it: lane 1; [10,12) after the
	 * first ended: lane 0; [6,20) overlaps both: lane 2 */
	assert_int_equal(report_lane(&l, 0, 10), 0);
	assert_int_equal(report_lane(&l, 5, 8), 1);
	assert_int_equal(report_lane(&l, 6, 20), 2);
	assert_int_equal(report_lane(&l, 10, 12), 0);
	assert_int_equal(report_lane(&l, 12, 13), 0);
	assert_int_equal(l.n, 3);
	for (int i = 0; i < 40; i++) /* more than REPORT_LANES at once */
		assert_true(report_lane(&l, 100, 200 + i) < REPORT_LANES);
	assert_int_equal(l.n, REPORT_LANES);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_ranks),
		  cmocka_unit_test(test_trace_writer),
		  cmocka_unit_test(test_lanes),
	  })
