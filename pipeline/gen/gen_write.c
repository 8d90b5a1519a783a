/* gen_write.c — the Kineto trace writer (see gen_write.h).
 *
 * Event order in the file: metadata, CPU slices in start order, then per
 * GPU event its cpu_op, launch, ac2g/fwdbwd flows and the event itself.
 * Real Kineto files are not globally time-sorted either. With GN_UNSORTED
 * the GPU groups come in reverse time order and metadata comes last.
 * The file is written through safefile.h (a temporary name renamed into
 * place, no symlink planted at the name followed, the user's umask); gzip
 * output goes through gzdopen() on a duplicate of the safefile's fd.
 */
#include "gen_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "util/pp.h"
#include "util/safefile.h"
#include "util/strbuf.h"

#define OUT_CAP (8u << 20)

struct out {
	FILE *f;
	gzFile gz;
	const volatile sig_atomic_t *stop; /* gen_write_opts.stop */
	char *buf;
	size_t len;
	int err;
	uint64_t events;       /* events written, for separators and nasty choices */
	uint64_t kernel_names; /* compute kernel names written (long-names) */
	unsigned nasty;
	bool relative;
	int64_t base;
	size_t mark; /* start of the current event in buf */
};

static void out_flush(struct out *o)
{
	if (o->stop && *o->stop && !o->err)
		o->err = PP_EINTR;
	if (!o->len || o->err)
		goto out;
	if (o->gz) {
		if (gzwrite(o->gz, o->buf, (unsigned)o->len) != (int)o->len)
			o->err = PP_EIO;
	} else if (fwrite(o->buf, 1, o->len, o->f) != o->len) {
		o->err = PP_EIO;
	}
out:
	o->len = 0;
	o->mark = 0;
}

static void out_slow(struct out *o, const void *p, size_t n)
{
	out_flush(o);
	if (n <= OUT_CAP) {
		memcpy(o->buf, p, n);
		o->len = n;
	} else if (!o->err && (o->gz ? gzwrite(o->gz, p, (unsigned)n) != (int)n
				     : fwrite(p, 1, n, o->f) != n)) {
		o->err = PP_EIO;
	}
}

static inline void out_mem(struct out *o, const void *p, size_t n)
{
	if (o->len + n > OUT_CAP) {
		out_slow(o, p, n);
		return;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

#define LIT(o, s) out_mem((o), (s), sizeof(s) - 1)

static void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

static void out_u64(struct out *o, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp);
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out_mem(o, tmp + i, sizeof(tmp) - (size_t)i);
}

static void out_i64(struct out *o, int64_t v)
{
	if (v < 0) {
		LIT(o, "-");
		out_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		out_u64(o, (uint64_t)v);
	}
}

/* Microseconds with up to three decimals, trailing zeros dropped. */
static void out_us(struct out *o, int64_t ns)
{
	bool neg = ns < 0;
	uint64_t v = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	if (neg)
		LIT(o, "-");
	out_u64(o, v / 1000);
	unsigned frac = (unsigned)(v % 1000);
	if (frac) {
		char d[4] = { '.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
			      (char)('0' + frac % 10) };
		size_t n = 4;
		while (d[n - 1] == '0')
			n--;
		out_mem(o, d, n);
	}
}

static void out_ts(struct out *o, int64_t ns)
{
	out_us(o, o->relative ? ns - o->base : ns);
}

/* A JSON string of ours (names, categories: nothing to escape), quotes
 * included. */
static void out_qstr(struct out *o, const char *s)
{
	LIT(o, "\"");
	out_str(o, s);
	LIT(o, "\"");
}

/* The same for the trace's path, the user's --out: it may hold a quote, a
 * backslash or a control character. Once a trace, not per event. */
static void out_qpath(struct out *o, const char *s)
{
	LIT(o, "\"");
	for (const char *p = s; *p;) {
		const char *q = p;
		while (*q && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
			q++;
		out_mem(o, p, (size_t)(q - p));
		if (!*q)
			break;
		char esc[8];
		int n = snprintf(esc, sizeof(esc), *q == '"' || *q == '\\' ? "\\%c" : "\\u%04x",
				 (unsigned char)*q);
		out_mem(o, esc, (size_t)n);
		p = q + 1;
	}
	LIT(o, "\"");
}

/* One member of an event: the literal before the value (separator, key,
 * any constant members) and the value, one kind each. */
#define KV_STR(o, lit, s) (LIT(o, lit), out_qstr((o), (s)))
#define KV_I64(o, lit, v) (LIT(o, lit), out_i64((o), (v)))
#define KV_U64(o, lit, v) (LIT(o, lit), out_u64((o), (v)))
#define KV_US(o, lit, ns) (LIT(o, lit), out_us((o), (ns)))
#define KV_TS(o, lit, ns) (LIT(o, lit), out_ts((o), (ns)))

/* A JSON string for a name. With GN_UNICODE every 'o' of python names is
 * written as \u006f (same decoded text) and compute kernel names get a
 * suffix with a surrogate pair; with GN_CONTROL some names get raw control
 * characters. Names in the model never need escaping otherwise. */
enum { NM_PLAIN, NM_PYTHON, NM_KERNEL, NM_OP };

static void out_name(struct out *o, const char *s, int kind)
{
	LIT(o, "\"");
	if ((o->nasty & GN_UNICODE) && kind == NM_PYTHON) {
		for (const char *p = s; *p; p++) {
			if (*p == 'o')
				LIT(o, "\\u006f");
			else
				out_mem(o, p, 1);
		}
	} else {
		out_str(o, s);
	}
	if ((o->nasty & GN_UNICODE) && kind == NM_KERNEL && o->events % 5 == 0)
		LIT(o, " \\u00e9\\ud83d\\ude80 \\u4e2d");
	if ((o->nasty & GN_LONG_NAMES) && kind == NM_KERNEL && o->kernel_names++ % 50 == 7) {
		/* CUTLASS-style template arguments: about 6 KB. */
		LIT(o, " [with Params = cutlass::gemm::kernel::GemmUniversal<");
		for (int i = 0; i < 120; i++)
			LIT(o, "cute::tuple<cute::C<128>, cute::C<256>, cute::C<64>>, ");
		LIT(o, "void>]");
	}
	if ((o->nasty & GN_CONTROL) && kind == NM_OP && o->events % 4 == 0)
		LIT(o, "\x01\t\x1f");
	LIT(o, "\"");
}

static void begin_event(struct out *o)
{
	if (o->events) {
		if (o->nasty & GN_WHITESPACE) {
			switch (o->events % 4) {
			case 0: LIT(o, ",\r\n"); break;
			case 1: LIT(o, " ,\n\n\t"); break;
			case 2: LIT(o, ",\t \r\n  "); break;
			default: LIT(o, "\n,\n"); break;
			}
		} else {
			LIT(o, ",\n");
		}
	}
	o->mark = o->len;
	o->events++;
	LIT(o, "  {");
}

/* Opens a complete ("X") event up to its name's value: the category,
 * pid, tid, start and duration every one of them has. */
static void begin_x(struct out *o, const char *cat, int64_t pid, int64_t tid, int64_t ts,
		    int64_t dur)
{
	begin_event(o);
	KV_STR(o, "\"ph\": ", "X");
	KV_STR(o, ", \"cat\": ", cat);
	KV_I64(o, ", \"pid\": ", pid);
	KV_I64(o, ", \"tid\": ", tid);
	KV_TS(o, ", \"ts\": ", ts);
	KV_US(o, ", \"dur\": ", dur);
	LIT(o, ", \"name\": ");
}

struct ctx {
	const struct gen_rank *r;
	const struct gen_write_opts *w;
	int64_t pid, tid_main, tid_bwd, dev;
};

static int64_t tid_of(const struct ctx *c, int thread)
{
	return thread == GT_BWD ? c->tid_bwd : c->tid_main;
}

static void meta(struct out *o, const char *what, int64_t pid, int64_t tid, const char *key,
		 const char *val, int64_t ival)
{
	begin_event(o);
	KV_STR(o, "\"name\": ", what);
	KV_I64(o, ", \"ph\": \"M\", \"ts\": 0, \"pid\": ", pid);
	KV_I64(o, ", \"tid\": ", tid);
	KV_STR(o, ", \"args\": {", key);
	LIT(o, ": ");
	if (val)
		out_qstr(o, val);
	else
		out_i64(o, ival);
	LIT(o, "}}");
}

static void write_metadata(struct out *o, const struct ctx *c)
{
	char buf[64];
	meta(o, "process_name", c->pid, 0, "name", "python3", 0);
	meta(o, "process_labels", c->pid, 0, "labels", "CPU", 0);
	meta(o, "process_sort_index", c->pid, 0, "sort_index", NULL, c->pid);
	snprintf(buf, sizeof(buf), "thread %lld (python3)", (long long)c->tid_main);
	meta(o, "thread_name", c->pid, c->tid_main, "name", buf, 0);
	meta(o, "thread_sort_index", c->pid, c->tid_main, "sort_index", NULL, c->tid_main);
	meta(o, "thread_name", c->pid, c->tid_bwd, "name", "pt_autograd_0", 0);
	meta(o, "thread_sort_index", c->pid, c->tid_bwd, "sort_index", NULL, c->tid_bwd);
	meta(o, "process_name", c->dev, 0, "name", "python3", 0);
	snprintf(buf, sizeof(buf), "GPU %lld", (long long)c->dev);
	meta(o, "process_labels", c->dev, 0, "labels", buf, 0);
	meta(o, "process_sort_index", c->dev, 0, "sort_index", NULL, 5000000 + c->dev);
	for (int s = 0; s < GS_N; s++) {
		snprintf(buf, sizeof(buf), "stream %d ", gen_stream_ids[s]);
		meta(o, "thread_name", c->dev, gen_stream_ids[s], "name", buf, 0);
		meta(o, "thread_sort_index", c->dev, gen_stream_ids[s], "sort_index", NULL,
		     gen_stream_ids[s]);
	}
	if (c->w->nasty & GN_STRING_IDS) {
		begin_event(o);
		LIT(o, "\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": \"Spans\", "
		       "\"tid\": 0, \"args\": {\"name\": \"Spans\"}}");
		begin_event(o);
		LIT(o,
		    "\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": \"Spans\", "
		    "\"tid\": \"PyTorch Profiler\", \"args\": {\"name\": \"PyTorch Profiler\"}}");
	}
}

static void write_slice(struct out *o, const struct ctx *c, const struct gen_slice *s, int i)
{
	static const char *const cats[] = { "python_function", "user_annotation", "cpu_op" };
	begin_x(o, cats[s->cat], c->pid, tid_of(c, s->thread), s->ts, s->te - s->ts);
	out_name(o, s->name, s->cat == GSC_PYTHON ? NM_PYTHON : NM_PLAIN);
	LIT(o, ", \"args\": {");
	if (s->cat == GSC_PYTHON) {
		KV_U64(o, "\"Python parent id\": ",
		       (c->w->nasty & GN_BIG_IDS) ? 18446744073709551000ULL + (uint64_t)(i % 500)
						  : (uint64_t)i + 100);
		KV_U64(o, ", \"Python id\": ", (uint64_t)i + 101);
		LIT(o, ", \"Python thread\": 0, ");
	}
	KV_U64(o, "\"Ev Idx\": ", (uint64_t)i);
	LIT(o, "}}");
}

/* The process group's name: "0" for the default (world) group. */
static int64_t pg_name(const struct gen_layout *lay, int dim, int g)
{
	return dim == GEN_WORLD ? 0 : 1 + (int64_t)dim * lay->world + g;
}

/* "r0, r1, ..." of group g along dim. */
static void write_ranks(struct out *o, const struct gen_layout *lay, int dim, int g)
{
	int n = gen_layout_group_size(lay, dim);
	int *rk = xcalloc((size_t)n, sizeof(*rk));
	gen_layout_group_ranks(lay, dim, g, rk);
	for (int i = 0; i < n; i++) {
		if (i)
			LIT(o, ", ");
		out_i64(o, rk[i]);
	}
	free(rk);
}

static void write_pg(struct out *o, const struct ctx *c, const struct gen_kernel *k)
{
	const struct gen_layout *lay = c->w->lay;
	KV_STR(o, ", \"Collective name\": ", k->coll_name);
	KV_I64(o, ", \"In msg nelems\": ", k->nelems);
	KV_I64(o, ", \"Out msg nelems\": ", k->nelems);
	KV_I64(o, ", \"Group size\": ", gen_layout_group_size(lay, k->pg_dim));
	KV_I64(o,
	       ", \"dtype\": \"BFloat16\", \"In split size\": \"[]\", \"Out split size\": \"[]\", "
	       "\"Process Group Name\": \"",
	       pg_name(lay, k->pg_dim, k->pg_idx));
	KV_STR(o, "\", \"Process Group Description\": ", gen_layout_pg_desc(k->pg_dim));
	LIT(o, ", \"Process Group Ranks\": \"[");
	write_ranks(o, lay, k->pg_dim, k->pg_idx);
	LIT(o, "]\"");
}

static void write_flow(struct out *o, const char *ph, const char *cat, uint64_t id, int64_t pid,
		       int64_t tid, int64_t ts)
{
	begin_event(o);
	KV_STR(o, "\"ph\": ", ph);
	KV_U64(o, ", \"id\": ", id);
	KV_I64(o, ", \"pid\": ", pid);
	KV_I64(o, ", \"tid\": ", tid);
	KV_TS(o, ", \"ts\": ", ts);
	KV_STR(o, ", \"cat\": ", cat);
	KV_STR(o, ", \"name\": ", cat);
	if (ph[0] == 'f')
		LIT(o, ", \"bp\": \"e\"}");
	else
		LIT(o, "}");
}

static const char *launch_name(int launch, int *cbid)
{
	switch (launch) {
	case GL_GRAPH: *cbid = 311; return "cudaGraphLaunch";
	case GL_MEMCPY: *cbid = 41; return "cudaMemcpyAsync";
	case GL_MEMSET: *cbid = 51; return "cudaMemsetAsync";
	default: *cbid = 211; return "cudaLaunchKernel";
	}
}

/* Everything belonging to kernel i: its cpu_op, launch, flows, the event. */
static void write_kernel(struct out *o, const struct ctx *c, const struct gen_kernel *k, int i)
{
	static const char *const cats[] = { "kernel", "gpu_memcpy", "gpu_memset" };
	int64_t tid = tid_of(c, k->thread);
	bool launched = k->launch != GL_NONE && k->launch != GL_GRAPH_FOLLOW;
	if (launched && k->op) {
		int64_t ts = k->lts - 1000;
		begin_x(o, "cpu_op", c->pid, tid, ts, k->lts + k->ldur + 500 - ts);
		out_name(o, k->op, NM_OP);
		KV_U64(o, ", \"args\": {\"External id\": ", k->corr);
		KV_U64(o, ", \"Record function id\": 0, \"Ev Idx\": ", (uint64_t)i);
		if (k->type == GY_COMM && k->pg_dim >= 0) {
			write_pg(o, c, k);
			KV_I64(o, ", \"Rank\": ", c->r->rank);
		}
		if ((c->w->nasty & GN_CONTROL) && i % 5 == 0)
			LIT(o, ", \"Concrete Inputs\": [\"\", \"line\nbreak\x02\"]");
		LIT(o, "}}");
		if (k->flags & (GF_FWDBWD_S | GF_FWDBWD_F))
			write_flow(o, k->flags & GF_FWDBWD_S ? "s" : "f", "fwdbwd", k->flow, c->pid,
				   tid, ts);
	}
	if (launched) {
		int cbid;
		const char *ln = launch_name(k->launch, &cbid);
		begin_x(o, "cuda_runtime", c->pid, tid, k->lts, k->ldur);
		out_qstr(o, ln);
		KV_U64(o, ", \"args\": {\"External id\": ", k->corr);
		KV_I64(o, ", \"cbid\": ", cbid);
		KV_U64(o, ", \"correlation\": ", k->corr);
		LIT(o, "}}");
		write_flow(o, "s", "ac2g", k->corr, c->pid, tid, k->lts);
	}
	int stream = gen_stream_ids[k->stream];
	begin_x(o, cats[k->kind], c->dev, stream, k->ts, k->dur);
	out_name(o, k->name, k->type == GY_COMP ? NM_KERNEL : NM_PLAIN);
	KV_U64(o, ", \"args\": {\"External id\": ", k->corr);
	KV_I64(o, ", \"device\": ", c->dev);
	KV_I64(o, ", \"context\": 1, \"stream\": ", stream);
	KV_U64(o, ", \"correlation\": ", k->corr);
	if (k->kind == GK_KERNEL) {
		LIT(o, ", \"registers per thread\": 128, \"shared memory\": 49152, "
		       "\"grid\": [132, 1, 1], \"block\": [256, 1, 1]");
		if ((c->w->nasty & GN_NAN) && i % 3 == 0)
			LIT(o, ", \"blocks per SM\": Infinity, \"warps per SM\": -Infinity, "
			       "\"est. achieved occupancy %\": NaN");
		else
			LIT(o, ", \"blocks per SM\": 1, \"warps per SM\": 8, "
			       "\"est. achieved occupancy %\": 12");
		if (k->type == GY_COMM && k->pg_dim >= 0)
			write_pg(o, c, k);
	} else {
		LIT(o, ", \"bytes\": 1048576, \"memory bandwidth (GB/s)\": 52.3");
	}
	if (c->w->nasty & GN_BIG_IDS)
		KV_U64(o, ", \"Ev Idx\": ", 9223372036854775808ULL + (uint64_t)i);
	LIT(o, "}}");
	if (launched && !(k->flags & GF_NO_AC2G_F))
		write_flow(o, "f", "ac2g", k->corr, c->dev, stream, k->ts);
}

static void write_header(struct out *o, const struct ctx *c)
{
	const struct gen_layout *lay = c->w->lay;
	if (c->w->nasty & GN_BOM)
		LIT(o, "\xEF\xBB\xBF");
	LIT(o, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n");
	int ndev = lay->world < c->w->gpus_per_host ? lay->world : c->w->gpus_per_host;
	for (int d = 0; d < ndev; d++) {
		KV_I64(o, "    {\"id\": ", d);
		LIT(o, ", \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 84929347584, "
		       "\"computeMajor\": 9, \"computeMinor\": 0, \"maxThreadsPerBlock\": 1024, "
		       "\"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": 65536, "
		       "\"warpSize\": 32, \"sharedMemPerBlock\": 49152, \"numSms\": 132}");
		out_str(o, d + 1 < ndev ? ",\n" : "\n");
	}
	KV_I64(o,
	       "  ],\n  \"cupti_version\": 24,\n  \"cuda_runtime_version\": 12040,\n"
	       "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ",
	       c->r->rank);
	KV_I64(o, ", \"world_size\": ", lay->world);
	/* The rank's groups: every parallel dimension, and the embedding group
	 * on the first and the last stage of a pipeline. */
	int P = lay->size[GEN_PP], stage = gen_layout_coord(lay, c->r->rank, GEN_PP);
	int ndims = P > 1 && (stage == 0 || stage == P - 1) ? GEN_EMB + 1 : GEN_NDIM;
	KV_I64(o, ", \"pg_count\": ", 1 + ndims);
	KV_I64(o,
	       ", \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
	       "\"backend_config\": \"cuda:nccl\", \"pg_size\": ",
	       lay->world);
	LIT(o, ", \"ranks\": []}");
	for (int d = 0; d < ndims; d++) {
		int g = gen_layout_group_of(lay, c->r->rank, d);
		KV_I64(o, ", {\"pg_name\": \"", pg_name(lay, d, g));
		KV_STR(o, "\", \"pg_desc\": ", gen_layout_pg_desc(d));
		KV_I64(o, ", \"backend_config\": \"cuda:nccl\", \"pg_size\": ",
		       gen_layout_group_size(lay, d));
		LIT(o, ", \"ranks\": [");
		write_ranks(o, lay, d, g);
		LIT(o, "]}");
	}
	LIT(o,
	    "], \"nccl_version\": \"2.21.5\"},\n  \"record_shapes\": 1,\n  \"with_stack\": 1,\n");
	if (c->w->relative) {
		KV_I64(o, "  \"baseTimeNanoseconds\": ", c->w->base_ns);
		LIT(o, ",\n");
	}
	LIT(o, "  \"traceEvents\": [\n");
}

static void write_trailer(struct out *o, const struct ctx *c)
{
	LIT(o, "\n  ],\n  \"traceName\": ");
	out_qpath(o, c->w->path);
	LIT(o, ",\n  \"displayTimeUnit\": \"ms\"\n}\n");
}

static void write_spans(struct out *o, const struct ctx *c)
{
	const struct gen_rank *r = c->r;
	if (!r->ns)
		return;
	begin_event(o);
	KV_TS(o,
	      "\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", "
	      "\"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\", \"ts\": ",
	      r->s[0].ts);
	KV_US(o, ", \"dur\": ", r->s[0].te - r->s[0].ts);
	LIT(o, ", \"args\": {\"Op count\": 0}}");
	begin_event(o);
	KV_TS(o,
	      "\"ph\": \"i\", \"cat\": \"Trace\", \"name\": \"Iteration Start: PyTorch Profiler\", "
	      "\"pid\": \"\", \"tid\": \"\", \"ts\": ",
	      r->s[0].ts);
	LIT(o, ", \"s\": \"g\"}");
}

int gen_write_trace(const struct gen_rank *r, const struct gen_write_opts *w, struct strbuf *err)
{
	struct out o = {
		.stop = w->stop, .nasty = w->nasty, .relative = w->relative, .base = w->base_ns
	};
	struct ctx c = { .r = r, .w = w };
	c.pid = 4000 + (int64_t)r->rank * 16;
	c.tid_main = c.pid;
	c.tid_bwd = c.pid + 5;
	c.dev = r->rank % w->gpus_per_host;
	struct safefile sf;
	int rc = 0;

	const char *base = strrchr(w->path, '/');
	if (safefile_open(&sf, w->dirfd, base ? base + 1 : w->path, NULL)) {
		return pp_err(err, PP_EIO, "cannot create '%s': %s", w->path, strerror(errno));
	}
	if (w->gzip) {
		/* gzclose() closes its own duplicate; safefile_commit() the original. */
		int fd = fcntl(fileno(sf.fp), F_DUPFD_CLOEXEC, 0);
		o.gz = fd >= 0 ? gzdopen(fd, "wb1") : NULL;
		if (!o.gz) {
			pp_err(err, PP_EIO, "cannot create '%s': %s", w->path, strerror(errno));
			if (fd >= 0)
				close(fd);
			safefile_abort(&sf);
			return PP_EIO;
		}
	} else {
		o.f = sf.fp;
	}
	o.buf = xmalloc(OUT_CAP);
	write_header(&o, &c);
	bool unsorted = w->nasty & GN_UNSORTED;
	if (!unsorted)
		write_metadata(&o, &c);
	/* A stop (o.err, set at a buffer flush: SIGINT, a failed write) ends
	 * the formatting too, not only the writing. */
	for (int i = 0; i < r->ns && !o.err; i++)
		write_slice(&o, &c, &r->s[i], i);
	if (w->nasty & GN_STRING_IDS)
		write_spans(&o, &c);
	int cut = (w->nasty & GN_TRUNCATE) ? r->nk * 3 / 5 : -1;
	for (int n = 0; n < r->nk && !o.err; n++) {
		int i = unsorted ? r->nk - 1 - n : n;
		write_kernel(&o, &c, &r->k[i], i);
		if (n == cut) {
			/* Cut the last event in the middle, as a killed export does. */
			o.len = o.mark + (o.len - o.mark) / 2;
			goto close;
		}
	}
	if (unsorted)
		write_metadata(&o, &c);
	write_trailer(&o, &c);
close:
	out_flush(&o);
	if (o.gz && gzclose(o.gz) != Z_OK && !o.err)
		o.err = PP_EIO;
	if (o.err == PP_EINTR) {
		safefile_abort(&sf);
		rc = PP_EINTR;
	} else if (o.err) {
		rc = pp_err(err, PP_EIO, "cannot write '%s': %s", w->path, strerror(errno));
		safefile_abort(&sf);
	} else if (safefile_commit(&sf, NULL)) {
		rc = pp_err(err, PP_EIO, "cannot write '%s': %s", w->path, strerror(errno));
	}
	free(o.buf);
	return rc;
}
