#!/bin/bash
# Every command applies its settings in one order: defaults, then the config
# file, then the command line (cmd/: cli_find_config()). ppbatch's [batch]
# keys set what no flag gives, a flag overrides its key wherever it stands
# (before or after --config), and a bad value names file and key.
source "$PP_ROOT/tests/lib.sh"
"$PP_FAST_BIN/ppgen" --out tree --pp 2 --microbatches 2 --layers 1 --kernels-per-layer 2 --quiet
n=$(find tree -name '*.json' | wc -l)
printf '[batch]\nprocesses = 1\npattern = nothing-matches-*\n' >c.ini

ppbatch --config c.ini --input tree --db a.db >a.out
is "the config's pattern applies: no trace taken" "ppbatch: 0 files" "$(grep -o '^ppbatch: [0-9]* files' a.out)"
ppbatch --input tree --db b.db --quiet --pattern '*.json' --config c.ini
is "a flag before --config overrides the key" 0 $?
is "... every trace stored" "$n" "$(sqlite3 b.db 'SELECT count(*) FROM ranks')"
is "... and processes = 1 from the file" 1 "$(sqlite3 b.db 'SELECT processes FROM runs')"
ppbatch --config c.ini -j 2 --pattern '*.json' --input tree --db c.db --quiet
is "-j after --config overrides processes" 2 "$(sqlite3 c.db 'SELECT processes FROM runs')"

printf '[batch]\nprocesses = 0\n' >bad.ini
ppbatch --config bad.ini --input tree --db d.db --quiet 2>bad.err
is "an out-of-range key: exit 2" 2 $?
is "... says file, key and range" \
	"ppbatch: error: bad.ini: config key batch.processes: expected an integer from 1 to 4096, got '0'" \
	"$(cat bad.err)"
printf '[batch]\nprocesses = 1\nprocesess = 2\n' >typo.ini
ppbatch --config typo.ini --pattern '*.json' --input tree --db e.db --quiet 2>typo.err
is "an unknown key: warned once, not again by every worker" \
	"ppbatch: warning: typo.ini: unknown key 'batch.procesess' (see config.example.ini)" "$(cat typo.err)"

# ppsim and ppgen: the same order.
printf '[sim]\ndevices = 2\nmicrobatches = 4\nstrategy = zb1p\n' >s.ini
is "ppsim: --strategy overrides [sim] strategy, a flag before --config too" \
	"1f1b, 2 devices, 2 stages, 4 micro-batches, p2p 0, megatron model" \
	"$(ppsim --strategy 1f1b --config s.ini --no-visualization | head -1)"
printf '[gen]\nmicrobatches = 3\nlayers = 1\nkernels_per_layer = 1\n' >g.ini
ppgen -c g.ini --out g1 --quiet --microbatches 2 && ppgen --out g2 --quiet -c g.ini
is "ppgen: --microbatches overrides [gen] microbatches; without it the key counts" "2 3" \
	"$(grep -c '^15,0,fwd,' g1/.truth/steps.csv) $(grep -c '^15,0,fwd,' g2/.truth/steps.csv)"
done_testing
