/* db_merge.h — copying a shard database into another (`ppbatch --merge`).
 *
 * A trace is identified by its path (where it was laid out): when OUT
 * already holds it, the better
 * row wins (not failed over failed; then the newer file; then the later
 * analysis) and an equal row is left alone, so merging twice, or merging
 * overlapping shards, gives the same database without duplicates.
 */
#ifndef DB_MERGE_H
#define DB_MERGE_H

#include <stddef.h>
#include <stdint.h>

struct db;
struct strbuf;

/* Counts of traces, summed over the shards merged with one struct. */
struct db_merge_stats {
	long added, replaced, unchanged;
};

/* Copies every trace of the shard database at path into out, in one
 * transaction, recording run_id as their run. Opens the shard read-only so
 * a damaged or foreign file is never modified. Returns 0; PP_ENOTFOUND
 * when path does not exist; PP_EDB when it is unreadable, not a pptrace
 * database of this schema version, or the copy failed (rolled back). The
 * message, naming the shard, is appended to err. */
int db_merge_shard(struct db *out, const char *path, int64_t run_id, struct db_merge_stats *ms,
		   struct strbuf *err);

#endif
