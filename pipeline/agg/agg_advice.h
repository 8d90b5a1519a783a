/* agg_advice.h — ppagg's schedule advisor (docs/advisor.md): what another
 * pipeline schedule would give this job.
 *
 * agg_advice_run() measures the advisor's inputs (struct advise_input,
 * docs/advisor.md §1) from what ppagg loaded — the fwd/bwd steps of every
 * rank of every complete PP group (Kineto traces' steps are their compute
 * ops' GPU spans; PP-timer and Primus imports' steps are the recorded
 * calls), the iteration windows, and an import's readings (the schedule
 * call's total, peak memory) and weight-gradient calls
 * (storage/db_import.h) — runs the engine (advise/advise.h) and, unless
 * told not to, rewrites the views advice, advice_memory and
 * advice_summary. A job without a pipeline (no topology, or PP 1) gets no
 * rows and one note.
 */
#ifndef AGG_ADVICE_H
#define AGG_ADVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "advise/advise.h"
#include "util/strbuf.h"

struct agg_iter;
struct db;
struct topology;

enum agg_adv_state {
	AGG_ADV_NONE = 0, /* no pipeline: why says so */
	AGG_ADV_FAILED,   /* a pipeline, but its inputs cannot be measured or
			   * the engine refused them: why */
	AGG_ADV_DONE      /* res holds the answer */
};

struct agg_advice {
	enum agg_adv_state state;
	struct strbuf why;
	const char *source;                              /* "kineto", "pp-timer" or "primus" */
	int first_iteration, last_iteration, iterations; /* those measured */
	struct advise_input in;                          /* the measured inputs (arrays below) */
	struct advise_settings set;
	struct advise_result res; /* AGG_ADV_DONE */
	struct strbuf inputs;     /* one line: what was measured, and how much */
	struct strbuf layers;     /* "8,8,...": the job's split, or "" */
	double seconds;           /* measuring, advising and storing */
	/* the arrays in points at */
	struct advise_stat *fwd, *bwd, *wgrad;
	double *overhead, *memory;
	int *layer_split;
};

void agg_advice_init(struct agg_advice *a);
void agg_advice_release(struct agg_advice *a);

/* Runs the advisor on the n iterations its (the topology t indexed, or
 * without a source; vpp and warmup as ppagg decided) with the settings set
 * (advise_settings_load(); NULL: the defaults). The first iteration is left
 * out when it is iteration 1 and later ones are there (the warm-up). With store, the views are
 * rewritten (cleared for a job without a pipeline). Returns 0 — also when
 * there is no pipeline or the inputs cannot be measured (a->state) — or
 * PP_EDB with db_errmsg(db). */
int agg_advice_run(struct db *db, const struct agg_iter *its, size_t n, const struct topology *t,
		   int vpp, int warmup, const struct advise_settings *set, bool store,
		   struct agg_advice *a);

/* The row's one-line label: "interleave, VPP 2", "1f1b, 32 micro-batches",
 * "1f1b, layers 9,8,...,7", "current (1f1b)". */
void agg_advice_label(const struct agg_advice *a, const struct advise_row *row, struct strbuf *sb);

#endif
