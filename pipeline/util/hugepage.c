/* hugepage.c — see hugepage.h. */
#include "hugepage.h"
#include "pp.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "strbuf.h"

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

/* Whether a block of size bytes is a mapping of its own. */
static bool own_mapping(size_t size)
{
	return size >= HUGE_PAGE && !space_limited();
}

/* A 2 MiB-aligned range of size bytes (a multiple of 2 MiB) of fresh
 * address space: prot PROT_NONE to move pages into, else read-write. */
static void *map_aligned(size_t size, int prot)
{
	size_t span = size + HUGE_PAGE;
	char *m = mmap(NULL, span, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		die("out of memory mapping %zu bytes", size);
	char *a = (char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (a > m)
		munmap(m, (size_t)(a - m));
	if (m + span > a + size)
		munmap(a + size, (size_t)(m + span - (a + size)));
	return a;
}

void *hugepage_realloc(void *old, size_t old_size, size_t used, size_t size)
{
	/* A large block is a mapping of its own, 2 MiB-aligned and advised
	 * before anything touches it, so it gets huge pages throughout (a
	 * realloc'd heap block is seldom aligned, and pages touched before the
	 * advice stay small): a third of the faults, and far fewer TLB misses
	 * in the passes over the kernels (~10 % of a worker's time). It grows
	 * by moving its page tables to a larger aligned range: its pages stay
	 * (huge ones move whole), so growing neither copies nor faults in
	 * again what the block held. Under an address-space limit, realloc
	 * grows the block in place (mremap too): never old and new at once. */
	if (!own_mapping(size)) {
		void *p = xrealloc(old, size);
		hugepage_advise(p, size);
		return p;
	}
	size_t rounded = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (rounded < size)
		die("out of memory allocating %zu bytes", size);
	if (old && own_mapping(old_size)) {
		size_t had = (old_size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
		void *to = map_aligned(rounded, PROT_NONE);
		void *p = mremap(old, had, rounded, MREMAP_MAYMOVE | MREMAP_FIXED, to);
		if (p == MAP_FAILED)
			die("out of memory growing a block to %zu bytes", size);
		hugepage_advise(p, rounded);
		return p;
	}
	void *p = map_aligned(rounded, PROT_READ | PROT_WRITE);
	hugepage_advise(p, rounded);
	if (used)
		memcpy(p, old, used);
	free(old);
	return p;
}

void hugepage_free(void *p, size_t size)
{
	if (p && own_mapping(size))
		munmap(p, (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
	else
		free(p);
}

void hugepage_heap_restart(char **argv)
{
	static const char tunable[] = "glibc.malloc.hugetlb";
	const char *old = getenv("GLIBC_TUNABLES");
	char self[PATH_MAX];
	ssize_t n;

	if ((old && strstr(old, tunable)) || getenv("PPTRACE_HEAP_RESTARTED"))
		return;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || (size_t)n >= sizeof(self) - 1)
		return;
	self[n] = '\0';
	struct strbuf v = STRBUF_INIT;
	if (old && *old)
		strbuf_addf(&v, "%s:", old);
	strbuf_addf(&v, "%s=1", tunable);
	/* The mark stops a loop where the loader drops the variable. */
	if (!setenv("GLIBC_TUNABLES", v.buf, 1) && !setenv("PPTRACE_HEAP_RESTARTED", "1", 1))
		execv(self, argv);
	if (old)
		setenv("GLIBC_TUNABLES", old, 1);
	else
		unsetenv("GLIBC_TUNABLES");
	unsetenv("PPTRACE_HEAP_RESTARTED");
	strbuf_release(&v);
}
