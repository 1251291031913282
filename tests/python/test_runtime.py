"""Kokkos' lifetime: started on first use, finalised at exit with objects still alive, and the objects
released by an explicit finalize()."""

import os
import subprocess
import sys
import textwrap

import qgml


def run_script(code, tmp_path):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(tmp_path)], capture_output=True,
                       text=True, timeout=120,
                       env=dict(os.environ, OMP_PROC_BIND="false", OMP_NUM_THREADS="2"))
    return r


def test_exit_with_live_objects_finalizes_cleanly(tmp_path):
    r = run_script("""
        import sys, numpy as np, qgml
        x = np.random.default_rng(0).normal(size=(100, 3))
        run = qgml.train(x, {"training.epochs": 2, "output.directory": sys.argv[1], "output.plots": False})
        model = run.model
        c = qgml.MatrixConfiguration(model.matrices)
        print("ok", c.N == model.N)
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "ok True"
    assert "error" not in r.stderr.lower() and "Kokkos" not in r.stderr.replace("Kokkos::OpenMP::initialize WARNING", "")


def test_finalize_releases_objects(tmp_path):
    r = run_script("""
        import numpy as np, qgml
        c = qgml.MatrixConfiguration(np.eye(2, dtype=complex)[None])
        qgml.finalize()
        try:
            c.N
        except RuntimeError as e:
            print("released" if "finalize" in str(e) else e)
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "released"


def test_initialize_once():
    qgml.MatrixConfiguration([[[1.0]]])  # Kokkos is running now
    assert qgml.initialize() is False  # a second call starts nothing
    assert "Kokkos" in qgml.version()
