/* schedule.c — Megatron's warm-up count (see schedule.h). */
#include "schedule.h"

#include <string.h>

#include "util/cli.h"
#include "util/pp.h"

static bool shape_ok(const struct sched_shape *sh, int stage)
{
	return sh->pp >= 1 && sh->vpp >= 1 && sh->m >= 1 && sh->group >= 0 && sh->extra >= 0 &&
	       stage >= 0 && stage < sh->pp;
}

int sched_warmup_wanted(const struct sched_shape *sh, int stage)
{
	if (!shape_ok(sh, stage))
		return PP_EINVAL;
	int P = sh->pp, g = sh->group ? sh->group : sh->pp;
	if (P == 1)
		return sh->interleaved ? 1 : 0;
	if (!sh->interleaved)
		return P - stage - 1 + sh->extra;
	return (P - stage - 1) * 2 + (sh->vpp - 1) * g + sh->extra;
}

int sched_warmup(const struct sched_shape *sh, int stage)
{
	int w = sched_warmup_wanted(sh, stage), total;
	if (w < 0)
		return w;
	total = sh->m * sh->vpp;
	if (sh->rule == SCHED_LEGACY && sh->interleaved && sh->m == sh->pp)
		return total;
	return w < total ? w : total;
}

static const char *const rule_names[] = { [SCHED_CORE] = "core", [SCHED_LEGACY] = "legacy" };

CLI_CHOICE_FUNCS(sched_rule, enum sched_rule, rule_names)
