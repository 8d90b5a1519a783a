/* trace_int.h — the trace reader's insides, shared by trace_read.c and by
 * the event parser compiled once per SIMD level (trace_events.h). Not an
 * API: only pipeline/read/ includes it.
 */
#ifndef TRACE_INT_H
#define TRACE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gunzip.h"
#include "gzstream.h"
#include "json_scan.h"
#include "key_cache.h"
#include "trace_read.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))

enum { S_START, S_KEY, S_AFTER, S_EVENTS, S_END, S_DONE };

enum {
	BUF_INIT = 1u << 20, /* initial window (bigger is no faster) */
	MAP_INIT = 4u << 20, /* initial mapped window of a plain file */
	HDR_STR_MAX = 4096,  /* header strings are cut to this */
	SCRATCH_SLACK = 64,  /* copy_text() writes up to 63 bytes past a string */
	MAX_EVENT_DEFAULT = 256u << 20
};

/* The strings one event keeps, as slots (a repeated key overwrites). */
enum {
	K_CAT,
	K_NAME,
	K_PID,
	K_TID,
	K_ID,
	K_ARG_NAME,
	K_PG_NAME,
	K_PG_DESC,
	K_PG_RANKS,
	K_COLLECTIVE,
	K_DTYPE,
	K_NSLOTS
};

struct tr_level;

struct trace_reader {
	const struct tr_level *lv; /* the event parser of the SIMD level chosen */
	char *path;
	int fd;
	bool mem; /* the source is the caller's memory, not fd */
	const char *membuf;
	size_t memlen, mempos;
	bool gz;
	int gunzip;           /* enum gunzip_impl asked for */
	bool gz_cut;          /* the gzip stream ended early */
	bool gz_bad;          /* corrupt gzip data */
	bool read_ahead;      /* opts.read_thread */
	struct gzstream *gzs; /* gzip, or a plain file read ahead (read_ahead) */
	uint64_t file_bytes;  /* bytes read from the file */

	char *buf;
	size_t cap, len, pos;
	/* Reading ahead (gzs), buf may be a window lent by gzstream_take():
	 * the chunk read ahead, the unread end of the window before copied in
	 * front of it (lend: allowed; lent: now, while own holds the reader's
	 * buffer of cap bytes; lend_max: the most bytes of such a window). */
	bool lend, lent;
	char *own;
	size_t lend_max;
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
	bool first;      /* no element yet in the current array/object */
	bool bare_array; /* the trace is a bare [ ... ] of events */
	int rc;          /* sticky: 0 running, 1 done, <0 error */
	bool truncated;
	uint64_t events;

	struct trace_header hdr;
	char *hdr_backend, *hdr_nccl, *hdr_device, *hdr_name;
	struct trace_pg *pgs; /* hdr.pgs: npgs of pgs_alloc, strings malloc'd */
	size_t pgs_alloc;
	bool dev_name_set;

	struct js_stack st;
	struct key_cache *kc_event, *kc_args; /* keys of events, of their args */
	bool no_kc;                           /* opts.no_key_cache */
	uint64_t sep, sep_mask;               /* the bytes from ',' to '{' between events (a */
	unsigned sep_len;                     /* mask of 0 and sep 1 match nothing) */
	bool no_map;                          /* opts.no_map or $PP_NO_MMAP */
	size_t window, map_window;            /* the first window read, mapped */
	char *scratch;                        /* the current event's strings, NUL-terminated */
	size_t scratch_cap; /* >= the window + SCRATCH_SLACK: never grows mid-event */
	char *scr;          /* its first free byte */
	char keytmp[64];
	char err[1024];
};

static inline uint64_t off_of(const struct trace_reader *r, const char *at)
{
	return r->base_off + (uint64_t)(at - r->buf);
}

/* ---- unit parsing ---------------------------------------------------- */

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

static inline int fail_at(struct cx *c, const char *at, const char *what, const char *expected)
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

enum { M_FAIL = KC_END - 1 }; /* next_member(): c->rc says why */

/* The text of an absent string: "", with 8 readable bytes (trace_read.h). */
extern const char tr_none[8];

/* The event parser of one SIMD level (trace_events.h). */
struct tr_level {
	const char *name; /* "avx512", "avx2", "sse2", "neon" or "scalar" */
	/* trace_reader_next() once in traceEvents past its first event: the
	 * common case itself (",\n  {" and then an event whole in the
	 * window), anything else through tr_next_unit() */
	int (*next)(struct trace_reader *r, struct trace_event *ev);
	/* Parses the event object at *pp ('{') into ev: JS_OK, JS_MORE or
	 * JS_ERR (c->e set). */
	int (*parse_event)(struct cx *c, const char **pp, struct trace_event *ev);
};

extern const struct tr_level tr_level_scalar, tr_level_sse2, tr_level_avx2, tr_level_avx512,
	tr_level_neon;

/* trace_reader_next()'s general path (trace_read.c): the next unit of the
 * text, whatever it is, refilling the window as needed. */
int tr_next_unit(struct trace_reader *r, struct trace_event *ev);

/* A member that the key cache did not predict (trace_read.c; the event
 * parsers' next_member() says what it does). */
int tr_member_slow(struct cx *c, struct key_cache *kc, unsigned *at, const char **pp,
		   int (*code)(const char *, size_t), const char *obj, unsigned wholes);

#endif
