#!/usr/bin/env python3
"""Data families of the intrinsic-dimension generalisation benchmark (docs/dimension.md).

Every family is a point-cloud generator in numpy with a known intrinsic dimension d in an ambient R^D:
`Family.make(n, rng)` returns n clean points, an (n, D) array, drawn with the numpy Generator `rng`.
The generators are in perf/dimension_family_generators.py. Whatever fixes the *shape* of a family (random
rotations, frequencies, Fourier coefficients) comes from `_struct(name)` there, a generator seeded by the
family's name only, so that every seed of a family samples the same manifold and only the points change.

The split. `half` is "tune" or "heldout", assigned once here, before any tuning, and never changed:
within each kind (the `kind` column) the families alternate tune / heldout in the order listed, so that
both halves cover every kind (the "curves" kind starts with heldout, the others with tune, which makes
the halves 18 and 18). Defaults of qgml may be tuned on the "tune" half only.

Scoring. Integer families are scored by exact hits (round-half-up(estimate) == d). Fractal sets
(`fractal=True`) carry a non-integer d and are scored by |estimate - d| only. Unions of two pieces of
different dimensions carry `pieces=[(d1, frac1), (d2, frac2)]` and d = the dimension of the piece with
2/3 of the points.

Noise (`make_points`). The clean points are centred and divided by the data's scale, defined as the RMS
of the centred clean coordinates (one number: sqrt(mean over all n*D entries of (x - mean)^2)), so that
the clean data have scale 1; then independent noise of standard deviation `level` is added to every
coordinate (that is, sigma = level * scale of the original data):
  gaussian  N(0, level^2)
  uniform   U[-a, a] with a = level * sqrt(3) (the same standard deviation)
  none      nothing (level ignored)
The clean points of (family, n, seed) are the same for every noise kind and level (separate random
streams for points and noise).

  python perf/dimension_families.py --list     # name, d, D, half, kind, what it is
  python perf/dimension_families.py --check    # shapes, finiteness, halves >= 15 families each
"""
import argparse
import math
import sys
import zlib
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Tuple

try:
    import numpy as np
except ImportError:  # run as a script by a python without numpy: use the perf venv's (perf/make_venv.sh)
    import os
    _py = os.path.join(os.environ.get("QGML_PERF_VENV") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "perf-venv"), "bin", "python")
    if __name__ == "__main__" and os.path.exists(_py) and not os.environ.get("QGML_DIMFAM_REEXEC"):
        os.environ["QGML_DIMFAM_REEXEC"] = "1"
        os.execv(_py, [_py, os.path.abspath(__file__)] + sys.argv[1:])
    raise

from dimension_family_generators import (  # noqa: E402  (after numpy is known to import)
    TWO_PI, torus2_r4, torus3_r6, klein_r4, ball3, ball5, sphere7_r8, s2xs1_r5, toroidal_spiral, smooth3_r12,
    cube17_r18, m10_r40, m18_r72, cube30_r100, gauss70_r100, gauss20, m6_r36, thin4_r6, m10_beta_r40,
    student2_r5, lognormal3_r6, exp5_r10, spiral8_r3, band10_r3, helix100, curve13_fourier, curve50_fourier,
    union_circle_plane_r3, union_2d_4d_r6, sierpinski, koch, swiss_hole, s_curve, paraboloid,
    hyperbolic_paraboloid, affine5_r10, cube6_curved_r12, sphere_spiral_r3, spring_r3, lissajous_torus_r4,
    ball8, cube12_r12, sphere5_r6, smooth7_r28, gauss25_r50, exp4_graph_r8, union_line_ball_r4, annulus_r2,
    torus_knot_r3)


@dataclass(frozen=True)
class Family:
    name: str
    d: float                 # intrinsic dimension (non-integer for fractals)
    D: int                   # ambient dimension
    half: str                # "tune" or "heldout" (fixed, see the module docstring)
    make: Callable           # make(n, rng) -> (n, D) clean points
    kind: str = ""           # classical, high, nonuniform, curves, unions, fractal, other
    doc: str = ""            # one line: what it is
    fractal: bool = False    # scored by |d_hat - d|, not by exact hits
    pieces: Optional[List[Tuple[int, float]]] = None   # unions: [(d1, fraction1), (d2, fraction2)]


# ----------------------------------------------------------------------------------------------------
# The families. half: alternate tune / heldout within each kind in this order (curves start heldout).

LOG3_2 = math.log(3) / math.log(2)   # 1.585
LOG4_3 = math.log(4) / math.log(3)   # 1.262

FAMILIES = [
    # classical
    Family("torus2_r4", 2, 4, "tune", torus2_r4, "classical", "flat torus T^2 = S^1 x S^1 in R^4, uniform angles"),
    Family("torus3_r6", 3, 6, "heldout", torus3_r6, "classical", "flat torus T^3 in R^6, uniform angles"),
    Family("klein_r4", 2, 4, "tune", klein_r4, "classical", "Klein bottle, standard embedding in R^4 (R 2, r 1), uniform parameters"),
    Family("ball3", 3, 3, "heldout", ball3, "classical", "solid unit 3-ball in R^3, uniform"),
    Family("ball5", 5, 5, "tune", ball5, "classical", "solid unit 5-ball in R^5, uniform"),
    Family("sphere7_r8", 7, 8, "heldout", sphere7_r8, "classical", "7-sphere S^7 in R^8, uniform"),
    Family("s2xs1_r5", 3, 5, "tune", s2xs1_r5, "classical", "S^2 x S^1 in R^5 = R^3 x R^2, uniform"),
    Family("toroidal_spiral", 1, 3, "heldout", toroidal_spiral, "classical", "curve winding 20 times around a torus (R 2, r 0.5) in R^3"),
    Family("smooth3_r12", 3, 12, "tune", smooth3_r12, "classical", "random smooth 3-manifold: cos/sin of 6 random linear forms of [0,1]^3, rotated in R^12"),
    # high d / D
    Family("cube17_r18", 17, 18, "tune", cube17_r18, "high", "uniform 17-cube [0,1]^17 in R^18 (rotated)"),
    Family("m10_r40", 10, 40, "heldout", m10_r40, "high", "10-manifold in R^40: (cos a, sin a, cos(2a+b)/2, sin(2a+b)/2) per coordinate pair, rotated"),
    Family("m18_r72", 18, 72, "tune", m18_r72, "high", "18-manifold in R^72: products of sin/cos of 18 uniform coordinates, rotated"),
    Family("cube30_r100", 30, 100, "heldout", cube30_r100, "high", "uniform 30-cube [-1,1]^30 linearly (isometrically) embedded in R^100"),
    Family("gauss70_r100", 70, 100, "tune", gauss70_r100, "high", "standard Gaussian in R^70 linearly embedded in R^100"),
    Family("gauss20", 20, 20, "heldout", gauss20, "high", "standard Gaussian in R^20 (non-compact)"),
    Family("m6_r36", 6, 36, "tune", m6_r36, "high", "T^6 by (cos kt, sin kt)/k, k = 1..3, per angle: 6-manifold in R^36 spanning all 36 directions, rotated"),
    Family("thin4_r6", 4, 6, "heldout", thin4_r6, "high", "4-d box 1 x 1 x 1 x 0.05 bent (half cylinder + saddle) in R^6: a 4-manifold near a 3-d set"),
    # nonuniform / heavy-tailed densities
    Family("m10_beta_r40", 10, 40, "tune", m10_beta_r40, "nonuniform", "the map of m10_r40 with Beta(0.5, 3) coordinates: strongly nonuniform 10-manifold in R^40"),
    Family("student2_r5", 2, 5, "heldout", student2_r5, "nonuniform", "2-d Student-t (df 3) plane linearly embedded in R^5 (heavy tails)"),
    Family("lognormal3_r6", 3, 6, "tune", lognormal3_r6, "nonuniform", "lognormal(0, 0.5) 3-d cloud on a curved 3-manifold (graph of sin, cos, product) in R^6"),
    Family("exp5_r10", 5, 10, "heldout", exp5_r10, "nonuniform", "exponential(1) 5-d cloud on a curved 5-manifold (graph of sin of pair sums) in R^10"),
    # curves and twisted bands (this kind starts with heldout)
    Family("spiral8_r3", 1, 3, "heldout", spiral8_r3, "curves", "8-turn conical spiral in R^3 (radius 0.2..1.2, rise 0.3)"),
    Family("band10_r3", 2, 3, "tune", band10_r3, "curves", "band with 10 half twists around a circle (R 1, half-width 0.25) in R^3"),
    Family("helix100", 1, 100, "heldout", helix100, "curves", "closed curve (cos 2pi f s, sin 2pi f s)/f, f = 1..50, in R^100"),
    Family("curve13_fourier", 1, 13, "tune", curve13_fourier, "curves", "random closed Fourier curve (frequencies 1..5, amplitudes 1/f) in R^13"),
    Family("curve50_fourier", 1, 50, "heldout", curve50_fourier, "curves", "random closed Fourier curve (frequencies 1..10, amplitudes 1/f) in R^50"),
    # unions of two pieces (d = the piece with 2/3 of the points)
    Family("union_circle_plane_r3", 2, 3, "tune", union_circle_plane_r3, "unions", "unit circle at height 1 (1/3) and a disjoint square [-1,1]^2 (2/3) in R^3",
           pieces=[(2, 2 / 3), (1, 1 / 3)]),
    Family("union_2d_4d_r6", 4, 6, "heldout", union_2d_4d_r6, "unions", "4-cube (2/3) and a disjoint square 2 away (1/3), rotated in R^6",
           pieces=[(4, 2 / 3), (2, 1 / 3)]),
    # fractal (scored by |d_hat - d|)
    Family("sierpinski", LOG3_2, 2, "tune", sierpinski, "fractal", "Sierpinski triangle in R^2 by the chaos game, d = log 3 / log 2", fractal=True),
    Family("koch", LOG4_3, 2, "heldout", koch, "fractal", "Koch curve in R^2 by the chaos game, d = log 4 / log 3", fractal=True),
    # other classics
    Family("swiss_hole", 2, 3, "tune", swiss_hole, "other", "Swiss roll with a rectangular hole in the middle, in R^3"),
    Family("s_curve", 2, 3, "heldout", s_curve, "other", "S-curve (as sklearn's make_s_curve) in R^3"),
    Family("paraboloid", 2, 3, "tune", paraboloid, "other", "paraboloid z = x^2 + y^2 over [-1,1]^2 in R^3"),
    Family("hyperbolic_paraboloid", 2, 3, "heldout", hyperbolic_paraboloid, "other", "saddle z = x^2 - y^2 over [-1,1]^2 in R^3"),
    Family("affine5_r10", 5, 10, "tune", affine5_r10, "other", "uniform [0,1]^5 through a random (non-isometric) affine map into R^10"),
    Family("cube6_curved_r12", 6, 12, "heldout", cube6_curved_r12, "other", "6-cube [-1,1]^6 curved by 0.3 (u^2 - 1/3), rotated in R^12"),
    # extra tuning families (half "extra", see above)
    Family("sphere_spiral_r3", 1, 3, "extra", sphere_spiral_r3, "curves", "spiral on the unit sphere, 15 turns from pole to pole"),
    Family("spring_r3", 1, 3, "extra", spring_r3, "curves", "cylindrical helix of 10 turns, radius 1, height 2"),
    Family("lissajous_torus_r4", 1, 4, "extra", lissajous_torus_r4, "curves", "curve (3t, 19t) on the flat torus in R^4"),
    Family("torus_knot_r3", 1, 3, "extra", torus_knot_r3, "curves", "(3, 11) torus knot (R 2, r 0.6) in R^3"),
    Family("ball8", 8, 8, "extra", ball8, "classical", "solid unit 8-ball in R^8, uniform"),
    Family("annulus_r2", 2, 2, "extra", annulus_r2, "classical", "annulus 0.5 <= r <= 1 in R^2, uniform"),
    Family("sphere5_r6", 5, 6, "extra", sphere5_r6, "classical", "5-sphere S^5 in R^6, uniform"),
    Family("cube12_r12", 12, 12, "extra", cube12_r12, "high", "uniform 12-cube in R^12 (rotated)"),
    Family("gauss25_r50", 25, 50, "extra", gauss25_r50, "high", "standard Gaussian in R^25 linearly embedded in R^50"),
    Family("smooth7_r28", 7, 28, "extra", smooth7_r28, "high", "random smooth 7-manifold: cos/sin of 14 random linear forms of [0,1]^7, rotated in R^28"),
    Family("exp4_graph_r8", 4, 8, "extra", exp4_graph_r8, "nonuniform", "exponential(0.7) 4-d cloud on a curved graph in R^8"),
    Family("union_line_ball_r4", 3, 4, "extra", union_line_ball_r4, "unions", "3-ball (2/3) and a segment 3 away (1/3), rotated in R^4",
           pieces=[(3, 2 / 3), (1, 1 / 3)]),
]


# ----------------------------------------------------------------------------------------------------
# The literature's benchmark (half "literature"): the 24 manifolds of scikit-dimension's
# BenchmarkManifolds (Hein and Audibert 2005, Campadelli et al. 2015; the sets the issue's first
# examples come from), generated by scikit-dimension itself at their standard d and D. Defaults may be
# tuned on "literature-tune" only (analysis.local_pca_agree was); "literature-heldout" is reported apart.
# Needs scikit-dimension and pandas (the perf venv has them); the other halves do not.
# Split once, 2026-12-07, before any default was tuned on it (after one run of the defaults of that day
# on all 24): in the order below, the first, third, ... set is "literature-tune" and the second, fourth,
# ... "literature-heldout" (each half has cubes, nonlinear high-d sets, paraboloids and classics).

LITERATURE = [  # (name, d, D), as in skdim.datasets.BenchmarkManifolds
    ("M1_Sphere", 10, 11), ("M2_Affine_3to5", 3, 5), ("M3_Nonlinear_4to6", 4, 6), ("M4_Nonlinear", 4, 8),
    ("M5a_Helix1d", 1, 3), ("M5b_Helix2d", 2, 3), ("M6_Nonlinear", 6, 36), ("M7_Roll", 2, 3),
    ("M8_Nonlinear", 12, 72), ("M9_Affine", 20, 20), ("M10a_Cubic", 10, 11), ("M10b_Cubic", 17, 18),
    ("M10c_Cubic", 24, 25), ("M10d_Cubic", 70, 71), ("M11_Moebius", 2, 3), ("M12_Norm", 20, 20),
    ("M13a_Scurve", 2, 3), ("M13b_Spiral", 1, 13), ("Mbeta", 10, 40), ("Mn1_Nonlinear", 18, 72),
    ("Mn2_Nonlinear", 24, 96), ("Mp1_Paraboloid", 3, 12), ("Mp2_Paraboloid", 6, 21), ("Mp3_Paraboloid", 9, 30),
]


def _literature_maker(name, d, D):
    def make(n, rng):
        import skdim  # noqa: F401  (only this half needs it)
        bm = skdim.datasets.BenchmarkManifolds(random_state=int(rng.integers(2**31 - 1)))
        return bm.dict_gen[name](n=n, dim=D, d=d)
    return make


LITERATURE_FAMILIES = [Family(name, d, D, "literature-tune" if i % 2 == 0 else "literature-heldout",
                              _literature_maker(name, d, D), "literature", f"scikit-dimension BenchmarkManifolds {name}")
                       for i, (name, d, D) in enumerate(LITERATURE)]

BY_NAME = {f.name: f for f in FAMILIES + LITERATURE_FAMILIES}
NOISE_KINDS = ("none", "gaussian", "uniform")


def data_scale(x):
    """The data's scale: the RMS of the centred coordinates (one number over all n * D entries)."""
    c = x - x.mean(axis=0)
    return float(np.sqrt(np.mean(c * c)))


def make_points(family, n, noise_kind="none", noise_level=0.0, seed=1):
    """(n, D) points of `family` (a Family or its name): clean points centred and scaled to scale 1, plus
    noise of standard deviation noise_level per coordinate (see the module docstring)."""
    fam = BY_NAME[family] if isinstance(family, str) else family
    if noise_kind not in NOISE_KINDS:
        raise ValueError(f"noise kind {noise_kind!r}: choose from {', '.join(NOISE_KINDS)}")
    key = zlib.crc32(fam.name.encode())
    x = np.asarray(fam.make(n, np.random.default_rng([key, seed, 0])), dtype=float)
    if x.shape != (n, fam.D):
        raise RuntimeError(f"{fam.name}: generator made {x.shape}, expected {(n, fam.D)}")
    scale = data_scale(x)
    x = (x - x.mean(axis=0)) / scale
    level = float(noise_level)
    if noise_kind != "none" and level > 0:
        nrng = np.random.default_rng([key, seed, 1])
        if noise_kind == "gaussian":
            x = x + level * nrng.standard_normal(x.shape)
        else:
            a = level * math.sqrt(3.0)
            x = x + nrng.uniform(-a, a, x.shape)
    return x


def check(n=300):
    problems = []
    names = [f.name for f in FAMILIES]
    if len(set(names)) != len(names):
        problems.append("duplicate family names")
    try:  # the literature's benchmark too, where scikit-dimension is installed
        import skdim  # noqa: F401
        literature = LITERATURE_FAMILIES
    except ImportError:
        literature = []
    for f in FAMILIES + literature:
        if f.half not in ("tune", "heldout", "extra", "literature-tune", "literature-heldout"):
            problems.append(f"{f.name}: half {f.half!r}")
        if f.fractal == float(f.d).is_integer():
            problems.append(f"{f.name}: fractal flag {f.fractal} but d {f.d}")
        if f.pieces and abs(sum(p[1] for p in f.pieces) - 1) > 1e-9:
            problems.append(f"{f.name}: piece fractions do not sum to 1")
        for kind, level in (("none", 0), ("gaussian", 0.1), ("uniform", 0.05)):
            x = make_points(f, n, kind, level, seed=1)
            if x.shape != (n, f.D):
                problems.append(f"{f.name} {kind}: shape {x.shape}")
            if not np.all(np.isfinite(x)):
                problems.append(f"{f.name} {kind}: non-finite values")
            if kind == "none" and abs(data_scale(x) - 1) > 1e-9:
                problems.append(f"{f.name}: scale {data_scale(x)} after scaling")
        y = make_points(f, n, "none", 0, seed=1)
        if not np.array_equal(y, make_points(f, n, "none", 0, seed=1)):
            problems.append(f"{f.name}: not deterministic")
        if np.array_equal(y, make_points(f, n, "none", 0, seed=2)):
            problems.append(f"{f.name}: seeds 1 and 2 give the same points")
    halves = {h: [f for f in FAMILIES if f.half == h] for h in ("tune", "heldout")}
    extra = [f for f in FAMILIES if f.half == "extra"]
    kinds = sorted({f.kind for f in FAMILIES})
    for h, fs in halves.items():
        if len(fs) < 15:
            problems.append(f"half {h} has {len(fs)} families (< 15)")
        missing = set(kinds) - {f.kind for f in fs}
        if missing:
            problems.append(f"half {h} lacks kinds {sorted(missing)}")
    return problems, halves


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--list", action="store_true", help="print name, d, D, half, kind and what each family is")
    p.add_argument("--check", action="store_true", help="self-check: shapes, finiteness, the halves")
    args = p.parse_args()
    if args.list or not args.check:
        print(f"{'name':24s} {'d':>6s} {'D':>4s}  {'half':8s} {'kind':11s} what")
        for f in FAMILIES:
            d = f"{f.d:.3f}" if f.fractal else f"{int(f.d)}"
            print(f"{f.name:24s} {d:>6s} {f.D:4d}  {f.half:8s} {f.kind:11s} {f.doc}")
        print(f"{len(FAMILIES)} families: " + ", ".join(
            f"{h} {sum(1 for f in FAMILIES if f.half == h)}" for h in ("tune", "heldout", "extra")))
    if args.check:
        problems, halves = check()
        for pr in problems:
            print("FAIL", pr)
        print(f"check: {len(FAMILIES)} families, tune {len(halves['tune'])}, heldout {len(halves['heldout'])}: "
              + ("ok" if not problems else f"{len(problems)} problem(s)"))
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
