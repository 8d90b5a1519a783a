/* libFuzzer target: ppsim's configuration (pipeline/sim/sim_input.h), a JSON
 * file (pipeline.py / PP-Schedule-Visualization keys) when the input starts with '{', else the [sim]
 * section of an INI file; then defaults and resolution, and for small
 * valid configurations the simulation itself. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/sim.h"
#include "sim/sim_input.h"
#include "util/config.h"
#include "util/pp.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	struct strbuf cerr = STRBUF_INIT;
	struct sim_input in;
	struct config *cfg = NULL;
	int rc;
	int fd = memfd_create("fuzz-sim", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size)
		goto out_close;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	sim_input_init(&in);
	if (sim_input_is_json(path)) {
		rc = sim_input_load_json(&in, path, &cerr);
	} else {
		cfg = config_load(path, &cerr);
		rc = cfg ? sim_input_load_ini(&in, cfg, &cerr) : PP_EPARSE;
	}
	if (rc == 0 && sim_input_finish(&in, &cerr) == 0 &&
	    (long)in.cfg.stages * in.cfg.microbatches <= 4096 && in.cfg.devices <= 64) {
		struct sim_result res = { 0 };
		sim_run(&in.cfg, &res, &cerr);
		sim_result_release(&res);
	}
	sim_input_release(&in);
	config_free(cfg);
	strbuf_release(&cerr);
out_close:
	close(fd);
	return 0;
}
