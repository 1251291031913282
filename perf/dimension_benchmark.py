#!/usr/bin/env python3
"""Intrinsic-dimension benchmark: `qgml train DATA.csv` with every default against scikit-dimension.

What it measures. For every data set of the grid (manifold x noise x number of points T x seed, the
manifolds in MANIFOLDS of perf/dimbench_grid.py, each with a known intrinsic dimension d), the points
are generated once with `qgml generate` and the same CSV file is given to every method:
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
import json
import os
import platform
import signal
import socket
import sys
import time

# The parts of the benchmark. perf/dimension_generalisation.py uses ROOT, rel, ensure_packages,
# run_qgml_train, qgml_info, git_revision, wait_for_binary, skdim_fit, skdim_warmup, read_jsonl and
# report_existing from here (its --qgml-args wrap run_qgml in dimbench_qgml, where run_qgml_train calls it).
from dimbench_common import HERE, ROOT, log, rel  # noqa: F401
from dimbench_data import load_csv, make_data
from dimbench_grid import ALL_METHODS, DEFAULTS, MANIFOLDS, QUICK, SKDIM_METHODS
from dimbench_qgml import (git_revision, qgml_has_generate, qgml_info, run_qgml,  # noqa: F401
                           run_qgml_train, wait_for_binary)
from dimbench_report import exact_hit, read_jsonl, report, report_existing  # noqa: F401
from dimbench_skdim import skdim_fit, skdim_warmup

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
