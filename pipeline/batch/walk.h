/* walk.h — finding the trace files of a trace tree (docs/semantics.md §2).
 *
 * BASE/<folder>/<trace>: folders are the directories below --input whose
 * name matches one of the --folders globs (fnmatch; default every folder),
 * traces the entries whose name matches the file pattern. Names starting
 * with '.' (e.g. ppgen's .truth) are ignored. When BASE itself holds
 * matching trace files and no --folders were given, BASE is one folder.
 * The list is sorted by (folder, rank from the file name, path); --shard I/N
 * keeps files k with k mod N == I. Problems with one entry (a directory
 * named like a trace, a dangling or looping symlink, stat failure) become
 * that entry's error, never a failure of the walk.
 *
 * A trace's identity (key) is where the user laid it out: the canonical
 * path of BASE, then the folder and file names as walked, symlinks not
 * followed. Two names for one file, or one file linked into two iteration
 * folders, are two traces (docs/contracts.md §8).
 */
#ifndef WALK_H
#define WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

struct walk_file {
	char *path;         /* BASE/folder/name as found */
	char *key;          /* realpath(BASE)/folder/name: the identity of
			      * the trace in the database */
	char *real;         /* canonical absolute path of the file read;
			      * equals path when it cannot be resolved */
	char *folder;       /* the folder's base name */
	bool has_iteration; /* iteration = number after the last '_' */
	int64_t iteration;
	bool has_rank; /* rank from the file name */
	int64_t rank;
	int64_t bytes;    /* st_size */
	int64_t mtime_ns; /* st_mtim */
	char *error;      /* NULL, or why the entry cannot be a trace */
};

struct walk_list {
	struct walk_file *v;
	size_t n, alloc;
};

struct walk_opts {
	const char *input; /* BASE */
	char **folders;    /* globs over folder names; NULL/0 = "*" */
	int nfolders;
	const char *pattern; /* glob over file names; NULL = the defaults
				* *.json, *.json.gz, *.pt.trace.json* */
};

/* Fills out (which must be zeroed or released) with the sorted file list.
 * Returns 0, or PP_EIO with a message in err when BASE cannot be read. */
int walk_dir(const struct walk_opts *o, struct walk_list *out, struct strbuf *err);
/* One file named on the command line (an op trace): path as given, key =
 * realpath(its folder)/its name (symlinks in the name not followed), folder
 * = its folder's base name; a problem becomes f->error. Release with
 * walk_file_release(). */
void walk_file_at(const char *path, struct walk_file *f);
void walk_file_release(struct walk_file *f);
/* Keeps only the files of shard index (0-based) of count, in order. */
void walk_shard(struct walk_list *l, int index, int count);
/* Frees every entry; l is empty and reusable afterwards. */
void walk_list_release(struct walk_list *l);

/* Rank from a file name: `rank[_-]?(\d+)` followed by '.' or '_' (first
 * match, "rank" in any case). Returns false when there is none. */
bool walk_rank_from_name(const char *name, int64_t *rank);
/* Iteration from a folder name: the integer after the last '_' (or the
 * whole name when it is all digits). False when there is none. */
bool walk_iteration_from_folder(const char *folder, int64_t *iteration);
/* Whether a file name matches pattern (NULL = the default patterns). */
bool walk_name_matches(const char *pattern, const char *name);
struct strbuf;
/* Appends the file names a walk looks for to sb, for messages: pattern, or
 * the defaults walk_name_matches() tries, separated by ", ". */
void walk_describe_patterns(const char *pattern, struct strbuf *sb);

#endif
