/* unit.h — what the cmocka tests share (include it after <cmocka.h>). */
#ifndef UNIT_H
#define UNIT_H

#include <stdio.h>
#include <stdlib.h>

/* Ends the test as skipped unless cond holds; when it does not, cond has
 * printed "# skip: why" (tests/run-tests.sh shows those lines). */
#define SKIP_UNLESS(cond)       \
	do {                    \
		if (!(cond)) {  \
			skip(); \
			return; \
		}               \
	} while (0)

/* The folder of the shared reference data: $PP_SHARED, else
 * $PP_ROOT/../shared written into buf (tests/run-tests.sh sets PP_ROOT);
 * NULL when neither variable is set. */
static inline const char *unit_shared_dir(char *buf, size_t n)
{
	const char *shared = getenv("PP_SHARED"), *root = getenv("PP_ROOT");
	if (shared && *shared)
		return shared;
	if (!root || !*root)
		return NULL;
	snprintf(buf, n, "%s/../shared", root);
	return buf;
}

#endif
