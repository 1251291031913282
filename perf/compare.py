#!/usr/bin/env python3
"""Side-by-side benchmarks: qgml against the PyTorch baselines, in the same run.

For each configuration the qgml benchmark binary and the PyTorch baseline script run back to back
(so both see the same machine load). All JSON lines go to --out (JSON lines); a Markdown table
with medians, ratios and GFLOP/s is printed and written next to it (.md).

Suites:
  eigh    qgml_bench_eigh (impl qgml and lapacke) vs perf/baselines/torch_eigh.py
  train   qgml_bench_train                        vs perf/baselines/torch_train_epoch.py
  metric  qgml_bench_metric                       vs perf/baselines/torch_metric.py

Examples (after `cmake --workflow --preset openmp`):
  perf/compare.py eigh  --N 3 4 8 16 32 64 --T 2500 --precision double float
  perf/compare.py train --N 3 4 8 16 32 64 --batch 256 2500 --w 0 0.25 --precision double float
  perf/compare.py metric --N 3 8 16 32 64 --T 2500 100000
Torch is looked for in /usr/bin/python3 (Debian's python3-torch) unless --python is given; without
it the qgml side still runs and the table says so.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("suite", choices=["eigh", "train", "metric"])
    p.add_argument("--build", default=os.path.join(ROOT, "build", "openmp"), help="qgml build tree")
    p.add_argument("--python", default="/usr/bin/python3", help="interpreter with torch")
    p.add_argument("--N", type=int, nargs="+", default=[3, 4, 8, 16, 32, 64])
    p.add_argument("--T", type=int, nargs="+", default=[2500])
    p.add_argument("--batch", type=int, nargs="+", default=[256, 2500])
    p.add_argument("--w", type=float, nargs="+", default=[0.0, 0.25])
    p.add_argument("--precision", nargs="+", default=["double"], choices=["double", "float"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--no-torch", action="store_true", help="qgml only")
    p.add_argument("--out", help="JSON lines file (default perf/results/<suite>-<UTC time>.jsonl)")
    return p.parse_args()


def run_lines(cmd, env):
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SystemExit(f"command failed ({r.returncode}): {' '.join(cmd)}")
    if r.stderr.strip() and "not available" in r.stderr:
        sys.stderr.write(r.stderr)
    return [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]


def git_revision():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], stdout=subprocess.PIPE,
                              text=True, check=True).stdout.strip()
    except Exception:
        return "unknown"


def main():
    a = parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OMP_PROC_BIND="false", OPENBLAS_NUM_THREADS="1")
    stamp = datetime.datetime.utcnow().strftime("%Y%m%dT%H%M%SZ")
    out = a.out or os.path.join(HERE, "results", f"{a.suite}-{stamp}.jsonl")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    common = ["--repeats", str(a.repeats)]
    have_torch = not a.no_torch and subprocess.run([a.python, "-c", "import torch"],
                                                   stderr=subprocess.DEVNULL).returncode == 0
    lines = []
    if a.suite == "eigh":
        binary = os.path.join(a.build, "perf", "qgml_bench_eigh")
        lines += run_lines([binary, "--kokkos-disable-warnings", "--gemm", "1", "--N", "1", "--impl"] +
                           ["qgml"] + ["--T", "1"] + common, env)[:1]  # GEMM peak line only
        for prec in a.precision:
            for T in a.T:
                for N in a.N:
                    lines += run_lines([binary, "--kokkos-disable-warnings", "--gemm", "0", "--N", str(N), "--T",
                                        str(T), "--precision", prec, "--impl", "qgml", "lapacke"] + common, env)
                    if have_torch:
                        lines += run_lines([a.python, os.path.join(HERE, "baselines", "torch_eigh.py"), "--N",
                                            str(N), "--T", str(T), "--precision", prec, "--threads",
                                            str(a.threads)] + common, env)
    elif a.suite == "metric":
        binary = os.path.join(a.build, "perf", "qgml_bench_metric")
        for prec in a.precision:
            for T in a.T:
                for N in a.N:
                    args = ["--N", str(N), "--T", str(T), "--precision", prec] + common
                    lines += run_lines([binary, "--kokkos-disable-warnings"] + args, env)
                    if have_torch:
                        lines += run_lines([a.python, os.path.join(HERE, "baselines", "torch_metric.py"),
                                            "--threads", str(a.threads)] + args, env)
    else:
        binary = os.path.join(a.build, "perf", "qgml_bench_train")
        for prec in a.precision:
            for N in a.N:
                for batch in a.batch:
                    for w in a.w:
                        args = ["--N", str(N), "--batch", str(batch), "--w", str(w), "--precision", prec,
                                "--T", str(a.T[0])] + common
                        lines += run_lines([binary, "--kokkos-disable-warnings"] + args, env)
                        if have_torch:
                            lines += run_lines([a.python, os.path.join(HERE, "baselines", "torch_train_epoch.py"),
                                                "--threads", str(a.threads)] + args, env)
    rev = git_revision()
    with open(out, "a") as f:
        for l in lines:
            l.setdefault("git_revision", rev)
            l["compare_run"] = stamp
            f.write(json.dumps(l) + "\n")
    table = summarize(a.suite, lines, have_torch)
    with open(os.path.splitext(out)[0] + ".md", "w") as f:
        f.write(table)
    print(table)
    print(f"JSON lines: {out}")


def summarize(suite, lines, have_torch):
    peak = next((l["gflops"] for l in lines if l.get("suite") == "gemm_peak"), None)
    key = (lambda l: (l["precision"], l["T"], l["N"])) if suite in ("eigh", "metric") else \
        (lambda l: (l["precision"], l["N"], l["batch"], float(l["w"])))
    rows = {}
    for l in lines:
        if l.get("suite") not in ("eigh", "train_epoch", "metric"):
            continue
        rows.setdefault(key(l), {})[l["impl"]] = l
    out = []
    if suite == "eigh":
        out.append(f"Measured double GEMM peak: {peak:.1f} GFLOP/s\n" if peak else "")
        out.append("| precision | T | N | qgml ms | lapacke ms | torch ms | torch / qgml | lapacke / qgml |"
                   " qgml GFLOP/s | % of GEMM peak |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for k in sorted(rows):
            r = rows[k]
            q, lp, t = r.get("qgml"), r.get("lapacke"), r.get("torch")
            ms = lambda x: f"{1e3 * x['median_s']:.3f}" if x else "-"
            ratio = lambda x: f"{x['median_s'] / q['median_s']:.2f}" if x and q else "-"
            pct = f"{100 * q['gflops'] / peak:.1f}" if q and peak else "-"
            out.append(f"| {k[0]} | {k[1]} | {k[2]} | {ms(q)} | {ms(lp)} | {ms(t) if have_torch else 'n/a'} |"
                       f" {ratio(t)} | {ratio(lp)} | {q['gflops']:.2f} | {pct} |")
    elif suite == "metric":
        out.append("| precision | T | N | qgml ms | torch ms | torch / qgml | qgml points/s |")
        out.append("|---|---|---|---|---|---|---|")
        for k in sorted(rows):
            q, t = rows[k].get("qgml"), rows[k].get("torch")
            out.append(f"| {k[0]} | {k[1]} | {k[2]} | {1e3 * q['median_s']:.3f} | "
                       f"{(1e3 * t['median_s']) if t else float('nan'):.3f} | "
                       f"{(t['median_s'] / q['median_s']) if t else float('nan'):.2f} | {q['points_per_s']:.0f} |")
    else:
        out.append("| precision | N | batch | w | qgml ms/epoch | torch ms/epoch | torch / qgml | qgml points/s |"
                   " qgml final loss | torch final loss |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for k in sorted(rows):
            r = rows[k]
            q, t = r.get("qgml"), r.get("torch")
            out.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]:g} | {1e3 * q['median_s']:.3f} | "
                       f"{(1e3 * t['median_s']) if t else float('nan'):.3f} | "
                       f"{(t['median_s'] / q['median_s']) if t else float('nan'):.2f} | {q['points_per_s']:.0f} | "
                       f"{q['final_loss']:.4g} | {(t['final_loss'] if t else float('nan')):.4g} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
