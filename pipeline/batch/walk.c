/* walk.c — the file list of a trace tree (see walk.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "walk.h"
#include "util/pp.h"
#include "util/strbuf.h"

static const char *const default_patterns[] = { "*.json", "*.json.gz", "*.pt.trace.json*", NULL };

bool walk_name_matches(const char *pattern, const char *name)
{
	if (pattern)
		return fnmatch(pattern, name, 0) == 0;
	for (const char *const *p = default_patterns; *p; p++)
		if (fnmatch(*p, name, 0) == 0)
			return true;
	return false;
}

void walk_describe_patterns(const char *pattern, struct strbuf *sb)
{
	if (pattern) {
		strbuf_addstr(sb, pattern);
		return;
	}
	for (const char *const *p = default_patterns; *p; p++)
		strbuf_addf(sb, "%s%s", p == default_patterns ? "" : ", ", *p);
}

static bool parse_digits(const char *s, size_t n, int64_t *out)
{
	int64_t v = 0;
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]) || v > (INT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

bool walk_rank_from_name(const char *name, int64_t *rank)
{
	for (const char *p = name; *p; p++) {
		if (strncasecmp(p, "rank", 4))
			continue;
		const char *d = p + 4;
		if (*d == '_' || *d == '-')
			d++;
		const char *e = d;
		while (isdigit((unsigned char)*e))
			e++;
		if (e > d && (*e == '.' || *e == '_') && parse_digits(d, (size_t)(e - d), rank))
			return true;
	}
	return false;
}

bool walk_iteration_from_folder(const char *folder, int64_t *iteration)
{
	const char *u = strrchr(folder, '_');
	const char *d = u ? u + 1 : folder;
	return parse_digits(d, strlen(d), iteration);
}

static void list_push(struct walk_list *l, struct walk_file *f)
{
	PP_GROW(l->v, l->n, l->alloc, 64);
	l->v[l->n++] = *f;
}

void walk_file_release(struct walk_file *f)
{
	PP_FREE_ALL(f->path, f->key, f->real, f->folder, f->error);
}

void walk_list_release(struct walk_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		walk_file_release(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->alloc = 0;
}

static bool folder_selected(const struct walk_opts *o, const char *name)
{
	if (!o->nfolders)
		return true;
	for (int i = 0; i < o->nfolders; i++)
		if (fnmatch(o->folders[i], name, 0) == 0)
			return true;
	return false;
}

static char *join(const char *a, const char *b)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, a);
	if (sb.len && sb.buf[sb.len - 1] != '/')
		strbuf_addch(&sb, '/');
	strbuf_addstr(&sb, b);
	return strbuf_detach(&sb, NULL);
}

__attribute__((format(printf, 1, 2))) static char *errorf(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return strbuf_detach(&sb, NULL);
}

/* Fills f for the entry path (malloc'd, taken) named name in folder;
 * key_dir is the folder's part of the identity (realpath(BASE)[/folder]). */
static void fill_file(struct walk_file *f, char *path, const char *key_dir, const char *folder,
		      const char *name)
{
	struct stat st;
	f->path = path;
	f->key = join(key_dir, name);
	f->folder = xstrdup(folder);
	f->has_iteration = walk_iteration_from_folder(folder, &f->iteration);
	f->has_rank = walk_rank_from_name(name, &f->rank);
	f->real = realpath(f->path, NULL);
	if (!f->real)
		f->real = xstrdup(f->path);
	if (stat(f->path, &st) != 0) {
		f->error = errorf("cannot stat '%s': %s", f->path, strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		f->error = errorf("'%s' is a directory", f->path);
	} else if (!S_ISREG(st.st_mode)) {
		f->error = errorf("'%s' is not a regular file", f->path);
	} else {
		f->bytes = (int64_t)st.st_size;
		f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	}
}

void walk_file_at(const char *path, struct walk_file *f)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	struct strbuf dir = STRBUF_INIT;
	strbuf_add_folder(&dir, path);
	char *key_dir = realpath(dir.buf, NULL);
	const char *fb = strrchr(key_dir ? key_dir : dir.buf, '/');
	memset(f, 0, sizeof(*f));
	fill_file(f, xstrdup(path), key_dir ? key_dir : dir.buf, fb ? fb + 1 : dir.buf, name);
	free(key_dir);
	strbuf_release(&dir);
}

/* Adds one candidate entry dir/name of folder (fill_file()). */
static void add_file(struct walk_list *out, const char *dir, const char *key_dir,
		     const char *folder, const char *name)
{
	struct walk_file f = { 0 };
	fill_file(&f, join(dir, name), key_dir, folder, name);
	list_push(out, &f);
}

/* Adds every matching file directly inside dir, whose identity prefix is
 * key_dir. */
static void scan_folder(const struct walk_opts *o, struct walk_list *out, const char *dir,
			const char *key_dir, const char *folder)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d) {
		/* An unreadable folder: one error entry so the summary shows it. */
		struct walk_file f = { 0 };
		f.path = xstrdup(dir);
		f.key = xstrdup(key_dir);
		f.real = xstrdup(dir);
		f.folder = xstrdup(folder);
		f.has_iteration = walk_iteration_from_folder(folder, &f.iteration);
		f.error = errorf("cannot read folder '%s': %s", dir, strerror(errno));
		list_push(out, &f);
		return;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && walk_name_matches(o->pattern, e->d_name))
			add_file(out, dir, key_dir, folder, e->d_name);
	closedir(d);
}

static int cmp_file(const void *pa, const void *pb)
{
	const struct walk_file *a = pa, *b = pb;
	int c = strcmp(a->folder, b->folder);
	if (c)
		return c;
	if (a->has_rank != b->has_rank)
		return a->has_rank ? -1 : 1;
	if (a->has_rank && a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return strcmp(a->path, b->path);
}

static const char *base_name(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	const char *s = path + n;
	while (s > path && s[-1] != '/')
		s--;
	return s;
}

int walk_dir(const struct walk_opts *o, struct walk_list *out, struct strbuf *err)
{
	DIR *d = opendir(o->input);
	struct dirent *e;
	bool top_files = false;
	if (!d) {
		int why = errno;
		return pp_err(
			err, PP_EIO, "cannot read input folder '%s': %s%s", o->input, strerror(why),
			why == ENOTDIR ? " (--input takes the folder of the iteration_N folders; "
					 "to describe one trace: ppbatch --inspect FILE)"
				       : "");
	}
	/* The identities hang off the canonical BASE, so that any spelling of
	 * --input gives the same ones. */
	char *base = realpath(o->input, NULL);
	if (!base)
		base = xstrdup(o->input);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *p = join(o->input, e->d_name);
		struct stat st;
		/* stat follows symlinks; a looping link fails and is skipped
		 * as a folder (it is reported if it also looks like a trace). */
		bool is_dir = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
		if (is_dir) {
			if (folder_selected(o, e->d_name)) {
				char *key_dir = join(base, e->d_name);
				scan_folder(o, out, p, key_dir, e->d_name);
				free(key_dir);
			}
		} else if (walk_name_matches(o->pattern, e->d_name)) {
			top_files = true;
		}
		free(p);
	}
	closedir(d);
	if (top_files && !o->nfolders) {
		char *name = xstrdup(base_name(base));
		char *slash = strchr(name, '/');
		if (slash && slash != name)
			*slash = '\0';
		scan_folder(o, out, o->input, base, name);
		free(name);
	}
	free(base);
	if (out->n)
		qsort(out->v, out->n, sizeof(out->v[0]), cmp_file);
	return 0;
}

void walk_shard(struct walk_list *l, int index, int count)
{
	size_t k = 0;
	if (count <= 1)
		return;
	for (size_t i = 0; i < l->n; i++) {
		if ((int)(i % (size_t)count) == index)
			l->v[k++] = l->v[i];
		else
			walk_file_release(&l->v[i]);
	}
	l->n = k;
}
