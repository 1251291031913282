#!/usr/bin/env python3
"""Epoch time of supervised training: the qgml program against the PyTorch baseline, in one run, on one data set.

For each N, back to back:
  1. qgml: `qgml train DATA.csv --task regression|classification --model.N N --training.epochs E
     --training.batch_size B --training.lr LR --data.validation_fraction 0 --data.standardize false
     --analysis.enabled false --output.plots false --output.directory DIR --quiet` (plus
     --model.precision, --training.early_stop 0, --training.checkpoint_every 0, Kokkos' thread option and any
     --qgml-arg), with OMP_NUM_THREADS = --threads, OMP_PROC_BIND=false, OPENBLAS_NUM_THREADS=1; the time of an
     epoch is the `seconds` column of RUN_DIR/history.csv (RUN_DIR: the one run directory the command created
     under DIR); qgml's number is the median (and min) over the epochs after the first (the first is the
     warm-up, as the baseline's --warmup 1);
  2. torch: perf/baselines/torch_supervised.py --data DATA.csv (the same file) with the same N, batch, loss,
     precision, learning rate and --threads, --warmup 1 --repeats E-1 by default, under --python (default
     build/perf-venv/bin/python, made by perf/make_venv.sh --peers).
DATA.csv: the baseline's synthetic set (torch_supervised.py --write-data: x ~ N(0, I) in R^D,
y = standardised sin(x_0) + 0.5 x_1 x_2, for logistic y = 1 where that is > 0), D feature columns then the
target, no header (qgml reads a first line as a header only if a cell is not a number: data_io.hpp).

Prints a table (N, qgml and torch median s/epoch, torch / qgml, GFLOP/s of each) and writes JSON lines to
--out (default perf/results/supervised-<UTC date>.jsonl): one line per (N, impl), suite "supervised_epoch",
impl "qgml" or "torch", the settings, median_s, min_s, points_per_s, flops_per_epoch (nominal: T (36 N^3 + D N^2),
one complex Hermitian eigh with eigenvectors and building H per point), gflops, torch_over_qgml (on both lines
of an N where both sides ran), git_revision (git rev-parse HEAD, "-dirty" with local changes), OMP_NUM_THREADS,
load averages, host. A side that fails gets "status": "failed" and "error" (no timing) and the others go on;
the exit status is then 1.

  perf/supervised_benchmark.py                                  # N 8 32, D 10, T 2000, batch 500, mse, double
  perf/supervised_benchmark.py --N 8 16 32 --loss logistic --epochs 11
  perf/supervised_benchmark.py --no-qgml                        # the torch half alone
  QGML_PROGRAM=/path/to/qgml perf/supervised_benchmark.py --qgml-arg=--training.kernel --qgml-arg=separate
The script needs only the standard library; the data set is written by --python (numpy).
"""
import argparse
import csv
import datetime
import json
import os
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BASELINE = os.path.join(HERE, "baselines", "torch_supervised.py")
SUITE = "supervised_epoch"
TASKS = {"mse": "regression", "logistic": "classification"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--qgml", default=os.environ.get("QGML_PROGRAM") or os.path.join(ROOT, "build", "openmp", "apps",
                                                                                   "qgml", "qgml"),
                   help="the qgml program (default: $QGML_PROGRAM, else build/openmp/apps/qgml/qgml)")
    p.add_argument("--python", default=os.path.join(ROOT, "build", "perf-venv", "bin", "python"),
                   help="Python with torch and numpy for the baseline and the data (default: build/perf-venv/bin/python)")
    p.add_argument("--N", type=int, nargs="+", default=[8, 32], help="Hilbert-space dimensions (default: 8 32)")
    p.add_argument("--D", type=int, default=10, help="features (default: 10)")
    p.add_argument("--T", type=int, default=2000, help="points (default: 2000)")
    p.add_argument("--batch", type=int, default=500, help="mini-batch size, 0 = full batch (default: 500)")
    p.add_argument("--loss", choices=sorted(TASKS), default="mse",
                   help="mse (qgml --task regression) or logistic (--task classification) (default: mse)")
    p.add_argument("--precision", choices=["double", "float"], default="double", help="(default: double)")
    p.add_argument("--lr", type=float, default=0.01, help="Adam learning rate (default: 0.01)")
    p.add_argument("--epochs", type=int, default=6,
                   help="qgml epochs; the first is a warm-up, the median is over the others (default: 6)")
    p.add_argument("--repeats", type=int, help="torch timed epochs (default: --epochs - 1)")
    p.add_argument("--warmup", type=int, default=1, help="torch untimed epochs (default: 1)")
    p.add_argument("--threads", type=int, default=2,
                   help="OMP_NUM_THREADS and Kokkos' thread option for qgml, torch.set_num_threads (default: 2)")
    p.add_argument("--seed", type=int, default=1234, help="seed of the data set and of the baseline (default: 1234)")
    p.add_argument("--qgml-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for qgml train (repeat; e.g. --qgml-arg=--training.kernel "
                        "--qgml-arg=separate)")
    p.add_argument("--no-qgml", action="store_true", help="run the torch half only")
    p.add_argument("--no-torch", action="store_true", help="run the qgml half only")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per qgml or torch run (default: 1800)")
    p.add_argument("--workdir", help="keep the data set and qgml's run directories here (default: a temporary "
                                     "directory, removed at the end)")
    p.add_argument("--out", help="JSON lines file, appended to (default: perf/results/supervised-<UTC date>.jsonl)")
    a = p.parse_args(argv)
    if a.repeats is None:
        a.repeats = max(a.epochs - 1, 1)
    if a.epochs < 1 or a.threads < 1 or a.T < 1 or a.D < 3 or a.batch < 0 or min(a.N) < 1:
        p.error("need --epochs >= 1, --threads >= 1, --T >= 1, --D >= 3, --batch >= 0 and --N >= 1")
    if a.out is None:
        a.out = os.path.join(ROOT, "perf", "results",
                             "supervised-" + datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d") + ".jsonl")
    return a


# ---------------------------------------------------------------------------------------------- helpers

def git_revision():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=30).stdout.strip()
        if not rev:
            return None
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        return None


def filter_stderr(text):
    """qgml's output without the Kokkos OpenMP binding warning."""
    skip = ("Kokkos::OpenMP::initialize WARNING", "In general, for best performance", "For best performance with",
            "For unit testing set OMP_PROC_BIND")
    return "\n".join(l for l in text.splitlines() if not any(s in l for s in skip)).strip()


def qgml_env(threads):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env["OMP_PROC_BIND"] = "false"
    env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def kokkos_threads_flag(qgml, env):
    """--kokkos-num-threads=N (Kokkos >= 3.7) or --kokkos-threads=N (older, which ignores the new spelling);
    the version from `qgml info`. Returns (flag, kokkos version or None)."""
    version = None
    try:
        proc = subprocess.run([qgml, "info"], capture_output=True, text=True, timeout=60, env=env)
        m = re.search(r"Kokkos (\d+)\.(\d+)(\.\d+)?", proc.stdout)
        if m:
            version = m.group(0).split()[1]
    except (OSError, subprocess.TimeoutExpired):
        pass
    new = True
    if version:
        major, minor = (int(x) for x in version.split(".")[:2])
        new = (major, minor) >= (3, 7)
    return ("--kokkos-num-threads" if new else "--kokkos-threads"), version


def nominal_flops(T, N, D):
    """Per epoch: a complex Hermitian eigh with eigenvectors (36 N^3) and building H (D N^2) per point."""
    return T * (36.0 * N ** 3 + D * N ** 2)


def read_history(path):
    """The rows of history.csv as dicts of floats (by column name)."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for r in rows:
        d = {}
        for k, v in r.items():
            try:
                d[k] = float(v)
            except (TypeError, ValueError):
                d[k] = None
        out.append(d)
    return out


# ---------------------------------------------------------------------------------------------- the two sides

def make_data(a, path):
    cmd = [a.python, BASELINE, "--write-data", path, "--T", str(a.T), "--D", str(a.D), "--seed", str(a.seed),
           "--loss", a.loss]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not os.path.exists(path):
        sys.exit(f"supervised_benchmark.py: cannot write the data set with {shlex.join(cmd)}:\n{proc.stderr[-2000:]}\n"
                 f"(--python needs numpy: perf/make_venv.sh)")


def run_qgml(a, N, data, workdir, flag):
    """Returns a dict: status ok with the epoch times, or failed with error."""
    parent = os.path.join(workdir, f"qgml-N{N}")
    if os.path.exists(parent):
        shutil.rmtree(parent)
    os.makedirs(parent)
    cmd = [a.qgml, "train", data, "--task", TASKS[a.loss], "--model.N", str(N), "--training.epochs", str(a.epochs),
           "--training.batch_size", str(a.batch), "--training.lr", repr(a.lr), "--data.validation_fraction", "0",
           "--data.standardize", "false", "--analysis.enabled", "false", "--output.plots", "false",
           "--model.precision", a.precision, "--training.early_stop", "0", "--training.checkpoint_every", "0",
           "--output.directory", parent, "--quiet", f"{flag}={a.threads}"] + a.qgml_arg
    res = {"command": shlex.join(cmd)}
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=qgml_env(a.threads))
    except subprocess.TimeoutExpired:
        return dict(res, status="failed", error=f"timed out after {a.timeout:.0f} s")
    except OSError as e:
        return dict(res, status="failed", error=f"cannot start {a.qgml}: {e}")
    res["wall_s"] = time.perf_counter() - t0
    if proc.returncode != 0:
        msg = filter_stderr(proc.stderr + "\n" + proc.stdout)
        return dict(res, status="failed", error=f"exit {proc.returncode}: {msg[-1500:]}")
    runs = [d for d in sorted(os.listdir(parent))
            if os.path.isdir(os.path.join(parent, d)) and not os.path.islink(os.path.join(parent, d))]
    if len(runs) != 1:
        return dict(res, status="failed", error=f"expected one run directory under {parent}, found {runs}")
    run_dir = os.path.join(parent, runs[0])
    try:
        hist = read_history(os.path.join(run_dir, "history.csv"))
    except OSError as e:
        return dict(res, status="failed", error=f"no history: {e}")
    secs = [r.get("seconds") for r in hist]
    if not secs or any(s is None for s in secs):
        return dict(res, status="failed", error=f"{run_dir}/history.csv: no 'seconds' column or an empty row")
    if len(hist) != a.epochs:
        return dict(res, status="failed", error=f"{run_dir}/history.csv has {len(hist)} epochs, asked for {a.epochs}")
    timed = secs[1:] if len(secs) > 1 else secs
    last = hist[-1]
    res.update(status="ok", run_dir=run_dir, epoch_seconds=secs, median_s=statistics.median(timed),
               min_s=min(timed), timed_epochs=len(timed), final_loss=last.get("total"),
               final_supervised=last.get("supervised"), final_train_rmse=last.get("train_rmse"),
               final_train_accuracy=last.get("train_accuracy"),
               supervised_columns="supervised" in last)
    return res


def run_torch(a, N, data):
    cmd = [a.python, BASELINE, "--data", data, "--N", str(N), "--batch", str(a.batch), "--loss", a.loss,
           "--precision", a.precision, "--lr", repr(a.lr), "--threads", str(a.threads), "--repeats", str(a.repeats),
           "--warmup", str(a.warmup), "--seed", str(a.seed)]
    res = {"command": shlex.join(cmd)}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=qgml_env(a.threads))
    except subprocess.TimeoutExpired:
        return dict(res, status="failed", error=f"timed out after {a.timeout:.0f} s")
    except OSError as e:
        return dict(res, status="failed", error=f"cannot start {a.python}: {e}")
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        why = proc.stderr.strip()[-1500:] or f"exit {proc.returncode}, no output"
        return dict(res, status="failed", error=why)
    rec = json.loads(lines[-1])
    rec.update(res, status="ok")
    return rec


# ---------------------------------------------------------------------------------------------- main

def fmt(v, spec):
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def main(argv=None):
    a = parse_args(argv)
    if not a.no_qgml and not os.access(a.qgml, os.X_OK):
        sys.exit(f"supervised_benchmark.py: no qgml program at {a.qgml} (build it, or --qgml / QGML_PROGRAM)")
    if not os.access(a.python, os.X_OK):
        sys.exit(f"supervised_benchmark.py: no Python at {a.python}: run perf/make_venv.sh --peers, or --python")
    workdir = a.workdir or tempfile.mkdtemp(prefix="qgml-supervised-")
    os.makedirs(workdir, exist_ok=True)
    env = qgml_env(a.threads)
    common = {
        "suite": SUITE, "D": a.D, "T": a.T, "batch": a.batch, "loss": a.loss, "task": TASKS[a.loss],
        "precision": a.precision, "lr": a.lr, "threads": a.threads, "seed": a.seed,
        "git_revision": git_revision(), "OMP_NUM_THREADS": env["OMP_NUM_THREADS"],
        "OMP_PROC_BIND": env["OMP_PROC_BIND"], "OPENBLAS_NUM_THREADS": env["OPENBLAS_NUM_THREADS"],
        "host": socket.gethostname(),
        "time_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    flag, kokkos_version = (None, None) if a.no_qgml else kokkos_threads_flag(a.qgml, env)
    load = os.getloadavg()
    log(f"supervised_benchmark: D={a.D} T={a.T} batch={a.batch} loss={a.loss} {a.precision} threads={a.threads} "
        f"epochs={a.epochs}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs; "
        f"work directory {workdir}")
    data = os.path.join(workdir, "data.csv")
    make_data(a, data)

    records, rows, failed = [], [], False
    for N in a.N:
        flops = nominal_flops(a.T, N, a.D)
        q = t = None
        if not a.no_qgml:
            log(f"N={N}: qgml ...")
            q = run_qgml(a, N, data, workdir, flag)
            if q["status"] != "ok":
                failed = True
                log(f"N={N}: qgml failed: {q['error']}")
        if not a.no_torch:
            log(f"N={N}: torch ...")
            t = run_torch(a, N, data)
            if t["status"] != "ok":
                failed = True
                log(f"N={N}: torch failed: {t['error']}")
        ratio = (t["median_s"] / q["median_s"]
                 if q and t and q["status"] == "ok" and t["status"] == "ok" and q["median_s"] > 0 else None)
        load = os.getloadavg()
        base = dict(common, N=N, flops_per_epoch=flops, torch_over_qgml=ratio,
                    loadavg=[round(x, 2) for x in load])
        if q is not None:
            rec = dict(base, impl="qgml", status=q["status"], qgml_program=os.path.abspath(a.qgml),
                       kokkos_version=kokkos_version, command=q["command"], epochs=a.epochs)
            if q["status"] == "ok":
                rec.update(median_s=q["median_s"], min_s=q["min_s"], timed_epochs=q["timed_epochs"],
                           epoch_seconds=q["epoch_seconds"], points_per_s=a.T / q["median_s"],
                           gflops=flops / q["median_s"] / 1e9, final_loss=q["final_loss"],
                           final_supervised=q["final_supervised"], final_train_rmse=q["final_train_rmse"],
                           final_train_accuracy=q["final_train_accuracy"],
                           supervised_columns=q["supervised_columns"], wall_s=q["wall_s"])
            else:
                rec["error"] = q["error"]
            records.append(rec)
        if t is not None:
            rec = dict(base, impl="torch", status=t["status"], command=t["command"], peer_python=a.python)
            if t["status"] == "ok":
                rec.update({k: t[k] for k in ("torch_version", "repeats", "warmup", "median_s", "min_s",
                                              "points_per_s", "final_loss", "skipped_steps", "device")})
                rec["torch_threads"] = t["threads"]
                rec["gflops"] = flops / t["median_s"] / 1e9
            else:
                rec["error"] = t["error"]
            records.append(rec)
        rows.append((N, q, t, ratio, flops))

    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "a") as fh:
        for rec in records:
            fh.write(json.dumps(rec) + "\n")

    def med(side):
        return side["median_s"] if side and side["status"] == "ok" else None

    print(f"\nsupervised epoch, D={a.D} T={a.T} batch={a.batch} loss={a.loss} {a.precision}, {a.threads} threads "
          f"(git {common['git_revision']}); nominal flops/epoch = T (36 N^3 + D N^2)")
    print(f"{'N':>4} {'qgml s/epoch':>13} {'torch s/epoch':>14} {'torch/qgml':>11} {'GFLOP/epoch':>12} "
          f"{'qgml GFLOP/s':>13} {'torch GFLOP/s':>14}")
    for N, q, t, ratio, flops in rows:
        mq, mt = med(q), med(t)
        print(f"{N:>4} {fmt(mq, '13.4g') if mq else ('failed' if q else '-'):>13} "
              f"{fmt(mt, '14.4g') if mt else ('failed' if t else '-'):>14} {fmt(ratio, '11.2f'):>11} "
              f"{flops / 1e9:>12.3f} {fmt(flops / mq / 1e9 if mq else None, '13.2f'):>13} "
              f"{fmt(flops / mt / 1e9 if mt else None, '14.2f'):>14}")
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; JSON lines appended to {a.out}")
    if not a.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
