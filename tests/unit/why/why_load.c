/* why_load.c — see why_load.h. */
#include "why_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/config.h"
#include "util/strbuf.h"

/* A command of $PP_FAST_BIN (or build/bin) into buf; NULL when not built. */
static const char *bin(const char *name, char *buf, size_t n)
{
	const char *dir = getenv("PP_FAST_BIN");
	snprintf(buf, n, "%s/%s", dir ? dir : "build/bin", name);
	return access(buf, X_OK) ? NULL : buf;
}

int why_load_tree(const char *dir, const char *gen_args)
{
	char gen[4096], batch[4096];
	if (!bin("ppgen", gen, sizeof(gen)) || !bin("ppbatch", batch, sizeof(batch)))
		return 1;
	struct strbuf cmd = STRBUF_INIT;
	strbuf_addf(&cmd, "%s --quiet --out %s/tree %s && %s --input %s/tree --quiet", gen, dir,
		    gen_args, batch, dir);
	fprintf(stderr, "%s\n", cmd.buf);
	int rc = system(cmd.buf) ? -1 : 0;
	strbuf_release(&cmd);
	return rc;
}

int why_load_tmp_tree(char *tmpl, const char *gen_args, char *tree, char *db, size_t n)
{
	if (!mkdtemp(tmpl))
		return -1;
	int made = why_load_tree(tmpl, gen_args);
	if (made == 1) {
		printf("# skip: ppgen or ppbatch is not built (PP_FAST_BIN or build/bin)\n");
		rmdir(tmpl);
		return 1;
	}
	snprintf(tree, n, "%s/tree", tmpl);
	snprintf(db, n, "%s/tree/pptrace.db", tmpl);
	return made;
}

int why_load_analyse(const char *db, int vpp, enum agg_why_rows rows, struct agg_job *job)
{
	struct agg_opts o = { .db = db,
			      .threshold = 0.10,
			      .vpp = vpp,
			      .quiet = true,
			      .rank_charts = AGG_RC_NONE,
			      .why_rows = rows,
			      .config = config_new() };
	struct strbuf err = STRBUF_INIT;
	int rc = agg_analyse(&o, job, &err);
	if (rc)
		fprintf(stderr, "agg_analyse: %s\n", err.buf);
	strbuf_release(&err);
	config_free(o.config);
	return rc;
}
