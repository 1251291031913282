"""QGMLDimension against scikit-dimension's estimator interface and scikit-learn's conventions."""

import inspect

import numpy as np
import pytest

import qgml
from conftest import sphere_points

FAST = {"epochs": 30, "batch_size": 200, "N": 4}


def test_fit_on_the_sphere():
    x = sphere_points(600, seed=1)
    est = qgml.QGMLDimension(**FAST)
    assert est.fit(x) is est
    assert est.dimension_ == 2 and est.n_features_in_ == 3
    assert est.dimension_pw_.shape == (600,) and np.mean(est.dimension_pw_ == 2) > 0.9
    assert est.transform() == 2 and est.transform(x) == 2
    assert isinstance(est.model_, qgml.MatrixConfiguration) and est.run_dir_ is None
    assert qgml.QGMLDimension(**FAST).fit_transform(x) == 2
    assert np.array_equal(est.transform_pw(), est.dimension_pw_)
    # The error bar (docs/dimension.md, "Error bars"): > 90 % of the points read 2, so every resample does.
    assert est.dimension_interval_ == (2, 2) and est.dimension_error_ == 0.0
    # The dimension per scale (docs/dimension.md): the default neighbour counts, 2 among the nearest.
    assert sorted(est.dimension_per_scale_) == [10, 20, 50, 100, 200, 400]
    assert est.dimension_per_scale_[10] == 2 and est.dimension_per_scale_[50] == 2
    assert est.scale_verdict_.startswith(("the same at every scale", "scale-dependent"))


def test_dimension_per_scale_setting():
    est = qgml.QGMLDimension(settings={"analysis.spread_scales": "5,40"}, **FAST).fit(sphere_points(300, seed=4))
    assert sorted(est.dimension_per_scale_) == [5, 40]
    est = qgml.QGMLDimension(settings={"analysis.spread_scales": "none"}, **FAST).fit(sphere_points(300, seed=4))
    assert est.dimension_per_scale_ is None and est.scale_verdict_ is None
    with pytest.raises(ValueError, match="analysis.spread_scales"):
        qgml.QGMLDimension(settings={"analysis.spread_scales": "40,5"}, **FAST).fit(sphere_points(50))


def test_defaults_are_the_programs():
    est = qgml.QGMLDimension()
    params = est.get_params()
    assert all(v is None for k, v in params.items() if k != "quiet")  # None: the program's default
    s = est._settings("out")
    assert set(s) == {"analysis.enabled", "output.directory", "output.plots"}


def test_parameters_become_settings():
    est = qgml.QGMLDimension(N=4, w=0.1, metric="covariance", settings={"training.schedule": "cosine"})
    s = est._settings("out")
    assert s["model.N"] == 4 and s["training.w"] == 0.1 and s["analysis.metric"] == "covariance"
    assert s["training.schedule"] == "cosine"
    with pytest.raises(ValueError, match="analysis.metric"):
        qgml.QGMLDimension(metric="euclid", **FAST).fit(sphere_points(50))


def test_output_directory_keeps_the_run(tmp_path):
    est = qgml.QGMLDimension(output_directory=str(tmp_path), **FAST).fit(sphere_points(300, seed=2))
    run = qgml.Run.open(est.run_dir_)
    assert run.dimension == est.dimension_
    assert run.dimension_interval == est.dimension_interval_ and run.dimension_error == est.dimension_error_
    assert run.summary["resamples"] == 200
    np.testing.assert_array_equal(run.per_point_dimension, est.dimension_pw_)


def test_fit_pw_smooth():
    x = sphere_points(300, seed=3)
    pw, smooth = qgml.QGMLDimension(**FAST).fit_transform_pw(x, smooth=True, n_neighbors=10)
    assert pw.shape == smooth.shape == (300,)


def test_bad_input():
    with pytest.raises(ValueError):
        qgml.QGMLDimension(**FAST).fit(np.zeros(5))
    x = sphere_points(50)
    x[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        qgml.QGMLDimension(**FAST).fit(x)
    est = qgml.QGMLDimension(**FAST)
    with pytest.raises(Exception, match="not fitted"):
        est.transform()
    est.fit(sphere_points(100))
    with pytest.raises(ValueError, match="features"):
        est.transform(np.zeros((4, 2)))


def test_sklearn_conventions():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.utils import estimator_checks as checks

    est = qgml.QGMLDimension(N=3, settings={"training.lr": 0.02})
    assert isinstance(est, sklearn.base.BaseEstimator)
    assert clone(est).get_params() == est.get_params()
    assert est.set_params(w=0.3) is est and est.w == 0.3
    with pytest.raises(ValueError):
        est.set_params(not_a_parameter=1)
    name = type(est).__name__
    checks.check_no_attributes_set_in_init(name, qgml.QGMLDimension())
    checks.check_parameters_default_constructible(name, qgml.QGMLDimension())
    checks.check_get_params_invariance(name, qgml.QGMLDimension())
    checks.check_set_params(name, qgml.QGMLDimension())
    assert "QGMLDimension(N=3" in repr(est)


def test_skdim_interface():
    skdim = pytest.importorskip("skdim")
    reference = skdim.id.TwoNN
    for method in ("fit", "transform", "fit_transform", "fit_pw", "transform_pw", "fit_transform_pw",
                   "get_params", "set_params"):
        assert callable(getattr(qgml.QGMLDimension, method)), method
        ours = list(inspect.signature(getattr(qgml.QGMLDimension, method)).parameters)
        theirs = list(inspect.signature(getattr(reference, method)).parameters)
        assert ours[:len(theirs)] == theirs, (method, ours, theirs)
    # the usage pattern of skdim's estimators, on one of its data sets
    x = skdim.datasets.hyperSphere(n=500, d=3, random_state=0)  # the 3-sphere in R^4
    estimators = [skdim.id.TwoNN(), qgml.QGMLDimension(**FAST)]
    dims = [e.fit(x).dimension_ for e in estimators]
    assert dims[1] == 3 and round(dims[0]) == 3
    assert qgml.QGMLDimension(**FAST).fit_transform(x) == estimators[1].dimension_


# transform() returns the dimension of the fit, a number, as scikit-dimension's estimators do: scikit-learn
# takes the estimator for a transformer and these checks expect an array with a row per point.
NOT_A_ROW_TRANSFORM = {name: "transform returns the dimension (a number), not a row per point"
                       for name in ("check_transformer_data_not_an_array", "check_transformer_general",
                                    "check_methods_sample_order_invariance", "check_methods_subset_invariance")}


def test_check_estimator_passes_as_far_as_a_dimension_estimator_allows():
    pytest.importorskip("sklearn")
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(qgml.QGMLDimension(**FAST), expected_failed_checks=NOT_A_ROW_TRANSFORM, on_fail=None,
                              on_skip=None)
    failed = [(r["check_name"], str(r["exception"])[:300]) for r in results if r["status"] == "failed"]
    assert not failed
    assert {r["check_name"] for r in results if r["status"] == "xfail"} == set(NOT_A_ROW_TRANSFORM)
    assert sum(r["status"] == "passed" for r in results) >= 35
