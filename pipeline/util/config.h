/* config.h — the INI configuration file (config.example.ini lists every key).
 *
 * Keys are addressed as "section.key". A command loads the file named by
 * --config (or none), reads its keys as defaults, then lets its command-line
 * flags override them. Unknown keys are reported by config_check_known().
 */
#ifndef CONFIG_H
#define CONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct config;
struct strbuf;

/* Loads path; on failure returns NULL and appends "file:line: why" to err. */
struct config *config_load(const char *path, struct strbuf *err);
/* An empty configuration (no file). */
struct config *config_new(void);
/* The file cfg was loaded from, or "config" (config_new()): every message
 * about a key or value starts with it, so that a user with a site-wide and
 * an own config knows which to fix. The getters below do so themselves. */
const char *config_path(const struct config *cfg);
void config_free(struct config *cfg);

/* The value of "section.key" or NULL. For a key given several times the
 * last one wins. Returned strings live as long as cfg. */
const char *config_get(const struct config *cfg, const char *key);
/* Typed getters: return 0 and set *out, 1 if the key is absent (*out kept),
 * PP_EINVAL with a message appended to err if the value is malformed. */
int config_get_long(const struct config *cfg, const char *key, long *out, struct strbuf *err);
int config_get_double(const struct config *cfg, const char *key, double *out, struct strbuf *err);
int config_get_bool(const struct config *cfg, const char *key, bool *out, struct strbuf *err);
/* The same with a range: PP_EINVAL ("config key K: expected an integer
 * from MIN to MAX, got 'V'") for a value outside [min, max]. */
int config_get_long_in(const struct config *cfg, const char *key, long min, long max, long *out,
		       struct strbuf *err);
int config_get_double_in(const struct config *cfg, const char *key, double min, double max,
			 double *out, struct strbuf *err);
/* Calls fn with every value given for key, in file order: a key written on
 * several lines, or continued on indented lines (each continuation line is
 * a value of its own), has several. Returns the count. */
size_t config_get_list(const struct config *cfg, const char *key,
		       void (*fn)(void *ctx, const char *item), void *ctx);
/* Warns about each key in a section starting with `section_prefix` that is
 * not in the NULL-terminated `known` list. Returns the count of unknown keys. */
size_t config_check_known(const struct config *cfg, const char *section, const char *const *known);

#endif
