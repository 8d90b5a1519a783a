/* merge.c — `ppbatch --merge --db OUT SHARD.db...`: shard databases into
 * one (the copying is storage/db_merge.c's). Missing and unreadable shards are
 * reported and make the exit status 1; the others are still merged. The
 * ranks are then decided over everything merged; rank conflicts make the
 * exit status 1 too.
 */
#include <stdbool.h>
#include <stdio.h>

#include "batch.h"
#include "storage/db.h"
#include "storage/db_merge.h"
#include "util/pp.h"
#include "util/strbuf.h"

static void count_conflict(void *ctx, const struct db_conflict *c)
{
	(void)c;
	++*(int64_t *)ctx;
}

int merge_run(const struct merge_opts *o, struct strbuf *err)
{
	struct db_merge_stats ms = { 0 };
	struct strbuf bad = STRBUF_INIT;
	int nbad = 0, rc = PP_EXIT_OK;
	int64_t run_id = 0;

	struct db *out = db_open(o->db, 0, 0, err);
	if (!out)
		return PP_EXIT_FATAL;
	struct db_run run = { .input = "merge", .db = o->db, .processes = 1 };
	if (db_run_begin(out, &run, &run_id))
		warn("%s", db_errmsg(out));
	int64_t t0 = pp_now_ns();
	for (int i = 0; i < o->nfiles; i++) {
		struct strbuf msg = STRBUF_INIT; /* for err and for the run's row */
		if (db_merge_shard(out, o->files[i], run_id, &ms, &msg)) {
			pp_err(err, PP_EDB, "%s", msg.buf);
			strbuf_addf(&bad, "%s\n", msg.buf);
			nbad++;
		}
		strbuf_release(&msg);
	}
	/* The shards' traces together decide the ranks (docs/contracts.md §8). */
	int64_t nconflicts = 0;
	bool resolved =
		!db_resolve_ranks(out) && !db_rank_conflicts(out, count_conflict, &nconflicts);
	if (!resolved)
		pp_err(err, PP_EDB, "%s", db_errmsg(out));
	run.state = "done";
	run.files = o->nfiles;
	run.ok = ms.added + ms.replaced + ms.unchanged;
	run.failed = nbad;
	run.seconds = (double)(pp_now_ns() - t0) / 1e9;
	run.failures = bad.len ? bad.buf : NULL;
	if (run_id && db_run_finish(out, run_id, &run))
		warn("%s", db_errmsg(out));
	if (!o->quiet)
		printf("%s: merged %d of %d shards into %s: %ld traces added, "
		       "%ld replaced, %ld unchanged\n",
		       pp_progname(), o->nfiles - nbad, o->nfiles, o->db, ms.added, ms.replaced,
		       ms.unchanged);
	if (nbad) {
		printf("missing or unreadable shards: %d\n%s", nbad, bad.buf);
		rc = PP_EXIT_PARTIAL;
	}
	if (nconflicts) {
		printf("rank conflicts: %lld traces claim a rank another trace of their "
		       "iteration claims (SELECT * FROM rank_conflicts)\n",
		       (long long)nconflicts);
		rc = PP_EXIT_PARTIAL;
	}
	if (!resolved)
		rc = PP_EXIT_FATAL;
	db_close(out);
	strbuf_release(&bad);
	return rc;
}
