"""qgml: quantum geometric machine learning on matrix configurations, from Python.

D Hermitian N x N matrices A_k learn points x in R^D through the ground state of
H(x) = 1/2 sum_k (A_k - x_k)^2; the quantum metric of the trained configuration gives the intrinsic
dimension of the data. Quick start::

    import numpy as np, qgml
    X = np.random.default_rng(0).normal(size=(2000, 3)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    print(qgml.QGMLDimension().fit(X).dimension_)        # 2: the sphere

- :class:`QGMLDimension`: the dimension estimate with scikit-dimension's estimator interface;
- :class:`QCMLRegressor`, :class:`QCMLClassifier`: supervised QCML (docs/supervised.md) as
  scikit-learn estimators; :func:`predict` and ``Run.predict`` for a supervised run's predictions;
- :func:`train` / :class:`Trainer`: the program's ``qgml train`` in process, with its settings by
  their YAML names (``{"training.epochs": 50}``), returning a :class:`Run` (also ``Run.open`` for a
  run directory written by the program);
- :func:`sample` / :class:`Samples`: the program's ``qgml sample`` (draws from exp(-beta E_0(x)) of a
  trained run, resumable, diagnostics, ``to_inference_data()`` for ArviZ);
- :class:`MatrixConfiguration`: matrices as a complex (D, N, N) array, in the program's NPY format;
- :func:`evaluate`, :func:`quantum_metric`, :func:`dimension` on points in NumPy arrays (float64 or
  float32, used in place when C-contiguous).

Kokkos is started on first use (:func:`initialize` chooses the thread count) and finalised at exit,
unless the process had already started it. Errors raise ValueError (bad argument or setting), OSError
(files), FloatingPointError (numerical failure) or RuntimeError, with the library's messages.
"""

from . import _qgml
from ._runtime import finalize, initialize
from .configuration import Dimension, Evaluation, MatrixConfiguration, Metric, dimension, evaluate, quantum_metric
from .estimator import QGMLDimension
from .sampling import Samples, resume_sample, sample
from .supervised import Prediction, QCMLClassifier, QCMLRegressor, predict
from .training import Run, Trainer, resume, train

__version__ = "0.1.0"


def version() -> str:
    """The library's version, git revision and Kokkos backend."""
    return _qgml.version()


__all__ = [
    "Dimension",
    "Evaluation",
    "MatrixConfiguration",
    "Metric",
    "Prediction",
    "QCMLClassifier",
    "QCMLRegressor",
    "QGMLDimension",
    "Run",
    "Samples",
    "Trainer",
    "dimension",
    "evaluate",
    "finalize",
    "initialize",
    "predict",
    "quantum_metric",
    "resume",
    "resume_sample",
    "sample",
    "train",
    "version",
]
