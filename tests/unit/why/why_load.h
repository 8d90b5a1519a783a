/* why_load.h — what ppagg's glue does with the why engine (docs/why.md §7),
 * in miniature, for the tests and the benchmark: the rows of a database's
 * iterations into the engine (traces, every rank's ops, the communication
 * kernels of a group, the groups with their kind from the topology), the
 * what-if table of the cells' workers for the critical path, and the
 * results written to the why views. It trusts its database: every trace of
 * the iterations is aggregated (no conflicts), ranks are the topology's. */
#ifndef WHY_LOAD_H
#define WHY_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "agg/topology.h"
#include "storage/db.h"
#include "whatif/wi_ops.h"
#include "why/why.h"

struct why_load {
	struct why *w;
	struct wi_table reps; /* the cells' workers' ops, labelled, own clocks */
	/* per engine group: description, ranks as traced, kind */
	char **gdesc, **gtext;
	int *gkind;
	size_t ngroups;
	size_t nops, nkernels, ntraces; /* rows read */
	size_t cells, cells_seen;       /* the topology's (dp_rank, stage) cells,
					 * and those whose worker has ops */
	double seconds_kernels;         /* of which reading the groups and kernels */
};

/* Reads the n iterations its[] of db with topology t (indexed) and VPP vpp
 * into L (why_load_release()). 0 or PP_EDB. */
int why_load_db(struct db *db, const int64_t *its, size_t n, const struct topology *t, int vpp,
		struct why_load *L);

/* The critical path of L's workers' ops with r's clock offsets taken off:
 * 0; PP_EINVAL when a cell of the topology has no worker with ops (the
 * what-if model would take the grid it sees for the whole job), or the
 * what-if engine's error when it refuses them (messages on stderr). The engine goes to *keep when keep is not NULL (the
 * caller frees it), else it is freed. */
int why_load_cpath(struct why_load *L, const struct why_result *r, struct why_cpath *c,
		   struct whatif **keep);

/* Writes r and c (NULL: no critical path) into db's why views. */
int why_load_store(struct db *db, const struct why_load *L, const struct why_result *r,
		   const struct why_cpath *c, const int64_t *its, size_t n);

void why_load_release(struct why_load *L);

/* Writes a ppgen tree (ppgen's options gen_args) into DIR/tree and stores
 * it with ppbatch (both from $PP_FAST_BIN, else build/bin): 0; 1 when they
 * are not built (a test skips); -1 when a command failed. */
int why_load_tree(const char *dir, const char *gen_args);

/* The database's iterations, at most max of them, into its; how many. */
size_t why_load_iterations(struct db *db, int64_t *its, size_t max);

#endif
