/* patterns.h — the glob pattern sets of docs/semantics.md §5, the kernel
 * table (which kernels are communication, and which collective a kernel's
 * name says: docs/classification.md "Kernel types") and matching names to
 * them.
 *
 * Each set is a list of globs with SQLite GLOB semantics (sqlite3_strglob:
 * `*`, `?`, `[...]`, case-sensitive) matched against a full name. Defaults
 * are those of docs/semantics.md; the [patterns] section of the config file replaces a set (key
 * = the set's name, e.g. patterns.pp_comm) with a list of globs separated by
 * blanks; a glob in double quotes may hold blanks ("nn.Module: Linear*"),
 * and the list may go on over indented lines or repeat the key. The
 * [collectives] section likewise has one list per collective (key =
 * rr_coll_name(): all_to_all, all_reduce, ...).
 * Matching is for cold paths: the classifier interns names and calls
 * patterns_match() once per distinct name.
 */
#ifndef PATTERNS_H
#define PATTERNS_H

#include <stddef.h>
#include <stdint.h>

struct config;
struct strbuf;

enum pat_set {
	PAT_COMM_KERNEL,
	PAT_MEM_KERNEL,
	PAT_FORWARD_STEP,
	PAT_BACKWARD_STEP,
	PAT_PP_COMM,
	PAT_DP_COMM,
	PAT_OPTIMIZER,
	PAT_RECOMPUTE,
	PAT_LOSS_FUNC,
	PAT_NSETS
};

struct patterns;

/* The defaults, overridden by cfg's [patterns] keys (cfg may be NULL).
 * Returns NULL with a message appended to err on an invalid configuration
 * (a quote not closed on its line); an empty list is allowed: the set then
 * matches nothing. Free with patterns_free. */
struct patterns *patterns_new(const struct config *cfg, struct strbuf *err);
void patterns_free(struct patterns *p);

/* Bit (1u << set) for every set that has a glob matching name; the
 * comm_kernel bit also when a [collectives] glob matches it. */
uint32_t patterns_match(const struct patterns *p, const char *name);

/* The collective (enum rr_coll) that a communication kernel's name says:
 * the first collective, in enum rr_coll order, with a [collectives] glob
 * matching it, else the words of the name (rr_coll_of()). */
int patterns_collective(const struct patterns *p, const char *name);

/* The config key of a set ("comm_kernel", ...). */
const char *patterns_set_name(enum pat_set set);
/* The globs of a set, for documentation and --inspect. */
size_t patterns_globs(const struct patterns *p, enum pat_set set, const char *const **globs);
/* The [collectives] globs of collective coll (enum rr_coll; none for
 * RR_COLL_NONE or an invalid value). */
size_t patterns_coll_globs(const struct patterns *p, int coll, const char *const **globs);

#endif
