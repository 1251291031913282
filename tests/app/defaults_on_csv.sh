#!/usr/bin/env bash
# defaults_on_csv.sh WORKDIR QGML
# qgml train DATA.csv with every default (docs/dimension.md): qgml generate writes a noisy circle in
# R^2 of radius 10 (not at unit scale); the run standardises it (automatic, printed), picks N = 32 (automatic,
# printed), stops when the loss plateaus before the epoch limit, and prints dimension 1 with a clear
# verdict; --quiet prints that one line and nothing else; the run directory records every automatic
# choice (config.yaml origins, dimension_summary.json, standardization.json) and per-point confidence.
set -u
work=$1 qgml=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export OMP_PROC_BIND=false
fail() { echo "FAIL: $*"; exit 1; }

"$qgml" generate --data.generator circle --data.points 400 --data.noise 0.05 --data.radius 10 --out circle.csv \
  >gen.log 2>&1 || { cat gen.log; fail "qgml generate failed"; }
head -n 1 circle.csv | grep -qx "x0,x1" || fail "circle.csv has no header x0,x1"
[ "$(wc -l <circle.csv)" = 401 ] || fail "circle.csv does not have 400 points"

"$qgml" train circle.csv --output.directory runs --output.plots false >train.log 2>&1 ||
  { cat train.log; fail "qgml train circle.csv failed"; }
cat train.log
grep -q "^automatic: model.N = 32 (N = 32 for D <= 3)" train.log || fail "N = 32 not chosen or not printed"
grep -q "^automatic: data.standardize = true" train.log || fail "standardisation not chosen or not printed"
# Packs of 16 doubles (builds for AVX-512): where chosen, printed with the setting that turns them off; with
# training.wide_packs = false, not chosen and not printed.
if grep -q "^automatic: the fused kernel in packs of" train.log; then
  grep -q "^automatic: the fused kernel in packs of 16 points, .*(training.wide_packs = false: 8)$" train.log ||
    fail "the pack width line names neither 16 points nor its setting"
fi
"$qgml" train circle.csv --training.wide_packs false --training.epochs 1 --output.directory runs-narrow \
  --output.plots false >narrow.log 2>&1 || { cat narrow.log; fail "qgml train --training.wide_packs false failed"; }
if grep -q "packs of" narrow.log; then cat narrow.log; fail "training.wide_packs = false still printed packs of 16"; fi
grep -q "^the loss has plateaued: stopped after epoch [0-9]* of at most 2000" train.log || fail "no plateau stop"
grep -q "^intrinsic dimension: mode 1 +- 0.00 (90 % interval \[1, 1\] over 200 resamples), .*: clear$" train.log || fail "the summary is not 'mode 1 ... clear'"
grep -qx "estimated intrinsic dimension: 1" train.log || fail "the estimate is not 1"
run=$(ls -d runs/circle_*/ | head -n 1)
grep -Eq "^  N: 32  # automatic: " "$run/config.yaml" || fail "config.yaml does not record the automatic N"
grep -Eq '^  standardize: true  # automatic: ' "$run/config.yaml" || fail "config.yaml does not record standardize"
grep -q '"verdict": "clear"' "$run/dimension_summary.json" || fail "dimension_summary.json has no verdict"
grep -q '"resamples": 200' "$run/dimension_summary.json" || fail "dimension_summary.json has no error bar"
# The dimension per scale (analysis.spread_scales 10,20,50,100,200,400): printed and recorded; a circle is
# 1-d at each.
grep -q "^dimension per scale (k nearest points, mean radius: mode, fraction at it): k 10, r [0-9.e-]*: 1 (.*; the same at every scale: d = 1 at k = 10 .. 400 (radius " train.log ||
  fail "no dimension per scale line, or not 1 at every scale"
grep -q '"scale_verdict": "the same at every scale: d = 1 at k = 10 .. 400' "$run/dimension_summary.json" ||
  fail "dimension_summary.json has no scale verdict"
grep -q '"neighbours": 400' "$run/dimension_summary.json" || fail "dimension_summary.json has no scales"
# The automatic neighbourhood of the spread check (2 % of the points, at least 10) and the local covariance
# reading: printed and recorded.
grep -qx "automatic: analysis.spread_neighbours = 10 (2 % of the 400 points, within 10 .. 400)" train.log ||
  fail "the automatic spread neighbourhood is not printed"
grep -q '"spread_neighbours": 10,' "$run/dimension_summary.json" || fail "dimension_summary.json: spread_neighbours"
grep -q "^local covariance (k nearest points: mode of its reading): k 10: 1, " train.log ||
  fail "no local covariance line, or its reading at k = 10 is not 1"
grep -q '"local_scale": 10,' "$run/dimension_summary.json" || fail "dimension_summary.json: local_scale"
grep -q '"interval": \[' "$run/dimension_summary.json" || fail "dimension_summary.json has no interval"
grep -q '"N_origin": "automatic: ' "$run/dimension_summary.json" || fail "dimension_summary.json has no N origin"
grep -q '"stopped_early": true' "$run/dimension_summary.json" || fail "dimension_summary.json: stopped_early"
grep -q '"scale": ' "$run/standardization.json" || fail "no standardization.json"
head -n 1 "$run/per_point.csv" | grep -q ",dimension,confidence,gap_ratio$" || fail "per_point.csv lacks confidence"

# --quiet: exactly the estimate, on stdout; nothing on stderr.
"$qgml" train circle.csv --quiet --output.directory runs --output.plots false \
  >quiet.out 2>quiet.err || fail "quiet run failed"
[ "$(cat quiet.out)" = "estimated intrinsic dimension: 1" ] || { cat quiet.out; fail "--quiet printed more"; }
[ ! -s quiet.err ] || { cat quiet.err; fail "--quiet wrote to stderr"; }

# The run resumes from its own config.yaml (automatic choices recorded as values).
"$qgml" train --resume "$run" --training.epochs 2000 >resume.log 2>&1 || { cat resume.log; fail "resume failed"; }
echo "ok: $(grep -c automatic train.log) automatic choices printed and recorded, estimate 1, quiet is one line"
