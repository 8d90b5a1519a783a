#!/bin/bash
# The reader's event parser at every SIMD level (docs/reader.md): the
# reader's unit tests pass with each level this CPU runs forced through
# PP_SIMD (the fuzz target inside them also compares every level with the
# best), --inspect reads real and ppgen traces the same at each level and
# says which level ran, and the NEON primitives compile for aarch64.
source "$PP_ROOT/tests/lib.sh"

"$PP_FAST_BIN/ppgen" --quiet --out gen --tp 1 --pp 1 --dp 1 --microbatches 2 --layers 2 \
	--kernels-per-layer 4 --nasty all >/dev/null
files=(gen/iteration_15/*.json)
while IFS= read -r f; do
	files+=("$f")
done < <(find "$SHARED/data/real" -name '*.json.gz' 2>/dev/null | sort)
[ ${#files[@]} -gt 1 ] || echo "# no real traces beside the project: ppgen's only"

ran=0
for lv in avx512 avx2 sse2 neon scalar; do
	got=$(PP_SIMD=$lv ppbatch --inspect --no-classify --json "${files[0]}" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["simd"])')
	if [ "$got" != "$lv" ]; then
		skip "level $lv" "this CPU or build does not run it ($got instead)"
		continue
	fi
	ran=$((ran + 1))
	PP_SIMD=$lv "$PP_UNIT/test_trace_read" >unit.$lv 2>&1
	is "$lv: the reader's unit tests pass" 0 "$?"
	PP_SIMD=$lv ppbatch --inspect --no-classify --json "${files[@]}" |
		sed 's/"seconds":[0-9.e-]*//; s/"simd":"[a-z0-9]*"//' >inspect.$lv
	is "$lv: --inspect reads every trace (${#files[@]})" "${#files[@]}" \
		"$(grep -c '"ok":true' inspect.$lv)"
	if [ -f inspect.ref ]; then
		ok_if "$lv: the same as $(cat ref.name)" cmp inspect.ref inspect.$lv
	else
		cp inspect.$lv inspect.ref
		echo "$lv" >ref.name
	fi
done
ok_if "at least two levels ran (the scalar one and another)" test "$ran" -ge 2

# NEON is compiled only on aarch64; its primitives at least compile there.
if command -v clang >/dev/null; then
	cat >neon.c <<'EOF'
#include "pipeline/read/simd.h"
int neon_check(const char *p, const char *lit, char *o);
int neon_check(const char *p, const char *lit, char *o)
{
	simd_copy(o, p, 40);
	simd_copy_block(o, p, 64);
	return (simd_find_quote_or_bs(p, p + 40) - p) + simd_lit_eq(p, lit, 0xffu, 8) +
	       (simd_brace_after_ws(p) != 0);
}
#ifndef SIMD_NEON
#error "not the NEON implementation"
#endif
EOF
	clang --target=aarch64-linux-gnu -ffreestanding -O2 -Wall -Werror -I"$PP_ROOT" \
		-c neon.c -o neon.o 2>neon.err
	is "NEON primitives compile for aarch64" 0 "$?"
	[ -s neon.err ] && sed 's/^/# /' neon.err | head -20
else
	skip "NEON primitives compile for aarch64" "clang is not installed"
fi
done_testing
