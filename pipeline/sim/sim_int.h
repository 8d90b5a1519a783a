/* sim_int.h — internals shared by sim.c (validation, timing, results) and
 * sim_order.c (the per-strategy op orders). Not part of the public API. */
#ifndef SIM_INT_H
#define SIM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim.h"

/* The queues are stored as the result's op array itself: device 0's ops
 * first, each device's in queue order. A queue entry is one op, or two
 * consecutive ops with `paired` set (the forward, then the whole backward)
 * for an overlapped pair. */
struct sim_sched {
	const struct sim_config *cfg;
	int p, N, m, v, g;
	bool split;         /* zb1p, dualpipe, dualpipe_v: D/W ops */
	bool reference;     /* cfg->model == SIM_MODEL_REFERENCE */
	struct sim_op *ops; /* every device's queue, device 0 first */
	size_t n, cap;
	size_t *dev_start;  /* p + 1 offsets into ops */
	int32_t *idx;       /* (batch * N + stage) * SIM_NTYPES + type ->
				* op index + 1, 0 when not scheduled */
	int cur_dev;        /* the device being generated */
	int rc;             /* first error (sticky) */
	struct strbuf *err; /* the caller's, or NULL */
};

/* Index of op (b, s, t) in S->ops, or -1. b, s must be in range. */
static inline int32_t sim_lookup(const struct sim_sched *S, int b, int s, int t)
{
	return S->idx[((size_t)b * (size_t)S->N + (size_t)s) * SIM_NTYPES + (size_t)t] - 1;
}

/* Records the first error; returns it. */
int sim_fail(struct sim_sched *S, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Appends a single op / an (F, B) pair to the current device's queue.
 * Errors (batch out of range, stage not on the device, op already
 * scheduled, allocation) are sticky in S->rc. */
void sim_emit(struct sim_sched *S, int b, int s, int t);
void sim_emit_pair(struct sim_sched *S, int bf, int sf, int bb, int sb);

/* Generates device d's queue for S->cfg->strategy (sim_order.c). */
void sim_order_device(struct sim_sched *S, int d);

#endif
