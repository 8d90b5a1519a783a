/* gunzip_isal.c — ISA-L's streaming inflate behind gunzip.h. Built only
 * when the build finds libisal (the Makefile leaves this file out and
 * gunzip.c does not refer to it otherwise). ISA-L parses the gzip header
 * and checks the trailer itself (crc_flag ISAL_GZIP); at the end of a member
 * it gives back the input it had read ahead, so the next member starts at
 * io->in. */
#include "gunzip.h"

#include <isa-l/igzip_lib.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/pp.h"

static void *isal_open(void)
{
	struct inflate_state *s = xmalloc(sizeof(*s));
	isal_inflate_init(s);
	s->crc_flag = ISAL_GZIP;
	return s;
}

static void isal_close(void *st)
{
	free(st);
}

static int isal_reset(void *st)
{
	struct inflate_state *s = st;
	isal_inflate_reset(s);
	s->crc_flag = ISAL_GZIP;
	return GUNZIP_OK;
}

/* zlib's words where the two mean the same, so messages read alike. */
static const char *isal_msg(int rc)
{
	switch (rc) {
	case ISAL_INVALID_BLOCK: return "invalid block type";
	case ISAL_INVALID_SYMBOL: return "invalid code";
	case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
	case ISAL_INVALID_WRAPPER: return "incorrect header check";
	case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
	case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
	default: return "inflate failed";
	}
}

static int isal_step(void *st, const unsigned char *in, unsigned *in_n, char *out, unsigned *out_n,
		     const char **msg)
{
	struct inflate_state *s = st;
	s->next_in = (uint8_t *)(uintptr_t)in;
	s->avail_in = *in_n;
	s->next_out = (uint8_t *)out;
	s->avail_out = *out_n;
	int rc = isal_inflate(s);
	*in_n -= s->avail_in;
	*out_n -= s->avail_out;
	if (rc < 0) {
		*msg = isal_msg(rc);
		return GUNZIP_BAD;
	}
	return s->block_state == ISAL_BLOCK_FINISH ? GUNZIP_END : GUNZIP_OK;
}

const struct gunzip_backend gunzip_isal_backend = {
	"isa-l", isal_open, isal_close, isal_reset, isal_step,
};
