/* gen.c — ppgen's driver: topology, then per iteration build, simulate,
 * write the selected ranks and their truth rows. Folders and files are
 * created through safefile.h: no symlink planted in the output folder is
 * followed, files appear only when complete, modes follow the umask. */
#include "gen.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen_layout.h"
#include "gen_model.h"
#include "gen_ops.h"
#include "gen_truth.h"
#include "gen_write.h"
#include "util/cmp.h"
#include "util/pp.h"
#include "util/safefile.h"
#include "util/strbuf.h"

#define DEFAULT_START_NS 1707261432000000000LL /* 2024-02-06 23:17:12 UTC */

/* SIGINT/SIGTERM: the trace being written ends at its next buffer flush and
 * is removed with its temporary file, no further trace is started, and
 * .truth keeps its earlier content (it would not describe the tree). A
 * second signal, either of the two, ends ppgen at once. */
static volatile sig_atomic_t stop_signal;
static struct sigaction stop_old[2]; /* SIGINT's and SIGTERM's before */

static void on_stop_signal(int signum)
{
	stop_signal = signum;
	/* Both go back to what they were (sigaction() is async-signal-safe);
	 * the handler blocks both, so a second one pending meets these. */
	sigaction(SIGINT, &stop_old[0], NULL);
	sigaction(SIGTERM, &stop_old[1], NULL);
}

/* Catches sig unless it was ignored when gen_run() began: a script's
 * background job ignores SIGINT, the Ctrl-C typed at the script is not for
 * it (docs/ppgen.md). */
static void catch_stop(int sig, const struct sigaction *sa, struct sigaction *old)
{
	sigaction(sig, NULL, old);
	if (old->sa_handler != SIG_IGN)
		sigaction(sig, sa, NULL);
}

static const struct {
	const char *name;
	unsigned flag;
} nasty_tab[] = {
	{ "truncate", GN_TRUNCATE },
	{ "string-ids", GN_STRING_IDS },
	{ "unsorted", GN_UNSORTED },
	{ "unicode", GN_UNICODE },
	{ "control-chars", GN_CONTROL },
	{ "orphans", GN_ORPHANS },
	{ "zero-dur", GN_ZERO_DUR },
	{ "big-ids", GN_BIG_IDS },
	{ "bom", GN_BOM },
	{ "whitespace", GN_WHITESPACE },
	{ "nan", GN_NAN },
	{ "long-names", GN_LONG_NAMES },
};

int gen_parse_nasty(const char *list, unsigned *out, struct strbuf *err)
{
	unsigned v = 0;
	const char *p = list;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		bool found = false;
		if (n == 3 && !strncmp(p, "all", 3)) {
			v |= ~0u & ~(unsigned)GN_TRUNCATE & ((GN_LONG_NAMES << 1) - 1);
			found = true;
		}
		for (size_t i = 0; i < sizeof(nasty_tab) / sizeof(nasty_tab[0]) && !found; i++)
			if (strlen(nasty_tab[i].name) == n && !strncmp(p, nasty_tab[i].name, n)) {
				v |= nasty_tab[i].flag;
				found = true;
			}
		if (!found && n) {
			return pp_err(err, PP_EINVAL, "unknown nasty option '%.*s'", (int)n, p);
		}
		p += n;
		if (*p == ',')
			p++;
	}
	*out = v;
	return 0;
}

int gen_parse_int_list(const char *s, int **out, int *n)
{
	int *v = NULL, cnt = 0, cap = 0;
	const char *p = s;
	*out = NULL;
	*n = 0;
	while (*p) {
		char *end;
		errno = 0;
		long a = strtol(p, &end, 10), b;
		if (end == p || errno || a < 0 || a > 100000000)
			goto bad;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || errno || b < a || b - a > 10000000)
				goto bad;
			p = end;
		}
		for (long x = a; x <= b; x++) {
			PP_GROW(v, cnt, cap, 16);
			v[cnt++] = (int)x;
		}
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	if (!cnt)
		goto bad;
	qsort(v, (size_t)cnt, sizeof(*v), cmp_int);
	int k = 0;
	for (int i = 0; i < cnt; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	*out = v;
	*n = k;
	return 0;
bad:
	free(v);
	return PP_EINVAL;
}

/* Microseconds with up to 3 decimals ("-12.5") as exact ns, |v| <= 1 s.
 * Returns the end of the number, or NULL. */
static const char *parse_us(const char *p, int64_t *ns)
{
	bool neg = *p == '-';
	int64_t v = 0;
	int digits = 0, frac = 0;
	if (*p == '-' || *p == '+')
		p++;
	for (; *p >= '0' && *p <= '9'; p++, digits++)
		if ((v = v * 10 + (*p - '0')) > 1000000)
			return NULL;
	v *= 1000;
	static const int scale[3] = { 100, 10, 1 };
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, frac++) {
			if (frac < 3)
				v += (*p - '0') * scale[frac];
			else if (*p != '0')
				return NULL;
		}
	}
	if ((!digits && !frac) || v > 1000000000)
		return NULL;
	*ns = neg ? -v : v;
	return p;
}

int gen_parse_clock_skew(const char *s, struct gen_clock_skew **out, int *n, struct strbuf *err)
{
	struct gen_clock_skew *v = NULL;
	int cnt = 0;
	const char *p = s;
	*out = NULL;
	*n = 0;
	while (*p) {
		const char *item = p, *end = NULL;
		char *colon;
		errno = 0;
		long host = strtol(p, &colon, 10);
		int64_t ns;
		if (colon == p || *colon != ':' || errno || host < 0 || host > 1000000 ||
		    !(end = parse_us(colon + 1, &ns)) || (*end && *end != ',')) {
			size_t len = strcspn(item, ",");
			pp_err(err, PP_EINVAL,
			       "'%.*s' is not HOST:OFFSET_US (an offset of at most 1000000 us with up to 3 decimals)",
			       (int)len, item);
			free(v);
			return PP_EINVAL;
		}
		v = xrealloc(v, (size_t)(cnt + 1) * sizeof(*v));
		v[cnt++] = (struct gen_clock_skew){ (int)host, ns };
		p = *end ? end + 1 : end;
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* Removes files of dir matching glob (ppgen's own outputs from an earlier
 * run, so that a rerun never leaves stale ranks or both .json and .json.gz). */
static int remove_matching(int dirfd, const char *glob)
{
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int rc = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return PP_EIO;
	}
	while ((e = readdir(d)))
		if (!fnmatch(glob, e->d_name, 0) && unlinkat(dirfd, e->d_name, 0) &&
		    errno != ENOENT)
			rc = PP_EIO;
	closedir(d);
	return rc;
}

/* Warns about iteration_N folders of an earlier run that this run does not
 * rewrite: the analysis would see them, the truth does not describe them. */
static void warn_stale(const struct gen_opts *o)
{
	DIR *d = opendir(o->out);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		int n;
		char tail;
		if (sscanf(e->d_name, "iteration_%d%c", &n, &tail) != 1)
			continue;
		bool ours = false;
		for (int i = 0; i < o->niterations; i++)
			ours |= o->iterations[i] == n;
		if (!ours)
			warn("'%s/%s' is from an earlier run; .truth does not describe it", o->out,
			     e->d_name);
	}
	closedir(d);
}

/* The topology file in the output folder (outfd) and its copy in .truth
 * (truthfd). */
static int write_topology(const struct gen_opts *o, const struct gen_layout *lay, int64_t start_ns,
			  int outfd, int truthfd, struct strbuf *err)
{
	char stamp[32], name[64];
	time_t secs = (time_t)(start_ns / 1000000000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &tm);
	snprintf(name, sizeof(name), "unique_parallel_groups_%s.txt", stamp);
	const int fds[2] = { outfd, truthfd };
	const char *names[2] = { name, "topology.txt" };
	for (int i = 0; i < 2; i++) {
		struct safefile sf;
		size_t mark = err->len;
		if (safefile_open(&sf, fds[i], names[i], err))
			return pp_err_prefix(err, mark, PP_EIO, "%s: ", o->out);
		if (gen_layout_write_topology(lay, sf.fp)) {
			safefile_abort(&sf);
			return pp_err(err, PP_EIO, "%s: cannot write '%s'", o->out, names[i]);
		}
		if (safefile_commit(&sf, err))
			return pp_err_prefix(err, mark, PP_EIO, "%s: ", o->out);
	}
	return 0;
}

/* One gen_run(): the layout, which ranks are written and slowed down, the
 * hosts' clocks, the open output folders and truth files, the running
 * totals. */
struct run {
	const struct gen_opts *o;
	struct strbuf *err; /* gen_run()'s */
	struct gen_layout lay;
	int gpus_per_host;
	bool *write;      /* per rank: write its trace (--ranks) */
	bool *injected;   /* per rank: named by --straggler */
	double *straggle; /* per rank: compute slow-down (--straggler, --slow-stage,
			   * --slow-compute) */
	double *dp_slow;  /* per rank: its DP group's collective factor (--slow-dp) */
	int64_t *offset;  /* per rank: clock offset, ns (its host's) */
	struct gen_rank_sum *sums;
	struct gen_op *ops;
	size_t capops;
	struct gen_p2p_rows p2p; /* one rank's, for the why truth */
	struct gen_truth *truth;
	int outfd, truthfd;
	int64_t t0; /* start of the next iteration */
	uint64_t bytes;
	int files;
	/* For tests only: a glob over trace paths (PPTRACE_TEST_GEN_STOP).
	 * ppgen stops itself (SIGSTOP) once such a trace is complete, so that
	 * a test signals it at a known point instead of racing it (t0203). */
	const char *stop_after;
};

/* --slow-stage into R->straggle. */
static int slow_stages(struct run *R)
{
	const struct gen_opts *o = R->o;
	int P = R->lay.size[GEN_PP];
	for (int i = 0; i < o->nslow_stages; i++) {
		int s = o->slow_stages[i].stage < 0 ? P - 1 : o->slow_stages[i].stage;
		if (s >= P)
			return pp_err(R->err, PP_EINVAL,
				      "--slow-stage: stage %d is outside the %d pipeline stage%s",
				      s, P, P == 1 ? "" : "s");
		for (int r = 0; r < R->lay.world; r++)
			if (gen_layout_coord(&R->lay, r, GEN_PP) == s)
				R->straggle[r] *= o->slow_stages[i].factor;
	}
	return 0;
}

/* --slow-dp into R->dp_slow: every rank of a DP group that holds a listed
 * rank gets the factor, so that the group's members agree on each of its
 * collectives' duration. */
static int slow_dp(struct run *R)
{
	const struct gen_opts *o = R->o;
	int world = R->lay.world;
	for (int r = 0; r < world; r++)
		R->dp_slow[r] = 1.0;
	for (int i = 0; i < o->nslow_dp_ranks; i++) {
		int listed = o->slow_dp_ranks[i];
		if (listed < 0 || listed >= world)
			return pp_err(R->err, PP_EINVAL,
				      "--slow-dp: rank %d is outside the world of %d ranks", listed,
				      world);
		int g = gen_layout_group_of(&R->lay, listed, GEN_DP);
		for (int r = 0; r < world; r++)
			if (gen_layout_group_of(&R->lay, r, GEN_DP) == g)
				R->dp_slow[r] = o->slow_dp_factor;
	}
	return 0;
}

/* Host clocks into R->offset: host = rank / gpus_per_host; host 0 keeps
 * true time unless named; --clock-skew names hosts, --clock-skew-max draws
 * the others from the seed. */
static int clock_offsets(struct run *R)
{
	const struct gen_opts *o = R->o;
	int world = R->lay.world, nhosts = (world + R->gpus_per_host - 1) / R->gpus_per_host;
	int64_t *host = xcalloc((size_t)nhosts, sizeof(*host));
	for (int h = 1; h < nhosts && o->skew_max_ns; h++) {
		uint64_t span = 2 * (uint64_t)o->skew_max_ns + 1;
		host[h] = (int64_t)(gen_hash(o->seed, (uint64_t)h, 0x736b6577, 0) % span) -
			  o->skew_max_ns;
	}
	for (int i = 0; i < o->nskews; i++) {
		int h = o->skews[i].host;
		if (h >= nhosts) {
			free(host);
			return pp_err(
				R->err, PP_EINVAL,
				"--clock-skew: host %d is outside the %d host%s of %d ranks at %d per host",
				h, nhosts, nhosts == 1 ? "" : "s", world, R->gpus_per_host);
		}
		host[h] = o->skews[i].offset_ns;
	}
	for (int r = 0; r < world; r++)
		R->offset[r] = host[r / R->gpus_per_host];
	free(host);
	return 0;
}

/* --ranks, --straggler, --slow-stage and the clocks into R. */
static int choose_ranks(struct run *R)
{
	const struct gen_opts *o = R->o;
	int world = R->lay.world;
	for (int r = 0; r < world; r++) {
		R->write[r] = !o->ranks;
		R->straggle[r] = 1.0;
	}
	for (int i = 0; i < o->nranks; i++) {
		if (o->ranks[i] >= world)
			return pp_err(R->err, PP_EINVAL,
				      "--ranks: rank %d is outside the world of %d ranks",
				      o->ranks[i], world);
		R->write[o->ranks[i]] = true;
	}
	for (int i = 0; i < o->nstragglers; i++) {
		int r = o->stragglers[i].rank;
		if (r < 0 || r >= world)
			return pp_err(R->err, PP_EINVAL,
				      "--straggler: rank %d is outside the world of %d ranks", r,
				      world);
		R->straggle[r] *= o->stragglers[i].factor;
		R->injected[r] |= o->stragglers[i].factor != 1.0;
	}
	for (int r = 0; r < world && o->slow_compute > 0; r++)
		R->straggle[r] *= o->slow_compute;
	int rc = slow_stages(R);
	if (!rc)
		rc = slow_dp(R);
	return rc ? rc : clock_offsets(R);
}

/* The output folder, its topology file and the truth files. */
static int open_output(struct run *R)
{
	const struct gen_opts *o = R->o;
	char tdir[4096];
	/* --out may be reached through the user's own symlinks; below it,
	 * no symlink is followed (safefile.h). */
	snprintf(tdir, sizeof(tdir), "%s/.truth", o->out);
	if (safe_mkdirs(AT_FDCWD, o->out, 0, &R->outfd, R->err) ||
	    safe_mkdirs(R->outfd, ".truth", SAFE_NOFOLLOW, &R->truthfd, R->err))
		return PP_EIO;
	if (remove_matching(R->outfd, "unique_parallel_groups_*.txt"))
		return pp_err(R->err, PP_EIO, "cannot prepare '%s': %s", o->out, strerror(errno));
	if (write_topology(o, &R->lay, R->t0, R->outfd, R->truthfd, R->err))
		return PP_EIO;
	warn_stale(o);
	if (!(R->truth = gen_truth_open(R->truthfd, tdir, &R->lay, o->vpp, R->err)))
		return PP_EIO;
	if (o->nskews || o->skew_max_ns) {
		if (gen_truth_clock_offsets(R->truth, R->offset, R->lay.world, R->err))
			return PP_EIO;
	} else if (remove_matching(R->truthfd, "clock_offsets.csv")) {
		return pp_err(R->err, PP_EIO, "cannot remove '%s/clock_offsets.csv': %s", tdir,
			      strerror(errno));
	}
	return 0;
}

/* The what-if analysis uses one rank per (dp, stage): the one with tensor,
 * context and expert coordinate 0. */
static bool representative(const struct gen_layout *lay, int rank)
{
	return !gen_layout_coord(lay, rank, GEN_TP) && !gen_layout_coord(lay, rank, GEN_CP) &&
	       !gen_layout_coord(lay, rank, GEN_EP);
}

/* Where gen_why_collectives() hands its instances. */
struct coll_out {
	struct gen_truth *truth;
	int iteration;
	const struct gen_layout *lay;
};

static void coll_row(void *ctx, const struct gen_coll *x, const int *tied, int ntied)
{
	const struct coll_out *o = ctx;
	gen_truth_collective(o->truth, o->iteration, o->lay, x, tied, ntied);
}

/* The traces of the chosen ranks of one simulated iteration, and their
 * truth; the op trace of the representative ranks. */
static int write_ranks(struct run *R, struct gen_cluster *c, const struct gen_cfg *cfg,
		       const char *dir, int itfd)
{
	const struct gen_opts *o = R->o;
	int it = cfg->iteration;
	char path[4200];
	struct gen_write_opts w = {
		.gzip = o->gzip,
		.relative = o->relative,
		.nasty = o->nasty,
		.lay = &R->lay,
		.gpus_per_host = R->gpus_per_host,
		.iteration = it,
		.base_ns = (R->t0 / 1000000000 - 1) * 1000000000,
		.dirfd = itfd,
		.stop = &stop_signal,
	};
	memset(R->sums, 0, (size_t)R->lay.world * sizeof(*R->sums));
	for (int r = 0; r < R->lay.world; r++) {
		bool rep = representative(&R->lay, r);
		if (!R->write[r] && !rep)
			continue;
		struct gen_rank *gr = gen_sim_rank(c, r);
		size_t nops = gen_ops_rank(gr, cfg, &R->ops, &R->capops);
		int dp = gen_layout_coord(&R->lay, r, GEN_DP);
		if (rep)
			gen_truth_optrace_add(R->truth, gr, dp, R->offset[r], R->ops, nops);
		if (!R->write[r])
			continue;
		if (stop_signal)
			return PP_EINTR;
		snprintf(path, sizeof(path), "%s/rank_%04d_iter_%d.pt.trace.json%s", dir, r, it,
			 o->gzip ? ".gz" : "");
		w.path = path;
		int wrc = gen_write_trace(gr, &w, R->err);
		if (wrc)
			return wrc; /* PP_EINTR (no message) or PP_EIO */
		struct stat st;
		if (!fstatat(itfd, strrchr(path, '/') + 1, &st, AT_SYMLINK_NOFOLLOW))
			R->bytes += (uint64_t)st.st_size;
		R->files++;
		if (R->stop_after && *R->stop_after && !fnmatch(R->stop_after, path, 0))
			raise(SIGSTOP);
		gen_truth_rank(R->truth, it, gr, &R->sums[r]);
		gen_truth_ops(R->truth, it, gr, dp, R->ops, nops);
		gen_why_p2p(c, cfg, gr, R->offset[r], &R->p2p);
		gen_truth_p2p(R->truth, it, r, &R->p2p);
	}
	struct coll_out co = { R->truth, it, &R->lay };
	gen_why_collectives(c, cfg, R->write, R->offset, coll_row, &co);
	gen_truth_pp_groups(R->truth, it, &R->lay, R->sums);
	for (int r = 0; r < R->lay.world; r++)
		if (R->write[r] && R->injected[r])
			gen_truth_straggler(R->truth, it, r);
	gen_truth_optrace_step(R->truth, it);
	return 0;
}

/* Simulates iteration it and writes its folder. */
static int write_iteration(struct run *R, int it)
{
	const struct gen_opts *o = R->o;
	char dir[4096], glob[64], itname[32];
	int itfd = -1, rc = 0;
	struct gen_cfg cfg = {
		.lay = R->lay,
		.vpp = o->vpp,
		.microbatches = o->microbatches,
		.layers = o->layers,
		.kpl = o->kpl,
		.recompute = o->recompute,
		.nasty = o->nasty,
		.variant = o->variant,
		.seed = o->seed,
		.iteration = it,
		.t0 = R->t0,
		.straggle = R->straggle,
		.dp_slow = o->nslow_dp_ranks ? R->dp_slow : NULL,
	};
	struct gen_cluster *c = gen_sim_build(&cfg, R->err);
	if (!c)
		return PP_EINVAL;
	if (gen_sim_run(c)) {
		pp_err(R->err, PP_ECYCLE, "internal error: the simulated schedule deadlocks");
		gen_sim_free(c);
		return PP_ECYCLE;
	}
	snprintf(itname, sizeof(itname), "iteration_%d", it);
	snprintf(dir, sizeof(dir), "%s/%s", o->out, itname);
	snprintf(glob, sizeof(glob), "rank_*_iter_%d.pt.trace.json*", it);
	size_t mark = R->err->len;
	if (safe_mkdirs(R->outfd, itname, SAFE_NOFOLLOW, &itfd, R->err)) {
		rc = pp_err_prefix(R->err, mark, PP_EIO, "%s: ", o->out);
	} else if (remove_matching(itfd, glob)) {
		rc = pp_err(R->err, PP_EIO, "cannot prepare '%s': %s", dir, strerror(errno));
	}
	int64_t end = gen_sim_end(c);
	gen_sim_shift(c, R->offset);
	if (!rc)
		rc = write_ranks(R, c, &cfg, dir, itfd);
	R->t0 = end + 100000000;
	gen_sim_free(c);
	if (itfd >= 0)
		close(itfd);
	return rc;
}

void gen_opts_init(struct gen_opts *o)
{
	static const int fifteen[] = { 15 };
	*o = (struct gen_opts){ .tp = 1,
				.pp = 1,
				.dp = 1,
				.cp = 1,
				.ep = 1,
				.vpp = 1,
				.microbatches = 8,
				.layers = 4,
				.kpl = 8,
				.seed = 1,
				.gpus_per_host = 8,
				.iterations = fifteen,
				.niterations = 1 };
}

int gen_run(const struct gen_opts *o, struct strbuf *err)
{
	struct run R = { .o = o, .err = err, .outfd = -1, .truthfd = -1 };
	int rc = 0;
	int64_t t_begin = pp_now_ns();

	if (gen_layout_init(&R.lay, o->tp, o->cp, o->ep, o->dp, o->pp))
		return pp_err(err, PP_EINVAL,
			      "invalid parallel sizes (each >= 1, at most 1000000 ranks)");
	R.gpus_per_host = o->gpus_per_host > 0 ? o->gpus_per_host : 8;
	R.write = xcalloc((size_t)R.lay.world, sizeof(*R.write));
	R.injected = xcalloc((size_t)R.lay.world, sizeof(*R.injected));
	R.straggle = xcalloc((size_t)R.lay.world, sizeof(*R.straggle));
	R.dp_slow = xcalloc((size_t)R.lay.world, sizeof(*R.dp_slow));
	R.offset = xcalloc((size_t)R.lay.world, sizeof(*R.offset));
	R.sums = xcalloc((size_t)R.lay.world, sizeof(*R.sums));
	R.t0 = o->start_ns ? o->start_ns : DEFAULT_START_NS;
	R.stop_after = getenv("PPTRACE_TEST_GEN_STOP");
	rc = choose_ranks(&R);
	struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	/* A second signal kills at once (a long simulation does not look at
	 * the flag): on_stop_signal() gives both back. */
	stop_signal = 0;
	catch_stop(SIGINT, &sa, &stop_old[0]);
	catch_stop(SIGTERM, &sa, &stop_old[1]);
	if (!rc)
		rc = open_output(&R);
	for (int i = 0; i < o->niterations && !rc && !stop_signal; i++)
		rc = write_iteration(&R, o->iterations[i]);
	if (!rc && stop_signal)
		rc = PP_EINTR;
	if (rc) {
		/* A tree not wholly written, interrupted or not: .truth would not
		 * describe it and keeps its earlier content (docs/ppgen.md). */
		gen_truth_abort(R.truth);
		if (rc == PP_EINTR)
			pp_err(err, rc,
			       "interrupted (%s): %d complete trace%s in %s, .truth not updated; "
			       "run the command again",
			       stop_signal == SIGTERM ? "SIGTERM" : "SIGINT", R.files,
			       R.files == 1 ? "" : "s", o->out);
	} else {
		rc = gen_truth_close(R.truth, err);
	}
	sigaction(SIGINT, &stop_old[0], NULL);
	sigaction(SIGTERM, &stop_old[1], NULL);
	if (!rc && !o->quiet) {
		double secs = (double)(pp_now_ns() - t_begin) / 1e9;
		printf("ppgen: wrote %d trace%s (%.1f MB) for %d rank%s x %d iteration%s to %s in "
		       "%.2f s\n",
		       R.files, R.files == 1 ? "" : "s", (double)R.bytes / 1e6, R.lay.world,
		       R.lay.world == 1 ? "" : "s", o->niterations, o->niterations == 1 ? "" : "s",
		       o->out, secs);
	}
	if (R.truthfd >= 0)
		close(R.truthfd);
	if (R.outfd >= 0)
		close(R.outfd);
	PP_FREE_ALL(R.write, R.injected, R.straggle, R.dp_slow, R.offset, R.ops);
	gen_why_p2p_release(&R.p2p);
	free(R.sums);
	return rc;
}
