/* patterns.c — pattern sets of docs/semantics.md §5 and the collectives of
 * communication kernels: defaults, [patterns] and [collectives] overrides,
 * matching with sqlite3_strglob() (exactly SQLite's GLOB).
 *
 * A set's globs are stored as one NUL-separated block; patterns_match() and
 * patterns_collective() are only called once per distinct name by the
 * classifier. The kernel table is comm_kernel, mem_kernel and the
 * [collectives] lists: a kernel matching a collective's glob is
 * communication whether comm_kernel matches it or not.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "patterns.h"
#include "rank_result.h"
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
	struct pat_list coll[RR_NCOLLS]; /* [collectives], by enum rr_coll */
};

static const char *const set_names[PAT_NSETS + 1] = {
	"comm_kernel", "mem_kernel", "forward_step", "backward_step", "pp_comm",
	"dp_comm",     "optimizer",  "recompute",    "loss_func",     NULL
};

/* docs/semantics.md §5 defaults; "recomupte" is a misspelling that exists in the wild.
 * comm_kernel: NCCL and RCCL (ncclDevKernel_*, ncclKernel_*), MSCCL and
 * MSCCL++, NVSHMEM, PyTorch's symmetric memory (one_shot_all_reduce_kernel,
 * two_shot_all_reduce_kernel_inplace, multimem_all_gather_kernel): their
 * names say the collective (docs/classification.md "Kernel types"). */
static const char *const set_defaults[PAT_NSETS] = {
	"*nccl* *mccl* *msccl* *rccl* *nvshmem* *one_shot_all_reduce* *two_shot_all_reduce* "
	"*multimem_*",
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

/* [collectives] defaults, by enum rr_coll: kernels whose names do not say
 * their collective. all_to_all: DeepEP's dispatch and combine (normal,
 * low-latency, and their notify steps; `void dpsk::ep::internode::
 * dispatch<false, 8, true, 8>(...)`, `deep_ep::intranode::combine<...>`,
 * `deep_ep::internode_ll::dispatch<...>`). all_reduce: the custom
 * all-reduce of vLLM, SGLang and aiter (`void vllm::
 * cross_device_reduce_1stage<__nv_bfloat16, 8>(...)`). */
static const char *const coll_defaults[RR_NCOLLS] = {
	[RR_COLL_ALLTOALL] = "*ep::internode::dispatch<* *ep::internode::combine<* "
			     "*ep::internode::dispatch_ll<* *ep::internode::combine_ll<* "
			     "*ep::internode::notify_dispatch<* *ep::internode::cached_notify<* "
			     "*ep::intranode::dispatch<* *ep::intranode::combine<* "
			     "*ep::intranode::notify_dispatch<* *ep::intranode::cached_notify* "
			     "*ep::internode_ll::dispatch<* *ep::internode_ll::combine<*",
	[RR_COLL_ALLREDUCE] = "*cross_device_reduce_1stage* *cross_device_reduce_2stage*",
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
 * or PP_EINVAL with a message appended to err when a quote is not closed. */
static int split_globs(struct strbuf *block, size_t *n, const char *text, const char *file,
		       const char *key, struct strbuf *err)
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
				return pp_err(err, PP_EINVAL,
					      "%s: config key %s: a quote is not closed in '%s'",
					      file, key, text);
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
	struct strbuf *err;
};

static void add_value(void *ctx, const char *value)
{
	struct values *v = ctx;
	if (!v->rc)
		v->rc = split_globs(&v->block, &v->n, value, v->file, v->key, v->err);
}

/* Fills l with every value of key (continuation lines and repeated keys
 * add to the list), else with the globs of def (NULL: none). */
static int list_parse(struct pat_list *l, const struct config *cfg, const char *key,
		      const char *def, struct strbuf *err)
{
	struct values v = { config_path(cfg), key, STRBUF_INIT, 0, 0, err };
	if (!cfg || !config_get_list(cfg, key, add_value, &v))
		v.rc = split_globs(&v.block, &v.n, def ? def : "", "defaults", key, err);
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

struct patterns *patterns_new(const struct config *cfg, struct strbuf *err)
{
	struct patterns *p = xcalloc(1, sizeof(*p));
	const char *colls[RR_NCOLLS];
	char key[64];
	size_t ncolls = 0;
	for (int s = 0; s < PAT_NSETS; s++) {
		snprintf(key, sizeof(key), "patterns.%s", set_names[s]);
		if (list_parse(&p->set[s], cfg, key, set_defaults[s], err))
			goto fail;
	}
	for (int c = RR_COLL_NONE + 1; c < RR_NCOLLS; c++) {
		snprintf(key, sizeof(key), "collectives.%s", rr_coll_name(c));
		if (list_parse(&p->coll[c], cfg, key, coll_defaults[c], err))
			goto fail;
		colls[ncolls++] = rr_coll_name(c);
	}
	colls[ncolls] = NULL;
	if (cfg) {
		config_check_known(cfg, "patterns", set_names);
		config_check_known(cfg, "collectives", colls);
	}
	return p;
fail:
	patterns_free(p);
	return NULL;
}

void patterns_free(struct patterns *p)
{
	if (!p)
		return;
	for (int s = 0; s < PAT_NSETS; s++) {
		free(p->set[s].block);
		free(p->set[s].globs);
	}
	for (int c = 0; c < RR_NCOLLS; c++) {
		free(p->coll[c].block);
		free(p->coll[c].globs);
	}
	free(p);
}

static bool list_match(const struct pat_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (sqlite3_strglob(l->globs[i], name) == 0)
			return true;
	return false;
}

/* The first collective (enum order) with a glob matching name, or
 * RR_COLL_NONE. */
static enum rr_coll coll_match(const struct patterns *p, const char *name)
{
	for (int c = RR_COLL_NONE + 1; c < RR_NCOLLS; c++)
		if (list_match(&p->coll[c], name))
			return (enum rr_coll)c;
	return RR_COLL_NONE;
}

uint32_t patterns_match(const struct patterns *p, const char *name)
{
	uint32_t bits = 0;
	for (int s = 0; s < PAT_NSETS; s++)
		if (list_match(&p->set[s], name))
			bits |= 1u << s;
	if (!(bits & 1u << PAT_COMM_KERNEL) && coll_match(p, name) != RR_COLL_NONE)
		bits |= 1u << PAT_COMM_KERNEL;
	return bits;
}

int patterns_collective(const struct patterns *p, const char *name)
{
	enum rr_coll c = coll_match(p, name);
	return c != RR_COLL_NONE ? c : rr_coll_of(name, strlen(name));
}

size_t patterns_globs(const struct patterns *p, enum pat_set set, const char *const **globs)
{
	*globs = p->set[set].globs;
	return p->set[set].n;
}

size_t patterns_coll_globs(const struct patterns *p, int coll, const char *const **globs)
{
	if (coll <= RR_COLL_NONE || coll >= RR_NCOLLS) {
		*globs = NULL;
		return 0;
	}
	*globs = p->coll[coll].globs;
	return p->coll[coll].n;
}
