/* batch.c — the ppbatch coordinator (placeholder). */
#include "batch.h"
#include "pp.h"

int batch_run(const struct batch_opts *o)
{
	error("batch analysis is not implemented yet");
	return PP_EXIT_FATAL;
}
