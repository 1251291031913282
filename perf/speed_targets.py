#!/usr/bin/env python3
"""Every speed target of the training epoch against the peers, measured the same way each time: for each figure, perf/compare.py
runs qgml and its peers in one process sequence (same machine load), --runs times; the table gives each
run's ratio, their median, the target and whether the median meets it.

Figures (2 threads, D = 3, full batch, w = 0, double unless said; the peers of perf/make_venv.sh --peers):
  training epoch over the fastest peer (torch 2.x vectorised, JAX): N = 8 >= 20x, N = 64 >= 12x, the same
  in float, N = 128 (T = 1000) and N = 256 (T = 500) >= 10x;
  training epoch at N = 8 over the full-eigendecomposition floor (36 N^3 flops per point at the measured
  dgemm rate, compare.py train --floor): <= 3x;
  metric pass over torch 2.x: N = 8 >= 15x, N = 64 >= 6x;
  batched_eigh over torch 2.x: N = 64 >= 2x, N = 8 >= 5x; over LAPACKE at N = 64 >= 1.5x.

  perf/speed_targets.py --runs 3 --name speed-targets-20261128     # about 10 minutes on the 2-core VM
  perf/speed_targets.py --only train-n8 --runs 1               # one group

Output: perf/results/NAME.jsonl (compare.py's lines of every run, then one "speed_target" line per
figure) and NAME.md (the table). OpenBLAS picks its kernels from the CPU; where it does not know the CPU
(Debian's 0.3.21 on recent AMD and Intel parts) set OPENBLAS_CORETYPE (e.g. SkylakeX) for the dgemm rate
and LAPACKE.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import compare  # noqa: E402

TRAIN_PEERS = ["torch2_vectorised=torch_vectorised@{py}", "jax=jax@{py}"]

# name -> (compare.py arguments, figures); a figure is (label, case, ratio, target, "min" or "max"):
# case (precision, N) selects the row, ratio one of "fastest_peer", "torch", "lapacke", "floor".
GROUPS = {
    "train-n8": (["train", "--N", "8", "--T", "2500", "--batch", "2500", "--w", "0", "--precision", "double",
                  "float", "--floor", "--repeats", "5"],
                 [("training epoch, N = 8, double, fastest peer / qgml", ("double", 8), "fastest_peer", 20, "min"),
                  ("training epoch, N = 8, float, fastest peer / qgml", ("float", 8), "fastest_peer", 20, "min"),
                  ("training epoch, N = 8, double, qgml / floor", ("double", 8), "floor", 3, "max")]),
    "train-n64": (["train", "--N", "64", "--T", "2500", "--batch", "2500", "--w", "0", "--precision", "double",
                   "float", "--repeats", "3"],
                  [("training epoch, N = 64, double, fastest peer / qgml", ("double", 64), "fastest_peer", 12, "min"),
                   ("training epoch, N = 64, float, fastest peer / qgml", ("float", 64), "fastest_peer", 12, "min")]),
    "train-n128": (["train", "--N", "128", "--T", "1000", "--batch", "1000", "--w", "0", "--precision", "double",
                    "--repeats", "3"],
                   [("training epoch, N = 128, T = 1000, double, fastest peer / qgml", ("double", 128),
                     "fastest_peer", 10, "min")]),
    "train-n256": (["train", "--N", "256", "--T", "500", "--batch", "500", "--w", "0", "--precision", "double",
                    "--repeats", "3"],
                   [("training epoch, N = 256, T = 500, double, fastest peer / qgml", ("double", 256),
                     "fastest_peer", 10, "min")]),
    "metric": (["metric", "--N", "8", "64", "--T", "2500", "--precision", "double", "--repeats", "3"],
               [("metric pass, N = 8, torch 2.x / qgml", ("double", 8), "torch", 15, "min"),
                ("metric pass, N = 64, torch 2.x / qgml", ("double", 64), "torch", 6, "min")]),
    "eigh": (["eigh", "--N", "8", "64", "--T", "2500", "--precision", "double", "--repeats", "3"],
             [("batched_eigh, N = 8, torch 2.x / qgml", ("double", 8), "torch", 5, "min"),
              ("batched_eigh, N = 64, torch 2.x / qgml", ("double", 64), "torch", 2, "min"),
              ("batched_eigh, N = 64, LAPACKE / qgml", ("double", 64), "lapacke", 1.5, "min")]),
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build", "openmp"), help="qgml build tree")
    p.add_argument("--peers-python", default=compare.DEFAULT_PEERS_PYTHON,
                   help="interpreter with PyPI torch 2.x and jax (perf/make_venv.sh --peers)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--only", nargs="+", choices=sorted(GROUPS), help="these groups only")
    p.add_argument("--name", default="speed-targets", help="results file name (perf/results/NAME.*)")
    return p.parse_args()


def ratios(lines, case, ratio):
    """The figure's ratio in one compare.py run's JSON lines, or None when a side is missing."""
    rows = {}
    for l in lines:
        if l.get("suite") in ("eigh", "train_epoch", "metric") and (l["precision"], l["N"]) == case:
            rows[l["impl"]] = l
    q = rows.get("qgml")
    if not q:
        return None
    if ratio == "fastest_peer":
        f = compare.fastest_peer(rows, {l["impl"] for l in rows.values() if compare.is_peer_line(l)})
        return f[1] / q["median_s"] if f else None
    if ratio == "floor":
        peak = next((l["gflops"] for l in lines if l.get("suite") == "gemm_peak"), None)
        return q["median_s"] / (q["T"] * 36.0 * case[1] ** 3 / (peak * 1e9)) if peak else None
    other = rows.get(ratio)
    return other["median_s"] / q["median_s"] if other else None


def main():
    a = parse_args()
    out = os.path.join(HERE, "results", a.name)
    groups = a.only or list(GROUPS)
    all_lines, figures = [], []
    for g in groups:
        args, wanted = GROUPS[g]
        per_run = [[] for _ in wanted]
        for run in range(a.runs):
            with tempfile.TemporaryDirectory() as tmp:
                jsonl = os.path.join(tmp, "run.jsonl")
                cmd = [sys.executable, os.path.join(HERE, "compare.py")] + args + ["--build", a.build, "--out", jsonl]
                if args[0] == "train":
                    cmd += ["--peer"] + [p.format(py=a.peers_python) for p in TRAIN_PEERS]
                else:
                    cmd += ["--python", a.peers_python]
                print(f"[{g} run {run + 1}/{a.runs}] {' '.join(cmd)}", flush=True)
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                lines = compare.read_jsonl(jsonl)
            for l in lines:
                l["target_group"], l["target_run"] = g, run + 1
            all_lines += lines
            for i, (label, case, ratio, target, sense) in enumerate(wanted):
                per_run[i].append(ratios(lines, case, ratio))
        for (label, case, ratio, target, sense), values in zip(wanted, per_run):
            got = [v for v in values if v is not None]
            median = statistics.median(got) if got else None
            met = median is not None and (median >= target if sense == "min" else median <= target)
            figures.append(dict(suite="speed_target", figure=label, group=g, ratio=ratio, runs=values,
                                median=median, target=target, sense=sense, met=met))
    rev = compare.git_revision()
    with open(out + ".jsonl", "w") as f:
        for l in all_lines + figures:
            l.setdefault("git_revision", rev)
            f.write(json.dumps(l) + "\n")
    table = ["| figure | runs | median | target | |", "|---|---|---|---|---|"]
    for fig in figures:
        runs = ", ".join("-" if v is None else f"{v:.2f}" for v in fig["runs"])
        med = "-" if fig["median"] is None else f"**{fig['median']:.2f}**"
        target = (">= " if fig["sense"] == "min" else "<= ") + f"{fig['target']:g}x"
        table.append(f"| {fig['figure']} | {runs} | {med} | {target} | {'met' if fig['met'] else 'short'} |")
    text = "\n".join(table) + "\n"
    with open(out + ".md", "w") as f:
        f.write(text)
    print(text)
    print(f"JSON lines: {out}.jsonl")
    return 0 if all(f["met"] for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
