#!/usr/bin/env bash
# killed_rank.sh WORKDIR QGML CONFIG
# SIGKILL to one rank in the middle of a 3-rank run: the job ends (non-zero) instead of hanging, the
# last checkpoint is complete, and --resume on 2 ranks finishes the run with every epoch once.
set -u
work=$1 qgml=$2 config=$3
read -r -a mpiexec <<<"${QGML_MPIEXEC:?}"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
"${mpiexec[@]}" 3 "$qgml" train "$config" --training.epochs 100000 --training.early_stop 0 --training.checkpoint_every 5 \
  --data.points 3000 --output.directory runs --output.plots false --kokkos-disable-warnings >train.log 2>&1 &
job=$!
for _ in $(seq 300); do
  sleep 0.1
  [ -f runs/*/checkpoints/LATEST ] 2>/dev/null && break
done
sleep 1
# one of the ranks (not mpirun itself): a qgml process whose parent is the launcher
victim=$(pgrep -f "$qgml train" | while read -r p; do [ "$p" != "$job" ] && echo "$p"; done | tail -n 1)
[ -n "$victim" ] || { echo "FAIL: no rank process found"; cat train.log; exit 1; }
kill -KILL "$victim"
for _ in $(seq 600); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$job" 2>/dev/null; then
  echo "FAIL: the job still runs 60 s after a rank was killed"; pkill -KILL -f "$qgml train"; exit 1
fi
wait "$job"
rc=$?
[ "$rc" -ne 0 ] || { echo "FAIL: the job exited 0 after a rank was killed"; exit 1; }
run=$(ls -d runs/*/ | head -n 1)
latest=$(cat "$run/checkpoints/LATEST")
[ -d "$run/checkpoints/$latest" ] || { echo "FAIL: LATEST names a missing checkpoint '$latest'"; exit 1; }
done_epochs=${latest#epoch-}
done_epochs=$((10#$done_epochs))
[ "$done_epochs" -ge 5 ] || { echo "FAIL: checkpoint at epoch $done_epochs"; exit 1; }
target=$((done_epochs + 4))
"${mpiexec[@]}" 2 "$qgml" train --resume "$run" --training.epochs "$target" --output.plots false \
  --kokkos-disable-warnings >resume.log 2>&1 || { echo "FAIL: resume on 2 ranks"; cat resume.log; exit 1; }
epochs=$(tail -n +2 "$run/history.csv" | cut -d, -f1 | tr '\n' ' ')
[ "$epochs" = "$(seq -s ' ' 1 "$target") " ] || { echo "FAIL: epochs after resume: $epochs"; exit 1; }
echo "ok: rank $victim killed (job exit $rc), checkpoint $latest intact, resumed on 2 ranks to epoch $target"
