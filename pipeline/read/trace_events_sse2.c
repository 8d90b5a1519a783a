/* trace_events_sse2.c — the event parser for SSE2, x86-64's baseline. */
#if defined(__x86_64__)
#define TR_LEVEL sse2
#define TR_NAME "sse2"
#include "trace_events.h"
#else
typedef int trace_events_sse2_unused; /* ISO C wants a declaration */
#endif
