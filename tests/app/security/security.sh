#!/usr/bin/env bash
# security.sh CASE WORKDIR QGML CONFIG
# What a hostile file name or a planted symbolic link can make qgml do, one case per call:
#   shell        a data file named p';touch PWNED;'.csv: the plot step starts python with an argument
#                vector, so no shell parses the run directory's name (a stub matplotlib on PYTHONPATH
#                makes the plot step run where matplotlib is not installed)
#   output_name  output.name '..', '.', 'a/b', '/abs', '../x': refused naming the setting, nothing
#                created outside output.directory
#   probe        a link at the writability probe's name (.qgml-write-test-<pid>) is not written through
#   temporary    a link at an atomic write's temporary name (<path>.tmp.<pid>) is not written through
#   lock         a link at a run's lock: --resume refused, the link's target unchanged
#   log          a link at a run's log.txt: --resume refused, the link's target unchanged
#   checkpoints  the run's checkpoints directory replaced by a link: --resume refused, the epoch-*
#                directories at the link's target not deleted
#   sample       a link in a sample directory: qgml sample --resume refused, the target unchanged
#   csv_header   a first line with NA among numbers is an error naming line 1, not a dropped header; a
#                real header is skipped and the log says so
#   fifo         a FIFO as data (CSV or NPY) is refused at once, not waited on
#   scale        a circle scaled by 1e200 or 1e-200 gives the unscaled circle's estimate; identical points
#                are refused naming the file
#   epochs0      training.epochs 0 says that no epoch ran, never "final loss 0"
#   eval_nonfinite  qgml eval with a non-finite loss exits non-zero with a message
#   resume_changes  --resume-with-changes model.N (a change that cannot apply to the checkpoint) is
#                refused with config.yaml and changes.json byte-identical; a plain --resume still works
#   target_both  data.target_column beside data.target_file is refused naming both (not ignored); the
#                target file alone trains
#   npy_repeated_key  an NPY header giving 'shape' (or 'descr') twice is refused naming the key (numpy
#                keeps the last value), one with a key numpy refuses ('evil') too; the same file with each
#                key once is read
#   sample_fewer_steps  qgml sample --resume with --steps below the steps already done is refused with a
#                message, sample.json and the draws unchanged (no acceptance above 1); the same --steps
#                reports an acceptance of at most 1
#   sample_lock  a second qgml sample into the --out of a running one (new or --resume) is refused
#                naming the sample directory and the holder's pid; once the first has ended the directory
#                can be used again
#   sample_retrained  qgml sample --resume after the run was retrained (its matrices changed) or its
#                standardisation changed is refused naming the sample directory, nothing written; a sample
#                directory that records no model fingerprint (an older qgml's) is refused too
#   target_scale  regression targets (and features) scaled by 1e200 give a finite target_scale in
#                supervised.json (not null), finite metrics, and qgml predict the unscaled run's predictions
#                times 1e200
#   stale_temporaries  --resume of a run (or a sample directory) removes exactly the temporaries of an
#                atomic write whose process has ended (<name>.tmp.<pid>[.<n>], regular files, in the
#                directory and its checkpoints); near-misses, a live pid's, a directory, files elsewhere
#                stay; a link at such a name refuses the resume and is not removed
#   analysis_preflight  data with D = 1000 coordinates, whose dimension analysis needs more team scratch
#                per team (the packed kernel's D x D metrics) than Kokkos offers, is refused before the first
#                epoch with a message naming D, N, the need and the settings that fit; no run directory is
#                left; with analysis.enabled false (one of those settings) the same data train
#   estimate_preflight  qgml estimate on the same D = 1000 data (the matrices of a run without the
#                analysis) is refused by the same check before the analysis, naming --kernel, N, D and the
#                need, with no output directory; with --kernel team (what the message proposes) it runs
#   control_names  a data file whose name holds a newline and an escape gives a run directory without
#                them; output.name with a control character is refused; a CSV cell with a NUL or an escape
#                byte is shown as \x00 / \x1b in a complete message (the NUL ended it)
#   tune_json_directory  qgml tune --json naming a directory is refused before the trials, not after them;
#                qgml generate --out naming a directory is refused naming it, nothing written
set -u
case_=$1 work=$2 qgml=$3 config=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export OMP_PROC_BIND=false
fail() { echo "FAIL ($case_): $*"; for f in *.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done; exit 1; }
quick=(--data.points 200 --training.epochs 2 --training.batch_size 100 --analysis.enabled false --output.plots false
  --kokkos-disable-warnings)
run_dir() { ls -d runs/*/ 2>/dev/null | head -n 1; }
# A finished run in runs/ to resume from.
train_once() {
  "$qgml" train "$config" "${quick[@]}" --output.directory runs >train.log 2>&1 || fail "the first run failed"
  run=$(run_dir)
  run=${run%/}
}
# A file outside every directory qgml is given, which no case may change.
outside() {
  mkdir -p outside
  echo "outside, unchanged" >outside/target
}
unchanged() { [ "$(cat outside/target)" = "outside, unchanged" ] || fail "the file outside was written: $(head -c 200 outside/target)"; }

case $case_ in
shell)
  awk 'BEGIN { for (i = 0; i < 60; ++i) printf "%.6f,%.6f\n", cos(i / 9.549), sin(i / 9.549) }' >"p';touch PWNED;'.csv"
  mkdir -p stub/matplotlib && : >stub/matplotlib/__init__.py
  PYTHONPATH=$PWD/stub "$qgml" train "p';touch PWNED;'.csv" --training.epochs 2 --model.N 4 --output.directory runs \
    --kokkos-disable-warnings >train.log 2>&1
  [ -e PWNED ] && fail "the data file's name was run by a shell (PWNED created)"
  find . -name PWNED | grep -q . && fail "PWNED created somewhere"
  [ -n "$(run_dir)" ] || fail "the run did not start"
  echo "ok: no shell parsed the run directory's name"
  ;;
output_name)
  mkdir -p runs
  for name in .. . a/b /abs/x ../escape "a/../.."; do
    "$qgml" train "$config" "${quick[@]}" --output.directory runs/inner --output.name "$name" >train.log 2>&1
    rc=$?
    [ "$rc" -ne 0 ] || fail "output.name '$name' accepted"
    grep -qF "output.name = '$name': expected a single directory name" train.log ||
      fail "output.name '$name': no message naming the setting"
  done
  [ -z "$(ls -A runs)" ] || fail "something was created: $(ls -AR runs)"
  ls -d ./*_2* ../*_2* /abs 2>/dev/null | grep -q . && fail "a run directory escaped output.directory"
  echo "ok: every name with a path refused"
  ;;
probe)
  outside
  mkdir -p runs
  # exec keeps the shell's pid: the probe's name is known before qgml starts.
  bash -c 'ln -s "$PWD/outside/target" "runs/.qgml-write-test-$$" && exec "$@"' _ \
    "$qgml" train "$config" "${quick[@]}" --output.directory runs >train.log 2>&1 || fail "training failed"
  unchanged
  [ -L "$(ls -d runs/.qgml-write-test-* | head -n 1)" ] || fail "the planted link was removed or replaced"
  echo "ok: the probe passed over the planted link"
  ;;
temporary)
  outside
  bash -c 'ln -s "$PWD/outside/target" "points.csv.tmp.$$" && exec "$@"' _ \
    "$qgml" generate --data.generator circle --data.points 50 --out points.csv --kokkos-disable-warnings \
    >generate.log 2>&1 || fail "qgml generate failed"
  unchanged
  [ "$(wc -l <points.csv)" = 51 ] || fail "points.csv not written"
  [ -L "$(ls points.csv.tmp.* | head -n 1)" ] || fail "the planted link was removed or replaced"
  echo "ok: the atomic write passed over the planted link"
  ;;
lock | log)
  outside
  train_once
  name=$([ "$case_" = lock ] && echo lock || echo log.txt)
  rm -f "$run/$name"
  ln -s "$PWD/outside/target" "$run/$name"
  "$qgml" train --resume "$run" --training.epochs 4 --output.plots false --kokkos-disable-warnings >resume.log 2>&1
  rc=$?
  [ "$rc" -ne 0 ] || fail "resumed through a link at $name"
  grep -q "'$name' is a symbolic link" resume.log || fail "no message naming the link"
  unchanged
  echo "ok: a link at $name refused"
  ;;
checkpoints)
  train_once
  mkdir -p outside/keep
  for e in 000001 000002 000003; do mkdir -p "outside/keep/epoch-$e" && echo data >"outside/keep/epoch-$e/matrices.npy"; done
  cp -r "$run/checkpoints/." outside/keep/
  rm -rf "$run/checkpoints"
  ln -s "$PWD/outside/keep" "$run/checkpoints"
  before=$(cd outside/keep && find . | sort)
  "$qgml" train --resume "$run" --training.epochs 6 --training.checkpoint_every 1 --output.plots false \
    --kokkos-disable-warnings >resume.log 2>&1
  rc=$?
  [ "$rc" -ne 0 ] || fail "resumed through a linked checkpoints directory"
  grep -q "'checkpoints' is a symbolic link" resume.log || fail "no message naming the link"
  [ "$(cd outside/keep && find . | sort)" = "$before" ] || fail "the link's target was changed"
  echo "ok: a linked checkpoints directory refused, nothing deleted at its target"
  ;;
sample)
  outside
  train_once
  "$qgml" sample "$run" --chains 4 --steps 20 --warmup 10 --out samples --kokkos-disable-warnings >sample.log 2>&1 ||
    fail "qgml sample failed"
  ln -s "$PWD/outside/target" samples/extra
  "$qgml" sample --resume samples --steps 40 --kokkos-disable-warnings >resume.log 2>&1
  rc=$?
  [ "$rc" -ne 0 ] || fail "resumed a sample directory holding a link"
  grep -q "'extra' is a symbolic link" resume.log || fail "no message naming the link"
  unchanged
  echo "ok: a link in a sample directory refused"
  ;;
csv_header)
  printf '1,NA,3\n4,5,6\n7,8,9\n' >na.csv
  "$qgml" train na.csv --training.epochs 1 --output.directory runs --kokkos-disable-warnings >train.log 2>&1
  [ $? -ne 0 ] || fail "a first line with NA was dropped as a header"
  grep -q "na.csv': line 1, column 2: 'NA' is not a number" train.log || fail "no error naming line 1"
  awk 'BEGIN { print "x,y"; for (i = 0; i < 60; ++i) printf "%.6f,%.6f\n", cos(i / 9.549), sin(i / 9.549) }' >named.csv
  "$qgml" train named.csv --training.epochs 1 --model.N 4 --analysis.enabled false --output.plots false \
    --output.directory runs --kokkos-disable-warnings >header.log 2>&1 || fail "a CSV with a header failed"
  grep -q "data.file: line 1 is a header (x,y; no cell is a number), skipped" header.log ||
    fail "the skipped header is not said"
  grep -q "line 1 is a header" "$(run_dir)/log.txt" || fail "log.txt does not say the header was skipped"
  echo "ok: NA on line 1 refused, a header skipped and logged"
  ;;
fifo)
  mkfifo points.csv points.npy
  for f in points.csv points.npy; do
    timeout 20 "$qgml" train "$f" --training.epochs 1 --output.directory runs --kokkos-disable-warnings >train.log 2>&1
    rc=$?
    [ "$rc" -ne 124 ] || fail "$f: qgml waited on the FIFO"
    [ "$rc" -ne 0 ] || fail "$f: a FIFO accepted"
    grep -q "is not a regular file (a FIFO)" train.log || fail "$f: no message naming the FIFO"
  done
  echo "ok: FIFOs refused at once"
  ;;
scale)
  awk 'BEGIN { srand(4); for (i = 0; i < 300; ++i) { p = 6.2831853 * rand(); printf "%.17g,%.17g\n", 3 + cos(p), 1 + sin(p) } }' >base.csv
  awk -F, '{ printf "%.17g,%.17g\n", $1 * 1e200, $2 * 1e200 }' base.csv >big.csv
  awk -F, '{ printf "%.17g,%.17g\n", $1 * 1e-200, $2 * 1e-200 }' base.csv >small.csv
  opts=(--training.epochs 40 --model.N 8 --output.plots false --output.directory runs --kokkos-disable-warnings)
  for f in base big small; do
    "$qgml" train $f.csv "${opts[@]}" >$f.log 2>&1 || fail "$f.csv: training failed"
    grep -q "automatic: data.standardize = true" $f.log || fail "$f.csv: not standardised"
  done
  for f in big small; do
    [ "$(grep '^estimated intrinsic dimension' $f.log)" = "$(grep '^estimated intrinsic dimension' base.log)" ] ||
      fail "$f.csv: another estimate than the unscaled data's"
    [ "$(grep '^final loss' $f.log | cut -d' ' -f3)" = "$(grep '^final loss' base.log | cut -d' ' -f3)" ] ||
      fail "$f.csv: another final loss than the unscaled data's"
  done
  for i in 1 2 3; do echo "5e-300,7e-300"; done >same.csv
  "$qgml" train same.csv "${opts[@]}" >same.log 2>&1 && fail "identical points accepted"
  grep -q "data file '.*/same.csv': standardisation: all points are identical" same.log ||
    fail "identical points: no message naming the file: $(tail -n 1 same.log)"
  echo "ok: 1e200 and 1e-200 give the unscaled estimate and loss, identical points refused"
  ;;
epochs0)
  "$qgml" train "$config" "${quick[@]}" --training.epochs 0 --output.directory runs >train.log 2>&1 ||
    fail "training.epochs 0 failed"
  grep -q "^final loss" train.log && fail "a final loss printed although no epoch ran"
  grep -q "no training: training.epochs = 0, no epoch ran" train.log || fail "no message that no epoch ran"
  echo "ok: epochs 0 says that no epoch ran"
  ;;
eval_nonfinite)
  awk 'BEGIN { for (i = 0; i < 20; ++i) printf "%.6e,%.6e,%.6e\n", (i + 1) * 1e200, -(i + 2) * 1e200, 3e200 }' >huge.csv
  train_once
  "$qgml" eval --matrices "$run/final_matrices.npy" --data huge.csv --out eval-out --w 0.5 \
    --kokkos-disable-warnings >eval.log 2>&1
  [ $? -ne 0 ] || fail "qgml eval exited 0 with a non-finite loss: $(grep '^loss' eval.log)"
  grep -q "the loss is not finite" eval.log || fail "no message"
  echo "ok: a non-finite loss is an error"
  ;;
resume_changes)
  train_once
  # An accepted change first, so that changes.json exists and must stay as it is.
  "$qgml" train --resume "$run" --training.epochs 3 --training.lr 0.02 --resume-with-changes training.lr \
    --output.plots false --kokkos-disable-warnings >accept.log 2>&1 || fail "an accepted change refused"
  [ -f "$run/changes.json" ] || fail "no changes.json after an accepted change"
  cp "$run/config.yaml" config.before && cp "$run/changes.json" changes.before
  "$qgml" train --resume "$run" --training.epochs 4 --model.N 5 --resume-with-changes model.N --output.plots false \
    --kokkos-disable-warnings >resume.log 2>&1
  [ $? -ne 0 ] || fail "a change of model.N applied to the checkpoint"
  grep -q "do not match the configuration being trained" resume.log || fail "no message naming the mismatch"
  cmp -s config.before "$run/config.yaml" || fail "config.yaml rewritten by a refused resume"
  cmp -s changes.before "$run/changes.json" || fail "changes.json rewritten by a refused resume"
  grep -q "model.N" "$run/changes.json" && fail "the refused change is recorded"
  "$qgml" train --resume "$run" --training.epochs 4 --output.plots false --kokkos-disable-warnings >plain.log 2>&1 ||
    fail "a plain --resume failed after the refused change"
  [ "$(tail -n +2 "$run/history.csv" | wc -l)" -eq 4 ] || fail "the plain resume did not train"
  echo "ok: a change that cannot apply refused before anything was written"
  ;;
target_both)
  awk 'BEGIN { for (i = 0; i < 60; ++i) printf "%.6f,%.6f\n", cos(i / 9.549), sin(i / 9.549) }' >x.csv
  awk 'BEGIN { for (i = 0; i < 60; ++i) printf "%.6f\n", cos(i / 9.549) + sin(i / 9.549) }' >y.csv
  opts=(--task regression --training.epochs 1 --model.N 4 --analysis.enabled false --output.plots false
    --output.directory runs --kokkos-disable-warnings)
  "$qgml" train x.csv --data.target_file y.csv --data.target_column 0 "${opts[@]}" >both.log 2>&1
  [ $? -ne 0 ] || fail "data.target_column 0 beside data.target_file accepted (and ignored)"
  grep -q "data.target_column = 0 and data.target_file '.*y.csv'" both.log || fail "no message naming both settings"
  [ -z "$(run_dir)" ] || fail "a run directory was created for a refused combination"
  "$qgml" train x.csv --data.target_file y.csv "${opts[@]}" >file.log 2>&1 || fail "data.target_file alone failed"
  grep -q "targets from .*y.csv" file.log || fail "the targets are not said to come from the file"
  echo "ok: a target column beside a target file refused, the file alone trains"
  ;;
npy_repeated_key)
  # An NPY file (version 1.0) of 12 little-endian doubles under the header dictionary $1.
  npy() {
    local h="$1" data='' v
    while [ $(((10 + ${#h} + 1) % 16)) -ne 0 ]; do h+=' '; done
    h+=$'\n'
    for v in f0\\x3f 00\\x40 08\\x40 10\\x40 14\\x40 18\\x40 1c\\x40 20\\x40 22\\x40 24\\x40 26\\x40 28\\x40; do
      data+="\\x00\\x00\\x00\\x00\\x00\\x00\\x$v"
    done
    printf '\x93NUMPY\x01\x00'
    printf "\\x$(printf %02x ${#h})\\x00"
    printf '%s' "$h"
    printf "$data"
  }
  npy "{'descr': '<f8', 'fortran_order': False, 'shape': (6, 2), 'shape': (3, 4), }" >shape.npy
  npy "{'descr': '<f4', 'fortran_order': False, 'shape': (6, 2), 'descr': '<f8', }" >descr.npy
  npy "{'descr': '<f8', 'fortran_order': False, 'shape': (6, 2), }" >once.npy
  [ "$(wc -c <once.npy)" -eq 176 ] || fail "the test's NPY file is malformed ($(wc -c <once.npy) bytes)"
  opts=(--training.epochs 1 --model.N 2 --analysis.enabled false --output.plots false --output.directory runs
    --kokkos-disable-warnings)
  for key in shape descr; do
    "$qgml" train $key.npy "${opts[@]}" >$key.log 2>&1
    [ $? -ne 0 ] || fail "$key.npy: a repeated '$key' read"
    grep -q "header repeats the key '$key'" $key.log || fail "$key.npy: no message naming the repeated key"
  done
  # A key numpy's reader does not take (it refuses the file) is refused too, naming it.
  npy "{'descr': '<f8', 'fortran_order': False, 'shape': (6, 2), 'evil': (3, 4), }" >unknown.npy
  "$qgml" train unknown.npy "${opts[@]}" >unknown.log 2>&1
  [ $? -ne 0 ] || fail "unknown.npy: a header with an unknown key read"
  grep -q "header has the key 'evil', which numpy's reader refuses" unknown.log ||
    fail "unknown.npy: no message naming the key: $(tail -n 2 unknown.log)"
  "$qgml" train once.npy "${opts[@]}" >once.log 2>&1 || fail "the NPY file with each key once was not read"
  grep -q "6 points" once.log || fail "once.npy: not read as 6 points"
  echo "ok: a repeated NPY header key refused"
  ;;
sample_fewer_steps)
  train_once
  "$qgml" sample "$run" --chains 4 --steps 40 --warmup 10 --out samples --kokkos-disable-warnings >sample.log 2>&1 ||
    fail "qgml sample failed"
  cp samples/sample.json sample.json.before && cp samples/samples.npy samples.npy.before
  "$qgml" sample --resume samples --steps 10 --kokkos-disable-warnings >fewer.log 2>&1
  [ $? -ne 0 ] || fail "fewer steps than done accepted: $(grep 'mean acceptance' fewer.log)"
  grep -q -- "--steps 10 is below the 40 sampling steps already done" fewer.log || fail "no message"
  cmp -s sample.json.before samples/sample.json || fail "sample.json rewritten by a refused resume"
  cmp -s samples.npy.before samples/samples.npy || fail "samples.npy rewritten by a refused resume"
  "$qgml" sample --resume samples --steps 40 --kokkos-disable-warnings >same.log 2>&1 || fail "the same --steps failed"
  acc=$(sed -n 's/.*mean acceptance \([0-9.]*\);.*/\1/p' same.log)
  [ -n "$acc" ] && awk -v a="$acc" 'BEGIN { exit !(a > 0 && a <= 1) }' || fail "acceptance '$acc' not in (0, 1]"
  [ "$acc" = "$(sed -n 's/.*mean acceptance \([0-9.]*\);.*/\1/p' sample.log)" ] ||
    fail "the resumed acceptance $acc differs from the first run's"
  echo "ok: fewer steps than done refused, the same steps report the same acceptance"
  ;;
sample_lock)
  train_once
  "$qgml" sample "$run" --chains 4 --steps 1000000000 --warmup 10 --out samples --kokkos-disable-warnings \
    >first.log 2>&1 &
  first=$!
  # sample.json is written once the first sampler is set up (and holds the lock).
  for _ in $(seq 100); do [ -s samples/sample.json ] && break; sleep 0.2; done
  [ -s samples/sample.json ] || { kill "$first"; fail "the first sampler did not start"; }
  "$qgml" sample "$run" --chains 4 --steps 20 --warmup 10 --out samples --kokkos-disable-warnings >second.log 2>&1
  rc=$?
  kill -0 "$first" 2>/dev/null || fail "the first sampler ended before the second was tried"
  kill "$first"
  wait "$first" 2>/dev/null
  [ "$rc" -ne 0 ] || fail "two samplers wrote into one --out"
  grep -q "sample directory 'samples' is in use: another qgml process (pid $first)" second.log ||
    fail "no message naming the sample directory and the holder"
  "$qgml" sample "$run" --chains 4 --steps 20 --warmup 10 --out samples --kokkos-disable-warnings >third.log 2>&1 ||
    fail "the sample directory is not usable after the first sampler ended"
  # A --resume while a sampler writes the directory is refused too.
  "$qgml" sample --resume samples --steps 1000000000 --kokkos-disable-warnings >resume1.log 2>&1 &
  first=$!
  for _ in $(seq 100); do grep -q "^$first\$" samples/lock 2>/dev/null && break; sleep 0.2; done
  "$qgml" sample --resume samples --steps 40 --kokkos-disable-warnings >resume2.log 2>&1
  rc=$?
  kill "$first"
  wait "$first" 2>/dev/null
  [ "$rc" -ne 0 ] || fail "two resumed samplers wrote into one directory"
  grep -q "sample directory 'samples' is in use: another qgml process (pid $first)" resume2.log ||
    fail "no message naming the sample directory and the holder (resume)"
  echo "ok: a second sampler into a sample directory in use refused"
  ;;
sample_retrained)
  train_once
  "$qgml" sample "$run" --chains 4 --steps 20 --warmup 10 --out samples --kokkos-disable-warnings >sample.log 2>&1 ||
    fail "qgml sample failed"
  grep -q '"model_fingerprint": "[0-9a-f]\{16\}"' samples/sample.json || fail "no model fingerprint in sample.json"
  for f in sample.json samples.npy state.npy; do cp "samples/$f" "$f.before"; done
  # The run retrained: its final matrices change.
  "$qgml" train --resume "$run" --training.epochs 4 --output.plots false --kokkos-disable-warnings >retrain.log 2>&1 ||
    fail "the retraining failed"
  "$qgml" sample --resume samples --steps 40 --kokkos-disable-warnings >resume.log 2>&1
  [ $? -ne 0 ] || fail "a sample directory resumed on a retrained model (the draws of two models mixed)"
  grep -q "qgml sample --resume samples: the model of .* has changed since this sample directory was started" \
    resume.log || fail "no message naming the sample directory"
  for f in sample.json samples.npy state.npy; do cmp -s "$f.before" "samples/$f" || fail "samples/$f rewritten"; done
  # The unchanged model resumes; a changed standardisation is refused.
  "$qgml" sample "$run" --chains 4 --steps 20 --warmup 10 --out again --kokkos-disable-warnings >again.log 2>&1 ||
    fail "qgml sample of the retrained run failed"
  "$qgml" sample --resume again --steps 30 --kokkos-disable-warnings >same.log 2>&1 ||
    fail "the sample directory of an unchanged model did not resume"
  [ -f "$run/standardization.json" ] && fail "the test expects a run without standardisation"
  echo '{"mean": [0.5, 0, 0], "scale": 2.5}' >"$run/standardization.json"
  cp again/sample.json again.json.before
  "$qgml" sample --resume again --steps 40 --kokkos-disable-warnings >standardised.log 2>&1
  [ $? -ne 0 ] || fail "a sample directory resumed after the run's standardisation changed"
  grep -q "qgml sample --resume again: the model of .* has changed" standardised.log || fail "no message (standardisation)"
  cmp -s again.json.before again/sample.json || fail "again/sample.json rewritten by a refused resume"
  # A sample directory without a fingerprint: refused, with a message to start a new one.
  rm "$run/standardization.json"
  sed -i '/"model_fingerprint"/d' again/sample.json
  "$qgml" sample --resume again --steps 40 --kokkos-disable-warnings >old.log 2>&1
  [ $? -ne 0 ] || fail "a sample directory without a model fingerprint resumed"
  grep -q "qgml sample --resume again: its sample.json records no model fingerprint.*start a new sample directory" \
    old.log || fail "no message (no fingerprint)"
  echo "ok: a sample directory refused on a retrained or restandardised model, and without a fingerprint"
  ;;
target_scale)
  awk 'BEGIN { for (i = 0; i < 60; ++i) printf "%.17g,%.17g\n", cos(i / 9.549), sin(i / 9.549) }' >x.csv
  awk 'BEGIN { for (i = 0; i < 60; ++i) printf "%.17g\n", 3 + cos(i / 9.549) + 0.5 * sin(2 * i / 9.549) }' >y.csv
  awk -F, '{ printf "%.17g,%.17g\n", $1 * 1e200, $2 * 1e200 }' x.csv >xbig.csv
  awk '{ printf "%.17g\n", $1 * 1e200 }' y.csv >ybig.csv
  opts=(--task regression --training.epochs 3 --model.N 4 --analysis.enabled false --output.plots false
    --kokkos-disable-warnings)
  "$qgml" train x.csv --data.target_file y.csv "${opts[@]}" --output.directory base >base.log 2>&1 || fail "base failed"
  "$qgml" train x.csv --data.target_file ybig.csv "${opts[@]}" --output.directory big >big.log 2>&1 ||
    fail "targets near 1e200 refused"
  "$qgml" train xbig.csv --data.target_file ybig.csv "${opts[@]}" --output.directory both >both.log 2>&1 ||
    fail "features and targets near 1e200 refused"
  for r in big both; do
    grep -q null $r/*/supervised.json && fail "$r: a null in supervised.json: $(grep null $r/*/supervised.json)"
    grep "final train RMSE" $r.log | grep -qi "nan\|inf" && fail "$r: a metric not finite: $(grep 'final train' $r.log)"
  done
  "$qgml" predict --run base/*/ --data x.csv --output base.csv >pbase.log 2>&1 || fail "predict (base) failed"
  "$qgml" predict --run big/*/ --data x.csv --output big.csv >pbig.log 2>&1 || fail "predict (targets 1e200) failed"
  "$qgml" predict --run both/*/ --data xbig.csv --output both.csv >pboth.log 2>&1 || fail "predict (both 1e200) failed"
  for r in big both; do
    paste -d, base.csv $r.csv | awk -F, 'NR > 1 { if ($2 !~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) bad = 1
      m = $1 < 0 ? -$1 : $1; if (m > top) top = m; e = $2 / 1e200 - $1; if (e < 0) e = -e; if (e > err) err = e }
      END { exit !(NR == 61 && !bad && top > 0 && err <= 1e-6 * top) }' ||
      fail "$r: predictions are not 1e200 times the base run's: $(paste -d, base.csv $r.csv | sed -n 2,4p)"
  done
  echo "ok: targets near 1e200 give a finite scale, finite metrics and the base run's predictions times 1e200"
  ;;
stale_temporaries)
  outside
  train_once
  mkdir "$run/notes"
  # Exactly the temporaries of an atomic write whose process has ended: removed by the next --resume.
  stale=("$run/config.yaml.tmp.999999" "$run/history.csv.tmp.999998.3" "$run/checkpoints/LATEST.tmp.999997")
  # Near-misses, a live process's (this shell's), and such names outside the run and its checkpoints (in
  # the run's parent, in a subdirectory other than checkpoints).
  keep=("$run/config.yaml.tmp.$$" "$run/config.yaml.tmp.0999999" "$run/config.yaml.tmp.99999x"
    "$run/config.yaml.tmp.999999.txt" "$run/config.yaml.tmp." "$run/.tmp.999999" "$run/config.yaml.tmp.999999."
    "$run/config.yaml.TMP.999999" "$run/config.yaml.tmp.99999999999" "$run/config.yaml.tmp.999999.0"
    "runs/config.yaml.tmp.999999" "$run/notes/config.yaml.tmp.999999")
  for f in "${stale[@]}" "${keep[@]}"; do echo planted >"$f" || fail "cannot plant $f"; done
  mkdir "$run/dir.tmp.999996"
  keep+=("$run/dir.tmp.999996")
  # A link at such a name: the resume is refused and removes nothing.
  ln -s "$PWD/outside/target" "$run/log.txt.tmp.999995"
  "$qgml" train --resume "$run" --training.epochs 3 --output.plots false --kokkos-disable-warnings >link.log 2>&1
  [ $? -ne 0 ] || fail "resumed with a link in the run directory"
  [ -L "$run/log.txt.tmp.999995" ] || fail "the link was removed"
  for f in "${stale[@]}"; do [ -f "$f" ] || fail "$f removed by a refused resume"; done
  unchanged
  rm "$run/log.txt.tmp.999995"
  "$qgml" train --resume "$run" --training.epochs 3 --output.plots false --kokkos-disable-warnings >resume.log 2>&1 ||
    fail "the resume failed"
  for f in "${stale[@]}"; do [ ! -e "$f" ] || fail "the stale temporary $f was not removed"; done
  for f in "${keep[@]}"; do [ -e "$f" ] || fail "$f was removed"; done
  grep -q "removed $run/config.yaml.tmp.999999: a temporary file of an interrupted write" resume.log ||
    fail "the removal is not said"
  grep -q "removed $run/checkpoints/LATEST.tmp.999997" "$run/log.txt" || fail "log.txt does not say the removal"
  # A sample directory: the same on qgml sample --resume.
  "$qgml" sample "$run" --chains 4 --steps 20 --warmup 10 --out samples --kokkos-disable-warnings >sample.log 2>&1 ||
    fail "qgml sample failed"
  echo planted >samples/samples.npy.tmp.999999 && echo planted >samples/state.npy.tmp.999998.2
  echo planted >samples/state.npy.tmp.$$ && echo planted >samples/state.npy.tmp.x1
  "$qgml" sample --resume samples --steps 40 --kokkos-disable-warnings >sresume.log 2>&1 || fail "sample --resume failed"
  [ ! -e samples/samples.npy.tmp.999999 ] && [ ! -e samples/state.npy.tmp.999998.2 ] ||
    fail "stale temporaries of the sample directory not removed"
  [ -e samples/state.npy.tmp.$$ ] && [ -e samples/state.npy.tmp.x1 ] || fail "a decoy in the sample directory removed"
  echo "ok: exactly the stale temporaries removed"
  ;;
analysis_preflight)
  # D = 1000: on CPUs the packed kernel's scratch per team (8 points' 1000 x 1000 metrics, 62 MiB) exceeds
  # the 20 MiB per team of Kokkos' host spaces. analysis.kernel packed (auto's choice on CPUs) so that a
  # GPU build, which has no packed kernel, refuses before training too, and never spends minutes on the
  # eigenvalues of 1000 x 1000 metrics.
  awk 'BEGIN { srand(1); for (i = 0; i < 16; ++i) { for (k = 0; k < 1000; ++k)
    printf "%s%.5f", k ? "," : "", (k == 0 ? cos(i / 2.5) : k == 1 ? sin(i / 2.5) : 0) + 0.01 * (rand() - 0.5)
    printf "\n" } }' >wide.csv
  outside
  start=$(date +%s)
  "$qgml" train wide.csv --model.N 4 --training.epochs 3 --analysis.kernel packed --output.directory runs \
    --output.plots false --kokkos-disable-warnings >wide.log 2>&1
  rc=$? took=$(($(date +%s) - start))
  [ $rc -ne 0 ] || fail "a run whose analysis cannot run was not refused"
  grep -q "^epoch [0-9]" wide.log && fail "the refusal came after training started: $(grep "^epoch" wide.log | head -n 2)"
  if ! grep -q "the packed geometry kernel runs on host execution spaces only" wide.log; then
    grep -q "the dimension analysis after training (analysis.kernel = packed, N = 4, D = 1000, 16 points in \
chunks of 16) needs [0-9]* bytes ([0-9.]* MiB) of scratch per team, more than the [0-9]* bytes" wide.log ||
      fail "no message naming the analysis, D, N and its scratch: $(head -c 600 wide.log)"
    grep -q "set analysis.kernel team or separate, set analysis.enabled false" wide.log ||
      fail "the message does not say what to do: $(head -c 600 wide.log)"
  fi
  [ -z "$(ls -A runs 2>/dev/null)" ] || fail "the refused run left files: $(find runs | head)"
  [ $took -le 20 ] || fail "the refusal took $took s"
  # What the message proposes: without the analysis the same data train (the other kernels fit, but
  # the eigenvalues of 1000 x 1000 metrics take minutes).
  "$qgml" train wide.csv --model.N 4 --training.epochs 2 --analysis.enabled false --output.directory off \
    --output.plots false --kokkos-disable-warnings >off.log 2>&1 || fail "analysis.enabled false failed: $(tail -n 3 off.log)"
  unchanged
  echo "ok: an analysis that cannot run refused before training in $took s"
  ;;
estimate_preflight)
  awk 'BEGIN { srand(1); for (i = 0; i < 16; ++i) { for (k = 0; k < 1000; ++k)
    printf "%s%.5f", k ? "," : "", (k == 0 ? cos(i / 2.5) : k == 1 ? sin(i / 2.5) : 0) + 0.01 * (rand() - 0.5)
    printf "\n" } }' >wide.csv
  "$qgml" train wide.csv --model.N 4 --training.epochs 2 --analysis.enabled false --output.directory runs \
    --output.plots false --kokkos-disable-warnings >train.log 2>&1 || fail "training without the analysis failed"
  matrices=$(run_dir)final_matrices.npy
  "$qgml" estimate --matrices "$matrices" --data wide.csv --kernel packed --out est --kokkos-disable-warnings \
    >est.log 2>&1
  [ $? -ne 0 ] || fail "an estimate whose analysis cannot run was not refused"
  if ! grep -q "the packed geometry kernel runs on host execution spaces only" est.log; then
    grep -q "qgml estimate's dimension analysis (--kernel = packed, N = 4, D = 1000, 16 points in chunks of 16) \
needs [0-9]* bytes ([0-9.]* MiB) of scratch per team, more than the [0-9]* bytes" est.log ||
      fail "no message naming the analysis, D, N and its scratch: $(head -c 600 est.log)"
    grep -q "refused before the analysis starts (set --kernel team or separate, or use data" est.log ||
      fail "the message does not say what to do: $(head -c 600 est.log)"
  fi
  [ ! -e est ] || fail "the refused estimate left its output directory"
  # Two of the points: the eigenvalues of 1000 x 1000 metrics take seconds each.
  head -n 2 wide.csv >two.csv
  "$qgml" estimate --matrices "$matrices" --data two.csv --kernel team --out est --kokkos-disable-warnings \
    >team.log 2>&1 || fail "--kernel team failed: $(tail -n 3 team.log)"
  [ -f est/dimension_summary.json ] || fail "--kernel team wrote no dimension_summary.json"
  echo "ok: qgml estimate refused by the analysis pre-flight, and runs with the kernel it proposes"
  ;;
control_names)
  awk 'BEGIN { for (i = 0; i < 60; ++i) printf "%.6f,%.6f\n", cos(i / 9.549), sin(i / 9.549) }' >base.csv
  name=$(printf 'a\nb\033[31mc')
  cp base.csv "$name.csv"
  "$qgml" train "$name.csv" "${quick[@]}" --output.directory runs >train.log 2>&1 || fail "training failed"
  [ "$(ls runs | wc -l)" -eq 1 ] || fail "not one run directory: $(ls runs | od -c | head)"
  ls runs | grep -q '^a_b_\[31mc_' || fail "the run directory keeps the control characters: $(ls runs | od -c | head -n 3)"
  "$qgml" train base.csv "${quick[@]}" --output.directory named --output.name "$name" >name.log 2>&1 &&
    fail "output.name with control characters accepted"
  grep -qF "output.name = 'a?b?[31mc': expected a single directory name" name.log ||
    fail "output.name with control characters: no message: $(tail -n 1 name.log | od -c | head -n 3)"
  [ ! -e named ] || [ -z "$(ls -A named)" ] || fail "a run directory was created: $(ls named)"
  { head -n 5 base.csv; printf '1.0\000,0.5\n'; printf '\033[2J,0.5\n'; tail -n 54 base.csv; } >nul.csv
  "$qgml" train nul.csv "${quick[@]}" --output.directory runs >nul.log 2>&1 && fail "a cell with a NUL accepted"
  grep -qF "line 6, column 1: '1.0\x00' is not a number" nul.log || fail "the NUL cell: $(tail -n 1 nul.log | od -c | head)"
  sed -i 6d nul.csv
  "$qgml" train nul.csv "${quick[@]}" --output.directory runs >esc.log 2>&1 && fail "a cell with an escape accepted"
  grep -qF "line 6, column 1: '\x1b[2J' is not a number" esc.log || fail "the escape cell: $(tail -n 1 esc.log | od -c | head)"
  grep -q $'\033' esc.log && fail "an escape byte reached the output"
  echo "ok: control characters kept out of run names and messages"
  ;;
tune_json_directory)
  mkdir report
  start=$(date +%s)
  "$qgml" tune "$config" --data.points 200 --model.N 3 --batches 50,100 --epochs-per-trial 1 --json report \
    --kokkos-disable-warnings >tune.log 2>&1 && fail "--json naming a directory accepted"
  grep -q -- "--json report: is a directory; expected the name of the report file" tune.log ||
    fail "no message naming --json: $(tail -n 2 tune.log)"
  grep -q "^fastest" tune.log && fail "the refusal came after the trials"
  [ -z "$(ls -A report)" ] && [ -z "$(ls -A . | grep tmp)" ] || fail "files left: $(ls -A . report)"
  mkdir points.csv
  "$qgml" generate --data.generator circle --data.points 10 --out points.csv --kokkos-disable-warnings \
    >generate.log 2>&1 && fail "generate --out naming a directory accepted"
  grep -q "'points.csv' is a directory; expected the name of a file to write" generate.log ||
    fail "generate: no message naming the directory: $(tail -n 1 generate.log)"
  [ -z "$(ls -A points.csv)" ] && [ -z "$(ls -A . | grep tmp)" ] || fail "files left: $(ls -A . points.csv)"
  echo "ok: --json and --out naming a directory refused"
  ;;
*)
  echo "unknown case $case_"
  exit 2
  ;;
esac
