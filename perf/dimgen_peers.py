"""The peers of perf/dimension_generalisation.py: the methods compared, the DADApy fits with the plateau
rule of DADApy_Gride, the scikit-dimension fits (via perf/dimension_benchmark.py), and the persistent
spawned worker process that runs them with a timeout (PeerWorker)."""
import math
import multiprocessing
import statistics
import time
import traceback
import warnings

import dimension_benchmark as db  # (skdim_fit, skdim_warmup)
from dimgen_common import log

SKDIM_METHODS = ["CorrInt", "DANCo", "ESS", "FisherS", "KNN", "lPCA", "MADA", "MiND_ML", "MLE", "MOM", "TLE",
                 "TwoNN"]
DADAPY_METHODS = ["DADApy_TwoNN", "DADApy_Gride"]
PEERS = SKDIM_METHODS + DADAPY_METHODS
ALL_METHODS = ["qgml"] + PEERS
GRIDE_MAX_RANGE = 256
PLATEAU_TOL = 0.10


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
