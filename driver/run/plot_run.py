#!/usr/bin/env python3
"""Plots of one qgml run directory: training history, metric spectrum per point, reconstructions.

    plot_run.py RUN_DIR     writes RUN_DIR/plots/{history,spectrum,dimension,reconstruction}.png
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_csv(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return rows


def main(run):
    out = os.path.join(run, "plots")
    os.makedirs(out, exist_ok=True)
    hist_path = os.path.join(run, "history.csv")
    if os.path.exists(hist_path):
        h = read_csv(hist_path)
        ep = [int(r["epoch"]) for r in h]
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.semilogy(ep, [float(r["total"]) for r in h], label="loss $d^2 + w\\,\\sigma^2$")
        ax.semilogy(ep, [float(r["reconstruction"]) for r in h], label="reconstruction $d^2$")
        ax.semilogy(ep, [max(float(r["fluctuation"]), 1e-300) for r in h], label="fluctuation $\\sigma^2$")
        ax.set_xlabel("epoch")
        ax.set_ylabel("mean over points")
        ax.set_title("Training history")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(out, "history.png"), dpi=130)
        plt.close(fig)
    pp_path = os.path.join(run, "per_point.csv")
    if not os.path.exists(pp_path):
        return
    rows = read_csv(pp_path)
    d = sum(1 for k in rows[0] if k.startswith("e"))
    eig = [[float(r[f"e{k}"]) for k in range(d)] for r in rows]
    order = sorted(range(len(rows)), key=lambda t: eig[t][0])
    fig, ax = plt.subplots(figsize=(6, 4))
    for k in range(d):
        ax.plot(range(len(rows)), [eig[t][k] for t in order], ".", ms=2, label=f"$e_{k}$")
    ax.set_xlabel("point (sorted by $e_0$)")
    ax.set_yscale("log")
    ax.set_ylabel("eigenvalue of the quantum metric")
    dims = [int(r["dimension"]) for r in rows]
    mode = max(set(dims), key=dims.count)
    ax.set_title(f"Metric spectrum per point: d = {mode} at {100 * dims.count(mode) / len(dims):.1f} % of points")
    ax.legend(markerscale=4)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "spectrum.png"), dpi=130)
    plt.close(fig)
    # The per-point estimates and their confidence (dimension_summary.json holds the verdict).
    summary = {}
    summary_path = os.path.join(run, "dimension_summary.json")
    if os.path.exists(summary_path):
        with open(summary_path) as f:
            summary = json.load(f)
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
    counts = [dims.count(k) for k in range(d + 1)]
    ax0.bar(range(d + 1), counts, color=["C3" if k == mode else "C0" for k in range(d + 1)])
    ax0.set_xticks(range(d + 1))
    ax0.set_xlabel("estimated dimension d")
    ax0.set_ylabel("points")
    ax0.set_title(f"d = {mode}: {summary.get('verdict', '')}"[:60])
    if "confidence" in rows[0]:
        for k in sorted(set(dims)):
            ax1.hist([float(r["confidence"]) for r, dk in zip(rows, dims) if dk == k], bins=20, range=(0, 1),
                     alpha=0.6, label=f"d = {k}")
        ax1.set_xlabel("per-point confidence")
        ax1.set_ylabel("points")
        ax1.set_title("Confidence of the per-point estimates")
        ax1.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "dimension.png"), dpi=130)
    plt.close(fig)
    x = [[float(r[f"x{k}"]) for k in range(d)] for r in rows]
    xb = [[float(r[f"xbar{k}"]) for k in range(d)] for r in rows]
    if d >= 3:
        fig = plt.figure(figsize=(10, 5))
        for i, (pts, title) in enumerate(((x, "data x"), (xb, "reconstruction $\\bar{x}$"))):
            ax = fig.add_subplot(1, 2, i + 1, projection="3d")
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts], s=1)
            ax.set_title(title)
            ax.set_xlabel("$x_0$")
            ax.set_ylabel("$x_1$")
            ax.set_zlabel("$x_2$")
    else:
        fig, ax = plt.subplots(figsize=(5, 5))
        ax.scatter([p[0] for p in x], [p[-1] for p in x], s=1, label="data x")
        ax.scatter([p[0] for p in xb], [p[-1] for p in xb], s=1, label="reconstruction")
        ax.set_aspect("equal")
        ax.legend(markerscale=6)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "reconstruction.png"), dpi=110)
    plt.close(fig)
    print(f"plots: {out}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
