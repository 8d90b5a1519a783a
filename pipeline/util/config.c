/* config.c — INI file loading with inih; see config.h. Entries are kept in
 * file order so that "last one wins" and list keys are simple scans. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pp.h"
#include "strbuf.h"

struct config_entry {
	char *key; /* "section.key" */
	char *value;
	int line; /* ordinal of the entry, for messages */
};

struct config {
	struct config_entry *v;
	size_t n, alloc;
	char *path; /* the file loaded, for messages; NULL for config_new() */
};

struct config *config_new(void)
{
	return xcalloc(1, sizeof(struct config));
}

void config_free(struct config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->n; i++)
		PP_FREE_ALL(cfg->v[i].key, cfg->v[i].value);
	PP_FREE_ALL(cfg->v, cfg->path, cfg);
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
	struct config *cfg = user;
	if (!name) /* a section header alone */
		return 1;
	PP_GROW(cfg->v, cfg->n, cfg->alloc, 32);
	size_t len = strlen(section) + strlen(name) + 2;
	char *key = xmalloc(len);
	snprintf(key, len, "%s.%s", section, name);
	cfg->v[cfg->n].key = key;
	cfg->v[cfg->n].value = xstrdup(value ? value : "");
	cfg->v[cfg->n].line = (int)cfg->n + 1;
	cfg->n++;
	return 1;
}

struct config *config_load(const char *path, struct strbuf *err)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		pp_err(err, PP_EIO, "cannot open config file '%s': %s", path, strerror(errno));
		return NULL;
	}
	struct config *cfg = config_new();
	cfg->path = xstrdup(path);
	int rc = ini_parse_file(f, on_entry, cfg);
	fclose(f);
	if (rc != 0) {
		pp_err(err, PP_EPARSE,
		       "%s:%d: malformed line (expected '[section]' or 'key = value')", path, rc);
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

const char *config_path(const struct config *cfg)
{
	return cfg && cfg->path ? cfg->path : "config";
}

const char *config_get(const struct config *cfg, const char *key)
{
	if (!cfg)
		return NULL;
	for (size_t i = cfg->n; i-- > 0;)
		if (!strcmp(cfg->v[i].key, key))
			return cfg->v[i].value;
	return NULL;
}

/* key's value as an integer (*lv) or a finite number (*dv) in [min, max]:
 * 0, 1 when absent, PP_EINVAL with the reason in err. */
static int get_number(const struct config *cfg, const char *key, bool integer, double min,
		      double max, long *lv, double *dv, struct strbuf *err)
{
	const char *s = config_get(cfg, key);
	const char *what = integer ? "an integer" : "a number";
	char *end;
	if (!s)
		return 1;
	errno = 0;
	double v = integer ? (double)(*lv = strtol(s, &end, 10)) : (*dv = strtod(s, &end));
	if (!*s || *end || errno || !isfinite(v)) {
		return pp_err(err, PP_EINVAL, "%s: config key %s: expected %s, got '%s'",
			      config_path(cfg), key, what, s);
	}
	if (v < min || v > max) {
		return pp_err(err, PP_EINVAL,
			      "%s: config key %s: expected %s from %.15g to %.15g, got '%s'",
			      config_path(cfg), key, what, min, max, s);
	}
	return 0;
}

int config_get_long(const struct config *cfg, const char *key, long *out, struct strbuf *err)
{
	return config_get_long_in(cfg, key, LONG_MIN, LONG_MAX, out, err);
}

int config_get_double(const struct config *cfg, const char *key, double *out, struct strbuf *err)
{
	return config_get_double_in(cfg, key, -HUGE_VAL, HUGE_VAL, out, err);
}

int config_get_bool(const struct config *cfg, const char *key, bool *out, struct strbuf *err)
{
	const char *s = config_get(cfg, key);
	if (!s)
		return 1;
	if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcmp(s, "1") ||
	    !strcasecmp(s, "on")) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcmp(s, "0") ||
	    !strcasecmp(s, "off")) {
		*out = false;
		return 0;
	}
	return pp_err(err, PP_EINVAL, "%s: config key %s: expected true or false, got '%s'",
		      config_path(cfg), key, s);
}

int config_get_long_in(const struct config *cfg, const char *key, long min, long max, long *out,
		       struct strbuf *err)
{
	long v;
	int rc = get_number(cfg, key, true, (double)min, (double)max, &v, NULL, err);
	if (rc == 0)
		*out = v;
	return rc;
}

int config_get_double_in(const struct config *cfg, const char *key, double min, double max,
			 double *out, struct strbuf *err)
{
	double v;
	int rc = get_number(cfg, key, false, min, max, NULL, &v, err);
	if (rc == 0)
		*out = v;
	return rc;
}

size_t config_get_list(const struct config *cfg, const char *key,
		       void (*fn)(void *ctx, const char *item), void *ctx)
{
	size_t count = 0;
	if (!cfg)
		return 0;
	for (size_t i = 0; i < cfg->n; i++)
		if (!strcmp(cfg->v[i].key, key)) {
			fn(ctx, cfg->v[i].value);
			count++;
		}
	return count;
}

size_t config_check_known(const struct config *cfg, const char *section, const char *const *known)
{
	size_t unknown = 0, plen = strlen(section);
	if (!cfg)
		return 0;
	for (size_t i = 0; i < cfg->n; i++) {
		const char *k = cfg->v[i].key;
		if (strncmp(k, section, plen) || k[plen] != '.')
			continue;
		bool ok = false;
		for (const char *const *p = known; *p && !ok; p++)
			ok = !strcmp(k + plen + 1, *p);
		if (!ok) {
			warn("%s: unknown key '%s' (see config.example.ini)", config_path(cfg), k);
			unknown++;
		}
	}
	return unknown;
}
