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
import csv
import json
import os
import platform
import shlex
import subprocess
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
import matplotlib.pyplot as plt  # noqa: E402
import sklearn  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine  # noqa: E402
from sklearn.dummy import DummyClassifier, DummyRegressor  # noqa: E402
from sklearn.kernel_ridge import KernelRidge  # noqa: E402
from sklearn.linear_model import LogisticRegression, Ridge  # noqa: E402
from sklearn.metrics import (accuracy_score, mean_absolute_error, mean_squared_error,  # noqa: E402
                             r2_score, roc_auc_score)
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, train_test_split  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SPLIT_SEED = 0      # train/test split
CV_SEED = 0         # folds of the grid searches
TEST_FRACTION = 0.25
SELECTION_FRACTION = 0.2   # hold-out of the training split that picks qgml's number of epochs

# qgml settings shared by every run; N and the epochs vary (see qgml_settings()).
QGML_COMMON = {
    "training.batch_size": "64",
    "training.lr": "0.01",
    "training.early_stop": "0",          # a fixed number of epochs
    "training.patience": "0",            # the validation file is the test split: never stop or choose on it
    "training.checkpoint_every": "0",    # only the final checkpoint
    "data.validation_fraction": "0",     # the script splits the data itself
    "data.standardize": "false",         # features are standardised here with the training statistics
    "analysis.enabled": "false",
    "output.plots": "false",
}


def qgml_settings(quick):
    """Hilbert-space dimensions and epochs."""
    if quick:
        return {"N": [4, 8], "epochs": 60}
    return {"N": [4, 8, 16], "epochs": 300}


# ----------------------------------------------------------------------------------------------
# data


def load_datasets():
    out = []
    d = load_diabetes()
    out.append(dict(name="diabetes", task="regression", X=d.data, y=d.target.astype(float),
                    features=list(d.feature_names),
                    description="load_diabetes: 442 patients, 10 features, disease progression after one year"))
    b = load_breast_cancer()
    out.append(dict(name="breast_cancer", task="classification", X=b.data, y=b.target.astype(float),
                    features=[f.replace(" ", "_") for f in b.feature_names],
                    description="load_breast_cancer: 569 tumours, 30 features, positive class 1 = benign"))
    w = load_wine()
    keep = w.target <= 1
    out.append(dict(name="wine01", task="classification", X=w.data[keep], y=w.target[keep].astype(float),
                    features=list(w.feature_names),
                    description="load_wine restricted to cultivars 0 and 1: 130 wines, 13 features, "
                                "positive class 1"))
    return out


def split_and_scale(ds):
    strat = ds["y"] if ds["task"] == "classification" else None
    Xtr, Xte, ytr, yte = train_test_split(ds["X"], ds["y"], test_size=TEST_FRACTION,
                                          random_state=SPLIT_SEED, stratify=strat)
    mean = Xtr.mean(axis=0)
    std = Xtr.std(axis=0)
    std[std == 0] = 1.0
    return (Xtr - mean) / std, (Xte - mean) / std, ytr, yte


def write_csv(path, X, y, names):
    """Features then the target in the last column, with a header line (qgml skips a first line
    that has a non-numeric cell)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([n.replace(",", "_") for n in names] + ["target"])
        for row, t in zip(X, y):
            w.writerow([repr(float(v)) for v in row] + [repr(float(t))])


def read_table(path):
    """CSV with a header row -> dict name -> numpy array (nan where a cell is not a number)."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    header, body = [h.strip() for h in rows[0]], rows[1:]
    out = {}
    for i, name in enumerate(header):
        vals = []
        for r in body:
            try:
                vals.append(float(r[i]))
            except (ValueError, IndexError):
                vals.append(float("nan"))
        out[name] = np.array(vals)
    return out


# ----------------------------------------------------------------------------------------------
# metrics


def regression_metrics(y, p):
    return {"mae": float(mean_absolute_error(y, p)),
            "rmse": float(np.sqrt(mean_squared_error(y, p))),
            "r2": float(r2_score(y, p))}


def classification_metrics(y, label, score):
    return {"accuracy": float(accuracy_score(y, label)),
            "auc": float(roc_auc_score(y, score))}


# ----------------------------------------------------------------------------------------------
# scikit-learn


def run_sklearn(task, Xtr, Xte, ytr, yte):
    results = []
    if task == "regression":
        cv = KFold(5, shuffle=True, random_state=CV_SEED)
        models = [
            ("mean of training targets", DummyRegressor(strategy="mean"), None),
            ("Ridge", Ridge(), {"alpha": list(np.logspace(-3, 3, 13))}),
            ("KernelRidge (RBF)", KernelRidge(kernel="rbf"),
             {"alpha": [1e-3, 1e-2, 1e-1, 1.0, 10.0], "gamma": list(np.logspace(-4, 0, 9))}),
        ]
        scoring = "neg_mean_squared_error"
    else:
        cv = StratifiedKFold(5, shuffle=True, random_state=CV_SEED)
        models = [
            ("majority class", DummyClassifier(strategy="prior"), None),
            ("LogisticRegression", LogisticRegression(max_iter=10000), {"C": list(np.logspace(-3, 3, 13))}),
            ("SVC (RBF)", SVC(kernel="rbf"),
             {"C": list(np.logspace(-1, 3, 5)), "gamma": list(np.logspace(-4, 0, 5))}),
        ]
        scoring = "roc_auc"
    for name, est, grid in models:
        t0 = time.perf_counter()
        if grid is None:
            model = est.fit(Xtr, ytr)
            params = {}
        else:
            search = GridSearchCV(est, grid, cv=cv, scoring=scoring, n_jobs=1).fit(Xtr, ytr)
            model = search.best_estimator_
            params = {k: float(v) for k, v in search.best_params_.items()}
        fit_s = time.perf_counter() - t0
        if task == "regression":
            metrics = regression_metrics(yte, model.predict(Xte))
            predictions = model.predict(Xte)
        else:
            if hasattr(model, "decision_function"):
                score = model.decision_function(Xte)
            else:
                score = model.predict_proba(Xte)[:, 1]
            metrics = classification_metrics(yte, model.predict(Xte), score)
            predictions = None
        grid_size = int(np.prod([len(v) for v in grid.values()])) if grid else 0
        results.append({"model": name, "kind": "sklearn", "params": params,
                        "grid": {k: [float(x) for x in v] for k, v in (grid or {}).items()},
                        "grid_size": grid_size, "fit_seconds": fit_s, "metrics": metrics,
                        "predictions": None if predictions is None else [float("%.7g" % v) for v in predictions]})
    return results


# ----------------------------------------------------------------------------------------------
# qgml


def qgml_env():
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "2")
    env.setdefault("OMP_PROC_BIND", "false")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def run_command(cmd, env, log_path):
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.perf_counter() - t0
    with open(log_path, "w") as f:
        f.write("$ " + shlex.join(cmd) + "\n" + proc.stdout)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:])
        raise RuntimeError("command failed with exit status %d: %s (log: %s)"
                           % (proc.returncode, shlex.join(cmd), log_path))
    return seconds, proc.stdout


def train_command(program, task, train_csv, N, epochs, run_parent, name, validation):
    """validation: a CSV file (--data.validation_file) or a fraction of the training points (a float)."""
    cmd = [program, "train", train_csv, "--task", task, "--model.N", str(N), "--training.epochs", str(epochs)]
    for k, v in QGML_COMMON.items():
        if isinstance(validation, float) and k == "data.validation_fraction":
            v = repr(validation)
        cmd += ["--" + k, v]
    if not isinstance(validation, float):
        cmd += ["--data.validation_file", validation]
    cmd += ["--output.directory", run_parent, "--output.name", name, "--quiet"]
    return cmd


def qgml_train(program, task, train_csv, N, epochs, validation, work, name, env):
    """Runs qgml train into a fresh directory; returns (run directory, wall seconds, command)."""
    run_parent = os.path.join(work, "runs", name)
    os.makedirs(run_parent, exist_ok=True)
    if os.listdir(run_parent):
        raise RuntimeError("%s is not empty (use a fresh --work directory)" % run_parent)
    cmd = train_command(program, task, train_csv, N, epochs, run_parent, name, validation)
    seconds, _ = run_command(cmd, env, os.path.join(work, name + "_train.log"))
    runs = [d for d in sorted(os.listdir(run_parent)) if os.path.isdir(os.path.join(run_parent, d))]
    if len(runs) != 1:
        raise RuntimeError("expected one run directory under %s, found %s" % (run_parent, runs))
    return os.path.join(run_parent, runs[0]), seconds, cmd


def qgml_predict(program, task, run_dir, test_csv, yte, work, name, env):
    pred_csv = os.path.join(work, name + "_pred.csv")
    cmd = [program, "predict", "--run", run_dir, "--data", test_csv, "--output", pred_csv]
    seconds, out = run_command(cmd, env, os.path.join(work, name + "_predict.log"))
    pred = read_table(pred_csv)
    if "target" in pred and not np.allclose(pred["target"], yte):
        raise RuntimeError("%s: the target column of the predictions differs from the test targets" % name)
    if task == "regression":
        p = pred["prediction"]
        return regression_metrics(yte, p), [float("%.7g" % v) for v in p], seconds, out.strip()
    return classification_metrics(yte, pred["label"], pred["probability"]), None, seconds, out.strip()


HISTORY_COLUMNS = {
    "regression": ["train_rmse", "train_r2", "validation_rmse", "validation_r2"],
    "classification": ["train_accuracy", "train_auc", "validation_accuracy", "validation_auc"],
}


def history_dict(run_dir, task):
    """The history columns this script uses (epoch, supervised loss, seconds and the task's metrics),
    to 6 significant digits, NaN as None."""
    h = read_table(os.path.join(run_dir, "history.csv"))
    keep = ["epoch", "supervised", "seconds"] + HISTORY_COLUMNS[task]
    missing = [k for k in keep if k not in h]
    if missing:
        raise RuntimeError("%s/history.csv lacks the columns %s" % (run_dir, missing))
    return {k: [None if np.isnan(x) else float("%.6g" % x) for x in h[k]] for k in keep}


def select_epoch(history, task):
    """The epoch with the best validation metric: the smallest RMSE (regression), else the largest AUC,
    then the largest accuracy, and of equals the latest (AUC and accuracy saturate on a small hold-out)."""
    best, best_key = None, None
    for i, epoch in enumerate(history["epoch"]):
        if task == "regression":
            v = history["validation_rmse"][i]
            key = None if v is None else (-v,)
        else:
            a, c = history["validation_auc"][i], history["validation_accuracy"][i]
            key = None if a is None or c is None else (a, c)
        if key is not None and (best_key is None or key > best_key or (task != "regression" and key == best_key)):
            best, best_key = int(epoch), key
    if best is None:
        raise RuntimeError("no validation metrics in the selection run's history")
    return best, float(best_key[0])


def run_qgml(program, ds_name, task, train_csv, test_csv, yte, work, settings, env):
    """Per N: (a) a run of the fixed number of epochs, with the test split as validation file (its
    history gives the training curves); (b) a run on the training split with a 20 % validation hold-out
    that picks the number of epochs, then a run of that many epochs on the whole training split."""
    results = []
    for N in settings["N"]:
        name = "%s_N%d" % (ds_name, N)
        print("  qgml N=%d, %d epochs ..." % (N, settings["epochs"]), flush=True)
        run_dir, fit_s, cmd = qgml_train(program, task, train_csv, N, settings["epochs"], test_csv, work, name, env)
        metrics, predictions, pred_s, pred_out = qgml_predict(program, task, run_dir, test_csv, yte, work, name, env)
        history = history_dict(run_dir, task)
        results.append({"model": "qgml", "kind": "qgml", "variant": "fixed", "N": N, "epochs": settings["epochs"],
                        "params": {"N": N}, "fit_seconds": fit_s,
                        "epoch_seconds": float(np.nansum([x for x in history["seconds"] if x is not None])),
                        "predict_seconds": pred_s, "metrics": metrics, "predictions": predictions,
                        "predict_output": pred_out, "history": history, "command": cmd})
        print("    %s (%.1f s)" % (", ".join("%s %.4g" % kv for kv in metrics.items()), fit_s), flush=True)

        sel_dir, sel_s, sel_cmd = qgml_train(program, task, train_csv, N, settings["epochs"],
                                             SELECTION_FRACTION, work, name + "_select", env)
        sel_history = history_dict(sel_dir, task)
        epochs, score = select_epoch(sel_history, task)
        print("  qgml N=%d, %d epochs (chosen on a %d %% hold-out of the training split) ..."
              % (N, epochs, int(100 * SELECTION_FRACTION)), flush=True)
        run_dir, fit_s, cmd = qgml_train(program, task, train_csv, N, epochs, test_csv, work, name + "_chosen", env)
        metrics, predictions, pred_s, pred_out = qgml_predict(program, task, run_dir, test_csv, yte, work,
                                                              name + "_chosen", env)
        results.append({"model": "qgml", "kind": "qgml", "variant": "chosen", "N": N, "epochs": epochs,
                        "params": {"N": N}, "selection_score": score,
                        "fit_seconds": sel_s + fit_s, "selection_seconds": sel_s,
                        "final_fit_seconds": fit_s, "predict_seconds": pred_s, "metrics": metrics,
                        "predictions": predictions, "predict_output": pred_out,
                        "selection_history": {k: v for k, v in sel_history.items() if k.startswith("validation")},
                        "command": cmd, "selection_command": sel_cmd})
        print("    %s (%.1f s with the selection run)" % (", ".join("%s %.4g" % kv for kv in metrics.items()),
                                                          sel_s + fit_s), flush=True)
    return results


# ----------------------------------------------------------------------------------------------
# plots

plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "legend.fontsize": 8})
DPI = 90
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]


def best_qgml(entries):
    """The qgml model of the N whose hold-out score (selection run) was best: no test data in the choice."""
    q = [e for e in entries if e["kind"] == "qgml" and e["variant"] == "chosen"]
    return max(q, key=lambda e: e["selection_score"]) if q else None


def plot_pred_vs_true(ds, entries, yte, path):
    best = best_qgml(entries)
    kr = next(e for e in entries if e["model"].startswith("KernelRidge"))
    panels = ([(best, "qgml, N = %d, %d epochs" % (best["N"], best["epochs"]))] if best else []) + \
             [(kr, "KernelRidge (RBF)")]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels), 3.3), squeeze=False)
    lo, hi = float(np.min(yte)), float(np.max(yte))
    for ax, (e, title) in zip(axes[0], panels):
        p = np.array(e["predictions"])
        ax.scatter(yte, p, s=10, alpha=0.7, color=COLOURS[0] if e["kind"] == "qgml" else COLOURS[1])
        ax.plot([lo, hi], [lo, hi], color="0.4", lw=1, ls="--")
        ax.set_title(title)
        ax.set_xlabel("true target")
        ax.set_ylabel("predicted")
        m = e["metrics"]
        ax.text(0.03, 0.97, "R$^2$ %.3f\nRMSE %.1f" % (m["r2"], m["rmse"]), transform=ax.transAxes,
                va="top", fontsize=8)
    fig.suptitle("%s: test split (%d points)" % (ds["name"], len(yte)), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def plot_curves(ds, entries, path):
    q = [e for e in entries if e["kind"] == "qgml" and e["variant"] == "fixed"]
    chosen = {e["N"]: e["epochs"] for e in entries if e["kind"] == "qgml" and e["variant"] == "chosen"}
    if not q:
        return False
    if ds["task"] == "regression":
        panels = [("rmse", "RMSE"), ("r2", "R$^2$")]
    else:
        panels = [("auc", "ROC AUC"), ("accuracy", "accuracy")]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.1), squeeze=False)
    for ax, (metric, label) in zip(axes[0], panels):
        for i, e in enumerate(q):
            h = e["history"]
            epoch = np.array(h["epoch"], dtype=float)
            for split, ls in (("train", "-"), ("validation", "--")):
                col = "%s_%s" % (split, metric)
                if col not in h:
                    continue
                v = np.array([np.nan if x is None else x for x in h[col]], dtype=float)
                ax.plot(epoch, v, ls=ls, color=COLOURS[i % len(COLOURS)], lw=1.2,
                        label="N=%d %s" % (e["N"], "train" if split == "train" else "test"))
            if e["N"] in chosen:
                ax.axvline(chosen[e["N"]], color=COLOURS[i % len(COLOURS)], lw=0.8, ls=":")
        ax.set_xlabel("epoch")
        ax.set_ylabel(label)
        if metric == "r2":
            ax.set_ylim(-0.2, 1.0)
        if metric == "rmse":
            top = max(np.nanpercentile(np.array([np.nan if x is None else x for x in e["history"].get(
                "validation_rmse", [np.nan])], dtype=float), 95) for e in q)
            if np.isfinite(top):
                ax.set_ylim(0, 1.1 * top)
        ax.grid(alpha=0.3)
    axes[0][0].legend(ncol=1, fontsize=7)
    fig.suptitle("%s: qgml per epoch (solid: training split, dashed: test split;\n"
                 "dotted: the epoch count chosen on the hold-out)" % ds["name"], fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return True


# ----------------------------------------------------------------------------------------------
# report


def fmt(v, digits=3):
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "-"
    if abs(v) >= 100:
        return "%.1f" % v
    return "%.*f" % (digits, v)


def describe(e):
    if e["kind"] == "qgml" and e["variant"] == "chosen":
        return "qgml, N = %d, %d epochs (chosen on the hold-out)" % (e["N"], e["epochs"])
    if e["kind"] == "qgml":
        return "qgml, N = %d, %d epochs" % (e["N"], e["epochs"])
    if not e["params"]:
        return e["model"]
    return "%s (%s)" % (e["model"], ", ".join("%s = %.3g" % kv for kv in e["params"].items()))


def seconds(v):
    return "%.2f s" % v if v < 10 else "%.1f s" % v


def markdown(report):
    lines = ["# Supervised qgml versus scikit-learn: results", "",
             "Written by `supervised_examples.py`; numbers as measured on this run.", "",
             "- command: `%s`" % report["command"],
             "- date: %s" % report["date"],
             "- machine: %s" % report["machine"],
             "- qgml: %s (`%s`), repository at %s" % (report["qgml_version"], report["qgml_program"],
                                                        report["git_commit"]),
             "- Python %s, numpy %s, scikit-learn %s, matplotlib %s" % (
                 report["versions"]["python"], report["versions"]["numpy"], report["versions"]["sklearn"],
                 report["versions"]["matplotlib"]),
             "- threads: qgml %s; scikit-learn %s" % (report["threads"], report["sklearn_threads"]),
             "- split: %d %% test, seed %d (stratified for classification); features standardised with the "
             "training split's mean and standard deviation; regression targets in original units" % (
                 int(100 * TEST_FRACTION), SPLIT_SEED),
             ""]
    if report["qgml_settings"]:
        s = report["qgml_settings"]
        lines += ["qgml runs (two rows per N): `qgml train TRAIN.csv --task TASK --model.N N --training.epochs E "
                  "%s --data.validation_file TEST.csv ...`, then `qgml predict --run RUN --data TEST.csv "
                  "--output P.csv`. The first row trains E = %d epochs (its history gives the training curves; "
                  "the validation file only adds per-epoch metrics, it does not change the training). The "
                  "second row (\"chosen on the hold-out\") first trains %d epochs on the training split with "
                  "`--data.validation_fraction %g` (a seeded hold-out of the training points), takes the epoch "
                  "with the best hold-out RMSE (regression) or AUC, then accuracy (classification; of equal "
                  "ones the latest), and trains that many epochs on the whole training split; its fit time "
                  "includes the selection run. No "
                  "test data enter either choice. Fit time = wall time of the whole `qgml train` process "
                  "(start-up, reading, training, per-epoch validation, writing the run directory). No other "
                  "qgml setting is tuned." % (" ".join("--%s %s" % kv for kv in QGML_COMMON.items()),
                                               s["epochs"], s["epochs"], SELECTION_FRACTION), ""]
    else:
        lines += ["qgml was not run (--skip-qgml).", ""]
    lines += ["scikit-learn rows: hyper-parameters chosen by 5-fold GridSearchCV on the training split "
              "(regression: mean squared error; classification: ROC AUC); fit time includes the whole "
              "grid search and refit. AUC from `decision_function` (SVC, LogisticRegression).", ""]
    for ds in report["datasets"]:
        lines += ["## %s (%s)" % (ds["name"], ds["task"]), "", ds["description"] + "; %d training / %d test "
                  "points." % (ds["n_train"], ds["n_test"]), ""]
        if ds["task"] == "regression":
            lines += ["| model | test MAE | test RMSE | test R^2 | fit time |", "|---|---|---|---|---|"]
            for e in ds["models"]:
                m = e["metrics"]
                lines.append("| %s | %s | %s | %s | %s |" % (describe(e), fmt(m["mae"], 2), fmt(m["rmse"], 2),
                                                            fmt(m["r2"]), seconds(e["fit_seconds"])))
        else:
            lines += ["| model | test accuracy | test ROC AUC | fit time |", "|---|---|---|---|"]
            for e in ds["models"]:
                m = e["metrics"]
                lines.append("| %s | %s | %s | %s |" % (describe(e), fmt(m["accuracy"]), fmt(m["auc"], 4),
                                                       seconds(e["fit_seconds"])))
        lines.append("")
        for p in ds["plots"]:
            lines.append("![%s](%s)" % (p, p))
        if ds["plots"]:
            lines.append("")
    return "\n".join(lines)


def to_json(value, indent=0):
    """JSON with one key per line and every list of numbers or strings on one line."""
    pad = " " * (indent + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = ["%s%s: %s" % (pad, json.dumps(k), to_json(v, indent + 1)) for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(pad + to_json(v, indent + 1) for v in value) + "\n" + " " * indent + "]"
    return json.dumps(value)


def qgml_version(program, env):
    try:
        out = subprocess.run([program, "info"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, timeout=60).stdout
        return out.splitlines()[0].strip() if out else "unknown"
    except OSError as err:
        return "unavailable (%s)" % err


def machine():
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = ", 1-minute load average %.2f at the start" % os.getloadavg()[0]
    except OSError:
        load = ""
    return "%s, %d cores visible, %s%s" % (model, os.cpu_count() or 0, platform.system(), load)


def git_commit():
    try:
        out = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=30)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def rel(path):
    try:
        r = os.path.relpath(path, REPO)
        return path if r.startswith("..") else r
    except ValueError:
        return path


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
