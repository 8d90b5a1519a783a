/* safefile.c — see safefile.h for the rules.
 *
 * Design: a path is never handed to open() whole. walk() starts from "/" or
 * from atfd and opens one component at a time with O_NOFOLLOW. When a
 * component is a symlink, the link itself is opened with O_PATH|O_NOFOLLOW,
 * its owner checked on that fd, and its text read from that same fd
 * (readlinkat(fd, "")), so the link that was checked is the link that is
 * followed. Its target is then walked recursively from the link's folder,
 * at most MAX_LINKS links in all (the kernel's limit), so loops end in
 * ELOOP instead of recursion without end.
 */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pp.h"
#include "strbuf.h"

enum { MAX_LINKS = 40 };

static int fail(int err_no, struct strbuf *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(int err_no, struct strbuf *err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		pp_verr(err, 0, fmt, ap);
		va_end(ap);
	}
	errno = err_no;
	return err_no == EINVAL ? PP_EINVAL : PP_EIO;
}

static int open_dir_at(int atfd, const char *name)
{
	return openat(atfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Opens the start of a walk: "/" for an absolute path, else atfd itself. */
static int open_start(int atfd, const char *path)
{
	if (path[0] == '/')
		return open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return openat(atfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static int walk(int atfd, const char *path, unsigned flags, bool create, int *links, int *out,
		struct strbuf *err);

/* comp in cur did not open as a folder (ELOOP/ENOTDIR): follow it if it is
 * a symlink we may follow. On success *out is the target folder. Messages
 * name the path as given up to comp, its first shown characters. */
static int follow_link(int cur, const char *comp, const char *path, int shown, unsigned flags,
		       bool create, int *links, int *out, struct strbuf *err)
{
	struct stat st;
	char target[PATH_MAX];
	ssize_t n;
	int rc;
	int lfd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0)
		return fail(errno, err, "cannot open '%.*s': %s", shown, path, strerror(errno));
	if (fstat(lfd, &st) < 0) {
		rc = fail(errno, err, "cannot stat '%.*s': %s", shown, path, strerror(errno));
		goto out_close;
	}
	if (!S_ISLNK(st.st_mode)) {
		rc = fail(ENOTDIR, err, "'%.*s' is not a folder", shown, path);
		goto out_close;
	}
	if ((flags & SAFE_NOFOLLOW) || (st.st_uid != geteuid() && st.st_uid != 0)) {
		rc = fail(ELOOP, err, "refusing to follow symlink '%.*s' (owned by uid %u)", shown,
			  path, (unsigned)st.st_uid);
		goto out_close;
	}
	if (++*links > MAX_LINKS) {
		rc = fail(ELOOP, err, "too many levels of symlinks at '%.*s'", shown, path);
		goto out_close;
	}
	n = readlinkat(lfd, "", target, sizeof(target) - 1);
	if (n < 0) {
		rc = fail(errno, err, "cannot read symlink '%.*s': %s", shown, path,
			  strerror(errno));
		goto out_close;
	}
	target[n] = '\0';
	rc = walk(cur, target, flags, create, links, out, err);
out_close:
	close(lfd);
	return rc;
}

static int walk(int atfd, const char *path, unsigned flags, bool create, int *links, int *out,
		struct strbuf *err)
{
	int rc = 0;
	if (!path[0])
		return fail(ENOENT, err, "empty path");
	char *copy = xstrdup(path);
	int cur = open_start(atfd, path);
	if (cur < 0) {
		rc = fail(errno, err, "cannot open '%s': %s", path, strerror(errno));
		goto out_free;
	}
	char *p = copy;
	while (*p) {
		char *slash = strchr(p, '/');
		char *next = slash ? slash + 1 : p + strlen(p);
		if (slash)
			*slash = '\0';
		if (!*p || !strcmp(p, ".")) {
			p = next;
			continue;
		}
		/* Messages name the path as given up to this component. */
		int shown = (int)(p - copy + strlen(p));
		int fd = open_dir_at(cur, p);
		if (fd < 0 && errno == ENOENT && create) {
			if (mkdirat(cur, p, 0777) < 0 && errno != EEXIST) {
				rc = fail(errno, err, "cannot create folder '%.*s': %s", shown,
					  path, strerror(errno));
				goto out_close;
			}
			fd = open_dir_at(cur, p);
		}
		if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
			rc = follow_link(cur, p, path, shown, flags, create, links, &fd, err);
		} else if (fd < 0) {
			rc = fail(errno, err, "cannot open folder '%.*s': %s", shown, path,
				  strerror(errno));
		}
		if (rc)
			goto out_close;
		close(cur);
		cur = fd;
		p = next;
	}
	*out = cur;
	cur = -1;
out_close:
	if (cur >= 0)
		close(cur);
out_free:
	free(copy);
	return rc;
}

int safe_opendir(int atfd, const char *path, unsigned flags, int *dirfd, struct strbuf *err)
{
	int links = 0;
	return walk(atfd, path, flags, false, &links, dirfd, err);
}

int safe_mkdirs(int atfd, const char *path, unsigned flags, int *dirfd, struct strbuf *err)
{
	int links = 0;
	return walk(atfd, path, flags, true, &links, dirfd, err);
}

/* The number of a temporary name: random once per process, then the next
 * one on each call (O_EXCL refuses a name taken; the caller tries the
 * next), one getrandom() per process instead of one per file. */
static unsigned long long tmp_number(void)
{
	static unsigned long long base, next;
	if (!base) {
		if (getrandom(&base, sizeof(base), 0) != (ssize_t)sizeof(base))
			base = (unsigned long long)pp_now_ns() ^
			       ((unsigned long long)getpid() << 32);
		base |= 1;
	}
	return base + __atomic_fetch_add(&next, 0x9e3779b97f4a7c15ULL, __ATOMIC_RELAXED);
}

static bool valid_name(const char *name)
{
	return name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

static void release(struct safefile *sf)
{
	if (sf->dirfd >= 0)
		close(sf->dirfd);
	free(sf->name);
	free(sf->buf);
	sf->name = NULL;
	sf->buf = NULL;
	sf->fp = NULL;
	sf->dirfd = -1;
	sf->tmpname[0] = '\0';
}

int safefile_open(struct safefile *sf, int dirfd, const char *name, struct strbuf *err)
{
	int fd = -1;
	memset(sf, 0, sizeof(*sf));
	sf->dirfd = -1;
	if (!valid_name(name))
		return fail(EINVAL, err, "invalid file name '%s'", name);
	sf->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (sf->dirfd < 0)
		return fail(errno, err, "bad folder for '%s': %s", name, strerror(errno));
	sf->name = xstrdup(name);
	for (int tries = 0; tries < 100 && fd < 0; tries++) {
		snprintf(sf->tmpname, sizeof(sf->tmpname), ".pp-%016llx.tmp", tmp_number());
		fd = openat(sf->dirfd, sf->tmpname,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int e = errno;
		sf->tmpname[0] = '\0';
		release(sf);
		return fail(e, err, "cannot create a file for '%s': %s", name, strerror(e));
	}
	sf->fp = fdopen(fd, "w");
	if (!sf->fp) {
		int e = errno;
		close(fd);
		safefile_abort(sf);
		return fail(e, err, "cannot open '%s': %s", name, strerror(e));
	}
	/* A buffer of ours: stdio would fstat() the file for its block size
	 * and write 4 KiB at a time. */
	sf->buf = xmalloc(SAFEFILE_BUF);
	setvbuf(sf->fp, sf->buf, _IOFBF, SAFEFILE_BUF);
	return 0;
}

int safefile_open_path(struct safefile *sf, const char *path, struct strbuf *err)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	char *dir;
	int dfd, rc;
	memset(sf, 0, sizeof(*sf));
	sf->dirfd = -1;
	if (!slash)
		dir = xstrdup(".");
	else if (slash == path)
		dir = xstrdup("/");
	else
		dir = xstrndup(path, (size_t)(slash - path));
	rc = safe_opendir(AT_FDCWD, dir, 0, &dfd, err);
	free(dir);
	if (rc)
		return rc;
	rc = safefile_open(sf, dfd, name, err);
	close(dfd);
	return rc;
}

int safefile_commit(struct safefile *sf, struct strbuf *err)
{
	int rc = 0;
	if (!sf->fp)
		return fail(EBADF, err, "file is not open");
	bool bad = ferror(sf->fp) != 0;
	int e = bad ? EIO : 0;
	if (fflush(sf->fp) != 0 && !e)
		e = errno;
	if (fclose(sf->fp) != 0 && !e)
		e = errno;
	sf->fp = NULL;
	if (e) {
		rc = fail(e, err, "cannot write '%s': %s", sf->name, strerror(e));
		goto out_unlink;
	}
	if (renameat(sf->dirfd, sf->tmpname, sf->dirfd, sf->name) < 0) {
		e = errno;
		rc = fail(e, err, "cannot rename to '%s': %s", sf->name, strerror(e));
		goto out_unlink;
	}
	release(sf);
	return 0;
out_unlink:
	unlinkat(sf->dirfd, sf->tmpname, 0);
	release(sf);
	errno = e;
	return rc;
}

void safefile_abort(struct safefile *sf)
{
	if (sf->fp)
		fclose(sf->fp);
	sf->fp = NULL;
	if (sf->dirfd >= 0 && sf->tmpname[0])
		unlinkat(sf->dirfd, sf->tmpname, 0);
	if (sf->dirfd >= 0 || sf->name)
		release(sf);
}

int safefile_write(int dirfd, const char *name, const void *data, size_t len, struct strbuf *err)
{
	struct safefile sf;
	int rc = safefile_open(&sf, dirfd, name, err);
	if (rc)
		return rc;
	if (len && fwrite(data, 1, len, sf.fp) != len) {
		int e = errno ? errno : EIO;
		safefile_abort(&sf);
		return fail(e, err, "cannot write '%s': %s", name, strerror(e));
	}
	return safefile_commit(&sf, err);
}

int safe_mkdir_p(const char *path, struct strbuf *err)
{
	int fd;
	int rc = safe_mkdirs(AT_FDCWD, path, 0, &fd, err);
	if (!rc)
		close(fd);
	return rc;
}
