#!/usr/bin/env bash
# The bootstrap's Kokkos 4.6.01 archives (cmake/bootstrap/qgml-deps.sh --kokkos-version 4.6.01 --archives):
# a bad version or directory is refused with exit 2; a missing or altered archive stops it with a message
# that names the file, and nothing is left unpacked or built in the cache.
#   bootstrap_archives.sh SOURCE WORK
set -euo pipefail
src=$1 work=$2
# Each case names its archives explicitly; CI exports QGML_KOKKOS_ARCHIVES for its own Kokkos 4.6 leg.
unset QGML_KOKKOS_ARCHIVES
rm -rf "$work" && mkdir -p "$work"
deps="$src/cmake/bootstrap/qgml-deps.sh"
fail() { echo "FAIL: $*"; [ -f "$work/out.log" ] && tail -n 20 "$work/out.log"; exit 1; }
# A cache whose Catch2 sources count as present, so that only the Kokkos step runs (no download).
cache="$work/cache"
mkdir -p "$cache/src/Catch2-3.7.1" "$work/archives" "$work/empty"
touch "$cache/src/Catch2-3.7.1/.extracted"
run() { # expected-exit args...
  local want=$1; shift
  set +e
  bash "$deps" --no-apt --cache "$cache" "$@" >"$work/out.log" 2>&1
  local rc=$?
  set -e
  [ "$rc" = "$want" ] || fail "qgml-deps.sh $* exited $rc, expected $want"
}
expect() { grep -qF -- "$1" "$work/out.log" || fail "no '$1' in the message"; }

run 2 --kokkos-version 4.5.0
expect "--kokkos-version must be 3.4.01 or 4.6.01, got '4.5.0'"
run 2 --kokkos-version 4.6.01 --archives "$work/nowhere"
expect "--archives '$work/nowhere' is not a directory"

run 1 --kokkos-version 4.6.01 --archives "$work/empty"
expect "kokkos-4.6.01.tar.gz is missing"
# The directory may come from the environment instead of --archives.
QGML_KOKKOS_ARCHIVES="$work/empty" run 1 --kokkos-version 4.6.01
expect "are not in '$work/empty': kokkos-4.6.01.tar.gz is missing"

# Right names, wrong contents: the pinned SHA-256 must refuse them.
mkdir -p "$work/fake/kokkos-4.6.01"
echo "not kokkos" >"$work/fake/kokkos-4.6.01/README"
tar -czf "$work/archives/kokkos-4.6.01.tar.gz" -C "$work/fake" kokkos-4.6.01
cp "$work/archives/kokkos-4.6.01.tar.gz" "$work/archives/kokkos-kernels-4.6.01.tar.gz"
run 1 --kokkos-version 4.6.01 --archives "$work/archives"
expect "kokkos-4.6.01.tar.gz: SHA-256"
expect "is not the pinned b9d70e4653b87a06dbb48d63291bf248058c7c7db4bd91979676ad5609bb1a3a"

run 1 --kokkos-version 4.6.01 --offline
expect "--offline: Kokkos 4.6.01 needs its release archives"

[ ! -e "$cache/src/kokkos-sources-4.6.01" ] || fail "sources were unpacked from a refused archive"
[ ! -e "$cache/kokkos-4.6.01-openmp" ] || fail "something was installed"
if ls "$cache/src" | grep -q '^kokkos4\.'; then fail "a temporary download directory was left behind"; fi
[ "$(bash "$deps" --kokkos-version 4.6.01 --backend cuda --arch HOPPER90 --cache "$cache" --print-prefix)" = \
  "$cache/kokkos-4.6.01-cuda-hopper90" ] || fail "the 4.6.01 CUDA prefix is not kokkos-4.6.01-cuda-hopper90"
[ "$(bash "$deps" --cache "$cache" --print-prefix)" = "$cache/kokkos-openmp" ] ||
  fail "the 3.4.01 prefix changed (existing caches would be rebuilt)"
echo "PASS: the bootstrap checks the Kokkos 4.6.01 archives"
