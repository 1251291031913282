"""Shared fixtures of the Python package's tests (run by .ci/run: pytest tests/python)."""

import os
import shutil

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUZZY_SPHERE_YAML = os.path.join(REPO, "examples", "configs", "fuzzy_sphere.yaml")


def spin_matrices(j2):
    """The spin-j matrices J_x, J_y, J_z (N = 2j + 1 = j2 + 1) as a complex (3, N, N) array."""
    j = j2 / 2
    m = j - np.arange(j2 + 1)
    jp = np.zeros((j2 + 1, j2 + 1), dtype=complex)
    for k in range(1, j2 + 1):
        jp[k - 1, k] = np.sqrt(j * (j + 1) - m[k] * (m[k] + 1))
    jx = (jp + jp.conj().T) / 2
    jy = (jp - jp.conj().T) / 2j
    return np.array([jx, jy, np.diag(m).astype(complex)])


def sphere_points(t, seed=0, radius=1.0):
    x = np.random.default_rng(seed).normal(size=(t, 3))
    return radius * x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture
def program():
    """The `qgml` program of the same build (QGML_PROGRAM, set by .ci/run), else the test is skipped."""
    path = os.environ.get("QGML_PROGRAM") or shutil.which("qgml")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("the qgml program is not available: set QGML_PROGRAM to the built apps/qgml/qgml")
    return path
