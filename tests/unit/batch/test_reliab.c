/* Regression tests for bugs that fuzzing and the fault tests found in other
 * modules (each test names its bug). The bugs of pipeline/safefile have
 * their own file. */
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
#include "batch/pptimer.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "tests/unit/unit.h"

/* Bug: model replicas were built in O(dp * world): `--dp 100000` (or a
 * config file saying so) took minutes, 10^7 ranks would take days. With
 * 400,000 replicas the linear build takes about a second under the
 * sanitizers and a quadratic one hours: tests/run-tests.sh's 300 s limit on
 * a unit binary fails it, without a clock in the test. */
static void test_topology_many_replicas_linear(void **state)
{
	(void)state;
	enum { DP = 400000 };
	struct topology t = TOPOLOGY_INIT;
	topo_init(&t);
	assert_int_equal(topo_from_sizes(&t, 1, 2, DP, 1, 1), 0);
	assert_int_equal(t.groups[TOPO_MODEL].n, DP);
	struct topo_group *g = &t.groups[TOPO_MODEL].v[DP - 1];
	assert_int_equal(g->n, 2);
	assert_int_equal(g->ranks[0], DP - 1);
	assert_int_equal(g->ranks[1], 2 * DP - 1);
	topo_release(&t);
}

/* Bug: topo_infer_finish() passed NULL to qsort for kinds with no group
 * (UBSan: null pointer passed as argument declared nonnull). */
static void test_topology_infer_nothing(void **state)
{
	(void)state;
	struct topology t = TOPOLOGY_INIT;
	topo_init(&t);
	assert_int_equal(topo_infer_finish(&t), PP_ENOTFOUND);
	topo_release(&t);
}

/* Bug: kernel names with bytes that are not UTF-8, or "\u0000", were stored
 * as such; Python's sqlite3 then fails on the row (UnicodeDecodeError). */
static void test_utf8_sanitize(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		size_t n;
		bool valid;
		const char *out;
	} cases[] = {
		{ "plain ascii", 11, true, "plain ascii" },
		{ "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80", 14, true,
		  "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80" },
		{ "a\xff"
		  "b",
		  3, false,
		  "a\xef\xbf\xbd"
		  "b" },
		{ "\xc0\xaf", 2, false, "\xef\xbf\xbd\xef\xbf\xbd" }, /* overlong '/' */
		{ "\xed\xa0\x80", 3, false,
		  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* surrogate */
		{ "\xf4\x90\x80\x80", 4, false,
		  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* > U+10FFFF */
		{ "x\xe4\xb8", 3, false, "x\xef\xbf\xbd\xef\xbf\xbd" }, /* cut short */
		{ "nul\0after", 9, false,
		  "nul\xef\xbf\xbd"
		  "after" },
		{ "", 0, true, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		assert_int_equal(utf8_valid(cases[i].in, cases[i].n), cases[i].valid);
		utf8_sanitize(&sb, cases[i].in, cases[i].n);
		assert_string_equal(sb.buf, cases[i].out);
		assert_true(utf8_valid(sb.buf, sb.len));
		strbuf_release(&sb);
	}
}

/* Bug (fuzz_pptimer): a PP-timer dump without a single step event ("{}",
 * or only unknown keys) passed NULL to qsort (UBSan: nonnull argument). */
static void test_pptimer_no_events(void **state)
{
	(void)state;
	static const char *const texts[] = { "{}", " { \"note\": [1, 2] } ",
					     "{\"forward-0-start\": \"1\"}" };
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		char path[] = "/tmp/pp-reliab-XXXXXX";
		struct strbuf err = STRBUF_INIT;
		struct pptimer_file f;
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, texts[i], strlen(texts[i])), (ssize_t)strlen(texts[i]));
		close(fd);
		for (int vpp = 0; vpp < 2; vpp++) {
			strbuf_reset(&err);
			assert_int_equal(pptimer_read(path, vpp, &f, &err), 0);
			assert_int_equal(f.n, 0);
			assert_int_equal(f.unknown_keys, i ? 1 : 0);
			pptimer_file_release(&f);
		}
		unlink(path);
		strbuf_release(&err);
	}
}

/* Bug (fuzz_pptimer): pptimer_read() gave the JSON scanners a buffer with
 * no padding; their 16-byte loads read past its end (ASan heap overflow)
 * when a key string ran to the end of the file. Every length, so that one
 * of them ends at the allocation's edge whatever strbuf's growth policy. */
static void test_pptimer_unpadded(void **state)
{
	(void)state;
	char path[] = "/tmp/pp-reliab-XXXXXX";
	struct strbuf err = STRBUF_INIT;
	struct pptimer_file f;
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\"", 2), 2);
	for (int n = 0; n < 700; n++) {
		strbuf_reset(&err);
		assert_int_equal(pptimer_read(path, false, &f, &err), PP_EPARSE);
		assert_non_null(
			strstr(err.buf, "found end of input, expected the rest of the value"));
		assert_int_equal(write(fd, "f", 1), 1);
	}
	close(fd);
	unlink(path);
	strbuf_release(&err);
}

/* Bug (fuzz_pptimer): a second total-execution-time out of range cleared
 * has_total but kept the first one's value in total_ns. */
static void test_pptimer_total_twice(void **state)
{
	(void)state;
	static const char text[] = "{\"total-execution-time\": 2.5, "
				   "\"total-execution-time\": 1e300}";
	char path[] = "/tmp/pp-reliab-XXXXXX";
	struct strbuf err = STRBUF_INIT;
	struct pptimer_file f;
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	strbuf_reset(&err);
	assert_int_equal(pptimer_read(path, false, &f, &err), 0);
	assert_false(f.has_total);
	assert_int_equal(f.total_ns, 0);
	pptimer_file_release(&f);
	unlink(path);
	strbuf_release(&err);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_topology_many_replicas_linear),
		  cmocka_unit_test(test_topology_infer_nothing),
		  cmocka_unit_test(test_utf8_sanitize),
		  cmocka_unit_test(test_pptimer_no_events),
		  cmocka_unit_test(test_pptimer_unpadded),
		  cmocka_unit_test(test_pptimer_total_twice),
	  })
