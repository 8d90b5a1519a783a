/* classify.c — feeding events to the per-rank classifier and assembling
 * its result (see classify.h; design in classify_priv.h).
 *
 * Per event the hot path does: one switch on ph, a category test by length,
 * and for X events one name lookup in the intern table (a hash of the name
 * and, on a hit, one memcmp). Globs run once per distinct name. A CPU slice
 * is kept only if its name matches a pattern set, it launched GPU work, or it
 * carries process-group args; everything else is only counted.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "classify_priv.h"
#include "read/trace_read.h"
#include "util/arena.h"
#include "util/hugepage.h"
#include "util/pp.h"

void vec_init(struct vec *v, size_t elem)
{
	v->data = NULL;
	v->n = v->cap = 0;
	v->elem = elem;
}

void vec_release(struct vec *v)
{
	free(v->data);
	vec_init(v, v->elem);
}

void *vec_push(struct vec *v)
{
	if (v->n == v->cap) {
		/* Large vectors grow 4x: fewer reallocs that copy; untouched
		 * capacity is not resident. */
		size_t cap = !v->cap ? 256
			     : v->cap * v->elem >= (1u << 20) ? v->cap * 4
							      : v->cap * 2;
		void *d = hugepage_realloc(v->data, v->n * v->elem,
					   cap * v->elem);
		if (!d)
			return NULL;
		v->data = d;
		v->cap = cap;
	}
	void *p = (char *)v->data + v->n++ * v->elem;
	memset(p, 0, v->elem);
	return p;
}

enum cat_kind {
	CK_CPU,       /* any CPU category (python_function, cpu_op, ...) */
	CK_KERNEL,    /* kernel */
	CK_MEM,       /* gpu_memcpy, gpu_memset (Memcpy, Memset in 2021) */
	CK_FWDBWD,    /* fwdbwd flows */
	CK_GPU_OTHER  /* device-side annotations and syncs: neither */
};

/* ASCII case-insensitive equality of s[0..n) with a lowercase literal of
 * the same length. */
static bool ieq(const char *s, const char *lit, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 'A' && ch <= 'Z')
			ch |= 0x20;
		if (ch != (unsigned char)lit[i])
			return false;
	}
	return true;
}

static enum cat_kind cat_kind(struct pp_sv cat)
{
	switch (cat.n) {
	case 6:
		switch (cat.p[0] | 0x20) {
		case 'k':
			return ieq(cat.p, "kernel", 6) ? CK_KERNEL : CK_CPU;
		case 'f':
			return ieq(cat.p, "fwdbwd", 6) ? CK_FWDBWD : CK_CPU;
		case 'm':
			return ieq(cat.p, "memcpy", 6) || ieq(cat.p, "memset", 6)
				       ? CK_MEM : CK_CPU;
		}
		break;
	case 9:
		if (ieq(cat.p, "cuda_sync", 9))
			return CK_GPU_OTHER;
		break;
	case 10:
		if (ieq(cat.p, "gpu_memcpy", 10) || ieq(cat.p, "gpu_memset", 10))
			return CK_MEM;
		break;
	case 19:
		if (ieq(cat.p, "gpu_user_annotation", 19))
			return CK_GPU_OTHER;
		break;
	}
	return CK_CPU;
}

struct classify *classify_new(const struct patterns *pats, struct arena *arena)
{
	struct classify *c = arena_calloc(arena, 1, sizeof(*c));
	if (!c)
		return NULL;
	c->pats = pats;
	c->arena = arena;
	vec_init(&c->names, sizeof(struct cname));
	vec_init(&c->threads, sizeof(struct cthread));
	vec_init(&c->slices, sizeof(struct cslice));
	vec_init(&c->pgslices, sizeof(struct cpgslice));
	vec_init(&c->launches, sizeof(struct claunch));
	vec_init(&c->dup_launches, sizeof(struct claunch));
	vec_init(&c->gpus, sizeof(struct rr_kernel));
	vec_init(&c->groups, sizeof(struct cgroup));
	itab_init(&c->name_tab);
	itab_init(&c->thread_tab);
	itab_init(&c->group_tab);
	cmap_init(&c->corr);
	imap_init(&c->flows);
	c->fwd = c->bwd = -1;
	return c;
}

struct classify *classify_new_survey(const struct patterns *pats,
				     struct arena *arena)
{
	struct classify *c = classify_new(pats, arena);
	if (c)
		c->survey = true;
	return c;
}

void classify_free(struct classify *c)
{
	if (!c)
		return;
	vec_release(&c->names);
	vec_release(&c->threads);
	vec_release(&c->slices);
	vec_release(&c->pgslices);
	vec_release(&c->launches);
	vec_release(&c->dup_launches);
	vec_release(&c->gpus);
	vec_release(&c->groups);
	itab_release(&c->name_tab);
	itab_release(&c->thread_tab);
	itab_release(&c->group_tab);
	cmap_release(&c->corr);
	imap_release(&c->flows);
}

/* --- interning ---------------------------------------------------------- */

static uint64_t name_rehash(void *ctx, uint32_t idx)
{
	return VEC_AT((struct vec *)ctx, struct cname, idx).hash;
}

static const char profstep[] = "ProfilerStep#";

/* A copy of s[0..n) with every NUL byte (JSON "\u0000" in a name) replaced
 * by U+FFFD, so that the name survives as a C string. */
static const char *nul_to_fffd(struct classify *c, const char *s, size_t n)
{
	size_t nuls = 0, j = 0;
	for (size_t i = 0; i < n; i++)
		nuls += !s[i];
	char *t = arena_alloc(c->arena, n + 2 * nuls + 1);
	if (!t)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i]) {
			t[j++] = s[i];
		} else {
			t[j++] = (char)0xef;
			t[j++] = (char)0xbf;
			t[j++] = (char)0xbd;
		}
	}
	t[j] = '\0';
	return t;
}

/* The id of name s[0..n), interning it (and matching the pattern sets) on
 * first sight. Returns -1 when out of memory. */
static long name_intern_slow(struct classify *c, const char *s, size_t n);

/* The first and last (up to) 8 bytes of s[0..n) with n, mixed. */
static uint64_t name_key(const char *s, size_t n)
{
	uint64_t head = 0, tail = 0;
	size_t k = n < 8 ? n : 8;
	memcpy(&head, s, k);
	memcpy(&tail, s + n - k, k);
	return (head * 0x9e3779b97f4a7c15ull) ^ (tail * 0xbf58476d1ce4e5b9ull) ^ n;
}

static long name_intern(struct classify *c, const char *s, size_t n)
{
	uint64_t key = name_key(s, n);
	size_t slot = (size_t)((key * 0x94d049bb133111ebull) >> 56);
	uint32_t id1 = c->ncache[slot].id1;
	if (id1 && c->ncache[slot].key == key) {
		const struct cname *e = &VEC_AT(&c->names, struct cname, id1 - 1);
		if (e->len == n && !memcmp(e->s, s, n))
			return (long)(id1 - 1);
	}
	long id = name_intern_slow(c, s, n);
	if (id >= 0) {
		c->ncache[slot].key = key;
		c->ncache[slot].id1 = (uint32_t)id + 1;
	}
	return id;
}

static long name_intern_slow(struct classify *c, const char *s, size_t n)
{
	uint64_t h = pp_hash_bytes(s, n, 0);
	if ((c->name_tab.n + 1) * 2 > c->name_tab.cap &&
	    itab_reserve(&c->name_tab, name_rehash, &c->names) < 0)
		return -1;
	struct itab *t = &c->name_tab;
	size_t mask = t->cap - 1, i = h & mask;
	for (; t->slot[i]; i = (i + 1) & mask) {
		if (t->hash32[i] != (uint32_t)h)
			continue;
		struct cname *e = &VEC_AT(&c->names, struct cname,
					  t->slot[i] - 1);
		if (e->len == n && !memcmp(e->s, s, n))
			return (long)(t->slot[i] - 1);
	}
	struct cname *e = vec_push(&c->names);
	char *copy = e ? arena_strndup(c->arena, s, n) : NULL;
	if (!copy)
		return -1;
	e->s = e->text = copy;
	e->len = (uint32_t)n;
	e->hash = h;
	e->out_id = UINT32_MAX;
	if (memchr(copy, '\0', n) && !(e->text = nul_to_fffd(c, copy, n)))
		return -1;
	e->bits = patterns_match(c->pats, e->text);
	if (!strncmp(e->text, profstep, sizeof(profstep) - 1))
		e->bits |= NB_PROFSTEP;
	t->slot[i] = (uint32_t)c->names.n;
	t->hash32[i] = (uint32_t)h;
	t->n++;
	return (long)(c->names.n - 1);
}

static uint64_t id_hash(const struct trace_id *id)
{
	return id->is_str ? pp_hash_bytes(id->str.p, id->str.n, 1)
			  : pp_hash_u64((uint64_t)id->num);
}

static bool id_eq(const struct trace_id *id, bool is_str, int64_t num,
		  const char *s)
{
	if (id->is_str != is_str)
		return false;
	return is_str ? !strcmp(id->str.p, s) : id->num == num;
}

static uint64_t thread_rehash(void *ctx, uint32_t idx)
{
	return VEC_AT((struct vec *)ctx, struct cthread, idx).hash;
}

/* The index of the thread (ev->pid, ev->tid), or -1 when out of memory. */
static long thread_intern(struct classify *c, const struct trace_event *ev)
{
	const struct trace_id *pid = &ev->pid, *tid = &ev->tid;
	if (c->have_last_thread && !pid->is_str && !tid->is_str) {
		const struct cthread *l =
			&VEC_AT(&c->threads, struct cthread, c->last_thread);
		if (!l->pid_str && !l->tid_str && l->pid == pid->num &&
		    l->tid == tid->num)
			return c->last_thread;
	}
	uint64_t h = pp_hash_u64(id_hash(pid) * 31 + id_hash(tid));
	if (itab_reserve(&c->thread_tab, thread_rehash, &c->threads) < 0)
		return -1;
	struct itab *t = &c->thread_tab;
	size_t mask = t->cap - 1, i = h & mask;
	for (; t->slot[i]; i = (i + 1) & mask) {
		if (t->hash32[i] != (uint32_t)h)
			continue;
		const struct cthread *e =
			&VEC_AT(&c->threads, struct cthread, t->slot[i] - 1);
		if (id_eq(pid, e->pid_str, e->pid, e->pid_s) &&
		    id_eq(tid, e->tid_str, e->tid, e->tid_s))
			goto found;
	}
	struct cthread *e = vec_push(&c->threads);
	if (!e)
		return -1;
	e->pid_str = pid->is_str;
	e->tid_str = tid->is_str;
	e->pid = pid->num;
	e->tid = tid->num;
	e->hash = h;
	if (pid->is_str && !(e->pid_s = arena_strndup(c->arena, pid->str.p,
						      pid->str.n)))
		return -1;
	if (tid->is_str && !(e->tid_s = arena_strndup(c->arena, tid->str.p,
						      tid->str.n)))
		return -1;
	t->slot[i] = (uint32_t)c->threads.n;
	t->hash32[i] = (uint32_t)h;
	t->n++;
found:
	c->last_thread = t->slot[i] - 1;
	c->have_last_thread = true;
	return c->last_thread;
}

static uint64_t group_rehash(void *ctx, uint32_t idx)
{
	return VEC_AT((struct vec *)ctx, struct cgroup, idx).hash;
}

/* The index of the process group named by ev's args, or -1 when out of
 * memory. Callers check that some pg arg is present. */
static long group_intern(struct classify *c, const struct trace_event *ev)
{
	uint64_t h = pp_hash_bytes(ev->pg_name.p, ev->pg_name.n, 2);
	h = pp_hash_bytes(ev->pg_desc.p, ev->pg_desc.n, h);
	h = pp_hash_bytes(ev->pg_ranks.p, ev->pg_ranks.n, h);
	if (itab_reserve(&c->group_tab, group_rehash, &c->groups) < 0)
		return -1;
	struct itab *t = &c->group_tab;
	size_t mask = t->cap - 1, i = h & mask;
	for (; t->slot[i]; i = (i + 1) & mask) {
		const struct cgroup *g =
			&VEC_AT(&c->groups, struct cgroup, t->slot[i] - 1);
		if (g->hash == h && !strcmp(g->name, ev->pg_name.p) &&
		    !strcmp(g->desc, ev->pg_desc.p) &&
		    !strcmp(g->ranks, ev->pg_ranks.p))
			return (long)(t->slot[i] - 1);
	}
	struct cgroup *g = vec_push(&c->groups);
	if (!g)
		return -1;
	g->hash = h;
	g->name = arena_strndup(c->arena, ev->pg_name.p, ev->pg_name.n);
	g->desc = arena_strndup(c->arena, ev->pg_desc.p, ev->pg_desc.n);
	g->ranks = arena_strndup(c->arena, ev->pg_ranks.p, ev->pg_ranks.n);
	if (!g->name || !g->desc || !g->ranks)
		return -1;
	t->slot[i] = (uint32_t)c->groups.n;
	t->hash32[i] = (uint32_t)h;
	t->n++;
	return (long)(c->groups.n - 1);
}

static bool has_pg_args(const struct trace_event *ev)
{
	return ev->pg_desc.n || ev->pg_ranks.n || ev->pg_name.n;
}

/* --- feeding ------------------------------------------------------------ */

enum rr_type classify_kernel_type(uint32_t bits, bool memevent)
{
	if (memevent)
		return RR_MEM;
	if (bits & (1u << PAT_COMM_KERNEL))
		return RR_COMM;
	if (bits & (1u << PAT_MEM_KERNEL))
		return RR_MEM;
	return RR_COMP;
}

/* One row per GPU event is most of a worker's memory (and every fresh page
 * costs a fault): keep it at 56 bytes. */
_Static_assert(sizeof(struct rr_kernel) <= 56, "rr_kernel grew");

static int feed_gpu(struct classify *c, const struct trace_event *ev,
		    bool memevent)
{
	long name = name_intern(c, ev->name.p, ev->name.n);
	if (name < 0)
		return PP_ENOMEM;
	uint32_t bits = VEC_AT(&c->names, struct cname, name).bits;
	for (int set = PAT_COMM_KERNEL; set <= PAT_MEM_KERNEL; set++)
		c->gpu_in_set[set] += bits >> set & 1;
	c->cnt.gpu_events++;
	if (c->survey)
		return 0;
	struct rr_kernel *k = vec_push(&c->gpus);
	if (!k)
		return PP_ENOMEM;
	k->start_ns = ev->ts_ns; /* raw: the base is added at the end */
	k->dur_ns = ev->dur_ns > 0 ? ev->dur_ns : 0;
	k->has_correlation = ev->has & TE_CORRELATION;
	k->correlation = k->has_correlation ? ev->correlation : 0;
	k->stream = ev->has & TE_STREAM ? ev->stream
		    : (ev->has & TE_TID) && !ev->tid.is_str ? ev->tid.num : -1;
	k->name_id = (uint32_t)name;
	k->type = (uint8_t)classify_kernel_type(bits, memevent);
	k->phase = RR_NOPHASE;
	k->seq = k->step = k->pg = -1;
	if (has_pg_args(ev)) {
		long pg = group_intern(c, ev);
		if (pg < 0)
			return PP_ENOMEM;
		k->pg = (int32_t)pg;
	}
	return 0;
}

static int feed_cpu(struct classify *c, const struct trace_event *ev)
{
	c->cnt.cpu_slices++;
	long name = name_intern(c, ev->name.p, ev->name.n);
	if (name < 0)
		return PP_ENOMEM;
	uint32_t bits = VEC_AT(&c->names, struct cname, name).bits &
			NB_SLICE_SETS;
	bool launch = ev->has & TE_CORRELATION, pg = has_pg_args(ev);
	if (!bits && !launch && !pg)
		return 0;
	long th = thread_intern(c, ev);
	if (th < 0)
		return PP_ENOMEM;
	int64_t dur = ev->dur_ns > 0 ? ev->dur_ns : 0;
	if (bits) {
		struct cslice *s = vec_push(&c->slices);
		if (!s)
			return PP_ENOMEM;
		s->ts = ev->ts_ns;
		s->dur = dur;
		s->thread = (uint32_t)th;
		s->name = (uint32_t)name;
		s->bits = bits;
		s->order = (uint32_t)(c->slices.n - 1);
		c->cnt.kept_slices++;
	}
	if (launch && c->survey) {
		VEC_AT(&c->threads, struct cthread, th).launches++;
		c->cnt.launches++;
	} else if (launch) {
		uint32_t *v = cmap_ref(&c->corr, ev->correlation,
				       (uint32_t)c->launches.n);
		if (!v)
			return PP_ENOMEM;
		/* The first launch with this id wins the attribution; later
		 * ones (rare) are kept apart for the launch-count rule only. */
		struct claunch *l = vec_push(*v == c->launches.n ? &c->launches
								 : &c->dup_launches);
		if (!l)
			return PP_ENOMEM;
		l->ts = ev->ts_ns;
		l->thread = (uint32_t)th;
		VEC_AT(&c->threads, struct cthread, th).launches++;
		c->cnt.launches++;
	}
	if (pg && !c->survey) {
		long g = group_intern(c, ev);
		struct cpgslice *s = g < 0 ? NULL : vec_push(&c->pgslices);
		if (!s)
			return PP_ENOMEM;
		s->ts = ev->ts_ns;
		s->dur = dur;
		s->thread = (uint32_t)th;
		s->order = (uint32_t)(c->pgslices.n - 1);
		s->pg = (int32_t)g;
	}
	return 0;
}

static int feed_flow(struct classify *c, const struct trace_event *ev)
{
	long th = thread_intern(c, ev);
	if (th < 0)
		return PP_ENOMEM;
	struct cthread *t = &VEC_AT(&c->threads, struct cthread, th);
	bool start = ev->ph == 's';
	if (start)
		t->flows_s++;
	else
		t->flows_f++;
	c->cnt.flows++;
	uint32_t *v = imap_ref(&c->flows, (int64_t)id_hash(&ev->id), 0);
	if (!v)
		return PP_ENOMEM;
	*v |= start ? 1u : 2u;
	return 0;
}

static int feed_meta(struct classify *c, const struct trace_event *ev)
{
	if (strcmp(ev->name.p, "thread_name"))
		return 0;
	long th = thread_intern(c, ev);
	if (th < 0)
		return PP_ENOMEM;
	const char *name = arena_strndup(c->arena, ev->arg_name.p,
					 ev->arg_name.n);
	if (!name)
		return PP_ENOMEM;
	VEC_AT(&c->threads, struct cthread, th).name = name;
	return 0;
}

/* A survey's second pass: launches inside backward-step windows (roots on
 * the forward thread), per launching thread. */
static int feed_launch_pass(struct classify *c, const struct trace_event *ev)
{
	if (ev->ph != 'X' || !(ev->has & TE_CORRELATION))
		return 0;
	enum cat_kind k = cat_kind(ev->cat);
	if (k != CK_CPU && k != CK_FWDBWD)
		return 0;
	long th = thread_intern(c, ev);
	if (th < 0)
		return PP_ENOMEM;
	if (roots_find(&c->roots[PAT_BACKWARD_STEP], (uint32_t)c->fwd,
		       ev->ts_ns) >= 0)
		VEC_AT(&c->threads, struct cthread, th).bwd_launches++;
	return 0;
}

int classify_feed(struct classify *c, const struct trace_event *ev)
{
	int rc = 0;
	if (c->failed)
		return c->failed;
	if (c->launch_pass) {
		if ((rc = feed_launch_pass(c, ev)) < 0)
			c->failed = rc;
		return rc;
	}
	c->cnt.events++;
	switch (ev->ph) {
	case 'X':
		switch (cat_kind(ev->cat)) {
		case CK_KERNEL:
			rc = feed_gpu(c, ev, false);
			break;
		case CK_MEM:
			rc = feed_gpu(c, ev, true);
			break;
		case CK_CPU:
		case CK_FWDBWD:
			rc = feed_cpu(c, ev);
			break;
		case CK_GPU_OTHER:
			break;
		}
		break;
	case 's':
	case 'f':
		if (cat_kind(ev->cat) == CK_FWDBWD)
			rc = feed_flow(c, ev);
		break;
	case 'M':
		rc = feed_meta(c, ev);
		break;
	}
	if (rc < 0)
		c->failed = rc;
	return rc;
}

/* --- result assembly ---------------------------------------------------- */

static int cmp_root_time(const void *pa, const void *pb)
{
	const struct croot *a = *(const struct croot *const *)pa;
	const struct croot *b = *(const struct croot *const *)pb;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return (a->order > b->order) - (a->order < b->order);
}

static const int phase_set[RR_NPHASES] = {
	[RR_FWD] = PAT_FORWARD_STEP, [RR_BWD] = PAT_BACKWARD_STEP,
	[RR_PP] = PAT_PP_COMM, [RR_DP] = PAT_DP_COMM, [RR_OPT] = PAT_OPTIMIZER
};

/* Steps of every phase (Megatron mode only): fwd and bwd = roots on the
 * forward thread, the others on any thread; seq in cpu start order. */
static int build_steps(struct classify *c, struct rank_result *res,
		       int64_t base)
{
	size_t total = 0;
	if (res->mode != RR_MEGATRON)
		return 0;
	for (int ph = 0; ph < RR_NPHASES; ph++)
		total += c->roots[phase_set[ph]].n;
	res->steps = arena_calloc(c->arena, total + 1, sizeof(*res->steps));
	struct croot **tmp = arena_alloc(c->arena, (total + 1) * sizeof(*tmp));
	if (!res->steps || !tmp)
		return PP_ENOMEM;
	for (int ph = 0; ph < RR_NPHASES; ph++) {
		const struct croots *r = &c->roots[phase_set[ph]];
		bool on_fwd = ph == RR_FWD || ph == RR_BWD;
		size_t n = 0;
		for (size_t i = 0; i < r->n; i++)
			if (!on_fwd || r->v[i].thread == (uint32_t)c->fwd)
				tmp[n++] = &r->v[i];
		qsort(tmp, n, sizeof(*tmp), cmp_root_time);
		for (size_t i = 0; i < n; i++) {
			struct rr_step *st = &res->steps[res->nsteps];
			st->phase = (int8_t)ph;
			st->seq = (int32_t)i;
			st->name_id = tmp[i]->name;
			st->cpu_start_ns = tmp[i]->ts + base;
			st->cpu_end_ns = tmp[i]->end + base;
			tmp[i]->step = (int32_t)res->nsteps++;
		}
	}
	return 0;
}

static int cmp_pg(const void *pa, const void *pb)
{
	const struct cpgslice *a = pa, *b = pb;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->dur != b->dur)
		return a->dur > b->dur ? -1 : 1;
	return (a->order > b->order) - (a->order < b->order);
}

/* Process-group slices as "roots" (step = group index) for roots_find(). */
static int pg_roots(struct classify *c, struct croots *r)
{
	struct cpgslice *s = c->pgslices.data;
	r->n = c->pgslices.n;
	r->v = arena_alloc(c->arena, (r->n + 1) * sizeof(*r->v));
	if (!r->v)
		return PP_ENOMEM;
	if (r->n)
		qsort(s, r->n, sizeof(*s), cmp_pg);
	for (size_t i = 0; i < r->n; i++) {
		r->v[i].ts = s[i].ts;
		r->v[i].end = s[i].ts + s[i].dur;
		r->v[i].thread = s[i].thread;
		r->v[i].order = s[i].order;
		r->v[i].name = 0;
		r->v[i].step = s[i].pg;
	}
	return 0;
}

/* ProfilerStep roots sorted by time (any thread), and the iteration rows. */
static int iterations(struct classify *c, struct rank_result *res,
		      int64_t base, struct croots *its)
{
	const struct croots *r = &c->profsteps;
	struct croot **tmp = arena_alloc(c->arena, (r->n + 1) * sizeof(*tmp));
	its->v = arena_alloc(c->arena, (r->n + 1) * sizeof(*its->v));
	res->iterations = arena_calloc(c->arena, r->n + 1,
				       sizeof(*res->iterations));
	if (!tmp || !its->v || !res->iterations)
		return PP_ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		tmp[i] = &r->v[i];
	qsort(tmp, r->n, sizeof(*tmp), cmp_root_time);
	for (size_t i = 0; i < r->n; i++) {
		struct rr_iteration *it = &res->iterations[i];
		const char *name = VEC_AT(&c->names, struct cname,
					  tmp[i]->name).text;
		char *end;
		long long num = strtoll(name + sizeof(profstep) - 1, &end, 10);
		it->number = end != name + sizeof(profstep) - 1 && !*end
				     ? num : -1;
		it->cpu_start_ns = tmp[i]->ts + base;
		it->cpu_end_ns = tmp[i]->end + base;
		its->v[i] = *tmp[i];
	}
	its->n = res->niterations = r->n;
	return 0;
}

static enum rr_pg_kind pg_kind(const char *desc)
{
	static const struct {
		const char *word;
		enum rr_pg_kind kind;
	} words[] = {
		{ "EXPERT", RR_PG_EP }, { "CONTEXT", RR_PG_CP },
		{ "TENSOR", RR_PG_TP }, { "PIPELINE", RR_PG_PP },
		{ "DATA", RR_PG_DP },
	};
	/* Combined groups (TENSOR_AND_DATA_PARALLEL_GROUP, ...) are no one
	 * kind; EXPERT_DATA_PARALLEL_GROUP counts as ep (tested first). */
	if (strcasestr(desc, "_AND_"))
		return RR_PG_UNKNOWN;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasestr(desc, words[i].word))
			return words[i].kind;
	return RR_PG_UNKNOWN;
}

static int groups_out(struct classify *c, struct rank_result *res)
{
	res->ngroups = c->groups.n;
	res->groups = arena_calloc(c->arena, res->ngroups + 1,
				   sizeof(*res->groups));
	if (!res->groups)
		return PP_ENOMEM;
	for (size_t i = 0; i < res->ngroups; i++) {
		const struct cgroup *g = &VEC_AT(&c->groups, struct cgroup, i);
		res->groups[i].name = g->name;
		res->groups[i].desc = g->desc;
		res->groups[i].ranks = g->ranks;
		res->groups[i].kind = pg_kind(g->desc);
	}
	for (size_t i = 0; i < res->nkernels; i++)
		if (res->kernels[i].pg >= 0)
			res->groups[res->kernels[i].pg].kernels++;
	return 0;
}

/* Keeps only the names that kernels and steps use, renumbered. */
static int names_out(struct classify *c, struct rank_result *res)
{
	struct cname *names = c->names.data;
	size_t n = 0;
	res->names = arena_alloc(c->arena, (c->names.n + 1) *
				 sizeof(*res->names));
	if (!res->names)
		return PP_ENOMEM;
#define USE(id)                                                        \
	do {                                                           \
		if (names[id].out_id == UINT32_MAX) {                  \
			names[id].out_id = (uint32_t)n;                \
			res->names[n++] = names[id].text;              \
		}                                                      \
		(id) = names[id].out_id;                               \
	} while (0)
	for (size_t i = 0; i < res->nkernels; i++)
		USE(res->kernels[i].name_id);
	for (size_t i = 0; i < res->nsteps; i++)
		USE(res->steps[i].name_id);
#undef USE
	res->nnames = n;
	return 0;
}

static void set_counts(struct classify *c, struct rank_result *res)
{
	for (int set = 0; set < PAT_NSETS; set++)
		res->steps_per_set[set] = (int64_t)c->roots[set].n +
					  c->gpu_in_set[set];
	for (size_t i = 0; i < c->flows.cap; i++)
		if (c->flows.vals[i] != IMAP_EMPTY && c->flows.vals[i] != 3)
			c->cnt.unmatched_flows++;
}

__attribute__((format(printf, 3, 4)))
static int add_warning(struct classify *c, struct rank_result *res,
		       const char *fmt, ...)
{
	char buf[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	const char **w = arena_alloc(c->arena, (res->nwarnings + 1) *
				     sizeof(*w));
	if (!w)
		return PP_ENOMEM;
	if (res->nwarnings)
		memcpy(w, res->warnings, res->nwarnings * sizeof(*w));
	if (!(w[res->nwarnings] = arena_strndup(c->arena, buf, strlen(buf))))
		return PP_ENOMEM;
	res->warnings = w;
	res->nwarnings++;
	return 0;
}

static int warnings(struct classify *c, struct rank_result *res)
{
	int rc = 0;
	if (res->mode == RR_GENERIC && c->roots[PAT_FORWARD_STEP].n +
					       c->roots[PAT_BACKWARD_STEP].n)
		rc |= add_warning(c, res, "%zu forward/backward step slices, "
				  "none on the forward thread (rule %s): "
				  "generic mode (types only)",
				  c->roots[PAT_FORWARD_STEP].n +
					  c->roots[PAT_BACKWARD_STEP].n,
				  rr_role_rule_name(res->fwd_thread.rule));
	else if (res->mode == RR_GENERIC)
		rc |= add_warning(c, res, "no forward or backward steps "
				  "found: generic mode (types only)");
	if (res->mode == RR_MEGATRON &&
	    res->bwd_thread.rule == RR_ROLE_SAME_THREAD)
		rc |= add_warning(c, res, "no backward thread found: using the "
				  "forward thread");
	if (c->cnt.unmatched_flows)
		rc |= add_warning(c, res, "%lld fwdbwd flows have only one end",
				  (long long)c->cnt.unmatched_flows);
	/* What attribute_kernels() does with them, per mode. */
	if (c->cnt.orphans)
		rc |= add_warning(c, res, "%lld GPU events have no launch (orphans): %s",
				  (long long)c->cnt.orphans,
				  res->mode == RR_GENERIC
					  ? "counted by their kernel type, outside coverage"
					  : "category other, or memory for copies and sets");
	return rc ? PP_ENOMEM : 0;
}

/* The end of both kinds of finish: counters, warnings, the names used. */
static int finish_result(struct classify *c, struct rank_result *res,
			 struct rank_result **out)
{
	res->counters = c->cnt;
	if (warnings(c, res) < 0 || names_out(c, res) < 0) {
		c->failed = PP_ENOMEM;
		return PP_ENOMEM;
	}
	*out = res;
	return 0;
}

/* The rest of classify_finish() for a survey: steps, ProfilerStep windows,
 * counts and warnings; no kernels, groups or metrics. */
static int finish_survey(struct classify *c, struct rank_result *res,
			 int64_t base, struct rank_result **out)
{
	struct croots its;
	res->survey = true;
	if (build_steps(c, res, base) < 0 || iterations(c, res, base, &its) < 0)
		goto nomem;
	res->kernels = arena_calloc(c->arena, 1, sizeof(*res->kernels));
	if (!res->kernels)
		goto nomem;
	set_counts(c, res);
	return finish_result(c, res, out);
nomem:
	c->failed = PP_ENOMEM;
	return PP_ENOMEM;
}

int classify_finish(struct classify *c, const struct trace_header *h,
		    struct rank_result **out)
{
	struct rank_result *res;
	struct croots pg, its;
	int64_t base = h && h->has_base_time ? h->base_time_ns : 0;
	int32_t *iter_of;

	*out = NULL;
	if (c->failed)
		return c->failed;
	res = arena_calloc(c->arena, 1, sizeof(*res));
	if (!res || (!c->roots_done && steps_find_roots(c) < 0))
		goto nomem;
	c->roots_done = true;
	if (roles_decide(c, res) == CLASSIFY_AGAIN) {
		c->launch_pass = true;
		return CLASSIFY_AGAIN;
	}
	res->mode = c->fwd >= 0 && c->roots[PAT_FORWARD_STEP].n +
						   c->roots[PAT_BACKWARD_STEP].n
			    ? RR_MEGATRON
			    : RR_GENERIC;
	if (res->mode == RR_MEGATRON) {
		bool any = false;
		for (int ph = RR_FWD; ph <= RR_BWD; ph++)
			for (size_t i = 0; i < c->roots[phase_set[ph]].n; i++)
				any |= c->roots[phase_set[ph]].v[i].thread ==
				       (uint32_t)c->fwd;
		if (!any)
			res->mode = RR_GENERIC;
	}
	if (c->survey)
		return finish_survey(c, res, base, out);
	if (build_steps(c, res, base) < 0 || pg_roots(c, &pg) < 0 ||
	    iterations(c, res, base, &its) < 0)
		goto nomem;
	/* Attribute in place in the heap vector, drop what only attribution
	 * needed, then hand the vector to the arena. */
	res->nkernels = c->gpus.n;
	res->kernels = c->gpus.data;
	iter_of = arena_alloc(c->arena, (res->nkernels + 1) * sizeof(*iter_of));
	if (!iter_of)
		goto nomem;
	attribute_kernels(c, res, base, &pg, &its, iter_of);
	set_counts(c, res);
	vec_release(&c->launches);
	vec_release(&c->dup_launches);
	vec_release(&c->slices);
	vec_release(&c->pgslices);
	cmap_release(&c->corr);
	if (c->gpus.data) { /* the arena takes the rows over: no copy */
		if (arena_adopt(c->arena, c->gpus.data,
				c->gpus.cap * c->gpus.elem) < 0)
			goto nomem;
		vec_init(&c->gpus, c->gpus.elem);
	} else if (!(res->kernels = arena_calloc(c->arena, 1,
						 sizeof(*res->kernels)))) {
		goto nomem;
	}
	if (rank_metrics_compute(res, iter_of, c->arena) < 0 ||
	    groups_out(c, res) < 0)
		goto nomem;
	return finish_result(c, res, out);
nomem:
	c->failed = PP_ENOMEM;
	return PP_ENOMEM;
}
