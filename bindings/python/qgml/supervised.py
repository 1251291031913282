"""Supervised QCML with scikit-learn's estimator interface: QCMLRegressor and QCMLClassifier.

Both train as ``qgml train`` with ``task: regression`` or ``task: classification`` (docs/supervised.md):
feature matrices A_1..A_D encode a point x into the ground state psi_0(x) of
H(x) = 1/2 sum_k (A_k - x_k)^2 and learned target operators B_c read the predictions
y_hat_c = <psi_0|B_c|psi_0> (one per regression output; logits for classification: one for two classes,
one per class with the softmax loss, section 11). Predictions run the program's own code
(``qgml predict``) through the C interface, with the standardisation the run applied.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from typing import Any, NamedTuple, Optional

import numpy as np

from . import _qgml
from ._runtime import SettingsLike, as_points, ensure, parameter_settings
from .configuration import _model_of
from .training import Trainer

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as e:  # pragma: no cover - scikit-learn is a dependency of the estimators only
    _SKLEARN_ERROR: Optional[ImportError] = e
else:
    _SKLEARN_ERROR = None


class Prediction(NamedTuple):
    """What :func:`predict` returns: ``prediction`` the targets in their units (regression: (T,), or
    (T, C) for C outputs) or the predicted class (classification, (T,)); ``probability`` for
    classification P(positive class) (T,) for two classes with the logistic loss, P(class k) (T, K) for
    softmax, else None; ``output`` the model's outputs <psi_0|B_c|psi_0> ((T,), or (T, C)): the logits, or
    the standardised targets; ``failed`` the number of points whose eigensolve failed (their outputs are
    NaN)."""

    prediction: np.ndarray
    probability: Optional[np.ndarray]
    output: np.ndarray
    failed: int


def predict(model: Any, supervised: Any, X: Any) -> Prediction:
    """The predictions of a supervised model at the points X (T, D), in the training data's units.

    ``model``: the run's configuration (D + C matrices, A_1..A_D then the target operators B_1..B_C), a
    :class:`MatrixConfiguration` or a :class:`Run`; ``supervised``: the run's ``supervised.json`` as text
    or as a mapping (the standardisation, the number of outputs and, for classification, the classes).
    ``Run.predict`` reads both from the run directory.
    """
    text = supervised if isinstance(supervised, str) else json.dumps(supervised)
    fields = json.loads(text)
    classification = fields.get("task") == "classification"
    outputs = int(fields.get("outputs", 1))
    classes = len(fields.get("classes", ())) if classification else 0
    x = as_points(X)
    t = x.shape[0]

    def rows(columns: int) -> np.ndarray:
        return np.empty(t if columns == 1 else (t, columns), dtype=np.float64)

    prediction = rows(1 if classification else outputs)
    probability = rows(classes if outputs > 1 else 1) if classification else None
    output = rows(outputs)
    failed = _qgml.predict(_model_of(model), text, x, prediction, probability, output)
    if failed:
        warnings.warn(f"qgml: {failed} of {t} points have no prediction (their eigensolve failed): NaN",
                      RuntimeWarning, stacklevel=2)
    return Prediction(prediction, probability, output, int(failed))


def _require_sklearn() -> None:
    if _SKLEARN_ERROR is not None:
        raise ImportError("qgml: QCMLRegressor and QCMLClassifier need scikit-learn (pip install scikit-learn)") \
            from _SKLEARN_ERROR


# Parameter name -> setting name; a parameter left at None keeps the program's default (qgml --help).
_PARAMETERS = {
    "N": "model.N",
    "epochs": "training.epochs",
    "batch_size": "training.batch_size",
    "lr": "training.lr",
    "loss": "training.loss",
    "huber_delta": "training.huber_delta",
    "unsupervised_weight": "training.unsupervised_weight",
    "w": "training.w",
    "validation_fraction": "data.validation_fraction",
    "patience": "training.patience",
    "standardize": "data.standardize",
    "precision": "model.precision",
    "seed": "training.seed",
    "model_seed": "model.seed",
}

# The members of an ensemble where n_models is None: on the tuning half (perf/supervised_tuning.py --grid
# ensemble) 3 members raise the mean accuracy by 2.8 points and the mean R^2 by 0.03 over one model,
# 5 members by 3.4 points and 0.04 at 5/3 of the fit time (docs/supervised.md section 12).
default_n_models = 3

# What differs between the members of an ensemble (n_models).
_MEMBER_SEEDS = ("model.seed", "training.seed")

_Base = BaseEstimator if _SKLEARN_ERROR is None else object


class _QCMLEstimator(_Base):
    _task = ""
    _fitted_attribute = ""  # set by a completed fit

    def __init__(self, N: Any = None, epochs: Optional[int] = None, batch_size: Optional[int] = None,
                 lr: Optional[float] = None, loss: Optional[str] = None, huber_delta: Optional[float] = None,
                 unsupervised_weight: Optional[float] = None, w: Optional[float] = None,
                 validation_fraction: Optional[float] = None, patience: Any = None, standardize: Any = None,
                 precision: Optional[str] = None, seed: Optional[int] = None, model_seed: Optional[int] = None,
                 settings: SettingsLike = None, output_directory: Optional[str] = None, quiet: bool = True,
                 n_models: Optional[int] = None):
        self.N = N
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.loss = loss
        self.huber_delta = huber_delta
        self.unsupervised_weight = unsupervised_weight
        self.w = w
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.standardize = standardize
        self.precision = precision
        self.seed = seed
        self.model_seed = model_seed
        self.settings = settings
        self.output_directory = output_directory
        self.quiet = quiet
        self.n_models = n_models

    def _members(self) -> int:
        """M, the models of the ensemble (n_models; None: default_n_models)."""
        m = default_n_models if self.n_models is None else self.n_models
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"qgml: n_models = {self.n_models!r} (expected None or an integer >= 1)")
        return int(m)

    def _settings(self, directory: str, targets: int = 1, member: int = 0) -> dict:
        s = parameter_settings(self, _PARAMETERS)
        for key in _MEMBER_SEEDS:  # member m: the seeds of the initial matrices and the shuffles + m
            if member > 0:
                s[key] = int(s[key] if key in s else _qgml.Settings().get(key)) + member
        s["task"] = self._task
        if targets == 1:
            s["data.target_column"] = -1
        else:  # the last `targets` columns, in order
            s["data.target_columns"] = ",".join(str(j - targets) for j in range(targets))
        s["analysis.enabled"] = False
        s["output.directory"] = directory
        if self.output_directory is None:
            s["output.plots"] = False
        return s

    def _train(self, x: np.ndarray, y: np.ndarray, member: int = 0) -> tuple:
        """Trains ensemble member `member` on the rows [x, y] (y: (T,) or (T, C) targets): (model,
        supervised.json, history, run directory or None)."""
        ensure()
        rows = np.ascontiguousarray(np.column_stack([x, y]), dtype=np.float64)
        targets = 1 if y.ndim == 1 else y.shape[1]
        directory = self.output_directory or tempfile.mkdtemp(prefix=f"qgml-{self._task}-")
        try:
            run = Trainer(self._settings(directory, targets, member)).train(rows, quiet=self.quiet)
            with open(os.path.join(run.run_dir, "supervised.json")) as f:
                supervised = json.load(f)
            return (run.model, supervised, run.history_table(),
                    run.run_dir if self.output_directory is not None else None)
        finally:
            if self.output_directory is None:
                shutil.rmtree(directory, ignore_errors=True)

    def _validated(self, X: Any) -> np.ndarray:
        check_is_fitted(self, self._fitted_attribute)
        return validate_data(self, X, reset=False, dtype=[np.float64, np.float32], order="C")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


class QCMLRegressor(RegressorMixin, _QCMLEstimator):
    """Regression by quantum cognition machine learning: y_hat_c(x) = <psi_0(x)|B_c|psi_0(x)>.

    ``fit(X, y)`` trains as ``qgml train`` with ``task: regression`` on the rows [X, y]: the features
    z-scored, each target standardised, 20 % of the points held out for early stopping with patience
    (the program's defaults; docs/supervised.md). y of shape (T, C) trains C outputs, one target
    operator each, in one model (docs/supervised.md section 11). Every parameter left at None keeps the
    program's default; ``n_models`` (not a program setting) trains an ensemble of 3 such runs.

    Parameters
    ----------
    N, epochs, batch_size, lr, loss, huber_delta, unsupervised_weight, w, validation_fraction, patience,
    standardize, precision, seed, model_seed :
        the settings ``model.N``, ``training.epochs``, ``training.batch_size``, ``training.lr``,
        ``training.loss`` (mse, mae, huber), ``training.huber_delta``, ``training.unsupervised_weight``,
        ``training.w``, ``data.validation_fraction``, ``training.patience``, ``data.standardize``,
        ``model.precision``, ``training.seed``, ``model.seed``.
    settings : mapping, optional
        Any other setting by its name, e.g. ``{"training.schedule": "cosine"}``.
    output_directory : str, optional
        Where the run directories go; by default a temporary directory, removed after ``fit``.
    quiet : bool
        Print nothing (the default), or the program's progress lines.
    n_models : int, optional
        An ensemble of M models (None: 3; 1 is one run of the program): member m trains with
        ``model.seed`` and ``training.seed`` raised by m (member 0 is the single model's run), and the
        members' outputs are averaged (the targets for regression, the logits for classification;
        docs/supervised.md section 12).

    Attributes
    ----------
    model_ : MatrixConfiguration
        A_1..A_D and B_1..B_C (D + C matrices), in the standardised coordinates (the first member's).
    supervised_ : dict
        The run's supervised.json: the standardisation of the features and the targets.
    ensemble_ : list of (MatrixConfiguration, dict)
        Each member's model and supervised.json (one entry when n_models is 1).
    n_outputs_ : int
        C, the outputs (columns of y).
    history_ : dict of ndarray
        The run's history.csv by column (loss, train and validation metrics per epoch).
    n_epochs_ : int
    n_models_ : int
        M, the members of the ensemble.
    run_dir_ : str or None
        The run directory when ``output_directory`` is given (the first member's).
    n_features_in_ : int
    """

    _task = "regression"
    _fitted_attribute = "model_"

    def fit(self, X: Any, y: Any):
        """Trains on X (T, D) and the targets y (T,) or (T, C); returns self."""
        _require_sklearn()
        x, target = validate_data(self, X, y, dtype=np.float64, y_numeric=True, multi_output=True,
                                  ensure_min_samples=2)
        self._column_targets = target.ndim == 2
        y2 = target.reshape(len(target), -1)
        runs = [self._train(x, y2 if y2.shape[1] > 1 else y2[:, 0], m) for m in range(self._members())]
        self.model_, self.supervised_, self.history_, self.run_dir_ = runs[0]
        self.ensemble_ = [(r[0], r[1]) for r in runs]
        self.n_models_ = len(runs)
        self.n_outputs_ = y2.shape[1]
        self.n_epochs_ = len(self.history_.get("epoch", ()))
        return self

    def predict(self, X: Any) -> np.ndarray:
        """The predicted targets (T,), or (T, C) where y had columns, in their units; NaN where a point's
        eigensolve failed."""
        x = self._validated(X)
        p = np.mean([predict(m, s, x).prediction for m, s in self.ensemble_], axis=0)
        return p.reshape(len(p), -1) if self._column_targets else p

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class QCMLClassifier(ClassifierMixin, _QCMLEstimator):
    """Classification by quantum cognition machine learning: P(y = c | x) from the logits
    <psi_0(x)|B_c|psi_0(x)>.

    ``fit(X, y)`` trains as ``qgml train`` with ``task: classification``, on labels of any type (numbers
    or strings) in the order of ``classes_``. Two classes: one model with the logistic loss,
    P(classes_[1]) = sigmoid(y_hat). K > 2 classes, by ``multi_class``:

    - ``"softmax"``: one model with one target operator per class and the softmax cross-entropy,
      P(classes_[k]) = softmax(y_hat)_k (docs/supervised.md section 11; one run of the program);
    - ``"ovr"``: one-vs-rest, one binary model per class (K runs), P(classes_[k]) = sigmoid(y_hat_k)
      normalised over the classes;
    - None: ``"softmax"`` (the default; perf/results/supervised-sklearn-*.md compares the two).

    The predicted class is that of the largest logit (with n_models > 1, of the members' mean logits).
    Other parameters as :class:`QCMLRegressor`.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        The labels, sorted; ``predict_proba``'s columns follow them.
    multi_class_ : str
        What ran: ``"binary"`` (two classes), ``"softmax"`` or ``"ovr"``.
    models_ : list of MatrixConfiguration
        A_1..A_D and the target operators of each model (one model, except K for one-vs-rest), member by
        member: with n_models = M, M times as many, member m's at [m P, (m + 1) P).
    supervised_ : list of dict
        Each model's supervised.json (standardisation, classes).
    histories_ : list of dict of ndarray
        Each run's history.csv by column.
    n_epochs_ : list of int
    n_models_ : int
        M, the members of the ensemble.
    run_dirs_ : list of str or None
        The run directories when ``output_directory`` is given.
    n_features_in_ : int
    """

    _task = "classification"
    _fitted_attribute = "models_"

    def __init__(self, N: Any = None, epochs: Optional[int] = None, batch_size: Optional[int] = None,
                 lr: Optional[float] = None, loss: Optional[str] = None, huber_delta: Optional[float] = None,
                 unsupervised_weight: Optional[float] = None, w: Optional[float] = None,
                 validation_fraction: Optional[float] = None, patience: Any = None, standardize: Any = None,
                 precision: Optional[str] = None, seed: Optional[int] = None, model_seed: Optional[int] = None,
                 settings: SettingsLike = None, output_directory: Optional[str] = None, quiet: bool = True,
                 multi_class: Optional[str] = None, n_models: Optional[int] = None):
        super().__init__(N=N, epochs=epochs, batch_size=batch_size, lr=lr, loss=loss, huber_delta=huber_delta,
                         unsupervised_weight=unsupervised_weight, w=w, validation_fraction=validation_fraction,
                         patience=patience, standardize=standardize, precision=precision, seed=seed,
                         model_seed=model_seed, settings=settings, output_directory=output_directory, quiet=quiet,
                         n_models=n_models)
        self.multi_class = multi_class

    def fit(self, X: Any, y: Any):
        """Trains on X (T, D) and the labels y (T,); returns self."""
        _require_sklearn()
        if self.multi_class not in (None, "softmax", "ovr"):
            raise ValueError(f"qgml: multi_class = {self.multi_class!r} (expected None, 'softmax' or 'ovr')")
        x, labels = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(labels)
        classes, codes = np.unique(labels, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(f"qgml: QCMLClassifier needs samples of at least 2 classes in the data, got 1 class "
                             f"({classes[0]!r})")
        strategy = "binary" if len(classes) == 2 else (self.multi_class or "softmax")
        if strategy == "ovr":
            problems = [(codes == k).astype(np.int64) for k in range(len(classes))]
        else:
            problems = [codes]
        members = self._members()
        runs = [self._train(x, target.astype(np.float64), m) for m in range(members) for target in problems]
        self.classes_ = classes
        self.multi_class_ = strategy
        self.models_ = [r[0] for r in runs]
        self.supervised_ = [r[1] for r in runs]
        self.histories_ = [r[2] for r in runs]
        self.run_dirs_ = [r[3] for r in runs]
        self.n_epochs_ = [len(h.get("epoch", ())) for h in self.histories_]
        self.n_models_ = members
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """The logits y_hat = <psi_0|B_c|psi_0>: (T,) of P(classes_[1]) for two classes, (T, K) for K > 2
        (softmax's logits, or each class against the others)."""
        x = self._validated(X)
        z = np.column_stack([predict(m, s, x).output for m, s in zip(self.models_, self.supervised_)])
        members = getattr(self, "n_models_", 1)
        z = z.reshape(len(x), members, -1).mean(axis=1) if members > 1 else z
        return z[:, 0] if z.shape[1] == 1 else z

    def predict_proba(self, X: Any) -> np.ndarray:
        """(T, K): P(classes_[k]) per point; each row sums to 1."""
        z = self.decision_function(X)
        if z.ndim == 1:
            p = _sigmoid(z)
            return np.column_stack([1 - p, p])
        if self.multi_class_ == "softmax":
            e = np.exp(z - np.max(z, axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        p = _sigmoid(z)
        total = p.sum(axis=1, keepdims=True)
        # All K sigmoids underflow only for points far outside every class: then equal probabilities.
        return np.where(total > 0, p / np.where(total > 0, total, 1), 1.0 / p.shape[1])

    def predict(self, X: Any) -> np.ndarray:
        """The predicted labels (T,), from ``classes_``."""
        z = self.decision_function(X)
        index = (z > 0).astype(np.int64) if z.ndim == 1 else np.argmax(z, axis=1)
        return self.classes_[index]


def _sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-z) without overflow (train/supervised_loss.hpp)."""
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1 / (1 + e), e / (1 + e))
