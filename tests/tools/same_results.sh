#!/usr/bin/env bash
# Whether two builds of the qgml program give the same results bit for bit: the safety net of a
# refactoring that must not change a result (docs/architecture.md "Which kernel runs: the kernel plan").
# Trains the fuzzy sphere (examples/configs/fuzzy_sphere.yaml, 20 epochs) under settings that take each
# kernel path (fused, team, separate, float, the mixed precision at N = 64, warm starts, N = 300, the
# metric's team and separate kernels), a hypercube with every automatic choice left to the program, and
# supervised runs on a CSV file it writes (three classes: softmax and outputs chosen; two regression
# targets), with both programs; samples one run with each; and compares the final matrices, the
# training history (without its timing columns), dimension_summary.json (without times and paths),
# supervised.json, the run's config.yaml (without output.directory), the printed automatic lines and the
# samples; runs qgml estimate and qgml eval on one run's matrices in both precisions and compares their
# outputs and reports. Exit 0: all the same; 1: a difference.
#   tests/tools/same_results.sh OLD/apps/qgml/qgml NEW/apps/qgml/qgml [WORK_DIR]
# About 2 minutes on 2 cores.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_QGML NEW_QGML [WORK_DIR]" >&2; exit 2; }
old=$1 new=$2 work=${3:-$(mktemp -d)}
if [ -n "$(ls -A "$work" 2>/dev/null)" ]; then
  echo "$0: the work directory $work is not empty (the runs of an earlier comparison would be compared)" >&2
  exit 2
fi
cfg="$(cd "$(dirname "$0")/../.." && pwd)/examples/configs/fuzzy_sphere.yaml"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=false OMP_WAIT_POLICY=passive
settings=(
  "--model.N 3"
  "--model.N 8 --training.kernel team"
  "--model.N 8 --training.kernel separate"
  "--model.N 8 --model.precision float"
  "--model.N 64 --data.points 600"
  "--model.N 64 --data.points 600 --training.mixed_precision false"
  "--model.N 6 --training.warm_start true"
  "--model.N 300 --data.points 40 --training.epochs 2"
  "--model.N 8 --analysis.kernel team"
  "--model.N 8 --analysis.kernel separate"
  "@--data.generator hypercube --data.dimension 5 --data.intrinsic_dimension 3 --data.points 800"
  "@--task classification --data.file $work/classes.csv --model.N 4"
  "@--task regression --data.file $work/targets.csv --data.target_columns -2,-1 --model.N 4"
)
mkdir -p "$work"
python3 - "$work" <<'PY'
import math, sys
with open(sys.argv[1] + "/classes.csv", "w") as f:
    for t in range(300):
        a = 2 * math.pi * t / 300
        f.write(f"{math.cos(a):.6f},{math.sin(a):.6f},{0.1 * math.sin(7 * a):.6f},{t % 3}\n")
with open(sys.argv[1] + "/sphere.csv", "w") as f:
    for t in range(400):
        z = -1 + 2 * (t + 0.5) / 400
        a = t * math.pi * (3 - math.sqrt(5))
        r = math.sqrt(1 - z * z)
        f.write(f"{r * math.cos(a):.6f},{r * math.sin(a):.6f},{z:.6f}\n")
with open(sys.argv[1] + "/targets.csv", "w") as f:
    for t in range(300):
        a = 2 * math.pi * t / 300
        f.write(f"{math.cos(a):.6f},{math.sin(a):.6f},{math.cos(2 * a):.6f},{math.sin(3 * a):.6f}\n")
PY
status=0
summary() {
  python3 - "$1" <<'PY'
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items()
                if "second" not in k and "time" not in k and k not in ("run_directory", "path", "directory")}
    return [strip(v) for v in x] if isinstance(x, list) else x
try:
    print(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True))
except FileNotFoundError:
    print("none")
PY
}
i=0
for s in "${settings[@]}"; do
  i=$((i + 1))
  config=$cfg
  if [ "${s#@}" != "$s" ]; then
    s=${s#@}
    config=""
  fi
  for v in old new; do
    mkdir -p "$work/$v-$i"
    # shellcheck disable=SC2086
    "${!v}" train $config --output.directory "$work/$v-$i" --training.epochs 20 $s > "$work/$v-$i.log" 2>&1 ||
      { echo "the $v program failed: $s (log $work/$v-$i.log)"; status=1; }
  done
  a=$(ls -d "$work"/old-$i/*/ | head -n 1) b=$(ls -d "$work"/new-$i/*/ | head -n 1)
  same=1
  cmp -s "$a/final_matrices.npy" "$b/final_matrices.npy" || { echo "differ: final_matrices.npy ($s)"; same=0; }
  cmp -s <(cut -d, -f1-10 "$a/history.csv") <(cut -d, -f1-10 "$b/history.csv") || { echo "differ: history.csv ($s)"; same=0; }
  [ "$(summary "$a/dimension_summary.json")" = "$(summary "$b/dimension_summary.json")" ] ||
    { echo "differ: dimension_summary.json ($s)"; same=0; }
  cmp -s <(grep automatic "$work/old-$i.log") <(grep automatic "$work/new-$i.log") || { echo "differ: automatic lines ($s)"; same=0; }
  cmp -s <(grep -v '^  directory:' "$a/config.yaml") <(grep -v '^  directory:' "$b/config.yaml") ||
    { echo "differ: config.yaml ($s)"; same=0; }
  if [ -f "$a/supervised.json" ] || [ -f "$b/supervised.json" ]; then
    cmp -s "$a/supervised.json" "$b/supervised.json" || { echo "differ: supervised.json ($s)"; same=0; }
  fi
  [ $same = 1 ] && echo "same: $s" || status=1
done
run=$(ls -d "$work"/old-2/*/ | head -n 1)
for v in old new; do
  "${!v}" sample "$run" --sampler mala --chains 50 --steps 100 --warmup 50 --out "$work/sample-$v" --quiet > /dev/null 2>&1 ||
    { echo "the $v program's sample failed"; status=1; }
done
for f in samples.npy state.npy acceptance.npy; do
  cmp -s "$work/sample-old/$f" "$work/sample-new/$f" && echo "same: sample $f" || { echo "differ: sample $f"; status=1; }
done
# qgml estimate and qgml eval on the trained matrices of the N = 8 team run, in both precisions.
for p in double float; do
  for v in old new; do
    "${!v}" estimate --matrices "$run/final_matrices.npy" --data "$work/sphere.csv" --precision $p \
      --out "$work/estimate-$p-$v" > "$work/estimate-$p-$v.log" 2>&1 || { echo "the $v program's estimate failed"; status=1; }
    "${!v}" eval --matrices "$run/final_matrices.npy" --data "$work/sphere.csv" --precision $p \
      --out "$work/eval-$p-$v" > "$work/eval-$p-$v.log" 2>&1 || { echo "the $v program's eval failed"; status=1; }
  done
  same=1
  cmp -s "$work/estimate-$p-old/per_point.csv" "$work/estimate-$p-new/per_point.csv" || { echo "differ: estimate per_point.csv ($p)"; same=0; }
  [ "$(summary "$work/estimate-$p-old/dimension_summary.json")" = "$(summary "$work/estimate-$p-new/dimension_summary.json")" ] ||
    { echo "differ: estimate dimension_summary.json ($p)"; same=0; }
  cmp -s <(grep -v '^outputs:' "$work/estimate-$p-old.log") <(grep -v '^outputs:' "$work/estimate-$p-new.log") ||
    { echo "differ: estimate's report ($p)"; same=0; }
  for f in loss.json gradient.npy xbar.npy sigma2.npy energy.npy per_point.csv; do
    cmp -s "$work/eval-$p-old/$f" "$work/eval-$p-new/$f" || { echo "differ: eval $f ($p)"; same=0; }
  done
  cmp -s <(grep -v '^outputs:' "$work/eval-$p-old.log") <(grep -v '^outputs:' "$work/eval-$p-new.log") ||
    { echo "differ: eval's report ($p)"; same=0; }
  [ $same = 1 ] && echo "same: estimate and eval ($p)" || status=1
done
exit $status
