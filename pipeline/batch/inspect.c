/* inspect.c — `ppbatch --inspect FILE... [--json] [--salvage]`: what a trace
 * holds, read in one streaming pass.
 *
 * Per file: size, events by ph and by category, GPU events and kernel types,
 * threads with their metadata names and event counts, header facts, time
 * span and read throughput; text for people, or one JSON object per line
 * (keys file, bytes, events, kernels, ok, error, ...). With --full also the
 * user annotations by GPU time and the kernels no pattern took (the
 * classifier's result, summed here). Exit status 0 when every file read, 1
 * when some failed. Memory grows with the number of distinct threads and
 * categories (both capped), never with the file size (but for --full's
 * classifier).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "batch.h"
#include "classify/classify.h"
#include "model/patterns.h"
#include "model/rank_result.h"
#include "read/trace_read.h"
#include "util/arena.h"
#include "util/htab.h"
#include "util/pp.h"
#include "util/strbuf.h"

enum {
	MAX_CATS = 256,      /* distinct categories counted by name */
	MAX_THREADS = 65536, /* distinct (pid, tid) tracked */
	SHOW_THREADS = 40,   /* threads listed in the text output */
	MAX_NAMES = 1 << 20, /* distinct kernel names remembered */
	TCACHE = 64,         /* thread cache slots (a power of two) */
	KCACHE = 256,        /* kernel name cache slots (a power of two) */
	CCACHE = 64          /* category spelling cache slots (a power of two) */
};

struct cat_count {
	char *name; /* lower case */
	char *raw;  /* as first seen, for the exact fast check */
	size_t len;
	uint64_t n;
	enum classify_cat kind;
};

/* Kernel name -> type, so each distinct name is matched once. */
struct kname {
	uint64_t hash;
	const char *name;
	size_t n;
	int type; /* enum rr_type */
};

/* pid or tid as a key: absent, an integer or a string. */
struct idkey {
	int kind; /* 0 absent, 1 integer, 2 string */
	int64_t num;
	const char *s; /* kind 2: NUL-terminated (arena) */
	size_t n;
};

struct thread {
	uint64_t hash;
	struct idkey pid, tid;
	char *pid_text, *tid_text;
	char *name; /* thread_name metadata, or NULL */
	uint64_t events;
};

struct proc_name {
	char *pid;
	char *name;
};

struct inspect {
	struct arena arena;
	uint64_t by_ph[256];
	struct cat_count cats[MAX_CATS];
	int ncats;
	struct {                       /* recent spellings of categories */
		uint64_t head, tail;   /* sv_words() of the spelling */
		struct cat_count *cat; /* its entry in cats, or NULL */
	} ccache[CCACHE];
	struct cat_count *cat_by_key[TRACE_CAT_KEYS + 1]; /* by trace_event.cat_key; [0] NULL */
	uint64_t cats_other;
	struct thread *threads; /* in order of first sight */
	size_t tcount, talloc;
	struct itab thread_tab;
	struct { /* recent threads by integer (pid, tid) */
		int64_t pid, tid;
		struct thread *t; /* NULL: the slot is free */
	} tcache[TCACHE];
	struct kname *names;
	size_t ncount, nalloc;
	struct itab name_tab;
	struct { /* recent kernel names by sv_sample_hash() */
		uint64_t hash;
		uint32_t idx; /* 1 + its index in names; 0: the slot is free */
	} kcache[KCACHE];
	const struct patterns *pats;
	struct classify *cl;   /* NULL with --no-classify */
	struct arena cl_arena; /* the classifier's memory */
	uint64_t threads_dropped;
	struct proc_name *procs;
	size_t nprocs, procs_cap;
	uint64_t gpu_events;
	uint64_t gpu_by_cat[CC_GPU_OTHER + 1]; /* by enum classify_cat */
	uint64_t by_type[RR_MEM + 1];          /* by enum rr_type */
	int64_t span_lo, span_hi;              /* INT64_MAX, INT64_MIN: no event had a ts */
};

static inline uint64_t load8(const char *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
	return x;
}

static inline uint64_t mix64(uint64_t x)
{
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ x >> 29;
}

/* The first and the last 8 bytes of s (the first fewer, zero-padded, when
 * shorter; the last 0 when s has no more than 8, else overlapping the
 * first up to 16), its length XORed into the top byte of head (for 8 bytes
 * or more, into a byte of the text, so head alone does not tell the
 * length): equal for equal texts and, with the length compared too,
 * enough to tell texts of up to 16 bytes apart. A reader's string has 8
 * readable bytes (trace_read.h). */
static inline void sv_words(struct pp_sv s, uint64_t *head, uint64_t *tail)
{
	uint64_t h = load8(s.p);
	if (s.n < 8)
		h &= (1ull << (8 * s.n)) - 1;
	*head = h ^ (uint64_t)s.n << 56;
	*tail = s.n > 8 ? load8(s.p + s.n - 8) : 0;
}

/* A cheap hash of a long text: its length and three samples (the head,
 * the middle and the tail); lookups compare the whole text. */
static inline uint64_t sv_sample_hash(struct pp_sv s)
{
	uint64_t h, t, m = 0;
	sv_words(s, &h, &t);
	if (s.n > 24)
		m = load8(s.p + s.n / 2 - 4);
	return mix64(h ^ mix64(t ^ mix64(m)));
}

static struct idkey idkey_of(const struct trace_id *id, bool present)
{
	struct idkey k = { 0, 0, NULL, 0 };
	if (present && id->is_str) {
		k.kind = 2;
		k.s = id->str.p;
		k.n = id->str.n;
	} else if (present) {
		k.kind = 1;
		k.num = id->num;
	}
	return k;
}

static uint64_t idkey_hash(const struct idkey *k, uint64_t h)
{
	h = (h ^ (uint64_t)k->kind) * 1099511628211ull;
	if (k->kind == 1)
		return (h ^ (uint64_t)k->num) * 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < k->n; i++)
		h = (h ^ (unsigned char)k->s[i]) * 1099511628211ull;
	return h;
}

static bool idkey_eq(const struct idkey *a, const struct idkey *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == 1)
		return a->num == b->num;
	return a->kind == 0 || (a->n == b->n && !memcmp(a->s, b->s, a->n));
}

static uint64_t thread_hash(const struct idkey *pid, const struct idkey *tid)
{
	uint64_t h = idkey_hash(tid, idkey_hash(pid, 1469598103934665603ull));
	return h ^ (h >> 29);
}

static char *idkey_text(struct arena *a, const struct idkey *k)
{
	char buf[224];
	if (k->kind == 0)
		snprintf(buf, sizeof(buf), "-");
	else if (k->kind == 1)
		snprintf(buf, sizeof(buf), "%" PRId64, k->num);
	else if (!k->n)
		snprintf(buf, sizeof(buf), "\"\"");
	else
		snprintf(buf, sizeof(buf), "%.*s", (int)(k->n > 200 ? 200 : k->n), k->s);
	return arena_strndup(a, buf, strlen(buf));
}

static uint64_t thread_rehash(void *ctx, uint32_t idx)
{
	return ((const struct thread *)ctx)[idx].hash;
}

struct thread_probe {
	const struct thread *v;
	const struct idkey *pid, *tid;
};

static bool thread_eq(const void *ctx, uint32_t idx)
{
	const struct thread_probe *k = ctx;
	return idkey_eq(&k->v[idx].pid, k->pid) && idkey_eq(&k->v[idx].tid, k->tid);
}

/* The index of the thread (pid, tid), created on first sight; -1 beyond
 * MAX_THREADS. */
static long thread_lookup(struct inspect *in, struct idkey pid, struct idkey tid)
{
	uint64_t h = thread_hash(&pid, &tid);
	struct thread_probe k = { in->threads, &pid, &tid };
	size_t slot;
	itab_reserve(&in->thread_tab, thread_rehash, in->threads);
	long i = itab_find(&in->thread_tab, h, thread_eq, &k, &slot);
	if (i >= 0)
		return i;
	if (in->tcount >= MAX_THREADS) {
		in->threads_dropped++;
		return -1;
	}
	if (in->tcount == in->talloc) {
		in->talloc = in->talloc ? 2 * in->talloc : 256;
		in->threads = xrealloc(in->threads, in->talloc * sizeof(*in->threads));
		memset(in->tcache, 0, sizeof(in->tcache)); /* the threads moved */
	}
	struct thread *t = &in->threads[in->tcount];
	memset(t, 0, sizeof(*t));
	if (pid.kind == 2)
		pid.s = arena_strndup(&in->arena, pid.s, pid.n);
	if (tid.kind == 2)
		tid.s = arena_strndup(&in->arena, tid.s, tid.n);
	t->hash = h;
	t->pid = pid;
	t->tid = tid;
	t->pid_text = idkey_text(&in->arena, &pid);
	t->tid_text = idkey_text(&in->arena, &tid);
	itab_put(&in->thread_tab, slot, h, (uint32_t)in->tcount);
	return (long)in->tcount++;
}

/* thread_get() past its cache: the thread of ev, kept in the cache's slot
 * when its ids are integers. */
static __attribute__((noinline)) struct thread *thread_miss(struct inspect *in,
							    const struct trace_event *ev,
							    size_t slot, bool ints)
{
	long i = thread_lookup(in, idkey_of(&ev->pid, ev->has & TE_PID),
			       idkey_of(&ev->tid, ev->has & TE_TID));
	struct thread *t = i < 0 ? NULL : &in->threads[i];
	if (ints && t) {
		in->tcache[slot].pid = ev->pid.num;
		in->tcache[slot].tid = ev->tid.num;
		in->tcache[slot].t = t;
	}
	return t;
}

/* The thread of ev, through a small direct-mapped cache of integer ids;
 * NULL beyond MAX_THREADS. */
static inline struct thread *thread_get(struct inspect *in, const struct trace_event *ev)
{
	bool ints = (ev->has & (TE_PID | TE_TID)) == (TE_PID | TE_TID) && !ev->pid.is_str &&
		    !ev->tid.is_str;
	size_t slot =
		(size_t)(((uint64_t)ev->pid.num * 0x9e3779b97f4a7c15ull + (uint64_t)ev->tid.num) >>
			 58) &
		(TCACHE - 1);
	if (ints && in->tcache[slot].t && in->tcache[slot].pid == ev->pid.num &&
	    in->tcache[slot].tid == ev->tid.num)
		return in->tcache[slot].t;
	return thread_miss(in, ev, slot, ints);
}

/* count_cat() without the cache: *ci is the category's index, or -1. */
static enum classify_cat count_cat_slow(struct inspect *in, struct pp_sv cat, int *ci)
{
	*ci = -1;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < in->ncats; i++) {
			struct cat_count *cc = &in->cats[i];
			if (cat.n != cc->len || (pass == 0 ? memcmp(cat.p, cc->raw, cat.n) != 0
							   : !pp_sv_ieq(cat, cc->name)))
				continue;
			cc->n++;
			*ci = i;
			return cc->kind;
		}
	if (in->ncats == MAX_CATS || cat.n > 200 || memchr(cat.p, '\0', cat.n)) {
		in->cats_other++;
		return classify_category(cat);
	}
	char *s = arena_strndup(&in->arena, cat.p, cat.n);
	for (char *c = s; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	struct cat_count *cc = &in->cats[in->ncats];
	cc->name = s;
	cc->raw = arena_strndup(&in->arena, cat.p, cat.n);
	cc->len = cat.n;
	cc->n = 1;
	cc->kind = classify_category(cat);
	*ci = in->ncats++;
	return cc->kind;
}

/* count_cat_spelling() past its cache: the category counted, and kept in
 * the cache's slot when it has an exact entry of its own, and by its key. */
static __attribute__((noinline)) enum classify_cat count_cat_miss(struct inspect *in,
								  struct pp_sv cat, unsigned key,
								  unsigned slot, uint64_t head,
								  uint64_t tail)
{
	int i;
	enum classify_cat kind = count_cat_slow(in, cat, &i);
	if (i >= 0 && key)
		in->cat_by_key[key] = &in->cats[i];
	if (i >= 0 && cat.n == in->cats[i].len && !memcmp(cat.p, in->cats[i].raw, cat.n)) {
		in->ccache[slot].head = head;
		in->ccache[slot].tail = tail;
		in->ccache[slot].cat = &in->cats[i];
	}
	return kind;
}

/* count_cat() without a cat_key, or its first time: a spelling seen
 * recently is found in ccache by its length and its first and last bytes
 * (compared whole when longer than 16). */
static inline enum classify_cat count_cat_spelling(struct inspect *in, struct pp_sv cat,
						   unsigned key)
{
	uint64_t head, tail;
	sv_words(cat, &head, &tail);
	unsigned slot = (unsigned)(((head ^ tail) * 0x9e3779b97f4a7c15ull) >> 58) & (CCACHE - 1);
	struct cat_count *cc = in->ccache[slot].cat;
	if (cc && in->ccache[slot].head == head && in->ccache[slot].tail == tail &&
	    cat.n == cc->len && (cat.n <= 16 || !memcmp(cat.p, cc->raw, cat.n))) {
		if (key)
			in->cat_by_key[key] = cc;
		cc->n++;
		return cc->kind;
	}
	return count_cat_miss(in, cat, key, slot, head, tail);
}

/* Counts the event's category; returns its kind (classify_category()).
 * The reader's cat_key, when it gives one, stands for the text itself
 * (trace_read.h): one load finds its entry. */
static inline enum classify_cat count_cat(struct inspect *in, const struct trace_event *ev)
{
	struct cat_count *cc = in->cat_by_key[ev->cat_key];
	if (cc) {
		cc->n++;
		return cc->kind;
	}
	return count_cat_spelling(in, ev->cat, ev->cat_key);
}

static uint64_t kname_rehash(void *ctx, uint32_t idx)
{
	return ((const struct kname *)ctx)[idx].hash;
}

struct kname_probe {
	const struct kname *v;
	struct pp_sv name;
};

static bool kname_eq(const void *ctx, uint32_t idx)
{
	const struct kname_probe *k = ctx;
	const struct kname *e = &k->v[idx];
	return e->n == k->name.n && !memcmp(e->name, k->name.p, e->n);
}

/* The two kcache slots of a name of hash h. */
static inline unsigned kslot(uint64_t h, int way)
{
	return (unsigned)(h >> (way ? 48 : 56)) & (KCACHE - 1);
}

/* Keeps names[i] of hash h in kcache: in its first slot unless another
 * name holds it and the second is free (names of one hash, which are
 * many in a real trace, as templates' names differ where the hash does
 * not look, then take both). */
static void kcache_put(struct inspect *in, uint64_t h, size_t i)
{
	unsigned a = kslot(h, 0), b = kslot(h, 1);
	unsigned ks = in->kcache[a].idx && !in->kcache[b].idx ? b : a;
	in->kcache[ks].hash = h;
	in->kcache[ks].idx = (uint32_t)i + 1;
}

/* kernel_type() past its cache: the name found or added in name_tab, and
 * kept in the cache. */
static __attribute__((noinline)) enum rr_type kernel_type_miss(struct inspect *in,
							       struct pp_sv name, uint64_t h)
{
	struct kname_probe k = { in->names, name };
	size_t slot;
	itab_reserve(&in->name_tab, kname_rehash, in->names);
	long i = itab_find(&in->name_tab, h, kname_eq, &k, &slot);
	if (i >= 0) {
		kcache_put(in, h, (size_t)i);
		return (enum rr_type)in->names[i].type;
	}
	enum rr_type type = classify_kernel_type(patterns_match(in->pats, name.p), false);
	if (in->ncount >= MAX_NAMES || name.n > 4096)
		return type;
	if (in->ncount == in->nalloc) {
		in->nalloc = in->nalloc ? 2 * in->nalloc : 1024;
		in->names = xrealloc(in->names, in->nalloc * sizeof(*in->names));
	}
	in->names[in->ncount] =
		(struct kname){ h, arena_strndup(&in->arena, name.p, name.n), name.n, type };
	itab_put(&in->name_tab, slot, h, (uint32_t)in->ncount);
	kcache_put(in, h, in->ncount++);
	return type;
}

/* The type of a kernel name (classify_kernel_type()), matched once per
 * distinct name (up to a cap); a name seen recently is found in kcache,
 * in one of two slots, its whole text compared. */
static inline enum rr_type kernel_type(struct inspect *in, struct pp_sv name)
{
	uint64_t h = sv_sample_hash(name);
	for (int way = 0; way < 2; way++) {
		unsigned ks = kslot(h, way);
		uint32_t i = in->kcache[ks].idx;
		if (i && in->kcache[ks].hash == h) {
			const struct kname *e = &in->names[i - 1];
			if (e->n == name.n && !memcmp(e->name, name.p, name.n))
				return (enum rr_type)e->type;
		}
	}
	return kernel_type_miss(in, name, h);
}

/* Counts a GPU event by kind and type. */
static void count_gpu(struct inspect *in, const struct trace_event *ev, enum classify_cat kind)
{
	in->gpu_events++;
	in->gpu_by_cat[kind]++;
	in->by_type[kind == CC_KERNEL ? kernel_type(in, ev->name)
				      : classify_kernel_type(0, true)]++;
}

static void note_metadata(struct inspect *in, const struct trace_event *ev)
{
	if (!strcmp(ev->name.p, "thread_name")) {
		struct thread *t = thread_get(in, ev);
		if (t && ev->arg_name.n)
			t->name = arena_strndup(&in->arena, ev->arg_name.p,
						ev->arg_name.n > 200 ? 200 : ev->arg_name.n);
	} else if (!strcmp(ev->name.p, "process_name") && ev->arg_name.n && in->nprocs < 4096) {
		struct idkey k = idkey_of(&ev->pid, ev->has & TE_PID);
		char *pid = idkey_text(&in->arena, &k);
		if (in->nprocs == in->procs_cap) {
			in->procs_cap = in->procs_cap ? in->procs_cap * 2 : 16;
			in->procs = xrealloc(in->procs, in->procs_cap * sizeof(*in->procs));
		}
		in->procs[in->nprocs].pid = pid;
		in->procs[in->nprocs++].name = arena_strndup(
			&in->arena, ev->arg_name.p, ev->arg_name.n > 200 ? 200 : ev->arg_name.n);
	}
}

static void observe(struct inspect *in, const struct trace_event *ev)
{
	in->by_ph[(unsigned char)ev->ph]++;
	if (ev->ph == 'M') {
		note_metadata(in, ev);
		return;
	}
	enum classify_cat kind = count_cat(in, ev);
	struct thread *t = thread_get(in, ev);
	if (t)
		t->events++;
	if (classify_gpu_event(ev->ph, kind))
		count_gpu(in, ev, kind);
	if (ev->has & TE_TS) { /* span_lo > span_hi until the first */
		int64_t lo = ev->ts_ns, hi = ev->ts_ns;
		if ((ev->has & TE_DUR) && ev->dur_ns > 0 && hi <= INT64_MAX - ev->dur_ns)
			hi += ev->dur_ns;
		if (lo < in->span_lo)
			in->span_lo = lo;
		if (hi > in->span_hi)
			in->span_hi = hi;
	}
}

static void inspect_release(struct inspect *in)
{
	classify_free(in->cl);
	arena_release(&in->cl_arena);
	free(in->threads);
	itab_release(&in->thread_tab);
	free(in->names);
	itab_release(&in->name_tab);
	free(in->procs);
	arena_release(&in->arena);
}

static int cmp_cat(const void *a, const void *b)
{
	const struct cat_count *x = a, *y = b;
	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int cmp_thread(const void *a, const void *b)
{
	const struct thread *x = *(const struct thread *const *)a;
	const struct thread *y = *(const struct thread *const *)b;
	if (x->events != y->events)
		return x->events < y->events ? 1 : -1;
	int c = strcmp(x->pid_text, y->pid_text);
	return c ? c : strcmp(x->tid_text, y->tid_text);
}

static const char *proc_name(const struct inspect *in, const char *pid)
{
	for (size_t i = 0; i < in->nprocs; i++)
		if (!strcmp(in->procs[i].pid, pid))
			return in->procs[i].name;
	return NULL;
}

/* The threads, busiest first, as an array the caller frees. */
static struct thread **sorted_threads(const struct inspect *in)
{
	struct thread **v = xcalloc(in->tcount + 1, sizeof(*v));
	for (size_t i = 0; i < in->tcount; i++)
		v[i] = &in->threads[i];
	qsort(v, in->tcount, sizeof(*v), cmp_thread);
	return v;
}

enum { SHOW_TOP = 20 }; /* annotations and unknown kernels listed */

/* The GPU time of one kernel name that no pattern took (type comp). */
struct unknown {
	uint32_t name_id;
	int64_t kernels, ns;
};

static int cmp_unknown(const void *pa, const void *pb)
{
	const struct unknown *a = pa, *b = pb;
	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return (a->name_id > b->name_id) - (a->name_id < b->name_id);
}

/* The computation kernel names of res by their summed duration, most first;
 * *n of them (the caller frees the array). Every kernel is comp that no
 * comm_kernel, [collectives] or mem_kernel glob took. */
static struct unknown *unknown_kernels(const struct rank_result *res, size_t *n)
{
	struct unknown *u = xcalloc(res->nnames + 1, sizeof(*u));
	for (size_t i = 0; i < res->nnames; i++)
		u[i].name_id = (uint32_t)i;
	for (size_t i = 0; i < res->nkernels; i++) {
		const struct rr_kernel *k = &res->kernels[i];
		if (k->type == RR_COMP && k->name_id < res->nnames) {
			u[k->name_id].kernels++;
			u[k->name_id].ns += k->dur_ns;
		}
	}
	size_t m = 0;
	for (size_t i = 0; i < res->nnames; i++)
		if (u[i].kernels)
			u[m++] = u[i];
	qsort(u, m, sizeof(*u), cmp_unknown);
	*n = m;
	return u;
}

/* Up to the first 100 bytes of a name, for a table line. */
static int short_len(const char *s)
{
	size_t n = strlen(s);
	return n > 100 ? 100 : (int)n;
}

/* --full: the user annotations and the unknown kernels, as text. */
static void print_full_text(const struct rank_result *res)
{
	printf("  user annotations (docs/classification.md): %zu names", res->nannotations);
	if (res->nannotations)
		printf(", by GPU time (ns)\n    %11s %8s %14s %14s %14s %14s  %s\n", "calls",
		       "kernels", "gpu", "comp", "comm", "overlap", "name");
	else
		printf("\n");
	for (size_t i = 0; i < res->nannotations && i < SHOW_TOP; i++) {
		const struct rr_annotation *a = &res->annotations[i];
		const char *nm = res->names[a->name_id];
		printf("    %11lld %8lld %14lld %14lld %14lld %14lld  %.*s\n", (long long)a->calls,
		       (long long)a->kernels, (long long)a->gpu_ns, (long long)a->comp_ns,
		       (long long)a->comm_ns, (long long)a->overlap_ns, short_len(nm), nm);
	}
	if (res->nannotations > SHOW_TOP)
		printf("    ... %zu more\n", res->nannotations - SHOW_TOP);
	size_t n;
	struct unknown *u = unknown_kernels(res, &n);
	printf("  kernels no pattern took (computation; add communication ones to [patterns] "
	       "comm_kernel or [collectives]): %zu names",
	       n);
	if (n)
		printf(", by time (ns)\n    %14s %8s  %s\n", "sum", "kernels", "name");
	else
		printf("\n");
	for (size_t i = 0; i < n && i < SHOW_TOP; i++) {
		const char *nm = res->names[u[i].name_id];
		printf("    %14lld %8lld  %.*s\n", (long long)u[i].ns, (long long)u[i].kernels,
		       short_len(nm), nm);
	}
	if (n > SHOW_TOP)
		printf("    ... %zu more\n", n - SHOW_TOP);
	free(u);
}

/* --full: "annotations" and "unknown_kernels" (the first SHOW_TOP of each,
 * and how many there are), or nulls for a survey. */
static void add_full_json(struct strbuf *sb, const struct rank_result *res)
{
	if (!res || res->survey) {
		strbuf_addstr(sb, ",\"annotations\":null,\"unknown_kernels\":null");
		return;
	}
	strbuf_addf(sb, ",\"annotation_names\":%zu,\"annotations\":[", res->nannotations);
	for (size_t i = 0; i < res->nannotations && i < SHOW_TOP; i++) {
		const struct rr_annotation *a = &res->annotations[i];
		const char *nm = res->names[a->name_id];
		strbuf_addstr(sb, i ? ",{\"name\":" : "{\"name\":");
		strbuf_add_json_str(sb, nm, strlen(nm));
		strbuf_addf(sb,
			    ",\"calls\":%lld,\"kernels\":%lld,\"gpu_ns\":%lld,\"comp_ns\":%lld,"
			    "\"comm_ns\":%lld,\"overlap_ns\":%lld}",
			    (long long)a->calls, (long long)a->kernels, (long long)a->gpu_ns,
			    (long long)a->comp_ns, (long long)a->comm_ns, (long long)a->overlap_ns);
	}
	size_t n;
	struct unknown *u = unknown_kernels(res, &n);
	strbuf_addf(sb, "],\"unknown_kernel_names\":%zu,\"unknown_kernels\":[", n);
	for (size_t i = 0; i < n && i < SHOW_TOP; i++) {
		const char *nm = res->names[u[i].name_id];
		strbuf_addstr(sb, i ? ",{\"name\":" : "{\"name\":");
		strbuf_add_json_str(sb, nm, strlen(nm));
		strbuf_addf(sb, ",\"kernels\":%lld,\"ns\":%lld}", (long long)u[i].kernels,
			    (long long)u[i].ns);
	}
	strbuf_addch(sb, ']');
	free(u);
}

struct file_result {
	const char *path;
	uint64_t file_bytes, text_bytes, events;
	int rc;
	const char *err;
	bool truncated, gz;
	double seconds;
	const char *simd;   /* the reader's SIMD level */
	const char *gunzip; /* what inflated it, or "" */
};

static void print_text(const struct inspect *in, const struct file_result *f,
		       const struct trace_header *h, const struct rank_result *res)
{
	printf("%s\n", f->path);
	printf("  size        %" PRIu64 " bytes%s", f->file_bytes, f->gz ? " (gzip)" : "");
	if (f->gz)
		printf(", %" PRIu64 " bytes of JSON", f->text_bytes);
	printf("\n");
	if (f->rc < 0)
		printf("  error       %s\n", f->err);
	if (f->truncated)
		printf("  salvaged    the file is truncated; %" PRIu64 " complete events kept\n",
		       f->events);
	printf("  events      %" PRIu64 "  (", f->events);
	bool sep = false;
	for (int c = 0; c < 256; c++)
		if (in->by_ph[c]) {
			if (c >= 0x21 && c < 0x7f)
				printf("%s%c %" PRIu64, sep ? ", " : "", c, in->by_ph[c]);
			else
				printf("%s0x%02x %" PRIu64, sep ? ", " : "", c, in->by_ph[c]);
			sep = true;
		}
	printf(")\n");
	struct cat_count cats[MAX_CATS];
	memcpy(cats, in->cats, (size_t)in->ncats * sizeof(cats[0]));
	qsort(cats, (size_t)in->ncats, sizeof(cats[0]), cmp_cat);
	printf("  categories ");
	for (int i = 0; i < in->ncats; i++)
		printf(" %s %" PRIu64 "%s", cats[i].name[0] ? cats[i].name : "(none)", cats[i].n,
		       i + 1 < in->ncats || in->cats_other ? "," : "");
	if (in->cats_other)
		printf(" (other) %" PRIu64, in->cats_other);
	printf("\n");
	printf("  gpu events  %" PRIu64 "  (kernel %" PRIu64 ", gpu_memcpy %" PRIu64
	       ", gpu_memset %" PRIu64 ")\n",
	       in->gpu_events, in->gpu_by_cat[CC_KERNEL], in->gpu_by_cat[CC_MEMCPY],
	       in->gpu_by_cat[CC_MEMSET]);
	printf("  kernel types comp %" PRIu64 ", comm %" PRIu64 ", mem %" PRIu64 "\n",
	       in->by_type[RR_COMP], in->by_type[RR_COMM], in->by_type[RR_MEM]);
	printf("  header      rank ");
	if (h->has_rank)
		printf("%" PRId64, h->rank);
	else
		printf("-");
	printf(", world size ");
	if (h->has_world_size)
		printf("%" PRId64, h->world_size);
	else
		printf("-");
	printf(", backend %s, nccl %s, process groups %zu", h->backend[0] ? h->backend : "-",
	       h->nccl_version[0] ? h->nccl_version : "-", h->npgs);
	if (h->has_pg_count && h->pg_count != (int64_t)h->npgs)
		printf(" of %" PRId64, h->pg_count);
	printf("\n");
	printf("  device      %s (%d listed), schema %s", h->device_name[0] ? h->device_name : "-",
	       h->device_count, h->has_schema ? "" : "-");
	if (h->has_schema)
		printf("%" PRId64, h->schema_version);
	printf(", base time ");
	if (h->has_base_time)
		printf("%" PRId64 " ns\n", h->base_time_ns);
	else
		printf("none (absolute µs)\n");
	if (in->span_lo <= in->span_hi) {
		int64_t base = h->has_base_time ? h->base_time_ns : 0;
		printf("  time span   %" PRId64 " .. %" PRId64 " ns (%.6f s)\n", in->span_lo + base,
		       in->span_hi + base, (double)(in->span_hi - in->span_lo) / 1e9);
	}
	printf("  threads     %zu%s\n", in->tcount,
	       in->threads_dropped ? " (more not tracked)" : "");
	struct thread **v = sorted_threads(in);
	for (size_t i = 0; i < in->tcount && i < SHOW_THREADS; i++) {
		const char *pn = proc_name(in, v[i]->pid_text);
		printf("    pid %-10s tid %-12s %10" PRIu64 " events  %s%s%s\n", v[i]->pid_text,
		       v[i]->tid_text, v[i]->events, v[i]->name ? v[i]->name : "", pn ? "  / " : "",
		       pn ? pn : "");
	}
	if (in->tcount > SHOW_THREADS)
		printf("    ... %zu more\n", in->tcount - SHOW_THREADS);
	free(v);
	if (res) {
		struct strbuf sb = STRBUF_INIT;
		rank_result_describe(res, &sb, false);
		printf("  classification (docs/classification.md)\n%s", sb.buf);
		strbuf_release(&sb);
		if (!res->survey)
			print_full_text(res);
	}
	printf("  read        %.3f s, %.1f MB/s of file, %.1f MB/s of JSON (simd %s%s%s)\n",
	       f->seconds, f->seconds > 0 ? (double)f->file_bytes / f->seconds / 1e6 : 0.0,
	       f->seconds > 0 ? (double)f->text_bytes / f->seconds / 1e6 : 0.0, f->simd,
	       *f->gunzip ? ", gunzip " : "", f->gunzip);
}

static void json_kv_str(struct strbuf *sb, const char *k, const char *v)
{
	strbuf_addf(sb, ",\"%s\":", k);
	if (v)
		strbuf_add_json_str(sb, v, strlen(v));
	else
		strbuf_addstr(sb, "null");
}

static void json_kv_i64(struct strbuf *sb, const char *k, bool has, int64_t v)
{
	if (has)
		strbuf_addf(sb, ",\"%s\":%" PRId64, k, v);
	else
		strbuf_addf(sb, ",\"%s\":null", k);
}

static void json_idkey(struct strbuf *sb, const struct idkey *k)
{
	if (k->kind == 1)
		strbuf_addf(sb, "%" PRId64, k->num);
	else if (k->kind == 2)
		strbuf_add_json_str(sb, k->s, k->n);
	else
		strbuf_addstr(sb, "null");
}

static void print_json(const struct inspect *in, const struct file_result *f,
		       const struct trace_header *h, const struct rank_result *res)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"file\":");
	strbuf_add_json_str(&sb, f->path, strlen(f->path));
	strbuf_addf(&sb, ",\"bytes\":%" PRIu64 ",\"text_bytes\":%" PRIu64 ",\"gzip\":%s",
		    f->file_bytes, f->text_bytes, f->gz ? "true" : "false");
	strbuf_addf(&sb, ",\"events\":%" PRIu64 ",\"kernels\":%" PRIu64, f->events,
		    in->gpu_by_cat[CC_KERNEL]);
	strbuf_addf(&sb, ",\"ok\":%s", f->rc < 0 ? "false" : "true");
	json_kv_str(&sb, "error", f->rc < 0 ? f->err : NULL);
	strbuf_addf(&sb, ",\"truncated\":%s", f->truncated ? "true" : "false");
	json_kv_str(&sb, "simd", f->simd);
	strbuf_addf(&sb,
		    ",\"gpu_events\":%" PRIu64 ",\"gpu_memcpy\":%" PRIu64
		    ",\"gpu_memset\":%" PRIu64,
		    in->gpu_events, in->gpu_by_cat[CC_MEMCPY], in->gpu_by_cat[CC_MEMSET]);
	strbuf_addf(&sb,
		    ",\"kernel_types\":{\"comp\":%" PRIu64 ",\"comm\":%" PRIu64 ",\"mem\":%" PRIu64
		    "}",
		    in->by_type[RR_COMP], in->by_type[RR_COMM], in->by_type[RR_MEM]);
	strbuf_addstr(&sb, ",\"by_ph\":{");
	bool sep = false;
	for (int c = 0; c < 256; c++)
		if (in->by_ph[c]) {
			char k[2] = { (char)c, 0 };
			if (sep)
				strbuf_addch(&sb, ',');
			strbuf_add_json_str(&sb, k, c ? 1 : 0);
			strbuf_addf(&sb, ":%" PRIu64, in->by_ph[c]);
			sep = true;
		}
	strbuf_addstr(&sb, "},\"by_cat\":{");
	for (int i = 0; i < in->ncats; i++) {
		if (i)
			strbuf_addch(&sb, ',');
		strbuf_add_json_str(&sb, in->cats[i].name, strlen(in->cats[i].name));
		strbuf_addf(&sb, ":%" PRIu64, in->cats[i].n);
	}
	if (in->cats_other)
		strbuf_addf(&sb, "%s\"(other)\":%" PRIu64, in->ncats ? "," : "", in->cats_other);
	/* The categories the GPU-event rule takes (classify_gpu_event()): the
	 * tests derive their independent sums from this, not from a copy of
	 * the rule. */
	strbuf_addstr(&sb, "},\"gpu_categories\":[");
	for (int i = 0, n = 0; i < in->ncats; i++)
		if (classify_gpu_event('X', in->cats[i].kind)) {
			strbuf_addstr(&sb, n++ ? "," : "");
			strbuf_add_json_str(&sb, in->cats[i].name, strlen(in->cats[i].name));
		}
	strbuf_addstr(&sb, "]");
	json_kv_i64(&sb, "rank", h->has_rank, h->rank);
	json_kv_i64(&sb, "world_size", h->has_world_size, h->world_size);
	json_kv_str(&sb, "backend", h->backend[0] ? h->backend : NULL);
	json_kv_str(&sb, "nccl_version", h->nccl_version[0] ? h->nccl_version : NULL);
	strbuf_addf(&sb, ",\"process_groups\":%zu", h->npgs);
	json_kv_i64(&sb, "pg_count", h->has_pg_count, h->pg_count);
	json_kv_str(&sb, "device", h->device_name[0] ? h->device_name : NULL);
	strbuf_addf(&sb, ",\"device_count\":%d", h->device_count);
	json_kv_i64(&sb, "schema_version", h->has_schema, h->schema_version);
	json_kv_i64(&sb, "base_time_ns", h->has_base_time, h->base_time_ns);
	if (in->span_lo <= in->span_hi) {
		int64_t base = h->has_base_time ? h->base_time_ns : 0;
		strbuf_addf(&sb, ",\"start_ns\":%" PRId64 ",\"end_ns\":%" PRId64,
			    in->span_lo + base, in->span_hi + base);
	} else {
		strbuf_addstr(&sb, ",\"start_ns\":null,\"end_ns\":null");
	}
	strbuf_addf(&sb, ",\"threads\":[");
	struct thread **v = sorted_threads(in);
	for (size_t i = 0; i < in->tcount; i++) {
		if (i)
			strbuf_addch(&sb, ',');
		strbuf_addstr(&sb, "{\"pid\":");
		json_idkey(&sb, &v[i]->pid);
		strbuf_addstr(&sb, ",\"tid\":");
		json_idkey(&sb, &v[i]->tid);
		json_kv_str(&sb, "name", v[i]->name);
		strbuf_addf(&sb, ",\"events\":%" PRIu64 "}", v[i]->events);
	}
	free(v);
	strbuf_addstr(&sb, "],\"classification\":");
	if (res)
		rank_result_describe(res, &sb, true);
	else
		strbuf_addstr(&sb, "null");
	add_full_json(&sb, res);
	strbuf_addf(&sb, ",\"seconds\":%.6f}", f->seconds);
	puts(sb.buf);
	strbuf_release(&sb);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* A survey's second reading of the file, for the launch counts of the
 * backward-thread fallback (classify.h): the same `events` events as the
 * first reading, from the same, unchanged file (st, taken before the first
 * reading). Returns 0 with *res, or a PP_E* code with the reason appended
 * to err. */
static int launch_pass(struct classify *cl, const char *path, const struct trace_reader_opts *ro,
		       const struct stat *st, uint64_t events, const struct trace_header *h,
		       struct rank_result **res, struct strbuf *err)
{
	struct trace_event ev;
	struct stat now;
	uint64_t n = 0;
	int rc = 0;
	if (stat(path, &now) || !same_file(st, &now))
		return pp_err(err, PP_EIO,
			      "%s: changed while being inspected (read twice for the "
			      "backward thread's launch count)",
			      path);
	struct trace_reader *r = trace_reader_open(path, ro);
	while (n < events && (rc = trace_reader_next(r, &ev)) > 0) {
		n++;
		classify_feed(cl, &ev);
	}
	if (rc < 0)
		pp_err(err, rc, "%s", trace_reader_error(r));
	else if (n < events || stat(path, &now) || !same_file(st, &now))
		rc = pp_err(err, PP_EIO,
			    "%s: changed while being inspected (read twice for "
			    "the backward thread's launch count)",
			    path);
	trace_reader_close(r);
	if (rc < 0)
		return rc;
	classify_finish(cl, h, res);
	return 0;
}

/* Reads one file and prints its description; returns 0 or a PP_E* code. */
static int inspect_file(const struct inspect_opts *o, const struct patterns *pats, const char *path,
			struct strbuf *err)
{
	struct trace_reader_opts ro = { .salvage = o->salvage };
	struct inspect in;
	struct trace_event ev;
	struct file_result f = { .path = path };
	int rc;

	memset(&in, 0, sizeof(in));
	in.span_lo = INT64_MAX;
	in.span_hi = INT64_MIN;
	in.pats = pats;
	/* A survey may need a second reading: only of a regular file (not a
	 * pipe such as <(zcat ...)), which must stay the same (st0). */
	struct stat st0;
	bool regular = stat(path, &st0) == 0 && S_ISREG(st0.st_mode);
	in.cl = o->no_classify        ? NULL
		: o->full || !regular ? classify_new(pats, &in.cl_arena)
				      : classify_new_survey(pats, &in.cl_arena);
	struct strbuf err2 = STRBUF_INIT; /* launch_pass()'s reason */
	int64_t t0 = pp_now_ns();
	struct trace_reader *r = trace_reader_open(path, &ro);
	while ((rc = trace_reader_next(r, &ev)) > 0) {
		observe(&in, &ev);
		if (in.cl)
			classify_feed(in.cl, &ev);
	}
	struct rank_result *res = NULL;
	if (rc == 0 && in.cl) {
		int crc = classify_finish(in.cl, trace_reader_header(r), &res);
		if (crc == CLASSIFY_AGAIN)
			crc = launch_pass(in.cl, path, &ro, &st0, trace_reader_events(r),
					  trace_reader_header(r), &res, &err2);
		if (crc) { /* the file failed: err2 says why */
			res = NULL;
			rc = crc;
		}
	}
	f.seconds = (double)(pp_now_ns() - t0) / 1e9;
	struct stat st;
	f.file_bytes = stat(path, &st) == 0 ? (uint64_t)st.st_size : trace_reader_bytes_in(r);
	f.text_bytes = trace_reader_bytes_text(r);
	f.events = trace_reader_events(r);
	f.rc = rc;
	f.err = err2.len ? err2.buf : trace_reader_error(r);
	f.truncated = trace_reader_truncated(r);
	f.gz = trace_reader_is_gzip(r);
	f.simd = trace_reader_simd(r);
	f.gunzip = trace_reader_gunzip(r);
	if (o->json)
		print_json(&in, &f, trace_reader_header(r), res);
	else
		print_text(&in, &f, trace_reader_header(r), res);
	if (rc < 0 && !o->json)
		pp_err(err, rc, "%s", f.err);
	fflush(stdout);
	trace_reader_close(r);
	inspect_release(&in);
	strbuf_release(&err2);
	return rc < 0 ? rc : 0;
}

int inspect_run(const struct inspect_opts *o, struct strbuf *err)
{
	int failed = 0;
	struct patterns *pats = patterns_new(o->config, err);
	if (!pats)
		return PP_EXIT_USAGE;
	for (int i = 0; i < o->nfiles; i++) {
		if (i && !o->json)
			printf("\n");
		if (inspect_file(o, pats, o->files[i], err) < 0)
			failed++;
	}
	patterns_free(pats);
	return failed ? PP_EXIT_PARTIAL : PP_EXIT_OK;
}
