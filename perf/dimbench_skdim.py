"""The scikit-dimension estimators of perf/dimension_benchmark.py: one timed fit at the defaults
(skdim_fit) and the untimed warm-up fits (skdim_warmup)."""
import math
import time
import warnings

from dimbench_common import log


def skdim_fit(name, x):
    import numpy as np
    import skdim
    rec = {"estimate": None, "error": None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            est = getattr(skdim.id, name)().fit(x)
            value = float(est.dimension_)
        except Exception as e:  # any failure of the estimator is a miss with its text
            rec["error"] = f"{type(e).__name__}: {e}"[:800]
            value = None
        rec["seconds"] = round(time.perf_counter() - t0, 4)
    if value is not None:
        if math.isfinite(value):
            rec["estimate"] = value
        else:
            rec["error"] = f"estimate is {value}"
    if caught:
        msgs = sorted({f"{w.category.__name__}: {w.message}"[:200] for w in caught})
        rec["warnings"] = msgs[:5]
    return rec


def skdim_warmup(methods):
    """One untimed fit per estimator on a small data set: imports, numba compilation, first-call costs."""
    import numpy as np
    rng = np.random.default_rng(0)
    x = np.c_[rng.uniform(-1, 1, (200, 2)), 0.01 * rng.standard_normal((200, 1))]
    for name in methods:
        t0 = time.perf_counter()
        skdim_fit(name, x)
        log(f"warm-up {name}: {time.perf_counter() - t0:.1f} s (untimed)")
