/* patterns.c — pattern sets of docs/semantics.md §5: defaults, [patterns] overrides and
 * matching with sqlite3_strglob() (exactly SQLite's GLOB).
 *
 * A set's globs are stored as one NUL-separated block; patterns_match() is
 * only called once per distinct name by the classifier.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "patterns.h"
#include "util/config.h"
#include "util/pp.h"
#include "util/strbuf.h"

struct pat_list {
	char *block;        /* the globs, NUL-separated (globs may be "") */
	const char **globs; /* pointers into block */
	size_t n;
};

struct patterns {
	struct pat_list set[PAT_NSETS];
};

static const char *const set_names[PAT_NSETS + 1] = {
	"comm_kernel", "mem_kernel", "forward_step", "backward_step", "pp_comm",
	"dp_comm",     "optimizer",  "recompute",    "loss_func",     NULL
};

/* docs/semantics.md §5 defaults; "recomupte" is a misspelling that exists in the wild. */
static const char *const set_defaults[PAT_NSETS] = {
	"*nccl* *mccl*",
	"*memcpy* *Memcpy* *memset* *Memset*",
	"*forward_step*",
	"*backward_step*",
	"*send_forward* *recv_forward* *send_backward* *recv_backward* "
	"*send_forward_recv_backward* *send_backward_recv_forward*",
	"*start_grad_sync* *finish_grad_sync* *start_param_sync* "
	"*finish_param_sync* *finalize_model_grads* *optimizer* "
	"*pretrain*loss_func*",
	"*optimizer*",
	"*recomupte*forward* *recompute*forward* *custom_forward*",
	"*pretrain*loss_func*"
};

const char *patterns_set_name(enum pat_set set)
{
	return (unsigned)set < PAT_NSETS ? set_names[set] : "?";
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* Adds the globs of one value of a set's key to the NUL-separated block
 * (words separated by blanks; "a quoted glob" keeps its blanks). Returns 0,
 * or PP_EINVAL with a message in err when a quote is not closed. */
static int split_globs(struct strbuf *block, size_t *n, const char *text, const char *file,
		       const char *key, char *err, size_t errlen)
{
	for (const char *p = text; *p;) {
		while (*p && is_space(*p))
			p++;
		if (!*p)
			break;
		const char *start = p, *end;
		if (*p == '"') {
			start = ++p;
			if (!(end = strchr(p, '"'))) {
				snprintf(err, errlen,
					 "%s: config key %s: a quote is not closed in '%s'", file,
					 key, text);
				return PP_EINVAL;
			}
			p = end + 1;
		} else {
			while (*p && !is_space(*p))
				p++;
			end = p;
		}
		strbuf_add(block, start, (size_t)(end - start));
		strbuf_addch(block, '\0');
		(*n)++;
	}
	return 0;
}

struct values {
	const char *file, *key; /* file: config_path() */
	struct strbuf block;
	size_t n;
	int rc;
	char *err;
	size_t errlen;
};

static void add_value(void *ctx, const char *value)
{
	struct values *v = ctx;
	if (!v->rc)
		v->rc = split_globs(&v->block, &v->n, value, v->file, v->key, v->err, v->errlen);
}

/* The globs of set s: every value of its key (continuation lines and
 * repeated keys add to the list), else the default. */
static int set_parse(struct pat_list *l, const struct config *cfg, int s, char *err, size_t errlen)
{
	char key[64];
	snprintf(key, sizeof(key), "patterns.%s", set_names[s]);
	struct values v = { config_path(cfg), key, STRBUF_INIT, 0, 0, err, errlen };
	if (!cfg || !config_get_list(cfg, key, add_value, &v))
		v.rc = split_globs(&v.block, &v.n, set_defaults[s], "defaults", key, err, errlen);
	if (v.rc) {
		strbuf_release(&v.block);
		return v.rc;
	}
	l->n = v.n;
	l->block = strbuf_detach(&v.block, NULL);
	l->globs = xmalloc(sizeof(*l->globs) * (l->n + 1));
	const char *g = l->block;
	for (size_t i = 0; i < l->n; i++, g += strlen(g) + 1)
		l->globs[i] = g;
	return 0;
}

struct patterns *patterns_new(const struct config *cfg, char *err, size_t errlen)
{
	struct patterns *p = xcalloc(1, sizeof(*p));
	for (int s = 0; s < PAT_NSETS; s++) {
		if (set_parse(&p->set[s], cfg, s, err, errlen)) {
			patterns_free(p);
			return NULL;
		}
	}
	if (cfg)
		config_check_known(cfg, "patterns", set_names);
	return p;
}

void patterns_free(struct patterns *p)
{
	if (!p)
		return;
	for (int s = 0; s < PAT_NSETS; s++) {
		free(p->set[s].block);
		free(p->set[s].globs);
	}
	free(p);
}

uint32_t patterns_match(const struct patterns *p, const char *name)
{
	uint32_t bits = 0;
	for (int s = 0; s < PAT_NSETS; s++) {
		const struct pat_list *l = &p->set[s];
		for (size_t i = 0; i < l->n; i++) {
			if (sqlite3_strglob(l->globs[i], name) == 0) {
				bits |= 1u << s;
				break;
			}
		}
	}
	return bits;
}

size_t patterns_globs(const struct patterns *p, enum pat_set set, const char *const **globs)
{
	*globs = p->set[set].globs;
	return p->set[set].n;
}
