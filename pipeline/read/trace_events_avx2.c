/* trace_events_avx2.c — the event parser for AVX2 (x86-64; the Makefile and tests/fuzz/run.sh
 * compile this file with -mavx2 -mbmi -mbmi2 -mpopcnt). */
#if defined(__x86_64__)
#define TR_LEVEL avx2
#define TR_NAME "avx2"
#include "trace_events.h"
#else
typedef int trace_events_avx2_unused; /* ISO C wants a declaration */
#endif
