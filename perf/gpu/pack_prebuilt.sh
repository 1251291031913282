#!/bin/bash
# Packs a CUDA build tree compiled on this machine (no GPU needed) for a GPU machine that only runs it:
#   perf/gpu/pack_prebuilt.sh build/cuda-h100 [.gpu-carry/prebuilt-cuda-h100.tar.xz]
# then, on the GPU machine: perf/gpu/run.sh --prebuilt .gpu-carry/prebuilt-cuda-h100.tar.xz test sanitize bench
#
# A compile costs minutes of GPU-machine time that a 2-core workstation spends for free; this moves it
# off the GPU. The tarball holds, under their absolute paths (the test files name them): the program,
# the test binary, the benchmark drivers (with their symbols, for the sanitizer's reports), the CTest files,
# Catch2's test-discovery script, the Kokkos version file the benchmarks read, the shared libraries the
# binaries need that are neither glibc/GCC runtime nor CUDA's (e.g. Debian's libyaml-cpp) in
# BUILD/prebuilt-lib, and the stamps that tell run.sh the build steps are done. The GPU machine needs the
# same CUDA major version (its driver runs the sm_XX code compiled here) and x86-64.
set -euo pipefail
build=$(cd "${1:?usage: pack_prebuilt.sh BUILD_DIR [OUT.tar.xz]}" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$root/.gpu-carry/prebuilt-$(basename "$build").tar.xz}
grep -q '^QGML_BACKEND:.*=cuda$' "$build/CMakeCache.txt" || { echo "pack_prebuilt.sh: $build is not a cuda build" >&2; exit 1; }
bins=("$build/tests/qgml_tests" "$build/apps/qgml/qgml" "$build"/perf/qgml_bench_{eigh,train,metric})
for b in "${bins[@]}"; do [ -x "$b" ] || { echo "pack_prebuilt.sh: missing $b (build it first)" >&2; exit 1; }; done
# The other programs CTest runs (the C and Fortran examples, the Fortran module test) and the remaining
# benchmark drivers: packed when built, and named when not (their tests then fail as "Not Run" there).
for b in "$build"/examples/c/estimate_dimension_c "$build"/examples/fortran/estimate_dimension_fortran \
         "$build"/tests/qgml_test_fortran_module "$build"/perf/qgml_bench_{sample,products}; do
  if [ -x "$b" ]; then bins+=("$b"); else echo "pack_prebuilt.sh: $b not built: its tests will not run" >&2; fi
done

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
list=()
add() { list+=("$1"); }
for b in "${bins[@]}"; do  # symbols kept: compute-sanitizer and cuda-gdb name the functions
  mkdir -p "$stage$(dirname "$b")"
  cp "$b" "$stage$b"
done
# Shared libraries that a bare CUDA machine may lack: everything but glibc, libstdc++/libgcc_s and CUDA
# (libgomp and libgfortran are packed: a CUDA image need not have them).
mkdir -p "$stage$build/prebuilt-lib"
ldd "${bins[@]}" | awk '/=> \//{print $1" "$3}' | sort -u | while read -r name path; do
  case "$name" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
    libcu*|libnv*) ;;
    *) cp -L "$path" "$stage$build/prebuilt-lib/$name" ;;
  esac
done
mkdir -p "$stage$build/.gpu-run"
touch "$stage$build/.gpu-run/"{deps,configure,compile}.done
# CTest files and the inputs that configure wrote for the program's test cases.
(cd "$build" && find . -name CTestTestfile.cmake -o -name '*_include.cmake' -o -name CMakeCache.txt -o \
   -path ./tests/app-cases-inputs -prune -type d) |
  while read -r f; do mkdir -p "$stage$build/$(dirname "$f")"; cp -r "$build/$f" "$stage$build/$f"; done
catch=$(grep -ho 'include("[^"]*CatchAddTests.cmake")' "$build"/tests/*_include.cmake | head -n 1 | sed 's/include("\(.*\)")/\1/')
[ -n "$catch" ] && { mkdir -p "$stage$(dirname "$catch")"; cp "$(dirname "$catch")"/*.cmake "$stage$(dirname "$catch")/"; }
kdir=$(sed -n 's/^Kokkos_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
[ -f "$kdir/KokkosConfigVersion.cmake" ] && { mkdir -p "$stage$kdir"; cp "$kdir/KokkosConfigVersion.cmake" "$stage$kdir/"; }
echo "$root $build" >"$stage/qgml-prebuilt.txt"
mkdir -p "$(dirname "$out")"
# Files only: directory entries would carry the staging directory's owner and mode onto / when unpacked.
# Empty directories inside the build tree (inputs of the program's test cases) are kept.
(cd "$stage" && { find . -type f; find ".$build" -type d -empty; } | sort) >"$stage.list"
# xz: the device tool carries 64 MiB in all (the working tree included).
# One xz stream with a dictionary larger than the tree: the programs share most of their device code,
# which a small dictionary cannot see twice (81 MB at -6, 63 MB here, for the -lineinfo build of 2026-11-28).
tar -C "$stage" -cf - --no-recursion -T "$stage.list" | xz -T1 --lzma2=preset=9e,dict=256MiB >"$out"
rm -f "$stage.list"
# The device tool's 64 MiB hold the working tree (tracked and untracked files git does not ignore) too.
tree=$(cd "$root" && git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null | tail -n 1 | cut -f1)
total=$(( $(stat -c %s "$out") + ${tree:-0} ))
if [ "$total" -gt $(( 64 * 1024 * 1024 )) ]; then
  echo "pack_prebuilt.sh: warning: $out and the working tree make $(( total / 1048576 )) MiB, over the device tool's 64 MiB" >&2
fi
echo "pack_prebuilt.sh: $out ($(du -h "$out" | cut -f1)); built under $build, for the root $root" >&2
echo "$out"
