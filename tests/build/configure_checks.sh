#!/usr/bin/env bash
# Configure-only checks of how qgml finds its dependencies (tests/CMakeLists.txt registers them):
#   configure_checks.sh embed   SOURCE KOKKOS_PREFIX WORK   qgml under a project that has Kokkos::kokkos
#   configure_checks.sh catch2  SOURCE KOKKOS_PREFIX WORK   Kokkos_ROOT given, no Catch2_DIR, an empty
#                                                           dependency cache: Catch2 is bootstrapped alone
#   configure_checks.sh static-nopic SOURCE KOKKOS_PREFIX WORK KOKKOS_SOURCE
#                                     a static Kokkos built from KOKKOS_SOURCE without position-independent
#                                     code: configure refuses it for the C interface and names the fix;
#                                     with QGML_BUILD_BINDINGS=OFF it is accepted
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
  static-nopic)
    ksrc=${5:?static-nopic needs the Kokkos source directory}
    cmake -S "$ksrc" -B "$work/kokkos-build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKokkos_ENABLE_SERIAL=ON \
      -DCMAKE_CXX_STANDARD=17 -DCMAKE_POSITION_INDEPENDENT_CODE=OFF -DBUILD_SHARED_LIBS=OFF \
      -DCMAKE_INSTALL_PREFIX="$work/kokkos" >"$log" 2>&1 || fail "Kokkos did not configure"
    cmake --build "$work/kokkos-build" >>"$log" 2>&1 && cmake --install "$work/kokkos-build" >>"$log" 2>&1 ||
      fail "Kokkos did not build"
    common=(-G Ninja -DKokkos_ROOT="$work/kokkos" -DQGML_BUILD_TESTS=OFF -DQGML_BUILD_PERF=OFF
            -DQGML_BUILD_EXAMPLES=OFF -DQGML_DEPS_CACHE="$work/empty-cache")
    if cmake -S "$src" -B "$work/build" "${common[@]}" >"$log" 2>&1; then
      fail "configure accepted a non-PIC static Kokkos for the shared C interface"
    fi
    message=$(tr -s ' \n' '  ' <"$log")  # CMake wraps its messages
    grep -q "without position-independent code" <<<"$message" || fail "the error does not say why"
    grep -q "CMAKE_POSITION_INDEPENDENT_CODE=ON" <<<"$message" || fail "the error does not say what to do"
    grep -q "QGML_BUILD_BINDINGS=OFF" <<<"$message" || fail "the error does not offer the bindings switch"
    cmake -S "$src" -B "$work/build-nobindings" "${common[@]}" -DQGML_BUILD_BINDINGS=OFF >"$log" 2>&1 ||
      fail "configure with QGML_BUILD_BINDINGS=OFF failed"
    ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
echo "PASS: $mode"
