/* db_advice.h — the rows of ppagg's schedule advisor (docs/advisor.md §6):
 * views advice, advice_memory and advice_summary.
 *
 * Plain structs (the advisor's own types are pipeline/advise/'s, which
 * storage does not include); NaN stands for NULL, times are ns, stored
 * rounded. db_advice_write() replaces the whole of the previous run's rows
 * in one IMMEDIATE transaction, so readers never see half of it; with
 * run NULL it only clears them (a job without a pipeline). Returns 0 or
 * PP_EDB with db_errmsg() (not sticky). measured_step_ns is never NULL:
 * a summary or row whose measured step is not a finite number of ns fails
 * the write (PP_EDB), and the previous rows stay.
 */
#ifndef DB_ADVICE_H
#define DB_ADVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"

/* The summary row (view advice_summary). */
struct db_advice_run {
	const char *source; /* "kineto", "pp-timer", "primus" */
	int64_t iterations, first_iteration, last_iteration;
	int pp, vpp, microbatches;
	const char *layers; /* "8,8,8,8" or NULL */
	double measured_step_ns, calibration_error;
	bool calibrated;
	const char *calibration_note;
	int best_row; /* -1: none claimed */
	const char *best_note;
	double gib_per_unit, common_gib, memory_rms_gib; /* NaN: no fit */
	const char *memory_note, *inputs;
	int simulations;
};

/* One schedule (view advice). */
struct db_advice_row {
	int row;              /* 0 = the calibration replay */
	const char *schedule; /* "current", "1f1b", "interleave", ... */
	const char *kind;     /* "current", "schedule", "microbatches", "layers" */
	int vpp, microbatches;
	int micro_batch_size; /* 0: unknown */
	const char *layers;   /* NULL unless the row moves layers */
	bool valid;
	double step_ns, pipeline_ns, measured_step_ns, delta, bubble, activation, memory_gib;
	const char *modelled, *options, *notes; /* NULL or "" for none */
	bool best;
};

/* One stage of one row (view advice_memory). */
struct db_advice_memory {
	int row, stage;
	double units, memory_gib, measured_gib;
};

int db_advice_write(struct db *db, const struct db_advice_run *run,
		    const struct db_advice_row *rows, size_t nrows,
		    const struct db_advice_memory *mem, size_t nmem);

#endif
