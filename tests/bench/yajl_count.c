/* yajl_count — counts the events of a Kineto trace with YAJL (Debian
 * libyajl), a C streaming JSON parser: the baseline that scripts/bench.d/
 * reader.sh compares `ppbatch --inspect` with. Built by the bench only:
 *   cc -O2 -o yajl_count tests/bench/yajl_count.c -lyajl
 * Prints "<events>" and exits 0, or 1 on a parse error. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

struct state {
	int depth;        /* open containers */
	int events_depth; /* depth of the traceEvents array, 0 when outside */
	int key_is_events;
	long long events;
};

static int on_start_map(void *ctx)
{
	struct state *s = ctx;
	if (s->events_depth && s->depth == s->events_depth)
		s->events++;
	s->depth++;
	s->key_is_events = 0;
	return 1;
}

static int on_end(void *ctx)
{
	struct state *s = ctx;
	s->depth--;
	if (s->events_depth && s->depth < s->events_depth)
		s->events_depth = 0;
	return 1;
}

static int on_start_array(void *ctx)
{
	struct state *s = ctx;
	s->depth++;
	if (s->key_is_events && s->depth == 2)
		s->events_depth = 2;
	s->key_is_events = 0;
	return 1;
}

static int on_key(void *ctx, const unsigned char *k, size_t n)
{
	struct state *s = ctx;
	s->key_is_events = s->depth == 1 && n == 11 && !memcmp(k, "traceEvents", 11);
	return 1;
}

static int on_scalar(void *ctx)
{
	((struct state *)ctx)->key_is_events = 0;
	return 1;
}

static int on_null(void *ctx)
{
	return on_scalar(ctx);
}
static int on_bool(void *ctx, int b)
{
	(void)b;
	return on_scalar(ctx);
}
static int on_number(void *ctx, const char *n, size_t l)
{
	(void)n;
	(void)l;
	return on_scalar(ctx);
}
static int on_string(void *ctx, const unsigned char *v, size_t l)
{
	(void)v;
	(void)l;
	return on_scalar(ctx);
}

int main(int argc, char **argv)
{
	static const yajl_callbacks cb = { on_null,   on_bool,        NULL,         NULL,
					   on_number, on_string,      on_start_map, on_key,
					   on_end,    on_start_array, on_end };
	struct state s = { 0, 0, 0, 0 };
	if (argc != 2) {
		fprintf(stderr, "usage: yajl_count <trace.json>\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	yajl_handle h = yajl_alloc(&cb, NULL, &s);
	yajl_config(h, yajl_allow_trailing_garbage, 1);
	yajl_config(h, yajl_dont_validate_strings, 1);
	static unsigned char buf[1 << 20];
	ssize_t n;
	int rc = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (yajl_parse(h, buf, (size_t)n) != yajl_status_ok) {
			rc = 1;
			break;
		}
	if (!rc && yajl_complete_parse(h) != yajl_status_ok)
		rc = 1;
	if (rc) {
		unsigned char *e = yajl_get_error(h, 0, NULL, 0);
		fprintf(stderr, "yajl_count: %s\n", e);
		yajl_free_error(h, e);
	}
	yajl_free(h);
	close(fd);
	printf("%lld\n", s.events);
	return rc;
}
