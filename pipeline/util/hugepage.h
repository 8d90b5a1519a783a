/* hugepage.h — transparent huge pages behind large heap blocks.
 *
 * A worker touches ~90 MB of fresh memory per GB of trace (kernels,
 * launches, SQLite's cache). On a virtual machine every 4 KiB first-touch
 * fault is expensive (~10 µs here): 22,000 faults were 12 % of a worker's
 * CPU time. Asking for 2 MiB pages on the big, growing blocks cuts the
 * faults from 22,000 to 2,700 per GB (8,000 under a ulimit -v).
 *
 * Contract: the block functions are purely advisory. Never fail, never
 * change contents; a no-op for blocks under 2 MiB, on kernels without THP,
 * or when THP is "never". Blocks from hugepage_realloc() go back with
 * hugepage_free(). hugepage_heap_restart() is the exception: it may execute
 * the program again, so only a command's main() calls it.
 */
#ifndef PP_HUGEPAGE_H
#define PP_HUGEPAGE_H

#include <stddef.h>

/* Advises huge pages for the block [p, p + n) (whole pages). Call after
 * (re)allocating a large block; calling again on the same block is cheap. */
void hugepage_advise(void *p, size_t n);

/* realloc() for a growing array of old_size bytes whose first `used` bytes
 * matter. From 2 MiB on, the block is a mapping of its own, 2 MiB-aligned
 * and advised before use, that grows by moving its pages (mremap), never
 * by copying them: what it held is neither copied nor faulted in again.
 * Under a limited address space (ulimit -v), plain realloc and advice.
 * Never NULL (docs/contracts.md: out of memory). */
void *hugepage_realloc(void *old, size_t old_size, size_t used, size_t size);

/* Frees a block of size bytes from hugepage_realloc(); NULL is fine. */
void hugepage_free(void *p, size_t size);

/* The process's malloc heap on huge pages too. glibc does that with the
 * tunable glibc.malloc.hugetlb=1, which it reads only when a program
 * starts: when GLIBC_TUNABLES does not name it, this sets it (after the
 * tunables given) and executes the program again with argv (exec keeps the
 * pid and the open files). It returns when it does not: a tunable named
 * (hugetlb=0 turns it off), the restart done, no /proc/self/exe, a failed
 * exec; the process then goes on as it is. For a command's main(), first
 * thing, before any thread (docs/ppbatch.md, "Performance"). */
void hugepage_heap_restart(char **argv);

#endif
