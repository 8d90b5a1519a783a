/* schema.h — the one definition of the pptrace database schema.
 *
 * storage/schema.c holds every CREATE statement (internal tables, code
 * tables, the stable views of docs/contracts.md §3 and ppagg's tables) and
 * the migration path between versions. `PRAGMA user_version` holds the
 * version; schema_apply() brings a database to SCHEMA_VERSION or refuses.
 * The integer codes below are what the internal tables store; the views
 * turn them into the text of the contracts.
 */
#ifndef SCHEMA_H
#define SCHEMA_H

#include <stddef.h>

struct sqlite3;
struct strbuf;

#define SCHEMA_VERSION 7

/* traces.status */
enum { DB_STATUS_OK = 0, DB_STATUS_PARTIAL = 1, DB_STATUS_FAILED = 2 };
/* traces.mode (NULL when unknown, e.g. for a failed trace) */
enum { DB_MODE_MEGATRON = 0, DB_MODE_GENERIC = 1, DB_MODE_OPTRACE = 2 };
/* Why a trace failed (traces.fail_kind): decides whether a re-run retries. */
enum {
	DB_FAIL_NONE = 0,   /* not failed */
	DB_FAIL_INPUT = 1,  /* the trace itself is bad (parse, truncation, I/O) */
	DB_FAIL_CRASH = 2,  /* the worker died by a signal (retried on re-run) */
	DB_FAIL_TIMEOUT = 3 /* --timeout killed the worker (retried on re-run) */
};

/* The codes of categories, kernel types and phases are the values of
 * model/rank_result.h's enums, the one definition of that vocabulary:
 * category = enum rr_category, type = enum rr_type, phase = enum rr_phase
 * + 1 (0 = no step). schema_apply() writes the category_codes and
 * phase_codes tables from rr_category_name() and rr_phase_name(). */
#define DB_PHASE_CODE(phase) ((phase) < 0 ? 0 : (int)(phase) + 1)

/* kernel_t.code packs category (bits 0-3), type (4-5), recompute (6),
 * phase code (7-9) and collective (10-13: enum rr_coll, 0 = not
 * communication; the collective_codes table names it) into one small
 * integer. */
#define DB_KCODE(cat, type, recompute, phase, coll)                     \
	((int)(cat) | ((int)(type) << 4) | ((recompute) ? 1 << 6 : 0) | \
	 (DB_PHASE_CODE(phase) << 7) | ((int)(coll) << 10))

/* kernel_t and op_t rowid = trace id << DB_KROW_SHIFT | index within the
 * trace, so a trace's kernels (ops) are one rowid range and need no index. */
#define DB_KROW_SHIFT 32

/* Brings db to SCHEMA_VERSION, and its views to this build's definitions
 * when a view of a file of SCHEMA_VERSION is stored otherwise, inside one
 * IMMEDIATE transaction (safe when several processes open a new file at
 * once); a file already current is only read, and one of SCHEMA_VERSION
 * that the connection may only read keeps its views. Returns 0, or PP_EDB
 * with a message appended to err (e.g. the file is from a newer pptrace). */
int schema_apply(struct sqlite3 *db, struct strbuf *err);
/* 0 when db already has exactly SCHEMA_VERSION; PP_EDB with a message
 * appended to err otherwise (used on shard databases by --merge, which never migrates its
 * inputs). */
int schema_check(struct sqlite3 *db, struct strbuf *err);
/* 0 when db is a pptrace database of any version from 1 to SCHEMA_VERSION
 * (a baseline to compare with, read as it is); PP_EDB with a message (appended
 * to err) for a newer version or a file that is not one. */
int schema_check_readable(struct sqlite3 *db, struct strbuf *err);

#endif
