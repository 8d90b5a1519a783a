#!/bin/bash
# No SQL is ever built from trace or path text: every sqlite3_prepare*/exec
# takes a constant statement, nothing formats SQL at run time
# (tests/reliab/check_sql.py); the checker flags what it must, both ways.
source "$PP_ROOT/tests/lib.sh"
source "$PP_ROOT/tests/reliab/lib-reliab.sh"

checker_clean "every SQL statement in cmd/ pipeline/ storage/ is a constant" 10 \
	"$RELIAB/check_sql.py" "$PP_ROOT"
# The checker itself catches the patterns it is meant to catch.
mkdir -p "$T/bad/storage"
cat >"$T/bad/storage/x.c" <<'C'
void f(sqlite3 *db, const char *name, sqlite3_stmt **st) {
	char buf[100];
	snprintf(buf, sizeof buf, "SELECT * FROM t WHERE n = '%s'", name);
	sqlite3_prepare_v2(db, buf, -1, st, NULL);
	sqlite3_free(sqlite3_mprintf("DELETE FROM t WHERE n = %Q", name));
}
C
is "the checker flags formatted SQL" 3 "$(python3 "$RELIAB/check_sql.py" "$T/bad" 2>/dev/null | wc -l)"
# A function-like macro of literals and its parameter is a constant when
# given a literal, not when given a variable or when its body holds one.
cat >"$T/bad/storage/x.c" <<'C'
#define Q(where) \
	"SELECT a FROM t" \
	" WHERE " where
#define R(where) \
	"SELECT a FROM t" \
	" WHERE " where extra
void f(sqlite3 *db, const char *name, sqlite3_stmt **st) {
	sqlite3_prepare_v2(db, Q("a = ?1"), -1, st, NULL);
	sqlite3_prepare_v2(db, Q(name), -1, st, NULL);
	sqlite3_prepare_v2(db, R("a = ?1"), -1, st, NULL);
}
C
is "... a macro given a variable, a macro holding one" "x.c:9 x.c:10" \
	"$(python3 "$RELIAB/check_sql.py" "$T/bad" 2>/dev/null | cut -d: -f1,2 | sed 's|.*/||' | paste -sd' ')"
# The writer's tables (storage/db_write.c): t->sql[i] is a constant when
# every struct db_write_table is a static const of constant SQL.
cat >"$T/bad/storage/x.c" <<'C'
static const char *const good[] = { "SELECT 1" };
static const struct db_write_table ok = { good, 1, 0, 0, "ok" };
void f(sqlite3 *db, const struct db_write_table *t, sqlite3_stmt **st) {
	sqlite3_prepare_v2(db, t->sql[0], -1, st, NULL);
}
C
out=$(python3 "$RELIAB/check_sql.py" "$T/bad" 2>&1) && rc=0 || rc=$?
is "... a writer's table of constants: passes" "0" "$rc"
is "... and its prepare was checked, nothing flagged" "# 1 sqlite3_prepare/exec calls checked" "$out"
cat >>"$T/bad/storage/x.c" <<'C'
static char *built[1];
static const struct db_write_table bad = { built, 1, 0, 0, "bad" };
struct db_write_table loose = { .sql = good, .n = 1 };
C
is "... a table of SQL built at run time, one not static const, the writer's use" \
	"x.c:4 x.c:7 x.c:8" \
	"$(python3 "$RELIAB/check_sql.py" "$T/bad" 2>/dev/null | cut -d: -f1,2 | sed 's|.*/||' | sort -t: -k2n | paste -sd' ')"
# A function the files share (storage/db_read.c's db_read_prepare()): its
# SQL parameter is a constant when every call in the tree passes one.
rm -f "$T/bad/storage/x.c"
cat >"$T/bad/storage/r.c" <<'C'
sqlite3_stmt *rd(struct db *db, const char *sql, const char *what) {
	sqlite3_stmt *st;
	sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL);
	return st;
}
C
cat >"$T/bad/storage/a.c" <<'C'
static const char q[] = "SELECT 1";
void a(struct db *db) { rd(db, q, "a"); rd(db, "SELECT 2", "b"); }
C
out=$(python3 "$RELIAB/check_sql.py" "$T/bad" 2>&1) && rc=0 || rc=$?
is "... a shared function given constants in every file: passes" "0" "$rc"
cat >"$T/bad/storage/b.c" <<'C'
void b(struct db *db, const char *name) { rd(db, name, "b"); }
C
is "... one call given a variable: its prepare is flagged" "r.c:3" \
	"$(python3 "$RELIAB/check_sql.py" "$T/bad" 2>/dev/null | cut -d: -f1,2 | sed 's|.*/||')"
done_testing
