"""qgml.QCMLRegressor and qgml.QCMLClassifier (bindings/python/qgml/supervised.py): scikit-learn's own
conformance suite at the defaults, predictions equal to the program's `qgml predict`, learning on
held-out points (two and three classes, softmax and one-vs-rest; several regression outputs), pickling,
pipelines and grid search, and qgml.predict / Run.predict."""

import os
import pickle
import subprocess

import numpy as np
import pytest

import qgml

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

# Small and fast, for the tests that are not about the defaults.
FAST = dict(N=4, epochs=60, batch_size=0, lr=0.05)

def regression_data(count, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.5, 1.5, size=(count, 2))
    y = np.sin(x[:, 0]) + 0.5 * x[:, 0] * x[:, 1]
    return x * [3.0, 0.5] + [10.0, -2.0], 40.0 + 8.0 * y


@pytest.mark.parametrize("estimator", [qgml.QCMLRegressor(), qgml.QCMLClassifier()], ids=lambda e: type(e).__name__)
def test_scikit_learns_check_estimator_passes_at_the_defaults(estimator):
    results = check_estimator(estimator, on_fail=None, on_skip=None)
    failed = [(r["check_name"], str(r["exception"])[:300]) for r in results if r["status"] == "failed"]
    assert not failed
    # Skipped only where the environment lacks something (array API support), never by the estimator.
    skipped = {r["check_name"] for r in results if r["status"] == "skipped"}
    assert skipped <= {"check_array_api_input"}, skipped
    assert sum(r["status"] == "passed" for r in results) >= 45


def test_regressor_learns_and_predicts_in_the_targets_units():
    x, y = regression_data(600, 1)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=0)
    model = qgml.QCMLRegressor(N=6, lr=0.05).fit(xtr, ytr)
    assert model.score(xte, yte) > 0.9
    assert model.model_.shape == (3, 6, 6)  # A_1, A_2 and B
    assert model.supervised_["task"] == "regression" and model.n_features_in_ == 2
    assert model.n_epochs_ >= 1 and len(model.history_["validation_r2"]) == model.n_epochs_
    # float32 points give the same predictions to float32 rounding of the inputs.
    assert np.allclose(model.predict(xte.astype(np.float32)), model.predict(xte), rtol=1e-4, atol=1e-3)


def test_classifier_with_string_labels_probabilities_and_decision_function():
    x, y = regression_data(500, 2)
    labels = np.where(y > 40, "high", "low")
    xtr, xte, ltr, lte = train_test_split(x, labels, test_size=0.25, random_state=0)
    clf = qgml.QCMLClassifier(N=4, lr=0.05).fit(xtr, ltr)
    assert list(clf.classes_) == ["high", "low"]
    assert clf.score(xte, lte) > 0.85
    p = clf.predict_proba(xte)
    assert p.shape == (len(xte), 2) and np.allclose(p.sum(axis=1), 1.0) and np.all((p >= 0) & (p <= 1))
    z = clf.decision_function(xte)
    assert np.array_equal(clf.predict(xte), clf.classes_[(z > 0).astype(int)])
    assert np.allclose(p[:, 1], 1 / (1 + np.exp(-z)))


def test_three_classes_softmax_and_one_versus_rest():
    from sklearn.datasets import load_wine

    x, y = load_wine(return_X_y=True)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
    # The default: one model with a target operator per class and the softmax loss (n_models = 1: one
    # run of the program).
    clf = qgml.QCMLClassifier(n_models=1).fit(xtr, ytr)
    assert list(clf.classes_) == [0, 1, 2] and len(clf.models_) == 1 and clf.multi_class_ == "softmax"
    assert clf.models_[0].shape[0] == 13 + 3
    assert clf.supervised_[0]["loss"] == "softmax" and clf.supervised_[0]["classes"] == [0, 1, 2]
    assert clf.score(xte, yte) > 0.9
    z, p = clf.decision_function(xte), clf.predict_proba(xte)
    assert z.shape == (len(xte), 3) and p.shape == (len(xte), 3)
    assert np.allclose(p.sum(axis=1), 1.0)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    assert np.allclose(p, e / e.sum(axis=1, keepdims=True))
    assert np.array_equal(clf.predict(xte), clf.classes_[np.argmax(z, axis=1)])
    # The probabilities are those of qgml predict's softmax.
    direct = qgml.predict(clf.models_[0], clf.supervised_[0], xte)
    assert direct.probability.shape == (len(xte), 3) and np.allclose(direct.probability, p, rtol=0, atol=1e-12)
    # One-vs-rest: one binary model per class, each with the classes 0 and 1.
    ovr = qgml.QCMLClassifier(multi_class="ovr", n_models=1).fit(xtr, ytr)
    assert len(ovr.models_) == 3 and ovr.multi_class_ == "ovr"
    assert ovr.score(xte, yte) > 0.9
    assert all(s["negative_class"] == 0 and s["positive_class"] == 1 for s in ovr.supervised_)
    assert np.allclose(ovr.predict_proba(xte).sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="multi_class"):
        qgml.QCMLClassifier(multi_class="multinomial").fit(xtr, ytr)


def test_regressor_with_several_outputs_trains_one_model():
    x, y = regression_data(400, 8)
    y2 = np.column_stack([y, 0.5 * (x[:, 0] - 10) ** 2 - 3])
    xtr, xte, ytr, yte = train_test_split(x, y2, test_size=0.25, random_state=0)
    model = qgml.QCMLRegressor(N=6, lr=0.05).fit(xtr, ytr)
    assert model.n_outputs_ == 2 and model.model_.shape == (4, 6, 6)
    assert model.supervised_["outputs"] == 2 and model.supervised_["target_columns"] == [2, 3]
    pred = model.predict(xte)
    assert pred.shape == (len(xte), 2)
    assert model.score(xte, yte) > 0.8
    # A column vector of targets predicts a column.
    one = qgml.QCMLRegressor(**FAST).fit(xtr, ytr[:, :1])
    assert one.n_outputs_ == 1 and one.predict(xte).shape == (len(xte), 1)


def test_one_class_is_refused():
    x, _ = regression_data(60, 3)
    with pytest.raises(ValueError, match="at least 2 classes"):
        qgml.QCMLClassifier(**FAST).fit(x, np.zeros(60))


def test_fitted_estimators_pickle_and_clone():
    x, y = regression_data(200, 4)
    model = qgml.QCMLRegressor(**FAST).fit(x, y)
    again = pickle.loads(pickle.dumps(model))
    assert np.array_equal(again.predict(x), model.predict(x))
    assert np.array_equal(again.model_.matrices, model.model_.matrices)
    assert clone(model).get_params() == model.get_params()


def test_pipeline_and_grid_search():
    x, y = regression_data(300, 5)
    search = GridSearchCV(make_pipeline(StandardScaler(), qgml.QCMLRegressor(**FAST)),
                          {"qcmlregressor__N": [3, 5]}, cv=3)
    search.fit(x, y)
    assert search.best_params_["qcmlregressor__N"] in (3, 5)
    assert search.best_score_ > 0.5


def test_settings_reach_the_program_and_the_run_directory_is_kept_when_asked(tmp_path):
    x, y = regression_data(150, 6)
    model = qgml.QCMLRegressor(N=3, epochs=7, patience=0, validation_fraction=0, output_directory=str(tmp_path),
                               settings={"training.schedule": "cosine"}).fit(x, y)
    assert model.n_epochs_ == 7
    assert model.run_dir_ is not None and os.path.isdir(model.run_dir_)
    with open(os.path.join(model.run_dir_, "config.yaml")) as f:
        config = f.read()
    assert "cosine" in config and "regression" in config
    with pytest.raises(ValueError, match="training.lr"):
        qgml.QCMLRegressor(N=3, lr=-1.0).fit(x, y)


def test_run_predict_equals_the_programs_predict(tmp_path, program):
    x, y = regression_data(200, 7)
    for task, target in (("regression", y), ("classification", np.where(y > 40, 5.0, -1.0))):
        run = qgml.train(np.column_stack([x, target]), {"task": task, "model.N": 4, "training.epochs": 20,
                                                        "training.lr": 0.05, "output.plots": False,
                                                        "output.directory": str(tmp_path / task)})
        csv = tmp_path / f"{task}-points.csv"
        np.savetxt(csv, x, delimiter=",", fmt="%.17g")
        out = tmp_path / f"{task}-predictions.csv"
        subprocess.run([program, "predict", "--run", run.run_dir, "--data", str(csv), "--output", str(out),
                        "--quiet"], check=True)
        expected = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)
        p = run.predict(x)
        assert p.failed == 0
        if task == "regression":
            assert p.probability is None
            assert np.array_equal(p.prediction, expected[:, 0])
        else:
            assert np.array_equal(p.probability, expected[:, 0])
            assert np.array_equal(p.prediction, expected[:, 1])
            assert set(np.unique(p.prediction)) <= {5.0, -1.0}
        # qgml.predict from the model and the supervised.json's text: the same.
        with open(os.path.join(run.run_dir, "supervised.json")) as f:
            again = qgml.predict(run.model, f.read(), x)
        assert np.array_equal(again.prediction, p.prediction)


def test_predict_refuses_an_unsupervised_run_and_wrong_features(tmp_path):
    rng = np.random.default_rng(8)
    x = rng.normal(size=(80, 3))
    run = qgml.train(x, {"model.N": 3, "training.epochs": 2, "output.plots": False,
                         "output.directory": str(tmp_path)})
    with pytest.raises(OSError, match="supervised.json"):
        run.predict(x)
    xs, ys = regression_data(80, 9)
    model = qgml.QCMLRegressor(**FAST).fit(xs, ys)
    with pytest.raises(ValueError, match="X has 3 features, but QCMLRegressor is expecting 2 features"):
        model.predict(x)


def test_a_failed_fit_leaves_the_estimator_unfitted():
    from sklearn.exceptions import NotFittedError

    x, y = regression_data(50, 10)
    model = qgml.QCMLRegressor(N=3, lr=-1.0)
    with pytest.raises(ValueError, match="training.lr"):
        model.fit(x, y)
    with pytest.raises(NotFittedError):
        model.predict(x)


def test_points_without_a_prediction_warn(monkeypatch):
    import qgml.supervised as supervised

    x, y = regression_data(60, 11)
    model = qgml.QCMLRegressor(**FAST).fit(x, y)
    original = supervised._qgml.predict

    def two_failed(*args):  # as if two eigensolves had failed
        original(*args)
        return 2

    monkeypatch.setattr(supervised._qgml, "predict", two_failed)
    with pytest.warns(RuntimeWarning, match="2 of 60 points have no prediction"):
        model.predict(x)


def test_an_ensemble_averages_its_members_which_are_single_runs_with_raised_seeds():
    x, y = regression_data(300, 12)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=0)
    # Regression: member m is the single model with model.seed and training.seed raised by m.
    ensemble = qgml.QCMLRegressor(**FAST, n_models=3).fit(xtr, ytr)
    assert ensemble.n_models_ == 3 and len(ensemble.ensemble_) == 3
    assert np.array_equal(ensemble.model_.matrices, ensemble.ensemble_[0][0].matrices)
    members = [qgml.QCMLRegressor(**FAST, n_models=1, model_seed=1 + m, seed=7 + m).fit(xtr, ytr) for m in range(3)]
    for m in range(3):
        assert np.array_equal(ensemble.ensemble_[m][0].matrices, members[m].model_.matrices)
    assert not np.array_equal(members[0].model_.matrices, members[1].model_.matrices)
    assert np.allclose(ensemble.predict(xte), np.mean([r.predict(xte) for r in members], axis=0), rtol=0,
                       atol=1e-12)
    # The default is the ensemble of 3; explicit seeds are where the members start.
    default = qgml.QCMLRegressor(**FAST).fit(xtr, ytr)
    assert default.n_models_ == 3 and np.array_equal(default.predict(xte), ensemble.predict(xte))
    shifted = qgml.QCMLRegressor(**FAST, n_models=2, model_seed=2, seed=8).fit(xtr, ytr)
    assert np.array_equal(shifted.ensemble_[0][0].matrices, ensemble.ensemble_[1][0].matrices)
    # Classification, three classes: the members' logits averaged, the probabilities their softmax.
    from sklearn.datasets import load_wine

    xw, yw = load_wine(return_X_y=True)
    xw = StandardScaler().fit_transform(xw)
    for multi_class, per_member in (("softmax", 1), ("ovr", 3)):
        clf = qgml.QCMLClassifier(**FAST, n_models=2, multi_class=multi_class).fit(xw, yw)
        assert clf.n_models_ == 2 and len(clf.models_) == 2 * per_member
        one = [qgml.QCMLClassifier(**FAST, n_models=1, multi_class=multi_class, model_seed=1 + m,
                                   seed=7 + m).fit(xw, yw) for m in range(2)]
        z = np.mean([c.decision_function(xw) for c in one], axis=0)
        assert np.allclose(clf.decision_function(xw), z, rtol=0, atol=1e-12)
        assert np.array_equal(clf.predict(xw), clf.classes_[np.argmax(z, axis=1)])
        assert np.allclose(clf.predict_proba(xw).sum(axis=1), 1.0)
    # Two classes: the mean logit, P = sigmoid of it.
    labels = (y > 40).astype(int)
    clf = qgml.QCMLClassifier(**FAST, n_models=2).fit(x, labels)
    one = [qgml.QCMLClassifier(**FAST, n_models=1, model_seed=1 + m, seed=7 + m).fit(x, labels) for m in range(2)]
    z = np.mean([c.decision_function(x) for c in one], axis=0)
    assert np.allclose(clf.decision_function(x), z, rtol=0, atol=1e-12)
    assert np.allclose(clf.predict_proba(x)[:, 1], 1 / (1 + np.exp(-z)))
    for bad in (0, -1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="n_models"):
            qgml.QCMLRegressor(**FAST, n_models=bad).fit(xtr, ytr)
