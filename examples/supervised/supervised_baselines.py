"""The scikit-learn models of supervised_examples.py: a constant baseline and two models per task, each
tuned by 5-fold GridSearchCV on the training split, fitted, timed and scored on the test split."""
import time

import numpy as np
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.svm import SVC

from supervised_metrics import classification_metrics, regression_metrics
from supervised_settings import CV_SEED


def run_sklearn(task, Xtr, Xte, ytr, yte):
    results = []
    if task == "regression":
        cv = KFold(5, shuffle=True, random_state=CV_SEED)
        models = [
            ("mean of training targets", DummyRegressor(strategy="mean"), None),
            ("Ridge", Ridge(), {"alpha": list(np.logspace(-3, 3, 13))}),
            ("KernelRidge (RBF)", KernelRidge(kernel="rbf"),
             {"alpha": [1e-3, 1e-2, 1e-1, 1.0, 10.0], "gamma": list(np.logspace(-4, 0, 9))}),
        ]
        scoring = "neg_mean_squared_error"
    else:
        cv = StratifiedKFold(5, shuffle=True, random_state=CV_SEED)
        models = [
            ("majority class", DummyClassifier(strategy="prior"), None),
            ("LogisticRegression", LogisticRegression(max_iter=10000), {"C": list(np.logspace(-3, 3, 13))}),
            ("SVC (RBF)", SVC(kernel="rbf"),
             {"C": list(np.logspace(-1, 3, 5)), "gamma": list(np.logspace(-4, 0, 5))}),
        ]
        scoring = "roc_auc"
    for name, est, grid in models:
        t0 = time.perf_counter()
        if grid is None:
            model = est.fit(Xtr, ytr)
            params = {}
        else:
            search = GridSearchCV(est, grid, cv=cv, scoring=scoring, n_jobs=1).fit(Xtr, ytr)
            model = search.best_estimator_
            params = {k: float(v) for k, v in search.best_params_.items()}
        fit_s = time.perf_counter() - t0
        if task == "regression":
            metrics = regression_metrics(yte, model.predict(Xte))
            predictions = model.predict(Xte)
        else:
            if hasattr(model, "decision_function"):
                score = model.decision_function(Xte)
            else:
                score = model.predict_proba(Xte)[:, 1]
            metrics = classification_metrics(yte, model.predict(Xte), score)
            predictions = None
        grid_size = int(np.prod([len(v) for v in grid.values()])) if grid else 0
        results.append({"model": name, "kind": "sklearn", "params": params,
                        "grid": {k: [float(x) for x in v] for k, v in (grid or {}).items()},
                        "grid_size": grid_size, "fit_seconds": fit_s, "metrics": metrics,
                        "predictions": None if predictions is None else [float("%.7g" % v) for v in predictions]})
    return results
