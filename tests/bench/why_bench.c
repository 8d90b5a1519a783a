/* why_bench — times ppagg's why analysis on a database
 * (scripts/bench.d/why.sh).
 *
 *   why_bench --db DB [--vpp V] [--runs N] [--rows auto|all|none]
 *
 * Runs ppagg's data layer (agg_analyse(), agg/agg.h) on DB N times (default
 * 3; the topology file is looked for in DB's folder) and prints the median
 * of what its why analysis took (agg/agg_why.h, docs/why.md §7): reading the
 * ranks' ops and communication kernels, the engine (pairs, instances,
 * clocks, waits), the critical path on the what-if engine, writing the why
 * views, and the whole in wall and CPU time of the process; then the whole
 * of agg_analyse(), and the scan of the timelines' blocks that the report no
 * longer makes because the why analysis' scan kept them (agg_timeline_load()
 * scanning each iteration again: what the why analysis adds to ppagg is its
 * total less this). Prints "name value unit" lines and the engine's counts.
 * Measures; never asserts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agg/agg.h"
#include "agg/agg_timeline.h"
#include "util/pp.h"
#include "tests/bench/bench.h"
#include "util/strbuf.h"
#include "why_load.h"

enum { P_READ, P_ENGINE, P_PATH, P_STORE, P_ALL, P_CPU, P_AGG, P_SCAN, P_SCAN_CPU, P_N };
static const char *const phase[P_N] = { "read_s",
					"engine_s",
					"critical_path_s",
					"store_s",
					"total_s",
					"total_cpu_s",
					"ppagg_data_s",
					"blocks_scan_saved_s",
					"blocks_scan_saved_cpu_s" };

/* The seconds agg_timeline_load() takes to scan job's iterations again,
 * once the kept blocks are taken, and their CPU seconds in *cpu; -1 when a
 * scan failed. */
static double rescan(struct agg_job *job, double *cpu)
{
	struct agg_timeline tl;
	struct strbuf err = STRBUF_INIT;
	double s = 0;
	*cpu = 0;
	for (size_t i = 0; i < job->niters; i++) {
		if (job->timelines && job->timelines[i].rank) {
			int rc = agg_timeline_load(job, &job->its[i], &tl, &err); /* taken */
			agg_timeline_release(&tl);
			if (rc) {
				s = -1;
				break;
			}
		}
		int64_t t0 = pp_now_ns();
		double c0 = bench_cpu_s();
		int rc = agg_timeline_load(job, &job->its[i], &tl, &err);
		s += (double)(pp_now_ns() - t0) / 1e9;
		*cpu += bench_cpu_s() - c0;
		agg_timeline_release(&tl);
		if (rc) {
			s = -1;
			break;
		}
	}
	error_lines(err.buf);
	strbuf_release(&err);
	return s;
}

int main(int argc, char **argv)
{
	const char *dbpath = NULL, *rows_arg = "auto";
	int vpp = 1, runs = 3;
	const struct bench_opt opts[] = {
		{ "--db", NULL, &dbpath },
		{ "--vpp", &vpp, NULL },
		{ "--runs", &runs, NULL },
		{ "--rows", NULL, &rows_arg },
	};
	bench_args(argc, argv, opts, sizeof(opts) / sizeof(opts[0]));
	enum agg_why_rows rows = !strcmp(rows_arg, "all")    ? AGG_WHY_ROWS_ALL
				 : !strcmp(rows_arg, "none") ? AGG_WHY_ROWS_NONE
							     : AGG_WHY_ROWS_AUTO;
	if (!dbpath || runs < 1 || runs > 99) {
		fprintf(stderr, "usage: why_bench --db DB [--vpp V] [--runs N] "
				"[--rows auto|all|none]\n");
		return 2;
	}
	double v[P_N][99];
	for (int k = 0; k < runs; k++) {
		struct agg_job job;
		int64_t t0 = pp_now_ns();
		if (why_load_analyse(dbpath, vpp, rows, &job)) {
			agg_job_release(&job);
			return 1;
		}
		const struct agg_why *w = &job.why;
		v[P_READ][k] = w->t_read;
		v[P_ENGINE][k] = w->t_engine;
		v[P_PATH][k] = w->t_path;
		v[P_STORE][k] = w->t_store;
		v[P_ALL][k] = w->seconds;
		v[P_CPU][k] = w->cpu_seconds;
		v[P_AGG][k] = (double)(pp_now_ns() - t0) / 1e9;
		v[P_SCAN][k] = rescan(&job, &v[P_SCAN_CPU][k]);
		if (v[P_SCAN][k] < 0) {
			agg_job_release(&job);
			return 1;
		}
		if (!k)
			printf("# %zu iterations, %zu traces, %zu ops, %zu kernels read; %zu p2p "
			       "transfers, %zu kernels, %zu collective instances (%zu of TP/CP/EP "
			       "groups, %s), %zu critical path segments; clock error %lld ns\n",
			       job.niters, w->ntraces, w->nops, w->nkernels, w->r.np2p,
			       w->r.nkernels, w->r.ncolls, w->inner_instances,
			       w->inner_rows ? "listed" : "summarised", w->path.nseg,
			       (long long)w->r.clock_error_ns);
		agg_job_release(&job);
	}
	for (int p = 0; p < P_N; p++)
		printf("why_%s %.3f s\n", phase[p], cmp_median(v[p], (size_t)runs));
	return 0;
}
