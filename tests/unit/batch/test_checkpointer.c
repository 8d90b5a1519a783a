/* checkpointer.h: checkpoints asked for run on the thread's own connection
 * (the WAL's pages reach the database file), also when asked just before
 * the stop, and a checkpointer that cannot open its database says why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "batch/checkpointer.h"
#include "storage/db.h"
#include "util/pp.h"

static off_t file_size(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

static void test_checkpoint_reaches_the_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/pptrace-ckpt-XXXXXX", path[64], err[512];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.db", dir);
	/* A worker's connection: its commits stay in the WAL. */
	struct db *w = db_open(path, DB_NO_CHECKPOINT, 0, err, sizeof(err));
	assert_non_null(w);
	off_t before = file_size(path);
	char tp[32];
	for (int i = 0; i < 300; i++) {
		struct db_trace t = { .path = tp, .status = DB_STATUS_FAILED, .error = "x" };
		snprintf(tp, sizeof(tp), "/trace/%d.json", i);
		assert_int_equal(db_trace_store_empty(w, &t), 0);
	}
	assert_int_equal(file_size(path), before);
	struct checkpointer *c = checkpointer_start(path, 0, err, sizeof(err));
	assert_non_null(c);
	checkpointer_request(c);
	checkpointer_stop(c);
	assert_true(file_size(path) > before);
	db_close(w);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_no_database_no_checkpointer(void **state)
{
	(void)state;
	char err[512] = "";
	assert_null(checkpointer_start("/nonexistent/pptrace.db", 0, err, sizeof(err)));
	assert_true(strlen(err) > 0);
	checkpointer_stop(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checkpoint_reaches_the_file),
		cmocka_unit_test(test_no_database_no_checkpointer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
