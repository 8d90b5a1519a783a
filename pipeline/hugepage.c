/* hugepage.c — see hugepage.h. */
#include "hugepage.h"

#include <stdint.h>
#include <sys/mman.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)
#define PAGE ((uintptr_t)4096)

void hugepage_advise(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	if (!p || n < 2 * HUGE_PAGE)
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
