/* libFuzzer target: the trace reader (pipeline/read/trace_read.h).
 *
 * Each input is read three times from memory: with the default window (the
 * whole input fits), with a tiny window (64..4159 bytes, from the input's
 * length) so that every refill and window-growth path runs, and with the
 * default window but every key read byte by byte (no key cache); once as a
 * file (a memfd), mapped a page at a time, so that every remap runs; and
 * once more with every other SIMD level of the event parser this CPU runs
 * (the others use the best); and once more as that file read ahead on a
 * thread of its own (read_thread: read() into chunks, not mapped).
 * Besides the sanitizers, the oracle is differential: the readings must
 * yield the same events (field by field) and the same outcome, unless the
 * tiny window stopped with "longer than" (an event larger than its cap).
 * Every yielded string must be NUL-terminated at its length. Also run by
 * the unit tests on tests/fuzz/regress/trace_read/, the seed corpus and
 * whole real and ppgen traces.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "read/trace_read.h"
#include "util/pp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t mix_sv(uint64_t h, struct pp_sv s)
{
	if (s.p[s.n] != '\0')
		abort(); /* the contract: NUL-terminated at its length */
	for (size_t i = 0; i < s.n; i++)
		h = mix(h, (unsigned char)s.p[i]);
	return mix(h, s.n);
}

static uint64_t mix_id(uint64_t h, const struct trace_id *id)
{
	h = mix(h, (uint64_t)id->num);
	h = mix(h, id->is_str);
	return id->is_str ? mix_sv(h, id->str) : h;
}

static uint64_t event_hash(const struct trace_event *ev)
{
	uint64_t h = mix(ev->offset, ev->has);
	h = mix(h, (unsigned char)ev->ph);
	h = mix(h, (unsigned char)ev->bp);
	h = mix_sv(h, ev->cat);
	h = mix_sv(h, ev->name);
	h = mix_id(h, &ev->pid);
	h = mix_id(h, &ev->tid);
	h = mix_id(h, &ev->id);
	const int64_t v[] = { ev->ts_ns,      ev->dur_ns,    ev->correlation, ev->external_id,
			      ev->stream,     ev->device,    ev->group_size,  ev->in_nelems,
			      ev->out_nelems, ev->sort_index };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		h = mix(h, (uint64_t)v[i]);
	const struct pp_sv s[] = { ev->arg_name, ev->pg_name,    ev->pg_desc,
				   ev->pg_ranks, ev->collective, ev->dtype };
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		h = mix_sv(h, s[i]);
	return h;
}

struct reading {
	int rc;
	uint64_t n;
	uint64_t *hashes; /* every event's, while memory lasts */
	size_t cap;
	bool too_long;
	bool truncated;
	char err[1100];
	int64_t rank, base;
	char nccl[64];
};

/* The cat of each trace_event.cat_key seen in one reading (cat_key_check()). */
struct cat_keys {
	char *text[TRACE_CAT_KEYS + 1];
	size_t len[TRACE_CAT_KEYS + 1];
	uint64_t keyed; /* events that had a key */
};

/* trace_read.h's promise: a cat_key is given only to events whose cat is
 * the same text. */
static void cat_key_check(struct cat_keys *k, const struct trace_event *ev)
{
	unsigned key = ev->cat_key;
	if (!key)
		return;
	if (key > TRACE_CAT_KEYS)
		abort();
	k->keyed++;
	if (!k->text[key]) {
		k->text[key] = malloc(ev->cat.n + 1);
		if (!k->text[key])
			abort();
		memcpy(k->text[key], ev->cat.p, ev->cat.n + 1);
		k->len[key] = ev->cat.n;
	} else if (k->len[key] != ev->cat.n || memcmp(k->text[key], ev->cat.p, ev->cat.n)) {
		abort();
	}
}

static void cat_keys_release(struct cat_keys *k)
{
	for (size_t i = 0; i <= TRACE_CAT_KEYS; i++)
		free(k->text[i]);
}

/* Reads the input from memory, or when path is given, from that file. */
static void read_all(const uint8_t *data, size_t size, const struct trace_reader_opts *o,
		     const char *path, struct reading *out)
{
	struct trace_reader *r =
		path ? trace_reader_open(path, o) : trace_reader_open_mem(data, size, o);
	struct trace_event ev;
	struct cat_keys keys;
	int rc;
	memset(out, 0, sizeof(*out));
	if (!r)
		return;
	memset(&keys, 0, sizeof(keys));
	out->cap = 4096;
	out->hashes = malloc(out->cap * sizeof(uint64_t));
	while ((rc = trace_reader_next(r, &ev)) > 0) {
		if (out->n == out->cap && out->hashes) {
			uint64_t *h = realloc(out->hashes, 2 * out->cap * sizeof(uint64_t));
			if (!h)
				free(out->hashes);
			out->hashes = h;
			out->cap *= 2;
		}
		if (out->n < out->cap && out->hashes)
			out->hashes[out->n] = event_hash(&ev);
		cat_key_check(&keys, &ev);
		out->n++;
	}
	cat_keys_release(&keys);
	if (trace_reader_next(r, &ev) != rc) /* sticky */
		abort();
	if (out->n != trace_reader_events(r))
		abort();
	out->rc = rc;
	out->truncated = trace_reader_truncated(r);
	/* the message without the path that starts it */
	const char *msg = strstr(trace_reader_error(r), ": byte ");
	snprintf(out->err, sizeof(out->err), "%s", msg ? msg : trace_reader_error(r));
	out->too_long = strstr(out->err, "longer than") != NULL;
	if ((rc < 0) != (out->err[0] != '\0'))
		abort(); /* an error has a message, success has none */
	const struct trace_header *h = trace_reader_header(r);
	out->rank = h->has_rank ? h->rank : -1;
	out->base = h->has_base_time ? h->base_time_ns : -1;
	snprintf(out->nccl, sizeof(out->nccl), "%s", h->nccl_version);
	trace_reader_close(r);
}

/* Whether two readings of the same input agree on everything. */
static bool same_reading(const struct reading *a, const struct reading *b)
{
	return a->n == b->n && a->rc == b->rc && a->truncated == b->truncated &&
	       !strcmp(a->err, b->err) && a->rank == b->rank && a->base == b->base &&
	       !strcmp(a->nccl, b->nccl) &&
	       (!a->hashes || !b->hashes || !memcmp(a->hashes, b->hashes, a->n * 8));
}

/* The input read as a file: a memfd (no disk), mapped one page at a time;
 * or, ahead, read() into chunks on a thread of its own (read_thread).
 * Returns false when it cannot be (no memfd, or gzip magic: only a file is
 * inflated). */
static bool read_file(const uint8_t *data, size_t size, bool salvage, bool ahead,
		      struct reading *out)
{
	if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b)
		return false;
	int fd = memfd_create("trace", MFD_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = true;
	for (size_t done = 0; ok && done < size;) {
		ssize_t k = write(fd, data + done, size - done);
		ok = k > 0;
		done += ok ? (size_t)k : 0;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct trace_reader_opts o = { .salvage = salvage,
				       .window_bytes = 4096,
				       .read_thread = ahead };
	if (ok)
		read_all(data, size, &o, path, out);
	close(fd);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reading big, small, bytewise, mapped, level;
	bool salvage = size & 1;
	struct trace_reader_opts o = { .salvage = salvage };
	read_all(data, size, &o, NULL, &big);
	o.max_event_bytes = 64 + size % 4096;
	read_all(data, size, &o, NULL, &small);
	o.max_event_bytes = 0;
	o.no_key_cache = true;
	read_all(data, size, &o, NULL, &bytewise);
	o.no_key_cache = false;
	const char *levels[8];
	size_t nlevels = trace_reader_simd_levels(levels, 8);
	for (size_t i = 1; i < nlevels && i < 8; i++) { /* levels[0], the default, read big */
		o.simd = levels[i];
		read_all(data, size, &o, NULL, &level);
		if (!same_reading(&big, &level))
			abort(); /* two SIMD levels read differently */
		free(level.hashes);
	}
	if (!same_reading(&big, &bytewise))
		abort(); /* the key cache changed something */
	if (read_file(data, size, salvage, false, &mapped)) {
		if (!same_reading(&big, &mapped))
			abort(); /* the mapped windows changed something */
		free(mapped.hashes);
	}
	if (read_file(data, size, salvage, true, &mapped)) {
		if (!same_reading(&big, &mapped))
			abort(); /* reading ahead on a thread changed something */
		free(mapped.hashes);
	}
	size_t same = big.n < small.n ? big.n : small.n;
	if (same > big.cap)
		same = big.cap;
	if (big.hashes && small.hashes && memcmp(big.hashes, small.hashes, same * 8))
		abort(); /* the window size changed an event */
	if (!small.too_long && !same_reading(&big, &small))
		abort();
	free(big.hashes);
	free(small.hashes);
	free(bytewise.hashes);
	return 0;
}
