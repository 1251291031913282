"""train / Trainer / Run: settings, run directories, resume, stop callbacks, Ctrl-C."""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import qgml
from conftest import FUZZY_SPHERE_YAML, sphere_points

SMALL = {"training.epochs": 6, "training.batch_size": 100, "training.checkpoint_every": 2, "output.plots": False}


def small(tmp_path, **extra):
    s = dict(SMALL, **{"output.directory": str(tmp_path)})
    s.update(extra)
    return s


def test_train_in_memory(tmp_path):
    x = sphere_points(400, seed=1)
    run = qgml.train(x, small(tmp_path))
    assert os.path.dirname(run.run_dir) == str(tmp_path)
    h = run.history
    assert set(h) == {"loss", "reconstruction", "fluctuation"}
    assert all(len(v) == 6 for v in h.values())
    assert np.all(np.isfinite(h["loss"])) and h["loss"][-1] < h["loss"][0]
    assert run.dimension in (1, 2, 3) and isinstance(run.dimension_uncertain, bool)
    assert run.per_point_dimension.shape == (400,)
    assert run.model.shape == (3, run.model.N, run.model.N)
    assert not run.interrupted
    table = run.history_table()
    np.testing.assert_array_equal(table["total"], h["loss"])
    np.testing.assert_array_equal(table["epoch"], np.arange(1, 7))


def test_keyword_shorthand_and_nested_settings(tmp_path):
    x = sphere_points(200, seed=2)
    a = qgml.train(x, {"output": {"directory": str(tmp_path / "a"), "plots": False}}, training__epochs=3,
                   training__batch_size=100, model__N=3)
    b = qgml.Trainer(small(tmp_path / "b", **{"training.epochs": 3, "model.N": 3})).train(x)
    np.testing.assert_array_equal(a.history["loss"], b.history["loss"])
    assert a.model.N == 3


def test_trainer_settings_get_set(tmp_path):
    t = qgml.Trainer()
    assert t.get("training.epochs") == "2000"  # the program's default
    t.set("training.epochs", 5).set("training.lr", 0.02).set("data.standardize", False)
    assert t.get("training.epochs") == "5" and float(t.get("training.lr")) == 0.02
    assert t.get("data.standardize") == "false"


def test_trainer_from_yaml_with_overrides(tmp_path):
    t = qgml.Trainer(FUZZY_SPHERE_YAML, {"training.epochs": 3, "output.directory": str(tmp_path)})
    assert t.get("model.N") == "3" and t.get("training.w") == "0.25"
    run = t.train()  # the generator of the YAML file
    assert len(run.history["loss"]) == 3


def test_float32_points(tmp_path):
    run = qgml.train(sphere_points(200, seed=3).astype(np.float32), small(tmp_path, **{"model.precision": "float"}))
    assert run.model.N >= 2 and np.all(np.isfinite(run.history["loss"]))


def test_unknown_setting_names_the_key():
    with pytest.raises(ValueError, match="training.epoch"):
        qgml.Trainer({"training.epoch": 3})


def test_bad_value_names_the_key():
    with pytest.raises(ValueError, match="training.epochs"):
        qgml.Trainer({"training.epochs": "many"})
    with pytest.raises(ValueError, match="model.init"):
        qgml.Trainer().set("model.init", "random")


def test_settings_must_be_a_mapping():
    with pytest.raises(TypeError):
        qgml.Trainer(["training.epochs", 3])


def test_missing_yaml_is_an_oserror(tmp_path):
    with pytest.raises(OSError):
        qgml.Trainer(str(tmp_path / "missing.yaml"))


def test_bad_points(tmp_path):
    with pytest.raises(ValueError, match="shape"):
        qgml.train(np.zeros(10), small(tmp_path))
    x = sphere_points(100)
    x[3, 1] = np.nan
    with pytest.raises((ValueError, FloatingPointError)):
        qgml.train(x, small(tmp_path))


def test_run_open_and_model_round_trip(tmp_path):
    run = qgml.train(sphere_points(200, seed=4), small(tmp_path))
    again = qgml.Run.open(run.run_dir)
    np.testing.assert_array_equal(again.history["loss"], run.history["loss"])
    np.testing.assert_array_equal(again.model.matrices, run.model.matrices)
    saved = qgml.MatrixConfiguration.load(os.path.join(run.run_dir, "final_matrices.npy"))
    np.testing.assert_array_equal(saved.matrices, run.model.matrices)
    assert again.dimension == run.dimension
    with pytest.raises(OSError):
        qgml.Run.open(tmp_path / "not-a-run")


def test_stop_callback_interrupts_and_the_run_resumes(tmp_path):
    x = sphere_points(400, seed=5)
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 9  # 4 batches per epoch: stops in epoch 3

    run = qgml.train(x, small(tmp_path), stop=stop)
    assert run.interrupted
    done = len(run.history["loss"])
    assert 1 <= done < 6
    resumed = run.resume(x)
    assert not resumed.interrupted and resumed.run_dir == run.run_dir
    assert len(resumed.history["loss"]) == 6
    # the same history as an uninterrupted run
    full = qgml.train(x, small(tmp_path / "full"))
    np.testing.assert_array_equal(resumed.history["loss"], full.history["loss"])


def test_exception_in_stop_callback_propagates_with_the_run_dir(tmp_path):
    def stop():
        raise ZeroDivisionError("from the callback")

    with pytest.raises(ZeroDivisionError, match="from the callback") as info:
        qgml.train(sphere_points(200, seed=6), small(tmp_path), stop=stop)
    assert os.path.isdir(info.value.run_dir)


def test_resume_with_other_points_is_refused(tmp_path):
    x = sphere_points(200, seed=7)
    run = qgml.train(x, small(tmp_path), stop=lambda: True)
    with pytest.raises(ValueError):
        qgml.resume(run.run_dir, sphere_points(200, seed=8))


CTRL_C_SCRIPT = textwrap.dedent("""
    import faulthandler, signal, sys, numpy as np, qgml
    faulthandler.register(signal.SIGUSR1)  # Python stacks on stderr if the test finds the process hung
    # Python's own Ctrl-C handler, as an interactive session has it: a process started with SIGINT ignored
    # (a background job of a non-interactive shell, nohup) inherits SIG_IGN, and Python then installs none.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    x = np.random.default_rng(0).normal(size=(2000, 3))
    print("training", flush=True)
    try:
        qgml.train(x, {"training.epochs": 1000000, "training.batch_size": 100, "training.early_stop": 0,
                       "training.checkpoint_every": 1, "output.directory": sys.argv[1], "output.plots": False})
    except KeyboardInterrupt as e:
        print("KeyboardInterrupt", e.run_dir, flush=True)
        sys.exit(0)
    sys.exit(3)
""")


def hung_process_stacks(proc):
    """The Python stacks (on stderr, through faulthandler) and the native stacks (gdb, where installed) of a
    child that did not exit, then kills it: what a failure report needs to find the hang."""
    proc.send_signal(signal.SIGUSR1)
    time.sleep(1)
    report = "gdb not installed: no native stacks"
    gdb = shutil.which("gdb")
    if gdb:
        try:
            r = subprocess.run([gdb, "-p", str(proc.pid), "-batch", "-ex", "thread apply all bt"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
            report = r.stdout[-20000:]
        except subprocess.TimeoutExpired:
            report = "gdb timed out"
    proc.kill()
    proc.communicate()
    return report


def test_ctrl_c_raises_keyboard_interrupt_and_the_run_resumes(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C_SCRIPT, str(tmp_path)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "training"
    def latest_epoch():
        """The epoch of the newest checkpoint (LATEST; older epoch directories are rotated away)."""
        for d in os.listdir(tmp_path):
            try:
                with open(os.path.join(tmp_path, d, "checkpoints", "LATEST")) as f:
                    return int(f.read().strip().split("-")[1])
            except (OSError, IndexError, ValueError):
                pass
        return 0

    deadline = time.time() + 60
    while time.time() < deadline and latest_epoch() < 2:  # wait for a checkpoint of epoch 2 or later
        time.sleep(0.1)
    assert latest_epoch() >= 2, "no checkpoint of epoch 2 within 60 s"
    proc.send_signal(signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("no exit within 60 s of SIGINT (training stops after the current batch); its native "
                    "stacks:\n" + hung_process_stacks(proc))
    assert proc.returncode == 0, out
    # Kokkos may print its own warnings (OMP_PROC_BIND unset) on stdout: only the script's line counts.
    (line,) = [l for l in out.splitlines() if l.startswith("KeyboardInterrupt")]
    word, run_dir = line.split()
    assert word == "KeyboardInterrupt" and os.path.isdir(run_dir)
    x = np.random.default_rng(0).normal(size=(2000, 3))
    before = len(qgml.Run.open(run_dir).history["loss"])
    assert before >= 2
    calls = []
    resumed = qgml.resume(run_dir, x, stop=lambda: calls.append(1) or len(calls) > 40)
    assert resumed.interrupted and len(resumed.history["loss"]) > before


def test_quiet_training_prints_nothing(tmp_path, capfd):
    qgml.train(sphere_points(200, seed=9), small(tmp_path))
    out, err = capfd.readouterr()
    assert out == "" and "qgml" not in err
