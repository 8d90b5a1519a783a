/* gzstream.c — see gzstream.h. */
#include "gzstream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gunzip.h"
#include "util/pp.h"

enum {
	ZIN_SIZE = 1u << 20 /* compressed input read at once */
};

/* The file, the inflater and how far they got. */
struct gzstream {
	int fd;
	struct gunzip *gz;
	struct gunzip_io io; /* io.in/in_n: compressed input not yet used */
	unsigned char *zin;
	uint64_t bytes_in;
	int status, err_no;
};

/* The next compressed chunk; at the file's end, or on an error, the
 * stream's status. */
static void read_zin(struct gzstream *s)
{
	ssize_t k = pp_read_full(s->fd, s->zin, ZIN_SIZE);
	if (k < 0) {
		s->status = GZS_EIO;
		s->err_no = errno;
		k = 0;
	}
	s->bytes_in += (uint64_t)k;
	s->io.in = s->zin;
	s->io.in_n = (size_t)k;
}

/* Inflates into out[0..cap): how many bytes; fewer only when the stream
 * ended (s->status). */
static size_t fill(struct gzstream *s, char *out, size_t cap)
{
	size_t n = 0;
	while (n < cap && s->status == GZS_MORE) {
		if (s->io.in_n == 0) {
			read_zin(s);
			if (s->status != GZS_MORE)
				break;
			if (s->io.in_n == 0) { /* the file ends inside a member */
				s->status = GZS_CUT;
				break;
			}
		}
		s->io.out = out + n;
		s->io.out_n = cap - n;
		int zrc = gunzip_run(s->gz, &s->io);
		n = (size_t)(s->io.out - out);
		if (zrc == GUNZIP_END) {
			/* Another gzip member may follow (concatenated files);
			 * anything else after the last member is ignored. */
			if (s->io.in_n == 0)
				read_zin(s);
			if (s->status != GZS_MORE)
				break;
			if (s->io.in_n >= 2 && s->io.in[0] == 0x1f && s->io.in[1] == 0x8b)
				zrc = gunzip_reset(s->gz);
			else
				s->status = GZS_END;
		}
		if (zrc == GUNZIP_BAD)
			s->status = GZS_BAD;
	}
	return n;
}

struct gzstream *gzstream_new(int fd, const unsigned char *head, size_t have, int impl)
{
	struct gzstream *z = xcalloc(1, sizeof(*z));
	z->fd = fd;
	z->gz = gunzip_new(impl);
	z->zin = xmalloc(ZIN_SIZE);
	memcpy(z->zin, head, have);
	z->io.in = z->zin;
	z->io.in_n = have;
	z->bytes_in = have;
	return z;
}

void gzstream_free(struct gzstream *z)
{
	if (!z)
		return;
	gunzip_free(z->gz);
	free(z->zin);
	free(z);
}

size_t gzstream_read(struct gzstream *z, char *out, size_t cap)
{
	return fill(z, out, cap);
}

int gzstream_status(const struct gzstream *z, int *err_no)
{
	if (err_no)
		*err_no = z->status == GZS_EIO ? z->err_no : 0;
	return z->status;
}

const char *gzstream_error(const struct gzstream *z)
{
	return gunzip_error(z->gz);
}

const char *gzstream_name(const struct gzstream *z)
{
	return gunzip_name(z->gz);
}

uint64_t gzstream_bytes_in(const struct gzstream *z)
{
	return z->bytes_in;
}
