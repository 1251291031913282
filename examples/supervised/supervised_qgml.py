"""The qgml runs of supervised_examples.py: `qgml train` and `qgml predict` as processes, the runs'
history.csv, the number of epochs chosen on a hold-out of the training split, and the two runs per N
(run_qgml)."""
import os
import shlex
import subprocess
import sys
import time

import numpy as np

from supervised_data import read_table
from supervised_metrics import classification_metrics, regression_metrics
from supervised_settings import QGML_COMMON, SELECTION_FRACTION


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
