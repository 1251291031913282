"""The report of supervised_examples.py: results.md (markdown) and results.json (to_json), and what they
record about the run (the qgml version, the machine, the git commit, paths relative to the repository)."""
import json
import os
import platform
import subprocess

import numpy as np

from supervised_settings import QGML_COMMON, REPO, SELECTION_FRACTION, SPLIT_SEED, TEST_FRACTION


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
