"""Matrix configurations and the analysis of points with them (docs/math.md 3, 5)."""

from __future__ import annotations

import os
from typing import Any, NamedTuple, Optional

import numpy as np

from . import _qgml
from ._runtime import PathLike, SettingsLike, as_points, ensure, make_settings


class Evaluation(NamedTuple):
    """Per point: the reconstruction xbar (T, D), sigma^2 (T) and E_0 (T); the loss (docs/math.md 3)."""

    xbar: np.ndarray
    sigma2: np.ndarray
    energy: np.ndarray
    loss: float


class Metric(NamedTuple):
    """The quantum metric g(x) (T, D, D) at each point (docs/math.md 5.1) and its eigenvalues (T, D), ascending."""

    metric: np.ndarray
    eigenvalues: np.ndarray


class Dimension(NamedTuple):
    """The intrinsic dimension by the program's rule: the mode over the points, the per-point
    estimates (T ints) and whether the program calls the estimate uncertain."""

    dimension: int
    per_point: np.ndarray
    uncertain: bool


class MatrixConfiguration:
    """D Hermitian N x N matrices A_k: the model of H(x) = 1/2 sum_k (A_k - x_k)^2 (docs/math.md 2.1).

    ``MatrixConfiguration(matrices)`` copies a complex array of shape (D, N, N) (complex128, or
    complex64 for a float configuration) and checks that every matrix is Hermitian.
    ``MatrixConfiguration.load(path)`` reads the program's NPY format (``final_matrices.npy`` of a run
    directory, ``model.load``); ``save`` writes it.
    """

    __slots__ = ("_model",)

    def __init__(self, matrices: Any):
        ensure()
        a = np.asarray(matrices)
        if a.ndim != 3:
            raise ValueError(f"qgml: matrices must have shape (D, N, N), got shape {a.shape}")
        if a.dtype not in (np.complex128, np.complex64):
            if a.dtype.kind not in "fiubc":
                raise TypeError(f"qgml: matrices must be complex numbers, got dtype {a.dtype}")
            a = a.astype(np.complex128)
        self._model = _qgml.Model.create(np.ascontiguousarray(a))

    @classmethod
    def _wrap(cls, model: "_qgml.Model") -> "MatrixConfiguration":
        self = cls.__new__(cls)
        self._model = model
        return self

    @classmethod
    def load(cls, path: PathLike) -> "MatrixConfiguration":
        """Reads an NPY file as the program writes it (complex64 or complex128, shape (D, N, N))."""
        ensure()
        return cls._wrap(_qgml.Model.load(os.fspath(path)))

    def save(self, path: PathLike, precision: str = "double") -> None:
        """Writes the program's NPY format: complex128 (``precision="double"``) or complex64 ("float")."""
        if precision not in ("double", "float"):
            raise ValueError(f"qgml: precision must be 'double' or 'float', got {precision!r}")
        self._model.save(os.fspath(path), precision == "float")

    @property
    def D(self) -> int:
        """The number of matrices (the dimension of the data space)."""
        return self._model.shape[0]

    @property
    def N(self) -> int:
        """The size of the matrices (the Hilbert-space dimension)."""
        return self._model.shape[1]

    @property
    def shape(self) -> tuple:
        """(D, N, N), the shape of ``matrices``."""
        d, n = self._model.shape
        return (d, n, n)

    def to_numpy(self, dtype: Any = np.complex128) -> np.ndarray:
        """A copy of the matrices: a complex128 (or complex64) array of shape (D, N, N)."""
        dtype = np.dtype(dtype)
        if dtype not in (np.complex128, np.complex64):
            raise ValueError(f"qgml: dtype must be complex128 or complex64, got {dtype}")
        out = np.empty(self.shape, dtype=dtype)
        self._model.matrices(out)
        return out

    @property
    def matrices(self) -> np.ndarray:
        """The matrices as a new complex128 array of shape (D, N, N)."""
        return self.to_numpy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.to_numpy() if dtype is None else self.to_numpy().astype(dtype)

    def __repr__(self) -> str:
        return f"MatrixConfiguration(D={self.D}, N={self.N})"

    def __reduce__(self):
        # Pickled as its matrices (complex128), so that fitted estimators pickle and copy.
        return (MatrixConfiguration, (self.to_numpy(),))

    def evaluate(self, X: Any, w: Optional[float] = None) -> Evaluation:
        """See :func:`qgml.evaluate`."""
        return evaluate(self, X, w)

    def quantum_metric(self, X: Any) -> Metric:
        """See :func:`qgml.quantum_metric`."""
        return quantum_metric(self, X)

    def dimension(self, X: Any, settings: SettingsLike = None) -> Dimension:
        """See :func:`qgml.dimension`."""
        return dimension(self, X, settings)


def _model_of(config: Any) -> "_qgml.Model":
    if isinstance(config, MatrixConfiguration):
        return config._model
    model = getattr(config, "model", None)  # a Run
    if isinstance(model, MatrixConfiguration):
        return model._model
    raise TypeError(f"qgml: expected a MatrixConfiguration or a Run, got {type(config).__name__}")


def evaluate(config: Any, X: Any, w: Optional[float] = None) -> Evaluation:
    """The ground state of H(x) at every point of X (T, D): the reconstruction xbar, the quantum
    fluctuation sigma^2, the energy E_0, and the loss mean(|x - xbar|^2 + w sigma^2) (docs/math.md 3).

    X is used in place (no copy) when it is a C-contiguous float64 or float32 array; the outputs have
    its dtype. ``w`` None (the default) is the default of the setting ``training.w``, as for ``qgml eval``.
    """
    if w is None:
        w = float(make_settings().get("training.w"))
    model = _model_of(config)
    x = as_points(X)
    t = x.shape[0]
    xbar = np.empty_like(x)
    sigma2 = np.empty(t, dtype=x.dtype)
    energy = np.empty(t, dtype=x.dtype)
    loss = _qgml.evaluate(model, x, float(w), xbar, sigma2, energy)
    return Evaluation(xbar, sigma2, energy, loss)


def quantum_metric(config: Any, X: Any) -> Metric:
    """The quantum metric g(x) (docs/math.md 5.1) at every point of X: (T, D, D), and its eigenvalues (T, D)."""
    model = _model_of(config)
    x = as_points(X)
    t, d = x.shape
    metric = np.empty((t, d, d), dtype=x.dtype)
    eigenvalues = np.empty((t, d), dtype=x.dtype)
    _qgml.quantum_metric(model, x, metric, eigenvalues)
    return Metric(metric, eigenvalues)


def dimension(config: Any, X: Any, settings: SettingsLike = None) -> Dimension:
    """The intrinsic dimension by the program's rule (the spectral gap of the metric, docs/dimension.md)
    at the points X, with the program's ``analysis.*`` settings (defaults, or those of ``settings``,
    e.g. ``{"analysis.metric": "covariance"}``)."""
    model = _model_of(config)
    x = as_points(X)
    s = make_settings(None, settings) if settings else None
    per_point = np.empty(x.shape[0], dtype=np.int32)
    d, uncertain = _qgml.dimension(model, s, x, per_point)
    return Dimension(int(d), per_point, bool(uncertain))
