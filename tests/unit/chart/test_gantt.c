/* Unit tests for pipeline/chart/gantt.c: the dashed rules between rows
 * and the choice of output formats, as ppagg's model-replica charts use
 * them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "chart/gantt.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

/* Rules between rows and the choice of output formats. */
static void test_gantt_rules_and_formats(void **state)
{
	(void)state;
	char dir[] = "/tmp/gantt-test.XXXXXX", path[300], buf[8192];
	struct strbuf err = STRBUF_INIT;
	assert_non_null(mkdtemp(dir));
	struct gantt *g = gantt_new();
	int c = gantt_add_class(g, "fwd_computation", "#7EA6E6");
	for (int r = 0; r < 4; r++) {
		int row = gantt_add_row(g, "rank");
		struct gantt_box b = { row, c, 1, 2, 0.1, 0.8, NULL, "hover" };
		assert_int_equal(gantt_add_box(g, &b), 0);
	}
	gantt_add_rule(g, 2);
	gantt_add_rule(g, 9); /* outside: ignored */
	gantt_set_formats(g, false, true);
	snprintf(path, sizeof(path), "%s/t", dir);
	assert_int_equal(gantt_write(g, path, false, &err), 0);
	gantt_free(g);
	snprintf(path, sizeof(path), "%s/t.gp", dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "set arrow from graph 0, first 1.5 to graph 1, first 1.5"));
	assert_null(strstr(buf, "first 8.5"));
	assert_null(strstr(buf, "pngcairo"));
	assert_non_null(strstr(buf, "set output 't.svg'"));
	unlink(path);
	rmdir(dir);
	strbuf_release(&err);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_gantt_rules_and_formats),
	  })
