#!/usr/bin/env python3
"""The Python package's overhead against the program, one JSON line per measurement:

  fit:      QGMLDimension().fit(X) on T = 2000 points (the 2-sphere in R^3, seed 0) against the `qgml`
            program on the same points (X.npy) with the same settings (every default, output.plots
            false: the estimator writes no plots), wall time of the whole call / process;
  supervised fit: QCMLRegressor(n_models=1).fit(X, y) on T = 2000 points (D = 8, y = sin(x_0) + x_1 x_2 + noise,
            seed 0) against `qgml train ROWS.npy --task regression` on the same rows (features, then the
            target) with the estimator's settings (every default, analysis.enabled false, output.plots
            false); also checks that both end with the same matrices;
  evaluate: qgml.evaluate on 1e5 points against the C call qgml_evaluate on the same arrays, made
            through ctypes on libqgml_c.so in a process of its own (one Kokkos per process).

  python perf/python_overhead.py --program build/openmp/apps/qgml/qgml \
      --libqgml-c build/openmp/bindings/c/libqgml_c.so [--repeat 3]

Run it with the interpreter of the environment where `pip install .` installed qgml. Times are the
minimum over --repeat runs; the target is a ratio within 1.05.
"""

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

C_EVALUATE = r"""
import ctypes, sys, time, numpy as np
lib = ctypes.CDLL(sys.argv[1])
started = ctypes.c_int(0)
assert lib.qgml_initialize(0, ctypes.byref(started)) == 0
model = ctypes.c_void_p()
m = np.load(sys.argv[2])
d, n = m.shape[0], m.shape[1]
assert lib.qgml_model_create(d, n, m.ctypes.data_as(ctypes.c_void_p), 0, ctypes.byref(model)) == 0
x = np.load(sys.argv[3])
t = x.shape[0]
xbar, s2, e0 = np.empty_like(x), np.empty(t), np.empty(t)
loss = ctypes.c_double()
lib.qgml_evaluate.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_int,
                              ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.POINTER(ctypes.c_double)]
best = float("inf")
for _ in range(int(sys.argv[4]) + 1):
    t0 = time.perf_counter()
    rc = lib.qgml_evaluate(model, x.ctypes.data, t, d, 0, 0.25, xbar.ctypes.data, s2.ctypes.data, e0.ctypes.data,
                           ctypes.byref(loss))
    best = min(best, time.perf_counter() - t0)
    assert rc == 0
print(best, repr(loss.value))
lib.qgml_model_destroy(model)
lib.qgml_finalize()
"""


class _SilentStdout:
    """fd 1 to /dev/null for the timed calls (nothing of the training reaches the terminal)."""

    def __enter__(self):
        sys.stdout.flush()
        self.saved = os.dup(1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)

    def __exit__(self, *exc):
        os.dup2(self.saved, 1)
        os.close(self.saved)


def sphere(t, seed=0):
    x = np.random.default_rng(seed).normal(size=(t, 3))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--program", required=True, help="the qgml program of the same build")
    ap.add_argument("--libqgml-c", required=True, help="libqgml_c.so of the same build (the C interface)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--points", type=int, default=2000)
    ap.add_argument("--eval-points", type=int, default=100000)
    args = ap.parse_args()

    import qgml

    qgml.initialize()
    # Every line carries the build (version, git revision, Kokkos backend) and the thread setting.
    context = {"qgml": qgml.version(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "default"),
               "cpus": os.cpu_count(), "repeat": args.repeat}
    work = tempfile.mkdtemp(prefix="qgml-overhead-")
    x = sphere(args.points)
    data = os.path.join(work, "x.npy")
    np.save(data, x)

    # fit: the estimator against the program, same points and settings
    py, prog, dims = [], [], set()
    for i in range(args.repeat):
        with _SilentStdout():
            t0 = time.perf_counter()
            est = qgml.QGMLDimension().fit(x)
            py.append(time.perf_counter() - t0)
        dims.add(("python", est.dimension_))
        t0 = time.perf_counter()
        r = subprocess.run([args.program, "train", data, "--output.directory", os.path.join(work, f"runs{i}"),
                            "--output.plots", "false", "--quiet", "--kokkos-disable-warnings"],
                           capture_output=True, text=True, check=True)
        prog.append(time.perf_counter() - t0)
        dims.add(("program", int(r.stdout.split()[-1]) if r.stdout.split()[-1].isdigit() else r.stdout.strip()))
    print(json.dumps({"case": "fit", "points": args.points, "python_s": min(py), "program_s": min(prog),
                      "ratio": min(py) / min(prog), "python_all_s": py, "program_all_s": prog,
                      "dimensions": sorted(map(list, dims)), **context}), flush=True)

    # supervised fit: the regressor against the program, same rows and settings
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(args.points, 8))
    ys = np.sin(xs[:, 0]) + xs[:, 1] * xs[:, 2] + 0.1 * rng.normal(size=args.points)
    rows = os.path.join(work, "rows.npy")
    np.save(rows, np.column_stack([xs, ys]))
    py, prog, same = [], [], []
    for i in range(args.repeat):
        with _SilentStdout():
            t0 = time.perf_counter()
            reg = qgml.QCMLRegressor(n_models=1).fit(xs, ys)  # one run, the program's
            py.append(time.perf_counter() - t0)
        out = os.path.join(work, f"supervised{i}")
        t0 = time.perf_counter()
        subprocess.run([args.program, "train", rows, "--task", "regression", "--analysis.enabled", "false",
                        "--output.plots", "false", "--output.directory", out, "--quiet", "--kokkos-disable-warnings"],
                       capture_output=True, text=True, check=True)
        prog.append(time.perf_counter() - t0)
        (run_dir,) = [os.path.join(out, e) for e in os.listdir(out)]
        same.append(bool(np.array_equal(np.load(os.path.join(run_dir, "final_matrices.npy")), reg.model_.matrices)))
    print(json.dumps({"case": "supervised_fit", "points": args.points, "features": 8, "N": reg.model_.N,
                      "epochs": reg.n_epochs_, "python_s": min(py), "program_s": min(prog),
                      "ratio": min(py) / min(prog), "python_all_s": py, "program_all_s": prog,
                      "same_matrices": all(same), **context}), flush=True)

    # evaluate on 1e5 points: the trained configuration of the last fit
    xe = sphere(args.eval_points, seed=1) * 1.1
    points = os.path.join(work, "xe.npy")
    matrices = os.path.join(work, "m.npy")
    np.save(points, xe)
    np.save(matrices, est.model_.matrices)
    config = qgml.MatrixConfiguration.load(matrices)
    qgml.evaluate(config, xe)  # warm-up
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        ev = qgml.evaluate(config, xe)
        times.append(time.perf_counter() - t0)
    r = subprocess.run([sys.executable, "-c", C_EVALUATE, args.libqgml_c, matrices, points, str(args.repeat)],
                       capture_output=True, text=True, check=True)
    c_seconds, c_loss = r.stdout.strip().splitlines()[-1].split()  # Kokkos may print warnings first
    print(json.dumps({"case": "evaluate", "points": args.eval_points, "N": config.N, "python_s": min(times),
                      "c_s": float(c_seconds), "ratio": min(times) / float(c_seconds),
                      "same_loss": float(c_loss) == ev.loss, **context}), flush=True)


if __name__ == "__main__":
    main()
