/* Unit tests for pipeline/safefile: planted symlinks are never followed
 * inside the output area, trusted ones only in the user's path, the umask
 * is honoured, and no temporary file is left behind. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#include "util/pp.h"
#include "util/safefile.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

struct fx {
	char root[64];
	int rootfd;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->root, sizeof(f->root), "/tmp/pp-safefile.XXXXXX");
	if (!f || !mkdtemp(f->root))
		return -1;
	f->rootfd = open(f->root, O_RDONLY | O_DIRECTORY);
	*state = f;
	return f->rootfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];
	close(f->rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	int rc = system(cmd);
	free(f);
	return rc;
}

/* Number of entries (other than . and ..) in folder `name` under fd. */
static int count_entries(int fd, const char *name)
{
	int n = 0;
	int d = openat(fd, name, O_RDONLY | O_DIRECTORY);
	if (d < 0)
		return -1;
	DIR *dir = fdopendir(d);
	struct dirent *e;
	while ((e = readdir(dir)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(dir);
	return n;
}

static char *slurp(int fd, const char *name)
{
	static char buf[256];
	int f = openat(fd, name, O_RDONLY | O_NOFOLLOW);
	if (f < 0)
		return NULL;
	ssize_t n = read(f, buf, sizeof(buf) - 1);
	close(f);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static void test_write_honours_umask(void **state)
{
	struct fx *f = *state;
	struct stat st;
	mode_t old = umask(022);
	assert_int_equal(safefile_write(f->rootfd, "a.gp", "hello\n", 6, NULL), 0);
	assert_int_equal(fstatat(f->rootfd, "a.gp", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	umask(077);
	assert_int_equal(safefile_write(f->rootfd, "b.gp", "", 0, NULL), 0);
	assert_int_equal(fstatat(f->rootfd, "b.gp", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_size, 0);
	umask(002);
	int d;
	assert_int_equal(safe_mkdirs(f->rootfd, "c/d", 0, &d, NULL), 0);
	close(d);
	assert_int_equal(fstatat(f->rootfd, "c/d", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0775);
	umask(old);
	assert_string_equal(slurp(f->rootfd, "a.gp"), "hello\n");
	assert_int_equal(count_entries(f->rootfd, "."), 3); /* no temp file left */
}

static void test_planted_symlink_is_replaced_not_followed(void **state)
{
	struct fx *f = *state;
	struct stat st;
	struct strbuf err = STRBUF_INIT;
	assert_int_equal(safefile_write(f->rootfd, "victim", "secret", 6, NULL), 0);
	assert_int_equal(mkdirat(f->rootfd, "out", 0755), 0);
	assert_int_equal(symlinkat("../victim", f->rootfd, "out/index.html"), 0);
	assert_int_equal(symlinkat("../created-elsewhere", f->rootfd, "out/x.svg"), 0);
	int out;
	assert_int_equal(safe_opendir(f->rootfd, "out", SAFE_NOFOLLOW, &out, &err), 0);
	assert_int_equal(safefile_write(out, "index.html", "new", 3, &err), 0);
	assert_int_equal(safefile_write(out, "x.svg", "<svg/>", 6, &err), 0);
	close(out);
	assert_string_equal(slurp(f->rootfd, "victim"), "secret");
	assert_int_equal(fstatat(f->rootfd, "out/index.html", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_string_equal(slurp(f->rootfd, "out/index.html"), "new");
	assert_int_equal(fstatat(f->rootfd, "created-elsewhere", &st, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(errno, ENOENT);
	strbuf_release(&err);
}

static void test_symlinked_subfolder_refused_inside_output(void **state)
{
	struct fx *f = *state;
	struct strbuf err = STRBUF_INIT;
	int d = -1;
	assert_int_equal(mkdirat(f->rootfd, "elsewhere", 0755), 0);
	assert_int_equal(mkdirat(f->rootfd, "out", 0755), 0);
	assert_int_equal(symlinkat("../elsewhere", f->rootfd, "out/rank_0"), 0);
	int out;
	assert_int_equal(safe_opendir(f->rootfd, "out", SAFE_NOFOLLOW, &out, NULL), 0);
	strbuf_reset(&err);
	assert_int_equal(safe_mkdirs(out, "rank_0/sub", SAFE_NOFOLLOW, &d, &err), PP_EIO);
	assert_int_equal(errno, ELOOP);
	assert_non_null(strstr(err.buf, "refusing to follow symlink 'rank_0'"));
	assert_int_equal(d, -1);
	close(out);
	assert_int_equal(count_entries(f->rootfd, "elsewhere"), 0);
	strbuf_release(&err);
}

static void test_trusted_symlink_followed_in_user_path(void **state)
{
	struct fx *f = *state;
	struct strbuf err = STRBUF_INIT;
	int d;
	assert_int_equal(mkdirat(f->rootfd, "real", 0755), 0);
	assert_int_equal(symlinkat("real", f->rootfd, "mine"), 0);
	/* Owned by the caller: followed, and mkdir -p continues through it. */
	assert_int_equal(safe_mkdirs(f->rootfd, "mine/charts/it_15", 0, &d, &err), 0);
	assert_int_equal(safefile_write(d, "f.csv", "1\n", 2, NULL), 0);
	close(d);
	assert_string_equal(slurp(f->rootfd, "real/charts/it_15/f.csv"), "1\n");
	/* Absolute symlink targets and '..' work too. */
	char target[128];
	snprintf(target, sizeof(target), "%s/real/charts", f->root);
	assert_int_equal(symlinkat(target, f->rootfd, "abs"), 0);
	assert_int_equal(safe_opendir(f->rootfd, "abs/../charts/./it_15/", 0, &d, &err), 0);
	close(d);
	/* SAFE_NOFOLLOW refuses even the caller's own links. */
	assert_int_equal(safe_opendir(f->rootfd, "mine", SAFE_NOFOLLOW, &d, NULL), PP_EIO);
	assert_int_equal(errno, ELOOP);
	strbuf_release(&err);
}

static void test_foreign_symlink_refused_in_user_path(void **state)
{
	struct fx *f = *state;
	struct strbuf err = STRBUF_INIT;
	int d = -1;
	if (geteuid() != 0) {
		print_message("# skip: not root (lchown to another user)\n");
		skip();
	}
	assert_int_equal(mkdirat(f->rootfd, "real", 0755), 0);
	assert_int_equal(symlinkat("real", f->rootfd, "theirs"), 0);
	assert_int_equal(fchownat(f->rootfd, "theirs", 65534, 65534, AT_SYMLINK_NOFOLLOW), 0);
	strbuf_reset(&err);
	assert_int_equal(safe_mkdirs(f->rootfd, "theirs/charts", 0, &d, &err), PP_EIO);
	assert_int_equal(errno, ELOOP);
	assert_non_null(strstr(err.buf, "owned by uid 65534"));
	assert_int_equal(count_entries(f->rootfd, "real"), 0);
	struct safefile sf;
	char path[160];
	snprintf(path, sizeof(path), "%s/theirs/x.db", f->root);
	strbuf_reset(&err);
	assert_int_equal(safefile_open_path(&sf, path, &err), PP_EIO);
	safefile_abort(&sf);
	assert_int_equal(count_entries(f->rootfd, "real"), 0);
	strbuf_release(&err);
}

static void test_symlink_loop_ends(void **state)
{
	struct fx *f = *state;
	struct strbuf err = STRBUF_INIT;
	int d = -1;
	assert_int_equal(symlinkat("l2", f->rootfd, "l1"), 0);
	assert_int_equal(symlinkat("l1", f->rootfd, "l2"), 0);
	assert_int_equal(symlinkat(".", f->rootfd, "self"), 0);
	strbuf_reset(&err);
	assert_int_equal(safe_mkdirs(f->rootfd, "l1/x", 0, &d, &err), PP_EIO);
	assert_int_equal(errno, ELOOP);
	assert_non_null(strstr(err.buf, "too many levels of symlinks"));
	/* A link to "." is fine: it is not a loop by itself. */
	assert_int_equal(safe_opendir(f->rootfd, "self/self/self", 0, &d, NULL), 0);
	close(d);
	strbuf_release(&err);
}

static void test_not_a_folder_and_bad_names(void **state)
{
	struct fx *f = *state;
	struct strbuf err = STRBUF_INIT;
	int d = -1;
	struct safefile sf;
	assert_int_equal(safefile_write(f->rootfd, "file", "x", 1, NULL), 0);
	strbuf_reset(&err);
	assert_int_equal(safe_mkdirs(f->rootfd, "file/sub", 0, &d, &err), PP_EIO);
	assert_int_equal(errno, ENOTDIR);
	assert_string_equal(err.buf, "'file' is not a folder");
	strbuf_reset(&err);
	assert_int_equal(safe_opendir(f->rootfd, "missing", 0, &d, &err), PP_EIO);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(safe_opendir(f->rootfd, "", 0, &d, NULL), PP_EIO);
	const char *bad[] = { "", ".", "..", "a/b", "/x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(safefile_open(&sf, f->rootfd, bad[i], NULL), PP_EINVAL);
		safefile_abort(&sf);
	}
	/* A folder at the final name: the rename fails, nothing is left over. */
	assert_int_equal(mkdirat(f->rootfd, "adir", 0755), 0);
	strbuf_reset(&err);
	assert_int_equal(safefile_write(f->rootfd, "adir", "x", 1, &err), PP_EIO);
	assert_non_null(strstr(err.buf, "cannot rename to 'adir'"));
	assert_int_equal(count_entries(f->rootfd, "."), 2);
	/* Messages name the path as given up to the component that failed, not
	 * the component alone ("cannot create folder 'nope'" for /proc/nope). */
	assert_int_equal(mkdirat(f->rootfd, "d", 0755), 0);
	assert_int_equal(safe_mkdirs(f->rootfd, "d/x", 0, &d, NULL), 0);
	assert_int_equal(safefile_write(d, "f", "x", 1, NULL), 0);
	close(d);
	strbuf_reset(&err);
	assert_int_equal(safe_mkdirs(f->rootfd, "./d//x/f/sub", 0, &d, &err), PP_EIO);
	assert_string_equal(err.buf, "'./d//x/f' is not a folder");
	strbuf_reset(&err);
	assert_int_equal(safe_opendir(f->rootfd, "d/missing/x", 0, &d, &err), PP_EIO);
	assert_string_equal(err.buf, "cannot open folder 'd/missing': No such file or directory");
	strbuf_release(&err);
}

static void test_abort_keeps_old_content(void **state)
{
	struct fx *f = *state;
	struct safefile sf;
	assert_int_equal(safefile_write(f->rootfd, "r.csv", "old", 3, NULL), 0);
	assert_int_equal(safefile_open(&sf, f->rootfd, "r.csv", NULL), 0);
	fprintf(sf.fp, "half-written");
	/* Before the commit the final name still has the old content. */
	assert_string_equal(slurp(f->rootfd, "r.csv"), "old");
	assert_int_equal(count_entries(f->rootfd, "."), 2);
	safefile_abort(&sf);
	safefile_abort(&sf); /* twice is harmless */
	assert_string_equal(slurp(f->rootfd, "r.csv"), "old");
	assert_int_equal(count_entries(f->rootfd, "."), 1);
	/* Open by path, relative to the working folder. */
	char cwd[4096];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(fchdir(f->rootfd), 0);
	assert_int_equal(safefile_open_path(&sf, "r.csv", NULL), 0);
	fputs("new", sf.fp);
	assert_int_equal(safefile_commit(&sf, NULL), 0);
	assert_int_equal(chdir(cwd), 0);
	assert_string_equal(slurp(f->rootfd, "r.csv"), "new");
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test_setup_teardown(test_write_honours_umask, setup, teardown),
		  cmocka_unit_test_setup_teardown(test_planted_symlink_is_replaced_not_followed,
						  setup, teardown),
		  cmocka_unit_test_setup_teardown(test_symlinked_subfolder_refused_inside_output,
						  setup, teardown),
		  cmocka_unit_test_setup_teardown(test_trusted_symlink_followed_in_user_path, setup,
						  teardown),
		  cmocka_unit_test_setup_teardown(test_foreign_symlink_refused_in_user_path, setup,
						  teardown),
		  cmocka_unit_test_setup_teardown(test_symlink_loop_ends, setup, teardown),
		  cmocka_unit_test_setup_teardown(test_not_a_folder_and_bad_names, setup, teardown),
		  cmocka_unit_test_setup_teardown(test_abort_keeps_old_content, setup, teardown),
	  })
