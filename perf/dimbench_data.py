"""The data sets of perf/dimension_benchmark.py: one CSV file per manifold, T, noise and seed, written once
by `qgml generate` (or by numpy stand-ins of its generators, --python-data) and loaded for the peers."""
import os

from dimbench_qgml import run_qgml


def python_points(generator, T, noise, seed, extra):
    """The formulas of core/include/qgml/data/manifolds.hpp and datasets.hpp with numpy's RNG (same
    distributions, different random numbers): a stand-in until the binary has `qgml generate`."""
    import numpy as np
    rng = np.random.default_rng(seed)
    D = int(extra.get("data.dimension", 3))
    if generator == "circle":
        t = rng.uniform(0, 2 * np.pi, T)
        x = np.c_[np.cos(t), np.sin(t)]
    elif generator in ("sphere", "sphere10"):
        D = 11 if generator == "sphere10" else D
        g = rng.standard_normal((T, D))
        x = g / np.linalg.norm(g, axis=1, keepdims=True)
    elif generator == "affine":
        a, b = rng.standard_normal((5, 3)), rng.standard_normal(5)
        x = rng.uniform(0, 1, (T, 3)) @ a.T + b
    elif generator == "helix":
        s = rng.uniform(0, 2 * np.pi, T)
        r = 2 + np.cos(8 * s)
        x = np.c_[r * np.cos(s), r * np.sin(s), np.sin(8 * s)]
    elif generator == "swiss_roll":
        s = 1.5 * np.pi * (1 + 2 * rng.uniform(0, 1, T))
        x = np.c_[s * np.cos(s), 21 * rng.uniform(0, 1, T), s * np.sin(s)]
    elif generator == "hypercube":
        d = int(extra.get("data.intrinsic_dimension", 2))
        q, _ = np.linalg.qr(rng.standard_normal((D, D)))
        x = rng.uniform(-1, 1, (T, d)) @ q[:, :d].T
    elif generator == "mobius":
        u, v = rng.uniform(0, 2 * np.pi, T), rng.uniform(-1, 1, T)
        r = 1 + 0.5 * v * np.cos(0.5 * u)
        x = np.c_[r * np.cos(u), r * np.sin(u), 0.5 * v * np.sin(0.5 * u)]
    elif generator == "curve13":
        s = rng.uniform(0, 1, T)
        f = np.arange(13) // 2 + 1
        ph = 2 * np.pi * f[None, :] * s[:, None]
        x = np.where(np.arange(13) % 2 == 0, np.cos(ph), np.sin(ph)) / f
    else:
        raise ValueError(f"--python-data has no generator {generator!r}")
    return x + noise * rng.standard_normal(x.shape)


def make_data(args, m, T, noise, seed, data_dir):
    """Writes the data set's CSV once (reused when it exists); returns (path, error)."""
    name, gen, d, D, extra = m
    path = os.path.join(data_dir, f"{name}-T{T}-noise{noise:g}-seed{seed}.csv")
    if os.path.exists(path) and not args.regenerate:
        return path, None
    if args.python_data:
        import numpy as np
        x = python_points(gen, T, noise, seed, extra)
        tmp = path + ".tmp"
        np.savetxt(tmp, x, delimiter=",", header=",".join(f"x{k}" for k in range(x.shape[1])), comments="",
                   fmt="%.17g")
        os.replace(tmp, path)
        return path, None
    opts = ["generate", "--data.generator", gen, "--data.points", str(T), "--data.noise", repr(float(noise)),
            "--data.seed", str(seed)]
    for k, v in extra.items():
        opts += [f"--{k}", str(v)]
    proc, _, err = run_qgml(args.qgml, opts + ["--out", path], args.timeout, "qgml generate")
    return (None, err) if err else (path, None)


def load_csv(path, D, T):
    import numpy as np
    x = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    if x.shape != (T, D):
        raise ValueError(f"{path}: {x.shape[0]} x {x.shape[1]} points, expected {T} x {D}")
    return x
