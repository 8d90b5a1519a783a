#!/bin/bash
# ppbatch --inspect on a trace in the shape of DeepSeek's training profile
# (tests/fixtures/deepseek-shape, made by its make.py): DeepEP's dispatch,
# cached_notify and combine kernels are communication; --full lists the ten
# annotations with their 4 calls and GPU time, and the kernels no pattern
# took (none of DeepEP's); a [collectives] key of the config adds kernels.
source "$PP_ROOT/tests/lib.sh"
FIX=$PP_ROOT/tests/fixtures/deepseek-shape
cp "$FIX/rank_0.pt.trace.json" t.json

ppbatch --inspect t.json >out 2>err
is "survey: exit 0" 0 $?
is "DeepEP kernels are communication" "  kernel types comp 36, comm 24, mem 0" \
	"$(grep 'kernel types' out)"
ok_if "the survey says where the annotations are" grep -q "user annotations and unknown kernels with --full" out

ppbatch --inspect --full t.json >full 2>err
is "--full: exit 0" 0 $?
# The annotation table: calls, kernels, gpu, comp, comm, overlap, name.
is "--full: the ten annotations, 4 calls each, with their GPU time" "$(cat "$FIX/expected.txt")" \
	"$(awk '/user annotations/{p=1; next} /kernels no pattern took/{p=0} p && NF == 7 && $7 != "1F1B" && $1 ~ /^[0-9]+$/ {print $7 "|" $1 "|" $2 "|" $3 "|" $4 "|" $5 "|" $6}' full | LC_ALL=C sort)"
is "--full: 1F1B holds everything once (its GPU ranges, one per stream)" "1 60 1002000" \
	"$(awk '$7 == "1F1B" {print $1, $2, $3}' full)"
is "--full: three unknown kernel names, none of DeepEP's" "3 0" \
	"$(grep -c '^ *[0-9][0-9]* *[0-9][0-9]*  void' full) $(sed -n '/kernels no pattern took/,$p' full | grep -c '::ep::')"

ppbatch --inspect --full --json t.json >full.json
is "--json --full: annotations and unknown kernels" "11 10 3 void dpsk::gemm" \
	"$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
a = d["annotations"]
print(d["annotation_names"], sum(1 for x in a if x["calls"] == 4), d["unknown_kernel_names"],
      d["unknown_kernels"][0]["name"][:15])' full.json)"
ppbatch --inspect --json t.json >survey.json
is "--json survey: null, not known" "None None" \
	"$(python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); print(d["annotations"], d["unknown_kernels"])' survey.json)"

# A user adds the kernels --full listed: the elementwise adds become an
# all-reduce (for the test's sake), the gemms stay.
cat >c.ini <<'INI'
[collectives]
all_reduce = *vectorized_elementwise_kernel*
INI
ppbatch --inspect --full --config c.ini t.json >cfg 2>err
is "[collectives] adds kernels to communication" "  kernel types comp 28, comm 32, mem 0" \
	"$(grep 'kernel types' cfg)"
ok_if "... and replaces that key's default list only: DeepEP stays" \
	test "$(sed -n '/kernels no pattern took/,$p' cfg | grep -c '::ep::')" = 0
cat >bad.ini <<'INI'
[collectives]
alltoall = *x*
INI
ppbatch --inspect --config bad.ini t.json >/dev/null 2>err
ok_if "an unknown collective key is a warning naming it" grep -q "unknown key 'collectives.alltoall'" err
done_testing
