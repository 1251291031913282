#!/usr/bin/env python3
"""Supervised qgml against scikit-learn baselines on three small tabular data sets.

usage: supervised_examples.py [--qgml PATH] [--quick] [--out DIR] [--work DIR] [--skip-qgml]

Data sets (all ship inside scikit-learn's package; nothing is downloaded):
  diabetes       regression, 442 points, 10 features (load_diabetes, target in original units)
  breast_cancer  binary classification, 569 points, 30 features (load_breast_cancer; 1 = benign)
  wine01         binary classification, 130 points, 13 features (load_wine, classes 0 and 1 only)

For each data set: one seeded 75/25 train/test split (stratified for classification), features
standardised with the training split's mean and standard deviation. The same split is given to
  - `qgml train TRAIN.csv --task regression|classification` for a few Hilbert-space dimensions N,
    with the test split as --data.validation_file (per-epoch validation metrics for the training
    curves; the program does not select or stop on them), then `qgml predict` on the test split;
  - scikit-learn: Ridge and KernelRidge (RBF) for regression, LogisticRegression and SVC (RBF) for
    classification, each tuned by 5-fold GridSearchCV on the training split; and a constant baseline.
Metrics on the test split: MAE, RMSE, R^2 (regression); accuracy and ROC AUC (classification); and
the wall-clock fit time of every model (for qgml: the whole `qgml train` process; for scikit-learn:
the grid search including its refit).

Writes into --out (default: this script's folder): results.md, results.json, pred_vs_true_diabetes.png
and curves_<data set>.png. Intermediate files (CSV splits, run directories) go to --work (default: a
temporary directory, removed at the end).

The program: --qgml, else $QGML_PROGRAM, else build/openmp/apps/qgml/qgml under the repository root.
It runs with OMP_NUM_THREADS=2 and OMP_PROC_BIND=false unless those are set in the environment
(on cores that other processes keep busy, OMP_NUM_THREADS=1 or OMP_WAIT_POLICY=passive avoids
long stalls of spinning threads; see README.md); scikit-learn with OPENBLAS_NUM_THREADS=1 and
MKL_NUM_THREADS=1 unless set.
"""
import argparse
import os
import platform
import shlex
import sys
import tempfile
import time

# Single-threaded BLAS for scikit-learn unless set otherwise (before numpy loads it): on these small
# problems threads gain little, and spinning BLAS threads on cores shared with other processes made a
# kernel-ridge grid search take 16 s instead of 0.8 s.
for _name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import sklearn  # noqa: E402

from supervised_baselines import run_sklearn  # noqa: E402
from supervised_data import load_datasets, split_and_scale, write_csv  # noqa: E402
from supervised_plots import plot_curves, plot_pred_vs_true  # noqa: E402  (after the backend is chosen)
from supervised_qgml import qgml_env, run_qgml  # noqa: E402
from supervised_report import describe, git_commit, machine, markdown, qgml_version, rel, to_json  # noqa: E402
from supervised_settings import HERE, QGML_COMMON, REPO, SPLIT_SEED, TEST_FRACTION, qgml_settings  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qgml", default=os.environ.get("QGML_PROGRAM") or os.path.join(REPO, "build", "openmp",
                                                                                      "apps", "qgml", "qgml"))
    ap.add_argument("--quick", action="store_true", help="N = 4 and 8 only, 60 epochs")
    ap.add_argument("--out", default=HERE, help="where results.md, results.json and the plots go")
    ap.add_argument("--work", default=None, help="keep the splits and run directories here")
    ap.add_argument("--skip-qgml", action="store_true", help="scikit-learn models only")
    args = ap.parse_args()

    env = qgml_env()
    program = os.path.abspath(args.qgml)
    if not args.skip_qgml and not os.access(program, os.X_OK):
        sys.exit("qgml program not found or not executable: %s (use --qgml or QGML_PROGRAM)" % program)
    settings = None if args.skip_qgml else qgml_settings(args.quick)
    os.makedirs(args.out, exist_ok=True)
    tmp = None
    if args.work:
        work = os.path.abspath(args.work)
        os.makedirs(work, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="qgml_supervised_")
        work = tmp.name

    report = {
        "command": "python " + shlex.join([rel(os.path.abspath(sys.argv[0]))] + sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "machine": machine(),
        "qgml_program": rel(program),
        "qgml_version": "not run" if args.skip_qgml else qgml_version(program, env),
        "git_commit": git_commit(),
        "sklearn_threads": "OPENBLAS_NUM_THREADS=%s MKL_NUM_THREADS=%s" % (
            os.environ.get("OPENBLAS_NUM_THREADS"), os.environ.get("MKL_NUM_THREADS")),
        "threads": " ".join("%s=%s" % (k, env[k]) for k in ("OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_WAIT_POLICY")
                            if k in env),
        "versions": {"python": platform.python_version(), "numpy": np.__version__,
                     "sklearn": sklearn.__version__, "matplotlib": matplotlib.__version__},
        "split": {"test_fraction": TEST_FRACTION, "seed": SPLIT_SEED},
        "qgml_settings": None if settings is None else dict(settings, common=QGML_COMMON),
        "datasets": [],
    }
    t_start = time.perf_counter()
    for ds in load_datasets():
        print("%s (%s)" % (ds["name"], ds["task"]), flush=True)
        Xtr, Xte, ytr, yte = split_and_scale(ds)
        train_csv = os.path.join(work, ds["name"] + "_train.csv")
        test_csv = os.path.join(work, ds["name"] + "_test.csv")
        write_csv(train_csv, Xtr, ytr, ds["features"])
        write_csv(test_csv, Xte, yte, ds["features"])
        entries = []
        if settings is not None:
            entries += run_qgml(program, ds["name"], ds["task"], train_csv, test_csv, yte, work, settings, env)
        sk = run_sklearn(ds["task"], Xtr, Xte, ytr, yte)
        for e in sk:
            print("  %s: %s (%.2f s)" % (describe(e), ", ".join("%s %.4g" % kv for kv in e["metrics"].items()),
                                          e["fit_seconds"]), flush=True)
        entries += sk
        plots = []
        if ds["task"] == "regression":
            name = "pred_vs_true_%s.png" % ds["name"]
            plot_pred_vs_true(ds, entries, yte, os.path.join(args.out, name))
            plots.append(name)
        name = "curves_%s.png" % ds["name"]
        if plot_curves(ds, entries, os.path.join(args.out, name)):
            plots.append(name)
        for e in entries:
            for key in ("command", "selection_command"):
                if key in e:
                    e[key] = shlex.join(rel(c) if c == program else c.replace(work, "WORK") for c in e[key])
        report["datasets"].append({"name": ds["name"], "task": ds["task"], "description": ds["description"],
                                   "n_train": len(ytr), "n_test": len(yte), "n_features": Xtr.shape[1],
                                   "models": entries, "plots": plots})
    report["total_seconds"] = time.perf_counter() - t_start

    with open(os.path.join(args.out, "results.json"), "w") as f:
        f.write(to_json(report) + "\n")
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(markdown(report) + "\n")
    print("wrote %s (%.0f s in all)" % (os.path.join(args.out, "results.md"), report["total_seconds"]))
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
