"""QGMLDimension: the intrinsic-dimension estimate of qgml with scikit-dimension's estimator interface."""

from __future__ import annotations

import shutil
import tempfile
from typing import Any, Optional

import numpy as np

from ._runtime import SettingsLike, as_points, parameter_settings
from .training import Trainer

try:  # scikit-learn's BaseEstimator (get_params/set_params, clone, repr) when it is installed
    from sklearn.base import BaseEstimator as _Base
except ImportError:  # pragma: no cover - exercised only without scikit-learn
    _Base = None

# Parameter name -> setting name. A parameter left at None keeps the program's default.
_PARAMETERS = {
    "N": "model.N",
    "w": "training.w",
    "epochs": "training.epochs",
    "batch_size": "training.batch_size",
    "lr": "training.lr",
    "standardize": "data.standardize",
    "metric": "analysis.metric",
    "precision": "model.precision",
    "seed": "training.seed",
    "model_seed": "model.seed",
}


class _ParamsMixin:
    """get_params/set_params as scikit-learn defines them, for when scikit-learn is absent."""

    def get_params(self, deep: bool = True) -> dict:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any):
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"Invalid parameter {name!r} for estimator {type(self).__name__}. "
                                 f"Valid parameters are: {sorted(valid)!r}.")
            setattr(self, name, value)
        return self

    @classmethod
    def _param_names(cls) -> list:
        import inspect

        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


_bases = (_Base,) if _Base is not None else (_ParamsMixin,)


class QGMLDimension(*_bases):
    """Intrinsic dimension by quantum geometric machine learning, as scikit-dimension's estimators.

    ``QGMLDimension().fit(X).dimension_`` trains a matrix configuration on the points X (T, D) as
    ``qgml train`` does and estimates the dimension from the spectral gap of the quantum metric at
    every point (docs/dimension.md). Every parameter left at None keeps the program's default (``qgml
    --help``): N chosen from D, standardisation when the data are not centred at unit scale, 2000
    epochs at most with early stopping, and so on.

    Parameters
    ----------
    N, w, epochs, batch_size, lr, standardize, metric, precision, seed, model_seed :
        the settings ``model.N``, ``training.w``, ``training.epochs``, ``training.batch_size``,
        ``training.lr``, ``data.standardize``, ``analysis.metric``, ``model.precision``,
        ``training.seed``, ``model.seed``.
    settings : mapping, optional
        Any other setting by its name, e.g. ``{"training.schedule": "cosine"}``.
    output_directory : str, optional
        Where the run directory goes (``output.directory``); by default a temporary directory,
        removed after ``fit``.
    quiet : bool
        Print nothing (the default), or the program's progress lines.

    Attributes
    ----------
    dimension_ : int
        The estimated intrinsic dimension: the mode of the per-point estimates.
    dimension_pw_ : ndarray of int, shape (T,)
        The per-point estimates (-1 where a point's estimate failed).
    uncertain_ : bool
        Whether the program calls the estimate uncertain.
    dimension_error_ : float
        The error bar of ``dimension_``: the standard deviation of the mode over 200 bootstrap
        resamples of the points with neighbouring gap rules (docs/dimension.md, "Error bars").
    dimension_interval_ : tuple of int
        The 90 % interval (low, high) of those resampled modes.
    dimension_per_scale_ : dict of int to int or None
        The dimension per scale: for each neighbour count k of ``analysis.spread_scales`` (default 10,
        20, 50, 100, 200, 400), the estimate with the spreads and the local covariance of the k nearest
        points (docs/dimension.md, "The dimension per scale").
    scale_verdict_ : str or None
        "the same at every scale: ..." or "scale-dependent: d = 1 at k = 10 .. 20 (...), d = 2 at ..."
    model_ : MatrixConfiguration
        The trained configuration (in the coordinates of the standardised data when the data were
        standardised).
    run_dir_ : str or None
        The run directory when ``output_directory`` is given, else None.
    n_features_in_ : int
    """

    def __init__(self, N: Any = None, w: Optional[float] = None, epochs: Optional[int] = None,
                 batch_size: Optional[int] = None, lr: Optional[float] = None, standardize: Any = None,
                 metric: Optional[str] = None, precision: Optional[str] = None, seed: Optional[int] = None,
                 model_seed: Optional[int] = None, settings: SettingsLike = None,
                 output_directory: Optional[str] = None, quiet: bool = True):
        self.N = N
        self.w = w
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.standardize = standardize
        self.metric = metric
        self.precision = precision
        self.seed = seed
        self.model_seed = model_seed
        self.settings = settings
        self.output_directory = output_directory
        self.quiet = quiet

    def _settings(self, directory: str) -> dict:
        s = parameter_settings(self, _PARAMETERS)
        s["analysis.enabled"] = True
        s["output.directory"] = directory
        if self.output_directory is None:
            s["output.plots"] = False
        return s

    def fit(self, X: Any, y: Any = None):
        """Trains on X (T, D) and estimates its intrinsic dimension; returns self."""
        x = self._points(X, reset=True)
        if hasattr(self, "dimension_pw_smooth_"):
            del self.dimension_pw_smooth_
        directory = self.output_directory or tempfile.mkdtemp(prefix="qgml-dimension-")
        try:
            run = Trainer(self._settings(directory)).train(x, quiet=self.quiet)
            dimension, uncertain = run.dimension, run.dimension_uncertain
            if dimension is None:
                raise RuntimeError(f"qgml: the run {run.run_dir} has no dimension estimate")
            self.dimension_ = int(dimension)
            self.uncertain_ = bool(uncertain)
            self.dimension_error_, self.dimension_interval_ = run.dimension_error, run.dimension_interval
            self.dimension_per_scale_, self.scale_verdict_ = run.dimension_per_scale, run.scale_verdict
            self.dimension_pw_ = run.per_point_dimension
            self.model_ = run.model
            self.run_dir_ = run.run_dir if self.output_directory is not None else None
        finally:
            if self.output_directory is None:
                shutil.rmtree(directory, ignore_errors=True)
        self.n_features_in_ = x.shape[1]
        self.is_fitted_ = True
        return self

    def __sklearn_tags__(self):
        # transform() returns the dimension (a number), as scikit-dimension's estimators do: a transformer
        # by scikit-learn's duck typing, though not one that maps X to an array.
        from sklearn.utils import TransformerTags

        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags(preserves_dtype=[])
        tags.requires_fit = True
        return tags

    def _points(self, X: Any, reset: bool) -> np.ndarray:
        """X checked as scikit-learn checks it (2-d, finite, real, dense, at least 2 points; on reset the
        number of features recorded, else compared), float64 or float32 kept; without scikit-learn, the
        same rules by hand."""
        if _Base is not None:
            from sklearn.utils.validation import validate_data

            x = validate_data(self, X, reset=reset, dtype=[np.float64, np.float32], order="C",
                              ensure_min_samples=2 if reset else 1)
            return as_points(x)
        x = as_points(X)
        if reset and x.shape[0] < 2:
            raise ValueError(f"qgml: QGMLDimension needs at least 2 samples, got {x.shape[0]}")
        if not np.all(np.isfinite(x)):
            raise ValueError("qgml: X contains NaN or infinity")
        if reset:
            self.n_features_in_ = x.shape[1]
        elif x.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {x.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input.")
        return x

    def _check_fitted(self) -> None:
        if not getattr(self, "is_fitted_", False):
            try:
                from sklearn.exceptions import NotFittedError
            except ImportError:  # pragma: no cover
                NotFittedError = AttributeError
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call 'fit' first.")

    def transform(self, X: Any = None) -> int:
        """The estimated dimension of the last fit (X is ignored but checked, as in scikit-dimension)."""
        self._check_fitted()
        if X is not None:
            self._points(X, reset=False)
        return self.dimension_

    def fit_transform(self, X: Any, y: Any = None) -> int:
        """``fit(X).dimension_``."""
        return self.fit(X).dimension_

    def fit_pw(self, X: Any, precomputed_knn: Any = None, smooth: bool = False, n_neighbors: int = 100,
               n_jobs: int = 1):
        """Per-point estimates (``dimension_pw_``): qgml's are per point by construction, so this is
        ``fit(X)``; with ``smooth``, ``dimension_pw_smooth_`` averages each point's estimate with those
        of its ``n_neighbors`` nearest neighbours (or ``precomputed_knn``), as scikit-dimension does."""
        self.fit(X)
        if smooth:
            x = np.asarray(X, dtype=np.float64)
            if precomputed_knn is None:
                from sklearn.neighbors import NearestNeighbors

                k = min(n_neighbors, len(x) - 1)
                precomputed_knn = NearestNeighbors(n_neighbors=k, n_jobs=n_jobs).fit(x).kneighbors(
                    return_distance=False)
            pw = self.dimension_pw_.astype(np.float64)
            self.dimension_pw_smooth_ = np.array(
                [np.mean(np.append(pw[i], pw[nn])) for i, nn in enumerate(precomputed_knn)])
        return self

    def transform_pw(self, X: Any = None):
        """``dimension_pw_`` (and ``dimension_pw_smooth_`` when fit_pw computed it)."""
        self._check_fitted()
        if hasattr(self, "dimension_pw_smooth_"):
            return self.dimension_pw_, self.dimension_pw_smooth_
        return self.dimension_pw_

    def fit_transform_pw(self, X: Any, precomputed_knn: Any = None, smooth: bool = False,
                         n_neighbors: int = 100, n_jobs: int = 1):
        """``fit_pw(X, ...)`` then ``transform_pw()``."""
        return self.fit_pw(X, precomputed_knn, smooth, n_neighbors, n_jobs).transform_pw()
