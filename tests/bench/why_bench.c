/* why_bench — times the why analysis on a database (scripts/bench.d/why.sh).
 *
 *   why_bench --db DB --topology FILE [--vpp V] [--runs N]
 *
 * What ppagg's glue adds (docs/why.md §7, tests/unit/why/why_load.c): reading
 * every iteration's traces, ops, process groups and communication kernels
 * (the kernels alone: why_read_kernels_s; ppagg reads the traces and ops
 * anyway);
 * the engine (pairs, instances, clocks, waits); the critical path (the
 * what-if engine on the cells' workers, then the walk); writing the why
 * views. Each figure is the median of N runs (default 3), wall and CPU time
 * of this process; prints "name value unit" lines and the engine's counts.
 * Measures; never asserts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agg/topology.h"
#include "storage/db.h"
#include "util/pp.h"
#include "why/why.h"
#include "why_load.h"

static double now_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *x, int n)
{
	qsort(x, (size_t)n, sizeof(*x), cmp_d);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

enum { P_LOAD, P_RUN, P_CPATH, P_STORE, P_ALL, P_N };
static const char *const phase[P_N] = { "read", "engine", "critical_path", "store", "total" };

int main(int argc, char **argv)
{
	const char *dbpath = NULL, *topo = NULL;
	int vpp = 1, runs = 3;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--db"))
			dbpath = argv[i + 1];
		else if (!strcmp(argv[i], "--topology"))
			topo = argv[i + 1];
		else if (!strcmp(argv[i], "--vpp"))
			vpp = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--runs"))
			runs = atoi(argv[i + 1]);
	}
	if (!dbpath || !topo || runs < 1 || runs > 99) {
		fprintf(stderr, "usage: why_bench --db DB --topology FILE [--vpp V] [--runs N]\n");
		return 2;
	}
	char err[512];
	struct db *db = db_open(dbpath, DB_EXISTING, 0, err, sizeof(err));
	if (!db) {
		fprintf(stderr, "why_bench: %s\n", err);
		return 1;
	}
	struct topology t = TOPOLOGY_INIT;
	if (topo_load_file(&t, topo)) {
		fprintf(stderr, "why_bench: cannot read the topology '%s'\n", topo);
		return 1;
	}
	topo_index(&t);
	int64_t its[64];
	size_t nits = why_load_iterations(db, its, 64);
	double wall[P_N][99], cpu[P_N][99], kern[99];
	for (int k = 0; k < runs; k++) {
		struct why_load L;
		struct why_result r;
		struct why_cpath c;
		struct strbuf e = STRBUF_INIT;
		double w0[P_N + 1], c0[P_N + 1];
		w0[0] = now_s(CLOCK_MONOTONIC);
		c0[0] = now_s(CLOCK_PROCESS_CPUTIME_ID);
		if (why_load_db(db, its, nits, &t, vpp, &L))
			return fprintf(stderr, "why_bench: %s\n", db_errmsg(db)), 1;
		w0[1] = now_s(CLOCK_MONOTONIC);
		c0[1] = now_s(CLOCK_PROCESS_CPUTIME_ID);
		if (why_run(L.w, &r, &e))
			return fprintf(stderr, "why_bench: %s\n", e.buf), 1;
		w0[2] = now_s(CLOCK_MONOTONIC);
		c0[2] = now_s(CLOCK_PROCESS_CPUTIME_ID);
		bool path = !why_load_cpath(&L, &r, &c, NULL);
		w0[3] = now_s(CLOCK_MONOTONIC);
		c0[3] = now_s(CLOCK_PROCESS_CPUTIME_ID);
		if (why_load_store(db, &L, &r, path ? &c : NULL, its, nits))
			return fprintf(stderr, "why_bench: %s\n", db_errmsg(db)), 1;
		w0[4] = now_s(CLOCK_MONOTONIC);
		c0[4] = now_s(CLOCK_PROCESS_CPUTIME_ID);
		for (int p = 0; p < P_ALL; p++) {
			wall[p][k] = w0[p + 1] - w0[p];
			cpu[p][k] = c0[p + 1] - c0[p];
		}
		wall[P_ALL][k] = w0[4] - w0[0];
		cpu[P_ALL][k] = c0[4] - c0[0];
		kern[k] = L.seconds_kernels;
		if (!k)
			printf("# %zu iterations, %zu traces, %zu ops, %zu kernels read; %zu p2p "
			       "transfers, %zu kernels, %zu collective instances, %zu critical path "
			       "segments; clock error %lld ns\n",
			       nits, L.ntraces, L.nops, L.nkernels, r.np2p, r.nkernels, r.ncolls,
			       path ? c.nseg : 0, (long long)r.clock_error_ns);
		if (path)
			why_cpath_release(&c);
		why_result_release(&r);
		why_load_release(&L);
		strbuf_release(&e);
	}
	printf("why_read_kernels_s %.3f s\n", median(kern, runs));
	for (int p = 0; p < P_N; p++) {
		printf("why_%s_s %.3f s\n", phase[p], median(wall[p], runs));
		printf("why_%s_cpu_s %.3f s\n", phase[p], median(cpu[p], runs));
	}
	topo_release(&t);
	db_close(db);
	return 0;
}
