/* unit.h — what the cmocka tests share (include it after <cmocka.h>). */
#ifndef UNIT_H
#define UNIT_H

/* Ends the test as skipped unless cond holds; when it does not, cond has
 * printed "# skip: why" (tests/run-tests.sh shows those lines). */
#define SKIP_UNLESS(cond)       \
	do {                    \
		if (!(cond)) {  \
			skip(); \
			return; \
		}               \
	} while (0)

#endif
