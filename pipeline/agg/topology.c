/* topology.c — see topology.h.
 *
 * The file parser is a line state machine: a header line sets a size, a
 * title line opens a section (its kind found by keywords, the model section
 * first because its title mentions "DP"), dashed lines are counted per
 * section (model groups come after the second one), "Group K: [...]" adds a
 * group to the open section. The lines real files carry besides sizes and
 * groups (banner, time stamp, global batch size, per-section and overall
 * counts) are understood silently and their counts checked once the groups
 * are known. Anything else is noted, never fatal.
 */
#include "topology.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/cmp.h"
#include "util/pp.h"

static const char *const kind_names[TOPO_NKINDS] = { "tp", "pp", "dp", "ep", "cp", "model" };

const char *topo_source_name(enum topo_source s)
{
	switch (s) {
	case TOPO_SRC_FILE: return "file";
	case TOPO_SRC_SIZES: return "sizes";
	case TOPO_SRC_INFERRED: return "inferred";
	case TOPO_SRC_OPS: return "op trace";
	case TOPO_SRC_IMPORT: return "import";
	default: return "none";
	}
}

void topo_init(struct topology *t)
{
	memset(t, 0, sizeof(*t));
	strbuf_init(&t->origin, 0);
	strbuf_init(&t->notes, 0);
}

static void groups_clear(struct topo_groups *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i].ranks);
	free(g->v);
	memset(g, 0, sizeof(*g));
}

static void index_free(struct topology *t)
{
	PP_FREE_ALL(t->pp_of, t->stage_of, t->dp_of, t->model_of);
	t->pp_of = t->stage_of = t->dp_of = t->model_of = NULL;
	t->nrank = 0;
}

void topo_release(struct topology *t)
{
	for (int k = 0; k < TOPO_NKINDS; k++)
		groups_clear(&t->groups[k]);
	index_free(t);
	strbuf_release(&t->origin);
	strbuf_release(&t->notes);
	topo_init(t);
}

/* Appends a group; takes ownership of ranks. */
static void groups_add(struct topo_groups *g, int number, int *ranks, int n)
{
	PP_GROW(g->v, g->n, g->alloc, 16);
	g->v[g->n++] = (struct topo_group){ number, n, ranks };
}

int topo_parse_ranks(const char *s, int **out)
{
	int n = 0, alloc = 0, *v = NULL;
	const char *p = s;
	while (*p == ' ' || *p == '\t')
		p++;
	bool bracket = *p == '[' || *p == '(';
	if (bracket)
		p++;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (!*p || *p == ']' || *p == ')' || *p == '\r' || *p == '\n')
			break;
		char *end;
		errno = 0;
		long r = strtol(p, &end, 10);
		if (end == p || errno || r < 0 || r > 10000000)
			goto bad;
		PP_GROW(v, n, alloc, 16);
		v[n++] = (int)r;
		p = end;
	}
	if (bracket && *p != ']' && *p != ')')
		goto bad;
	if (*p)
		p++;
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	if (*p || !n)
		goto bad;
	*out = v;
	return n;
bad:
	free(v);
	return -1;
}

static bool has_word(const char *up, const char *w)
{
	return strstr(up, w) != NULL;
}

/* The kind a section title names, or -1: the first kind one of whose
 * words it holds. up is the upper-cased line. */
static int title_kind(const char *up)
{
	static const struct {
		int kind;
		const char *word[3];
	} title[] = {
		{ TOPO_MODEL, { "MODEL RANK", "FULL MODEL", "REPLICA" } },
		{ TOPO_TP, { "TENSOR", " TP ", "(TP)" } },
		{ TOPO_PP, { "PIPELINE", " PP ", "(PP)" } },
		{ TOPO_EP, { "EXPERT", " EP ", "(EP)" } },
		{ TOPO_CP, { "CONTEXT", " CP ", "(CP)" } },
		{ TOPO_DP, { "DATA", " DP ", "(DP)" } },
	};
	if (!has_word(up, "GROUP"))
		return -1;
	for (size_t i = 0; i < sizeof(title) / sizeof(title[0]); i++)
		for (int w = 0; w < 3; w++)
			if (has_word(up, title[i].word[w]))
				return title[i].kind;
	return -1;
}

static int *size_slot(struct topology *t, const char *up)
{
	if (!strncmp(up, "TP", 2) || !strncmp(up, "TENSOR", 6))
		return &t->tp;
	if (!strncmp(up, "PP", 2) || !strncmp(up, "PIPELINE", 8))
		return &t->pp;
	if (!strncmp(up, "DP", 2) || !strncmp(up, "DATA", 4))
		return &t->dp;
	if (!strncmp(up, "CP", 2) || !strncmp(up, "CONTEXT", 7))
		return &t->cp;
	if (!strncmp(up, "EP", 2) || !strncmp(up, "EXPERT", 6))
		return &t->ep;
	if (!strncmp(up, "WORLD", 5))
		return &t->world;
	return NULL;
}

static bool is_dashes(const char *s)
{
	int n = 0;
	for (; *s; s++) {
		if (*s == '-' || *s == '=')
			n++;
		else if (!isspace((unsigned char)*s))
			return false;
	}
	return n >= 3;
}

static void note(struct topology *t, const char *name, int line, const char *what, const char *text)
{
	strbuf_addf(&t->notes, "%s:%d: %s: '%.80s'\n", name, line, what, text);
}

/* "Group K: [...]" → 1 and fills number/ranks, 0 when the line is not a
 * group line, -1 when it is one but its ranks are malformed. */
static int parse_group_line(const char *s, int *number, int **ranks, int *n)
{
	while (isspace((unsigned char)*s))
		s++;
	if (strncasecmp(s, "group", 5))
		return 0;
	s += 5;
	char *end;
	long k = strtol(s, &end, 10);
	if (end == s)
		return 0;
	s = end;
	while (isspace((unsigned char)*s))
		s++;
	if (*s != ':')
		return 0;
	*n = topo_parse_ranks(s + 1, ranks);
	if (*n < 0)
		return -1;
	*number = (int)k;
	return 1;
}

static int derive(struct topology *t, const char *name);

/* Counts a file states about itself (-1: not stated), with the line that
 * stated them, for the checks of check_counts(). */
struct stated {
	int groups[TOPO_NKINDS], groups_line[TOPO_NKINDS];
	int replicas, replicas_line;
	int total, valid, error, stats_line;
};

/* The number after the last ':' of s, or -1 when it is not one. */
static int count_after_colon(const char *s)
{
	const char *c = strrchr(s, ':');
	char *end;
	if (!c)
		return -1;
	long v = strtol(c + 1, &end, 10);
	while (isspace((unsigned char)*end))
		end++;
	return end > c + 1 && !*end && v >= 0 && v <= 100000000 ? (int)v : -1;
}

/* Whether the line (up: upper-cased) is one of the lines besides sizes and
 * groups that real files carry; stores what it states. A count that is not
 * a number is noted. */
static bool extra_line(struct topology *t, struct stated *st, int section, const char *up,
		       const char *s, const char *name, int line)
{
	static const char *const ignored[] = { "MEGATRON PARALLEL CONFIGURATION", "STATISTICS" };
	static const char *const counts[] = {
		"GLOBAL BATCH SIZE:", "TOTAL GROUPS:", "TOTAL MODEL REPLICAS",
		"TOTAL RANKS:",       "VALID RANKS:",  "ERROR RANKS:"
	};
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (!strcmp(up, ignored[i]))
			return true;
	if (!strncmp(up, "TIMESTAMP:", 10))
		return true;
	size_t k;
	for (k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
		if (!strncmp(up, counts[k], strlen(counts[k])))
			break;
	if (k == sizeof(counts) / sizeof(counts[0]))
		return false;
	int v = count_after_colon(s);
	if (v < 0) {
		note(t, name, line, "count not understood", s);
		return true;
	}
	switch (k) {
	case 0: t->global_batch = v; break;
	case 1:
		if (section < 0) {
			note(t, name, line, "group count outside a section", s);
			break;
		}
		st->groups[section] = v;
		st->groups_line[section] = line;
		break;
	case 2:
		st->replicas = v;
		st->replicas_line = line;
		break;
	case 3:
		st->total = v;
		st->stats_line = line;
		break;
	case 4: st->valid = v; break;
	case 5: st->error = v; break;
	}
	return true;
}

/* The file's own counts against what it lists (after derive()). */
static void check_counts(struct topology *t, const struct stated *st, const char *name)
{
	for (int k = 0; k < TOPO_NKINDS; k++)
		if (st->groups[k] >= 0 && (size_t)st->groups[k] != t->groups[k].n)
			strbuf_addf(&t->notes,
				    "%s:%d: 'Total groups: %d' but the %s section "
				    "lists %zu\n",
				    name, st->groups_line[k], st->groups[k], kind_names[k],
				    t->groups[k].n);
	if (st->replicas >= 0 && (size_t)st->replicas != t->groups[TOPO_MODEL].n)
		strbuf_addf(&t->notes, "%s:%d: %d model replicas stated, %zu listed\n", name,
			    st->replicas_line, st->replicas, t->groups[TOPO_MODEL].n);
	if (st->replicas >= 0 && t->dp && st->replicas != t->dp)
		strbuf_addf(&t->notes, "%s:%d: %d model replicas stated but dp is %d\n", name,
			    st->replicas_line, st->replicas, t->dp);
	if (st->total >= 0 && t->world && st->total != t->world)
		strbuf_addf(&t->notes, "%s:%d: 'Total Ranks: %d' but the world has %d ranks\n",
			    name, st->stats_line, st->total, t->world);
	if (st->total >= 0 && st->valid >= 0 && st->error >= 0 &&
	    st->valid + st->error != st->total)
		strbuf_addf(&t->notes, "%s:%d: %d valid and %d error ranks are not the %d total\n",
			    name, st->stats_line, st->valid, st->error, st->total);
	if (st->error > 0)
		strbuf_addf(&t->notes, "%s: the job that wrote it counted %d error rank%s\n", name,
			    st->error, st->error == 1 ? "" : "s");
	if (t->global_batch && t->dp && t->global_batch % t->dp)
		strbuf_addf(&t->notes, "%s: global batch size %d is not a multiple of dp %d\n",
			    name, t->global_batch, t->dp);
}

int topo_parse_text(struct topology *t, const char *text, size_t len, const char *name)
{
	int section = -1, dashes = 0, lineno = 0, rc = 0;
	bool any = false;
	struct stated st = { .replicas = -1, .total = -1, .valid = -1, .error = -1 };
	for (int k = 0; k < TOPO_NKINDS; k++)
		st.groups[k] = -1;
	char line[4096], up[4096];
	size_t i = 0;

	while (i < len) {
		size_t j = i;
		while (j < len && text[j] != '\n')
			j++;
		size_t l = j - i < sizeof(line) - 1 ? j - i : sizeof(line) - 1;
		memcpy(line, text + i, l);
		line[l] = '\0';
		i = j + 1;
		lineno++;
		while (l && isspace((unsigned char)line[l - 1]))
			line[--l] = '\0';
		const char *s = line;
		if (lineno == 1 && !strncmp(s, "\xEF\xBB\xBF", 3))
			s += 3;
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			continue;
		if (is_dashes(s)) {
			dashes++;
			continue;
		}
		int number, n, *ranks;
		int g = parse_group_line(s, &number, &ranks, &n);
		if (g < 0) {
			note(t, name, lineno, "malformed group", s);
			continue;
		}
		if (g > 0) {
			if (section < 0) {
				free(ranks);
				note(t, name, lineno, "group outside a known section", s);
				continue;
			}
			if (section == TOPO_MODEL && dashes < 2)
				note(t, name, lineno, "model group before the second dashed line",
				     s);
			groups_add(&t->groups[section], number, ranks, n);
			any = true;
			continue;
		}
		size_t k;
		for (k = 0; s[k] && k < sizeof(up) - 1; k++)
			up[k] = (char)toupper((unsigned char)s[k]);
		up[k] = '\0';
		if (extra_line(t, &st, section, up, s, name, lineno))
			continue;
		/* Header: "<NAME>[ (...)] Size: N". */
		const char *colon = strrchr(up, ':');
		const char *sz = strstr(up, "SIZE");
		if (colon && sz && sz < colon) {
			int *slot = size_slot(t, up);
			char *end;
			long v = strtol(s + (colon - up) + 1, &end, 10);
			while (*end && isspace((unsigned char)*end))
				end++;
			if (slot && !*end && v > 0 && v <= 10000000) {
				*slot = (int)v;
				any = true;
			} else {
				note(t, name, lineno, "size line not understood", s);
			}
			continue;
		}
		/* Text between the model section's dashed lines is its legend
		 * (it may well say "group" and "replica"). */
		if (section == TOPO_MODEL && dashes == 1)
			continue;
		int kind = title_kind(up);
		if (kind >= 0) {
			if (t->groups[kind].n)
				note(t, name, lineno,
				     "second section of the same kind (groups appended)", s);
			section = kind;
			dashes = 0;
			continue;
		}
		note(t, name, lineno, "line not understood", s);
	}
	if (!any)
		return PP_EPARSE;
	if ((rc = derive(t, name)))
		return rc;
	check_counts(t, &st, name);
	return 0;
}

int topo_load_file(struct topology *t, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return PP_EIO;
	struct strbuf sb = STRBUF_INIT;
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	int rc = ferror(f) ? PP_EIO : 0;
	fclose(f);
	if (!rc)
		rc = topo_parse_text(t, sb.buf, sb.len, path);
	if (!rc) {
		t->source = TOPO_SRC_FILE;
		strbuf_reset(&t->origin);
		strbuf_addstr(&t->origin, path);
	}
	strbuf_release(&sb);
	return rc;
}

char *topo_find_file(const char *const *dirs, size_t ndirs)
{
	struct strbuf best = STRBUF_INIT, path = STRBUF_INIT;
	struct timespec best_m = { 0, 0 };
	char *bestname = NULL;
	for (size_t d = 0; d < ndirs; d++) {
		if (!dirs[d])
			continue;
		DIR *dir = opendir(dirs[d]);
		if (!dir)
			continue;
		struct dirent *e;
		while ((e = readdir(dir))) {
			if (fnmatch("unique_parallel_groups_*.txt", e->d_name, 0))
				continue;
			struct stat st;
			strbuf_reset(&path);
			strbuf_addf(&path, "%s/%s", dirs[d], e->d_name);
			if (stat(path.buf, &st) || !S_ISREG(st.st_mode))
				continue;
			int c = !bestname ? 1
				: st.st_mtim.tv_sec != best_m.tv_sec
					? (st.st_mtim.tv_sec > best_m.tv_sec ? 1 : -1)
				: st.st_mtim.tv_nsec != best_m.tv_nsec
					? (st.st_mtim.tv_nsec > best_m.tv_nsec ? 1 : -1)
					: strcmp(e->d_name, bestname);
			if (c > 0) {
				best_m = st.st_mtim;
				strbuf_reset(&best);
				strbuf_addstr(&best, path.buf);
				free(bestname);
				bestname = xstrdup(e->d_name);
			}
		}
		closedir(dir);
	}
	free(bestname);
	strbuf_release(&path);
	if (!best.len) {
		strbuf_release(&best);
		return NULL;
	}
	return strbuf_detach(&best, NULL);
}

static void build_from_sizes(struct topology *t, int kinds_mask);

/* Fills unknown sizes from groups and groups from sizes, and checks them
 * against each other (mismatches are noted). */
static int derive(struct topology *t, const char *name)
{
	struct {
		int *size;
		int kind;
	} map[] = {
		{ &t->tp, TOPO_TP }, { &t->pp, TOPO_PP }, { &t->dp, TOPO_DP },
		{ &t->ep, TOPO_EP }, { &t->cp, TOPO_CP },
	};
	int maxrank = -1;
	for (int k = 0; k < TOPO_NKINDS; k++)
		for (size_t g = 0; g < t->groups[k].n; g++)
			for (int r = 0; r < t->groups[k].v[g].n; r++)
				if (t->groups[k].v[g].ranks[r] > maxrank)
					maxrank = t->groups[k].v[g].ranks[r];
	for (size_t m = 0; m < sizeof(map) / sizeof(map[0]); m++) {
		struct topo_groups *gs = &t->groups[map[m].kind];
		if (!gs->n)
			continue;
		int n0 = gs->v[0].n;
		for (size_t g = 1; g < gs->n; g++)
			if (gs->v[g].n != n0) {
				strbuf_addf(&t->notes,
					    "%s: %s groups of different sizes (%d and %d)\n", name,
					    kind_names[map[m].kind], n0, gs->v[g].n);
				break;
			}
		if (!*map[m].size)
			*map[m].size = n0;
		else if (*map[m].size != n0)
			strbuf_addf(&t->notes, "%s: %s size %d but its groups have %d ranks\n",
				    name, kind_names[map[m].kind], *map[m].size, n0);
	}
	if (!t->cp)
		t->cp = 1;
	if (!t->ep)
		t->ep = 1;
	if (!t->world && maxrank >= 0)
		t->world = maxrank + 1;
	if (!t->dp && t->world && t->tp && t->pp) {
		long denom = (long)t->tp * t->pp * t->cp * t->ep;
		if (denom > 0 && t->world % denom == 0)
			t->dp = (int)(t->world / denom);
	}
	if (!t->world && t->tp && t->pp && t->dp)
		t->world = t->tp * t->pp * t->dp * t->cp * t->ep;
	int mask = 0;
	if (!t->groups[TOPO_PP].n)
		mask |= 1 << TOPO_PP;
	if (!t->groups[TOPO_DP].n)
		mask |= 1 << TOPO_DP;
	if (!t->groups[TOPO_TP].n)
		mask |= 1 << TOPO_TP;
	if (mask && t->tp && t->pp && t->dp) {
		build_from_sizes(t, mask);
		strbuf_addf(&t->notes, "%s: groups it does not list were laid out from the sizes\n",
			    name);
	}
	if (!t->groups[TOPO_MODEL].n && t->groups[TOPO_DP].n) {
		/* Model replica m = the ranks at position m of their DP group. */
		int dp = t->groups[TOPO_DP].v[0].n;
		for (int m = 0; m < dp; m++) {
			int *ranks = xmalloc(t->groups[TOPO_DP].n * sizeof(int));
			int n = 0;
			for (size_t g = 0; g < t->groups[TOPO_DP].n; g++)
				if (t->groups[TOPO_DP].v[g].n > m)
					ranks[n++] = t->groups[TOPO_DP].v[g].ranks[m];
			for (int a = 1; a < n; a++)
				for (int b = a; b > 0 && ranks[b - 1] > ranks[b]; b--) {
					int x = ranks[b];
					ranks[b] = ranks[b - 1];
					ranks[b - 1] = x;
				}
			groups_add(&t->groups[TOPO_MODEL], m, ranks, n);
		}
	}
	if (!t->groups[TOPO_PP].n)
		return PP_EPARSE;
	return 0;
}

/* rank = tp + TP*(cp + CP*(ep + EP*(dp + DP*pp))). Builds the kinds whose
 * bit is set in kinds_mask (plus model replicas when that bit is set). */
static void build_from_sizes(struct topology *t, int kinds_mask)
{
	int size[5] = { t->tp, t->cp, t->ep, t->dp, t->pp }; /* coordinate order */
	int kind_of[5] = { TOPO_TP, TOPO_CP, TOPO_EP, TOPO_DP, TOPO_PP };
	int stride[5];
	stride[0] = 1;
	for (int c = 1; c < 5; c++)
		stride[c] = stride[c - 1] * size[c - 1];
	int world = stride[4] * size[4];
	for (int c = 0; c < 5; c++) {
		int kind = kind_of[c];
		if (!(kinds_mask & (1 << kind)))
			continue;
		/* One group per combination of the other coordinates, in rank order
		 * of its first member. */
		int number = 1;
		for (int base = 0; base < world; base++) {
			if ((base / stride[c]) % size[c])
				continue; /* not the first member of its group */
			int *ranks = xmalloc((size_t)size[c] * sizeof(int));
			for (int i = 0; i < size[c]; i++)
				ranks[i] = base + i * stride[c];
			groups_add(&t->groups[kind], number++, ranks, size[c]);
		}
	}
	if (kinds_mask & (1 << TOPO_MODEL)) {
		/* Replica d: every rank with dp coordinate d, ascending; built
		 * directly so that the whole loop is O(world), not O(dp * world). */
		for (int d = 0; d < t->dp; d++) {
			int *ranks = xmalloc((size_t)(world / t->dp) * sizeof(int));
			int n = 0;
			for (int p = 0; p < size[4]; p++)
				for (int off = 0; off < stride[3]; off++)
					ranks[n++] = off + d * stride[3] + p * stride[4];
			groups_add(&t->groups[TOPO_MODEL], d, ranks, n);
		}
	}
}

int topo_from_sizes(struct topology *t, int tp, int pp, int dp, int cp, int ep)
{
	if (tp < 1 || pp < 1 || dp < 1 || cp < 1 || ep < 1 ||
	    (long)tp * pp * dp * cp * ep > 10000000)
		return PP_EINVAL;
	for (int k = 0; k < TOPO_NKINDS; k++)
		groups_clear(&t->groups[k]);
	t->tp = tp, t->pp = pp, t->dp = dp, t->cp = cp, t->ep = ep;
	t->world = tp * pp * dp * cp * ep;
	build_from_sizes(t, (1 << TOPO_NKINDS) - 1);
	t->source = TOPO_SRC_SIZES;
	return 0;
}

int topo_from_grid(struct topology *t, int dp, int pp, const int *rank_at)
{
	size_t n = (size_t)dp * (size_t)pp;
	if (dp < 1 || pp < 1 || n > 10000000)
		return PP_EINVAL;
	int *sorted = xmalloc(n * sizeof(int));
	memcpy(sorted, rank_at, n * sizeof(int));
	qsort(sorted, n, sizeof(int), cmp_int);
	bool ok = sorted[0] >= 0;
	for (size_t i = 1; i < n && ok; i++)
		ok = sorted[i] != sorted[i - 1];
	free(sorted);
	if (!ok)
		return PP_EINVAL;
	for (int k = 0; k < TOPO_NKINDS; k++)
		groups_clear(&t->groups[k]);
	for (int d = 0; d < dp; d++) {
		int *pg = xmalloc((size_t)pp * sizeof(int)),
		    *model = xmalloc((size_t)pp * sizeof(int));
		memcpy(pg, rank_at + (size_t)d * (size_t)pp, (size_t)pp * sizeof(int));
		memcpy(model, pg, (size_t)pp * sizeof(int));
		qsort(model, (size_t)pp, sizeof(int), cmp_int);
		groups_add(&t->groups[TOPO_PP], d + 1, pg, pp);
		groups_add(&t->groups[TOPO_MODEL], d, model, pp);
	}
	for (int s = 0; s < pp; s++) {
		int *g = xmalloc((size_t)dp * sizeof(int));
		for (int d = 0; d < dp; d++)
			g[d] = rank_at[(size_t)d * (size_t)pp + (size_t)s];
		groups_add(&t->groups[TOPO_DP], s + 1, g, dp);
	}
	t->tp = t->cp = t->ep = 1;
	t->dp = dp;
	t->pp = pp;
	t->world = dp * pp;
	t->source = TOPO_SRC_OPS;
	return 0;
}

static const struct {
	const char *desc;
	int kind;
} pg_kinds[] = {
	{ "TENSOR_MODEL_PARALLEL_GROUP", TOPO_TP }, { "PIPELINE_MODEL_PARALLEL_GROUP", TOPO_PP },
	{ "DATA_PARALLEL_GROUP", TOPO_DP },         { "CONTEXT_PARALLEL_GROUP", TOPO_CP },
	{ "EXPERT_MODEL_PARALLEL_GROUP", TOPO_EP },
};

static bool same_ranks(const struct topo_group *g, const int *ranks, int n)
{
	return g->n == n && !memcmp(g->ranks, ranks, (size_t)n * sizeof(int));
}

int topo_infer_add(struct topology *t, const char *desc, const char *ranks_text)
{
	int kind = -1;
	if (!desc || !ranks_text)
		return 0;
	for (size_t i = 0; i < sizeof(pg_kinds) / sizeof(pg_kinds[0]); i++)
		if (!strcmp(desc, pg_kinds[i].desc))
			kind = pg_kinds[i].kind;
	if (kind < 0)
		return 0;
	int *ranks;
	int n = topo_parse_ranks(ranks_text, &ranks);
	if (n < 0) {
		strbuf_addf(&t->notes, "traces: %s ranks not understood: '%.80s'\n", desc,
			    ranks_text);
		return 0;
	}
	struct topo_groups *gs = &t->groups[kind];
	for (size_t g = 0; g < gs->n; g++)
		if (same_ranks(&gs->v[g], ranks, n)) {
			free(ranks);
			return 0;
		}
	groups_add(gs, 0, ranks, n);
	return 0;
}

static int cmp_first_rank(const void *a, const void *b)
{
	const struct topo_group *x = a, *y = b;
	int ra = x->n ? x->ranks[0] : -1, rb = y->n ? y->ranks[0] : -1;
	for (int i = 1; i < x->n; i++)
		if (x->ranks[i] < ra)
			ra = x->ranks[i];
	for (int i = 1; i < y->n; i++)
		if (y->ranks[i] < rb)
			rb = y->ranks[i];
	return (ra > rb) - (ra < rb);
}

int topo_infer_finish(struct topology *t)
{
	for (int k = 0; k < TOPO_NKINDS; k++) {
		struct topo_groups *gs = &t->groups[k];
		if (gs->n > 1)
			qsort(gs->v, gs->n, sizeof(gs->v[0]), cmp_first_rank);
		for (size_t g = 0; g < gs->n; g++)
			gs->v[g].number = (int)g + 1;
	}
	if (!t->groups[TOPO_PP].n)
		return PP_ENOTFOUND;
	int rc = derive(t, "traces");
	if (rc)
		return rc == PP_EPARSE ? PP_ENOTFOUND : rc;
	t->source = TOPO_SRC_INFERRED;
	strbuf_reset(&t->origin);
	strbuf_addstr(&t->origin, "process-group args of the traces");
	return 0;
}

void topo_index(struct topology *t)
{
	int maxrank = -1;
	index_free(t);
	for (int k = 0; k < TOPO_NKINDS; k++)
		for (size_t g = 0; g < t->groups[k].n; g++)
			for (int r = 0; r < t->groups[k].v[g].n; r++)
				if (t->groups[k].v[g].ranks[r] > maxrank)
					maxrank = t->groups[k].v[g].ranks[r];
	int n = maxrank + 1;
	if (n < 1)
		n = 1;
	t->pp_of = xmalloc((size_t)n * sizeof(int));
	t->stage_of = xmalloc((size_t)n * sizeof(int));
	t->dp_of = xmalloc((size_t)n * sizeof(int));
	t->model_of = xmalloc((size_t)n * sizeof(int));
	t->nrank = n;
	for (int r = 0; r < n; r++)
		t->pp_of[r] = t->stage_of[r] = t->dp_of[r] = t->model_of[r] = -1;
	struct {
		int kind;
		int *of;
	} map[] = {
		{ TOPO_PP, t->pp_of },
		{ TOPO_DP, t->dp_of },
		{ TOPO_MODEL, t->model_of },
	};
	for (size_t m = 0; m < 3; m++) {
		const struct topo_groups *gs = &t->groups[map[m].kind];
		for (size_t g = 0; g < gs->n; g++)
			for (int i = 0; i < gs->v[g].n; i++) {
				int r = gs->v[g].ranks[i];
				if (map[m].of[r] < 0)
					map[m].of[r] = (int)g;
				if (map[m].kind == TOPO_PP && t->stage_of[r] < 0)
					t->stage_of[r] = i;
			}
	}
}
