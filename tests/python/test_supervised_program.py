"""The program's supervised tasks (docs/supervised.md): qgml train --task regression|classification and
qgml predict. The last epoch's validation metrics in history.csv are those of the operators at the end of
training, so qgml predict on the validation file must reproduce them."""
import csv
import json
import math
import subprocess

import numpy as np


def write_points(path, rows, header=None):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        if header:
            w.writerow(header)
        w.writerows(rows)


def make_data(seed, count, classes=None):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.5, 1.5, size=(count, 2))
    f = np.sin(x[:, 0]) + 0.5 * x[:, 0] * x[:, 1]
    y = f if classes is None else np.where(f > 0, classes[1], classes[0])
    return np.column_stack([x[:, 0] * 10 + 3, x[:, 1], y])  # feature 0 off scale: z-scored by the program


def run(program, *args):
    return subprocess.run([program, *args], capture_output=True, text=True, timeout=300)


def history(run_dir):
    with open(run_dir / "history.csv") as f:
        return list(csv.DictReader(f))


def train(program, tmp_path, task, data, validation, extra=()):
    out = tmp_path / ("runs-" + task)
    r = run(program, "train", str(data), "--task", task, "--data.validation_file", str(validation),
            "--model.N", "4", "--training.epochs", "40", "--training.batch_size", "64", "--training.lr", "0.05",
            "--analysis.enabled", "false", "--output.plots", "false", "--output.directory", str(out), "--quiet",
            *extra)
    assert r.returncode == 0, r.stderr
    (run_dir,) = list(out.iterdir())
    return run_dir


def test_regression_trains_and_predict_reproduces_the_validation_metrics(program, tmp_path):
    data, validation = tmp_path / "train.csv", tmp_path / "validation.csv"
    write_points(data, make_data(1, 240), header=["x0", "x1", "y"])
    write_points(validation, make_data(2, 80))
    run_dir = train(program, tmp_path, "regression", data, validation, ("--training.patience", "0"))
    h = history(run_dir)
    assert len(h) == 40
    last = h[-1]
    assert float(last["validation_r2"]) > 0.8
    assert float(last["train_rmse"]) < float(h[0]["train_rmse"])
    assert last["validation_accuracy"] == "nan"
    out = tmp_path / "predictions.csv"
    r = run(program, "predict", "--run", str(run_dir), "--data", str(validation), "--output", str(out))
    assert r.returncode == 0, r.stderr
    with open(out) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 80
    pred = np.array([float(row["prediction"]) for row in rows])
    truth = np.array([float(row["target"]) for row in rows])
    np.testing.assert_allclose(truth, make_data(2, 80)[:, 2], rtol=0, atol=1e-15)
    rmse = math.sqrt(np.mean((pred - truth) ** 2))
    r2 = 1 - np.sum((pred - truth) ** 2) / np.sum((truth - truth.mean()) ** 2)
    assert abs(rmse - float(last["validation_rmse"])) < 1e-9
    assert abs(r2 - float(last["validation_r2"])) < 1e-9
    assert "R^2" in r.stdout
    # Features only: the same predictions, no target column.
    features = tmp_path / "features.csv"
    write_points(features, make_data(2, 80)[:, :2])
    r = run(program, "predict", "--run", str(run_dir), "--data", str(features), "--output", str(out))
    assert r.returncode == 0, r.stderr
    with open(out) as f:
        again = list(csv.DictReader(f))
    assert list(again[0].keys()) == ["prediction"]
    np.testing.assert_allclose([float(row["prediction"]) for row in again], pred, rtol=0, atol=0)


def test_classification_maps_two_labels_and_predicts_them(program, tmp_path):
    data, validation = tmp_path / "train.csv", tmp_path / "validation.csv"
    write_points(data, make_data(3, 240, classes=(-2, 5)))
    write_points(validation, make_data(4, 80, classes=(-2, 5)))
    run_dir = train(program, tmp_path, "classification", data, validation, ("--training.patience", "0"))
    last = history(run_dir)[-1]
    assert float(last["validation_accuracy"]) > 0.85
    assert float(last["validation_auc"]) > 0.9
    out = tmp_path / "labels.csv"
    r = run(program, "predict", "--run", str(run_dir), "--data", str(validation), "--output", str(out))
    assert r.returncode == 0, r.stderr
    with open(out) as f:
        rows = list(csv.DictReader(f))
    labels = {float(row["label"]) for row in rows}
    assert labels <= {-2.0, 5.0}
    accuracy = np.mean([float(row["label"]) == float(row["target"]) for row in rows])
    assert abs(accuracy - float(last["validation_accuracy"])) < 1e-12
    assert all((float(row["probability"]) > 0.5) == (float(row["label"]) == 5.0) for row in rows)


def test_patience_stops_after_the_best_validation_epoch_and_keeps_its_operators(program, tmp_path):
    # Targets that are noise: the validation loss is lowest early and rises as the model fits the noise.
    rng = np.random.default_rng(5)
    data, validation = tmp_path / "train.csv", tmp_path / "validation.csv"
    write_points(data, np.column_stack([rng.normal(size=(60, 4)), rng.normal(size=60)]))
    points = np.column_stack([rng.normal(size=(60, 4)), rng.normal(size=60)])
    write_points(validation, points)
    out = tmp_path / "runs"
    r = run(program, "train", str(data), "--task", "regression", "--data.validation_file", str(validation),
            "--model.N", "8", "--training.epochs", "400", "--training.batch_size", "16", "--training.lr", "0.05",
            "--training.early_stop", "0", "--analysis.enabled", "false", "--output.plots", "false",
            "--output.directory", str(out))
    assert r.returncode == 0, r.stderr
    assert "automatic: training.patience = 20" in r.stdout
    (run_dir,) = list(out.iterdir())
    h = history(run_dir)
    rmse = [float(row["validation_rmse"]) for row in h]
    best = int(np.argmin(rmse)) + 1  # mse on standardised targets: the lowest loss is the lowest RMSE
    assert len(h) == best + 20 < 400
    with open(run_dir / "supervised.json") as f:
        assert json.load(f)["epoch"] == best
    assert f"kept the operators of epoch {best}" in r.stdout
    pred_file = tmp_path / "predictions.csv"
    r = run(program, "predict", "--run", str(run_dir), "--data", str(validation), "--output", str(pred_file))
    assert r.returncode == 0, r.stderr
    with open(pred_file) as f:
        pred = np.array([float(row["prediction"]) for row in csv.DictReader(f)])
    assert abs(math.sqrt(np.mean((pred - points[:, 4]) ** 2)) - rmse[best - 1]) < 1e-9
    # The checkpoints keep the trajectory: a resume with more epochs is already stopped (nothing to train).
    r = run(program, "train", "--resume", str(run_dir), "--training.epochs", "400")
    assert r.returncode == 0, r.stderr
    assert len(history(run_dir)) == len(h)


def three_blobs(seed, count, labels=(10, 20, 30)):
    rng = np.random.default_rng(seed)
    centres = np.array([[1.0, 0.0], [-0.5, 0.87], [-0.5, -0.87]])
    k = np.arange(count) % 3
    x = centres[k] + 0.35 * rng.normal(size=(count, 2))
    return np.column_stack([x, np.asarray(labels, dtype=float)[k]])


def test_three_classes_train_with_softmax_and_predict_reproduces_the_validation_metrics(program, tmp_path):
    data, validation = tmp_path / "train.csv", tmp_path / "validation.csv"
    write_points(data, three_blobs(1, 150))
    points = three_blobs(2, 60)
    write_points(validation, points)
    out = tmp_path / "runs"
    r = run(program, "train", str(data), "--task", "classification", "--data.validation_file", str(validation),
            "--model.N", "4", "--training.epochs", "40", "--training.batch_size", "32", "--training.lr", "0.05",
            "--training.patience", "0", "--analysis.enabled", "false", "--output.plots", "false",
            "--output.directory", str(out))
    assert r.returncode == 0, r.stderr
    assert "automatic: training.loss = softmax (3 classes" in r.stdout
    assert "automatic: model.outputs = 3 target operators (one per class)" in r.stdout
    assert "classes: 10, 20, 30 -> 0 .. 2" in r.stdout
    assert "final validation recall per class 10 " in r.stdout
    (run_dir,) = list(out.iterdir())
    with open(run_dir / "supervised.json") as f:
        sup = json.load(f)
    assert sup["loss"] == "softmax" and sup["outputs"] == 3 and sup["classes"] == [10, 20, 30]
    assert np.load(run_dir / "final_matrices.npy").shape == (5, 4, 4)
    last = history(run_dir)[-1]
    assert float(last["validation_accuracy"]) > 0.9
    pred_file = tmp_path / "labels.csv"
    r = run(program, "predict", "--run", str(run_dir), "--data", str(validation), "--output", str(pred_file))
    assert r.returncode == 0, r.stderr
    assert "recall per class: 10 " in r.stdout
    with open(pred_file) as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0].keys()) == ["probability_10", "probability_20", "probability_30", "label", "target"]
    p = np.array([[float(row[f"probability_{c}"]) for c in (10, 20, 30)] for row in rows])
    labels = np.array([float(row["label"]) for row in rows])
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(labels, np.array([10.0, 20.0, 30.0])[np.argmax(p, axis=1)])
    accuracy = np.mean(labels == points[:, 2])
    assert abs(accuracy - float(last["validation_accuracy"])) < 1e-12


def test_two_outputs_train_one_model_with_a_target_operator_each(program, tmp_path):
    rng = np.random.default_rng(7)

    def rows(count):
        x = rng.uniform(-1.5, 1.5, size=(count, 2))
        # Layout x0, y0, x1, y1: the targets are columns 1 and 3.
        return np.column_stack([x[:, 0], np.sin(x[:, 0]) * 4 + 1, x[:, 1], 0.5 * x[:, 0] * x[:, 1]])

    data, validation = tmp_path / "train.csv", tmp_path / "validation.csv"
    write_points(data, rows(240))
    points = rows(80)
    write_points(validation, points)
    out = tmp_path / "runs"
    r = run(program, "train", str(data), "--task", "regression", "--data.target_columns", "1,3",
            "--data.validation_file", str(validation), "--model.N", "4", "--training.epochs", "40",
            "--training.batch_size", "64", "--training.lr", "0.05", "--training.patience", "0",
            "--analysis.enabled", "false", "--output.plots", "false", "--output.directory", str(out))
    assert r.returncode == 0, r.stderr
    assert "targets from columns 1, 3 of" in r.stdout
    assert "automatic: model.outputs = 2 target operators (one per target column)" in r.stdout
    assert "final validation R^2 per output 0 " in r.stdout
    (run_dir,) = list(out.iterdir())
    with open(run_dir / "supervised.json") as f:
        sup = json.load(f)
    assert sup["outputs"] == 2 and sup["target_columns"] == [1, 3] and len(sup["target_mean"]) == 2
    assert np.load(run_dir / "final_matrices.npy").shape == (4, 4, 4)
    last = history(run_dir)[-1]
    assert float(last["validation_r2"]) > 0.5
    pred_file = tmp_path / "predictions.csv"
    r = run(program, "predict", "--run", str(run_dir), "--data", str(validation), "--output", str(pred_file))
    assert r.returncode == 0, r.stderr
    assert "R^2 per output: 0 " in r.stdout
    with open(pred_file) as f:
        got = list(csv.DictReader(f))
    assert list(got[0].keys()) == ["prediction_0", "prediction_1", "target_0", "target_1"]
    pred = np.array([[float(row["prediction_0"]), float(row["prediction_1"])] for row in got])
    truth = points[:, [1, 3]]
    np.testing.assert_allclose([[float(row["target_0"]), float(row["target_1"])] for row in got], truth, rtol=0,
                               atol=1e-15)
    r2 = [1 - np.sum((pred[:, c] - truth[:, c]) ** 2) / np.sum((truth[:, c] - truth[:, c].mean()) ** 2)
          for c in range(2)]
    assert abs(np.mean(r2) - float(last["validation_r2"])) < 1e-9
    # A features-only file gives the same predictions.
    features = tmp_path / "features.csv"
    write_points(features, points[:, [0, 2]])
    r = run(program, "predict", "--run", str(run_dir), "--data", str(features), "--output", str(pred_file))
    assert r.returncode == 0, r.stderr
    with open(pred_file) as f:
        again = np.array([[float(row["prediction_0"]), float(row["prediction_1"])] for row in csv.DictReader(f)])
    np.testing.assert_allclose(again, pred, rtol=0, atol=0)


def test_supervised_input_errors_name_the_problem(program, tmp_path):
    data = tmp_path / "three.csv"
    write_points(data, [[0.1 * i, 0.2, i % 3] for i in range(30)])
    r = run(program, "train", str(data), "--task", "classification", "--training.loss", "logistic",
            "--output.directory", str(tmp_path / "r"))
    assert r.returncode != 0
    assert "logistic takes two classes" in r.stderr and "0, 1, 2" in r.stderr
    r = run(program, "train", str(data), "--task", "classification", "--model.outputs", "2",
            "--output.directory", str(tmp_path / "r"))
    assert r.returncode != 0 and "model.outputs = 2" in r.stderr
    r = run(program, "train", str(data), "--task", "classification", "--data.target_columns", "1,2",
            "--output.directory", str(tmp_path / "r"))
    assert r.returncode != 0 and "one target column" in r.stderr
    r = run(program, "train", str(data), "--task", "regression", "--data.target_columns", "1,x",
            "--output.directory", str(tmp_path / "r"))
    assert r.returncode != 0 and "'x' is not a column index" in r.stderr
    r = run(program, "train", str(data), "--task", "regression", "--data.target_columns", "1,-2",
            "--output.directory", str(tmp_path / "r"))
    assert r.returncode != 0 and "names column 1 again" in r.stderr
    r = run(program, "train", str(data), "--task", "regression", "--data.target_column", "7",
            "--output.directory", str(tmp_path / "r"))
    assert r.returncode != 0 and "data.target_column = 7" in r.stderr
    two = tmp_path / "two.csv"
    write_points(two, [[0.1 * i, 0.2, i % 2] for i in range(30)])
    r = run(program, "train", str(two), "--task", "classification", "--training.loss", "mse",
            "--output.directory", str(tmp_path / "r"))
    assert r.returncode != 0 and "logistic" in r.stderr
    r = run(program, "predict", "--run", str(tmp_path), "--data", str(data))
    assert r.returncode != 0 and "supervised.json" in r.stderr


def test_command_help_is_the_command_usage_not_kokkos(program):
    # Kokkos takes --help as its own option; the program answers it before Kokkos starts.
    r = run(program, "predict", "--help")
    assert r.returncode == 0, r.stderr
    assert "qgml predict --run RUN_DIR --data" in r.stdout
    assert "Kokkos command line" not in r.stdout and "qgml train" not in r.stdout
    r = run(program, "train", "-h")
    assert r.returncode == 0, r.stderr
    assert "qgml train --resume RUN_DIR" in r.stdout and "--task regression|classification" in r.stdout
    assert "data.target_column" in r.stdout  # the settings with their defaults
    assert "qgml predict" not in r.stdout
