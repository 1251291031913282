#!/usr/bin/env python3
"""Scaling of the training epoch: time per epoch against N and against T, with fitted exponents, and peak
memory per point, for qgml alone (qgml_bench_train, one process per case).

Two series, each case one `qgml_bench_train` process whose peak resident memory is read from the kernel
(wait4's ru_maxrss):
  N series  time of one epoch at T = --n-series-T points (default 2500) for every --N (default
            3 4 8 16 32 64 128 256). The mini-batch is --batch (default 2500, capped at T), lowered where
            the trainer's buffers (about 40 N^2 bytes per batch point) would pass --memory-gb.
  T series  time of one epoch for every --T (default 2500 1e4 1e5 1e6) at each --T-series-N (default
            8 32 64), mini-batch min(T, --batch). A case whose epoch is predicted (linearly from the last
            T of its series) to take more than --max-epoch-seconds is skipped and recorded as skipped.
A case predicted to take more than --long-epoch-seconds (default 20) is timed once without a warm-up
epoch; every other case takes --warmup (1) warm-up epochs and --repeats (3) timed ones (the median is
reported).

Fits (least squares on log time against log N or log T): the exponent p of t ~ N^p over the cases with
N >= --fit-N-min (default 16, where the O(N^3) eigensolver and gradient dominate the O(N^2) per-point
work), and the local exponents between neighbouring N; the exponent q of t ~ T^q per N. Memory: the
trainer's own estimate of its buffers per batch point (`bytes_per_point`) and the measured peak resident
memory; along T (fixed batch) the slope of peak memory against T is the memory a data point costs.

Output: DIR/NAME.jsonl (a run_info line, then the benchmark's JSON lines with peak_rss_bytes, series and
wall_s added, and the skipped cases), DIR/NAME.md (tables and fits), DIR/plots/NAME-{N,T}.png (unless
--no-plots or matplotlib is missing).

  perf/scaling.py                                      # the default sweep, about 10 minutes on 2 cores
  perf/scaling.py --N 3 8 32 --T 2500 10000 --T-series-N 8 --name try
  perf/scaling.py --report perf/results/scaling-20261125.jsonl --name again   # tables and plots only
"""
import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import compare  # noqa: E402  (perf/compare.py: binaries, JSON lines, git revision)

BYTES_PER_BATCH_POINT = (40.0, 2000.0)   # a N^2 + b: qgml_bench_train's bytes_per_point, N = 8 .. 256


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build", "openmp"), help="qgml build (default build/openmp)")
    p.add_argument("--N", type=int, nargs="+", default=[3, 4, 8, 16, 32, 64, 128, 256], help="N series")
    p.add_argument("--n-series-T", type=int, default=2500, help="points of the N series (default 2500)")
    p.add_argument("--T", type=int, nargs="+", default=[2500, 10000, 100000, 1000000], help="T series")
    p.add_argument("--T-series-N", type=int, nargs="+", default=[8, 32, 64], help="N of the T series")
    p.add_argument("--batch", type=int, default=2500, help="mini-batch, capped at T (default 2500)")
    p.add_argument("--w", type=float, default=0.0, help="fluctuation weight (default 0)")
    p.add_argument("--precision", default="double", choices=["double", "float"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--long-epoch-seconds", type=float, default=20.0,
                   help="a case predicted longer is timed once, without warm-up (default 20)")
    p.add_argument("--max-epoch-seconds", type=float, default=150.0,
                   help="a case predicted longer is skipped (default 150)")
    p.add_argument("--memory-gb", type=float, help="memory a case may use (default 60%% of MemAvailable)")
    p.add_argument("--fit-N-min", type=int, default=16, help="smallest N of the N-exponent fit (default 16)")
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--name", help="output stem (default scaling-<UTC time>)")
    p.add_argument("--report", nargs="+", metavar="JSONL", help="only write tables and plots of these results")
    p.add_argument("--no-plots", action="store_true")
    a = p.parse_args(argv)
    if min(a.N + a.T + a.T_series_N + [a.batch, a.threads, a.repeats, a.n_series_T]) < 1 or a.warmup < 0:
        p.error("--N, --T, --T-series-N, --batch, --threads, --repeats and --n-series-T must be positive")
    a.N, a.T, a.T_series_N = sorted(set(a.N)), sorted(set(a.T)), sorted(set(a.T_series_N))
    return a


def memory_available_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 << 30


def batch_for(a, N, T, budget):
    """min(T, --batch), lowered so that the trainer's buffers fit the budget."""
    per_point = BYTES_PER_BATCH_POINT[0] * N * N + BYTES_PER_BATCH_POINT[1]
    fit = max(1, int(budget // per_point))
    return min(T, a.batch, fit)


def run_case(a, env, N, T, batch, repeats, warmup):
    """One qgml_bench_train process: its JSON line with peak_rss_bytes (os.wait4 on that child alone) and wall_s."""
    cmd = [compare.bench_binary(a.build, "train"), "--kokkos-disable-warnings", "--impl", "qgml",
           "--N", str(N), "--T", str(T), "--batch", str(batch), "--w", str(a.w), "--precision", a.precision,
           "--repeats", str(repeats), "--warmup", str(warmup)]
    start = time.monotonic()
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r_out)
        os.close(r_err)
        os.dup2(w_out, 1)
        os.dup2(w_err, 2)
        try:
            os.execve(cmd[0], cmd, env)
        finally:
            os._exit(127)
    os.close(w_out)
    os.close(w_err)
    with os.fdopen(r_out) as fo, os.fdopen(r_err) as fe:
        out = fo.read()     # the benchmark writes little to stderr, so reading stdout first cannot block it
        err = fe.read()
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {code}: {err.strip()[-400:]}")
    lines = [l for l in compare.parse_json_lines(out) if l.get("precision") == a.precision]
    if len(lines) != 1:
        raise RuntimeError(f"{' '.join(cmd)}: expected one {a.precision} JSON line, got {len(lines)}")
    line = lines[0]
    line["peak_rss_bytes"] = usage.ru_maxrss * 1024     # Linux reports kilobytes
    line["wall_s"] = round(wall, 3)
    line["command"] = " ".join(cmd[1:])
    return line


def measure(a):
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OMP_PROC_BIND="false", OPENBLAS_NUM_THREADS="1")
    budget = (a.memory_gb * 2**30) if a.memory_gb else 0.6 * memory_available_bytes()
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    info = {"suite": "run_info", "impl": "-", "status": "info", "script": "perf/scaling.py", "argv": sys.argv[1:], "host": platform.node(),
            "load_before": [round(x, 2) for x in os.getloadavg()], "git_revision": compare.git_revision(), "utc": stamp,
            "memory_budget_bytes": int(budget), "threads": a.threads, "precision": a.precision}
    lines = [info]

    def case(series, N, T, predicted):
        batch = batch_for(a, N, T, budget)
        if predicted is not None and predicted > a.max_epoch_seconds:
            rec = {"suite": "train_epoch", "impl": "qgml", "series": series, "N": N, "T": T, "batch": batch,
                   "precision": a.precision, "status": "skipped",
                   "reason": f"predicted epoch {predicted:.3g} s > --max-epoch-seconds {a.max_epoch_seconds:g}"}
            print(f"scaling.py: {series} N={N} T={T}: skipped ({rec['reason']})", file=sys.stderr)
            lines.append(rec)
            return None
        long_case = predicted is not None and predicted > a.long_epoch_seconds
        repeats, warmup = (1, 0) if long_case else (a.repeats, a.warmup)
        line = run_case(a, env, N, T, batch, repeats, warmup)
        line["series"] = series
        line["predicted_s"] = None if predicted is None else round(predicted, 3)
        lines.append(line)
        print(f"scaling.py: {series} N={N:4d} T={T:8d} batch={batch:5d}: {line['median_s']:.4g} s/epoch, "
              f"peak RSS {line['peak_rss_bytes'] / 2**20:.0f} MiB", file=sys.stderr)
        return line["median_s"]

    last = None
    for N in a.N:
        # the epoch grows at most like N^3 (eigensolver); predicted from the previous N
        predicted = None if last is None else last[1] * (N / last[0]) ** 3
        t = case("N", N, a.n_series_T, predicted)
        if t is None:
            break
        last = (N, t)
    for N in a.T_series_N:
        last = None
        for T in a.T:
            predicted = None if last is None else last[1] * T / last[0]
            t = case("T", N, T, predicted)
            if t is None:
                break
            last = (T, t)
    info["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return lines, stamp


# ------------------------------------------------------------------------------------------------ fits

def fit_power(xs, ys):
    """Least-squares exponent and prefactor of y = c x^p on log-log axes; None for fewer than two points."""
    if len(xs) < 2:
        return None
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((x - mx) ** 2 for x in lx)
    if sxx == 0:
        return None
    p = sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / sxx
    return p, math.exp(my - p * mx)


def fit_line(xs, ys):
    """Least-squares slope and intercept of y = a + b x."""
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - b * mx, b


def measured(lines, series):
    return [l for l in lines if l.get("series") == series and l.get("suite") == "train_epoch" and "median_s" in l]


def mib(b):
    return f"{b / 2**20:.0f}"


def report(lines, a):
    info = next((l for l in lines if l.get("suite") == "run_info"), {})
    ns = sorted(measured(lines, "N"), key=lambda l: l["N"])
    out = ["# Training epoch scaling (perf/scaling.py)", ""]
    first = next((l for l in lines if "kokkos_version" in l), {})
    out.append(f"Host `{info.get('host', '?')}`, {first.get('execution_space', '?')} with "
               f"{first.get('threads', '?')} threads, Kokkos {first.get('kokkos_version', '?')}, "
               f"git {info.get('git_revision', first.get('git_revision', '?'))}, "
               f"{info.get('precision', first.get('precision', '?'))}, D = 3, w = {first.get('w', 0):g}; load "
               f"average {info.get('load_before', ['?'])[0]} before, {info.get('load_after', ['?'])[0]} after. "
               "Times are medians of the timed epochs (one epoch where marked), memory is the process's peak "
               "resident set (data, buffers, the Kokkos runtime and the program).")
    out.append("")
    if ns:
        T0 = ns[0]["T"]
        out += [f"## Time per epoch against N (T = {T0})", "",
                "| N | batch | s / epoch | us / point | local exponent | trainer bytes / batch point | peak RSS MiB |"
                " timed epochs |", "|---|---|---|---|---|---|---|---|"]
        prev = None
        for l in ns:
            local = "-"
            if prev is not None:
                local = f"{math.log(l['median_s'] / prev['median_s']) / math.log(l['N'] / prev['N']):.2f}"
            out.append(f"| {l['N']} | {l['batch']} | {l['median_s']:.4g} | {1e6 * l['median_s'] / l['T']:.3g} | "
                       f"{local} | {l.get('bytes_per_point', 0):.0f} | {mib(l['peak_rss_bytes'])} | "
                       f"{l.get('repeats', '?')} |")
            prev = l
        big = [l for l in ns if l["N"] >= a.fit_N_min]
        f_big = fit_power([l["N"] for l in big], [l["median_s"] for l in big])
        f_all = fit_power([l["N"] for l in ns], [l["median_s"] for l in ns])
        out.append("")
        if f_big:
            out.append(f"Fitted t ~ N^p: p = {f_big[0]:.2f} over N >= {a.fit_N_min} "
                       f"({', '.join(str(l['N']) for l in big)}), p = {f_all[0]:.2f} over every N.")
        out.append("")
    for N in sorted({l["N"] for l in measured(lines, "T")}):
        ts = sorted([l for l in measured(lines, "T") if l["N"] == N], key=lambda l: l["T"])
        out += [f"## Time per epoch against T (N = {N})", "",
                "| T | batch | s / epoch | us / point | peak RSS MiB | timed epochs |", "|---|---|---|---|---|---|"]
        for l in ts:
            out.append(f"| {l['T']} | {l['batch']} | {l['median_s']:.4g} | {1e6 * l['median_s'] / l['T']:.3g} | "
                       f"{mib(l['peak_rss_bytes'])} | {l.get('repeats', '?')} |")
        f = fit_power([l["T"] for l in ts], [l["median_s"] for l in ts])
        same_batch = [l for l in ts if l["batch"] == ts[-1]["batch"]]
        m = fit_line([l["T"] for l in same_batch], [l["peak_rss_bytes"] for l in same_batch])
        out.append("")
        if f:
            out.append(f"Fitted t ~ T^q: q = {f[0]:.3f} (T = {ts[0]['T']} .. {ts[-1]['T']}).")
        if m and len(same_batch) >= 2:
            out.append(f"Peak memory against T at batch {same_batch[-1]['batch']}: {m[0] / 2**20:.0f} MiB + "
                       f"{m[1]:.0f} bytes per point.")
        out.append("")
    skipped = [l for l in lines if l.get("status") == "skipped"]
    if skipped:
        out += ["## Not measured", "", "| series | N | T | reason |", "|---|---|---|---|"]
        out += [f"| {l['series']} | {l['N']} | {l['T']} | {l['reason']} |" for l in skipped]
        out.append("")
    return "\n".join(out)


def plots(lines, path_stem):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    written = []
    os.makedirs(os.path.dirname(path_stem), exist_ok=True)
    ns = sorted(measured(lines, "N"), key=lambda l: l["N"])
    if ns:
        fig, ax = plt.subplots(figsize=(5.6, 4.4))
        xs, ys = [l["N"] for l in ns], [l["median_s"] for l in ns]
        ax.loglog(xs, ys, "o-", label=f"qgml, T = {ns[0]['T']}")
        ref = ns[-1]
        ax.loglog(xs, [ref["median_s"] * (n / ref["N"]) ** 3 for n in xs], ":", color="grey", label="slope N^3")
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([str(n) for n in xs])
        ax.set_xlabel("N")
        ax.set_ylabel("seconds per epoch")
        ax.set_title("Training epoch against N")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path_stem + "-N.png", dpi=110)
        plt.close(fig)
        written.append(path_stem + "-N.png")
    ts = measured(lines, "T")
    if ts:
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10.4, 4.4))
        for N in sorted({l["N"] for l in ts}):
            s = sorted([l for l in ts if l["N"] == N], key=lambda l: l["T"])
            ax.loglog([l["T"] for l in s], [l["median_s"] for l in s], "o-", label=f"N = {N}")
            ax2.loglog([l["T"] for l in s], [l["peak_rss_bytes"] / 2**20 for l in s], "o-", label=f"N = {N}")
        ax.set_xlabel("T (points)")
        ax.set_ylabel("seconds per epoch")
        ax.set_title("Training epoch against T")
        ax2.set_xlabel("T (points)")
        ax2.set_ylabel("peak resident memory (MiB)")
        ax2.set_title("Peak memory against T")
        for x in (ax, ax2):
            x.grid(True, which="both", alpha=0.3)
            x.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path_stem + "-T.png", dpi=110)
        plt.close(fig)
        written.append(path_stem + "-T.png")
    return written


def main(argv=None):
    a = parse_args(argv)
    if a.report:
        lines = []
        for path in a.report:
            lines += compare.read_jsonl(path)
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    else:
        lines, stamp = measure(a)
    name = a.name or f"scaling-{stamp}"
    os.makedirs(a.out, exist_ok=True)
    stem = os.path.join(a.out, name)
    if not a.report:
        tmp = stem + ".jsonl.tmp"
        with open(tmp, "w") as f:
            for l in lines:
                f.write(json.dumps(l) + "\n")
        os.replace(tmp, stem + ".jsonl")
    text = report(lines, a)
    with open(stem + ".md.tmp", "w") as f:
        f.write(text + "\n")
    os.replace(stem + ".md.tmp", stem + ".md")
    print(text)
    if not a.no_plots:
        try:
            for p in plots(lines, os.path.join(a.out, "plots", name)):
                print(f"scaling.py: wrote {p}", file=sys.stderr)
        except ImportError as e:
            print(f"scaling.py: no plots ({e}); run it with /usr/bin/python3 (Debian's python3-matplotlib)",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
