"""The same settings and seeds give the same loss history from Python as from the `qgml` program."""

import csv
import json
import os
import subprocess

import numpy as np
import pytest

import qgml
from conftest import FUZZY_SPHERE_YAML


def history_rows(run_dir):
    """history.csv without the timing columns (seconds, points_per_second)."""
    with open(os.path.join(run_dir, "history.csv"), newline="") as f:
        rows = list(csv.reader(f))
    keep = [i for i, name in enumerate(rows[0]) if name not in ("seconds", "points_per_second")]
    return [[r[i] for i in keep] for r in rows]


def program_run(program, out, *args):
    r = subprocess.run([program, "train", *args, "--output.directory", str(out), "--output.plots", "false",
                        "--quiet", "--kokkos-disable-warnings"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    (run_dir,) = [os.path.join(out, d) for d in os.listdir(out)]
    return run_dir


def test_same_history_as_the_program_from_a_config_file(program, tmp_path):
    run_dir = program_run(program, tmp_path / "program", FUZZY_SPHERE_YAML, "--training.epochs", "12")
    run = qgml.train(None, FUZZY_SPHERE_YAML, training__epochs=12, output__directory=str(tmp_path / "python"),
                     output__plots=False)
    assert history_rows(run.run_dir) == history_rows(run_dir)
    with open(os.path.join(run_dir, "history.json")) as f:
        program_loss = np.array([r["total"] for r in json.load(f)])
    np.testing.assert_array_equal(run.history["loss"], program_loss)
    np.testing.assert_array_equal(run.model.matrices, np.load(os.path.join(run_dir, "final_matrices.npy")))
    assert run.dimension == qgml.Run.open(run_dir).dimension


@pytest.mark.parametrize("standardize", ["auto", "true"])
def test_points_in_memory_train_as_the_same_points_in_a_file(program, tmp_path, standardize):
    data = tmp_path / "x.npy"
    r = subprocess.run([program, "generate", "--data.generator", "swiss_roll", "--data.points", "600",
                        "--out", str(data), "--kokkos-disable-warnings"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    settings = {"training.epochs": 8, "training.batch_size": 128, "data.standardize": standardize,
                "output.directory": str(tmp_path / "python"), "output.plots": False}
    run_dir = program_run(program, tmp_path / "program", str(data), "--training.epochs", "8",
                          "--training.batch_size", "128", "--data.standardize", standardize)
    run = qgml.train(np.load(data), settings)
    assert history_rows(run.run_dir) == history_rows(run_dir)
    np.testing.assert_array_equal(np.loadtxt(os.path.join(run.run_dir, "per_point.csv"), delimiter=",", skiprows=1),
                                  np.loadtxt(os.path.join(run_dir, "per_point.csv"), delimiter=",", skiprows=1))


def test_a_program_run_opens_in_python(program, tmp_path):
    run_dir = program_run(program, tmp_path, FUZZY_SPHERE_YAML, "--training.epochs", "5")
    run = qgml.Run.open(run_dir)
    assert run.run_dir == run_dir or os.path.samefile(run.run_dir, run_dir)
    assert len(run.history["loss"]) == 5
    assert run.model.shape == (3, 3, 3)
    assert run.dimension == run.summary["mode"]
    np.testing.assert_array_equal(run.per_point_dimension,
                                  np.loadtxt(os.path.join(run_dir, "per_point.csv"), delimiter=",", skiprows=1,
                                             usecols=-3).astype(int))
