"""The plots of perf/run_perf.py (matplotlib, imported when they are made): time vs N, the speed-up over
PyTorch vs N and eigh's fraction of the measured GEMM peak vs N."""
import os

import compare  # perf/compare.py: result lines
from perf_summary import collect, impl_order


def make_plots(lines, plot_dir, name):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    peaks, tables = collect(lines)
    os.makedirs(plot_dir, exist_ok=True)
    written = []
    colors = {"qgml": "tab:blue", "lapacke": "tab:green", "torch": "tab:red"}
    extra = ["tab:purple", "tab:orange", "tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray"]
    for impl in sorted({l["impl"] for l in lines if compare.is_measurement(l)} - set(colors)):
        colors[impl] = extra[len(colors) - 3] if len(colors) - 3 < len(extra) else "k"
    markers = ["o", "s", "^", "D", "v", "P", "X"]

    def series_of(rows, impl, value):
        """(precision, threads, batch, w) -> T -> [(N, y)] for one impl."""
        out = {}
        for (prec, t, T, batch, w, N), row in rows.items():
            y = value(row, impl, t)
            if y is not None and y > 0:
                out.setdefault((prec, t, batch, w), {}).setdefault(T, []).append((N, y))
        return out

    def style(prec, t, thread_list):
        return ("-" if prec == "double" else "--"), markers[thread_list.index(t) % len(markers)]

    def label(impl, prec, t, batch, w, suite):
        extra = f", batch {batch}" + (f", w {w:g}" if w else "") if suite == "train_epoch" else ""
        return f"{impl} {prec} {t} thr{extra}"

    def n_axis(ax, Ns):
        ax.set_xscale("log", base=2)
        ax.set_xticks(Ns)
        ax.set_xticklabels([str(n) for n in Ns])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel("N")

    def figure(Ts, title):
        fig, axes = plt.subplots(1, len(Ts), figsize=(5.2 * len(Ts), 4.4), squeeze=False)
        fig.suptitle(title)
        return fig, axes[0]

    def finish(fig, axes, path):
        handles, labels = axes[0].get_legend_handles_labels()
        for ax in axes[1:]:
            for h, l in zip(*ax.get_legend_handles_labels()):
                if l not in labels:
                    handles.append(h)
                    labels.append(l)
        fig.tight_layout(rect=(0, 0, 1, 0.94))
        fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
        fig.savefig(path, dpi=110, bbox_inches="tight")   # the canvas grows to hold the legend and title
        plt.close(fig)
        written.append(path)

    for suite, rows in sorted(tables.items()):
        Ts = sorted({k[2] for k in rows})
        thread_list = sorted({k[1] for k in rows})
        impls = sorted({i for r in rows.values() for i in r["ok"]}, key=impl_order)
        unit = {"eigh": "all T matrices", "train_epoch": "one epoch", "metric": "all T points"}[suite]
        # time vs N
        fig, axes = figure(Ts, f"{suite}: median time of {unit} vs N (log-log)")
        for ax, T in zip(axes, Ts):
            ref = None
            for impl in impls:
                for (prec, t, batch, w), byT in sorted(series_of(
                        rows, impl, lambda r, i, t: r["ok"][i]["median_s"] if i in r["ok"] else None).items()):
                    pts = sorted(byT.get(T, []))
                    if not pts:
                        continue
                    ls, mk = style(prec, t, thread_list)
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, marker=mk, color=colors.get(impl, "k"),
                            label=label(impl, prec, t, batch, w, suite), ms=4)
                    if impl == impls[0] and (ref is None or pts[-1][0] > ref[0]):
                        ref = pts[-1]
            if ref:
                Ns = sorted({k[5] for k in rows if k[2] == T})
                xs = [n for n in Ns if n >= max(Ns[0], ref[0] / 16)]
                ax.plot(xs, [ref[1] * (n / ref[0]) ** 3 for n in xs], ":", color="grey", lw=1.5,
                        label="slope N^3 (reference)")
            ax.set_yscale("log")
            n_axis(ax, sorted({k[5] for k in rows if k[2] == T}))
            ax.set_ylabel("seconds")
            ax.set_title(f"T = {T}")
            ax.grid(True, which="both", alpha=0.3)
        finish(fig, axes, os.path.join(plot_dir, f"{name}-{suite}-time.png"))
        # speed-up vs N
        if "torch" in impls and "qgml" in impls:
            fig, axes = figure(Ts, f"{suite}: speed-up over PyTorch (torch time / qgml time)")
            for ax, T in zip(axes, Ts):
                sp = series_of(rows, "qgml", lambda r, i, t: r["ok"]["torch"]["median_s"] / r["ok"]["qgml"]["median_s"]
                               if "torch" in r["ok"] and "qgml" in r["ok"] else None)
                for (prec, t, batch, w), byT in sorted(sp.items()):
                    pts = sorted(byT.get(T, []))
                    if pts:
                        ls, mk = style(prec, t, thread_list)
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, marker=mk, ms=4,
                                label=label("torch / qgml", prec, t, batch, w, suite))
                ax.axhline(1.0, color="grey", lw=1)
                n_axis(ax, sorted({k[5] for k in rows if k[2] == T}))
                ax.set_ylim(bottom=0)
                ax.set_ylabel("speed-up")
                ax.set_title(f"T = {T}")
                ax.grid(True, alpha=0.3)
            finish(fig, axes, os.path.join(plot_dir, f"{name}-{suite}-speedup.png"))
        # fraction of the GEMM peak (flops defined for eigh only)
        if suite == "eigh" and peaks:
            fig, axes = figure(Ts, "eigh: GFLOP/s (36 N^3 per matrix) as % of the measured double GEMM peak")
            for ax, T in zip(axes, Ts):
                for impl in impls:
                    fr = series_of(rows, impl, lambda r, i, t: 100 * r["ok"][i]["gflops"] / peaks[t]
                                   if i in r["ok"] and r["ok"][i].get("gflops") and peaks.get(t) else None)
                    for (prec, t, batch, w), byT in sorted(fr.items()):
                        pts = sorted(byT.get(T, []))
                        if pts:
                            ls, mk = style(prec, t, thread_list)
                            ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, marker=mk, ms=4,
                                    color=colors.get(impl, "k"), label=label(impl, prec, t, None, None, suite))
                n_axis(ax, sorted({k[5] for k in rows if k[2] == T}))
                ax.set_ylim(bottom=0)
                ax.set_ylabel("% of GEMM peak")
                ax.set_title(f"T = {T}")
                ax.grid(True, alpha=0.3)
            finish(fig, axes, os.path.join(plot_dir, f"{name}-eigh-peak.png"))
    return written
