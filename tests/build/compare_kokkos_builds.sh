#!/usr/bin/env bash
# The same runs with two builds of the program (CI: against Kokkos 3.4.01 and 4.6.01, both OpenMP) must
# give byte-identical results: the trained matrices, the per-point analysis and the loss history of a
# double and a float run, and the draws of a MALA sampler. Only wall times may differ.
#   compare_kokkos_builds.sh PROGRAM_A PROGRAM_B WORK
set -euo pipefail
a=$1 b=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
export OMP_NUM_THREADS=2 OMP_PROC_BIND=false OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=1
fail() { echo "FAIL: $*"; exit 1; }
same() { cmp -s "$1" "$2" || fail "$1 and $2 differ"; }
# history.csv without its last two columns (seconds, points per second)
history() { cut -d, -f1-$(($(head -n1 "$1" | tr ',' '\n' | wc -l) - 2)) "$1"; }
for precision in double float; do
  for side in a b; do
    program=$a
    [ "$side" = a ] || program=$b
    "$program" train --data.generator sphere --data.noise 0.05 --data.points 1000 --training.epochs 25 \
      --model.precision "$precision" --output.directory "$work/$side" --output.name "$precision" \
      --output.plots false --quiet >"$work/$side-$precision.log" 2>&1 || fail "$program train ($precision) failed"
  done
  ra=$(ls -d "$work/a/$precision"*) rb=$(ls -d "$work/b/$precision"*)
  same "$ra/final_matrices.npy" "$rb/final_matrices.npy"
  same "$ra/per_point.csv" "$rb/per_point.csv"
  cmp -s <(history "$ra/history.csv") <(history "$rb/history.csv") || fail "the $precision loss histories differ"
  grep -q "estimated intrinsic dimension: 2" "$work/a-$precision.log" || fail "no dimension 2 ($precision)"
done
run=$(ls -d "$work/a/double"*)
"$a" sample "$run" --sampler mala --chains 32 --steps 60 --warmup 30 --out "$work/sample-a" --quiet >/dev/null 2>&1 ||
  fail "$a sample failed"
"$b" sample "$run" --sampler mala --chains 32 --steps 60 --warmup 30 --out "$work/sample-b" --quiet >/dev/null 2>&1 ||
  fail "$b sample failed"
for f in samples.npy acceptance.npy state.npy; do same "$work/sample-a/$f" "$work/sample-b/$f"; done
echo "PASS: byte-identical training (double, float), analysis and MALA draws"
