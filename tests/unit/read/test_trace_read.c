/* Unit tests for the trace reader (pipeline/read/trace_read.h, json_scan.h):
 * every quirk of docs/semantics.md §3 with exact expected values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include <dirent.h>

#include "gen/gen.h"
#include "read/gunzip.h"
#include "read/json_scan.h"
#include "read/key_cache.h"
#include "read/trace_read.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

/* ---- helpers ---- */

static struct trace_reader *open_str(const char *s, bool salvage)
{
	struct trace_reader_opts o = { .salvage = salvage };
	struct trace_reader *r = trace_reader_open_mem(s, strlen(s), &o);
	assert_non_null(r);
	return r;
}

/* Reads the single event of s into *ev (copied strings stay valid until the
 * reader is closed, as the reader is left open). */
static struct trace_reader *one_event(const char *s, struct trace_event *ev)
{
	struct trace_reader *r = open_str(s, false);
	int rc = trace_reader_next(r, ev);
	if (rc != 1)
		fail_msg("expected an event, got %d: %s", rc, trace_reader_error(r));
	return r;
}

/* Counts the events of s; returns the final code of trace_reader_next. */
static int count(const char *s, bool salvage, uint64_t *n, char *err, size_t errlen)
{
	struct trace_reader *r = open_str(s, salvage);
	struct trace_event ev;
	int rc;
	*n = 0;
	while ((rc = trace_reader_next(r, &ev)) > 0)
		(*n)++;
	assert_int_equal(*n, trace_reader_events(r));
	if (err)
		snprintf(err, errlen, "%s", trace_reader_error(r));
	/* sticky */
	assert_int_equal(trace_reader_next(r, &ev), rc);
	trace_reader_close(r);
	return rc;
}

static char *tmp_path(const char *suffix)
{
	static int k;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s/pptrace-tr-%d-%d%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		    (int)getpid(), k++, suffix);
	return strbuf_detach(&sb, NULL);
}

static char *write_file(const void *data, size_t n, bool gz)
{
	char *path = tmp_path(gz ? ".json.gz" : ".json");
	if (gz) {
		gzFile f = gzopen(path, "wb6");
		assert_non_null(f);
		assert_int_equal(gzwrite(f, data, (unsigned)n), (int)n);
		assert_int_equal(gzclose(f), Z_OK);
	} else {
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(data, 1, n, f), n);
		fclose(f);
	}
	return path;
}

/* Reads r to its end, requiring event i to be named prefix<i>, at ts
 * i µs + frac_ns and, when field is not SIZE_MAX, to have the int64_t at
 * that offset of struct trace_event equal to i. Returns the final code of
 * trace_reader_next(); *n gets the count. */
static int read_numbered(struct trace_reader *r, const char *prefix, int64_t frac_ns, size_t field,
			 int *n)
{
	struct trace_event ev;
	int rc;
	*n = 0;
	while ((rc = trace_reader_next(r, &ev)) > 0) {
		char want[32];
		snprintf(want, sizeof(want), "%s%d", prefix, *n);
		assert_string_equal(ev.name.p, want);
		assert_int_equal(ev.ts_ns, (int64_t)*n * 1000 + frac_ns);
		if (field != SIZE_MAX) {
			int64_t v;
			memcpy(&v, (const char *)&ev + field, sizeof(v));
			assert_int_equal(v, *n);
		}
		(*n)++;
	}
	return rc;
}

static const char *EV1 = "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k0\",\"pid\":0,\"tid\":7,"
			 "\"ts\":1707261432356123.456,\"dur\":3.2,\"args\":{\"correlation\":42,"
			 "\"stream\":7,\"device\":0,\"External id\":9}}";

/* ---- json_scan ---- */

static void test_us_to_ns(void **state)
{
	(void)state;
	struct {
		const char *s;
		int64_t ns;
	} ok[] = {
		{ "0", 0 },
		{ "1", 1000 },
		{ "1.5", 1500 },
		{ "1.25", 1250 },
		{ "1.125", 1125 },
		{ "1707261432356123.456", 1707261432356123456 },
		{ "1707261432356123", 1707261432356123000 },
		{ "-2.5", -2500 },
		{ "0.0004", 0 },
		{ "0.0005", 1 },
		{ "0.0015", 2 },
		{ "-0.0005", -1 },
		{ "1e3", 1000000 },
		{ "1.5E+2", 150000 },
		{ "25e-1", 2500 },
		{ "1.707261432356123456e15", 1707261432356123456 },
		{ "0.000", 0 },
		{ "0e999999", 0 },
		{ "9223372036854775.807", INT64_MAX },
		{ "000.5", 500 },
		{ "1.0000000000000000000000000000000000000000000009", 1000 },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int64_t v = -77;
		if (!js_us_to_ns(ok[i].s, ok[i].s + strlen(ok[i].s), &v))
			fail_msg("rejected %s", ok[i].s);
		if (v != ok[i].ns)
			fail_msg("%s: %lld != %lld", ok[i].s, (long long)v, (long long)ok[i].ns);
	}
	const char *bad[] = { "",     "-",   "1.",   ".5", "1e", "1e+", "9223372036854775.808",
			      "1e20", "abc", "1.5x", "NaN" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t v;
		if (js_us_to_ns(bad[i], bad[i] + strlen(bad[i]), &v))
			fail_msg("accepted %s", bad[i]);
	}
}

static void test_parse_int64(void **state)
{
	(void)state;
	int64_t v;
	const char *mx = "9223372036854775807";
	assert_true(js_parse_int64(mx, mx + strlen(mx), &v));
	assert_true(v == INT64_MAX);
	const char *m = "-9223372036854775808";
	assert_true(js_parse_int64(m, m + strlen(m), &v));
	assert_true(v == INT64_MIN);
	const char *big = "9223372036854775808";
	assert_false(js_parse_int64(big, big + strlen(big), &v));
	const char *huge = "18446744073709551616";
	assert_false(js_parse_int64(huge, huge + strlen(huge), &v));
}

static void test_unescape(void **state)
{
	(void)state;
	char out[64];
	const char *s = "a\\\"b\\\\c\\/d\\n\\t\\u00e9\\u20ac\\ud83d\\ude00\\ud800x\\q";
	size_t n = js_unescape(s, strlen(s), out);
	const char exp[] = "a\"b\\c/d\n\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbdx\\q";
	assert_int_equal(n, sizeof(exp) - 1);
	assert_memory_equal(out, exp, n);
	/* \u0000 stays as text: a NUL would cut the name in C strings */
	n = js_unescape("a\\u0000b", 8, out);
	assert_int_equal(n, 8);
	assert_memory_equal(out, "a\\u0000b", 8);
}

static void test_skip_deep(void **state)
{
	(void)state;
	enum { D = 1000000 };
	char *s = calloc(1, 2 * D + JS_PAD);
	memset(s, '[', D);
	memset(s + D, ']', D);
	struct js_stack st = { 0 };
	struct js_err e;
	const char *p = s;
	assert_int_equal(js_skip_value(&p, s + 2 * D, true, &st, &e), JS_OK);
	assert_ptr_equal(p, s + 2 * D);
	/* mismatched close */
	s[2 * D - 1] = '}';
	p = s;
	assert_int_equal(js_skip_value(&p, s + 2 * D, true, &st, &e), JS_ERR);
	assert_ptr_equal(e.at, s + 2 * D - 1);
	/* cut: needs more */
	char *cut = calloc(1, D + 5 + JS_PAD);
	memcpy(cut, s, D + 5);
	p = cut;
	assert_int_equal(js_skip_value(&p, cut + D + 5, false, &st, &e), JS_MORE);
	free(cut);
	js_stack_release(&st);
	free(s);
}

/* ---- events ---- */

static void test_basic_event(void **state)
{
	(void)state;
	struct trace_event ev;
	char buf[512];
	snprintf(buf, sizeof(buf), "{\"traceEvents\":[%s]}", EV1);
	struct trace_reader *r = one_event(buf, &ev);
	assert_int_equal(ev.ph, 'X');
	assert_string_equal(ev.cat.p, "kernel");
	assert_string_equal(ev.name.p, "k0");
	assert_int_equal(ev.name.n, 2);
	assert_false(ev.pid.is_str);
	assert_int_equal(ev.pid.num, 0);
	assert_int_equal(ev.tid.num, 7);
	assert_true(ev.ts_ns == 1707261432356123456);
	assert_int_equal(ev.dur_ns, 3200);
	assert_int_equal(ev.correlation, 42);
	assert_int_equal(ev.stream, 7);
	assert_int_equal(ev.device, 0);
	assert_int_equal(ev.external_id, 9);
	unsigned want = TE_TS | TE_DUR | TE_PID | TE_TID | TE_ARGS | TE_CORRELATION | TE_STREAM |
			TE_DEVICE | TE_EXTERNAL_ID;
	assert_int_equal(ev.has, want);
	assert_int_equal(ev.offset, 16);
	assert_int_equal(trace_reader_next(r, &ev), 0);
	assert_string_equal(trace_reader_error(r), "");
	assert_true(trace_reader_header(r)->saw_trace_events);
	trace_reader_close(r);
}

static void test_keys_any_order(void **state)
{
	(void)state;
	struct trace_event ev;
	const char *s = "{\"traceEvents\":[{\"args\":{\"stream\":3,\"correlation\":5},"
			"\"dur\":1,\"ts\":2.5,\"tid\":\"x\",\"pid\":-4,\"name\":\"n\","
			"\"cat\":\"Kernel\",\"ph\":\"X\"}]}";
	struct trace_reader *r = one_event(s, &ev);
	assert_int_equal(ev.ph, 'X');
	assert_true(pp_sv_ieq(ev.cat, "kernel"));
	assert_string_equal(ev.cat.p, "Kernel");
	assert_int_equal(ev.ts_ns, 2500);
	assert_int_equal(ev.dur_ns, 1000);
	assert_int_equal(ev.pid.num, -4);
	assert_true(ev.tid.is_str);
	assert_string_equal(ev.tid.str.p, "x");
	assert_int_equal(ev.correlation, 5);
	assert_int_equal(ev.stream, 3);
	trace_reader_close(r);
}

static void test_missing_args_and_null(void **state)
{
	(void)state;
	struct trace_event ev;
	const char *s = "{\"traceEvents\":[{\"ph\":\"i\",\"name\":null,\"cat\":null,\"ts\":null,"
			"\"pid\":null,\"tid\":null,\"args\":null,\"id\":null}]}";
	struct trace_reader *r = one_event(s, &ev);
	assert_int_equal(ev.ph, 'i');
	assert_int_equal(ev.has, 0);
	assert_string_equal(ev.name.p, "");
	assert_string_equal(ev.cat.p, "");
	trace_reader_close(r);
	r = one_event("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":0}]}", &ev);
	assert_int_equal(ev.has, TE_TS | TE_DUR);
	assert_int_equal(ev.dur_ns, 0);
	trace_reader_close(r);
	r = one_event("{\"traceEvents\":[{}]}", &ev);
	assert_int_equal(ev.has, 0);
	assert_int_equal(ev.ph, 0);
	trace_reader_close(r);
}

/* Every field of an event is reset before its members are read: an event
 * without members, read into a struct full of other bytes after one with
 * every field, is all zeros and empty texts ("" with 8 readable bytes),
 * whatever the struct held (each block of clear_event()'s). */
static void test_event_reset(void **state)
{
	(void)state;
	const char *s =
		"{\"traceEvents\": [{\"ph\": \"s\", \"cat\": \"c\", \"name\": \"n\", "
		"\"pid\": \"p\", \"tid\": \"t\", \"id\": \"i\", \"ts\": 1, \"dur\": 2, "
		"\"bp\": \"e\", \"args\": {\"name\": \"a\", \"dtype\": \"d\", \"stream\": 3, "
		"\"device\": 4, \"Group size\": 5, \"sort_index\": 6, \"correlation\": 7, "
		"\"External id\": 8, \"In msg nelems\": 9, \"Out msg nelems\": 10, "
		"\"Collective name\": \"cn\", \"Process Group Name\": \"pn\", "
		"\"Process Group Ranks\": \"pr\", \"Process Group Description\": \"pd\"}},\n"
		"{}, {}]}";
	struct trace_reader *r = open_str(s, false);
	struct trace_event ev, ev2;
	assert_int_equal(trace_reader_next(r, &ev), 1);
	assert_int_equal(ev.out_nelems, 10);
	assert_string_equal(ev.pg_desc.p, "pd");
	assert_int_equal(trace_reader_next(r, &ev), 1);
	memset(&ev2, 0x5a, sizeof(ev2));
	assert_int_equal(trace_reader_next(r, &ev2), 1);
	ev2.offset = ev.offset; /* the one field that differs */
	assert_memory_equal(&ev, &ev2, sizeof(ev));
	assert_int_equal(ev.has, 0);
	assert_int_equal(ev.ph, 0);
	assert_int_equal(ev.bp, 0);
	assert_int_equal(ev.cat_key, 0);
	const struct pp_sv *texts[] = { &ev.cat,      &ev.name,       &ev.pid.str, &ev.tid.str,
					&ev.id.str,   &ev.arg_name,   &ev.pg_name, &ev.pg_desc,
					&ev.pg_ranks, &ev.collective, &ev.dtype };
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		assert_int_equal(texts[i]->n, 0);
		assert_memory_equal(texts[i]->p, "\0\0\0\0\0\0\0\0", 8);
	}
	const struct trace_id *ids[] = { &ev.pid, &ev.tid, &ev.id };
	for (size_t i = 0; i < 3; i++) {
		assert_false(ids[i]->is_str);
		assert_int_equal(ids[i]->num, 0);
	}
	const int64_t *nums[] = { &ev.ts_ns,      &ev.dur_ns,    &ev.correlation, &ev.external_id,
				  &ev.stream,     &ev.device,    &ev.group_size,  &ev.in_nelems,
				  &ev.out_nelems, &ev.sort_index };
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		assert_int_equal(*nums[i], 0);
	assert_int_equal(trace_reader_next(r, &ev), 0);
	trace_reader_close(r);
}

static void test_string_ids(void **state)
{
	(void)state;
	struct trace_event ev;
	const char *s = "{\"traceEvents\":[{\"ph\":\"s\",\"pid\":\"Spans\",\"tid\":\"\","
			"\"id\":18446744073709551617,\"bp\":\"e\",\"cat\":\"fwdbwd\"}]}";
	struct trace_reader *r = one_event(s, &ev);
	assert_true(ev.pid.is_str);
	assert_string_equal(ev.pid.str.p, "Spans");
	assert_true(ev.tid.is_str);
	assert_string_equal(ev.tid.str.p, "");
	assert_int_equal(ev.tid.str.n, 0);
	assert_true(ev.id.is_str);
	assert_string_equal(ev.id.str.p, "18446744073709551617");
	assert_int_equal(ev.bp, 'e');
	assert_int_equal(ev.has, TE_PID | TE_TID | TE_ID);
	trace_reader_close(r);
	r = one_event("{\"traceEvents\":[{\"id\":9223372036854775807,\"pid\":1.5}]}", &ev);
	assert_false(ev.id.is_str);
	assert_true(ev.id.num == INT64_MAX);
	assert_true(ev.pid.is_str);
	assert_string_equal(ev.pid.str.p, "1.5");
	trace_reader_close(r);
}

static void test_escapes(void **state)
{
	(void)state;
	struct trace_event ev;
	const char *s = "{\"traceEvents\":[{\"name\":\"a\\u00e9\\ud83d\\ude00\\\"q\\\\\","
			"\"c\\u0061t\":\"k\\u0065rnel\",\"ph\":\"\\u0058\"}]}";
	struct trace_reader *r = one_event(s, &ev);
	assert_string_equal(ev.name.p, "a\xc3\xa9\xf0\x9f\x98\x80\"q\\");
	assert_int_equal(ev.name.n, 10);
	assert_string_equal(ev.cat.p, "kernel"); /* escaped key and value */
	assert_int_equal(ev.ph, 'X');
	trace_reader_close(r);
	r = one_event("{\"traceEvents\":[{\"name\":\"nul \\u0000 here; DROP\"}]}", &ev);
	assert_string_equal(ev.name.p, "nul \\u0000 here; DROP");
	assert_int_equal(ev.name.n, strlen(ev.name.p));
	trace_reader_close(r);
}

static void test_raw_control_chars(void **state)
{
	(void)state;
	struct trace_event ev;
	const char s[] = "{\"traceEvents\":[{\"name\":\"a\tb\nc\x01\x1f\",\"ph\":\"X\"}]}";
	struct trace_reader *r = one_event(s, &ev);
	assert_string_equal(ev.name.p, "a\tb\nc\x01\x1f");
	trace_reader_close(r);
}

static void test_bom_and_whitespace(void **state)
{
	(void)state;
	struct trace_event ev;
	const char *s = "\xef\xbb\xbf \r\n\t{ \"schemaVersion\" :\f1 ,\r\n\"traceEvents\"\v:\t[ \n"
			"{ \"ph\" : \"X\" , \"ts\" : 5 } \n,\n{\"ph\":\"M\"} ] \r\n} \n\n";
	struct trace_reader *r = one_event(s, &ev);
	assert_int_equal(ev.ts_ns, 5000);
	assert_int_equal(ev.offset, 51);
	assert_int_equal(trace_reader_next(r, &ev), 1);
	assert_int_equal(ev.ph, 'M');
	assert_int_equal(trace_reader_next(r, &ev), 0);
	assert_true(trace_reader_header(r)->has_schema);
	assert_int_equal(trace_reader_header(r)->schema_version, 1);
	trace_reader_close(r);
}

static void test_nonfinite_and_big_ints_in_args(void **state)
{
	(void)state;
	struct trace_event ev;
	const char *s = "{\"traceEvents\":[{\"ph\":\"X\",\"args\":{\"a\":NaN,\"b\":Infinity,"
			"\"c\":-Infinity,\"Comms Id\":10159970886766084423,"
			"\"d\":340282366920938463463374607431768211456,\"correlation\":"
			"18446744073709551616,\"stream\":-1.5e3,\"device\":NaN,"
			"\"External id\":77},\"ts\":1}]}";
	struct trace_reader *r = one_event(s, &ev);
	assert_int_equal(ev.has, TE_TS | TE_ARGS | TE_EXTERNAL_ID);
	assert_int_equal(ev.external_id, 77);
	trace_reader_close(r);
}

static void test_nested_unknown_values(void **state)
{
	(void)state;
	/* an unknown arg nested 10^6 deep: skipped without recursion */
	enum { D = 1000000 };
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"traceEvents\":[{\"args\":{\"deep\":");
	for (int i = 0; i < D; i++)
		strbuf_addstr(&sb, i % 2 ? "{\"k\":" : "[");
	strbuf_addstr(&sb, "1");
	for (int i = D - 1; i >= 0; i--)
		strbuf_addstr(&sb, i % 2 ? "}" : "]");
	strbuf_addstr(&sb, ",\"correlation\":3},\"ph\":\"X\"}],\"after\":[[[{\"x\":[]}]]]}");
	struct trace_event ev;
	struct trace_reader *r = one_event(sb.buf, &ev);
	assert_int_equal(ev.correlation, 3);
	assert_int_equal(trace_reader_next(r, &ev), 0);
	trace_reader_close(r);
	/* the same through a file, so the window must grow */
	char *path = write_file(sb.buf, sb.len, false);
	r = trace_reader_open(path, NULL);
	assert_int_equal(trace_reader_next(r, &ev), 1);
	assert_int_equal(ev.correlation, 3);
	assert_int_equal(trace_reader_next(r, &ev), 0);
	trace_reader_close(r);
	unlink(path);
	free(path);
	strbuf_release(&sb);
}

static void test_huge_name(void **state)
{
	(void)state;
	enum { N = 10 << 20 };
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"");
	size_t at = sb.len;
	strbuf_grow(&sb, N);
	memset(sb.buf + at, 'T', N);
	sb.len += N;
	sb.buf[sb.len] = 0;
	strbuf_addstr(&sb, "\",\"ts\":1},{\"ph\":\"X\",\"name\":\"small\\u0021\"}]}");
	/* from memory, a gzip file, the plain file read ahead on a thread
	 * (the event spans many of its chunks) */
	for (int pass = 0; pass < 3; pass++) {
		struct trace_reader_opts ro = { .read_thread = pass == 2 };
		char *path = pass ? write_file(sb.buf, sb.len, pass == 1) : NULL;
		struct trace_reader *r = pass ? trace_reader_open(path, &ro)
					      : trace_reader_open_mem(sb.buf, sb.len, NULL);
		struct trace_event ev;
		assert_int_equal(trace_reader_next(r, &ev), 1);
		assert_int_equal(ev.name.n, N);
		assert_int_equal(strlen(ev.name.p), N);
		assert_int_equal(ev.name.p[N - 1], 'T');
		assert_int_equal(trace_reader_next(r, &ev), 1);
		assert_string_equal(ev.name.p, "small!");
		assert_int_equal(trace_reader_next(r, &ev), 0);
		trace_reader_close(r);
		if (path) {
			unlink(path);
			free(path);
		}
	}
	/* a cap smaller than the event is an error, not a crash; read ahead on
	 * a thread, the reader stops with that thread's chunks unread, which
	 * closing it must end */
	char *path = write_file(sb.buf, sb.len, false);
	for (int ahead = 0; ahead < 2; ahead++) {
		struct trace_reader_opts o = { .max_event_bytes = 1 << 20, .read_thread = ahead };
		struct trace_reader *r = trace_reader_open(path, &o);
		struct trace_event ev;
		assert_int_equal(trace_reader_next(r, &ev), PP_EPARSE);
		assert_non_null(strstr(trace_reader_error(r), "longer than 1048576 bytes"));
		trace_reader_close(r);
	}
	unlink(path);
	free(path);
	strbuf_release(&sb);
}

static void test_time_forms(void **state)
{
	(void)state;
	struct {
		const char *ts;
		int64_t ns;
	} c[] = {
		{ "12", 12000 },
		{ "12.3", 12300 },
		{ "12.34", 12340 },
		{ "12.345", 12345 },
		{ "1.2345e3", 1234500 },
		{ "-7", -7000 },
		{ "-0.001", -1 },
		{ "1.7e15", 1700000000000000000 },
		/* 16 digits (a ts: µs since 1970) */
		{ "1707261432356123.456", 1707261432356123456 },
		{ "1707261432356123", 1707261432356123000 },
		{ "-1707261432356123.5", -1707261432356123500 },
		{ "1707261432356123e-3", 1707261432356123 },
		{ "9223372036854775.807", INT64_MAX },
		{ "1234567890123456.0001", 1234567890123456000 },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char buf[128];
		struct trace_event ev;
		snprintf(buf, sizeof(buf), "{\"traceEvents\":[{\"ts\":%s,\"dur\":%s}]}", c[i].ts,
			 c[i].ts);
		struct trace_reader *r = one_event(buf, &ev);
		if (ev.ts_ns != c[i].ns || ev.dur_ns != c[i].ns)
			fail_msg("%s: %lld", c[i].ts, (long long)ev.ts_ns);
		trace_reader_close(r);
	}
	uint64_t n;
	char err[512];
	assert_int_equal(count("{\"traceEvents\":[{\"ts\":NaN}]}", false, &n, err, sizeof(err)),
			 PP_EPARSE);
	assert_string_equal(err, "(memory): byte 22: a non-finite time, expected a number of "
				 "µs in ts");
	assert_int_equal(count("{\"traceEvents\":[{\"dur\":1e30}]}", false, &n, err, sizeof(err)),
			 PP_EPARSE);
	assert_string_equal(err, "(memory): byte 23: a time out of the int64 ns range, expected "
				 "a number of µs in dur");
	assert_int_equal(count("{\"traceEvents\":[{\"ts\":17072614323561234}]}", false, &n, err,
			       sizeof(err)),
			 PP_EPARSE);
	assert_string_equal(err, "(memory): byte 22: a time out of the int64 ns range, expected "
				 "a number of µs in ts");
	assert_int_equal(count("{\"traceEvents\":[{\"ts\":\"5\"}]}", false, &n, err, sizeof(err)),
			 PP_EPARSE);
	assert_string_equal(err, "(memory): byte 22: found '\"', expected a number of µs in ts");
}

static void test_header_before_and_after(void **state)
{
	(void)state;
	const char *s =
		"{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100\"},"
		"{\"id\":1,\"name\":\"other\"}],\"traceEvents\":[{\"ph\":\"X\"}],"
		"\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":5,\"world_size\":16,"
		"\"pg_config\":[{\"ranks\":[0,1]}],\"nccl_version\":\"2.18.1\"},"
		"\"baseTimeNanoseconds\":1700000000000000000,\"traceName\":\"t\\u0031\","
		"\"INFO\":[\"a\",\"b\"],\"displayTimeUnit\":\"ms\"}";
	struct trace_reader *r = open_str(s, false);
	struct trace_event ev;
	assert_int_equal(trace_reader_next(r, &ev), 1);
	assert_int_equal(trace_reader_next(r, &ev), 0);
	const struct trace_header *h = trace_reader_header(r);
	assert_true(h->has_rank && h->has_world_size && h->has_base_time && h->has_schema);
	assert_int_equal(h->rank, 5);
	assert_int_equal(h->world_size, 16);
	assert_true(h->base_time_ns == 1700000000000000000);
	assert_string_equal(h->backend, "nccl");
	assert_string_equal(h->nccl_version, "2.18.1");
	assert_string_equal(h->device_name, "NVIDIA H100");
	assert_int_equal(h->device_count, 2);
	assert_string_equal(h->trace_name, "t1");
	trace_reader_close(r);
	/* the header entirely before */
	r = open_str("{\"distributedInfo\":{\"rank\":3},\"traceEvents\":[]}", false);
	assert_int_equal(trace_reader_next(r, &ev), 0);
	assert_int_equal(trace_reader_header(r)->rank, 3);
	assert_false(trace_reader_header(r)->has_world_size);
	trace_reader_close(r);
}

/* distributedInfo.pg_config after traceEvents: each entry's name,
 * description and ranks as "[0, 1]"; a list with a non-integer gives no
 * ranks, an entry that is not an object is skipped; in a small window (the
 * value parsed again when it did not fit) the same. */
static void test_header_pg_config(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"traceEvents\":[{\"ph\":\"X\"}],\"distributedInfo\":{\"rank\":1,"
			   "\"pg_count\":300,\"pg_config\":[{\"pg_name\":\"0\",\"pg_desc\":"
			   "\"default_pg\",\"backend_config\":\"cuda:nccl\",\"pg_size\":2,"
			   "\"ranks\":[0, 1]},{\"ranks\":[2,\"x\",3],\"pg_name\":\"1\"},7,"
			   "{\"pg_name\":\"a\\u0062\",\"ranks\":[]}");
	for (int i = 0; i < 200; i++)
		strbuf_addf(&sb,
			    ",{\"pg_name\":\"g%d\",\"pg_desc\":\"TENSOR_MODEL_PARALLEL_GROUP\","
			    "\"ranks\":[%d,%d,%d]}",
			    i, i, i + 1000, i + 2000);
	strbuf_addstr(&sb, "]}}");
	for (int pass = 0; pass < 2; pass++) {
		struct trace_reader_opts o = { .window_bytes = pass ? 64 : 0 };
		struct trace_reader *r = trace_reader_open_mem(sb.buf, sb.len, &o);
		struct trace_event ev;
		assert_int_equal(trace_reader_next(r, &ev), 1);
		assert_int_equal(trace_reader_next(r, &ev), 0);
		const struct trace_header *h = trace_reader_header(r);
		assert_int_equal(h->npgs, 203);
		assert_true(h->has_pg_count);
		assert_int_equal(h->pg_count, 300);
		assert_string_equal(h->pgs[0].name, "0");
		assert_string_equal(h->pgs[0].desc, "default_pg");
		assert_string_equal(h->pgs[0].ranks, "[0, 1]");
		assert_string_equal(h->pgs[1].name, "1");
		assert_string_equal(h->pgs[1].desc, "");
		assert_string_equal(h->pgs[1].ranks, "");
		assert_string_equal(h->pgs[2].name, "ab");
		assert_string_equal(h->pgs[2].ranks, "[]");
		assert_string_equal(h->pgs[202].name, "g199");
		assert_string_equal(h->pgs[202].ranks, "[199, 1199, 2199]");
		trace_reader_close(r);
	}
	strbuf_release(&sb);
}

static void test_comm_args(void **state)
{
	(void)state;
	struct trace_event ev;
	const char *s =
		"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":"
		"\"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *, unsigned long, ncclWork *)\","
		"\"args\":{\"Collective name\":\"allreduce\",\"In msg nelems\":1048576,"
		"\"Out msg nelems\":1048576,\"Group size\":4,\"dtype\":\"Float\","
		"\"Process Group Name\":\"1\",\"Process Group Description\":"
		"\"DATA_PARALLEL_GROUP\",\"Process Group Ranks\":\"[0, 8, 16, 24]\"}},"
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{\"name\":\"stream 7 \","
		"\"sort_index\":7,\"Process Group Ranks\":[1,2]}}]}";
	struct trace_reader *r = one_event(s, &ev);
	assert_string_equal(ev.collective.p, "allreduce");
	assert_int_equal(ev.in_nelems, 1048576);
	assert_int_equal(ev.out_nelems, 1048576);
	assert_int_equal(ev.group_size, 4);
	assert_string_equal(ev.dtype.p, "Float");
	assert_string_equal(ev.pg_name.p, "1");
	assert_string_equal(ev.pg_desc.p, "DATA_PARALLEL_GROUP");
	assert_string_equal(ev.pg_ranks.p, "[0, 8, 16, 24]");
	assert_true(ev.has & TE_GROUP_SIZE && ev.has & TE_IN_NELEMS && ev.has & TE_OUT_NELEMS);
	assert_int_equal(trace_reader_next(r, &ev), 1);
	assert_string_equal(ev.name.p, "thread_name");
	assert_string_equal(ev.arg_name.p, "stream 7 ");
	assert_int_equal(ev.sort_index, 7);
	assert_string_equal(ev.pg_ranks.p, "[1,2]"); /* non-string kept as raw text */
	trace_reader_close(r);
}

static void test_truncated(void **state)
{
	(void)state;
	char buf[2048];
	snprintf(buf, sizeof(buf), "{\"traceEvents\":[%s,%s,%s", EV1, EV1, EV1);
	size_t full = strlen(buf);
	buf[full - 20] = 0; /* cut inside the third event */
	uint64_t n;
	char err[512];
	assert_int_equal(count(buf, false, &n, err, sizeof(err)), PP_ETRUNC);
	assert_int_equal(n, 2);
	char exp[512];
	size_t ev_len = strlen(EV1);
	snprintf(exp, sizeof(exp),
		 "(memory): byte %zu: file ends inside an event (at byte %zu) after 2 complete "
		 "events, expected the rest of the trace",
		 full - 20, 16 + 2 * ev_len + 1);
	assert_string_equal(err, exp);
	/* salvage keeps the complete ones and ends cleanly */
	struct trace_reader *r = open_str(buf, true);
	struct trace_event ev;
	assert_int_equal(trace_reader_next(r, &ev), 1);
	assert_int_equal(trace_reader_next(r, &ev), 1);
	assert_int_equal(trace_reader_next(r, &ev), 0);
	assert_true(trace_reader_truncated(r));
	assert_string_equal(trace_reader_error(r), "");
	trace_reader_close(r);
	/* cut right after a complete event, after the array, and in the header */
	snprintf(buf, sizeof(buf), "{\"traceEvents\":[%s", EV1);
	assert_int_equal(count(buf, false, &n, NULL, 0), PP_ETRUNC);
	assert_int_equal(n, 1);
	assert_int_equal(count(buf, true, &n, NULL, 0), 0);
	assert_int_equal(n, 1);
	snprintf(buf, sizeof(buf), "{\"traceEvents\":[%s], \"distributedInfo\":{\"ra", EV1);
	assert_int_equal(count(buf, false, &n, NULL, 0), PP_ETRUNC);
	assert_int_equal(count(buf, true, &n, NULL, 0), 0);
	assert_int_equal(n, 1);
	/* every cut point of a small trace: error or salvage, never a crash */
	snprintf(buf, sizeof(buf), "{\"schemaVersion\":1,\"traceEvents\":[%s,%s],\"x\":[1]}", EV1,
		 EV1);
	full = strlen(buf);
	for (size_t cut = 0; cut < full; cut++) {
		char *c = strndup(buf, cut);
		int rc = count(c, false, &n, NULL, 0);
		assert_true(rc == PP_ETRUNC || rc == PP_EPARSE);
		rc = count(c, true, &n, NULL, 0);
		assert_true(rc == 0 || rc == PP_ETRUNC || rc == PP_EPARSE);
		assert_true(n <= 2);
		free(c);
	}
	assert_int_equal(count(buf, false, &n, NULL, 0), 0);
	assert_int_equal(n, 2);
}

/* Reads path to the end with the given gunzip implementation, inflated
 * ahead on a thread of its own when ahead (gzstream_read_ahead()); returns
 * the final code, the event count in *n and the error text in err. */
static int read_gz(const char *path, int impl, bool ahead, bool salvage, uint64_t *n, char *err,
		   size_t errlen)
{
	struct trace_reader_opts o = { .salvage = salvage, .gunzip = impl, .read_thread = ahead };
	struct trace_reader *r = trace_reader_open(path, &o);
	struct trace_event ev;
	int rc;
	assert_non_null(r);
	*n = 0;
	while ((rc = trace_reader_next(r, &ev)) > 0)
		(*n)++;
	snprintf(err, errlen, "%s", trace_reader_error(r));
	if (salvage && rc == 0 && !trace_reader_truncated(r))
		snprintf(err, errlen, "not truncated");
	trace_reader_close(r);
	return rc;
}

/* One gzip implementation, read directly or inflated ahead: a whole file,
 * concatenated members, a cut file (error, or salvage), corrupt header, data
 * and checksum. */
static void gzip_case(int impl, bool ahead)
{
	const char *name = impl == GUNZIP_ZLIB ? "zlib" : "isa-l";
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"traceEvents\":[");
	for (int i = 0; i < 50000; i++)
		strbuf_addf(&sb, "%s{\"ph\":\"X\",\"name\":\"k%d\",\"ts\":%d.5,\"dur\":1}",
			    i ? "," : "", i, i);
	strbuf_addstr(&sb, "],\"distributedInfo\":{\"rank\":2}}");
	char *path = write_file(sb.buf, sb.len, true);
	struct trace_reader_opts o = { .gunzip = impl, .read_thread = ahead };
	struct trace_reader *r = trace_reader_open(path, &o);
	char err[1024];
	uint64_t got, kept;
	int i, rc;
	assert_int_equal(read_numbered(r, "k", 500, SIZE_MAX, &i), 0);
	assert_int_equal(i, 50000);
	assert_true(trace_reader_is_gzip(r));
	assert_string_equal(trace_reader_gunzip(r), name);
	assert_int_equal(trace_reader_bytes_text(r), sb.len);
	assert_int_equal(trace_reader_header(r)->rank, 2);
	trace_reader_close(r);

	FILE *f = fopen(path, "rb");
	char *gz = malloc(1 << 20);
	size_t gzn = fread(gz, 1, 1 << 20, f);
	fclose(f);
	assert_true(gzn > 1000 && gzn < (1 << 19));

	/* the same text as three members, then bytes that are not a member */
	size_t third = sb.len / 3;
	char *m1 = write_file(sb.buf, third, true);
	char *m2 = write_file(sb.buf + third, third, true);
	char *m3 = write_file(sb.buf + 2 * third, sb.len - 2 * third, true);
	struct strbuf cat = STRBUF_INIT;
	char *parts[] = { m1, m2, m3 };
	size_t last = 0; /* where the third member starts */
	for (int k = 0; k < 3; k++) {
		last = cat.len;
		f = fopen(parts[k], "rb");
		char chunk[4096];
		size_t n;
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			strbuf_add(&cat, chunk, n);
		fclose(f);
		unlink(parts[k]);
		free(parts[k]);
	}
	strbuf_addstr(&cat, "trailing junk");
	char *multi = write_file(cat.buf, cat.len, false);
	assert_int_equal(read_gz(multi, impl, ahead, false, &got, err, sizeof(err)), 0);
	assert_int_equal(got, 50000);

	/* a truncated gzip file: error, or the complete events with salvage */
	char *cut = write_file(gz, gzn / 2, false); /* still gzip by magic */
	assert_int_equal(read_gz(cut, impl, ahead, false, &got, err, sizeof(err)), PP_ETRUNC);
	assert_true(got > 1000 && got < 50000);
	assert_non_null(strstr(err, "gzip stream ends inside an event"));
	assert_int_equal(read_gz(cut, impl, ahead, true, &kept, err, sizeof(err)), 0);
	assert_int_equal(kept, got);
	assert_string_equal(err, "");
	/* the last member cut in its middle: the earlier members' events, and
	 * then the error */
	char *mcut = write_file(cat.buf, last + (cat.len - last) / 2, false);
	assert_int_equal(read_gz(mcut, impl, ahead, false, &got, err, sizeof(err)), PP_ETRUNC);
	assert_true(got > 2 * 50000 / 3 - 10 && got < 50000);
	assert_non_null(strstr(err, "gzip stream ends inside an event"));

	/* a corrupt header: not deflate (method 7 instead of 8) */
	gz[2] = 7;
	char *bad = write_file(gz, gzn, false);
	assert_int_equal(read_gz(bad, impl, ahead, false, &got, err, sizeof(err)), PP_EPARSE);
	assert_string_equal(err + strlen(bad),
			    ": byte 0: corrupt gzip data (unknown compression method) after 0 "
			    "complete events, expected a valid gzip stream");
	gz[2] = 8;
	unlink(bad);
	free(bad);
	/* a wrong CRC in the trailer: every event read, then the error */
	gz[gzn - 8] ^= 0x55;
	bad = write_file(gz, gzn, false);
	assert_int_equal(read_gz(bad, impl, ahead, false, &got, err, sizeof(err)), PP_EPARSE);
	assert_non_null(strstr(err, "corrupt gzip data (incorrect data check) after"));
	gz[gzn - 8] ^= 0x55;
	unlink(bad);
	free(bad);
	/* corruption inside the deflate data decodes to garbage or fails:
	 * either way an error, never a crash */
	for (size_t k = gzn / 3; k < gzn / 3 + 64; k++)
		gz[k] ^= 0x5a;
	bad = write_file(gz, gzn, false);
	rc = read_gz(bad, impl, ahead, false, &got, err, sizeof(err));
	assert_true(rc == PP_EPARSE || rc == PP_ETRUNC);
	unlink(path);
	unlink(cut);
	unlink(mcut);
	unlink(bad);
	unlink(multi);
	free(path);
	free(cut);
	free(mcut);
	free(bad);
	free(multi);
	free(gz);
	strbuf_release(&cat);
	strbuf_release(&sb);
}

static void test_gzip_zlib(void **state)
{
	(void)state;
	gzip_case(GUNZIP_ZLIB, false);
	gzip_case(GUNZIP_ZLIB, true);
}

/* ISA-L, the default when the build found it; skipped (and said) otherwise. */
static void test_gzip_isal(void **state)
{
	(void)state;
	if (!gunzip_have_isal()) {
		print_message("# skip: the build has no ISA-L\n");
		skip();
	}
	gzip_case(GUNZIP_ISAL, false);
	gzip_case(GUNZIP_ISAL, true);
}

static void test_errors(void **state)
{
	(void)state;
	struct {
		const char *in;
		int rc;
		const char *err;
	} c[] = {
		{ "", PP_EPARSE, "(memory): byte 0: empty input, expected a JSON object" },
		{ "  \n", PP_EPARSE, "(memory): byte 3: only whitespace, expected a JSON object" },
		{ "hello", PP_EPARSE,
		  "(memory): byte 0: found 'h', expected '{' opening a trace object" },
		{ "\x89PNG", PP_EPARSE,
		  "(memory): byte 0: found byte 0x89, expected '{' opening a trace object" },
		{ "{\"a\":1}", PP_EPARSE,
		  "(memory): byte 7: no traceEvents key in the trace object, expected a Kineto trace" },
		{ "[1,2]", PP_EPARSE, "(memory): byte 1: found '1', expected an event object '{'" },
		{ "{\"traceEvents\":{}}", PP_EPARSE,
		  "(memory): byte 15: found '{', expected '[' opening traceEvents" },
		{ "{\"traceEvents\":[{\"ph\" \"X\"}]}", PP_EPARSE,
		  "(memory): byte 22: found '\"', expected ':' after the key" },
		{ "{\"traceEvents\":[{\"ph\":\"X\"}{}]}", PP_EPARSE,
		  "(memory): byte 26: found '{', expected ',' or ']' after an event" },
		{ "{\"traceEvents\":[{\"args\":{\"a\":[1,}]}}]}", PP_EPARSE,
		  "(memory): byte 32: found '}', expected a value" },
		{ "{\"traceEvents\":[{\"x\":tru}]}", PP_EPARSE,
		  "(memory): byte 21: found 't', expected a value" },
		{ "{\"traceEvents\":[]} x", PP_EPARSE,
		  "(memory): byte 19: data after the end of the trace, expected end of input" },
		{ "{\"traceEvents\":[{\"x\":01}]}", PP_EPARSE,
		  "(memory): byte 22: found '1', expected ',' or '}'" },
		{ "{\"traceEvents\":[{\"x\":-}]}", PP_EPARSE,
		  "(memory): byte 22: found '}', expected a digit" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t n;
		char err[512];
		int rc = count(c[i].in, false, &n, err, sizeof(err));
		if (rc != c[i].rc || strcmp(err, c[i].err))
			fail_msg("case %zu: rc %d err '%s', expected '%s'", i, rc, err, c[i].err);
	}
	/* a missing file */
	struct trace_reader *r = trace_reader_open("/nonexistent/x.json", NULL);
	struct trace_event ev;
	assert_int_equal(trace_reader_next(r, &ev), PP_EIO);
	assert_string_equal(trace_reader_error(r),
			    "/nonexistent/x.json: byte 0: cannot open: No such file or directory, "
			    "expected a readable file");
	trace_reader_close(r);
}

static void test_tolerated(void **state)
{
	(void)state;
	uint64_t n;
	/* bare array (Chrome's JSON array format), trailing commas, empty trace */
	assert_int_equal(count("[{\"ph\":\"X\"},{\"ph\":\"X\"}]", false, &n, NULL, 0), 0);
	assert_int_equal(n, 2);
	assert_int_equal(count("{\"traceEvents\":[{\"ph\":\"X\"},],}", false, &n, NULL, 0), 0);
	assert_int_equal(n, 1);
	assert_int_equal(count("{\"traceEvents\":[]}", false, &n, NULL, 0), 0);
	assert_int_equal(n, 0);
	/* two traceEvents arrays: both are read */
	assert_int_equal(
		count("{\"traceEvents\":[{}],\"traceEvents\":[{},{}]}", false, &n, NULL, 0), 0);
	assert_int_equal(n, 3);
}

static void test_small_window_refills(void **state)
{
	(void)state;
	/* Events straddling every possible window boundary: a file read through
	 * a small max window still yields exact values. */
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"traceEvents\":[");
	for (int i = 0; i < 3000; i++)
		strbuf_addf(&sb,
			    "%s{\"ph\":\"X\",\"name\":\"n\\u00e9%d\",\"ts\":%d.125,\"args\":"
			    "{\"correlation\":%d}}",
			    i ? ",\n" : "", i, i, i);
	strbuf_addstr(&sb, "]}");
	char *path = write_file(sb.buf, sb.len, false);
	for (int pass = 0; pass < 2; pass++) {
		struct trace_reader_opts o = { .max_event_bytes = 4096 };
		struct trace_reader *r = pass ? trace_reader_open_mem(sb.buf, sb.len, &o)
					      : trace_reader_open(path, &o);
		int i;
		assert_int_equal(read_numbered(r, "n\xc3\xa9", 125,
					       offsetof(struct trace_event, correlation), &i),
				 0);
		assert_int_equal(i, 3000);
		assert_int_equal(trace_reader_bytes_text(r), sb.len);
		trace_reader_close(r);
	}
	unlink(path);
	free(path);
	strbuf_release(&sb);
}

/* Reading ahead with windows lent by the reading thread (gzstream_take()):
 * chunks as small as the window asked for, events shorter and longer than
 * the room before a chunk (then the reader's own buffer takes over, grown
 * for the longest), plain and gzip, read as without a thread; a unit longer
 * than max_event_bytes is the same error either way. */
static void test_lent_windows(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"traceEvents\":[");
	for (int i = 0; i < 2000; i++)
		strbuf_addf(
			&sb,
			"%s{\"ph\":\"X\",\"name\":\"e%d\",\"ts\":%d.25,\"args\":{\"pad\":\"%*s\"}}",
			i ? "," : "", i, i, i % 7 == 0 ? 40 * (i % 50) : i % 13, "");
	strbuf_addstr(&sb, "]}");
	static const size_t windows[] = { 16, 64, 300, 4096, 0 };
	for (int gz = 0; gz < 2; gz++) {
		char *path = write_file(sb.buf, sb.len, gz);
		for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
			for (int thread = 0; thread < 2; thread++) {
				struct trace_reader_opts o = { .window_bytes = windows[w],
							       .read_thread = thread };
				struct trace_reader *r = trace_reader_open(path, &o);
				int i;
				assert_int_equal(read_numbered(r, "e", 250, SIZE_MAX, &i), 0);
				assert_int_equal(i, 2000);
				assert_int_equal(trace_reader_bytes_text(r), sb.len);
				trace_reader_close(r);
			}
		}
		/* max_event 1,024: the 1,960-byte pads do not fit, alike */
		char err[2][1024];
		for (int thread = 0; thread < 2; thread++) {
			struct trace_reader_opts o = { .window_bytes = 64,
						       .max_event_bytes = 1024,
						       .read_thread = thread };
			struct trace_reader *r = trace_reader_open(path, &o);
			struct trace_event ev;
			int rc;
			while ((rc = trace_reader_next(r, &ev)) > 0)
				;
			assert_int_equal(rc, PP_EPARSE);
			snprintf(err[thread], sizeof(err[thread]), "%s", trace_reader_error(r));
			trace_reader_close(r);
		}
		assert_non_null(strstr(err[0], "longer than 1024 bytes"));
		assert_string_equal(err[0], err[1]);
		unlink(path);
		free(path);
	}
	strbuf_release(&sb);
}

/* The fuzz target's checks (differential windows, NUL-terminated strings)
 * on every seed and every past crash input. */
#include "tests/fuzz/fuzz_trace_read.c"

static void replay_dir(const char *dir, int *count)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		struct strbuf path = STRBUF_INIT;
		strbuf_addf(&path, "%s/%s", dir, de->d_name);
		FILE *f = fopen(path.buf, "rb");
		assert_non_null(f);
		struct strbuf data = STRBUF_INIT;
		char chunk[65536];
		size_t n;
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			strbuf_add(&data, chunk, n);
		fclose(f);
		LLVMFuzzerTestOneInput((const uint8_t *)data.buf, data.len);
		(*count)++;
		strbuf_release(&data);
		strbuf_release(&path);
	}
	closedir(d);
}

static void test_fuzz_regressions(void **state)
{
	(void)state;
	const char *root = getenv("PP_ROOT") ? getenv("PP_ROOT") : ".";
	int count = 0;
	struct strbuf dir = STRBUF_INIT;
	strbuf_addf(&dir, "%s/tests/fuzz/corpus/trace_read", root);
	replay_dir(dir.buf, &count);
	assert_true(count >= 40); /* the seeds are there */
	strbuf_reset(&dir);
	strbuf_addf(&dir, "%s/tests/fuzz/regress/trace_read", root);
	replay_dir(dir.buf, &count);
	strbuf_release(&dir);
}

/* Reads a whole file (gzip or not) into sb. */
static void slurp(const char *path, struct strbuf *sb)
{
	gzFile f = gzopen(path, "rb");
	char chunk[65536];
	int n;
	assert_non_null(f);
	while ((n = gzread(f, chunk, sizeof(chunk))) > 0)
		strbuf_add(sb, chunk, (size_t)n);
	assert_true(n == 0);
	gzclose(f);
}

/* Runs the fuzz target's three readings (two windows, key cache on and
 * off) on every trace file under dir; returns how many. */
static int replay_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int count = 0;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		struct strbuf path = STRBUF_INIT, data = STRBUF_INIT;
		strbuf_addf(&path, "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR) {
			count += replay_tree(path.buf);
		} else if (strstr(de->d_name, ".json")) {
			slurp(path.buf, &data);
			LLVMFuzzerTestOneInput((const uint8_t *)data.buf, data.len);
			count++;
		}
		strbuf_release(&data);
		strbuf_release(&path);
	}
	closedir(d);
	return count;
}

/* The SIMD levels: each that the CPU runs listed once, the default first,
 * and the default is what a reader takes when none is asked for: AVX2 on
 * an x86-64 CPU that runs it, even beside AVX-512 (docs/reader.md). */
static void test_simd_default(void **state)
{
	(void)state;
	const char *levels[8];
	size_t n = trace_reader_simd_levels(levels, 8);
	assert_true(n >= 1 && n <= 8);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			assert_string_not_equal(levels[i], levels[j]);
	assert_string_equal(levels[n - 1], "scalar");
	char *forced = getenv("PP_SIMD") ? xstrdup(getenv("PP_SIMD")) : NULL;
	unsetenv("PP_SIMD"); /* t0307 forces each level through it */
	static const char doc[] = "{\"traceEvents\": []}";
	struct trace_reader *r = trace_reader_open_mem(doc, sizeof(doc) - 1, NULL);
	assert_string_equal(trace_reader_simd(r), levels[0]);
	trace_reader_close(r);
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
	    __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt"))
		assert_string_equal(levels[0], "avx2");
	bool avx512 = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
		      !strcmp(levels[0], "avx2");
	size_t i = 0;
	while (i < n && strcmp(levels[i], "avx512"))
		i++;
	/* listed (so tested) when it runs, and taken when asked for */
	assert_int_equal(i < n, avx512);
	if (avx512) {
		struct trace_reader_opts o = { .simd = "avx512" };
		r = trace_reader_open_mem(doc, sizeof(doc) - 1, &o);
		assert_string_equal(trace_reader_simd(r), "avx512");
		trace_reader_close(r);
	}
#endif
	if (forced) {
		setenv("PP_SIMD", forced, 1);
		free(forced);
	}
}

/* The key cache past its limits: more key orders than it keeps trie nodes
 * (512) and more next keys than a node keeps (4), keys too long to cache, escaped keys, spacing that changes between events, and a
 * key whose literal is a prefix of another's. Every event must read the
 * same as with the cache off, and the known fields must be right. */
static void test_key_cache_limits(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	unsigned seed = 12345;
	strbuf_addstr(&sb, "{\"traceEvents\": [\n");
	for (int i = 0; i < 3000; i++) {
		seed = seed * 1103515245u + 12345u;
		const char *sep = (seed >> 8) % 7 == 0 ? ",\n    " : ", ";
		const char *colon = (seed >> 12) % 5 == 0 ? " : " : ": ";
		strbuf_addf(&sb, "%s{\"ph\"%s\"X\"", i ? ",\n" : "", colon);
		/* some of 100 unknown keys, in an order that changes per event */
		for (int k = 0; k < 4; k++)
			strbuf_addf(&sb, "%s\"unknown key %u\"%s%d", sep, (seed >> (4 * k)) % 100,
				    colon, k);
		if (i % 3 == 0)
			strbuf_addf(&sb, "%s\"a key longer than the thirty-two bytes cached\": 1",
				    sep);
		if (i % 5 == 0)
			strbuf_addf(&sb, "%s\"\\u0074s\": 7", sep); /* an escaped "ts" */
		strbuf_addf(&sb, "%s\"ts\"%s%d.5%s\"name\"%s\"k%d\"%s\"names\": 0", sep, colon, i,
			    sep, colon, i, sep);
		strbuf_addf(&sb, "%s\"args\"%s{\"External id\": %d%s\"External idx\": 1}}", sep,
			    colon, i, sep);
	}
	strbuf_addstr(&sb, "\n]}");
	LLVMFuzzerTestOneInput((const uint8_t *)sb.buf, sb.len);
	struct trace_reader *r = open_str(sb.buf, false);
	int i;
	assert_int_equal(read_numbered(r, "k", 500, offsetof(struct trace_event, external_id), &i),
			 0);
	assert_int_equal(i, 3000);
	trace_reader_close(r);
	strbuf_release(&sb);
}

/* key_cache_find(): an empty slot matches no text (its first literal is
 * compared without a look at its length), a learned literal matches its
 * own bytes with an allowed byte after them, and a miss stops at the first
 * empty slot; key_cache_front() reorders a node without changing what
 * is found. */
static void test_key_cache_find(void **state)
{
	(void)state;
	struct key_cache *kc = key_cache_new();
	char text[KC_LIT + 64];
	for (int b = 0; b < 256; b++) { /* whatever the text, the empty node misses */
		memset(text, b, sizeof(text));
		assert_null(key_cache_find(kc, 0, text));
		assert_null(key_cache_find(kc, KC_LOST, text));
	}
	struct kc_next *fresh;
	unsigned next = key_cache_learn(kc, 0, ", \"ts\": ", 8, 3, &fresh);
	assert_non_null(fresh);
	assert_int_not_equal(next, KC_LOST);
	memset(text, 0, sizeof(text));
	memcpy(text, ", \"ts\": 17", 10);
	const struct kc_next *x = key_cache_find(kc, 0, text);
	assert_ptr_equal(x, fresh);
	assert_int_equal(x->which, 3);
	assert_int_equal(x->node, next);
	text[8] = ' '; /* whitespace after the literal: not this one */
	assert_null(key_cache_find(kc, 0, text));
	memcpy(text, ", \"tx\": 17", 10);
	assert_null(key_cache_find(kc, 0, text));
	/* key_cache_front(): the literal that matches comes first, and each
	 * literal is found as before, with its node */
	unsigned next2 = key_cache_learn(kc, 0, ", \"ph\": ", 8, 1, &fresh);
	assert_ptr_equal(fresh, &kc->node[0].next[1]);
	memcpy(text, ", \"ph\": \"X\"", 11);
	key_cache_front(kc, 0, text);
	x = key_cache_find(kc, 0, text);
	assert_ptr_equal(x, &kc->node[0].next[0]);
	assert_int_equal(x->which, 1);
	assert_int_equal(x->node, next2);
	memcpy(text, ", \"ts\": 17", 10);
	x = key_cache_find(kc, 0, text);
	assert_ptr_equal(x, &kc->node[0].next[1]);
	assert_int_equal(x->which, 3);
	assert_int_equal(x->node, next);
	key_cache_front(kc, 0, text);
	assert_ptr_equal(key_cache_find(kc, 0, text), &kc->node[0].next[0]);
	memcpy(text, ", \"tx\": 17", 10); /* none matches: the order stays */
	key_cache_front(kc, 0, text);
	assert_int_equal(kc->node[0].next[0].which, 3);
	assert_int_equal(kc->node[0].next[1].which, 1);
	key_cache_free(kc);
}

/* key_cache_branch_byte() and key_cache_branch_at() give the node that
 * key_cache_branch() gives, the same for the same (node, value) ever
 * after, whichever node the byte table belongs to: asked at two nodes in
 * turn (events whose ph comes at different places), then at one; asked
 * again once the branch table has no room; and branch_at's entry is the one that
 * gave the node. */
static void test_key_cache_branch_memo(void **state)
{
	(void)state;
	struct key_cache *kc = key_cache_new();
	struct kc_next *fresh;
	unsigned a = key_cache_learn(kc, 0, "{\"ph\": ", 7, 1, &fresh);
	unsigned b = key_cache_learn(kc, 0, "{\"name\": ", 9, 2, &fresh);
	assert_int_not_equal(a, KC_LOST);
	assert_int_not_equal(b, KC_LOST);
	unsigned seen[2][256] = { { 0 } };
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 2000; i++) {
			unsigned at = round == 1 || i % 3 ? a : b;
			unsigned char v =
				(unsigned char)"XXfsiMXb"[i % 8] + (unsigned char)(i / 700);
			unsigned to = key_cache_branch_byte(kc, at, v);
			assert_int_equal(to, key_cache_branch(kc, at, v));
			unsigned *was = &seen[at == b][v];
			if (*was)
				assert_int_equal(to, *was);
			*was = to;
		}
	struct kc_branch *e;
	unsigned to = key_cache_branch_at(kc, a, 'X', &e);
	assert_non_null(e);
	assert_int_equal(to, seen[0]['X']);
	assert_int_equal(e->to, to);
	assert_int_equal(e->then, 0);
	uint64_t lost = 1000; /* branches made until one finds no room */
	while (key_cache_branch(kc, a, lost) != KC_LOST)
		lost++;
	for (unsigned v = 0; v < 256; v++) {
		unsigned t = key_cache_branch_byte(kc, b, (unsigned char)v);
		assert_int_equal(t, key_cache_branch(kc, b, v));
		if (seen[1][v])
			assert_int_equal(t, seen[1][v]);
		assert_int_equal(key_cache_branch_byte(kc, b, (unsigned char)v), t);
	}
	to = key_cache_branch_at(kc, a, lost, &e); /* still no room */
	assert_int_equal(to, KC_LOST);
	assert_null(e);
	key_cache_free(kc);
}

/* trace_event.cat_key: the same key only for the same cat text, whatever
 * the cat's place among the keys, its case or escapes, and when an event
 * has two cat members (the second one's text counts: the fuzzer found the
 * first one's key left with it); a cat of up to 7 bytes has a key once its
 * kind of event is known (inspect counts by it), different for different
 * texts; a longer one has none. */
static void test_cat_key(void **state)
{
	(void)state;
	static const char *const cats[] = {
		"kernel", "Kernel",       "cpu_op",         "ac2g",
		"",       "ker\\u006eel", "cuda_runtime_a", "cuda_runtime_b"
	};
	enum { NCATS = sizeof(cats) / sizeof(cats[0]) };
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"traceEvents\": [\n");
	for (int i = 0; i < 600; i++) {
		const char *cat = cats[i % NCATS];
		if (i % 3 == 0) /* a flow: cat after ts */
			strbuf_addf(&sb,
				    "  {\"ph\": \"s\", \"id\": %d, \"ts\": %d, \"cat\": \"%s\"},\n",
				    i, i, cat);
		else
			strbuf_addf(&sb,
				    "  {\"ph\": \"X\", \"cat\": \"%s\", \"ts\": %d, \"dur\": 1},\n",
				    cat, i);
	}
	for (int i = 0; i < 40; i++) /* two cats, the second at another node */
		strbuf_addf(&sb,
			    "  {\"ph\": \"X\", \"cat\": \"%s\", \"ts\": %d, \"cat\": \"%s\"},\n",
			    cats[i % 3], i, cats[(i / 3) % 4]);
	strbuf_addstr(&sb, "  {}\n]}\n");
	unsigned key_of[NCATS][2] = { { 0 } }; /* by cat and ph 's' / 'X' */
	struct trace_reader *r = trace_reader_open_mem(sb.buf, sb.len, NULL);
	struct trace_event ev;
	struct cat_keys keys;
	memset(&keys, 0, sizeof(keys));
	for (int i = 0; trace_reader_next(r, &ev) > 0; i++) {
		cat_key_check(&keys, &ev);
		if (i >= 600)
			continue; /* the events with two cats, the closing {} */
		int c = i % NCATS, x = ev.ph == 'X';
		if (c >= 5) { /* longer than 7 bytes (as written) */
			assert_int_equal(ev.cat_key, 0);
			continue;
		}
		if (i >= 3 * NCATS) /* past each kind's first sight */
			assert_int_not_equal(ev.cat_key, 0);
		if (ev.cat_key && key_of[c][x])
			assert_int_equal(ev.cat_key, key_of[c][x]);
		if (ev.cat_key)
			key_of[c][x] = ev.cat_key;
	}
	assert_true(keys.keyed > 300);
	for (int a = 0; a < 5; a++)
		for (int b = 0; b < 5; b++)
			for (int x = 0; x < 2; x++)
				if (a != b && key_of[a][x])
					assert_int_not_equal(key_of[a][x], key_of[b][x]);
	cat_keys_release(&keys);
	trace_reader_close(r);
	LLVMFuzzerTestOneInput((const uint8_t *)sb.buf, sb.len); /* every other reading */
	strbuf_release(&sb);
}

/* An id member given again as an integer after a string (or a null after
 * a string) is an integer without text, whether read by the fast path or,
 * once the key cache made its member whole, from the literal: the reader
 * leaves an integer id's text as the event's reset made it unless a string
 * came before (trace_values.h, id_num_reset()). */
static void test_repeated_ids(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"traceEvents\": [\n");
	for (int i = 0; i < 40; i++)
		strbuf_addf(&sb,
			    "%s{\"ph\": \"X\", \"pid\": \"a\", \"pid\": 5, \"tid\": \"b\", "
			    "\"tid\": null, \"tid\": %d, \"id\": \"c\", \"id\": 9, \"ts\": 1}",
			    i ? ",\n" : "", 7 + i % 2);
	strbuf_addstr(&sb, "\n]}");
	LLVMFuzzerTestOneInput((const uint8_t *)sb.buf, sb.len);
	struct trace_reader *r = open_str(sb.buf, false);
	struct trace_event ev;
	for (int i = 0; i < 40; i++) {
		assert_int_equal(trace_reader_next(r, &ev), 1);
		assert_false(ev.pid.is_str);
		assert_int_equal(ev.pid.num, 5);
		assert_string_equal(ev.pid.str.p, "");
		assert_int_equal(ev.pid.str.n, 0);
		assert_false(ev.tid.is_str);
		assert_int_equal(ev.tid.num, 7 + i % 2);
		assert_int_equal(ev.tid.str.n, 0);
		assert_false(ev.id.is_str);
		assert_int_equal(ev.id.num, 9);
		assert_string_equal(ev.id.str.p, "");
		assert_int_equal(ev.has, TE_PID | TE_TID | TE_ID | TE_TS);
	}
	assert_int_equal(trace_reader_next(r, &ev), 0);
	trace_reader_close(r);
	strbuf_release(&sb);
}

/* Whole literals (a key and its value learned together): values of every
 * kind that one may hold, the same for a while and then different (the
 * literal turns back into its key's), with the fields right each time and
 * every reading (cache off, tiny windows, mapped) the same. */
static void test_key_cache_whole(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"traceEvents\": [\n");
	for (int i = 0; i < 400; i++) {
		bool late = i >= 200; /* the values change half-way */
		strbuf_addf(
			&sb,
			"%s{\"ph\": \"%s\", \"cat\": \"%s\", \"name\": \"k%d\", \"pid\": %s, "
			"\"tid\": %d, \"id\": %s, \"ts\": %d.5, \"bp\": \"%s\", \"odd\": %s, "
			"\"args\": {\"device\": %s, \"stream\": 7, \"name\": %s, \"dtype\": %s, "
			"\"skip\": %s, \"Group size\": %s}}",
			i ? ",\n" : "", late && i % 3 == 0 ? "i" : "X", late ? "Kernel" : "kernel",
			i, late ? "\"p0\"" : "0", late ? 9 : 7,
			i % 2 ? "12345678901234567890" : "3", i, late ? "" : "e",
			late ? "[1, 2]" : "-1", late ? "\"0\"" : "0", late ? "12" : "\"n\"",
			late ? "null" : "[0, 8]", late ? "\"s\"" : "1.5", late ? "\"big\"" : "4");
	}
	strbuf_addstr(&sb, "\n]}");
	LLVMFuzzerTestOneInput((const uint8_t *)sb.buf, sb.len);
	struct trace_reader *r = open_str(sb.buf, false);
	struct trace_event ev;
	for (int i = 0; i < 400; i++) {
		bool late = i >= 200;
		char name[16];
		assert_int_equal(trace_reader_next(r, &ev), 1);
		snprintf(name, sizeof(name), "k%d", i);
		assert_string_equal(ev.name.p, name);
		assert_int_equal(ev.ph, late && i % 3 == 0 ? 'i' : 'X');
		assert_int_equal(ev.bp, late ? 0 : 'e');
		assert_string_equal(ev.cat.p, late ? "Kernel" : "kernel");
		assert_int_equal(ev.pid.is_str, late);
		assert_string_equal(ev.pid.str.p, late ? "p0" : "");
		assert_int_equal(ev.pid.num, 0);
		assert_int_equal(ev.tid.num, late ? 9 : 7);
		assert_int_equal(ev.id.is_str, i % 2);
		assert_string_equal(ev.id.str.p, i % 2 ? "12345678901234567890" : "");
		assert_int_equal(ev.ts_ns, (int64_t)i * 1000 + 500);
		assert_int_equal(!!(ev.has & TE_DEVICE), !late);
		assert_int_equal(ev.stream, 7);
		assert_string_equal(ev.arg_name.p, late ? "12" : "n");
		assert_string_equal(ev.dtype.p, late ? "" : "[0, 8]");
		assert_int_equal(!!(ev.has & TE_GROUP_SIZE), !late);
		if (!late)
			assert_int_equal(ev.group_size, 4);
	}
	assert_int_equal(trace_reader_next(r, &ev), 0);
	trace_reader_close(r);
	strbuf_release(&sb);
}

/* The differential test of the key cache (and of the window) on whole
 * traces: the 45 real ones of the shared data (unit_shared_dir()) and two ppgen trees,
 * one with every nasty option. Skipped, and said, without the real ones. */
static void test_whole_traces(void **state)
{
	(void)state;
	struct strbuf dir = STRBUF_INIT;
	for (int nasty = 0; nasty < 2; nasty++) {
		char *out = tmp_path(nasty ? "-gen-nasty" : "-gen");
		int iters[] = { 3 };
		struct gen_opts o;
		unit_gen_opts(&o, out, 2, 4, iters, 1);
		o.kpl = 3;
		o.seed = 7;
		struct strbuf err = STRBUF_INIT;
		if (nasty)
			assert_int_equal(gen_parse_nasty("all", &o.nasty, &err), 0);
		strbuf_release(&err);
		unit_gen(&o);
		strbuf_reset(&dir);
		strbuf_addf(&dir, "%s/iteration_3", out);
		assert_int_equal(replay_tree(dir.buf), 2);
		strbuf_reset(&dir);
		strbuf_addf(&dir, "rm -rf '%s'", out);
		assert_int_equal(system(dir.buf), 0);
		free(out);
	}
	char sbuf[4096];
	const char *shared = unit_shared_dir(sbuf, sizeof(sbuf));
	if (!shared) {
		print_message("# skip: the real traces: neither PP_SHARED nor PP_ROOT is set\n");
		strbuf_release(&dir);
		skip();
	}
	strbuf_reset(&dir);
	strbuf_addf(&dir, "%s/data/real", shared);
	int n = replay_tree(dir.buf);
	if (n == 0) {
		print_message("# skip: no real traces in %s\n", dir.buf);
		strbuf_release(&dir);
		skip();
	}
	strbuf_release(&dir);
	assert_int_equal(n, 45);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_us_to_ns),
		  cmocka_unit_test(test_parse_int64),
		  cmocka_unit_test(test_unescape),
		  cmocka_unit_test(test_skip_deep),
		  cmocka_unit_test(test_basic_event),
		  cmocka_unit_test(test_keys_any_order),
		  cmocka_unit_test(test_missing_args_and_null),
		  cmocka_unit_test(test_event_reset),
		  cmocka_unit_test(test_string_ids),
		  cmocka_unit_test(test_repeated_ids),
		  cmocka_unit_test(test_escapes),
		  cmocka_unit_test(test_raw_control_chars),
		  cmocka_unit_test(test_bom_and_whitespace),
		  cmocka_unit_test(test_nonfinite_and_big_ints_in_args),
		  cmocka_unit_test(test_nested_unknown_values),
		  cmocka_unit_test(test_huge_name),
		  cmocka_unit_test(test_time_forms),
		  cmocka_unit_test(test_header_before_and_after),
		  cmocka_unit_test(test_header_pg_config),
		  cmocka_unit_test(test_comm_args),
		  cmocka_unit_test(test_truncated),
		  cmocka_unit_test(test_gzip_zlib),
		  cmocka_unit_test(test_gzip_isal),
		  cmocka_unit_test(test_errors),
		  cmocka_unit_test(test_tolerated),
		  cmocka_unit_test(test_small_window_refills),
		  cmocka_unit_test(test_lent_windows),
		  cmocka_unit_test(test_fuzz_regressions),
		  cmocka_unit_test(test_simd_default),
		  cmocka_unit_test(test_key_cache_limits),
		  cmocka_unit_test(test_key_cache_whole),
		  cmocka_unit_test(test_key_cache_find),
		  cmocka_unit_test(test_key_cache_branch_memo),
		  cmocka_unit_test(test_cat_key),
		  cmocka_unit_test(test_whole_traces),
	  })
