"""Training: the program's ``qgml train`` in process, and the run directories it writes."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping
from typing import Any, Callable, Dict, Optional, Union

import numpy as np

from . import _qgml
from ._runtime import PathLike, SettingsLike, as_points, ensure, flatten_settings, make_settings
from .configuration import Dimension, MatrixConfiguration, dimension

StopCallback = Optional[Callable[[], bool]]


class Run:
    """A run directory written by ``qgml train``, :func:`qgml.train` or :meth:`Trainer.train`.

    ``Run.open(path)`` opens one written by the program. Attributes: ``run_dir`` (its path),
    ``history`` (per epoch: ``loss``, ``reconstruction``, ``fluctuation`` as float64 arrays),
    ``model`` (the final configuration, or the last checkpointed one of an interrupted run),
    ``dimension`` and ``dimension_uncertain`` (the analysis' estimate, None without one),
    ``dimension_error`` and ``dimension_interval`` (its error bar, docs/dimension.md "Error bars"),
    ``per_point_dimension`` (the analysis' per-point estimates) and ``interrupted`` (True when a stop
    callback ended training early; :meth:`resume` continues it).
    """

    def __init__(self, handle: "_qgml.Run", interrupted: bool = False):
        self._run = handle
        self.interrupted = bool(interrupted)
        self._model: Optional[MatrixConfiguration] = None

    @classmethod
    def open(cls, run_dir: PathLike) -> "Run":
        """Opens a run directory written by ``qgml train`` or by this package."""
        ensure()
        return cls(_qgml.Run.open(os.fspath(run_dir)))

    @property
    def run_dir(self) -> str:
        return self._run.directory

    @property
    def history(self) -> Dict[str, np.ndarray]:
        loss, reconstruction, fluctuation = self._run.history()
        return {"loss": loss, "reconstruction": reconstruction, "fluctuation": fluctuation}

    def history_table(self) -> Dict[str, np.ndarray]:
        """Every column of the run's history.csv (epoch, total, ..., seconds) as arrays."""
        with open(os.path.join(self.run_dir, "history.csv"), newline="") as f:
            rows = list(csv.reader(f))
        header, body = rows[0], rows[1:]
        return {name: np.array([float(r[i]) for r in body]) for i, name in enumerate(header)}

    @property
    def model(self) -> MatrixConfiguration:
        if self._model is None:
            self._model = MatrixConfiguration._wrap(self._run.model())
        return self._model

    def _dimension(self):
        try:
            return self._run.dimension()
        except OSError:
            return None, None

    @property
    def dimension(self) -> Optional[int]:
        """The mode of the per-point dimension estimates (analysis.enabled), or None without analysis."""
        return self._dimension()[0]

    @property
    def dimension_uncertain(self) -> Optional[bool]:
        return self._dimension()[1]

    @property
    def dimension_error(self) -> Optional[float]:
        """The standard deviation of the estimate over bootstrap resamples of the points with
        neighbouring gap rules (docs/dimension.md, "Error bars"); None without analysis."""
        return self._error_bar()[0]

    @property
    def dimension_interval(self) -> Optional[tuple]:
        """The 90 % interval (low, high) of the resampled estimates; None without analysis."""
        return self._error_bar()[1]

    def _error_bar(self):
        try:
            s = self.summary
        except OSError:
            return None, None
        if "error" not in s or "interval" not in s:
            return None, None
        return float(s["error"]), (int(s["interval"][0]), int(s["interval"][1]))

    @property
    def dimension_per_scale(self) -> Optional[Dict[int, int]]:
        """The dimension per scale (docs/dimension.md, "The dimension per scale"): for each neighbour count
        k of ``analysis.spread_scales``, the mode of the per-point estimates with the spreads and the local
        covariance of the k nearest points; None without it."""
        try:
            s = self.summary
        except OSError:
            return None
        if "scales" not in s:
            return None
        return {int(x["neighbours"]): int(x["mode"]) for x in s["scales"] if int(x["mode"]) >= 0}

    @property
    def scale_verdict(self) -> Optional[str]:
        """One sentence on the dimension per scale ("the same at every scale: ..." or
        "scale-dependent: ..."); None without it."""
        try:
            s = self.summary
        except OSError:
            return None
        return s.get("scale_verdict")

    @property
    def summary(self) -> dict:
        """The run's dimension_summary.json (histogram, verdict, N, w, epochs, ...)."""
        with open(os.path.join(self.run_dir, "dimension_summary.json")) as f:
            return json.load(f)

    @property
    def per_point_dimension(self) -> np.ndarray:
        """The analysis' per-point dimension estimates (the ``dimension`` column of per_point.csv), in the
        order of the training points; -1 where a point's estimate failed."""
        path = os.path.join(self.run_dir, "per_point.csv")
        with open(path) as f:
            header = f.readline().strip().split(",")
        column = header.index("dimension")
        values = np.genfromtxt(path, delimiter=",", skip_header=1, usecols=column, dtype=np.float64, ndmin=1)
        return np.where(np.isfinite(values), values, -1).astype(np.int64)

    def dimension_at(self, X: Any, settings: SettingsLike = None) -> Dimension:
        """The dimension estimate of this run's model at other points (see :func:`qgml.dimension`)."""
        return dimension(self.model, X, settings)

    @property
    def supervised(self) -> dict:
        """The run's supervised.json (regression and classification runs): the task, the standardisation
        of the features and the target, the two classes."""
        with open(os.path.join(self.run_dir, "supervised.json")) as f:
            return json.load(f)

    def predict(self, X: Any):
        """The predictions of this supervised run at the points X (T, D), in the training data's units, as
        ``qgml predict`` gives them: a :class:`qgml.Prediction` (``prediction``: the target, or the
        class; ``probability``: P(positive class) for classification; ``output``: <psi_0|B|psi_0>)."""
        from .supervised import predict

        return predict(self.model, self.supervised, X)

    def resume(self, X: Any = None, quiet: bool = True, stop: StopCallback = None) -> "Run":
        """Continues this run directory (as ``qgml train --resume``); X: the points it trained on, when
        they were given in memory."""
        return resume(self.run_dir, X, quiet=quiet, stop=stop)

    def __repr__(self) -> str:
        state = ", interrupted" if self.interrupted else ""
        return f"Run({self.run_dir!r}{state})"


def _train_call(fn, first, X, quiet, stop):
    if X is None:
        handle, interrupted = fn(first, bool(quiet), stop)
    else:
        handle, interrupted = fn(first, as_points(X), bool(quiet), stop)
    return Run(handle, interrupted)


class Trainer:
    """The program's ``qgml train`` with its settings: ``Trainer(settings)`` where settings is a YAML
    config file (as ``qgml train FILE.yaml`` reads it) or a mapping of setting names to values.

    Setting names are the YAML keys of ``qgml --help``, with their section: ``"training.epochs"``,
    ``"model.N"``, ... A mapping may also be nested as the YAML file is: ``{"training": {"epochs": 50}}``.
    ``overrides`` apply after the file. Values are validated at once, as the program validates them
    (strict numbers, ranges, choices); an unknown name or bad value raises ValueError naming the key.
    """

    def __init__(self, settings: Union[PathLike, SettingsLike] = None, overrides: SettingsLike = None):
        if isinstance(settings, (str, os.PathLike)):
            self._settings = make_settings(settings, overrides)
        else:
            self._settings = make_settings(None, settings)
            for key, value in flatten_settings(overrides):
                self._settings.set(key, value)

    def set(self, key: str, value: Any) -> "Trainer":
        """Sets one setting (``trainer.set("training.epochs", 50)``); returns the trainer."""
        for k, v in flatten_settings({key: value}):
            self._settings.set(k, v)
        return self

    def get(self, key: str) -> str:
        """A setting's resolved value (its default where unset), as text."""
        return self._settings.get(key)

    def train(self, X: Any = None, quiet: bool = True, stop: StopCallback = None) -> Run:
        """Trains as ``qgml train`` and returns the :class:`Run` (its directory under
        ``output.directory``).

        X: the points (T, D), float64 or float32 (used in place when C-contiguous), or None for the
        data of the settings (``data.file`` or ``data.generator``). The GIL is released while training.
        ``stop``: a callable polled between batches; a true result stops training after the batch
        (the Run is then ``interrupted`` and resumes). Ctrl-C stops training the same way and raises
        KeyboardInterrupt, whose ``run_dir`` attribute names the run directory to resume.
        """
        return _train_call(_qgml.train, self._settings, X, quiet, stop)


def train(X: Any = None, settings: Union[PathLike, SettingsLike] = None, *, quiet: bool = True,
          stop: StopCallback = None, **overrides: Any) -> Run:
    """``Trainer(settings).train(X)``: trains as ``qgml train`` and returns the :class:`Run`.

    ``settings``: a YAML config file or a mapping of setting names (``"training.epochs"``) to values.
    Keyword arguments are a shorthand for the same names with ``__`` for the dot:
    ``qgml.train(X, training__epochs=50, model__N=4)``.
    """
    extra = {key.replace("__", "."): value for key, value in overrides.items()}
    if isinstance(settings, (str, os.PathLike)):
        trainer = Trainer(settings, extra)
    else:
        merged = dict(flatten_settings(settings)) if settings is not None else {}
        merged.update(dict(flatten_settings(extra)))
        trainer = Trainer(merged)
    return trainer.train(X, quiet=quiet, stop=stop)


def resume(run_dir: PathLike, X: Any = None, *, quiet: bool = True, stop: StopCallback = None) -> Run:
    """Continues a run directory (as ``qgml train --resume RUN_DIR``), from its last checkpoint. X: the
    points it trained on when they were given in memory (their fingerprint is checked)."""
    ensure()
    return _train_call(_qgml.resume, os.fspath(run_dir), X, quiet, stop)
