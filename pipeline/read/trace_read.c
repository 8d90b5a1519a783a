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

#include "trace_int.h"
#include "trace_values.h"
#include "util/pp.h"
#include "util/strbuf.h"

/* ---- errors ---------------------------------------------------------- */

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
	return set_err(r, PP_EPARSE, off_of(r, e->at), "found %s, expected %s", found, e->expected);
}

/* ---- input ----------------------------------------------------------- */

static void fit_scratch(struct trace_reader *r);

/* One unit does not fit max_event bytes. */
static int too_long(struct trace_reader *r, uint64_t off)
{
	return set_err(r, PP_EPARSE, off,
		       "one event or value is longer than %zu bytes, expected a smaller one "
		       "(raise max_event_bytes)",
		       r->max_event);
}

/* After a read of the stream: the file bytes read, and at the end of the
 * data eof and how it ended. */
static int gz_status(struct trace_reader *r)
{
	int err_no;
	r->file_bytes = gzstream_bytes_in(r->gzs);
	switch (gzstream_status(r->gzs, &err_no)) {
	case GZS_MORE: return 0;
	case GZS_EIO:
		return set_err(r, PP_EIO, off_of(r, r->buf + r->len),
			       "read failed: %s, expected a readable file", strerror(err_no));
	case GZS_CUT: r->gz_cut = true; break;
	case GZS_BAD: r->gz_bad = true; break;
	}
	r->eof = true;
	return 0;
}

/* Inflates into buf[len..cap), or takes a plain file's bytes read ahead
 * (gzstream_new_raw()). Sets eof at the end of the data. */
static int fill_gz(struct trace_reader *r)
{
	r->len += gzstream_read(r->gzs, r->buf + r->len, r->cap - r->len);
	return gz_status(r);
}

/* Reading ahead: the next window is the next chunk read ahead, lent in
 * place, with this window's unread end copied into the room before it, so
 * that the chunk itself is not copied (a tenth of the parsing thread's
 * work on gzip). 1 when that end does not fit the room: the reader's own
 * buffer then takes it (refill()). */
static int refill_lent(struct trace_reader *r)
{
	size_t tail = r->len - r->pos;
	char *p;
	if (tail > gzstream_room(r->gzs))
		return 1;
	size_t n = gzstream_take(r->gzs, &p);
	if (n) { /* the window before stays valid until the next take */
		memcpy(p - tail, r->buf + r->pos, tail);
		if (!r->lent)
			r->own = r->buf;
		r->lent = true;
		r->base_off += r->pos;
		r->buf = p - tail;
		r->len = tail + n;
		r->pos = 0;
		memset(r->buf + r->len, 0, JS_PAD);
	}
	return gz_status(r);
}

/* From a lent window back to the reader's own buffer, with the window's
 * unread end (grown to hold it, up to max_event). */
static int own_again(struct trace_reader *r)
{
	size_t tail = r->len - r->pos;
	if (tail > r->cap) {
		size_t ncap = r->cap;
		while (ncap < tail)
			ncap *= 2;
		if (ncap > r->max_event)
			ncap = r->max_event;
		if (ncap < tail)
			return too_long(r, off_of(r, r->buf + r->pos));
		r->own = xrealloc(r->own, ncap + JS_PAD);
		r->cap = ncap;
		fit_scratch(r);
	}
	memcpy(r->own, r->buf + r->pos, tail);
	r->base_off += r->pos;
	r->buf = r->own;
	r->own = NULL;
	r->lent = false;
	r->len = tail;
	r->pos = 0;
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
	ssize_t k = pp_read_full(r->fd, r->buf + r->len, r->cap - r->len);
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
 * (a mapped one shows up to a page more than cap, a lent one lend_max). */
static void fit_scratch(struct trace_reader *r)
{
	size_t win = r->cap > r->lend_max ? r->cap : r->lend_max;
	size_t need = win + (r->mapped ? page_size() : 0) + SCRATCH_SLACK;
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
	if (r->lend) {
		int rc = refill_lent(r);
		if (rc <= 0)
			return rc;
	}
	if (r->lent && own_again(r))
		return r->rc;
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->base_off += r->pos;
		r->len -= r->pos;
		r->pos = 0;
	}
	if (r->len == r->cap) {
		if (r->cap >= r->max_event)
			return too_long(r, r->base_off);
		size_t ncap = r->cap * 2 > r->max_event ? r->max_event : r->cap * 2;
		r->buf = xrealloc(r->buf, ncap + JS_PAD);
		r->cap = ncap;
		fit_scratch(r);
	}
	int rc = r->gzs ? fill_gz(r) : fill_plain(r);
	memset(r->buf + r->len, 0, JS_PAD);
	return rc;
}

/* ---- open/close ------------------------------------------------------ */

/* Reads ahead on a thread (gzstream_read_ahead(), chunks of the window's
 * size up to its maximum) and lends its chunks as windows when such a
 * window fits max_event: a unit bigger than max_event is an error whichever
 * way the file is read. */
static void start_ahead(struct trace_reader *r)
{
	if (!gzstream_read_ahead(r->gzs, r->window))
		return;
	size_t most = gzstream_room(r->gzs) + gzstream_chunk(r->gzs);
	if (most <= r->max_event) {
		r->lend = true;
		r->lend_max = most;
		fit_scratch(r);
	}
}

static void alloc_window(struct trace_reader *r)
{
	r->cap = r->window < r->max_event ? r->window : r->max_event;
	if (r->mem && r->memlen < r->cap) /* a small input needs no big window */
		r->cap = r->memlen < 4096 ? (r->max_event < 4096 ? r->max_event : 4096) : r->memlen;
	r->buf = xmalloc(r->cap + JS_PAD);
	memset(r->buf, 0, JS_PAD);
	fit_scratch(r);
}

const char tr_none[8] = "";

/* The event parsers of this build, widest first (trace_events.h). */
static const struct tr_level *const tr_levels[] = {
#if defined(__x86_64__)
	&tr_level_avx512,
	&tr_level_avx2,
	&tr_level_sse2,
#elif defined(__aarch64__)
	&tr_level_neon,
#endif
	&tr_level_scalar,
};
enum { NLEVELS = sizeof(tr_levels) / sizeof(tr_levels[0]) };

/* Whether this CPU runs level lv (as the Makefile compiles it). */
static bool level_runs(const struct tr_level *lv)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
		    __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
	if (lv == &tr_level_avx512)
		return avx2 && __builtin_cpu_supports("avx512bw") &&
		       __builtin_cpu_supports("avx512vl");
	if (lv == &tr_level_avx2)
		return avx2;
#endif
	(void)lv;
	return true;
}

/* The level a reader takes unless one is asked for: the first from
 * tr_levels[DEFAULT_LEVEL] on that this CPU runs. On x86-64 that is AVX2,
 * not AVX-512: on the Intel Xeon of docs/reader.md ("Numbers") AVX-512 ran
 * 2-3 % slower for the same work (its wider compares and copies bought
 * nothing), so it runs only when asked for. */
#if defined(__x86_64__)
enum { DEFAULT_LEVEL = 1 }; /* tr_level_avx2 */
#else
enum { DEFAULT_LEVEL = 0 };
#endif

/* The first level from tr_levels[i] on that this CPU runs. */
static size_t level_from(size_t i)
{
	while (i + 1 < NLEVELS && !level_runs(tr_levels[i]))
		i++;
	return i;
}

/* The level named want (or by $PP_SIMD) when this CPU runs it, else the
 * widest below it that it runs; the default level when none is named. */
static const struct tr_level *choose_level(const char *want)
{
	size_t i = DEFAULT_LEVEL;
	if (!want || !*want)
		want = getenv("PP_SIMD");
	for (size_t j = 0; want && j < NLEVELS; j++)
		if (!strcmp(tr_levels[j]->name, want))
			i = j;
	return tr_levels[level_from(i)];
}

size_t trace_reader_simd_levels(const char **names, size_t max)
{
	size_t def = level_from(DEFAULT_LEVEL), n = 0;
	if (max)
		names[0] = tr_levels[def]->name;
	n++;
	for (size_t i = 0; i < NLEVELS; i++)
		if (i != def && level_runs(tr_levels[i])) {
			if (n < max)
				names[n] = tr_levels[i]->name;
			n++;
		}
	return n;
}

const char *trace_reader_simd(const struct trace_reader *r)
{
	return r->lv->name;
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
	r->read_ahead = o && o->read_thread;
	r->lv = choose_level(o ? o->simd : NULL);
	r->sep = 1; /* no separator learned: sep_mask 0 matches nothing */
	r->no_map = (o && o->no_map) || (getenv("PP_NO_MMAP") && *getenv("PP_NO_MMAP"));
	r->window = o && o->window_bytes ? o->window_bytes : BUF_INIT;
	r->map_window = o && o->window_bytes ? o->window_bytes : MAP_INIT;
	r->state = S_START;
	r->kc_event = key_cache_new();
	r->kc_args = key_cache_new();
	r->hdr.backend = r->hdr.nccl_version = r->hdr.device_name = r->hdr.trace_name = "";
	return r;
}

struct trace_reader *trace_reader_open(const char *path, const struct trace_reader_opts *opts)
{
	struct trace_reader *r = reader_new(path, opts);
	alloc_window(r);
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		set_err(r, PP_EIO, 0, "cannot open: %s, expected a readable file", strerror(errno));
		return r;
	}
#ifdef POSIX_FADV_SEQUENTIAL
	posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	unsigned char magic[2];
	ssize_t k = pp_read_full(r->fd, magic, 2);
	if (k < 0) {
		set_err(r, PP_EIO, 0, "read failed: %s, expected a readable file", strerror(errno));
		return r;
	}
	struct stat st;
	bool gz = k == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
	if (!gz && k == 2 && !r->no_map && !r->read_ahead && fstat(r->fd, &st) == 0 &&
	    S_ISREG(st.st_mode)) {
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
		r->gzs = gzstream_new(r->fd, magic, 2, r->gunzip);
		if (r->read_ahead)
			start_ahead(r); /* else inflated here */
		r->file_bytes = 2;
	} else {
		memcpy(r->buf, magic, (size_t)k);
		r->len = (size_t)k;
		memset(r->buf + r->len, 0, JS_PAD);
		r->file_bytes = (uint64_t)k;
		if (k < 2)
			r->eof = true;
		else if (r->read_ahead) { /* read() on a thread, ahead of the parser */
			r->gzs = gzstream_new_raw(r->fd, (uint64_t)k);
			start_ahead(r);
		}
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

static void free_pgs(struct trace_reader *r)
{
	for (size_t i = 0; i < r->hdr.npgs; i++) {
		free((char *)r->pgs[i].name);
		free((char *)r->pgs[i].desc);
		free((char *)r->pgs[i].ranks);
	}
	free(r->pgs);
	r->pgs = NULL;
	r->pgs_alloc = r->hdr.npgs = 0;
	r->hdr.pgs = NULL;
}

void trace_reader_close(struct trace_reader *r)
{
	if (!r)
		return;
	gzstream_free(r->gzs); /* first: its thread may be reading fd */
	if (r->fd >= 0)
		close(r->fd);
	if (r->mapped)
		unmap_window(r);
	else
		free(r->lent ? r->own : r->buf);
	free(r->scratch);
	free(r->hdr_backend);
	free(r->hdr_nccl);
	free(r->hdr_device);
	free(r->hdr_name);
	free_pgs(r);
	js_stack_release(&r->st);
	key_cache_free(r->kc_event);
	key_cache_free(r->kc_args);
	free(r->path);
	free(r);
}

/* ---- unit parsing helpers -------------------------------------------- */

/* Reads a key at *pp ('"' expected), then ':' and the whitespace after it.
 * On JS_OK (*k, *kn) is the key (unescaped into keytmp when it had escapes) and
 * *pp the first byte of the value. */
static __attribute__((noinline)) int read_key_slow(struct cx *c, const char **pp, const char **k,
						   size_t *kn, const char *exp)
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
			*k = ""; /* long escaped keys match nothing we read */
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
			     _mm_or_si128(_mm_cmpeq_epi8(w, dq), _mm_cmpeq_epi8(w, bs)))
		     << 16;
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

/* ---- members the key cache did not predict -------------------------- */

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
 * object's end), then the key read byte by byte; teaches the cache. */
int tr_member_slow(struct cx *c, struct key_cache *kc, unsigned *at, const char **pp,
		   int (*code)(const char *, size_t), const char *obj, unsigned wholes)
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

/* The header's walkers: each_member() calls fn on every member of the
 * object at *pp (its value at *pp after the key), each_element() on every
 * element of the array at *pp; anything else is skipped. */
typedef int member_fn(struct cx *c, const char **pp, const char *k, size_t kn, void *ctx);
typedef int element_fn(struct cx *c, const char **pp, void *ctx);

/* each_member() (mfn, in '{'...'}') and each_element() (efn, in '['...']')
 * in one walk: the same brackets, commas and errors. */
static int each_item(struct cx *c, const char **pp, member_fn *mfn, element_fn *efn, void *ctx)
{
	const char open = mfn ? '{' : '[', close = mfn ? '}' : ']';
	const char *p = *pp, *k;
	size_t kn;
	bool more;
	int rc;
	if (*p != open)
		return skip_value(c, pp);
	p++;
	if ((rc = ws_need(c, &p, mfn ? "a key or '}'" : "a value or ']'")))
		return rc;
	more = *p != close;
	if (!more)
		p++;
	while (more) {
		if (!mfn)
			rc = efn(c, &p, ctx);
		else if (!(rc = read_key(c, &p, &k, &kn, "a key string")))
			rc = mfn(c, &p, k, kn, ctx);
		if (rc || (rc = member_end(c, &p, close, &more)))
			return rc;
		if (more && (rc = ws_need(c, &p, mfn ? "a key string" : "a value")))
			return rc;
	}
	*pp = p;
	return JS_OK;
}

static int each_member(struct cx *c, const char **pp, member_fn *fn, void *ctx)
{
	return each_item(c, pp, fn, NULL, ctx);
}

static int each_element(struct cx *c, const char **pp, element_fn *fn, void *ctx)
{
	return each_item(c, pp, NULL, fn, ctx);
}

/* A list of ranks being formatted as "[0, 1]"; ok false once an element
 * is not an integer. */
struct rank_list {
	struct strbuf sb;
	bool ok;
};

static int rank_element(struct cx *c, const char **pp, void *ctx)
{
	struct rank_list *l = ctx;
	int64_t v;
	bool one;
	int rc = read_int_field(c, pp, &v, &one);
	if (!rc && one && l->ok)
		strbuf_addf(&l->sb, "%s%lld", l->sb.len > 1 ? ", " : "", (long long)v);
	l->ok &= one;
	return rc;
}

/* One entry of pg_config being read. */
struct pg_entry {
	char *name, *desc;
	struct rank_list ranks;
	bool has_ranks;
};

static int pg_member(struct cx *c, const char **pp, const char *k, size_t kn, void *ctx)
{
	struct pg_entry *e = ctx;
	const char *dummy;
	if (kn == 7 && !memcmp(k, "pg_name", 7))
		return read_hdr_string(c, pp, &e->name, &dummy);
	if (kn == 7 && !memcmp(k, "pg_desc", 7))
		return read_hdr_string(c, pp, &e->desc, &dummy);
	if (kn == 5 && !memcmp(k, "ranks", 5)) {
		strbuf_reset(&e->ranks.sb);
		strbuf_addch(&e->ranks.sb, '[');
		e->ranks.ok = **pp == '[';
		e->has_ranks = true;
		return each_element(c, pp, rank_element, &e->ranks);
	}
	return skip_value(c, pp);
}

/* An element of pg_config: an object becomes a struct trace_pg. */
static int pg_element(struct cx *c, const char **pp, void *ctx)
{
	struct trace_reader *r = ctx;
	struct pg_entry e = { NULL, NULL, { STRBUF_INIT, false }, false };
	bool object = **pp == '{';
	int rc = each_member(c, pp, pg_member, &e);
	if (!rc && object) {
		bool ok = e.has_ranks && e.ranks.ok;
		if (ok)
			strbuf_addch(&e.ranks.sb, ']');
		PP_GROW(r->pgs, r->hdr.npgs, r->pgs_alloc, 16);
		r->pgs[r->hdr.npgs++] = (struct trace_pg){
			e.name ? e.name : xstrdup(""),
			e.desc ? e.desc : xstrdup(""),
			ok ? strbuf_detach(&e.ranks.sb, NULL) : xstrdup(""),
		};
		r->hdr.pgs = r->pgs;
		e.name = e.desc = NULL;
	}
	free(e.name);
	free(e.desc);
	strbuf_release(&e.ranks.sb);
	return rc;
}

static int distributed_member(struct cx *c, const char **pp, const char *k, size_t kn, void *ctx)
{
	struct trace_reader *r = ctx;
	if (kn == 4 && !memcmp(k, "rank", 4))
		return read_hdr_int(c, pp, &r->hdr.rank, &r->hdr.has_rank);
	if (kn == 10 && !memcmp(k, "world_size", 10))
		return read_hdr_int(c, pp, &r->hdr.world_size, &r->hdr.has_world_size);
	if (kn == 7 && !memcmp(k, "backend", 7))
		return read_hdr_string(c, pp, &r->hdr_backend, &r->hdr.backend);
	if (kn == 12 && !memcmp(k, "nccl_version", 12))
		return read_hdr_string(c, pp, &r->hdr_nccl, &r->hdr.nccl_version);
	if (kn == 8 && !memcmp(k, "pg_count", 8))
		return read_hdr_int(c, pp, &r->hdr.pg_count, &r->hdr.has_pg_count);
	if (kn == 9 && !memcmp(k, "pg_config", 9)) {
		/* The process-group table. Parsed again whole when the value
		 * did not fit the window (JS_MORE): the earlier entries go. */
		free_pgs(r);
		return each_element(c, pp, pg_element, r);
	}
	return skip_value(c, pp);
}

static int parse_distributed_info(struct cx *c, const char **pp)
{
	return each_member(c, pp, distributed_member, c->r);
}

/* deviceProperties: counts entries and takes the first entry's name. */
struct devices {
	struct trace_reader *r;
	int count;
};

static int device_member(struct cx *c, const char **pp, const char *k, size_t kn, void *ctx)
{
	struct trace_reader *r = ctx;
	if (kn == 4 && !memcmp(k, "name", 4))
		return read_hdr_string(c, pp, &r->hdr_device, &r->hdr.device_name);
	return skip_value(c, pp);
}

static int device_element(struct cx *c, const char **pp, void *ctx)
{
	struct devices *d = ctx;
	int rc = d->count == 0 && **pp == '{' ? each_member(c, pp, device_member, d->r)
					      : skip_value(c, pp);
	d->count++;
	return rc;
}

static int parse_device_properties(struct cx *c, const char **pp)
{
	struct devices d = { c->r, 0 };
	if (**pp != '[')
		return skip_value(c, pp);
	int rc = each_element(c, pp, device_element, &d);
	if (!rc)
		c->r->hdr.device_count = d.count;
	return rc;
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
		/* Here (a window's end, mostly: every few MiB) the literal
		 * that starts this event comes first at the event's first node:
		 * a trace opens with metadata events, whose first key ("name")
		 * would else be tried in vain before every other event's. */
		key_cache_front(r->kc_event, 0, p + 1);
		if ((rc = r->lv->parse_event(c, &p, ev)))
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
			       gzstream_error(r->gzs), (unsigned long long)r->events);
	const char *where = r->state == S_EVENTS ? "inside traceEvents" : "inside the trace object";
	if (r->state == S_EVENTS && !r->first)
		where = "inside an event";
	return set_err(r, PP_ETRUNC, end,
		       "%s ends %s (at byte %llu) after %llu complete events, expected the "
		       "rest of the trace",
		       r->gz_cut ? "gzip stream" : "file", where,
		       (unsigned long long)(r->base_off + r->pos), (unsigned long long)r->events);
}

/* trace_reader_next() past an event whole in the window: the units that
 * are no event, the window's end, the end and the errors. Apart, so that
 * the common case saves and restores no more registers than it uses; the
 * event parsers' next() ends here when it cannot read the event itself. */
__attribute__((noinline)) int tr_next_unit(struct trace_reader *r, struct trace_event *ev)
{
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

int trace_reader_next(struct trace_reader *r, struct trace_event *ev)
{
	if (r->rc)
		return r->rc < 0 ? r->rc : 0;
	/* The common case first: the next event, whole in the window, read
	 * by the level's next() (a tail call), which leaves anything else
	 * (the window's end included) to tr_next_unit(). */
	if (r->state == S_EVENTS && !r->first)
		return r->lv->next(r, ev);
	return tr_next_unit(r, ev);
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
	return r->gz ? gzstream_name(r->gzs) : "";
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
