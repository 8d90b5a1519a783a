/* ops.c — op types, the op table and the metadata check. */
#include "ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/pp.h"

static const char *const optype_names[WI_NOPTYPES] = {
	[WI_FWD_COMPUTE] = "forward-compute",
	[WI_BWD_COMPUTE] = "backward-compute",
	[WI_FWD_SEND] = "forward-send",
	[WI_FWD_RECV] = "forward-recv",
	[WI_BWD_SEND] = "backward-send",
	[WI_BWD_RECV] = "backward-recv",
	[WI_PARAMS_AG] = "params-all-gather",
	[WI_GRADS_RS] = "grads-reduce-scatter",
	[WI_SEP_AR] = "separate-grads-all-reduce",
	[WI_LAYERNORM] = "layernorm-grads-all-reduce",
	[WI_EMBEDDING] = "embedding-grads-all-reduce",
	[WI_CLIP] = "optimizer-clip-main-grad",
	[WI_OPTIMIZER] = "optimizer",
	[WI_GC] = "gc",
};

const char *wi_optype_name(int optype)
{
	return optype >= 0 && optype < WI_NOPTYPES ? optype_names[optype] : "?";
}

int wi_optype_parse(const char *s, size_t n)
{
	for (int i = 0; i < WI_NOPTYPES; i++)
		if (strlen(optype_names[i]) == n && !memcmp(optype_names[i], s, n))
			return i;
	return -1;
}

bool wi_optype_is_combined(const char *s, size_t n)
{
	/* Megatron's combined calls, as the reference's helper lists them. */
	static const char *const combined[] = {
		"forward-send-backward-recv", "backward-send-forward-recv",
		"forward-send-forward-recv",  "backward-send-backward-recv",
		"forward-backward-send-recv",
	};
	for (size_t i = 0; i < sizeof(combined) / sizeof(combined[0]); i++)
		if (strlen(combined[i]) == n && !memcmp(combined[i], s, n))
			return true;
	return false;
}

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
	return strcmp(optype_names[*(const uint8_t *)a], optype_names[*(const uint8_t *)b]);
}

void wi_table_set_order(struct wi_table *t, const char *const *names, size_t n)
{
	uint8_t seq[WI_NOPTYPES];
	bool named[WI_NOPTYPES] = { false };
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int ty = wi_optype_parse(names[i], strlen(names[i]));
		if (ty >= 0 && !named[ty]) {
			named[ty] = true;
			seq[k++] = (uint8_t)ty;
		}
	}
	size_t first_rest = k;
	for (int ty = 0; ty < WI_NOPTYPES; ty++)
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

int wi_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return PP_EPARSE;
}

int wi_meta_check(const struct wi_meta *m, char *err, size_t errlen)
{
	const struct {
		const char *name;
		int64_t v;
	} sizes[] = { { "dp_size", m->dp_size },   { "pp_size", m->pp_size },
		      { "tp_size", m->tp_size },   { "dsp_size", m->dsp_size },
		      { "vpp_size", m->vpp_size }, { "world_size", m->world_size } };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (sizes[i].v <= 0 || sizes[i].v > (int64_t)1 << 24) {
			snprintf(err, errlen, "%s is %lld: it must be a positive integer",
				 sizes[i].name, (long long)sizes[i].v);
			return PP_EINVAL;
		}
	if (m->run_id < 0) {
		snprintf(err, errlen, "run_id is %lld: it must be >= 0", (long long)m->run_id);
		return PP_EINVAL;
	}
	int64_t w = m->dp_size * m->pp_size * m->tp_size * m->dsp_size;
	if (w != m->world_size) {
		snprintf(
			err, errlen,
			"world_size is %lld but dp_size*pp_size*tp_size*dsp_size = %lld*%lld*%lld*%lld = %lld",
			(long long)m->world_size, (long long)m->dp_size, (long long)m->pp_size,
			(long long)m->tp_size, (long long)m->dsp_size, (long long)w);
		return PP_EINVAL;
	}
	return 0;
}
