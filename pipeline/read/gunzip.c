/* gunzip.c — see gunzip.h. zlib's implementation and the choice between
 * the implementations; ISA-L's is in gunzip_isal.c, which the Makefile
 * builds (and defines PP_HAVE_ISAL) only when libisal is installed. */
#include "gunzip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/pp.h"

struct gunzip {
	const struct gunzip_backend *be;
	void *st;
	const char *msg;
};

static void *zlib_open(void)
{
	z_stream *zs = xcalloc(1, sizeof(*zs));
	if (inflateInit2(zs, 16 + MAX_WBITS) != Z_OK) { /* zlib's own allocation */
		free(zs);
		zs = NULL;
	}
	return zs;
}

static void zlib_close(void *st)
{
	inflateEnd(st);
	free(st);
}

static int zlib_reset(void *st)
{
	return inflateReset(st) == Z_OK ? GUNZIP_OK : GUNZIP_BAD;
}

static int zlib_step(void *st, const unsigned char *in, unsigned *in_n, char *out, unsigned *out_n,
		     const char **msg)
{
	z_stream *zs = st;
	zs->next_in = (Bytef *)(uintptr_t)in;
	zs->avail_in = *in_n;
	zs->next_out = (Bytef *)out;
	zs->avail_out = *out_n;
	int zrc = inflate(zs, Z_NO_FLUSH);
	*in_n -= zs->avail_in;
	*out_n -= zs->avail_out;
	if (zrc == Z_STREAM_END)
		return GUNZIP_END;
	if (zrc == Z_OK || zrc == Z_BUF_ERROR) /* BUF_ERROR: no progress possible */
		return GUNZIP_OK;
	*msg = zs->msg ? zs->msg : "inflate failed";
	return GUNZIP_BAD;
}

static const struct gunzip_backend zlib_backend = {
	"zlib", zlib_open, zlib_close, zlib_reset, zlib_step,
};

/* The implementations built in, fastest first. */
static const struct gunzip_backend *const backends[] = {
#ifdef PP_HAVE_ISAL
	&gunzip_isal_backend,
#endif
	&zlib_backend,
};

bool gunzip_have_isal(void)
{
	return backends[0] != &zlib_backend;
}

struct gunzip *gunzip_new(enum gunzip_impl impl)
{
	if (impl == GUNZIP_AUTO) {
		const char *e = getenv("PP_GUNZIP");
		if (e && !strcmp(e, "zlib"))
			impl = GUNZIP_ZLIB;
	}
	struct gunzip *g = xcalloc(1, sizeof(*g));
	g->be = impl == GUNZIP_ZLIB ? &zlib_backend : backends[0];
	g->st = g->be->open();
	if (!g->st)
		die("out of memory starting the gzip inflater");
	g->msg = "";
	return g;
}

void gunzip_free(struct gunzip *g)
{
	if (!g)
		return;
	g->be->close(g->st);
	free(g);
}

int gunzip_run(struct gunzip *g, struct gunzip_io *io)
{
	while (io->in_n && io->out_n) {
		/* both libraries count in 32 bits: at most 1 GiB per step */
		unsigned in = io->in_n > (1u << 30) ? 1u << 30 : (unsigned)io->in_n;
		unsigned out = io->out_n > (1u << 30) ? 1u << 30 : (unsigned)io->out_n;
		int rc = g->be->step(g->st, io->in, &in, io->out, &out, &g->msg);
		io->in += in;
		io->in_n -= in;
		io->out += out;
		io->out_n -= out;
		if (rc != GUNZIP_OK)
			return rc;
		if (in == 0 && out == 0)
			break; /* no progress: it keeps what it needs */
	}
	return GUNZIP_OK;
}

int gunzip_reset(struct gunzip *g)
{
	if (g->be->reset(g->st) == GUNZIP_OK)
		return GUNZIP_OK;
	g->msg = "cannot restart the stream";
	return GUNZIP_BAD;
}

const char *gunzip_error(const struct gunzip *g)
{
	return g->msg;
}

const char *gunzip_name(const struct gunzip *g)
{
	return g->be->name;
}
