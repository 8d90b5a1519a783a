#!/bin/bash
# `make install` puts the cluster scripts in PREFIX/bin (job scripts in
# PREFIX/libexec/pptrace); installed, pptrace-submit finds ppbatch and ppagg
# beside itself with nothing on PATH, and rejects bad arguments with exit 2.
source "$PP_ROOT/tests/lib.sh"
pfx="$T/pfx"
make -s -C "$PP_ROOT" install PREFIX="$pfx" >install.log 2>&1
is "make install PREFIX=... exits 0" 0 "$?"
for f in bin/pptrace-submit bin/pptrace-epilog bin/pptrace-cron libexec/pptrace/pptrace-common.sh \
	libexec/pptrace/ppbatch-array.sbatch libexec/pptrace/pptrace-merge.sbatch; do
	ok_if "installed $f" test -x "$pfx/$f"
done
mkdir -p tree/iteration_1
: >tree/iteration_1/rank_0000_iter_1.pt.trace.json
env -i PATH=/usr/bin:/bin "$pfx/bin/pptrace-submit" --input tree --shards 4 --dry-run >dry.out 2>&1
is "dry run exits 0" 0 "$?"
ok_if "array of 4 with the installed ppbatch" \
	grep -q -- "--array=0-3 .*$pfx/libexec/pptrace/ppbatch-array.sbatch $pfx/libexec/pptrace $pfx/bin/ppbatch $T/tree " dry.out
ok_if "merge job with the installed ppbatch and ppagg" \
	grep -q "pptrace-merge.sbatch $pfx/libexec/pptrace $pfx/bin/ppbatch $pfx/bin/ppagg $T/tree " dry.out
ok_if "--shards auto on a small tree gives one task" \
	sh -c "'$pfx/bin/pptrace-submit' --input tree --shards auto -n | grep -q -- --array=0-0"
"$pfx/bin/pptrace-submit" --input tree --shards 0 -n >bad.out 2>&1
is "--shards 0: exit 2" 2 "$?"
"$pfx/bin/pptrace-submit" --input nowhere --shards 2 -n >bad.out 2>&1
is "missing input: exit 2" 2 "$?"
"$pfx/bin/pptrace-cron" >bad.out 2>&1
is "cron without roots: exit 2" 2 "$?"
done_testing
