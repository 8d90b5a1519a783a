/* wi_optrace.c — the op-trace CSV, meta yaml and schema json readers.
 *
 * The CSV is streamed through the reader's gzip input (read/gunzip.h: ISA-L
 * when built in, else zlib; plain files as they are) in 1 MiB chunks; each
 * complete line is split on commas and its fields parsed in place. Decimal times take a fast exact path (Clinger: at most 19
 * digits and a power of ten up to 22 give a correctly rounded double; that
 * double rounds to the correct float unless it lies exactly halfway between
 * two floats) and fall back to strtof otherwise.
 */
#include "wi_optrace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/gunzip.h"
#include "read/json_scan.h"
#include "util/pp.h"
#include "util/strbuf.h"

enum col {
	C_DP,
	C_STAGE,
	C_RANK,
	C_STEP,
	C_OPTYPE,
	C_START,
	C_DUR,
	C_SEQ,
	C_MC,
	C_MB,
	C_GMC,
	NCOLS
};

static const char *const col_names[NCOLS] = {
	"dp_rank",  "stage",  "rank", "step",  "optype", "start_ts",
	"duration", "seq_id", "mc",   "mb_id", "gmc",
};

/* Value ranges of the integer columns (the int16/int32 fields of wi_op). */
static const int64_t col_min[NCOLS] = {
	[C_DP] = -32768,     [C_STAGE] = -32768, [C_RANK] = INT32_MIN, [C_STEP] = INT64_MIN,
	[C_SEQ] = INT32_MIN, [C_MC] = -32768,    [C_MB] = -32768,      [C_GMC] = -32768,
};
static const int64_t col_max[NCOLS] = {
	[C_DP] = 32767,      [C_STAGE] = 32767, [C_RANK] = INT32_MAX, [C_STEP] = INT64_MAX,
	[C_SEQ] = INT32_MAX, [C_MC] = 32767,    [C_MB] = 32767,       [C_GMC] = 32767,
};

#define fail wi_errf

static const double pow10_exact[23] = {
	1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static int slow_f32(const char *s, size_t n, float *out)
{
	char buf[128];
	if (n >= sizeof(buf))
		return PP_EPARSE;
	memcpy(buf, s, n);
	buf[n] = '\0';
	char *end;
	errno = 0;
	float f = strtof(buf, &end);
	if (end != buf + n || !isfinite(f))
		return PP_EPARSE;
	*out = f;
	return 0;
}

int wi_optrace_parse_f32(const char *s, size_t n, float *out)
{
	size_t i = 0;
	bool neg = false;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	/* m collects the digits (leading zeros add nothing) while it stays
	 * below 10^18; e10 counts the digits after the point. */
	uint64_t m = 0;
	int e10 = 0;
	size_t first = i;
	for (; i < n && (unsigned)(s[i] - '0') < 10; i++) {
		if (m >= 100000000000000000ull)
			return slow_f32(s, n, out);
		m = m * 10 + (uint64_t)(s[i] - '0');
	}
	bool any = i > first;
	if (i < n && s[i] == '.') {
		size_t f0 = ++i;
		for (; i < n && (unsigned)(s[i] - '0') < 10; i++) {
			if (m >= 100000000000000000ull)
				return slow_f32(s, n, out);
			m = m * 10 + (uint64_t)(s[i] - '0');
		}
		e10 = -(int)(i - f0);
		any = any || i > f0;
	}
	if (!any)
		return PP_EPARSE;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		bool eneg = false;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			eneg = s[i++] == '-';
		int x = 0;
		bool xd = false;
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
			xd = true;
			if (x < 100000)
				x = x * 10 + (s[i] - '0');
		}
		if (!xd)
			return PP_EPARSE;
		e10 += eneg ? -x : x;
	}
	if (i != n)
		return PP_EPARSE;
	if (m == 0) {
		*out = neg ? -0.0f : 0.0f;
		return 0;
	}
	if (m > (1ull << 53) || e10 < -22 || e10 > 22)
		return slow_f32(s, n, out);
	double d = e10 < 0 ? (double)m / pow10_exact[-e10] : (double)m * pow10_exact[e10];
	/* Double rounding can only err when d is exactly a float midpoint
	 * (its low 29 significand bits are 1 followed by zeros) or when the
	 * float would be subnormal. */
	uint64_t bits;
	memcpy(&bits, &d, sizeof(bits));
	if ((bits & ((1ull << 29) - 1)) == (1ull << 28) || d < 1.2e-38 || d > 3.4e38)
		return slow_f32(s, n, out);
	float f = (float)d;
	*out = neg ? -f : f;
	return 0;
}

int64_t wi_optrace_f32_ns(float seconds)
{
	/* m·2^k·10^9 = m·5^9·2^(k+9) with m < 2^24: exact in a double. */
	return (int64_t)llround((double)seconds * 1e9);
}

/* parse_int()'s result for a number outside the column's range. */
#define RANGE 1

/* An integer in [lo, hi]: 0, RANGE or PP_EPARSE. */
static int parse_int(const char *s, size_t n, int64_t lo, int64_t hi, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	if (i == n)
		return PP_EPARSE;
	uint64_t v = 0;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return PP_EPARSE;
		if (v > (UINT64_MAX - 9) / 10)
			return RANGE;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return RANGE;
	int64_t x = neg ? (int64_t)(0 - v) : (int64_t)v;
	if (x < lo || x > hi)
		return RANGE;
	*out = x;
	return 0;
}

/* Removes one pair of double quotes around a field. */
static void unquote(const char **p, size_t *n)
{
	if (*n >= 2 && (*p)[0] == '"' && (*p)[*n - 1] == '"') {
		(*p)++;
		*n -= 2;
	}
}

#define MAXFIELDS 64

struct csv {
	const char *path;
	int colpos[NCOLS];          /* field index of each column */
	int nfields;                /* fields in the header */
	int8_t fieldcol[MAXFIELDS]; /* column of each field, -1 = ignored */
	int last_type;              /* the previous row's optype, -1 = none */
	const char *last_name;
	size_t last_len;
	struct wi_table *t;
	struct strbuf *err;
};

/* Splits line[0..n) at commas into at most max fields (max + 1 when there
 * are more). */
static int split(const char *line, size_t n, const char **f, size_t *fl, int max)
{
	const char *p = line, *end = line + n;
	int k = 0;
	for (;;) {
		const char *q = memchr(p, ',', (size_t)(end - p));
		if (k == max)
			return max + 1;
		f[k] = p;
		fl[k] = (size_t)((q ? q : end) - p);
		k++;
		if (!q)
			return k;
		p = q + 1;
	}
}

static int header(struct csv *c, const char *line, size_t n, unsigned lineno)
{
	const char *f[MAXFIELDS];
	size_t fl[MAXFIELDS];
	int k = split(line, n, f, fl, MAXFIELDS);
	if (k > MAXFIELDS)
		return fail(c->err, "%s:%u: the header has more than %d columns", c->path, lineno,
			    MAXFIELDS);
	for (int j = 0; j < NCOLS; j++)
		c->colpos[j] = -1;
	for (int i = 0; i < k; i++) {
		const char *p = f[i];
		size_t pl = fl[i];
		unquote(&p, &pl);
		for (int j = 0; j < NCOLS; j++)
			if (strlen(col_names[j]) == pl && !memcmp(col_names[j], p, pl)) {
				if (c->colpos[j] >= 0)
					return fail(
						c->err,
						"%s:%u: column '%s' appears twice in the header",
						c->path, lineno, col_names[j]);
				c->colpos[j] = i;
			}
	}
	for (int j = 0; j < NCOLS; j++)
		if (c->colpos[j] < 0)
			return fail(
				c->err,
				"%s:%u: the header lacks column '%s' (an op trace needs dp_rank, stage, rank, step, optype, start_ts, duration, seq_id, mc, mb_id, gmc)",
				c->path, lineno, col_names[j]);
	c->nfields = k;
	for (int i = 0; i < k; i++)
		c->fieldcol[i] = -1;
	for (int j = 0; j < NCOLS; j++)
		c->fieldcol[c->colpos[j]] = (int8_t)j;
	return 0;
}

/* The op of a row's parsed columns; times as docs/whatif.md §1.2 says. */
static void make_op(const int64_t *iv, const float *fv, int type, struct wi_op *o)
{
	*o = (struct wi_op){
		.step = iv[C_STEP],
		.rank = (int32_t)iv[C_RANK],
		.seq_id = (int32_t)iv[C_SEQ],
		.dp_rank = (int16_t)iv[C_DP],
		.stage = (int16_t)iv[C_STAGE],
		.mc = (int16_t)iv[C_MC],
		.gmc = (int16_t)iv[C_GMC],
		.mb_id = (int16_t)iv[C_MB],
		.optype = (uint8_t)type,
	};
	o->start_ns = wi_optrace_f32_ns(fv[C_START]);
	o->end_ns = o->start_ns + wi_optrace_f32_ns(fv[C_DUR]);
}

/* The common case in few instructions: unquoted fields, integers, plain
 * decimals (digits, point, digits) within the exact fast path. Returns
 * false when the row needs row()'s careful parse (which also words any
 * error). */
static bool row_fast(struct csv *c, const char *p, const char *end, struct wi_op *o)
{
	int64_t iv[NCOLS];
	float fv[NCOLS];
	int type = -1;
	for (int fi = 0; fi < c->nfields; fi++) {
		if (fi && (p == end || *p++ != ','))
			return false;
		int col = c->fieldcol[fi];
		const char *s = p;
		if (col == C_OPTYPE || col < 0) {
			while (p < end && *p != ',')
				p++;
			if (col < 0)
				continue;
			size_t len = (size_t)(p - s);
			if (c->last_type >= 0 && len == c->last_len &&
			    !memcmp(s, c->last_name, len))
				type = c->last_type;
			else
				return false;
			continue;
		}
		bool neg = p < end && *p == '-';
		p += neg;
		const char *d0 = p;
		uint64_t m = 0;
		while (p < end && (unsigned)(*p - '0') < 10)
			m = m * 10 + (uint64_t)(*p++ - '0');
		if (p == d0 || p - d0 > 15)
			return false;
		if (col != C_START && col != C_DUR) {
			int64_t x = neg ? -(int64_t)m : (int64_t)m;
			if (x < col_min[col] || x > col_max[col])
				return false;
			iv[col] = x;
			continue;
		}
		int e10 = 0;
		if (p < end && *p == '.') {
			const char *f0 = ++p;
			while (p < end && (unsigned)(*p - '0') < 10)
				m = m * 10 + (uint64_t)(*p++ - '0');
			if (p - d0 > 16 || p == f0)
				return false;
			e10 = (int)(p - f0);
		}
		double d = (double)m / pow10_exact[e10];
		uint64_t bits;
		memcpy(&bits, &d, sizeof(bits));
		if (m && ((bits & ((1ull << 29) - 1)) == (1ull << 28) || d < 1.2e-38 || d > 3.4e38))
			return false;
		fv[col] = neg ? -(float)d : (float)d;
	}
	if (p != end || type < 0)
		return false;
	make_op(iv, fv, type, o);
	return true;
}

static int row(struct csv *c, const char *line, size_t n, unsigned lineno)
{
	struct wi_op fast;
	if (row_fast(c, line, line + n, &fast)) {
		wi_table_add(c->t, &fast, lineno);
		return 0;
	}

	const char *f[MAXFIELDS];
	size_t fl[MAXFIELDS];
	int k = split(line, n, f, fl, c->nfields);
	if (k != c->nfields)
		return fail(c->err, "%s:%u: %d fields where the header has %d", c->path, lineno,
			    k > c->nfields ? c->nfields + 1 : k, c->nfields);
	int64_t iv[NCOLS] = { 0 };
	float fv[NCOLS] = { 0 };
	int type = -1;
	for (int j = 0; j < NCOLS; j++) {
		const char *p = f[c->colpos[j]];
		size_t pl = fl[c->colpos[j]];
		int rc;
		if (j == C_OPTYPE) {
			unquote(&p, &pl);
			/* Rows come grouped by type: try the last one first. */
			if (c->last_type >= 0 && pl == c->last_len && !memcmp(p, c->last_name, pl))
				type = c->last_type;
			else
				type = op_type_parse(p, pl);
			if (type >= 0) {
				c->last_type = type;
				c->last_name = op_type_name(type);
				c->last_len = strlen(c->last_name);
			}
			if (type >= 0)
				continue;
			if (op_type_is_combined(p, pl))
				return fail(
					c->err,
					"%s:%u: column 'optype': combined p2p type '%.*s' is not supported: write one row per direction (e.g. forward-send and backward-recv) with the same start and duration",
					c->path, lineno, (int)pl, p);
			return fail(c->err, "%s:%u: column 'optype': unknown op type '%.*s'",
				    c->path, lineno, (int)(pl > 60 ? 60 : pl), p);
		}
		if (j == C_START || j == C_DUR) {
			rc = wi_optrace_parse_f32(p, pl, &fv[j]);
			if (rc)
				return fail(
					c->err,
					"%s:%u: column '%s': '%.*s' is not a decimal number of seconds",
					c->path, lineno, col_names[j], (int)(pl > 40 ? 40 : pl), p);
			continue;
		}
		rc = parse_int(p, pl, col_min[j], col_max[j], &iv[j]);
		if (rc == RANGE)
			return fail(c->err, "%s:%u: column '%s': %.*s is out of range [%lld, %lld]",
				    c->path, lineno, col_names[j], (int)(pl > 40 ? 40 : pl), p,
				    (long long)col_min[j], (long long)col_max[j]);
		if (rc)
			return fail(c->err, "%s:%u: column '%s': '%.*s' is not an integer", c->path,
				    lineno, col_names[j], (int)(pl > 40 ? 40 : pl), p);
	}
	struct wi_op o;
	make_op(iv, fv, type, &o);
	wi_table_add(c->t, &o, lineno);
	return 0;
}

int wi_optrace_read(const char *path, struct wi_table *t, struct strbuf *err)
{
	struct csv c = { .path = path, .t = t, .err = err, .last_type = -1 };
	enum { CHUNK = 1 << 20 };
	int rc = 0;
	struct gunzip_file *in = gunzip_file_open(path, err);
	if (!in)
		return PP_EIO;
	char *buf = xmalloc(2 * CHUNK + 1);
	snprintf(t->src, sizeof(t->src), "%s", path);
	size_t have = 0, cap = 2 * CHUNK;
	unsigned lineno = 0;
	bool eof = false, got_header = false;
	while (!eof) {
		if (cap - have < CHUNK) {
			buf = xrealloc(buf, 2 * cap + 1);
			cap *= 2;
		}
		long n = gunzip_file_read(in, buf + have, cap - have, err);
		if (n < 0) {
			rc = PP_EIO;
			goto out;
		}
		have += (size_t)n;
		eof = n == 0;
		if (eof && have && buf[have - 1] != '\n')
			buf[have++] = '\n';
		size_t pos = 0;
		for (;;) {
			char *nl = memchr(buf + pos, '\n', have - pos);
			if (!nl)
				break;
			size_t len = (size_t)(nl - (buf + pos));
			const char *line = buf + pos;
			pos += len + 1;
			lineno++;
			if (len && line[len - 1] == '\r')
				len--;
			if (len == 0)
				continue;
			if (!got_header) {
				rc = header(&c, line, len, lineno);
				got_header = true;
			} else {
				rc = row(&c, line, len, lineno);
			}
			if (rc)
				goto out;
		}
		memmove(buf, buf + pos, have - pos);
		have -= pos;
	}
	if (!got_header)
		rc = fail(err, "%s: empty file: no header line", path);
out:
	gunzip_file_close(in);
	free(buf);
	return rc;
}

/* ---- meta yaml ----------------------------------------------------------- */

static size_t trim(const char **p, size_t n)
{
	while (n && (**p == ' ' || **p == '\t')) {
		(*p)++;
		n--;
	}
	while (n && ((*p)[n - 1] == ' ' || (*p)[n - 1] == '\t' || (*p)[n - 1] == '\r'))
		n--;
	return n;
}

int wi_optrace_read_meta(const char *path, struct wi_meta *m, struct strbuf *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return pp_err(err, PP_EIO, "cannot open '%s': %s", path, strerror(errno));
	*m = (struct wi_meta){ .dp_size = 1,
			       .pp_size = 1,
			       .tp_size = 1,
			       .dsp_size = 1,
			       .vpp_size = 1,
			       .world_size = 1 };
	struct {
		const char *key;
		int64_t *dst;
	} keys[] = { { "run_id", &m->run_id },        { "dp_size", &m->dp_size },
		     { "pp_size", &m->pp_size },      { "tp_size", &m->tp_size },
		     { "dsp_size", &m->dsp_size },    { "vpp_size", &m->vpp_size },
		     { "world_size", &m->world_size } };
	char line[1024];
	unsigned lineno = 0;
	int rc = 0;
	bool named = false;
	while (!rc && fgets(line, sizeof(line), f)) {
		lineno++;
		const char *p = line;
		size_t n = trim(&p, strcspn(line, "\n"));
		if (n == 0 || p[0] == '#' || (n == 3 && !memcmp(p, "---", 3)))
			continue;
		const char *colon = memchr(p, ':', n);
		if (!colon) {
			rc = fail(err, "%s:%u: expected 'key: value'", path, lineno);
			break;
		}
		const char *k = p, *v = colon + 1;
		size_t kl = trim(&k, (size_t)(colon - p));
		size_t vl = trim(&v, n - (size_t)(colon + 1 - p));
		if (kl == 10 && !memcmp(k, "trial_name", 10)) {
			unquote(&v, &vl);
			if (vl == 0 || vl >= sizeof(m->trial_name)) {
				rc = fail(err, "%s:%u: trial_name must have 1 to %zu characters",
					  path, lineno, sizeof(m->trial_name) - 1);
				break;
			}
			memcpy(m->trial_name, v, vl);
			m->trial_name[vl] = '\0';
			named = true;
			continue;
		}
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			if (strlen(keys[i].key) != kl || memcmp(keys[i].key, k, kl))
				continue;
			if (parse_int(v, vl, INT64_MIN / 2, INT64_MAX / 2, keys[i].dst))
				rc = fail(err, "%s:%u: %s: '%.*s' is not an integer", path, lineno,
					  keys[i].key, (int)(vl > 40 ? 40 : vl), v);
		}
	}
	if (!rc && ferror(f))
		rc = fail(err, "%s: read error", path);
	fclose(f);
	if (!rc && !named)
		rc = fail(err, "%s: no trial_name", path);
	size_t mark = err->len;
	if (!rc && wi_meta_check(m, err))
		rc = pp_err_prefix(err, mark, PP_EPARSE, "%s: ", path);
	return rc;
}

/* ---- schema json --------------------------------------------------------- */

/* Whether object v has the member key (then its value is in *item). */
static bool member(const char *v, const char *end, struct js_stack *st, const char *key,
		   struct js_item *item)
{
	struct js_iter it;
	if (*v != '{')
		return false;
	js_iter_init(&it, v, end, st);
	while (js_iter_next(&it, item))
		if (!item->key_esc && item->keylen == strlen(key) &&
		    !memcmp(item->key, key, item->keylen))
			return true;
	return false;
}

/* The optype list: the array "optype" inside the object "categories". */
int wi_optrace_read_schema(const char *path, struct wi_table *t, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	struct js_stack st = { 0 };
	struct js_item cat, ot, el;
	const char *v, *vend, *names[64];
	char store[64][64];
	size_t k = 0;
	int rc = 0;
	if ((rc = js_doc_load(path, &text, &v, &vend, &st, err)))
		goto out;
	const char *end = text.buf + text.len;
	if (!member(v, end, &st, "categories", &cat) || !member(cat.v, end, &st, "optype", &ot) ||
	    *ot.v != '[') {
		rc = fail(err, "%s: no \"categories\": {\"optype\": [...]} list", path);
		goto out;
	}
	struct js_iter it;
	js_iter_init(&it, ot.v, end, &st);
	while (js_iter_next(&it, &el)) {
		size_t len = (size_t)(el.vend - el.v);
		if (*el.v != '"' || len - 2 >= sizeof(store[0])) {
			rc = fail(err, "%s:%d: the optype list holds %.*s, not an op type name",
				  path, js_line_of(text.buf, el.v), (int)(len > 40 ? 40 : len),
				  el.v);
			goto out;
		}
		if (k == 64) /* more names than types: the rest are not types */
			continue;
		len = js_unescape(el.v + 1, len - 2, store[k]);
		store[k][len] = '\0';
		names[k] = store[k];
		k++;
	}
	wi_table_set_order(t, names, k);
out:
	strbuf_release(&text);
	js_stack_release(&st);
	return rc;
}
