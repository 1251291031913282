"""Supervised training from Python (docs/supervised.md): qgml.train(X, task=...) with the target as the last
column of X, through the C interface and the program's own settings reader; the run directory holds the
supervised metrics, the operators A_1..A_D and B, and the standardisation the program applied."""

import json
import os

import numpy as np
import pytest

import qgml


def supervised_points(count, seed, labels=None):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.5, 1.5, size=(count, 2))
    f = np.sin(x[:, 0]) + 0.5 * x[:, 0] * x[:, 1]
    y = f if labels is None else np.where(f > 0, labels[1], labels[0])
    return np.column_stack([x, y])


def settings(tmp_path, **extra):
    s = {"model.N": 4, "training.epochs": 40, "training.batch_size": 64, "training.lr": 0.05,
         "data.validation_fraction": 0.25, "analysis.enabled": False, "output.plots": False,
         "output.directory": str(tmp_path)}
    s.update(extra)
    return s


def test_regression_from_python_trains_and_reports_validation_metrics(tmp_path):
    run = qgml.train(supervised_points(400, 1), settings(tmp_path), task="regression", training__patience=0)
    table = run.history_table()
    assert len(table["epoch"]) == 40
    assert table["validation_r2"][-1] > 0.8 and table["train_r2"][-1] > 0.8
    assert table["validation_rmse"][-1] < table["validation_rmse"][0]
    assert run.model.shape == (3, 4, 4)  # A_1, A_2 and B
    with open(os.path.join(run.run_dir, "supervised.json")) as f:
        meta = json.load(f)
    assert meta["task"] == "regression" and meta["epoch"] == 40


def test_classification_from_python_with_the_nested_settings_form(tmp_path):
    s = settings(tmp_path)
    s["task"] = "classification"
    run = qgml.Trainer(s).train(supervised_points(400, 2, labels=(-1, 3)))
    table = run.history_table()
    assert table["validation_accuracy"][-1] > 0.8 and table["validation_auc"][-1] > 0.85
    assert np.all(np.isnan(table["validation_r2"]))


def test_a_bad_task_is_refused_with_the_choices(tmp_path):
    with pytest.raises(ValueError, match="task.*regression"):
        qgml.train(supervised_points(50, 3), settings(tmp_path), task="regresion")
