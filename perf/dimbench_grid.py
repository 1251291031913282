"""The benchmark set of perf/dimension_benchmark.py: the manifolds (MANIFOLDS), the methods compared and
the default and --quick grids of noise levels, numbers of points and seeds."""

# The benchmark set. Edit freely: name (used by --only and in the tables), qgml generator, true intrinsic
# dimension d, ambient dimension D, and extra `qgml generate` options (without the leading "--").
MANIFOLDS = [
    # name           generator     d   D   extra options
    ("circle",       "circle",     1,  2,  {}),                                                  # S^1 in R^2
    ("sphere2",      "sphere",     2,  3,  {"data.dimension": 3}),                               # S^2 in R^3
    ("sphere4",      "sphere",     4,  5,  {"data.dimension": 5}),                               # S^4 in R^5
    ("sphere10",     "sphere10",   10, 11, {}),                                                  # S^10 in R^11
    ("affine",       "affine",     3,  5,  {}),                                                  # 3-space in R^5
    ("helix",        "helix",      1,  3,  {}),                                                  # closed curve in R^3
    ("swiss_roll",   "swiss_roll", 2,  3,  {}),                                                  # R^3
    ("hypercube3",   "hypercube",  3,  5,  {"data.intrinsic_dimension": 3, "data.dimension": 5}),  # solid 3-cube in R^5
    ("mobius",       "mobius",     2,  3,  {}),                                                  # R^3
    ("curve13",      "curve13",    1,  13, {}),                                                  # closed curve in R^13
]

ALL_METHODS = ["qgml", "TwoNN", "MLE", "lPCA", "DANCo", "ESS"]
SKDIM_METHODS = ALL_METHODS[1:]
DEFAULTS = dict(noise=[0.0, 0.05, 0.1], points=[1000, 2000], seeds=[1])
QUICK = dict(noise=[0.0, 0.1], points=[1000])
