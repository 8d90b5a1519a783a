/* trace_read.h — streaming reader of one Kineto (PyTorch profiler) trace.
 *
 * Reads a plain or gzip file (detected by magic bytes) in bounded memory and
 * yields the events of `traceEvents` one at a time, plus the header keys that
 * sit around it (before or after). Contract of every yielded event:
 *   - strings are unescaped (\uXXXX and surrogate pairs to UTF-8), NUL-
 *     terminated, and valid only until the next trace_reader_next() call;
 *   - times are int64 nanoseconds read exactly from the number's decimal text
 *     (µs × 1000), *as written in the file*: add trace_header.base_time_ns
 *     (known for sure only after EOF) to get absolute time;
 *   - ids larger than int64 or given as strings are kept as text.
 * Memory: constant in file size, except that one event's text (e.g. a 10 MB
 * kernel name) must fit in the buffer, which grows up to a cap.
 */
#ifndef TRACE_READ_H
#define TRACE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trace_reader;

/* A string view into reader-owned memory. */
struct pp_sv {
	const char *p; /* NUL-terminated; "" when absent; p[0..8) is readable
			* even when n < 7 (a reader of a word need not check) */
	size_t n;
};

/* pid, tid and flow ids: integer or string in the wild. */
struct trace_id {
	int64_t num;      /* the integer value, 0 when is_str */
	bool is_str;      /* given as a string, or an integer beyond int64 */
	struct pp_sv str; /* the text when is_str */
};

/* Bits of trace_event.has: which optional fields were present. */
enum {
	TE_TS = 1u << 0,
	TE_DUR = 1u << 1,
	TE_ID = 1u << 2,
	TE_CORRELATION = 1u << 3,
	TE_EXTERNAL_ID = 1u << 4,
	TE_STREAM = 1u << 5,
	TE_DEVICE = 1u << 6,
	TE_PID = 1u << 7,
	TE_TID = 1u << 8,
	TE_GROUP_SIZE = 1u << 9,
	TE_IN_NELEMS = 1u << 10,
	TE_OUT_NELEMS = 1u << 11,
	TE_ARGS = 1u << 12, /* an "args" object was present */
	TE_SORT_INDEX = 1u << 13
};

enum { TRACE_CAT_KEYS = 256 }; /* the largest trace_event.cat_key */

struct trace_event {
	uint64_t offset;  /* byte offset of the event's '{' in the (decompressed) text */
	unsigned has;     /* TE_* bits */
	char ph;          /* 'X', 'M', 's', 'f', 'i', ...; 0 when absent */
	char bp;          /* 'e' or 0 */
	uint16_t cat_key; /* 0, or a number in 1..TRACE_CAT_KEYS that this
			    * reader gives only to events whose cat is the
			    * same text, so a consumer may count categories by
			    * it (not every such event gets it: 0 says nothing) */
	struct pp_sv cat; /* as written; compare case-insensitively */
	struct pp_sv name;
	struct trace_id pid, tid, id;
	int64_t ts_ns, dur_ns;
	/* args */
	int64_t correlation, external_id, stream, device;
	int64_t group_size, in_nelems, out_nelems, sort_index;
	struct pp_sv arg_name;   /* args.name (metadata events) */
	struct pp_sv pg_name;    /* "Process Group Name" */
	struct pp_sv pg_desc;    /* "Process Group Description" */
	struct pp_sv pg_ranks;   /* "Process Group Ranks", e.g. "[0, 8, 16]" */
	struct pp_sv collective; /* "Collective name" */
	struct pp_sv dtype;      /* "dtype" */
};

/* Header facts; complete only after trace_reader_next() returned 0. */
/* One process group of distributedInfo.pg_config (PyTorch's process-group
 * table), each string "" when absent or not a string. */
struct trace_pg {
	const char *name;  /* pg_name, e.g. "0" */
	const char *desc;  /* pg_desc, e.g. "default_pg" */
	const char *ranks; /* ranks, formatted as kernels' "Process Group Ranks"
			    * args: "[0, 1]"; "" when not a list of integers */
};

struct trace_header {
	bool has_rank, has_world_size, has_base_time, has_schema;
	int64_t rank, world_size;
	int64_t base_time_ns; /* baseTimeNanoseconds */
	int64_t schema_version;
	const char *backend;      /* distributedInfo.backend or "" */
	const char *nccl_version; /* distributedInfo.nccl_version or "" */
	const char *device_name;  /* deviceProperties[0].name or "" */
	int device_count;         /* entries of deviceProperties */
	const char *trace_name;   /* traceName or "" */
	bool saw_trace_events;    /* the traceEvents key was found */
	/* distributedInfo.pg_config, in its order (the reader owns them); the
	 * header keys may follow traceEvents: complete only at the end. */
	const struct trace_pg *pgs;
	size_t npgs;
	bool has_pg_count;
	int64_t pg_count; /* distributedInfo.pg_count (every group of the job) */
};

struct trace_reader_opts {
	bool salvage;           /* on truncation, end cleanly after the last
				* complete event instead of failing */
	size_t max_event_bytes; /* cap on one event's text; 0 = 256 MiB */
	int gunzip;             /* enum gunzip_impl (gunzip.h); 0: ISA-L when
				* built in, $PP_GUNZIP=zlib forces zlib */
	bool read_thread;       /* a file is read (plain: read(), not
				* mapped) or inflated (gzip) on a thread of
				* its own, ahead of the parser (gzstream.h) */
	bool no_key_cache;      /* read every key byte by byte, without the
				* key cache (key_cache.h); tests compare both */
	bool no_map;            /* read() a plain file instead of mapping it
				* ($PP_NO_MMAP=1 too); tests compare both */
	size_t window_bytes;    /* the window to start with; 0 = the default
				* (tests take small ones to map and refill
				* often) */
	const char *simd;       /* the event parser's SIMD level: "avx512",
				* "avx2", "sse2", "neon" or "scalar"; NULL:
				* $PP_SIMD, else the default (AVX2 where the
				* CPU runs it, docs/reader.md). A level it
				* cannot run gives the widest below it that
				* it can */
};

/* Opens path; never NULL: check trace_reader_error() (e.g. the file cannot
 * be opened). */
struct trace_reader *trace_reader_open(const char *path, const struct trace_reader_opts *opts);
/* Same, over an in-memory buffer (not copied; must outlive the reader). */
struct trace_reader *trace_reader_open_mem(const void *buf, size_t len,
					   const struct trace_reader_opts *opts);
void trace_reader_close(struct trace_reader *r);

/* Yields the next event of traceEvents into *ev.
 * Returns 1 for an event, 0 at a clean end (or end of salvaged input), or a
 * negative PP_E* code: PP_EIO, PP_EPARSE (malformed), PP_ETRUNC (the file
 * ends mid-way). After an error, trace_reader_error() says what, where
 * (byte offset) and what was expected; further calls return the same code. */
int trace_reader_next(struct trace_reader *r, struct trace_event *ev);

const struct trace_header *trace_reader_header(const struct trace_reader *r);
/* "" when no error. Format: "<path>: byte <offset>: <what>, expected <what>". */
const char *trace_reader_error(const struct trace_reader *r);
/* Statistics. */
uint64_t trace_reader_events(const struct trace_reader *r);     /* yielded so far */
uint64_t trace_reader_bytes_in(const struct trace_reader *r);   /* file bytes consumed */
uint64_t trace_reader_bytes_text(const struct trace_reader *r); /* JSON text bytes */
bool trace_reader_truncated(const struct trace_reader *r);      /* salvage ended early */
bool trace_reader_is_gzip(const struct trace_reader *r);        /* input was gzip */
/* "isa-l" or "zlib": what inflates a gzip input; "" for plain input. */
const char *trace_reader_gunzip(const struct trace_reader *r);
/* The SIMD level of the reader's event parser (trace_reader_opts.simd). */
const char *trace_reader_simd(const struct trace_reader *r);
/* Stores the names of the SIMD levels that this build and CPU run in
 * names[0..max), the default first (the one a reader takes when none is
 * asked for), then the others from the widest down; returns how many
 * there are. */
size_t trace_reader_simd_levels(const char **names, size_t max);

/* Case-insensitive equality of a view with a literal. */
bool pp_sv_ieq(struct pp_sv s, const char *lit);

#endif
