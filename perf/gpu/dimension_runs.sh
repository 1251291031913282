#!/usr/bin/env bash
# perf/gpu/dimension_runs.sh: default `qgml train` runs timed end to end on the machine at hand (the GPU
# where the build is a CUDA one): the README's quick start and generated hypercubes of D = 20 and 100,
# every other setting at its default. One JSON line per run (suite "default_run": the case, the wall
# seconds, the exit status and the printed dimension line) in OUT/dimension_runs.jsonl, the programs'
# output in OUT/dimension_runs.log.
#
#   perf/gpu/dimension_runs.sh QGML_BINARY OUT_DIR [SECONDS_PER_RUN]
set -uo pipefail
bin="${1:?usage: dimension_runs.sh QGML_BINARY OUT_DIR [SECONDS_PER_RUN]}"
out="${2:?usage: dimension_runs.sh QGML_BINARY OUT_DIR [SECONDS_PER_RUN]}"
limit="${3:-120}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$out"
work="$(mktemp -d /tmp/qgml-dimension-runs.XXXXXX)"
revision="${QGML_REVISION:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
# The build: qgml and Kokkos versions, backends, execution space and concurrency (`qgml info`).
build_info="$("$bin" info --kokkos-disable-warnings 2>/dev/null | head -n 4 | paste -sd ';' -)"
run_case() {
  local name="$1"
  shift
  local t0 t1 rc line
  t0=$(date +%s.%N)
  timeout "$limit" "$bin" train "$@" --output.directory "$work/$name" --output.plots false >"$work/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  { echo "== $name: $bin train $*"; cat "$work/$name.log"; } >>"$out/dimension_runs.log"
  line="$(grep -E "intrinsic dimension" "$work/$name.log" | tail -n 1)"
  python3 - "$name" "$t0" "$t1" "$rc" "$line" "$revision" "$*" "$build_info" <<'EOF' >>"$out/dimension_runs.jsonl"
import json, os, sys, datetime
name, t0, t1, rc, line, rev, args, build = sys.argv[1:9]
print(json.dumps({"suite": "default_run", "case": name, "seconds": round(float(t1) - float(t0), 3),
                  "exit": int(rc), "dimension_line": line, "args": args, "git_revision": rev, "build": build,
                  "omp_num_threads": os.environ.get("OMP_NUM_THREADS", ""),
                  "utc": datetime.datetime.now(datetime.timezone.utc).isoformat()}))
EOF
}
run_case quickstart "$root/examples/configs/fuzzy_sphere.yaml"
run_case hypercube_d5_D20 --data.generator hypercube --data.dimension 20 --data.intrinsic_dimension 5
run_case hypercube_d10_D100 --data.generator hypercube --data.dimension 100 --data.intrinsic_dimension 10
cat "$out/dimension_runs.jsonl"
rm -rf "$work"
