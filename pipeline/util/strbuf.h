/* strbuf.h — a growable, always NUL-terminated byte buffer.
 *
 * Invariant: buf[len] == '\0' and len < alloc (after any successful call).
 * An initialised, empty strbuf points at a static "" and owns no memory.
 * Growth dies on allocation failure (like git's strbuf): use it for text
 * whose size is bounded by the input, not on unbounded hot paths.
 */
#ifndef STRBUF_H
#define STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT                  \
	{                            \
		0, 0, strbuf_slopbuf \
	}

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
/* Ensure room for `extra` more bytes (plus the NUL). */
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_reset(struct strbuf *sb);
/* Cuts sb back to its first len bytes (len <= sb->len). */
void strbuf_setlen(struct strbuf *sb, size_t len);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
/* Appends the folder of path: what comes before its last '/', "/" when
 * that '/' is its first byte, "." when it has none ("a/b" -> "a"). */
void strbuf_add_folder(struct strbuf *sb, const char *path);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Appends s between two q, each q inside doubled: a CSV field (q '"'), a
 * gnuplot single-quoted string (q '\''). */
void strbuf_add_quoted(struct strbuf *sb, const char *s, char q);
/* Appends s as a JSON string literal, quotes included. */
void strbuf_add_json_str(struct strbuf *sb, const char *s, size_t len);
/* Gives the buffer to the caller (free() it); sb is reset to empty. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
/* Appends the whole file at path, however long (git's strbuf_read_file),
 * then zeroes `pad` bytes after buf[len] (the JSON scanners read ahead:
 * JS_PAD in read/json_scan.h). Returns 0, or PP_EIO with "cannot open
 * 'path': why" or "cannot read 'path': why" appended to err (what was read
 * stays). */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t pad, struct strbuf *err);

/* Errors, util/pp.h's convention: appends the message to err, after a
 * newline when err holds one already (one message a line), and returns
 * code:
 *   return pp_err(err, PP_EINVAL, "--ranks: rank %d is outside ...", r); */
int pp_err(struct strbuf *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* pp_err() with a va_list: for a module's own error helper. */
int pp_verr(struct strbuf *err, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* For a caller that puts its context before what its callee appended to
 * err: mark is err->len before the call. Inserts fmt's text where the
 * callee's message starts (after the newline pp_err() put before it) and
 * returns code:
 *   size_t mark = err->len;
 *   if (safe_mkdir_p(path, err))
 *           return pp_err_prefix(err, mark, PP_EIO, "cannot create '%s': ", path);
 * gives "cannot create 'out': refusing to follow symlink 'out' (...)". */
int pp_err_prefix(struct strbuf *err, size_t mark, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Prints each line of msgs (what pp_err() appended) as error() does;
 * nothing for an empty msgs. Returns -1. */
int error_lines(const char *msgs);

#endif
