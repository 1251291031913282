#!/usr/bin/env bash
# security.sh CASE WORKDIR QGML CONFIG
# What a hostile file name or a planted symbolic link can make qgml do (issue 50), one case per call:
#   shell        a data file named p';touch PWNED;'.csv: the plot step starts python with an argument
#                vector, so no shell parses the run directory's name (a stub matplotlib on PYTHONPATH
#                makes the plot step run where matplotlib is not installed)
#   output_name  output.name '..', '.', 'a/b', '/abs', '../x': refused naming the setting, nothing
#                created outside output.directory
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
*)
  echo "unknown case $case_"
  exit 2
  ;;
esac
