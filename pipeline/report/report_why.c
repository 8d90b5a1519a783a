/* report_why.c — why the pipeline waits, in the report (docs/ppagg.md "Why
 * the pipeline waits"; docs/why.md), a struct report_section:
 *
 * - the section of index.html after the what-if's: the critical path (one
 *   sentence per step, the ranks on it), wait vs transfer per stage pair
 *   (a table and the chart why/hops), the bubble of each stage split into
 *   waiting for the previous / next stage, transfers and no work, the ranks
 *   that arrive last at their collectives far more often than chance per
 *   group kind beside the straggler flag and the what-if's workers, and
 *   what was incomplete;
 * - with --perfetto-ranks, one Chrome trace-event file of the chosen ranks
 *   (why/ranks.json): clock-corrected (why_clock_offset()), one process per
 *   rank, its kernels on their streams with pptrace's category as `cat`,
 *   its pipeline sends and receives as wait and transfer slices on a track
 *   of their own, and the critical path as a process of its own. Above
 *   agg.perfetto_max_events it holds the first iterations that fit, and
 *   says so.
 */
#include "report_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/optype.h"
#include "model/rank_result.h"
#include "util/cli.h"
#include "util/pp.h"

/* The chart is one, small and at the top of the report: rendered always. */
#define SHOW AGG_SHOW_ALL

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* ---- the ranks of --perfetto-ranks ------------------------------------ */

int report_perfetto_ranks(const char *spec, const struct topology *t, int nrank, bool *sel,
			  struct strbuf *err)
{
	static const struct {
		const char *key;
		enum topo_kind kind;
		const char *what;
	} groups[] = { { "pp_group=", TOPO_PP, "PP group" },
		       { "replica=", TOPO_MODEL, "model replica" } };
	if (!spec || !*spec) {
		strbuf_addstr(err, "an empty rank list");
		return PP_EINVAL;
	}
	for (const char *p = spec; *p;) {
		size_t len = strcspn(p, ",");
		size_t g = 0, ng = sizeof(groups) / sizeof(groups[0]);
		while (g < ng && strncmp(p, groups[g].key, strlen(groups[g].key)))
			g++;
		size_t key = g < ng ? strlen(groups[g].key) : 0;
		long lo, hi;
		if (cli_parse_range(p + key, len - key, 0, 9999999, &lo, &hi)) {
			strbuf_addf(
				err,
				"'%.*s': expected a rank, a range such as 8-15, pp_group=<g> or "
				"replica=<m>",
				(int)len, p);
			return PP_EINVAL;
		}
		for (long v = lo; t && v <= hi; v++) {
			if (g == ng && v >= nrank) {
				strbuf_addf(err, "no rank %ld in these iterations (ranks 0-%d)", v,
					    nrank - 1);
				return PP_EINVAL;
			}
			if (g == ng) {
				sel[v] = true;
				continue;
			}
			const struct topo_groups *gs = &t->groups[groups[g].kind];
			if ((size_t)v >= gs->n) {
				if (gs->n)
					strbuf_addf(err, "no %s %ld: the topology has %ss 0-%zu",
						    groups[g].what, v, groups[g].what, gs->n - 1);
				else
					strbuf_addf(err, "no %s %ld: there is no topology",
						    groups[g].what, v);
				return PP_EINVAL;
			}
			for (int i = 0; i < gs->v[v].n; i++)
				if (gs->v[v].ranks[i] >= 0 && gs->v[v].ranks[i] < nrank)
					sel[gs->v[v].ranks[i]] = true;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

/* ---- the merged timeline ---------------------------------------------- */

/* One kernel read back, its name in the rank's name pool. */
struct kern {
	long long s, e;
	int64_t stream;
	size_t name; /* offset in the pool */
	int category, coll;
};

struct ranks_file {
	const struct report *R;
	const struct agg_why *w;
	struct report_trace T;
	struct kern *k;
	size_t nk, capk;
	struct strbuf pool;
	long long off; /* the rank's clock offset */
};

static int take_kern(void *ctx, const struct agg_why_kernel *x)
{
	struct ranks_file *F = ctx;
	PP_GROW(F->k, F->nk, F->capk, 4096);
	F->k[F->nk++] = (struct kern){ x->start_ns - F->off,
				       x->start_ns + x->dur_ns - F->off,
				       x->stream,
				       F->pool.len,
				       x->category,
				       x->coll ? 1 : 0 };
	strbuf_add(&F->pool, x->name, strlen(x->name) + 1);
	if (x->coll)
		strbuf_add(&F->pool, x->coll, strlen(x->coll) + 1);
	return 0;
}

static int cmp_kern(const void *a, const void *b)
{
	const struct kern *x = a, *y = b;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s ? 1 : x->e > y->e ? -1 : x->e < y->e;
}

/* Track ids: a stream's lanes, the pipeline track's lanes. */
#define P2P_TID 1000000000
static int stream_tid(int64_t stream, int lane)
{
	long long s = stream < 0 ? 0 : stream + 1;
	if (s > P2P_TID / REPORT_LANES - 2)
		s = P2P_TID / REPORT_LANES - 2;
	return (int)(s * REPORT_LANES + lane);
}

/* The kernels of rank in iteration it, by stream, each stream's lanes. */
static int rank_kernels(struct ranks_file *F, const struct agg_iter *it, int rank, int pid,
			struct report_lanes **lanes, int64_t **streams, size_t *nstreams)
{
	F->nk = 0;
	strbuf_reset(&F->pool);
	int rc = agg_why_kernels(F->R->job->db, it, rank, take_kern, F, F->R->err);
	if (rc)
		return rc;
	qsort(F->k, F->nk, sizeof(*F->k), cmp_kern);
	char args[160];
	size_t si = 0;
	for (size_t i = 0; i < F->nk; i++) {
		const struct kern *k = &F->k[i];
		while (si < *nstreams && (*streams)[si] != k->stream)
			si++;
		if (si == *nstreams) {
			for (si = 0; si < *nstreams && (*streams)[si] != k->stream;)
				si++;
			if (si == *nstreams) {
				*streams = xrealloc(*streams, (*nstreams + 1) * sizeof(**streams));
				*lanes = xrealloc(*lanes, (*nstreams + 1) * sizeof(**lanes));
				(*streams)[si] = k->stream;
				(*lanes)[si].n = 0;
				(*nstreams)++;
			}
		}
		int lane = report_lane(&(*lanes)[si], k->s, k->e);
		const char *name = F->pool.buf + k->name;
		if (k->coll)
			snprintf(args, sizeof(args), "\"collective\":\"%s\"",
				 name + strlen(name) + 1);
		report_trace_slice(&F->T, pid, stream_tid(k->stream, lane), k->s, k->e, name,
				   rr_category_name((enum rr_category)k->category),
				   k->coll ? args : NULL);
	}
	return 0;
}

/* The first p2p kernel of (iteration, rank) in r->kernels (by iteration,
 * rank, seq), or r->nkernels. */
static size_t first_p2p(const struct why_result *r, int64_t iteration, int rank)
{
	size_t lo = 0, hi = r->nkernels;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct why_p2p_kernel *k = &r->kernels[mid];
		if (k->iteration < iteration || (k->iteration == iteration && k->rank < rank))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The rank's pipeline sends and receives of iteration it: per kernel its
 * wait (until its last peer started) and its transfer, or one slice saying
 * why it has no numbers. */
static void rank_p2p(struct ranks_file *F, int64_t iteration, int rank, int pid,
		     struct report_lanes *lanes)
{
	const struct why_result *r = &F->w->r;
	char name[96], args[160];
	for (size_t i = first_p2p(r, iteration, rank);
	     i < r->nkernels && r->kernels[i].iteration == iteration && r->kernels[i].rank == rank;
	     i++) {
		const struct why_p2p_kernel *k = &r->kernels[i];
		long long s = k->start_ns, e = k->start_ns + k->dur_ns;
		int lane = report_lane(lanes, s, e);
		snprintf(args, sizeof(args), "\"kernel\":%d,\"transfers\":%d", (int)k->seq,
			 (int)k->transfers);
		if (k->status != WHY_OK) {
			snprintf(name, sizeof(name), "p2p kernel: %s",
				 why_status_name((enum why_status)k->status));
			report_trace_slice(&F->T, pid, P2P_TID + lane, s, e, name, "p2p_incomplete",
					   args);
			continue;
		}
		if (k->wait_ns > 0) {
			snprintf(name, sizeof(name), "wait for the %s stage (rank %d)",
				 why_side_name((enum why_side)k->side), (int)k->waited_for);
			report_trace_slice(&F->T, pid, P2P_TID + lane, s, s + k->wait_ns, name,
					   "p2p_wait", args);
		}
		if (k->transfer_ns > 0)
			report_trace_slice(&F->T, pid, P2P_TID + lane, s + k->wait_ns, e,
					   "transfer", "p2p_transfer", args);
	}
}

/* The what-if's clock offset of the worker (dp_rank, stage): the critical
 * path's times are the what-if's corrected ones. */
static int64_t whatif_offset(const struct agg_whatif *wi, int dp, int stage)
{
	const struct whatif_clock *c = &wi->clock;
	if (!wi->clock_corrected || dp < 0 || stage < 0 || dp >= c->dp || stage >= c->pp)
		return 0;
	return c->offset_ns[stage * c->dp + dp];
}

/* A critical-path segment on the why analysis' clock. */
static void seg_times(const struct report *R, const struct why_seg *s, long long *b, long long *e)
{
	const struct agg_job *job = R->job;
	int64_t shift = whatif_offset(&job->whatif, s->dp_rank, s->stage);
	if (job->why.state == AGG_WHY_DONE)
		shift -= why_clock_offset(&job->why.r, s->rank);
	*b = s->start_ns + shift;
	*e = s->start_ns + s->dur_ns + shift;
}

static void path_segments(struct ranks_file *F, const bool *chosen_it, int pid)
{
	const struct agg_job *job = F->R->job;
	const struct why_cpath *c = &F->w->path;
	struct report_lanes lanes = { .n = 0 };
	char args[160];
	for (size_t i = 0; i < c->nseg; i++) {
		const struct why_seg *s = &c->seg[i];
		size_t k = 0;
		while (k < job->niters && job->its[k].iteration != s->iteration)
			k++;
		if (k == job->niters || !chosen_it[k])
			continue;
		long long b, e;
		seg_times(F->R, s, &b, &e);
		int lane = report_lane(&lanes, b, e);
		snprintf(args, sizeof(args),
			 "\"iteration\":%lld,\"rank\":%d,\"stage\":%d,\"dp_rank\":%d,\"op_seq\":%d",
			 (long long)s->iteration, (int)s->rank, (int)s->stage, (int)s->dp_rank,
			 (int)s->op_seq);
		const char *name = s->kind == WHY_SEG_OP      ? op_type_name(s->optype)
				   : s->kind == WHY_SEG_DELAY ? "delay (launch, CPU)"
							      : "start";
		report_trace_slice(&F->T, pid, lane + 1, b, e, name, "critical_path", args);
	}
	report_trace_name(&F->T, pid, -1, "critical path (the what-if model's workers)");
	report_trace_order(&F->T, pid, -1, 0);
	for (int l = 0; l < (lanes.n ? lanes.n : 1); l++)
		report_trace_name(&F->T, pid, l + 1,
				  l ? "critical path (overlapping)" : "critical path");
}

/* The kernels of rank r's trace: most of its events in the file. */
static size_t events_of(const struct agg_rank *r)
{
	size_t n = 0;
	for (size_t c = 0; c < r->ncats; c++)
		n += (size_t)r->cats[c].kernels;
	return n;
}

/* The iterations to write: all while their events fit max_events, else
 * the first ones that fit (at least one); what was left out into note. */
static size_t choose_iterations(const struct report *R, const bool *sel, int nrank, bool *chosen,
				struct strbuf *note)
{
	const struct agg_job *job = R->job;
	size_t total = 0, kept = 0, nkept = 0;
	for (size_t i = 0; i < job->niters; i++) {
		size_t n = 0;
		const struct agg_iter *it = &job->its[i];
		for (size_t k = 0; k < it->nranks; k++)
			if (it->ranks[k].in.rank < nrank && sel[it->ranks[k].in.rank])
				n += events_of(&it->ranks[k]);
		total += n;
		chosen[i] = !nkept || kept + n <= R->o->perfetto_max_events;
		if (chosen[i]) {
			kept += n;
			nkept++;
		}
	}
	if (nkept < job->niters) {
		strbuf_addf(note,
			    "%zu kernels of the chosen ranks in %zu iterations are more than the "
			    "%zu events Perfetto's UI opens well (agg.perfetto_max_events): only "
			    "iteration",
			    total, job->niters, R->o->perfetto_max_events);
		for (size_t i = 0, k = 0; i < job->niters; i++)
			if (chosen[i])
				strbuf_addf(note, "%s%s %d",
					    k++         ? ","
					    : nkept > 1 ? "s"
							: "",
					    "", job->its[i].iteration);
		strbuf_addstr(note, " written; --iterations chooses others");
	}
	if (kept > R->o->perfetto_max_events)
		strbuf_addf(note,
			    "%siteration %d alone has %zu kernels of these ranks, above the %zu "
			    "events Perfetto's UI opens well: fewer ranks open faster",
			    note->len ? "; " : "", job->its[0].iteration, kept,
			    R->o->perfetto_max_events);
	return nkept;
}

/* The rank's process name: "rank 9 (PP group 1, stage 0, replica 2)". */
static void rank_name(const struct topology *t, int rank, struct strbuf *sb)
{
	strbuf_reset(sb);
	strbuf_addf(sb, "rank %d", rank);
	if (rank < t->nrank && t->pp_of[rank] >= 0)
		strbuf_addf(sb, " (PP group %d, stage %d, replica %d)", t->pp_of[rank],
			    t->stage_of[rank], t->model_of[rank]);
}

static int ranks_json(struct report *R, const struct report_dir *dir, const bool *sel, int nrank)
{
	const struct agg_job *job = R->job;
	const struct agg_why *w = &job->why;
	bool *chosen = xcalloc(job->niters + 1, sizeof(*chosen));
	struct strbuf note = STRBUF_INIT, other = STRBUF_INIT, name = STRBUF_INIT;
	struct strbuf path = STRBUF_INIT, rel = STRBUF_INIT;
	choose_iterations(R, sel, nrank, chosen, &note);
	bool corrected = w->state == AGG_WHY_DONE;
	/* The origin: the earliest GPU event written, on the corrected clock. */
	long long origin = INT64_MAX;
	int nsel = 0;
	for (size_t i = 0; i < job->niters; i++)
		for (size_t k = 0; chosen[i] && k < job->its[i].nranks; k++) {
			const struct agg_rank *r = &job->its[i].ranks[k];
			if (r->in.rank >= nrank || !sel[r->in.rank] || !r->in.has_window)
				continue;
			long long s =
				r->in.win_s - (corrected ? why_clock_offset(&w->r, r->in.rank) : 0);
			origin = s < origin ? s : origin;
		}
	for (size_t i = 0; i < w->path.nseg; i++) {
		long long b, e;
		seg_times(R, &w->path.seg[i], &b, &e);
		for (size_t k = 0; k < job->niters; k++)
			if (chosen[k] && job->its[k].iteration == w->path.seg[i].iteration)
				origin = b < origin ? b : origin;
	}
	if (origin == INT64_MAX)
		origin = 0;
	for (int r = 0; r < nrank; r++)
		nsel += sel[r];
	strbuf_addstr(&other, "\"source\":\"pptrace ppagg why: chosen ranks\",\"ranks\":[");
	for (int r = 0, k = 0; r < nrank; r++)
		if (sel[r])
			strbuf_addf(&other, "%s%d", k++ ? "," : "", r);
	strbuf_addstr(&other, "],\"iterations\":[");
	for (size_t i = 0, k = 0; i < job->niters; i++)
		if (chosen[i])
			strbuf_addf(&other, "%s%d", k++ ? "," : "", job->its[i].iteration);
	strbuf_addf(&other, "],\"origin_ns\":%lld,\"clocks\":", origin);
	const char *clocks = corrected ? "corrected (rank_clocks)" : "as recorded";
	strbuf_add_json_str(&other, clocks, strlen(clocks));
	if (note.len) {
		strbuf_addstr(&other, ",\"note\":");
		strbuf_add_json_str(&other, note.buf, note.len);
	}
	report_rel(&rel, RF_WHY_JSON, 0, 0);
	struct safefile sf;
	struct ranks_file F = { .R = R, .w = w, .pool = STRBUF_INIT };
	FILE *f = report_open(dir, report_leaf(rel.buf), &path, &sf);
	int rc = f ? 0 : PP_EIO;
	if (f)
		report_trace_begin(&F.T, f, other.buf, origin);
	int path_pid = nrank + 1;
	if (f && w->path.nseg)
		path_segments(&F, chosen, path_pid);
	for (int rank = 0; f && !rc && rank < nrank; rank++) {
		if (!sel[rank])
			continue;
		struct report_lanes *lanes = NULL, p2p = { .n = 0 };
		int64_t *streams = NULL;
		size_t nstreams = 0;
		int pid = rank + 1;
		F.off = corrected ? why_clock_offset(&w->r, rank) : 0;
		for (size_t i = 0; i < job->niters && !rc; i++) {
			if (!chosen[i])
				continue;
			rc = rank_kernels(&F, &job->its[i], rank, pid, &lanes, &streams, &nstreams);
			if (!rc && corrected)
				rank_p2p(&F, job->its[i].iteration, rank, pid, &p2p);
		}
		rank_name(&job->topo, rank, &name);
		report_trace_name(&F.T, pid, -1, name.buf);
		report_trace_order(&F.T, pid, -1, pid);
		for (int l = 0; l < p2p.n; l++) {
			report_trace_name(&F.T, pid, P2P_TID + l,
					  l ? "pipeline send/receive: wait, transfer (overlapping)"
					    : "pipeline send/receive: wait, transfer");
			report_trace_order(&F.T, pid, P2P_TID + l, l);
		}
		for (size_t s = 0; s < nstreams; s++)
			for (int l = 0; l < lanes[s].n; l++) {
				strbuf_reset(&name);
				if (streams[s] >= 0)
					strbuf_addf(&name, "stream %lld", (long long)streams[s]);
				else
					strbuf_addstr(&name, "stream (not recorded)");
				if (l)
					strbuf_addstr(&name, " (overlapping)");
				report_trace_name(&F.T, pid, stream_tid(streams[s], l), name.buf);
				report_trace_order(&F.T, pid, stream_tid(streams[s], l),
						   REPORT_LANES + stream_tid(streams[s], l));
			}
		free(lanes);
		free(streams);
	}
	if (f) {
		report_trace_end(&F.T);
		if (rc)
			safefile_abort(&sf);
		else
			rc = report_commit(&sf, path.buf, R->err);
	}
	if (!rc && !R->o->quiet) {
		fprintf(stderr, "%s: why: %d rank%s for Perfetto: %s (%zu events)\n", pp_progname(),
			nsel, nsel == 1 ? "" : "s", path.buf, F.T.events);
	}
	if (!rc && note.len)
		warn("why: --perfetto-ranks: %s", note.buf);
	free(F.k);
	strbuf_release(&F.pool);
	free(chosen);
	strbuf_release(&note);
	strbuf_release(&other);
	strbuf_release(&name);
	strbuf_release(&path);
	strbuf_release(&rel);
	return rc;
}

/* ---- the chart: wait vs transfer per stage pair ----------------------- */

/* The hops summed over the iterations, by stage and peer stage; how many
 * iterations they span into *niters. */
static struct why_hop *hop_sums(const struct why_result *r, size_t *n, size_t *niters)
{
	struct why_hop *v = xcalloc(r->nhops + 1, sizeof(*v));
	*n = 0;
	*niters = 0;
	for (size_t i = 0; i < r->nhops; i++) {
		const struct why_hop *h = &r->hops[i];
		size_t k = 0;
		*niters += !i || h->iteration != r->hops[i - 1].iteration;
		while (k < *n && (v[k].stage != h->stage || v[k].peer_stage != h->peer_stage))
			k++;
		if (k == *n)
			v[(*n)++] = (struct why_hop){ 0, h->stage, h->peer_stage, 0, 0, 0 };
		v[k].kernels += h->kernels;
		v[k].wait_ns += h->wait_ns;
		v[k].transfer_ns += h->transfer_ns;
	}
	for (size_t i = 1; i < *n; i++) /* few: insertion sort */
		for (size_t j = i; j > 0 && (v[j].stage < v[j - 1].stage ||
					     (v[j].stage == v[j - 1].stage &&
					      v[j].peer_stage < v[j - 1].peer_stage));
		     j--) {
			struct why_hop x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return v;
}

/* The hops chart's plot; svg: with the hover text. */
static void hops_plot(FILE *f, bool svg, const void *arg)
{
	(void)arg;
	fputs("set title \"Pipeline sends and receives: wait vs transfer per stage pair\" "
	      "font 'Sans,14'\n"
	      "plot $hops using 1:($5+$6) with boxes lc rgb '#3FC9C2' title 'transfer', "
	      "'' using 1:5 with boxes lc rgb '#E8743B' title 'wait for the peer'",
	      f);
	if (svg)
		fputs(", '' using 1:($5+$6):(@hover) with labels hypertext point pt 5 ps 1.5 "
		      "lc rgb '#FF000000' notitle",
		      f);
	fputc('\n', f);
}

static int hops_chart(struct report *R, const struct report_dir *d)
{
	const struct why_result *r = &R->job->why.r;
	size_t n, niters;
	struct why_hop *v = hop_sums(r, &n, &niters);
	struct strbuf path = STRBUF_INIT, rel = STRBUF_INIT;
	struct safefile sf;
	char base[64], name[80];
	report_rel(&rel, RF_WHY_HOPS, 0, 0);
	snprintf(base, sizeof(base), "%s", report_leaf(rel.buf));
	snprintf(name, sizeof(name), "%s.gp", base);
	strbuf_release(&rel);
	FILE *f = report_open(d, name, &path, &sf);
	if (!f) {
		free(v);
		strbuf_release(&path);
		return PP_EIO;
	}
	fputs("# pptrace ppagg chart: pipeline sends and receives, wait and transfer per stage and "
	      "the stage of the peer it last waited for\n$hops << EOD\n"
	      "# x stage peer_stage kernels (all iterations) wait_ms transfer_ms (per iteration)\n",
	      f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%zu %d %d %lld %.6f %.6f\n", i, (int)v[i].stage, (int)v[i].peer_stage,
			(long long)v[i].kernels, ms(v[i].wait_ns) / (double)niters,
			ms(v[i].transfer_ns) / (double)niters);
	fputs("EOD\n", f);
	fprintf(f,
		"hover = 'sprintf(\"stage %%d, peer stage %%d\\n%%d p2p kernels in %zu "
		"iteration%s\\nper iteration: wait %%.3f ms, transfer %%.3f ms\", $2, $3, $4, $5, "
		"$6)'\n",
		niters, niters == 1 ? "" : "s");
	fputs("set style fill solid 1.0 noborder\nset boxwidth 0.6\n"
	      "set grid ytics lc rgb '#dddddd' lt 1\nset ylabel 'time per iteration (ms)'\n"
	      "set xlabel 'stage → stage of the peer it waited for last'\nset yrange [0:*]\n"
	      "set border 3\nset xtics nomirror out\nset ytics nomirror\n"
	      "set key outside right top vertical Left reverse samplen 2\n",
	      f);
	fprintf(f, "set xrange [-0.7:%.1f]\n", (double)n - 0.3);
	fprintf(f, "set xtics (");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s'%d→%d' %zu", i ? ", " : "", (int)v[i].stage, (int)v[i].peer_stage,
			i);
	fputs(")\n", f);
	if (n > 24)
		fputs("set xtics rotate by 90 right\n", f);
	report_write_outputs(f, R->o, n > 24 ? 1600 : 1100, 560, base, hops_plot, NULL);
	free(v);
	int rc = report_commit_script(R, &sf, path.buf, SHOW);
	strbuf_release(&path);
	return rc;
}

/* ---- files ------------------------------------------------------------ */

/* Removes what an earlier run wrote to why/ and this one does not: the
 * chart without hops, the JSON without --perfetto-ranks. */
static void remove_stale(const struct report *R, bool chart, bool json)
{
	static const struct report_name charts[] = { { RF_WHY_HOPS, ".gp" },
						     { RF_WHY_HOPS, ".png" },
						     { RF_WHY_HOPS, ".svg" } },
					json_file[] = { { RF_WHY_JSON, "" } };
	if (!chart)
		report_remove(R, RF_WHY, charts, sizeof(charts) / sizeof(charts[0]));
	if (!json)
		report_remove(R, RF_WHY, json_file, 1);
}

/* The ranks --perfetto-ranks selects, over the ranks the topology and the
 * iterations know; NULL with why in R->err. */
static bool *selected(const struct report *R, int *nrank)
{
	const struct agg_job *job = R->job;
	int n = job->topo.nrank;
	for (size_t i = 0; i < job->niters; i++)
		for (size_t k = 0; k < job->its[i].nranks; k++)
			if (job->its[i].ranks[k].in.rank + 1 > n)
				n = job->its[i].ranks[k].in.rank + 1;
	bool *sel = xcalloc((size_t)n + 1, sizeof(*sel));
	struct strbuf err = STRBUF_INIT;
	if (report_perfetto_ranks(R->o->perfetto_ranks, &job->topo, n, sel, &err)) {
		pp_err(R->err, PP_EINVAL, "--perfetto-ranks '%s': %s", R->o->perfetto_ranks,
		       err.buf);
		free(sel);
		sel = NULL;
	}
	strbuf_release(&err);
	*nrank = n;
	return sel;
}

static int report_why_files(struct report *R)
{
	const struct agg_why *w = &R->job->why;
	bool chart = w->state == AGG_WHY_DONE && w->r.nhops;
	bool json = R->o->perfetto_ranks != NULL;
	remove_stale(R, chart, json);
	if (!chart && !json)
		return 0;
	struct report_dir d;
	int rc = report_dir_open_at(&d, R, RF_WHY, 0, 0);
	if (!rc && chart)
		rc = hops_chart(R, &d);
	if (!rc && json) {
		int nrank;
		bool *sel = selected(R, &nrank);
		rc = sel ? ranks_json(R, &d, sel, nrank) : PP_EINVAL;
		free(sel);
	}
	report_dir_close(&d);
	return rc;
}

/* ---- the section of index.html ---------------------------------------- */

/* The critical path: a sentence per step (the first four), the ranks that
 * hold the largest shares over every step. */
static void path_part(struct strbuf *h, const struct report *R)
{
	const struct agg_why *w = &R->job->why;
	const struct why_cpath *c = &w->path;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(h, "<h3>The critical path</h3>\n");
	if (!c->nsteps) {
		strbuf_addstr(h, "<p>No critical path: ");
		report_html_escape(h, w->no_path.buf);
		strbuf_addstr(h, " (it is walked on the what-if analysis' model: docs/why.md "
				 "§5).</p>\n");
		return;
	}
	strbuf_addstr(h, "<ul class=\"path\">\n");
	for (size_t si = 0; si < c->nsteps && si < 4; si++) {
		strbuf_reset(&sb);
		why_cpath_sentence(c, si, 3, &sb);
		strbuf_addf(h, "<li>Iteration %lld (%.3f ms): ", (long long)c->step_iteration[si],
			    ms(c->step_ns[si]));
		report_html_escape(h, sb.buf);
		strbuf_addstr(h, ".</li>\n");
	}
	if (c->nsteps > 4)
		strbuf_addf(h,
			    "<li>… and %zu more steps (the <code>critical_path</code> view)</li>\n",
			    c->nsteps - 4);
	strbuf_addstr(h, "</ul>\n");
	/* per rank over every step */
	int64_t total = 0;
	for (size_t si = 0; si < c->nsteps; si++)
		total += c->step_ns[si];
	struct rank_share {
		int rank;
		int64_t ns;
	} *v = xcalloc(c->nby_rank + 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < c->nby_rank; i++) {
		const struct why_share *x = &c->by_rank[i];
		size_t k = 0;
		while (k < n && v[k].rank != x->rank)
			k++;
		if (k == n)
			v[n++] = (struct rank_share){ x->rank, 0 };
		v[k].ns += x->ns;
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j].ns > v[j - 1].ns; j--) {
			struct rank_share x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	strbuf_addstr(h,
		      "<table><caption>Ranks on the critical path (share of the steps' time, "
		      "every step)</caption><tr><th>rank</th><th>stage</th><th>share</th></tr>\n");
	for (size_t i = 0; i < n && i < 5; i++) {
		if (v[i].rank < 0)
			continue;
		const struct topology *t = &R->job->topo;
		strbuf_addf(h, "<tr><td>%d</td><td>%d</td><td>%.1f %%</td></tr>\n", v[i].rank,
			    v[i].rank < t->nrank ? t->stage_of[v[i].rank] : -1,
			    total ? 100.0 * (double)v[i].ns / (double)total : 0.0);
	}
	strbuf_addstr(h, "</table>\n");
	free(v);
	strbuf_release(&sb);
}

/* Wait vs transfer per stage pair: the table beside the chart. */
static void hops_part(struct strbuf *h, const struct report *R)
{
	const struct why_result *r = &R->job->why.r;
	size_t n, niters;
	struct why_hop *v = hop_sums(r, &n, &niters);
	strbuf_addf(
		h,
		"<h3>Pipeline sends and receives: wait vs transfer</h3>\n<p>Each send or receive "
		"kernel splits into the <b>wait</b> until its last peer's kernel started and the "
		"<b>transfer</b> after (docs/why.md §2.4): %zu kernels, %zu transfers over %zu "
		"iteration%s. Per stage and the stage of the peer it waited for last, per "
		"iteration:</p>\n<div class=\"grid\">\n<table><tr><th>stage → peer</th>"
		"<th>kernels (all iterations)</th><th>wait (ms)</th><th>transfer (ms)</th>"
		"<th>wait share</th></tr>\n",
		r->nkernels, r->np2p, niters, niters == 1 ? "" : "s");
	int64_t sw = 0, st = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t all = v[i].wait_ns + v[i].transfer_ns;
		strbuf_addf(h,
			    "<tr><td>%d → %d</td><td>%lld</td><td>%.3f</td><td>%.3f</td>"
			    "<td>%.1f %%</td></tr>\n",
			    (int)v[i].stage, (int)v[i].peer_stage, (long long)v[i].kernels,
			    ms(v[i].wait_ns) / (double)niters,
			    ms(v[i].transfer_ns) / (double)niters,
			    all ? 100.0 * (double)v[i].wait_ns / (double)all : 0.0);
		sw += v[i].wait_ns;
		st += v[i].transfer_ns;
	}
	strbuf_addf(h,
		    "<tr><th>all</th><td></td><th>%.3f</th><th>%.3f</th><th>%.1f %%</th></tr>\n"
		    "</table>\n",
		    ms(sw) / (double)niters, ms(st) / (double)niters,
		    sw + st ? 100.0 * (double)sw / (double)(sw + st) : 0.0);
	report_html_chart_of(h, R, RF_WHY_HOPS, "Wait vs transfer per stage pair (per iteration)",
			     false);
	strbuf_addstr(h, "</div>\n");
	free(v);
}

/* The bubble of each stage split (the p2p_bubbles view): mean per rank and
 * iteration over the rows with every number. */
static void bubble_part(struct strbuf *h, const struct report *R)
{
	const struct why_result *r = &R->job->why.r;
	int pp = R->job->topo.pp;
	if (pp < 1 || !r->nbubbles)
		return;
	struct split {
		int64_t n, bubble, prev, next, transfer, none;
	} *s = xcalloc((size_t)pp, sizeof(*s));
	size_t left = 0;
	for (size_t i = 0; i < r->nbubbles; i++) {
		const struct why_bubble *b = &r->bubbles[i];
		if (b->stage < 0 || b->stage >= pp || b->bubble_ns < 0 || b->no_work_ns < 0) {
			left++;
			continue;
		}
		struct split *x = &s[b->stage];
		x->n++;
		x->bubble += b->bubble_ns;
		x->prev += b->wait_prev_ns;
		x->next += b->wait_next_ns;
		x->transfer += b->transfer_ns;
		x->none += b->no_work_ns;
	}
	strbuf_addstr(
		h, "<h3>The bubble, split</h3>\n<p>Per stage, mean per rank and iteration (ms): "
		   "the bubble (docs/semantics.md §6), the pipeline kernels' waits for the "
		   "previous and the next stage, their transfers, and <b>no work</b>: the bubble "
		   "no wait for a neighbour explains (a lower bound: docs/why.md §2.5).</p>\n"
		   "<table><tr><th>stage</th><th>ranks × iterations</th><th>bubble</th>"
		   "<th>wait for previous</th><th>wait for next</th><th>transfer</th>"
		   "<th>no work</th><th>no work share</th></tr>\n");
	for (int i = 0; i < pp; i++) {
		const struct split *x = &s[i];
		if (!x->n)
			continue;
		double d = (double)x->n;
		strbuf_addf(h,
			    "<tr><td>%d</td><td>%lld</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>"
			    "<td>%.3f</td><td>%.3f</td><td>%.1f %%</td></tr>\n",
			    i, (long long)x->n, ms(x->bubble) / d, ms(x->prev) / d, ms(x->next) / d,
			    ms(x->transfer) / d, ms(x->none) / d,
			    x->bubble ? 100.0 * (double)x->none / (double)x->bubble : 0.0);
	}
	strbuf_addstr(h, "</table>\n");
	if (left)
		strbuf_addf(
			h,
			"<p>%zu rank-iteration%s left out: a pipeline kernel without numbers, or "
			"no bubble (the <code>p2p_bubbles</code> view has them with NULL).</p>\n",
			left, left == 1 ? "" : "s");
	free(s);
}

/* What the straggler flag says of rank: "iterations 1, 2 (+50 %)", or "". */
static void straggler_of(const struct agg_job *job, int rank, struct strbuf *sb)
{
	double most = 0;
	size_t k = 0;
	struct strbuf list = STRBUF_INIT;
	for (size_t i = 0; i < job->niters; i++)
		for (size_t s = 0; s < job->its[i].res.nstrag; s++)
			if (job->its[i].res.strag[s].rank == rank) {
				strbuf_addf(&list, "%s%d", k++ ? ", " : "", job->its[i].iteration);
				if (job->its[i].res.strag[s].excess > most)
					most = job->its[i].res.strag[s].excess;
			}
	if (k)
		strbuf_addf(sb, "iteration%s %s (+%.0f %%)", k > 1 ? "s" : "", list.buf,
			    100 * most);
	strbuf_release(&list);
}

/* What the what-if says of rank's cell: its worker's S_w, M_W, the cell's
 * slow rank. */
static void whatif_of(const struct agg_job *job, int rank, struct strbuf *sb)
{
	const struct agg_whatif *wi = &job->whatif;
	const struct topology *t = &job->topo;
	if (wi->state != AGG_WI_DONE || rank >= t->nrank || t->model_of[rank] < 0)
		return;
	int dp = t->model_of[rank], stage = t->stage_of[rank];
	for (size_t i = 0; i < wi->r.nworkers; i++) {
		const struct wi_worker *x = &wi->r.workers[i];
		if (x->dp_rank != dp || x->stage != stage)
			continue;
		strbuf_addf(sb, "S_w %.3f%s", x->s_w, i < wi->r.n_mw ? " (M_W)" : "");
		const struct agg_wi_cell *c = agg_whatif_cell(wi, dp, stage);
		if (c && c->slow == rank)
			strbuf_addstr(sb, "; its cell's slow rank");
		else if (c && c->slow >= 0)
			strbuf_addf(sb, "; its cell's slow rank: %d", c->slow);
	}
}

/* The ranks that arrive last far more often than chance, per group kind. */
static void late_part(struct strbuf *h, const struct report *R)
{
	const struct agg_job *job = R->job;
	const struct why_result *r = &job->why.r;
	struct strbuf sb = STRBUF_INIT;
	size_t nlate = 0, shown = 0;
	for (size_t i = 0; i < r->ncoll_ranks; i++)
		nlate += r->coll_ranks[i].late;
	strbuf_addstr(h, "<h3>Who arrives last at the collectives</h3>\n");
	if (!nlate) {
		strbuf_addf(
			h,
			"<p>No rank arrives last at its groups' collectives far more often than "
			"chance (%zu instances of %zu groups; the <code>collective_ranks</code> "
			"view has every rank).</p>\n",
			r->ncolls, job->why.ngroups);
		return;
	}
	strbuf_addf(h,
		    "<p>%zu rank%s arrive%s last far more often than chance (at least 3 times and "
		    "by three standard deviations: docs/why.md §3), per kind of group, beside the "
		    "straggler flag and the what-if's worker of its cell. A slow rank slows its "
		    "whole replica, so its pipeline's other ranks arrive late at their own DP "
		    "collectives too; the critical path says which one set the pace.</p>\n"
		    "<table><tr><th>rank</th><th>group kind</th><th>last / instances</th>"
		    "<th>chance</th><th>last by (ms)</th><th>mean wait of the rank (ms)</th>"
		    "<th>straggler flag</th><th>what-if</th></tr>\n",
		    nlate, nlate == 1 ? "" : "s", nlate == 1 ? "s" : "");
	for (size_t i = 0; i < r->ncoll_ranks && shown < 20; i++) {
		const struct why_coll_rank *x = &r->coll_ranks[i];
		if (!x->late)
			continue;
		shown++;
		strbuf_addf(h, "<tr><td><a href=\"");
		report_rel(h, RF_PAGE, job->its[0].iteration, 0);
		strbuf_addf(h, "#r%d\">%d</a></td><td>", (int)x->rank, (int)x->rank);
		report_html_escape(h, x->desc ? x->desc : rr_pg_kind_name(x->kind));
		strbuf_addf(h,
			    "</td><td>%lld / %lld (%.0f %%)</td><td>%.0f %%</td><td>%.3f</td>"
			    "<td>%.3f</td><td>",
			    (long long)x->times_last, (long long)x->instances, 100 * x->share_last,
			    100 * x->chance, ms(x->last_by_ns), ms(x->mean_wait_ns));
		strbuf_reset(&sb);
		straggler_of(job, (int)x->rank, &sb);
		report_html_escape(h, sb.len ? sb.buf : "–");
		strbuf_addstr(h, "</td><td>");
		strbuf_reset(&sb);
		whatif_of(job, (int)x->rank, &sb);
		report_html_escape(h, sb.len ? sb.buf : "–");
		strbuf_addstr(h, "</td></tr>\n");
	}
	strbuf_addstr(h, "</table>\n");
	if (shown < nlate)
		strbuf_addf(h,
			    "<p>… and %zu more (the <code>collective_ranks</code> view, "
			    "<code>late = 1</code>).</p>\n",
			    nlate - shown);
	strbuf_release(&sb);
}

/* What was incomplete or assumed, and how to get the merged timeline. */
static void basis_part(struct strbuf *h, const struct report *R)
{
	const struct agg_why *w = &R->job->why;
	const struct why_result *r = &w->r;
	struct strbuf sb = STRBUF_INIT, rel = STRBUF_INIT;
	agg_why_incomplete(w, &sb);
	if (sb.len) {
		strbuf_addstr(h, "<p class=\"warn\">Incomplete, never guessed: ");
		report_html_escape(h, sb.buf);
		strbuf_addstr(h,
			      " (a rank without a trace: its pairs and instances have a status and "
			      "no numbers; docs/why.md §6).</p>\n");
	}
	strbuf_addstr(h, "<p class=\"basis\">");
	if (r->clock_error_ns >= 0)
		strbuf_addf(
			h,
			"Clocks: each rank's offset estimated from the kernels that run at one "
			"instant (error %.1f µs); times %s (the <code>rank_clocks</code> view). ",
			(double)r->clock_error_ns / 1e3,
			r->clock_corrected ? "corrected" : "left as recorded (within the error)");
	if (w->inner_instances && !w->inner_rows)
		strbuf_addf(h,
			    "The %zu instances of tensor-, context- and expert-parallel groups are "
			    "summarised per rank, not listed in the <code>collectives</code> view "
			    "(<code>agg.tp_collective_rows</code>). ",
			    w->inner_instances);
	report_rel(&rel, RF_WHY_JSON, 0, 0);
	if (R->o->perfetto_ranks) {
		strbuf_addstr(h, "The chosen ranks on one clock, for Perfetto: <a href=\"");
		report_html_escape(h, rel.buf);
		strbuf_addstr(h, "\">");
		report_html_escape(h, rel.buf);
		strbuf_addstr(h, "</a> (<code>--perfetto-ranks ");
		report_html_escape(h, R->o->perfetto_ranks);
		strbuf_addstr(h, "</code>; open it at ui.perfetto.dev).");
	} else {
		strbuf_addstr(h, "A merged timeline of any ranks for Perfetto (clock-corrected, "
				 "their kernels, waits and the critical path): <code>ppagg "
				 "--perfetto-ranks 8-15</code>, <code>pp_group=1</code> or "
				 "<code>replica=0</code>.");
	}
	strbuf_addstr(h, "</p>\n");
	if (r->notes.len) {
		strbuf_addstr(h, "<details><summary>Notes of the analysis</summary><pre>");
		report_html_escape(h, r->notes.buf);
		strbuf_addstr(h, "</pre></details>\n");
	}
	strbuf_release(&sb);
	strbuf_release(&rel);
}

static void report_why_html(const struct report *R, struct strbuf *h)
{
	const struct agg_why *w = &R->job->why;
	strbuf_addstr(h, "<section id=\"why\">\n<h2>Why the pipeline waits</h2>\n");
	if (w->state == AGG_WHY_NONE) {
		strbuf_addstr(h, "<p>Pipeline sends, receives and collectives not analysed: ");
		report_html_escape(h, w->why.buf);
		strbuf_addstr(h, " (docs/why.md).</p>\n");
		if (w->path.nsteps)
			path_part(h, R);
		strbuf_addstr(h, "</section>\n");
		return;
	}
	path_part(h, R);
	if (w->r.nhops)
		hops_part(h, R);
	bubble_part(h, R);
	late_part(h, R);
	basis_part(h, R);
	strbuf_addstr(h, "</section>\n");
}

/* "why: 55.5 % of the step is backward-compute on stage 1 (rank 2)": the
 * largest share of the critical path of the step the what-if shows (else
 * the first); nothing without a path. */
static void report_why_headline(const struct report *R, struct strbuf *sb)
{
	const struct agg_job *job = R->job;
	const struct why_cpath *c = &job->why.path;
	size_t si = 0;
	if (!c->nsteps)
		return;
	if (job->whatif.state == AGG_WI_DONE && job->whatif.step.index < job->whatif.r.nsteps)
		for (size_t i = 0; i < c->nsteps; i++)
			if (c->step_iteration[i] == job->whatif.r.step[job->whatif.step.index])
				si = i;
	strbuf_addf(sb, "why: iteration %lld: ", (long long)c->step_iteration[si]);
	why_cpath_sentence(c, si, 1, sb);
}

const struct report_section report_why_section = { report_why_files, report_why_html,
						   report_why_headline };
