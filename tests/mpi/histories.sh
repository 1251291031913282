#!/usr/bin/env bash
# histories.sh WORKDIR QGML CONFIG
# `qgml train` on 1, 2, 3 and 4 ranks (mini-batches of 500 of the fuzzy-sphere data, with the replica
# check on): every run writes the same loss history to 1e-10 relative, rank 0 alone writes the run
# directory, and a run resumed on a different number of ranks continues the same history.
set -u
work=$1 qgml=$2 config=$3
read -r -a mpiexec <<<"${QGML_MPIEXEC:?QGML_MPIEXEC must hold the mpiexec command and its -n flag}"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
common=(--training.epochs 30 --training.check_replicas true --output.plots false --kokkos-disable-warnings)
for np in 1 2 3 4; do
  "${mpiexec[@]}" "$np" "$qgml" train "$config" --output.directory "runs$np" "${common[@]}" >"np$np.log" 2>&1 ||
    { echo "FAIL: $np ranks exited with $?"; cat "np$np.log"; exit 1; }
  n=$(ls -d "runs$np"/*/ | wc -l)
  [ "$n" -eq 1 ] || { echo "FAIL: $np ranks made $n run directories"; exit 1; }
  grep -q "estimated intrinsic dimension: 2" "np$np.log" || { echo "FAIL: no estimate with $np ranks"; cat "np$np.log"; exit 1; }
  [ "$np" -eq 1 ] || grep -q "data parallel: $np ranks" "np$np.log" || { echo "FAIL: not distributed"; exit 1; }
done
compare() { # reference.csv other.csv label
  /usr/bin/env python3 - "$1" "$2" "$3" <<'PY' || exit 1
import csv, sys
ref, other, label = sys.argv[1:]
a = list(csv.DictReader(open(ref)))
b = list(csv.DictReader(open(other)))
if len(a) != len(b):
    sys.exit(f"FAIL: {label}: {len(b)} epochs, expected {len(a)}")
worst = 0.0
for x, y in zip(a, b):
    if x["epoch"] != y["epoch"] or x["batches"] != y["batches"]:
        sys.exit(f"FAIL: {label}: epoch {x['epoch']} differs in epoch number or batch count")
    for k in ("total", "reconstruction", "fluctuation"):
        u, v = float(x[k]), float(y[k])
        worst = max(worst, abs(u - v) / abs(u))
if worst > 1e-10:
    sys.exit(f"FAIL: {label}: largest relative difference {worst:.3g} > 1e-10")
print(f"ok: {label}: {len(a)} epochs, largest relative difference {worst:.2g}")
PY
}
ref=$(ls -d runs1/*/)history.csv
for np in 2 3 4; do compare "$ref" "$(ls -d "runs$np"/*/)history.csv" "$np ranks vs 1"; done
# Checkpoints do not depend on the rank count: resume the 2-rank run on 3 ranks for 10 more epochs and
# compare with 40 epochs on one rank.
"${mpiexec[@]}" 1 "$qgml" train "$config" --output.directory long "${common[@]}" --training.epochs 40 >long.log 2>&1 ||
  { echo "FAIL: 40-epoch reference"; cat long.log; exit 1; }
run2=$(ls -d runs2/*/)
"${mpiexec[@]}" 3 "$qgml" train --resume "$run2" --training.epochs 40 --output.plots false \
  --kokkos-disable-warnings >resume.log 2>&1 || { echo "FAIL: resume on 3 ranks"; cat resume.log; exit 1; }
grep -q "resuming .* at epoch 30 of 40" resume.log || { echo "FAIL: resume did not start at epoch 30"; cat resume.log; exit 1; }
compare "$(ls -d long/*/)history.csv" "${run2}history.csv" "2 ranks + resumed on 3 vs 1"
# The dimension estimate distributed over ranks: per-point results and summary identical to one rank's.
run1=$(ls -d runs1/*/)
cut -d, -f1-3 "${run1}per_point.csv" >points.csv
for np in 1 3; do
  "${mpiexec[@]}" "$np" "$qgml" estimate --matrices "${run1}final_matrices.npy" --data points.csv \
    --out "estimate$np" --kokkos-disable-warnings >"estimate$np.log" 2>&1 ||
    { echo "FAIL: estimate on $np ranks"; cat "estimate$np.log"; exit 1; }
done
cmp estimate1/per_point.csv estimate3/per_point.csv || { echo "FAIL: per-point estimates differ on 3 ranks"; exit 1; }
cmp estimate1/dimension_summary.json estimate3/dimension_summary.json || { echo "FAIL: summaries differ"; exit 1; }
[ "$(grep -c "estimated intrinsic dimension: 2" estimate3.log)" -eq 1 ] ||
  { echo "FAIL: 3-rank estimate must print once"; cat estimate3.log; exit 1; }
echo "ok: estimate on 3 ranks = estimate on 1 rank ($(wc -l <estimate1/per_point.csv) lines)"
