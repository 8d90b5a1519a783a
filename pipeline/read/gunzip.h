/* gunzip.h — streaming gzip decompression for the trace reader.
 *
 * Two implementations behind one interface: ISA-L's isal_inflate (2.8-3x
 * zlib's speed; built in when the build finds libisal, docs/reader.md) and
 * zlib's inflate, always there as the fallback. One member at a time: the
 * caller resets the stream for each member of a concatenated file.
 */
#ifndef GUNZIP_H
#define GUNZIP_H

#include <stdbool.h>
#include <stddef.h>

enum gunzip_impl {
	GUNZIP_AUTO = 0, /* ISA-L when built in, else zlib; $PP_GUNZIP overrides */
	GUNZIP_ZLIB,
	GUNZIP_ISAL
};

enum {
	GUNZIP_OK = 0,  /* the output is full or the input used up */
	GUNZIP_END = 1, /* the member ended (trailer checked); io.in is after it */
	GUNZIP_BAD = 2  /* corrupt data: gunzip_error() says what */
};

/* One call's buffers; gunzip_run() advances them. */
struct gunzip_io {
	const unsigned char *in;
	size_t in_n;
	char *out;
	size_t out_n;
};

struct gunzip;

/* A stream of the given implementation. GUNZIP_AUTO reads $PP_GUNZIP
 * ("zlib" or "isal"; anything else is AUTO). An implementation that is not
 * built in falls back to zlib. Never NULL (out of memory ends the process,
 * docs/contracts.md §7). */
struct gunzip *gunzip_new(enum gunzip_impl impl);
void gunzip_free(struct gunzip *g);

/* Inflates from io->in into io->out until one of them is used up or the
 * member ends. Returns GUNZIP_OK, GUNZIP_END or GUNZIP_BAD. */
int gunzip_run(struct gunzip *g, struct gunzip_io *io);

/* Prepares for the next member (after GUNZIP_END). 0 or GUNZIP_BAD. */
int gunzip_reset(struct gunzip *g);

/* Why the data is corrupt, as short lowercase text ("" before an error). */
const char *gunzip_error(const struct gunzip *g);

/* "isa-l" or "zlib": which implementation g runs. */
const char *gunzip_name(const struct gunzip *g);

/* Whether the ISA-L implementation is built in. */
bool gunzip_have_isal(void);

/* ---- a whole file ------------------------------------------------------
 * For readers of other formats (the op-trace CSV): a file's content, inflated
 * when it starts with the gzip magic (every member of a concatenated file),
 * read as it is otherwise. */
struct gunzip_file;
struct strbuf;

/* Opens path. NULL, with "cannot open 'PATH': <strerror>" appended to err, when it
 * cannot be opened or read. */
struct gunzip_file *gunzip_file_open(const char *path, struct strbuf *err);
/* Reads up to n bytes of content into buf. Returns how many (fewer than n
 * only at the end), 0 at the end, or -1 with "cannot read 'PATH': why"
 * appended to err: a read error, corrupt gzip data, or gzip data that ends before its
 * member does (a truncated file). */
long gunzip_file_read(struct gunzip_file *f, char *buf, size_t n, struct strbuf *err);
/* Closes f; accepts NULL. */
void gunzip_file_close(struct gunzip_file *f);

/* What one implementation provides (gunzip.c: zlib; gunzip_isal.c: ISA-L).
 * step() inflates once from in[0..*in_n) into out[0..*out_n) and sets both
 * to the bytes it used and wrote; it returns GUNZIP_* and, for GUNZIP_BAD,
 * sets *msg. open() allocates with xmalloc() and returns NULL only when the
 * library's own set-up fails (zlib's inflateInit2()); gunzip_new() then ends
 * the process (docs/contracts.md §7). */
struct gunzip_backend {
	const char *name;
	void *(*open)(void);
	void (*close)(void *st);
	int (*reset)(void *st);
	int (*step)(void *st, const unsigned char *in, unsigned *in_n, char *out, unsigned *out_n,
		    const char **msg);
};
extern const struct gunzip_backend gunzip_isal_backend;

#endif
