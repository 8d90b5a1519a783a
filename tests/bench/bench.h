/* bench.h — what the benchmark programs of tests/bench/ share: their
 * "--name value" options, the CPU time of the process and the median of a
 * set of runs. */
#ifndef BENCH_H
#define BENCH_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/cmp.h"

/* One "--name value" option: the value goes to *num (atoi()) when num is
 * not NULL, else to *str. */
struct bench_opt {
	const char *name;
	int *num;
	const char **str;
};

/* Takes the "--name value" pairs of argv[1..argc) by opts[0..n); a name
 * not among them is passed over. */
static inline void bench_args(int argc, char **argv, const struct bench_opt *opts, size_t n)
{
	for (int i = 1; i + 1 < argc; i += 2)
		for (size_t k = 0; k < n; k++) {
			if (strcmp(argv[i], opts[k].name))
				continue;
			if (opts[k].num)
				*opts[k].num = atoi(argv[i + 1]);
			else
				*opts[k].str = argv[i + 1];
		}
}

/* CPU seconds this process has used. */
static inline double bench_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
