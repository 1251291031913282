#!/usr/bin/env python3
"""One perf driver for everything: the eigensolver, training-epoch and metric benchmarks, qgml against the
PyTorch baselines in the same run, over N, T, precision and thread count, plus the GEMM peak.

For every thread count: the double GEMM peak (OpenBLAS dgemm 2048^3, from qgml_bench_eigh), then for every
suite, precision, T (ascending) and N (ascending) the qgml driver and, right after it, the PyTorch baseline,
so both see the same machine load. Each case is one process. Before a case starts, its time and memory are
estimated (from the smaller cases already measured in this run, else from --calibrate files, else from a
rough model of the 2-core development VM); a case over --max-seconds-per-case or over the memory budget is
skipped with its reason recorded, never dropped silently. A case that fails or times out is recorded too,
and the larger cases of the same series are then skipped.

Output (DIR = --out, NAME = --name):
  DIR/NAME.jsonl        every JSON line (a first "run_info" line with the settings, then one line per
                        measured case with requested_threads, host, estimated_s and wall_s added, and one
                        line with "status": "skipped" / "failed" / "timeout" and "reason" per case not measured)
  DIR/NAME.md           tables per suite: qgml, LAPACKE and torch times, speed-ups, GFLOP/s and % of the
                        measured GEMM peak (eigh: 36 N^3 flops per matrix), then the skipped cases
  DIR/plots/NAME-*.png  time vs N (log-log, N^3 reference slope), speed-up vs N, % of GEMM peak vs N

Examples:
  perf/run_perf.py --quick                           # about a minute on 2 cores
  perf/run_perf.py --dry-run                         # the full plan and the skip decisions, nothing run
  perf/run_perf.py --suites eigh --N 8 16 64 --T 2500 --precision double --threads 2
  perf/run_perf.py --report perf/results/quick-20261122.jsonl --name again   # tables and plots only
Full default sweep: N 3 4 8 16 32 64 128, T 2500 100000 1000000, double and float, 1 and 2 threads.
"""
import argparse
import datetime
import json
import os
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import compare  # noqa: E402  (perf/compare.py: commands, process running, result files)

# The parts of this driver (perf/gpu/bench.py imports JSON_SUITE, build_config, case_env, kokkos_threads_flag,
# TorchWorker and summary_markdown from here):
from perf_cases import JSON_SUITE, STARTUP_S, SUITE_ORDER, Estimator, decide, fmt_s, plan, units  # noqa: E402
from perf_machine import build_config, case_env, kokkos_threads_flag, memory_budget_bytes  # noqa: E402,F401
from perf_plots import make_plots  # noqa: E402
from perf_runner import TorchWorker, command  # noqa: E402
from perf_summary import summary_markdown  # noqa: E402

QUICK = dict(N=[3, 8, 16, 32], T=[2500], precision=["double"], threads=[1, 2], repeats=2, max_seconds=30.0)
FULL = dict(N=[3, 4, 8, 16, 32, 64, 128], T=[2500, 100000, 1000000], precision=["double", "float"],
            threads=[1, 2], repeats=5, max_seconds=1800.0)


class Stop(Exception):
    """SIGTERM (a batch job's time limit) or Ctrl-C: stop, keep what was measured, write the summary."""


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suites", nargs="+", choices=SUITE_ORDER, default=list(SUITE_ORDER))
    p.add_argument("--N", type=int, nargs="+", help="matrix sizes (default 3 4 8 16 32 64 128)")
    p.add_argument("--T", type=int, nargs="+", help="points (default 2500 100000 1000000)")
    p.add_argument("--precision", nargs="+", choices=["double", "float"], help="default double float")
    p.add_argument("--threads", type=int, nargs="+",
                   help="thread counts: OMP_NUM_THREADS, Kokkos' thread option, torch.set_num_threads (default 1 2)")
    p.add_argument("--repeats", type=int, help="timed runs per case (default 5, --quick 2)")
    p.add_argument("--eigh-impls", nargs="+", default=["qgml", "lapacke"],
                   help="qgml_bench_eigh implementations (default qgml lapacke; lapacke only on host backends)")
    p.add_argument("--batch", type=int, default=2500, help="training mini-batch, capped at T (default 2500)")
    p.add_argument("--w", type=float, default=0.0, help="training fluctuation weight w (default 0)")
    p.add_argument("--chunk", type=int, default=25000,
                   help="points per chunk for eigh and metric (default 25000, lowered to fit the memory budget)")
    p.add_argument("--build", default=os.path.join(ROOT, "build", "openmp"), help="qgml build tree (default build/openmp)")
    p.add_argument("--out", default=os.path.join(HERE, "results"), help="output directory (default perf/results)")
    p.add_argument("--name", help="output file stem (default run-<UTC time>, with --quick quick-<date>)")
    p.add_argument("--python", default="/usr/bin/python3",
                   help="interpreter with torch, of every peer unless said (default /usr/bin/python3)")
    p.add_argument("--peer", nargs="+", action="extend", metavar="LABEL=SCRIPT[@PYTHON]",
                   help="a Python peer (see compare.py --help): SCRIPT torch (every suite), torch_vectorised or "
                        "jax (train); its lines get impl LABEL. Default: torch=torch")
    p.add_argument("--all-peers", action="store_true",
                   help="torch (reference style, --python), torch2 (reference style), torch2_vectorised and jax "
                        "(--peers-python)")
    p.add_argument("--peers-python", default=compare.DEFAULT_PEERS_PYTHON,
                   help="interpreter of the --all-peers peers other than torch (default build/perf-venv/bin/python, "
                        "from perf/make_venv.sh --peers)")
    p.add_argument("--no-torch", action="store_true", help="qgml only (no peer)")
    p.add_argument("--no-gemm", action="store_true", help="do not measure the GEMM peak")
    p.add_argument("--max-seconds-per-case", dest="max_seconds", type=float,
                   help="skip a case whose estimated wall time is longer; a case that runs over twice this is "
                        "killed (default 1800, --quick 30; 0 = no limit)")
    p.add_argument("--memory-gb", type=float,
                   help="memory the benchmarks may use (default 75%% of the machine's or the job's limit)")
    p.add_argument("--calibrate", nargs="+", default=[], metavar="JSONL",
                   help="earlier results (same machine type) to estimate from, also in --dry-run")
    p.add_argument("--launcher", default="",
                   help="command prefix for the qgml drivers, e.g. 'srun --ntasks=4 --label' (MPI builds)")
    p.add_argument("--quick", action="store_true",
                   help="N 3 8 16 32, T 2500, double, 1 and 2 threads, 2 repeats: about a minute on 2 cores")
    p.add_argument("--dry-run", action="store_true", help="print the planned cases and skip decisions, run nothing")
    p.add_argument("--plan-json", metavar="FILE", help="with --dry-run: also write the plan as JSON lines")
    p.add_argument("--report", nargs="+", metavar="JSONL", help="only write the tables and plots of these results")
    p.add_argument("--no-plots", action="store_true")
    a = p.parse_args(argv)
    base = QUICK if a.quick else FULL
    for k in ("N", "T", "precision", "threads", "repeats", "max_seconds"):
        if getattr(a, k) is None:
            setattr(a, k, base[k])
    a.N, a.T = sorted(set(a.N)), sorted(set(a.T))
    if any(n < 1 for n in a.N) or any(t < 1 for t in a.T) or any(t < 1 for t in a.threads) or a.repeats < 1:
        p.error("--N, --T, --threads and --repeats must be positive")
    try:
        a.peers = compare.parse_peers(a.peer, a.all_peers, a.python, a.peers_python)
    except ValueError as e:
        p.error(str(e))
    return a


# ---------------------------------------------------------------------------------------------- running


def run_info(a, cfg, peers, torch_note, budget, stamp):
    info = {"suite": "run_info", "impl": "run_perf", "status": "info", "run_perf": stamp,
            "host": socket.gethostname(), "git_revision": compare.git_revision(), "build": os.path.abspath(a.build),
            "backend": cfg["backend"], "kokkos_version": cfg["kokkos_version"], "suites": a.suites, "N": a.N,
            "T": a.T, "precision": a.precision, "threads": a.threads, "repeats": a.repeats,
            "eigh_impls": a.eigh_impls, "batch": a.batch, "w": a.w, "max_seconds_per_case": a.max_seconds,
            "memory_budget_gib": round(budget / 2**30, 2), "torch": torch_note if not peers else "yes",
            "python": a.python,
            "peers": [{"label": p.label, "script": p.script, "python": p.python} for p in peers],
            "launcher": a.launcher, "cpus": os.cpu_count(),
            "loadavg_before": [round(x, 2) for x in os.getloadavg()],
            "command": " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])}
    for k in ("OMP_PROC_BIND", "OMP_PLACES", "OMP_WAIT_POLICY", "SLURM_JOB_ID", "SLURM_JOB_PARTITION",
              "SLURM_NNODES", "SLURM_NTASKS"):
        if os.environ.get(k):
            info[k.lower()] = os.environ[k]
    return info


def torch_status(a):
    """(the available peers, a note on the missing ones)."""
    if a.no_torch:
        return [], "disabled (--no-torch)"
    ok = [p for p in a.peers if p.available()]
    missing = [p for p in a.peers if p not in ok]
    note = "; ".join(f"{p.label}: {'jax' if p.script == 'jax' else 'torch'} not importable by {p.python}"
                     for p in missing)
    return ok, note or "yes"


def main(argv=None):
    a = parse_args(argv)
    a.launcher_argv = a.launcher.split() if a.launcher else []
    if a.report:
        lines = []
        for path in a.report:
            try:
                lines += compare.read_jsonl(path)
            except compare.ResultsError as e:
                print(f"run_perf.py: {e}", file=sys.stderr)
                return 2
        name = a.name or os.path.splitext(os.path.basename(a.report[0]))[0] + "-report"
        return write_outputs(a, lines, name)

    now = datetime.datetime.utcnow()
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    name = a.name or (f"quick-{now.strftime('%Y%m%d')}" if a.quick else f"run-{stamp}")
    cfg = build_config(a.build)
    if cfg["backend"] == "cuda":
        if "lapacke" in a.eigh_impls:
            a.eigh_impls = [i for i in a.eigh_impls if i != "lapacke"]
            print("run_perf.py: CUDA build: no lapacke implementation", file=sys.stderr)
        if not a.no_gemm:
            a.no_gemm = True
            print("run_perf.py: CUDA build: the GEMM peak (host OpenBLAS) is not measured", file=sys.stderr)
    budget = memory_budget_bytes(a)
    peers, torch_note = torch_status(a)
    est = Estimator()
    for path in a.calibrate:
        try:
            for line in compare.read_jsonl(path):
                est.add_line(line)
        except compare.ResultsError as e:
            print(f"run_perf.py: --calibrate: {e}", file=sys.stderr)
            return 2

    if a.dry_run:
        return dry_run(a, cfg, peers, torch_note, budget, est)

    missing = sorted({compare.bench_binary(a.build, s) for s in a.suites + (["eigh"] if not a.no_gemm else [])
                      if not os.access(compare.bench_binary(a.build, s), os.X_OK)})
    if missing:
        print(f"run_perf.py: missing benchmark drivers: {', '.join(missing)}\n  build them first: "
              f"cmake --preset openmp && cmake --build {a.build} --target qgml_bench_eigh qgml_bench_train "
              f"qgml_bench_metric", file=sys.stderr)
        return 2
    if not peers:
        print(f"run_perf.py: torch baseline {torch_note}: qgml only", file=sys.stderr)
    elif torch_note != "yes":
        print(f"run_perf.py: peers not run: {torch_note}", file=sys.stderr)

    os.makedirs(a.out, exist_ok=True)
    jsonl = os.path.join(a.out, name + ".jsonl")
    info = run_info(a, cfg, peers, torch_note, budget, stamp)
    lines = [info]
    failures = {}
    cases = list(plan(a, peers, budget))

    def on_term(signum, frame):
        raise Stop()
    signal.signal(signal.SIGTERM, on_term)
    common = {"run_perf": stamp, "host": info["host"]}
    for k in ("omp_proc_bind", "omp_places", "slurm_job_id"):
        if k in info:
            common[k] = info[k]
    stopped = False
    workers = {p.label: TorchWorker(p.python) for p in peers}
    with open(jsonl, "w") as out:
        out.write(json.dumps(info) + "\n")
        out.flush()
        try:
            for i, c in enumerate(cases, 1):
                go, rule, reason, seconds, need = decide(c, a, est, budget, failures)
                head = f"[{i}/{len(cases)}] {c.label()}"
                new = []
                if not go:
                    rec = c.record()
                    rec.update(status="skipped", skip_rule=rule, reason=reason, estimated_s=round(seconds, 3),
                               estimated_bytes=need, git_revision=info["git_revision"], **common)
                    new.append(rec)
                    print(f"{head}: skipped: {reason}", file=sys.stderr)
                else:
                    timeout = max(2 * a.max_seconds, 60.0) if a.max_seconds else None
                    t0 = time.monotonic()
                    if c.peer:
                        got, error = workers[c.impl].run(c.peer.script_path(c.suite), command(c, a, cfg), c.threads,
                                                         timeout)
                        c.peer.relabel(got)
                    else:
                        got, error = compare.run_json_lines(command(c, a, cfg), case_env(c.threads), timeout)
                    wall = time.monotonic() - t0
                    if c.suite == "gemm":
                        got = [l for l in got if l.get("suite") == "gemm_peak"][:1]
                        if not got and not error:
                            error = "no gemm_peak line (built without OpenBLAS CBLAS?)"
                    elif not got and not error:
                        error = "no JSON line printed"
                    for l in got:
                        l.setdefault("git_revision", info["git_revision"])
                        l["requested_threads"] = c.threads
                        l.update(common, estimated_s=round(seconds, 3), wall_s=round(wall, 3))
                        if c.suite != "gemm" and l.get("suite") == JSON_SUITE[c.suite]:
                            est.add(c, float(l["median_s"]))
                        new.append(l)
                    if error:
                        rec = c.record()
                        rec.update(status="timeout" if error.startswith("timeout") else "failed", reason=error,
                                   estimated_s=round(seconds, 3), wall_s=round(wall, 3),
                                   git_revision=info["git_revision"], **common)
                        new.append(rec)
                        failures.setdefault(c.series(), []).append((c.N, c.T, error[:80]))
                        print(f"{head}: {rec['status']}: {error}", file=sys.stderr)
                    else:
                        m = got[0]["median_s"]
                        print(f"{head}: {1e3 * m:.4g} ms (estimate {1e3 * (seconds - STARTUP_S[c.kind]) / units(c, a):.3g}"
                              f" ms, case {wall:.2f} s)" if c.suite != "gemm" else
                              f"{head}: {got[0].get('gflops', 0):.1f} GFLOP/s", file=sys.stderr)
                for l in new:
                    out.write(json.dumps(l) + "\n")
                out.flush()
                lines += new
        except (Stop, KeyboardInterrupt):
            stopped = True
            print("run_perf.py: stopped; writing the summary of what was measured", file=sys.stderr)
        finally:
            for w in workers.values():
                w.close()
    info["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    if stopped:
        info["stopped_early"] = True
    with open(jsonl + ".tmp", "w") as out:     # again, with the completed run_info line
        for l in lines:
            out.write(json.dumps(l) + "\n")
    os.replace(jsonl + ".tmp", jsonl)
    rc = write_outputs(a, lines, name)
    print(f"JSON lines: {jsonl}")
    return 130 if stopped else rc


def dry_run(a, cfg, peers, torch_note, budget, est):
    print(f"# plan: build {a.build} (backend {cfg['backend']}, Kokkos {cfg['kokkos_version']}), torch: "
          f"{torch_note}, memory budget {budget / 2**30:.1f} GiB, max {a.max_seconds:g} s per case, "
          f"{a.repeats} repeats")
    drivers = [compare.bench_binary(a.build, s) for s in a.suites]
    absent = [d for d in drivers if not os.access(d, os.X_OK)]
    if absent:
        print(f"# not built yet: {', '.join(os.path.basename(d) for d in absent)}")
    print(f"{'#':>4} {'suite':<9} {'impl':<14} {'N':>5} {'T':>8} {'precision':<9} {'thr':>3} "
          f"{'decision':<8} {'estimate':>10} {'memory':>9}  reason")
    total, counts, plan_lines = 0.0, {}, []
    for i, c in enumerate(plan(a, peers, budget), 1):
        go, rule, reason, seconds, need = decide(c, a, est, budget, {})
        decision = "run" if go else "skip"
        counts[decision] = counts.get(decision, 0) + 1
        total += seconds if go else 0.0
        print(f"{i:>4} {c.record()['suite']:<9} {c.impl:<14} {c.N:>5} {c.T if c.T else '-':>8} {c.precision:<9} "
              f"{c.threads:>3} {decision:<8} {fmt_s(seconds):>10} {need / 2**30:>7.2f}Gi  {reason}")
        rec = c.record()
        rec.update(decision=decision, rule=rule, reason=reason, estimated_s=round(seconds, 3), estimated_bytes=need)
        plan_lines.append(rec)
    print(f"# {counts.get('run', 0)} cases to run (estimated {fmt_s(total)}), {counts.get('skip', 0)} skipped")
    if a.plan_json:
        with open(a.plan_json, "w") as f:
            for rec in plan_lines:
                f.write(json.dumps(rec) + "\n")
    return 0


def write_outputs(a, lines, name):
    os.makedirs(a.out, exist_ok=True)
    md = summary_markdown(lines, name)
    md_path = os.path.join(a.out, name + ".md")
    with open(md_path, "w") as f:
        f.write(md)
    print(md)
    print(f"Markdown: {md_path}")
    if not a.no_plots:
        try:
            for p in make_plots(lines, os.path.join(a.out, "plots"), name):
                print(f"plot: {p}")
        except ImportError as e:
            print(f"run_perf.py: no plots ({e}); install matplotlib (Debian: python3-matplotlib)", file=sys.stderr)
    return 0


def _reexec_with_system_python():
    """The first python3 on PATH may lack matplotlib (plots); Debian's /usr/bin/python3 has it."""
    import importlib.util
    system = "/usr/bin/python3"
    if (importlib.util.find_spec("matplotlib") is None and os.path.exists(system)
            and os.path.realpath(sys.executable) != os.path.realpath(system)
            and not os.environ.get("QGML_RUN_PERF_REEXEC")):
        probe = subprocess.run([system, "-c", "import matplotlib"], capture_output=True)
        if probe.returncode == 0:
            os.environ["QGML_RUN_PERF_REEXEC"] = "1"
            os.execv(system, [system, os.path.abspath(__file__)] + sys.argv[1:])


if __name__ == "__main__":
    _reexec_with_system_python()
    sys.exit(main())
