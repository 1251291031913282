#!/usr/bin/env bash
# Configure-only checks of how qgml finds its dependencies (tests/CMakeLists.txt registers them):
#   configure_checks.sh embed   SOURCE KOKKOS_PREFIX WORK   qgml under a project that has Kokkos::kokkos
#   configure_checks.sh catch2  SOURCE KOKKOS_PREFIX WORK   Kokkos_ROOT given, no Catch2_DIR, an empty
#                                                           dependency cache: Catch2 is bootstrapped alone
set -euo pipefail
mode=$1 src=$2 kokkos=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
log="$work/configure.log"
fail() { echo "FAIL: $*"; tail -n 30 "$log"; exit 1; }
case "$mode" in
  embed)
    cmake -S "$src/tests/build/embed" -B "$work/build" -G Ninja -DQGML_SOURCE_DIR="$src" \
      -DKokkos_ROOT="$kokkos" -DCMAKE_PREFIX_PATH="$kokkos" -DQGML_BUILD_TESTS=OFF -DQGML_BUILD_PERF=OFF \
      -DQGML_BUILD_EXAMPLES=OFF -DQGML_DEPS_CACHE="$work/empty-cache" >"$log" 2>&1 || fail "configure failed"
    grep -q "using the enclosing project's Kokkos::kokkos target" "$log" || fail "the enclosing Kokkos was not used"
    if grep -q "bootstrapping dependencies" "$log" || [ -e "$work/empty-cache" ]; then fail "the bootstrap ran"; fi
    ;;
  catch2)
    cmake -S "$src" -B "$work/build" -G Ninja -DKokkos_ROOT="$kokkos" -DQGML_BUILD_APPS=OFF \
      -DQGML_BUILD_PERF=OFF -DQGML_BUILD_EXAMPLES=OFF -DQGML_BUILD_TESTS=ON \
      -DQGML_DEPS_CACHE="$work/cache" >"$log" 2>&1 || fail "configure failed"
    grep -q "Catch2 v3 not found; building it" "$log" || fail "Catch2 was not bootstrapped alone"
    [ -d "$work/cache/catch2" ] || fail "no Catch2 in the cache"
    [ ! -d "$work/cache/kokkos-openmp" ] && [ ! -d "$work/cache/kokkos-serial" ] || fail "Kokkos was bootstrapped"
    ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
echo "PASS: $mode"
