/* db_advice.c — the schedule advisor's rows (db_advice.h). */
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "db_advice.h"
#include "db_int.h"
#include "util/pp.h"

enum { W_BEGIN, W_DEL_RUN, W_DEL_ROWS, W_DEL_MEM, W_RUN, W_ROW, W_MEM, W_COMMIT, W_COUNT };
static const char *const write_sql[W_COUNT] = {
	"BEGIN IMMEDIATE",
	"DELETE FROM agg_advice_run",
	"DELETE FROM agg_advice",
	"DELETE FROM agg_advice_memory",
	"INSERT INTO agg_advice_run(id, source, iterations, first_iteration, last_iteration,"
	" pp, vpp, microbatches, layers, measured_step_ns, calibration_error, calibrated,"
	" calibration_note, best_row, best_note, gib_per_unit, common_gib, memory_rms_gib,"
	" memory_note, inputs, simulations)"
	" VALUES(1,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20)",
	"INSERT INTO agg_advice(row, schedule, kind, vpp, microbatches, micro_batch_size,"
	" layers, valid, step_ns, pipeline_ns, measured_step_ns, delta, bubble,"
	" activation_memory, memory_gib, modelled, megatron_options, notes, best)"
	" VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19)",
	"INSERT INTO agg_advice_memory(row, stage, units, memory_gib, measured_gib)"
	" VALUES(?1,?2,?3,?4,?5)",
	"COMMIT",
};

static void bind_str(sqlite3_stmt *st, int i, const char *v)
{
	if (v && *v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

static void bind_run(sqlite3_stmt *st, const struct db_advice_run *r)
{
	bind_str(st, 1, r->source ? r->source : "?");
	sqlite3_bind_int64(st, 2, r->iterations);
	sqlite3_bind_int64(st, 3, r->first_iteration);
	sqlite3_bind_int64(st, 4, r->last_iteration);
	sqlite3_bind_int(st, 5, r->pp);
	sqlite3_bind_int(st, 6, r->vpp);
	sqlite3_bind_int(st, 7, r->microbatches);
	bind_str(st, 8, r->layers);
	sqlite3_bind_int64(st, 9, llround(r->measured_step_ns));
	db_bind_real(st, 10, r->calibration_error);
	sqlite3_bind_int(st, 11, r->calibrated);
	bind_str(st, 12, r->calibration_note);
	if (r->best_row >= 0)
		sqlite3_bind_int(st, 13, r->best_row);
	bind_str(st, 14, r->best_note);
	db_bind_real(st, 15, r->gib_per_unit);
	db_bind_real(st, 16, r->common_gib);
	db_bind_real(st, 17, r->memory_rms_gib);
	bind_str(st, 18, r->memory_note);
	bind_str(st, 19, r->inputs);
	sqlite3_bind_int(st, 20, r->simulations);
}

static void bind_row(sqlite3_stmt *st, const struct db_advice_row *r)
{
	sqlite3_bind_int(st, 1, r->row);
	sqlite3_bind_text(st, 2, r->schedule, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, r->kind, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 4, r->vpp);
	sqlite3_bind_int(st, 5, r->microbatches);
	if (r->micro_batch_size > 0)
		sqlite3_bind_int(st, 6, r->micro_batch_size);
	bind_str(st, 7, r->layers);
	sqlite3_bind_int(st, 8, r->valid);
	db_bind_ns(st, 9, r->step_ns);
	db_bind_ns(st, 10, r->pipeline_ns);
	sqlite3_bind_int64(st, 11, llround(r->measured_step_ns));
	db_bind_real(st, 12, r->delta);
	db_bind_real(st, 13, r->bubble);
	db_bind_real(st, 14, r->activation);
	db_bind_real(st, 15, r->memory_gib);
	bind_str(st, 16, r->modelled);
	bind_str(st, 17, r->options);
	bind_str(st, 18, r->notes);
	sqlite3_bind_int(st, 19, r->best);
}

int db_advice_write(struct db *db, const struct db_advice_run *run,
		    const struct db_advice_row *rows, size_t nrows,
		    const struct db_advice_memory *mem, size_t nmem)
{
	sqlite3 *c = db_sqlite(db);
	sqlite3_stmt *st[W_COUNT] = { 0 };
	bool open = false;
	int rc = 0;
	for (int i = 0; i < W_COUNT && !rc; i++)
		if (sqlite3_prepare_v2(c, write_sql[i], -1, &st[i], NULL) != SQLITE_OK)
			rc = db_note_sql_error(db, "cannot prepare the advisor's rows");
	if (!rc && !(rc = db_step_reset(db, st[W_BEGIN], "cannot start writing the advice")))
		open = true;
	for (int i = W_DEL_RUN; i <= W_DEL_MEM && !rc; i++)
		rc = db_step_reset(db, st[i], "cannot clear the advice");
	if (!rc && run) {
		bind_run(st[W_RUN], run);
		rc = db_step_reset(db, st[W_RUN], "cannot store the advice's summary");
	}
	for (size_t i = 0; i < nrows && !rc; i++) {
		bind_row(st[W_ROW], &rows[i]);
		rc = db_step_reset(db, st[W_ROW], "cannot store an advice row");
	}
	for (size_t i = 0; i < nmem && !rc; i++) {
		sqlite3_bind_int(st[W_MEM], 1, mem[i].row);
		sqlite3_bind_int(st[W_MEM], 2, mem[i].stage);
		db_bind_real(st[W_MEM], 3, mem[i].units);
		db_bind_real(st[W_MEM], 4, mem[i].memory_gib);
		db_bind_real(st[W_MEM], 5, mem[i].measured_gib);
		rc = db_step_reset(db, st[W_MEM], "cannot store an advice memory row");
	}
	if (!rc)
		rc = db_step_reset(db, st[W_COMMIT], "cannot commit the advice");
	if (rc && open)
		sqlite3_exec(c, "ROLLBACK", NULL, NULL, NULL);
	for (int i = 0; i < W_COUNT; i++)
		sqlite3_finalize(st[i]);
	return rc;
}
