/* trace_read.c — see trace_read.h.
 *
 * Design note.
 *
 * The text lives in one window buffer buf[0..len); buf[pos] is the first
 * byte not yet consumed, and base_off is the text offset of buf[0]. Parsing
 * proceeds in *units*: the trace's opening brace, one top-level key with its
 * value, or one event (with the comma before it). A unit is parsed from
 * buf[pos] against the bytes at hand; when it runs past len the unit parser
 * returns JS_MORE, nothing is committed, the unconsumed tail is moved to the
 * front, more text is read (the buffer doubles when one unit fills it, up to
 * max_event_bytes) and the unit is parsed again from its start. So the only
 * state kept between units is the small top-level state below, and memory is
 * bounded by the largest unit, not the file.
 *
 *   S_START --'{'--> S_KEY --"traceEvents":[--> S_EVENTS --']'--> S_AFTER
 *      |                 ^--- ',' ---- S_AFTER <-- other key: value --'
 *      '--'['(bare array of events)--> S_EVENTS            S_AFTER --'}'--> S_END
 *
 * Strings of an event are recorded as (start, length, has-escape) while the
 * event is parsed; only when the whole event parsed are they materialised:
 * in place (a NUL over the closing quote) when the window is ours and the
 * string has no escape, else unescaped into the scratch buffer. So a unit
 * that is parsed again after a refill always sees the original bytes.
 */
#include "trace_read.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gunzip.h"
#include "json_scan.h"
#include "key_cache.h"
#include "util/pp.h"

enum { S_START, S_KEY, S_AFTER, S_EVENTS, S_END, S_DONE };

#define ALWAYS_INLINE inline __attribute__((always_inline))

enum {
	BUF_INIT = 1u << 20,      /* initial window (bigger is no faster) */
	ZIN_SIZE = 1u << 20,      /* compressed input chunk */
	HDR_STR_MAX = 4096,       /* header strings are cut to this */
	MAX_EVENT_DEFAULT = 256u << 20
};

/* The strings one event keeps, as slots (a repeated key overwrites). */
enum {
	K_CAT, K_NAME, K_PID, K_TID, K_ID, K_ARG_NAME, K_PG_NAME, K_PG_DESC, K_PG_RANKS,
	K_COLLECTIVE, K_DTYPE, K_NSLOTS
};

struct kept {
	const char *s; /* NULL: slot unused */
	size_t n;
	bool esc;
};

struct trace_reader {
	char *path;
	int fd;
	bool mem;       /* the source is the caller's memory, not fd */
	const char *membuf;
	size_t memlen, mempos;
	bool gz;
	int gunzip;     /* enum gunzip_impl asked for */
	bool gz_cut;    /* the gzip stream ended early */
	bool gz_bad;    /* corrupt gzip data */
	struct gunzip *gzs;
	struct gunzip_io zio; /* zio.in/in_n: compressed input not yet used */
	unsigned char *zin;
	uint64_t file_bytes; /* bytes read from the file */

	char *buf;
	size_t cap, len, pos;
	uint64_t base_off;
	bool eof;
	size_t max_event;
	bool salvage;

	int state;
	bool first;          /* no element yet in the current array/object */
	bool bare_array;     /* the trace is a bare [ ... ] of events */
	int rc;              /* sticky: 0 running, 1 done, <0 error */
	bool truncated;
	uint64_t events;

	struct trace_header hdr;
	char *hdr_backend, *hdr_nccl, *hdr_device, *hdr_name;
	bool dev_name_set;

	struct js_stack st;
	struct key_cache kc_event, kc_args; /* keys of events, of their args */
	bool no_kc;                         /* opts.no_key_cache */
	struct kept kept[K_NSLOTS];
	unsigned kept_mask; /* bit i: kept[i] is in use */
	char *scratch;
	size_t scratch_cap;
	char keytmp[64];
	char err[1024];
};

/* ---- errors ---------------------------------------------------------- */

static uint64_t off_of(const struct trace_reader *r, const char *at)
{
	return r->base_off + (uint64_t)(at - r->buf);
}

static int set_err(struct trace_reader *r, int code, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int set_err(struct trace_reader *r, int code, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, sizeof(r->err), "%s: byte %llu: ", r->path,
			 (unsigned long long)off);
	if (n < 0 || (size_t)n >= sizeof(r->err))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	va_end(ap);
	r->rc = code;
	return code;
}

static int set_js_err(struct trace_reader *r, const struct js_err *e)
{
	char found[48];
	if (e->what)
		return set_err(r, PP_EPARSE, off_of(r, e->at), "%s, expected %s", e->what,
			       e->expected);
	js_describe_at(e->at, r->buf + r->len, found, sizeof(found));
	return set_err(r, PP_EPARSE, off_of(r, e->at), "found %s, expected %s", found,
		       e->expected);
}

/* ---- input ----------------------------------------------------------- */

static ssize_t read_full(int fd, void *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = read(fd, (char *)p + got, n - got);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* Reads the next chunk of compressed input; 0 bytes read sets gz_cut. */
static int read_zin(struct trace_reader *r)
{
	ssize_t k = read_full(r->fd, r->zin, ZIN_SIZE);
	if (k < 0)
		return set_err(r, PP_EIO, off_of(r, r->buf + r->len),
			       "read failed: %s, expected a readable file", strerror(errno));
	r->file_bytes += (uint64_t)k;
	r->zio.in = r->zin;
	r->zio.in_n = (size_t)k;
	return 0;
}

/* Inflates into buf[len..cap). Sets eof at the end of the gzip data. */
static int fill_gz(struct trace_reader *r)
{
	while (r->len < r->cap && !r->eof) {
		if (r->zio.in_n == 0) {
			if (read_zin(r))
				return r->rc;
			if (r->zio.in_n == 0) {
				r->gz_cut = true;
				r->eof = true;
				break;
			}
		}
		r->zio.out = r->buf + r->len;
		r->zio.out_n = r->cap - r->len;
		int zrc = gunzip_run(r->gzs, &r->zio);
		r->len = (size_t)(r->zio.out - r->buf);
		if (zrc == GUNZIP_END) {
			/* Another gzip member may follow (concatenated files). */
			if (r->zio.in_n == 0 && read_zin(r))
				return r->rc;
			if (r->zio.in_n >= 2 && r->zio.in[0] == 0x1f && r->zio.in[1] == 0x8b) {
				zrc = gunzip_reset(r->gzs);
				if (zrc == GUNZIP_OK)
					continue;
			} else {
				r->eof = true; /* anything else after the last member is ignored */
				break;
			}
		}
		if (zrc == GUNZIP_BAD) {
			r->gz_bad = true;
			r->eof = true;
			break;
		}
	}
	return 0;
}

static int fill_plain(struct trace_reader *r)
{
	if (r->mem) {
		size_t k = r->memlen - r->mempos;
		if (k > r->cap - r->len)
			k = r->cap - r->len;
		memcpy(r->buf + r->len, r->membuf + r->mempos, k);
		r->mempos += k;
		r->len += k;
		r->file_bytes += k;
		r->eof = r->mempos == r->memlen;
		return 0;
	}
	ssize_t k = read_full(r->fd, r->buf + r->len, r->cap - r->len);
	if (k < 0)
		return set_err(r, PP_EIO, off_of(r, r->buf + r->len),
			       "read failed: %s, expected a readable file", strerror(errno));
	r->file_bytes += (uint64_t)k;
	r->len += (size_t)k;
	if (r->len < r->cap)
		r->eof = true;
	return 0;
}

/* Moves the unconsumed tail to the front, grows the window if one unit fills
 * it, and reads more text. */
static int refill(struct trace_reader *r)
{
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->base_off += r->pos;
		r->len -= r->pos;
		r->pos = 0;
	}
	if (r->len == r->cap) {
		if (r->cap >= r->max_event)
			return set_err(r, PP_EPARSE, r->base_off,
				       "one event or value is longer than %zu bytes, expected a "
				       "smaller one (raise max_event_bytes)",
				       r->max_event);
		size_t ncap = r->cap * 2 > r->max_event ? r->max_event : r->cap * 2;
		r->buf = xrealloc(r->buf, ncap + JS_PAD);
		r->cap = ncap;
	}
	int rc = r->gz ? fill_gz(r) : fill_plain(r);
	memset(r->buf + r->len, 0, JS_PAD);
	return rc;
}

/* ---- open/close ------------------------------------------------------ */

static void alloc_window(struct trace_reader *r)
{
	r->cap = BUF_INIT < r->max_event ? BUF_INIT : r->max_event;
	if (r->mem && r->memlen < r->cap) /* a small input needs no big window */
		r->cap = r->memlen < 4096 ? (r->max_event < 4096 ? r->max_event : 4096) : r->memlen;
	r->buf = xmalloc(r->cap + JS_PAD);
	memset(r->buf, 0, JS_PAD);
}

static struct trace_reader *reader_new(const char *path, const struct trace_reader_opts *o)
{
	struct trace_reader *r = xcalloc(1, sizeof(*r));
	r->path = xstrdup(path ? path : "(memory)");
	r->fd = -1;
	r->max_event = o && o->max_event_bytes ? o->max_event_bytes : MAX_EVENT_DEFAULT;
	if (r->max_event < 64)
		r->max_event = 64;
	r->salvage = o && o->salvage;
	r->gunzip = o ? o->gunzip : GUNZIP_AUTO;
	r->no_kc = o && o->no_key_cache;
	r->state = S_START;
	key_cache_init(&r->kc_event);
	key_cache_init(&r->kc_args);
	r->hdr.backend = r->hdr.nccl_version = r->hdr.device_name = r->hdr.trace_name = "";
	return r;
}

struct trace_reader *trace_reader_open(const char *path, const struct trace_reader_opts *opts)
{
	struct trace_reader *r = reader_new(path, opts);
	alloc_window(r);
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		set_err(r, PP_EIO, 0, "cannot open: %s, expected a readable file",
			strerror(errno));
		return r;
	}
#ifdef POSIX_FADV_SEQUENTIAL
	posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	unsigned char magic[2];
	ssize_t k = read_full(r->fd, magic, 2);
	if (k < 0) {
		set_err(r, PP_EIO, 0, "read failed: %s, expected a readable file",
			strerror(errno));
		return r;
	}
	if (k == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
		r->gz = true;
		r->zin = xmalloc(ZIN_SIZE);
		r->gzs = gunzip_new(r->gunzip);
		memcpy(r->zin, magic, 2);
		r->zio.in = r->zin;
		r->zio.in_n = 2;
		r->file_bytes = 2;
	} else {
		memcpy(r->buf, magic, (size_t)k);
		r->len = (size_t)k;
		memset(r->buf + r->len, 0, JS_PAD);
		r->file_bytes = (uint64_t)k;
		if (k < 2)
			r->eof = true;
	}
	return r;
}

struct trace_reader *trace_reader_open_mem(const void *buf, size_t len,
					   const struct trace_reader_opts *opts)
{
	struct trace_reader *r = reader_new(NULL, opts);
	r->mem = true;
	r->membuf = buf;
	r->memlen = len;
	alloc_window(r);
	return r;
}

void trace_reader_close(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	gunzip_free(r->gzs);
	free(r->zin);
	free(r->buf);
	free(r->scratch);
	free(r->hdr_backend);
	free(r->hdr_nccl);
	free(r->hdr_device);
	free(r->hdr_name);
	js_stack_release(&r->st);
	free(r->path);
	free(r);
}

/* ---- unit parsing helpers -------------------------------------------- */

/* Parsing context of one unit. */
struct cx {
	struct trace_reader *r;
	const char *end;
	bool final;
	struct js_err e;
};

/* Running out of bytes is never an error here: the caller decides between
 * refilling and reporting a truncation. */
#define MORE_OR(c, at, exp) JS_MORE

static int fail_at(struct cx *c, const char *at, const char *what, const char *expected)
{
	c->e.at = at;
	c->e.what = what;
	c->e.expected = expected;
	return JS_ERR;
}

/* Skips whitespace and requires one more byte. */
static inline int ws_need(struct cx *c, const char **pp, const char *exp)
{
	(void)exp; /* what the caller expects: for the reader, MORE_OR reports none */
	const char *p = js_ws(*pp, c->end);
	*pp = p;
	if (p < c->end)
		return JS_OK;
	return MORE_OR(c, p, exp);
}

/* Reads a key at *pp ('"' expected), then ':' and the whitespace after it.
 * On JS_OK (*k, *kn) is the key (unescaped into keytmp when it had escapes) and
 * *pp the first byte of the value. */
static __attribute__((noinline)) int read_key_slow(struct cx *c, const char **pp,
						   const char **k, size_t *kn, const char *exp)
{
	const char *p = *pp, *q;
	bool esc;
	if (*p != '"')
		return fail_at(c, p, NULL, exp);
	if (js_string_end(p + 1, c->end, &q, &esc) != JS_OK)
		return MORE_OR(c, c->end, "'\"' closing the key");
	*k = p + 1;
	*kn = (size_t)(q - p - 1);
	if (esc) {
		if (*kn <= sizeof(c->r->keytmp)) {
			*kn = js_unescape(*k, *kn, c->r->keytmp);
			*k = c->r->keytmp;
		} else {
			*k = "";  /* long escaped keys match nothing we read */
			*kn = 0;
		}
	}
	p = q + 1;
	int rc = ws_need(c, &p, "':'");
	if (rc)
		return rc;
	if (*p != ':')
		return fail_at(c, p, NULL, "':' after the key");
	p++;
	rc = ws_need(c, &p, "a value");
	if (rc)
		return rc;
	*pp = p;
	return JS_OK;
}

/* The common key: no escape, closing quote within 16 bytes, then ':' and
 * at most one space; anything else takes read_key_slow(). */
static inline int read_key(struct cx *c, const char **pp, const char **k, size_t *kn,
			   const char *exp)
{
#ifdef __SSE2__
	const char *p = *pp;
	if (*p == '"') {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 1));
		__m128i w = _mm_loadu_si128((const __m128i *)(const void *)(p + 17));
		const __m128i dq = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
		unsigned m = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(v, dq), _mm_cmpeq_epi8(v, bs)));
		m |= (unsigned)_mm_movemask_epi8(
			     _mm_or_si128(_mm_cmpeq_epi8(w, dq), _mm_cmpeq_epi8(w, bs))) << 16;
		if (m) { /* keys up to 31 bytes */
			const char *q = p + 1 + __builtin_ctz(m);
			if (*q == '"' && q + 3 < c->end && q[1] == ':') {
				const char *val = q + 2 + (q[2] == ' ');
				if ((unsigned char)*val > ' ') {
					*k = p + 1;
					*kn = (size_t)(q - p - 1);
					*pp = val;
					return JS_OK;
				}
			}
		}
	}
#endif
	return read_key_slow(c, pp, k, kn, exp);
}

/* After a member's value: ',' (returns JS_OK with *more=true) or the closing
 * byte (more=false). */
static inline int member_end(struct cx *c, const char **pp, char close, bool *more)
{
	const char *p = *pp;
	if (p + 2 < c->end) {
		if (*p == ',') {
			p += 1 + (p[1] == ' ');
			if (*p == '"') { /* the next key follows at once */
				*more = true;
				*pp = p;
				return JS_OK;
			}
			p = *pp;
		} else if (*p == close) {
			*more = false;
			*pp = p + 1;
			return JS_OK;
		}
	}
	int rc = ws_need(c, &p, close == '}' ? "',' or '}'" : "',' or ']'");
	if (rc)
		return rc;
	if (*p == ',') {
		*more = true;
		p++;
	} else if (*p == close) {
		*more = false;
		p++;
	} else {
		return fail_at(c, p, NULL, close == '}' ? "',' or '}'" : "',' or ']'");
	}
	*pp = p;
	return JS_OK;
}

static inline bool is_dig(char ch)
{
	return (unsigned char)(ch - '0') < 10;
}

/* True when ch can continue a number token (so a fast path must not stop). */
static inline bool num_continues(char ch)
{
	return is_dig(ch) || ch == '.' || ch == 'e' || ch == 'E';
}

/* Eight ASCII digits at p (little-endian load) as a number, SWAR style. */
static ALWAYS_INLINE bool eight_digits(const char *p, uint32_t *v)
{
	uint64_t x;
	memcpy(&x, p, 8);
	if ((((x & 0xf0f0f0f0f0f0f0f0ull) |
	      (((x + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) >> 4)) !=
	     0x3333333333333333ull))
		return false;
	x = ((x & 0x0f0f0f0f0f0f0f0full) * 2561) >> 8;
	x = ((x & 0x00ff00ff00ff00ffull) * 6553601) >> 16;
	*v = (uint32_t)(((x & 0x0000ffff0000ffffull) * 42949672960001ull) >> 32);
	return true;
}

/* Accumulates up to max digits at *pp into *acc; returns how many. */
static ALWAYS_INLINE int digits(const char **pp, const char *end, uint64_t *acc, int max)
{
	const char *p = *pp;
	uint64_t a = *acc;
	uint32_t v8;
	int n = 0;
	(void)end; /* the zero padding stops both loops */
	while (n + 8 <= max && eight_digits(p, &v8)) {
		a = a * 100000000u + v8;
		p += 8;
		n += 8;
	}
	/* The rest, fewer than 8 digits (most numbers: ids, durations,
	 * fractions), in one branch-free step instead of a loop that
	 * mispredicts its exit: k = the leading digit bytes of the next 8,
	 * moved to the top of the word so that the missing leading digits
	 * read as zeros. */
	static const uint64_t pow10[9] = { 1, 10, 100, 1000, 10000, 100000,
					   1000000, 10000000, 100000000 };
	uint64_t x;
	memcpy(&x, p, 8);
	uint64_t t = ((x & 0xf0f0f0f0f0f0f0f0ull) |
		      (((x + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) >> 4)) ^
		     0x3333333333333333ull; /* zero bytes: digits */
	int k = t ? __builtin_ctzll(t) >> 3 : 8;
	if (k > max - n)
		k = max - n;
	if (k > 0) {
		x = (x << (64 - 8 * k)) & 0x0f0f0f0f0f0f0f0full;
		x = (x * 2561) >> 8;
		x = ((x & 0x00ff00ff00ff00ffull) * 6553601) >> 16;
		x = ((x & 0x0000ffff0000ffffull) * 42949672960001ull) >> 32;
		a = a * pow10[k] + x;
		p += k;
		n += k;
	}
	*pp = p;
	*acc = a;
	return n;
}

/* The first byte at or after p that is not an ASCII digit, 8 bytes a step
 * (no branch per digit); the window's zero padding stops it. */
static ALWAYS_INLINE const char *digit_run(const char *p)
{
	for (;;) {
		uint64_t x;
		memcpy(&x, p, 8);
		uint64_t t = ((x & 0xf0f0f0f0f0f0f0f0ull) |
			      (((x + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) >> 4)) ^
			     0x3333333333333333ull; /* zero bytes: digits */
		if (t)
			return p + (__builtin_ctzll(t) >> 3);
		p += 8;
	}
}

/* Fast path for the common integer: -?(0|[1-9][0-9]{0,17}) followed, within
 * the window, by a byte that cannot continue a number. Anything else (more
 * digits, fraction, exponent, end of window) returns false and the caller
 * takes the general path, which also reports errors. */
static ALWAYS_INLINE bool fast_int(const char **pp, const char *end, int64_t *v)
{
	const char *p = *pp, *s;
	bool neg = *p == '-';
	uint64_t acc = 0;
	p += neg;
	s = p;
	int n = digits(&p, end, &acc, 18);
	if (n == 0 || p >= end || num_continues(*p) || (*s == '0' && n > 1))
		return false;
	*v = neg ? -(int64_t)acc : (int64_t)acc;
	*pp = p;
	return true;
}

/* Fast path for times: -?digits{1,16}(.digits{1,3})? then a delimiter. */
static ALWAYS_INLINE bool fast_time(const char **pp, const char *end, int64_t *ns)
{
	const char *p = *pp, *s;
	bool neg = *p == '-';
	uint64_t acc = 0;
	p += neg;
	s = p;
	int n = digits(&p, end, &acc, 16);
	if (n == 0 || p >= end || (*s == '0' && n > 1) ||
	    acc > ((uint64_t)INT64_MAX - 999) / 1000)
		return false;
	acc *= 1000;
	if (*p == '.') {
		static const uint64_t scale[4] = { 0, 100, 10, 1 };
		uint64_t frac = 0;
		p++;
		int f = digits(&p, end, &frac, 3);
		if (f == 0 || p >= end)
			return false;
		acc += frac * scale[f];
	}
	if (num_continues(*p))
		return false;
	*ns = neg ? -(int64_t)acc : (int64_t)acc;
	*pp = p;
	return true;
}

static ALWAYS_INLINE int skip_value(struct cx *c, const char **pp)
{
	const char *p = *pp, *q;
	bool esc;
	if (*p == '"') {
		if (js_string_end(p + 1, c->end, &q, &esc) != JS_OK)
			return JS_MORE;
		*pp = q + 1;
		return JS_OK;
	}
	if (*p == '[') { /* a flat array of small integers: [64, 1, 1] */
		const char *s = p + 1;
		for (;;) {
			s = js_ws(s, c->end);
			if (*s == '-')
				s++;
			if (!is_dig(*s) || (*s == '0' && is_dig(s[1])))
				break;
			while (is_dig(*s))
				s++;
			if (num_continues(*s))
				break;
			s = js_ws(s, c->end);
			if (s >= c->end)
				break;
			if (*s == ']') {
				*pp = s + 1;
				return JS_OK;
			}
			if (*s != ',')
				break;
			s++;
		}
	} else if (is_dig(*p)) { /* a plain non-negative number: digits[.digits] */
		const char *s = p;
		p = digit_run(p);
		if (p < c->end && *p == '.')
			p = digit_run(p + 1);
		if (p < c->end && !num_continues(*p) && p[-1] != '.' &&
		    !(*s == '0' && is_dig(s[1]))) {
			*pp = p;
			return JS_OK;
		}
	}
	return js_skip_value(pp, c->end, c->final, &c->r->st, &c->e);
}

/* A value that is a string: *s, *n, *esc describe its body, *pp moves past it. */
static inline int read_string(struct cx *c, const char **pp, const char **s, size_t *n,
			      bool *esc)
{
	const char *q;
	if (js_string_end(*pp + 1, c->end, &q, esc) != JS_OK)
		return MORE_OR(c, c->end, "'\"' closing the string");
	*s = *pp + 1;
	*n = (size_t)(q - *s);
	*pp = q + 1;
	return JS_OK;
}

/* A number value: *s..*e its text, *kind a JS_NUM_*. */
static inline int read_number(struct cx *c, const char **pp, const char **s,
			      const char **e, int *kind)
{
	int rc = js_scan_number(*pp, c->end, c->final, e, kind, &c->e);
	if (rc)
		return rc;
	*s = *pp;
	*pp = *e;
	return JS_OK;
}

static inline bool starts_number(char ch)
{
	return ch == '-' || (unsigned char)(ch - '0') < 10 || ch == 'N' || ch == 'I';
}

/* Reads an integer value into *v; *ok false when the value is not an
 * integer that fits int64 (it is skipped then). */
static ALWAYS_INLINE int read_int_field(struct cx *c, const char **pp, int64_t *v, bool *ok)
{
	*ok = false;
	if (fast_int(pp, c->end, v)) {
		*ok = true;
		return JS_OK;
	}
	if (starts_number(**pp)) {
		const char *s, *e;
		int kind, rc = read_number(c, pp, &s, &e, &kind);
		if (rc)
			return rc;
		if (kind == JS_NUM_INT)
			*ok = js_parse_int64(s, e, v);
		return JS_OK;
	}
	return skip_value(c, pp);
}

static void keep(struct cx *c, int slot, const char *s, size_t n, bool esc)
{
	c->r->kept[slot].s = s;
	c->r->kept[slot].n = n;
	c->r->kept[slot].esc = esc;
	c->r->kept_mask |= 1u << slot;
}

/* A value kept as text: a string (its body) or, for anything else except
 * null, its raw JSON text. Returns whether something was kept. */
static ALWAYS_INLINE int read_text_field(struct cx *c, const char **pp, int slot, bool *kept)
{
	const char *s = *pp, *b;
	size_t n;
	bool esc;
	int rc;
	*kept = false;
	if (*s == '"') {
		rc = read_string(c, pp, &b, &n, &esc);
		if (rc)
			return rc;
		keep(c, slot, b, n, esc);
		*kept = true;
		return JS_OK;
	}
	rc = skip_value(c, pp);
	if (rc)
		return rc;
	if (!(*pp - s == 4 && !memcmp(s, "null", 4))) {
		keep(c, slot, s, (size_t)(*pp - s), false);
		*kept = true;
	}
	return JS_OK;
}

/* pid, tid, id: an integer, or text (string, big or decimal number). */
static ALWAYS_INLINE int read_id(struct cx *c, const char **pp, int slot, struct trace_id *id,
		   bool *present)
{
	*present = false;
	if (fast_int(pp, c->end, &id->num)) {
		*present = true;
		id->is_str = false;
		c->r->kept_mask &= ~(1u << slot);
		return JS_OK;
	}
	if (starts_number(**pp)) {
		const char *s, *e;
		int kind, rc = read_number(c, pp, &s, &e, &kind);
		if (rc)
			return rc;
		*present = true;
		id->is_str = !(kind == JS_NUM_INT && js_parse_int64(s, e, &id->num));
		if (id->is_str) {
			id->num = 0;
			keep(c, slot, s, (size_t)(e - s), false);
		} else {
			c->r->kept_mask &= ~(1u << slot);
		}
		return JS_OK;
	}
	if (**pp == '"') {
		const char *b;
		size_t n;
		bool esc;
		int rc = read_string(c, pp, &b, &n, &esc);
		if (rc)
			return rc;
		*present = true;
		id->is_str = true;
		id->num = 0;
		keep(c, slot, b, n, esc);
		return JS_OK;
	}
	return skip_value(c, pp); /* null, or something odd: absent */
}

/* ts/dur: a number of microseconds, or null (absent). */
static ALWAYS_INLINE int read_time(struct cx *c, const char **pp, int64_t *ns, bool *present,
		     const char *field)
{
	*present = false;
	const char *at = *pp;
	if (fast_time(pp, c->end, ns)) {
		*present = true;
		return JS_OK;
	}
	if (starts_number(*at)) {
		const char *s, *e;
		int kind, rc = read_number(c, pp, &s, &e, &kind);
		if (rc)
			return rc;
		if (kind == JS_NUM_NONFINITE || !js_us_to_ns(s, e, ns))
			return fail_at(c, at,
				       kind == JS_NUM_NONFINITE ? "a non-finite time"
								: "a time out of the int64 ns range",
				       field);
		*present = true;
		return JS_OK;
	}
	if (*at == 'n')
		return skip_value(c, pp);
	return fail_at(c, at, NULL, field);
}

#define SV_AT(field) offsetof(struct trace_event, field)
#define ID_SV_AT(field) (offsetof(struct trace_event, field) + offsetof(struct trace_id, str))

/* Where each kept slot goes in struct trace_event. */
static const size_t slot_field[K_NSLOTS] = {
	[K_CAT] = SV_AT(cat), [K_NAME] = SV_AT(name), [K_PID] = ID_SV_AT(pid),
	[K_TID] = ID_SV_AT(tid), [K_ID] = ID_SV_AT(id), [K_ARG_NAME] = SV_AT(arg_name),
	[K_PG_NAME] = SV_AT(pg_name), [K_PG_DESC] = SV_AT(pg_desc),
	[K_PG_RANKS] = SV_AT(pg_ranks), [K_COLLECTIVE] = SV_AT(collective),
	[K_DTYPE] = SV_AT(dtype),
};

/* Materialises the kept strings of the event just parsed into ev: in place
 * (a NUL over the closing quote, the event is never parsed again) or, when
 * the string has escapes, unescaped into the scratch buffer. */
static int commit_strings(struct trace_reader *r, struct trace_event *ev)
{
	unsigned mask = r->kept_mask;
	size_t need = 0;
	r->kept_mask = 0;
	for (unsigned m = mask; m; m &= m - 1) {
		struct kept *k = &r->kept[__builtin_ctz(m)];
		if (k->esc)
			need += k->n + 1;
	}
	if (need > r->scratch_cap) {
		size_t ncap = r->scratch_cap ? r->scratch_cap : 4096;
		while (ncap < need)
			ncap *= 2;
		r->scratch = xrealloc(r->scratch, ncap);
		r->scratch_cap = ncap;
	}
	char *o = r->scratch;
	for (unsigned m = mask; m; m &= m - 1) {
		int i = __builtin_ctz(m);
		struct kept *k = &r->kept[i];
		struct pp_sv *dst = (struct pp_sv *)(void *)((char *)ev + slot_field[i]);
		if (!k->esc) {
			char *w = (char *)(uintptr_t)k->s;
			w[k->n] = '\0';
			dst->p = k->s;
			dst->n = k->n;
		} else {
			size_t n = js_unescape(k->s, k->n, o);
			o[n] = '\0';
			dst->p = o;
			dst->n = n;
			o += n + 1;
		}
	}
	return 0;
}

/* ---- the event -------------------------------------------------------- */

/* The args members an event keeps: what args_key() returns for them (0 for
 * every other key) and where each goes. */
enum {
	A_NAME = 1,
	A_DTYPE,
	A_STREAM,
	A_DEVICE,
	A_GROUP_SIZE,
	A_SORT_INDEX,
	A_CORRELATION,
	A_EXTERNAL_ID,
	A_IN_NELEMS,
	A_OUT_NELEMS,
	A_COLLECTIVE,
	A_PG_NAME,
	A_PG_RANKS,
	A_PG_DESC,
	A_NKEYS
};

static const struct arg_field {
	int slot;     /* a K_* text slot, or -1 */
	size_t field; /* else the int64_t field of struct trace_event ... */
	unsigned bit; /* ... and its TE_* bit */
} arg_fields[A_NKEYS] = {
	[0] = { -1, 0, 0 },
	[A_NAME] = { K_ARG_NAME, 0, 0 },
	[A_DTYPE] = { K_DTYPE, 0, 0 },
	[A_COLLECTIVE] = { K_COLLECTIVE, 0, 0 },
	[A_PG_NAME] = { K_PG_NAME, 0, 0 },
	[A_PG_RANKS] = { K_PG_RANKS, 0, 0 },
	[A_PG_DESC] = { K_PG_DESC, 0, 0 },
	[A_STREAM] = { -1, offsetof(struct trace_event, stream), TE_STREAM },
	[A_DEVICE] = { -1, offsetof(struct trace_event, device), TE_DEVICE },
	[A_GROUP_SIZE] = { -1, offsetof(struct trace_event, group_size), TE_GROUP_SIZE },
	[A_SORT_INDEX] = { -1, offsetof(struct trace_event, sort_index), TE_SORT_INDEX },
	[A_CORRELATION] = { -1, offsetof(struct trace_event, correlation), TE_CORRELATION },
	[A_EXTERNAL_ID] = { -1, offsetof(struct trace_event, external_id), TE_EXTERNAL_ID },
	[A_IN_NELEMS] = { -1, offsetof(struct trace_event, in_nelems), TE_IN_NELEMS },
	[A_OUT_NELEMS] = { -1, offsetof(struct trace_event, out_nelems), TE_OUT_NELEMS },
};

/* The code of key k[0..kn) in a table ending with { NULL, 0 }; 0 when it
 * is not there. A plain scan: the key cache leaves it the first sight of
 * each literal. */
struct key_code {
	const char *key;
	int code;
};

static int key_lookup(const struct key_code *t, const char *k, size_t kn)
{
	for (; t->key; t++)
		if (strlen(t->key) == kn && !memcmp(t->key, k, kn))
			return t->code;
	return 0;
}

static const struct key_code args_keys[] = {
	{ "name", A_NAME },
	{ "dtype", A_DTYPE },
	{ "stream", A_STREAM },
	{ "device", A_DEVICE },
	{ "Group size", A_GROUP_SIZE },
	{ "sort_index", A_SORT_INDEX },
	{ "correlation", A_CORRELATION },
	{ "External id", A_EXTERNAL_ID },
	{ "In msg nelems", A_IN_NELEMS },
	{ "Out msg nelems", A_OUT_NELEMS },
	{ "Collective name", A_COLLECTIVE },
	{ "Process Group Name", A_PG_NAME },
	{ "Process Group Ranks", A_PG_RANKS },
	{ "Process Group Description", A_PG_DESC },
	{ NULL, 0 },
};

/* The A_* code of an args key, 0 when the reader does not keep it. */
static int args_key(const char *k, size_t kn)
{
	return key_lookup(args_keys, k, kn);
}

enum { M_END = -3 }; /* next_member(): the object closed */

/* Moves *pp to the next member's value and returns its key's code. *pp is
 * at the first member's key, or else just after the previous member's
 * value. A member whose bytes from there (the separator, the key, the ':')
 * are an expected literal of the key cache costs one compare; any other
 * goes through member_end() and read_key() and teaches the cache. *at is
 * the cache's trie node (0 at the object's start). Returns M_END after the
 * closing '}' (with *pp after it), or a negated JS_MORE / JS_ERR. */
static ALWAYS_INLINE int next_member(struct cx *c, struct key_cache *kc, unsigned *at,
				     const char **pp, int (*code)(const char *, size_t))
{
	const char *lit = *pp, *kq, *k;
	size_t kn;
	bool more;
	int which = c->r->no_kc ? -1 : key_cache_match(kc, at, pp, c->end);
	if (which >= 0)
		return which;
	int rc = 0;
	if (*at && (rc = member_end(c, pp, '}', &more)) == 0) { /* not the first member */
		if (!more)
			return M_END;
		rc = ws_need(c, pp, "a key string");
	}
	kq = *pp;
	if (rc || (rc = read_key(c, pp, &k, &kn, "a key string")))
		return -rc;
	which = code(k, kn);
	/* k is in the window just after the quote unless it was unescaped */
	*at = key_cache_learn(kc, *at, lit, k == kq + 1 ? (size_t)(*pp - lit) : 0, which);
	return which;
}

static int parse_args(struct cx *c, const char **pp, struct trace_event *ev)
{
	const char *p = *pp + 1;
	bool ok, kept;
	unsigned at = 0; /* key cache trie node */
	int rc;
	if ((rc = ws_need(c, &p, "a key or '}'")))
		return rc;
	if (*p == '}') {
		*pp = p + 1;
		return JS_OK;
	}
	for (;;) {
		int which = next_member(c, &c->r->kc_args, &at, &p, args_key);
		if (which == M_END)
			break;
		if (which < 0)
			return -which;
		const struct arg_field *f = &arg_fields[which];
		if (f->bit) {
			if ((rc = read_int_field(c, &p, (int64_t *)(void *)((char *)ev + f->field),
						 &ok)))
				return rc;
			if (ok)
				ev->has |= f->bit;
			else
				ev->has &= ~f->bit;
		} else if (f->slot >= 0) {
			if ((rc = read_text_field(c, &p, f->slot, &kept)))
				return rc;
		} else if ((rc = skip_value(c, &p))) {
			return rc;
		}
	}
	*pp = p;
	return JS_OK;
}

/* What an event holds before its members are read, copied 16 bytes at a
 * time: a memset or struct copy of its 320 bytes becomes `rep stos`, whose
 * start-up costs more than the event's other stores together. */
static const struct trace_event empty_event = {
	.cat.p = "",
	.name.p = "",
	.pid.str.p = "",
	.tid.str.p = "",
	.id.str.p = "",
	.arg_name.p = "",
	.pg_name.p = "",
	.pg_desc.p = "",
	.pg_ranks.p = "",
	.collective.p = "",
	.dtype.p = "",
};

#ifdef __SSE2__
static ALWAYS_INLINE void clear_event(struct trace_event *ev)
{
	_Static_assert(sizeof(*ev) % 16 == 0, "struct trace_event: whole 16-byte words");
	const __m128i *src = (const __m128i *)(const void *)&empty_event;
	__m128i *dst = (__m128i *)(void *)ev;
#pragma GCC unroll 32
	for (size_t i = 0; i < sizeof(*ev) / 16; i++)
		_mm_storeu_si128(dst + i, _mm_loadu_si128(src + i));
}
#else
static ALWAYS_INLINE void clear_event(struct trace_event *ev)
{
	*ev = empty_event;
}
#endif

/* The codes parse_event() dispatches on; 0 for a key it skips. */
enum { E_PH = 1, E_TS, E_ID, E_BP, E_CAT, E_PID, E_TID, E_DUR, E_NAME, E_ARGS };

static const struct key_code event_keys[] = {
	{ "ph", E_PH },     { "ts", E_TS },     { "id", E_ID },   { "bp", E_BP },
	{ "cat", E_CAT },   { "pid", E_PID },   { "tid", E_TID }, { "dur", E_DUR },
	{ "name", E_NAME }, { "args", E_ARGS }, { NULL, 0 },
};

static int event_key(const char *k, size_t kn)
{
	return key_lookup(event_keys, k, kn);
}

/* Parses the event object at *pp ('{') into ev. */
static int parse_event(struct cx *c, const char **pp, struct trace_event *ev)
{
	const char *p = *pp + 1, *s;
	size_t n;
	bool present, esc, kept;
	unsigned at = 0; /* key cache trie node */
	int rc;

	clear_event(ev);
	ev->offset = off_of(c->r, *pp);
	c->r->kept_mask = 0;

	if ((rc = ws_need(c, &p, "a key or '}'")))
		return rc;
	if (*p == '}') {
		*pp = p + 1;
		return JS_OK;
	}
	for (;;) {
		int which = next_member(c, &c->r->kc_event, &at, &p, event_key);
		if (which == M_END)
			break;
		if (which < 0)
			return -which;
		switch (which) {
		case E_PH:
		case E_BP:
			if (*p == '"') {
				if ((rc = read_string(c, &p, &s, &n, &esc)))
					return rc;
				char v = n ? s[0] : 0;
				if (esc) {
					char t[8];
					v = n <= sizeof(t) && js_unescape(s, n, t) ? t[0] : 0;
				}
				if (which == E_PH)
					ev->ph = v;
				else
					ev->bp = v;
			} else if ((rc = skip_value(c, &p))) {
				return rc;
			}
			break;
		case E_TS:
			if ((rc = read_time(c, &p, &ev->ts_ns, &present, "a number of µs in ts")))
				return rc;
			ev->has = present ? ev->has | TE_TS : ev->has & ~(unsigned)TE_TS;
			break;
		case E_DUR:
			if ((rc = read_time(c, &p, &ev->dur_ns, &present, "a number of µs in dur")))
				return rc;
			ev->has = present ? ev->has | TE_DUR : ev->has & ~(unsigned)TE_DUR;
			break;
		case E_ID:
			if ((rc = read_id(c, &p, K_ID, &ev->id, &present)))
				return rc;
			ev->has = present ? ev->has | TE_ID : ev->has & ~(unsigned)TE_ID;
			break;
		case E_PID:
			if ((rc = read_id(c, &p, K_PID, &ev->pid, &present)))
				return rc;
			ev->has = present ? ev->has | TE_PID : ev->has & ~(unsigned)TE_PID;
			break;
		case E_TID:
			if ((rc = read_id(c, &p, K_TID, &ev->tid, &present)))
				return rc;
			ev->has = present ? ev->has | TE_TID : ev->has & ~(unsigned)TE_TID;
			break;
		case E_CAT:
			if (*p == '"') {
				if ((rc = read_text_field(c, &p, K_CAT, &kept)))
					return rc;
			} else if ((rc = skip_value(c, &p))) {
				return rc;
			}
			break;
		case E_NAME:
			if (*p == '"') {
				if ((rc = read_text_field(c, &p, K_NAME, &kept)))
					return rc;
			} else if ((rc = skip_value(c, &p))) {
				return rc;
			}
			break;
		case E_ARGS:
			if (*p == '{') {
				ev->has |= TE_ARGS;
				if ((rc = parse_args(c, &p, ev)))
					return rc;
			} else if ((rc = skip_value(c, &p))) {
				return rc;
			}
			break;
		default:
			if ((rc = skip_value(c, &p)))
				return rc;
		}
	}
	*pp = p;
	return JS_OK;
}

/* ---- header values ---------------------------------------------------- */

/* Copies a string value (unescaped, cut to HDR_STR_MAX) into *dst. */
static int read_hdr_string(struct cx *c, const char **pp, char **dst, const char **pub)
{
	const char *s;
	size_t n;
	bool esc;
	if (**pp != '"')
		return skip_value(c, pp);
	int rc = read_string(c, pp, &s, &n, &esc);
	if (rc)
		return rc;
	if (n > HDR_STR_MAX)
		n = HDR_STR_MAX;
	char *m = xmalloc(n + 1);
	n = esc ? js_unescape(s, n, m) : (memcpy(m, s, n), n);
	m[n] = '\0';
	free(*dst);
	*dst = m;
	*pub = m;
	return JS_OK;
}

static int read_hdr_int(struct cx *c, const char **pp, int64_t *v, bool *has)
{
	bool ok;
	int rc = read_int_field(c, pp, v, &ok);
	if (!rc && ok)
		*has = true;
	return rc;
}

static int parse_distributed_info(struct cx *c, const char **pp)
{
	struct trace_reader *r = c->r;
	const char *p = *pp, *k;
	size_t kn;
	bool more = true;
	int rc;
	if (*p != '{')
		return skip_value(c, pp);
	p++;
	if ((rc = ws_need(c, &p, "a key or '}'")))
		return rc;
	if (*p == '}') {
		*pp = p + 1;
		return JS_OK;
	}
	while (more) {
		if ((rc = read_key(c, &p, &k, &kn, "a key string")))
			return rc;
		if (kn == 4 && !memcmp(k, "rank", 4))
			rc = read_hdr_int(c, &p, &r->hdr.rank, &r->hdr.has_rank);
		else if (kn == 10 && !memcmp(k, "world_size", 10))
			rc = read_hdr_int(c, &p, &r->hdr.world_size, &r->hdr.has_world_size);
		else if (kn == 7 && !memcmp(k, "backend", 7))
			rc = read_hdr_string(c, &p, &r->hdr_backend, &r->hdr.backend);
		else if (kn == 12 && !memcmp(k, "nccl_version", 12))
			rc = read_hdr_string(c, &p, &r->hdr_nccl, &r->hdr.nccl_version);
		else
			rc = skip_value(c, &p);
		if (rc || (rc = member_end(c, &p, '}', &more)))
			return rc;
		if (more && (rc = ws_need(c, &p, "a key string")))
			return rc;
	}
	*pp = p;
	return JS_OK;
}

/* deviceProperties: counts entries and takes the first entry's name. */
static int parse_device_properties(struct cx *c, const char **pp)
{
	struct trace_reader *r = c->r;
	const char *p = *pp, *k;
	size_t kn;
	bool more = true, omore;
	int rc, count = 0;
	if (*p != '[')
		return skip_value(c, pp);
	p++;
	if ((rc = ws_need(c, &p, "a value or ']'")))
		return rc;
	if (*p == ']') {
		*pp = p + 1;
		r->hdr.device_count = 0;
		return JS_OK;
	}
	while (more) {
		if (*p == '{' && count == 0) {
			p++;
			if ((rc = ws_need(c, &p, "a key or '}'")))
				return rc;
			omore = *p != '}';
			if (!omore)
				p++;
			while (omore) {
				if ((rc = read_key(c, &p, &k, &kn, "a key string")))
					return rc;
				if (kn == 4 && !memcmp(k, "name", 4))
					rc = read_hdr_string(c, &p, &r->hdr_device,
							     &r->hdr.device_name);
				else
					rc = skip_value(c, &p);
				if (rc || (rc = member_end(c, &p, '}', &omore)))
					return rc;
				if (omore && (rc = ws_need(c, &p, "a key string")))
					return rc;
			}
		} else if ((rc = skip_value(c, &p))) {
			return rc;
		}
		count++;
		if ((rc = member_end(c, &p, ']', &more)))
			return rc;
		if (more && (rc = ws_need(c, &p, "a value")))
			return rc;
	}
	r->hdr.device_count = count;
	*pp = p;
	return JS_OK;
}

static int parse_header_value(struct cx *c, const char **pp, const char *k, size_t kn)
{
	struct trace_reader *r = c->r;
	if (kn == 13 && !memcmp(k, "schemaVersion", 13))
		return read_hdr_int(c, pp, &r->hdr.schema_version, &r->hdr.has_schema);
	if (kn == 19 && !memcmp(k, "baseTimeNanoseconds", 19))
		return read_hdr_int(c, pp, &r->hdr.base_time_ns, &r->hdr.has_base_time);
	if (kn == 15 && !memcmp(k, "distributedInfo", 15))
		return parse_distributed_info(c, pp);
	if (kn == 16 && !memcmp(k, "deviceProperties", 16))
		return parse_device_properties(c, pp);
	if (kn == 9 && !memcmp(k, "traceName", 9))
		return read_hdr_string(c, pp, &r->hdr_name, &r->hdr.trace_name);
	return skip_value(c, pp);
}

/* ---- the top level ---------------------------------------------------- */

enum { U_DONE = 3, U_EVENT = 4 };

/* Parses one unit from buf[pos]. Returns JS_OK (a header unit was consumed),
 * U_EVENT, U_DONE, JS_MORE or JS_ERR (c->e set). */
static int parse_unit(struct trace_reader *r, struct cx *c, struct trace_event *ev)
{
	const char *p = r->buf + r->pos, *k;
	size_t kn;
	int rc;

	switch (r->state) {
	case S_START:
		if (r->base_off + r->pos == 0) {
			size_t have = r->len;
			if (have < 3 && !c->final && !memcmp(p, "\xef\xbb\xbf", have))
				return JS_MORE;
			if (have >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
				p += 3;
		}
		p = js_ws(p, c->end);
		if (p >= c->end)
			return JS_MORE;
		if (*p == '{') {
			r->state = S_KEY;
		} else if (*p == '[') {
			r->state = S_EVENTS;
			r->bare_array = true;
			r->hdr.saw_trace_events = true;
		} else {
			return fail_at(c, p, NULL, "'{' opening a trace object");
		}
		r->first = true;
		r->pos = (size_t)(p + 1 - r->buf);
		return JS_OK;
	case S_KEY:
		if ((rc = ws_need(c, &p, "a key string")))
			return rc;
		if (*p == '}') {
			r->state = S_END;
			r->pos = (size_t)(p + 1 - r->buf);
			return JS_OK;
		}
		if ((rc = read_key(c, &p, &k, &kn, "a key string or '}'")))
			return rc;
		if (kn == 11 && !memcmp(k, "traceEvents", 11)) {
			if (*p != '[')
				return fail_at(c, p, NULL, "'[' opening traceEvents");
			r->hdr.saw_trace_events = true;
			r->state = S_EVENTS;
			r->first = true;
			r->pos = (size_t)(p + 1 - r->buf);
			return JS_OK;
		}
		if ((rc = parse_header_value(c, &p, k, kn)))
			return rc;
		r->state = S_AFTER;
		r->pos = (size_t)(p - r->buf);
		return JS_OK;
	case S_AFTER:
		if ((rc = ws_need(c, &p, "',' or '}'")))
			return rc;
		if (*p == ',')
			r->state = S_KEY; /* a trailing ",}" is tolerated */
		else if (*p == '}')
			r->state = S_END;
		else
			return fail_at(c, p, NULL, "',' or '}' after a top-level value");
		r->pos = (size_t)(p + 1 - r->buf);
		return JS_OK;
	case S_EVENTS:
		if ((rc = ws_need(c, &p, r->first ? "an event or ']'" : "',' or ']'")))
			return rc;
		if (*p == ']') {
			r->state = r->bare_array ? S_END : S_AFTER;
			r->pos = (size_t)(p + 1 - r->buf);
			return JS_OK;
		}
		if (!r->first) {
			if (*p != ',')
				return fail_at(c, p, NULL, "',' or ']' after an event");
			p++;
			if ((rc = ws_need(c, &p, "an event object")))
				return rc;
			if (*p == ']') { /* trailing comma, tolerated */
				r->state = r->bare_array ? S_END : S_AFTER;
				r->pos = (size_t)(p + 1 - r->buf);
				return JS_OK;
			}
		}
		if (*p != '{')
			return fail_at(c, p, NULL, "an event object '{'");
		if ((rc = parse_event(c, &p, ev)))
			return rc;
		if ((rc = commit_strings(r, ev)))
			return JS_ERR; /* r->rc already set */
		r->first = false;
		r->pos = (size_t)(p - r->buf);
		return U_EVENT;
	case S_END:
		p = js_ws(p, c->end);
		if (p < c->end)
			return fail_at(c, p, "data after the end of the trace", "end of input");
		r->pos = (size_t)(p - r->buf);
		if (!c->final)
			return JS_MORE;
		if (!r->hdr.saw_trace_events)
			return fail_at(c, p, "no traceEvents key in the trace object",
				       "a Kineto trace");
		return U_DONE;
	}
	return fail_at(c, p, "internal state", "none");
}

/* The input ended (or its gzip stream broke) inside a unit. */
static int on_truncation(struct trace_reader *r)
{
	uint64_t end = r->base_off + r->len;
	if (r->salvage && (r->state == S_EVENTS || r->state == S_AFTER || r->state == S_KEY ||
			   r->state == S_END)) {
		r->truncated = true;
		r->rc = 1;
		return 0;
	}
	if (r->gz_bad)
		return set_err(r, PP_EPARSE, end,
			       "corrupt gzip data (%s) after %llu complete events, expected a "
			       "valid gzip stream",
			       gunzip_error(r->gzs), (unsigned long long)r->events);
	const char *where = r->state == S_EVENTS ? "inside traceEvents" : "inside the trace object";
	if (r->state == S_EVENTS && !r->first)
		where = "inside an event";
	return set_err(r, PP_ETRUNC, end,
		       "%s ends %s (at byte %llu) after %llu complete events, expected the "
		       "rest of the trace",
		       r->gz_cut ? "gzip stream" : "file", where,
		       (unsigned long long)(r->base_off + r->pos), (unsigned long long)r->events);
}

int trace_reader_next(struct trace_reader *r, struct trace_event *ev)
{
	if (r->rc)
		return r->rc < 0 ? r->rc : 0;
	for (;;) {
		struct cx c = { r, r->buf + r->len, r->eof && !r->gz_bad && !r->gz_cut, { 0 } };
		int rc = parse_unit(r, &c, ev);
		if (rc == U_EVENT) {
			r->events++;
			return 1;
		}
		if (rc == U_DONE) {
			r->rc = 1;
			return 0;
		}
		if (rc == JS_OK)
			continue;
		if (rc == JS_ERR) {
			if (r->rc < 0)
				return r->rc;
			set_js_err(r, &c.e);
			return r->rc;
		}
		/* JS_MORE */
		if (r->eof) {
			if (r->state == S_END && !r->gz_bad) /* cannot happen: final */
				return set_err(r, PP_EPARSE, r->base_off + r->len,
					       "internal end state, expected none");
			if (r->state == S_START && !r->gz_bad && !r->gz_cut)
				return set_err(r, PP_EPARSE, r->base_off + r->len,
					       "%s, expected a JSON object",
					       r->base_off + r->len == 0 ? "empty input"
									 : "only whitespace");
			int trc = on_truncation(r);
			return trc < 0 ? trc : 0;
		}
		if ((rc = refill(r)) < 0)
			return rc;
	}
}

/* ---- accessors -------------------------------------------------------- */

const struct trace_header *trace_reader_header(const struct trace_reader *r)
{
	return &r->hdr;
}

const char *trace_reader_error(const struct trace_reader *r)
{
	return r->rc < 0 ? r->err : "";
}

uint64_t trace_reader_events(const struct trace_reader *r)
{
	return r->events;
}

uint64_t trace_reader_bytes_in(const struct trace_reader *r)
{
	return r->file_bytes;
}

uint64_t trace_reader_bytes_text(const struct trace_reader *r)
{
	return r->base_off + r->len;
}

bool trace_reader_truncated(const struct trace_reader *r)
{
	return r->truncated;
}

bool trace_reader_is_gzip(const struct trace_reader *r)
{
	return r->gz;
}

const char *trace_reader_gunzip(const struct trace_reader *r)
{
	return r->gzs ? gunzip_name(r->gzs) : "";
}

bool pp_sv_ieq(struct pp_sv s, const char *lit)
{
	size_t i;
	for (i = 0; i < s.n && lit[i]; i++) {
		unsigned char a = (unsigned char)s.p[i], b = (unsigned char)lit[i];
		if (a != b && (a | 0x20) != (b | 0x20))
			return false;
		if (a != b && !((a | 0x20) >= 'a' && (a | 0x20) <= 'z'))
			return false;
	}
	return i == s.n && !lit[i];
}
