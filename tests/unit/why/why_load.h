/* why_load.h — ppgen trees for the why analysis' tests and benchmark, read
 * back as ppagg reads them: a tree written by ppgen and stored by the real
 * ppbatch, then agg_analyse() (agg/agg.h) on its database, which runs the
 * why analysis (agg/agg_why.h: the glue of docs/why.md §7) and writes the
 * why views. */
#ifndef WHY_LOAD_H
#define WHY_LOAD_H

#include "agg/agg.h"

/* Writes a ppgen tree (ppgen's options gen_args) into DIR/tree and stores
 * it with ppbatch (both from $PP_FAST_BIN, else build/bin): 0; 1 when they
 * are not built (a test skips); -1 when a command failed. */
int why_load_tree(const char *dir, const char *gen_args);

/* why_load_tree() into a new folder made from tmpl (mkdtemp(), which
 * rewrites tmpl's XXXXXX), with the paths of the tree and of its database
 * in tree and db (n bytes each): 0; 1 when ppgen or ppbatch is not built
 * (the folder is removed again and "# skip: why" printed: the test skips);
 * -1 when a command failed or the folder cannot be made. */
int why_load_tmp_tree(char *tmpl, const char *gen_args, char *tree, char *db, size_t n);

/* agg_analyse() on the database db (its folder is the base: the topology
 * file is found there), quietly, every iteration, agg.vpp = vpp and the
 * rows of agg.tp_collective_rows = rows; job holds the result
 * (agg_job_release()). Returns agg_analyse()'s result. */
int why_load_analyse(const char *db, int vpp, enum agg_why_rows rows, struct agg_job *job);

#endif
