/* checkpointer.h: checkpoints asked for run on the thread's own connection
 * (the WAL's pages reach the database file), also when asked just before
 * the stop; a checkpointer that cannot open its database says why; a
 * failed checkpoint is handed to the caller, not printed. */
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "batch/checkpointer.h"
#include "storage/db.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

static off_t file_size(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* A database in a new folder dir ("/tmp/pptrace-ckpt-XXXXXX", filled in)
 * at path, with 300 rows committed by a worker's connection (returned), so
 * that they stay in the WAL until someone checkpoints; *created: the
 * file's size before the rows. */
static struct db *worker_with_wal(char *dir, char *path, size_t pathlen, off_t *created)
{
	char err[512], tp[32];
	assert_non_null(mkdtemp(dir));
	snprintf(path, pathlen, "%s/t.db", dir);
	struct db *w = unit_db_open(path, DB_NO_CHECKPOINT, err, sizeof(err));
	assert_non_null(w);
	*created = file_size(path);
	for (int i = 0; i < 300; i++) {
		struct db_trace t = { .path = tp, .status = DB_STATUS_FAILED, .error = "x" };
		snprintf(tp, sizeof(tp), "/trace/%d.json", i);
		assert_int_equal(db_trace_store_empty(w, &t), 0);
	}
	return w;
}

static void remove_dir(const char *dir)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_checkpoint_reaches_the_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/pptrace-ckpt-XXXXXX", path[64];
	struct strbuf err = STRBUF_INIT, msg = STRBUF_INIT;
	off_t before;
	struct db *w = worker_with_wal(dir, path, sizeof(path), &before);
	/* A worker's connection: its commits stay in the WAL. */
	assert_int_equal(file_size(path), before);
	struct checkpointer *c = checkpointer_start(path, 0, &err);
	assert_non_null(c);
	checkpointer_request(c);
	assert_false(checkpointer_stop(c, &msg));
	assert_string_equal(msg.buf, "");
	assert_true(file_size(path) > before);
	db_close(w);
	remove_dir(dir);
}

static void test_no_database_no_checkpointer(void **state)
{
	(void)state;
	struct strbuf err = STRBUF_INIT;
	assert_null(checkpointer_start("/nonexistent/pptrace.db", 0, &err));
	assert_true(err.len > 0);
	assert_false(checkpointer_stop(NULL, &err));
	strbuf_release(&err);
}

/* A checkpoint that fails (here: the database file may not grow, by
 * RLIMIT_FSIZE) is handed to the caller, once, and not printed by the
 * thread, whose line would tear the caller's progress bar. */
static void test_failure_is_handed_over(void **state)
{
	(void)state;
	char dir[] = "/tmp/pptrace-ckpt-XXXXXX", path[64], out[96];
	struct strbuf err = STRBUF_INIT, msg = STRBUF_INIT;
	off_t created;
	struct db *w = worker_with_wal(dir, path, sizeof(path), &created);
	snprintf(out, sizeof(out), "%s/stderr", dir);
	struct checkpointer *c = checkpointer_start(path, 0, &err);
	assert_non_null(c);
	struct rlimit old, small = { (rlim_t)created, RLIM_INFINITY };
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small.rlim_max = old.rlim_max;
	/* The write fails with EFBIG instead of ending the process. */
	void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_true(old_xfsz != SIG_ERR);
	int saved = dup(2);
	assert_non_null(freopen(out, "w", stderr));
	/* Nothing may fail while stderr is the file and the limit is on: a
	 * failure's message would go to the file, and the limit and the
	 * ignored signal to the tests that follow. */
	int limited = setrlimit(RLIMIT_FSIZE, &small);
	checkpointer_request(c);
	bool failed = checkpointer_stop(c, &msg);
	int unlimited = setrlimit(RLIMIT_FSIZE, &old);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	signal(SIGXFSZ, old_xfsz);
	assert_int_equal(limited, 0);
	assert_int_equal(unlimited, 0);
	assert_true(failed);
	assert_non_null(strstr(msg.buf, "cannot checkpoint"));
	strbuf_release(&msg);
	assert_int_equal(file_size(out), 0);
	db_close(w);
	remove_dir(dir);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test(test_checkpoint_reaches_the_file),
		  cmocka_unit_test(test_no_database_no_checkpointer),
		  cmocka_unit_test(test_failure_is_handed_over),
	  })
