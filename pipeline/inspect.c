/* inspect.c — `ppbatch --inspect` (placeholder until the reader lands). */
#include "batch.h"
#include "pp.h"

int inspect_run(const struct batch_opts *o)
{
	error("--inspect is not implemented yet");
	return PP_EXIT_FATAL;
}
