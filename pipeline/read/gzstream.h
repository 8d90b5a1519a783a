/* gzstream.h — a gzip file as the stream of its decompressed bytes.
 *
 * Reads the file, inflates it member after member (concatenated gzip files
 * are one stream; anything after the last member is ignored) with the
 * inflater of gunzip.h, and tells how the stream ended: cleanly, cut short
 * (the file ends inside a member), corrupt, or on a read error.
 */
#ifndef GZSTREAM_H
#define GZSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How the stream ended (gzstream_status()). */
enum { GZS_MORE = 0, GZS_END, GZS_CUT, GZS_BAD, GZS_EIO };

/* Writable bytes after a chunk that gzstream_take() lends. */
enum { GZS_PAD = 64 };

struct gzstream;

/* A stream of the gzip file open on fd, whose first `have` bytes were read
 * already into head (the magic). impl: enum gunzip_impl. The stream owns
 * neither fd nor head. Never NULL (docs/contracts.md §7). */
struct gzstream *gzstream_new(int fd, const unsigned char *head, size_t have, int impl);
/* A plain file's bytes as the same kind of stream (so that they too can be
 * read ahead): read from fd, whose first `done` bytes the caller has read
 * already; it ends as GZS_END or GZS_EIO. */
struct gzstream *gzstream_new_raw(int fd, uint64_t done);
/* NULL is fine. */
void gzstream_free(struct gzstream *z);

/* From now on, inflates ahead on a thread of its own (a few chunks of
 * `chunk` bytes in flight; 0 or more than 512 KiB: 512 KiB) while the
 * caller reads; what gzstream_read() and the others return is the same.
 * false (and z as before) when the thread cannot be created. Call it
 * once, before the first gzstream_read() or gzstream_take(). */
bool gzstream_read_ahead(struct gzstream *z, size_t chunk);

/* Reading ahead, without a copy: lends the next bytes inflated ahead in
 * place, up to a chunk's end (the rest of the chunk gzstream_read() was
 * in, or the next one): *p points at them, with gzstream_room() writable
 * bytes before them and GZS_PAD after. How many;
 * 0 when the stream has ended (gzstream_status() says how). A chunk lent
 * stays the caller's through the next call too (so that the unread end of
 * one window can be copied in front of the next once it returns) and goes
 * back at the call after that, or at the next gzstream_read(). Only after
 * gzstream_read_ahead(). */
size_t gzstream_take(struct gzstream *z, char **p);
/* The room gzstream_take() leaves before what it lends, at least (min(the
 * chunk, 64 KiB)), and the most it lends at once (a chunk). Only after
 * gzstream_read_ahead(). */
size_t gzstream_room(const struct gzstream *z);
size_t gzstream_chunk(const struct gzstream *z);

/* The next decompressed bytes into out[0..cap): how many. Fewer than cap
 * only when the stream ended (and 0 ever after): gzstream_status() says
 * how. */
size_t gzstream_read(struct gzstream *z, char *out, size_t cap);

/* GZS_MORE while bytes may follow, else how the stream ended; for GZS_EIO,
 * *err_no is read()'s errno. */
int gzstream_status(const struct gzstream *z, int *err_no);
/* The inflater's words for GZS_BAD (zlib's, whichever inflated). */
const char *gzstream_error(const struct gzstream *z);
/* "isa-l" or "zlib". */
const char *gzstream_name(const struct gzstream *z);
/* File bytes read so far. */
uint64_t gzstream_bytes_in(const struct gzstream *z);

#endif
