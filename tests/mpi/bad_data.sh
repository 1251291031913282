#!/usr/bin/env bash
# bad_data.sh WORKDIR QGML CONFIG
# A CSV whose only bad row lies in the last rank's shard: on 1, 3 and 4 ranks every rank exits
# non-zero with the same message naming the file, line and column, nothing hangs (CTest's timeout)
# and no run directory is created.
set -u
work=$1 qgml=$2 config=$3
read -r -a mpiexec <<<"${QGML_MPIEXEC:?}"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
{
  echo "x,y,z"
  for i in $(seq 1 397); do echo "0.6,0.8,0"; done
  echo "0.6,oops,0"
  echo "0,0,1"
  echo "0,1,0"
} >points.csv   # line 399 holds the bad value: rank P-1 of P holds it
for np in 1 3 4; do
  "${mpiexec[@]}" "$np" "$qgml" train "$config" --data.file points.csv --output.directory "runs$np" \
    --training.epochs 2 --output.plots false --kokkos-disable-warnings >"np$np.log" 2>&1
  rc=$?
  [ "$rc" -ne 0 ] || { echo "FAIL: $np ranks exited 0"; cat "np$np.log"; exit 1; }
  expected="points.csv.*line 399, column 2: 'oops' is not a number"
  n=$(grep -c "qgml: error: .*$expected" "np$np.log")
  [ "$n" -eq "$np" ] || { echo "FAIL: $n of $np ranks printed the error"; cat "np$np.log"; exit 1; }
  if [ "$np" -gt 1 ]; then
    [ "$(grep -c "qgml: error: rank $((np - 1)) of $np: " "np$np.log")" -eq "$np" ] ||
      { echo "FAIL: the message does not name the failing rank"; cat "np$np.log"; exit 1; }
  fi
  [ ! -e "runs$np" ] || { echo "FAIL: a run directory was created"; ls -R "runs$np"; exit 1; }
  echo "ok: $np ranks: $(grep -m1 'qgml: error' "np$np.log")"
done
# Commands that are not distributed refuse to run on several ranks, on every rank alike.
"${mpiexec[@]}" 2 "$qgml" eval --matrices m.npy --data points.csv --kokkos-disable-warnings >eval.log 2>&1 &&
  { echo "FAIL: eval on 2 ranks exited 0"; exit 1; }
[ "$(grep -c "qgml eval runs in one process; under MPI (2 ranks) only train and estimate are distributed" eval.log)" -eq 2 ] ||
  { echo "FAIL: eval on 2 ranks"; cat eval.log; exit 1; }
echo "ok: eval refuses 2 ranks"
