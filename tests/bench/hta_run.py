"""Times Meta's Holistic Trace Analysis (HTA) over one trace folder, as
scripts/bench.d/hta.sh compares it with pptrace: load the traces, then the
temporal breakdown, the idle-time breakdown and the communication /
computation overlap (what pptrace's ppbatch + ppagg report). Prints the wall
seconds of the whole run. Exit 3 when the hta package does not import."""
import sys
import time

try:
    from hta.trace_analysis import TraceAnalysis
except ImportError as e:
    print(f"hta_run: error: cannot import hta ({e})", file=sys.stderr)
    sys.exit(3)

t0 = time.monotonic()
analyzer = TraceAnalysis(trace_dir=sys.argv[1])
analyzer.get_temporal_breakdown(visualize=False)
analyzer.get_idle_time_breakdown(visualize=False)
analyzer.get_comm_comp_overlap(visualize=False)
print(f"{time.monotonic() - t0:.3f}")
