/* hugepage.c — see hugepage.h. */
#include "hugepage.h"
#include "pp.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define HUGE_PAGE ((size_t)2 << 20)
#define PAGE ((uintptr_t)4096)

void hugepage_advise(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	if (!p || n < HUGE_PAGE)
		return;
	/* The whole pages of the block, not only its 2 MiB-aligned middle: a
	 * large malloc block is one mapping of its own, and advising all of
	 * it keeps that mapping in one piece, so that realloc can still grow
	 * it with mremap instead of copying. The kernel uses huge pages for
	 * the aligned 2 MiB ranges inside. */
	uintptr_t start = (uintptr_t)p & ~(PAGE - 1);
	uintptr_t end = ((uintptr_t)p + n + PAGE - 1) & ~(PAGE - 1);
	(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

/* Whether the address space is limited (ulimit -v): then an old and a new
 * block at once may not fit. */
static bool space_limited(void)
{
	static int limited = -1;
	if (limited < 0) {
		struct rlimit rl;
		limited = getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
	}
	return limited;
}

void *hugepage_realloc(void *old, size_t used, size_t size)
{
	/* Under a limit, realloc grows the block in place (mremap): never old
	 * and new at once. Otherwise a new 2 MiB-aligned block, advised before
	 * anything touches it, gets huge pages throughout (a realloc'd block
	 * is seldom aligned, and pages touched before the advice stay small):
	 * a third of the faults, and far fewer TLB misses in the passes over
	 * the kernels (~10 % of a worker's time). */
	if (size < HUGE_PAGE || space_limited()) {
		void *p = xrealloc(old, size);
		hugepage_advise(p, size);
		return p;
	}
	size_t rounded = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	void *p = rounded < size ? NULL : aligned_alloc(HUGE_PAGE, rounded);
	if (!p)
		die("out of memory allocating %zu bytes", size);
	hugepage_advise(p, rounded);
	if (used)
		memcpy(p, old, used);
	free(old);
	return p;
}
