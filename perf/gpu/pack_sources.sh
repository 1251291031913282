#!/usr/bin/env bash
# Makes the source tarball that perf/gpu/run.sh builds from on a GPU machine without network.
# Run it on a machine with network (it uses the dependency bootstrap's cache and Debian's archive):
#
#   perf/gpu/pack_sources.sh [--cache DIR] [--out FILE]
#
# Contents, laid out as a bootstrap cache (tar -xf FILE -C CACHE gives CACHE/src/...):
#   src/trilinos-13.2.0-4/{kokkos,kokkos-kernels}   Kokkos and KokkosKernels 3.4.01 (unpatched)
#   src/Catch2-3.7.1                                 Catch2 v3 for the tests
#   src/yaml-cpp-0.7.0                               yaml-cpp (the program's settings)
#   nlohmann_json/{include,share/cmake}              nlohmann/json headers and CMake files (from this
#                                                    machine's nlohmann-json3-dev, header-only)
#   MANIFEST                                         versions, sizes, date, git revision
# Default FILE: .gpu-carry/qgml-gpu-sources.tar.gz at the repository root (.gpu-carry/ is ignored by git;
# name it in the device tool's carry). It must stay well under 64 MiB; it is about 10 MiB.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${QGML_DEPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qgml}"
out="$root/.gpu-carry/qgml-gpu-sources.tar.gz"
while [ $# -gt 0 ]; do
  case "$1" in
    --cache) cache="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "pack_sources: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

src="$(bash "$root/cmake/bootstrap/qgml-deps.sh" --sources-only --cache "$cache")"
json_cmake=""
for d in /usr/share/cmake/nlohmann_json /usr/lib/cmake/nlohmann_json /usr/local/share/cmake/nlohmann_json; do
  [ -f "$d/nlohmann_jsonConfig.cmake" ] && json_cmake="$d" && break
done
json_include="$(dirname "$json_cmake")/../../include/nlohmann"
if [ -z "$json_cmake" ] || [ ! -f "$json_include/json.hpp" ]; then
  echo "pack_sources: nlohmann/json not found (Debian: apt-get install nlohmann-json3-dev)" >&2
  exit 1
fi

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/src/trilinos-13.2.0-4" "$stage/nlohmann_json/include" "$stage/nlohmann_json/share/cmake"
cp -a "$src/trilinos-13.2.0-4/kokkos" "$src/trilinos-13.2.0-4/kokkos-kernels" \
  "$src/trilinos-13.2.0-4/.extracted" "$stage/src/trilinos-13.2.0-4/"
cp -a "$src/Catch2-3.7.1" "$src/yaml-cpp-0.7.0" "$stage/src/"
cp -a "$json_include" "$stage/nlohmann_json/include/"
cp -a "$json_cmake" "$stage/nlohmann_json/share/cmake/"
# The bootstrap patches a copy of the Kokkos tree; a stale patch stamp must not travel.
rm -f "$stage/src/trilinos-13.2.0-4/kokkos/.qgml-cuda13"
{
  echo "qgml GPU source bundle, made $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -sm)"
  echo "qgml git revision: $(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
  echo "Kokkos, KokkosKernels 3.4.01 (Debian trilinos 13.2.0-4 source); Catch2 3.7.1; yaml-cpp 0.7.0;"
  echo "nlohmann/json $(dpkg-query -W -f='${Version}' nlohmann-json3-dev 2>/dev/null || echo '(version unknown)')"
  du -s --block-size=1K "$stage"/src/* "$stage"/nlohmann_json | sed "s|$stage/||"
} >"$stage/MANIFEST"

mkdir -p "$(dirname "$out")"
tar -C "$stage" -czf "$out.tmp" MANIFEST src nlohmann_json
mv "$out.tmp" "$out"
size=$(stat -c %s "$out")
echo "pack_sources: $out ($((size / 1024 / 1024)) MiB)" >&2
if [ "$size" -gt $((48 * 1024 * 1024)) ]; then
  echo "pack_sources: warning: over 48 MiB; the device tool carries at most 64 MiB with the working tree" >&2
fi
echo "$out"
