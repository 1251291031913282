#!/usr/bin/env bash
# sample.sh WORKDIR QGML CONFIG
# qgml sample on a trained run: every sampler writes its sample directory; --resume with more --steps
# gives byte-identical samples and state to one uninterrupted run; bad options are refused by name.
set -u
work=$1 qgml=$2 config=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export OMP_PROC_BIND=false
fail() { echo "FAIL: $*"; exit 1; }
"$qgml" train "$config" --training.epochs 15 --output.plots false --analysis.enabled false --output.directory runs \
  --kokkos-disable-warnings >train.log 2>&1 || { cat train.log; fail "training"; }
run=$(ls -d runs/*/ | head -n 1)
shape() { head -c 128 "$1" | tr -d '\0' | grep -o "'shape': ([0-9, ]*)"; }

"$qgml" sample "$run" --chains 64 --steps 120 --warmup 40 --out whole >whole.log 2>&1 || { cat whole.log; fail "sample"; }
for f in samples.npy acceptance.npy sample.json state.npy; do [ -f "whole/$f" ] || fail "no whole/$f"; done
[ "$(shape whole/samples.npy)" = "'shape': (120, 64, 3)" ] || fail "samples.npy shape $(shape whole/samples.npy)"
grep -q '"r_hat"' whole/sample.json || fail "no r_hat in sample.json"
grep -q "automatic: step size auto" whole.log || fail "the automatic step size is not printed"
grep -q "automatic: init auto: data" whole.log || fail "the automatic init is not printed"
grep -q "split R-hat" whole.log || fail "no diagnostics printed"

# Exact continuation: 60 sampling steps, then --resume to 120.
"$qgml" sample "$run" --chains 64 --steps 60 --warmup 40 --out part >part.log 2>&1 || { cat part.log; fail "part"; }
[ "$(shape part/samples.npy)" = "'shape': (60, 64, 3)" ] || fail "part samples.npy shape $(shape part/samples.npy)"
"$qgml" sample --resume part --steps 120 >resume.log 2>&1 || { cat resume.log; fail "resume"; }
cmp -s whole/samples.npy part/samples.npy || fail "resumed samples differ from the uninterrupted run"
cmp -s whole/state.npy part/state.npy || fail "resumed state differs from the uninterrupted run"
cmp -s whole/acceptance.npy part/acceptance.npy || fail "resumed acceptance differs"

# The other samplers, thinning and a Gaussian start.
"$qgml" sample "$run" --sampler hmc --leapfrog 4 --chains 32 --steps 20 --warmup 10 --thin 5 --init gaussian \
  --out hmc >hmc.log 2>&1 || { cat hmc.log; fail "hmc"; }
[ "$(shape hmc/samples.npy)" = "'shape': (4, 32, 3)" ] || fail "hmc samples.npy shape $(shape hmc/samples.npy)"
"$qgml" sample "$run" --sampler ula --chains 32 --steps 10 --warmup 0 --step-size 0.05 --out ula >ula.log 2>&1 ||
  { cat ula.log; fail "ula"; }
grep -q '"step_size": 0.05' ula/sample.json || fail "ula: the given step size is not recorded"

# Refusals, each naming what is wrong.
expect() {
  local pattern=$1; shift
  if "$qgml" "$@" >bad.log 2>&1; then fail "accepted: $*"; fi
  grep -q -- "$pattern" bad.log || { cat bad.log; fail "message for '$*' lacks: $pattern"; }
}
expect "--chains = '2e2': expected an integer" sample "$run" --chains 2e2 --out x1
expect "already holds a sampling run" sample "$run" --out whole
expect "--beta cannot change on resume" sample --resume part --beta 2
expect "unknown sampler 'gibbs'" sample "$run" --sampler gibbs --out x2
expect "beta = .*expected > 0" sample "$run" --beta -1 --out x3
expect "no final_matrices.npy" sample . --out x4
echo "ok: samplers, exact resume, refusals"
