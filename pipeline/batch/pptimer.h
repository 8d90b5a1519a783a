/* pptimer.h — Megatron PP-timer dumps (docs/semantics.md §10): file names and contents.
 *
 * The PP-timer patch writes one flat JSON object per rank to
 * event_times_PP{p}_VPP{v}_TPxCPxDP_rank_{r}_pp_rank_{s}_rank_{g}.json with
 * keys forward-{mb}-start/-end and backward-{mb}-start/-end (with virtual
 * stages forward-{chunk}-{mb}-start ...) and total-execution-time; values
 * are milliseconds since a per-rank start event. pptimer_run() (batch.h)
 * imports a folder of them into the database as steps without kernels.
 */
#ifndef PPTIMER_H
#define PPTIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

struct pptimer_name {
	int pp;          /* PP size in the name */
	int vpp;         /* VPP size; 1 for "VPPNone" */
	bool vpp_none;   /* the name says VPPNone */
	int64_t dp_rank; /* the TPxCPxDP rank: 0 = the first replica */
	int pp_rank;     /* pipeline stage (rank within the PP group) */
	int64_t rank;    /* global rank */
};

/* Parses a file's base name. Returns 0, or PP_EPARSE with the reason
 * (which part does not match) appended to why. */
int pptimer_parse_name(const char *base, struct pptimer_name *out, struct strbuf *why);

/* One forward or backward step of one rank. */
struct pptimer_step {
	int phase; /* 1 forward, 2 backward */
	int chunk; /* model chunk, 0 without virtual stages */
	int mb;    /* micro-batch */
	bool has_start, has_end;
	int64_t start_ns, end_ns; /* ns since the rank's start event */
};

struct pptimer_file {
	struct pptimer_step *steps; /* sorted by (phase, chunk, mb) */
	size_t n;
	bool has_total;
	int64_t total_ns;    /* total-execution-time */
	size_t unknown_keys; /* keys that are not step events */
	char first_unknown[64];
};

/* Reads a dump. vpp: whether keys carry a chunk (forward-{chunk}-{mb}-...).
 * Returns 0, PP_EIO or PP_EPARSE (message appended to err). */
int pptimer_read(const char *path, bool vpp, struct pptimer_file *out, struct strbuf *err);
void pptimer_file_release(struct pptimer_file *f);

#endif
