#!/bin/bash
# ppsim: the Gantt chart (gnuplot script, PNG, SVG with hover text).
source "$PP_ROOT/tests/lib.sh"

mkdir out
ppsim --strategy dualpipe_v --devices 4 --microbatches 10 --overlapped 2.5 -o out/dpv >t.txt
ok_if "script written" test -s out/dpv.gp
ok_if "boxes as boxxyerror datablocks" grep -q 'with boxxyerror' out/dpv.gp
ok_if "no set object per box" sh -c '! grep -q "set object" out/dpv.gp'
ok_if "noenhanced text" grep -q 'noenhanced' out/dpv.gp
is "one row per device" "set ytics scale 0 ('Device 0' 0, 'Device 1' 1, 'Device 2' 2, 'Device 3' 3)" \
	"$(grep '^set ytics scale' out/dpv.gp)"
is "a box per op" "$(ppsim --strategy dualpipe_v --devices 4 --microbatches 10 --json --no-visualization |
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)["ops"]))')" \
	"$(awk '/^\$c[0-9]+ << EOD/{on=1;next} /^EOD/{on=0} on' out/dpv.gp | wc -l | tr -d ' ')"
ok_if "micro-batch labels" grep -q '^[0-9.]* [0-9.-]* "9"$' out/dpv.gp
if command -v gnuplot >/dev/null; then
	ok_if "PNG rendered" sh -c 'test -s out/dpv.png && head -c 8 out/dpv.png | od -c | grep -q "P   N   G"'
	ok_if "SVG with hypertext hover" grep -q 'showHypertext(evt,.F mb 0 stage 0 on device 0' out/dpv.svg
	ok_if "the script reruns from its folder" sh -c 'cd out && rm dpv.png && gnuplot dpv.gp && test -s dpv.png'
	# gnuplot failing (the PNG name is a folder): its message, exit 3
	mkdir -p bad/x.png
	ppsim --devices 2 --microbatches 2 -o bad/x >b.txt 2>b.err
	is "gnuplot failing: exit 3" 3 "$?"
	ok_if "... with gnuplot's message" grep -q \
		"^ppsim: error: gnuplot failed on 'bad/x.gp' (exit 1): \"x.gp\" line [0-9]*: cannot open file" b.err
else
	skip "PNG rendered" "no gnuplot"
	skip "SVG with hypertext hover" "no gnuplot"
	skip "the script reruns from its folder" "no gnuplot"
	skip "gnuplot failing is reported" "no gnuplot"
fi
ppsim --devices 2 --microbatches 2 >d.txt
ok_if "default prefix ppsim-<strategy>" test -s ppsim-1f1b.gp
PATH=/nonexistent:/usr/bin/../nonexistent "$PP_BIN/ppsim" --devices 2 --microbatches 2 -o nog >n.txt 2>n.err
is "without gnuplot: still exit 0" 0 "$?"
ok_if "without gnuplot: script only, with a warning" sh -c 'test -s nog.gp && ! test -e nog.png && grep -q "gnuplot is not on PATH" n.err'

# ~100k boxes stay fast to write
start=$(date +%s%N)
ppsim --devices 16 --microbatches 3200 -o big --json >/dev/null 2>&1
ms=$(( ($(date +%s%N) - start) / 1000000 ))
ok_if "100k-op chart written" test -s big.gp
echo "# 102400 ops with chart: ${ms} ms"
done_testing
