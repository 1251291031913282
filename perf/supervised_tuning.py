#!/usr/bin/env python3
"""The tuning half of the supervised defaults: a grid of QCMLClassifier settings on synthetic data sets
that the benchmark (perf/supervised_sklearn.py) never uses, so that its bundled data sets stay held out.

usage: perf/supervised_tuning.py [--task classification|regression] [--grid settings|ensemble|members]
                                [--seeds 0 1] [--out FILE.jsonl]

Tuning sets (scikit-learn's make_classification, seeded; nothing is downloaded):
  synth10  1200 x 64, 16 informative, 10 classes, 2 clusters per class, class_sep 1.5, 1 % flipped labels
  synth5   1000 x 30, 8 informative, 5 classes, class_sep 1.2
  synth3    600 x 13, 6 informative, 3 classes, class_sep 1.0
  synth2    800 x 30, 8 informative, 2 classes, 2 clusters per class, class_sep 0.8, 2 % flipped labels
  (--task regression: QCMLRegressor on)
  friedman1   600 x 10, make_friedman1, noise 0.5
  linear20    600 x 20, make_regression, 8 informative, noise 10
  friedman2   600 x 4, make_friedman2, noise 20
Per set and seed: a 75/25 split (stratified for classification), Pipeline(StandardScaler, estimator with
the settings) fitted on the training part, accuracy or R^2 on the test part, and the fit time. The grid:
model.N (auto, 16), training.unsupervised_weight (0, 0.1, 1), training.lr (0.01, 0.003),
training.batch_size (500, 100); regression: training.unsupervised_weight alone. --grid ensemble: n_models
(1, 3, 5), the estimators' ensemble, at every other setting's default. --grid members: n_models (3, 5;
regression 3) x what differs between the members (the seeds alone, or also the validation split).
Writes JSON lines (settings, score, fit time, versions, git revision, host) and a Markdown table of the
mean accuracy and median fit time per setting, best first, beside them (.md).
"""
import argparse
import datetime
import itertools
import json
import os
import socket
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OMP_PROC_BIND", "false")

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn.datasets import make_classification, make_friedman1, make_friedman2, make_regression  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import qgml  # noqa: E402
import qgml.supervised  # noqa: E402  (the ensemble members of --grid members)
from supervised_sklearn import git_revision  # noqa: E402  (perf/ is the script's directory)

HERE = os.path.dirname(os.path.abspath(__file__))

SETS = {
    "synth10": dict(n_samples=1200, n_features=64, n_informative=16, n_redundant=8, n_classes=10,
                    n_clusters_per_class=2, class_sep=1.5, flip_y=0.01),
    "synth5": dict(n_samples=1000, n_features=30, n_informative=8, n_redundant=4, n_classes=5,
                   n_clusters_per_class=1, class_sep=1.2, flip_y=0.0),
    "synth3": dict(n_samples=600, n_features=13, n_informative=6, n_redundant=2, n_classes=3,
                   n_clusters_per_class=1, class_sep=1.0, flip_y=0.0),
    "synth2": dict(n_samples=800, n_features=30, n_informative=8, n_redundant=4, n_classes=2,
                   n_clusters_per_class=2, class_sep=0.8, flip_y=0.02),
}

REGRESSION_SETS = {
    "friedman1": lambda seed: make_friedman1(n_samples=600, n_features=10, noise=0.5, random_state=100 + seed),
    "linear20": lambda seed: make_regression(n_samples=600, n_features=20, n_informative=8, noise=10.0,
                                             random_state=100 + seed),
    "friedman2": lambda seed: make_friedman2(n_samples=600, noise=20.0, random_state=100 + seed),
}

REGRESSION_GRID = {"unsupervised_weight": [None, 0.1, 1.0]}

ENSEMBLE_GRID = {"n_models": [None, 3, 5]}

# --grid members: what differs between the members of an ensemble, the seeds of the initial matrices and
# the shuffles alone, or also the validation split (data.seed), set through the estimators' private
# qgml.supervised._MEMBER_SEEDS.
MEMBER_VARIANTS = {"seeds": ("model.seed", "training.seed"),
                   "seeds+split": ("model.seed", "training.seed", "data.seed")}
MEMBERS_GRID = {"n_models": [3, 5], "members_differ_in": list(MEMBER_VARIANTS)}
REGRESSION_MEMBERS_GRID = {"n_models": [3], "members_differ_in": list(MEMBER_VARIANTS)}

GRID = {"N": [None, 16], "unsupervised_weight": [None, 0.1, 1.0], "lr": [None, 0.003], "batch_size": [None, 100]}


def label(params):
    return ", ".join(f"{k}={'default' if v is None else v}" for k, v in params.items())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    p.add_argument("--task", choices=["classification", "regression"], default="classification")
    p.add_argument("--grid", choices=["settings", "ensemble", "members"], default="settings")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d")
    p.add_argument("--out")
    a = p.parse_args(argv)
    regression = a.task == "regression"
    kind = a.task if a.grid == "settings" else f"{a.task}-{a.grid}"
    out_path = a.out or os.path.join(HERE, "results", f"supervised-tuning-{kind}-{date}.jsonl")
    sets = REGRESSION_SETS if regression else SETS
    grid = {"ensemble": ENSEMBLE_GRID, "members": REGRESSION_MEMBERS_GRID if regression else MEMBERS_GRID,
            "settings": REGRESSION_GRID if regression else GRID}[a.grid]
    revision = git_revision()
    rows = []
    with open(out_path, "w") as out:
        for name, spec in sets.items():
            for seed in a.seeds:
                x, y = spec(seed) if regression else make_classification(random_state=100 + seed, **spec)
                xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=seed,
                                                      stratify=None if regression else y)
                for values in itertools.product(*grid.values()):
                    params = dict(zip(grid, values))
                    kwargs = {k: v for k, v in params.items() if k != "members_differ_in"}
                    default_members = qgml.supervised._MEMBER_SEEDS
                    qgml.supervised._MEMBER_SEEDS = MEMBER_VARIANTS.get(params.get("members_differ_in"),
                                                                        default_members)
                    estimator = qgml.QCMLRegressor(**kwargs) if regression else qgml.QCMLClassifier(**kwargs)
                    model = Pipeline([("scale", StandardScaler()), ("m", estimator)])
                    t0 = time.perf_counter()
                    model.fit(xtr, ytr)
                    fit_s = time.perf_counter() - t0
                    qgml.supervised._MEMBER_SEEDS = default_members
                    record = {
                        "suite": "supervised_tuning", "dataset": name, "seed": seed, "params": params,
                        "score": float(model.score(xte, yte)), "fit_s": fit_s,
                        "task": a.task, "metric": "r2" if regression else "accuracy",
                        "epochs": np.ravel(model.named_steps["m"].n_epochs_)[0].item(), "train_points": len(xtr),
                        "test_points": len(xte), "features": x.shape[1],
                        "classes": 0 if regression else int(len(np.unique(y))),
                        "qgml_version": qgml.version(), "sklearn": sklearn.__version__, "git_revision": revision,
                        "host": socket.gethostname(), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
                        "loadavg": os.getloadavg(),
                        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    }
                    rows.append(record)
                    out.write(json.dumps(record) + "\n")
                    out.flush()
                    print(f"{name} seed {seed} {label(params):70s} {record['metric']} {record['score']:.4f} "
                          f"fit {fit_s:6.2f} s, {record['epochs']} epochs", file=sys.stderr, flush=True)
    by = {}
    for r in rows:
        by.setdefault(label(r["params"]), []).append(r)
    ranked = sorted(by.items(), key=lambda kv: -statistics.mean(r["score"] for r in kv[1]))
    metric = "R^2" if regression else "accuracy"
    lines = [f"| settings | mean {metric} | " + " | ".join(sets) + " | median fit (s) |",
             "|---|---|" + "---|" * len(sets) + "---|"]
    for key, rs in ranked:
        per = [statistics.mean(r["score"] for r in rs if r["dataset"] == n) for n in sets]
        lines.append(f"| {key} | {statistics.mean(r['score'] for r in rs):.4f} | "
                     + " | ".join(f"{v:.4f}" for v in per) + f" | {statistics.median(r['fit_s'] for r in rs):.2f} |")
    md = "\n".join(lines) + "\n"
    with open(os.path.splitext(out_path)[0] + ".md", "w") as f:
        f.write(f"# Supervised defaults: the tuning half ({kind})\n\n`perf/supervised_tuning.py "
                f"{' '.join(argv or sys.argv[1:])}`, {date}, revision {revision}; raw data: "
                f"{os.path.basename(out_path)}\n\n{md}")
    print(md)


if __name__ == "__main__":
    main()
