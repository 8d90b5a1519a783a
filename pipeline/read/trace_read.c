/* trace_read.c — see trace_read.h.
 *
 * Design note.
 *
 * The text lives in one window buf[0..len); buf[pos] is the first byte not
 * yet consumed, and base_off is the text offset of buf[0]. Parsing proceeds
 * in *units*: the trace's opening brace, one top-level key with its value,
 * or one event (with the comma before it). A unit is parsed from buf[pos]
 * against the bytes at hand; when it runs past len the unit parser returns
 * JS_MORE, nothing is committed, the window moves on to the unit's start
 * with more text after it (doubling when one unit fills it, up to
 * max_event_bytes) and the unit is parsed again from its start. So the only
 * state kept between units is the small top-level state below, and memory
 * is bounded by the largest unit, not the file.
 *
 *   S_START --'{'--> S_KEY --"traceEvents":[--> S_EVENTS --']'--> S_AFTER
 *      |                 ^--- ',' ---- S_AFTER <-- other key: value --'
 *      '--'['(bare array of events)--> S_EVENTS            S_AFTER --'}'--> S_END
 *
 * Windows come three ways: a plain regular file is mapped (read-only, a
 * few MiB at a time: no copy out of the page cache); a pipe, gzip output
 * and memory are read into a buffer, whose unconsumed tail moves to the
 * front at a refill. Every window is followed by JS_PAD zero bytes that the
 * scanners use as a sentinel: the buffer's own, or for a mapped window the
 * zero pages mapped after it (so that a mapped window that is not the
 * file's last ends on a page boundary).
 *
 * A window is never written: the strings an event keeps are copied (and
 * unescaped) into the scratch as they are read, so a unit that is parsed
 * again after a refill sees its own bytes.
 */
#include "trace_read.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gunzip.h"
#include "json_scan.h"
#include "key_cache.h"
#include "util/pp.h"

enum { S_START, S_KEY, S_AFTER, S_EVENTS, S_END, S_DONE };

#define ALWAYS_INLINE inline __attribute__((always_inline))

enum {
	BUF_INIT = 1u << 20, /* initial window (bigger is no faster) */
	MAP_INIT = 4u << 20, /* initial mapped window of a plain file */
	ZIN_SIZE = 1u << 20, /* compressed input chunk */
	HDR_STR_MAX = 4096,  /* header strings are cut to this */
	SCRATCH_SLACK = 64,  /* copy_text() writes up to 15 bytes past a string */
	MAX_EVENT_DEFAULT = 256u << 20
};

/* The strings one event keeps, as slots (a repeated key overwrites). */
enum {
	K_CAT, K_NAME, K_PID, K_TID, K_ID, K_ARG_NAME, K_PG_NAME, K_PG_DESC, K_PG_RANKS,
	K_COLLECTIVE, K_DTYPE, K_NSLOTS
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
	/* A plain regular file is mapped, not read: buf then points into a
	 * reservation of map_size bytes (PROT_READ) holding the file's bytes
	 * [base_off, base_off + len) and zero pages after them, and is never
	 * written (kept strings are copied out). */
	bool mapped;
	char *map;
	size_t map_size;
	uint64_t file_size;
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
	bool no_map;                        /* opts.no_map or $PP_NO_MMAP */
	size_t window, map_window;          /* the first window read, mapped */
	char *scratch;                      /* the current event's strings, NUL-terminated */
	size_t scratch_cap; /* >= the window + SCRATCH_SLACK: never grows mid-event */
	char *scr;          /* its first free byte */
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

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* The scratch holds one event's kept strings, so it follows the window
 * (a mapped one shows up to a page more than cap). */
static void fit_scratch(struct trace_reader *r)
{
	size_t need = r->cap + (r->mapped ? page_size() : 0) + SCRATCH_SLACK;
	if (r->scratch_cap < need) {
		r->scratch_cap = need;
		free(r->scratch);
		r->scratch = xmalloc(r->scratch_cap);
	}
}

static uint64_t page_floor(uint64_t n)
{
	return n & ~(uint64_t)(page_size() - 1);
}

static void unmap_window(struct trace_reader *r)
{
	if (r->map)
		munmap(r->map, r->map_size);
	r->map = NULL;
	r->map_size = 0;
}

/* Maps the file from the unconsumed unit on, at least cap bytes of it up to
 * a page boundary: the file's pages over the reservation's start (replacing
 * the previous window's, so that memory stays about cap), zero pages after
 * them (the JS_PAD sentinel; the rest of the file's last page reads as
 * zeros too). Returns nonzero when mapping failed: the caller read()s. */
static int remap(struct trace_reader *r)
{
	uint64_t start = r->base_off + r->pos;
	struct stat st;
	if (fstat(r->fd, &st) == 0) /* follows a file that grows */
		r->file_size = (uint64_t)st.st_size;
	uint64_t moff = page_floor(start), pg = page_size();
	uint64_t end = page_floor(start + r->cap + pg - 1);
	if (end > r->file_size)
		end = r->file_size;
	if (end < start)
		end = start; /* the file shrank under us: its end is here */
	size_t lead = (size_t)(start - moff), flen = (size_t)(end - moff);
	size_t fmap = (size_t)page_floor(flen + pg - 1);
	size_t need = (size_t)page_floor(lead + r->cap + pg - 1) + pg; /* pg >= JS_PAD */
	if (need > r->map_size) {
		unmap_window(r);
		void *m = mmap(NULL, need, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return -1;
		r->map = m;
		r->map_size = need;
	}
	if ((fmap && mmap(r->map, fmap, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, r->fd,
			  (off_t)moff) == MAP_FAILED) ||
	    mmap(r->map + fmap, r->map_size - fmap, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		unmap_window(r);
		return -1;
	}
	r->buf = r->map;
	r->base_off = moff;
	r->pos = lead;
	r->len = flen;
	r->file_bytes = end;
	r->eof = end == r->file_size;
#ifdef POSIX_FADV_WILLNEED
	if (!r->eof) /* the next window, read ahead while this one is parsed */
		posix_fadvise(r->fd, (off_t)end, (off_t)r->cap, POSIX_FADV_WILLNEED);
#endif
	return 0;
}

/* A mapping failed: the rest of the file is read() into a buffer. */
static int unmap_to_read(struct trace_reader *r)
{
	uint64_t start = r->base_off + r->pos;
	unmap_window(r);
	r->mapped = false;
	r->buf = xmalloc(r->cap + JS_PAD);
	r->base_off = start;
	r->pos = r->len = 0;
	r->file_bytes = start;
	if (lseek(r->fd, (off_t)start, SEEK_SET) < 0)
		return set_err(r, PP_EIO, start, "seek failed: %s, expected a readable file",
			       strerror(errno));
	return 0;
}

/* Moves the unconsumed tail to the front, grows the window if one unit fills
 * it, and reads more text (or maps the next window). */
static int refill(struct trace_reader *r)
{
	if (r->mapped) {
		/* One unit fills the window: it doubles, but never to
		 * max_event; the window's end would then fall inside a page,
		 * so a unit that big is read() as below, where the cap is
		 * checked. */
		bool grow = r->len - r->pos >= r->cap;
		if (grow && r->cap * 2 < r->max_event) {
			r->cap *= 2;
			fit_scratch(r);
			grow = false;
		}
		if (!grow && remap(r) == 0)
			return 0;
		if (unmap_to_read(r))
			return r->rc;
	}
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
		fit_scratch(r);
	}
	int rc = r->gz ? fill_gz(r) : fill_plain(r);
	memset(r->buf + r->len, 0, JS_PAD);
	return rc;
}

/* ---- open/close ------------------------------------------------------ */

static void alloc_window(struct trace_reader *r)
{
	r->cap = r->window < r->max_event ? r->window : r->max_event;
	if (r->mem && r->memlen < r->cap) /* a small input needs no big window */
		r->cap = r->memlen < 4096 ? (r->max_event < 4096 ? r->max_event : 4096) : r->memlen;
	r->buf = xmalloc(r->cap + JS_PAD);
	memset(r->buf, 0, JS_PAD);
	fit_scratch(r);
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
	r->no_map = (o && o->no_map) || (getenv("PP_NO_MMAP") && *getenv("PP_NO_MMAP"));
	r->window = o && o->window_bytes ? o->window_bytes : BUF_INIT;
	r->map_window = o && o->window_bytes ? o->window_bytes : MAP_INIT;
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
	struct stat st;
	bool gz = k == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
	if (!gz && k == 2 && !r->no_map && fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		free(r->buf);
		r->buf = NULL;
		r->mapped = true;
		r->file_size = (uint64_t)st.st_size;
		r->cap = r->map_window < r->max_event / 2 ? r->map_window : r->max_event / 2;
		fit_scratch(r);
		if (remap(r))
			unmap_to_read(r);
		return r;
	}
	if (gz) {
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
	if (r->mapped)
		unmap_window(r);
	else
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
	struct trace_event *ev; /* the event being parsed */
	int rc;                 /* next_member()'s JS_MORE or JS_ERR */
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

/* Numbers, 8 bytes at a time (SWAR): the text's bytes are loaded as a
 * little-endian word, so byte i of the word is the text's byte i. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the digit SWAR needs little-endian");

static ALWAYS_INLINE uint64_t load8(const char *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
	return x;
}

/* The high bit of every byte of x that is not an ASCII digit; exact up to
 * the first such byte (a borrow or carry only reaches the bytes after it),
 * which is all that its callers look at. */
static ALWAYS_INLINE uint64_t nondigits(uint64_t x)
{
	return ((x - 0x3030303030303030ull) | (x + 0x4646464646464646ull)) & 0x8080808080808080ull;
}

/* How many ASCII digits x starts with (0..8). */
static ALWAYS_INLINE unsigned lead_digits(uint64_t x)
{
	uint64_t t = nondigits(x);
	return t ? (unsigned)__builtin_ctzll(t) >> 3 : 8;
}

/* The value of the first k (1..8) bytes of x, all ASCII digits: moved to
 * the top of the word (the bytes below read as leading zeros), then
 * combined in pairs, quads and eights with two multiplications. */
static ALWAYS_INLINE uint64_t digits_value(uint64_t x, unsigned k)
{
	x = (x - 0x3030303030303030ull) << (64 - 8 * k);
	x = x * 10 + (x >> 8);
	x = ((x & 0x000000ff000000ffull) * (100 + (1000000ull << 32)) +
	     ((x >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32))) >>
	    32;
	return x;
}

static const uint64_t pow10[9] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000 };

/* The up to 16 digits at *pp as a number; *n how many (0: none). *pp moves
 * past them. A 17th digit is left for the caller to see. */
static ALWAYS_INLINE uint64_t digits16(const char **pp, unsigned *n)
{
	const char *p = *pp;
	uint64_t x = load8(p), v;
	unsigned k = lead_digits(x);
	if (k < 8) {
		*n = k;
		*pp = p + k;
		return k ? digits_value(x, k) : 0;
	}
	v = digits_value(x, 8);
	x = load8(p + 8);
	k = lead_digits(x);
	if (k)
		v = v * pow10[k] + digits_value(x, k);
	*n = 8 + k;
	*pp = p + 8 + k;
	return v;
}

/* True when ch, a byte after digits, goes on with the number. */
static ALWAYS_INLINE bool num_goes_on(char ch)
{
	return ch == '.' || (ch | 0x20) == 'e' || is_dig(ch);
}

/* The first byte at or after p that is not an ASCII digit, 8 bytes a step
 * (no branch per digit); the window's zero padding stops it. */
static ALWAYS_INLINE const char *digit_run(const char *p)
{
	for (;;) {
		uint64_t t = nondigits(load8(p));
		if (t)
			return p + (__builtin_ctzll(t) >> 3);
		p += 8;
	}
}

/* Fast path for the common integer: -?(0|[1-9][0-9]{0,15}) followed,
 * within the window, by a byte that cannot continue a number. Anything else
 * (more digits, fraction, exponent, end of window) returns false and the
 * caller takes the general path, which also reports errors. */
static ALWAYS_INLINE bool fast_int(const char **pp, const char *end, int64_t *v)
{
	const char *p = *pp, *s;
	bool neg = *p == '-';
	unsigned n;
	p += neg;
	s = p;
	uint64_t acc = digits16(&p, &n);
	if (n == 0 || p >= end || num_goes_on(*p) || (*s == '0' && n > 1))
		return false;
	*v = neg ? -(int64_t)acc : (int64_t)acc;
	*pp = p;
	return true;
}

/* Fast path for times: -?digits{1,16}(.digits{1,3})? then a delimiter. */
static ALWAYS_INLINE bool fast_time(const char **pp, const char *end, int64_t *ns)
{
	static const uint64_t scale[4] = { 0, 100, 10, 1 };
	const char *p = *pp, *s;
	bool neg = *p == '-';
	unsigned n;
	p += neg;
	s = p;
	uint64_t acc = digits16(&p, &n);
	if (n == 0 || (*s == '0' && n > 1) || acc > ((uint64_t)INT64_MAX - 999) / 1000)
		return false;
	acc *= 1000;
	if (*p == '.') {
		uint64_t x = load8(p + 1);
		unsigned f = lead_digits(x);
		if (f == 0 || f > 3)
			return false;
		acc += digits_value(x, f) * scale[f];
		p += 1 + f;
	}
	if (p >= end || num_goes_on(*p))
		return false;
	*ns = neg ? -(int64_t)acc : (int64_t)acc;
	*pp = p;
	return true;
}

/* The end of a value that a fast path skips (a string, a plain non-negative
 * number, a flat array of integers such as [64, 1, 1]), or NULL for any
 * other value or one that the window cuts: js_skip_value() decides then. */
static ALWAYS_INLINE const char *skip_fast(const char *p, const char *end)
{
	const char *q;
	bool esc;
	if (*p == '"')
		return js_string_end(p + 1, end, &q, &esc) == JS_OK ? q + 1 : NULL;
	if (*p == '[') {
		const char *s = p + 1;
		for (;;) {
			s = js_ws(s, end);
			if (*s == '-')
				s++;
			if (!is_dig(*s) || (*s == '0' && is_dig(s[1])))
				return NULL;
			while (is_dig(*s))
				s++;
			if (num_continues(*s))
				return NULL;
			s = js_ws(s, end);
			if (s >= end)
				return NULL;
			if (*s == ']')
				return s + 1;
			if (*s != ',')
				return NULL;
			s++;
		}
	}
	if (is_dig(*p)) { /* digits[.digits] */
		q = digit_run(p);
		if (q < end && *q == '.')
			q = digit_run(q + 1);
		if (q < end && !num_continues(*q) && q[-1] != '.' && !(*p == '0' && is_dig(p[1])))
			return q;
	}
	return NULL;
}

static ALWAYS_INLINE int skip_value(struct cx *c, const char **pp)
{
	const char *q = skip_fast(*pp, c->end);
	if (q) {
		*pp = q;
		return JS_OK;
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

#define SV_AT(field) offsetof(struct trace_event, field)
#define ID_SV_AT(field) (offsetof(struct trace_event, field) + offsetof(struct trace_id, str))

/* Where each kept slot goes in struct trace_event. */
static const size_t slot_field[K_NSLOTS] = {
	[K_CAT] = SV_AT(cat),           [K_NAME] = SV_AT(name),
	[K_PID] = ID_SV_AT(pid),        [K_TID] = ID_SV_AT(tid),
	[K_ID] = ID_SV_AT(id),          [K_ARG_NAME] = SV_AT(arg_name),
	[K_PG_NAME] = SV_AT(pg_name),   [K_PG_DESC] = SV_AT(pg_desc),
	[K_PG_RANKS] = SV_AT(pg_ranks), [K_COLLECTIVE] = SV_AT(collective),
	[K_DTYPE] = SV_AT(dtype),
};

/* Copies n bytes from s to o 16 at a time: reads up to 15 bytes past s + n
 * (a string in the window: its padding) and writes as many past o + n (the
 * scratch's slack). */
static ALWAYS_INLINE void copy_text(char *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i += 16)
		memcpy(o + i, s + i, 16);
}

/* Keeps s[0..n) (unescaped when esc) as the event's slot: a copy in the
 * scratch, NUL-terminated, so the window is never written and an event
 * parsed again after a refill sees its own bytes. The kept texts of one
 * event are disjoint parts of its text, each with its key before it, so
 * they fit the scratch (scratch_cap). */
static ALWAYS_INLINE void keep(struct cx *c, int slot, const char *s, size_t n, bool esc)
{
	struct pp_sv *dst = (struct pp_sv *)(void *)((char *)c->ev + slot_field[slot]);
	char *o = c->r->scr;
	if (esc)
		n = js_unescape(s, n, o);
	else
		copy_text(o, s, n);
	o[n] = '\0';
	dst->p = o;
	dst->n = n;
	c->r->scr = o + n + 1;
}

/* An id given as an integer: no text. */
static ALWAYS_INLINE void id_num(struct trace_id *id)
{
	id->is_str = false;
	id->str.p = "";
	id->str.n = 0;
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
		id_num(id);
		return JS_OK;
	}
	if (starts_number(**pp)) {
		const char *s, *e;
		int kind, rc = read_number(c, pp, &s, &e, &kind);
		if (rc)
			return rc;
		*present = true;
		if (kind == JS_NUM_INT && js_parse_int64(s, e, &id->num)) {
			id_num(id);
		} else {
			id->is_str = true;
			id->num = 0;
			keep(c, slot, s, (size_t)(e - s), false);
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

/* Runs a step that moves a position through its address on a copy q_ of
 * p, so that p itself never has its address taken and stays in a register
 * through the member loops below. */
#define STEP(call)                  \
	do {                        \
		const char *q_ = p; \
		if ((rc = (call)))  \
			return rc;  \
		p = q_;             \
	} while (0)

enum { M_FAIL = KC_END - 1 }; /* next_member(): c->rc says why */

static int fail_member(struct cx *c, int rc)
{
	c->rc = rc;
	return M_FAIL;
}

/* After a key learned anew (x, whose literal starts at lit): when its value
 * at v is one that a whole literal can stand for (a string without
 * escapes, an integer, or for a skipped key any value that skip_fast()
 * skips) and the key's code is in wholes (bits), x becomes whole. */
static void learn_whole(struct cx *c, struct kc_next *x, const char *lit, const char *v, int which,
			unsigned wholes)
{
	const char *e = v, *q;
	bool esc;
	int64_t num;
	if (!(wholes >> which & 1))
		return;
	if (*v == '"') {
		if (js_string_end(v + 1, c->end, &q, &esc) == JS_OK && !esc)
			key_cache_whole(x, lit, (size_t)(q + 1 - lit), KC_VSTR, 0, v + 1,
					(size_t)(q - v - 1));
	} else if (fast_int(&e, c->end, &num)) {
		key_cache_whole(x, lit, (size_t)(e - lit), KC_VNUM, num, v, (size_t)(e - v));
	} else if (which == 0 && (e = skip_fast(v, c->end))) {
		key_cache_whole(x, lit, (size_t)(e - lit), KC_VSKIP, 0, "", 0);
	}
}

/* A member that the key cache did not predict: the separator (or the
 * object's end), then the key read byte by byte; teaches the cache. As
 * next_member(). */
static __attribute__((noinline)) int member_slow(struct cx *c, struct key_cache *kc, unsigned *at,
						 const char **pp, int (*code)(const char *, size_t),
						 const char *obj, unsigned wholes)
{
	const char *lit = *pp, *kq, *k;
	struct kc_next *fresh;
	size_t kn;
	bool more;
	int rc;
	if (*pp == obj) { /* the first member, or the '}' of an empty object */
		if ((rc = ws_need(c, pp, "a key or '}'")))
			return fail_member(c, rc);
		if (**pp == '}') {
			(*pp)++;
			return KC_END;
		}
	} else {
		if ((rc = member_end(c, pp, '}', &more)))
			return fail_member(c, rc);
		if (!more) {
			key_cache_learn(kc, *at, lit, (size_t)(*pp - lit), KC_END, &fresh);
			return KC_END;
		}
		if ((rc = ws_need(c, pp, "a key string")))
			return fail_member(c, rc);
	}
	kq = *pp;
	if ((rc = read_key(c, pp, &k, &kn, "a key string")))
		return fail_member(c, rc);
	int which = code(k, kn);
	/* k is in the window just after the quote unless it was unescaped;
	 * without the cache the member loops stay off the trie */
	*at = c->r->no_kc ? KC_LOST
			  : key_cache_learn(kc, *at, lit, k == kq + 1 ? (size_t)(*pp - lit) : 0,
					    which, &fresh);
	if (!c->r->no_kc && fresh)
		learn_whole(c, fresh, lit, *pp, which, wholes);
	return which;
}

/* Moves *pp to the next member's value and returns its key's code. *pp is
 * at the first member's key, or else just after the previous member's
 * value. A member whose bytes from there (the separator, the key, the ':')
 * are an expected literal of the key cache costs one compare, and so does
 * the object's end; anything else takes member_slow(). *at is the cache's
 * trie node, obj the object's first byte after '{', wholes the key codes
 * whose values may become part of a literal. Returns KC_END after the
 * closing '}' (with *pp after it), a code | KC_WHOLE after a whole literal
 * (*xp: its value), or M_FAIL with c->rc JS_MORE or JS_ERR: every code is
 * at most KC_END, so that a switch on it needs no range check. */
static ALWAYS_INLINE int next_member(struct cx *c, struct key_cache *kc, unsigned *at,
				     const char **pp, int (*code)(const char *, size_t),
				     const char *obj, unsigned wholes, const struct kc_next **xp)
{
	const struct kc_next *x = key_cache_find(kc, *at, *pp);
	if (x) {
		*pp += x->len;
		*at = x->node;
		*xp = x;
		return x->which;
	}
	const char *q = *pp;
	unsigned a = *at;
	int which = member_slow(c, kc, &a, &q, code, obj, wholes);
	*pp = q;
	*at = a;
	return which;
}

/* Up to 8 bytes of s and its length, packed (for key_cache_branch()). A
 * kept string is followed by its NUL and the scratch's slack, so 8 bytes
 * are readable. */
static ALWAYS_INLINE uint64_t sv_key(struct pp_sv s)
{
	uint64_t x = load8(s.p);
	if (s.n < 8)
		x &= (1ull << (8 * s.n)) - 1;
	return x ^ (uint64_t)s.n << 56;
}

/* A string value kept in slot: JS_OK, or JS_MORE when the window cuts it. */
static ALWAYS_INLINE int keep_string(struct cx *c, const char **pp, int slot)
{
	const char *q;
	bool esc;
	if (js_string_end(*pp + 1, c->end, &q, &esc) != JS_OK)
		return JS_MORE;
	keep(c, slot, *pp + 1, (size_t)(q - *pp - 1), esc);
	*pp = q + 1;
	return JS_OK;
}

/* An args member read from a whole literal: as parse_args() reads it. */
static ALWAYS_INLINE void whole_arg(struct trace_event *ev, const struct arg_field *f,
				    const struct kc_next *x)
{
	if (f->bit) { /* an integer, or else absent */
		if (x->vkind == KC_VNUM) {
			*(int64_t *)(void *)((char *)ev + f->field) = x->num;
			ev->has |= f->bit;
		} else {
			ev->has &= ~f->bit;
		}
	} else if (f->slot >= 0 && x->vkind != KC_VSKIP) { /* a string, or a number's text */
		struct pp_sv *dst = (struct pp_sv *)(void *)((char *)ev + slot_field[f->slot]);
		dst->p = x->val;
		dst->n = x->vlen;
	}
}

/* Parses the args object at *pp ('{'); at: the key cache's node to start
 * from (one per kind of event). */
static int parse_args(struct cx *c, const char **pp, struct trace_event *ev, unsigned at)
{
	const char *p = *pp + 1, *obj = p, *q;
	const struct kc_next *x = NULL;
	int rc;
	for (;;) {
		int which = next_member(c, &c->r->kc_args, &at, &p, args_key, obj, ~0u, &x);
		if (which == KC_END)
			break;
		if (which == M_FAIL)
			return c->rc;
		if (which & KC_WHOLE) {
			whole_arg(ev, &arg_fields[which & ~KC_WHOLE], x);
			continue;
		}
		const struct arg_field *f = &arg_fields[which];
		if (f->bit) {
			int64_t *v = (int64_t *)(void *)((char *)ev + f->field);
			bool ok;
			if (fast_int(&p, c->end, v)) {
				ev->has |= f->bit;
				continue;
			}
			STEP(read_int_field(c, &q_, v, &ok));
			ev->has = ok ? ev->has | f->bit : ev->has & ~f->bit;
		} else if (f->slot >= 0) {
			bool kept;
			if (*p == '"') {
				if ((rc = keep_string(c, &p, f->slot)))
					return rc;
				continue;
			}
			STEP(read_text_field(c, &q_, f->slot, &kept));
		} else if ((q = skip_fast(p, c->end))) {
			p = q;
		} else {
			STEP(js_skip_value(&q_, c->end, c->final, &c->r->st, &c->e));
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

/* A ts or dur member's value into *t, and its bit into *has (cleared by
 * null). */
static ALWAYS_INLINE int time_member(struct cx *c, const char **pp, int64_t *t, unsigned bit,
				     const char *what, unsigned *has)
{
	const char *q = *pp;
	bool present;
	int rc;
	if (fast_time(pp, c->end, t)) {
		*has |= bit;
		return JS_OK;
	}
	if ((rc = read_time(c, &q, t, &present, what)))
		return rc;
	*pp = q;
	*has = present ? *has | bit : *has & ~bit;
	return JS_OK;
}

/* An id member (pid, tid, id) into *id, its text kept in slot. */
static ALWAYS_INLINE int id_member(struct cx *c, const char **pp, struct trace_id *id, unsigned bit,
				   int slot, unsigned *has)
{
	const char *q = *pp;
	bool present;
	int rc;
	if (fast_int(pp, c->end, &id->num)) {
		id_num(id);
		*has |= bit;
		return JS_OK;
	}
	if ((rc = read_id(c, &q, slot, id, &present)))
		return rc;
	*pp = q;
	*has = present ? *has | bit : *has & ~bit;
	return JS_OK;
}

/* The event keys whose values a whole literal may hold (not the times,
 * which change from event to event, nor args, an object). */
#define EVENT_WHOLES (~0u & ~(1u << E_TS | 1u << E_DUR | 1u << E_ARGS))

/* An id member read from a whole literal: as id_member() reads it. */
static ALWAYS_INLINE unsigned whole_id(struct trace_id *id, const struct kc_next *x, unsigned bit)
{
	if (x->vkind == KC_VNUM) {
		id->num = x->num;
		id_num(id);
	} else {
		id->is_str = true;
		id->num = 0;
		id->str.p = x->val;
		id->str.n = x->vlen;
	}
	return bit;
}

static int event_key(const char *k, size_t kn)
{
	return key_lookup(event_keys, k, kn);
}

/* Parses the event object at *pp ('{') into ev. */
static int parse_event(struct cx *c, const char **pp, struct trace_event *ev)
{
	const char *p = *pp + 1, *obj = p, *q, *s;
	size_t n;
	bool esc;
	unsigned at = 0;   /* key cache trie node */
	unsigned has = 0;  /* TE_* bits of the members read here (args: ev->has) */
	uint64_t kind = 0; /* the cat value, packed: chooses the args' node */
	const struct kc_next *x = NULL;
	int rc;

	clear_event(ev);
	ev->offset = off_of(c->r, *pp);
	c->ev = ev;
	c->r->scr = c->r->scratch;
	for (;;) {
		int which =
			next_member(c, &c->r->kc_event, &at, &p, event_key, obj, EVENT_WHOLES, &x);
		switch (which & KC_END) {
		case KC_END:
			ev->has |= has;
			*pp = p;
			return JS_OK;
		case E_PH:
		case E_BP:
			if (*p == '"' && p[1] != '"' && p[1] != '\\' && p[2] == '"' &&
			    p + 2 < c->end) { /* "X" */
				*(which == E_PH ? &ev->ph : &ev->bp) = p[1];
				p += 3;
				if (which == E_PH) /* the keys that follow depend on it */
					at = key_cache_branch(&c->r->kc_event, at,
							      (unsigned char)ev->ph);
			} else if (*p == '"') {
				STEP(read_string(c, &q_, &s, &n, &esc));
				char v = n ? s[0] : 0;
				if (esc) {
					char t[8];
					v = n <= sizeof(t) && js_unescape(s, n, t) ? t[0] : 0;
				}
				*(which == E_PH ? &ev->ph : &ev->bp) = v;
			} else {
				STEP(skip_value(c, &q_));
			}
			break;
		case E_TS:
			if ((rc = time_member(c, &p, &ev->ts_ns, TE_TS, "a number of µs in ts",
					      &has)))
				return rc;
			break;
		case E_DUR:
			if ((rc = time_member(c, &p, &ev->dur_ns, TE_DUR, "a number of µs in dur",
					      &has)))
				return rc;
			break;
		case E_ID:
			if ((rc = id_member(c, &p, &ev->id, TE_ID, K_ID, &has)))
				return rc;
			break;
		case E_PID:
			if ((rc = id_member(c, &p, &ev->pid, TE_PID, K_PID, &has)))
				return rc;
			break;
		case E_TID:
			if ((rc = id_member(c, &p, &ev->tid, TE_TID, K_TID, &has)))
				return rc;
			break;
		case E_CAT:
			if (*p == '"') {
				s = p + 1;
				if ((rc = keep_string(c, &p, K_CAT)))
					return rc;
				/* and on it (the window's bytes, not the copy just
				 * written), the keys that follow, and those of args */
				kind = sv_key((struct pp_sv){ s, (size_t)(p - 1 - s) });
				at = key_cache_branch(&c->r->kc_event, at, kind);
			} else {
				STEP(skip_value(c, &q_));
			}
			break;
		case E_NAME:
			if (*p == '"') {
				if ((rc = keep_string(c, &p, K_NAME)))
					return rc;
			} else {
				STEP(skip_value(c, &q_));
			}
			break;
		case E_ARGS:
			if (*p == '{') {
				has |= TE_ARGS;
				STEP(parse_args(c, &q_, ev,
						key_cache_branch(&c->r->kc_args, 0, kind)));
			} else {
				STEP(skip_value(c, &q_));
			}
			break;
		case 0:
			if ((q = skip_fast(p, c->end)))
				p = q;
			else
				STEP(js_skip_value(&q_, c->end, c->final, &c->r->st, &c->e));
			break;
		case KC_WHOLE | E_PH:
		case KC_WHOLE | E_BP:
			if (x->vkind == KC_VSTR) /* else skipped */
				*(which == (KC_WHOLE | E_PH) ? &ev->ph : &ev->bp) = x->val[0];
			break;
		case KC_WHOLE | E_ID: has |= whole_id(&ev->id, x, TE_ID); break;
		case KC_WHOLE | E_PID: has |= whole_id(&ev->pid, x, TE_PID); break;
		case KC_WHOLE | E_TID: has |= whole_id(&ev->tid, x, TE_TID); break;
		case KC_WHOLE | E_CAT:
			if (x->vkind == KC_VSTR) { /* else skipped */
				ev->cat.p = x->val;
				ev->cat.n = x->vlen;
				kind = sv_key(ev->cat);
			}
			break;
		case KC_WHOLE | E_NAME:
			if (x->vkind == KC_VSTR) {
				ev->name.p = x->val;
				ev->name.n = x->vlen;
			}
			break;
		case KC_WHOLE: break;
		case M_FAIL: return c->rc;
		default: /* cannot happen: event_key() knows no other code */
			return fail_at(c, p, "internal key code", "none");
		}
	}
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

/* The separator between two events: ',' then whitespace up to the next '{'
 * within 16 bytes, or NULL (parse_unit() then reads it, or fails). */
static ALWAYS_INLINE const char *next_event_start(const char *p)
{
	if (*p != ',')
		return NULL;
	p++;
#ifdef __SSE2__
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	unsigned brace = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('{')));
	unsigned ws = (unsigned)_mm_movemask_epi8(
		_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
					  _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
			     _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
					  _mm_cmpeq_epi8(v, _mm_set1_epi8('\t')))));
	if (!brace)
		return NULL;
	unsigned k = (unsigned)__builtin_ctz(brace), before = (1u << k) - 1;
	return (ws & before) == before ? p + k : NULL;
#else
	p = js_ws(p, p + 16);
	return *p == '{' ? p : NULL;
#endif
}

int trace_reader_next(struct trace_reader *r, struct trace_event *ev)
{
	if (r->rc)
		return r->rc < 0 ? r->rc : 0;
	if (r->state == S_EVENTS && !r->first) {
		/* The common case first: the next event, whole in the window.
		 * Anything else (the window's end included) is parse_unit()'s. */
		const char *end = r->buf + r->len, *p = next_event_start(r->buf + r->pos);
		if (p && p < end) {
			struct cx c = {
				r, end, r->eof && !r->gz_bad && !r->gz_cut, { 0 }, NULL, 0
			};
			if (parse_event(&c, &p, ev) == JS_OK) {
				r->pos = (size_t)(p - r->buf);
				r->events++;
				return 1;
			}
		}
	}
	for (;;) {
		struct cx c = { r, r->buf + r->len, r->eof && !r->gz_bad && !r->gz_cut, { 0 }, NULL,
				0 };
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
