#!/usr/bin/env python3
"""GPU benchmarks of perf/gpu/run.sh: qgml against cuSOLVER and PyTorch on the same GPU.

Cases (double; --quick shrinks them to a flow check of a minute):
  eigh    T = 1e5, N = 8 16 32 64: qgml_bench_eigh --impl qgml, cusolver (batched Jacobi to N = 32,
          heevd above) and cusolver_syev (cusolverDnXsyevBatched), torch_eigh.py (torch.linalg.eigh)
  train   T = 1e6, N = 8 16 32 64, mini-batch --train-batch (10000), w = 0: qgml_bench_train against two PyTorch
          trainers: torch_train_epoch.py (the reference's style, autograd through eigh) and
          torch_train_vectorised.py (one GEMM builds H, analytic backward of docs/math.md 4.4: the fastest peer)
  metric  T = 1e5, N = 8 64: qgml_bench_metric, torch_metric.py
The qgml and cuSOLVER cases run first, then the PyTorch ones (--device cuda), cheapest first. Every case
has a time limit (--case-timeout); a PyTorch case over it is measured again at T / 10 and, for the
targets only, scaled by 10 (an epoch and a batched eigh are linear in T at a fixed batch). Cases that
would start after --deadline seconds are recorded as skipped. Nothing is ever dropped silently.

Output: FILE.jsonl (a run_info line, then the drivers' and baselines' JSON lines, each with
requested_threads = 1 so that qgml, cuSOLVER and torch share a table row, and a "status" line for every
case not measured) and FILE.md: perf/run_perf.py's tables of that file, then the targets of the GPU issue
(train: the faster torch / qgml >= 15 at N = 8 and >= 30 at N = 64; eigh: the faster cuSOLVER method
(batched Jacobi or heevd, and cusolverDnXsyevBatched) / qgml >= 2 at N = 8, 16, 32 and >= 1 at N = 64),
then qgml's nominal FP64 rate and traffic lower bound against the GPU's peaks.
  perf/gpu/bench.py --build build/gpu-hopper90 --out perf/results/gpu/bench
  perf/gpu/bench.py --build build/openmp --device cpu --quick --out /tmp/flow   # CPU flow check
"""
import argparse
import datetime
import json
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PERF = os.path.dirname(HERE)
sys.path.insert(0, PERF)
import compare  # noqa: E402  (commands, JSON lines, result files)
import run_perf  # noqa: E402  (TorchWorker, build_config, summary_markdown)

FULL = {"eigh": dict(T=100000, N=[8, 16, 32, 64]), "train": dict(T=1000000, N=[8, 16, 32, 64]),
        "metric": dict(T=100000, N=[8, 64])}
QUICK = {"eigh": dict(T=10000, N=[8, 16]), "train": dict(T=10000, N=[8]), "metric": dict(T=10000, N=[8])}
# suite: (reference impls, the fastest of which is the yardstick; {N: goal ratio, None: reported only})
TARGETS = {"train_epoch": (("torch", "torch_vectorised"), {8: 15.0, 16: None, 32: None, 64: 30.0}),
           "eigh": (("cusolver", "cusolver_syev"), {8: 2.0, 16: 2.0, 32: 2.0, 64: 1.0}),
           "metric": (("torch",), {8: None, 64: None})}
TORCH_SCRIPTS = {"torch_vectorised": "torch_train_vectorised.py"}
# eigh impls that are one driver impl with options: recorded under their own name.
DRIVER_IMPLS = {"cusolver_syev": ("cusolver", ["--cusolver-method", "syev"])}
# The GPU's peaks for the fraction-of-peak columns (--peak-tflops / --peak-tbs; the H200 SXM datasheet:
# FP64 34 TFLOP/s without tensor cores, HBM3e 4.8 TB/s).
PEAK_TFLOPS, PEAK_TBS = 34.0, 4.8


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", required=True, help="qgml build tree with perf/qgml_bench_*")
    p.add_argument("--out", required=True, help="output stem: writes STEM.jsonl and STEM.md")
    p.add_argument("--python", default="python3", help="interpreter with torch (default python3)")
    p.add_argument("--device", default="cuda", help="torch device of the baselines (default cuda)")
    p.add_argument("--suites", nargs="+", choices=["eigh", "train", "metric"], default=["eigh", "train", "metric"])
    p.add_argument("--eigh-impls", nargs="+", default=["qgml", "cusolver", "cusolver_syev"])
    p.add_argument("--train-N", nargs="+", type=int, help="training N (default 8 16 32 64)")
    p.add_argument("--train-peers", nargs="+", choices=["torch", "torch_vectorised"],
                   default=["torch", "torch_vectorised"],
                   help="PyTorch trainers (default both; torch_vectorised is the fastest peer)")
    p.add_argument("--peak-tflops", type=float, default=PEAK_TFLOPS, help="FP64 peak (default H200: 34)")
    p.add_argument("--peak-tbs", type=float, default=PEAK_TBS, help="memory bandwidth peak TB/s (H200: 4.8)")
    p.add_argument("--train-batch", type=int, default=10000, help="training mini-batch (default 10000)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per qgml case (default 3)")
    p.add_argument("--torch-repeats", type=int, default=2, help="timed runs per torch case (default 2)")
    p.add_argument("--case-timeout", type=float, default=150.0, help="seconds per case (default 150)")
    p.add_argument("--deadline", type=float, default=0.0,
                   help="start no case after this many seconds (0: no deadline)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="host threads: Kokkos' on CPU backends, torch.set_num_threads (default: all)")
    p.add_argument("--quick", action="store_true", help="small cases: a flow check")
    p.add_argument("--no-torch", action="store_true")
    return p.parse_args(argv)


def gpu_info():
    """Name, compute capability, driver and memory of GPU 0 from nvidia-smi, or {} without one."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,compute_cap,driver_version,memory.total",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        name, cc, driver, mem = [x.strip() for x in r.stdout.splitlines()[0].split(",")]
        return {"gpu": name, "compute_cap": cc, "driver": driver, "gpu_memory": mem}
    except (OSError, IndexError, ValueError, subprocess.SubprocessError):
        return {}


def torch_note(python, device):
    code = ("import torch, json; d = torch.device(%r); "
            "print(json.dumps({'torch_version': torch.__version__, 'cuda': torch.cuda.is_available(), "
            "'torch_device_name': torch.cuda.get_device_name(0) if d.type == 'cuda' and torch.cuda.is_available() "
            "else 'cpu'}))" % device)
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
        if r.returncode == 0:
            info = json.loads(r.stdout.strip().splitlines()[-1])
            ok = device == "cpu" or info["cuda"]
            return ok, info
        return False, {"torch": f"not importable by {python}: " + " | ".join(r.stderr.strip().splitlines()[-1:])}
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        return False, {"torch": f"not usable: {e}"}


class Case:
    def __init__(self, suite, impl, N, T, batch=None):
        self.suite, self.impl, self.N, self.T, self.batch = suite, impl, N, T, batch

    @property
    def torch(self):
        return self.impl.startswith("torch")

    def record(self, **kw):
        r = {"suite": run_perf.JSON_SUITE[self.suite], "impl": self.impl, "N": self.N, "T": self.T,
             "precision": "double", "requested_threads": 1}
        if self.suite == "train":
            r.update(batch=min(self.batch, self.T), w=0.0)
        r.update(kw)
        return r

    def label(self):
        return f"{self.suite} {self.impl} N={self.N} T={self.T}" + (f" batch {self.batch}" if self.batch else "")


def plan(a, with_torch):
    sizes = QUICK if a.quick else FULL
    qgml, torch = [], []
    for suite in a.suites:
        s = dict(sizes[suite])
        if suite == "train" and a.train_N:
            s["N"] = a.train_N
        batch = min(a.train_batch, s["T"]) if suite == "train" else None
        for N in s["N"]:
            for impl in (a.eigh_impls if suite == "eigh" else ["qgml"]):
                qgml.append(Case(suite, impl, N, s["T"], batch))
            if with_torch:
                for impl in (a.train_peers if suite == "train" else ["torch"]):
                    torch.append(Case(suite, impl, N, s["T"], batch))
    torch.sort(key=lambda c: (c.N, ["metric", "eigh", "train"].index(c.suite), c.impl != "torch_vectorised"))
    return qgml + torch


def argv_of(c, a, cfg, T, repeats):
    args = ["--N", str(c.N), "--T", str(T), "--precision", "double", "--repeats", str(repeats), "--warmup", "1"]
    if c.suite == "train":
        args += ["--batch", str(min(c.batch, T)), "--w", "0"]
    if c.torch:
        return args + ["--threads", str(a.threads), "--device", a.device]
    cmd = [compare.bench_binary(a.build, c.suite), "--kokkos-disable-warnings"]
    if cfg["backend"] != "cuda":
        cmd.append(run_perf.kokkos_threads_flag(cfg["kokkos_version"], a.threads))
    if c.suite == "eigh":
        impl, extra = DRIVER_IMPLS.get(c.impl, (c.impl, []))
        args += ["--gemm", "0", "--impl", impl] + extra
    return cmd + args


def run_case(c, a, cfg, worker, T, repeats, timeout):
    argv = argv_of(c, a, cfg, T, repeats)
    if c.torch:
        script = compare.baseline_script(c.suite)
        if c.impl in TORCH_SCRIPTS:
            script = os.path.join(os.path.dirname(script), TORCH_SCRIPTS[c.impl])
        return worker.run(script, argv, a.threads, timeout)
    return compare.run_json_lines(argv, run_perf.case_env(a.threads), timeout)


def targets_markdown(lines):
    """Per target: the ratio measured (or scaled from T / 10, marked) against the goal."""
    ok = [l for l in lines if compare.is_measurement(l) and l.get("precision") == "double"]
    out = ["## Targets of the GPU issue", "",
           "| suite | N | T | qgml ms | reference | reference ms | reference / qgml | goal | met |",
           "|---|---|---|---|---|---|---|---|---|"]
    for suite, (refs, goals) in TARGETS.items():
        for N, goal in goals.items():
            ref = " / ".join(refs)
            goal_text = "-" if goal is None else f">= {goal:g}"
            q = [l for l in ok if l["suite"] == suite and l["impl"] == "qgml" and l["N"] == N]
            if not q:
                out.append(f"| {suite} | {N} | - | not measured | {ref} | - | - | {goal_text} | - |")
                continue
            q = max(q, key=lambda l: l["T"])
            ref_s, note = None, ""
            for impl in refs:   # the fastest reference, measured at qgml's T or scaled from T / 10
                r = [l for l in ok if l["suite"] == suite and l["impl"] == impl and l["N"] == N and
                     (suite != "train_epoch" or l.get("batch") == q.get("batch"))]
                same = [l for l in r if l["T"] == q["T"]]
                if same:
                    s, n = same[0]["median_s"], ""
                elif r:
                    small = max(r, key=lambda l: l["T"])
                    s, n = small["median_s"] * q["T"] / small["T"], f", scaled from T = {small['T']}"
                else:
                    continue
                if ref_s is None or s < ref_s:
                    ref_s, note = s, f" ({impl}{n})"
            if ref_s is None:
                out.append(f"| {suite} | {N} | {q['T']} | {1e3 * q['median_s']:.4g} | {ref} | not measured | - | "
                           f"{goal_text} | - |")
                continue
            ratio = ref_s / q["median_s"]
            met = "-" if goal is None else ("yes" if ratio >= goal else "no")
            out.append(f"| {suite} | {N} | {q['T']} | {1e3 * q['median_s']:.4g} | {ref} | {1e3 * ref_s:.4g}{note} | "
                       f"{ratio:.2f} | {goal_text} | {met} |")
    return "\n".join(out) + "\n"


def peak_markdown(lines, peak_tflops, peak_tbs):
    """Nominal FP64 rate (36 N^3 flops per eigendecomposition, one per point: eigh, an epoch, the metric)
    and, for training, a traffic lower bound (every buffer byte of a point touched once) against the peaks."""
    ok = [l for l in lines if compare.is_measurement(l) and l.get("precision") == "double" and
          l.get("impl") == "qgml" and l.get("median_s")]
    out = ["## qgml against the GPU's peaks", "",
           f"FP64 peak {peak_tflops:g} TFLOP/s, memory {peak_tbs:g} TB/s. Flops: the nominal 36 N^3 of one "
           "eigendecomposition with vectors per point (the Jacobi sweeps, H, the gradient and the metric's sums "
           "are not counted: a lower bound). Bytes: the trainer's buffer bytes per point, each counted once "
           "(a lower bound on the traffic).", "",
           "| suite | N | T | ms | nominal GFLOP/s | % FP64 peak | GB/s (lower bound) | % bandwidth |",
           "|---|---|---|---|---|---|---|---|"]
    for l in sorted(ok, key=lambda l: (l["suite"], l["N"])):
        gf = 36.0 * l["N"] ** 3 * l["T"] / l["median_s"] * 1e-9
        gbs = l["bytes_per_point"] * l["T"] / l["median_s"] * 1e-9 if l.get("bytes_per_point") else None
        out.append(f"| {l['suite']} | {l['N']} | {l['T']} | {1e3 * l['median_s']:.4g} | {gf:.0f} | "
                   f"{100 * gf / (1e3 * peak_tflops):.1f} | {'-' if gbs is None else f'{gbs:.0f}'} | "
                   f"{'-' if gbs is None else f'{100 * gbs / (1e3 * peak_tbs):.1f}'} |")
    return "\n".join(out) + "\n"


def main(argv=None):
    a = parse_args(argv)
    start = time.monotonic()
    cfg = run_perf.build_config(a.build)
    with_torch, tinfo = (False, {"torch": "disabled (--no-torch)"}) if a.no_torch else torch_note(a.python, a.device)
    stamp = datetime.datetime.utcnow().strftime("%Y%m%dT%H%M%SZ")
    info = {"suite": "run_info", "impl": "perf/gpu/bench.py", "status": "info", "run_perf": stamp,
            "host": socket.gethostname(), "git_revision": compare.git_revision(), "build": os.path.abspath(a.build),
            "backend": cfg["backend"], "kokkos_version": cfg["kokkos_version"], "cpus": os.cpu_count(),
            "loadavg_before": [round(x, 2) for x in os.getloadavg()], "device": a.device, "quick": a.quick, "train_batch": a.train_batch, "deadline_s": a.deadline,
            "command": " ".join([os.path.relpath(sys.argv[0], os.path.dirname(PERF))] + sys.argv[1:]),
            **gpu_info(), **tinfo}
    if not with_torch:
        print(f"bench.py: torch baselines not run: {tinfo.get('torch', tinfo)}", file=sys.stderr)
    common = {"run_perf": stamp, "host": info["host"]}
    lines, failed = [info], 0
    worker = run_perf.TorchWorker(a.python)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    cases = plan(a, with_torch)
    with open(a.out + ".jsonl", "w") as out:
        out.write(json.dumps(info) + "\n")
        try:
            for i, c in enumerate(cases, 1):
                head = f"[{i}/{len(cases)}] {c.label()}"
                elapsed = time.monotonic() - start
                new = []
                if a.deadline and elapsed > a.deadline:
                    new.append(c.record(status="skipped", skip_rule="deadline",
                                        reason=f"{elapsed:.0f} s elapsed > --deadline {a.deadline:g} s", **common))
                    print(f"{head}: skipped (deadline)", file=sys.stderr)
                else:
                    repeats = a.torch_repeats if c.torch else a.repeats
                    T = c.T
                    while True:
                        timeout = a.case_timeout
                        if a.deadline:   # no case runs past the deadline (by more than 10 s)
                            timeout = min(timeout, max(10.0, a.deadline - (time.monotonic() - start)))
                        t0 = time.monotonic()
                        got, error = run_case(c, a, cfg, worker, T, repeats, timeout)
                        wall = time.monotonic() - t0
                        got = [l for l in got if l.get("suite") == run_perf.JSON_SUITE[c.suite]]
                        if not got and not error:
                            error = "no JSON line printed"
                        for l in got:
                            if c.impl in DRIVER_IMPLS:
                                l["impl"] = c.impl
                            l.setdefault("git_revision", info["git_revision"])
                            l.update(common, requested_threads=1, wall_s=round(wall, 3))
                            new.append(l)
                        if not error:
                            print(f"{head}{'' if T == c.T else f' (at T={T})'}: {1e3 * got[0]['median_s']:.4g} ms "
                                  f"(case {wall:.1f} s)", file=sys.stderr)
                            break
                        status = "timeout" if error.startswith("timeout") else "failed"
                        new.append(c.record(T=T, status=status, reason=error, wall_s=round(wall, 3), **common))
                        print(f"{head} (T={T}): {status}: {error}", file=sys.stderr)
                        if status == "failed":
                            failed += 1
                        # A torch case too slow at T: measure it at T / 10 once, for the scaled target.
                        if not (c.torch and status == "timeout" and T == c.T and T >= 1000):
                            break
                        T //= 10
                for l in new:
                    out.write(json.dumps(l) + "\n")
                out.flush()
                lines += new
        finally:
            worker.close()
    info["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    name = os.path.basename(a.out)
    md = (run_perf.summary_markdown(lines, name) + "\n" + targets_markdown(lines) + "\n" +
          peak_markdown(lines, a.peak_tflops, a.peak_tbs))
    with open(a.out + ".md", "w") as f:
        f.write(md)
    print(md)
    print(f"bench.py: {a.out}.jsonl, {a.out}.md; {failed} case(s) failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
