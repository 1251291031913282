#!/usr/bin/env bash
# checkpoint_write_failure.sh WORKDIR QGML CONFIG
# A checkpoint whose files cannot be written (here: the file-size limit, EFBIG, standing in for a full
# disk) makes the run stop with an error naming the file, and leaves the previous checkpoint complete
# and in force: LATEST still names it and --resume continues from it.
set -u
work=$1 qgml=$2 config=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export OMP_PROC_BIND=false
# history.csv grows by one line per epoch: with checkpoints every epoch, some checkpoint's history
# crosses the 4 KiB file-size limit and its write fails.
(
  trap '' XFSZ
  ulimit -f 4
  "$qgml" train "$config" --training.epochs 200 --training.checkpoint_every 1 --output.plots false \
    --analysis.enabled false --output.directory runs --kokkos-disable-warnings >train.log 2>&1
)
rc=$?
[ "$rc" -ne 0 ] || { echo "FAIL: the run succeeded although a checkpoint could not be written"; exit 1; }
grep -Eq "cannot write .*(history|matrices|adam|state).*File too large" train.log ||
  { echo "FAIL: no error naming the file"; cat train.log; exit 1; }
run=$(ls -d runs/*/ | head -n 1)
latest=$(cat "$run/checkpoints/LATEST")
[ -f "$run/checkpoints/$latest/state.json" ] && [ -f "$run/checkpoints/$latest/history.csv" ] ||
  { echo "FAIL: LATEST ($latest) does not name a complete checkpoint"; ls -R "$run/checkpoints"; exit 1; }
ls "$run/checkpoints" | grep -q '\.tmp' && { echo "FAIL: a partial checkpoint was left behind"; exit 1; }
epoch=${latest#epoch-}
epoch=$((10#$epoch))
"$qgml" train --resume "$run" --training.epochs $((epoch + 2)) --output.plots false --analysis.enabled false \
  --kokkos-disable-warnings >resume.log 2>&1 || { echo "FAIL: resume failed"; cat resume.log; exit 1; }
grep -q "resuming .* at epoch $epoch " resume.log || { echo "FAIL: did not resume at epoch $epoch"; cat resume.log; exit 1; }
echo "ok: write failed after checkpoint $latest, which stayed in force; resumed from epoch $epoch"
