/* whatif_bench — times the what-if analysis (scripts/bench.d/whatif.sh).
 *
 *   whatif_bench [--ar DIR] [--runs N] [--pp P --dp D --mb M --steps S]
 *                [--write-csv FILE]
 *
 * AR: reading trace-AR.csv.gz (+ meta, schema) and the whole analysis
 * (whatif_new + whatif_run), separately and together. Synthetic: a 1F1B job
 * (default PP 16 × DP 64, 64 micro-batches, 10 iterations: 1,024 workers)
 * generated in memory by tests/unit/whatif/wi_synth.c, then the analysis.
 * Each figure is the median of N runs (default 5), wall and CPU time of
 * this process; prints "name value unit" lines. Measures; never asserts.
 * --write-csv also writes the synthetic job as an op trace (times in
 * seconds, as the format has them), for timing it through the commands.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/bench/bench.h"
#include "util/pp.h"
#include "whatif/wi_optrace.h"
#include "whatif/whatif.h"
#include "util/strbuf.h"
#include "wi_synth.h"

static int read_ar(const char *dir, struct wi_table *t)
{
	char p[4096];
	struct strbuf err = STRBUF_INIT;
	wi_table_init(t);
	snprintf(p, sizeof(p), "%s/trace-AR.csv.gz", dir);
	strbuf_reset(&err);
	if (wi_optrace_read(p, t, &err))
		goto fail;
	snprintf(p, sizeof(p), "%s/meta-AR.yaml", dir);
	strbuf_reset(&err);
	if (wi_optrace_read_meta(p, &t->meta, &err))
		goto fail;
	t->has_meta = true;
	snprintf(p, sizeof(p), "%s/trace-AR.schema.json", dir);
	strbuf_reset(&err);
	if (wi_optrace_read_schema(p, t, &err))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "whatif_bench: %s\n", err.buf);
	strbuf_release(&err);
	return -1;
}

/* One analysis; *s = S for the record. */
static int analyse(const struct wi_table *t, double *s)
{
	struct strbuf err = STRBUF_INIT;
	struct whatif *e;
	struct whatif_result r;
	strbuf_reset(&err);
	if (whatif_new(t, NULL, &e, &err)) {
		fprintf(stderr, "whatif_bench: %s\n", err.buf);
		strbuf_release(&err);
		return -1;
	}
	whatif_run(e, &r);
	*s = r.s;
	whatif_result_release(&r);
	whatif_free(e);
	return 0;
	strbuf_release(&err);
}

/* The table as an op-trace CSV. */
static int write_csv(const struct wi_table *t, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return -1;
	}
	fputs("dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc\n", f);
	for (size_t i = 0; i < t->n; i++) {
		const struct wi_op *o = &t->ops[i];
		fprintf(f, "%d,%d,%d,%lld,%s,%.9f,%.9f,%d,%d,%d,%d\n", o->dp_rank, o->stage,
			(int)o->rank, (long long)o->step, op_type_name(o->optype),
			(double)o->start_ns / 1e9, (double)(o->end_ns - o->start_ns) / 1e9,
			(int)o->seq_id, o->mc, o->mb_id, o->gmc);
	}
	return fclose(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
	const char *ar = NULL, *csv = NULL;
	int runs = 5;
	struct wi_synth c;
	wi_synth_defaults(&c, 16, 64, 64, 10);
	c.seed = 3;
	wi_synth_slow(&c, 1.3, 5, 7);
	const struct bench_opt opts[] = {
		{ "--ar", NULL, &ar },         { "--runs", &runs, NULL },
		{ "--pp", &c.pp, NULL },       { "--dp", &c.dp, NULL },
		{ "--mb", &c.mb, NULL },       { "--steps", &c.steps, NULL },
		{ "--write-csv", NULL, &csv },
	};
	bench_args(argc, argv, opts, sizeof(opts) / sizeof(opts[0]));
	if (runs < 1 || runs > 99)
		runs = 5;
	double w[3][99], u[3][99], s = 0;
	if (ar) {
		for (int k = 0; k < runs; k++) {
			struct wi_table t;
			double w0 = (double)pp_now_ns() / 1e9, c0 = bench_cpu_s();
			if (read_ar(ar, &t))
				return 1;
			double w1 = (double)pp_now_ns() / 1e9, c1 = bench_cpu_s();
			if (analyse(&t, &s))
				return 1;
			double w2 = (double)pp_now_ns() / 1e9, c2 = bench_cpu_s();
			w[0][k] = w1 - w0, u[0][k] = c1 - c0;
			w[1][k] = w2 - w1, u[1][k] = c2 - c1;
			w[2][k] = w2 - w0, u[2][k] = c2 - c0;
			wi_table_release(&t);
		}
		static const char *const names[3] = { "read", "analysis", "total" };
		for (int i = 0; i < 3; i++) {
			printf("whatif_ar_%s_ms %.1f ms\n", names[i],
			       1e3 * cmp_median(w[i], (size_t)runs));
			printf("whatif_ar_%s_cpu_ms %.1f ms\n", names[i],
			       1e3 * cmp_median(u[i], (size_t)runs));
		}
		printf("whatif_ar_slowdown %.4f x\n", s);
	}
	struct wi_table t;
	wi_table_init(&t);
	wi_synth_job(&t, &c);
	for (int k = 0; k < runs; k++) {
		double w0 = (double)pp_now_ns() / 1e9, c0 = bench_cpu_s();
		if (analyse(&t, &s))
			return 1;
		w[0][k] = (double)pp_now_ns() / 1e9 - w0;
		u[0][k] = bench_cpu_s() - c0;
	}
	printf("whatif_synth_workers %d workers\n", c.pp * c.dp);
	printf("whatif_synth_ops %zu ops\n", t.n);
	printf("whatif_synth_analysis_s %.3f s\n", cmp_median(w[0], (size_t)runs));
	printf("whatif_synth_analysis_cpu_s %.3f s\n", cmp_median(u[0], (size_t)runs));
	printf("whatif_synth_slowdown %.4f x\n", s);
	if (csv && write_csv(&t, csv))
		return 1;
	wi_table_release(&t);
	return 0;
}
