#!/usr/bin/env python3
"""Side-by-side benchmarks: qgml against the PyTorch baselines, in the same run.

For each configuration the qgml benchmark binary and the PyTorch baseline script run back to back
(so both see the same machine load). All JSON lines go to --out (JSON lines); a Markdown table
with medians, ratios and GFLOP/s is printed and written next to it (.md).

Suites:
  eigh    qgml_bench_eigh (impl qgml and lapacke) vs perf/baselines/torch_eigh.py
  train   qgml_bench_train                        vs perf/baselines/torch_train_epoch.py
  metric  qgml_bench_metric                       vs perf/baselines/torch_metric.py
  sample  qgml_bench_sample                       vs perf/baselines/torch_sample.py

Examples (after `cmake --workflow --preset openmp`):
  perf/compare.py eigh  --N 3 4 8 16 32 64 --T 2500 --precision double float
  perf/compare.py train --N 3 4 8 16 32 64 --batch 256 2500 --w 0 0.25 --precision double float
  perf/compare.py metric --N 3 8 16 32 64 --T 2500 100000
  perf/compare.py sample --N 8 32 --chains 10000 --sampler ula mala hmc --precision double float
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
    p.add_argument("suite", choices=["eigh", "train", "metric", "sample"])
    p.add_argument("--build", default=os.path.join(ROOT, "build", "openmp"), help="qgml build tree")
    p.add_argument("--python", default="/usr/bin/python3", help="interpreter with torch")
    p.add_argument("--N", type=int, nargs="+", default=[3, 4, 8, 16, 32, 64])
    p.add_argument("--T", type=int, nargs="+", default=[2500])
    p.add_argument("--batch", type=int, nargs="+", default=[256, 2500])
    p.add_argument("--w", type=float, nargs="+", default=[0.0, 0.25])
    p.add_argument("--precision", nargs="+", default=["double"], choices=["double", "float"])
    p.add_argument("--chains", type=int, nargs="+", default=[10000], help="sample: chains")
    p.add_argument("--sampler", nargs="+", default=["ula", "mala", "hmc"], help="sample: samplers")
    p.add_argument("--steps", type=int, default=20, help="sample: iterations per timed run")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--no-torch", action="store_true", help="qgml only")
    p.add_argument("--qgml-impl", nargs="+", default=["qgml"],
                   help="train: qgml_bench_train --impl values (e.g. qgml qgml-separate); each gets a column")
    p.add_argument("--out", help="JSON lines file (default perf/results/<suite>-<UTC time>.jsonl)")
    return p.parse_args()


# compare.py suite name -> (suite key in the JSON lines, qgml driver in <build>/perf, PyTorch baseline).
SUITES = {
    "eigh": ("eigh", "qgml_bench_eigh", "torch_eigh.py"),
    "train": ("train_epoch", "qgml_bench_train", "torch_train_epoch.py"),
    "metric": ("metric", "qgml_bench_metric", "torch_metric.py"),
    "sample": ("sample", "qgml_bench_sample", "torch_sample.py"),
}


def bench_binary(build, suite):
    """Path of the qgml benchmark driver of `suite` (eigh, train, metric) in the build tree."""
    return os.path.join(build, "perf", SUITES[suite][1])


def baseline_script(suite):
    """Path of the PyTorch baseline script of `suite` (eigh, train, metric)."""
    return os.path.join(HERE, "baselines", SUITES[suite][2])


def torch_available(python):
    """True if the interpreter `python` can import torch."""
    try:
        return subprocess.run([python, "-c", "import torch"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0
    except OSError:
        return False


def parse_json_lines(text):
    """The JSON objects in a benchmark's stdout: lines that start with '{', also behind srun's --label
    prefix ('3: {...}', whose number becomes the key "rank")."""
    found = []
    for raw in text.splitlines():
        head, sep, rest = raw.partition(": ")
        rank = None
        if sep and head.strip().isdigit() and rest.startswith("{"):
            rank, raw = int(head.strip()), rest
        if raw.startswith("{"):
            obj = json.loads(raw)
            if rank is not None:
                obj["rank"] = rank
            found.append(obj)
    return found


def run_json_lines(cmd, env, timeout=None):
    """Runs cmd and returns (JSON lines, None), or (the JSON lines printed so far, error text) if it fails,
    cannot start or runs longer than `timeout` seconds. Never raises for a failing benchmark."""
    try:
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return parse_json_lines(out), f"timeout after {timeout:.0f} s"
    except OSError as e:
        return [], f"cannot run {cmd[0]}: {e}"
    if r.stderr.strip() and "not available" in r.stderr:
        sys.stderr.write(r.stderr)
    if r.returncode != 0:
        tail = " | ".join(r.stderr.strip().splitlines()[-3:])
        return parse_json_lines(r.stdout), f"exit code {r.returncode}" + (f": {tail}" if tail else "")
    return parse_json_lines(r.stdout), None


def run_lines(cmd, env):
    """Runs cmd and returns its JSON lines; exits with its stderr if it fails."""
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SystemExit(f"command failed ({r.returncode}): {' '.join(cmd)}")
    if r.stderr.strip() and "not available" in r.stderr:
        sys.stderr.write(r.stderr)
    return parse_json_lines(r.stdout)


# What identifies a measured case across result files: a line of one run matches a line of another when
# these agree (batch and w only exist for train_epoch; a missing key compares as "-"). "threads" is the
# requested thread count where run_perf.py recorded it ("requested_threads"), else the reported one.
KEY_FIELDS = ("suite", "impl", "N", "T", "precision", "threads", "batch", "w")


def case_key(line):
    """The matching key of a JSON line (see KEY_FIELDS); numbers are normalised so 0 == 0.0."""
    key = []
    for k in KEY_FIELDS:
        v = line.get("requested_threads", line.get(k, "-")) if k == "threads" else line.get(k, "-")
        if isinstance(v, bool) or v is None:
            v = "-" if v is None else str(v)
        elif isinstance(v, (int, float)):
            v = float(v)
            v = int(v) if v.is_integer() else v
        key.append(v)
    return tuple(key)


def is_measurement(line):
    """True for a line with a timing; false for the records run_perf.py writes for skipped or failed cases."""
    return line.get("status", "ok") == "ok" and "median_s" in line


class ResultsError(Exception):
    """A results file that cannot be used; the message names the file (and line)."""


def _check_line(raw, where):
    try:
        obj = json.loads(raw)
    except ValueError as e:
        raise ResultsError(f"{where}: not valid JSON ({e.msg}, column {e.colno})")
    if not isinstance(obj, dict):
        raise ResultsError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    for k in ("suite", "impl"):
        if k not in obj:
            raise ResultsError(f"{where}: missing key '{k}'")
    if obj.get("status", "ok") == "ok":
        m = obj.get("median_s")
        if isinstance(m, bool) or not isinstance(m, (int, float)) or not m > 0 or m == float("inf"):
            raise ResultsError(f"{where}: median_s must be a positive number, got {m!r}")
    obj["_source"] = where
    return obj


def read_jsonl(path, errors=None):
    """All JSON objects of a JSON-lines file, each with "_source" = "path:line"; blank lines are skipped.
    A line that is not a JSON object, or a measurement without suite, impl or a positive median_s, raises
    ResultsError naming the file and line, or, if `errors` is a list, is appended to it and skipped.
    A file that cannot be opened always raises."""
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError as e:
        raise ResultsError(f"{path}: cannot open: {e.strerror}")
    found = []
    with f:
        for number, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                found.append(_check_line(raw, f"{path}:{number}"))
            except ResultsError as e:
                if errors is None:
                    raise
                errors.append(str(e))
    return found


def gemm_peak_command(build, repeats):
    """qgml_bench_eigh invocation whose first JSON line is the double GEMM rate (suite gemm_peak)."""
    return [bench_binary(build, "eigh"), "--kokkos-disable-warnings", "--gemm", "1", "--N", "1", "--impl", "qgml",
            "--T", "1", "--repeats", str(repeats)]


def git_revision():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, check=True).stdout.strip()
    except Exception:
        return "unknown"


def main():
    a = parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OMP_PROC_BIND="false", OPENBLAS_NUM_THREADS="1")
    stamp = datetime.datetime.utcnow().strftime("%Y%m%dT%H%M%SZ")
    out = a.out or os.path.join(HERE, "results", f"{a.suite}-{stamp}.jsonl")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    common = ["--repeats", str(a.repeats)]
    have_torch = not a.no_torch and torch_available(a.python)
    lines = []
    if a.suite == "eigh":
        binary = bench_binary(a.build, "eigh")
        lines += run_lines(gemm_peak_command(a.build, a.repeats), env)[:1]  # GEMM peak line only
        for prec in a.precision:
            for T in a.T:
                for N in a.N:
                    lines += run_lines([binary, "--kokkos-disable-warnings", "--gemm", "0", "--N", str(N), "--T",
                                        str(T), "--precision", prec, "--impl", "qgml", "lapacke"] + common, env)
                    if have_torch:
                        lines += run_lines([a.python, baseline_script("eigh"), "--N",
                                            str(N), "--T", str(T), "--precision", prec, "--threads",
                                            str(a.threads)] + common, env)
    elif a.suite == "metric":
        binary = bench_binary(a.build, "metric")
        for prec in a.precision:
            for T in a.T:
                for N in a.N:
                    args = ["--N", str(N), "--T", str(T), "--precision", prec] + common
                    lines += run_lines([binary, "--kokkos-disable-warnings"] + args, env)
                    if have_torch:
                        lines += run_lines([a.python, baseline_script("metric"),
                                            "--threads", str(a.threads)] + args, env)
    elif a.suite == "sample":
        binary = bench_binary(a.build, "sample")
        for prec in a.precision:
            for C in a.chains:
                for N in a.N:
                    for sampler in a.sampler:
                        args = ["--N", str(N), "--chains", str(C), "--steps", str(a.steps), "--sampler", sampler,
                                "--precision", prec] + common
                        lines += run_lines([binary, "--kokkos-disable-warnings"] + args, env)
                        if have_torch:
                            lines += run_lines([a.python, baseline_script("sample"),
                                                "--threads", str(a.threads)] + args, env)
    else:
        binary = bench_binary(a.build, "train")
        for prec in a.precision:
            for N in a.N:
                for batch in a.batch:
                    for w in a.w:
                        args = ["--N", str(N), "--batch", str(batch), "--w", str(w), "--precision", prec,
                                "--T", str(a.T[0])] + common
                        lines += run_lines([binary, "--kokkos-disable-warnings", "--impl"] + a.qgml_impl + args,
                                           env)
                        if have_torch:
                            lines += run_lines([a.python, baseline_script("train"),
                                                "--threads", str(a.threads)] + args, env)
    rev = git_revision()
    with open(out, "a") as f:
        for l in lines:
            l.setdefault("git_revision", rev)
            l["compare_run"] = stamp
            f.write(json.dumps(l) + "\n")
    table = summarize(a.suite, lines, have_torch, a.qgml_impl)
    with open(os.path.splitext(out)[0] + ".md", "w") as f:
        f.write(table)
    print(table)
    print(f"JSON lines: {out}")


def summarize(suite, lines, have_torch, qgml_impls=("qgml",)):
    peak = next((l["gflops"] for l in lines if l.get("suite") == "gemm_peak"), None)
    key = (lambda l: (l["precision"], l["T"], l["N"])) if suite in ("eigh", "metric") else \
        (lambda l: (l["precision"], l["chains"], l["N"], l["sampler"])) if suite == "sample" else \
        (lambda l: (l["precision"], l["N"], l["batch"], float(l["w"])))
    rows = {}
    for l in lines:
        if l.get("suite") not in ("eigh", "train_epoch", "metric", "sample"):
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
    elif suite == "sample":
        out.append("| precision | chains | N | sampler | qgml s | torch s | torch / qgml | qgml chain-steps/s |"
                   " torch chain-steps/s | qgml GFLOP/s | qgml acceptance | torch acceptance |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for k in sorted(rows):
            q, t = rows[k].get("qgml"), rows[k].get("torch")
            if not q:
                continue
            acc = lambda x: f"{x['acceptance']:.3f}" if x and x.get("acceptance") is not None else "-"
            out.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {q['median_s']:.4f} | "
                       f"{t['median_s'] if t else float('nan'):.4f} | "
                       f"{(t['median_s'] / q['median_s']) if t else float('nan'):.1f} | "
                       f"{q['chain_steps_per_s']:.3g} | {t['chain_steps_per_s'] if t else float('nan'):.3g} | "
                       f"{q['gflops']:.2f} | {acc(q)} | {acc(t)} |")
    else:
        others = [i for i in qgml_impls if i != "qgml"]
        out.append("| precision | N | batch | w | qgml ms/epoch | torch ms/epoch | torch / qgml | qgml points/s |"
                   " qgml final loss | torch final loss |" + "".join(f" {i} ms/epoch | {i} / qgml |" for i in others))
        out.append("|---|---|---|---|---|---|---|---|---|---|" + "---|---|" * len(others))
        for k in sorted(rows):
            r = rows[k]
            q, t = r.get("qgml"), r.get("torch")
            if not q:
                continue
            extra = ""
            for i in others:
                o = r.get(i)
                extra += (f" {1e3 * o['median_s']:.3f} | {o['median_s'] / q['median_s']:.2f} |" if o else " - | - |")
            out.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]:g} | {1e3 * q['median_s']:.3f} | "
                       f"{(1e3 * t['median_s']) if t else float('nan'):.3f} | "
                       f"{(t['median_s'] / q['median_s']) if t else float('nan'):.2f} | {q['points_per_s']:.0f} | "
                       f"{q['final_loss']:.4g} | {(t['final_loss'] if t else float('nan')):.4g} |" + extra)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
