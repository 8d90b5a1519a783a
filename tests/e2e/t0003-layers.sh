#!/bin/bash
# The layout is the architecture: no file includes from a layer it may not
# use (the rule: docs/architecture.md, checked by tests/tools/check_layers.py).
source "$PP_ROOT/tests/lib.sh"
CHECK="$PP_ROOT/tests/tools/check_layers.py"

checker_clean "every include of pipeline/ and storage/ respects the layers" 100 \
	"$CHECK" "$PP_ROOT"

# The checker catches what it is meant to catch, on a planted copy.
mkdir -p "$T/bad/docs" "$T/bad/pipeline/util" "$T/bad/pipeline/gen" \
	"$T/bad/pipeline/classify" "$T/bad/pipeline/extra" "$T/bad/storage"
cp "$PP_ROOT/docs/architecture.md" "$T/bad/docs/"
touch "$T/bad/storage/db.h" "$T/bad/pipeline/classify/classify.h"
printf '#include "storage/db.h"\n' >"$T/bad/pipeline/util/x.c"
printf '#include "classify/classify.h"\n' >"$T/bad/pipeline/gen/y.c"
printf '#include "util/nothing.h"\n' >"$T/bad/storage/z.c"
touch "$T/bad/pipeline/extra/w.c"
python3 "$CHECK" "$T/bad" >"$T/bad.out" 2>/dev/null
cat "$T/bad.out" | sed 's/^/# /'
ok_if "util/ including storage/ is flagged" grep -q 'util/x.c:1: util/ may not include from storage/' "$T/bad.out"
ok_if "gen/ including classify/ is flagged" grep -q 'gen/y.c:1: gen/ may not include from classify/' "$T/bad.out"
ok_if "an include of a missing header is flagged" grep -q 'storage/z.c:1: includes "util/nothing.h", which does not exist' "$T/bad.out"
ok_if "a folder without a rule is flagged" grep -q 'pipeline/extra/: no rule' "$T/bad.out"

# The build enforces the generator's independence too: ppgen links only
# libppgen.a and libpputil.a, so it holds no code of the analysis.
if command -v nm >/dev/null; then
	is "ppgen holds no reader, classifier, storage or aggregation code" "" \
		"$(nm "$PP_BIN/ppgen" | grep -E ' [Tt] (trace_read|classify|db_|agg_|batch_|topo_)' | head -5)"
	ok_if "ppgen holds the generator and the utilities (nm works)" \
		sh -c "nm '$PP_BIN/ppgen' | grep -q ' T gen_run' && nm '$PP_BIN/ppgen' | grep -q ' T cli_init'"
else
	skip "ppgen holds no analysis code" "nm (binutils) is not installed"
fi
done_testing
