/* classify.c — feeding events to the per-rank classifier and assembling
 * its result (see classify.h; design in classify_int.h).
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
#include "classify_int.h"
#include "read/trace_read.h"
#include "util/arena.h"
#include "util/hugepage.h"
#include "util/pp.h"

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

/* The 6 bytes at s as one little-endian word with bit 5 of each byte set.
 * Against a literal of lowercase letters that is ieq(): a byte matches
 * letter c with that bit set only if it is c or c - 0x20, its capital;
 * one compare per category name of that length. */
static uint64_t fold6(const char *s)
{
	uint32_t lo;
	uint16_t hi;
	memcpy(&lo, s, 4);
	memcpy(&hi, s + 4, 2);
	return (lo | (uint64_t)hi << 32) | 0x202020202020ull;
}

/* A 6-letter lowercase literal as fold6() returns its match. */
#define WORD6(s)                                                                         \
	((uint64_t)(unsigned char)(s)[0] | (uint64_t)(unsigned char)(s)[1] << 8 |        \
	 (uint64_t)(unsigned char)(s)[2] << 16 | (uint64_t)(unsigned char)(s)[3] << 24 | \
	 (uint64_t)(unsigned char)(s)[4] << 32 | (uint64_t)(unsigned char)(s)[5] << 40)

/* classify_category(), inlined into classify_feed(). */
__attribute__((always_inline)) static inline enum classify_cat category_of(struct pp_sv cat)
{
	if (cat.n == 6) {
		/* "kernel" is a third of the events. */
		uint64_t w = fold6(cat.p);
		return w == WORD6("kernel")   ? CC_KERNEL
		       : w == WORD6("fwdbwd") ? CC_FWDBWD
		       : w == WORD6("memcpy") ? CC_MEMCPY
		       : w == WORD6("memset") ? CC_MEMSET
					      : CC_CPU;
	}
	switch (cat.n) {
	case 9: return ieq(cat.p, "cuda_sync", 9) ? CC_GPU_OTHER : CC_CPU;
	case 10:
		return ieq(cat.p, "gpu_memcpy", 10)   ? CC_MEMCPY
		       : ieq(cat.p, "gpu_memset", 10) ? CC_MEMSET
						      : CC_CPU;
	case 15: return ieq(cat.p, "user_annotation", 15) ? CC_ANNOTATION : CC_CPU;
	case 19: return ieq(cat.p, "gpu_user_annotation", 19) ? CC_GPU_ANNOTATION : CC_CPU;
	default: return CC_CPU;
	}
}

enum classify_cat classify_category(struct pp_sv cat)
{
	return category_of(cat);
}

struct classify *classify_new(const struct patterns *pats, struct arena *arena)
{
	struct classify *c = arena_calloc(arena, 1, sizeof(*c));
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
	vec_init(&c->annslices, sizeof(struct nslice));
	vec_init(&c->collslices, sizeof(struct nslice));
	vec_init(&c->gpuannslices, sizeof(struct nslice));
	itab_init(&c->name_tab);
	itab_init(&c->thread_tab);
	itab_init(&c->group_tab);
	cmap_init(&c->corr);
	imap_init(&c->flows);
	c->fwd = c->bwd = -1;
	return c;
}

struct classify *classify_new_survey(const struct patterns *pats, struct arena *arena)
{
	struct classify *c = classify_new(pats, arena);
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
	vec_release(&c->annslices);
	vec_release(&c->collslices);
	vec_release(&c->gpuannslices);
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
static const char nccl_op[] = "nccl:";

/* A copy of s[0..n) with every NUL byte (JSON "\u0000" in a name) replaced
 * by U+FFFD, so that the name survives as a C string. */
static const char *nul_to_fffd(struct classify *c, const char *s, size_t n)
{
	size_t nuls = 0, j = 0;
	for (size_t i = 0; i < n; i++)
		nuls += !s[i];
	char *t = arena_alloc(c->arena, n + 2 * nuls + 1);
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
 * first sight. */
static long name_intern_slow(struct classify *c, const char *s, size_t n);

/* The first and last (up to) 8 bytes of s[0..n): fixed-size copies for
 * the usual long names, one load each, not a byte loop. */
static void name_ends(const char *s, size_t n, uint64_t *head, uint64_t *tail)
{
	if (n >= 8) {
		memcpy(head, s, 8);
		memcpy(tail, s + n - 8, 8);
	} else {
		*head = 0;
		memcpy(head, s, n);
		*tail = *head; /* the last n bytes are the first n */
	}
}

static uint64_t name_key(uint64_t head, uint64_t tail, size_t n)
{
	return (head * 0x9e3779b97f4a7c15ull) ^ (tail * 0xbf58476d1ce4e5b9ull) ^ n;
}

/* Whether interned name e is s[0..n), whose ends name_ends() gave. From 8
 * bytes on, the ends are two word compares and a name of up to 16 bytes is
 * nothing more; only the middle of a longer one needs memcmp. */
static bool name_same(const struct cname *e, const char *s, size_t n, uint64_t head, uint64_t tail)
{
	uint64_t h, t;
	if (e->len != n)
		return false;
	if (n < 8)
		return !memcmp(e->s, s, n);
	memcpy(&h, e->s, 8);
	memcpy(&t, e->s + n - 8, 8);
	return h == head && t == tail && (n <= 16 || !memcmp(e->s + 8, s + 8, n - 16));
}

static long name_intern(struct classify *c, const char *s, size_t n)
{
	uint64_t head, tail;
	name_ends(s, n, &head, &tail);
	uint64_t key = name_key(head, tail, n);
	struct ncache_way *set = c->ncache[(key * 0x94d049bb133111ebull) >> 58];
	_Static_assert(NCACHE_SETS == 64, "the set is the key's top 6 bits");
	for (int w = 0; w < NCACHE_WAYS; w++)
		if (set[w].key == key && set[w].id1 &&
		    name_same(&VEC_AT(&c->names, struct cname, set[w].id1 - 1), s, n, head, tail))
			return (long)(set[w].id1 - 1);
	long id = name_intern_slow(c, s, n);
	memmove(set + 1, set, (NCACHE_WAYS - 1) * sizeof(*set));
	set[0].key = key;
	set[0].id1 = (uint32_t)id + 1;
	return id;
}

struct name_probe {
	const struct vec *names;
	const char *s;
	size_t n;
};

static bool name_eq(const void *ctx, uint32_t idx)
{
	const struct name_probe *k = ctx;
	const struct cname *e = &VEC_AT(k->names, struct cname, idx);
	return e->len == k->n && !memcmp(e->s, k->s, k->n);
}

static long name_intern_slow(struct classify *c, const char *s, size_t n)
{
	uint64_t h = pp_hash_bytes(s, n, 0);
	struct name_probe k = { &c->names, s, n };
	long id = itab_intern(&c->name_tab, h, name_rehash, &c->names, name_eq, &k,
			      (uint32_t)c->names.n);
	if (id >= 0)
		return id;
	struct cname *e = vec_push(&c->names);
	char *copy = arena_strndup(c->arena, s, n);
	e->s = e->text = copy;
	e->len = (uint32_t)n;
	e->hash = h;
	e->out_id = UINT32_MAX;
	if (memchr(copy, '\0', n))
		e->text = nul_to_fffd(c, copy, n);
	e->bits = patterns_match(c->pats, e->text);
	if (!strncmp(e->text, profstep, sizeof(profstep) - 1))
		e->bits |= NB_PROFSTEP;
	if (!strncmp(e->text, nccl_op, sizeof(nccl_op) - 1))
		e->bits |= NB_NCCL_OP;
	e->bits |= ops_frame_bits(e->text) | (uint32_t)NB_COLL_UNKNOWN << NB_COLL_SHIFT;
	return (long)(c->names.n - 1);
}

static uint64_t id_hash(const struct trace_id *id)
{
	return id->is_str ? pp_hash_bytes(id->str.p, id->str.n, 1) : pp_hash_u64((uint64_t)id->num);
}

static bool id_eq(const struct trace_id *id, bool is_str, int64_t num, const char *s)
{
	if (id->is_str != is_str)
		return false;
	return is_str ? !strcmp(id->str.p, s) : id->num == num;
}

static uint64_t thread_rehash(void *ctx, uint32_t idx)
{
	return VEC_AT((struct vec *)ctx, struct cthread, idx).hash;
}

struct thread_probe {
	const struct vec *threads;
	const struct trace_id *pid, *tid;
};

static bool thread_eq(const void *ctx, uint32_t idx)
{
	const struct thread_probe *k = ctx;
	const struct cthread *e = &VEC_AT(k->threads, struct cthread, idx);
	return id_eq(k->pid, e->pid_str, e->pid, e->pid_s) &&
	       id_eq(k->tid, e->tid_str, e->tid, e->tid_s);
}

/* thread_intern() past the last thread. */
static long thread_intern_slow(struct classify *c, const struct trace_event *ev)
{
	const struct trace_id *pid = &ev->pid, *tid = &ev->tid;
	uint64_t h = pp_hash_u64(id_hash(pid) * 31 + id_hash(tid));
	struct thread_probe k = { &c->threads, pid, tid };
	long id = itab_intern(&c->thread_tab, h, thread_rehash, &c->threads, thread_eq, &k,
			      (uint32_t)c->threads.n);
	if (id < 0) {
		struct cthread *e = vec_push(&c->threads);
		e->pid_str = pid->is_str;
		e->tid_str = tid->is_str;
		e->pid = pid->num;
		e->tid = tid->num;
		e->hash = h;
		if (pid->is_str)
			e->pid_s = arena_strndup(c->arena, pid->str.p, pid->str.n);
		if (tid->is_str)
			e->tid_s = arena_strndup(c->arena, tid->str.p, tid->str.n);
		id = (long)(c->threads.n - 1);
	}
	c->last_thread = (uint32_t)id;
	c->have_last_thread = true;
	return id;
}

/* The index of the thread (ev->pid, ev->tid): inline while it is the last
 * one, as for most events. */
__attribute__((always_inline)) static inline long thread_intern(struct classify *c,
								const struct trace_event *ev)
{
	const struct trace_id *pid = &ev->pid, *tid = &ev->tid;
	if (c->have_last_thread && !pid->is_str && !tid->is_str) {
		const struct cthread *l = &VEC_AT(&c->threads, struct cthread, c->last_thread);
		if (!l->pid_str && !l->tid_str && l->pid == pid->num && l->tid == tid->num)
			return c->last_thread;
	}
	return thread_intern_slow(c, ev);
}

static uint64_t group_rehash(void *ctx, uint32_t idx)
{
	return VEC_AT((struct vec *)ctx, struct cgroup, idx).hash;
}

struct group_probe {
	const struct vec *groups;
	const struct trace_event *ev;
};

static bool group_eq(const void *ctx, uint32_t idx)
{
	const struct group_probe *k = ctx;
	const struct cgroup *g = &VEC_AT(k->groups, struct cgroup, idx);
	return !strcmp(g->name, k->ev->pg_name.p) && !strcmp(g->desc, k->ev->pg_desc.p) &&
	       !strcmp(g->ranks, k->ev->pg_ranks.p);
}

/* The index of the process group named by ev's args. Callers check that
 * some pg arg is present. */
static long group_intern(struct classify *c, const struct trace_event *ev)
{
	uint64_t h = pp_hash_bytes(ev->pg_name.p, ev->pg_name.n, 2);
	h = pp_hash_bytes(ev->pg_desc.p, ev->pg_desc.n, h);
	h = pp_hash_bytes(ev->pg_ranks.p, ev->pg_ranks.n, h);
	struct group_probe k = { &c->groups, ev };
	long id = itab_intern(&c->group_tab, h, group_rehash, &c->groups, group_eq, &k,
			      (uint32_t)c->groups.n);
	if (id >= 0)
		return id;
	struct cgroup *g = vec_push(&c->groups);
	g->hash = h;
	g->name = arena_strndup(c->arena, ev->pg_name.p, ev->pg_name.n);
	g->desc = arena_strndup(c->arena, ev->pg_desc.p, ev->pg_desc.n);
	g->ranks = arena_strndup(c->arena, ev->pg_ranks.p, ev->pg_ranks.n);
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
 * costs a fault): keep it at 48 bytes. */
_Static_assert(sizeof(struct rr_kernel) <= 48, "rr_kernel grew");
_Static_assert((int)RR_NCOLLS <= (int)NB_COLL_UNKNOWN, "a collective fits the name bits");

static void feed_gpu(struct classify *c, const struct trace_event *ev, bool memevent)
{
	long name = name_intern(c, ev->name.p, ev->name.n);
	uint32_t bits = VEC_AT(&c->names, struct cname, name).bits;
	for (int set = PAT_COMM_KERNEL; set <= PAT_MEM_KERNEL; set++)
		c->gpu_in_set[set] += bits >> set & 1;
	c->cnt.gpu_events++;
	if (c->survey)
		return;
	struct rr_kernel *k = vec_next(&c->gpus);
	bool has_corr = ev->has & TE_CORRELATION;
	*k = (struct rr_kernel){
		.start_ns = ev->ts_ns, /* raw: the base is added at the end */
		.dur_ns = ev->dur_ns > 0 ? ev->dur_ns : 0,
		.correlation = has_corr ? ev->correlation : 0,
		.stream = ev->has & TE_STREAM                     ? ev->stream
			  : (ev->has & TE_TID) && !ev->tid.is_str ? ev->tid.num
								  : -1,
		.name_id = (uint32_t)name,
		.step = -1,
		.pg = -1,
		.type = (uint8_t)classify_kernel_type(bits, memevent),
		.has_correlation = has_corr,
	};
	if (has_pg_args(ev))
		k->pg = (int32_t)group_intern(c, ev);
	if (k->type == RR_COMM) { /* its Collective name arg, else (for now) its name */
		uint8_t coll =
			ev->collective.n
				? ops_coll(c, name_intern(c, ev->collective.p, ev->collective.n))
				: RR_COLL_OTHER;
		if (coll == RR_COLL_OTHER) {
			coll = ops_coll(c, name);
			k->coll_by_name = true;
		}
		k->coll = coll;
	}
}

/* Keeps a slice of a nest (struct nslice). */
static void keep_nslice(struct vec *v, const struct trace_event *ev, uint32_t thread, uint32_t val)
{
	struct nslice *s = vec_push(v);
	s->ts = ev->ts_ns;
	s->end = ev->ts_ns + (ev->dur_ns > 0 ? ev->dur_ns : 0);
	s->thread = thread;
	s->order = (uint32_t)(v->n - 1);
	s->val = val;
}

/* A gpu_user_annotation range: the annotation on the stream it names (its
 * tid), for the kernels of that stream it holds. */
static void feed_gpu_annotation(struct classify *c, const struct trace_event *ev)
{
	if (c->survey || ev->tid.is_str)
		return;
	long name = name_intern(c, ev->name.p, ev->name.n);
	if (!(VEC_AT(&c->names, struct cname, name).bits & (NB_PROFSTEP | NB_NCCL_OP)))
		keep_nslice(&c->gpuannslices, ev, (uint32_t)ev->tid.num, (uint32_t)name);
}

/* The rare kinds of CPU slice, kept for the nests (not in a survey): a
 * user annotation (not ProfilerStep#N nor nccl:<op>), and a range that
 * names a collective (record_param_comms' Collective name, nccl:<op>) other
 * than "other". */
static __attribute__((noinline)) void keep_marks(struct classify *c, const struct trace_event *ev,
						 long th, long name, uint32_t nbits,
						 bool annotation)
{
	if (annotation && !(nbits & (NB_PROFSTEP | NB_NCCL_OP)))
		keep_nslice(&c->annslices, ev, (uint32_t)th, (uint32_t)name);
	if (ev->collective.n || (nbits & NB_NCCL_OP)) {
		uint8_t k = ops_coll(c, ev->collective.n
						? name_intern(c, ev->collective.p, ev->collective.n)
						: name);
		if (k != RR_COLL_OTHER)
			keep_nslice(&c->collslices, ev, (uint32_t)th, k);
	}
}

/* A CPU slice; annotation: of category user_annotation. */
static void feed_cpu(struct classify *c, const struct trace_event *ev, bool annotation)
{
	c->cnt.cpu_slices++;
	long name = name_intern(c, ev->name.p, ev->name.n);
	uint32_t nbits = VEC_AT(&c->names, struct cname, name).bits;
	uint32_t bits = nbits & NB_SLICE_SETS;
	bool launch = ev->has & TE_CORRELATION, pg = has_pg_args(ev);
	/* Launches (most CPU slices) are never annotations or collectives:
	 * one test for them. */
	bool marks = !launch && (annotation || ev->collective.n || (nbits & NB_NCCL_OP));
	if (!bits && !launch && !pg && !marks)
		return;
	long th = thread_intern(c, ev);
	int64_t dur = ev->dur_ns > 0 ? ev->dur_ns : 0;
	if (bits) {
		struct cslice *s = vec_push(&c->slices);
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
		uint32_t *v = cmap_ref(&c->corr, ev->correlation, (uint32_t)c->launches.n);
		/* The first launch with this id wins the attribution; later
		 * ones (rare) are kept apart for the launch-count rule only. */
		struct claunch *l = vec_next(*v == c->launches.n ? &c->launches : &c->dup_launches);
		*l = (struct claunch){ .ts = ev->ts_ns, .thread = (uint32_t)th };
		VEC_AT(&c->threads, struct cthread, th).launches++;
		c->cnt.launches++;
	}
	if (marks && !c->survey)
		keep_marks(c, ev, th, name, nbits, annotation);
	if (pg && !c->survey) {
		long g = group_intern(c, ev);
		struct cpgslice *s = vec_push(&c->pgslices);
		s->ts = ev->ts_ns;
		s->dur = dur;
		s->thread = (uint32_t)th;
		s->order = (uint32_t)(c->pgslices.n - 1);
		s->pg = (int32_t)g;
	}
}

static void feed_flow(struct classify *c, const struct trace_event *ev)
{
	long th = thread_intern(c, ev);
	struct cthread *t = &VEC_AT(&c->threads, struct cthread, th);
	bool start = ev->ph == 's';
	if (start)
		t->flows_s++;
	else
		t->flows_f++;
	c->cnt.flows++;
	*imap_ref(&c->flows, (int64_t)id_hash(&ev->id), 0) |= start ? 1u : 2u;
}

static void feed_meta(struct classify *c, const struct trace_event *ev)
{
	if (strcmp(ev->name.p, "thread_name"))
		return;
	long th = thread_intern(c, ev);
	VEC_AT(&c->threads, struct cthread, th).name =
		arena_strndup(c->arena, ev->arg_name.p, ev->arg_name.n);
}

/* A survey's second pass: launches inside backward-step windows (roots on
 * the forward thread), per launching thread. */
static void feed_launch_pass(struct classify *c, const struct trace_event *ev)
{
	if (ev->ph != 'X' || !(ev->has & TE_CORRELATION))
		return;
	enum classify_cat k = classify_category(ev->cat);
	if (k != CC_CPU && k != CC_FWDBWD && k != CC_ANNOTATION)
		return;
	long th = thread_intern(c, ev);
	if (roots_find(&c->roots[PAT_BACKWARD_STEP], (uint32_t)c->fwd, ev->ts_ns) >= 0)
		VEC_AT(&c->threads, struct cthread, th).bwd_launches++;
}

void classify_feed(struct classify *c, const struct trace_event *ev)
{
	if (c->launch_pass) {
		feed_launch_pass(c, ev);
		return;
	}
	c->cnt.events++;
	switch (ev->ph) {
	case 'X': {
		enum classify_cat k = category_of(ev->cat);
		switch (k) {
		case CC_KERNEL: feed_gpu(c, ev, false); break;
		case CC_MEMCPY:
		case CC_MEMSET: feed_gpu(c, ev, true); break;
		case CC_CPU:
		case CC_FWDBWD:
		case CC_ANNOTATION: feed_cpu(c, ev, k == CC_ANNOTATION); break;
		case CC_GPU_ANNOTATION: feed_gpu_annotation(c, ev); break;
		case CC_GPU_OTHER: break;
		}
		break;
	}
	case 's':
	case 'f':
		if (category_of(ev->cat) == CC_FWDBWD)
			feed_flow(c, ev);
		break;
	case 'M': feed_meta(c, ev); break;
	}
}

/* --- result assembly ---------------------------------------------------- */

static int cmp_root_time(const void *pa, const void *pb)
{
	return croot_cmp(*(const struct croot *const *)pa, *(const struct croot *const *)pb);
}

static const int phase_set[RR_NPHASES] = { [RR_FWD] = PAT_FORWARD_STEP,
					   [RR_BWD] = PAT_BACKWARD_STEP,
					   [RR_PP] = PAT_PP_COMM,
					   [RR_DP] = PAT_DP_COMM,
					   [RR_OPT] = PAT_OPTIMIZER };

/* Steps of every phase (Megatron mode only): fwd and bwd = roots on the
 * forward thread, the others on any thread; seq in cpu start order. */
static void build_steps(struct classify *c, struct rank_result *res, int64_t base)
{
	size_t total = 0;
	if (res->mode != RR_MEGATRON)
		return;
	for (int ph = 0; ph < RR_NPHASES; ph++)
		total += c->roots[phase_set[ph]].n;
	res->steps = arena_calloc(c->arena, total + 1, sizeof(*res->steps));
	struct croot **tmp = arena_alloc(c->arena, (total + 1) * sizeof(*tmp));
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
}

static int cmp_pg(const void *pa, const void *pb)
{
	const struct cpgslice *a = pa, *b = pb;
	return cmp_nesting(a->thread, a->ts, a->dur, a->order, b->thread, b->ts, b->dur, b->order);
}

/* Process-group slices as "roots" (step = group index) for roots_find(). */
static void pg_roots(struct classify *c, struct croots *r)
{
	struct cpgslice *s = c->pgslices.data;
	r->n = c->pgslices.n;
	r->v = arena_alloc(c->arena, (r->n + 1) * sizeof(*r->v));
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
}

/* ProfilerStep roots sorted by time (any thread), and the iteration rows. */
static void iterations(struct classify *c, struct rank_result *res, int64_t base,
		       struct croots *its)
{
	const struct croots *r = &c->profsteps;
	struct croot **tmp = arena_alloc(c->arena, (r->n + 1) * sizeof(*tmp));
	its->v = arena_alloc(c->arena, (r->n + 1) * sizeof(*its->v));
	res->iterations = arena_calloc(c->arena, r->n + 1, sizeof(*res->iterations));
	for (size_t i = 0; i < r->n; i++)
		tmp[i] = &r->v[i];
	qsort(tmp, r->n, sizeof(*tmp), cmp_root_time);
	for (size_t i = 0; i < r->n; i++) {
		struct rr_iteration *it = &res->iterations[i];
		const char *name = VEC_AT(&c->names, struct cname, tmp[i]->name).text;
		char *end;
		long long num = strtoll(name + sizeof(profstep) - 1, &end, 10);
		it->number = end != name + sizeof(profstep) - 1 && !*end ? num : -1;
		it->cpu_start_ns = tmp[i]->ts + base;
		it->cpu_end_ns = tmp[i]->end + base;
		its->v[i] = *tmp[i];
	}
	its->n = res->niterations = r->n;
}

static int cmp_pg_name(const void *pa, const void *pb)
{
	return strcmp((*(const struct trace_pg *const *)pa)->name,
		      (*(const struct trace_pg *const *)pb)->name);
}

/* By name, then header order (the pointers are into h->pgs): qsort is not
 * stable, and of equal names the first in the header must win. */
static int cmp_pg_name_at(const void *pa, const void *pb)
{
	const struct trace_pg *a = *(const struct trace_pg *const *)pa,
			      *b = *(const struct trace_pg *const *)pb;
	int d = strcmp(a->name, b->name);
	return d ? d : (a > b) - (a < b);
}

static int cmp_group(const struct cgroup *a, const struct cgroup *b)
{
	int d = strcmp(a->name, b->name);
	if (!d)
		d = strcmp(a->desc, b->desc);
	return d ? d : strcmp(a->ranks, b->ranks);
}

/* The groups' order for finding equal ones: by name, description, ranks,
 * then first seen. */
static int cmp_group_at(const void *pa, const void *pb, void *ctx)
{
	const struct vec *v = ctx;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	int d = cmp_group(&VEC_AT(v, struct cgroup, ia), &VEC_AT(v, struct cgroup, ib));
	return d ? d : (ia > ib) - (ia < ib);
}

/* Fills what a group's args lack of its description and ranks from the
 * header's process-group table (pg_config), by name; what the args say
 * stays (docs/classification.md "Process groups"). Groups that become
 * equal are merged into the first seen, the kernels' and the CPU ranges'
 * indices renumbered. Before anything reads a group index. */
static void groups_fill(struct classify *c, const struct trace_header *h)
{
	size_t n = c->groups.n, m = 0;
	bool filled = false;
	if (!h || !h->npgs || !n)
		return;
	const struct trace_pg **by = arena_alloc(c->arena, h->npgs * sizeof(*by));
	for (size_t j = 0; j < h->npgs; j++)
		by[j] = &h->pgs[j];
	qsort(by, h->npgs, sizeof(*by), cmp_pg_name_at); /* equal names: the first wins */
	for (size_t i = 0; i < n; i++) {
		struct cgroup *g = &VEC_AT(&c->groups, struct cgroup, i);
		if (!g->name[0] || (g->desc[0] && g->ranks[0]))
			continue;
		struct trace_pg key = { g->name, "", "" };
		const struct trace_pg *kp = &key,
				      **f = bsearch(&kp, by, h->npgs, sizeof(*by), cmp_pg_name);
		while (f && f > by && !strcmp(f[-1]->name, g->name))
			f--;
		if (!f)
			continue;
		if (!g->desc[0] && (*f)->desc[0]) {
			g->desc = arena_strndup(c->arena, (*f)->desc, strlen((*f)->desc));
			filled = true;
		}
		if (!g->ranks[0] && (*f)->ranks[0]) {
			g->ranks = arena_strndup(c->arena, (*f)->ranks, strlen((*f)->ranks));
			filled = true;
		}
	}
	if (!filled)
		return;
	uint32_t *order = arena_alloc(c->arena, n * sizeof(*order));
	int32_t *to = arena_alloc(c->arena, n * sizeof(*to));
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_group_at, &c->groups);
	for (size_t i = 0; i < n; i++) /* each to the first seen of its equals */
		to[order[i]] = i && !cmp_group(&VEC_AT(&c->groups, struct cgroup, order[i - 1]),
					       &VEC_AT(&c->groups, struct cgroup, order[i]))
				       ? to[order[i - 1]]
				       : (int32_t)order[i];
	for (size_t i = 0; i < n; i++) { /* compact, first-seen order kept */
		if (to[i] != (int32_t)i) {
			to[i] = to[to[i]];
			continue;
		}
		VEC_AT(&c->groups, struct cgroup, m) = VEC_AT(&c->groups, struct cgroup, i);
		to[i] = (int32_t)m++;
	}
	c->groups.n = m;
	for (size_t i = 0; i < c->gpus.n; i++) {
		struct rr_kernel *k = &VEC_AT(&c->gpus, struct rr_kernel, i);
		if (k->pg >= 0)
			k->pg = to[k->pg];
	}
	for (size_t i = 0; i < c->pgslices.n; i++) {
		struct cpgslice *s = &VEC_AT(&c->pgslices, struct cpgslice, i);
		s->pg = to[s->pg];
	}
}

static void groups_out(struct classify *c, struct rank_result *res)
{
	res->ngroups = c->groups.n;
	res->groups = arena_calloc(c->arena, res->ngroups + 1, sizeof(*res->groups));
	for (size_t i = 0; i < res->ngroups; i++) {
		const struct cgroup *g = &VEC_AT(&c->groups, struct cgroup, i);
		res->groups[i].name = g->name;
		res->groups[i].desc = g->desc;
		res->groups[i].ranks = g->ranks;
		res->groups[i].kind = rr_pg_kind_of(g->desc);
	}
	for (size_t i = 0; i < res->nkernels; i++)
		if (res->kernels[i].pg >= 0)
			res->groups[res->kernels[i].pg].kernels++;
}

/* Keeps only the names that kernels and steps use, renumbered. */
static void names_out(struct classify *c, struct rank_result *res)
{
	struct cname *names = c->names.data;
	size_t n = 0;
	res->names = arena_alloc(c->arena, (c->names.n + 1) * sizeof(*res->names));
#define USE(id)                                           \
	do {                                              \
		if (names[id].out_id == UINT32_MAX) {     \
			names[id].out_id = (uint32_t)n;   \
			res->names[n++] = names[id].text; \
		}                                         \
		(id) = names[id].out_id;                  \
	} while (0)
	for (size_t i = 0; i < res->nkernels; i++)
		USE(res->kernels[i].name_id);
	for (size_t i = 0; i < res->nsteps; i++)
		USE(res->steps[i].name_id);
	for (size_t i = 0; i < res->nannotations; i++)
		USE(res->annotations[i].name_id);
#undef USE
	res->nnames = n;
}

static void set_counts(struct classify *c, struct rank_result *res)
{
	for (int set = 0; set < PAT_NSETS; set++)
		res->steps_per_set[set] = (int64_t)c->roots[set].n + c->gpu_in_set[set];
	for (size_t i = 0; i < c->flows.cap; i++)
		if (c->flows.vals[i] != IMAP_EMPTY && c->flows.vals[i] != 3)
			c->cnt.unmatched_flows++;
}

__attribute__((format(printf, 3, 4))) static void add_warning(struct classify *c,
							      struct rank_result *res,
							      const char *fmt, ...)
{
	char buf[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	const char **w = arena_alloc(c->arena, (res->nwarnings + 1) * sizeof(*w));
	if (res->nwarnings)
		memcpy(w, res->warnings, res->nwarnings * sizeof(*w));
	w[res->nwarnings] = arena_strndup(c->arena, buf, strlen(buf));
	res->warnings = w;
	res->nwarnings++;
}

static void warnings(struct classify *c, struct rank_result *res)
{
	if (res->mode == RR_GENERIC && c->roots[PAT_FORWARD_STEP].n + c->roots[PAT_BACKWARD_STEP].n)
		add_warning(c, res,
			    "%zu forward/backward step slices, "
			    "none on the forward thread (rule %s): "
			    "generic mode (types only)",
			    c->roots[PAT_FORWARD_STEP].n + c->roots[PAT_BACKWARD_STEP].n,
			    rr_role_rule_name(res->fwd_thread.rule));
	else if (res->mode == RR_GENERIC)
		add_warning(c, res,
			    "no forward or backward steps "
			    "found: generic mode (types only)");
	if (res->mode == RR_MEGATRON && res->bwd_thread.rule == RR_ROLE_SAME_THREAD)
		add_warning(c, res,
			    "no backward thread found: using the "
			    "forward thread");
	if (c->cnt.unmatched_flows)
		add_warning(c, res, "%lld fwdbwd flows have only one end",
			    (long long)c->cnt.unmatched_flows);
	/* What attribute_kernels() does with them, per mode. */
	if (c->cnt.orphans)
		add_warning(c, res, "%lld GPU events have no launch (orphans): %s",
			    (long long)c->cnt.orphans,
			    res->mode == RR_GENERIC
				    ? "counted by their kernel type, outside coverage"
				    : "category other, or memory for copies and sets");
}

/* The end of both kinds of finish: counters, warnings, the names used. */
static void finish_result(struct classify *c, struct rank_result *res, struct rank_result **out)
{
	res->counters = c->cnt;
	warnings(c, res);
	names_out(c, res);
	*out = res;
}

/* The rest of classify_finish() for a survey: steps, ProfilerStep windows,
 * counts and warnings; no kernels, groups or metrics. */
static void finish_survey(struct classify *c, struct rank_result *res, int64_t base,
			  struct rank_result **out)
{
	struct croots its;
	res->survey = true;
	build_steps(c, res, base);
	iterations(c, res, base, &its);
	res->kernels = arena_calloc(c->arena, 1, sizeof(*res->kernels));
	set_counts(c, res);
	finish_result(c, res, out);
}

/* Most GPU time first, then the name (its interned id: first sight). */
static int cmp_annotation(const void *pa, const void *pb)
{
	const struct rr_annotation *a = pa, *b = pb;
	if (a->gpu_ns != b->gpu_ns)
		return a->gpu_ns > b->gpu_ns ? -1 : 1;
	return (a->name_id > b->name_id) - (a->name_id < b->name_id);
}

int classify_finish(struct classify *c, const struct trace_header *h, struct rank_result **out)
{
	struct rank_result *res;
	struct croots pg, its;
	struct nest colls, anns, gpuanns;
	struct ann_members members;
	int64_t base = h && h->has_base_time ? h->base_time_ns : 0;
	int32_t *iter_of;

	*out = NULL;
	res = arena_calloc(c->arena, 1, sizeof(*res));
	if (!c->roots_done)
		steps_find_roots(c);
	c->roots_done = true;
	if (roles_decide(c, res) == CLASSIFY_AGAIN) {
		c->launch_pass = true;
		return CLASSIFY_AGAIN;
	}
	res->mode = c->fwd >= 0 && c->roots[PAT_FORWARD_STEP].n + c->roots[PAT_BACKWARD_STEP].n
			    ? RR_MEGATRON
			    : RR_GENERIC;
	if (res->mode == RR_MEGATRON) {
		bool any = false;
		for (int ph = RR_FWD; ph <= RR_BWD; ph++)
			for (size_t i = 0; i < c->roots[phase_set[ph]].n; i++)
				any |= c->roots[phase_set[ph]].v[i].thread == (uint32_t)c->fwd;
		if (!any)
			res->mode = RR_GENERIC;
	}
	if (c->survey) {
		finish_survey(c, res, base, out);
		return 0;
	}
	build_steps(c, res, base);
	groups_fill(c, h);
	pg_roots(c, &pg);
	iterations(c, res, base, &its);
	/* Attribute in place in the heap vector, drop what only attribution
	 * needed, then hand the vector to the arena. */
	res->nkernels = c->gpus.n;
	res->kernels = c->gpus.data;
	iter_of = arena_alloc(c->arena, (res->nkernels + 1) * sizeof(*iter_of));
	nest_build(&c->collslices, &colls);
	nest_build(&c->annslices, &anns);
	nest_build(&c->gpuannslices, &gpuanns);
	attribute_kernels(c, res, base, &pg, &its, &colls, iter_of);
	annotate_kernels(c, res, base, &anns, &gpuanns, &members);
	set_counts(c, res);
	groups_out(c, res);
	ops_prepare(c, res);
	vec_release(&c->launches);
	vec_release(&c->dup_launches);
	vec_release(&c->slices);
	vec_release(&c->pgslices);
	cmap_release(&c->corr);
	if (c->gpus.data) { /* the arena takes the rows over: no copy */
		arena_adopt(c->arena, c->gpus.data, c->gpus.cap * c->gpus.elem);
		vec_init(&c->gpus, c->gpus.elem);
	} else {
		res->kernels = arena_calloc(c->arena, 1, sizeof(*res->kernels));
	}
	rank_metrics_compute(res, iter_of, &members, c->arena);
	if (res->nannotations)
		qsort(res->annotations, res->nannotations, sizeof(*res->annotations),
		      cmp_annotation);
	ops_derive(c, res);
	finish_result(c, res, out);
	return 0;
}
