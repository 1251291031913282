#!/usr/bin/env bash
# run_hardening.sh CASE WORKDIR QGML CONFIG [SPIN_NPY]
# The training run's side of the hardening issue, one case per call:
#   nonfinite   data of magnitude 1e150: every point fails, training stops at epoch 1 with a message and
#               a non-zero exit, log.txt has the error, the epoch-0 checkpoint stays LATEST; estimate on
#               such data fails instead of printing dimension 0
#   memory      the memory check runs before the data are generated (1e9 points, RLIMIT_AS), with bytes
#   epoch0      a run killed (-9) before its first regular checkpoint resumes from the epoch-0 one and
#               ends byte-identical to an uninterrupted run
#   sigint      SIGINT acts between batches (within an epoch), keeps the last complete epoch LATEST,
#               exits 130 with a resume line; a second SIGINT exits at once; the resumed run is
#               byte-identical to an uninterrupted one
#   early_stop  a resume of an early-stopped run trains no further epoch (unless more are asked for)
#   yaml_path   a data path with \ " : # and spaces is written to config.yaml readably and resumes
#   digits      the final loss is printed with 10 significant digits
set -u
case_=$1 work=$2 qgml=$3 config=$4 spin=${5:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export OMP_PROC_BIND=false
fail() { echo "FAIL ($case_): $*"; for f in train.log resume.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 30 "$f"; }; done; exit 1; }
common=(--output.plots false --output.directory runs --kokkos-disable-warnings)
run_dir() { ls -d runs/*/ 2>/dev/null | head -n 1; }
rows() { tail -n +2 "$1/history.csv" | wc -l; }
# Waits (at most 30 s) until the run directory holds a complete checkpoint (LATEST).
wait_for_checkpoint() {
  for _ in $(seq 600); do
    [ -n "$(run_dir)" ] && [ -f "$(run_dir)/checkpoints/LATEST" ] && return 0
    sleep 0.05
  done
}

case $case_ in
nonfinite)
  awk 'BEGIN { srand(3); for (i = 0; i < 200; ++i) printf "%.6e,%.6e,%.6e\n", (rand()-0.5)*1e150, (rand()-0.5)*1e150, (rand()-0.5)*1e150 }' >huge.csv
  "$qgml" train "$config" --data.file huge.csv --data.standardize false --training.epochs 5 "${common[@]}" >train.log 2>&1
  rc=$?
  [ "$rc" -ne 0 ] || fail "exit 0 although every point failed"
  grep -q "epoch 1: the loss is not finite at any point" train.log || fail "no message naming the epoch"
  grep -q "extreme scale" train.log || fail "no likely cause in the message"
  run=$(run_dir)
  grep -q "error: epoch 1: the loss is not finite" "$run/log.txt" || fail "the fatal error is not in log.txt"
  [ "$(cat "$run/checkpoints/LATEST")" = epoch-000000 ] || fail "LATEST is not the last good checkpoint (epoch 0)"
  [ -n "$spin" ] || exit 0
  "$qgml" estimate --matrices "$spin" --data huge.csv --out est --kokkos-disable-warnings >est.log 2>&1
  rc=$?
  [ "$rc" -ne 0 ] || { cat est.log; fail "estimate exits 0 with no finite point"; }
  grep -q "estimated intrinsic dimension" est.log && { cat est.log; fail "estimate printed a dimension"; }
  grep -q "no point" est.log || { cat est.log; fail "estimate gives no message"; }
  echo "ok: training stopped at epoch 1 with exit $rc, estimate refused"
  ;;
memory)
  start=$(date +%s)
  (
    ulimit -v 6000000
    "$qgml" train "$config" --data.points 1000000000 "${common[@]}" >train.log 2>&1
  )
  rc=$?
  [ "$rc" -ne 0 ] || fail "1e9 points accepted"
  grep -Eq "needs about [0-9.]+ GiB of memory; this machine has [0-9.]+ GiB available \(.*RLIMIT_AS.*; [0-9]+ bytes needed, [0-9]+ bytes available\)" train.log ||
    fail "no memory message with the address-space limit and the bytes"
  [ $(($(date +%s) - start)) -le 20 ] || fail "the check took too long (data generated first?)"
  [ -z "$(run_dir)" ] || fail "a run directory was left behind"
  echo "ok: refused before generating the data"
  ;;
epoch0)
  opts=(--training.checkpoint_every 0 --training.early_stop 0 --analysis.enabled false --data.points 400 --training.batch_size 50)
  "$qgml" train "$config" --training.epochs 6 "${opts[@]}" --output.directory ref --output.plots false \
    --kokkos-disable-warnings >ref.log 2>&1 || { cat ref.log; fail "reference run failed"; }
  "$qgml" train "$config" --training.epochs 1000000 "${opts[@]}" "${common[@]}" >train.log 2>&1 &
  pid=$!
  wait_for_checkpoint
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  run=$(run_dir)
  [ -f "$run/checkpoints/LATEST" ] || fail "no checkpoint before the first epoch"
  killed_at=$(cat "$run/checkpoints/LATEST")
  "$qgml" train --resume "$run" --training.epochs 6 --output.plots false --kokkos-disable-warnings >resume.log 2>&1 ||
    fail "resume failed"
  cmp "$run/final_matrices.npy" ref/*/final_matrices.npy || fail "resumed run differs from the uninterrupted one"
  echo "ok: killed with LATEST = $killed_at, resumed byte-identical"
  ;;
sigint)
  # Long epochs of many batches (~3000 batches, 1-4 s each; the signal comes ~0.2 s into epoch 1).
  opts=(--data.points 300000 --training.batch_size 100 --training.checkpoint_every 1 --training.early_stop 0
    --analysis.enabled false --model.N 8)
  "$qgml" train "$config" --training.epochs 3 "${opts[@]}" "${common[@]}" >train.log 2>&1 &
  pid=$!
  wait_for_checkpoint
  sleep 0.2
  t0=$(date +%s%N)
  kill -INT "$pid"
  wait "$pid"
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  [ "$rc" -eq 130 ] || fail "exit code $rc after SIGINT, expected 130"
  run=$(run_dir)
  latest=$(cat "$run/checkpoints/LATEST")
  done_epochs=$(rows "$run")
  [ "$latest" = "$(printf 'epoch-%06d' "$done_epochs")" ] || fail "LATEST $latest is not the last complete epoch ($done_epochs)"
  # SIGINT fell ~0.2 s into epoch 1 (of 1-4 s): the epoch is abandoned at the next batch.
  [ "$done_epochs" -eq 0 ] || fail "SIGINT in epoch 1 waited for the end of the epoch ($done_epochs complete)"
  grep -q "qgml train --resume" train.log || fail "no line saying how to resume"
  "$qgml" train --resume "$run" --training.epochs 2 --output.plots false --kokkos-disable-warnings >resume.log 2>&1 ||
    fail "resume failed"
  "$qgml" train "$config" --training.epochs 2 "${opts[@]}" --output.directory ref --output.plots false \
    --kokkos-disable-warnings >ref.log 2>&1 || fail "reference run failed"
  cmp "$run/final_matrices.npy" ref/*/final_matrices.npy || fail "resumed run differs from the uninterrupted one"
  # The epoch the signal fell in was abandoned at a batch boundary, long before its end.
  epoch_ms=$(awk -F, 'NR == 2 { printf "%d", $(NF - 1) * 1000 }' "$run/history.csv")
  [ "$ms" -lt "$epoch_ms" ] || fail "SIGINT took $ms ms to act, an epoch takes $epoch_ms ms"
  echo "stopped ${ms} ms after SIGINT (after $done_epochs complete epochs; an epoch takes $epoch_ms ms)"
  # A run too fast for the two-SIGINT case (GPU batches): it must still have exited with 130 and left a
  # complete LATEST checkpoint.
  sigint_case_not_exercised() {
    [ "$rc" -eq 130 ] || fail "exit code $rc after SIGINT, expected 130"
    latest=$(cat "$(run_dir)/checkpoints/LATEST")
    [ -f "$(run_dir)/checkpoints/$latest/state.json" ] || fail "LATEST ($latest) is not complete"
    echo "$1: the second-SIGINT case is not exercised here"
    echo "ok (sigint)"
    exit 0
  }
  # Two SIGINTs within one long batch (the full data set): the first waits for the batch to end, the
  # second exits at once; the last complete checkpoint stays LATEST. The batch takes ~2.5 s on 2 cores
  # of a 2026 CPU; the SIGINTs come ~0.2 s and ~0.3 s into it. (With 60000 points the batch took 0.64 s
  # and the two SIGINTs 0.3 s apart: on a loaded machine the second one came after the batch had ended.)
  rm -rf runs
  "$qgml" train "$config" --training.epochs 3 "${opts[@]}" --data.points 240000 --training.batch_size 0 --model.N 32 "${common[@]}" \
    >train.log 2>&1 &
  pid=$!
  wait_for_checkpoint
  sleep 0.2
  t_first=$(date +%s%N)
  kill -INT "$pid"
  sleep 0.1
  if ! kill -0 "$pid" 2>/dev/null; then
    # A batch shorter than 0.1 s (a GPU): the first SIGINT already stopped the run at the next batch; the
    # second-SIGINT case needs a longer batch and is exercised on CPU backends.
    wait "$pid"
    rc=$?
    sigint_case_not_exercised "the first SIGINT stopped the run within 0.3 s (short batches)"
  fi
  t0=$(date +%s%N)
  kill -INT "$pid"
  wait "$pid"
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  [ "$rc" -eq 130 ] || fail "exit code $rc after two SIGINTs, expected 130"
  if ! grep -q "second interrupt" train.log && grep -q "^epoch 3/3" train.log; then
    # Every epoch (one batch each) ended before the first SIGINT (a GPU: ~60 ms per epoch here).
    sigint_case_not_exercised "the run ended its epochs before the SIGINTs (short batches)"
  fi
  apart_ms=$(((t0 - t_first) / 1000000))
  first_epoch_ms=$(awk -F, 'NR == 2 { printf "%d", $(NF - 1) * 1000 }' "$(run_dir)/history.csv")
  if ! grep -q "second interrupt" train.log && [ -n "$first_epoch_ms" ] && [ "$first_epoch_ms" -lt 500 ]; then
    # The batch (one per epoch) took under 0.5 s (a GPU: 0.24 s on an H100): the first SIGINT could
    # stop the run at a batch end before the second one came. The case needs a longer batch.
    sigint_case_not_exercised "an epoch took $first_epoch_ms ms, too short for two SIGINTs 0.1 s apart within one batch"
  fi
  grep -q "second interrupt" train.log ||
    fail "the second SIGINT was not acted on (it came $apart_ms ms after the first; epoch times in s: $(tail -n +2 "$(run_dir)/history.csv" | awk -F, '{ printf "%s ", $(NF - 1) }'))"
  [ "$ms" -lt 1000 ] || fail "the second SIGINT took $ms ms to exit"
  run=$(run_dir)
  latest=$(cat "$run/checkpoints/LATEST")
  [ -f "$run/checkpoints/$latest/state.json" ] || fail "LATEST ($latest) is not complete"
  echo "ok: SIGINT within an epoch, resumed identical; second SIGINT exited at once"
  ;;
early_stop)
  "$qgml" train "$config" --training.epochs 50 --training.early_stop 0.5 --training.early_stop_window 1 \
    --analysis.enabled false "${common[@]}" >train.log 2>&1 || fail "training failed"
  run=$(run_dir)
  n=$(rows "$run")
  [ "$n" -lt 50 ] || fail "did not stop early"
  "$qgml" train --resume "$run" --output.plots false --kokkos-disable-warnings >resume.log 2>&1 || fail "resume failed"
  [ "$(rows "$run")" -eq "$n" ] || fail "a resume of an early-stopped run trained $(($(rows "$run") - n)) more epochs"
  grep -q "already stopped early at epoch $n" resume.log || fail "no message that the run already stopped"
  "$qgml" train --resume "$run" --training.epochs $((n + 3)) --training.early_stop 0 --output.plots false \
    --analysis.enabled false --kokkos-disable-warnings >resume.log 2>&1 || fail "resume with more epochs failed"
  [ "$(rows "$run")" -eq $((n + 3)) ] || fail "more epochs asked for, $(rows "$run") trained"
  echo "ok: stopped early at $n, resume trained nothing, then 3 more on request"
  ;;
yaml_path)
  dir='we"ird\dir: #x'
  mkdir -p " $dir"
  awk 'BEGIN { srand(5); for (i = 0; i < 200; ++i) { z = 2*rand()-1; p = 6.2831853*rand(); r = sqrt(1-z*z); printf "%.9f,%.9f,%.9f\n", r*cos(p), r*sin(p), z } }' >" $dir/pts.csv"
  "$qgml" train "$config" --data.file "$PWD/ $dir/pts.csv" --training.epochs 2 --analysis.enabled false \
    "${common[@]}" >train.log 2>&1 || fail "training failed"
  run=$(run_dir)
  "$qgml" train --resume "$run" --training.epochs 3 --analysis.enabled false --output.plots false \
    --kokkos-disable-warnings >resume.log 2>&1 || fail "resume of a run whose data path has \\ and \" failed"
  [ "$(rows "$run")" -eq 3 ] || fail "resume trained $(rows "$run") epochs, expected 3"
  echo "ok: a data path with \\ \" : # and a leading space round-trips through config.yaml"
  ;;
digits)
  "$qgml" train "$config" --training.epochs 3 --analysis.enabled false "${common[@]}" >train.log 2>&1 || fail "training failed"
  grep -Eq "final loss -?[0-9]\.[0-9]{8,}" train.log || fail "the final loss has fewer than 10 significant digits"
  grep -Eq "loss -?[0-9]\.[0-9]{8,}" "$(run_dir)/log.txt" || fail "log.txt's epoch lines have fewer than 10 digits"
  echo "ok: $(grep 'final loss' train.log)"
  ;;
*)
  echo "unknown case $case_"
  exit 2
  ;;
esac
