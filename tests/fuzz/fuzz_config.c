/* libFuzzer target: the INI configuration file (pipeline/util/config.h), loaded
 * from a memory file, then every getter on the keys it holds. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/config.h"
#include "util/pp.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_item(void *ctx, const char *item)
{
	(*(size_t *)ctx) += item[0] != '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "batch.processes",
					    "sim.strategy",
					    "agg.out",
					    "patterns.forward_step",
					    "a.b",
					    ".",
					    NULL };
	static const char *const known[] = { "processes", NULL };
	char path[64];
	struct strbuf err = STRBUF_INIT;
	int fd = memfd_create("fuzz-config", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct config *cfg = config_load(path, &err);
	close(fd);
	if (!cfg) {
		strbuf_release(&err);
		return 0;
	}
	for (size_t i = 0; keys[i]; i++) {
		long l;
		double d;
		bool b;
		size_t n = 0;
		config_get(cfg, keys[i]);
		config_get_long(cfg, keys[i], &l, &err);
		config_get_double(cfg, keys[i], &d, &err);
		config_get_bool(cfg, keys[i], &b, &err);
		strbuf_reset(&err);
		config_get_list(cfg, keys[i], on_item, &n);
	}
	config_check_known(cfg, "batch", known);
	config_free(cfg);
	strbuf_release(&err);
	return 0;
}
