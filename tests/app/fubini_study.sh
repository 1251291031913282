#!/usr/bin/env bash
# fubini_study.sh WORKDIR QGML CONFIG SPIN1_NPY
# The Fubini-Study metric from the program: `qgml train --analysis.metric fubini_study` analyses the
# trained sphere, and `qgml estimate --metric fubini_study` on the spin-1 fuzzy sphere (A_k = J_k)
# gives the closed form of docs/math.md 7 at |x| = 1: eigenvalues {1/2, 1/2, 0}, xbar = x, dimension 2.
set -u
work=$1 qgml=$2 config=$3 spin=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export OMP_PROC_BIND=false
"$qgml" train "$config" --analysis.metric fubini_study --training.epochs 30 --data.points 500 \
  --output.plots false --output.directory runs --kokkos-disable-warnings >train.log 2>&1 ||
  { echo "FAIL: qgml train --analysis.metric fubini_study failed"; cat train.log; exit 1; }
run=$(ls -d runs/*/ | head -n 1)
grep -q '"metric": "fubini_study"' "$run/dimension_summary.json" &&
  grep -q '"points": 500' "$run/dimension_summary.json" &&
  grep -q '"failed_points": 0' "$run/dimension_summary.json" ||
  { echo "FAIL: dimension_summary.json"; cat "$run/dimension_summary.json"; exit 1; }
[ "$(wc -l <"$run/per_point.csv")" -eq 501 ] || { echo "FAIL: per_point.csv rows"; exit 1; }
# Points on the unit sphere.
awk 'BEGIN { for (i = 0; i < 40; ++i) { a = 0.7 * i + 0.1; b = 0.1 + 2.9 * i / 40;
       printf "%.17g,%.17g,%.17g\n", cos(a) * sin(b), sin(a) * sin(b), cos(b) } }' >sphere.csv
"$qgml" estimate --matrices "$spin" --data sphere.csv --metric fubini_study --out est \
  --kokkos-disable-warnings >estimate.log 2>&1 || { echo "FAIL: qgml estimate failed"; cat estimate.log; exit 1; }
grep -q '"metric": "fubini_study"' est/dimension_summary.json || { echo "FAIL: metric"; exit 1; }
awk -F, 'NR == FNR { x[FNR] = $1; y[FNR] = $2; z[FNR] = $3; next }
  FNR > 1 { r = FNR - 1; bad = 0
    if ($7 - 0.5 > 1e-9 || 0.5 - $7 > 1e-9 || $8 - 0.5 > 1e-9 || 0.5 - $8 > 1e-9) bad = 1
    if ($9 > 1e-9 || $9 < -1e-9 || $10 != 2) bad = 1
    if (($4 - x[r])^2 + ($5 - y[r])^2 + ($6 - z[r])^2 > 1e-16) bad = 1
    if (bad) { print "FAIL: row " r ": " $0; fail = 1 } ++rows }
  END { if (fail || rows != 40) { print "FAIL (" rows " rows)"; exit 1 } }' sphere.csv est/per_point.csv || exit 1
echo "ok: train and estimate with the Fubini-Study metric"
