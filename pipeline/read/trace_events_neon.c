/* trace_events_neon.c — the event parser for NEON (aarch64). */
#if defined(__aarch64__)
#define TR_LEVEL neon
#define TR_NAME "neon"
#include "trace_events.h"
#else
typedef int trace_events_neon_unused; /* ISO C wants a declaration */
#endif
