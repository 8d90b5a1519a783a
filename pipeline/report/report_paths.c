/* report_paths.c — where every output of ppagg goes, and how its files are
 * written (report_int.h). The folders and names below are the report's
 * layout (docs/ppagg.md "Output folder"): the writers and the pages' links both
 * take them from here.
 */
#include "report_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/pp.h"

char *report_out(const struct agg_job *job, const struct report_opts *o)
{
	struct strbuf sb = STRBUF_INIT;
	if (o->out)
		strbuf_addstr(&sb, o->out);
	else
		strbuf_addf(&sb, "%s/pptrace", job->base);
	return strbuf_detach(&sb, NULL);
}

/* The layout, a row per output: the folder it is in (TOP: the output folder
 * itself) and its name, which num follows (the iteration it, or the rank or
 * group id), then after; the name of a METRIC row is the key of metric id.
 * The folder is named with the output's own it and id. */
enum { TOP = -1 };
enum num { NONE, IT, ID, METRIC };
static const struct place {
	int parent;
	enum num num;
	const char *name, *after;
} layout[] = {
	[RF_INDEX] = { TOP, NONE, "index.html" },
	[RF_ITERATIONS] = { TOP, NONE, "iterations.csv" },
	[RF_PAGE] = { TOP, IT, "iteration_", ".html" },
	[RF_ITERATION] = { TOP, IT, "iteration_" },
	[RF_PP_GROUPS] = { RF_ITERATION, NONE, "pp_groups.csv" },
	[RF_PIPELINES] = { RF_ITERATION, NONE, "pipelines.csv" },
	[RF_STRAGGLERS] = { RF_ITERATION, NONE, "stragglers.csv" },
	[RF_OVERVIEW] = { RF_ITERATION, NONE, "overview" },
	[RF_OVERVIEW_MAP] = { RF_OVERVIEW, METRIC },
	[RF_OVERVIEW_STEPS] = { RF_OVERVIEW, NONE, "steps" },
	[RF_RANK] = { RF_ITERATION, ID, "rank_" },
	[RF_RANK_TIMELINE] = { RF_RANK, NONE, "timeline" },
	[RF_RANK_OVERLAP] = { RF_RANK, NONE, "overlap" },
	[RF_RANK_STEPS] = { RF_RANK, NONE, "steps.csv" },
	[RF_RANK_CATEGORIES] = { RF_RANK, NONE, "categories.csv" },
	[RF_PP_GROUP] = { RF_ITERATION, ID, "pp_group_" },
	[RF_PP_GROUP_TIMELINE] = { RF_PP_GROUP, NONE, "timeline" },
	[RF_MODEL_GROUP] = { RF_ITERATION, ID, "model_group_" },
	[RF_MODEL_GROUP_TIMELINE] = { RF_MODEL_GROUP, NONE, "timeline" },
	[RF_WHATIF] = { TOP, NONE, "whatif" },
	[RF_WHATIF_SW] = { RF_WHATIF, NONE, "sw" },
	[RF_WHATIF_STEP] = { RF_WHATIF, NONE, "step" },
	[RF_WHATIF_JSON] = { RF_WHATIF, NONE, "timeline.json" },
	[RF_ANNOT] = { TOP, NONE, "annotations" },
	[RF_ANNOT_CSV] = { RF_ANNOT, NONE, "annotations.csv" },
	[RF_ADVICE] = { TOP, NONE, "advice" },
	[RF_ADVICE_CSV] = { RF_ADVICE, NONE, "advice.csv" },
	[RF_ADVICE_MEMORY_CSV] = { RF_ADVICE, NONE, "advice_memory.csv" },
	[RF_ADVICE_CHART] = { RF_ADVICE, NONE, "step_memory" },
	[RF_WHY] = { TOP, NONE, "why" },
	[RF_WHY_HOPS] = { RF_WHY, NONE, "hops" },
	[RF_WHY_JSON] = { RF_WHY, NONE, "ranks.json" },
	[RF_COMPARE] = { TOP, NONE, "compare" },
	[RF_COMPARE_SUMMARY] = { RF_COMPARE, NONE, "summary.csv" },
	[RF_COMPARE_CATEGORIES] = { RF_COMPARE, NONE, "categories.csv" },
	[RF_COMPARE_OPTYPES] = { RF_COMPARE, NONE, "optypes.csv" },
	[RF_COMPARE_GROUPS] = { RF_COMPARE, NONE, "groups.csv" },
	[RF_COMPARE_RANKS] = { RF_COMPARE, NONE, "ranks.csv" },
};
/* Catches a row missing at the end only: a value added inside the enum
 * without its row is caught by test_report, which checks every path. */
_Static_assert(sizeof(layout) / sizeof(layout[0]) == RF_NFILES,
	       "a row of the layout per enum report_file");

void report_rel(struct strbuf *sb, enum report_file f, int it, long id)
{
	const struct place *p = &layout[f];
	if (p->parent != TOP) {
		report_rel(sb, p->parent, it, id);
		strbuf_addch(sb, '/');
	}
	strbuf_addstr(sb, p->num == METRIC ? agg_metrics[id].key : p->name);
	if (p->num == IT)
		strbuf_addf(sb, "%d", it);
	else if (p->num == ID)
		strbuf_addf(sb, "%ld", id);
	if (p->after)
		strbuf_addstr(sb, p->after);
}

void report_path(struct strbuf *sb, const struct report *R, enum report_file f, int it, long id)
{
	strbuf_addf(sb, "%s/", R->out);
	report_rel(sb, f, it, id);
}

const char *report_leaf(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int report_dir_open(struct report_dir *d, const char *path, struct strbuf *err)
{
	size_t mark = err->len;
	d->path = path;
	d->fd = -1;
	d->err = err;
	d->own = NULL;
	if (safe_mkdirs(AT_FDCWD, path, 0, &d->fd, err))
		return pp_err_prefix(err, mark, PP_EIO, "cannot create '%s': ", path);
	return 0;
}

int report_dir_open_at(struct report_dir *d, const struct report *R, enum report_file f, int it,
		       long id)
{
	struct strbuf path = STRBUF_INIT;
	report_path(&path, R, f, it, id);
	char *own = strbuf_detach(&path, NULL);
	int rc = report_dir_open(d, own, R->err);
	d->own = own;
	return rc;
}

void report_dir_close(struct report_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	free(d->own);
	d->own = NULL;
}

int report_mkdir(const char *path, struct strbuf *err)
{
	size_t mark = err->len;
	if (safe_mkdir_p(path, err))
		return pp_err_prefix(err, mark, PP_EIO, "cannot create '%s': ", path);
	return 0;
}

FILE *report_open(const struct report_dir *d, const char *name, struct strbuf *path,
		  struct safefile *sf)
{
	size_t mark = d->err->len;
	strbuf_reset(path);
	strbuf_addf(path, "%s/%s", d->path, name);
	if (safefile_open(sf, d->fd, name, d->err)) {
		pp_err_prefix(d->err, mark, PP_EIO, "cannot write '%s': ", path->buf);
		return NULL;
	}
	return sf->fp;
}

int report_commit(struct safefile *sf, const char *path, struct strbuf *err)
{
	size_t mark = err->len;
	if (safefile_commit(sf, err))
		return pp_err_prefix(err, mark, PP_EIO, "cannot write '%s': ", path);
	return 0;
}

int report_write_file(const struct report *R, enum report_file f, int it, long id,
		      const struct strbuf *sb)
{
	struct strbuf path = STRBUF_INIT, p = STRBUF_INIT;
	struct report_dir d;
	struct safefile sf;
	int rc = PP_EIO;
	report_path(&path, R, f, it, id);
	const char *name = report_leaf(path.buf);
	path.buf[name - path.buf - 1] = '\0'; /* the folder */
	if (report_dir_open(&d, path.buf, R->err))
		goto out;
	FILE *fp = report_open(&d, name, &p, &sf);
	if (fp) {
		fwrite(sb->buf, 1, sb->len, fp);
		rc = report_commit(&sf, p.buf, R->err);
	}
	report_dir_close(&d);
out:
	strbuf_release(&path);
	strbuf_release(&p);
	return rc;
}

int report_write_put(const struct report_dir *d, enum report_file f, int it, long id,
		     void (*put)(FILE *, const void *), const void *arg)
{
	struct strbuf rel = STRBUF_INIT, path = STRBUF_INIT;
	struct safefile sf;
	int rc = PP_EIO;
	report_rel(&rel, f, it, id);
	FILE *fp = report_open(d, report_leaf(rel.buf), &path, &sf);
	if (fp) {
		put(fp, arg);
		rc = report_commit(&sf, path.buf, d->err);
	}
	strbuf_release(&rel);
	strbuf_release(&path);
	return rc;
}

void report_remove(const struct report *R, enum report_file dir, const struct report_name *names,
		   size_t n)
{
	struct strbuf rel = STRBUF_INIT;
	struct strbuf *name = xcalloc(n + 1, sizeof(*name));
	const char **leaf = xcalloc(n + 1, sizeof(*leaf));
	for (size_t i = 0; i < n; i++) {
		strbuf_reset(&rel);
		report_rel(&rel, names[i].f, 0, 0);
		strbuf_init(&name[i], 0);
		strbuf_addstr(&name[i], report_leaf(rel.buf));
		strbuf_addstr(&name[i], names[i].ext);
		leaf[i] = name[i].buf;
	}
	report_remove_stale(R, dir, leaf, n);
	for (size_t i = 0; i < n; i++)
		strbuf_release(&name[i]);
	free(name);
	free(leaf);
	strbuf_release(&rel);
}

void report_remove_stale(const struct report *R, enum report_file folder, const char *const *names,
			 size_t n)
{
	struct strbuf dir = STRBUF_INIT;
	int outfd, fd;
	if (safe_opendir(AT_FDCWD, R->out, 0, &outfd, NULL))
		return;
	report_rel(&dir, folder, 0, 0);
	fd = openat(outfd, dir.buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		for (size_t i = 0; i < n; i++)
			if (unlinkat(fd, names[i], 0) && errno != ENOENT)
				warn("cannot remove the earlier run's '%s/%s/%s': %s", R->out,
				     dir.buf, names[i], strerror(errno));
		close(fd);
		(void)unlinkat(outfd, dir.buf, AT_REMOVEDIR); /* fails when not empty */
	}
	close(outfd);
	strbuf_release(&dir);
}
