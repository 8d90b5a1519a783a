/* primus.h — Primus `pp_data` dumps (docs/primus.md): reading and checking
 * a whole dump.
 *
 * A dump is a folder with config.json (the job's sizes) and one
 * pp_rank_<s>.json per pipeline stage: an object keyed by iteration number,
 * each iteration's value holding the schedule call's `total` (ms), the peak
 * reserved `memory` (GiB) and, per forward, backward and (zero-bubble
 * schedules) weight-gradient call, its start and end (ms since the rank's
 * schedule start) and, in newer dumps, its micro-batch and model chunk.
 * primus_load() reads and checks all of it before anything is stored, and
 * labels every call with its (micro-batch, chunk): recorded, or Megatron's
 * order (rr_vpp_label()) for old dumps. primus_run() (batch.h) imports it.
 */
#ifndef PRIMUS_H
#define PRIMUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

/* config.json; 0 where a size is absent (pp and vpp are always >= 1
 * after primus_load()). */
struct primus_config {
	int world, dp, tp, ep, pp, vpp;
	int microbatches; /* num_mbs; 0: absent (counted from the calls) */
	int iterations;   /* train_iters; 0: absent */
};

/* One forward, backward or weight-gradient call. */
struct primus_call {
	int64_t start_ns, end_ns; /* since the rank's schedule start */
	int mb, chunk;
};

enum primus_kind { PRIMUS_FWD, PRIMUS_BWD, PRIMUS_WGRAD, PRIMUS_NKINDS };

/* One iteration of one stage, its calls in recorded order. */
struct primus_iter {
	int64_t iteration;
	bool has_total;
	int64_t total_ns;
	bool has_memory;
	double memory_gib;
	struct primus_call *calls[PRIMUS_NKINDS];
	size_t ncalls[PRIMUS_NKINDS];
};

struct primus_dump {
	struct primus_config cfg;
	int microbatches;       /* per iteration: num_mbs, or counted */
	bool labelled;          /* the calls carried their micro-batch and chunk */
	bool has_wgrad;         /* weight-gradient calls were recorded */
	int64_t *iters;         /* the iteration numbers, ascending */
	size_t niters;          /* the same in every stage's file */
	struct primus_iter *at; /* [stage * niters + i] */
	size_t unknown_keys;    /* keys of an iteration not understood */
	char first_unknown[64];
};

/* Reads and checks the dump in dir. Returns 0, or PP_EIO / PP_EPARSE /
 * PP_EINVAL with "PATH: where: what is wrong" appended to err (the file,
 * then a line and byte offset, or the iteration and key, or the call). *d
 * is the caller's to release with primus_dump_release(), also on failure. */
int primus_load(const char *dir, struct primus_dump *d, struct strbuf *err);
void primus_dump_release(struct primus_dump *d);

static inline const struct primus_iter *primus_at(const struct primus_dump *d, int stage, size_t i)
{
	return &d->at[(size_t)stage * d->niters + i];
}

#endif
