/* agg_db.c — ppagg's database access: reads the stable views of ppbatch
 * (ranks, steps, category_stats, kernels; docs/contracts.md §3) and writes
 * the pp_groups / pipelines / stragglers rows. Every read is one query per
 * iteration ordered by rank, so loading is linear in the rows; the kernel
 * scan for timeline blocks is grouped in SQLite and only done when charts
 * are written. Writing deletes and re-inserts the rows of the aggregated
 * iterations inside one IMMEDIATE transaction, so a re-run gives the same
 * content and readers never see half of it.
 */
#include "agg_int.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/schema.h"
#include "topology.h"
#include "util/pp.h"

struct agg_db {
	sqlite3 *db;
	char msg[512];
};

static int db_fail(struct agg_db *db, const char *what)
{
	snprintf(db->msg, sizeof(db->msg), "%s: %s", what, sqlite3_errmsg(db->db));
	return PP_EDB;
}

const char *agg_db_errmsg(struct agg_db *db)
{
	return db->msg;
}

struct agg_db *agg_db_open(const char *path, char *err, size_t errlen)
{
	struct agg_db *db = calloc(1, sizeof(*db));
	if (!db) {
		snprintf(err, errlen, "%s", pp_strerror(PP_ENOMEM));
		return NULL;
	}
	if (sqlite3_open_v2(path, &db->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot open database '%s' (run ppbatch first?): %s", path,
			 db->db ? sqlite3_errmsg(db->db) : "out of memory");
		agg_db_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db->db, 30000);
	char why[256];
	if (schema_apply(db->db, why, sizeof(why))) {
		snprintf(err, errlen, "cannot use database '%s': %s", path, why);
		agg_db_close(db);
		return NULL;
	}
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->db, "SELECT 1 FROM pp_groups LIMIT 1", -1, &st, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "database '%s' has no pp_groups view: %s", path,
			 sqlite3_errmsg(db->db));
		agg_db_close(db);
		return NULL;
	}
	sqlite3_finalize(st);
	return db;
}

void agg_db_close(struct agg_db *db)
{
	if (!db)
		return;
	sqlite3_close(db->db);
	free(db);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int agg_db_iterations(struct agg_db *db, char **names, int nnames, int **out, int *nout,
		      int *nmissing)
{
	sqlite3_stmt *st;
	int n = 0, alloc = 16, rc = 0;
	int *v = malloc((size_t)alloc * sizeof(int));
	*nmissing = 0;
	if (!v)
		return PP_ENOMEM;
	if (sqlite3_prepare_v2(db->db,
			       "SELECT DISTINCT iteration FROM ranks WHERE iteration IS NOT NULL "
			       "AND (?1 IS NULL OR folder = ?1 OR CAST(iteration AS TEXT) = ?1) "
			       "ORDER BY iteration",
			       -1, &st, NULL) != SQLITE_OK) {
		free(v);
		return db_fail(db, "listing iterations");
	}
	for (int i = 0; i < (nnames ? nnames : 1) && !rc; i++) {
		sqlite3_reset(st);
		if (nnames)
			sqlite3_bind_text(st, 1, names[i], -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 1);
		int found = 0, s;
		while ((s = sqlite3_step(st)) == SQLITE_ROW) {
			if (n == alloc) {
				int *nv = realloc(v, (size_t)(alloc *= 2) * sizeof(int));
				if (!nv) {
					rc = PP_ENOMEM;
					break;
				}
				v = nv;
			}
			v[n++] = sqlite3_column_int(st, 0);
			found++;
		}
		if (s != SQLITE_DONE && !rc)
			rc = db_fail(db, "listing iterations");
		if (!found && nnames) {
			error("no iteration '%s' in the database", names[i]);
			(*nmissing)++;
		}
	}
	sqlite3_finalize(st);
	if (rc) {
		free(v);
		return rc;
	}
	qsort(v, (size_t)n, sizeof(int), cmp_int);
	int k = 0;
	for (int i = 0; i < n; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	*out = v;
	*nout = k;
	return 0;
}

struct agg_rank *agg_iter_rank(const struct agg_iter *it, int rank)
{
	size_t lo = 0, hi = it->nranks;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (it->ranks[mid].in.rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < it->nranks && it->ranks[lo].in.rank == rank ? &it->ranks[lo] : NULL;
}

void agg_iter_release(struct agg_iter *it)
{
	if (it->ranks)
		for (size_t i = 0; i < it->nranks; i++)
			free(it->ranks[i].blocks);
	free(it->ranks);
	agg_result_release(&it->res);
	arena_release(&it->arena);
	memset(it, 0, sizeof(*it));
}

static const char *col_str(struct agg_iter *it, sqlite3_stmt *st, int c)
{
	const unsigned char *s = sqlite3_column_text(st, c);
	if (!s)
		return NULL;
	return arena_strndup(&it->arena, (const char *)s, strlen((const char *)s));
}

static int64_t col_i64(sqlite3_stmt *st, int c)
{
	return sqlite3_column_int64(st, c);
}

static int phase_code(const unsigned char *p)
{
	static const char *const names[] = { "", "fwd", "bwd", "pp", "dp", "opt" };
	if (!p)
		return 0;
	for (int i = 1; i < 6; i++)
		if (!strcmp((const char *)p, names[i]))
			return i;
	return 0;
}

static int load_ranks(struct agg_db *db, int iteration, struct agg_iter *it)
{
	sqlite3_stmt *st;
	size_t alloc = 64;
	if (sqlite3_prepare_v2(db->db,
			       "SELECT rank, folder, path, status, error, mode, window_start_ns, "
			       "window_end_ns, gpu_busy_ns, idle_ns, bubble_ns, comp_busy_ns, "
			       "comm_busy_ns, overlap_ns, coverage FROM ranks WHERE iteration = ? "
			       "ORDER BY rank, status, path",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, "reading ranks");
	sqlite3_bind_int(st, 1, iteration);
	it->ranks = calloc(alloc, sizeof(*it->ranks));
	int s, rc = 0;
	if (!it->ranks)
		rc = PP_ENOMEM;
	while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
		int rank = sqlite3_column_int(st, 0);
		if (sqlite3_column_type(st, 0) == SQLITE_NULL ||
		    (it->nranks && it->ranks[it->nranks - 1].in.rank == rank))
			continue; /* a second file for the same rank: the first wins */
		if (it->nranks == alloc) {
			struct agg_rank *nv = realloc(it->ranks, 2 * alloc * sizeof(*nv));
			if (!nv) {
				rc = PP_ENOMEM;
				break;
			}
			it->ranks = nv;
			alloc *= 2;
		}
		struct agg_rank *r = &it->ranks[it->nranks++];
		memset(r, 0, sizeof(*r));
		r->in.rank = rank;
		r->folder = col_str(it, st, 1);
		r->path = col_str(it, st, 2);
		r->status = col_str(it, st, 3);
		r->error = col_str(it, st, 4);
		r->mode = col_str(it, st, 5);
		if (!it->folder && r->folder)
			it->folder = r->folder;
		bool ok = r->status && strcmp(r->status, "failed");
		r->in.ok = ok;
		r->in.has_window = ok && sqlite3_column_type(st, 6) != SQLITE_NULL;
		r->in.megatron = r->mode && !strcmp(r->mode, "megatron");
		r->in.win_s = col_i64(st, 6);
		r->in.win_e = col_i64(st, 7);
		r->in.gpu_busy = col_i64(st, 8);
		r->idle = col_i64(st, 9);
		r->in.bubble = col_i64(st, 10);
		r->comp_busy = col_i64(st, 11);
		r->comm_busy = col_i64(st, 12);
		r->overlap = col_i64(st, 13);
		r->coverage = sqlite3_column_double(st, 14);
		r->in.fwd_med = r->in.bwd_med = -1;
		if (ok)
			it->nok++;
		else
			it->nfailed++;
	}
	if (!rc && s != SQLITE_DONE)
		rc = db_fail(db, "reading ranks");
	sqlite3_finalize(st);
	return rc;
}

/* A copy of the n elements of old in a doubled arena array (*alloc
 * updated), or NULL when the arena is out of memory. */
static void *grow(struct arena *a, void *old, size_t n, size_t *alloc, size_t size)
{
	size_t na = *alloc ? 2 * *alloc : 32;
	void *nv = arena_alloc(a, na * size);
	if (!nv)
		return NULL;
	if (n)
		memcpy(nv, old, n * size);
	*alloc = na;
	return nv;
}

static int load_cats(struct agg_db *db, int iteration, struct agg_iter *it)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->db,
			       "SELECT rank, category, kernels, sum_ns, busy_ns FROM category_stats "
			       "WHERE iteration = ? ORDER BY rank, category",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, "reading category_stats");
	sqlite3_bind_int(st, 1, iteration);
	int s, rc = 0;
	struct agg_rank *r = NULL;
	size_t alloc = 0;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		int rank = sqlite3_column_int(st, 0);
		if (!r || r->in.rank != rank) {
			r = agg_iter_rank(it, rank);
			alloc = 0;
		}
		if (!r)
			continue;
		if (r->ncats == alloc &&
		    !(r->cats = grow(&it->arena, r->cats, r->ncats, &alloc, sizeof(*r->cats)))) {
			rc = PP_ENOMEM;
			break;
		}
		struct agg_catstat *c = &r->cats[r->ncats++];
		c->category = col_str(it, st, 1);
		c->kernels = col_i64(st, 2);
		c->sum = col_i64(st, 3);
		c->busy = col_i64(st, 4);
		if (c->category && (!strcmp(c->category, "fwd_computation") ||
				    !strcmp(c->category, "bwd_computation")))
			r->in.compute += c->busy;
	}
	if (!rc && s != SQLITE_DONE)
		rc = db_fail(db, "reading category_stats");
	sqlite3_finalize(st);
	return rc;
}

static void rank_medians(struct agg_rank *r, int64_t *scratch)
{
	for (int phase = 1; phase <= 2; phase++) {
		size_t k = 0;
		for (size_t i = 0; i < r->nsteps; i++)
			if (r->steps[i].phase == phase && r->steps[i].has_kernels)
				scratch[k++] = r->steps[i].wall;
		if (phase == 1) {
			r->in.nfwd = (int)k;
			r->in.fwd_med = agg_lower_median(scratch, k);
		} else {
			r->in.nbwd = (int)k;
			r->in.bwd_med = agg_lower_median(scratch, k);
		}
	}
}

static int load_steps(struct agg_db *db, int iteration, struct agg_iter *it)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->db,
			       /* The steps view, plus the VPP labels a PP-timer
				* import records (step_t.chunk, mbs). */
			       "SELECT t.rank, p.name AS phase, s.seq, s.cpu_start_ns, s.cpu_end_ns,"
			       " s.start_ns, s.end_ns,"
			       " CASE WHEN s.start_ns IS NULL THEN 0 ELSE s.end_ns - s.start_ns END,"
			       " s.comp_ns, s.comm_ns, s.overlap_ns, s.kernels, s.chunk, s.mbs"
			       " FROM traces t JOIN step_t s ON s.trace_id = t.id"
			       " JOIN phase_codes p ON p.code = s.phase"
			       " WHERE t.iteration = ? ORDER BY t.rank, phase, s.seq",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, "reading steps");
	sqlite3_bind_int(st, 1, iteration);
	int s, rc = 0;
	struct agg_rank *r = NULL;
	size_t alloc = 0;
	int64_t *scratch = NULL;
	size_t scratch_n = 0;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		int rank = sqlite3_column_int(st, 0);
		if (!r || r->in.rank != rank) {
			r = agg_iter_rank(it, rank);
			alloc = 0;
		}
		if (!r)
			continue;
		if (r->nsteps == alloc &&
		    !(r->steps = grow(&it->arena, r->steps, r->nsteps, &alloc, sizeof(*r->steps)))) {
			rc = PP_ENOMEM;
			break;
		}
		struct agg_step *p = &r->steps[r->nsteps++];
		p->phase = (uint8_t)phase_code(sqlite3_column_text(st, 1));
		p->seq = sqlite3_column_int(st, 2);
		p->cpu_s = col_i64(st, 3);
		p->cpu_e = col_i64(st, 4);
		p->has_kernels = sqlite3_column_type(st, 5) != SQLITE_NULL;
		p->s = col_i64(st, 5);
		p->e = col_i64(st, 6);
		p->wall = col_i64(st, 7);
		p->comp = col_i64(st, 8);
		p->comm = col_i64(st, 9);
		p->overlap = col_i64(st, 10);
		p->kernels = sqlite3_column_int(st, 11);
		p->chunk = sqlite3_column_type(st, 12) == SQLITE_NULL ? -1
								      : sqlite3_column_int(st, 12);
		p->microbatch = sqlite3_column_type(st, 13) == SQLITE_NULL
					? -1
					: sqlite3_column_int(st, 13);
	}
	if (!rc && s != SQLITE_DONE)
		rc = db_fail(db, "reading steps");
	sqlite3_finalize(st);
	for (size_t i = 0; !rc && i < it->nranks; i++) {
		struct agg_rank *q = &it->ranks[i];
		if (q->nsteps > scratch_n) {
			free(scratch);
			scratch_n = q->nsteps;
			scratch = malloc(scratch_n * sizeof(*scratch));
			if (!scratch) {
				rc = PP_ENOMEM;
				break;
			}
		}
		rank_medians(q, scratch);
	}
	free(scratch);
	return rc;
}

int agg_db_load(struct agg_db *db, int iteration, struct agg_iter *it)
{
	memset(it, 0, sizeof(*it));
	arena_init(&it->arena);
	it->iteration = iteration;
	it->res.slowest_stage = -1;
	int rc = load_ranks(db, iteration, it);
	if (!rc)
		rc = load_cats(db, iteration, it);
	if (!rc)
		rc = load_steps(db, iteration, it);
	return rc;
}

static int add_block(struct agg_rank *r, const struct agg_block *b)
{
	if (r->nblocks == r->ablocks) {
		size_t na = r->ablocks ? 2 * r->ablocks : 256;
		struct agg_block *nv = realloc(r->blocks, na * sizeof(*nv));
		if (!nv)
			return PP_ENOMEM;
		r->blocks = nv;
		r->ablocks = na;
	}
	r->blocks[r->nblocks++] = *b;
	return 0;
}

int agg_db_load_blocks(struct agg_db *db, struct agg_iter *it)
{
	sqlite3_stmt *st;
	/* Rows come per (rank, category, phase, seq) split by the recompute
	 * flag; the two halves are merged into one block, and recompute rows
	 * also make a block of the recompute subset. */
	if (sqlite3_prepare_v2(db->db,
			       "SELECT rank, category, phase, seq, recompute, min(start_ns), "
			       "max(start_ns + dur_ns), count(*) FROM kernels "
			       "WHERE iteration = ? AND seq IS NOT NULL "
			       "AND category NOT IN ('memory', 'other') "
			       "GROUP BY rank, category, phase, seq, recompute "
			       "ORDER BY rank, category, phase, seq, recompute",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, "reading kernels");
	sqlite3_bind_int(st, 1, it->iteration);
	int s, rc = 0;
	struct agg_rank *r = NULL;
	while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
		int rank = sqlite3_column_int(st, 0);
		if (!r || r->in.rank != rank)
			r = agg_iter_rank(it, rank);
		if (!r)
			continue;
		const char *cat = (const char *)sqlite3_column_text(st, 1);
		int c = cat ? agg_cat_of(cat, false) : -1;
		if (c < 0)
			continue;
		struct agg_block b = { .s = col_i64(st, 5), .e = col_i64(st, 6),
				       .seq = sqlite3_column_int(st, 3), .cat = (uint8_t)c,
				       .phase = (uint8_t)phase_code(sqlite3_column_text(st, 2)),
				       .kernels = sqlite3_column_int(st, 7) };
		bool recompute = sqlite3_column_int(st, 4) != 0;
		struct agg_block *last = r->nblocks ? &r->blocks[r->nblocks - 1] : NULL;
		if (recompute && last && last->cat == b.cat && last->phase == b.phase &&
		    last->seq == b.seq) {
			if (b.s < last->s)
				last->s = b.s;
			if (b.e > last->e)
				last->e = b.e;
			last->kernels += b.kernels;
		} else {
			rc = add_block(r, &b);
		}
		int rc_cat = agg_cat_of(cat, true);
		if (!rc && recompute && rc_cat >= 0 && rc_cat != c) {
			b.cat = (uint8_t)rc_cat;
			rc = add_block(r, &b);
			/* Keep the merge target last: swap the subset block behind. */
			if (!rc && r->nblocks >= 2) {
				struct agg_block tmp = r->blocks[r->nblocks - 1];
				r->blocks[r->nblocks - 1] = r->blocks[r->nblocks - 2];
				r->blocks[r->nblocks - 2] = tmp;
			}
		}
	}
	if (!rc && s != SQLITE_DONE)
		rc = db_fail(db, "reading kernels");
	sqlite3_finalize(st);
	/* Steps timed without kernels (PP-timer imports) are drawn as their
	 * phase's computation block, so their pipelines show up too. */
	for (size_t i = 0; !rc && i < it->nranks; i++) {
		struct agg_rank *rk = &it->ranks[i];
		for (size_t j = 0; !rc && j < rk->nsteps; j++) {
			const struct agg_step *p = &rk->steps[j];
			if (p->kernels || !p->has_kernels || (p->phase != 1 && p->phase != 2))
				continue;
			struct agg_block b = { .s = p->s, .e = p->e, .seq = p->seq,
					       .cat = p->phase == 1 ? AGG_CAT_FWD_COMP
								    : AGG_CAT_BWD_COMP,
					       .phase = p->phase };
			rc = add_block(rk, &b);
		}
	}
	return rc;
}

int agg_db_infer_topology(struct agg_db *db, int iteration, struct topology *t)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->db,
			       "SELECT DISTINCT pg_desc, pg_ranks FROM kernels WHERE iteration = ? "
			       "AND pg_ranks IS NOT NULL AND pg_desc IS NOT NULL",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, "reading process groups");
	sqlite3_bind_int(st, 1, iteration);
	int s, rc = 0;
	while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW)
		rc = topo_infer_add(t, (const char *)sqlite3_column_text(st, 0),
				    (const char *)sqlite3_column_text(st, 1));
	if (!rc && s != SQLITE_DONE)
		rc = db_fail(db, "reading process groups");
	sqlite3_finalize(st);
	return rc;
}

static int exec(struct agg_db *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(db->msg, sizeof(db->msg), "%s: %s", sql, msg ? msg : "?");
		sqlite3_free(msg);
		return PP_EDB;
	}
	return 0;
}

static void bind_opt(sqlite3_stmt *st, int col, bool have, int64_t v)
{
	if (have)
		sqlite3_bind_int64(st, col, v);
	else
		sqlite3_bind_null(st, col);
}

static int write_iter(struct agg_db *db, sqlite3_stmt **st, const struct agg_iter *it)
{
	for (int k = 0; k < 3; k++) {
		sqlite3_reset(st[k]);
		sqlite3_bind_int(st[k], 1, it->iteration);
		if (sqlite3_step(st[k]) != SQLITE_DONE)
			return db_fail(db, "deleting old rows");
	}
	const struct agg_result *res = &it->res;
	for (size_t i = 0; i < res->npp; i++) {
		const struct agg_pp_row *p = &res->pp[i];
		sqlite3_stmt *s = st[3];
		sqlite3_reset(s);
		sqlite3_bind_int(s, 1, it->iteration);
		sqlite3_bind_int(s, 2, p->pp_group);
		sqlite3_bind_int(s, 3, p->stage);
		sqlite3_bind_int(s, 4, p->rank);
		sqlite3_bind_int(s, 5, p->complete);
		bind_opt(s, 6, p->has_window, p->gw_s);
		bind_opt(s, 7, p->has_window, p->gw_e);
		bind_opt(s, 8, p->has_rank, p->idle);
		bind_opt(s, 9, p->has_rank, p->bubble);
		if (sqlite3_step(s) != SQLITE_DONE)
			return db_fail(db, "writing pp_groups");
	}
	for (size_t i = 0; i < res->npipes; i++) {
		const struct agg_pipeline_row *p = &res->pipes[i];
		sqlite3_stmt *s = st[4];
		sqlite3_reset(s);
		sqlite3_bind_int(s, 1, it->iteration);
		sqlite3_bind_int(s, 2, p->pp_group);
		sqlite3_bind_int64(s, 3, p->measured);
		bind_opt(s, 4, p->has_ideal, p->ideal);
		bind_opt(s, 5, p->has_ideal, p->gap);
		sqlite3_bind_double(s, 6, p->bubble_ratio);
		if (sqlite3_step(s) != SQLITE_DONE)
			return db_fail(db, "writing pipelines");
	}
	for (size_t i = 0; i < res->nstrag; i++) {
		const struct agg_straggler_row *p = &res->strag[i];
		sqlite3_stmt *s = st[5];
		sqlite3_reset(s);
		sqlite3_bind_int(s, 1, it->iteration);
		sqlite3_bind_int(s, 2, p->rank);
		sqlite3_bind_text(s, 3, p->group_kind, -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 4, p->group);
		sqlite3_bind_text(s, 5, p->metric, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 6, p->value);
		sqlite3_bind_int64(s, 7, p->median);
		sqlite3_bind_double(s, 8, p->excess);
		if (sqlite3_step(s) != SQLITE_DONE)
			return db_fail(db, "writing stragglers");
	}
	return 0;
}

int agg_db_write(struct agg_db *db, struct agg_iter *its, size_t n)
{
	static const char *const sql[6] = {
		"DELETE FROM agg_pp_group WHERE iteration = ?",
		"DELETE FROM agg_pipeline WHERE iteration = ?",
		"DELETE FROM agg_straggler WHERE iteration = ?",
		"INSERT INTO agg_pp_group(iteration, pp_group, stage, rank, complete, "
		"group_window_start_ns, group_window_end_ns, group_idle_ns, group_bubble_ns) "
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
		"INSERT INTO agg_pipeline(iteration, pp_group, measured_ns, ideal_ns, gap_ns, "
		"bubble_ratio) VALUES (?, ?, ?, ?, ?, ?)",
		"INSERT INTO agg_straggler(iteration, rank, group_kind, grp, metric, value_ns, "
		"median_ns, excess) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
	};
	sqlite3_stmt *st[6] = { 0 };
	int rc = exec(db, "BEGIN IMMEDIATE");
	if (rc)
		return rc;
	for (int k = 0; k < 6 && !rc; k++)
		if (sqlite3_prepare_v2(db->db, sql[k], -1, &st[k], NULL) != SQLITE_OK)
			rc = db_fail(db, "preparing ppagg writes");
	for (size_t i = 0; i < n && !rc; i++)
		rc = write_iter(db, st, &its[i]);
	for (int k = 0; k < 6; k++)
		sqlite3_finalize(st[k]);
	if (!rc)
		rc = exec(db, "COMMIT");
	if (rc)
		exec(db, "ROLLBACK");
	return rc;
}
