"""The data of supervised_examples.py: the three scikit-learn data sets, the seeded and standardised
train / test split, and the CSV files the qgml program reads and writes."""
import csv

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.model_selection import train_test_split

from supervised_settings import SPLIT_SEED, TEST_FRACTION


def load_datasets():
    out = []
    d = load_diabetes()
    out.append(dict(name="diabetes", task="regression", X=d.data, y=d.target.astype(float),
                    features=list(d.feature_names),
                    description="load_diabetes: 442 patients, 10 features, disease progression after one year"))
    b = load_breast_cancer()
    out.append(dict(name="breast_cancer", task="classification", X=b.data, y=b.target.astype(float),
                    features=[f.replace(" ", "_") for f in b.feature_names],
                    description="load_breast_cancer: 569 tumours, 30 features, positive class 1 = benign"))
    w = load_wine()
    keep = w.target <= 1
    out.append(dict(name="wine01", task="classification", X=w.data[keep], y=w.target[keep].astype(float),
                    features=list(w.feature_names),
                    description="load_wine restricted to cultivars 0 and 1: 130 wines, 13 features, "
                                "positive class 1"))
    return out


def split_and_scale(ds):
    strat = ds["y"] if ds["task"] == "classification" else None
    Xtr, Xte, ytr, yte = train_test_split(ds["X"], ds["y"], test_size=TEST_FRACTION,
                                          random_state=SPLIT_SEED, stratify=strat)
    mean = Xtr.mean(axis=0)
    std = Xtr.std(axis=0)
    std[std == 0] = 1.0
    return (Xtr - mean) / std, (Xte - mean) / std, ytr, yte


def write_csv(path, X, y, names):
    """Features then the target in the last column, with a header line (qgml skips a first line
    that has a non-numeric cell)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([n.replace(",", "_") for n in names] + ["target"])
        for row, t in zip(X, y):
            w.writerow([repr(float(v)) for v in row] + [repr(float(t))])


def read_table(path):
    """CSV with a header row -> dict name -> numpy array (nan where a cell is not a number)."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    header, body = [h.strip() for h in rows[0]], rows[1:]
    out = {}
    for i, name in enumerate(header):
        vals = []
        for r in body:
            try:
                vals.append(float(r[i]))
            except (ValueError, IndexError):
                vals.append(float("nan"))
        out[name] = np.array(vals)
    return out
