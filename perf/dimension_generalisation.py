#!/usr/bin/env python3
"""Intrinsic-dimension generalisation benchmark (docs/dimension.md): qgml against its peers on 36 data families.

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
import os
import platform
import shlex
import signal
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import dimension_benchmark as db  # noqa: E402  (ROOT, rel, ensure_packages, qgml_info, git_revision, ...)
from dimgen_common import DEFAULT_NOISE, log, parse_noise  # noqa: E402
from dimgen_peers import (ALL_METHODS, DADAPY_METHODS, GRIDE_MAX_RANGE, PEERS, PLATEAU_TOL,  # noqa: E402
                          SKDIM_METHODS, PeerWorker)
from dimgen_qgml import qgml_train  # noqa: E402
from dimgen_report import dataset_id, read_jsonl, report, score  # noqa: E402


def ensure_packages(needed):
    """The modules `needed`, else this script again in the environment of make_venv.sh --dimension."""
    db.ensure_packages(needed, venv=dimension_venv(), script=__file__, flag="QGML_DIMGEN_REEXEC",
                       how="run perf/make_venv.sh --dimension and start this script with "
                           "build/dimension-venv/bin/python (or set QGML_DIMENSION_VENV)")


def dimension_venv():
    """The environment of perf/make_venv.sh --dimension (DADApy needs numpy < 2: not the perf venv)."""
    return os.environ.get("QGML_DIMENSION_VENV") or os.path.join(db.ROOT, "build", "dimension-venv")


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
