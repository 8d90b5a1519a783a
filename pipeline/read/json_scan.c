/* json_scan.c — see json_scan.h.
 *
 * Design: the skipper is a loop over a small state (expecting a value, or
 * just after one) with the container kinds kept as bits on a heap stack, so a
 * value nested 10^6 deep costs 125 KB of bits and no recursion. Strings are
 * scanned 16 bytes at a time for '"' and '\\' (SSE2 on x86-64).
 */
#include "json_scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/pp.h"
#include "util/strbuf.h"

#ifdef __SSE2__
const char *js_ws_run(const char *p, const char *end)
{
	const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n');
	const __m128i cr = _mm_set1_epi8('\r'), tb = _mm_set1_epi8('\t');
	while (p < end) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i w =
			_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, nl)),
				     _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, tb)));
		unsigned m = (unsigned)_mm_movemask_epi8(w) ^ 0xffffu;
		if (m) {
			p += __builtin_ctz(m);
			break; /* at a non-space byte, \f or \v, or the padding */
		}
		p += 16;
	}
	while (js_is_ws((unsigned char)*p))
		p++;
	return p < end ? p : end;
}
#else
const char *js_ws_run(const char *p, const char *end)
{
	while (p < end && js_is_ws((unsigned char)*p))
		p++;
	return p;
}
#endif

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The 4 hex digits at s as a code unit, or -1. */
static long hex4(const char *s)
{
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval((unsigned char)s[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

static size_t put_utf8(char *o, unsigned long cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

size_t js_unescape(const char *s, size_t n, char *out)
{
	const char *e = s + n;
	char *o = out;
	while (s < e) {
		const char *bs = memchr(s, '\\', (size_t)(e - s));
		if (!bs) {
			memmove(o, s, (size_t)(e - s));
			o += e - s;
			break;
		}
		memmove(o, s, (size_t)(bs - s));
		o += bs - s;
		s = bs;
		if (e - s < 2) { /* a lone trailing backslash: keep it */
			*o++ = *s++;
			break;
		}
		char c = s[1];
		switch (c) {
		case '"':
		case '\\':
		case '/':
			*o++ = c;
			s += 2;
			continue;
		case 'b':
			*o++ = '\b';
			s += 2;
			continue;
		case 'f':
			*o++ = '\f';
			s += 2;
			continue;
		case 'n':
			*o++ = '\n';
			s += 2;
			continue;
		case 'r':
			*o++ = '\r';
			s += 2;
			continue;
		case 't':
			*o++ = '\t';
			s += 2;
			continue;
		case 'u': break;
		default: /* unknown escape: keep both bytes */
			*o++ = *s++;
			*o++ = *s++;
			continue;
		}
		long u = e - s >= 6 ? hex4(s + 2) : -1;
		if (u < 0) { /* incomplete \u: keep literally */
			*o++ = *s++;
			*o++ = *s++;
			continue;
		}
		if (u == 0) { /* an embedded NUL would cut every C string: keep it as text */
			memmove(o, s, 6);
			o += 6;
			s += 6;
			continue;
		}
		s += 6;
		unsigned long cp = (unsigned long)u;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			long lo = (e - s >= 6 && s[0] == '\\' && s[1] == 'u') ? hex4(s + 2) : -1;
			if (lo >= 0xdc00 && lo <= 0xdfff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned long)lo - 0xdc00);
				s += 6;
			} else {
				cp = 0xfffd;
			}
		} else if (cp >= 0xdc00 && cp <= 0xdfff) {
			cp = 0xfffd;
		}
		/* 6 input bytes give at most 3 output bytes, 12 give 4. */
		o += put_utf8(o, cp);
	}
	return (size_t)(o - out);
}

static inline bool is_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

static int fail(struct js_err *err, const char *at, const char *what, const char *expected)
{
	if (err) {
		err->at = at;
		err->what = what;
		err->expected = expected;
	}
	return JS_ERR;
}

/* Matches the literal lit at p; JS_MORE when p..end is a proper prefix
 * (also at the end of all input: a literal cut short is truncation). */
static int match_lit(const char *p, const char *end, const char *lit, size_t n, const char **q,
		     struct js_err *err)
{
	size_t have = (size_t)(end - p);
	if (have >= n) {
		if (memcmp(p, lit, n))
			return fail(err, p, NULL, "a value");
		*q = p + n;
		return JS_OK;
	}
	if (memcmp(p, lit, have))
		return fail(err, p, NULL, "a value");
	return JS_MORE;
}

int js_scan_number(const char *p, const char *end, bool final, const char **q, int *kind,
		   struct js_err *err)
{
	const char *s = p;
	int k = JS_NUM_INT;
	if (p < end && *p == '-')
		p++;
	if (p >= end)
		goto more;
	if (*p == 'I' || *p == 'N') {
		int rc = *p == 'I' ? match_lit(p, end, "Infinity", 8, q, err)
				   : match_lit(p, end, "NaN", 3, q, err);
		*kind = JS_NUM_NONFINITE;
		return rc;
	}
	if (*p == '0') {
		p++;
	} else if (is_digit(*p)) {
		while (p < end && is_digit(*p))
			p++;
	} else {
		return fail(err, p, NULL, "a digit");
	}
	if (p < end && *p == '.') {
		k = JS_NUM_DEC;
		p++;
		if (p >= end)
			goto more;
		if (!is_digit(*p))
			return fail(err, p, NULL, "a digit after '.'");
		while (p < end && is_digit(*p))
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		k = JS_NUM_DEC;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end)
			goto more;
		if (!is_digit(*p))
			return fail(err, p, NULL, "a digit in the exponent");
		while (p < end && is_digit(*p))
			p++;
	}
	if (p >= end && !final)
		return JS_MORE;
	(void)s;
	*q = p;
	*kind = k;
	return JS_OK;
more:
	return JS_MORE;
}

static __attribute__((noinline)) void stack_grow(struct js_stack *st)
{
	size_t ncap = st->cap ? st->cap * 2 : 4096;
	st->bits = xrealloc(st->bits, ncap / 8);
	st->cap = ncap;
}

static inline void stack_push(struct js_stack *st, size_t depth, bool is_obj)
{
	if (depth >= st->cap)
		stack_grow(st);
	uint64_t m = (uint64_t)1 << (depth & 63);
	if (is_obj)
		st->bits[depth >> 6] |= m;
	else
		st->bits[depth >> 6] &= ~m;
}

static inline bool stack_is_obj(const struct js_stack *st, size_t depth)
{
	return (st->bits[depth >> 6] >> (depth & 63)) & 1;
}

void js_stack_release(struct js_stack *st)
{
	free(st->bits);
	st->bits = NULL;
	st->cap = 0;
}

#define NEED(cond)                      \
	do {                            \
		if (!(cond))            \
			return JS_MORE; \
	} while (0)

int js_skip_value(const char **pp, const char *end, bool final, struct js_stack *st,
		  struct js_err *err)
{
	const char *p = *pp, *q;
	const char *expect = "a value";
	size_t depth = 0; /* open containers; the innermost is depth-1 */
	bool esc;
	int rc, kind;

value:
	expect = "a value";
	p = js_ws(p, end);
	NEED(p < end);
	switch (*p) {
	case '"':
		if (js_string_end(p + 1, end, &q, &esc) != JS_OK)
			return JS_MORE;
		p = q + 1;
		break;
	case '{':
		stack_push(st, depth, true);
		depth++;
		p = js_ws(p + 1, end);
		expect = "a key string or '}'";
		NEED(p < end);
		if (*p == '}') {
			p++;
			depth--;
			break;
		}
		goto key;
	case '[':
		stack_push(st, depth, false);
		depth++;
		p = js_ws(p + 1, end);
		NEED(p < end);
		if (*p == ']') {
			p++;
			depth--;
			break;
		}
		goto value;
	case 't':
		if ((rc = match_lit(p, end, "true", 4, &p, err)) != JS_OK)
			return rc;
		break;
	case 'f':
		if ((rc = match_lit(p, end, "false", 5, &p, err)) != JS_OK)
			return rc;
		break;
	case 'n':
		if ((rc = match_lit(p, end, "null", 4, &p, err)) != JS_OK)
			return rc;
		break;
	default:
		if (*p == '-' || is_digit(*p) || *p == 'N' || *p == 'I') {
			if ((rc = js_scan_number(p, end, final, &p, &kind, err)) != JS_OK)
				return rc;
			break;
		}
		return fail(err, p, NULL, "a value");
	}
	/* after a value */
	for (;;) {
		if (depth == 0) {
			*pp = p;
			return JS_OK;
		}
		bool obj = stack_is_obj(st, depth - 1);
		expect = obj ? "',' or '}'" : "',' or ']'";
		p = js_ws(p, end);
		NEED(p < end);
		if (*p == ',') {
			p = js_ws(p + 1, end);
			if (!obj)
				goto value;
			expect = "a key string";
			NEED(p < end);
			goto key;
		}
		if (*p == (obj ? '}' : ']')) {
			p++;
			depth--;
			continue;
		}
		return fail(err, p, NULL, expect);
	}
key:
	/* p points at the first byte of a key (after whitespace) */
	if (*p != '"')
		return fail(err, p, NULL, expect);
	if (js_string_end(p + 1, end, &q, &esc) != JS_OK)
		return JS_MORE;
	p = js_ws(q + 1, end);
	expect = "':'";
	NEED(p < end);
	if (*p != ':')
		return fail(err, p, NULL, expect);
	p++;
	goto value;
}

bool js_parse_int64(const char *s, const char *e, int64_t *v)
{
	bool neg = false;
	uint64_t acc = 0;
	if (s < e && *s == '-') {
		neg = true;
		s++;
	}
	if (s >= e)
		return false;
	for (; s < e; s++) {
		if (!is_digit(*s))
			return false;
		unsigned d = (unsigned)(*s - '0');
		if (acc > (UINT64_MAX - d) / 10)
			return false;
		acc = acc * 10 + d;
	}
	if (neg) {
		if (acc > (uint64_t)INT64_MAX + 1)
			return false;
		*v = acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc;
	} else {
		if (acc > (uint64_t)INT64_MAX)
			return false;
		*v = (int64_t)acc;
	}
	return true;
}

bool js_us_to_ns(const char *s, const char *e, int64_t *ns)
{
	enum { MAXD = 40 };
	char d[MAXD];
	int nd = 0;  /* significant digits kept */
	long dp = 0; /* position of the decimal point after d[0..] */
	bool neg = false, any = false, nonzero_dropped = false;

	if (s < e && *s == '-') {
		neg = true;
		s++;
	}
	if (s >= e)
		return false;
	for (; s < e && is_digit(*s); s++) {
		any = true;
		if (nd == 0 && *s == '0')
			continue; /* leading zero */
		if (nd < MAXD)
			d[nd++] = *s;
		else if (*s != '0')
			nonzero_dropped = true;
		dp++;
	}
	if (!any)
		return false;
	if (s < e && *s == '.') {
		s++;
		if (s >= e || !is_digit(*s))
			return false;
		for (; s < e && is_digit(*s); s++) {
			any = true;
			if (nd == 0 && *s == '0') {
				dp--; /* 0.000x: zeros before the first significant digit */
				continue;
			}
			if (nd < MAXD)
				d[nd++] = *s;
			else if (*s != '0')
				nonzero_dropped = true;
		}
	}
	if (!any)
		return false;
	if (s < e && (*s == 'e' || *s == 'E')) {
		bool eneg = false;
		long ex = 0;
		s++;
		if (s < e && (*s == '+' || *s == '-'))
			eneg = *s++ == '-';
		if (s >= e || !is_digit(*s))
			return false;
		for (; s < e && is_digit(*s); s++)
			if (ex < 100000)
				ex = ex * 10 + (*s - '0');
		dp += eneg ? -ex : ex;
	}
	if (s != e)
		return false;
	if (nd == 0) {
		*ns = 0;
		return true;
	}
	/* value = 0.d[0]d[1]... × 10^dp µs; ns = value × 1000 */
	long ip = dp + 3; /* digits of d that form the integer ns */
	if (ip > 19)
		return false;
	uint64_t acc = 0;
	for (long i = 0; i < ip; i++)
		acc = acc * 10 + (uint64_t)(i < nd ? d[i] - '0' : 0);
	bool round_up = ip >= 0 && ip < nd && d[ip] >= '5';
	(void)nonzero_dropped; /* beyond 40 digits: below any rounding digit */
	if (round_up)
		acc++;
	if (acc > (uint64_t)INT64_MAX)
		return false;
	*ns = neg ? -(int64_t)acc : (int64_t)acc;
	return true;
}

void js_describe_at(const char *at, const char *end, char *out, size_t n)
{
	unsigned char c = at < end ? (unsigned char)*at : 0;
	if (at >= end)
		snprintf(out, n, "end of input");
	else if (c >= 0x21 && c < 0x7f && c != '\'')
		snprintf(out, n, "'%c'", c);
	else
		snprintf(out, n, "byte 0x%02x", c);
}

int js_doc_check(const char *p, const char *end, const char **v, const char **vend,
		 struct js_stack *st, struct js_err *err)
{
	const char *q = js_ws(p, end);
	int rc;
	*v = q;
	if (q >= end) {
		fail(err, end, NULL, "a value");
		return JS_MORE;
	}
	rc = js_skip_value(&q, end, true, st, err);
	if (rc == JS_MORE)
		fail(err, end, NULL, "the rest of the value");
	if (rc != JS_OK)
		return rc;
	*vend = q;
	q = js_ws(q, end);
	if (q != end)
		return fail(err, q, NULL, "the end of the text after the value");
	return JS_OK;
}

int js_line_of(const char *text, const char *at)
{
	int line = 1;
	for (const char *s = text; s < at; s++)
		line += *s == '\n';
	return line;
}

void js_doc_error(const char *text, const char *end, const struct js_err *e, char *out, size_t n)
{
	char found[48];
	if (e->what)
		snprintf(found, sizeof(found), "%s", e->what);
	else
		js_describe_at(e->at, end, found, sizeof(found));
	snprintf(out, n, "%d: byte %zu: %s%s, expected %s", js_line_of(text, e->at),
		 (size_t)(e->at - text), e->what ? "" : "found ", found, e->expected);
}

void js_iter_init(struct js_iter *it, const char *v, const char *end, struct js_stack *st)
{
	it->p = v; /* at '{' or '[': the first call steps over it like a ',' */
	it->end = end;
	it->obj = *v == '{';
	it->st = st;
}

bool js_iter_next(struct js_iter *it, struct js_item *item)
{
	const char *p = it->p, *q = p;
	bool esc = false;
	if (*p != ',' && *p != '{' && *p != '[')
		return false; /* at the closing bracket */
	p = js_ws(p + 1, it->end);
	if (*p == '}' || *p == ']') {
		it->p = p;
		return false;
	}
	item->key = NULL;
	item->keylen = 0;
	item->key_esc = false;
	if (it->obj) {
		js_string_end(p + 1, it->end, &q, &esc);
		item->key = p + 1;
		item->keylen = (size_t)(q - p - 1);
		item->key_esc = esc;
		p = js_ws(js_ws(q + 1, it->end) + 1, it->end); /* over ':' */
	}
	item->v = p;
	js_skip_value(&p, it->end, true, it->st, NULL);
	item->vend = p;
	it->p = js_ws(p, it->end);
	return true;
}

int js_doc_load(const char *path, struct strbuf *text, const char **v, const char **vend,
		struct js_stack *st, struct strbuf *err)
{
	struct js_err jerr = { 0 };
	char why[256];
	if (strbuf_read_file(text, path, JS_PAD, err))
		return PP_EIO;
	const char *end = text->buf + text->len;
	if (js_doc_check(text->buf, end, v, vend, st, &jerr) != JS_OK) {
		js_doc_error(text->buf, end, &jerr, why, sizeof(why));
		return pp_err(err, PP_EPARSE, "%s:%s", path, why);
	}
	return 0;
}
