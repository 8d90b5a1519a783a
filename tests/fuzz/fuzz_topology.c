/* libFuzzer target: the topology file parser (pipeline/agg/topology.h).
 * Any text must parse or fail with a code, never crash; the per-rank index
 * built from whatever was parsed must stay within its arrays. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agg/topology.h"
#include "util/pp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topology t = TOPOLOGY_INIT;
	topo_init(&t);
	if (topo_parse_text(&t, (const char *)data, size, "fuzz") == 0 && t.world <= (1 << 16))
		topo_index(&t);
	topo_release(&t);

	/* The same bytes as a ranks list and as inference input. */
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	int *ranks = NULL;
	if (topo_parse_ranks(s, &ranks) >= 0)
		free(ranks);
	struct topology u = TOPOLOGY_INIT;
	topo_init(&u);
	const char *nl = memchr(s, '\n', size);
	const char *descs[] = { "PIPELINE_MODEL_PARALLEL_GROUP", "DATA_PARALLEL_GROUP",
				"TENSOR_MODEL_PARALLEL_GROUP" };
	for (size_t i = 0; i < 3; i++)
		topo_infer_add(&u, descs[i], nl ? nl + 1 : s);
	if (topo_infer_finish(&u) == 0 && u.world <= (1 << 16))
		topo_index(&u);
	topo_release(&u);
	free(s);
	return 0;
}
