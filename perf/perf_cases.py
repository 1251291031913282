"""The cases of perf/run_perf.py: the suites' names, one measurement (Case), its memory and time estimates
(estimated_bytes, Estimator with the PRIOR cost model), all cases in run order (plan) and the decision to
run or skip one (decide)."""
import math

import compare  # perf/compare.py: the suites, result lines

SUITE_ORDER = ("eigh", "train", "metric")          # command-line names, as in compare.py
JSON_SUITE = {k: v[0] for k, v in compare.SUITES.items()}
CLI_SUITE = {v: k for k, v in JSON_SUITE.items()}

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
