#!/bin/bash
# A worker's malloc on huge pages (docs/ppbatch.md, "Performance";
# hugepage_heap_restart(), which ppagg calls too): a worker started without
# glibc.malloc.hugetlb in GLIBC_TUNABLES starts itself again once with it,
# after the tunables it was given; one given the tunable keeps it as it is
# (hugetlb=0 turns it off) and does not restart. The restarted
# worker answers the protocol and stores a trace as the coordinator's
# workers do. Read from /proc/<pid>/environ while the worker, ready, waits
# for its next task.
source "$PP_ROOT/tests/lib.sh"

[ -r /proc/self/environ ] || {
	skip "worker environment" "no /proc/<pid>/environ to read a worker's environment from"
	done_testing
	exit 0
}

# worker_env NAME BIN [VAR=VALUE]: starts BIN/ppbatch --worker (with
# VAR=VALUE in its environment; GLIBC_TUNABLES unset otherwise), waits for
# its ready line, copies its /proc/<pid>/environ (what the last exec was
# given; glibc's loader may cut its GLIBC_TUNABLES in place at each ':')
# to NAME.env and the flags of its [heap] mapping to NAME.heap, and ends
# it by closing its tasks.
worker_env() {
	local name=$1 pid ready
	rm -f "$name.in" "$name.out"
	mkfifo "$name.in" "$name.out" || return 1
	(
		unset GLIBC_TUNABLES PPTRACE_HEAP_RESTARTED
		[ -z "${3:-}" ] || export "$3"
		exec "$2/ppbatch" --worker --db "$name.db" <"$name.in" >"$name.out"
	) &
	pid=$!
	exec 7>"$name.in" 8<"$name.out"
	read -r ready <&8
	cp "/proc/$pid/environ" "$name.env"
	awk '/\[heap\]/ { h = 1 } h && /^VmFlags:/ { print; exit }' "/proc/$pid/smaps" >"$name.heap"
	exec 7>&- 8<&-
	wait "$pid"
	is "$name: the worker says it is ready" ready "$ready"
}
# has NAME TEXT [NEXT]: NAME.env holds TEXT as one of its NUL-ended
# strings (followed by NEXT).
has() {
	if [ $# -eq 2 ]; then
		tr '\0' '\n' <"$1.env" | grep -qxF -- "$2"
	else
		tr '\0' '\n' <"$1.env" | grep -A1 -xF -- "$2" | tail -1 | grep -qxF -- "$3"
	fi
}
# lacks FILE WORD: FILE does not hold WORD.
lacks() {
	! grep -qaw -- "$2" "$1"
}

worker_env plain "$PP_BIN"
ok_if "no tunables: restarted once" has plain PPTRACE_HEAP_RESTARTED=1
ok_if "no tunables: restarted with glibc.malloc.hugetlb=1" \
	has plain GLIBC_TUNABLES=glibc.malloc.hugetlb=1

worker_env other "$PP_BIN" GLIBC_TUNABLES=glibc.malloc.arena_max=2
ok_if "other tunables: restarted once" has other PPTRACE_HEAP_RESTARTED=1
ok_if "other tunables: kept, glibc.malloc.hugetlb=1 after them" \
	has other GLIBC_TUNABLES=glibc.malloc.arena_max=2 glibc.malloc.hugetlb=1

worker_env off "$PP_BIN" GLIBC_TUNABLES=glibc.malloc.hugetlb=0
ok_if "hugetlb=0: kept as given" has off GLIBC_TUNABLES=glibc.malloc.hugetlb=0
ok_if "hugetlb=0: no restart" lacks off.env PPTRACE_HEAP_RESTARTED

# The effect, on the build without sanitizers (whose malloc is glibc's):
# the heap is advised for huge pages (VmFlags hg) unless hugetlb=0.
worker_env fast "$PP_FAST_BIN"
worker_env fastoff "$PP_FAST_BIN" GLIBC_TUNABLES=glibc.malloc.hugetlb=0
if [ -s fast.heap ] && [ -s fastoff.heap ]; then
	ok_if "the worker's heap is advised for huge pages" grep -qw hg fast.heap
	ok_if "hugetlb=0: the heap is not" lacks fastoff.heap hg
else
	skip "the worker's heap" "no [heap] mapping with VmFlags in /proc/<pid>/smaps"
fi

# A restarted worker stores a trace: the same database as a worker told
# not to restart, through the coordinator.
ok_if "generate" "$PP_FAST_BIN/ppgen" --out tree --quiet --pp 2 --microbatches 4 \
	--iterations 1 --layers 2
ppbatch --input tree --db huge.db -j 1 --quiet
is "restarted workers: exit 0" 0 $?
GLIBC_TUNABLES=glibc.malloc.hugetlb=0 ppbatch --input tree --db small.db -j 1 --quiet
is "workers kept as they are: exit 0" 0 $?
q="SELECT iteration, rank, kernels, gpu_busy_ns, bubble_ns FROM ranks ORDER BY 1, 2"
is "the same ranks either way" "$(sql small.db "$q")" "$(sql huge.db "$q")"
is "the same kernels either way" "$(sql small.db "SELECT count(*), sum(dur_ns) FROM kernels")" \
	"$(sql huge.db "SELECT count(*), sum(dur_ns) FROM kernels")"

done_testing
