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
grep -q '"traceEvents"' "$trace" || { echo "FAIL: not a Chrome trace"; exit 1; }
# The eigensolve is its own region on the separate kernels and inside the fused one on CPUs.
grep -Eq '"name": "qgml::(eigensolve|fused_loss_gradient)", "cat": "region", "ph": "X"' "$trace" ||
  { echo "FAIL: no eigensolve or fused loss-gradient region"; exit 1; }
grep -q '"cat": "kernel"' "$trace" || { echo "FAIL: no kernel events"; exit 1; }
events=$(grep -c '"ph": "X"' "$trace")
[ "$events" -eq 100 ] || { echo "FAIL: $events events, expected the bound of 100"; exit 1; }
dropped=$(grep -o '"dropped_events": [0-9]*' "$trace" | grep -o '[0-9]*$')
[ "$dropped" -gt 0 ] || { echo "FAIL: the bounded buffer reports no dropped events"; exit 1; }
grep -q '"regions"' "$run/monitor.json" && grep -q '"peak_bytes"' "$run/monitor.json" ||
  { echo "FAIL: monitor.json lacks regions or peak_bytes"; exit 1; }
echo "ok: $events events, $dropped dropped; $(grep 'profiler:' train.log)"
