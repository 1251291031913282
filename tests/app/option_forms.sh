#!/usr/bin/env bash
# option_forms.sh WORKDIR QGML CONFIG SPIN1_NPY
# Every option of every command that takes "--key value" also takes "--key=value", with the same effect;
# eval's --w = 0.25 is taken and --w -1 refused (w >= 0).
set -u
work=$1 qgml=$2 config=$3 spin=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export OMP_PROC_BIND=false
fail() { echo "FAIL: $*"; exit 1; }
q() { "$qgml" "$@" --kokkos-disable-warnings; }

# generate: --data.key=value and --out=FILE give the same points as the spaced form.
q generate --data.generator=sphere --data.points=40 --data.seed=5 --out=a.csv >gen1.log 2>&1 || { cat gen1.log; fail "generate ="; }
q generate --data.generator sphere --data.points 40 --data.seed 5 --out b.csv >gen2.log 2>&1 || { cat gen2.log; fail "generate"; }
cmp -s a.csv b.csv || fail "generate: --key=value and --key value differ"

# eval: every option in both forms, identical outputs.
q eval --matrices="$spin" --data=a.csv --w=0.25 --penalty=frobenius --penalty-weight=0.5 --precision=double \
  --out=eval1 >eval1.log 2>&1 || { cat eval1.log; fail "eval ="; }
q eval --matrices "$spin" --data a.csv --w 0.25 --penalty frobenius --penalty-weight 0.5 --precision double \
  --out eval2 >eval2.log 2>&1 || { cat eval2.log; fail "eval"; }
cmp -s eval1/loss.json eval2/loss.json || fail "eval: --key=value and --key value differ"
grep -q '"w": 0.25' eval1/loss.json || fail "eval: --w=0.25 not used"
if q eval --matrices "$spin" --data a.csv --w -1 --out eval3 >bad.log 2>&1; then fail "eval accepted --w -1"; fi
grep -q -- "--w = '-1': out of range" bad.log || { cat bad.log; fail "eval --w -1: wrong message"; }
if q eval --matrices "$spin" --data a.csv --w=nan --out eval3 >bad.log 2>&1; then fail "eval accepted --w=nan"; fi
grep -q -- "--w = 'nan': expected a number" bad.log || { cat bad.log; fail "eval --w=nan: wrong message"; }

# estimate: every option in both forms.
q estimate --matrices="$spin" --data=a.csv --metric=covariance --min-gap-ratio=3 --noise-floor=0.01 \
  --first-gap-exponent=0.5 --precision=double --out=est1 >est1.log 2>&1 || { cat est1.log; fail "estimate ="; }
q estimate --matrices "$spin" --data a.csv --metric covariance --min-gap-ratio 3 --noise-floor 0.01 \
  --first-gap-exponent 0.5 --precision double --out est2 >est2.log 2>&1 || { cat est2.log; fail "estimate"; }
cmp -s est1/per_point.csv est2/per_point.csv || fail "estimate: --key=value and --key value differ"
grep -q "covariance metric" est1.log || fail "estimate: --metric=covariance not used"
# estimate: every analysis.* setting as --analysis.key, in both forms, the same as its short option; an
# unknown key, a value out of range and a setting given both ways are refused.
q estimate --matrices "$spin" --data a.csv --metric covariance --analysis.min_gap_ratio=3 \
  --analysis.noise_floor 0.01 --analysis.first_gap_exponent=0.5 --out est3 >est3.log 2>&1 || { cat est3.log; fail "estimate --analysis.key"; }
cmp -s est1/per_point.csv est3/per_point.csv || fail "estimate: --analysis.min_gap_ratio etc. differ from the short options"
q estimate --matrices "$spin" --data a.csv --analysis.spread_neighbours=12 --analysis.local_pca_agree false \
  --out est4 >est4.log 2>&1 || { cat est4.log; fail "estimate --analysis.spread_neighbours"; }
grep -q '"spread_neighbours": 12' est4/dimension_summary.json || fail "estimate: --analysis.spread_neighbours=12 not used"
if q estimate --matrices "$spin" --data a.csv --analysis.bogus 1 --out est5 >bad.log 2>&1; then fail "estimate accepted --analysis.bogus"; fi
grep -q "unknown setting 'analysis.bogus'" bad.log || { cat bad.log; fail "estimate --analysis.bogus: wrong message"; }
if q estimate --matrices "$spin" --data a.csv --analysis.local_pca_band=2 --out est5 >bad.log 2>&1; then fail "estimate accepted --analysis.local_pca_band=2"; fi
grep -q "analysis.local_pca_band" bad.log || { cat bad.log; fail "estimate --analysis.local_pca_band=2: wrong message"; }
if q estimate --matrices "$spin" --data a.csv --min-gap-ratio 3 --analysis.min_gap_ratio 3 --out est5 >bad.log 2>&1; then
  fail "estimate accepted --min-gap-ratio with --analysis.min_gap_ratio"
fi
grep -q "are the same setting" bad.log || { cat bad.log; fail "estimate: both forms of one setting: wrong message"; }
test ! -e est5 || fail "estimate: a refused command left est5"

# fuzzy-sphere.
q fuzzy-sphere --N=4 --T=20 >fs.log 2>&1 || { cat fs.log; fail "fuzzy-sphere ="; }
grep -q "fuzzy sphere N = 4 .* 20 points" fs.log || { cat fs.log; fail "fuzzy-sphere: --N=4 --T=20 not used"; }

# train: settings and --resume=DIR.
q train "$config" --training.epochs=2 --data.points=60 --training.checkpoint_every=1 --analysis.enabled=false \
  --output.plots=false --output.directory=runs >train.log 2>&1 || { cat train.log; fail "train ="; }
run=$(ls -d runs/*/ | head -n 1)
grep -Eq "^  epochs: 2 +# command line" "$run/config.yaml" || fail "train: --training.epochs=2 not recorded"
q train --resume="$run" --training.epochs=3 >resume.log 2>&1 || { cat resume.log; fail "train --resume=DIR"; }

# tune.
q tune "$config" --data.points=60 --batches=16,60 --epochs-per-trial=1 --memory-budget=1GiB --json=tune.json \
  >tune.log 2>&1 || { cat tune.log; fail "tune ="; }
grep -q '"epochs_per_trial": 1' tune.json || fail "tune: --epochs-per-trial=1 not used"

# sample: every option in both forms, identical samples; --resume=DIR.
opts=(sampler=mala chains=8 steps=6 warmup=2 beta=1 init=data thin=1 step-size=0.05 leapfrog=3
      target-acceptance=0.6 seed=3)
eq=() sp=()
for o in "${opts[@]}"; do eq+=("--$o"); sp+=("--${o%%=*}" "${o#*=}"); done
q sample "$run" "${eq[@]}" --out=s1 >s1.log 2>&1 || { cat s1.log; fail "sample ="; }
q sample "$run" "${sp[@]}" --out s2 >s2.log 2>&1 || { cat s2.log; fail "sample"; }
cmp -s s1/samples.npy s2/samples.npy || fail "sample: --key=value and --key value differ"
q sample --resume=s1 --steps=8 >s3.log 2>&1 || { cat s3.log; fail "sample --resume=DIR"; }
echo "ok: --key=value for every option of generate, eval, estimate, fuzzy-sphere, train, tune, sample"
