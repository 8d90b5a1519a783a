/* trace_values.h — the trace reader's value readers: numbers (int64 and µs
 * to ns, exactly, 8 digits at a time), strings kept in the scratch, values
 * skipped. Static inline, so that each SIMD level of the event parser
 * (trace_events.h) and trace_read.c have their own copy.
 */
#ifndef TRACE_VALUES_H
#define TRACE_VALUES_H

#include <string.h>

#include "simd.h"
#include "trace_int.h"

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
	return simd_load8(p);
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

/* The fraction's first f (1..3) bytes of x, all ASCII digits, as
 * thousandths: the digits padded with zeros to 3 (".5" is 500), i.e.
 * 100 d0 + 10 d1 + d2 of the word 0 d0 d1 d2 (bytes, the digits past f
 * masked off), combined in pairs and then once more, without the
 * multiplication by a scale that digits_value() would need. */
static ALWAYS_INLINE uint64_t frac3_value(uint64_t x, unsigned f)
{
	uint64_t m = ((x - 0x3030303030303030ull) & ((1ull << (8 * f)) - 1)) << 8;
	m = (m * 10 + (m >> 8)) & 0x00ff00ff; /* byte 0: d0, byte 2: 10 d1 + d2 */
	return (m & 0xff) * 100 + (m >> 16);
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
	if (simd_digits16(p, &v)) {
		*n = 16;
		*pp = p + 16;
		return v;
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

/* The optional '-' and the up to 16 digits at *pp (digits16()): their
 * value and sign; false when there are no digits, or more after a leading
 * zero (not JSON). *pp moves past them. */
static ALWAYS_INLINE bool int_digits(const char **pp, uint64_t *acc, bool *neg)
{
	const char *p = *pp, *s;
	unsigned n;
	*neg = *p == '-';
	p += *neg;
	s = p;
	*acc = digits16(&p, &n);
	*pp = p;
	return n && !(*s == '0' && n > 1);
}

/* Whether ch, the byte after a number's digits, ends the number: anything
 * but a digit, '.', 'e' or 'E' (which go on with it) and NUL (the window's
 * zero padding: the window may end there). */
static ALWAYS_INLINE bool number_ends(char ch)
{
	static const uint8_t goes_on[256] = {
		[0] = 1, ['0' ... '9'] = 1, ['.'] = 1, ['e'] = 1, ['E'] = 1
	};
	return !goes_on[(unsigned char)ch];
}

/* Fast path for the common integer: -?(0|[1-9][0-9]{0,15}) followed,
 * within the window, by a byte that cannot continue a number. Anything else
 * (more digits, fraction, exponent, end of window) returns false and the
 * caller takes the general path, which also reports errors. */
static ALWAYS_INLINE bool fast_int(const char **pp, const char *end, int64_t *v)
{
	const char *p = *pp;
	bool neg;
	uint64_t acc, x = load8(p), t = nondigits(x);
	(void)end; /* a number cut by the window's end ends at its NUL padding */
	if (t) {   /* most: 1 to 7 digits, no sign, in one word */
		unsigned k = (unsigned)__builtin_ctzll(t) >> 3;
		if (k && number_ends(p[k])) {
			if (__builtin_expect(*p == '0', 0) && k > 1)
				return false; /* a leading zero: not JSON */
			*v = (int64_t)digits_value(x, k);
			*pp = p + k;
			return true;
		}
	}
	if (!int_digits(&p, &acc, &neg) || !number_ends(*p))
		return false;
	*v = neg ? -(int64_t)acc : (int64_t)acc;
	*pp = p;
	return true;
}

/* Fast path for times: -?digits{1,16}(.digits{1,3})? then a delimiter. */
static ALWAYS_INLINE bool fast_time(const char **pp, const char *end, int64_t *ns)
{
	const char *p = *pp;
	bool neg;
	uint64_t acc;
	if (!int_digits(&p, &acc, &neg) || acc > ((uint64_t)INT64_MAX - 999) / 1000)
		return false;
	acc *= 1000;
	if (*p == '.') {
		uint64_t x = load8(p + 1);
		unsigned f = lead_digits(x);
		if (f == 0 || f > 3)
			return false;
		acc += frac3_value(x, f);
		p += 1 + f;
	}
	(void)end; /* a number cut by the window's end ends at its NUL padding */
	if (!number_ends(*p))
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
static inline int read_string(struct cx *c, const char **pp, const char **s, size_t *n, bool *esc)
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
static inline int read_number(struct cx *c, const char **pp, const char **s, const char **e,
			      int *kind)
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

/* A number value that starts_number(): *is_int when it is an integer that
 * fits int64 (then in *v), and its text [*s, *e) either way. */
static inline int read_int_number(struct cx *c, const char **pp, int64_t *v, bool *is_int,
				  const char **s, const char **e)
{
	int kind, rc = read_number(c, pp, s, e, &kind);
	if (rc)
		return rc;
	*is_int = kind == JS_NUM_INT && js_parse_int64(*s, *e, v);
	return JS_OK;
}

/* Reads an integer value into *v; *ok false when the value is not an
 * integer that fits int64 (it is skipped then). */
static ALWAYS_INLINE int read_int_field(struct cx *c, const char **pp, int64_t *v, bool *ok)
{
	const char *s, *e;
	*ok = false;
	if (fast_int(pp, c->end, v)) {
		*ok = true;
		return JS_OK;
	}
	if (starts_number(**pp))
		return read_int_number(c, pp, v, ok, &s, &e);
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

/* Copies n bytes from s to o a vector at a time: reads up to 63 bytes past
 * s + n (a string in the window: its padding) and writes as many past o + n
 * (the scratch's slack). */
static ALWAYS_INLINE void copy_text(char *o, const char *s, size_t n)
{
	simd_copy(o, s, n);
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
	id->str.p = tr_none;
	id->str.n = 0;
}

/* id_num() for an id of an event that clear_event() reset: its text is
 * none already unless an earlier member of the same key gave one, as only
 * id_num() makes is_str false, and with it the text none; so a load and a
 * test instead of three stores. */
static ALWAYS_INLINE void id_num_reset(struct trace_id *id)
{
	if (__builtin_expect(id->is_str, 0))
		id_num(id);
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
		bool is_int;
		int rc = read_int_number(c, pp, &id->num, &is_int, &s, &e);
		if (rc)
			return rc;
		*present = true;
		if (is_int) {
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
				       kind == JS_NUM_NONFINITE
					       ? "a non-finite time"
					       : "a time out of the int64 ns range",
				       field);
		*present = true;
		return JS_OK;
	}
	if (*at == 'n')
		return skip_value(c, pp);
	return fail_at(c, at, NULL, field);
}

#endif
