"""The plots of supervised_examples.py: predicted versus true on the regression test split, and qgml's
metrics per epoch. The script selects matplotlib's Agg backend before it imports this module."""
import matplotlib.pyplot as plt
import numpy as np

plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "legend.fontsize": 8})
DPI = 90
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]


def best_qgml(entries):
    """The qgml model of the N whose hold-out score (selection run) was best: no test data in the choice."""
    q = [e for e in entries if e["kind"] == "qgml" and e["variant"] == "chosen"]
    return max(q, key=lambda e: e["selection_score"]) if q else None


def plot_pred_vs_true(ds, entries, yte, path):
    best = best_qgml(entries)
    kr = next(e for e in entries if e["model"].startswith("KernelRidge"))
    panels = ([(best, "qgml, N = %d, %d epochs" % (best["N"], best["epochs"]))] if best else []) + \
             [(kr, "KernelRidge (RBF)")]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels), 3.3), squeeze=False)
    lo, hi = float(np.min(yte)), float(np.max(yte))
    for ax, (e, title) in zip(axes[0], panels):
        p = np.array(e["predictions"])
        ax.scatter(yte, p, s=10, alpha=0.7, color=COLOURS[0] if e["kind"] == "qgml" else COLOURS[1])
        ax.plot([lo, hi], [lo, hi], color="0.4", lw=1, ls="--")
        ax.set_title(title)
        ax.set_xlabel("true target")
        ax.set_ylabel("predicted")
        m = e["metrics"]
        ax.text(0.03, 0.97, "R$^2$ %.3f\nRMSE %.1f" % (m["r2"], m["rmse"]), transform=ax.transAxes,
                va="top", fontsize=8)
    fig.suptitle("%s: test split (%d points)" % (ds["name"], len(yte)), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def plot_curves(ds, entries, path):
    q = [e for e in entries if e["kind"] == "qgml" and e["variant"] == "fixed"]
    chosen = {e["N"]: e["epochs"] for e in entries if e["kind"] == "qgml" and e["variant"] == "chosen"}
    if not q:
        return False
    if ds["task"] == "regression":
        panels = [("rmse", "RMSE"), ("r2", "R$^2$")]
    else:
        panels = [("auc", "ROC AUC"), ("accuracy", "accuracy")]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.1), squeeze=False)
    for ax, (metric, label) in zip(axes[0], panels):
        for i, e in enumerate(q):
            h = e["history"]
            epoch = np.array(h["epoch"], dtype=float)
            for split, ls in (("train", "-"), ("validation", "--")):
                col = "%s_%s" % (split, metric)
                if col not in h:
                    continue
                v = np.array([np.nan if x is None else x for x in h[col]], dtype=float)
                ax.plot(epoch, v, ls=ls, color=COLOURS[i % len(COLOURS)], lw=1.2,
                        label="N=%d %s" % (e["N"], "train" if split == "train" else "test"))
            if e["N"] in chosen:
                ax.axvline(chosen[e["N"]], color=COLOURS[i % len(COLOURS)], lw=0.8, ls=":")
        ax.set_xlabel("epoch")
        ax.set_ylabel(label)
        if metric == "r2":
            ax.set_ylim(-0.2, 1.0)
        if metric == "rmse":
            top = max(np.nanpercentile(np.array([np.nan if x is None else x for x in e["history"].get(
                "validation_rmse", [np.nan])], dtype=float), 95) for e in q)
            if np.isfinite(top):
                ax.set_ylim(0, 1.1 * top)
        ax.grid(alpha=0.3)
    axes[0][0].legend(ncol=1, fontsize=7)
    fig.suptitle("%s: qgml per epoch (solid: training split, dashed: test split;\n"
                 "dotted: the epoch count chosen on the hold-out)" % ds["name"], fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return True
