/* unit.h — what the cmocka tests share (include it after <cmocka.h>). */
#ifndef UNIT_H
#define UNIT_H

/* Ends the test as skipped unless cond holds; cond prints the reason when
 * it does not (a skipped test says why). */
#define SKIP_UNLESS(cond)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			skip();                                                                    \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#endif
