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

void *hugepage_realloc(void *old, size_t used, size_t size)
{
	if (size < HUGE_PAGE)
		return realloc(old, size);
	size_t rounded = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (rounded < size)
		return NULL;
	void *p = aligned_alloc(HUGE_PAGE, rounded);
	if (!p)
		return NULL;
	hugepage_advise(p, rounded);
	if (used)
		memcpy(p, old, used);
	free(old);
	return p;
}
