/* merge.c — `ppbatch --merge` of shard databases (placeholder). */
#include "batch.h"
#include "pp.h"

int merge_run(const struct batch_opts *o)
{
	error("--merge is not implemented yet");
	return PP_EXIT_FATAL;
}
