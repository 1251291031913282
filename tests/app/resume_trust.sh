#!/usr/bin/env bash
# resume_trust.sh CASE WORKDIR QGML CONFIG
# What qgml train --resume may trust (hardening issue), one case per call:
#   fingerprint  other data (same size), another generator seed or a changed setting are refused with a
#                message listing them; --resume-with-changes accepts them, records them (log.txt,
#                changes.json) and rewrites config.yaml; a relative data path is stored absolute and the
#                run resumes from another directory
#   corrupt      a flipped byte in the Adam state, an epoch of -3 and LATEST naming a checkpoint outside
#                the run are refused with a message naming the file and a non-zero exit
#   lock         a second --resume of a run being trained exits at once naming the run and the pid
#   warm         a warm-started run resumed from a checkpoint ends byte-identical to an uninterrupted one
#   nocheckpoint a run directory with config.yaml but no checkpoint (stopped before its epoch-0
#                checkpoint) resumes from epoch 0 with its own config.yaml, byte-identical to an
#                uninterrupted run; a changed setting is refused there too, a lost LATEST with later
#                checkpoints is still refused
set -u
case_=$1 work=$2 qgml=$3 config=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export OMP_PROC_BIND=false
fail() { echo "FAIL ($case_): $*"; for f in train.log resume.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 30 "$f"; }; done; exit 1; }
common=(--output.plots false --kokkos-disable-warnings)
small=(--data.points 200 --training.batch_size 50 --analysis.enabled false --training.early_stop 0)
run_dir() { ls -d runs/*/ 2>/dev/null | head -n 1; }
rows() { tail -n +2 "$1/history.csv" | wc -l; }
sphere() { awk -v s="$2" 'BEGIN { srand(s); for (i = 0; i < 200; ++i) { z = 2*rand()-1; p = 6.2831853*rand(); r = sqrt(1-z*z); printf "%.9f,%.9f,%.9f\n", r*cos(p), r*sin(p), z } }' >"$1"; }
resume() { "$qgml" train --resume "$@" "${common[@]}" >resume.log 2>&1; }

case $case_ in
fingerprint)
  mkdir -p data
  sphere data/pts.csv 5
  (cd data && "$qgml" train pts.csv --model.N 3 --training.epochs 2 "${small[@]}" --output.directory ../runs \
    "${common[@]}") >train.log 2>&1 || fail "training failed"
  run=$(run_dir)
  grep -q "file: \"$PWD/data/pts.csv\"" "$run/config.yaml" || fail "the relative data path is not stored absolute"
  resume "$run" --training.epochs 3 || fail "a resume from another directory failed"
  sphere data/pts.csv 6  # other points, same size
  resume "$run" --training.epochs 4 && fail "other data of the same size accepted"
  grep -q "the run differs from its checkpoint" resume.log || fail "no message for other data"
  grep -q "data: the points differ" resume.log || fail "the message does not name the data"
  resume "$run" --training.epochs 4 --training.lr 0.02 && fail "a changed learning rate accepted"
  grep -q "training.lr: '0.01' in the checkpoint, '0.02' now" resume.log || fail "the message does not name training.lr"
  grep -q -- "--resume-with-changes data,training.lr" resume.log || fail "the message does not say how to accept"
  [ "$(rows "$run")" -eq 3 ] || fail "a refused resume trained"
  resume "$run" --training.epochs 4 --training.lr 0.02 --resume-with-changes data,training.lr ||
    fail "listed changes refused"
  [ "$(rows "$run")" -eq 4 ] || fail "an accepted resume did not train"
  grep -q "resume with changes (accepted) at epoch 3: training.lr" "$run/log.txt" || fail "no change in log.txt"
  grep -q '"key": "training.lr"' "$run/changes.json" || fail "no change in changes.json"
  grep -q '"key": "data"' "$run/changes.json" || fail "the data change is not in changes.json"
  grep -Eq '^  lr: 0.02 ' "$run/config.yaml" || fail "config.yaml does not hold what now runs"
  resume "$run" --training.epochs 5 || fail "a resume after accepted changes failed"
  # A generated run: another generator seed is other data.
  "$qgml" train "$config" --training.epochs 2 "${small[@]}" --output.directory gen "${common[@]}" >train.log 2>&1 ||
    fail "generated training failed"
  gen=$(ls -d gen/*/ | head -n 1)
  resume "$gen" --training.epochs 3 --data.seed 43 && fail "another generator seed accepted"
  grep -q "data.seed: '42' in the checkpoint, '43' now" resume.log || fail "the message does not name data.seed"
  resume "$gen" --training.epochs 3 --data.seed 43 --resume-with-changes all || fail "all refused"
  echo "ok: other data and settings refused, accepted when listed and recorded"
  ;;
corrupt)
  "$qgml" train "$config" --training.epochs 3 --training.checkpoint_every 1 "${small[@]}" --output.directory runs \
    "${common[@]}" >train.log 2>&1 || fail "training failed"
  run=$(run_dir)
  ck="$run/checkpoints"
  latest=$(cat "$ck/LATEST")
  cp -r "$run" pristine
  # A flipped byte in the Adam state.
  f="$ck/$latest/adam_m.npy"
  size=$(stat -c %s "$f")
  printf '\x5a' | dd of="$f" bs=1 seek=$((size - 3)) conv=notrunc status=none
  resume "$run" --training.epochs 5 && fail "a flipped byte in adam_m.npy accepted"
  grep -q "adam_m.npy': checksum mismatch" resume.log || fail "no message naming adam_m.npy"
  grep -q "nan" "$run/history.csv" && fail "trained to NaN"
  # An epoch of -3.
  rm -rf "$run" && cp -r pristine "$run"
  sed -i 's/"epoch": [0-9]*/"epoch": -3/' "$ck/$latest/state.json"
  resume "$run" --training.epochs 5 && fail "an epoch of -3 accepted"
  grep -q "$latest/state.json" resume.log || fail "no message naming state.json"
  # LATEST naming a checkpoint of another run.
  rm -rf "$run" && cp -r pristine "$run"
  echo "../../../pristine/checkpoints/$latest" >"$ck/LATEST"
  resume "$run" --training.epochs 5 && fail "LATEST outside the run accepted"
  grep -q "checkpoints/LATEST': names" resume.log || fail "no message naming LATEST"
  [ "$(rows "$run")" -eq 3 ] || fail "a refused resume trained"
  echo "ok: damaged checkpoints refused with the file named"
  ;;
lock)
  "$qgml" train "$config" --training.epochs 1 "${small[@]}" --output.directory runs "${common[@]}" >train.log 2>&1 ||
    fail "training failed"
  run=$(run_dir)
  "$qgml" train --resume "$run" --training.epochs 100000000 "${common[@]}" >first.log 2>&1 &
  first=$!
  for _ in $(seq 600); do
    grep -q "resuming" "$run/log.txt" 2>/dev/null && [ "$(rows "$run")" -ge 1 ] && grep -q "$first" "$run/lock" 2>/dev/null && break
    sleep 0.05
  done
  start=$(date +%s)
  resume "$run" --training.epochs 100000000
  rc=$?
  kill -INT "$first"
  wait "$first"
  [ "$rc" -ne 0 ] || fail "a second resume of a running run exited 0"
  [ $(($(date +%s) - start)) -le 20 ] || fail "the second resume did not exit at once"
  grep -q "run directory '${run%/}/\?' is in use: another qgml process (pid $first)" resume.log ||
    fail "the message does not name the run and the holder's pid $first"
  resume "$run" --training.epochs "$(($(rows "$run") + 1))" || fail "resume after the first ended failed"
  echo "ok: the second resume refused while pid $first trained"
  ;;
warm)
  opts=(--training.warm_start true --training.checkpoint_every 1 --training.schedule constant "${small[@]}")
  "$qgml" train "$config" --training.epochs 6 "${opts[@]}" --output.directory ref "${common[@]}" >ref.log 2>&1 ||
    { cat ref.log; fail "reference run failed"; }
  "$qgml" train "$config" --training.epochs 3 "${opts[@]}" --output.directory runs "${common[@]}" >train.log 2>&1 ||
    fail "training failed"
  run=$(run_dir)
  [ -f "$run/checkpoints/epoch-000003/warm_start.npy" ] || fail "the warm-start basis is not checkpointed"
  resume "$run" --training.epochs 6 || fail "resume failed"
  cmp "$run/final_matrices.npy" ref/*/final_matrices.npy || fail "resumed warm-started run differs from the uninterrupted one"
  echo "ok: warm-started run resumed byte-identical"
  ;;
nocheckpoint)
  opts=(--training.epochs 3 --training.checkpoint_every 1 "${small[@]}")
  "$qgml" train "$config" "${opts[@]}" --output.directory ref "${common[@]}" >ref.log 2>&1 ||
    { cat ref.log; fail "reference run failed"; }
  cp -r ref runs
  run=$(run_dir)
  # The state of a run stopped before its epoch-0 checkpoint: config.yaml, an epoch-0 checkpoint being
  # written, nothing else.
  find "$run" -mindepth 1 -maxdepth 1 ! -name config.yaml -exec rm -rf {} +
  mkdir -p "$run/checkpoints/epoch-000000.tmp"
  resume "$run" --training.lr 0.02 && fail "a changed setting accepted on a run without checkpoint"
  grep -q "training.lr: '0.01' in config.yaml, '0.02' now" resume.log || fail "the message does not name training.lr"
  [ -e "$run/history.csv" ] && fail "a refused resume trained"
  resume "$run" || fail "a run without checkpoint was refused"
  grep -q "resume: ${run%/}/\\? has no checkpoint yet; starting it from epoch 0" resume.log ||
    fail "no line saying the run starts from epoch 0"
  [ "$(rows "$run")" -eq 3 ] || fail "the resumed run did not train 3 epochs"
  cmp "$run/final_matrices.npy" ref/*/final_matrices.npy || fail "the run started by --resume differs from the uninterrupted one"
  # Later checkpoints without LATEST are damage, not a fresh run.
  rm "$run/checkpoints/LATEST"
  resume "$run" --training.epochs 4 && fail "a run whose LATEST is lost restarted"
  [ "$(rows "$run")" -eq 3 ] || fail "a refused resume trained"
  echo "ok: a run without checkpoint resumed from epoch 0, identical to the uninterrupted one"
  ;;
*)
  echo "unknown case $case_"
  exit 2
  ;;
esac
