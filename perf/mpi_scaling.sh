#!/usr/bin/env bash
# Strong and weak scaling of data-parallel training on one node, ranks x threads = cores.
#
#   perf/mpi_scaling.sh [--build build/openmp-mpi] [--N 32] [--T 100000] [--batch 0] [--cores 2]
#                       [--rounds 3] [--repeats 5] [--out perf/results/mpi-scaling-<time>.jsonl]
#
# Strong: T points on R ranks x (cores / R) threads, R = 1, 2, 4, ... <= cores. Weak: T / cores points
# per rank on R ranks x 1 thread. The configurations are run in alternation for --rounds rounds (the
# machine is shared: alternation spreads drift over all of them) and the medians compared. Each JSON
# line (qgml_bench_train_mpi) carries the time in gradient all-reduces separately (comm_median_s).
# Needs a build with MPI: cmake --workflow --preset openmp-mpi (or cmake --preset openmp-mpi && cmake
# --build build/openmp-mpi --target qgml_bench_train_mpi).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/openmp-mpi N=32 T=100000 batch=0 cores=2 rounds=3 repeats=5 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --N) N=$2; shift 2 ;;
    --T) T=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --cores) cores=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "mpi_scaling.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
bench=$build/perf/qgml_bench_train_mpi
[ -x "$bench" ] || { echo "mpi_scaling.sh: $bench not found; build the openmp-mpi preset first" >&2; exit 2; }
[ -n "$out" ] || out=$root/perf/results/mpi-scaling-$(date -u +%Y%m%dT%H%M%SZ).jsonl
mkdir -p "$(dirname "$out")"
mpiexec=(mpiexec --bind-to none)
mpiexec --version 2>/dev/null | grep -q "Open MPI" && mpiexec+=(--oversubscribe)
[ "$(id -u)" = 0 ] && mpiexec+=(--allow-run-as-root)
export OMP_PROC_BIND=false OPENBLAS_NUM_THREADS=1
# OMP_WAIT_POLICY defaults to active (set it to override): passive waiting makes each of the ~12 kernels of a small
# batch wake sleeping threads (3x slower epochs at N = 8, batch 256, 2 threads; perf/NOTES.md).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-active}

run() { # ranks threads extra-args...
  local ranks=$1 threads=$2; shift 2
  OMP_NUM_THREADS=$threads "${mpiexec[@]}" -np "$ranks" -x OMP_NUM_THREADS -x OMP_PROC_BIND -x OMP_WAIT_POLICY \
    "$bench" --N "$N" --batch "$batch" --repeats "$repeats" --warmup 1 --out "$out" "$@" --kokkos-disable-warnings >/dev/null
}
echo "uptime: $(uptime)" >&2
for ((round = 0; round < rounds; ++round)); do
  for ((r = 1; r <= cores; r *= 2)); do
    run "$r" $((cores / r)) --T "$T"                      # strong
    run "$r" 1 --T $((T / cores)) --weak                  # weak: T / cores points per rank
  done
done
/usr/bin/env python3 - "$out" "$cores" <<'PY'
import json, statistics, sys
path, cores = sys.argv[1], int(sys.argv[2])
rows = [json.loads(l) for l in open(path) if l.strip()]
groups = {}
for r in rows:
    key = (r["scaling"], r["ranks"], r["threads"], r["T"])
    groups.setdefault(key, []).append(r)
print(f"| scaling | ranks x threads | T | epoch s (median of rounds) | all-reduce s | all-reduce % | bytes/all-reduce | all-reduces/epoch |")
print("|---|---|---|---|---|---|---|---|")
med = {}
for key in sorted(groups):
    g = groups[key]
    t = statistics.median(x["median_s"] for x in g)
    c = statistics.median(x["comm_median_s"] for x in g)
    med[key] = t
    print(f"| {key[0]} | {key[1]} x {key[2]} | {key[3]} | {t:.4g} | {c:.3g} | {100 * c / t:.1f} | "
          f"{g[0]['bytes_per_allreduce']} | {g[0]['allreduce_per_epoch']} |")
strong = {k[1]: v for k, v in med.items() if k[0] == "strong"}
weak = {k[1]: v for k, v in med.items() if k[0] == "weak"}
if 1 in strong:
    for r, t in sorted(strong.items()):
        if r > 1:
            print(f"\nstrong: {r} ranks x {cores // r} threads take {t / strong[1]:.3f} x the time of 1 rank x {cores} threads")
if 1 in weak:
    for r, t in sorted(weak.items()):
        if r > 1:
            print(f"weak: {r} ranks ({r} x the points) take {t / weak[1]:.3f} x the time of 1 rank (efficiency {weak[1] / t:.2f})")
print(f"\nJSON lines: {path}")
PY
