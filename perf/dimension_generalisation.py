#!/usr/bin/env python3
"""Intrinsic-dimension generalisation benchmark (issue 49): qgml against its peers on 36 data families.

The families are those of perf/dimension_families.py (python perf/dimension_families.py --list), split once
and for all into a "tune" half (qgml's defaults may be tuned on it) and a "heldout" half (reported
separately; never tuned on). For every data set of the grid (family x n x noise x seed) the points are
generated in numpy (dimension_families.make_points: clean data centred and scaled to RMS 1, then noise of
standard deviation `level` per coordinate), written once as CSV with a header into the work directory,
and the same points are given to every method:
  qgml            `qgml train DATA.csv --quiet --output.directory ... --output.name ... --output.plots false`
                  plus --qgml-args (for tuning experiments; recorded in each line); the estimate is the mode
                  of dimension_summary.json (median, mean, fraction at the mode, N, w, epochs and every
                  other scalar field of the summary, e.g. an uncertainty, are recorded too)
  CorrInt DANCo ESS FisherS KNN lPCA MADA MiND_ML MLE MOM TLE TwoNN
                  scikit-dimension's global estimators, skdim.id.<name>() at its defaults, fit(X).dimension_
  DADApy_TwoNN    dadapy.Data(X).compute_id_2NN() (defaults: linear fit, 90 % of the ratios)
  DADApy_Gride    dadapy.Data(X).return_id_scaling_gride(range_max=R), R = the largest power of two
                  <= min(256, n / 8); the ids come at the neighbour ranks 2, 4, ..., R. The estimate is the
                  plateau's: the longest run of consecutive scales whose ids change by less than 10 %
                  from one scale to the next (|id_k+1 - id_k| < 0.1 id_k; ties: the smaller scales), and the
                  median of the ids over that run; when no two consecutive ids agree that well, the
                  first (smallest) scale's id. All ids and scales are recorded.
The peer fits run in one persistent worker process (spawned; after one untimed warm-up fit per estimator,
so imports and numba compilation are not counted); a fit still running after --peer-timeout seconds is a
miss with its text, and the worker is killed and started again (warmed up again) for the next fit. Seconds: the fit alone (peers), the whole qgml process (qgml).

Scoring. Integer families: an exact hit when round-half-up(estimate) == d. Fractal families (d
non-integer) are never hits and are scored by the relative error only. Unions of two pieces: d is the
piece with 2/3 of the points. MRE = mean |estimate - d| / d over all data sets of the group (fractals
included; a failed or timed-out run counts 1).

How to run (from the repository root, in the environment of perf/make_venv.sh --dimension):
  P=build/dimension-venv/bin/python
  $P perf/dimension_generalisation.py --methods TwoNN MLE --points 500 --noise none:0 --only ball3 koch
  $P perf/dimension_generalisation.py --methods peers --name peers-2500        # every method but qgml
  $P perf/dimension_generalisation.py --methods qgml --peers-from perf/results/peers-2500.jsonl \\
      --qgml-args "--model.N 16" --name qgml-N16                                 # qgml alone + stored peers
  $P perf/dimension_generalisation.py --report perf/results/NAME.jsonl        # tables again, nothing run
Options: --half tune|heldout|both (both), --noise KIND:LEVEL ... (none:0 gaussian:0.05 gaussian:0.1
uniform:0.05 uniform:0.1; kinds none, gaussian, uniform), --points (2500), --seeds (1), --only FAMILY...,
--methods (qgml and every peer; "peers" = every method but qgml), --peer-timeout (120 s), --timeout (qgml,
300 s), --qgml PATH (build/openmp/apps/qgml/qgml), --qgml-args "ARGS" (one string, split like a shell; a
single option without a space must be written --qgml-args=--opt), --out DIR (perf/results), --name
(dimension-generalisation-<date>), --work DIR (build/dimension-generalisation/NAME), --peers-from
FILE.jsonl ... (peer lines of matching data sets are copied from these files instead of being re-run;
the copy says "copied_from"), --regenerate (write the CSV files again).

Output (DIR = --out, NAME = --name): DIR/NAME.jsonl (a run_info line: git revision, date, host, versions,
`qgml info`, the settings; one "result" line per data set and method, written as measured; a run_end
line) and DIR/NAME.md (per half, n and noise: hits, MRE, median / max seconds per method; the estimate of
every method on every data set). The summary table is printed at the end too.
"""
import argparse
import datetime
import json
import math
import multiprocessing
import os
import platform
import shlex
import signal
import socket
import statistics
import sys
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import dimension_benchmark as db  # noqa: E402  (run_qgml, run_qgml_train, skdim_fit, git_revision, ...)

SKDIM_METHODS = ["CorrInt", "DANCo", "ESS", "FisherS", "KNN", "lPCA", "MADA", "MiND_ML", "MLE", "MOM", "TLE",
                 "TwoNN"]
DADAPY_METHODS = ["DADApy_TwoNN", "DADApy_Gride"]
PEERS = SKDIM_METHODS + DADAPY_METHODS
ALL_METHODS = ["qgml"] + PEERS
DEFAULT_NOISE = ["none:0", "gaussian:0.05", "gaussian:0.1", "uniform:0.05", "uniform:0.1"]
GRIDE_MAX_RANGE = 256
PLATEAU_TOL = 0.10


def log(msg):
    print(f"[dimgen {datetime.datetime.now().strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def parse_noise(spec):
    kind, _, level = spec.partition(":")
    kind = kind.strip().lower()
    if kind not in ("none", "gaussian", "uniform"):
        raise argparse.ArgumentTypeError(f"noise {spec!r}: KIND:LEVEL with KIND none, gaussian or uniform")
    try:
        lv = float(level) if level else 0.0
    except ValueError:
        raise argparse.ArgumentTypeError(f"noise {spec!r}: level is not a number")
    return ("none", 0.0) if kind == "none" or lv == 0 else (kind, lv)


def noise_label(kind, level):
    return "none" if kind == "none" else f"{kind} {level:g}"


def ensure_packages(needed):
    """The modules `needed`, else this script again in the environment of make_venv.sh --dimension."""
    db.ensure_packages(needed, venv=dimension_venv(), script=__file__, flag="QGML_DIMGEN_REEXEC",
                       how="run perf/make_venv.sh --dimension and start this script with "
                           "build/dimension-venv/bin/python (or set QGML_DIMENSION_VENV)")


def dimension_venv():
    """The environment of perf/make_venv.sh --dimension (DADApy needs numpy < 2: not the perf venv)."""
    return os.environ.get("QGML_DIMENSION_VENV") or os.path.join(db.ROOT, "build", "dimension-venv")


# ----------------------------------------------------------------------------------------------------
# Peers.

def gride_plateau(ids):
    """The plateau rule of DADApy_Gride (see the module docstring): (estimate, first index, last index)."""
    best = None
    k = 0
    while k < len(ids) - 1:
        j = k
        while j < len(ids) - 1 and abs(ids[j + 1] - ids[j]) < PLATEAU_TOL * abs(ids[j]):
            j += 1
        if j > k and (best is None or j - k > best[1] - best[0]):
            best = (k, j)
        k = j + 1 if j > k else k + 1
    if best is None:
        return float(ids[0]), 0, 0
    return float(statistics.median(ids[best[0]:best[1] + 1])), best[0], best[1]


def gride_range(n):
    r = 2
    while r * 2 <= min(GRIDE_MAX_RANGE, n / 8):
        r *= 2
    return r


def dadapy_fit(name, x):
    import numpy as np
    import dadapy
    rec = {"estimate": None, "error": None}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        try:
            data = dadapy.Data(np.ascontiguousarray(x, dtype=float), verbose=False)
            if name == "DADApy_TwoNN":
                value, err, rs = data.compute_id_2NN()
                extra = {"id_err": float(err), "scale_r": float(rs)}
            else:
                rmax = gride_range(len(x))
                ids, errs, rs = data.return_id_scaling_gride(range_max=rmax)
                ids = [float(v) for v in ids]
                value, i0, i1 = gride_plateau(ids)
                extra = {"range_max": rmax, "ids": [round(v, 4) for v in ids],
                         "ids_err": [round(float(v), 4) for v in errs], "scales_r": [round(float(v), 5) for v in rs],
                         "ranks": [2 ** (k + 1) for k in range(len(ids))], "plateau": [i0, i1]}
        except Exception as e:  # any failure is a miss with its text
            rec["error"] = f"{type(e).__name__}: {e}"[:800]
            value, extra = None, {}
        rec["seconds"] = round(time.perf_counter() - t0, 4)
    rec.update(extra)
    if value is not None:
        if math.isfinite(value):
            rec["estimate"] = float(value)
        else:
            rec["error"] = f"estimate is {value}"
    return rec


def peer_fit(name, x):
    return dadapy_fit(name, x) if name in DADAPY_METHODS else db.skdim_fit(name, x)


def peers_warmup(methods):
    import numpy as np
    sk = [m for m in methods if m in SKDIM_METHODS]
    if sk:
        db.skdim_warmup(sk)
    rng = np.random.default_rng(0)
    x = np.c_[rng.uniform(-1, 1, (300, 2)), 0.01 * rng.standard_normal((300, 1))]
    for m in methods:
        if m in DADAPY_METHODS:
            t0 = time.perf_counter()
            dadapy_fit(m, x)
            log(f"warm-up {m}: {time.perf_counter() - t0:.1f} s (untimed)")


def _worker_main(conn, methods):
    """The peer worker: warms every estimator up once (untimed), then fits (name, x) requests."""
    warnings.simplefilter("ignore")
    try:
        peers_warmup(methods)
        conn.send(("ready", None))
        while True:
            try:
                name, x = conn.recv()
            except EOFError:
                return
            try:
                rec = peer_fit(name, x)
            except BaseException as e:  # noqa: BLE001
                rec = {"estimate": None, "seconds": None,
                       "error": f"{type(e).__name__}: {e}: {traceback.format_exc()[-400:]}"}
            conn.send(rec)
    except KeyboardInterrupt:
        return


class PeerWorker:
    """A persistent worker process (spawned: a fresh interpreter, since forking a process whose OpenMP /
    BLAS thread pools have run deadlocks the child) that runs the peer fits; a fit that takes longer than
    the timeout kills the worker (a miss, "timed out"), and the next fit starts a new one (warmed up
    again, untimed)."""

    def __init__(self, methods):
        self.methods, self.proc, self.conn = list(methods), None, None

    def _start(self):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, self.methods), daemon=True)
        self.proc.start()
        child.close()
        if not self.conn.poll(1800):
            self.stop()
            raise RuntimeError("the peer worker did not finish its warm-up in 30 minutes")
        self.conn.recv()

    def stop(self):
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join()
        if self.conn is not None:
            self.conn.close()
        self.proc, self.conn = None, None

    def fit(self, name, x, timeout):
        if self.proc is None or not self.proc.is_alive():
            self.stop()
            try:
                self._start()
            except (RuntimeError, EOFError, OSError) as e:
                self.stop()
                return {"estimate": None, "seconds": None, "error": f"the peer worker did not start: {e!r}"}
        t0 = time.perf_counter()
        try:
            self.conn.send((name, x))
            if self.conn.poll(timeout):
                return self.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            wall = time.perf_counter() - t0
            code = self.proc.exitcode if self.proc is not None else None
            self.stop()
            return {"estimate": None, "seconds": round(wall, 4),
                    "error": f"the estimator's process died (exit {code})"}
        wall = time.perf_counter() - t0
        self.stop()
        return {"estimate": None, "seconds": round(wall, 4), "error": f"timed out after {timeout:g} s"}


# ----------------------------------------------------------------------------------------------------
# qgml.

def qgml_train(args, csv, runs_dir, tag):
    """db.run_qgml_train with --qgml-args appended to the command line (db.run_qgml wrapped for the call)."""
    extra = args.qgml_args_list
    if not extra:
        return db.run_qgml_train(args, csv, runs_dir, tag)
    orig = db.run_qgml
    db.run_qgml = lambda qgml, a, timeout, what: orig(qgml, list(a) + extra, timeout, what)
    try:
        return db.run_qgml_train(args, csv, runs_dir, tag)
    finally:
        db.run_qgml = orig


# ----------------------------------------------------------------------------------------------------
# Scoring and report.

def score(row):
    """Adds rounded, exact (None for fractals), abs_error and rel_error (1 for a failed run)."""
    est, d = row.get("estimate"), row["d"]
    if est is None or not isinstance(est, (int, float)) or not math.isfinite(est):
        row.update(rounded=None, exact=(None if row.get("fractal") else False), abs_error=None, rel_error=1.0)
        return row
    rounded = int(math.floor(float(est) + 0.5))
    row.update(rounded=rounded, exact=(None if row.get("fractal") else rounded == int(d)),
               abs_error=round(abs(est - d), 6), rel_error=round(abs(est - d) / d, 6))
    return row


def dataset_id(r):
    return (r["family"], r["n"], r["noise_kind"], float(r["noise_level"]), r["seed"])


read_jsonl = db.read_jsonl  # (run_info, result lines)


def method_order(rows):
    seen = {r["method"] for r in rows}
    return [m for m in ALL_METHODS if m in seen] + sorted(seen - set(ALL_METHODS))


def fam_order():
    import dimension_families as F
    return {f.name: i for i, f in enumerate(F.FAMILIES)}


def summary_tables(rows):
    """Markdown: per half, n and noise level, for each method: hits / count, MRE, median and max seconds."""
    methods = method_order(rows)
    groups = sorted({(r["half"], r["n"], r["noise_kind"], float(r["noise_level"])) for r in rows},
                    key=lambda g: ({"tune": 0, "extra": 1, "heldout": 2}.get(g[0], 3), g[1], g[3], g[2]))
    out = []
    for half in [h for h in ("tune", "extra", "heldout") if any(g[0] == h for g in groups)]:
        gs = [g for g in groups if g[0] == half]
        nfam = len({r["family"] for r in rows if r["half"] == half})
        out += [f"### {half} half ({nfam} families)", "",
                "| method | " + " | ".join(f"n {g[1]}, {noise_label(g[2], g[3])}" for g in gs) + " |",
                "|---|" + "---|" * len(gs)]
        for m in methods:
            cells = []
            for g in gs:
                sel = [r for r in rows if r["method"] == m and (r["half"], r["n"], r["noise_kind"],
                                                                 float(r["noise_level"])) == g]
                if not sel:
                    cells.append("")
                    continue
                ints = [r for r in sel if r.get("exact") is not None]
                hits = sum(1 for r in ints if r["exact"])
                mre = statistics.mean(r.get("rel_error", 1.0) if r.get("rel_error") is not None else 1.0 for r in sel)
                secs = [r["seconds"] for r in sel if isinstance(r.get("seconds"), (int, float))]
                t = f"{statistics.median(secs):.2g}/{max(secs):.2g} s" if secs else "-"
                cells.append(f"{hits}/{len(ints)}, MRE {mre:.3f}, {t}")
            out.append(f"| {m} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def fmt_est(r):
    if r is None:
        return ""
    if r.get("estimate") is None:
        return "timeout" if "timed out" in (r.get("error") or "") else "err"
    e = r["estimate"]
    s = f"{e:d}" if isinstance(e, int) else f"{e:.2f}"
    return f"**{s}**" if r.get("exact") else s


def write_report(info, rows, md_path):
    methods = method_order(rows)
    settings = info.get("settings", {})
    q = info.get("qgml") or {}
    qline = (q.get("qgml info") or q.get("qgml --version") or "").splitlines()
    out = ["# Intrinsic dimension: generalisation benchmark (qgml vs scikit-dimension and DADApy)", "",
           f"- date {info.get('date', '?')}, host {info.get('host', '?')}, git {info.get('git_revision', '?')}",
           f"- qgml: {q.get('path', '-')} ({qline[0] if qline else 'version unknown'}); extra args: "
           f"{settings.get('qgml_args') or 'none'}",
           f"- numpy {info.get('numpy_version', '?')}, scikit-dimension {info.get('skdim_version', '?')}, "
           f"dadapy {info.get('dadapy_version', '?')}, python {info.get('python_version', '?')}",
           f"- grid: halves {settings.get('half')}, noise {settings.get('noise')}, n {settings.get('points')}, "
           f"seeds {settings.get('seeds')}; {len({dataset_id(r) for r in rows})} data sets; peers copied from "
           f"{settings.get('peers_from') or '-'}",
           "- cell: exact hits / integer data sets, MRE (mean |est - d| / d over all, fractals included, "
           "failures 1), median / max seconds", ""]
    if (info.get("run_end") or {}).get("interrupted"):
        out += ["**The run was interrupted: the tables hold what was measured.**", ""]
    out += ["## Summary per half, n and noise", "", summary_tables(rows), "",
            "## Estimates per data set", "", "Bold: exact hit; fractal d shown with 3 decimals.", "",
            "| family | half | d | D | n | noise | seed | " + " | ".join(methods) + " |",
            "|" + "---|" * (7 + len(methods))]
    order = fam_order()
    by_ds = {}
    for r in rows:
        by_ds.setdefault(dataset_id(r), {})[r["method"]] = r
    errors = []
    for key in sorted(by_ds, key=lambda k: (k[1], k[3], k[2], order.get(k[0], 99), k[0], k[4])):
        ms = by_ds[key]
        a = next(iter(ms.values()))
        d = f"{a['d']:.3f}" if a.get("fractal") else f"{int(a['d'])}"
        out.append(f"| {a['family']} | {a['half']} | {d} | {a['D']} | {a['n']} | "
                   f"{noise_label(a['noise_kind'], float(a['noise_level']))} | {a['seed']} | "
                   + " | ".join(fmt_est(ms.get(m)) for m in methods) + " |")
        for m in methods:
            r = ms.get(m)
            if r and r.get("error"):
                errors.append(f"- {a['family']} n {a['n']} {noise_label(a['noise_kind'], float(a['noise_level']))} "
                              f"seed {a['seed']}, {m}: {r['error'].splitlines()[0][:240]}")
    out.append("")
    qrows = [r for r in rows if r["method"] == "qgml" and r.get("estimate") is not None]
    if qrows:
        out += ["## qgml's choices per data set", "",
                "| family | n | noise | seed | mode | median | mean | at mode | N | w | epochs | seconds | other |",
                "|" + "---|" * 13]
        for r in sorted(qrows, key=lambda r: (r["n"], float(r["noise_level"]), r["noise_kind"],
                                               order.get(r["family"], 99))):
            other = ", ".join(f"{k} {v}" for k, v in (r.get("summary_extra") or {}).items())[:200]
            cells = [r["family"], r["n"], noise_label(r["noise_kind"], float(r["noise_level"])), r["seed"],
                     r["estimate"], r.get("median"),
                     f"{r['mean']:.2f}" if isinstance(r.get("mean"), (int, float)) else None,
                     f"{r['fraction_at_mode']:.2f}" if isinstance(r.get("fraction_at_mode"), float) else None,
                     r.get("N"), r.get("w"), r.get("epochs"), r.get("seconds"), other]
            out.append("| " + " | ".join("" if c is None else str(c) for c in cells) + " |")
        out.append("")
    if errors:
        out += ["## Errors and timeouts", ""] + errors + [""]
    with open(md_path, "w") as f:
        f.write("\n".join(out))


def report(info, rows, out_dir, name):
    if not rows:
        log("no results to report")
        return
    md = os.path.join(out_dir, name + ".md")
    write_report(info, rows, md)
    log(f"wrote {db.rel(md)}")
    print(summary_tables(rows))


# ----------------------------------------------------------------------------------------------------
# Main.

def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="See the docstring at the top of perf/dimension_generalisation.py.")
    p.add_argument("--half", choices=["tune", "heldout", "both", "extra", "all"], default="both")
    p.add_argument("--noise", nargs="+", type=parse_noise, metavar="KIND:LEVEL",
                   help=f"noise specs ({' '.join(DEFAULT_NOISE)})")
    p.add_argument("--points", type=int, nargs="+", default=[2500], help="numbers of points n (2500)")
    p.add_argument("--seeds", type=int, nargs="+", default=[1], help="data seeds (1)")
    p.add_argument("--only", nargs="+", metavar="FAMILY", help="families by name (dimension_families.py --list)")
    p.add_argument("--methods", nargs="+", help="subset of: " + " ".join(ALL_METHODS) + "; 'peers' = all but qgml")
    p.add_argument("--peer-timeout", type=float, default=120, help="seconds per peer fit (120)")
    p.add_argument("--timeout", type=float, default=300, help="seconds per qgml run (300)")
    p.add_argument("--qgml", default="build/openmp/apps/qgml/qgml", help="qgml binary")
    p.add_argument("--qgml-args", default="", metavar='"ARGS"',
                   help="extra arguments appended to qgml train, one string (e.g. \"--model.N 16\")")
    p.add_argument("--out", help="output directory (perf/results)")
    p.add_argument("--name", help="output name (dimension-generalisation-<date>)")
    p.add_argument("--work", help="data files and qgml runs (build/dimension-generalisation/NAME)")
    p.add_argument("--peers-from", nargs="+", metavar="FILE.jsonl",
                   help="copy peer results of matching data sets from these files (the later file wins)")
    p.add_argument("--report", metavar="FILE.jsonl", help="tables of an existing result file; nothing run")
    p.add_argument("--regenerate", action="store_true", help="write the data files again even when they exist")
    return p.parse_args()


def main():
    args = parse_args()
    if args.report:
        ensure_packages(["numpy"])
        db.report_existing(args, report)
        return 0

    methods = ALL_METHODS
    if args.methods:
        lower = {m.lower(): m for m in ALL_METHODS}
        methods = []
        for m in args.methods:
            if m.lower() == "peers":
                methods += PEERS
            elif m.lower() in lower:
                methods.append(lower[m.lower()])
            else:
                sys.exit(f"unknown method {m}; choose from {' '.join(ALL_METHODS)} (or 'peers')")
        methods = [m for m in ALL_METHODS if m in methods]
    need = ["numpy"] + (["skdim"] if any(m in SKDIM_METHODS for m in methods) else []) + \
        (["dadapy"] if any(m in DADAPY_METHODS for m in methods) else [])
    ensure_packages(need)
    import numpy as np
    import dimension_families as F

    os.chdir(ROOT)
    args.qgml = os.path.abspath(args.qgml)
    args.config_shim = False
    args.qgml_args_list = shlex.split(args.qgml_args) if args.qgml_args else []
    noise = args.noise or [parse_noise(s) for s in DEFAULT_NOISE]
    noise = list(dict.fromkeys(noise))
    fams = [f for f in F.FAMILIES if args.half == f.half or (args.half == "both" and f.half != "extra") or args.half == "all"]
    if args.only:
        unknown = set(args.only) - set(F.BY_NAME)
        if unknown:
            sys.exit(f"unknown famil(ies) {' '.join(sorted(unknown))}; see perf/dimension_families.py --list")
        fams = [f for f in fams if f.name in args.only]
    if not fams:
        sys.exit("no family selected")
    name = args.name or "dimension-generalisation-" + datetime.date.today().strftime("%Y%m%d")
    out_dir = os.path.abspath(args.out or os.path.join(ROOT, "perf", "results"))
    work = os.path.abspath(args.work or os.path.join(ROOT, "build", "dimension-generalisation", name))
    data_dir, runs_dir = os.path.join(work, "data"), os.path.join(work, "runs")
    for d in (out_dir, data_dir, runs_dir):
        os.makedirs(d, exist_ok=True)

    stored = {}
    for path in args.peers_from or []:
        _, prow = read_jsonl(path)
        for r in prow:
            if r["method"] != "qgml" and not r.get("interrupted"):
                r["copied_from"] = db.rel(os.path.abspath(path))
                stored[dataset_id(r) + (r["method"],)] = r
    if stored:
        log(f"{len(stored)} peer results available in {' '.join(args.peers_from)}")

    if "qgml" in methods and not db.wait_for_binary(args.qgml):
        sys.exit(f"no qgml binary at {args.qgml} (--qgml PATH)")
    versions = {"numpy_version": np.__version__}
    try:
        import skdim
        versions["skdim_version"] = getattr(skdim, "__version__", "?")
    except ImportError:
        pass
    try:
        from importlib.metadata import version
        versions["dadapy_version"] = version("dadapy")
    except Exception:  # noqa: BLE001
        pass
    info = {
        "kind": "run_info", "name": name,
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": socket.gethostname(), "platform": platform.platform(), "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()), "git_revision": db.git_revision(ROOT),
        "qgml": db.qgml_info(args.qgml) if "qgml" in methods else None,
        "python_version": platform.python_version(), "python": sys.executable, **versions,
        "env": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OMP_PROC_BIND", "OPENBLAS_NUM_THREADS",
                                           "QGML_PERF_VENV") if k in os.environ},
        "settings": {"half": args.half, "noise": [f"{k}:{l:g}" for k, l in noise], "points": args.points,
                     "seeds": args.seeds, "methods": methods, "families": [f.name for f in fams],
                     "qgml_args": args.qgml_args_list, "timeout_s": args.timeout,
                     "peer_timeout_s": args.peer_timeout, "peers_from": args.peers_from, "work": db.rel(work),
                     "hit_rule": "floor(estimate + 0.5) == d (integer families); MRE over all, failures 1",
                     "noise_rule": "clean data centred and scaled to RMS 1 (one number), then noise of sd level",
                     "gride_rule": f"range_max = largest power of 2 <= min({GRIDE_MAX_RANGE}, n/8); median of ids "
                                   f"over the longest run of scales with relative change < {PLATEAU_TOL:g}, "
                                   "else the first scale's id",
                     "peers": "skdim.id.<name>() defaults, fit(X).dimension_; dadapy.Data(X); in a persistent "
                              "spawned worker, after one untimed warm-up per estimator; killed and restarted "
                              "after a timeout"},
    }
    jsonl = os.path.join(out_dir, name + ".jsonl")
    grid = [(f, n, nk, nl, seed) for n in args.points for (nk, nl) in noise for f in fams for seed in args.seeds]
    log(f"{len(grid)} data sets x {len(methods)} methods; results in {db.rel(jsonl)}, work files in {db.rel(work)}")

    def on_sigterm(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_sigterm)
    rows, interrupted, t_start, worker = [], False, time.perf_counter(), None
    with open(jsonl, "w") as out:
        out.write(json.dumps(info) + "\n")
        out.flush()
        try:
            to_run = [m for m in methods if m in PEERS and any(
                (f.name, n, nk, float(nl), s, m) not in stored for f, n, nk, nl, s in grid)]
            if to_run:
                worker = PeerWorker(to_run)
            for i, (f, n, nk, nl, seed) in enumerate(grid, 1):
                tag = f"{f.name}-n{n}-{nk}{nl:g}-seed{seed}"
                path = os.path.join(data_dir, tag + ".csv")
                if os.path.exists(path) and not args.regenerate:
                    x = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
                else:
                    x = F.make_points(f, n, nk, nl, seed)
                    tmp = path + ".tmp"
                    np.savetxt(tmp, x, delimiter=",", header=",".join(f"x{k}" for k in range(f.D)), comments="",
                               fmt="%.17g")
                    os.replace(tmp, path)
                base = {"kind": "result", "family": f.name, "half": f.half, "family_kind": f.kind, "d": f.d,
                        "D": f.D, "fractal": f.fractal, "pieces": f.pieces, "n": n, "noise_kind": nk,
                        "noise_level": nl, "seed": seed, "data_file": db.rel(path)}
                d_s = f"{f.d:.3f}" if f.fractal else f"{int(f.d)}"
                log(f"[{i}/{len(grid)}] {tag} ({f.half}, d {d_s}, D {f.D})")
                for m in methods:
                    key = (f.name, n, nk, float(nl), seed, m)
                    if m != "qgml" and key in stored:
                        src = stored[key]
                        rec = {k: v for k, v in src.items() if k not in base and k not in ("method",)}
                    elif m == "qgml":
                        rec = qgml_train(args, path, runs_dir, tag)
                        rec["qgml_args"] = args.qgml_args_list
                    else:
                        rec = worker.fit(m, x, args.peer_timeout)
                    row = score(dict(base, method=m, **rec))
                    rows.append(row)
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    est = row.get("estimate")
                    shown = "err" if est is None else (f"{est}" if isinstance(est, int) else f"{est:.3f}")
                    mark = "    " if row["exact"] is None else ("HIT " if row["exact"] else "miss")
                    extra = ""
                    if m == "qgml" and est is not None:
                        extra = (f" (median {row.get('median')}, at mode {row.get('fraction_at_mode') or 0:.2f}, "
                                 f"N {row.get('N', '?')}, w {row.get('w', '?')}, epochs {row.get('epochs', '?')})")
                    if row.get("copied_from"):
                        extra += " (copied)"
                    err = row.get("error")
                    log(f"  {m:13s} {shown:>8s} {mark} {row.get('seconds') or 0:8.2f} s{extra}"
                        f"{'  ' + err.splitlines()[0][:160] if err else ''}")
        except KeyboardInterrupt:
            interrupted = True
            log("interrupted: reporting what was measured")
        finally:
            if worker is not None:
                worker.stop()
        out.write(json.dumps({"kind": "run_end", "interrupted": interrupted,
                              "seconds": round(time.perf_counter() - t_start, 1), "results": len(rows)}) + "\n")
    info["run_end"] = {"interrupted": interrupted}
    report(info, rows, out_dir, name)
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
