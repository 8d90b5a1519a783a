#!/bin/bash
# agg.tp_collective_rows (docs/ppagg.md, config.example.ini): which
# instances of tensor-, context- and expert-parallel groups get a row in the
# collectives view. auto (the default) lists them all while they number at
# most 100,000; none keeps only their ranks' summary in collective_ranks and
# says so in the why view's notes, the other groups' instances still equal
# to ppgen's truth; a value it does not know is refused.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out j --tp 2 --cp 2 --pp 2 --dp 2 -m 4 --layers 1 -q &&
	"$PP_FAST_BIN/ppbatch" --input j -q
is "generated and stored" 0 $?
ppagg --base-folder j --no-render -q
is "default: exit 0" 0 $?
is "default: every kind's instances listed" "cp|default_pg|dp|pp|tp" \
	"$(sql j/pptrace.db "SELECT group_concat(kind, '|') FROM (SELECT DISTINCT kind FROM collectives ORDER BY 1)")"
n=$(sql j/pptrace.db "SELECT count(*) FROM collectives")
is "... all of them, as the why view counts" "$n" "$(sql j/pptrace.db "SELECT collectives FROM why")"
summary=$(sql j/pptrace.db "SELECT pg_kind, count(*), sum(instances) FROM collective_ranks GROUP BY 1 ORDER BY 1")

printf '[agg]\ntp_collective_rows = none\n' >none.ini
ppagg --base-folder j --no-render -q --config none.ini
is "none: exit 0" 0 $?
is "none: only the data-parallel, pipeline and other groups' instances are listed" "default_pg|dp|pp" \
	"$(sql j/pptrace.db "SELECT group_concat(kind, '|') FROM (SELECT DISTINCT kind FROM collectives ORDER BY 1)")"
is "... the per-rank summary of every kind stays the same" "$summary" \
	"$(sql j/pptrace.db "SELECT pg_kind, count(*), sum(instances) FROM collective_ranks GROUP BY 1 ORDER BY 1")"
ok_if "... the why view still counts every instance, its notes say what is not listed" \
	test "$(sql j/pptrace.db "SELECT collectives = $n AND notes LIKE
		'%instances of tensor-, context- and expert-parallel groups are summarised in collective_ranks, not listed (agg.tp_collective_rows)%' FROM why")" = 1
ok_if "... and the rows listed hold ppgen's truth" \
	python3 "$PP_ROOT/tests/tools/whycheck.py" j/pptrace.db j --no-inner

printf '[agg]\ntp_collective_rows = some\n' >bad.ini
ppagg --base-folder j --no-render -q --config bad.ini 2>bad.err
is "an unknown value: a usage error" 2 $?
is "... naming the key and the values" \
	"ppagg: error: bad.ini: agg.tp_collective_rows = 'some': expected auto, all or none" "$(cat bad.err)"
done_testing
