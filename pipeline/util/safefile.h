/* safefile.h — create output directories and files without following
 * symlinks that someone else planted there, honouring the user's umask.
 *
 * pptrace may run as root (Slurm epilog) and write into folders that a job's
 * user controls. Two rules keep it from being tricked into writing elsewhere:
 *  - inside the output area (every name we create: files and the folders
 *    below the output folder) no symlink is ever followed;
 *  - in the path the user names (e.g. --out /scratch/run42/charts) a symlink
 *    is followed only when it is owned by the caller or by root (the
 *    kernel's fs.protected_symlinks rule, applied everywhere).
 * Files are written to a temporary name in the same folder, created with
 * O_CREAT|O_EXCL|O_NOFOLLOW (mkstemp's guarantee, relative to a directory
 * fd), and renamed over the final name when complete: a reader never sees a
 * half-written file, and a symlink at the final name is replaced, not
 * followed. Permissions are 0666 (files) and 0777 (folders) less the umask.
 *
 * Every function returns 0 or a negative PP_E* code (PP_EIO with errno set:
 * ELOOP for a refused symlink) and appends "why" to err when err is not NULL.
 */
#ifndef SAFEFILE_H
#define SAFEFILE_H

#include <stdio.h>
#include <sys/types.h>

struct strbuf;

/* Flags of safe_opendir() and safe_mkdirs(). */
enum {
	SAFE_NOFOLLOW = 1 /* follow no symlink at all, whoever owns it */
};

/* Opens the folder `path` (relative to atfd, or absolute; atfd may be
 * AT_FDCWD) as a directory fd (O_DIRECTORY|O_CLOEXEC), resolving it one
 * component at a time under the symlink rule above. The caller closes *dirfd. */
int safe_opendir(int atfd, const char *path, unsigned flags, int *dirfd, struct strbuf *err);

/* mkdir -p: like safe_opendir() but creates missing components with mode
 * 0777 & ~umask. Components it creates are reopened with O_NOFOLLOW, so a
 * folder swapped for a symlink in between is refused. */
int safe_mkdirs(int atfd, const char *path, unsigned flags, int *dirfd, struct strbuf *err);

/* An output file being written. Embedded by the caller; fields are private
 * except fp. */
struct safefile {
	FILE *fp;         /* write the content here (stdio, fully buffered) */
	int dirfd;        /* the folder, owned by the safefile */
	char *name;       /* final name (one component) */
	char *buf;        /* fp's buffer (SAFEFILE_BUF bytes) */
	char tmpname[64]; /* temporary name in the same folder */
};

/* The bytes a safefile buffers before it writes: most report files go out
 * in one write(). */
#define SAFEFILE_BUF 65536

/* Starts writing `name` (a single path component: no '/', not "." or "..")
 * in the folder dirfd (borrowed: it is dup'ed). On success sf->fp is open. */
int safefile_open(struct safefile *sf, int dirfd, const char *name, struct strbuf *err);

/* Starts writing the file at `path`: its folder is opened with
 * safe_opendir(AT_FDCWD, dirname) (it must exist), then safefile_open(). */
int safefile_open_path(struct safefile *sf, const char *path, struct strbuf *err);

/* Flushes, closes and renames the temporary file to its final name. On any
 * failure (a full disk shows up here) the temporary file is removed and the
 * final name is untouched. Releases sf either way. */
int safefile_commit(struct safefile *sf, struct strbuf *err);

/* Discards the file being written (nothing appears under its final name)
 * and releases sf. Safe after a failed open, a commit or an abort. */
void safefile_abort(struct safefile *sf);

/* mkdir -p of path (relative to the current folder, or absolute) under the
 * rules of safe_mkdirs(), without keeping the folder open. */
int safe_mkdir_p(const char *path, struct strbuf *err);

/* Writes `len` bytes of data as dirfd/name in one go (open, write, commit). */
int safefile_write(int dirfd, const char *name, const void *data, size_t len, struct strbuf *err);

#endif
