#!/usr/bin/env bash
# kill_resume.sh WORKDIR QGML CONFIG [KILLS] [SEED]
# Fault injection: a run with a checkpoint every epoch is killed with SIGKILL at KILLS
# (default 6) random moments (seeded: SEED, default 19), resumed after each kill, and then run to the
# end; its final matrices, its checkpoint's Adam state and its history's losses must be byte-identical
# to those of an uninterrupted run with the same settings. A kill that leaves no run directory, or one
# without a checkpoint whose resume is refused with a message, restarts the run from scratch; any
# other refused or failed resume fails the test.
set -u
work=$1 qgml=$2 config=$3 kills=${4:-6} seed=${5:-19}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export OMP_PROC_BIND=false
RANDOM=$seed
settings=(--data.points 300 --training.batch_size 100 --training.epochs 24 --training.early_stop 0
  --training.checkpoint_every 1 --output.plots false --kokkos-disable-warnings)

"$qgml" train "$config" "${settings[@]}" --output.directory ref >ref.log 2>&1 ||
  { echo "FAIL: the uninterrupted run failed"; cat ref.log; exit 1; }
ref=$(ls -d ref/*/)

run=""
start_or_resume() {  # $1: log file; runs in the background, sets pid
  if [ -n "$run" ]; then
    "$qgml" train --resume "$run" --kokkos-disable-warnings >"$1" 2>&1 &
  else
    "$qgml" train "$config" "${settings[@]}" --output.directory runs >"$1" 2>&1 &
  fi
  pid=$!
}
for k in $(seq "$kills"); do
  start_or_resume "kill-$k.log"
  # 0.05 to 1.5 s: from before the run directory exists to well into training.
  delay=$(printf '0.%03d' $((RANDOM % 1000)))
  sleep "$delay"
  [ $((RANDOM % 2)) -eq 0 ] && sleep 0.5
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rc=$?
  if [ -z "$run" ]; then run=$(ls -d runs/*/ 2>/dev/null | head -n 1); fi
  if [ "$rc" -ne 137 ] && [ "$rc" -ne 0 ]; then
    # A run killed before its epoch-0 checkpoint holds no checkpoint: its resume may refuse, with a
    # message; the run then starts afresh. Any other failure fails the test.
    if [ -n "$run" ] && [ ! -f "$run/checkpoints/LATEST" ] && grep -q "error" "kill-$k.log"; then
      echo "kill $k: resume of $run refused (no checkpoint yet): $(grep error "kill-$k.log" | head -n 1)"
      rm -rf "$run" && run="" && continue
    fi
    echo "FAIL: attempt $k exited $rc before the kill"; cat "kill-$k.log"; exit 1
  fi
  echo "kill $k after ${delay}s: exit $rc, run '${run:-none yet}', checkpoint $(cat "${run:-.}/checkpoints/LATEST" 2>/dev/null || echo none)"
done
if [ -z "$run" ]; then
  "$qgml" train "$config" "${settings[@]}" --output.directory runs >final.log 2>&1 ||
    { echo "FAIL: the final run failed"; cat final.log; exit 1; }
  run=$(ls -d runs/*/)
else
  "$qgml" train --resume "$run" --kokkos-disable-warnings >final.log 2>&1 ||
    { echo "FAIL: the final resume of $run was refused or failed"; cat final.log; exit 1; }
fi

fail=0
cmp "$ref/final_matrices.npy" "$run/final_matrices.npy" ||
  { echo "FAIL: final matrices differ from the uninterrupted run's"; fail=1; }
ref_ck="$ref/checkpoints/$(cat "$ref/checkpoints/LATEST")" run_ck="$run/checkpoints/$(cat "$run/checkpoints/LATEST")"
for f in matrices.npy adam_m.npy adam_v.npy; do
  cmp "$ref_ck/$f" "$run_ck/$f" || { echo "FAIL: last checkpoint's $f differs"; fail=1; }
done
# The losses per epoch (first 5 columns: epoch, total, reconstruction, fluctuation, penalty; the rest are
# timings).
if ! diff <(cut -d, -f1-5 "$ref/history.csv") <(cut -d, -f1-5 "$run/history.csv") >history.diff; then
  echo "FAIL: the history's losses differ"; head -n 20 history.diff; fail=1
fi
[ "$fail" -eq 0 ] || exit 1
echo "ok: $kills kills (seed $seed), resumed run identical to the uninterrupted one"
