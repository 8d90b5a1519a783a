#!/bin/bash
# The report of ppagg --compare (docs/compare.md "In the report"): index.html
# opens with the "Compared with ..." section — the sentence (highlighted on a
# regression), the job's table, the ranks whose compute changed most against
# their stage (the slow rank first, highlighted), the per-stage tables with
# the flagged cells highlighted — and headless Chromium loads it without a
# console message; compare/*.csv hold the views' rows.
source "$PP_ROOT/tests/lib.sh"

S="--tp 1 --pp 2 --dp 4 --microbatches 4 --layers 2 --kernels-per-layer 4 --iterations 1,2"
"$PP_FAST_BIN/ppgen" --out base --quiet $S --seed 1 &&
	"$PP_FAST_BIN/ppgen" --out new --quiet $S --seed 2 --straggler 5:1.5 &&
	ppbatch --input base -q && ppbatch --input new -q &&
	ppagg --base-folder base --no-render -q ||
	{ ok_if "ppgen, ppbatch, ppagg" false; done_testing; exit; }
ppagg --base-folder new --no-render -q --compare base/pptrace.db >/dev/null 2>agg.err
is "one rank 1.5x slower: exit 4" 4 "$?"
page=new/pptrace/index.html

is "the comparison is the page's first section" '<section id="baseline">' \
	"$(grep -o '<section[^>]*>' "$page" | head -n 1)"
is "... headed by the baseline's path" "<h2>Compared with base/pptrace.db</h2>" \
	"$(grep -o '<h2>Compared with [^<]*</h2>' "$page")"
is "... the sentence, highlighted as a regression" \
	"$(sql new/pptrace.db "SELECT sentence FROM comparison")" \
	"$(sed -n 's|^<p class="headline" style="background:#fdd;font-weight:bold">\(.*\)</p>$|\1|p' "$page" |
		sed 's/&amp;/\&/g; s/&lt;/</g; s/&gt;/>/g')"
ok_if "... the regression note" grep -q '<b>Regression</b>: the step time grew' "$page"
first=$(sed -n '/The ranks whose compute changed most/,/<\/table>/p' "$page" | grep -m1 '^<tr style=')
ok_if "... the slow rank first in the ranks' table, highlighted ($first)" \
	sh -c "printf '%s' '$first' | grep -q '^<tr style=\"background:#fdd;font-weight:bold\"><td>5</td><td>'"
flagged_cells=$(sed -n '/<caption>Categories: change per stage/,/<\/table>/p' "$page" | grep -o '<td style=' | wc -l)
is "... as many highlighted category cells as flagged rows with a stage" \
	"$(sql new/pptrace.db "SELECT count(*) FROM compare_categories WHERE flagged AND stage IS NOT NULL")" \
	"$flagged_cells"

# The CSVs: a header and the view's rows each.
for v in summary categories optypes groups ranks; do
	is "compare/$v.csv: the rows of compare_$v" \
		"$(sql new/pptrace.db "SELECT count(*) FROM compare_$v")" \
		"$(($(wc -l <"new/pptrace/compare/$v.csv") - 1))"
done

if ! command -v chromium >/dev/null; then
	skip "headless chromium check" "chromium is not installed"
	done_testing
	exit
fi
mkdir -p profile
chromium_dom "$page"
is "chromium loads index.html" 0 $?
is "... no console message" "" "$(grep 'CONSOLE' chrome.err)"
ok_if "... the comparison is the first section of the rendered page" \
	sh -c "grep -o '<section[^>]*>' dom.html | head -n 1 | grep -qx '<section id=\"baseline\">'"
done_testing
