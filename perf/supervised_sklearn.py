#!/usr/bin/env python3
"""Supervised QCML (qgml.QCMLRegressor, qgml.QCMLClassifier) against scikit-learn's models on scikit-learn's
bundled data sets, on the same splits, by the same grid-search protocol.

usage: perf/supervised_sklearn.py [--datasets NAME ...] [--models NAME ...] [--seeds 0 1 2] [--out FILE.jsonl]
                                  [--quick]

Data sets (shipped inside scikit-learn; nothing is downloaded):
  diabetes       regression, 442 x 10
  linnerud       regression with 3 targets, 20 x 3 (QCML: one model with 3 target operators; "qgml per target":
                 one QCMLRegressor per target, MultiOutputRegressor)
  breast_cancer  2 classes, 569 x 30
  iris           3 classes, 150 x 4
  wine           3 classes, 178 x 13
  digits         10 classes, 1797 x 64

Protocol, per data set and seed: one 75/25 train/test split (stratified for classification; linnerud 15/5),
every model a Pipeline(StandardScaler, model) tuned by 5-fold GridSearchCV on the training split (accuracy
or R^2; linnerud 3-fold), refit on the whole training split, scored on the test split. Models:
  qgml default   QCMLRegressor() / QCMLClassifier(): every setting the program's default, no search
                 (more than two classes: softmax over one target operator per class), an ensemble of
                 n_models = 3 runs (the estimators' default);
  qgml single    the same with n_models=1: one run of the program;
  qgml ovr       more than two classes: QCMLClassifier(multi_class="ovr"), K one-versus-rest models;
  qgml tuned     the default estimator, grid N in {8, 16, 32} (linnerud {4, 8});
  scikit-learn   Ridge / LogisticRegression (C or alpha), SVR / SVC with RBF (C, gamma), RandomForest
                 (max_features, min_samples_leaf), HistGradientBoosting (learning_rate, max_leaf_nodes),
                 MLP (alpha, hidden_layer_sizes).
Fit time: the wall time of the whole grid search with its refit (the default: of its one fit). Threads:
qgml with OMP_NUM_THREADS (default 2), scikit-learn with n_jobs=1 and OPENBLAS_NUM_THREADS=1.

Writes JSON lines (--out, default perf/results/supervised-sklearn-<UTC date>.jsonl): one per (data set, seed,
model) with the score, fit time, best parameters, versions, git revision and host; prints a Markdown table
(medians over the seeds) and writes it beside the JSON lines (.md).
"""
import argparse
import datetime
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OMP_PROC_BIND", "false")

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn import datasets  # noqa: E402
from sklearn.ensemble import (HistGradientBoostingClassifier, HistGradientBoostingRegressor,  # noqa: E402
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression, Ridge  # noqa: E402
from sklearn.model_selection import GridSearchCV, train_test_split  # noqa: E402
from sklearn.multioutput import MultiOutputRegressor  # noqa: E402
from sklearn.neural_network import MLPClassifier, MLPRegressor  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC, SVR  # noqa: E402

import qgml  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

DATASETS = {
    "diabetes": ("regression", datasets.load_diabetes),
    "linnerud": ("multioutput", datasets.load_linnerud),
    "breast_cancer": ("classification", datasets.load_breast_cancer),
    "iris": ("classification", datasets.load_iris),
    "wine": ("classification", datasets.load_wine),
    "digits": ("classification", datasets.load_digits),
}


def models(kind, quick, classes=2):
    """name -> (estimator, grid of its step 'm'); an empty grid: one fit, no search."""
    n_grid = [4, 8] if kind == "multioutput" else [8, 16, 32]
    if quick:
        n_grid = n_grid[:2]
    if kind == "classification":
        ovr = {"qgml ovr": (qgml.QCMLClassifier(multi_class="ovr"), {})} if classes > 2 else {}
        return {
            "qgml default": (qgml.QCMLClassifier(), {}),
            "qgml single": (qgml.QCMLClassifier(n_models=1), {}),
            **ovr,
            "qgml tuned": (qgml.QCMLClassifier(), {"m__N": n_grid}),
            "logistic": (LogisticRegression(max_iter=5000), {"m__C": [0.01, 0.1, 1, 10, 100]}),
            "svm rbf": (SVC(), {"m__C": [0.1, 1, 10, 100], "m__gamma": ["scale", 0.01, 0.1]}),
            "random forest": (RandomForestClassifier(n_estimators=200, random_state=0),
                              {"m__max_features": ["sqrt", 0.5], "m__min_samples_leaf": [1, 3]}),
            "gradient boosting": (HistGradientBoostingClassifier(random_state=0),
                                  {"m__learning_rate": [0.05, 0.2], "m__max_leaf_nodes": [15, 31]}),
            "mlp": (MLPClassifier(max_iter=2000, random_state=0),
                    {"m__alpha": [1e-4, 1e-2, 1], "m__hidden_layer_sizes": [(64,), (128, 64)]}),
        }
    single = kind == "regression"

    def wrap(est):
        return est if single else MultiOutputRegressor(est)

    def key(name):
        return f"m__{name}" if single else f"m__estimator__{name}"

    per_target = {} if single else {"qgml per target": (wrap(qgml.QCMLRegressor()), {})}
    return {
        "qgml default": (qgml.QCMLRegressor(), {}),
        "qgml single": (qgml.QCMLRegressor(n_models=1), {}),
        **per_target,
        "qgml tuned": (qgml.QCMLRegressor(), {"m__N": n_grid}),
        "ridge": (Ridge(), {"m__alpha": [0.01, 0.1, 1, 10, 100]}),
        "svm rbf": (wrap(SVR()), {key("C"): [0.1, 1, 10, 100], key("gamma"): ["scale", 0.01, 0.1]}),
        "random forest": (RandomForestRegressor(n_estimators=200, random_state=0),
                          {"m__max_features": [1.0, 0.5], "m__min_samples_leaf": [1, 3]}),
        "gradient boosting": (wrap(HistGradientBoostingRegressor(random_state=0)),
                              {key("learning_rate"): [0.05, 0.2], key("max_leaf_nodes"): [15, 31]}),
        "mlp": (MLPRegressor(max_iter=5000, random_state=0),
                {"m__alpha": [1e-4, 1e-2, 1], "m__hidden_layer_sizes": [(64,), (128, 64)]}),
    }


def git_revision():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_one(name, kind, loader, seed, quick, out, only=None):
    x, y = loader(return_X_y=True)
    x = np.asarray(x, dtype=np.float64)
    stratify = y if kind == "classification" else None
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=seed, stratify=stratify)
    folds = 3 if kind == "multioutput" else 5
    scoring = "accuracy" if kind == "classification" else "r2"
    classes = len(np.unique(y)) if kind == "classification" else 0
    for model_name, (estimator, grid) in models(kind, quick, classes).items():
        if only and model_name not in only:
            continue
        pipe = Pipeline([("scale", StandardScaler()), ("m", estimator)])
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            if grid:
                search = GridSearchCV(pipe, grid, cv=folds, scoring=scoring, n_jobs=1).fit(xtr, ytr)
                fitted, best = search.best_estimator_, search.best_params_
            else:
                fitted, best = pipe.fit(xtr, ytr), {}
        fit_s = time.perf_counter() - t0
        score = float(fitted.score(xte, yte))
        record = {
            "suite": "supervised_sklearn", "dataset": name, "kind": kind, "seed": seed, "model": model_name,
            "metric": "accuracy" if kind == "classification" else "r2", "score": score, "fit_s": fit_s,
            "grid_points": int(np.prod([len(v) for v in grid.values()])) if grid else 1, "folds": folds if grid else 0,
            "best_params": {k: (list(v) if isinstance(v, tuple) else v) for k, v in best.items()},
            "train_points": len(xtr), "test_points": len(xte), "features": x.shape[1],
            "qgml_version": qgml.version(), "sklearn": sklearn.__version__, "numpy": np.__version__,
            "git_revision": git_revision(), "host": socket.gethostname(), "python": platform.python_version(),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"), "loadavg": os.getloadavg(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }
        out.write(json.dumps(record) + "\n")
        out.flush()
        print(f"{name:14s} seed {seed} {model_name:18s} {record['metric']} {score:.4f}  fit {fit_s:8.2f} s  {best}",
              file=sys.stderr, flush=True)


def table(path):
    rows = [json.loads(line) for line in open(path)]
    lines = ["| data set | model | median score | scores | median fit time (s) |", "|---|---|---|---|---|"]
    for name in DATASETS:
        mine = [r for r in rows if r["dataset"] == name]
        if not mine:
            continue
        metric = mine[0]["metric"]
        for model in dict.fromkeys(r["model"] for r in mine):
            rs = [r for r in mine if r["model"] == model]
            scores = [r["score"] for r in rs]
            lines.append(f"| {name} ({metric}) | {model} | {statistics.median(scores):.4f} | "
                         f"{' '.join(f'{s:.4f}' for s in scores)} | {statistics.median(r['fit_s'] for r in rs):.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--quick", action="store_true", help="smaller qgml grid")
    p.add_argument("--models", nargs="+", help="only these models (e.g. 'qgml default' 'qgml ovr')")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d")
    p.add_argument("--out", default=os.path.join(HERE, "results", f"supervised-sklearn-{date}.jsonl"))
    a = p.parse_args(argv)
    with open(a.out, "w") as out:
        for name in a.datasets:
            kind, loader = DATASETS[name]
            for seed in a.seeds:
                run_one(name, kind, loader, seed, a.quick, out, a.models)
    md = table(a.out)
    with open(os.path.splitext(a.out)[0] + ".md", "w") as f:
        f.write(f"# Supervised QCML against scikit-learn\n\n`perf/supervised_sklearn.py {' '.join(argv or sys.argv[1:])}`"
                f", {date}, revision {git_revision()}; raw data: {os.path.basename(a.out)}\n\n{md}")
    print(md)


if __name__ == "__main__":
    main()
