/* gen_write.h — writes one rank's simulated iteration as a Kineto trace
 * (docs/semantics.md §3): header with deviceProperties and distributedInfo, metadata,
 * python_function / user_annotation / cpu_op slices, launches with
 * correlations, GPU events, ac2g and fwdbwd flows, and on request the
 * nasty real-world quirks (GN_* in gen_model.h).
 *
 * Output is streamed through one large buffer with hand-written number
 * formatting: the writer's speed bounds ppgen's (1 GB in a few seconds).
 */
#ifndef GEN_WRITE_H
#define GEN_WRITE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gen_model.h"

struct gen_write_opts {
	const char *path; /* file to create (its traceName) */
	int dirfd;        /* folder to create it in, under the last
	                               * component of path (safefile.h) */
	bool gzip;        /* gzip-compress the output */
	bool relative;    /* ts relative to baseTimeNanoseconds */
	unsigned nasty;   /* GN_* flags */
	const struct gen_layout *lay;
	int gpus_per_host; /* device = rank % gpus_per_host */
	int iteration;
	int64_t base_ns;                   /* baseTimeNanoseconds (relative only) */
	const volatile sig_atomic_t *stop; /* NULL, or set by a signal handler:
	                               * the write ends at its next buffer
	                               * flush (8 MB), nothing left behind */
};

/* Writes r's trace to o->path. Returns 0, PP_EINTR when *o->stop was set
 * (no file, no temporary file), or PP_EIO with a message appended to err. */
int gen_write_trace(const struct gen_rank *r, const struct gen_write_opts *o, struct strbuf *err);

#endif
