#!/bin/bash
# The kernels' explicit instances are what programs link (docs/architecture.md "Explicit instances"):
# the library ARCHIVE defines instances of LossGradient::compute_impl, QuantumGeometry::compute,
# TangentSpreadCheck::apply, batched_eigh, Trainer::train / run_epoch, GroundStateEnergy::compute and
# ChainSampler::step; the objects under OBJECT_DIR (a program's or the driver's) call one of each and
# compile none of the library's instances again (other types they may instantiate).
# Usage: check_explicit_instances.sh NM ARCHIVE OBJECT_DIR
set -euo pipefail
nm_tool=$1 archive=$2 objects=$3
[[ -f $archive ]] || { echo "check_explicit_instances: no library archive $archive" >&2; exit 1; }
[[ -d $objects ]] || { echo "check_explicit_instances: no object directory $objects" >&2; exit 1; }
mapfile -t files < <(find "$objects" -name '*.o' | sort)
((${#files[@]} > 0)) || { echo "check_explicit_instances: no object under $objects" >&2; exit 1; }

# The entry points with explicit instances.
entries=(qgml::LossGradient qgml::QuantumGeometry qgml::TangentSpreadCheck qgml::batched_eigh qgml::Trainer
  qgml::GroundStateEnergy qgml::ChainSampler)
# Demangled symbols of one kind (defined: T or W, undefined: U) that name an instantiated entry point.
pattern='qgml::LossGradient<[^>]*>::compute_impl<|qgml::QuantumGeometry<[^>]*>::compute<|qgml::TangentSpreadCheck<[^>]*>::apply<|void qgml::batched_eigh<|qgml::Trainer<[^>]*>::(train|run_epoch)\(|qgml::GroundStateEnergy<[^>]*>::compute<|qgml::ChainSampler<[^>]*>::step\('
symbols() {  # kind file...
  local kind=$1
  shift
  "$nm_tool" -C "$@" 2>/dev/null | awk -v k="$kind" '($1 == k) || ($2 == k) {sub(/^[0-9a-f]* *[A-Za-z] /, ""); print}' |
    grep -E "$pattern" | sort -u || true
}

defined_lib=$( (symbols T "$archive"; symbols W "$archive") | sort -u)
status=0
for name in "${entries[@]}"; do
  if ! grep -q "^\(void \)\?$name" <<<"$defined_lib"; then
    echo "check_explicit_instances: $archive defines no instance of $name" >&2
    status=1
  fi
done
local_copies=$(comm -12 <( (symbols T "${files[@]}"; symbols W "${files[@]}") | sort -u) <(sort -u <<<"$defined_lib"))
if [[ -n $local_copies ]]; then
  echo "check_explicit_instances: objects under $objects compile their own copies of instantiated entry points:" >&2
  sed 's/^/  /' <<<"$local_copies" | cut -c1-300 >&2
  status=1
fi
called=$(symbols U "${files[@]}")
while IFS= read -r s; do
  [[ -z $s ]] && continue
  if ! grep -qxF "$s" <<<"$defined_lib"; then
    echo "check_explicit_instances: called but not in $archive: $(cut -c1-300 <<<"$s")" >&2
    status=1
  fi
done <<<"$called"
for name in "${entries[@]}"; do
  if ! grep -q "^\(void \)\?$name" <<<"$called"; then
    echo "check_explicit_instances: no object under $objects calls an instance of $name" >&2
    status=1
  fi
done
((status == 0)) && echo "check_explicit_instances: ${#files[@]} objects call $(grep -c . <<<"$called") library instances and compile none"
exit $status
