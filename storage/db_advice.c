/* db_advice.c — the schedule advisor's rows (db_advice.h). */
#include <sqlite3.h>
#include <string.h>

#include "db_advice.h"
#include "db_int.h"
#include "util/pp.h"

enum { W_DEL_RUN, W_DEL_ROWS, W_DEL_MEM, W_RUN, W_ROW, W_MEM, W_COUNT };
static const char *const write_sql[W_COUNT] = {
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
};

static const struct db_write_table table = { write_sql, W_COUNT, W_DEL_RUN, W_DEL_MEM + 1,
					     "the advice" };

/* v, or NULL when v is NULL or "". */
static struct db_val text(const char *v)
{
	return db_text(v && *v ? v : NULL);
}

static int put_run(struct db_writer *w, const struct db_advice_run *r)
{
	const struct db_val v[] = { text(r->source ? r->source : "?"),
				    db_int(r->iterations),
				    db_int(r->first_iteration),
				    db_int(r->last_iteration),
				    db_int(r->pp),
				    db_int(r->vpp),
				    db_int(r->microbatches),
				    text(r->layers),
				    db_ns(r->measured_step_ns),
				    db_real(r->calibration_error),
				    db_int(r->calibrated),
				    text(r->calibration_note),
				    db_int_if(r->best_row >= 0, r->best_row),
				    text(r->best_note),
				    db_real(r->gib_per_unit),
				    db_real(r->common_gib),
				    db_real(r->memory_rms_gib),
				    text(r->memory_note),
				    text(r->inputs),
				    db_int(r->simulations) };
	return DB_WRITER_PUT(w, W_RUN, v, "cannot store the advice's summary");
}

static int put_row(struct db_writer *w, const struct db_advice_row *r)
{
	const struct db_val v[] = { db_int(r->row),
				    db_text(r->schedule),
				    db_text(r->kind),
				    db_int(r->vpp),
				    db_int(r->microbatches),
				    db_int_if(r->micro_batch_size > 0, r->micro_batch_size),
				    text(r->layers),
				    db_int(r->valid),
				    db_ns(r->step_ns),
				    db_ns(r->pipeline_ns),
				    db_ns(r->measured_step_ns),
				    db_real(r->delta),
				    db_real(r->bubble),
				    db_real(r->activation),
				    db_real(r->memory_gib),
				    text(r->modelled),
				    text(r->options),
				    text(r->notes),
				    db_int(r->best) };
	return DB_WRITER_PUT(w, W_ROW, v, "cannot store an advice row");
}

static int put_memory(struct db_writer *w, const struct db_advice_memory *m)
{
	const struct db_val v[] = { db_int(m->row), db_int(m->stage), db_real(m->units),
				    db_real(m->memory_gib), db_real(m->measured_gib) };
	return DB_WRITER_PUT(w, W_MEM, v, "cannot store an advice memory row");
}

int db_advice_write(struct db *db, const struct db_advice_run *run,
		    const struct db_advice_row *rows, size_t nrows,
		    const struct db_advice_memory *mem, size_t nmem)
{
	struct db_writer *w = db_writer_new(db, &table, sizeof(*w));
	if (!w)
		return PP_EDB;
	int rc = run ? put_run(w, run) : 0;
	for (size_t i = 0; i < nrows && !rc; i++)
		rc = put_row(w, &rows[i]);
	for (size_t i = 0; i < nmem && !rc; i++)
		rc = put_memory(w, &mem[i]);
	return db_writer_end(w, rc);
}
