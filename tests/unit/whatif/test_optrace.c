/* The op-trace reader: exact float32 parsing, the ns conversion, the CSV
 * (plain and gzip) with its error messages, the meta yaml and the schema's
 * optype order. Files are written to a fresh temporary folder. */
#include <math.h>
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

#include "util/pp.h"
#include "whatif/wi_optrace.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/pp-optrace-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *write_file(const char *name, const char *text)
{
	static char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static uint32_t bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

/* Every float32 printed with 9 significant digits, and random decimal
 * strings, parse to the bits strtof gives. */
static void test_parse_f32(void **state)
{
	(void)state;
	uint32_t x = 12345;
	char buf[64];
	for (int i = 0; i < 300000; i++) {
		x = x * 1664525u + 1013904223u;
		uint32_t u = x & 0x7fffffffu;
		float f;
		memcpy(&f, &u, 4);
		if (!isfinite(f))
			continue;
		int n = snprintf(buf, sizeof(buf), i % 2 ? "%.9g" : "%.8g", (double)f);
		float got, want = strtof(buf, NULL);
		assert_int_equal(wi_optrace_parse_f32(buf, (size_t)n, &got), 0);
		if (bits(got) != bits(want))
			fail_msg("'%s': %a, strtof %a", buf, (double)got, (double)want);
		/* Short decimals like the samples' times. */
		n = snprintf(buf, sizeof(buf), "%u.%0*u", x % 64, (int)(x % 9) + 1,
			     (x >> 7) % 1000000000u);
		assert_int_equal(wi_optrace_parse_f32(buf, (size_t)n, &got), 0);
		want = strtof(buf, NULL);
		if (bits(got) != bits(want))
			fail_msg("'%s': %a, strtof %a", buf, (double)got, (double)want);
	}
	/* Just above the midpoint between 1 and the next float: the double
	 * nearest to it is the midpoint itself, which would round down. */
	float f;
	const char *mid = "1.000000059604644776";
	assert_int_equal(wi_optrace_parse_f32(mid, strlen(mid), &f), 0);
	assert_true(f == nextafterf(1.0f, 2.0f));
	/* Exact midpoints tie to even. */
	assert_int_equal(wi_optrace_parse_f32("16777217", 8, &f), 0);
	assert_true(f == 16777216.0f);
	assert_int_equal(wi_optrace_parse_f32("16777219", 8, &f), 0);
	assert_true(f == 16777220.0f);
	assert_int_equal(wi_optrace_parse_f32("-2.5e-3", 7, &f), 0);
	assert_true(f == -2.5e-3f);
	assert_int_equal(wi_optrace_parse_f32("0", 1, &f), 0);
	assert_true(f == 0);
	assert_int_equal(wi_optrace_parse_f32("1e", 2, &f), PP_EPARSE);
	assert_int_equal(wi_optrace_parse_f32("nan", 3, &f), PP_EPARSE);
	assert_int_equal(wi_optrace_parse_f32("", 0, &f), PP_EPARSE);
	assert_int_equal(wi_optrace_parse_f32("1.2.3", 5, &f), PP_EPARSE);
	assert_int_equal(wi_optrace_parse_f32("1e99", 4, &f), PP_EPARSE);
}

/* Seconds to ns: the float's exact value, rounded. */
static void test_f32_ns(void **state)
{
	(void)state;
	/* 2.6883304f is exactly 2.688330411911010742187500 s. */
	assert_int_equal(wi_optrace_f32_ns(2.6883304f), 2688330412);
	assert_int_equal(wi_optrace_f32_ns(0.0f), 0);
	assert_int_equal(wi_optrace_f32_ns(-1.5f), -1500000000);
	/* 2^-10 s = 976562.5 ns exactly: halves go away from zero. */
	assert_int_equal(wi_optrace_f32_ns(0x1p-10f), 976563);
	assert_int_equal(wi_optrace_f32_ns(46.97889f), 46978889465);
}

#define HDR "dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc\n"

static void expect_csv_error(const char *text, const char *part)
{
	struct wi_table t;
	struct strbuf err = STRBUF_INIT;
	wi_table_init(&t);
	const char *p = write_file("bad.csv", text);
	strbuf_reset(&err);
	int rc = wi_optrace_read(p, &t, &err);
	if (rc != PP_EPARSE || !strstr(err.buf, part))
		print_message("got %d '%s', want '%s'\n", rc, err.buf, part);
	assert_int_equal(rc, PP_EPARSE);
	assert_non_null(strstr(err.buf, part));
	assert_non_null(strstr(err.buf, "bad.csv:"));
	wi_table_release(&t);
	strbuf_release(&err);
}

static void test_csv(void **state)
{
	(void)state;
	/* Columns in another order, an extra column, CRLF, quotes. */
	const char *text =
		"step,rank,dp_rank,stage,optype,start_ts,duration,seq_id,mc,mb_id,gmc,extra\r\n"
		"16,4,1,0,forward-compute,0.5,0.25,3,0,3,0,x\r\n"
		"16,4,1,0,\"gc\",1.25,0,0,-1,0,-1,y\r\n";
	struct wi_table t;
	struct strbuf err = STRBUF_INIT;
	wi_table_init(&t);
	strbuf_reset(&err);
	assert_int_equal(wi_optrace_read(write_file("ok.csv", text), &t, &err), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.ops[0].step, 16);
	assert_int_equal(t.ops[0].rank, 4);
	assert_int_equal(t.ops[0].dp_rank, 1);
	assert_int_equal(t.ops[0].optype, OP_FWD_COMPUTE);
	assert_int_equal(t.ops[0].start_ns, 500000000);
	assert_int_equal(t.ops[0].end_ns, 750000000);
	assert_int_equal(t.ops[0].seq_id, 3);
	assert_int_equal(t.ops[0].mb_id, 3);
	assert_int_equal(t.ops[1].optype, OP_GC);
	assert_int_equal(t.ops[1].mc, -1);
	assert_int_equal(t.line[1], 3);
	wi_table_release(&t);

	/* The same through gzip. */
	char gzpath[512];
	snprintf(gzpath, sizeof(gzpath), "%s/ok.csv.gz", tmpdir);
	gzFile gz = gzopen(gzpath, "wb");
	assert_non_null(gz);
	gzputs(gz, text);
	gzclose(gz);
	wi_table_init(&t);
	strbuf_reset(&err);
	assert_int_equal(wi_optrace_read(gzpath, &t, &err), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.ops[1].start_ns, 1250000000);
	wi_table_release(&t);

	/* Two gzip members one after the other (cat a.gz b.gz) are one file;
	 * the header is in the first, the rows in the second. */
	const char *nl = strchr(text, '\n');
	gz = gzopen(gzpath, "wb");
	gzwrite(gz, text, (unsigned)(nl + 1 - text));
	gzclose(gz);
	gz = gzopen(gzpath, "ab");
	gzputs(gz, nl + 1);
	gzclose(gz);
	wi_table_init(&t);
	strbuf_reset(&err);
	assert_int_equal(wi_optrace_read(gzpath, &t, &err), 0);
	assert_int_equal(t.n, 2);
	wi_table_release(&t);

	/* A gzip file cut short, and one with corrupt data: the file is named
	 * and so is what is wrong. */
	FILE *f = fopen(gzpath, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long size = ftell(f);
	fclose(f);
	assert_int_equal(truncate(gzpath, size - 12), 0);
	wi_table_init(&t);
	strbuf_reset(&err);
	assert_int_equal(wi_optrace_read(gzpath, &t, &err), PP_EIO);
	assert_non_null(
		strstr(err.buf, "ok.csv.gz': the gzip data ends before its last member does"));
	wi_table_release(&t);
	f = fopen(gzpath, "r+b");
	assert_non_null(f);
	fseek(f, 12, SEEK_SET);
	fputs("garbage!", f);
	fclose(f);
	wi_table_init(&t);
	strbuf_reset(&err);
	assert_int_equal(wi_optrace_read(gzpath, &t, &err), PP_EIO);
	assert_non_null(strstr(err.buf, "cannot read '"));
	wi_table_release(&t);

	expect_csv_error("dp_rank,stage\n", "lacks column 'rank'");
	expect_csv_error(HDR "0,0,0,16,forward-compute,abc,0.1,0,0,0,0\n",
			 ":2: column 'start_ts': 'abc' is not a decimal number");
	expect_csv_error(HDR "0,0,0,16,forward-compute,0.1,0.1,0,0,0,0\n"
			     "0,0,0,16,forward-sned,0.1,0.1,0,0,0,0\n",
			 ":3: column 'optype': unknown op type 'forward-sned'");
	expect_csv_error(HDR "0,0,0,16,forward-send-backward-recv,0.1,0.1,0,-1,-1,-1\n",
			 "combined p2p type 'forward-send-backward-recv' is not supported");
	expect_csv_error(HDR "0,0,0,16,gc,0.1,0.1,0,-1,0\n",
			 ":2: 10 fields where the header has 11");
	expect_csv_error(HDR "0,99999,0,16,gc,0.1,0.1,0,-1,0,-1\n",
			 ":2: column 'stage': 99999 is out of range");
	expect_csv_error(HDR "0,0,0,1x,gc,0.1,0.1,0,-1,0,-1\n",
			 "column 'step': '1x' is not an integer");
	expect_csv_error(HDR HDR, ":2: column 'dp_rank': 'dp_rank' is not an integer");

	wi_table_init(&t);
	char missing[600];
	snprintf(missing, sizeof(missing), "%s/none.csv", tmpdir);
	strbuf_reset(&err);
	assert_int_equal(wi_optrace_read(missing, &t, &err), PP_EIO);
	assert_non_null(strstr(err.buf, "cannot open"));
	wi_table_release(&t);
	strbuf_release(&err);
}

static void test_meta(void **state)
{
	(void)state;
	struct wi_meta m;
	struct strbuf err = STRBUF_INIT;
	assert_int_equal(
		wi_optrace_read_meta(
			write_file("m.yaml",
				   "trial_name: AR\nrun_id: 0\ndp_size: 4\ndsp_size: 1\n"
				   "pp_size: 4\ntp_size: 4\nvpp_size: 1\nworld_size: 64\n"),
			&m, &err),
		0);
	assert_string_equal(m.trial_name, "AR");
	assert_int_equal(m.dp_size, 4);
	assert_int_equal(m.world_size, 64);
	strbuf_reset(&err);
	assert_int_equal(wi_optrace_read_meta(
				 write_file("m.yaml", "trial_name: X\ndp_size: 2\nworld_size: 3\n"),
				 &m, &err),
			 PP_EPARSE);
	assert_non_null(strstr(err.buf, "world_size is 3 but dp_size*pp_size*tp_size*dsp_size"));
	strbuf_reset(&err);
	assert_int_equal(
		wi_optrace_read_meta(write_file("m.yaml", "trial_name: X\n# c\n\ndp_size: 2.0\n"),
				     &m, &err),
		PP_EPARSE);
	assert_non_null(strstr(err.buf, "m.yaml:4: dp_size: '2.0' is not an integer"));
	strbuf_reset(&err);
	assert_int_equal(
		wi_optrace_read_meta(write_file("m.yaml", "trial_name: X\npp_size: 0\n"), &m, &err),
		PP_EPARSE);
	assert_non_null(strstr(err.buf, "pp_size is 0"));
	strbuf_reset(&err);
	assert_int_equal(wi_optrace_read_meta(write_file("m.yaml", "dp_size: 1\n"), &m, &err),
			 PP_EPARSE);
	assert_non_null(strstr(err.buf, "no trial_name"));
	strbuf_release(&err);
}

static void test_schema(void **state)
{
	(void)state;
	struct wi_table t;
	struct strbuf err = STRBUF_INIT;
	wi_table_init(&t);
	/* Default: alphabetical. */
	assert_true(t.order[OP_BWD_COMPUTE] < t.order[OP_FWD_COMPUTE]);
	assert_true(t.order[OP_GC] < t.order[OP_GRADS_RS]);
	assert_int_equal(
		wi_optrace_read_schema(
			write_file(
				"s.json",
				"{\"categories\": {\"optype\": [\"gc\", \"forward-compute\", \"first-op\"]}}"),
			&t, &err),
		0);
	assert_int_equal(t.order[OP_GC], 0);
	assert_int_equal(t.order[OP_FWD_COMPUTE], 1);
	assert_int_equal(t.order[OP_BWD_COMPUTE], 2); /* then the rest, alphabetically */
	/* A schema without the list; malformed JSON: line and byte; a list
	 * item that is not a name. */
	static const struct {
		const char *json, *msg;
	} bad[] = {
		{ "{\"dtypes\": {}}", "s.json: no \"categories\": {\"optype\": [...]} list" },
		{ "{\"categories\":\n {\"optype\": [\"gc\",]}}", "s.json:2: byte" },
		{ "{\"categories\":\n {\"optype\": [\"gc\", 3]}}",
		  "s.json:2: the optype list holds 3, not an op type name" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *p = write_file("s.json", bad[i].json);
		strbuf_reset(&err);
		assert_int_equal(wi_optrace_read_schema(p, &t, &err), PP_EPARSE);
		assert_non_null(strstr(err.buf, bad[i].msg));
	}
	wi_table_release(&t);
	strbuf_release(&err);
}

UNIT_MAIN(setup, teardown,
	  {
		  cmocka_unit_test(test_parse_f32),
		  cmocka_unit_test(test_f32_ns),
		  cmocka_unit_test(test_csv),
		  cmocka_unit_test(test_meta),
		  cmocka_unit_test(test_schema),
	  })
