/* bench.h — what the benchmark programs of tests/bench/ share: the CPU
 * time of the process and the median of a set of runs. */
#ifndef BENCH_H
#define BENCH_H

#include <stdlib.h>
#include <time.h>

/* CPU seconds this process has used. */
static inline double bench_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of x[0..n) (n >= 1); sorts x. */
static inline double bench_median(double *x, int n)
{
	qsort(x, (size_t)n, sizeof(*x), bench_cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

#endif
