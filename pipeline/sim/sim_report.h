/* sim_report.h — ppsim's outputs for one simulated schedule: the per-device
 * table, the JSON document and the Gantt chart (through gantt.h). */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sim.h"

/* Table: one line per device (busy, idle, bubble = idle / makespan), then
 * the makespan and the reference-style bubble rate, labelled as such. */
void sim_report_table(FILE *out, const struct sim_config *cfg, const struct sim_result *res);

/* One JSON object: strategy, model, num_devices, num_stages,
 * num_microbatches, p2p, makespan, ideal, reference_bubble_rate,
 * devices [{device, busy, idle, bubble}], ops [{device, stage, batch, type,
 * start, end}] (a pair is two ops with equal start and end). Doubles are
 * printed in their shortest exact form. */
void sim_report_json(FILE *out, const struct sim_config *cfg, const struct sim_result *res);

/* The Gantt chart PREFIX.gp (+ .png/.svg when render and gnuplot exist):
 * one row per device, ops coloured by type (shaded by chunk when a device
 * holds several stages), labelled with the micro-batch; an overlapped pair
 * is drawn as F over B in one slot. Returns gantt_write()'s code. */
int sim_report_chart(const struct sim_config *cfg, const struct sim_result *res, const char *prefix,
		     bool render, struct strbuf *err);

/* Formats d in the shortest "%.*g" that reads back exactly into buf. */
const char *sim_fmt_double(double d, char *buf, size_t len);

#endif
