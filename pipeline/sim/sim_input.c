/* sim_input.c — see sim_input.h. A JSON config is checked whole by the
 * trace reader's scanner (read/json_scan.h), then walked: values become the
 * same text that sim_input_set() takes from the command line, except stage
 * maps. */
#include "sim_input.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/json_scan.h"
#include "util/config.h"
#include "util/pp.h"
#include "util/strbuf.h"

static const char *const time_keys[SIM_T_N] = { "forward", "backward", "backward_d", "backward_w",
						"overlapped" };

void sim_input_init(struct sim_input *in)
{
	memset(in, 0, sizeof(*in));
	sim_config_init(&in->cfg);
}

static void times_clear(struct sim_times_in *t)
{
	free(t->v);
	free(t->stage);
	memset(t, 0, sizeof(*t));
}

void sim_input_release(struct sim_input *in)
{
	for (int k = 0; k < SIM_T_N; k++) {
		times_clear(&in->t[k]);
		free(in->arr[k]);
	}
	free(in->output);
	memset(in, 0, sizeof(*in));
}

/* "1.5", "1,2,3" or "1 2 3" into t (kind 1 or 2). */
static int parse_times(struct sim_times_in *t, const char *key, const char *text,
		       struct strbuf *err)
{
	struct sim_times_in n = { 0 };
	const char *s = text;
	int alloc = 0;
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == ',')
			s++;
		if (!*s)
			break;
		char *end;
		errno = 0;
		double x = strtod(s, &end);
		if (end == s || errno || !isfinite(x) || x < 0 ||
		    (*end && *end != ',' && *end != ' ' && *end != '\t')) {
			free(n.v);
			return pp_err(err, PP_EINVAL,
				      "invalid %s time '%s': expected numbers >= 0, one "
				      "for all stages or one per stage",
				      key, text);
		}
		PP_GROW(n.v, n.n, alloc, 8);
		n.v[n.n++] = x;
		s = end;
	}
	if (n.n == 0)
		return pp_err(err, PP_EINVAL, "empty %s time", key);
	times_clear(t);
	if (n.n == 1) {
		t->kind = 1;
		t->all = n.v[0];
		free(n.v);
	} else {
		*t = n;
		t->kind = 2;
	}
	return 0;
}

static int parse_int(const char *key, const char *text, long min, long *out, struct strbuf *err)
{
	char *end;
	errno = 0;
	long v = strtol(text, &end, 10);
	/* accept "8.0" from JSON writers */
	if (*end == '.' && strspn(end + 1, "0") == strlen(end + 1) && end[1])
		end += strlen(end);
	if (end == text || *end || errno || v < min || v > 100000000)
		return pp_err(err, PP_EINVAL,
			      "invalid %s '%s': expected an "
			      "integer >= %ld",
			      key, text, min);
	*out = v;
	return 0;
}

/* The integer settings: where key's value goes, which flag says it was
 * given, its minimum. */
static bool int_setting(struct sim_input *in, const char *key, int **dst, bool **have, long *min)
{
	const struct {
		const char *key;
		int *dst;
		bool *have;
		long min;
	} ints[] = {
		{ "devices", &in->cfg.devices, &in->have_devices, 1 },
		{ "stages", &in->cfg.stages, &in->have_stages, 1 },
		{ "microbatches", &in->cfg.microbatches, &in->have_microbatches, 1 },
		{ "group_size", &in->cfg.group_size, NULL, 0 },
	};
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (!strcmp(key, ints[i].key)) {
			*dst = ints[i].dst;
			*have = ints[i].have;
			*min = ints[i].min;
			return true;
		}
	return false;
}

int sim_input_set(struct sim_input *in, const char *key, const char *text, struct strbuf *err)
{
	long v = 0, min = 0;
	int *dst;
	bool *have;
	for (int k = 0; k < SIM_T_N; k++)
		if (!strcmp(key, time_keys[k]))
			return parse_times(&in->t[k], key, text, err);
	if (!strcmp(key, "strategy")) {
		if (sim_strategy_parse(text, &in->cfg.strategy))
			return pp_err(err, PP_EINVAL,
				      "unknown strategy '%s' (1f1b, "
				      "interleave, zb1p, 1f1b_overlap, 1f1b_interleave_overlap, "
				      "dualpipe, dualpipe_v)",
				      text);
	} else if (!strcmp(key, "model")) {
		if (sim_model_parse(text, &in->cfg.model))
			return pp_err(err, PP_EINVAL, "unknown model '%s' (megatron or reference)",
				      text);
	} else if (!strcmp(key, "warmup")) {
		if (sched_rule_parse(text, &in->cfg.warmup))
			return pp_err(err, PP_EINVAL, "unknown warm-up rule '%s' (core or legacy)",
				      text);
	} else if (int_setting(in, key, &dst, &have, &min)) {
		if (parse_int(key, text, min, &v, err))
			return PP_EINVAL;
		*dst = (int)v;
		if (have)
			*have = true;
	} else if (!strcmp(key, "p2p")) {
		char *end;
		errno = 0;
		double x = strtod(text, &end);
		if (end == text || *end || errno || !isfinite(x) || x < 0)
			return pp_err(err, PP_EINVAL,
				      "invalid p2p latency '%s': expected a number >= 0", text);
		in->cfg.p2p = x;
	} else if (!strcmp(key, "output")) {
		free(in->output);
		in->output = xstrdup(text);
	} else if (!strcmp(key, "visualization")) {
		if (!strcmp(text, "true") || !strcmp(text, "1") || !strcmp(text, "yes"))
			in->no_visualization = false;
		else if (!strcmp(text, "false") || !strcmp(text, "0") || !strcmp(text, "no"))
			in->no_visualization = true;
		else
			return pp_err(err, PP_EINVAL,
				      "invalid visualization '%s': expected true or false", text);
	} else {
		return pp_err(err, PP_ENOTFOUND, "unknown setting '%s'", key);
	}
	return 0;
}

static const char *const ini_keys[] = { "strategy",   "model",        "warmup",        "devices",
					"stages",     "microbatches", "group_size",    "p2p",
					"forward",    "backward",     "backward_d",    "backward_w",
					"overlapped", "output",       "visualization", NULL };

int sim_input_load_ini(struct sim_input *in, const struct config *cfg, struct strbuf *err)
{
	char full[64];
	size_t mark = err->len;
	config_check_known(cfg, "sim", ini_keys);
	for (int i = 0; ini_keys[i]; i++) {
		snprintf(full, sizeof(full), "sim.%s", ini_keys[i]);
		const char *v = config_get(cfg, full);
		if (!v)
			continue;
		if (sim_input_set(in, ini_keys[i], v, err))
			return pp_err_prefix(err, mark, PP_EINVAL,
					     "%s: config [sim] %s: ", config_path(cfg),
					     ini_keys[i]);
	}
	return 0;
}

/* ---- JSON config ---- */

struct jkey {
	const char *json;
	const char *canon;
};

static const struct jkey json_keys[] = { { "num_stages", "stages" },
					 { "num_batches", "microbatches" },
					 { "num_microbatches", "microbatches" },
					 { "num_devices", "devices" },
					 { "forward_times", "forward" },
					 { "backward_times", "backward" },
					 { "backward_d_times", "backward_d" },
					 { "backward_w_times", "backward_w" },
					 { "overlapped_times", "overlapped" },
					 { "output_file", "output" },
					 { "p2p_time", "p2p" },
					 { "p2p_latency", "p2p" },
					 { "microbatch_group_size_per_vp_stage", "group_size" },
					 /* PP-Schedule-Visualization's op_times keys */
					 { "backward_D", "backward_d" },
					 { "backward_W", "backward_w" },
					 { "overlapped_forward_backward", "overlapped" },
					 { NULL, NULL } };

static const char *canon_key(const char *k)
{
	for (int i = 0; json_keys[i].json; i++)
		if (!strcmp(k, json_keys[i].json))
			return json_keys[i].canon;
	for (int i = 0; ini_keys[i]; i++)
		if (!strcmp(k, ini_keys[i]))
			return ini_keys[i];
	return NULL;
}

static int time_index(const char *canon)
{
	for (int k = 0; k < SIM_T_N; k++)
		if (canon && !strcmp(canon, time_keys[k]))
			return k;
	return -1;
}

/* A JSON config being applied: the text (checked by js_doc_check()) and
 * where to report. */
struct jdoc {
	const char *text, *end;
	const char *path;
	struct js_stack st;
	struct strbuf *err;
};

static int jfail(struct jdoc *d, const char *at, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int jfail(struct jdoc *d, const char *at, int rc, const char *fmt, ...)
{
	va_list ap;
	pp_err(d->err, rc, "%s:%d: ", d->path, js_line_of(d->text, at));
	va_start(ap, fmt);
	strbuf_vaddf(d->err, fmt, ap);
	va_end(ap);
	return rc;
}

/* Appends the text of a string (unescaped), number or literal value. */
static void add_scalar(struct strbuf *sb, const char *v, const char *vend)
{
	if (*v != '"') {
		strbuf_add(sb, v, (size_t)(vend - v));
		return;
	}
	size_t n = (size_t)(vend - v - 2);
	strbuf_grow(sb, n);
	sb->len += js_unescape(v + 1, n, sb->buf + sb->len);
	sb->buf[sb->len] = '\0';
}

/* A value as the text sim_input_set() takes: a scalar, or a list of
 * scalars joined with commas. Objects are the caller's business. */
static int value_text(struct jdoc *d, const struct js_item *m, struct strbuf *sb)
{
	struct js_iter it;
	struct js_item e;
	if (*m->v == '{')
		return jfail(d, m->v, PP_EINVAL, "expected a number, a string or a list");
	if (*m->v != '[') {
		add_scalar(sb, m->v, m->vend);
		return 0;
	}
	js_iter_init(&it, m->v, d->end, &d->st);
	while (js_iter_next(&it, &e)) {
		if (*e.v == '{' || *e.v == '[')
			return jfail(d, e.v, PP_EINVAL, "expected a list of numbers");
		if (sb->len)
			strbuf_addch(sb, ',');
		add_scalar(sb, e.v, e.vend);
	}
	return 0;
}

/* {"0": 1.5, "3": 2} into a stage map. */
static int stage_map(struct jdoc *d, const struct js_item *m, struct sim_times_in *t)
{
	struct sim_times_in n = { .kind = 3 };
	struct strbuf k = STRBUF_INIT, v = STRBUF_INIT;
	struct js_iter it;
	struct js_item e;
	int alloc = 0, rc = 0;
	js_iter_init(&it, m->v, d->end, &d->st);
	while (!rc && js_iter_next(&it, &e)) {
		strbuf_reset(&k);
		strbuf_reset(&v);
		add_scalar(&k, e.key - 1, e.key + e.keylen + 1);
		add_scalar(&v, e.v, e.vend);
		char *e1, *e2;
		long s = strtol(k.buf, &e1, 10);
		double x = strtod(v.buf, &e2);
		if (*e1 || !k.len || s < 0 || s > 1000000 || *e2 || !v.len || !isfinite(x) ||
		    x < 0) {
			rc = jfail(d, e.key, PP_EINVAL,
				   "a stage map needs {\"<stage>\": <time >= 0>}");
			break;
		}
		if (n.n == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			n.v = xrealloc(n.v, (size_t)alloc * sizeof(double));
			n.stage = xrealloc(n.stage, (size_t)alloc * sizeof(int));
		}
		n.stage[n.n] = (int)s;
		n.v[n.n++] = x;
	}
	strbuf_release(&k);
	strbuf_release(&v);
	if (rc) {
		times_clear(&n);
		return rc;
	}
	times_clear(t);
	*t = n;
	return 0;
}

/* Applies one member of the config object (depth 1: inside op_times). */
static int apply_member(struct jdoc *d, struct sim_input *in, const struct js_item *m, int depth);

static int apply_object(struct jdoc *d, struct sim_input *in, const char *v, int depth)
{
	struct js_iter it;
	struct js_item m;
	int rc = 0;
	if (*v != '{')
		return jfail(d, v, PP_EPARSE, "expected a JSON object");
	js_iter_init(&it, v, d->end, &d->st);
	while (!rc && js_iter_next(&it, &m))
		rc = apply_member(d, in, &m, depth);
	return rc;
}

static int apply_member(struct jdoc *d, struct sim_input *in, const struct js_item *m, int depth)
{
	struct strbuf key = STRBUF_INIT, val = STRBUF_INIT;
	size_t mark = d->err->len;
	int rc = 0;
	add_scalar(&key, m->key - 1, m->key + m->keylen + 1);
	const char *canon = canon_key(key.buf);
	int ti = time_index(canon);
	if (!strcmp(key.buf, "op_times") && depth == 0) {
		rc = apply_object(d, in, m->v, 1);
	} else if (!canon) {
		warn("%s:%d: ignoring unknown key '%s'", d->path, js_line_of(d->text, m->key),
		     key.buf);
	} else if (ti >= 0 && *m->v == '{') {
		rc = stage_map(d, m, &in->t[ti]);
	} else if (!(rc = value_text(d, m, &val)) &&
		   (!strcmp(canon, "visualization") || strcmp(val.buf, "null")) &&
		   sim_input_set(in, canon, val.buf, d->err)) {
		rc = pp_err_prefix(d->err, mark, PP_EINVAL, "%s:%d: ", d->path,
				   js_line_of(d->text, m->key));
	}
	strbuf_release(&key);
	strbuf_release(&val);
	return rc;
}

bool sim_input_is_json(const char *path)
{
	FILE *f = fopen(path, "rb");
	int c;
	if (!f)
		return false;
	while ((c = fgetc(f)) != EOF && isspace(c))
		;
	fclose(f);
	return c == '{';
}

int sim_input_load_json(struct sim_input *in, const char *path, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	struct jdoc d = { NULL, NULL, path, { 0 }, err };
	const char *v, *vend;
	int rc = js_doc_load(path, &text, &v, &vend, &d.st, err);
	if (!rc) {
		d.text = text.buf;
		d.end = text.buf + text.len;
		rc = apply_object(&d, in, v, 0);
	}
	js_stack_release(&d.st);
	strbuf_release(&text);
	return rc;
}

/* ---- YAML config (the subset pipeline.py's sample uses) ---- */

/* Trims blanks and one pair of matching quotes in place. */
static char *ytrim(char *s)
{
	size_t n;
	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
		s[n - 1] = '\0';
		s++;
	}
	return s;
}

/* Applies key = text (a flow list "[a, b]" is a comma list). */
static int yset(struct sim_input *in, const char *path, int line, const char *key, char *text,
		struct strbuf *err)
{
	size_t mark = err->len;
	const char *canon = canon_key(key);
	size_t n = strlen(text);
	if (!canon) {
		warn("%s:%d: ignoring unknown key '%s'", path, line, key);
		return 0;
	}
	if (n >= 2 && text[0] == '[' && text[n - 1] == ']') {
		text[n - 1] = '\0';
		text++;
	}
	if (sim_input_set(in, canon, text, err))
		return pp_err_prefix(err, mark, PP_EINVAL, "%s:%d: ", path, line);
	return 0;
}

int sim_input_load_yaml(struct sim_input *in, const char *path, struct strbuf *err)
{
	struct strbuf list = STRBUF_INIT, text = STRBUF_INIT;
	char key[128] = "", parent[128] = "";
	int rc = 0, line = 0, key_line = 0;
	if (strbuf_read_file(&text, path, 0, err)) {
		strbuf_release(&text);
		return PP_EIO;
	}
	for (char *s = text.buf, *next; *s && !rc; s = next) {
		size_t n = strcspn(s, "\n");
		next = s + n + (s[n] == '\n');
		s[n] = '\0';
		line++;
		char *hash = strstr(s, " #");
		if (hash)
			*hash = '\0';
		int indent = (int)strspn(s, " ");
		char *t = ytrim(s);
		if (!*t || *t == '#')
			continue;
		if (t[0] == '-' && (t[1] == ' ' || !t[1])) { /* list item */
			if (!*key) {
				rc = pp_err(err, PP_EPARSE, "%s:%d: list item without a key", path,
					    line);
				break;
			}
			if (list.len)
				strbuf_addch(&list, ',');
			strbuf_addstr(&list, ytrim(t + 1));
			continue;
		}
		if (*key && list.len)
			rc = yset(in, path, key_line, key, list.buf, err);
		strbuf_reset(&list);
		char *colon = strchr(t, ':');
		if (rc || !colon) {
			if (!rc)
				rc = pp_err(err, PP_EPARSE, "%s:%d: expected 'key: value'", path,
					    line);
			break;
		}
		*colon = '\0';
		char *k = ytrim(t), *v = ytrim(colon + 1);
		if (indent == 0)
			parent[0] = '\0';
		else if (strcmp(parent, "op_times"))
			warn("%s:%d: ignoring nested key '%s'", path, line, k);
		if (indent > 0 && strcmp(parent, "op_times")) {
			key[0] = '\0';
			continue;
		}
		snprintf(key, sizeof(key), "%s", k);
		key_line = line;
		if (*v) {
			rc = yset(in, path, line, key, v, err);
			key[0] = '\0';
		} else if (indent == 0 && !strcmp(k, "op_times")) {
			snprintf(parent, sizeof(parent), "%s", k);
			key[0] = '\0';
		}
	}
	if (!rc && *key && list.len)
		rc = yset(in, path, key_line, key, list.buf, err);
	strbuf_release(&list);
	strbuf_release(&text);
	return rc;
}

/* Resolves one op type's times into N values; NULL = model default. */
static int resolve(struct sim_input *in, int k, int N, struct strbuf *err)
{
	static const double defaults[SIM_T_N] = { 1.0, 2.0, 1.0, 1.0, 0.0 };
	const struct sim_times_in *t = &in->t[k];
	free(in->arr[k]);
	in->arr[k] = NULL;
	if (!t->kind)
		return 0;
	double *a = xmalloc((size_t)N * sizeof(double));
	bool *set = xcalloc((size_t)N, sizeof(bool));
	int rc = 0;
	if (t->kind == 2 && t->n != N)
		rc = pp_err(err, PP_EINVAL,
			    "%s times: %d values for %d stages "
			    "(give one value, or one per stage)",
			    time_keys[k], t->n, N);
	for (int s = 0; !rc && s < N; s++) {
		a[s] = t->kind == 1 ? t->all : t->kind == 2 ? t->v[s] : defaults[k];
		set[s] = t->kind != 3;
	}
	for (int i = 0; !rc && t->kind == 3 && i < t->n; i++) {
		if (t->stage[i] >= N)
			rc = pp_err(err, PP_EINVAL,
				    "%s times: stage %d does not "
				    "exist (%d stages)",
				    time_keys[k], t->stage[i], N);
		else {
			a[t->stage[i]] = t->v[i];
			set[t->stage[i]] = true;
		}
	}
	/* The overlapped time has no default: stages a map leaves out are NaN,
	 * an error only if a pair runs there (the reference's ValueError). */
	for (int s = 0; !rc && k == SIM_T_FB && s < N; s++)
		if (!set[s])
			a[s] = NAN;
	free(set);
	if (rc) {
		free(a);
		return rc;
	}
	in->arr[k] = a;
	return 0;
}

int sim_input_finish(struct sim_input *in, struct strbuf *err)
{
	struct sim_config *c = &in->cfg;
	bool v_shape = c->strategy == SIM_DUALPIPE_V;
	bool interleave =
		c->strategy == SIM_INTERLEAVE || c->strategy == SIM_1F1B_INTERLEAVE_OVERLAP;
	if (!in->have_devices && !in->have_stages)
		return pp_err(err, PP_EINVAL,
			      "give the number of devices or stages "
			      "(--devices / --stages)");
	/* Here one of the two is given: the other follows from it, but for an
	 * interleaved order. */
	if (interleave && (!in->have_devices || !in->have_stages))
		return pp_err(err, PP_EINVAL, "%s needs %s as well as %s",
			      sim_strategy_name(c->strategy),
			      in->have_devices ? "--stages" : "--devices",
			      in->have_devices ? "--devices" : "--stages");
	if (!in->have_devices)
		c->devices = v_shape ? (c->stages + 1) / 2 : c->stages;
	if (!in->have_stages)
		c->stages = v_shape ? 2 * c->devices : c->devices;
	if (!in->have_microbatches)
		return pp_err(err, PP_EINVAL,
			      "give the number of micro-batches "
			      "(--microbatches)");
	for (int k = 0; k < SIM_T_N; k++)
		if (resolve(in, k, c->stages, err))
			return PP_EINVAL;
	c->forward = in->arr[SIM_T_F];
	c->backward = in->arr[SIM_T_B];
	c->backward_d = in->arr[SIM_T_D];
	c->backward_w = in->arr[SIM_T_W];
	c->overlapped = in->arr[SIM_T_FB];
	return 0;
}
