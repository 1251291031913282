#!/usr/bin/env bash
# Runs libFuzzer targets for a bounded number of executions each, from the seed corpus in
# tests/fuzz/corpus/<target>/, with a fixed seed; exits non-zero on the first crash, sanitizer report,
# timeout or out-of-memory (the input that caused it is kept in $QGML_FUZZ_ARTIFACTS, default
# ./fuzz-artifacts/, and printed with the report).
#   run_fuzzers.sh BIN_DIR RUNS [TARGET...]     (no TARGET: all five)
set -euo pipefail
bin=$1 runs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_config fuzz_csv fuzz_npy_points fuzz_npy_matrices fuzz_checkpoint)
artifacts=${QGML_FUZZ_ARTIFACTS:-$PWD/fuzz-artifacts}
mkdir -p "$artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
# The targets write their input to a file per execution: keep it in memory where possible.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=${QGML_FUZZ_TMPDIR:-/dev/shm}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Largest input per target: a settings file or CSV of a few KiB, an NPY file of a few rows, one
# checkpoint file (the first byte chooses which).
max_len() {
  case $1 in
    fuzz_config) echo 4096 ;;
    fuzz_csv) echo 2048 ;;
    *) echo 1024 ;;
  esac
}
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  start=$(date +%s.%N)
  set +e
  "$bin/$t" "$work" "$here/corpus/$t" -runs="$runs" -seed=1 -max_len="$(max_len "$t")" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$t-" > "$work.log" 2>&1
  rc=$?
  set -e
  end=$(date +%s.%N)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work.log")
  printf '%-18s %8s executions in %6.1f s, exit %d\n' "$t" "${execs:-?}" "$(echo "$end - $start" | bc)" "$rc"
  if [ "$rc" -ne 0 ]; then
    tail -n 60 "$work.log"
    rm -rf "$work" "$work.log"
    exit "$rc"
  fi
  rm -rf "$work" "$work.log"
  trap - EXIT
done
