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

struct gzstream;

/* A stream of the gzip file open on fd, whose first `have` bytes were read
 * already into head (the magic). impl: enum gunzip_impl. The stream owns
 * neither fd nor head. Never NULL (docs/contracts.md §7). */
struct gzstream *gzstream_new(int fd, const unsigned char *head, size_t have, int impl);
/* NULL is fine. */
void gzstream_free(struct gzstream *z);

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
