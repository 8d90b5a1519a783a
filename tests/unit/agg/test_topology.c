/* Unit tests for pipeline/agg/topology.c: the file parser (current and old
 * formats), the tp-cp-ep-dp-pp layout, inference from process groups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agg/topology.h"
#include "util/pp.h"
#include "tests/unit/unit.h"

/* "[a, b] [c, d] ..." of every group of a kind, for exact comparisons. */
static char *groups_text(const struct topology *t, enum topo_kind k)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t g = 0; g < t->groups[k].n; g++) {
		strbuf_addf(&sb, "%s%d:[", g ? " " : "", t->groups[k].v[g].number);
		for (int i = 0; i < t->groups[k].v[g].n; i++)
			strbuf_addf(&sb, "%s%d", i ? "," : "", t->groups[k].v[g].ranks[i]);
		strbuf_addch(&sb, ']');
	}
	return strbuf_detach(&sb, NULL);
}

static void expect_groups(const struct topology *t, enum topo_kind k, const char *want)
{
	char *got = groups_text(t, k);
	assert_string_equal(got, want);
	free(got);
}

/* tp2 pp2 dp2: rank = tp + 2*(dp + 2*pp). */
#define TP_WANT "1:[0,1] 2:[2,3] 3:[4,5] 4:[6,7]"
#define PP_WANT "1:[0,4] 2:[1,5] 3:[2,6] 4:[3,7]"
#define DP_WANT "1:[0,2] 2:[1,3] 3:[4,6] 4:[5,7]"
#define MODEL_WANT "0:[0,1,4,5] 1:[2,3,6,7]"

static void test_from_sizes(void **state)
{
	(void)state;
	struct topology t;
	topo_init(&t);
	assert_int_equal(topo_from_sizes(&t, 2, 2, 2, 1, 1), 0);
	assert_int_equal(t.world, 8);
	assert_int_equal(t.source, TOPO_SRC_SIZES);
	expect_groups(&t, TOPO_TP, TP_WANT);
	expect_groups(&t, TOPO_PP, PP_WANT);
	expect_groups(&t, TOPO_DP, DP_WANT);
	expect_groups(&t, TOPO_MODEL, MODEL_WANT);
	topo_index(&t);
	assert_int_equal(t.nrank, 8);
	assert_int_equal(t.pp_of[6], 2);
	assert_int_equal(t.stage_of[6], 1);
	assert_int_equal(t.dp_of[6], 2);
	assert_int_equal(t.model_of[6], 1);
	assert_int_equal(topo_from_sizes(&t, 0, 2, 2, 1, 1), PP_EINVAL);
	/* cp and ep sit between tp and dp. */
	assert_int_equal(topo_from_sizes(&t, 2, 2, 1, 2, 1), 0);
	expect_groups(&t, TOPO_CP, "1:[0,2] 2:[1,3] 3:[4,6] 4:[5,7]");
	expect_groups(&t, TOPO_PP, PP_WANT);
	topo_release(&t);
}

/* The sections of the tp2 pp2 dp2 file, as our writer and real runs write them. */
#define TP_SECTION                         \
	"TENSOR PARALLEL (TP) GROUPS\n"    \
	"------------------------------\n" \
	"Group 1: [0, 1]\nGroup 2: [2, 3]\nGroup 3: [4, 5]\nGroup 4: [6, 7]\n"
#define PP_SECTION                         \
	"PIPELINE PARALLEL (PP) GROUPS\n"  \
	"------------------------------\n" \
	"Group 1: [0, 4]\nGroup 2: [1, 5]\nGroup 3: [2, 6]\nGroup 4: [3, 7]\n"
#define DP_SECTION                         \
	"DATA PARALLEL (DP) GROUPS\n"      \
	"------------------------------\n" \
	"Group 1: [0, 2]\nGroup 2: [1, 3]\nGroup 3: [4, 6]\nGroup 4: [5, 7]\n"
#define MODEL_SECTION                                                               \
	"FULL MODEL RANK GROUPS (by DP Rank)\n"                                     \
	"------------------------------\n"                                          \
	"Each group holds every rank of one model replica (order tp-cp-ep-dp-pp)\n" \
	"------------------------------\n"                                          \
	"Group 0: [0, 1, 4, 5]\n"                                                   \
	"Group 1: [2, 3, 6, 7]\n"

static const char new_format[] = "TP Size: 2\n"
				 "PP Size: 2\n"
				 "CP Size: 1\n"
				 "EP Size: 1\n"
				 "World Size: 8\n"
				 "\n" TP_SECTION "\n" PP_SECTION "\n" DP_SECTION "\n"
				 "EXPERT PARALLEL (EP) GROUPS\n"
				 "------------------------------\n"
				 "Group 1: [0]\nGroup 2: [1]\nGroup 3: [2]\nGroup 4: [3]\n"
				 "Group 5: [4]\nGroup 6: [5]\nGroup 7: [6]\nGroup 8: [7]\n"
				 "\n" MODEL_SECTION;

static void test_parse_new_format(void **state)
{
	(void)state;
	struct topology t;
	topo_init(&t);
	assert_int_equal(topo_parse_text(&t, new_format, strlen(new_format), "f"), 0);
	assert_string_equal(t.notes.buf, "");
	assert_int_equal(t.tp, 2);
	assert_int_equal(t.pp, 2);
	assert_int_equal(t.dp, 2);
	assert_int_equal(t.world, 8);
	expect_groups(&t, TOPO_TP, TP_WANT);
	expect_groups(&t, TOPO_PP, PP_WANT);
	expect_groups(&t, TOPO_DP, DP_WANT);
	expect_groups(&t, TOPO_MODEL, MODEL_WANT);
	assert_int_equal(t.groups[TOPO_EP].n, 8);
	topo_release(&t);
}

/* The file as real Megatron runs write it: a banner, a time stamp, the
 * global batch size, "Total groups: N" after each section, the number of
 * model replicas and a STATISTICS block, none of them a warning. %d: the
 * replicas and error ranks it states. */
static const char real_format[] =
	"================================================================\n"
	"MEGATRON PARALLEL CONFIGURATION\n"
	"================================================================\n"
	"Timestamp: 2024-02-06 23:17:12\n"
	"World Size: 8\n"
	"TP Size: 2\n"
	"PP Size: 2\n"
	"DP Size: 2\n"
	"CP Size: 1\n"
	"EP Size: 1\n"
	"Global Batch Size: 16\n"
	"\n" TP_SECTION "Total groups: 4\n"
	"\n" PP_SECTION "Total groups: 4\n"
	"\n" DP_SECTION "Total groups: 4\n"
	"\n" MODEL_SECTION "Total model replicas (DP): %d\n"
	"\n"
	"================================================================\n"
	"STATISTICS\n"
	"================================================================\n"
	"Total Ranks: 8\n"
	"Valid Ranks: %d\n"
	"Error Ranks: %d\n";

static void test_parse_real_format(void **state)
{
	struct topology t;
	char text[4096];
	(void)state;
	snprintf(text, sizeof(text), real_format, 2, 8, 0);
	topo_init(&t);
	assert_int_equal(topo_parse_text(&t, text, strlen(text), "f"), 0);
	assert_string_equal(t.notes.buf, ""); /* nothing to warn about */
	assert_int_equal(t.global_batch, 16);
	assert_int_equal(t.dp, 2);
	expect_groups(&t, TOPO_PP, PP_WANT);
	expect_groups(&t, TOPO_MODEL, MODEL_WANT);
	topo_release(&t);

	/* Counts that disagree with what the file lists are said. */
	snprintf(text, sizeof(text), real_format, 3, 7, 1);
	topo_init(&t);
	assert_int_equal(topo_parse_text(&t, text, strlen(text), "f"), 0);
	assert_string_equal(t.notes.buf, "f:43: 3 model replicas stated, 2 listed\n"
					 "f:43: 3 model replicas stated but dp is 2\n"
					 "f: the job that wrote it counted 1 error rank\n");
	topo_release(&t);

	/* A section whose count is wrong, a count that is not a number. */
	snprintf(text, sizeof(text), real_format, 2, 8, 0);
	char *p = strstr(text, "Total groups: 4\n\nPIPELINE");
	p[14] = '5';
	char *q = strstr(text, "Global Batch Size: 16");
	memcpy(q + 19, "xx", 2);
	topo_init(&t);
	assert_int_equal(topo_parse_text(&t, text, strlen(text), "f"), 0);
	assert_string_equal(t.notes.buf, "f:11: count not understood: 'Global Batch Size: xx'\n"
					 "f:19: 'Total groups: 5' but the tp section lists 4\n");
	topo_release(&t);
}

/* Old spelling of the header and section titles, CRLF line ends, no DP
 * size, no DP section, a stray line; written by hand, not by our writer. */
static const char old_format[] =
	"TP (Tensor Parallel) Size: 2\r\n"
	"PP (Pipeline Parallel) Size: 2\r\n"
	"World Size: 8\r\n"
	"\r\n"
	"UNIQUE TP GROUPS\r\n"
	"----------------\r\n"
	"Group 1: [0, 1]\r\nGroup 2: [2, 3]\r\nGroup 3: [4, 5]\r\nGroup 4: [6, 7]\r\n"
	"UNIQUE PP GROUPS\r\n"
	"----------------\r\n"
	"Group 1: [0, 4]\r\nGroup 2: [1, 5]\r\nGroup 3: [2, 6]\r\nGroup 4: [3, 7]\r\n"
	"this line means nothing\r\n"
	"Group 5: [3, x]\r\n"
	"FULL MODEL RANK GROUPS (by DP Rank)\r\n"
	"-----\r\n"
	"one replica per line\r\n"
	"-----\r\n"
	"Group 0: [0, 1, 4, 5]\r\n"
	"Group 1: [2, 3, 6, 7]\r\n";

static void test_parse_old_format(void **state)
{
	(void)state;
	struct topology t;
	topo_init(&t);
	assert_int_equal(topo_parse_text(&t, old_format, strlen(old_format), "old.txt"), 0);
	assert_int_equal(t.tp, 2);
	assert_int_equal(t.pp, 2);
	assert_int_equal(t.dp, 2);
	expect_groups(&t, TOPO_TP, TP_WANT);
	expect_groups(&t, TOPO_PP, PP_WANT);
	expect_groups(&t, TOPO_DP, DP_WANT); /* laid out from the sizes */
	expect_groups(&t, TOPO_MODEL, MODEL_WANT);
	assert_non_null(
		strstr(t.notes.buf, "old.txt:17: line not understood: 'this line means nothing'"));
	assert_non_null(strstr(t.notes.buf, "old.txt:18: malformed group: 'Group 5: [3, x]'"));
	topo_release(&t);

	topo_init(&t);
	assert_int_equal(topo_parse_text(&t, "hello\nworld\n", 12, "x"), PP_EPARSE);
	topo_release(&t);
}

static void test_find_and_load_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/topo-test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char a[256], b[256];
	snprintf(a, sizeof(a), "%s/unique_parallel_groups_20240101.txt", dir);
	snprintf(b, sizeof(b), "%s/unique_parallel_groups_20250101.txt", dir);
	FILE *f = fopen(a, "w");
	fputs("garbage\n", f);
	fclose(f);
	f = fopen(b, "w");
	fputs(new_format, f);
	fclose(f);
	const char *dirs[] = { NULL, dir };
	char *found = topo_find_file(dirs, 2);
	assert_string_equal(found, b); /* equal mtimes: the later name */
	free(found);
	/* Newest by mtime wins over the name. */
	struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, b, old, 0), 0);
	found = topo_find_file(dirs, 2);
	assert_string_equal(found, a);
	free(found);
	assert_int_equal(utimensat(AT_FDCWD, a, old, 0), 0);
	found = topo_find_file(dirs, 2);
	assert_string_equal(found, b);
	struct topology t;
	topo_init(&t);
	assert_int_equal(topo_load_file(&t, found), 0);
	assert_int_equal(t.source, TOPO_SRC_FILE);
	assert_string_equal(t.origin.buf, b);
	expect_groups(&t, TOPO_PP, PP_WANT);
	topo_release(&t);
	free(found);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

static void test_infer(void **state)
{
	(void)state;
	struct topology t;
	topo_init(&t);
	/* Repeated groups count once; a malformed list and groups of other
	 * kinds are passed over. */
	static const char *const pp[] = { "[3, 7]", "[0, 4]", "[0, 4]", "[2, 6]", "[1, 5]" };
	static const char *const dp[] = { "[4, 6]", "[0, 2]", "[1, 3]", "[5, 7]" };
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(topo_infer_add(&t, "PIPELINE_MODEL_PARALLEL_GROUP", pp[i]), 0);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(topo_infer_add(&t, "DATA_PARALLEL_GROUP", dp[i]), 0);
	assert_int_equal(topo_infer_add(&t, "TENSOR_MODEL_PARALLEL_GROUP", "[0, 1]"), 0);
	assert_int_equal(topo_infer_add(&t, "default_pg", "[0, 1, 2, 3, 4, 5, 6, 7]"), 0);
	assert_int_equal(topo_infer_add(&t, "PIPELINE_MODEL_PARALLEL_GROUP", "[0,"), 0);
	assert_int_equal(topo_infer_finish(&t), 0);
	assert_int_equal(t.source, TOPO_SRC_INFERRED);
	expect_groups(&t, TOPO_PP, PP_WANT);
	expect_groups(&t, TOPO_DP, DP_WANT);
	expect_groups(&t, TOPO_MODEL, MODEL_WANT);
	assert_int_equal(t.tp, 2);
	assert_int_equal(t.pp, 2);
	assert_int_equal(t.dp, 2);
	assert_non_null(strstr(t.notes.buf, "ranks not understood"));
	topo_release(&t);

	topo_init(&t);
	assert_int_equal(topo_infer_add(&t, "TENSOR_MODEL_PARALLEL_GROUP", "[0, 1]"), 0);
	assert_int_equal(topo_infer_finish(&t), PP_ENOTFOUND);
	topo_release(&t);
}

static void test_parse_ranks(void **state)
{
	(void)state;
	int *v;
	assert_int_equal(topo_parse_ranks("[0, 8, 16, 24]", &v), 4);
	assert_int_equal(v[3], 24);
	free(v);
	assert_int_equal(topo_parse_ranks("3 4", &v), 2);
	free(v);
	assert_int_equal(topo_parse_ranks("[]", &v), -1);
	assert_int_equal(topo_parse_ranks("[1, 2", &v), -1);
	assert_int_equal(topo_parse_ranks("[1, -2]", &v), -1);
	assert_int_equal(topo_parse_ranks("[1] x", &v), -1);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_from_sizes),
		  cmocka_unit_test(test_parse_new_format),
		  cmocka_unit_test(test_parse_real_format),
		  cmocka_unit_test(test_parse_old_format),
		  cmocka_unit_test(test_find_and_load_file),
		  cmocka_unit_test(test_infer),
		  cmocka_unit_test(test_parse_ranks),
	  })
