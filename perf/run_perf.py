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
import math
import os
import re
import select
import signal
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import compare  # noqa: E402  (perf/compare.py: commands, process running, result files)

SUITE_ORDER = ("eigh", "train", "metric")          # command-line names, as in compare.py
JSON_SUITE = {k: v[0] for k, v in compare.SUITES.items()}
CLI_SUITE = {v: k for k, v in JSON_SUITE.items()}

QUICK = dict(N=[3, 8, 16, 32], T=[2500], precision=["double"], threads=[1, 2], repeats=2, max_seconds=30.0)
FULL = dict(N=[3, 4, 8, 16, 32, 64, 128], T=[2500, 100000, 1000000], precision=["double", "float"],
            threads=[1, 2], repeats=5, max_seconds=1800.0)

# Rough cost model for planning before anything is measured: seconds per point of one timed unit,
# a + b N^3, double, 2 threads, from the committed results of the 2-core development VM (perf/NOTES.md).
# Scaled by 2 / threads and 0.8 for float. Measured smaller cases of the same series replace it.
PRIOR = {
    ("eigh", "qgml"): (2.0e-7, 7.4e-10), ("eigh", "lapacke"): (1.1e-6, 7.2e-10),
    ("eigh", "torch"): (1.3e-6, 1.5e-9),
    ("train", "qgml"): (4.0e-7, 8.5e-10), ("train", "torch"): (3.0e-6, 1.3e-8),
    ("metric", "qgml"): (4.5e-7, 8.0e-10), ("metric", "torch"): (2.1e-6, 1.6e-9),
}
STARTUP_S = {"qgml": 0.5, "torch": 0.5}             # process start; torch is imported once per thread count

# The Python peers run in one long-lived interpreter per peer and thread count (importing torch or jax takes
# seconds, more than most cases): it reads one request per line, {"script": path, "argv": [...]}, calls the
# script's main(argv) with its stdout captured, and answers with one line {"out": ..., "rc": ..., "error": ...}.
TORCH_WORKER = r"""
import contextlib, importlib.util, io, json, os, sys, traceback
modules = {}
for raw in sys.stdin:
    req = json.loads(raw)
    out, rc, error = io.StringIO(), None, None
    try:
        mod = modules.get(req["script"])
        if mod is None:
            spec = importlib.util.spec_from_file_location(
                os.path.splitext(os.path.basename(req["script"]))[0], req["script"])
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            modules[req["script"]] = mod
        with contextlib.redirect_stdout(out):
            rc = mod.main(req["argv"])
    except BaseException:
        error = traceback.format_exc(limit=3)
    sys.stdout.write(json.dumps({"out": out.getvalue(), "rc": rc, "error": error}) + "\n")
    sys.stdout.flush()
"""


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


# ---------------------------------------------------------------------------------------------- machine


def memory_budget_bytes(a):
    if a.memory_gb:
        return a.memory_gb * 2**30
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            v = open(path).read().strip()
            if v.isdigit():
                total = min(total, int(v))
        except OSError:
            pass
    return 0.75 * total


def build_config(build):
    """Backend and Kokkos version of a build tree, from its CMakeCache (without running anything)."""
    cfg = {"backend": "unknown", "kokkos_version": "unknown"}
    try:
        cache = open(os.path.join(build, "CMakeCache.txt")).read()
    except OSError:
        return cfg
    m = re.search(r"^QGML_BACKEND:\w+=(\S+)", cache, re.M)
    if m:
        cfg["backend"] = m.group(1)
    m = re.search(r"^Kokkos_DIR:\w+=(.+)$", cache, re.M)
    if m:
        try:
            v = re.search(r'PACKAGE_VERSION "([0-9.]+)"',
                          open(os.path.join(m.group(1).strip(), "KokkosConfigVersion.cmake")).read())
            if v:
                cfg["kokkos_version"] = v.group(1)
        except OSError:
            pass
    return cfg


def kokkos_threads_flag(kokkos_version, threads):
    """--kokkos-num-threads=N (Kokkos >= 3.7) or --kokkos-threads=N (older; 3.4 ignores the new spelling)."""
    try:
        major, minor = (int(x) for x in kokkos_version.split(".")[:2])
        new = (major, minor) >= (3, 7)
    except ValueError:
        new = True
    return f"--kokkos-num-threads={threads}" if new else f"--kokkos-threads={threads}"


# ---------------------------------------------------------------------------------------------- cases


class Case:
    """One measurement; `peer` is the compare.Peer that runs it (True for a peer's line read back), else None."""

    def __init__(self, suite, impl, N, T, precision, threads, batch=None, w=None, chunk=None, peer=None):
        self.suite, self.impl, self.N, self.T = suite, impl, N, T
        self.precision, self.threads, self.batch, self.w, self.chunk = precision, threads, batch, w, chunk
        self.peer = peer

    @property
    def kind(self):
        return "torch" if self.peer or self.impl == "torch" else "qgml"

    def series(self):
        """Cases of one series differ only in N and T; the estimator extrapolates within a series."""
        return (self.suite, self.impl, self.precision, self.threads, self.batch, self.w)

    def record(self):
        r = {"suite": "gemm_peak" if self.suite == "gemm" else JSON_SUITE[self.suite], "impl": self.impl,
             "N": self.N, "T": self.T, "precision": self.precision, "threads": self.threads,
             "requested_threads": self.threads}
        if self.suite == "train":
            r.update(batch=self.batch, w=self.w)
        if self.chunk:
            r["chunk"] = self.chunk
        return r

    def label(self):
        extra = f" batch {self.batch} w {self.w:g}" if self.suite == "train" else ""
        if self.suite == "gemm":
            return f"gemm_peak {self.threads} thr"
        return f"{self.suite} {self.impl} N={self.N} T={self.T} {self.precision} {self.threads} thr{extra}"


def real_bytes(precision):
    return 8 if precision == "double" else 4


def chunk_for(a, N, T, precision, budget):
    """Chunk of points for eigh and metric: --chunk, capped at T and so that ~4 N^2 complex numbers per
    point of a chunk use at most half the memory budget."""
    per_point = 4 * N * N * 2 * real_bytes(precision)
    return max(1, min(T, a.chunk, max(256, int(0.5 * budget // per_point))))


def estimated_bytes(c):
    if c.suite == "gemm":
        return 3 * 2048 * 2048 * 8
    r = real_bytes(c.precision)
    z, n2 = 2 * r, c.N * c.N
    data = 3 * c.T * r
    if c.suite == "eigh":
        return 6 * c.T * n2 * z if c.impl == "torch" else data + c.chunk * (2 * n2 * z + c.N * r)
    if c.suite == "train":
        return data + c.batch * n2 * z * (16 if c.impl == "torch" else 3)
    return data + c.chunk * 4 * n2 * z


def units(c, a):
    """Timed plus untimed runs of one case (qgml_bench_train warms up twice, everything else once)."""
    return a.repeats + (2 if (c.suite == "train" and c.kind == "qgml") else 1)


class Estimator:
    """Seconds per timed unit of a case: extrapolated from the largest measured case of its series with
    N' <= N and T' <= T (linear in T, N^p in N with p from the two largest measured N at that T, clamped to
    [1, 3], else 3); without one, the PRIOR model."""

    def __init__(self):
        self.measured = {}      # series -> {(N, T): median_s}

    def add(self, c, median_s):
        self.measured.setdefault(c.series(), {})[(c.N, c.T)] = median_s

    def add_line(self, line):
        suite = CLI_SUITE.get(line.get("suite"))
        if suite is None or not compare.is_measurement(line):
            return
        c = Case(suite, line["impl"], int(line["N"]), int(line["T"]), line.get("precision", "double"),
                 int(line.get("requested_threads", line.get("threads", 1))),
                 line.get("batch") if suite == "train" else None,
                 float(line.get("w", 0)) if suite == "train" else None, peer=compare.is_peer_line(line))
        self.add(c, float(line["median_s"]))

    def unit_seconds(self, c):
        if c.suite == "gemm":
            return 2 * 2048**3 / (20e9 * c.threads), "model"
        pts = self.measured.get(c.series(), {})
        below = [(n, t) for (n, t) in pts if n <= c.N and t <= c.T]
        if below:
            n0, t0 = max(below)
            same_t = sorted(n for (n, t) in pts if t == t0 and n < n0)
            p = 3.0
            if same_t:
                n1 = same_t[-1]
                p = min(3.0, max(1.0, math.log(pts[(n0, t0)] / pts[(n1, t0)]) / math.log(n0 / n1)))
            est = pts[(n0, t0)] * (c.T / t0) * (c.N / n0) ** p
            return est, f"from N={n0} T={t0}" + (f", N^{p:.1f}" if n0 != c.N else "")
        a_, b_ = PRIOR.get((c.suite, c.impl), PRIOR[(c.suite, c.kind)])
        est = c.T * (a_ + b_ * c.N**3) * (2.0 / c.threads) * (0.8 if c.precision == "float" else 1.0)
        return est, "model"


def plan(a, peers, budget):
    """All cases in run order: qgml's, then every peer's (the available compare.Peer list `peers`)."""
    for threads in a.threads:
        if not a.no_gemm:
            yield Case("gemm", "openblas_dgemm", 2048, None, "double", threads)
        for suite in a.suites:
            impls = [(i, None) for i in (a.eigh_impls if suite == "eigh" else ["qgml"])] + \
                [(p.label, p) for p in peers if p.script_path(suite)]
            for precision in a.precision:
                for T in a.T:
                    for N in a.N:
                        for impl, peer in impls:
                            if suite == "train":
                                yield Case(suite, impl, N, T, precision, threads, min(a.batch, T), a.w, peer=peer)
                            else:
                                yield Case(suite, impl, N, T, precision, threads,
                                           chunk=chunk_for(a, N, T, precision, budget), peer=peer)


def decide(c, a, est, budget, failures):
    """(run?, rule, reason, estimated seconds, estimated bytes)."""
    per_unit, basis = est.unit_seconds(c)
    seconds = STARTUP_S[c.kind] + per_unit * (3 if c.suite == "gemm" else units(c, a))
    need = estimated_bytes(c)
    for (n, t, why) in failures.get(c.series(), []):
        if n <= c.N and (t is None or c.T is None or t <= c.T):
            return False, "after-failure", f"the smaller case N={n} T={t} of this series failed ({why})", \
                seconds, need
    if need > budget:
        return False, "memory", f"needs ~{fmt_bytes(need)} > budget {fmt_bytes(budget)} (--memory-gb)", \
            seconds, need
    if a.max_seconds and seconds > a.max_seconds:
        return False, "time", f"estimated {fmt_s(seconds)} ({basis}) > --max-seconds-per-case " \
                              f"{a.max_seconds:g} s", seconds, need
    return True, "run", basis, seconds, need


def fmt_bytes(b):
    return f"{b / 2**30:.1f} GiB" if b >= 2**30 else f"{b / 2**20:.1f} MiB"


def fmt_s(s):
    if s < 120:
        return f"{s:.3g} s"
    if s < 7200:
        return f"{s / 60:.3g} min"
    return f"{s / 3600:.3g} h"


def command(c, a, cfg):
    if c.suite == "gemm":
        return a.launcher_argv + compare.gemm_peak_command(a.build, 3) + \
            [kokkos_threads_flag(cfg["kokkos_version"], c.threads)]
    if c.kind == "torch":       # the argv of the baseline's main(); see TorchWorker
        cmd = ["--threads", str(c.threads)]
    else:
        cmd = a.launcher_argv + [compare.bench_binary(a.build, c.suite), "--kokkos-disable-warnings",
                                 kokkos_threads_flag(cfg["kokkos_version"], c.threads)]
    cmd += ["--N", str(c.N), "--T", str(c.T), "--precision", c.precision, "--repeats", str(a.repeats)]
    if c.suite == "eigh" and c.kind == "qgml":
        cmd += ["--gemm", "0", "--impl", c.impl]
    if c.suite == "train":
        cmd += ["--batch", str(c.batch), "--w", f"{c.w:g}"]
    if c.chunk and not (c.suite == "eigh" and c.kind == "torch"):
        cmd += ["--chunk", str(c.chunk)]
    return cmd


class TorchWorker:
    """One interpreter that runs the baselines' main(argv) for one thread count (see TORCH_WORKER)."""

    def __init__(self, python):
        self.python, self.proc, self.threads = python, None, None

    def close(self):
        if self.proc:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except Exception:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def run(self, script, argv, threads, timeout):
        """(JSON lines, error or None), like compare.run_json_lines."""
        if self.proc is None or self.threads != threads or self.proc.poll() is not None:
            self.close()
            self.proc = subprocess.Popen([self.python, "-u", "-c", TORCH_WORKER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, env=case_env(threads), text=True)
            self.threads = threads
        try:
            self.proc.stdin.write(json.dumps({"script": script, "argv": argv}) + "\n")
            self.proc.stdin.flush()
        except OSError as e:
            self.close()
            return [], f"torch worker: {e}"
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            return [], f"timeout after {timeout:.0f} s"
        raw = self.proc.stdout.readline()
        if not raw:
            code = self.proc.wait()
            self.proc = None
            return [], f"torch worker exited with code {code}"
        reply = json.loads(raw)
        lines = compare.parse_json_lines(reply["out"])
        if reply["error"]:
            return lines, "exception: " + " | ".join(reply["error"].strip().splitlines()[-2:])
        if reply["rc"]:
            return lines, f"exit code {reply['rc']}"
        return lines, None


def case_env(threads):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env["OPENBLAS_NUM_THREADS"] = "1"
    env.setdefault("OMP_PROC_BIND", "false")   # a batch job's binding (OMP_PROC_BIND, OMP_PLACES) is kept
    return env


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


# ---------------------------------------------------------------------------------------------- summary


def thr(l):
    return int(l.get("requested_threads", l.get("threads", 0)))


def ms(x):
    return f"{1e3 * x:.4g}" if x is not None else "-"


def ratio(num, den):
    return f"{num / den:.2f}" if num and den else "-"


def collect(lines):
    """suite -> row key -> {"ok": {impl: median line}, "not": {impl: record}}; gemm peaks by thread count."""
    peaks, tables = {}, {}
    for l in lines:
        if l.get("suite") == "gemm_peak" and compare.is_measurement(l):
            peaks.setdefault(thr(l), []).append(l["gflops"])
    for l in lines:
        s = l.get("suite")
        if s not in CLI_SUITE:
            continue
        key = (l.get("precision", "double"), thr(l), int(l.get("T", 0)), l.get("batch"),
               float(l["w"]) if "w" in l else None, int(l["N"]))
        row = tables.setdefault(s, {}).setdefault(key, {"ok": {}, "not": {}, "all": {}})
        if compare.is_measurement(l):
            row["all"].setdefault(l["impl"], []).append(l)
        elif l.get("status") in ("skipped", "failed", "timeout"):
            row["not"][l["impl"]] = l
    for rows in tables.values():
        for row in rows.values():
            for impl, ls in row["all"].items():   # several runs (--report of many files): median of medians
                med = statistics.median(x["median_s"] for x in ls)
                g = [x["gflops"] for x in ls if "gflops" in x]
                row["ok"][impl] = {"median_s": med, "gflops": statistics.median(g) if g else None,
                                   "points_per_s": ls[0]["T"] / med if ls[0].get("T") else None, "runs": len(ls)}
    return {k: statistics.median(v) for k, v in peaks.items()}, tables


PEER_IMPLS = set()     # impls of peer lines in the lines being summarised (set by summary_markdown)
PEER_RANK = {}         # peer label -> position in the run's peer list (run_info "peers")


def impl_order(impl):
    """qgml first, then its variants, LAPACKE, the peers (torch first, then in the run's order) last."""
    group = {"qgml": 0, "lapacke": 2, "torch": 3}.get(impl, 4 if impl in PEER_IMPLS else 1)
    return (group, PEER_RANK.get(impl, len(PEER_RANK)), impl)


def fastest_cell(row, q, peers):
    """'ratio (peer)' of the fastest peer's time over qgml's, for the "fastest peer / qgml" column."""
    f = compare.fastest_peer(row["ok"], peers)
    return f"{f[1] / q['median_s']:.2f} ({f[0]})" if f and q else "-"


def notes(row):
    out = []
    for impl, rec in sorted(row["not"].items()):
        if impl not in row["ok"]:
            out.append(f"{impl} {rec['status']}: {rec.get('reason', '')}")
    return "; ".join(out).replace("|", "/")


def summary_markdown(lines, name):
    info = next((l for l in lines if l.get("suite") == "run_info"), {})
    peaks, tables = collect(lines)
    qline = next((l for l in lines if l.get("impl") == "qgml" and compare.is_measurement(l)), {})
    tline = next((l for l in lines if l.get("impl") == "torch" and compare.is_measurement(l)), {})
    revs = sorted({l.get("git_revision") for l in lines if compare.is_measurement(l) and l.get("git_revision")})
    PEER_IMPLS.clear()
    PEER_RANK.clear()
    PEER_RANK.update((p["label"], i) for i, p in enumerate(info.get("peers", [])))
    PEER_IMPLS.update(l["impl"] for l in lines if compare.is_measurement(l) and compare.is_peer_line(l))
    many = len(PEER_IMPLS) > 1      # the "fastest peer / qgml" column
    versions = {}
    for l in lines:
        if compare.is_measurement(l) and compare.is_peer_line(l) and l["impl"] not in versions:
            v = [f"torch {l['torch_version']}"] if l.get("torch_version") else []
            v += [f"jax {l['jax_version']}"] if l.get("jax_version") else []
            versions[l["impl"]] = (", ".join(v) or "?") + (f" ({l['peer_impl']})" if l.get("peer_impl") else "")
    out = [f"# Performance run `{name}`", ""]
    if info:
        out.append(f"Host `{info.get('host')}`, {info.get('cpus')} CPUs, backend {info.get('backend')}, "
                   f"load average {info.get('loadavg_before')} before" +
                   (f", {info.get('loadavg_after')} after" if info.get("loadavg_after") else "") + ". "
                   f"Command: `{info.get('command')}`.")
        if info.get("stopped_early"):
            out.append("**The run was stopped early**; the tables hold what was measured.")
    out.append(f"qgml: Kokkos {qline.get('kokkos_version', '?')} ({qline.get('execution_space', '?')}), git "
               f"{', '.join(revs) or '?'}. torch: {tline.get('torch_version') or info.get('torch', 'not run')}.")
    if peaks:
        out.append("Measured double GEMM peak (OpenBLAS dgemm 2048^3): " +
                   ", ".join(f"{p:.1f} GFLOP/s with {t} thread{'s' if t > 1 else ''}" for t, p in sorted(peaks.items())) +
                   "; % of peak compares a case with the peak at its thread count (float too).")
    if many:
        ordered = sorted(versions.items(), key=lambda x: impl_order(x[0]))
        out.append("Peers: " + "; ".join(f"{i}: {v}" for i, v in ordered) +
                   ". \"fastest peer / qgml\" is the smallest peer time over qgml's, with that peer named.")
    out.append("Times are medians of the timed runs of one unit (eigh: all T matrices; train: one epoch; "
               "metric: all T points); ratios > 1 mean qgml is faster.")
    out.append("")
    skipped = []
    for s in ("eigh", "train_epoch", "metric"):
        rows = tables.get(s)
        if not rows:
            continue
        out.append(f"## {s}")
        out.append("")
        others = sorted({i for r in rows.values() for i in r["ok"]} - {"qgml", "lapacke", "torch"}, key=impl_order)
        fh, fr = (" fastest peer / qgml |", "---|") if many else ("", "")
        if s == "eigh":
            out.append("| precision | threads | T | N | qgml ms | lapacke ms | " +
                       "".join(f"{i} ms | " for i in others) + "torch ms | torch / qgml | lapacke / qgml |"
                       " qgml GFLOP/s | % of GEMM peak |" + fh + " notes |")
            out.append("|---|---|---|---|---|---|---|---|---|---|---|---|" + "---|" * len(others) + fr)
        elif s == "train_epoch":
            out.append("| precision | threads | T | batch | w | N | qgml ms/epoch | torch ms/epoch | torch / qgml | " +
                       "".join(f"{i} ms/epoch | {i} / qgml | " for i in others) + "qgml points/s |" + fh + " notes |")
            out.append("|---|---|---|---|---|---|---|---|---|---|---|" + "---|---|" * len(others) + fr)
        else:
            out.append("| precision | threads | T | N | qgml ms | torch ms | torch / qgml | " +
                       "".join(f"{i} ms | {i} / qgml | " for i in others) + "qgml points/s |" + fh + " notes |")
            out.append("|---|---|---|---|---|---|---|---|---|" + "---|---|" * len(others) + fr)
        for key in sorted(rows, key=lambda k: (k[0] != "double", k[1], k[2], k[3] or 0, k[4] or 0, k[5])):
            row = rows[key]
            prec, t, T, batch, w, N = key
            q, lp, tr = (row["ok"].get(i) for i in ("qgml", "lapacke", "torch"))
            med = lambda x: x["median_s"] if x else None
            n = notes(row)
            fc = f" {fastest_cell(row, q, PEER_IMPLS)} |" if many else ""
            for impl, rec in row["not"].items():
                if impl not in row["ok"]:
                    skipped.append((s, impl, prec, t, T, N, rec))
            if s == "eigh":
                pct = f"{100 * q['gflops'] / peaks[t]:.1f}" if q and q.get("gflops") and peaks.get(t) else "-"
                gf = f"{q['gflops']:.2f}" if q and q.get("gflops") else "-"
                extra = "".join(f"{ms(med(row['ok'].get(i)))} | " for i in others)
                out.append(f"| {prec} | {t} | {T} | {N} | {ms(med(q))} | {ms(med(lp))} | {extra}{ms(med(tr))} | "
                           f"{ratio(med(tr), med(q))} | {ratio(med(lp), med(q))} | {gf} | {pct} |{fc} {n} |")
            elif s == "train_epoch":
                pps = f"{q['points_per_s']:.0f}" if q and q.get("points_per_s") else "-"
                extra = "".join(f"{ms(med(row['ok'].get(i)))} | {ratio(med(row['ok'].get(i)), med(q))} | "
                                for i in others)
                out.append(f"| {prec} | {t} | {T} | {batch} | {w:g} | {N} | {ms(med(q))} | {ms(med(tr))} | "
                           f"{ratio(med(tr), med(q))} | {extra}{pps} |{fc} {n} |")
            else:
                pps = f"{q['points_per_s']:.0f}" if q and q.get("points_per_s") else "-"
                extra = "".join(f"{ms(med(row['ok'].get(i)))} | {ratio(med(row['ok'].get(i)), med(q))} | "
                                for i in others)
                out.append(f"| {prec} | {t} | {T} | {N} | {ms(med(q))} | {ms(med(tr))} | {ratio(med(tr), med(q))} "
                           f"| {extra}{pps} |{fc} {n} |")
        out.append("")
    if skipped:
        out.append("## Cases not measured")
        out.append("")
        out.append("| suite | impl | precision | threads | T | N | status | estimated | reason |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for s, impl, prec, t, T, N, rec in skipped:
            e = rec.get("estimated_s")
            out.append(f"| {s} | {impl} | {prec} | {t} | {T} | {N} | {rec['status']} | "
                       f"{fmt_s(e) if e is not None else '-'} | {rec.get('reason', '').replace('|', '/')} |")
        out.append("")
    return "\n".join(out)


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


# ---------------------------------------------------------------------------------------------- plots


def make_plots(lines, plot_dir, name):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    peaks, tables = collect(lines)
    os.makedirs(plot_dir, exist_ok=True)
    written = []
    colors = {"qgml": "tab:blue", "lapacke": "tab:green", "torch": "tab:red"}
    extra = ["tab:purple", "tab:orange", "tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray"]
    for impl in sorted({l["impl"] for l in lines if compare.is_measurement(l)} - set(colors)):
        colors[impl] = extra[len(colors) - 3] if len(colors) - 3 < len(extra) else "k"
    markers = ["o", "s", "^", "D", "v", "P", "X"]

    def series_of(rows, impl, value):
        """(precision, threads, batch, w) -> T -> [(N, y)] for one impl."""
        out = {}
        for (prec, t, T, batch, w, N), row in rows.items():
            y = value(row, impl, t)
            if y is not None and y > 0:
                out.setdefault((prec, t, batch, w), {}).setdefault(T, []).append((N, y))
        return out

    def style(prec, t, thread_list):
        return ("-" if prec == "double" else "--"), markers[thread_list.index(t) % len(markers)]

    def label(impl, prec, t, batch, w, suite):
        extra = f", batch {batch}" + (f", w {w:g}" if w else "") if suite == "train_epoch" else ""
        return f"{impl} {prec} {t} thr{extra}"

    def n_axis(ax, Ns):
        ax.set_xscale("log", base=2)
        ax.set_xticks(Ns)
        ax.set_xticklabels([str(n) for n in Ns])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel("N")

    def figure(Ts, title):
        fig, axes = plt.subplots(1, len(Ts), figsize=(5.2 * len(Ts), 4.4), squeeze=False)
        fig.suptitle(title)
        return fig, axes[0]

    def finish(fig, axes, path):
        handles, labels = axes[0].get_legend_handles_labels()
        for ax in axes[1:]:
            for h, l in zip(*ax.get_legend_handles_labels()):
                if l not in labels:
                    handles.append(h)
                    labels.append(l)
        fig.tight_layout(rect=(0, 0, 1, 0.94))
        fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
        fig.savefig(path, dpi=110, bbox_inches="tight")   # the canvas grows to hold the legend and title
        plt.close(fig)
        written.append(path)

    for suite, rows in sorted(tables.items()):
        Ts = sorted({k[2] for k in rows})
        thread_list = sorted({k[1] for k in rows})
        impls = sorted({i for r in rows.values() for i in r["ok"]}, key=impl_order)
        unit = {"eigh": "all T matrices", "train_epoch": "one epoch", "metric": "all T points"}[suite]
        # time vs N
        fig, axes = figure(Ts, f"{suite}: median time of {unit} vs N (log-log)")
        for ax, T in zip(axes, Ts):
            ref = None
            for impl in impls:
                for (prec, t, batch, w), byT in sorted(series_of(
                        rows, impl, lambda r, i, t: r["ok"][i]["median_s"] if i in r["ok"] else None).items()):
                    pts = sorted(byT.get(T, []))
                    if not pts:
                        continue
                    ls, mk = style(prec, t, thread_list)
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, marker=mk, color=colors.get(impl, "k"),
                            label=label(impl, prec, t, batch, w, suite), ms=4)
                    if impl == impls[0] and (ref is None or pts[-1][0] > ref[0]):
                        ref = pts[-1]
            if ref:
                Ns = sorted({k[5] for k in rows if k[2] == T})
                xs = [n for n in Ns if n >= max(Ns[0], ref[0] / 16)]
                ax.plot(xs, [ref[1] * (n / ref[0]) ** 3 for n in xs], ":", color="grey", lw=1.5,
                        label="slope N^3 (reference)")
            ax.set_yscale("log")
            n_axis(ax, sorted({k[5] for k in rows if k[2] == T}))
            ax.set_ylabel("seconds")
            ax.set_title(f"T = {T}")
            ax.grid(True, which="both", alpha=0.3)
        finish(fig, axes, os.path.join(plot_dir, f"{name}-{suite}-time.png"))
        # speed-up vs N
        if "torch" in impls and "qgml" in impls:
            fig, axes = figure(Ts, f"{suite}: speed-up over PyTorch (torch time / qgml time)")
            for ax, T in zip(axes, Ts):
                sp = series_of(rows, "qgml", lambda r, i, t: r["ok"]["torch"]["median_s"] / r["ok"]["qgml"]["median_s"]
                               if "torch" in r["ok"] and "qgml" in r["ok"] else None)
                for (prec, t, batch, w), byT in sorted(sp.items()):
                    pts = sorted(byT.get(T, []))
                    if pts:
                        ls, mk = style(prec, t, thread_list)
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, marker=mk, ms=4,
                                label=label("torch / qgml", prec, t, batch, w, suite))
                ax.axhline(1.0, color="grey", lw=1)
                n_axis(ax, sorted({k[5] for k in rows if k[2] == T}))
                ax.set_ylim(bottom=0)
                ax.set_ylabel("speed-up")
                ax.set_title(f"T = {T}")
                ax.grid(True, alpha=0.3)
            finish(fig, axes, os.path.join(plot_dir, f"{name}-{suite}-speedup.png"))
        # fraction of the GEMM peak (flops defined for eigh only)
        if suite == "eigh" and peaks:
            fig, axes = figure(Ts, "eigh: GFLOP/s (36 N^3 per matrix) as % of the measured double GEMM peak")
            for ax, T in zip(axes, Ts):
                for impl in impls:
                    fr = series_of(rows, impl, lambda r, i, t: 100 * r["ok"][i]["gflops"] / peaks[t]
                                   if i in r["ok"] and r["ok"][i].get("gflops") and peaks.get(t) else None)
                    for (prec, t, batch, w), byT in sorted(fr.items()):
                        pts = sorted(byT.get(T, []))
                        if pts:
                            ls, mk = style(prec, t, thread_list)
                            ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, marker=mk, ms=4,
                                    color=colors.get(impl, "k"), label=label(impl, prec, t, None, None, suite))
                n_axis(ax, sorted({k[5] for k in rows if k[2] == T}))
                ax.set_ylim(bottom=0)
                ax.set_ylabel("% of GEMM peak")
                ax.set_title(f"T = {T}")
                ax.grid(True, alpha=0.3)
            finish(fig, axes, os.path.join(plot_dir, f"{name}-eigh-peak.png"))
    return written


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
