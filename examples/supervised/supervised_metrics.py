"""The test-split metrics of supervised_examples.py: MAE, RMSE and R^2 (regression), accuracy and ROC AUC
(classification)."""
import numpy as np
from sklearn.metrics import accuracy_score, mean_absolute_error, mean_squared_error, r2_score, roc_auc_score


def regression_metrics(y, p):
    return {"mae": float(mean_absolute_error(y, p)),
            "rmse": float(np.sqrt(mean_squared_error(y, p))),
            "r2": float(r2_score(y, p))}


def classification_metrics(y, label, score):
    return {"accuracy": float(accuracy_score(y, label)),
            "auc": float(roc_auc_score(y, score))}
