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
Peers: --all-peers runs torch (reference style, --python), torch2 (reference style),
torch2_vectorised and jax (under --peers-python, the venv of perf/make_venv.sh --peers); --peer
LABEL=SCRIPT[@PYTHON] adds any other. With more than one peer the table ends with "fastest peer / qgml":
  perf/compare.py train --N 3 8 16 32 64 --batch 2500 --w 0 --precision double --all-peers
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
    p.add_argument("--python", default="/usr/bin/python3", help="interpreter with torch (default of every peer)")
    p.add_argument("--peer", nargs="+", action="extend", metavar="LABEL=SCRIPT[@PYTHON]",
                   help="a Python peer to run: SCRIPT torch (the suite's reference-style baseline), torch_vectorised "
                        "or jax (train only), under PYTHON (default --python); its lines get impl LABEL. "
                        "Default: torch=torch")
    p.add_argument("--all-peers", action="store_true",
                   help="torch=torch (under --python), torch2=torch, torch2_vectorised=torch_vectorised and "
                        "jax=jax (under --peers-python)")
    p.add_argument("--peers-python", default=DEFAULT_PEERS_PYTHON,
                   help="interpreter of the --all-peers peers other than torch (default build/perf-venv/bin/python, "
                        "made by perf/make_venv.sh --peers)")
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
    p.add_argument("--no-torch", action="store_true", help="qgml only (no peer)")
    p.add_argument("--qgml-impl", nargs="+", default=["qgml"],
                   help="train: qgml_bench_train --impl values (e.g. qgml qgml-separate); each gets a column")
    p.add_argument("--floor", action="store_true",
                   help="train: measure the double GEMM rate first and add the full-eigendecomposition floor of an "
                        "epoch (36 N^3 flops per point at that rate) and qgml's epoch over it")
    p.add_argument("--out", help="JSON lines file (default perf/results/<suite>-<UTC time>.jsonl)")
    a = p.parse_args()
    try:
        a.peers = parse_peers(a.peer, a.all_peers, a.python, a.peers_python)
    except ValueError as e:
        p.error(str(e))
    return a


# compare.py suite name -> (suite key in the JSON lines, qgml driver in <build>/perf, PyTorch baseline).
SUITES = {
    "eigh": ("eigh", "qgml_bench_eigh", "torch_eigh.py"),
    "train": ("train_epoch", "qgml_bench_train", "torch_train_epoch.py"),
    "metric": ("metric", "qgml_bench_metric", "torch_metric.py"),
    "sample": ("sample", "qgml_bench_sample", "torch_sample.py"),
}

# Peers: the Python baselines qgml is measured against. A peer is LABEL=SCRIPT[@PYTHON]: SCRIPT one of
# PEER_SCRIPTS (per suite; "torch" is the suite's reference-style baseline above), PYTHON its interpreter
# (default --python). Its JSON lines get impl LABEL (the script's own impl kept as "peer_impl" when it
# differs) and "peer": LABEL. Default: one peer, torch=torch@--python, which is what compare.py always ran.
PEER_SCRIPTS = {
    "torch": {s: v[2] for s, v in SUITES.items()},
    "torch_vectorised": {"train": "torch_train_vectorised.py"},
    "jax": {"train": "jax_train.py"},
}
# --all-peers: the four peers (the fastest a user could use instead); "torch" runs under --python (Debian's torch 1.13), the others
# under --peers-python (the venv of perf/make_venv.sh --peers: PyPI torch 2.x and jax).
ALL_PEERS = (("torch", "torch", None), ("torch2", "torch", "peers"), ("torch2_vectorised", "torch_vectorised", "peers"),
             ("jax", "jax", "peers"))
DEFAULT_PEERS_PYTHON = os.path.join(ROOT, "build", "perf-venv", "bin", "python")


class Peer:
    def __init__(self, label, script, python):
        self.label, self.script, self.python = label, script, python

    def script_path(self, suite):
        """Path of this peer's script for the compare.py suite name, or None if it has none."""
        name = PEER_SCRIPTS[self.script].get(suite)
        return os.path.join(HERE, "baselines", name) if name else None

    def available(self):
        """True if the interpreter can import what the script needs (torch, or jax)."""
        module = "jax" if self.script == "jax" else "torch"
        try:
            return subprocess.run([self.python, "-c", f"import {module}"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL).returncode == 0
        except OSError:
            return False

    def relabel(self, lines):
        for l in lines:
            if l.get("impl") != self.label:
                l["peer_impl"] = l.get("impl")
                l["impl"] = self.label
            l["peer"] = self.label
            l["peer_python"] = self.python
        return lines


def parse_peers(specs, all_peers, python, peers_python):
    """The Peer list of --peer LABEL=SCRIPT[@PYTHON] ... and/or --all-peers; [torch=torch@python] without
    either. Raises ValueError with a message on a bad spec or a repeated label."""
    peers = []
    if all_peers:
        peers += [Peer(l, s, python if p is None else peers_python) for l, s, p in ALL_PEERS]
    for spec in specs or []:
        label, eq, rest = spec.partition("=")
        script, at, py = rest.partition("@")
        if not eq or not label or script not in PEER_SCRIPTS or (at and not py):
            raise ValueError(f"--peer {spec!r}: expected LABEL=SCRIPT[@PYTHON], SCRIPT one of "
                             f"{', '.join(sorted(PEER_SCRIPTS))}")
        peers.append(Peer(label, script, py or python))
    if not peers:
        peers = [Peer("torch", "torch", python)]
    labels = [p.label for p in peers]
    dup = sorted({l for l in labels if labels.count(l) > 1})
    if dup or "qgml" in labels:
        raise ValueError(f"peer labels must be unique and not qgml: {', '.join(dup or ['qgml'])}")
    return peers


def is_peer_line(line):
    """A measurement of a Python peer (any torch or jax baseline), as opposed to qgml or LAPACKE."""
    return "peer" in line or "torch_version" in line or "jax_version" in line


def fastest_peer(row, peer_impls):
    """(impl, median_s) of the fastest peer of a row {impl: line or summary with median_s}, or None."""
    found = [(r["median_s"], i) for i, r in row.items() if i in peer_impls and r and r.get("median_s")]
    return (min(found)[1], min(found)[0]) if found else None


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
    peers = [] if a.no_torch else [p for p in a.peers if p.script_path(a.suite)]
    for p in [p for p in peers if not p.available()]:
        print(f"compare.py: peer {p.label}: {p.python} cannot import "
              f"{'jax' if p.script == 'jax' else 'torch'}; not run", file=sys.stderr)
    peers = [p for p in peers if p.available()]
    have_torch = bool(peers)
    lines = []

    def run_peers(args):
        """Every peer, right after qgml's case, on the same arguments."""
        found = []
        for p in peers:
            found += p.relabel(run_lines([p.python, p.script_path(a.suite), "--threads", str(a.threads)] + args,
                                         env))
        return found
    if a.suite == "eigh":
        binary = bench_binary(a.build, "eigh")
        lines += run_lines(gemm_peak_command(a.build, a.repeats), env)[:1]  # GEMM peak line only
        for prec in a.precision:
            for T in a.T:
                for N in a.N:
                    lines += run_lines([binary, "--kokkos-disable-warnings", "--gemm", "0", "--N", str(N), "--T",
                                        str(T), "--precision", prec, "--impl", "qgml", "lapacke"] + common, env)
                    lines += run_peers(["--N", str(N), "--T", str(T), "--precision", prec] + common)
    elif a.suite == "metric":
        binary = bench_binary(a.build, "metric")
        for prec in a.precision:
            for T in a.T:
                for N in a.N:
                    args = ["--N", str(N), "--T", str(T), "--precision", prec] + common
                    lines += run_lines([binary, "--kokkos-disable-warnings"] + args, env)
                    lines += run_peers(args)
    elif a.suite == "sample":
        binary = bench_binary(a.build, "sample")
        for prec in a.precision:
            for C in a.chains:
                for N in a.N:
                    for sampler in a.sampler:
                        args = ["--N", str(N), "--chains", str(C), "--steps", str(a.steps), "--sampler", sampler,
                                "--precision", prec] + common
                        lines += run_lines([binary, "--kokkos-disable-warnings"] + args, env)
                        lines += run_peers(args)
    else:
        binary = bench_binary(a.build, "train")
        if a.floor:
            lines += run_lines(gemm_peak_command(a.build, a.repeats), env)[:1]  # GEMM peak line only
        for prec in a.precision:
            for N in a.N:
                for batch in a.batch:
                    for w in a.w:
                        args = ["--N", str(N), "--batch", str(batch), "--w", str(w), "--precision", prec,
                                "--T", str(a.T[0])] + common
                        lines += run_lines([binary, "--kokkos-disable-warnings", "--impl"] + a.qgml_impl + args,
                                           env)
                        lines += run_peers(args)
    rev = git_revision()
    with open(out, "a") as f:
        for l in lines:
            l.setdefault("git_revision", rev)
            l["compare_run"] = stamp
            f.write(json.dumps(l) + "\n")
    table = summarize(a.suite, lines, have_torch, a.qgml_impl, [p.label for p in peers])
    with open(os.path.splitext(out)[0] + ".md", "w") as f:
        f.write(table)
    print(table)
    print(f"JSON lines: {out}")


def summarize(suite, lines, have_torch, qgml_impls=("qgml",), peer_labels=None):
    """The Markdown table of one compare.py run. Peers other than "torch" (peer_labels, else every impl
    of a peer line) get a time and a ratio column each; with more than one peer, a last column gives the
    fastest peer's time over qgml's ("fastest peer / qgml") and names that peer."""
    if peer_labels is None:
        peer_labels = sorted({l["impl"] for l in lines if is_peer_line(l)})
    extra_peers = [p for p in peer_labels if p != "torch"]
    many = len(peer_labels) > 1
    unit = "s" if suite == "sample" else "ms/epoch" if suite == "train" else "ms"
    scale = 1.0 if suite == "sample" else 1e3
    peer_head = "".join(f" {p} {unit} | {p} / qgml |" for p in extra_peers) + (" fastest peer / qgml |" if many else "")
    peer_rule = "---|---|" * len(extra_peers) + ("---|" if many else "")

    def peer_cells(r, q):
        cells = ""
        for p in extra_peers:
            o = r.get(p)
            cells += (f" {scale * o['median_s']:.4g} | {o['median_s'] / q['median_s']:.2f} |" if o and q
                      else f" {scale * o['median_s']:.4g} | - |" if o else " - | - |")
        if many:
            f = fastest_peer(r, set(peer_labels))
            cells += f" {f[1] / q['median_s']:.2f} ({f[0]}) |" if f and q else " - |"
        return cells

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
                   " qgml GFLOP/s | % of GEMM peak |" + peer_head)
        out.append("|---|---|---|---|---|---|---|---|---|---|" + peer_rule)
        for k in sorted(rows):
            r = rows[k]
            q, lp, t = r.get("qgml"), r.get("lapacke"), r.get("torch")
            ms = lambda x: f"{1e3 * x['median_s']:.3f}" if x else "-"
            ratio = lambda x: f"{x['median_s'] / q['median_s']:.2f}" if x and q else "-"
            pct = f"{100 * q['gflops'] / peak:.1f}" if q and peak else "-"
            out.append(f"| {k[0]} | {k[1]} | {k[2]} | {ms(q)} | {ms(lp)} | {ms(t) if have_torch else 'n/a'} |"
                       f" {ratio(t)} | {ratio(lp)} | {q['gflops']:.2f} | {pct} |" + peer_cells(r, q))
    elif suite == "metric":
        out.append("| precision | T | N | qgml ms | torch ms | torch / qgml | qgml points/s |" + peer_head)
        out.append("|---|---|---|---|---|---|---|" + peer_rule)
        for k in sorted(rows):
            q, t = rows[k].get("qgml"), rows[k].get("torch")
            out.append(f"| {k[0]} | {k[1]} | {k[2]} | {1e3 * q['median_s']:.3f} | "
                       f"{(1e3 * t['median_s']) if t else float('nan'):.3f} | "
                       f"{(t['median_s'] / q['median_s']) if t else float('nan'):.2f} | {q['points_per_s']:.0f} |" +
                       peer_cells(rows[k], q))
    elif suite == "sample":
        out.append("| precision | chains | N | sampler | qgml s | torch s | torch / qgml | qgml chain-steps/s |"
                   " torch chain-steps/s | qgml GFLOP/s | qgml acceptance | torch acceptance |" + peer_head)
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|" + peer_rule)
        for k in sorted(rows):
            q, t = rows[k].get("qgml"), rows[k].get("torch")
            if not q:
                continue
            acc = lambda x: f"{x['acceptance']:.3f}" if x and x.get("acceptance") is not None else "-"
            out.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {q['median_s']:.4f} | "
                       f"{t['median_s'] if t else float('nan'):.4f} | "
                       f"{(t['median_s'] / q['median_s']) if t else float('nan'):.1f} | "
                       f"{q['chain_steps_per_s']:.3g} | {t['chain_steps_per_s'] if t else float('nan'):.3g} | "
                       f"{q['gflops']:.2f} | {acc(q)} | {acc(t)} |" + peer_cells(rows[k], q))
    else:
        others = [i for i in qgml_impls if i != "qgml"]
        # The floor of an epoch: a full eigendecomposition per point (36 N^3 real flops, the nominal count of
        # the Hermitian reduction, QL and back-transformation) at the measured double GEMM rate.
        floor_head, floor_rule = (" floor ms/epoch | qgml / floor |", "---|---|") if peak else ("", "")
        if peak:
            out.append(f"Measured double GEMM peak: {peak:.1f} GFLOP/s; floor = T x 36 N^3 flops at that rate\n")
        out.append("| precision | N | batch | w | qgml ms/epoch | torch ms/epoch | torch / qgml | qgml points/s |"
                   " qgml final loss | torch final loss |" + "".join(f" {i} ms/epoch | {i} / qgml |" for i in others)
                   + floor_head + peer_head)
        out.append("|---|---|---|---|---|---|---|---|---|---|" + "---|---|" * len(others) + floor_rule + peer_rule)
        for k in sorted(rows):
            r = rows[k]
            q, t = r.get("qgml"), r.get("torch")
            if not q:
                continue
            extra = ""
            for i in others:
                o = r.get(i)
                extra += (f" {1e3 * o['median_s']:.3f} | {o['median_s'] / q['median_s']:.2f} |" if o else " - | - |")
            if peak:
                floor_s = q["T"] * 36.0 * q["N"] ** 3 / (peak * 1e9)
                extra += f" {1e3 * floor_s:.4f} | {q['median_s'] / floor_s:.2f} |"
            out.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]:g} | {1e3 * q['median_s']:.3f} | "
                       f"{(1e3 * t['median_s']) if t else float('nan'):.3f} | "
                       f"{(t['median_s'] / q['median_s']) if t else float('nan'):.2f} | {q['points_per_s']:.0f} | "
                       f"{q['final_loss']:.4g} | {(t['final_loss'] if t else float('nan')):.4g} |" + extra +
                       peer_cells(r, q))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
