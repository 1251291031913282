#!/usr/bin/env bash
# check_source_lengths.sh SOURCE_DIR [LIMIT]
# Fails when a source file outside tests/ has more than LIMIT lines (default 500): the library, the
# program, the backends, the bindings, the benchmarks, the examples and the build scripts keep one
# concept per file (docs/architecture.md "What lives where").
set -u
src=$1 limit=${2:-500}
cd "$src" || exit 2
long=$(find core driver apps backends bindings perf examples cmake .ci -type f \
         \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.f90' \
            -o -name '*.F90' -o -name '*.py' -o -name '*.sh' -o -name '*.cmake' -o -name 'CMakeLists.txt' \
            -o -name 'run' \) -print0 |
       xargs -0 wc -l | awk -v limit="$limit" '$2 != "total" && $1 > limit { print "  " $1 " lines: " $2 }' | sort -rn)
if [ -n "$long" ]; then
  echo "FAIL: source files over $limit lines (cut them along their seams into files of one concept):"
  echo "$long"
  exit 1
fi
count=$(find core driver apps backends bindings perf examples cmake .ci -type f | wc -l)
echo "ok: no source file over $limit lines in core/, driver/, apps/, backends/, bindings/, perf/, examples/, cmake/, .ci/ ($count files)"
