#!/usr/bin/env bash
# check_dependency_direction.sh SOURCE_DIR: the layers include downwards only (docs/architecture.md,
# "Dependency direction"): core/ includes no file of driver/, apps/, bindings/ or backends/, and driver/
# no file of apps/ or bindings/. An include is resolved against each of those folders' include roots;
# exit 1 naming every include that reaches upwards.
set -euo pipefail
cd "${1:?usage: check_dependency_direction.sh SOURCE_DIR}"
bad=0
# upward LAYER_DIR ROOT...: every quoted include in LAYER_DIR that names a file under one of the ROOTs.
upward() {
  local layer="$1"
  shift
  local file line name root
  while IFS=: read -r file line name; do
    name="${name#*\"}"
    name="${name%%\"*}"
    for root in "$@"; do
      if [ -f "$root/$name" ]; then
        echo "$file:$line includes \"$name\", a file of $root (an upward dependency)"
        bad=1
      fi
    done
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$layer" --include='*.hpp' --include='*.cpp' --include='*.h' || true)
}
upward core driver apps/qgml bindings/c/src bindings/c/include bindings/python/src backends/mpi/include \
  backends/lapacke/include backends/cusolver/include
upward driver apps/qgml bindings/c/src bindings/c/include bindings/python/src
[ "$bad" -eq 0 ] || exit 1
echo "ok: core/ includes nothing of driver/, apps/, bindings/ or backends/; driver/ nothing of apps/ or bindings/"
