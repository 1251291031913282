"""Running one case of perf/run_perf.py: its command line (command) and the long-lived interpreter that
runs the Python peers' main(argv) (TORCH_WORKER, TorchWorker)."""
import json
import select
import subprocess

import compare  # perf/compare.py: benchmark drivers, JSON lines
from perf_machine import case_env, kokkos_threads_flag

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
