/* sim_input.h — assembles a struct sim_config from ppsim's inputs: the
 * [sim] section of the INI config, a JSON config as pipeline.py or PP-Schedule-Visualization
 * write it, and
 * command-line flags, applied in that order (later wins).
 *
 * Every setting goes through sim_input_set(key, text) with a canonical key
 * (the INI key names, see config.example.ini [sim]); times are one number
 * for every stage or a list with one number per stage (commas or spaces).
 * sim_input_finish() fills in defaults (devices from stages or back) and
 * resolves the time lists against the number of stages.
 */
#ifndef SIM_INPUT_H
#define SIM_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "sim.h"

struct config;
struct strbuf;

enum { SIM_T_F, SIM_T_B, SIM_T_D, SIM_T_W, SIM_T_FB, SIM_T_N };

/* Times of one op type as given: all stages, a list, or a stage map. */
struct sim_times_in {
	int kind; /* 0 absent, 1 one value for all, 2 list, 3 map */
	double all;
	double *v;  /* list values or map values */
	int *stage; /* map keys (kind 3) */
	int n;
};

struct sim_input {
	struct sim_config cfg; /* the result, valid after finish */
	bool have_devices, have_stages, have_microbatches;
	struct sim_times_in t[SIM_T_N];
	double *arr[SIM_T_N]; /* resolved per-stage arrays (owned) */
	char *output;         /* output prefix or NULL (owned) */
	bool no_visualization;
	bool json;
};

void sim_input_init(struct sim_input *in);
void sim_input_release(struct sim_input *in);

/* Sets one canonical key from text. Keys: strategy, model, devices, stages,
 * microbatches, group_size, p2p, forward, backward, backward_d, backward_w,
 * overlapped, output, visualization (bool). Returns 0, PP_ENOTFOUND for an
 * unknown key, PP_EINVAL for a bad value (message appended to err). */
int sim_input_set(struct sim_input *in, const char *key, const char *text, struct strbuf *err);

/* Applies the [sim] section of cfg (keys as above, "sim.<key>"). */
int sim_input_load_ini(struct sim_input *in, const struct config *cfg, struct strbuf *err);

/* Applies a JSON config file: pipeline.py's keys (num_stages, num_batches,
 * forward_times, backward_times, output_file, p2p_time), PP-Schedule-Visualization's
 * (num_devices, p2p_latency, strategy, microbatch_group_size_per_vp_stage,
 * op_times {forward, backward, backward_D, backward_W,
 * overlapped_forward_backward} as number, list or {"stage": time}) and our
 * own canonical keys. Unknown keys are warned about. */
int sim_input_load_json(struct sim_input *in, const char *path, struct strbuf *err);

/* Applies a YAML config of the subset pipeline.py documents: top-level
 * "key: value" lines, lists as "- item" lines or "[a, b]", and op_times
 * with one nested level; same keys as the JSON config. */
int sim_input_load_yaml(struct sim_input *in, const char *path, struct strbuf *err);

/* True when the file's first non-blank byte is '{' (a JSON config). */
bool sim_input_is_json(const char *path);

/* Defaults and resolution; then in->cfg is ready for sim_run(). */
int sim_input_finish(struct sim_input *in, struct strbuf *err);

#endif
