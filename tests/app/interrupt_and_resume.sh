#!/usr/bin/env bash
# interrupt_and_resume.sh WORKDIR QGML CONFIG
# SIGINT during training writes a final checkpoint and exits 130; --resume then completes the run,
# and its history has every epoch once.
set -u
work=$1 qgml=$2 config=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export OMP_PROC_BIND=false
"$qgml" train "$config" --training.epochs 100000 --training.early_stop 0 --training.checkpoint_every 0 --output.plots false \
  --output.directory runs --kokkos-disable-warnings >train.log 2>&1 &
pid=$!
for _ in $(seq 100); do
  sleep 0.1
  grep -q "epoch" train.log 2>/dev/null && break
done
sleep 0.5
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 130 ] || { echo "FAIL: exit code $rc after SIGINT, expected 130"; cat train.log; exit 1; }
run=$(ls -d runs/*/ | head -n 1)
[ -f "$run/checkpoints/LATEST" ] || { echo "FAIL: no checkpoint after SIGINT"; ls -R "$run"; exit 1; }
done_epochs=$(tail -n +2 "$run/history.csv" | wc -l)
[ "$done_epochs" -ge 1 ] || { echo "FAIL: no epoch recorded"; exit 1; }
target=$((done_epochs + 3))
"$qgml" train --resume "$run" --training.epochs "$target" --training.early_stop 0 --output.plots false --kokkos-disable-warnings >resume.log 2>&1 ||
  { echo "FAIL: resume failed"; cat resume.log; exit 1; }
lines=$(tail -n +2 "$run/history.csv" | wc -l)
[ "$lines" -eq "$target" ] || { echo "FAIL: history has $lines epochs after resume, expected $target"; exit 1; }
epochs=$(tail -n +2 "$run/history.csv" | cut -d, -f1 | tr '\n' ' ')
expected=$(seq -s ' ' 1 "$target")
[ "$epochs" = "$expected " ] || { echo "FAIL: epochs after resume: $epochs"; exit 1; }
grep -q "estimated intrinsic dimension" resume.log || { echo "FAIL: no dimension estimate after resume"; exit 1; }
echo "ok: interrupted after $done_epochs epochs, resumed to $target"
