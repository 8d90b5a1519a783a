#!/bin/bash
# ppagg --format and agg.format take png, svg or both, comma-separated, each
# word exactly: a word that only contains one ("xpngx", "png ") is a usage
# error, given on the command line or in the config file. The formats given
# are the ones rendered.
source "$PP_ROOT/tests/lib.sh"
for bad in xpngx svgpng png, ,svg "png svg" PNG ""; do
	ppagg --base-folder nowhere --format "$bad" >out 2>err
	is "--format '$bad': usage error" 2 $?
	ok_if "... says so" grep -q "ppagg: error: invalid format '$bad': expected png, svg or png,svg" err
done
printf '[agg]\nformat = pngsvg\n' >bad.ini
ppagg --base-folder nowhere --config bad.ini >out 2>err
is "agg.format = pngsvg: usage error" 2 $?
ok_if "... says so" grep -q "invalid format 'pngsvg'" err

mkdir -p run
python3 "$PP_ROOT/tests/e2e/mkaggdb.py" --db run/pptrace.db --tp 1 --pp 2 --dp 1 --mb 3 \
	--iterations 5 --topology run/unique_parallel_groups_1.txt
if ! command -v gnuplot >/dev/null; then
	skip "the formats rendered" "gnuplot is not installed"
	done_testing
	exit
fi
chart=pptrace/iteration_5/pp_group_0/timeline
for f in svg png svg,png png,svg; do
	rm -rf run/pptrace
	ppagg --base-folder run -j 1 -q --format "$f" >out 2>err
	is "--format $f: exit 0" "0" "$?$(head -c 300 err)"
	want=
	case ,$f, in *,png,*) want="$want png" ;; esac
	case ,$f, in *,svg,*) want="$want svg" ;; esac
	got=
	for e in png svg; do [ -s "run/$chart.$e" ] && got="$got $e"; done
	is "... renders:$want" "$want" "$got"
done
done_testing
