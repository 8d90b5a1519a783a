/* wi_ops.c — op types, the op table and the metadata check. */
#include "wi_ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/pp.h"
#include "util/strbuf.h"

void wi_table_init(struct wi_table *t)
{
	memset(t, 0, sizeof(*t));
	wi_table_set_order(t, NULL, 0);
}

void wi_table_release(struct wi_table *t)
{
	free(t->ops);
	free(t->line);
	wi_table_init(t);
}

void wi_table_add(struct wi_table *t, const struct wi_op *op, uint32_t line)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 4096;
		t->ops = xrealloc(t->ops, t->cap * sizeof(*t->ops));
		t->line = xrealloc(t->line, t->cap * sizeof(*t->line));
	}
	t->line[t->n] = line;
	t->ops[t->n++] = *op;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(op_type_name(*(const uint8_t *)a), op_type_name(*(const uint8_t *)b));
}

void wi_table_set_order(struct wi_table *t, const char *const *names, size_t n)
{
	uint8_t seq[OP_NTYPES];
	bool named[OP_NTYPES] = { false };
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int ty = op_type_parse(names[i], strlen(names[i]));
		if (ty >= 0 && !named[ty]) {
			named[ty] = true;
			seq[k++] = (uint8_t)ty;
		}
	}
	size_t first_rest = k;
	for (int ty = 0; ty < OP_NTYPES; ty++)
		if (!named[ty])
			seq[k++] = (uint8_t)ty;
	qsort(seq + first_rest, k - first_rest, 1, cmp_name);
	for (size_t i = 0; i < k; i++)
		t->order[seq[i]] = (uint8_t)i;
}

void wi_table_where(const struct wi_table *t, size_t i, char *buf, size_t len)
{
	if (t->line && t->line[i] && t->src[0])
		snprintf(buf, len, "%s:%u: ", t->src, t->line[i]);
	else if (t->src[0])
		snprintf(buf, len, "%s: row %zu: ", t->src, i + 1);
	else
		snprintf(buf, len, "row %zu: ", i + 1);
}

int wi_errf(struct strbuf *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pp_verr(err, PP_EPARSE, fmt, ap);
	va_end(ap);
	return PP_EPARSE;
}

int wi_meta_check(const struct wi_meta *m, struct strbuf *err)
{
	const struct {
		const char *name;
		int64_t v;
	} sizes[] = { { "dp_size", m->dp_size },   { "pp_size", m->pp_size },
		      { "tp_size", m->tp_size },   { "dsp_size", m->dsp_size },
		      { "vpp_size", m->vpp_size }, { "world_size", m->world_size } };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (sizes[i].v <= 0 || sizes[i].v > (int64_t)1 << 24) {
			return pp_err(err, PP_EINVAL, "%s is %lld: it must be a positive integer",
				      sizes[i].name, (long long)sizes[i].v);
		}
	if (m->run_id < 0) {
		return pp_err(err, PP_EINVAL, "run_id is %lld: it must be >= 0",
			      (long long)m->run_id);
	}
	int64_t w = m->dp_size * m->pp_size * m->tp_size * m->dsp_size;
	if (w != m->world_size) {
		return pp_err(
			err, PP_EINVAL,
			"world_size is %lld but dp_size*pp_size*tp_size*dsp_size = %lld*%lld*%lld*%lld = %lld",
			(long long)m->world_size, (long long)m->dp_size, (long long)m->pp_size,
			(long long)m->tp_size, (long long)m->dsp_size, (long long)w);
	}
	return 0;
}
