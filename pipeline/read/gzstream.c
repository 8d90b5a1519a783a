/* gzstream.c — see gzstream.h.
 *
 * Inflating ahead (gzstream_read_ahead()): a thread fills a ring of
 * AHEAD_CHUNKS chunks in order (made++ per chunk) while the reader copies
 * out of chunk `taken % AHEAD_CHUNKS` and hands it back (taken++) once it
 * has copied all of it, or borrows chunks whole (gzstream_take(): `lent`
 * of them from taken on, at most 2, handed back one call later). mu
 * guards made, taken, done and quit; a chunk's bytes belong to whichever
 * side the counters give it to. Only the thread touches the inflater and
 * the file until it has ended (done, and joined by the reader before it
 * reports how the stream ended). Every chunk but the last is full. A
 * chunk's bytes start `room` bytes into its buffer, which has GZS_PAD more
 * after them: what a borrower may write around them.
 */
#include "gzstream.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gunzip.h"
#include "util/pp.h"

enum {
	ZIN_SIZE = 1u << 20,      /* compressed input read at once */
	AHEAD_CHUNK = 512u << 10, /* inflated ahead at once, at most */
	AHEAD_ROOM = 64u << 10,   /* room before a chunk's bytes, at most */
	AHEAD_CHUNKS = 6          /* 2 lent, 4 for the thread to fill */
};

struct chunk {
	char *buf;
	size_t len;
	uint64_t bytes_in; /* file bytes read when it was full */
};

struct ahead {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond; /* made, taken, done or quit changed */
	uint64_t made, taken;
	bool done, quit, joined;
	struct chunk c[AHEAD_CHUNKS];
	size_t chunk, room; /* a chunk's bytes at most, the room before them */
	size_t pos;         /* the reader's next byte in chunk taken */
	unsigned lent;      /* chunks lent from taken on (gzstream_take()) */
	uint64_t bytes_in;  /* what the reader reports */
};

/* The file, the inflater and how far they got. */
struct gzstream {
	int fd;
	struct gunzip *gz;
	struct gunzip_io io; /* io.in/in_n: compressed input not yet used */
	unsigned char *zin;
	uint64_t bytes_in;
	int status, err_no;
	bool raw;            /* a plain file: read, not inflated */
	struct ahead *ahead; /* NULL: inflate in gzstream_read() */
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

/* Reads a plain file into out[0..cap): as fill(). */
static size_t fill_raw(struct gzstream *s, char *out, size_t cap)
{
	ssize_t k = s->status == GZS_MORE ? pp_read_full(s->fd, out, cap) : 0;
	if (k < 0) {
		s->status = GZS_EIO;
		s->err_no = errno;
		return 0;
	}
	s->bytes_in += (uint64_t)k;
	if ((size_t)k < cap)
		s->status = GZS_END;
	return (size_t)k;
}

/* Inflates into out[0..cap): how many bytes; fewer only when the stream
 * ended (s->status). */
static size_t fill(struct gzstream *s, char *out, size_t cap)
{
	size_t n = 0;
	if (s->raw)
		return fill_raw(s, out, cap);
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

static void *ahead_main(void *arg)
{
	struct gzstream *z = arg;
	struct ahead *a = z->ahead;
	bool more = true;
	pthread_mutex_lock(&a->mu);
	while (more) {
		while (!a->quit && a->made - a->taken >= AHEAD_CHUNKS)
			pthread_cond_wait(&a->cond, &a->mu);
		if (a->quit)
			break;
		struct chunk *c = &a->c[a->made % AHEAD_CHUNKS];
		pthread_mutex_unlock(&a->mu);
		c->len = fill(z, c->buf + a->room, a->chunk);
		c->bytes_in = z->bytes_in;
		more = c->len == a->chunk;
		pthread_mutex_lock(&a->mu);
		a->made++;
		pthread_cond_broadcast(&a->cond);
	}
	a->done = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

static void ahead_stop(struct gzstream *z)
{
	struct ahead *a = z->ahead;
	if (!a->joined) {
		pthread_mutex_lock(&a->mu);
		a->quit = true;
		pthread_cond_broadcast(&a->cond);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->thread, NULL);
	}
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->mu);
	for (int i = 0; i < AHEAD_CHUNKS; i++)
		free(a->c[i].buf);
	free(a);
	z->ahead = NULL;
}

bool gzstream_read_ahead(struct gzstream *z, size_t chunk)
{
	struct ahead *a = xcalloc(1, sizeof(*a));
	a->chunk = chunk && chunk < AHEAD_CHUNK ? chunk : AHEAD_CHUNK;
	a->room = a->chunk < AHEAD_ROOM ? a->chunk : AHEAD_ROOM;
	for (int i = 0; i < AHEAD_CHUNKS; i++)
		a->c[i].buf = xmalloc(a->room + a->chunk + GZS_PAD);
	a->bytes_in = z->bytes_in;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cond, NULL);
	z->ahead = a;
	if (pthread_create(&a->thread, NULL, ahead_main, z)) {
		a->joined = true;
		ahead_stop(z);
		return false;
	}
	return true;
}

/* Hands k chunks back to the thread, from taken on. */
static void give_back(struct ahead *a, unsigned k)
{
	pthread_mutex_lock(&a->mu);
	a->taken += k;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->mu);
}

/* Waits until chunk taken + k is made (true) or the thread has ended and
 * none will be (false; joined: the stream's status is set). */
static bool await_chunk(struct ahead *a, unsigned k)
{
	if (a->joined)
		return false;
	pthread_mutex_lock(&a->mu);
	while (a->taken + k >= a->made && !a->done)
		pthread_cond_wait(&a->cond, &a->mu);
	bool have = a->taken + k < a->made;
	pthread_mutex_unlock(&a->mu);
	if (!have) {
		pthread_join(a->thread, NULL);
		a->joined = true;
	}
	return have;
}

/* gzstream_read() from the chunks inflated ahead. */
static size_t read_ahead(struct gzstream *z, char *out, size_t cap)
{
	struct ahead *a = z->ahead;
	size_t n = 0;
	if (a->lent) { /* read whole: copying goes on after them */
		give_back(a, a->lent);
		a->lent = 0;
		a->pos = 0;
	}
	while (n < cap && await_chunk(a, 0)) {
		struct chunk *c = &a->c[a->taken % AHEAD_CHUNKS];
		size_t k = c->len - a->pos < cap - n ? c->len - a->pos : cap - n;
		memcpy(out + n, c->buf + a->room + a->pos, k);
		n += k;
		a->pos += k;
		a->bytes_in = c->bytes_in;
		if (a->pos == c->len) {
			a->pos = 0;
			give_back(a, 1);
		}
	}
	return n;
}

size_t gzstream_take(struct gzstream *z, char **p)
{
	struct ahead *a = z->ahead;
	if (a->lent == 2) { /* the older one: the caller is done with it */
		give_back(a, 1);
		a->lent = 1;
	}
	/* The rest of a chunk gzstream_read() began, or the next one. */
	size_t from = a->lent ? 0 : a->pos;
	if (!await_chunk(a, a->lent))
		return 0;
	struct chunk *c = &a->c[(a->taken + a->lent) % AHEAD_CHUNKS];
	a->bytes_in = c->bytes_in;
	if (c->len == from) { /* the last chunk, empty: the thread ends */
		pthread_mutex_lock(&a->mu);
		while (!a->done)
			pthread_cond_wait(&a->cond, &a->mu);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->thread, NULL);
		a->joined = true;
		return 0;
	}
	a->lent++;
	a->pos = 0;
	*p = c->buf + a->room + from;
	return c->len - from;
}

size_t gzstream_room(const struct gzstream *z)
{
	return z->ahead->room;
}

size_t gzstream_chunk(const struct gzstream *z)
{
	return z->ahead->chunk;
}

struct gzstream *gzstream_new_raw(int fd, uint64_t done)
{
	struct gzstream *z = xcalloc(1, sizeof(*z));
	z->fd = fd;
	z->raw = true;
	z->bytes_in = done;
	return z;
}

void gzstream_free(struct gzstream *z)
{
	if (!z)
		return;
	if (z->ahead)
		ahead_stop(z);
	gunzip_free(z->gz);
	free(z->zin);
	free(z);
}

size_t gzstream_read(struct gzstream *z, char *out, size_t cap)
{
	return z->ahead ? read_ahead(z, out, cap) : fill(z, out, cap);
}

int gzstream_status(const struct gzstream *z, int *err_no)
{
	if (z->ahead && !z->ahead->joined) {
		if (err_no)
			*err_no = 0;
		return GZS_MORE;
	}
	if (err_no)
		*err_no = z->status == GZS_EIO ? z->err_no : 0;
	return z->status;
}

const char *gzstream_error(const struct gzstream *z)
{
	return z->raw ? "" : gunzip_error(z->gz);
}

const char *gzstream_name(const struct gzstream *z)
{
	return z->raw ? "" : gunzip_name(z->gz);
}

uint64_t gzstream_bytes_in(const struct gzstream *z)
{
	if (z->ahead && !z->ahead->joined)
		return z->ahead->bytes_in;
	return z->bytes_in;
}
