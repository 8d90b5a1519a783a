/* trace_events_scalar.c — the event parser without SIMD: any CPU, and tested on every one (PP_SIMD=scalar). */
#define PP_SIMD_SCALAR 1
#define TR_LEVEL scalar
#define TR_NAME "scalar"
#include "trace_events.h"
