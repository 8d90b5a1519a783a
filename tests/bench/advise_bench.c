/* advise_bench — times the schedule advisor (scripts/bench.d/advise.sh).
 *
 *   advise_bench [--pp P] [--mb M] [--layers L] [--runs N]
 *
 * One job of P stages (default 16: a 1,024-rank job is PP 16 x DP 64; the
 * advisor sees its stages, not its ranks), M micro-batches (64), L layers a
 * stage (8), per-stage times with a slow last stage, memory readings; the
 * whole advise_run() (every alternative the layer count allows). Prints the
 * median wall and CPU time of N runs (5), the rows and the simulations.
 * Measures; never asserts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise/advise.h"
#include "tests/bench/bench.h"
#include "util/pp.h"
#include "util/strbuf.h"

int main(int argc, char **argv)
{
	int pp = 16, mb = 64, layers = 8, runs = 5;
	const struct bench_opt opts[] = {
		{ "--pp", &pp, NULL },
		{ "--mb", &mb, NULL },
		{ "--layers", &layers, NULL },
		{ "--runs", &runs, NULL },
	};
	bench_args(argc, argv, opts, sizeof(opts) / sizeof(opts[0]));
	if (pp < 1 || mb < 1 || layers < 1 || runs < 1) {
		fprintf(stderr, "advise_bench: bad arguments\n");
		return 2;
	}
	struct advise_stat *f = xcalloc((size_t)pp, sizeof(*f)),
			   *b = xcalloc((size_t)pp, sizeof(*b));
	int *lay = xcalloc((size_t)pp, sizeof(int));
	double *over = xcalloc((size_t)pp, sizeof(double)),
	       *mem = xcalloc((size_t)pp, sizeof(double));
	for (int s = 0; s < pp; s++) {
		double slow = s == pp - 1 ? 1.15 : 1.0 + 0.01 * (s % 3);
		f[s] = (struct advise_stat){ 7.5e6 * layers * slow, NAN, NAN, 100 };
		b[s] = (struct advise_stat){ 8.7e6 * layers * slow, NAN, NAN, 100 };
		lay[s] = layers;
		over[s] = 0.8e6;
		mem[s] = 40 + 0.9 * layers * (pp - s);
	}
	struct advise_input in;
	struct advise_settings set;
	advise_input_init(&in);
	advise_settings_init(&set);
	in.pp = pp;
	in.microbatches = mb;
	in.layers = lay;
	in.fwd = f;
	in.bwd = b;
	in.overhead_ns = over;
	in.p2p_measured = true;
	in.outside_measured = true;
	in.memory_gib = mem;
	in.step_ns = 1e12;
	double *wall = xcalloc((size_t)runs, sizeof(double)),
	       *cpu = xcalloc((size_t)runs, sizeof(double));
	size_t rows = 0;
	int sims = 0;
	for (int r = 0; r < runs; r++) {
		struct advise_result res;
		struct strbuf err = STRBUF_INIT;
		double w0 = (double)pp_now_ns() / 1e9, c0 = bench_cpu_s();
		if (advise_run(&in, &set, &res, &err)) {
			fprintf(stderr, "advise_bench: %s\n", err.buf);
			return 3;
		}
		wall[r] = (double)pp_now_ns() / 1e9 - w0;
		cpu[r] = bench_cpu_s() - c0;
		rows = res.nrows;
		sims = res.simulations;
		advise_result_release(&res);
		strbuf_release(&err);
	}
	printf("advise_pp%d_mb%d_l%d_rows %zu rows\n", pp, mb, layers, rows);
	printf("advise_pp%d_mb%d_l%d_simulations %d sims\n", pp, mb, layers, sims);
	printf("advise_pp%d_mb%d_l%d_s %.4f s\n", pp, mb, layers, cmp_median(wall, (size_t)runs));
	printf("advise_pp%d_mb%d_l%d_cpu_s %.4f s\n", pp, mb, layers,
	       cmp_median(cpu, (size_t)runs));
	PP_FREE_ALL(f, b, lay, over, mem, wall, cpu);
	return 0;
}
