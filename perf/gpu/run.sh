#!/usr/bin/env bash
# perf/gpu/run.sh: builds qgml for this machine's NVIDIA GPU without network, then tests, sanitizes and
# benchmarks it (see perf/gpu/README.md).
#
#   perf/gpu/run.sh [options] [STAGE...]        STAGE: build test sanitize bench all (default all)
#
#   build     unpack the sources (--sources), build yaml-cpp, Kokkos + KokkosKernels (bootstrap --offline)
#             and Catch2 into the cache, configure qgml (cuda backend, the GPU's architecture) and build
#             qgml_tests, qgml_app and the benchmark drivers (eigh, train, metric, products)
#   test      ctest (the whole CUDA suite, or --ctest-regex)
#   sanitize  compute-sanitizer memcheck, racecheck and initcheck on qgml_tests, each on a subset of test
#             cases (--memcheck-tests, --racecheck-tests, --initcheck-tests; the whole suite is too slow
#             under the sanitizer); reports judged by sanitizer_report.py (its documented Kokkos filter)
#   checks    test and sanitize's three tools at once (none of them is timed; perf/gpu/check.sh)
#   bench     perf/gpu/bench.py: eigh / train / metric against cuSOLVER and PyTorch on the same GPU
#
# Options:
#   --sources FILE    the tarball of perf/gpu/pack_sources.sh (default .gpu-carry/qgml-gpu-sources.tar.gz)
#   --arch ARCH       Kokkos GPU architecture (default: from nvidia-smi's compute capability)
#   --backend B       cuda (default) or openmp: a CPU flow check (no sanitizer, torch on the CPU)
#   --cache DIR       dependency cache (default build/gpu-deps)
#   --prebuilt FILE   a CUDA build tree compiled elsewhere (perf/gpu/pack_prebuilt.sh): unpacked under
#                     its original absolute paths (a symbolic link maps the original checkout to this
#                     one), its build steps marked done, its libraries put on LD_LIBRARY_PATH
#   --build DIR       qgml build tree (default build/gpu-<arch>, openmp: build/gpu-openmp); an existing
#                     tree is re-used as configured
#   --out DIR         results and logs (default perf/results/gpu-<UTC date>)
#   --budget S        seconds this invocation may take (0: no limit); a step that cannot start in time is
#                     skipped and left for the next invocation
#   --jobs N          build jobs (default: all cores)
#   --python PY       interpreter with torch (default python3)
#   --quick           small benchmark cases (a flow check)
#   --checks-limit S  seconds for each step of `checks` (they run at once; default 420)
#   --bench-args "A"  more options for bench.py (e.g. "--train-peers torch_vectorised --case-timeout 90")
#   --test-timeout S  per-test limit of the ctest step (default 600)
#   --ctest-regex RE, --memcheck-tests SPEC, --racecheck-tests SPEC, --initcheck-tests SPEC   narrow the test steps
#   --force           redo steps that finished in an earlier invocation on this build tree
#   --dry-run         print the steps and their commands, run nothing
# Each step is logged with its time in OUT/steps.tsv and OUT/logs/STEP.log (also packed into
# OUT/logs.tar.gz); a failed step is reported and the next one runs; the exit status is 1 if any step
# failed or timed out, 0 otherwise. A finished step leaves a stamp in BUILD/.gpu-run, so an invocation
# that was cut off can be repeated and goes on where it stopped.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

sources="$root/.gpu-carry/qgml-gpu-sources.tar.gz"
arch="" backend=cuda cache="" build="" out="" budget=0 jobs="$(nproc 2>/dev/null || echo 4)"
python=python3 quick=0 force=0 dry=0 ctest_regex="" prebuilt="" test_timeout=600 bench_args="" checks_limit=420
# Sanitizer subsets: the kernels (eigensolvers, Hamiltonians, gradient, observables, metric, trainer
# residency), without the long training runs, file formats and the program's cases.
memcheck_tests="[jacobi],[hamiltonian],[gradient]"
racecheck_tests="[jacobi]"
initcheck_tests="[jacobi]"
stages=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sources) sources="$2"; shift 2 ;;
    --arch) arch="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    --cache) cache="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --prebuilt) prebuilt="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    --bench-args) bench_args="$2"; shift 2 ;;
    --checks-limit) checks_limit="$2"; shift 2 ;;
    --ctest-regex) ctest_regex="$2"; shift 2 ;;
    --test-timeout) test_timeout="$2"; shift 2 ;;
    --memcheck-tests) memcheck_tests="$2"; shift 2 ;;
    --racecheck-tests) racecheck_tests="$2"; shift 2 ;;
    --initcheck-tests) initcheck_tests="$2"; shift 2 ;;
    --force) force=1; shift ;;
    --dry-run) dry=1; shift ;;
    -h|--help) sed -n '2,42p' "$0"; exit 0 ;;
    build|test|sanitize|bench|checks) stages+=("$1"); shift ;;
    all) stages+=(build test sanitize bench); shift ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#stages[@]} -gt 0 ] || stages=(build test sanitize bench)
case "$backend" in cuda|openmp) ;; *) echo "run.sh: --backend must be cuda or openmp" >&2; exit 2 ;; esac
t_start=$(date +%s)
export PATH="$PATH:/usr/local/cuda/bin"
# CMake >= 4 refuses projects that declare compatibility with CMake < 3.5 (yaml-cpp 0.7.0 does).
export CMAKE_POLICY_VERSION_MINIMUM=3.5

log() { echo "== run.sh [$(( $(date +%s) - t_start )) s] $*" >&2; }

if [ -n "$prebuilt" ]; then
  [ -f "$prebuilt" ] || { echo "run.sh: --prebuilt $prebuilt: no such file" >&2; exit 2; }
  read -r orig_root orig_build < <(tar -xOf "$prebuilt" ./qgml-prebuilt.txt) ||
    { echo "run.sh: $prebuilt has no qgml-prebuilt.txt: not made by pack_prebuilt.sh" >&2; exit 2; }
  if [ "$orig_root" != "$root" ] && [ "$(readlink -f "$orig_root" 2>/dev/null)" != "$root" ]; then
    if [ -e "$orig_root" ]; then
      echo "run.sh: the prebuilt tree was made under $orig_root, which exists here and is not this checkout" >&2
      exit 2
    fi
    mkdir -p "$(dirname "$orig_root")" && ln -s "$root" "$orig_root"
    log "prebuilt: $orig_root -> $root (a symbolic link: the CTest files name the original paths)"
  fi
  tar -C / -xf "$prebuilt" --exclude ./qgml-prebuilt.txt --no-overwrite-dir --keep-directory-symlink
  build="$orig_build" backend=cuda
  arch="$(sed -n 's/^QGML_CUDA_ARCH:[A-Z]*=//p' "$build/CMakeCache.txt")"
  # CUDA's own libraries (cuBLAS, cuSOLVER) come from the machine: its toolkit's lib64 as the fallback.
  export LD_LIBRARY_PATH="$build/prebuilt-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}:/usr/local/cuda/lib64"
  # Tests that run `cmake -E ...` name the build machine's cmake; point them at this machine's.
  orig_cmake="$(sed -n 's/^CMAKE_COMMAND:[A-Z]*=//p' "$build/CMakeCache.txt")"
  if [ -n "$orig_cmake" ] && [ ! -x "$orig_cmake" ] && command -v cmake >/dev/null; then
    find "$build" -name CTestTestfile.cmake -exec sed -i "s|\"$orig_cmake\"|\"$(command -v cmake)\"|g" {} +
    log "prebuilt: the tests' $orig_cmake is $(command -v cmake) here"
  fi
  # Likewise the Python of the perf tests (the build machine's interpreter is not here; python3 here has
  # torch).
  for orig_python in $(sed -n 's/^\(QGML_PERF_PYTHON\|_\?Python3_EXECUTABLE\):[A-Z]*=//p' "$build/CMakeCache.txt" | sort -u); do
    here_python="$(command -v python3 || true)"
    if [ -n "$here_python" ] && [ "$orig_python" != "$here_python" ]; then
      find "$build" -name CTestTestfile.cmake -exec sed -i "s|\"$orig_python\"|\"$here_python\"|g" {} +
      log "prebuilt: the tests' $orig_python is $here_python here"
    fi
  done
  log "prebuilt: $prebuilt unpacked into $build (architecture $arch)"
fi

# Compute capability (nvidia-smi) -> Kokkos architecture. Newer GPUs than the newest known architecture
# run its code through the embedded PTX (patch-kokkos-cuda13.sh lets Kokkos 3.4.01 start there).
arch_of_cc() {
  case "$1" in
    7.0) echo VOLTA70 ;; 7.2) echo VOLTA72 ;; 7.5) echo TURING75 ;; 8.0) echo AMPERE80 ;;
    8.6|8.7|8.9) echo AMPERE86 ;; 9.*|1[0-9].*) echo HOPPER90 ;; *) return 1 ;;
  esac
}
gpu_cc=""
if [ "$backend" = cuda ]; then
  if command -v nvidia-smi >/dev/null; then
    gpu_cc="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' ')"
    log "GPU: $(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1)"
  fi
  if [ -z "$arch" ]; then
    if [ -n "$gpu_cc" ] && arch="$(arch_of_cc "$gpu_cc")"; then
      log "compute capability $gpu_cc -> Kokkos architecture $arch"
    else
      arch=AMPERE80
      log "no GPU architecture detected (compute capability '${gpu_cc:-none}'); building for $arch"
    fi
  fi
fi
tag="$(echo "${arch:-$backend}" | tr '[:upper:]' '[:lower:]')"
[ "$backend" = openmp ] && tag=openmp
cache="${cache:-$root/build/gpu-deps}"
build="${build:-$root/build/gpu-$tag}"
out="${out:-$root/perf/results/gpu-$(date -u +%Y%m%d)}"
case "$cache" in /*) ;; *) cache="$PWD/$cache" ;; esac
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
state="$build/.gpu-run"
logs="$out/logs"
[ "$dry" = 1 ] || mkdir -p "$logs" "$state"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"

# ------------------------------------------------------------------------------------------ steps
# Each step is a function run under `timeout` in a child bash (hence the exports).
export root cache build out backend arch jobs python quick ctest_regex memcheck_tests racecheck_tests initcheck_tests
export test_timeout here bench_args
export prebuilt
export sources sanitizer logs
export QGML_LAUNCHER="${launcher[*]}"

step_deps() {
  set -e
  if [ ! -f "$cache/src/trilinos-13.2.0-4/.extracted" ] || [ ! -d "$cache/nlohmann_json" ]; then
    [ -f "$sources" ] || { echo "no sources in $cache and no tarball $sources (perf/gpu/pack_sources.sh)"; exit 1; }
    mkdir -p "$cache"
    tar -xzf "$sources" -C "$cache"
    echo "unpacked $sources into $cache"
  fi
  if [ ! -f "$cache/yaml-cpp/.done" ]; then
    rm -rf "$cache/yaml-cpp" "$cache/build-yaml-cpp"
    # shellcheck disable=SC2086  # QGML_LAUNCHER is empty or one word
    cmake -S "$cache/src/yaml-cpp-0.7.0" -B "$cache/build-yaml-cpp" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$cache/yaml-cpp" -DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF \
      -DYAML_CPP_BUILD_CONTRIB=OFF -DYAML_BUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON $QGML_LAUNCHER
    cmake --build "$cache/build-yaml-cpp" -j "$jobs"
    cmake --install "$cache/build-yaml-cpp"
    rm -rf "$cache/build-yaml-cpp"
    touch "$cache/yaml-cpp/.done"
  fi
  local args=(--backend "$backend" --cache "$cache" --offline)
  [ "$backend" = cuda ] && args+=(--arch "$arch")
  bash "$root/cmake/bootstrap/qgml-deps.sh" "${args[@]}" >"$cache/.prefix-$backend-${arch:-cpu}"
  echo "Kokkos prefix: $(tail -n 1 "$cache/.prefix-$backend-${arch:-cpu}")"
}

step_configure() {
  set -e
  if [ -f "$build/CMakeCache.txt" ]; then
    cmake "$build"
    return
  fi
  local prefix
  prefix="$(tail -n 1 "$cache/.prefix-$backend-${arch:-cpu}")"
  local args=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DQGML_BACKEND="$backend"
              -DKokkos_ROOT="$prefix" -DKokkosKernels_ROOT="$prefix" -DQGML_DEPS_CACHE="$cache"
              "-DCMAKE_PREFIX_PATH=$cache/yaml-cpp;$cache/nlohmann_json;$cache/catch2"
              -DQGML_BUILD_EXAMPLES=OFF)
  [ "$backend" = cuda ] && args+=(-DQGML_CUDA_ARCH="$arch" -DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper")
  # shellcheck disable=SC2086
  cmake "${args[@]}" $QGML_LAUNCHER
}

step_compile() {
  cmake --build "$build" -j "$jobs" --target qgml_tests qgml_app qgml_bench_eigh qgml_bench_train qgml_bench_metric qgml_bench_products
}

step_ctest() {
  local args=(--test-dir "$build" --output-on-failure --timeout "$test_timeout" -j "$(( jobs > 8 ? 8 : jobs ))")
  [ -n "$ctest_regex" ] && args+=(-R "$ctest_regex")
  # A prebuilt tree holds binaries, not the objects a compile test rebuilds, nor the Kokkos install a
  # configure test builds against (both run in CI's cuda preset build; check.sh lists them).
  [ -n "$prebuilt" ] && args+=(-E "every public header compiles on its own|^build: configure check|^build: no extended lambda")
  OMP_PROC_BIND=false ctest "${args[@]}"
}

# compute-sanitizer TOOL TESTS: qgml_tests on the Catch2 test spec TESTS. The tool's reports go to
# logs/TOOL-reports.log (every one: --print-limit 0); sanitizer_report.py then fails the step on any
# report outside the documented Kokkos filter (none is filtered for memcheck) and appends its summary
# to OUT/sanitizers.jsonl.
sanitize() {
  local tool=$1 tests=$2 extra=() rc=0
  [ "$tool" = racecheck ] && extra=(--racecheck-report hazard)
  [ -x "$sanitizer" ] || { echo "compute-sanitizer not found"; return 1; }
  echo "compute-sanitizer --tool $tool ${extra[*]} on qgml_tests \"$tests\" ($("$sanitizer" --version | tail -n 1))"
  OMP_NUM_THREADS=2 OMP_PROC_BIND=false "$sanitizer" --tool "$tool" "${extra[@]}" --print-limit 0 \
    --log-file "$logs/$tool-reports.log" "$build/tests/qgml_tests" "$tests" || rc=$?
  echo "qgml_tests under $tool: exit $rc"
  python3 "$here/sanitizer_report.py" --tool "$tool" --json "$out/sanitizers.jsonl" "$logs/$tool-reports.log" &&
    [ "$rc" = 0 ]
}
step_memcheck() { sanitize memcheck "$memcheck_tests"; }
step_racecheck() { sanitize racecheck "$racecheck_tests"; }
step_initcheck() { sanitize initcheck "$initcheck_tests"; }

step_bench() {
  local args=(--build "$build" --out "$out/bench" --python "$python")
  [ "$backend" = cuda ] || args+=(--device cpu --eigh-impls qgml)
  [ "$quick" = 1 ] && args+=(--quick)
  [ "${STEP_LIMIT:-0}" -gt 0 ] && args+=(--deadline "$(( STEP_LIMIT - 40 ))")
  # shellcheck disable=SC2086  # --bench-args: bench.py options, split on blanks
  "$python" "$root/perf/gpu/bench.py" "${args[@]}" $bench_args
}
export -f step_deps step_configure step_compile step_ctest sanitize step_memcheck step_racecheck step_initcheck
export -f step_bench

failures=()
# run_step NAME LIMIT_S FUNCTION: runs FUNCTION under `timeout`, logs, records and stamps it.
run_step() {
  local name=$1 limit=$2 fn=$3
  if [ "$force" = 0 ] && [ -f "$state/$name.done" ]; then
    log "$name: done in an earlier invocation (--force redoes it)"
    return 0
  fi
  local now left
  now=$(date +%s)
  if [ "$budget" -gt 0 ]; then
    left=$(( budget - (now - t_start) - 20 ))
    if [ "$left" -lt 60 ]; then
      log "$name: skipped, ${left} s left of --budget $budget"
      [ "$dry" = 1 ] || printf '%s\tskipped\t0\t-\t%s\n' "$name" "budget" >>"$out/steps.tsv"
      skipped_budget=1
      return 0
    fi
    [ "$left" -lt "$limit" ] && limit=$left
  fi
  if [ "$dry" = 1 ]; then
    log "$name: would run $fn (limit $limit s)"
    declare -f "$fn" | sed 's/^/    /' >&2
    return 0
  fi
  log "$name: start (limit $limit s, log $logs/$name.log)"
  local rc=0
  STEP_LIMIT=$limit timeout --kill-after=20 "$limit" bash -c "$fn" >"$logs/$name.log" 2>&1 || rc=$?
  local took=$(( $(date +%s) - now )) status=ok
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then status=timeout; elif [ "$rc" != 0 ]; then status=failed; fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$took" "$rc" "$logs/$name.log" >>"$out/steps.tsv"
  if [ "$status" = ok ]; then
    touch "$state/$name.done"
    log "$name: ok ($took s)"
  else
    failures+=("$name")
    log "$name: $status (exit $rc, $took s); last lines of $logs/$name.log:"
    tail -n 25 "$logs/$name.log" | sed 's/^/    /' >&2
  fi
  [ "$status" = ok ]
}

skipped_budget=0
[ "$dry" = 1 ] || printf '# step\tstatus\tseconds\texit\tlog   (%s, backend %s, arch %s)\n' \
  "$(date -u +%FT%TZ)" "$backend" "${arch:--}" >>"$out/steps.tsv"
log "backend $backend, arch ${arch:--}, build $build, cache $cache, out $out, stages ${stages[*]}"
for stage in "${stages[@]}"; do
  case "$stage" in
    build)
      run_step deps 900 step_deps && run_step configure 600 step_configure && run_step compile 1800 step_compile ;;
    test)
      # Tests, sanitizer and benchmarks need the binaries: a fresh machine builds them first.
      [ -f "$state/compile.done" ] || [ "$dry" = 1 ] ||
        { run_step deps 900 step_deps && run_step configure 600 step_configure && run_step compile 1800 step_compile; }
      run_step ctest 900 step_ctest ;;
    sanitize)
      if [ "$backend" != cuda ]; then log "sanitize: skipped (compute-sanitizer needs the cuda backend)"; continue; fi
      [ -f "$state/compile.done" ] || [ "$dry" = 1 ] ||
        { run_step deps 900 step_deps && run_step configure 600 step_configure && run_step compile 1800 step_compile; }
      run_step memcheck 420 step_memcheck
      run_step racecheck 300 step_racecheck
      run_step initcheck 300 step_initcheck ;;
    checks)
      # The functional checks at once (ctest and the three sanitizers share the GPU; none is timed).
      [ -f "$state/compile.done" ] || [ "$dry" = 1 ] ||
        { run_step deps 900 step_deps && run_step configure 600 step_configure && run_step compile 1800 step_compile; }
      pids=() names=()
      for spec in "ctest $checks_limit step_ctest" "memcheck $checks_limit step_memcheck" \
                  "racecheck $checks_limit step_racecheck" "initcheck $checks_limit step_initcheck"; do
        read -r n l f <<<"$spec"
        if [ "$backend" != cuda ] && [ "$n" != ctest ]; then log "$n: skipped (compute-sanitizer needs the cuda backend)"; continue; fi
        run_step "$n" "$l" "$f" &
        pids+=($!) names+=("$n")
      done
      for i in "${!pids[@]}"; do wait "${pids[$i]}" || failures+=("${names[$i]}"); done ;;
    bench)
      [ -f "$state/compile.done" ] || [ "$dry" = 1 ] ||
        { run_step deps 900 step_deps && run_step configure 600 step_configure && run_step compile 1800 step_compile; }
      run_step bench 1200 step_bench ;;
  esac
done

if [ "$dry" = 0 ]; then
  tar -C "$out" -czf "$out/logs.tar.gz" logs steps.tsv 2>/dev/null
  echo >&2
  echo "Steps (also in $out/steps.tsv; logs in $logs and $out/logs.tar.gz):" >&2
  column -t -s $'\t' "$out/steps.tsv" >&2 2>/dev/null || cat "$out/steps.tsv" >&2
  grep -h "tests passed\|tests failed" "$logs/ctest.log" 2>/dev/null | tail -n 1 | sed 's/^/ctest: /' >&2
  [ -f "$out/sanitizers.jsonl" ] && python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(f"{r[\"tool\"]}: {r[\"status\"]}: {r[\"kept\"]} kept, {r[\"suppressed\"]} suppressed by the Kokkos filter ({r[\"summary\"]})")
' "$out/sanitizers.jsonl" >&2
  [ -f "$out/bench.md" ] && echo "benchmarks: $out/bench.md, $out/bench.jsonl" >&2
fi
log "finished: ${#failures[@]} step(s) failed${failures[*]:+ (${failures[*]})}$([ "$skipped_budget" = 1 ] && echo '; some skipped for the budget: run again')"
[ ${#failures[@]} -eq 0 ]
