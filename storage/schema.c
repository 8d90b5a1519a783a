/* schema.c — every table and view of the pptrace database, and migrations.
 *
 * Design notes (docs/database.md is the user-facing description):
 * - Times are INTEGER nanoseconds. A kernel stores its start relative to its
 *   trace's window_start_ns (smaller varints); the `kernels` view adds it
 *   back.
 * - kernel_t is a rowid table whose rowid is (trace id << 32 | index): one
 *   trace's kernels are a rowid range, so deleting or reading one trace needs
 *   no index, and rows are appended in key order (cheap inserts).
 * - Category, type, recompute flag, phase and collective are packed into
 *   kernel_t.code (see DB_KCODE); names and process groups are interned. Text appears only
 *   in the views, which are the stable interface (docs/contracts.md §3).
 * - The code tables are written from model/rank_result.h's and
 *   model/optype.h's names, the one definition of the categories, phases,
 *   collectives and op types.
 * - Ops (the what-if analysis, docs/whatif.md) follow kernels: op_t's rowid
 *   is (trace id << 32 | index), start relative to the trace's
 *   window_start_ns. A trace is one (iteration, rank); its worker
 *   coordinates come from op_worker when the source records them (op-trace
 *   imports) and else from ppagg's topology (agg_topology), so the `ops`
 *   view is complete once ppagg has resolved the topology.
 * - One list of statements (schema[]): tables and indexes are created IF NOT
 *   EXISTS, so a file of an older version keeps its rows; views are dropped
 *   and created again whenever the version changes, and whenever a view of a
 *   file of this version is stored with another definition than this build's
 *   (a view rewritten for speed, its rows the same, needs no new version):
 *   a file opened by a writer never keeps an old definition. Steps that
 *   change an existing table go into migrations[] under the version they
 *   upgrade from.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "schema.h"
#include "db_int.h"
#include "model/optype.h"
#include "model/rank_result.h"
#include "util/pp.h"
#include "util/strbuf.h"

_Static_assert(RR_NCATEGORIES <= 16, "kernel_t.code has 4 bits of category");
_Static_assert(RR_NPHASES + 1 <= 8, "kernel_t.code has 3 bits of phase");
_Static_assert(OP_FWD_COMPUTE == 0 && OP_BWD_COMPUTE == 1 && OP_GRADS_RS == 7,
	       "the ops view labels op types 0 and 1 (computes), 1 and 7 (backward)");

/* One statement of schema[]. For a view, drop is its DROP VIEW, run before
 * the CREATE whenever the views are created again, and view its name. */
struct schema_stmt {
	const char *create;
	const char *drop;
	const char *view;
};
#define TABLE(sql)              \
	{                       \
		sql, NULL, NULL \
	}
#define VIEW(name, select)                                                           \
	{                                                                            \
		"CREATE VIEW " name " AS " select, "DROP VIEW IF EXISTS " name, name \
	}

/* The schema of version SCHEMA_VERSION, in creation order. */
static const struct schema_stmt schema[] = {
	/* ---- ppbatch: internal tables ---- */
	TABLE("CREATE TABLE IF NOT EXISTS names("
	      " id INTEGER PRIMARY KEY,"
	      " name TEXT NOT NULL UNIQUE)"),

	/* Interned (description, ranks) pairs of communication kernels; ''
	 * stands for absent so that UNIQUE works. */
	TABLE("CREATE TABLE IF NOT EXISTS pgroups("
	      " id INTEGER PRIMARY KEY,"
	      " descr TEXT NOT NULL,"
	      " ranks TEXT NOT NULL,"
	      " UNIQUE(descr, ranks))"),

	TABLE("CREATE TABLE IF NOT EXISTS runs("
	      " id INTEGER PRIMARY KEY,"
	      " started_at INTEGER NOT NULL," /* unix seconds */
	      " finished_at INTEGER,"
	      " host TEXT, input TEXT, db TEXT, shard TEXT,"
	      " processes INTEGER,"
	      " state TEXT NOT NULL," /* running / done / interrupted */
	      " files INTEGER, ok INTEGER, partial INTEGER, failed INTEGER,"
	      " skipped INTEGER, bytes INTEGER, seconds REAL,"
	      " failures TEXT)"), /* one 'path: reason' per line */

	/* path is the identity: the trace as the user laid it out (walk.h,
	 * docs/contracts.md §8); file the file read. rank is the resolved
	 * rank (db_resolve_ranks()) of the claims header_rank / name_rank. */
	TABLE("CREATE TABLE IF NOT EXISTS traces("
	      " id INTEGER PRIMARY KEY,"
	      " path TEXT NOT NULL UNIQUE,"
	      " folder TEXT, iteration INTEGER, rank INTEGER,"
	      " bytes INTEGER, mtime_ns INTEGER,"
	      " status INTEGER NOT NULL,"              /* DB_STATUS_* */
	      " fail_kind INTEGER NOT NULL DEFAULT 0," /* DB_FAIL_* */
	      " error TEXT, warnings TEXT,"
	      " mode INTEGER," /* DB_MODE_* */
	      " window_start_ns INTEGER, window_end_ns INTEGER,"
	      " gpu_busy_ns INTEGER, idle_ns INTEGER, bubble_ns INTEGER,"
	      " comp_busy_ns INTEGER, comm_busy_ns INTEGER, overlap_ns INTEGER,"
	      " coverage REAL,"
	      " events INTEGER, kernels INTEGER,"
	      " fwd_thread TEXT, bwd_thread TEXT, role_rule TEXT,"
	      " elapsed_ns INTEGER," /* worker time for this trace */
	      " run_id INTEGER, analysed_at INTEGER,"
	      " file TEXT," /* NULL: stored before version 3 */
	      " header_rank INTEGER, name_rank INTEGER,"
	      " rank_note TEXT)"), /* why rank is not the header's */
	TABLE("CREATE INDEX IF NOT EXISTS traces_rank ON traces(rank, iteration)"),
	TABLE("CREATE INDEX IF NOT EXISTS traces_header_rank"
	      " ON traces(header_rank, iteration)"),

	TABLE("CREATE TABLE IF NOT EXISTS category_t("
	      " trace_id INTEGER NOT NULL, category INTEGER NOT NULL,"
	      " kernels INTEGER NOT NULL, sum_ns INTEGER NOT NULL,"
	      " busy_ns INTEGER NOT NULL,"
	      " PRIMARY KEY(trace_id, category)) WITHOUT ROWID"),

	TABLE("CREATE TABLE IF NOT EXISTS step_t("
	      " trace_id INTEGER NOT NULL, phase INTEGER NOT NULL, seq INTEGER NOT NULL,"
	      " cpu_start_ns INTEGER, cpu_end_ns INTEGER,"
	      " start_ns INTEGER, end_ns INTEGER,"
	      " comp_ns INTEGER NOT NULL, comm_ns INTEGER NOT NULL,"
	      " overlap_ns INTEGER NOT NULL, kernels INTEGER NOT NULL,"
	      " chunk INTEGER, mbs INTEGER," /* VPP labels when known */
	      " PRIMARY KEY(trace_id, phase, seq)) WITHOUT ROWID"),

	/* rowid = trace id << 32 | index; start relative to the trace's
	 * window_start_ns; code = DB_KCODE(...). */
	TABLE("CREATE TABLE IF NOT EXISTS kernel_t("
	      " code INTEGER NOT NULL, seq INTEGER, name_id INTEGER NOT NULL,"
	      " stream INTEGER, start INTEGER NOT NULL, dur INTEGER NOT NULL,"
	      " correlation INTEGER, pg_id INTEGER)"),

	/* GPU time per user annotation name of a trace (struct rr_annotation,
	 * docs/classification.md "User annotations"). */
	TABLE("CREATE TABLE IF NOT EXISTS annotation_t("
	      " trace_id INTEGER NOT NULL, name_id INTEGER NOT NULL,"
	      " calls INTEGER NOT NULL, kernels INTEGER NOT NULL,"
	      " gpu_ns INTEGER NOT NULL, comp_ns INTEGER NOT NULL,"
	      " comm_ns INTEGER NOT NULL, overlap_ns INTEGER NOT NULL,"
	      " PRIMARY KEY(trace_id, name_id)) WITHOUT ROWID"),

	/* ---- code tables: their rows are written from model/rank_result.h
	 * (write_codes()) ---- */
	TABLE("CREATE TABLE IF NOT EXISTS category_codes("
	      " code INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)"),
	TABLE("CREATE TABLE IF NOT EXISTS phase_codes("
	      " code INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)"),
	TABLE("CREATE TABLE IF NOT EXISTS collective_codes("
	      " code INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)"),
	TABLE("CREATE TABLE IF NOT EXISTS optype_codes("
	      " code INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)"),

	/* ---- ops (docs/whatif.md) ----
	 * rowid = trace id << 32 | index; optype = enum op_type; seq_id, mc,
	 * gmc, mb_id as the op trace gives them (-1 = does not apply); start
	 * relative to the trace's window_start_ns. step_seq: for ops derived
	 * from a Kineto trace, the seq of the fwd step (forward-compute,
	 * params-all-gather) or bwd step (backward-compute,
	 * grads-reduce-scatter) whose VPP labels the `ops` view gives the op
	 * with ppagg's pp_size and vpp (then mc, gmc, mb_id hold -1); NULL
	 * otherwise. */
	TABLE("CREATE TABLE IF NOT EXISTS op_t("
	      " optype INTEGER NOT NULL, seq_id INTEGER NOT NULL,"
	      " mc INTEGER NOT NULL, gmc INTEGER NOT NULL, mb_id INTEGER NOT NULL,"
	      " start INTEGER NOT NULL, dur INTEGER NOT NULL, step_seq INTEGER)"),
	/* One op-trace import (ppbatch --format optrace): path is its identity
	 * (the file as given, realpath of its folder), the prefix of its
	 * traces' paths; the job's meta and the optype order of its schema. */
	TABLE("CREATE TABLE IF NOT EXISTS op_source("
	      " id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, file TEXT,"
	      " bytes INTEGER, mtime_ns INTEGER, imported_at INTEGER,"
	      " meta_path TEXT, schema_path TEXT, trial_name TEXT, run_id INTEGER,"
	      " dp_size INTEGER, pp_size INTEGER, tp_size INTEGER, dsp_size INTEGER,"
	      " vpp_size INTEGER, world_size INTEGER,"
	      " optype_order TEXT)"), /* names, comma-separated; NULL = alphabetical */
	/* The worker of a trace's ops when its source records it (imports). */
	TABLE("CREATE TABLE IF NOT EXISTS op_worker("
	      " trace_id INTEGER PRIMARY KEY, source_id INTEGER,"
	      " dp_rank INTEGER NOT NULL, stage INTEGER NOT NULL)"),

	/* ---- imports of other formats (storage/db_import.h) ----
	 * One row per import (ppbatch --format pp-timer or primus): path is
	 * its identity (the dump folder or the input, canonical); the sizes it
	 * knows (NULL where not), which ppagg's topology and VPP fall back on.
	 * reading_t and wgrad_t are keyed by their trace's path, not its id:
	 * storing a path again replaces them, and no id is ever reused for
	 * them. */
	TABLE("CREATE TABLE IF NOT EXISTS import_t("
	      " id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, format TEXT NOT NULL,"
	      " imported_at INTEGER, pp_size INTEGER, vpp_size INTEGER, dp_size INTEGER,"
	      " tp_size INTEGER, ep_size INTEGER, world_size INTEGER, microbatches INTEGER,"
	      " iterations INTEGER, num_layers INTEGER)"),
	TABLE("CREATE TABLE IF NOT EXISTS reading_t("
	      " path TEXT PRIMARY KEY, stage INTEGER NOT NULL, total_ns INTEGER,"
	      " memory_gib REAL) WITHOUT ROWID"),
	TABLE("CREATE TABLE IF NOT EXISTS wgrad_t("
	      " path TEXT NOT NULL, seq INTEGER NOT NULL, chunk INTEGER, mbs INTEGER,"
	      " start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,"
	      " PRIMARY KEY(path, seq)) WITHOUT ROWID"),

	/* ---- ppbatch: the stable views (docs/contracts.md §3) ---- */
	VIEW("ranks", "SELECT"
		      " t.iteration AS iteration, t.folder AS folder, t.rank AS rank,"
		      " t.path AS path, t.bytes AS bytes,"
		      " CASE t.status WHEN 0 THEN 'ok' WHEN 1 THEN 'partial' ELSE 'failed' END"
		      "  AS status,"
		      " t.error AS error,"
		      " CASE t.mode WHEN 0 THEN 'megatron' WHEN 1 THEN 'generic'"
		      "  WHEN 2 THEN 'optrace' END AS mode,"
		      " t.window_start_ns AS window_start_ns, t.window_end_ns AS window_end_ns,"
		      " t.gpu_busy_ns AS gpu_busy_ns, t.idle_ns AS idle_ns,"
		      " t.bubble_ns AS bubble_ns, t.comp_busy_ns AS comp_busy_ns,"
		      " t.comm_busy_ns AS comm_busy_ns, t.overlap_ns AS overlap_ns,"
		      " t.coverage AS coverage"
		      " FROM traces t"),

	VIEW("category_stats", "SELECT"
			       " t.iteration AS iteration, t.rank AS rank, c.name AS category,"
			       " s.kernels AS kernels, s.sum_ns AS sum_ns, s.busy_ns AS busy_ns"
			       " FROM traces t JOIN category_t s ON s.trace_id = t.id"
			       " JOIN category_codes c ON c.code = s.category"),

	VIEW("steps", "SELECT"
		      " t.iteration AS iteration, t.rank AS rank, p.name AS phase,"
		      " s.seq AS seq, s.cpu_start_ns AS cpu_start_ns,"
		      " s.cpu_end_ns AS cpu_end_ns, s.start_ns AS start_ns,"
		      " s.end_ns AS end_ns,"
		      " CASE WHEN s.start_ns IS NULL THEN 0 ELSE s.end_ns - s.start_ns END"
		      "  AS wall_ns,"
		      " s.comp_ns AS comp_ns, s.comm_ns AS comm_ns,"
		      " s.overlap_ns AS overlap_ns, s.kernels AS kernels"
		      " FROM traces t JOIN step_t s ON s.trace_id = t.id"
		      " JOIN phase_codes p ON p.code = s.phase"),

	VIEW("imports", "SELECT"
			" path, format, imported_at, pp_size, vpp_size, dp_size, tp_size, ep_size,"
			" world_size, microbatches, iterations, num_layers FROM import_t"),
	VIEW("readings", "SELECT"
			 " t.iteration AS iteration, t.rank AS rank, r.stage AS stage,"
			 " r.total_ns AS total_ns, r.memory_gib AS memory_gib"
			 " FROM traces t JOIN reading_t r ON r.path = t.path"),
	VIEW("wgrad_steps", "SELECT"
			    " t.iteration AS iteration, t.rank AS rank, w.seq AS seq,"
			    " w.chunk AS chunk, w.mbs AS mbs, w.start_ns AS start_ns,"
			    " w.end_ns AS end_ns, w.end_ns - w.start_ns AS wall_ns"
			    " FROM traces t JOIN wgrad_t w ON w.path = t.path"),

	/* Traces of one iteration (its folder when it has no number) that
	 * claim the same rank after db_resolve_ranks(): never aggregated. */
	VIEW("rank_conflicts", "SELECT"
			       " t.iteration AS iteration, t.folder AS folder, t.rank AS rank,"
			       " t.path AS path, t.header_rank AS header_rank,"
			       " t.name_rank AS name_rank, c.n AS traces"
			       " FROM traces t JOIN (SELECT iteration AS i,"
			       "  CASE WHEN iteration IS NULL THEN folder END AS f, rank AS r,"
			       "  count(*) AS n FROM traces WHERE rank IS NOT NULL"
			       "  GROUP BY 1, 2, 3 HAVING count(*) > 1) c"
			       " ON c.i IS t.iteration"
			       " AND c.f IS (CASE WHEN t.iteration IS NULL THEN t.folder END)"
			       " AND c.r = t.rank"),

	/* The names of the codes of kernel_t.code are CASE expressions, the
	 * text of category_codes, phase_codes and collective_codes (a code
	 * that has no row there gives NULL; test_db's
	 * test_kernels_view_names_every_code holds them equal): a look-up
	 * per row cost more than the rest of a scan of every kernel. The names
	 * of kernels and process groups are scalar subqueries so that the
	 * planner keeps traces outside and one rowid range of kernel_t
	 * inside. */
	VIEW("kernels",
	     "SELECT"
	     " t.iteration AS iteration, t.rank AS rank,"
	     " CASE k.code & 15 WHEN 0 THEN 'fwd_computation'"
	     "  WHEN 1 THEN 'fwd_communication' WHEN 2 THEN 'bwd_computation'"
	     "  WHEN 3 THEN 'bwd_communication' WHEN 4 THEN 'pp_communication'"
	     "  WHEN 5 THEN 'dp_communication' WHEN 6 THEN 'optimizer_computation'"
	     "  WHEN 7 THEN 'memory' WHEN 8 THEN 'other' WHEN 9 THEN 'computation'"
	     "  WHEN 10 THEN 'communication' WHEN 11 THEN 'bwd_computation_recompute'"
	     "  WHEN 12 THEN 'bwd_communication_recompute' END AS category,"
	     " CASE (k.code >> 4) & 3 WHEN 0 THEN 'comp' WHEN 1 THEN 'comm'"
	     "  ELSE 'mem' END AS type,"
	     " (k.code >> 6) & 1 AS recompute,"
	     " CASE (k.code >> 7) & 7 WHEN 1 THEN 'fwd' WHEN 2 THEN 'bwd' WHEN 3 THEN 'pp'"
	     "  WHEN 4 THEN 'dp' WHEN 5 THEN 'opt' END AS phase,"
	     " k.seq AS seq,"
	     " (SELECT name FROM names WHERE id = k.name_id) AS name,"
	     " k.stream AS stream,"
	     " t.window_start_ns + k.start AS start_ns, k.dur AS dur_ns,"
	     " k.correlation AS correlation,"
	     " (SELECT NULLIF(descr, '') FROM pgroups WHERE id = k.pg_id) AS pg_desc,"
	     " (SELECT NULLIF(ranks, '') FROM pgroups WHERE id = k.pg_id) AS pg_ranks,"
	     " CASE (k.code >> 10) & 15 WHEN 1 THEN 'all_reduce' WHEN 2 THEN 'reduce_scatter'"
	     "  WHEN 3 THEN 'all_gather' WHEN 4 THEN 'other' WHEN 5 THEN 'all_to_all'"
	     "  WHEN 6 THEN 'broadcast' WHEN 7 THEN 'reduce' WHEN 8 THEN 'gather'"
	     "  WHEN 9 THEN 'scatter' WHEN 10 THEN 'send' WHEN 11 THEN 'recv'"
	     "  WHEN 12 THEN 'send_recv' WHEN 13 THEN 'barrier' END AS collective"
	     " FROM traces t"
	     " CROSS JOIN kernel_t k"
	     " ON k.rowid >= (t.id << 32) AND k.rowid < ((t.id + 1) << 32)"),

	VIEW("annotations",
	     "SELECT"
	     " t.iteration AS iteration, t.rank AS rank, n.name AS name,"
	     " a.calls AS calls, a.gpu_ns AS gpu_ns, a.comp_ns AS comp_ns,"
	     " a.comm_ns AS comm_ns, a.overlap_ns AS overlap_ns, a.kernels AS kernels"
	     " FROM traces t JOIN annotation_t a ON a.trace_id = t.id"
	     " JOIN names n ON n.id = a.name_id"),

	/* ==== ppagg section: pp_groups, pipelines, stragglers, what-if ====
	 * Owned by the ppagg module. Add its tables and views here; tables
	 * IF NOT EXISTS, and bump SCHEMA_VERSION (with a migration step) when
	 * an existing table changes shape. */
	TABLE("CREATE TABLE IF NOT EXISTS agg_pp_group("
	      " iteration INTEGER NOT NULL, pp_group INTEGER NOT NULL,"
	      " stage INTEGER NOT NULL, rank INTEGER NOT NULL,"
	      " complete INTEGER NOT NULL," /* 1 when every rank of the group is ok */
	      " group_window_start_ns INTEGER, group_window_end_ns INTEGER,"
	      " group_idle_ns INTEGER, group_bubble_ns INTEGER," /* NULL: rank missing */
	      " PRIMARY KEY(iteration, pp_group, stage)) WITHOUT ROWID"),

	TABLE("CREATE TABLE IF NOT EXISTS agg_pipeline("
	      " iteration INTEGER NOT NULL, pp_group INTEGER NOT NULL,"
	      " measured_ns INTEGER NOT NULL, ideal_ns INTEGER, gap_ns INTEGER,"
	      " bubble_ratio REAL NOT NULL,"
	      " PRIMARY KEY(iteration, pp_group)) WITHOUT ROWID"),

	TABLE("CREATE TABLE IF NOT EXISTS agg_straggler("
	      " iteration INTEGER NOT NULL, rank INTEGER NOT NULL,"
	      " group_kind TEXT NOT NULL, grp INTEGER NOT NULL, metric TEXT NOT NULL,"
	      " value_ns INTEGER NOT NULL, median_ns INTEGER NOT NULL,"
	      " excess REAL NOT NULL,"
	      " PRIMARY KEY(iteration, rank, metric)) WITHOUT ROWID"),

	VIEW("pp_groups", "SELECT"
			  " iteration, pp_group, stage, rank, complete, group_window_start_ns,"
			  " group_window_end_ns, group_idle_ns, group_bubble_ns FROM agg_pp_group"),

	VIEW("pipelines", "SELECT"
			  " iteration, pp_group, measured_ns, ideal_ns, gap_ns, bubble_ratio"
			  " FROM agg_pipeline"),

	VIEW("stragglers", "SELECT"
			   " iteration, rank, group_kind, grp AS \"group\", metric, value_ns,"
			   " median_ns, excess FROM agg_straggler"),

	/* The topology ppagg resolved, per rank: where the ops of a trace
	 * whose source does not record its worker (Kineto traces) belong, and
	 * the pipeline size and VPP that label them (op_t.step_seq). */
	TABLE("CREATE TABLE IF NOT EXISTS agg_topology("
	      " rank INTEGER PRIMARY KEY, pp_group INTEGER, stage INTEGER,"
	      " dp_rank INTEGER, pp_size INTEGER, vpp INTEGER)"),

	/* The what-if analysis of ppagg's last run (docs/whatif.md): one
	 * row, and its decompositions; empty when it was not computed. */
	TABLE("CREATE TABLE IF NOT EXISTS agg_whatif("
	      " id INTEGER PRIMARY KEY CHECK (id = 1),"
	      " iterations INTEGER NOT NULL, first_iteration INTEGER NOT NULL,"
	      " last_iteration INTEGER NOT NULL, t_base_ns INTEGER, t_ns INTEGER,"
	      " t_ideal_ns INTEGER, slowdown REAL, launch_slowdown REAL,"
	      " m_w REAL, m_w_add REAL, m_s REAL, m_s_add REAL, m_w_ranks TEXT,"
	      " verdict TEXT NOT NULL, ranks_per_cell INTEGER, cell_ops TEXT, vpp INTEGER,"
	      " clock_error_ns INTEGER, notes TEXT)"),
	TABLE("CREATE TABLE IF NOT EXISTS agg_whatif_optype("
	      " optype TEXT PRIMARY KEY, slowdown REAL)"),
	TABLE("CREATE TABLE IF NOT EXISTS agg_whatif_worker("
	      " rank INTEGER PRIMARY KEY, dp_rank INTEGER NOT NULL,"
	      " stage INTEGER NOT NULL, s_dp REAL, s_pp REAL, slowdown REAL,"
	      " clock_offset_ns INTEGER, slow_rank INTEGER)"),
	TABLE("CREATE TABLE IF NOT EXISTS agg_whatif_step("
	      " iteration INTEGER PRIMARY KEY, t_ns INTEGER, t_ideal_ns INTEGER,"
	      " slowdown REAL)"),

	VIEW("whatif", "SELECT"
		       " iterations, first_iteration, last_iteration, t_base_ns, t_ns,"
		       " t_ideal_ns, slowdown, launch_slowdown, m_w, m_w_add, m_s, m_s_add,"
		       " m_w_ranks, verdict, ranks_per_cell, cell_ops, vpp, clock_error_ns, notes"
		       " FROM agg_whatif"),
	VIEW("whatif_optypes", "SELECT optype, slowdown FROM agg_whatif_optype"
			       " ORDER BY slowdown DESC, optype"),
	VIEW("whatif_workers", "SELECT"
			       " rank, dp_rank, stage, s_dp, s_pp, slowdown, clock_offset_ns,"
			       " slow_rank FROM agg_whatif_worker"
			       " ORDER BY slowdown IS NULL, slowdown DESC, rank"),
	VIEW("whatif_steps", "SELECT iteration, t_ns, t_ideal_ns, slowdown FROM agg_whatif_step"
			     " ORDER BY iteration"),

	/* ppbatch's ops, one row per op per (iteration, rank). The worker's
	 * coordinates: as recorded (imports), else ppagg's topology: so this
	 * view comes after agg_topology. An op with a step_seq takes its labels
	 * from it: rr_vpp_label() (model/rank_result.c) in SQL, with the
	 * topology's pp_size P and vpp V (chunk c = seq % (P*V) / P, reversed
	 * for backward types; micro-batch seq / (P*V) * P + seq % P; global
	 * chunk c * P + stage); NULL until ppagg has placed the rank. */
	VIEW("ops",
	     "SELECT iteration, rank, dp_rank, stage, optype, seq_id,"
	     " CASE WHEN step IS NULL THEN mc ELSE c END AS mc,"
	     " CASE WHEN step IS NULL OR ty > 1 THEN gmc ELSE c * p + stage END AS gmc,"
	     " CASE WHEN step IS NULL OR ty > 1 THEN mb_id"
	     "  ELSE step / (p * v) * p + step % p END AS mb_id,"
	     " start_ns, end_ns FROM (SELECT"
	     " t.iteration AS iteration, t.rank AS rank,"
	     " coalesce(w.dp_rank, g.dp_rank) AS dp_rank,"
	     " coalesce(w.stage, g.stage) AS stage,"
	     " (SELECT name FROM optype_codes WHERE code = o.optype) AS optype,"
	     " o.optype AS ty, o.seq_id AS seq_id, o.mc AS mc, o.gmc AS gmc,"
	     " o.mb_id AS mb_id, o.step_seq AS step, g.pp_size AS p, g.vpp AS v,"
	     " CASE WHEN o.optype IN (1, 7) THEN g.vpp - 1 - o.step_seq % (g.pp_size * g.vpp)"
	     "  / g.pp_size ELSE o.step_seq % (g.pp_size * g.vpp) / g.pp_size END AS c,"
	     " t.window_start_ns + o.start AS start_ns,"
	     " t.window_start_ns + o.start + o.dur AS end_ns"
	     " FROM traces t"
	     " CROSS JOIN op_t o"
	     " ON o.rowid >= (t.id << 32) AND o.rowid < ((t.id + 1) << 32)"
	     " LEFT JOIN op_worker w ON w.trace_id = t.id"
	     " LEFT JOIN agg_topology g ON g.rank = t.rank)"),

	/* The why analysis of ppagg's last run (docs/why.md): deleted and
	 * written whole by db_why_begin() ... db_why_commit(). Statuses, names
	 * of directions, roles, sides and kinds are stored as their text. */
	TABLE("CREATE TABLE IF NOT EXISTS why_p2p("
	      " iteration INTEGER NOT NULL, rank INTEGER NOT NULL, kernel INTEGER NOT NULL,"
	      " direction TEXT NOT NULL, role TEXT NOT NULL, peer_rank INTEGER,"
	      " microbatch INTEGER, chunk INTEGER, start_ns INTEGER NOT NULL,"
	      " dur_ns INTEGER NOT NULL, wait_ns INTEGER, transfer_ns INTEGER,"
	      " peer_start_ns INTEGER, bytes INTEGER, status TEXT NOT NULL)"),
	TABLE("CREATE TABLE IF NOT EXISTS why_p2p_kernel("
	      " iteration INTEGER NOT NULL, rank INTEGER NOT NULL, stage INTEGER,"
	      " kernel INTEGER NOT NULL, start_ns INTEGER NOT NULL, dur_ns INTEGER NOT NULL,"
	      " wait_ns INTEGER, transfer_ns INTEGER, waited_for INTEGER, side TEXT,"
	      " transfers INTEGER NOT NULL, status TEXT NOT NULL)"),
	TABLE("CREATE TABLE IF NOT EXISTS why_bubble("
	      " iteration INTEGER NOT NULL, rank INTEGER NOT NULL, stage INTEGER,"
	      " bubble_ns INTEGER, wait_previous_ns INTEGER NOT NULL,"
	      " wait_next_ns INTEGER NOT NULL, transfer_ns INTEGER NOT NULL,"
	      " no_work_ns INTEGER, incomplete INTEGER NOT NULL)"),
	TABLE("CREATE TABLE IF NOT EXISTS why_hop("
	      " iteration INTEGER NOT NULL, stage INTEGER NOT NULL,"
	      " peer_stage INTEGER NOT NULL, kernels INTEGER NOT NULL,"
	      " wait_ns INTEGER NOT NULL, transfer_ns INTEGER NOT NULL)"),
	TABLE("CREATE TABLE IF NOT EXISTS why_group("
	      " id INTEGER PRIMARY KEY, pg TEXT NOT NULL, pg_ranks TEXT NOT NULL,"
	      " kind TEXT NOT NULL)"),
	TABLE("CREATE TABLE IF NOT EXISTS why_collective("
	      " iteration INTEGER NOT NULL, grp INTEGER NOT NULL,"
	      " seq INTEGER NOT NULL, size INTEGER NOT NULL,"
	      " present INTEGER NOT NULL, first_ns INTEGER, last_ns INTEGER, skew_ns INTEGER,"
	      " first_rank INTEGER, last_rank INTEGER, transfer_ns INTEGER,"
	      " missing_rank INTEGER, status TEXT NOT NULL)"),
	TABLE("CREATE TABLE IF NOT EXISTS why_collective_rank("
	      " rank INTEGER NOT NULL, pg_kind TEXT NOT NULL, instances INTEGER NOT NULL,"
	      " times_last INTEGER NOT NULL, share_last REAL NOT NULL, chance REAL NOT NULL,"
	      " mean_wait_ns INTEGER NOT NULL, last_by_ns INTEGER NOT NULL,"
	      " late INTEGER NOT NULL)"),
	TABLE("CREATE TABLE IF NOT EXISTS why_cpath("
	      " iteration INTEGER NOT NULL, seq INTEGER NOT NULL, rank INTEGER,"
	      " dp_rank INTEGER, stage INTEGER, optype INTEGER, op_seq INTEGER,"
	      " kind TEXT NOT NULL, placeholder INTEGER NOT NULL, start_ns INTEGER NOT NULL,"
	      " dur_ns INTEGER NOT NULL, op_start_ns INTEGER, op_end_ns INTEGER)"),
	TABLE("CREATE TABLE IF NOT EXISTS why_clock("
	      " rank INTEGER PRIMARY KEY, offset_ns INTEGER NOT NULL)"),
	TABLE("CREATE TABLE IF NOT EXISTS why_summary("
	      " id INTEGER PRIMARY KEY CHECK (id = 1), iterations INTEGER NOT NULL,"
	      " first_iteration INTEGER, last_iteration INTEGER,"
	      " p2p_transfers INTEGER NOT NULL, p2p_unpaired INTEGER NOT NULL,"
	      " p2p_kernels INTEGER NOT NULL, p2p_kernels_incomplete INTEGER NOT NULL,"
	      " collectives INTEGER NOT NULL, collectives_incomplete INTEGER NOT NULL,"
	      " critical_path_steps INTEGER NOT NULL, clock_error_ns INTEGER,"
	      " clocks_corrected INTEGER NOT NULL, notes TEXT)"),

	VIEW("p2p", "SELECT"
		    " iteration, rank, peer_rank, direction, role, microbatch, chunk, start_ns,"
		    " wait_ns, transfer_ns, bytes, dur_ns, kernel, peer_start_ns, status"
		    " FROM why_p2p"),
	VIEW("p2p_kernels",
	     "SELECT"
	     " iteration, rank, stage, kernel, start_ns, dur_ns, wait_ns, transfer_ns,"
	     " waited_for, side, transfers, status FROM why_p2p_kernel"),
	VIEW("p2p_bubbles", "SELECT"
			    " iteration, rank, stage, bubble_ns, wait_previous_ns, wait_next_ns,"
			    " transfer_ns, no_work_ns, incomplete FROM why_bubble"),
	VIEW("p2p_hops",
	     "SELECT"
	     " iteration, stage, peer_stage, kernels, wait_ns, transfer_ns FROM why_hop"),
	VIEW("collectives",
	     "SELECT"
	     " c.iteration AS iteration, g.pg AS pg, g.kind AS kind, c.seq AS seq,"
	     " g.pg_ranks AS ranks, c.first_ns AS first_ns, c.last_ns AS last_ns,"
	     " c.skew_ns AS skew_ns, c.last_rank AS last_rank, c.transfer_ns AS transfer_ns,"
	     " c.size AS size, c.present AS present, c.first_rank AS first_rank,"
	     " c.missing_rank AS missing_rank, c.status AS status"
	     " FROM why_collective c JOIN why_group g ON g.id = c.grp"),
	VIEW("collective_ranks", "SELECT"
				 " rank, pg_kind, instances, times_last, share_last, mean_wait_ns,"
				 " chance, last_by_ns, late FROM why_collective_rank"),
	VIEW("critical_path",
	     "SELECT iteration, seq, rank,"
	     " (SELECT name FROM optype_codes WHERE code = c.optype) AS optype, start_ns, dur_ns,"
	     " kind, dp_rank, stage, op_seq, placeholder, op_start_ns, op_end_ns"
	     " FROM why_cpath c"),
	VIEW("rank_clocks", "SELECT rank, offset_ns FROM why_clock"),
	VIEW("why", "SELECT"
		    " iterations, first_iteration, last_iteration, p2p_transfers, p2p_unpaired,"
		    " p2p_kernels, p2p_kernels_incomplete, collectives, collectives_incomplete,"
		    " critical_path_steps, clock_error_ns, clocks_corrected, notes"
		    " FROM why_summary"),

	/* The shape of the job as ppagg's last run found it (docs/compare.md):
	 * one row, written by every run, read when another run compares with
	 * this file. 0 or NULL where not known. */
	TABLE("CREATE TABLE IF NOT EXISTS agg_shape("
	      " id INTEGER PRIMARY KEY CHECK (id = 1), ranks INTEGER, tp INTEGER, cp INTEGER,"
	      " ep INTEGER, pp INTEGER, dp INTEGER, vpp INTEGER, microbatches INTEGER)"),

	/* The comparison of ppagg's last run with a baseline (docs/compare.md):
	 * deleted and written whole by db_cmp_begin() ... db_cmp_commit(), empty
	 * after a run without --compare. dim of compare_key_t: 0 category,
	 * 1 op type, 2 process-group kind. base and new of the summary hold a
	 * number or, for the verdict, a text: no type. */
	TABLE("CREATE TABLE IF NOT EXISTS compare_run("
	      " id INTEGER PRIMARY KEY CHECK (id = 1), baseline TEXT NOT NULL,"
	      " baseline_version INTEGER NOT NULL, base_iterations TEXT, new_iterations TEXT,"
	      " compared_at INTEGER NOT NULL, threshold REAL, noise_floor REAL, min_share REAL,"
	      " regression INTEGER NOT NULL, sentence TEXT NOT NULL, missing TEXT)"),
	TABLE("CREATE TABLE IF NOT EXISTS compare_summary_t("
	      " seq INTEGER PRIMARY KEY, metric TEXT NOT NULL, base, new, change REAL,"
	      " noise REAL, noise_from TEXT, flagged INTEGER, note TEXT)"),
	TABLE("CREATE TABLE IF NOT EXISTS compare_key_t("
	      " dim INTEGER NOT NULL, stage INTEGER, key TEXT NOT NULL, base_ns INTEGER,"
	      " new_ns INTEGER, change REAL, noise REAL, noise_from TEXT,"
	      " flagged INTEGER NOT NULL)"),
	TABLE("CREATE TABLE IF NOT EXISTS compare_rank_t("
	      " rank INTEGER PRIMARY KEY, stage INTEGER, host TEXT, base_ns INTEGER,"
	      " new_ns INTEGER, change REAL, stage_change REAL, deviation REAL, noise REAL,"
	      " noise_from TEXT, flagged INTEGER NOT NULL)"),

	VIEW("comparison", "SELECT"
			   " baseline, baseline_version, base_iterations, new_iterations,"
			   " compared_at, threshold, noise_floor, min_share, regression, sentence,"
			   " missing FROM compare_run"),
	VIEW("compare_summary", "SELECT"
				" metric, base, new, change, noise, flagged, note, noise_from"
				" FROM compare_summary_t ORDER BY seq"),
	VIEW("compare_categories",
	     "SELECT stage, key AS category, base_ns, new_ns, change, noise, flagged, noise_from"
	     " FROM compare_key_t WHERE dim = 0 ORDER BY stage, category"),
	VIEW("compare_optypes",
	     "SELECT stage, key AS optype, base_ns, new_ns, change, noise, flagged, noise_from"
	     " FROM compare_key_t WHERE dim = 1 ORDER BY stage, optype"),
	VIEW("compare_groups",
	     "SELECT stage, key AS kind, base_ns, new_ns, change, noise, flagged, noise_from"
	     " FROM compare_key_t WHERE dim = 2 ORDER BY stage, kind"),
	VIEW("compare_ranks", "SELECT"
			      " rank, stage, change, stage_change, flagged, host, base_ns, new_ns,"
			      " deviation, noise, noise_from FROM compare_rank_t ORDER BY rank"),

	/* The schedule advisor of ppagg's last run (docs/advisor.md §6): one
	 * row per schedule (row 0 the calibration replay), its per-stage
	 * memory, and one summary row; empty for a job without a pipeline.
	 * Written whole by db_advice_write(). */
	TABLE("CREATE TABLE IF NOT EXISTS agg_advice("
	      " row INTEGER PRIMARY KEY, schedule TEXT NOT NULL, kind TEXT NOT NULL,"
	      " vpp INTEGER NOT NULL, microbatches INTEGER NOT NULL, micro_batch_size INTEGER,"
	      " layers TEXT, valid INTEGER NOT NULL, step_ns INTEGER, pipeline_ns INTEGER,"
	      " measured_step_ns INTEGER NOT NULL, delta REAL, bubble REAL,"
	      " activation_memory REAL, memory_gib REAL, modelled TEXT, megatron_options TEXT,"
	      " notes TEXT, best INTEGER NOT NULL)"),
	TABLE("CREATE TABLE IF NOT EXISTS agg_advice_memory("
	      " row INTEGER NOT NULL, stage INTEGER NOT NULL, units REAL, memory_gib REAL,"
	      " measured_gib REAL, PRIMARY KEY(row, stage)) WITHOUT ROWID"),
	TABLE("CREATE TABLE IF NOT EXISTS agg_advice_run("
	      " id INTEGER PRIMARY KEY CHECK (id = 1), source TEXT NOT NULL,"
	      " iterations INTEGER NOT NULL, first_iteration INTEGER, last_iteration INTEGER,"
	      " pp INTEGER NOT NULL, vpp INTEGER NOT NULL, microbatches INTEGER NOT NULL,"
	      " layers TEXT, measured_step_ns INTEGER NOT NULL, calibration_error REAL,"
	      " calibrated INTEGER NOT NULL, calibration_note TEXT, best_row INTEGER,"
	      " best_note TEXT, gib_per_unit REAL, common_gib REAL, memory_rms_gib REAL,"
	      " memory_note TEXT, inputs TEXT, simulations INTEGER NOT NULL)"),

	VIEW("advice",
	     "SELECT"
	     " row, schedule, vpp, microbatches, layers, step_ns, measured_step_ns, delta,"
	     " bubble, activation_memory, memory_gib, modelled, notes, valid, kind,"
	     " micro_batch_size, pipeline_ns, megatron_options, best"
	     " FROM agg_advice ORDER BY row"),
	VIEW("advice_memory",
	     "SELECT"
	     " a.row AS row, a.schedule AS schedule, a.vpp AS vpp,"
	     " a.microbatches AS microbatches, a.layers AS layers, m.stage AS stage,"
	     " m.memory_gib AS memory_gib, m.measured_gib AS measured_gib,"
	     " m.units AS units"
	     " FROM agg_advice a JOIN agg_advice_memory m ON m.row = a.row"
	     " ORDER BY a.row, m.stage"),
	VIEW("advice_summary",
	     "SELECT"
	     " source, iterations, first_iteration, last_iteration, pp, vpp,"
	     " microbatches, layers, measured_step_ns, calibration_error, calibrated,"
	     " calibration_note, best_row, best_note, gib_per_unit, common_gib,"
	     " memory_rms_gib, memory_note, inputs, simulations FROM agg_advice_run"),

	/* ==== end of ppagg section ==== */
};

/* Steps that change an existing table, run (in order) on a file of version
 * `from` or older before schema[]; schema[] alone adds new tables, indexes
 * and views:
 *   1 -> 2: ppagg's tables and views added.
 *   2 -> 3: a trace's identity is where it was laid out (docs/contracts.md
 *           §7). Old rows keep their canonical path and file = NULL marks
 *           them: the next ppbatch run gives each its laid-out path
 *           (db_trace_adopt()). Their rank counts as their header's (the
 *           file-name rank becomes known at adoption).
 *   3 -> 4: the ops and the what-if analysis: new tables and views only
 *           (schema[] adds them), no step here.
 *   4 -> 5: ops derived from Kineto traces (op_t.step_seq), ppagg's
 *           pipeline size and VPP per rank, the what-if's cell rule, VPP,
 *           clock error and notes. Files older than 4 have none of these
 *           tables yet (schema[] creates them whole): a step with a table
 *           runs only when the table exists.
 *   5 -> 6: the slow rank of a what-if worker's cell (TP/CP > 1:
 *           agg_whatif_worker.slow_rank).
 *   6 -> 7: user annotations (annotation_t, view annotations), the
 *           collective of a kernel (kernel_t.code bits 10-13, named by
 *           collective_codes; the kernels view's collective column) and the
 *           why analysis (docs/why.md) and the comparison of two runs
 *           (docs/compare.md: agg_shape, the compare_* tables and views):
 *           new tables and views only, no step here. Kernels stored before
 *           have no collective (NULL) and traces no annotations until they
 *           are analysed again (ppbatch --force). Imports of other formats
 *           record themselves, their readings and weight-gradient calls
 *           (import_t, reading_t, wgrad_t; views imports, readings,
 *           wgrad_steps), and ppagg's schedule advisor its rows (agg_advice,
 *           agg_advice_memory, agg_advice_run; views advice, advice_memory,
 *           advice_summary): new tables and views only. */
static const struct migration {
	int from;
	const char *table; /* run only when it exists; NULL = always */
	const char *sql;
} migrations[] = {
	{ 2, NULL, "ALTER TABLE traces ADD COLUMN file TEXT" },
	{ 2, NULL, "ALTER TABLE traces ADD COLUMN header_rank INTEGER" },
	{ 2, NULL, "ALTER TABLE traces ADD COLUMN name_rank INTEGER" },
	{ 2, NULL, "ALTER TABLE traces ADD COLUMN rank_note TEXT" },
	{ 2, NULL, "UPDATE traces SET header_rank = rank" },
	{ 4, "op_t", "ALTER TABLE op_t ADD COLUMN step_seq INTEGER" },
	{ 4, "agg_topology", "ALTER TABLE agg_topology ADD COLUMN pp_size INTEGER" },
	{ 4, "agg_topology", "ALTER TABLE agg_topology ADD COLUMN vpp INTEGER" },
	{ 4, "agg_whatif", "ALTER TABLE agg_whatif ADD COLUMN ranks_per_cell INTEGER" },
	{ 4, "agg_whatif", "ALTER TABLE agg_whatif ADD COLUMN cell_ops TEXT" },
	{ 4, "agg_whatif", "ALTER TABLE agg_whatif ADD COLUMN vpp INTEGER" },
	{ 4, "agg_whatif", "ALTER TABLE agg_whatif ADD COLUMN clock_error_ns INTEGER" },
	{ 4, "agg_whatif", "ALTER TABLE agg_whatif ADD COLUMN notes TEXT" },
	{ 5, "agg_whatif_worker", "ALTER TABLE agg_whatif_worker ADD COLUMN slow_rank INTEGER" },
};

/* The code tables, rewritten from model/rank_result.h on every version
 * change. */
static const char *const code_sql[] = {
	"DELETE FROM category_codes",   "INSERT INTO category_codes(code, name) VALUES(?1, ?2)",
	"DELETE FROM phase_codes",      "INSERT INTO phase_codes(code, name) VALUES(?1, ?2)",
	"DELETE FROM optype_codes",     "INSERT INTO optype_codes(code, name) VALUES(?1, ?2)",
	"DELETE FROM collective_codes", "INSERT INTO collective_codes(code, name) VALUES(?1, ?2)",
};

/* A literal (SQL is never formatted); keep it equal to SCHEMA_VERSION. */
#define SET_VERSION_SQL "PRAGMA user_version = 7"
_Static_assert(SCHEMA_VERSION == 7, "update SET_VERSION_SQL with SCHEMA_VERSION");
_Static_assert(RR_NCOLLS <= 16, "kernel_t.code has 4 bits of collective");

int db_exec(sqlite3 *db, const char *sql, struct strbuf *err)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		pp_err(err, PP_EDB, "%s", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return PP_EDB;
	}
	return 0;
}

/* Runs a constant query that yields one integer into *v; arg, when not
 * NULL, is bound to its ?1. */
static int query_int(sqlite3 *db, const char *sql, const char *arg, int *v, struct strbuf *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		pp_err(err, PP_EDB, "%s", sqlite3_errmsg(db));
		return PP_EDB;
	}
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int(st, 0);
	else
		pp_err(err, PP_EDB, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : PP_EDB;
}

static int user_version(sqlite3 *db, int *v, struct strbuf *err)
{
	return query_int(db, "PRAGMA user_version", NULL, v, err);
}

/* Whether table exists (*n 1) or not (0). */
static int table_exists(sqlite3 *db, const char *table, int *n, struct strbuf *err)
{
	return query_int(db,
			 "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
			 table, n, err);
}

/* Whether the file holds tables that pptrace did not create. */
static int foreign_tables(sqlite3 *db, int *n, struct strbuf *err)
{
	return query_int(db,
			 "SELECT count(*) FROM sqlite_master WHERE "
			 "type = 'table' AND name NOT LIKE 'sqlite_%'",
			 NULL, n, err);
}

/* Whether every view of schema[] is stored with this build's definition
 * (*current 1) or one is missing or differs (0). SQLite keeps a view's
 * CREATE statement as it was given. */
static int views_current(sqlite3 *db, int *current, struct strbuf *err)
{
	const size_t nschema = sizeof(schema) / sizeof(schema[0]);
	size_t nviews = 0, same = 0;
	sqlite3_stmt *st;
	int rc;
	for (size_t i = 0; i < nschema; i++)
		nviews += schema[i].view != NULL;
	if (sqlite3_prepare_v2(db, "SELECT name, sql FROM sqlite_master WHERE type = 'view'", -1,
			       &st, NULL) != SQLITE_OK)
		return pp_err(err, PP_EDB, "%s", sqlite3_errmsg(db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *stored = (const char *)sqlite3_column_text(st, 1);
		for (size_t i = 0; name && stored && i < nschema; i++)
			if (schema[i].view && !strcmp(schema[i].view, name)) {
				same += !strcmp(schema[i].create, stored);
				break;
			}
	}
	if (rc != SQLITE_DONE)
		pp_err(err, PP_EDB, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	*current = same == nviews;
	return rc == SQLITE_DONE ? 0 : PP_EDB;
}

/* *v the version of db; *current 1 when it is SCHEMA_VERSION with this
 * build's views (nothing to do), else 0. */
static int schema_state(sqlite3 *db, int *v, int *current, struct strbuf *err)
{
	*current = 0;
	if (user_version(db, v, err))
		return PP_EDB;
	return *v == SCHEMA_VERSION ? views_current(db, current, err) : 0;
}

/* Inserts (code, name) into a code table with the prepared INSERT st. */
static int insert_code(sqlite3 *db, sqlite3_stmt *st, int code, const char *name,
		       struct strbuf *err)
{
	sqlite3_reset(st);
	sqlite3_bind_int(st, 1, code);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		pp_err(err, PP_EDB, "cannot write a code table: %s", sqlite3_errmsg(db));
		return PP_EDB;
	}
	return 0;
}

/* Rewrites category_codes, phase_codes, optype_codes and collective_codes
 * from model/rank_result.h and model/optype.h. */
static int write_codes(sqlite3 *db, struct strbuf *err)
{
	sqlite3_stmt *cat = NULL, *phase = NULL, *op = NULL, *coll = NULL;
	int rc = PP_EDB;
	if (db_exec(db, code_sql[0], err) || db_exec(db, code_sql[2], err) ||
	    db_exec(db, code_sql[4], err) || db_exec(db, code_sql[6], err))
		return PP_EDB;
	if (sqlite3_prepare_v2(db, code_sql[1], -1, &cat, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, code_sql[3], -1, &phase, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, code_sql[5], -1, &op, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, code_sql[7], -1, &coll, NULL) != SQLITE_OK) {
		pp_err(err, PP_EDB, "%s", sqlite3_errmsg(db));
		goto out;
	}
	for (int c = 0; c < RR_NCATEGORIES; c++)
		if (insert_code(db, cat, c, rr_category_name(c), err))
			goto out;
	for (int p = 0; p < RR_NPHASES; p++)
		if (insert_code(db, phase, DB_PHASE_CODE(p), rr_phase_name(p), err))
			goto out;
	for (int t = 0; t < OP_NTYPES; t++)
		if (insert_code(db, op, t, op_type_name(t), err))
			goto out;
	for (int c = RR_COLL_NONE + 1; c < RR_NCOLLS; c++)
		if (insert_code(db, coll, c, rr_coll_name(c), err))
			goto out;
	rc = 0;
out:
	sqlite3_finalize(cat);
	sqlite3_finalize(phase);
	sqlite3_finalize(op);
	sqlite3_finalize(coll);
	return rc;
}

/* Brings a file of version v (0 = new) to SCHEMA_VERSION: the migration
 * steps (existing files only), every table, the code tables, then every
 * view dropped and created again (all a file of SCHEMA_VERSION with another
 * build's views needs). Inside the caller's transaction. */
static int upgrade(sqlite3 *db, int v, struct strbuf *err)
{
	const size_t nschema = sizeof(schema) / sizeof(schema[0]);
	for (size_t i = 0; v > 0 && i < sizeof(migrations) / sizeof(migrations[0]); i++) {
		int exists = 1;
		if (migrations[i].from < v)
			continue;
		if (migrations[i].table && table_exists(db, migrations[i].table, &exists, err))
			return PP_EDB;
		if (exists && db_exec(db, migrations[i].sql, err))
			return PP_EDB;
	}
	for (size_t i = 0; i < nschema; i++)
		if (schema[i].drop && db_exec(db, schema[i].drop, err))
			return PP_EDB;
	for (size_t i = 0; i < nschema; i++)
		if (db_exec(db, schema[i].create, err))
			return PP_EDB;
	if (write_codes(db, err))
		return PP_EDB;
	return db_exec(db, SET_VERSION_SQL, err);
}

int schema_check(sqlite3 *db, struct strbuf *err)
{
	int v = 0;
	if (user_version(db, &v, err))
		return PP_EDB;
	if (v != SCHEMA_VERSION) {
		pp_err(err, PP_EDB, "schema version %d, expected %d", v, SCHEMA_VERSION);
		return PP_EDB;
	}
	return 0;
}

int schema_check_readable(sqlite3 *db, struct strbuf *err)
{
	int v = 0;
	if (user_version(db, &v, err))
		return PP_EDB;
	if (v > SCHEMA_VERSION)
		pp_err(err, PP_EDB, "schema version %d is newer than this pptrace (%d)", v,
		       SCHEMA_VERSION);
	else if (v < 1)
		pp_err(err, PP_EDB, "not a pptrace database (user_version %d)", v);
	return v >= 1 && v <= SCHEMA_VERSION ? 0 : PP_EDB;
}

int schema_apply(sqlite3 *db, struct strbuf *err)
{
	int v = 0, current = 0, ntables = 0, rc;
	if ((rc = schema_state(db, &v, &current, err)) || current)
		return rc;
	/* A file of this version that this process may only read keeps its
	 * views: another build's give the same rows. */
	if (v == SCHEMA_VERSION && sqlite3_db_readonly(db, "main") == 1)
		return 0;
	if ((rc = db_exec(db, "BEGIN IMMEDIATE", err)))
		return rc;
	/* Re-read under the write lock: another process may have won. */
	if ((rc = schema_state(db, &v, &current, err)))
		goto out_rollback;
	if (current)
		return db_exec(db, "COMMIT", err);
	if (v > SCHEMA_VERSION) {
		pp_err(err, PP_EDB,
		       "schema version %d is newer than this pptrace (%d): "
		       "use a newer pptrace or a new database file",
		       v, SCHEMA_VERSION);
		rc = PP_EDB;
		goto out_rollback;
	}
	if (v == 0) {
		if ((rc = foreign_tables(db, &ntables, err)))
			goto out_rollback;
		if (ntables) {
			pp_err(err, PP_EDB,
			       "not a pptrace database "
			       "(user_version 0 but %d tables)",
			       ntables);
			rc = PP_EDB;
			goto out_rollback;
		}
	}
	if ((rc = upgrade(db, v, err)))
		goto out_rollback;
	return db_exec(db, "COMMIT", err);

out_rollback:
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}
