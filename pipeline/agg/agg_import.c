/* agg_import.c — the topology an import of another format records
 * (agg_int.h: agg_import_topology(); docs/ppagg.md "Topology").
 *
 * A PP-timer or Primus dump holds one pipeline, the data-parallel rank 0's:
 * its import stores the PP size and VPP it was given or read
 * (storage/db_import.h) and, per trace, its stage. The pipeline is then the
 * ranks of stages 0..P-1 in order, one rank each.
 */
#include "agg_int.h"

#include <stdlib.h>

#include "storage/db_import.h"
#include "util/pp.h"

struct stages {
	int P;
	int *rank_at; /* [P], -1 none */
	bool bad;     /* a stage out of range, or with two ranks */
};

static int take_stage(void *ctx, int stage, int64_t rank)
{
	struct stages *S = ctx;
	if (stage < 0 || stage >= S->P || rank < 0 || rank > 10000000 ||
	    (S->rank_at[stage] >= 0 && S->rank_at[stage] != rank))
		S->bad = true;
	else
		S->rank_at[stage] = (int)rank;
	return 0;
}

int agg_import_topology(struct db *db, struct topology *t, int *vpp)
{
	struct db_import_info imp;
	int found = 0;
	int rc = db_import_latest(db, &imp, &found);
	*vpp = 0;
	if (rc || !found)
		return rc;
	*vpp = imp.vpp_size > 0 ? imp.vpp_size : 1;
	if (t->source != TOPO_SRC_NONE || imp.pp_size < 1 || imp.pp_size > 100000)
		return 0;
	struct stages S = { imp.pp_size, xmalloc((size_t)imp.pp_size * sizeof(int)), false };
	for (int s = 0; s < S.P; s++)
		S.rank_at[s] = -1;
	rc = db_import_stages(db, take_stage, &S);
	for (int s = 0; s < S.P; s++)
		S.bad |= S.rank_at[s] < 0;
	if (!rc && !S.bad && !topo_from_grid(t, 1, S.P, S.rank_at)) {
		t->source = TOPO_SRC_IMPORT;
		strbuf_addf(&t->origin,
			    "the %s import (pp %d, vpp %d; one pipeline: the ranks its dump holds)",
			    imp.format, imp.pp_size, *vpp);
	}
	free(S.rank_at);
	return rc;
}
