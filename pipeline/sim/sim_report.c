/* sim_report.c — see sim_report.h. */
#include "sim_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chart/gantt.h"
#include "util/pp.h"
#include "util/strbuf.h"

const char *sim_fmt_double(double d, char *buf, size_t len)
{
	if (d == floor(d) && fabs(d) < 1e15) { /* integral: exact as %.0f */
		snprintf(buf, len, "%.0f", d == 0 ? 0.0 : d);
		return buf;
	}
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	return buf;
}

void sim_report_table(FILE *out, const struct sim_config *cfg, const struct sim_result *res)
{
	char a[32], b[32], c[32];
	fprintf(out, "%s, %d devices, %d stages, %d micro-batches, p2p %s, %s model%s\n\n",
		sim_strategy_name(cfg->strategy), cfg->devices, cfg->stages, cfg->microbatches,
		sim_fmt_double(cfg->p2p, a, sizeof(a)), sim_model_name(cfg->model),
		cfg->warmup == SCHED_LEGACY ? ", legacy warm-up" : "");
	fprintf(out, "%6s %14s %14s %8s\n", "device", "busy", "idle", "bubble");
	for (int d = 0; d < res->ndevices; d++) {
		const struct sim_device *dv = &res->devices[d];
		fprintf(out, "%6d %14s %14s %7.2f%%\n", d, sim_fmt_double(dv->busy, a, sizeof(a)),
			sim_fmt_double(dv->idle, b, sizeof(b)), 100.0 * dv->bubble);
	}
	fprintf(out, "\nmakespan: %s\n", sim_fmt_double(res->makespan, a, sizeof(a)));
	fprintf(out,
		"reference-style bubble rate, (makespan - ideal) / ideal: %s "
		"(ideal %s)\n",
		sim_fmt_double(res->reference_bubble_rate, b, sizeof(b)),
		sim_fmt_double(res->ideal, c, sizeof(c)));
}

void sim_report_json(FILE *out, const struct sim_config *cfg, const struct sim_result *res)
{
	char a[32], b[32], c[32];
	fprintf(out,
		"{\"strategy\":\"%s\",\"model\":\"%s\",\"warmup\":\"%s\","
		"\"num_devices\":%d,\"num_stages\":%d,\"num_microbatches\":%d,\"p2p\":%s,",
		sim_strategy_name(cfg->strategy), sim_model_name(cfg->model),
		sched_rule_name(cfg->warmup), cfg->devices, cfg->stages, cfg->microbatches,
		sim_fmt_double(cfg->p2p, a, sizeof(a)));
	fprintf(out,
		"\"makespan\":%s,\"ideal\":%s,\"reference_bubble_rate\":%s,\n"
		"\"devices\":[",
		sim_fmt_double(res->makespan, a, sizeof(a)),
		sim_fmt_double(res->ideal, b, sizeof(b)),
		sim_fmt_double(res->reference_bubble_rate, c, sizeof(c)));
	for (int d = 0; d < res->ndevices; d++) {
		const struct sim_device *dv = &res->devices[d];
		fprintf(out, "%s\n {\"device\":%d,\"busy\":%s,\"idle\":%s,\"bubble\":%s}",
			d ? "," : "", d, sim_fmt_double(dv->busy, a, sizeof(a)),
			sim_fmt_double(dv->idle, b, sizeof(b)),
			sim_fmt_double(dv->bubble, c, sizeof(c)));
	}
	fputs("],\n\"ops\":[", out);
	for (size_t i = 0; i < res->nops; i++) {
		const struct sim_op *o = &res->ops[i];
		fprintf(out,
			"%s\n {\"device\":%d,\"stage\":%d,\"batch\":%d,\"type\":\"%s\","
			"\"start\":%s,\"end\":%s}",
			i ? "," : "", o->device, o->stage, o->batch, sim_op_type_name(o->type),
			sim_fmt_double(o->start, a, sizeof(a)),
			sim_fmt_double(o->end, b, sizeof(b)));
	}
	fputs("]}\n", out);
}

/* Colours per op type, light to dark for chunks 0..3 (seed-like hues). */
static const char *const colors[SIM_NTYPES][4] = {
	{ "#82a9e5", "#4f7fcc", "#2c5aa0", "#1b3a6b" }, /* F: blue */
	{ "#f5a8c0", "#e0708f", "#b8476a", "#7f2a45" }, /* B: pink */
	{ "#f2c46d", "#dc9a2e", "#a86f12", "#6e4708" }, /* D: amber */
	{ "#8fd19e", "#4fae66", "#2e7d43", "#1a4d28" }, /* W: green */
};
static const char *const type_names[SIM_NTYPES] = { "forward", "backward", "backward_D (input)",
						    "backward_W (weight)" };

/* Which of a device's stages (0-based chunk) a stage is. */
static int chunk_of(const struct sim_config *cfg, int stage, int device)
{
	switch (cfg->strategy) {
	case SIM_DUALPIPE:
	case SIM_DUALPIPE_V: return stage == device ? 0 : 1;
	default: return stage / cfg->devices;
	}
}

int sim_report_chart(const struct sim_config *cfg, const struct sim_result *res, const char *prefix,
		     bool render, struct strbuf *err)
{
	struct gantt *g = gantt_new();
	char title[256], label[32], hover[160], a[32], b[32];
	int nchunks = cfg->strategy == SIM_DUALPIPE || cfg->strategy == SIM_DUALPIPE_V
			      ? 2
			      : cfg->stages / cfg->devices;
	int cls[SIM_NTYPES][4];
	bool used[SIM_NTYPES] = { false };
	int rc;

	if (nchunks > 4)
		nchunks = 4;
	snprintf(title, sizeof(title),
		 "%s: %d devices, %d stages, %d micro-batches, "
		 "makespan %.6g, %s model",
		 sim_strategy_name(cfg->strategy), cfg->devices, cfg->stages, cfg->microbatches,
		 res->makespan, sim_model_name(cfg->model));
	gantt_set_title(g, title);
	gantt_set_xlabel(g, "Time (ms)");
	gantt_set_ylabel(g, "Device");
	for (int d = 0; d < res->ndevices; d++) {
		snprintf(label, sizeof(label), "Device %d", d);
		gantt_add_row(g, label);
	}
	for (size_t i = 0; i < res->nops; i++)
		used[res->ops[i].type] = true;
	for (int t = 0; t < SIM_NTYPES; t++)
		for (int c = 0; c < nchunks; c++) {
			cls[t][c] = -1;
			if (!used[t])
				continue;
			if (nchunks > 1)
				snprintf(label, sizeof(label), "%s %s",
					 sim_op_type_name((enum sim_op_type)t),
					 cfg->strategy == SIM_DUALPIPE ||
							 cfg->strategy == SIM_DUALPIPE_V
						 ? (c ? "(second stage)" : "(first stage)")
					 : c == 0 ? "chunk 0"
					 : c == 1 ? "chunk 1"
					 : c == 2 ? "chunk 2"
						  : "chunk 3+");
			cls[t][c] = gantt_add_class(g, nchunks > 1 ? label : type_names[t],
						    colors[t][c]);
		}
	for (size_t i = 0; i < res->nops; i++) {
		const struct sim_op *o = &res->ops[i];
		int c = chunk_of(cfg, o->stage, o->device);
		struct gantt_box box = { .row = o->device,
					 .cls = cls[o->type][c < 4 ? c : 3],
					 .x0 = o->start,
					 .x1 = o->end,
					 .y_off = 0,
					 .height = 1,
					 .label = label,
					 .hover = hover };
		if (o->paired) { /* F on top, B below, in the pair's slot */
			box.y_off = o->type == SIM_F ? 0 : 0.5;
			box.height = 0.5;
		}
		snprintf(label, sizeof(label), "%d", o->batch);
		snprintf(hover, sizeof(hover), "%s mb %d stage %d on device %d: %s - %s%s",
			 sim_op_type_name(o->type), o->batch, o->stage, o->device,
			 sim_fmt_double(o->start, a, sizeof(a)),
			 sim_fmt_double(o->end, b, sizeof(b)), o->paired ? " (overlapped)" : "");
		gantt_add_box(g, &box);
	}
	rc = gantt_write(g, prefix, render, err);
	gantt_free(g);
	return rc;
}
