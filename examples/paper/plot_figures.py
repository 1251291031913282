#!/usr/bin/python3
"""Plots the CSV files written by the paper examples (see README.md in this folder).

usage: plot_figures.py [INPUT_ROOT [OUTPUT_DIR]]

INPUT_ROOT (default paper-output) holds the directories figure1/, supp_figure1/, supp_figure2/ and
manifold_dimensions/ written by the four programs; OUTPUT_DIR (default INPUT_ROOT) receives
figure1.png, supp_figure1.png, supp_figure2.png and manifold_dimensions.png. A figure whose input
directory is missing is skipped with a message. Needs numpy and matplotlib only (Debian:
python3-matplotlib).
"""
import csv
import io
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from PIL import Image  # noqa: E402  (a dependency of matplotlib)

# One colour per role, used in every figure.
INPUT = "0.55"                                # input points
RECON = "#1f77b4"                             # reconstructions xbar
EIG = ["#d62728", "#ff7f0e", "#2ca02c", "#9467bd"]  # e0, e1, e2, ... (descending)
TRUE = "0.35"
EST = ["#1f77b4", "#ff7f0e", "#2ca02c"]          # mode, median, mean

plt.rcParams.update({
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "savefig.dpi": 130,
    "figure.dpi": 130,
})


def read_table(path):
    """CSV with a header row -> dict of numpy arrays (numeric columns) or lists (text columns)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    out = {}
    for i, name in enumerate(header):
        col = [r[i] for r in body]
        try:
            out[name] = np.array([float(v) for v in col])
        except ValueError:
            out[name] = col
    return out


def matrix(table, prefix):
    cols = sorted((k for k in table if k.startswith(prefix) and k[len(prefix):].isdigit()),
                  key=lambda k: int(k[len(prefix):]))
    return np.column_stack([table[c] for c in cols])


def run(directory, name, covariance=False):
    r = {
        "x": matrix(read_table(os.path.join(directory, name + "_points.csv")), "x"),
        "xbar": matrix(read_table(os.path.join(directory, name + "_xbar.csv")), "xbar"),
    }
    m = read_table(os.path.join(directory, name + "_metric.csv"))
    r["e"], r["d"] = matrix(m, "e"), m["d"].astype(int)
    if covariance:
        c = read_table(os.path.join(directory, name + "_covariance_metric.csv"))
        r["ce"], r["cd"] = matrix(c, "e"), c["d"].astype(int)
    r["history"] = read_table(os.path.join(directory, name + "_history.csv"))
    return r


def summary(directory):
    s = read_table(os.path.join(directory, "summary.csv"))
    return {name: {k: (v[i] if isinstance(v, list) else float(v[i])) for k, v in s.items()}
            for i, name in enumerate(s["name"])}


def fraction_text(d, D):
    parts = [f"d={k}: {100 * np.mean(d == k):.1f}%" for k in range(D + 1) if np.any(d == k)]
    return ", ".join(parts)


def spectrum_panel(ax, e, d, title, log=False, ylabel="metric eigenvalue", ylim=None, loc="best", theory=None):
    """Per-point eigenvalues e0 >= e1 >= ..., points sorted by e0 (the paper's eigenvalue panels).
    theory: optional (values per point, label) drawn as a thin black line in the same order."""
    order = np.argsort(e[:, 0])
    idx = np.arange(len(order))
    for i in range(e.shape[1]):
        ax.scatter(idx, e[order, i], s=2.5 if i else 4.0, color=EIG[i % len(EIG)], lw=0, rasterized=True,
                   label=f"$e_{i}$ (mean {e[:, i].mean():.3g})", zorder=3 - i)
    if theory is not None:
        ax.scatter(idx, theory[0][order], s=0.6, color="k", lw=0, zorder=4, rasterized=True, label=theory[1])
    if log:
        ax.set_yscale("log")
    if ylim is not None:
        ax.set_ylim(*ylim)
    elif not log:
        ax.set_ylim(bottom=min(0.0, e.min()) - 0.02 * e.max())
    ax.set_xlabel("point index (sorted by $e_0$)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    leg = ax.legend(loc=loc, markerscale=4, frameon=True, title=fraction_text(d, e.shape[1]),
                    title_fontsize=8.5)
    leg.get_frame().set_alpha(0.9)


def scatter3d(ax, pts, color, size=2.0, alpha=1.0, cmap=None, label=None):
    return ax.scatter(pts[:, 0], pts[:, 1], pts[:, 2], s=size, c=color, cmap=cmap, alpha=alpha, lw=0,
                      depthshade=False, rasterized=True, label=label)


def style3d(ax, lim, title, labels=("$x_1$", "$x_2$", "$x_3$")):
    for setter, l in zip((ax.set_xlim, ax.set_ylim, ax.set_zlim), lim):
        setter(*l)
    ax.set_box_aspect([l[1] - l[0] for l in lim])
    ax.set_xlabel(labels[0], labelpad=-4)
    ax.set_ylabel(labels[1], labelpad=-4)
    ax.zaxis.set_rotate_label(False)
    ax.set_zlabel(labels[2], labelpad=-4, rotation=0)
    ax.tick_params(labelsize=7, pad=-2)
    ax.set_title(title)


def save(fig, out_dir, name):
    """Writes the PNG with a 256-colour palette (plots need no more; about 3x smaller files)."""
    path = os.path.join(out_dir, name)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", facecolor="white")
    plt.close(fig)
    buf.seek(0)
    image = Image.open(buf).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        path + ".tmp", format="png", optimize=True)
    os.replace(path + ".tmp", path)
    print(f"wrote {path} ({os.path.getsize(path) / 1024:.0f} KB)")


# ------------------------------------------------------------------------------------------------

def figure1(in_dir, out_dir):
    s = summary(in_dir)
    runs = [("noise0", "noise 0"), ("noise0.2", "noise 0.2")]
    fig = plt.figure(figsize=(11, 9.2))
    letters = iter("abcd")
    for row, (name, label) in enumerate(runs):
        r = run(in_dir, name)
        info = s[name]
        ax = fig.add_subplot(2, 2, 2 * row + 1, projection="3d")
        scatter3d(ax, r["x"], INPUT, size=1.5, alpha=0.35, label="input $x$")
        scatter3d(ax, r["xbar"], RECON, size=1.5, alpha=0.9, label=r"reconstruction $\bar x$")
        lim = 1.45 if row else 1.1
        style3d(ax, [(-lim, lim)] * 3,
                f"({next(letters)}) unit sphere, {label}: input and reconstruction\n"
                f"N = 3, w = {info['w']:g}, lr = {info['learning_rate']:g}, {int(info['epochs'])} epochs; "
                f"loss {info['final_epoch_loss']:.4f}, mean $|\\bar x|$ = {info['mean_xbar_norm']:.3f}")
        ax.view_init(elev=20, azim=35)
        ax.legend(loc="upper left", markerscale=5, fontsize=8)
        ax2 = fig.add_subplot(2, 2, 2 * row + 2)
        # For a fuzzy sphere A_k = c J_k: e0 = e1 = c j / |x| = |xbar| / |x|, e2 = 0 (docs/math.md 7).
        ratio = np.linalg.norm(r["xbar"], axis=1) / np.linalg.norm(r["x"], axis=1)
        spectrum_panel(ax2, r["e"], r["d"], f"({next(letters)}) Eq. 7 metric eigenvalues, {label}",
                       loc="upper left" if row else "center right",
                       theory=(ratio, r"fuzzy-sphere value $|\bar x| / |x|$"))
    fig.suptitle("Figure 1: fuzzy sphere (N = 3, D = 3, T = 2500) - the metric has two large eigenvalues "
                 "and one ~0, so d = 2", fontsize=11.5)
    fig.tight_layout()
    save(fig, out_dir, "figure1.png")


def supp_figure1(in_dir, out_dir):
    s = summary(in_dir)
    names = list(s)  # w0, w0.2, ...
    fig, axes = plt.subplots(2, 4, figsize=(13.5, 7.2))
    axes = axes.ravel()
    theta = np.linspace(0, 2 * np.pi, 400)
    lim = 1.45
    first = run(in_dir, names[0])
    ax = axes[0]
    ax.scatter(first["x"][:, 0], first["x"][:, 1], s=1.5, color=INPUT, lw=0, rasterized=True)
    ax.set_title("input: circle r = 1, noise 0.1")
    means = []
    for i, name in enumerate(names):
        r = run(in_dir, name)
        info = s[name]
        ax = axes[i + 1]
        ax.scatter(r["x"][:, 0], r["x"][:, 1], s=1.0, color=INPUT, alpha=0.25, lw=0, rasterized=True)
        collapsed = info["w"] >= 1  # tight clusters: enlarge the markers so they stay visible
        ax.scatter(r["xbar"][:, 0], r["xbar"][:, 1], s=14 if collapsed else 1.5, color=RECON, lw=0,
                   rasterized=True)
        ax.set_title(f"w = {info['w']:g}: loss {info['final_epoch_loss']:.3g}, "
                     f"mean $|\\bar x|$ {info['mean_xbar_norm']:.3f}", fontsize=9.5)
        if collapsed:
            ax.text(0, 0, "N = 4 clusters\n(markers enlarged)", ha="center", va="center", fontsize=8, color=RECON)
        means.append((info["w"], r["e"]))
    for ax in axes[:7]:
        ax.plot(np.cos(theta), np.sin(theta), color="k", lw=0.6, ls="--", alpha=0.6)
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.set_xlabel("$x_1$", labelpad=0)
        ax.set_ylabel("$x_2$", labelpad=0)
        ax.tick_params(labelsize=8)
    axes[1].legend(handles=[Line2D([], [], ls="", marker="o", color=INPUT, label="input $x$"),
                            Line2D([], [], ls="", marker="o", color=RECON, label=r"reconstruction $\bar x$"),
                            Line2D([], [], ls="--", color="k", lw=0.8, label="unit circle")],
                   loc="center", fontsize=7.5, framealpha=0.9)
    ax = axes[7]
    ws = np.array([w for w, _ in means])
    for i in range(2):
        med = np.array([np.median(e[:, i]) for _, e in means])
        lo = np.array([np.percentile(e[:, i], 10) for _, e in means])
        hi = np.array([np.percentile(e[:, i], 90) for _, e in means])
        ax.errorbar(ws, med, yerr=[med - lo, hi - med], color=EIG[i], marker="o", ms=4, capsize=3,
                    label=f"$e_{i}$ median (10-90 %)")
    ax.set_yscale("log")
    ax.set_xlabel("w")
    ax.set_ylabel("Eq. 7 metric eigenvalue")
    ax.set_title("metric spectrum per w")
    ax.legend(loc="lower left")
    ax.set_xticks(ws)
    fig.suptitle("Supplementary Figure 1: noisy circle, N = 4, D = 2, T = 2500, lr 0.01, 200 epochs - "
                 "reconstructions as the fluctuation weight w grows", fontsize=11.5)
    fig.tight_layout()
    save(fig, out_dir, "supp_figure1.png")


def supp_figure2(in_dir, out_dir):
    s = summary(in_dir)
    fig = plt.figure(figsize=(19, 8.6))
    lim = [(-12, 15), (-1, 22), (-12, 15)]
    view = dict(elev=12, azim=-70)
    runs = {name: run(in_dir, name, covariance=True) for name in ["N3", "N4"]}
    x = runs["N3"]["x"]
    t = np.hypot(x[:, 0], x[:, 2])  # the roll parameter (distance from the roll's axis x2)
    ax = fig.add_subplot(2, 4, 1, projection="3d")
    sc = scatter3d(ax, x, t, size=2.0, cmap="viridis")
    style3d(ax, lim, "(a) input: Swiss roll, T = 2500, noise 0\n(colour = roll parameter)")
    ax.view_init(**view)
    cb = fig.colorbar(sc, ax=ax, shrink=0.55, pad=0.1)
    cb.set_label("roll parameter $t = |(x_1, x_3)|$", fontsize=8)
    ax = fig.add_subplot(2, 4, 5)
    for name, color in zip(runs, [RECON, EIG[0]]):
        h = runs[name]["history"]
        ax.plot(h["epoch"], h["total"], color=color, label=f"N = {name[1:]}")
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss (mean $|x - \\bar x|^2$, w = 0)")
    ax.set_title("(e) training loss")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    letters = {"N3": "bcd", "N4": "fgh"}
    for row, name in enumerate(runs):
        r = runs[name]
        info = s[name]
        L = letters[name]
        ax = fig.add_subplot(2, 4, 4 * row + 2, projection="3d")
        scatter3d(ax, r["x"], INPUT, size=1.5, alpha=0.3)
        scatter3d(ax, r["xbar"], t, size=2.0, cmap="viridis")
        style3d(ax, lim, f"({L[0]}) N = {int(info['N'])}: reconstruction $\\bar x$ (input in grey)\n"
                         f"loss {info['final_epoch_loss']:.3g}, mean $|x - \\bar x|$ = {info['mean_displacement']:.2f}")
        ax.view_init(**view)
        spectrum_panel(fig.add_subplot(2, 4, 4 * row + 3), r["e"], r["d"],
                       f"({L[1]}) N = {int(info['N'])}: Eq. 7 metric eigenvalues", log=True,
                       ylim=(1e-6, 30), loc="lower right")
        spectrum_panel(fig.add_subplot(2, 4, 4 * row + 4), r["ce"], r["cd"],
                       f"({L[2]}) N = {int(info['N'])}: covariance metric eigenvalues", log=True,
                       ylabel="covariance metric eigenvalue", ylim=(1e-4, 3e3), loc="lower right")
    fig.suptitle("Supplementary Figure 2: Swiss roll (D = 3, T = 2500, noise 0, w = 0, lr 0.005, batch 500, "
                 "400 epochs), N = 3 (top) versus N = 4 (bottom)", fontsize=11.5)
    fig.tight_layout()
    save(fig, out_dir, "supp_figure2.png")


def manifold_dimensions(in_dir, out_dir):
    t = read_table(os.path.join(in_dir, "manifold_dimensions.csv"))
    names = t["name"]
    n = len(names)
    x = np.arange(n)
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(12, 8.4), gridspec_kw={"height_ratios": [2.2, 1]}, sharex=True)
    width = 0.2
    ax.bar(x - 1.5 * width, t["true_dimension"], width, color=TRUE, label="true dimension")
    ax.bar(x - 0.5 * width, t["mode"], width, color=EST[0], label="estimate: mode")
    ax.bar(x + 0.5 * width, t["median"], width, color=EST[1], label="estimate: median")
    ax.bar(x + 1.5 * width, t["mean"], width, color=EST[2], label="estimate: mean")
    for i in range(n):
        top = max(t["true_dimension"][i], t["mode"][i], t["mean"][i])
        miss = t["mode"][i] != t["true_dimension"][i]
        ax.text(x[i], top + 0.3, f"D={int(t['ambient_dimension'][i])}\nN={int(t['N'][i])}" + ("\nMISS" if miss else ""),
                ha="center", va="bottom", fontsize=7.5, color=EIG[0] if miss else "k",
                fontweight="bold" if miss else "normal")
    ax.set_ylabel("intrinsic dimension")
    top = max(t["ambient_dimension"].max(), t["true_dimension"].max())
    ax.set_ylim(0, top + 4.5)
    ax.set_yticks(np.arange(0, top + 1, 2 if top > 10 else 1))
    ax.legend(loc="upper right", ncol=4)
    ax.set_title(f"(a) true versus estimated intrinsic dimension (ratio rule on the Eq. 7 metric; "
                 f"T = 2000, w = {t['w'][0]:g}, {int(t['epochs'][0])} epochs, noise {t['noise'][0]:g})")
    ax.grid(axis="y", alpha=0.3)
    w2 = 0.36
    f0, f1 = 100 * t["fraction_true"], 100 * t["floor_fraction_true"]
    ax2.bar(x - w2 / 2, f0, w2, color=EST[0], label="ratio rule (default floor 100 eps)")
    ax2.bar(x + w2 / 2, f1, w2, color="#8c9fca", hatch="//", edgecolor="white", lw=0,
            label="ratio rule with a floor of 1 % of $e_0$")
    for i in range(n):
        ax2.text(x[i] - w2 / 2, f0[i] + 2, f"{f0[i]:.0f}", ha="center", fontsize=7.5)
        ax2.text(x[i] + w2 / 2, f1[i] + 2, f"{f1[i]:.0f}", ha="center", fontsize=7.5, color="0.3")
    ax2.set_ylim(0, 128)
    ax2.set_ylabel("points at the true d (%)")
    ax2.set_title("(b) fraction of points whose estimate equals the true dimension")
    ax2.legend(loc="upper center", ncol=2, fontsize=8)
    ax2.set_xticks(x)
    labels = [f"{nm}{' *' if st == 'yes' else ''}" for nm, st in zip(names, t["standardised"])]
    ax2.set_xticklabels(labels, rotation=25, ha="right")
    ax2.grid(axis="y", alpha=0.3)
    fig.suptitle("Benchmark manifolds: QGML dimension estimates  (* = standardised input)", fontsize=11.5)
    fig.tight_layout()
    save(fig, out_dir, "manifold_dimensions.png")


def main(argv):
    in_root = argv[1] if len(argv) > 1 else "paper-output"
    out_dir = argv[2] if len(argv) > 2 else in_root
    os.makedirs(out_dir, exist_ok=True)
    for name, fn in [("figure1", figure1), ("supp_figure1", supp_figure1), ("supp_figure2", supp_figure2),
                     ("manifold_dimensions", manifold_dimensions)]:
        d = os.path.join(in_root, name)
        if not os.path.isdir(d):
            print(f"skipping {name}: no directory {d}")
            continue
        fn(d, out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
