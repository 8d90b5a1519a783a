/* pptimer.c — import of Megatron PP-timer dumps (placeholder). */
#include "batch.h"
#include "pp.h"

int pptimer_run(const struct batch_opts *o)
{
	error("--format pp-timer is not implemented yet");
	return PP_EXIT_FATAL;
}
