#!/usr/bin/env python3
"""Intrinsic-dimension benchmark: `qgml train DATA.csv` with every default against scikit-dimension.

What it measures. For every data set of the grid (manifold x noise x number of points T x seed, the
manifolds in MANIFOLDS below, each with a known intrinsic dimension d), the points are generated once
with `qgml generate` and the same CSV file is given to every method:
  qgml     `qgml train DATA.csv --quiet --output.directory ... --output.name ... --output.plots false`
           (nothing but output settings: N, w, epochs, stopping and the gap rule are qgml's defaults);
           the estimate is "mode" of the run's dimension_summary.json (median, mean, the fraction of
           points at the mode, and N / epochs / w where the run's files say them, are recorded too)
  TwoNN, MLE, lPCA, DANCo, ESS
           scikit-dimension (skdim.id.<name>() with its default parameters, then fit(X).dimension_,
           the global estimate)
and the wall time of each (the qgml process, from start to exit; each skdim fit, after one untimed
warm-up fit per estimator on a small data set so that import and numba compilation are not counted).

What counts as a hit. An estimate is an exact hit when it rounded to the nearest integer (halves up)
equals the true d. An estimator that raises, returns NaN / inf, or a qgml run that fails, is a miss,
recorded with its error text.

How to run (from the repository root; keep the machine otherwise idle for the timings):
  perf/make_venv.sh                                    # once: build/perf-venv with numpy, skdim, matplotlib
  build/perf-venv/bin/python perf/dimension_benchmark.py --quick --only circle helix   # a few minutes
  build/perf-venv/bin/python perf/dimension_benchmark.py                               # the full grid (hours)
  perf/dimension_benchmark.py --report perf/results/dimension-20261123.jsonl   # tables and plot again
(started with a python that lacks numpy / skdim it re-executes itself with the venv's python:
$QGML_PERF_VENV, else build/perf-venv).

Grid options: --noise (0 0.05 0.1), --points (1000 2000), --seeds (1), --only NAME... (manifolds, by
name or generator), --methods (qgml TwoNN MLE lPCA DANCo ESS), --quick (T = 1000, noise 0 and 0.1).
Other: --qgml PATH (build/openmp/apps/qgml/qgml), --out DIR (perf/results), --name (dimension-<date>),
--work DIR (data files and qgml run directories; build/dimension-benchmark/NAME), --config-shim (hand
qgml train a two-line YAML with data.file instead of the CSV, for binaries whose train needs a config
file), --python-data (generate the points in Python with the formulas of core/include/qgml/data/
manifolds.hpp, for binaries without `qgml generate`; not the same random numbers), --timeout (per qgml
call), --report FILE.jsonl (nothing run: the tables and the plot of an existing file).

Output (DIR = --out, NAME = --name):
  DIR/NAME.jsonl      a first line {"kind": "run_info", ...} (git revision, host, date, `qgml info`,
                      python / numpy / skdim versions, settings, data source), then one line per
                      (data set, method) with "kind": "result", written as soon as it is measured,
                      and a last {"kind": "run_end"} line
  DIR/NAME.md         (1) exact hits per method per noise level and overall, (2) the estimate of every
                      method on every data set (exact hits in bold), (3) median wall seconds per method
  DIR/NAME-hits.png   exact hits per method per noise level (grouped bars)
Progress goes to stderr, table (1) to stdout at the end. Ctrl-C stops the run; what was measured is
kept and reported.
"""
import argparse
import datetime
import glob
import hashlib
import json
import math
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The benchmark set. Edit freely: name (used by --only and in the tables), qgml generator, true intrinsic
# dimension d, ambient dimension D, and extra `qgml generate` options (without the leading "--").
MANIFOLDS = [
    # name           generator     d   D   extra options
    ("circle",       "circle",     1,  2,  {}),                                                  # S^1 in R^2
    ("sphere2",      "sphere",     2,  3,  {"data.dimension": 3}),                               # S^2 in R^3
    ("sphere4",      "sphere",     4,  5,  {"data.dimension": 5}),                               # S^4 in R^5
    ("sphere10",     "sphere10",   10, 11, {}),                                                  # S^10 in R^11
    ("affine",       "affine",     3,  5,  {}),                                                  # 3-space in R^5
    ("helix",        "helix",      1,  3,  {}),                                                  # closed curve in R^3
    ("swiss_roll",   "swiss_roll", 2,  3,  {}),                                                  # R^3
    ("hypercube3",   "hypercube",  3,  5,  {"data.intrinsic_dimension": 3, "data.dimension": 5}),  # solid 3-cube in R^5
    ("mobius",       "mobius",     2,  3,  {}),                                                  # R^3
    ("curve13",      "curve13",    1,  13, {}),                                                  # closed curve in R^13
]

ALL_METHODS = ["qgml", "TwoNN", "MLE", "lPCA", "DANCo", "ESS"]
SKDIM_METHODS = ALL_METHODS[1:]
DEFAULTS = dict(noise=[0.0, 0.05, 0.1], points=[1000, 2000], seeds=[1])
QUICK = dict(noise=[0.0, 0.1], points=[1000])
RETRIES = 3          # qgml calls that fail because the binary is being relinked are retried
RETRY_WAIT_S = 5.0


def rel(path):
    """path relative to the repository root when inside it, else absolute."""
    path = os.path.abspath(path)
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def log(msg):
    print(f"[dimbench {datetime.datetime.now().strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------------
# Environment: re-execute with the venv's python when numpy / skdim / matplotlib are missing.

def venv_dir():
    return os.environ.get("QGML_PERF_VENV") or os.path.join(ROOT, "build", "perf-venv")


def ensure_packages(needed, venv=None, script=None, flag="QGML_DIMBENCH_REEXEC", how=None):
    """Returns when the modules `needed` import; else re-executes `script` (this file) with the python of
    `venv` (venv_dir()) once (the environment variable `flag` marks the second start), else exits saying
    `how` to make that environment."""
    missing = []
    for mod in needed:
        try:
            __import__(mod)
        except ImportError:
            missing.append(mod)
    if not missing:
        return
    venv = venv or venv_dir()
    script = os.path.abspath(script or __file__)
    py = os.path.join(venv, "bin", "python")
    in_venv = os.path.realpath(sys.prefix) == os.path.realpath(venv)
    if os.path.exists(py) and not in_venv and not os.environ.get(flag):
        log(f"{sys.executable} lacks {', '.join(missing)}: re-executing with {py}")
        os.environ[flag] = "1"
        os.execv(py, [py, script] + sys.argv[1:])
    sys.exit(f"{os.path.basename(script)}: python modules missing: {', '.join(missing)}; " +
             (how or "run perf/make_venv.sh and start this script with build/perf-venv/bin/python (or set "
                     "QGML_PERF_VENV)"))


# ----------------------------------------------------------------------------------------------------
# Running qgml.

def filter_stderr(text):
    """qgml's stderr without the Kokkos OpenMP binding warning."""
    skip = ("Kokkos::OpenMP::initialize WARNING", "In general, for best performance", "For best performance with",
            "For unit testing set OMP_PROC_BIND")
    return "\n".join(l for l in text.splitlines() if not any(s in l for s in skip)).strip()


def run_qgml(qgml, args, timeout, what):
    """Runs qgml with args; returns (CompletedProcess or None, seconds of the successful attempt, error).
    Retries when the binary cannot be started or changes while it runs (the lead's build relinks it)."""
    def mtime():
        try:
            return os.stat(qgml).st_mtime_ns
        except OSError:
            return None

    err = None
    for attempt in range(RETRIES + 1):
        before = mtime()
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([qgml] + args, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, time.perf_counter() - t0, f"{what}: timed out after {timeout} s"
        except OSError as e:  # missing, text file busy, exec format error while the linker writes it
            err = f"{what}: cannot start {qgml}: {e}"
        else:
            seconds = time.perf_counter() - t0
            relinked = mtime() != before
            if proc.returncode == 0:
                return proc, seconds, None
            err = f"{what}: exit {proc.returncode}: " + (filter_stderr(proc.stderr)[-800:] or proc.stdout[-800:])
            if not (relinked or proc.returncode in (126, 127) or proc.returncode < 0):
                return proc, seconds, err
        if attempt < RETRIES:
            log(f"  {err.splitlines()[0][:200]} -- retrying in {RETRY_WAIT_S:.0f} s (binary being rebuilt?)")
            time.sleep(RETRY_WAIT_S)
    return None, 0.0, err


def wait_for_binary(qgml):
    """True when qgml exists, waiting a little for a relink in progress."""
    for attempt in range(RETRIES + 1):
        if os.access(qgml, os.X_OK):
            return True
        if attempt < RETRIES:
            log(f"no executable {qgml} yet -- waiting {RETRY_WAIT_S:.0f} s (binary being rebuilt?)")
            time.sleep(RETRY_WAIT_S)
    return False


def qgml_has_generate(qgml):
    for attempt in range(RETRIES + 1):
        try:
            proc = subprocess.run([qgml, "--help"], capture_output=True, text=True, timeout=60)
            text = proc.stdout + proc.stderr
            if "usage" in text:
                return "qgml generate" in text
        except (OSError, subprocess.TimeoutExpired):
            pass
        if attempt < RETRIES:
            time.sleep(RETRY_WAIT_S)
    return False


def qgml_info(qgml):
    info = {"path": os.path.abspath(qgml)}
    try:
        st = os.stat(qgml)
        info["mtime"] = datetime.datetime.fromtimestamp(st.st_mtime).isoformat(timespec="seconds")
        with open(qgml, "rb") as f:
            info["sha256"] = hashlib.sha256(f.read()).hexdigest()
    except OSError as e:
        info["error"] = str(e)
        return info
    for args in (["--version"], ["info"]):
        proc, _, err = run_qgml(qgml, args, 60, "qgml " + args[0])
        if proc is not None and proc.returncode == 0:
            info["qgml " + " ".join(args)] = filter_stderr(proc.stdout)
    rev = git_revision(os.path.dirname(os.path.abspath(qgml)))
    if rev:
        info["source_git_revision"] = rev
    return info


def git_revision(where):
    try:
        rev = subprocess.run(["git", "-C", where, "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=30).stdout.strip()
        if not rev:
            return None
        dirty = subprocess.run(["git", "-C", where, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        return None


def simple_yaml(path):
    """Two-level YAML of qgml's config.yaml: {"section.key": "value"}."""
    out, section = {}, None
    try:
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0].rstrip()
                if not line.strip():
                    continue
                if not line.startswith((" ", "\t")) and line.endswith(":"):
                    section = line[:-1].strip()
                elif ":" in line and section:
                    k, v = line.strip().split(":", 1)
                    out[f"{section}.{k.strip()}"] = v.strip().strip('"')
    except OSError:
        pass
    return out


def number(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return v
    return int(f) if f.is_integer() and "." not in str(v) and "e" not in str(v).lower() else f


def qgml_run_details(run_dir, summary):
    """N, epochs and w of a qgml run, from dimension_summary.json if it says them, else the run's files."""
    out = {}
    for key, names in (("N", ("N", "matrix_size", "model_N", "model.N")),
                       ("epochs", ("epochs", "epochs_run", "training_epochs")),
                       ("w", ("w", "training.w"))):
        for n in names:
            if n in summary:
                out[key] = summary[n]
                break
    cfg = simple_yaml(os.path.join(run_dir, "config.yaml"))
    if "N" not in out and "model.N" in cfg:
        out["N"] = number(cfg["model.N"])
    if "w" not in out and "training.w" in cfg:
        out["w"] = number(cfg["training.w"])
    if "training.epochs" in cfg:
        out["epochs_configured"] = number(cfg["training.epochs"])
    if "training.early_stop" in cfg:
        out["early_stop"] = number(cfg["training.early_stop"])
    hist = os.path.join(run_dir, "history.csv")
    if "epochs" not in out and os.path.exists(hist):
        with open(hist) as f:
            rows = [l for l in f.read().splitlines()[1:] if l.strip()]
        out["epochs"] = len(rows)
    return out


def run_qgml_train(args, csv, work_runs, tag):
    parent = os.path.join(work_runs, tag)
    os.makedirs(parent, exist_ok=True)
    target = csv
    if args.config_shim:
        target = os.path.join(parent, "data.yaml")
        with open(target, "w") as f:
            f.write(f"data:\n  file: {os.path.abspath(csv)}\n")
    before = set(os.listdir(parent))
    proc, seconds, err = run_qgml(args.qgml, ["train", target, "--quiet", "--output.directory", parent,
                                              "--output.name", tag, "--output.plots", "false"],
                                  args.timeout, "qgml train")
    rec = {"seconds": round(seconds, 4), "estimate": None, "error": err}
    new = sorted(d for d in set(os.listdir(parent)) - before if os.path.isdir(os.path.join(parent, d)))
    if new:
        rec["run_dir"] = rel(os.path.join(parent, new[-1]))
    if err:
        return rec
    if not new:
        rec["error"] = f"qgml train exited 0 but made no run directory under {parent}"
        return rec
    run_dir = os.path.join(parent, new[-1])
    path = os.path.join(run_dir, "dimension_summary.json")
    try:
        with open(path) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        rec["error"] = f"no readable dimension_summary.json in {run_dir}: {e}"
        return rec
    mode = summary.get("mode")
    frac = summary.get("fraction") or []
    rec.update(estimate=mode, median=summary.get("median"), mean=summary.get("mean"),
               fraction_at_mode=(frac[mode] if isinstance(mode, int) and 0 <= mode < len(frac) else None),
               histogram=summary.get("histogram"))
    rec.update(qgml_run_details(run_dir, summary))
    known = {"mode", "median", "mean", "fraction", "histogram", "N", "epochs", "w"}
    extra = {k: v for k, v in summary.items() if k not in known and not isinstance(v, (list, dict))}
    if extra:
        rec["summary_extra"] = extra
    return rec


# ----------------------------------------------------------------------------------------------------
# Data.

def python_points(generator, T, noise, seed, extra):
    """The formulas of core/include/qgml/data/manifolds.hpp and datasets.hpp with numpy's RNG (same
    distributions, different random numbers): a stand-in until the binary has `qgml generate`."""
    import numpy as np
    rng = np.random.default_rng(seed)
    D = int(extra.get("data.dimension", 3))
    if generator == "circle":
        t = rng.uniform(0, 2 * np.pi, T)
        x = np.c_[np.cos(t), np.sin(t)]
    elif generator in ("sphere", "sphere10"):
        D = 11 if generator == "sphere10" else D
        g = rng.standard_normal((T, D))
        x = g / np.linalg.norm(g, axis=1, keepdims=True)
    elif generator == "affine":
        a, b = rng.standard_normal((5, 3)), rng.standard_normal(5)
        x = rng.uniform(0, 1, (T, 3)) @ a.T + b
    elif generator == "helix":
        s = rng.uniform(0, 2 * np.pi, T)
        r = 2 + np.cos(8 * s)
        x = np.c_[r * np.cos(s), r * np.sin(s), np.sin(8 * s)]
    elif generator == "swiss_roll":
        s = 1.5 * np.pi * (1 + 2 * rng.uniform(0, 1, T))
        x = np.c_[s * np.cos(s), 21 * rng.uniform(0, 1, T), s * np.sin(s)]
    elif generator == "hypercube":
        d = int(extra.get("data.intrinsic_dimension", 2))
        q, _ = np.linalg.qr(rng.standard_normal((D, D)))
        x = rng.uniform(-1, 1, (T, d)) @ q[:, :d].T
    elif generator == "mobius":
        u, v = rng.uniform(0, 2 * np.pi, T), rng.uniform(-1, 1, T)
        r = 1 + 0.5 * v * np.cos(0.5 * u)
        x = np.c_[r * np.cos(u), r * np.sin(u), 0.5 * v * np.sin(0.5 * u)]
    elif generator == "curve13":
        s = rng.uniform(0, 1, T)
        f = np.arange(13) // 2 + 1
        ph = 2 * np.pi * f[None, :] * s[:, None]
        x = np.where(np.arange(13) % 2 == 0, np.cos(ph), np.sin(ph)) / f
    else:
        raise ValueError(f"--python-data has no generator {generator!r}")
    return x + noise * rng.standard_normal(x.shape)


def make_data(args, m, T, noise, seed, data_dir):
    """Writes the data set's CSV once (reused when it exists); returns (path, error)."""
    name, gen, d, D, extra = m
    path = os.path.join(data_dir, f"{name}-T{T}-noise{noise:g}-seed{seed}.csv")
    if os.path.exists(path) and not args.regenerate:
        return path, None
    if args.python_data:
        import numpy as np
        x = python_points(gen, T, noise, seed, extra)
        tmp = path + ".tmp"
        np.savetxt(tmp, x, delimiter=",", header=",".join(f"x{k}" for k in range(x.shape[1])), comments="",
                   fmt="%.17g")
        os.replace(tmp, path)
        return path, None
    opts = ["generate", "--data.generator", gen, "--data.points", str(T), "--data.noise", repr(float(noise)),
            "--data.seed", str(seed)]
    for k, v in extra.items():
        opts += [f"--{k}", str(v)]
    proc, _, err = run_qgml(args.qgml, opts + ["--out", path], args.timeout, "qgml generate")
    return (None, err) if err else (path, None)


def load_csv(path, D, T):
    import numpy as np
    x = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    if x.shape != (T, D):
        raise ValueError(f"{path}: {x.shape[0]} x {x.shape[1]} points, expected {T} x {D}")
    return x


# ----------------------------------------------------------------------------------------------------
# scikit-dimension.

def skdim_fit(name, x):
    import numpy as np
    import skdim
    rec = {"estimate": None, "error": None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            est = getattr(skdim.id, name)().fit(x)
            value = float(est.dimension_)
        except Exception as e:  # any failure of the estimator is a miss with its text
            rec["error"] = f"{type(e).__name__}: {e}"[:800]
            value = None
        rec["seconds"] = round(time.perf_counter() - t0, 4)
    if value is not None:
        if math.isfinite(value):
            rec["estimate"] = value
        else:
            rec["error"] = f"estimate is {value}"
    if caught:
        msgs = sorted({f"{w.category.__name__}: {w.message}"[:200] for w in caught})
        rec["warnings"] = msgs[:5]
    return rec


def skdim_warmup(methods):
    """One untimed fit per estimator on a small data set: imports, numba compilation, first-call costs."""
    import numpy as np
    rng = np.random.default_rng(0)
    x = np.c_[rng.uniform(-1, 1, (200, 2)), 0.01 * rng.standard_normal((200, 1))]
    for name in methods:
        t0 = time.perf_counter()
        skdim_fit(name, x)
        log(f"warm-up {name}: {time.perf_counter() - t0:.1f} s (untimed)")


# ----------------------------------------------------------------------------------------------------
# Report.

def exact_hit(estimate, true_d):
    if estimate is None:
        return None, False
    r = int(math.floor(float(estimate) + 0.5))
    return r, r == true_d


def read_jsonl(path):
    info, rows = {}, []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            obj = json.loads(line)
            kind = obj.get("kind")
            if kind == "run_info":
                info = obj
            elif kind == "result":
                rows.append(obj)
            elif kind == "run_end":
                info["run_end"] = obj
    return info, rows


def report_existing(args, report):
    """--report FILE.jsonl: report(info, rows, out_dir, name) of the file, into --out (else the file's
    directory) under --name (else the file's name)."""
    info, rows = read_jsonl(args.report)
    out = args.out or os.path.dirname(os.path.abspath(args.report))
    name = args.name or os.path.splitext(os.path.basename(args.report))[0]
    os.makedirs(out, exist_ok=True)
    report(info, rows, out, name)


def method_order(rows):
    seen = {r["method"] for r in rows}
    return [m for m in ALL_METHODS if m in seen] + sorted(seen - set(ALL_METHODS))


def hits_table(rows):
    """Markdown table (1): exact hits per method per noise level and overall; and the counts."""
    methods = method_order(rows)
    noises = sorted({r["noise"] for r in rows})
    counts = {}
    for m in methods:
        for n in noises + ["all"]:
            sel = [r for r in rows if r["method"] == m and (n == "all" or r["noise"] == n)]
            counts[m, n] = (sum(1 for r in sel if r["exact"]), len(sel))
    head = "| method | " + " | ".join(f"noise {n:g}" for n in noises) + " | overall |"
    lines = [head, "|" + "---|" * (len(noises) + 2)]
    for m in methods:
        cells = [f"{counts[m, n][0]}/{counts[m, n][1]}" for n in noises + ["all"]]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(lines), methods, noises, counts


def fmt_estimate(r):
    if r.get("error") and r.get("estimate") is None:
        return "err"
    e = r["estimate"]
    s = f"{e:d}" if isinstance(e, int) else f"{e:.2f}"
    if r["method"] == "qgml" and r.get("fraction_at_mode") is not None:
        s += f" ({r['fraction_at_mode']:.2f})"
    return f"**{s}**" if r["exact"] else s


def dataset_key(r):
    return (r["T"], r["noise"], MANIFOLD_ORDER.get(r["manifold"], 99), r["manifold"], r["seed"])


MANIFOLD_ORDER = {m[0]: i for i, m in enumerate(MANIFOLDS)}


def write_report(info, rows, md_path, png_path):
    table1, methods, noises, counts = hits_table(rows)
    out = [f"# Intrinsic dimension benchmark: qgml with defaults vs scikit-dimension", ""]
    settings = info.get("settings", {})
    q = info.get("qgml") or {}
    qline = (q.get("qgml info") or q.get("qgml --version") or "").splitlines()
    out += [f"- date {info.get('date', '?')}, host {info.get('host', '?')}, git {info.get('git_revision', '?')}",
            f"- qgml: {q.get('path', '?')} ({qline[0] if qline else 'version unknown'}; binary of "
            f"{q.get('mtime', '?')}, source {q.get('source_git_revision', '?')})",
            f"- scikit-dimension {info.get('skdim_version', '?')}, numpy {info.get('numpy_version', '?')}, "
            f"python {info.get('python_version', '?')}",
            f"- data: {info.get('data_source', '?')}; qgml train input: "
            f"{'two-line YAML (--config-shim)' if settings.get('config_shim') else 'the CSV file'}",
            f"- grid: noise {settings.get('noise')}, T {settings.get('points')}, seeds {settings.get('seeds')}, "
            f"{len({(r['manifold'], r['T'], r['noise'], r['seed']) for r in rows})} data sets",
            "- exact hit: the estimate rounded to the nearest integer (halves up) equals the true d; "
            "errors and NaN are misses. qgml's estimate is the mode of its per-point estimates.", ""]
    end = info.get("run_end")
    if end and end.get("interrupted"):
        out += ["**The run was interrupted: the tables hold what was measured.**", ""]
    out += ["## (1) Exact hits per method and noise level", "", table1, ""]

    out += ["## (2) Estimates per data set",
            "",
            "Bold: exact hit. qgml: the mode, with the fraction of points at the mode in brackets; "
            "err: see the errors below.", ""]
    out.append("| manifold | d | D | T | noise | seed | " + " | ".join(methods) + " |")
    out.append("|" + "---|" * (6 + len(methods)))
    by_ds = {}
    for r in rows:
        by_ds.setdefault(dataset_key(r), {})[r["method"]] = r
    errors = []
    for key in sorted(by_ds):
        ms = by_ds[key]
        any_r = next(iter(ms.values()))
        cells = []
        for m in methods:
            r = ms.get(m)
            cells.append(fmt_estimate(r) if r else "")
            if r and r.get("error"):
                errors.append(f"- {any_r['manifold']} T {any_r['T']} noise {any_r['noise']:g} seed "
                              f"{any_r['seed']}, {m}: {r['error'].splitlines()[0][:300] if r['error'] else ''}")
        out.append(f"| {any_r['manifold']} | {any_r['true_d']} | {any_r['D']} | {any_r['T']} | "
                   f"{any_r['noise']:g} | {any_r['seed']} | " + " | ".join(cells) + " |")
    out.append("")
    qrows = [r for r in rows if r["method"] == "qgml" and r.get("estimate") is not None]
    if qrows:
        out += ["qgml's choices per data set (from dimension_summary.json or the run's files):", "",
                "| manifold | T | noise | seed | mode | median | mean | at mode | N | epochs | w | stopped early | verdict |",
                "|" + "---|" * 13]
        for r in sorted(qrows, key=dataset_key):
            ex = r.get("summary_extra", {})
            cells = [r["manifold"], r["T"], f"{r['noise']:g}", r["seed"], r["estimate"], r.get("median"),
                     f"{r['mean']:.2f}" if isinstance(r.get("mean"), (int, float)) else None,
                     f"{r['fraction_at_mode']:.2f}" if isinstance(r.get("fraction_at_mode"), float) else None,
                     r.get("N"), r.get("epochs"), r.get("w"), ex.get("stopped_early"), ex.get("verdict")]
            out.append("| " + " | ".join("" if c is None else str(c) for c in cells) + " |")
        out.append("")
    if errors:
        out += ["Errors:", ""] + errors + [""]

    out += ["## (3) Wall seconds per method", "",
            "qgml: the whole `qgml train` process (training and analysis); skdim: one `fit` after an untimed "
            "warm-up. Median over the data sets, per T and overall.", ""]
    Ts = sorted({r["T"] for r in rows})
    out.append("| method | " + " | ".join(f"median T {t}" for t in Ts) + " | median | max | total |")
    out.append("|" + "---|" * (len(Ts) + 4))
    for m in methods:
        secs = [r["seconds"] for r in rows if r["method"] == m and r.get("seconds") is not None]
        per_t = []
        for t in Ts:
            s = [r["seconds"] for r in rows if r["method"] == m and r["T"] == t and r.get("seconds") is not None]
            per_t.append(f"{statistics.median(s):.3g}" if s else "")
        if secs:
            out.append(f"| {m} | " + " | ".join(per_t) +
                       f" | {statistics.median(secs):.3g} | {max(secs):.3g} | {sum(secs):.4g} |")
    out.append("")
    with open(md_path, "w") as f:
        f.write("\n".join(out))

    plot_hits(methods, noises, counts, png_path, info)
    return table1


def plot_hits(methods, noises, counts, png_path, info):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    groups = noises + ["all"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [len(noises), 1.3]})
    width = 0.8 / max(1, len(methods))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, gs in ((axes[0], noises), (axes[1], ["all"])):
        for i, m in enumerate(methods):
            xs = [g + (i - (len(methods) - 1) / 2) * width for g in range(len(gs))]
            hs = [counts[m, n][0] for n in gs]
            bars = ax.bar(xs, hs, width * 0.95, label=m, color=colors[i % len(colors)],
                          edgecolor="black" if m == "qgml" else None, linewidth=1.2 if m == "qgml" else 0)
            for b, n in zip(bars, gs):
                ax.annotate(f"{counts[m, n][0]}", (b.get_x() + b.get_width() / 2, b.get_height()),
                            ha="center", va="bottom", fontsize=7)
        totals = [counts[methods[0], n][1] for n in gs]
        for g, tot in enumerate(totals):
            ax.hlines(tot, g - 0.45, g + 0.45, colors="gray", linestyles="dashed", linewidth=1)
        ax.set_xticks(range(len(gs)))
        ax.set_xticklabels([f"noise {n:g}\n({t} data sets)" if n != "all" else f"overall\n({t} data sets)"
                            for n, t in zip(gs, totals)])
        ax.set_ylim(0, max(totals) * 1.12 if totals and max(totals) else 1)
        ax.grid(axis="y", alpha=0.3)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].set_ylabel("exact hits (round(estimate) = d)")
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    fig.suptitle(f"Intrinsic dimension: exact hits per method (dashed: number of data sets)\n"
                 f"{info.get('name', '')}, git {str(info.get('git_revision', '?'))[:12]}", fontsize=10)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)


def report(info, rows, out_dir, name):
    md, png = os.path.join(out_dir, name + ".md"), os.path.join(out_dir, name + "-hits.png")
    if not rows:
        log("no results to report")
        return
    table1 = write_report(info, rows, md, png)
    log(f"wrote {rel(md)} and {rel(png)}")
    print(table1)


# ----------------------------------------------------------------------------------------------------
# Main.

def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="See the docstring at the top of perf/dimension_benchmark.py.")
    p.add_argument("--noise", type=float, nargs="+", help=f"noise levels ({' '.join(map(str, DEFAULTS['noise']))})")
    p.add_argument("--points", type=int, nargs="+", help=f"numbers of points T ({' '.join(map(str, DEFAULTS['points']))})")
    p.add_argument("--seeds", type=int, nargs="+", help="data seeds (1)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="manifolds by name or generator: " +
                   " ".join(m[0] for m in MANIFOLDS))
    p.add_argument("--methods", nargs="+", help="subset of: " + " ".join(ALL_METHODS))
    p.add_argument("--quick", action="store_true", help="T 1000, noise 0 and 0.1 (unless given)")
    p.add_argument("--qgml", default="build/openmp/apps/qgml/qgml", help="qgml binary (relative to the repository root)")
    p.add_argument("--out", help="output directory (perf/results; with --report the file's directory)")
    p.add_argument("--name", help="output name (dimension-<date>; with --report the file's name)")
    p.add_argument("--work", help="data files and qgml run directories (build/dimension-benchmark/NAME)")
    p.add_argument("--report", metavar="FILE.jsonl", help="tables and plot of an existing result file; nothing run")
    p.add_argument("--config-shim", action="store_true",
                   help="give qgml train a two-line YAML (data: file: CSV) instead of the CSV")
    p.add_argument("--python-data", action="store_true",
                   help="generate the points in Python (binaries without `qgml generate`)")
    p.add_argument("--regenerate", action="store_true", help="write the data files again even when they exist")
    p.add_argument("--timeout", type=float, default=3600, help="seconds per qgml call (3600)")
    return p.parse_args()


def main():
    args = parse_args()
    if args.report:
        ensure_packages(["matplotlib"])
        report_existing(args, report)
        return 0

    ensure_packages(["numpy", "skdim", "matplotlib"])
    import numpy as np
    import skdim

    os.chdir(ROOT)
    args.qgml = os.path.abspath(args.qgml)
    noise = args.noise or (QUICK["noise"] if args.quick else DEFAULTS["noise"])
    points = args.points or (QUICK["points"] if args.quick else DEFAULTS["points"])
    seeds = args.seeds or DEFAULTS["seeds"]
    methods = ALL_METHODS
    if args.methods:
        lower = {m.lower(): m for m in ALL_METHODS}
        bad = [m for m in args.methods if m.lower() not in lower]
        if bad:
            sys.exit(f"unknown method(s) {' '.join(bad)}; choose from {' '.join(ALL_METHODS)}")
        methods = [lower[m.lower()] for m in args.methods]
    manifolds = MANIFOLDS
    if args.only:
        manifolds = [m for m in MANIFOLDS if m[0] in args.only or m[1] in args.only]
        unknown = set(args.only) - {m[0] for m in MANIFOLDS} - {m[1] for m in MANIFOLDS}
        if unknown or not manifolds:
            sys.exit(f"unknown manifold(s) {' '.join(sorted(unknown))}; choose from "
                     f"{' '.join(m[0] for m in MANIFOLDS)}")
    name = args.name or "dimension-" + datetime.date.today().strftime("%Y%m%d")
    out_dir = os.path.abspath(args.out or os.path.join(ROOT, "perf", "results"))
    work = os.path.abspath(args.work or os.path.join(ROOT, "build", "dimension-benchmark", name))
    data_dir, runs_dir = os.path.join(work, "data"), os.path.join(work, "runs")
    for d in (out_dir, data_dir, runs_dir):
        os.makedirs(d, exist_ok=True)

    needs_qgml = "qgml" in methods or not args.python_data
    if needs_qgml and not wait_for_binary(args.qgml):
        sys.exit(f"no qgml binary at {args.qgml} (--qgml PATH)")
    if not args.python_data and not qgml_has_generate(args.qgml):
        sys.exit(f"{args.qgml} has no `generate` command (qgml --help): use --python-data until it has")
    data_source = ("python (numpy stand-ins for qgml's generators, --python-data)" if args.python_data
                   else "qgml generate")

    info = {
        "kind": "run_info", "name": name,
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": socket.gethostname(), "platform": platform.platform(), "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "git_revision": git_revision(ROOT),
        "qgml": qgml_info(args.qgml) if needs_qgml else None,
        "python_version": platform.python_version(), "python": sys.executable,
        "numpy_version": np.__version__, "skdim_version": getattr(skdim, "__version__", "?"),
        "env": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OMP_PROC_BIND", "OPENBLAS_NUM_THREADS",
                                           "QGML_PERF_VENV") if k in os.environ},
        "data_source": data_source,
        "settings": {"noise": noise, "points": points, "seeds": seeds, "methods": methods,
                     "manifolds": [{"name": m[0], "generator": m[1], "true_d": m[2], "D": m[3], "options": m[4]}
                                   for m in manifolds],
                     "quick": args.quick, "config_shim": args.config_shim, "python_data": args.python_data,
                     "work": rel(work), "timeout_s": args.timeout,
                     "hit_rule": "floor(estimate + 0.5) == true_d",
                     "skdim": "default parameters, fit(X).dimension_, after one untimed warm-up fit"},
    }
    jsonl = os.path.join(out_dir, name + ".jsonl")
    grid = [(m, T, s, seed) for T in points for s in noise for m in manifolds for seed in seeds]
    log(f"{len(grid)} data sets x {len(methods)} methods; results in {rel(jsonl)}, "
        f"work files in {rel(work)}; data: {data_source}")
    def on_sigterm(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_sigterm)  # SIGTERM stops the run like Ctrl-C: results kept and reported
    rows = []
    t_start = time.perf_counter()
    interrupted = False
    with open(jsonl, "w") as out:
        out.write(json.dumps(info) + "\n")
        out.flush()
        sk = [m for m in methods if m in SKDIM_METHODS]
        try:
            if sk:
                skdim_warmup(sk)
            for i, (m, T, s, seed) in enumerate(grid, 1):
                mname, gen, d, D, extra = m
                tag = f"{mname}-T{T}-noise{s:g}-seed{seed}"
                base = {"kind": "result", "manifold": mname, "generator": gen, "true_d": d, "D": D, "T": T,
                        "noise": s, "seed": seed}
                log(f"[{i}/{len(grid)}] {tag} (d {d}, D {D})")
                path, err = make_data(args, m, T, s, seed, data_dir)
                x = None
                if not err:
                    try:
                        x = load_csv(path, D, T)
                    except (OSError, ValueError) as e:
                        err = f"loading the data: {e}"
                if err:
                    log(f"  data: {err.splitlines()[0][:300]}")
                for meth in methods:
                    if err:
                        rec = {"estimate": None, "seconds": None, "error": f"no data: {err}"}
                    elif meth == "qgml":
                        rec = run_qgml_train(args, path, runs_dir, tag)
                    else:
                        rec = skdim_fit(meth, x)
                    rounded, exact = exact_hit(rec.get("estimate"), d)
                    row = dict(base, method=meth, estimate=rec.pop("estimate"), rounded=rounded, exact=exact,
                               seconds=rec.pop("seconds"), error=rec.pop("error"), **rec)
                    if path:
                        row["data_file"] = rel(path)
                    rows.append(row)
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    est = row["estimate"]
                    shown = "err" if est is None else (f"{est}" if isinstance(est, int) else f"{est:.3f}")
                    extra_s = ""
                    if meth == "qgml" and est is not None:
                        extra_s = (f" (median {row.get('median')}, at mode {row.get('fraction_at_mode') or 0:.2f}"
                                   f", N {row.get('N', '?')}, epochs {row.get('epochs', '?')})")
                    log(f"  {meth:6s} {shown:>8s} {'HIT ' if exact else 'miss'} {row['seconds'] or 0:8.2f} s"
                        f"{extra_s}{'  ' + row['error'].splitlines()[0][:200] if row['error'] else ''}")
        except KeyboardInterrupt:
            interrupted = True
            log("interrupted: reporting what was measured")
        out.write(json.dumps({"kind": "run_end", "interrupted": interrupted,
                              "seconds": round(time.perf_counter() - t_start, 1), "results": len(rows)}) + "\n")
    info["run_end"] = {"interrupted": interrupted}
    report(info, rows, out_dir, name)
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
