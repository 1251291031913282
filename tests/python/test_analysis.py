"""evaluate, quantum_metric, dimension: the fuzzy sphere's closed forms (docs/math.md 7), NumPy without
copies, float32, and bad input."""

import numpy as np
import pytest

import qgml
from conftest import sphere_points, spin_matrices
from qgml._runtime import make_settings


@pytest.fixture(params=[2, 3])
def fuzzy(request):
    """A_k = c J_k for spin j (N = 2j + 1) with c = 1/(j + w), w = 0.25 (docs/math.md 7)."""
    j2 = request.param
    j, w = j2 / 2, 0.25
    c = 1 / (j + w)
    return qgml.MatrixConfiguration(c * spin_matrices(j2)), j, c, w


def test_evaluate_fuzzy_sphere(fuzzy):
    config, j, c, w = fuzzy
    x = sphere_points(200, seed=1, radius=1.3)
    r = np.linalg.norm(x, axis=1)
    ev = qgml.evaluate(config, x, w=w)
    np.testing.assert_allclose(ev.xbar, c * j * x / r[:, None], atol=1e-10)
    np.testing.assert_allclose(ev.sigma2, c * c * j, atol=1e-10)
    d2 = (r - c * j) ** 2
    np.testing.assert_allclose(ev.energy, (d2 + c * c * j) / 2, atol=1e-10)  # 2 E_0 = d^2 + sigma^2
    assert ev.loss == pytest.approx(np.mean(d2 + w * c * c * j), abs=1e-10)
    assert ev.xbar.dtype == np.float64


def test_evaluate_default_w_is_that_of_qgml_eval(fuzzy):
    """w left out is the setting training.w's default (0.5), as for `qgml eval`, not 0.25."""
    config, j, c, _ = fuzzy
    x = sphere_points(50, seed=3, radius=1.1)
    d2 = (np.linalg.norm(x, axis=1) - c * j) ** 2
    assert float(make_settings().get("training.w")) == 0.5
    assert qgml.evaluate(config, x).loss == pytest.approx(np.mean(d2 + 0.5 * c * c * j), abs=1e-10)
    assert config.evaluate(x).loss == pytest.approx(qgml.evaluate(config, x, w=0.5).loss, abs=0)


def test_evaluate_float32(fuzzy):
    config, j, c, w = fuzzy
    x = sphere_points(100, seed=2).astype(np.float32)
    ev = config.evaluate(x, w=w)
    assert ev.xbar.dtype == np.float32 and ev.sigma2.dtype == np.float32
    np.testing.assert_allclose(ev.xbar, c * j * x, atol=1e-5)


def test_points_are_used_in_place():
    from qgml._runtime import as_points

    x = sphere_points(10)
    assert as_points(x) is x  # C-contiguous float64: handed to the library as it is
    x32 = x.astype(np.float32)
    assert as_points(x32) is x32
    assert as_points(np.asfortranarray(x)) is not x


def test_non_contiguous_and_integer_input_give_the_same_result(fuzzy):
    config = fuzzy[0]
    x = sphere_points(50, seed=3)
    wide = np.zeros((50, 6))
    wide[:, ::2] = x
    view = wide[:, ::2]  # strided
    assert not view.flags.c_contiguous
    np.testing.assert_array_equal(qgml.evaluate(config, view).xbar, qgml.evaluate(config, x).xbar)
    np.testing.assert_array_equal(qgml.evaluate(config, np.asfortranarray(x)).sigma2, qgml.evaluate(config, x).sigma2)
    ints = np.array([[1, 0, 0], [0, 2, 0]])
    np.testing.assert_array_equal(qgml.evaluate(config, ints).xbar, qgml.evaluate(config, ints.astype(float)).xbar)
    np.testing.assert_array_equal(qgml.evaluate(config, x.tolist()).energy, qgml.evaluate(config, x).energy)


def test_quantum_metric_fuzzy_sphere(fuzzy):
    config, j, c, _ = fuzzy
    x = sphere_points(100, seed=4, radius=0.7)
    r = np.linalg.norm(x, axis=1)
    m = qgml.quantum_metric(config, x)
    assert m.metric.shape == (100, 3, 3) and m.eigenvalues.shape == (100, 3)
    expected = np.stack([np.zeros_like(r), c * j / r, c * j / r], axis=1)  # ascending
    np.testing.assert_allclose(m.eigenvalues, expected, atol=1e-8)
    np.testing.assert_allclose(m.metric, m.metric.transpose(0, 2, 1), atol=1e-12)
    np.testing.assert_allclose(np.linalg.eigvalsh(m.metric), m.eigenvalues, atol=1e-8)


def test_dimension_fuzzy_sphere(fuzzy):
    config = fuzzy[0]
    x = sphere_points(300, seed=5)
    est = qgml.dimension(config, x)
    assert est.dimension == 2 and not est.uncertain
    assert est.per_point.shape == (300,) and np.all(est.per_point == 2)
    cov = config.dimension(x, settings={"analysis.metric": "covariance"})
    assert cov.dimension == 2


@pytest.mark.parametrize("bad", [np.zeros(3), np.zeros((4, 3, 1)), np.zeros((5, 2))])
def test_wrong_shapes(fuzzy, bad):
    with pytest.raises(ValueError):
        qgml.evaluate(fuzzy[0], bad)


def test_wrong_dimension_has_the_library_message(fuzzy):
    with pytest.raises(ValueError, match="3"):
        qgml.quantum_metric(fuzzy[0], np.zeros((4, 2)))


def test_complex_and_text_points_are_refused(fuzzy):
    with pytest.raises(TypeError):
        qgml.evaluate(fuzzy[0], np.zeros((4, 3), dtype=complex))
    with pytest.raises(TypeError):
        qgml.evaluate(fuzzy[0], np.array([["a", "b", "c"]]))


def test_unknown_analysis_setting(fuzzy):
    with pytest.raises(ValueError, match="analysis.metrik"):
        qgml.dimension(fuzzy[0], sphere_points(10), settings={"analysis.metrik": "quantum"})
