/* trace_events_avx512.c — the event parser for AVX-512 BW and VL (x86-64; the Makefile and
 * tests/fuzz/run.sh compile this file with -mavx512bw -mavx512vl ...). */
#if defined(__x86_64__)
#define TR_LEVEL avx512
#define TR_NAME "avx512"
#include "trace_events.h"
#else
typedef int trace_events_avx512_unused; /* ISO C wants a declaration */
#endif
