#!/bin/bash
# The layout is the architecture: no file includes from a layer it may not
# use, and the files of a folder do not depend on each other in a cycle (the
# rules: docs/architecture.md, checked by tests/tools/check_layers.py).
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
# Two files of util/ that use each other's function through their headers,
# and two headers of classify/ that include each other.
printf '#include "b.h"\nint a_run(void)\n{\n\treturn b_run();\n}\n' >"$T/bad/pipeline/util/a.c"
printf 'int a_run(void);\n' >"$T/bad/pipeline/util/a.h"
printf '#include "a.h"\nint b_run(void)\n{\n\treturn 0;\n}\nint b_twice(void)\n{\n\treturn 2 * a_run();\n}\n' \
	>"$T/bad/pipeline/util/b.c"
printf 'int b_run(void);\nint b_twice(void);\n' >"$T/bad/pipeline/util/b.h"
printf '#include "q.h"\n' >"$T/bad/pipeline/classify/p.h"
printf '#include "classify/p.h"\n' >"$T/bad/pipeline/classify/q.h"
python3 "$CHECK" "$T/bad" >"$T/bad.out" 2>/dev/null
cat "$T/bad.out" | sed 's/^/# /'
ok_if "util/ including storage/ is flagged" grep -q 'util/x.c:1: util/ may not include from storage/' "$T/bad.out"
ok_if "gen/ including classify/ is flagged" grep -q 'gen/y.c:1: gen/ may not include from classify/' "$T/bad.out"
ok_if "an include of a missing header is flagged" grep -q 'storage/z.c:1: includes "util/nothing.h", which does not exist' "$T/bad.out"
ok_if "a folder without a rule is flagged" grep -q 'pipeline/extra/: no rule' "$T/bad.out"
ok_if "two files of a folder that use each other are flagged" grep -q \
	'pipeline/util/: files depend on each other in a cycle (a.c, b.c): a.c uses b_run of b.c, b.c uses a_run of a.c' \
	"$T/bad.out"
ok_if "two headers that include each other are flagged" grep -q \
	'pipeline/classify/: headers include each other: p.h -> q.h -> p.h' "$T/bad.out"
ok_if "a folder listed for its cycle that has none is flagged" grep -q \
	'pipeline/gen/: listed in the cycles block of docs/architecture.md but has no cycle' "$T/bad.out"

# The build enforces the generator's independence too: ppgen links only
# libppgen.a and libpputil.a, so it holds no code of the analysis.
if command -v nm >/dev/null; then
	is "ppgen holds no reader, classifier, storage, aggregation or report code" "" \
		"$(nm "$PP_BIN/ppgen" | grep -E ' [Tt] (trace_read|classify|db_|agg_|report_|batch_|topo_)' | head -5)"
	ok_if "ppgen holds the generator and the utilities (nm works)" \
		sh -c "nm '$PP_BIN/ppgen' | grep -q ' T gen_run' && nm '$PP_BIN/ppgen' | grep -q ' T cli_init'"
else
	skip "ppgen holds no analysis code" "nm (binutils) is not installed"
fi
done_testing
