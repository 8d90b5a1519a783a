/* pp.c — error strings, diagnostics and small helpers shared by all modules. */
#include "pp.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *progname = "pptrace";

const char *pp_strerror(int code)
{
	switch (code) {
	case PP_OK: return "success";
	case PP_EIO: return "input/output error";
	case PP_EPARSE: return "malformed input";
	case PP_EDB: return "database error";
	case PP_ENOMEM: return "out of memory";
	case PP_EINVAL: return "invalid argument";
	case PP_ETRUNC: return "input is truncated";
	case PP_EINTR: return "interrupted";
	case PP_ECYCLE: return "dependency cycle";
	case PP_ENOTFOUND: return "not found";
	default: return "unknown error";
	}
}

void pp_set_progname(const char *name)
{
	const char *slash = strrchr(name, '/');
	progname = slash ? slash + 1 : name;
}

const char *pp_progname(void)
{
	return progname;
}

static void (*report_hook)(void *);
static void *report_ctx;

void pp_set_report_hook(void (*fn)(void *ctx), void *ctx)
{
	report_hook = fn;
	report_ctx = ctx;
}

void pp_report_line(const char *line)
{
	if (report_hook)
		report_hook(report_ctx);
	fprintf(stderr, "%s\n", line);
}

static void vreport(const char *kind, const char *fmt, va_list ap)
{
	char buf[4096];
	int n = snprintf(buf, sizeof(buf), "%s: %s: ", progname, kind);
	if (n > 0 && (size_t)n < sizeof(buf))
		vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	pp_report_line(buf);
}

/* The body of error(), warn() and die(): their arguments after fmt. */
#define REPORT(kind, fmt)                \
	do {                             \
		va_list ap_;             \
		va_start(ap_, fmt);      \
		vreport(kind, fmt, ap_); \
		va_end(ap_);             \
	} while (0)

int error(const char *fmt, ...)
{
	REPORT("error", fmt);
	return -1;
}

void warn(const char *fmt, ...)
{
	REPORT("warning", fmt);
}

void die(const char *fmt, ...)
{
	REPORT("fatal", fmt);
	exit(PP_EXIT_FATAL);
}
#undef REPORT

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

void pp_free_all(void *const *ptrs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ptrs[i]);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die("out of memory allocating %zu bytes", n);
	return q;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = memcpy(xmalloc(len + 1), s, len);
	p[len] = '\0';
	return p;
}

ssize_t pp_read_full(int fd, void *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = read(fd, (char *)p + got, n - got);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

int64_t pp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int pp_cores(void)
{
	cpu_set_t set;
	long n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
							      : sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
}
