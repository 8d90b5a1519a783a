/* agg_compare.h — ppagg's comparison of its run with a baseline run
 * (`ppagg --compare OTHER.db`, docs/compare.md).
 *
 * agg_compare_run() runs after the other analyses, on every ppagg run: it
 * records the shape of this run's job (agg_shape, what a later comparison
 * with this file reads), and with a baseline opens it read-only (any
 * schema version; never changed), reads both runs' numbers through
 * storage/db_compare.h — the new run's from the rows this run has just
 * stored, so that both sides are read alike — compares them
 * (agg_compare_calc.h) and rewrites the comparison's views in one
 * transaction. Without a baseline those views are emptied: they never
 * hold a comparison that is not this run's.
 *
 * For the report (report/report_compare.c): state says what there is;
 * when AGG_CMP_DONE, r is the engine's result, keys its names, and the
 * iterations compared are listed.
 */
#ifndef AGG_COMPARE_H
#define AGG_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "agg_compare_calc.h"
#include "util/strbuf.h"

struct agg_iter;
struct agg_vpp;
struct db;
struct topology;

enum agg_cmp_state {
	AGG_CMP_NONE = 0, /* no --compare: nothing compared, the views emptied */
	AGG_CMP_FAILED,   /* a baseline was given but cannot be compared: why */
	AGG_CMP_DONE      /* r holds the comparison */
};

/* What to compare with, and the thresholds (docs/compare.md). */
struct agg_compare_opts {
	const char *baseline; /* --compare; NULL: none */
	char **iterations;    /* --compare-iterations: numbers or folder names */
	int niterations;      /* 0: the baseline's aggregated iterations */
	double threshold;     /* compare.regression_threshold (0.05) */
	double noise_floor;   /* compare.noise_floor (0.03) */
	double min_share;     /* compare.min_share (0.01) */
};
#define AGG_COMPARE_THRESHOLD 0.05
#define AGG_COMPARE_NOISE_FLOOR 0.03
#define AGG_COMPARE_MIN_SHARE 0.01

struct agg_compare {
	enum agg_cmp_state state;
	const char *baseline;                /* as given (borrowed from the options) */
	int baseline_version;                /* its schema version */
	struct strbuf why;                   /* AGG_CMP_FAILED: why */
	struct strbuf base_iters, new_iters; /* "1, 2, 3" */
	struct cmp_keys keys;
	struct cmp_result r;
	struct cmp_params params;
	double seconds; /* reading both runs, comparing, storing */
};

void agg_compare_init(struct agg_compare *c);
void agg_compare_release(struct agg_compare *c);

/* Records this run's shape (its database db at db_path, its n iterations
 * its, topology t, the VPP it decided) and, with o->baseline, compares with it and stores the
 * comparison; without, empties the comparison's views. A baseline that
 * cannot be opened, is this run's own database, or holds none of the
 * iterations asked for is AGG_CMP_FAILED with why (the caller says so and
 * marks the run partial); what the baseline's version lacks is compared
 * without it and listed in r.missing. Returns 0, or PP_EDB with
 * db_errmsg(db) when this run's database fails. */
int agg_compare_run(struct db *db, const char *db_path, const struct agg_iter *its, size_t n,
		    const struct topology *t, const struct agg_vpp *vpp,
		    const struct agg_compare_opts *o, struct agg_compare *c);

#endif
