/* libFuzzer target: Megatron PP-timer dumps (pipeline/batch/pptimer.h). The bytes
 * up to the first NUL (all of them without one) are read from a memory file
 * as a plain and as a VPP dump; the bytes after it are parsed as a dump's
 * file name. Beyond the sanitizers: success
 * leaves steps strictly sorted by (phase, chunk, micro-batch) with every
 * field in range, failure a message and an empty result; an accepted file
 * name prints back canonically to a name that parses to the same fields. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "batch/pptimer.h"
#include "util/pp.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                              \
	do {                                                                                  \
		if (!(c)) {                                                                   \
			fprintf(stderr, "fuzz_pptimer: invariant failed: %s (line %d)\n", #c, \
				__LINE__);                                                    \
			abort();                                                              \
		}                                                                             \
	} while (0)

static bool terminated(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

static void check_read(const char *path, bool vpp)
{
	struct pptimer_file f;
	struct strbuf err = STRBUF_INIT;
	int rc = pptimer_read(path, vpp, &f, &err);
	if (rc) {
		CHECK(rc == PP_EPARSE);
		CHECK(err.len > 0);
		CHECK(f.steps == NULL && f.n == 0 && !f.has_total && f.unknown_keys == 0);
		strbuf_release(&err);
		return;
	}
	CHECK(f.n == 0 || f.steps != NULL);
	CHECK(terminated(f.first_unknown, sizeof(f.first_unknown)));
	CHECK(f.unknown_keys > 0 || f.first_unknown[0] == '\0');
	CHECK(f.has_total || f.total_ns == 0);
	CHECK(f.total_ns >= -9000000000000000 && f.total_ns <= 9000000000000000);
	for (size_t i = 0; i < f.n; i++) {
		const struct pptimer_step *s = &f.steps[i];
		CHECK(s->phase == 1 || s->phase == 2);
		CHECK(s->chunk >= 0 && s->chunk <= 1000000 && (vpp || s->chunk == 0));
		CHECK(s->mb >= 0 && s->mb <= 100000000);
		CHECK(s->has_start || s->has_end);
		CHECK(s->has_start || s->start_ns == 0);
		CHECK(s->has_end || s->end_ns == 0);
		CHECK(s->start_ns >= -9000000000000000 && s->start_ns <= 9000000000000000);
		CHECK(s->end_ns >= -9000000000000000 && s->end_ns <= 9000000000000000);
		if (i) {
			const struct pptimer_step *r = &f.steps[i - 1];
			bool before = r->phase != s->phase   ? r->phase < s->phase
				      : r->chunk != s->chunk ? r->chunk < s->chunk
							     : r->mb < s->mb;
			CHECK(before);
		}
	}
	pptimer_file_release(&f);
	CHECK(f.steps == NULL && f.n == 0);
	strbuf_release(&err);
}

static void check_name(const char *base)
{
	struct pptimer_name n, m;
	char again[256];
	struct strbuf why = STRBUF_INIT;
	if (pptimer_parse_name(base, &n, &why)) {
		CHECK(why.len > 0);
		strbuf_release(&why);
		return;
	}
	CHECK(n.pp >= 1 && n.pp <= 1000000 && n.vpp >= 1 && n.vpp <= 1000000);
	CHECK(n.pp_rank >= 0 && n.pp_rank < n.pp && n.dp_rank >= 0 && n.rank >= 0);
	CHECK(!n.vpp_none || n.vpp == 1);
	char vname[16];
	if (n.vpp_none)
		snprintf(vname, sizeof(vname), "None");
	else
		snprintf(vname, sizeof(vname), "%d", n.vpp);
	snprintf(again, sizeof(again),
		 "event_times_PP%d_VPP%s_TPxCPxDP_rank_%lld_pp_rank_%d_rank_%lld.json", n.pp, vname,
		 (long long)n.dp_rank, n.pp_rank, (long long)n.rank);
	strbuf_reset(&why);
	CHECK(pptimer_parse_name(again, &m, &why) == 0);
	CHECK(m.pp == n.pp && m.vpp == n.vpp && m.vpp_none == n.vpp_none &&
	      m.dp_rank == n.dp_rank && m.pp_rank == n.pp_rank && m.rank == n.rank);
	strbuf_release(&why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	const uint8_t *nul = memchr(data, '\0', size);
	size_t jn = nul ? (size_t)(nul - data) : size;
	int fd = memfd_create("fuzz-pptimer", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, jn) == (ssize_t)jn) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		check_read(path, false);
		check_read(path, true);
	}
	close(fd);

	if (!nul)
		return 0;
	size_t n = size - jn - 1;
	char *base = malloc(n + 1);
	if (!base)
		return 0;
	memcpy(base, nul + 1, n);
	base[n] = '\0'; /* a further NUL ends the name early */
	check_name(base);
	free(base);
	return 0;
}
