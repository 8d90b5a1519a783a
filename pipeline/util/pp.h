/* pp.h — what every pptrace module shares: the error convention and the
 * diagnostics functions.
 *
 * One route for errors (docs/contracts.md §6): a library function returns
 * int, 0 on success or a negative PP_E* code on failure, and appends what
 * went wrong (file, line or byte offset, what was expected) to a
 * caller-provided `struct strbuf *err`, git-style; pp_err() (strbuf.h) does
 * both in one line. It prints nothing: the caller that decides what a
 * failure means (a command in cmd/) prints the message once, with error()
 * or error_lines() (strbuf.h). A caller that adds its context passes err
 * through and puts the context before the callee's line (pp_err_prefix()).
 * No library API fills a char buffer of a given size (docs/contracts.md §6).
 * SQLite's sticky message stays on the database handle (db_errmsg()) until
 * the layer that reports it copies it out. Predicates return bool;
 * pointer-returning functions return NULL on failure. cmd/ decides the exit
 * status; library code exits only through die() when memory runs out (the
 * allocators below and what is built on them, as git's xmalloc does:
 * docs/contracts.md §7), never for bad input.
 */
#ifndef PP_H
#define PP_H

#include <stdarg.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	PP_OK = 0,
	PP_EIO = -1,      /* open/read/write/stat failed (errno kept) */
	PP_EPARSE = -2,   /* malformed input */
	PP_EDB = -3,      /* SQLite error */
	PP_ENOMEM = -4,   /* a raw malloc failed (ours die: docs/contracts.md) */
	PP_EINVAL = -5,   /* invalid argument or configuration */
	PP_ETRUNC = -6,   /* input ends before it is complete */
	PP_EINTR = -7,    /* interrupted by a signal */
	PP_ECYCLE = -8,   /* dependency cycle (simulator) */
	PP_ENOTFOUND = -9 /* a named thing does not exist */
};

/* Exit codes of every command (docs/usage.md). */
enum {
	PP_EXIT_OK = 0,      /* everything worked */
	PP_EXIT_PARTIAL = 1, /* some inputs failed */
	PP_EXIT_USAGE = 2,   /* bad command line or invalid input parameters */
	PP_EXIT_FATAL = 3,   /* nothing could be done */
	PP_EXIT_INTR = 130   /* interrupted by SIGINT/SIGTERM */
};

/* A short English description of a PP_E* code; never NULL. */
const char *pp_strerror(int code);

/* The program name used as the prefix of every message ("ppbatch"). */
void pp_set_progname(const char *name);
const char *pp_progname(void);

/* fn(ctx) runs before each message of error(), warn() and die(), e.g. to
 * clear a progress line (util/progress.h) that the message would otherwise
 * follow on the same line; NULL for none. One thread sets it and reports. */
void pp_set_report_hook(void (*fn)(void *ctx), void *ctx);
/* A line another process wrote for the user (a worker's "ppbatch: error:
 * ..."), on stderr as it is, after the report hook as for our own. */
void pp_report_line(const char *line);
/* "prog: error: ..." on stderr; returns -1 so callers can `return error(...)`. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "prog: warning: ..." on stderr. */
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "prog: fatal: ..." on stderr, then exit(PP_EXIT_FATAL). For cmd/, and for
 * out of memory (the allocators below; docs/contracts.md §7). */
__attribute__((noreturn)) void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation, everywhere (cmd/, the library, tests): a failed one ends the
 * process with "prog: fatal: out of memory allocating N bytes", exit 3.
 * Nothing of ours returns PP_ENOMEM or NULL for memory (docs/contracts.md,
 * "Out of memory"). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* Makes room for element n of the array ptr of cap elements: when n is
 * cap, cap doubles (first, > 0, from 0) and ptr is xrealloc()ed to it. */
#define PP_GROW(ptr, n, cap, first) PP_RESERVE(ptr, n, 1, cap, first)
/* Makes room for more elements after the first n of the array ptr of cap
 * elements: cap doubles (first, which must be > 0, from 0) until it holds
 * n + more. */
#define PP_RESERVE(ptr, n, more, cap, first)                             \
	do {                                                             \
		if ((n) + (more) > (cap)) {                              \
			while ((n) + (more) > (cap))                     \
				(cap) = (cap) ? 2 * (cap) : (first);     \
			(ptr) = xrealloc((ptr), (cap) * sizeof(*(ptr))); \
		}                                                        \
	} while (0)
/* Frees each pointer it names, NULL ones too (as free() does): the owned
 * arrays of a struct released in one statement, PP_FREE_ALL(r->a, r->b). */
#define PP_FREE_ALL(...) \
	pp_free_all((void *[]){ __VA_ARGS__ }, sizeof((void *[]){ __VA_ARGS__ }) / sizeof(void *))
void pp_free_all(void *const *ptrs, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n); /* at most n bytes of s, NUL-terminated */

/* Reads up to n bytes of fd into p, across short reads and EINTR: how
 * many (fewer only at the end of the file), or -1 with errno set. */
ssize_t pp_read_full(int fd, void *p, size_t n);

/* Current monotonic time in nanoseconds. */
int64_t pp_now_ns(void);

/* The cores this process may run on (its CPU affinity: a Slurm allocation's
 * or a cgroup's, not the whole node's), else the online ones; at least 1.
 * The default of ppbatch's and ppagg's -j and of a worker's threads. */
int pp_cores(void);

#endif
