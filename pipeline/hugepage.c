/* hugepage.c — see hugepage.h. */
#include "hugepage.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

void *hugepage_realloc(void *old, size_t size)
{
	/* realloc grows a large block in place (mremap): never the old and
	 * the new block in memory at once, which a tight `ulimit -v` (64 MiB
	 * + 10 % of the trace) has no room for. (An aligned copy would give
	 * more huge pages, but memalign blocks cannot be advised whole, and a
	 * split mapping makes every later realloc copy.) */
	void *p = realloc(old, size);
	hugepage_advise(p, size);
	return p;
}
