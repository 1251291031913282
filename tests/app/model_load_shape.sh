#!/usr/bin/env bash
# model_load_shape.sh WORKDIR QGML CONFIG
# --model.load: N comes from the loaded matrices. A run started from an N = 2 configuration with no
# model.N set logs N = 2, trains N = 2 and writes N = 2 (noting the file) into its config.yaml, and
# --resume continues it; a model.N that disagrees with the file is an error naming both values.
set -u
work=$1 qgml=$2 config=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
export OMP_PROC_BIND=false
fail() { echo "FAIL: $*"; exit 1; }
common=(--data.points 60 --training.batch_size 20 --output.plots false --analysis.enabled false
        --output.directory runs --kokkos-disable-warnings)

# An N = 2 configuration to load: the final matrices of a one-epoch N = 2 run.
"$qgml" train "$config" --model.N 2 --training.epochs 1 --output.name n2 "${common[@]}" >make.log 2>&1 ||
  { cat make.log; fail "the N = 2 run failed"; }
n2=$(ls -d runs/n2*/ | head -n 1)final_matrices.npy
[ -f "$n2" ] || fail "no $n2"

# The config without its model.N line: N is taken from the file.
sed '/^  N:/d' "$config" >no_n.yaml
"$qgml" train no_n.yaml --model.load "$n2" --training.epochs 2 --output.name loaded "${common[@]}" >load.log 2>&1 ||
  { cat load.log; fail "training from the loaded N = 2 matrices failed"; }
cat load.log
grep -Eq "^qgml train: N = 2 \(from model.load .*final_matrices.npy\), D = 3," load.log ||
  fail "the log does not show the loaded N = 2"
run=$(ls -d runs/loaded*/ | head -n 1)
grep -Eq '^  N: 2  # taken from model.load .*final_matrices.npy$' "$run/config.yaml" ||
  { cat "$run/config.yaml"; fail "config.yaml does not record N = 2 from the file"; }
/usr/bin/python3 - "$run/final_matrices.npy" <<'PY' || fail "the trained matrices are not 3 x 2 x 2"
import ast, sys
data = open(sys.argv[1], "rb").read()
header = ast.literal_eval(data[10:10 + int.from_bytes(data[8:10], "little")].decode())
assert tuple(header["shape"]) == (3, 2, 2), header
PY
"$qgml" train --resume "$run" --training.epochs 3 --output.plots false --kokkos-disable-warnings >resume.log 2>&1 ||
  { cat resume.log; fail "--resume of the loaded run failed"; }
grep -q "^qgml train: N = 2" resume.log || fail "the resumed run does not train N = 2"

# A model.N that disagrees with the file: an error naming both, and no run directory.
rm -rf bad && mkdir bad && cd bad
"$qgml" train ../no_n.yaml --model.load "../$n2" --model.N 7 "${common[@]}" >out.log 2>err.log &&
  fail "model.N = 7 with an N = 2 file was accepted"
grep -Eq "model.N = 7 \(command line[^)]*\) disagrees with model.load: '.*final_matrices.npy' has N = 2" err.log ||
  { cat err.log; fail "the error does not name both values"; }
[ -d runs ] && [ -n "$(ls -A runs)" ] && fail "a run directory was left behind"
echo "ok: N taken from the file, recorded, resumed; a disagreeing model.N rejected: $(head -c 200 err.log)"
