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

#define SCHEMA_VERSION 2

/* traces.status */
enum { DB_STATUS_OK = 0, DB_STATUS_PARTIAL = 1, DB_STATUS_FAILED = 2 };
/* traces.mode (NULL when unknown, e.g. for a failed trace) */
enum { DB_MODE_MEGATRON = 0, DB_MODE_GENERIC = 1 };
/* Why a trace failed (traces.fail_kind): decides whether a re-run retries. */
enum {
	DB_FAIL_NONE = 0,    /* not failed */
	DB_FAIL_INPUT = 1,   /* the trace itself is bad (parse, truncation, I/O) */
	DB_FAIL_CRASH = 2,   /* the worker died by a signal (retried on re-run) */
	DB_FAIL_TIMEOUT = 3  /* --timeout killed the worker (retried on re-run) */
};

/* Kernel/category codes (category_codes table). */
enum db_cat {
	DB_CAT_FWD_COMP = 0,
	DB_CAT_FWD_COMM = 1,
	DB_CAT_BWD_COMP = 2,
	DB_CAT_BWD_COMM = 3,
	DB_CAT_PP_COMM = 4,
	DB_CAT_DP_COMM = 5,
	DB_CAT_OPT_COMP = 6,
	DB_CAT_MEMORY = 7,
	DB_CAT_OTHER = 8,
	DB_CAT_COMPUTATION = 9,     /* generic mode */
	DB_CAT_COMMUNICATION = 10,  /* generic mode */
	DB_CAT_BWD_COMP_RECOMPUTE = 11, /* category_stats subset rows only */
	DB_CAT_BWD_COMM_RECOMPUTE = 12,
	DB_CAT_COUNT = 13
};

/* Kernel type codes. */
enum db_ktype { DB_TYPE_COMP = 0, DB_TYPE_COMM = 1, DB_TYPE_MEM = 2 };

/* Phase codes (phase_codes table); DB_PHASE_NONE is stored as NULL. */
enum db_phase {
	DB_PHASE_NONE = 0,
	DB_PHASE_FWD = 1,
	DB_PHASE_BWD = 2,
	DB_PHASE_PP = 3,
	DB_PHASE_DP = 4,
	DB_PHASE_OPT = 5
};

/* kernel_t.code packs category (bits 0-3), type (4-5), recompute (6) and
 * phase (7-9) into one small integer. */
#define DB_KCODE(cat, type, recompute, phase)                                  \
	((int)(cat) | ((int)(type) << 4) | ((recompute) ? 1 << 6 : 0) |        \
	 ((int)(phase) << 7))

/* kernel_t rowid = trace id << DB_KROW_SHIFT | index within the trace, so
 * a trace's kernels are one rowid range and need no index. */
#define DB_KROW_SHIFT 32

/* Text of the codes; NULL for an invalid code. */
const char *schema_category_name(int code);
const char *schema_phase_name(int code);
const char *schema_type_name(int code);
/* Code of a name, or -1. */
int schema_category_code(const char *name);
int schema_phase_code(const char *name);

/* Brings db to SCHEMA_VERSION inside one IMMEDIATE transaction (safe when
 * several processes open a new file at once). Returns 0, or PP_EDB with a
 * message in err (e.g. the file is from a newer pptrace). */
int schema_apply(struct sqlite3 *db, char *err, size_t errlen);
/* 0 when db already has exactly SCHEMA_VERSION; PP_EDB with a message
 * otherwise (used on shard databases by --merge, which never migrates its
 * inputs). */
int schema_check(struct sqlite3 *db, char *err, size_t errlen);

#endif
