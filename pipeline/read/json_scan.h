/* json_scan.h — the low-level pieces of the trace reader's JSON scanner.
 *
 * Pure functions over a byte range [p, end): skipping whitespace, finding the
 * end of a string, skipping any value without building it (iteratively, so
 * nesting depth costs heap bits, never C stack), scanning numbers, and
 * converting number text exactly (µs text to int64 ns, integers to int64).
 * Every scanning function distinguishes "malformed" from "ran out of input"
 * (JS_MORE), so a caller holding a window of a stream can refill and retry.
 */
#ifndef JSON_SCAN_H
#define JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simd.h"

enum {
	JS_OK = 0,
	JS_MORE = 1, /* the range ended before the token did */
	JS_ERR = 2   /* malformed; see struct js_err */
};

/* Where and why scanning failed: what was expected at `at`. */
struct js_err {
	const char *at;   /* position of the offending byte */
	const char *what; /* NULL: describe the byte at `at` */
	const char *expected;
};

/* The nesting stack used by js_skip_value(): one bit per open container.
 * Grows on the heap; js_stack_release() frees it. */
struct js_stack {
	uint64_t *bits;
	size_t cap; /* in bits */
};

/* Every range [p, end) given to these functions must be followed by
 * JS_PAD readable zero bytes: the scanners read ahead (16 bytes at a time)
 * and use the zeros as a sentinel, then check against end. */
enum { JS_PAD = 64 };

/* True for the bytes accepted as whitespace between tokens: JSON's four
 * plus \f and \v (lenient). */
static inline bool js_is_ws(unsigned char c)
{
	return c <= ' ' &&
	       (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\v');
}

const char *js_ws_run(const char *p, const char *end);

/* Skips whitespace (never past end: the padding is not whitespace). */
static inline const char *js_ws(const char *p, const char *end)
{
	if ((unsigned char)*p > ' ')
		return p;
	if (js_is_ws((unsigned char)*p)) {
		p++;
		if ((unsigned char)*p > ' ')
			return p;
		return js_ws_run(p, end);
	}
	return p;
}

/* The first '"' or '\\' in [p, end), or end. */
static inline const char *js_find_quote_or_bs(const char *p, const char *end)
{
	return simd_find_quote_or_bs(p, end);
}

/* p points just after an opening quote. On JS_OK *q is the closing quote and
 * *esc tells whether a backslash occurs inside. JS_MORE: no closing quote
 * before end. Raw control characters are accepted. */
static inline int js_string_end(const char *p, const char *end, const char **q, bool *esc)
{
	bool e = false;
	for (;;) {
		p = js_find_quote_or_bs(p, end);
		if (p >= end)
			return JS_MORE;
		if (*p == '"') {
			*q = p;
			*esc = e;
			return JS_OK;
		}
		e = true;
		p += 2; /* the backslash and the byte it escapes */
	}
}

/* Unescapes the string body s[0..n) (no quotes) into out, which must have
 * room for n bytes; returns the output length. \uXXXX becomes UTF-8,
 * surrogate pairs one 4-byte sequence, a lone surrogate U+FFFD; an unknown
 * or incomplete escape is kept literally (lenient), and so is \u0000 (an
 * embedded NUL would cut the name in every C string and SQLite text).
 * Output never exceeds n. */
size_t js_unescape(const char *s, size_t n, char *out);

/* Number token kinds for js_scan_number(). */
enum {
	JS_NUM_INT = 1,      /* -?digits */
	JS_NUM_DEC = 2,      /* with fraction and/or exponent */
	JS_NUM_NONFINITE = 3 /* NaN, Infinity, -Infinity */
};

/* Scans a number token starting at p (a '-' or digit, or the N/I of the
 * non-finite tokens). On JS_OK *q is one past its end and *kind one of
 * JS_NUM_*. JS_MORE when the token may continue past end (the caller
 * decides whether end is final: pass final=true at end of input). */
int js_scan_number(const char *p, const char *end, bool final, const char **q, int *kind,
		   struct js_err *err);

/* Skips one complete value (any type, any depth) starting at *pp (which
 * points at its first byte, after whitespace). On JS_OK *pp is one past the
 * value. `final` tells that end is the end of all input. */
int js_skip_value(const char **pp, const char *end, bool final, struct js_stack *st,
		  struct js_err *err);
void js_stack_release(struct js_stack *st);

/* "'x'", "byte 0x01" or "end of input": what stands
 * at `at` in a text ending at end, for "found ..., expected ..." messages. */
void js_describe_at(const char *at, const char *end, char *out, size_t n);

/* ---- a whole document in memory --------------------------------------
 * For small documents read whole (config files, PP-timer dumps): check the
 * text once with js_doc_check(), then walk its objects and arrays with
 * js_iter, which needs no error paths because the text is well formed. */

/* Checks that [p, end) holds one JSON value with only whitespace around it.
 * Returns JS_OK with [*v, *vend) the value's text; JS_ERR (malformed) or
 * JS_MORE (the text ends inside the value) with err filled. */
int js_doc_check(const char *p, const char *end, const char **v, const char **vend,
		 struct js_stack *st, struct js_err *err);

/* Describes an error of js_doc_check() on the text [text, end) as
 * "LINE: byte OFFSET: found X, expected Y" (callers prefix the path). */
void js_doc_error(const char *text, const char *end, const struct js_err *e, char *out, size_t n);

struct strbuf;
/* Reads the file path whole into text (padded for the scanner) and checks
 * it with js_doc_check(): 0 with [*v, *vend) the value's text; PP_EIO
 * (unreadable) or PP_EPARSE ("PATH:LINE: byte OFFSET: found X, expected Y")
 * appended to err. text is the caller's to release, also on failure. */
int js_doc_load(const char *path, struct strbuf *text, const char **v, const char **vend,
		struct js_stack *st, struct strbuf *err);

/* The line (from 1) of position at in the text starting at text. */
int js_line_of(const char *text, const char *at);

struct js_iter {
	const char *p, *end;
	bool obj;
	struct js_stack *st;
};

/* A member of an object (key set) or an element of an array (key NULL). */
struct js_item {
	const char *key; /* the key's text between its quotes, raw */
	size_t keylen;
	bool key_esc;         /* the key holds escapes: js_unescape() it */
	const char *v, *vend; /* the value's text: *v is '{', '[', '"', 't', 'f',
			       * 'n' or the first byte of a number */
};

/* Starts walking the object or array at v, in a text that passed
 * js_doc_check() (st: any stack, for skipping nested values). */
void js_iter_init(struct js_iter *it, const char *v, const char *end, struct js_stack *st);
/* Stores the next member or element in *item and returns true; false after
 * the last one. */
bool js_iter_next(struct js_iter *it, struct js_item *item);

/* Converts the text of a number of microseconds to int64 nanoseconds,
 * exactly (decimal digits, never through a double), rounding a sub-ns
 * remainder half away from zero. Returns false when the text is not a finite
 * number or the result does not fit int64. */
bool js_us_to_ns(const char *s, const char *e, int64_t *ns);

/* Parses -?digits into int64; false when not such text or out of range. */
bool js_parse_int64(const char *s, const char *e, int64_t *v);

#endif
