#!/usr/bin/env bash
# trace.sh WORKDIR QGML CONFIG
# profiling.enabled writes a Chrome trace of the scheduled epochs: regions and kernels as complete
# ("X") events, and a bounded buffer that reports how many events it dropped.
set -u
work=$1 qgml=$2 config=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export OMP_PROC_BIND=false
"$qgml" train "$config" --training.epochs 6 --profiling.enabled true --profiling.kernels true \
  --profiling.wait 1 --profiling.warmup 1 --profiling.active 2 --profiling.max_events 100 \
  --output.plots false --analysis.enabled false --output.directory runs --kokkos-disable-warnings >train.log 2>&1 ||
  { echo "FAIL: training with profiling failed"; cat train.log; exit 1; }
run=$(ls -d runs/*/ | head -n 1)
trace="$run/profiler_traces/train.trace.json"
[ -f "$trace" ] || { echo "FAIL: no trace file"; exit 1; }
# The trace and monitor.json are read as JSON, whatever their layout.
summary=$(/usr/bin/python3 - "$trace" "$run/monitor.json" <<'EOF'
import json, sys
trace = json.load(open(sys.argv[1]))
events = trace.get("traceEvents")
if not isinstance(events, list):
    sys.exit("FAIL: not a Chrome trace")
# The eigensolve is its own region on the separate kernels, inside the fused one on CPUs and inside the
# team one on GPUs.
if not any(e["name"] in ("qgml::eigensolve", "qgml::fused_loss_gradient", "qgml::team_loss_gradient")
           and e["cat"] == "region" for e in events):
    sys.exit("FAIL: no eigensolve, fused or team loss-gradient region")
if not any(e["cat"] == "kernel" for e in events):
    sys.exit("FAIL: no kernel events")
if not all(e["ph"] == "X" and e["dur"] >= 0 for e in events):
    sys.exit("FAIL: an event is not a complete (X) event with a duration")
if len(events) != 100:
    sys.exit(f"FAIL: {len(events)} events, expected the bound of 100")
dropped = trace["otherData"]["dropped_events"]
if not dropped > 0:
    sys.exit("FAIL: the bounded buffer reports no dropped events")
monitor = json.load(open(sys.argv[2]))
if "peak_bytes" not in monitor or not all("regions" in e and "peak_bytes" in e for e in monitor["epochs"]):
    sys.exit("FAIL: monitor.json lacks regions or peak_bytes")
print(len(events), dropped)
EOF
) || { echo "$summary"; exit 1; }
events=${summary% *} dropped=${summary#* }
echo "ok: $events events, $dropped dropped; $(grep 'profiler:' train.log)"
