/* gen_truth.c — expected metrics from the model (see gen_truth.h).
 *
 * Each kernel's category, step and recompute flag were fixed when the
 * program was built (gen_sim.c); here they are only summed up by the
 * definitions of docs/semantics.md §6 and docs/contracts.md §2 with interval.h.
 * The CSV files are written through safefile.h: they appear under their
 * names only when complete, never through a symlink planted in .truth.
 */
#include "gen_truth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/category.h"
#include "util/cmp.h"
#include "util/interval.h"
#include "util/pp.h"
#include "util/safefile.h"
#include "util/strbuf.h"

enum {
	TF_RANKS,
	TF_CATS,
	TF_STEPS,
	TF_PP,
	TF_STRAG,
	TF_OPS,
	TF_OPTRACE,
	TF_P2P,
	TF_P2PK,
	TF_COLL,
	TF_N
};

static const char *const files[TF_N] = {
	"ranks.csv", "category_stats.csv", "steps.csv", "pp_groups.csv",   "stragglers.csv",
	"ops.csv",   "optrace.csv",        "p2p.csv",   "p2p_kernels.csv", "collectives.csv"
};
static const char *const headers[TF_N] = {
	"iteration,rank,mode,window_start_ns,window_end_ns,gpu_busy_ns,idle_ns,bubble_ns,"
	"comp_busy_ns,comm_busy_ns,overlap_ns,coverage",
	"iteration,rank,category,kernels,sum_ns,busy_ns",
	"iteration,rank,phase,seq,cpu_start_ns,cpu_end_ns,start_ns,end_ns,wall_ns,comp_ns,"
	"comm_ns,overlap_ns,kernels",
	"iteration,pp_group,stage,rank,group_window_start_ns,group_window_end_ns,group_idle_ns,"
	"group_bubble_ns",
	"iteration,rank",
	"iteration,rank,dp_rank,stage,optype,seq_id,mc,gmc,mb_id,start_ns,end_ns",
	"dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc",
	"iteration,rank,kernel,peer_rank,direction,role,microbatch,chunk,start_ns,dur_ns,wait_ns,"
	"transfer_ns",
	"iteration,rank,kernel,start_ns,dur_ns,wait_ns,transfer_ns,waited_for",
	"iteration,pg_desc,pg_ranks,seq,size,first_ns,last_ns,skew_ns,first_rank,last_rank,"
	"last_ranks,transfer_ns"
};

/* An op of a representative rank, kept for optrace.csv. */
struct rep_op {
	struct gen_op op; /* true time */
	int32_t rank;
	int16_t dp, stage;
};

struct gen_truth {
	FILE *f[TF_N]; /* sf[i].fp while open */
	struct safefile sf[TF_N];
	char *dir;
	int dirfd;
	struct rep_op *rep; /* this step's optrace rows */
	size_t nrep, caprep;
};

void gen_truth_abort(struct gen_truth *t)
{
	if (!t)
		return;
	for (int i = 0; i < TF_N; i++)
		if (t->f[i])
			safefile_abort(&t->sf[i]);
	free(t->dir);
	free(t->rep);
	free(t);
}

/* Writes one small file of .truth at once. */
static int write_small(struct gen_truth *t, const char *name, const char *text, struct strbuf *err)
{
	struct safefile sf;
	size_t mark = err->len;
	if (safefile_open(&sf, t->dirfd, name, err))
		goto fail;
	fputs(text, sf.fp);
	if (safefile_commit(&sf, err))
		goto fail;
	return 0;
fail:
	return pp_err_prefix(err, mark, PP_EIO, "%s: ", t->dir);
}

/* The op trace's job metadata (docs/whatif.md §1.3). Every rank of a
 * (dp, stage) cell counts as tensor-parallel (tp_size = tp·cp·ep), and
 * dsp_size is 1: ppgen reduces gradients over the DP group only. */
static int write_meta(struct gen_truth *t, const struct gen_layout *lay, int vpp,
		      struct strbuf *err)
{
	char text[512];
	int tp = lay->size[GEN_TP] * lay->size[GEN_CP] * lay->size[GEN_EP];
	snprintf(text, sizeof(text),
		 "trial_name: ppgen\nrun_id: 0\ndp_size: %d\ndsp_size: 1\npp_size: %d\n"
		 "tp_size: %d\nvpp_size: %d\nworld_size: %d\n",
		 lay->size[GEN_DP], lay->size[GEN_PP], tp, vpp, lay->world);
	return write_small(t, "optrace-meta.yaml", text, err);
}

struct gen_truth *gen_truth_open(int dirfd, const char *dir, const struct gen_layout *lay, int vpp,
				 struct strbuf *err)
{
	struct gen_truth *t = xcalloc(1, sizeof(*t));
	size_t mark = err->len;
	t->dir = xstrdup(dir);
	t->dirfd = dirfd;
	for (int i = 0; i < TF_N; i++) {
		if (safefile_open(&t->sf[i], dirfd, files[i], err)) {
			pp_err_prefix(err, mark, PP_EIO, "%s: ", dir);
			gen_truth_abort(t);
			return NULL;
		}
		t->f[i] = t->sf[i].fp;
		fprintf(t->f[i], "%s\n", headers[i]);
	}
	if (write_meta(t, lay, vpp, err)) {
		gen_truth_abort(t);
		return NULL;
	}
	return t;
}

/* Union of the kernels of r accepted by keep(). v is scratch (nk entries). */
static int64_t union_of(const struct gen_rank *r, struct ivl *v,
			bool (*keep)(const struct gen_kernel *, int), int arg)
{
	size_t n = 0;
	for (int i = 0; i < r->nk; i++)
		if (keep(&r->k[i], arg))
			v[n++] = (struct ivl){ r->k[i].ts, r->k[i].ts + r->k[i].dur };
	return ivl_union(v, n);
}

static bool k_all(const struct gen_kernel *k, int a)
{
	(void)k;
	(void)a;
	return true;
}
static bool k_nonpp(const struct gen_kernel *k, int a)
{
	(void)a;
	return k->cat != GC_PP;
}
static bool k_named(const struct gen_kernel *k, int a)
{
	(void)a;
	return k->cat != GC_OTHER;
}
static bool k_cat(const struct gen_kernel *k, int c)
{
	return k->cat == c;
}
static bool k_cat_rc(const struct gen_kernel *k, int c)
{
	return k->cat == c && (k->flags & GF_RECOMPUTE);
}

/* Overlap of the comp-type and comm-type kernels in k[0..n). */
static int64_t comp_comm(const struct gen_kernel *const *k, size_t n, struct ivl *a, struct ivl *b,
			 int64_t *comp, int64_t *comm)
{
	size_t na = 0, nb = 0;
	for (size_t i = 0; i < n; i++) {
		struct ivl x = { k[i]->ts, k[i]->ts + k[i]->dur };
		if (k[i]->type == GY_COMP)
			a[na++] = x;
		else if (k[i]->type == GY_COMM)
			b[nb++] = x;
	}
	na = ivl_merge(a, na);
	nb = ivl_merge(b, nb);
	*comp = ivl_total(a, na);
	*comm = ivl_total(b, nb);
	return ivl_overlap(a, na, b, nb);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void category_rows(struct gen_truth *t, int it, const struct gen_rank *r, struct ivl *v)
{
	const char *names[GC_N + 2];
	int n = 0;
	for (int c = 0; c < GC_N; c++)
		names[n++] = pp_category_names[c];
	names[n++] = pp_category_names[PP_NCATEGORY_NAMES - 2];
	names[n++] = pp_category_names[PP_NCATEGORY_NAMES - 1];
	qsort(names, (size_t)n, sizeof(*names), cmp_str);
	for (int i = 0; i < n; i++) {
		int cat = -1;
		bool rc = false;
		for (int c = 0; c < GC_N; c++)
			if (!strcmp(names[i], pp_category_names[c]))
				cat = c;
		if (cat < 0) {
			rc = true;
			cat = strstr(names[i], "computation") ? GC_BWD_COMP : GC_BWD_COMM;
		}
		int64_t count = 0, sum = 0;
		for (int k = 0; k < r->nk; k++)
			if (r->k[k].cat == cat && (!rc || (r->k[k].flags & GF_RECOMPUTE))) {
				count++;
				sum += r->k[k].dur;
			}
		if (!count)
			continue;
		int64_t busy = union_of(r, v, rc ? k_cat_rc : k_cat, cat);
		fprintf(t->f[TF_CATS], "%d,%d,%s,%lld,%lld,%lld\n", it, r->rank, names[i],
			(long long)count, (long long)sum, (long long)busy);
	}
}

static void step_rows(struct gen_truth *t, int it, const struct gen_rank *r)
{
	/* Phases in the order SQL sorts their names. */
	int order[GP_N];
	const char *names[GP_N];
	for (int p = 0; p < GP_N; p++)
		names[p] = pp_phase_names[p];
	qsort(names, GP_N, sizeof(*names), cmp_str);
	for (int i = 0; i < GP_N; i++)
		for (int p = 0; p < GP_N; p++)
			if (!strcmp(names[i], pp_phase_names[p]))
				order[i] = p;

	const struct gen_kernel **ks = xcalloc((size_t)r->nk + 1, sizeof(*ks));
	struct ivl *a = xcalloc((size_t)r->nk + 1, sizeof(*a));
	struct ivl *b = xcalloc((size_t)r->nk + 1, sizeof(*b));
	for (int oi = 0; oi < GP_N; oi++) {
		int p = order[oi];
		int nsteps = 0;
		for (int s = 0; s < r->ns; s++)
			if (r->s[s].step_mask & (1u << p))
				nsteps++;
		if (!nsteps)
			continue;
		/* Bucket the step's kernels: counting sort by seq. */
		int *start = xcalloc((size_t)nsteps + 1, sizeof(*start));
		for (int k = 0; k < r->nk; k++)
			if (r->k[k].phase == p && r->k[k].cat != GC_MEM)
				start[r->k[k].seq + 1]++;
		for (int s = 0; s < nsteps; s++)
			start[s + 1] += start[s];
		int *fill = xcalloc((size_t)nsteps, sizeof(*fill));
		for (int k = 0; k < r->nk; k++)
			if (r->k[k].phase == p && r->k[k].cat != GC_MEM) {
				int s = r->k[k].seq;
				ks[start[s] + fill[s]++] = &r->k[k];
			}
		for (int s = 0; s < r->ns; s++) {
			const struct gen_slice *sl = &r->s[s];
			if (!(sl->step_mask & (1u << p)))
				continue;
			int q = sl->seq[p];
			const struct gen_kernel **sk = ks + start[q];
			size_t n = (size_t)(start[q + 1] - start[q]);
			fprintf(t->f[TF_STEPS], "%d,%d,%s,%d,%lld,%lld,", it, r->rank,
				pp_phase_names[p], q, (long long)sl->ts, (long long)sl->te);
			if (!n) {
				fprintf(t->f[TF_STEPS], ",,0,0,0,0,0\n");
				continue;
			}
			int64_t st = INT64_MAX, en = INT64_MIN, comp, comm, ov;
			for (size_t i = 0; i < n; i++) {
				if (sk[i]->ts < st)
					st = sk[i]->ts;
				if (sk[i]->ts + sk[i]->dur > en)
					en = sk[i]->ts + sk[i]->dur;
			}
			ov = comp_comm(sk, n, a, b, &comp, &comm);
			fprintf(t->f[TF_STEPS], "%lld,%lld,%lld,%lld,%lld,%lld,%zu\n",
				(long long)st, (long long)en, (long long)(en - st), (long long)comp,
				(long long)comm, (long long)ov, n);
		}
		free(start);
		free(fill);
	}
	free(ks);
	free(a);
	free(b);
}

void gen_truth_rank(struct gen_truth *t, int it, const struct gen_rank *r, struct gen_rank_sum *sum)
{
	struct ivl *v = xcalloc((size_t)r->nk + 1, sizeof(*v));
	struct ivl *w = xcalloc((size_t)r->nk + 1, sizeof(*w));
	int64_t ws = INT64_MAX, we = INT64_MIN;
	for (int i = 0; i < r->nk; i++) {
		if (r->k[i].ts < ws)
			ws = r->k[i].ts;
		if (r->k[i].ts + r->k[i].dur > we)
			we = r->k[i].ts + r->k[i].dur;
	}
	int64_t busy = union_of(r, v, k_all, 0);
	int64_t nonpp = union_of(r, v, k_nonpp, 0);
	int64_t named = union_of(r, v, k_named, 0);
	size_t na = 0, nb = 0;
	for (int i = 0; i < r->nk; i++) {
		struct ivl x = { r->k[i].ts, r->k[i].ts + r->k[i].dur };
		if (r->k[i].type == GY_COMP)
			v[na++] = x;
		else if (r->k[i].type == GY_COMM)
			w[nb++] = x;
	}
	na = ivl_merge(v, na);
	nb = ivl_merge(w, nb);
	int64_t comp = ivl_total(v, na), comm = ivl_total(w, nb);
	int64_t ov = ivl_overlap(v, na, w, nb);
	*sum = (struct gen_rank_sum){ true, ws, we, busy, nonpp };
	if (r->nk)
		fprintf(t->f[TF_RANKS],
			"%d,%d,megatron,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%.6f\n", it,
			r->rank, (long long)ws, (long long)we, (long long)busy,
			(long long)(we - ws - busy), (long long)(we - ws - nonpp), (long long)comp,
			(long long)comm, (long long)ov, busy ? (double)named / (double)busy : 0.0);
	else
		fprintf(t->f[TF_RANKS], "%d,%d,megatron,,,0,0,0,0,0,0,0.000000\n", it, r->rank);
	category_rows(t, it, r, v);
	step_rows(t, it, r);
	free(v);
	free(w);
}

void gen_truth_pp_groups(struct gen_truth *t, int it, const struct gen_layout *lay,
			 const struct gen_rank_sum *sums)
{
	int P = lay->size[GEN_PP];
	int *rk = xcalloc((size_t)P, sizeof(*rk));
	for (int g = 0; g < gen_layout_ngroups(lay, GEN_PP); g++) {
		gen_layout_group_ranks(lay, GEN_PP, g, rk);
		int64_t gs = INT64_MAX, ge = INT64_MIN;
		bool complete = true;
		for (int s = 0; s < P; s++) {
			const struct gen_rank_sum *x = &sums[rk[s]];
			if (!x->present) {
				complete = false;
				break;
			}
			if (x->win_s < gs)
				gs = x->win_s;
			if (x->win_e > ge)
				ge = x->win_e;
		}
		if (!complete)
			continue;
		for (int s = 0; s < P; s++) {
			const struct gen_rank_sum *x = &sums[rk[s]];
			fprintf(t->f[TF_PP], "%d,%d,%d,%d,%lld,%lld,%lld,%lld\n", it, g, s, rk[s],
				(long long)gs, (long long)ge, (long long)(ge - gs - x->busy),
				(long long)(ge - gs - x->busy_nonpp));
		}
	}
	free(rk);
}

void gen_truth_straggler(struct gen_truth *t, int it, int rank)
{
	fprintf(t->f[TF_STRAG], "%d,%d\n", it, rank);
}

void gen_truth_ops(struct gen_truth *t, int it, const struct gen_rank *r, int dp,
		   const struct gen_op *ops, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct gen_op *o = &ops[i];
		fprintf(t->f[TF_OPS], "%d,%d,%d,%d,%s,%d,%d,%d,%d,%lld,%lld\n", it, r->rank, dp,
			r->stage, gen_optype_names[o->type], (int)o->seq, (int)o->mc, (int)o->gmc,
			(int)o->mb, (long long)o->start, (long long)o->end);
	}
}

void gen_truth_optrace_add(struct gen_truth *t, const struct gen_rank *r, int dp, int64_t offset_ns,
			   const struct gen_op *ops, size_t n)
{
	PP_RESERVE(t->rep, t->nrep, n, t->caprep, 1024);
	for (size_t i = 0; i < n; i++) {
		struct rep_op *x = &t->rep[t->nrep++];
		x->op = ops[i];
		x->op.start -= offset_ns;
		x->op.end -= offset_ns;
		x->rank = r->rank;
		x->dp = (int16_t)dp;
		x->stage = (int16_t)r->stage;
	}
}

/* Nanoseconds >= 0 as seconds, exact: "0.012345678". */
static void put_secs(FILE *f, int64_t ns)
{
	fprintf(f, "%lld.%09lld", (long long)(ns / 1000000000), (long long)(ns % 1000000000));
}

void gen_truth_optrace_step(struct gen_truth *t, int it)
{
	int64_t origin = INT64_MAX;
	for (size_t i = 0; i < t->nrep; i++)
		if (t->rep[i].op.start < origin)
			origin = t->rep[i].op.start;
	/* Ranks were added in ascending order, each one's rows by type and seq. */
	for (size_t i = 0; i < t->nrep; i++) {
		const struct rep_op *x = &t->rep[i];
		FILE *f = t->f[TF_OPTRACE];
		fprintf(f, "%d,%d,%d,%d,%s,", x->dp, x->stage, (int)x->rank, it,
			gen_optype_names[x->op.type]);
		put_secs(f, x->op.start - origin);
		fputc(',', f);
		put_secs(f, x->op.end - x->op.start);
		fprintf(f, ",%d,%d,%d,%d\n", (int)x->op.seq, (int)x->op.mc, (int)x->op.mb,
			(int)x->op.gmc);
	}
	t->nrep = 0;
}

static int cmp_p2p(const void *a, const void *b)
{
	const struct gen_p2p *x = a, *y = b;
	const int64_t kx[] = { x->kernel, x->dir, x->role }, ky[] = { y->kernel, y->dir, y->role };
	return cmp_i64s(kx, ky, 3);
}

void gen_truth_p2p(struct gen_truth *t, int it, int rank, struct gen_p2p_rows *rows)
{
	static const char *const dir[2] = { "forward", "backward" }, *const role[2] = { "send",
											"recv" };
	if (rows->nrow)
		qsort(rows->row, rows->nrow, sizeof(*rows->row), cmp_p2p);
	for (size_t i = 0; i < rows->nrow; i++) {
		const struct gen_p2p *p = &rows->row[i];
		fprintf(t->f[TF_P2P], "%d,%d,%d,%d,%s,%s,%d,%d,%lld,%lld,%lld,%lld\n", it, rank,
			p->kernel, p->peer_rank, dir[p->dir], role[p->role], p->mb, p->chunk,
			(long long)p->start, (long long)p->dur, (long long)p->wait,
			(long long)p->transfer);
	}
	for (size_t i = 0; i < rows->nk; i++) {
		const struct gen_p2p_kernel *k = &rows->k[i];
		fprintf(t->f[TF_P2PK], "%d,%d,%d,%lld,%lld,%lld,%lld,", it, rank, k->kernel,
			(long long)k->start, (long long)k->dur, (long long)k->wait,
			(long long)k->transfer);
		if (k->waited_for >= 0)
			fprintf(t->f[TF_P2PK], "%d", k->waited_for);
		fputc('\n', t->f[TF_P2PK]);
	}
}

void gen_truth_collective(struct gen_truth *t, int it, const struct gen_layout *lay,
			  const struct gen_coll *x, const int *tied, int ntied)
{
	FILE *f = t->f[TF_COLL];
	int *rk = xmalloc((size_t)x->size * sizeof(*rk));
	gen_layout_group_ranks(lay, x->dim, x->group, rk);
	fprintf(f, "%d,%s,", it, gen_layout_pg_desc(x->dim));
	for (int i = 0; i < x->size; i++)
		fprintf(f, "%s%d", i ? " " : "", rk[i]);
	fprintf(f, ",%d,%d,%lld,%lld,%lld,%d,%d,", x->seq, x->size, (long long)x->first,
		(long long)x->last, (long long)(x->last - x->first), x->first_rank, x->last_rank);
	for (int i = 0; i < ntied; i++)
		fprintf(f, "%s%d", i ? " " : "", tied[i]);
	fprintf(f, ",%lld\n", (long long)x->transfer);
	free(rk);
}

int gen_truth_clock_offsets(struct gen_truth *t, const int64_t *offset_ns, int world,
			    struct strbuf *err)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "rank,offset_ns\n");
	for (int r = 0; r < world; r++)
		strbuf_addf(&sb, "%d,%lld\n", r, (long long)offset_ns[r]);
	int rc = write_small(t, "clock_offsets.csv", sb.buf, err);
	strbuf_release(&sb);
	return rc;
}

int gen_truth_close(struct gen_truth *t, struct strbuf *err)
{
	int rc = 0;
	if (!t)
		return 0;
	for (int i = 0; i < TF_N; i++) {
		size_t mark = err ? err->len : 0;
		/* Only the first failure is told. */
		if (safefile_commit(&t->sf[i], rc ? NULL : err) && !rc) {
			rc = PP_EIO;
			if (err)
				pp_err_prefix(err, mark, PP_EIO, "%s: ", t->dir);
		}
	}
	free(t->dir);
	free(t->rep);
	free(t);
	return rc;
}
