/* gunzip_file.c — a whole file through gunzip (see gunzip.h): the gzip
 * magic decides, members follow one another, bytes after the last member
 * that do not start another one are ignored (as the trace reader does). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gunzip.h"
#include "util/pp.h"
#include "util/strbuf.h"

enum { ZIN = 1 << 18 }; /* compressed bytes per read() */

struct gunzip_file {
	int fd;
	char *path;
	struct gunzip *gz; /* NULL: a plain file */
	unsigned char *zin;
	struct gunzip_io io; /* io.in/in_n: compressed input not used yet */
	unsigned char head[2];
	size_t nhead; /* plain file: the first bytes, read to look for the magic */
	bool eof;
};

/* read() that retries when a signal interrupts it. */
static long read_some(int fd, void *buf, size_t n)
{
	for (;;) {
		ssize_t k = read(fd, buf, n);
		if (k >= 0 || errno != EINTR)
			return (long)k;
	}
}

static long fail(const struct gunzip_file *f, struct strbuf *err, const char *why)
{
	pp_err(err, PP_EIO, "cannot read '%s': %s", f->path, why);
	return -1;
}

struct gunzip_file *gunzip_file_open(const char *path, struct strbuf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pp_err(err, PP_EIO, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	struct gunzip_file *f = xcalloc(1, sizeof(*f));
	f->fd = fd;
	f->path = xstrdup(path);
	while (f->nhead < 2) {
		long k = read_some(fd, f->head + f->nhead, 2 - f->nhead);
		if (k < 0) {
			pp_err(err, PP_EIO, "cannot open '%s': %s", path, strerror(errno));
			gunzip_file_close(f);
			return NULL;
		}
		if (k == 0)
			break;
		f->nhead += (size_t)k;
	}
	if (f->nhead == 2 && f->head[0] == 0x1f && f->head[1] == 0x8b) {
		f->gz = gunzip_new(GUNZIP_AUTO);
		f->zin = xmalloc(ZIN);
		memcpy(f->zin, f->head, 2);
		f->io.in = f->zin;
		f->io.in_n = 2;
		f->nhead = 0;
	}
	return f;
}

/* More compressed input into zin: 0, or -1 with errno. Sets eof at the end
 * of the file. */
static int refill(struct gunzip_file *f)
{
	long k = read_some(f->fd, f->zin, ZIN);
	if (k < 0)
		return -1;
	f->io.in = f->zin;
	f->io.in_n = (size_t)k;
	f->eof = k == 0;
	return 0;
}

static long read_gz(struct gunzip_file *f, char *buf, size_t n, struct strbuf *err)
{
	f->io.out = buf;
	f->io.out_n = n;
	while (f->io.out_n && f->gz) {
		if (!f->io.in_n) {
			if (refill(f))
				return fail(f, err, strerror(errno));
			if (f->eof)
				return fail(f, err,
					    "the gzip data ends before its last member does "
					    "(a truncated file)");
		}
		int rc = gunzip_run(f->gz, &f->io);
		if (rc == GUNZIP_BAD)
			return fail(f, err, gunzip_error(f->gz));
		if (rc != GUNZIP_END)
			continue;
		/* Another member may follow (concatenated files). */
		if (!f->io.in_n && refill(f))
			return fail(f, err, strerror(errno));
		if (f->io.in_n >= 2 && f->io.in[0] == 0x1f && f->io.in[1] == 0x8b) {
			if (gunzip_reset(f->gz) != GUNZIP_OK)
				return fail(f, err, gunzip_error(f->gz));
		} else {
			gunzip_free(f->gz); /* the end: anything else is ignored */
			f->gz = NULL;
			f->eof = true;
		}
	}
	return (long)(n - f->io.out_n);
}

long gunzip_file_read(struct gunzip_file *f, char *buf, size_t n, struct strbuf *err)
{
	if (f->zin)
		return f->gz ? read_gz(f, buf, n, err) : 0;
	size_t got = 0;
	if (f->nhead && n) {
		got = f->nhead < n ? f->nhead : n;
		memcpy(buf, f->head, got);
		memmove(f->head, f->head + got, f->nhead - got);
		f->nhead -= got;
	}
	while (got < n && !f->eof) {
		long k = read_some(f->fd, buf + got, n - got);
		if (k < 0)
			return fail(f, err, strerror(errno));
		f->eof = k == 0;
		got += (size_t)k;
	}
	return (long)got;
}

void gunzip_file_close(struct gunzip_file *f)
{
	if (!f)
		return;
	close(f->fd);
	gunzip_free(f->gz);
	free(f->zin);
	free(f->path);
	free(f);
}
