#!/bin/bash
# Allocation failure ends the process (docs/contracts.md §7): no bare
# malloc/calloc/realloc/strdup/strndup and no PP_ENOMEM in cmd/ pipeline/
# storage/ outside util/pp.[ch] (tests/reliab/check_alloc.py).
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"

checker_clean "every allocation in cmd/ pipeline/ storage/ goes through x*()" 100 \
	"$RELIAB/check_alloc.py" "$PP_ROOT"
# The checker itself catches the patterns it is meant to catch, and only them.
mkdir -p "$T/bad/pipeline/util" "$T/bad/storage"
cat >"$T/bad/storage/x.c" <<'C'
int f(struct t *t, const char *s)
{
	char *a = malloc(10), *b = calloc(1, 2), *c = strdup(s);
	c = strndup(s, 2);
	a = realloc (a, 20);
	if (!a)
		return PP_ENOMEM;
	/* malloc(1) in a comment, PP_ENOMEM too */
	puts("strdup(s) in a string");
	a = xmalloc(1), b = sqlite3_malloc(2), c = t->realloc(c, 3), c = hugepage_realloc(c, 1, 1, 2);
	void *m = malloc(64); /* pp-alloc-ok: handed to a library that frees it */
	void *n = malloc(64); /* pp-alloc-ok: */
	return 0;
}
C
printf 'void *xmalloc(size_t n) { return malloc(n); }\n' >"$T/bad/pipeline/util/pp.c"
python3 "$RELIAB/check_alloc.py" "$T/bad" >"$T/bad.out" 2>/dev/null
is "the checker exits 1 on them" 1 "$?"
is "the checker flags the bare calls, PP_ENOMEM and an exception without a reason" \
	"storage/x.c:3 malloc
storage/x.c:3 calloc
storage/x.c:3 strdup
storage/x.c:4 strndup
storage/x.c:5 realloc
storage/x.c:7 PP_ENOMEM
storage/x.c:12 malloc" \
	"$(sed -E 's/^([^:]+:[0-9]+): (PP_ENOMEM|[a-z]+).*/\1 \2/' "$T/bad.out" | sed 's/()$//')"
# ... also the allocators that report failure in their own way.
mkdir -p "$T/bad2/pipeline"
cat >"$T/bad2/pipeline/y.c" <<'C'
void g(void **p, char **s)
{
	posix_memalign(p, 64, 128);
	*p = aligned_alloc(64, 128);
	asprintf(s, "%d", 1);
}
C
python3 "$RELIAB/check_alloc.py" "$T/bad2" >"$T/bad2.out" 2>/dev/null
is "the checker flags posix_memalign, aligned_alloc and asprintf" \
	"pipeline/y.c:3 posix_memalign
pipeline/y.c:4 aligned_alloc
pipeline/y.c:5 asprintf" \
	"$(sed -E 's/^([^:]+:[0-9]+): ([a-z_]+).*/\1 \2/' "$T/bad2.out")"
done_testing
