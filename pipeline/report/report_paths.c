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

/* name in the folder f. */
static void in(struct strbuf *sb, enum report_file f, int it, long id, const char *name)
{
	report_rel(sb, f, it, id);
	strbuf_addch(sb, '/');
	strbuf_addstr(sb, name);
}

void report_rel(struct strbuf *sb, enum report_file f, int it, long id)
{
	switch (f) {
	case RF_INDEX: strbuf_addstr(sb, "index.html"); return;
	case RF_ITERATIONS: strbuf_addstr(sb, "iterations.csv"); return;
	case RF_PAGE: strbuf_addf(sb, "iteration_%d.html", it); return;
	case RF_ITERATION: strbuf_addf(sb, "iteration_%d", it); return;
	case RF_PP_GROUPS: in(sb, RF_ITERATION, it, 0, "pp_groups.csv"); return;
	case RF_PIPELINES: in(sb, RF_ITERATION, it, 0, "pipelines.csv"); return;
	case RF_STRAGGLERS: in(sb, RF_ITERATION, it, 0, "stragglers.csv"); return;
	case RF_OVERVIEW: in(sb, RF_ITERATION, it, 0, "overview"); return;
	case RF_OVERVIEW_MAP: in(sb, RF_OVERVIEW, it, 0, agg_metrics[id].key); return;
	case RF_OVERVIEW_STEPS: in(sb, RF_OVERVIEW, it, 0, "steps"); return;
	case RF_RANK:
	case RF_PP_GROUP:
	case RF_MODEL_GROUP: /* a folder per rank or group in the iteration's */
		report_rel(sb, RF_ITERATION, it, 0);
		strbuf_addf(sb, "/%s_%ld",
			    f == RF_RANK       ? "rank"
			    : f == RF_PP_GROUP ? "pp_group"
					       : "model_group",
			    id);
		return;
	case RF_RANK_TIMELINE: in(sb, RF_RANK, it, id, "timeline"); return;
	case RF_RANK_OVERLAP: in(sb, RF_RANK, it, id, "overlap"); return;
	case RF_RANK_STEPS: in(sb, RF_RANK, it, id, "steps.csv"); return;
	case RF_RANK_CATEGORIES: in(sb, RF_RANK, it, id, "categories.csv"); return;
	case RF_PP_GROUP_TIMELINE: in(sb, RF_PP_GROUP, it, id, "timeline"); return;
	case RF_MODEL_GROUP_TIMELINE: in(sb, RF_MODEL_GROUP, it, id, "timeline"); return;
	case RF_WHATIF: strbuf_addstr(sb, "whatif"); return;
	case RF_WHATIF_SW: in(sb, RF_WHATIF, it, id, "sw"); return;
	case RF_WHATIF_STEP: in(sb, RF_WHATIF, it, id, "step"); return;
	case RF_WHATIF_JSON: in(sb, RF_WHATIF, it, id, "timeline.json"); return;
	case RF_ANNOT: strbuf_addstr(sb, "annotations"); return;
	case RF_ANNOT_CSV: in(sb, RF_ANNOT, it, id, "annotations.csv"); return;
	case RF_ADVICE: strbuf_addstr(sb, "advice"); return;
	case RF_ADVICE_CSV: in(sb, RF_ADVICE, it, id, "advice.csv"); return;
	case RF_ADVICE_MEMORY_CSV: in(sb, RF_ADVICE, it, id, "advice_memory.csv"); return;
	case RF_ADVICE_CHART: in(sb, RF_ADVICE, it, id, "step_memory"); return;
	case RF_WHY: strbuf_addstr(sb, "why"); return;
	case RF_WHY_HOPS: in(sb, RF_WHY, it, id, "hops"); return;
	case RF_WHY_JSON: in(sb, RF_WHY, it, id, "ranks.json"); return;
	case RF_COMPARE: strbuf_addstr(sb, "compare"); return;
	case RF_COMPARE_SUMMARY: in(sb, RF_COMPARE, it, id, "summary.csv"); return;
	case RF_COMPARE_CATEGORIES: in(sb, RF_COMPARE, it, id, "categories.csv"); return;
	case RF_COMPARE_OPTYPES: in(sb, RF_COMPARE, it, id, "optypes.csv"); return;
	case RF_COMPARE_GROUPS: in(sb, RF_COMPARE, it, id, "groups.csv"); return;
	case RF_COMPARE_RANKS: in(sb, RF_COMPARE, it, id, "ranks.csv"); return;
	}
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
