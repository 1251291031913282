"""The report of perf/dimension_benchmark.py: exact hits (exact_hit), reading a result file (read_jsonl,
report_existing), the Markdown tables and the bar plot of the hits (write_report, plot_hits, report)."""
import json
import math
import os
import statistics

from dimbench_common import log, rel
from dimbench_grid import ALL_METHODS, MANIFOLDS


def exact_hit(estimate, true_d):
    if estimate is None:
        return None, False
    r = int(math.floor(float(estimate) + 0.5))
    return r, r == true_d


def read_jsonl(path):
    info, rows = {}, []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            obj = json.loads(line)
            kind = obj.get("kind")
            if kind == "run_info":
                info = obj
            elif kind == "result":
                rows.append(obj)
            elif kind == "run_end":
                info["run_end"] = obj
    return info, rows


def report_existing(args, report):
    """--report FILE.jsonl: report(info, rows, out_dir, name) of the file, into --out (else the file's
    directory) under --name (else the file's name)."""
    info, rows = read_jsonl(args.report)
    out = args.out or os.path.dirname(os.path.abspath(args.report))
    name = args.name or os.path.splitext(os.path.basename(args.report))[0]
    os.makedirs(out, exist_ok=True)
    report(info, rows, out, name)


def method_order(rows):
    seen = {r["method"] for r in rows}
    return [m for m in ALL_METHODS if m in seen] + sorted(seen - set(ALL_METHODS))


def hits_table(rows):
    """Markdown table (1): exact hits per method per noise level and overall; and the counts."""
    methods = method_order(rows)
    noises = sorted({r["noise"] for r in rows})
    counts = {}
    for m in methods:
        for n in noises + ["all"]:
            sel = [r for r in rows if r["method"] == m and (n == "all" or r["noise"] == n)]
            counts[m, n] = (sum(1 for r in sel if r["exact"]), len(sel))
    head = "| method | " + " | ".join(f"noise {n:g}" for n in noises) + " | overall |"
    lines = [head, "|" + "---|" * (len(noises) + 2)]
    for m in methods:
        cells = [f"{counts[m, n][0]}/{counts[m, n][1]}" for n in noises + ["all"]]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(lines), methods, noises, counts


def fmt_estimate(r):
    if r.get("error") and r.get("estimate") is None:
        return "err"
    e = r["estimate"]
    s = f"{e:d}" if isinstance(e, int) else f"{e:.2f}"
    if r["method"] == "qgml" and r.get("fraction_at_mode") is not None:
        s += f" ({r['fraction_at_mode']:.2f})"
    return f"**{s}**" if r["exact"] else s


def dataset_key(r):
    return (r["T"], r["noise"], MANIFOLD_ORDER.get(r["manifold"], 99), r["manifold"], r["seed"])


MANIFOLD_ORDER = {m[0]: i for i, m in enumerate(MANIFOLDS)}


def write_report(info, rows, md_path, png_path):
    table1, methods, noises, counts = hits_table(rows)
    out = [f"# Intrinsic dimension benchmark: qgml with defaults vs scikit-dimension", ""]
    settings = info.get("settings", {})
    q = info.get("qgml") or {}
    qline = (q.get("qgml info") or q.get("qgml --version") or "").splitlines()
    out += [f"- date {info.get('date', '?')}, host {info.get('host', '?')}, git {info.get('git_revision', '?')}",
            f"- qgml: {q.get('path', '?')} ({qline[0] if qline else 'version unknown'}; binary of "
            f"{q.get('mtime', '?')}, source {q.get('source_git_revision', '?')})",
            f"- scikit-dimension {info.get('skdim_version', '?')}, numpy {info.get('numpy_version', '?')}, "
            f"python {info.get('python_version', '?')}",
            f"- data: {info.get('data_source', '?')}; qgml train input: "
            f"{'two-line YAML (--config-shim)' if settings.get('config_shim') else 'the CSV file'}",
            f"- grid: noise {settings.get('noise')}, T {settings.get('points')}, seeds {settings.get('seeds')}, "
            f"{len({(r['manifold'], r['T'], r['noise'], r['seed']) for r in rows})} data sets",
            "- exact hit: the estimate rounded to the nearest integer (halves up) equals the true d; "
            "errors and NaN are misses. qgml's estimate is the mode of its per-point estimates.", ""]
    end = info.get("run_end")
    if end and end.get("interrupted"):
        out += ["**The run was interrupted: the tables hold what was measured.**", ""]
    out += ["## (1) Exact hits per method and noise level", "", table1, ""]

    out += ["## (2) Estimates per data set",
            "",
            "Bold: exact hit. qgml: the mode, with the fraction of points at the mode in brackets; "
            "err: see the errors below.", ""]
    out.append("| manifold | d | D | T | noise | seed | " + " | ".join(methods) + " |")
    out.append("|" + "---|" * (6 + len(methods)))
    by_ds = {}
    for r in rows:
        by_ds.setdefault(dataset_key(r), {})[r["method"]] = r
    errors = []
    for key in sorted(by_ds):
        ms = by_ds[key]
        any_r = next(iter(ms.values()))
        cells = []
        for m in methods:
            r = ms.get(m)
            cells.append(fmt_estimate(r) if r else "")
            if r and r.get("error"):
                errors.append(f"- {any_r['manifold']} T {any_r['T']} noise {any_r['noise']:g} seed "
                              f"{any_r['seed']}, {m}: {r['error'].splitlines()[0][:300] if r['error'] else ''}")
        out.append(f"| {any_r['manifold']} | {any_r['true_d']} | {any_r['D']} | {any_r['T']} | "
                   f"{any_r['noise']:g} | {any_r['seed']} | " + " | ".join(cells) + " |")
    out.append("")
    qrows = [r for r in rows if r["method"] == "qgml" and r.get("estimate") is not None]
    if qrows:
        out += ["qgml's choices per data set (from dimension_summary.json or the run's files):", "",
                "| manifold | T | noise | seed | mode | median | mean | at mode | N | epochs | w | stopped early | verdict |",
                "|" + "---|" * 13]
        for r in sorted(qrows, key=dataset_key):
            ex = r.get("summary_extra", {})
            cells = [r["manifold"], r["T"], f"{r['noise']:g}", r["seed"], r["estimate"], r.get("median"),
                     f"{r['mean']:.2f}" if isinstance(r.get("mean"), (int, float)) else None,
                     f"{r['fraction_at_mode']:.2f}" if isinstance(r.get("fraction_at_mode"), float) else None,
                     r.get("N"), r.get("epochs"), r.get("w"), ex.get("stopped_early"), ex.get("verdict")]
            out.append("| " + " | ".join("" if c is None else str(c) for c in cells) + " |")
        out.append("")
    if errors:
        out += ["Errors:", ""] + errors + [""]

    out += ["## (3) Wall seconds per method", "",
            "qgml: the whole `qgml train` process (training and analysis); skdim: one `fit` after an untimed "
            "warm-up. Median over the data sets, per T and overall.", ""]
    Ts = sorted({r["T"] for r in rows})
    out.append("| method | " + " | ".join(f"median T {t}" for t in Ts) + " | median | max | total |")
    out.append("|" + "---|" * (len(Ts) + 4))
    for m in methods:
        secs = [r["seconds"] for r in rows if r["method"] == m and r.get("seconds") is not None]
        per_t = []
        for t in Ts:
            s = [r["seconds"] for r in rows if r["method"] == m and r["T"] == t and r.get("seconds") is not None]
            per_t.append(f"{statistics.median(s):.3g}" if s else "")
        if secs:
            out.append(f"| {m} | " + " | ".join(per_t) +
                       f" | {statistics.median(secs):.3g} | {max(secs):.3g} | {sum(secs):.4g} |")
    out.append("")
    with open(md_path, "w") as f:
        f.write("\n".join(out))

    plot_hits(methods, noises, counts, png_path, info)
    return table1


def plot_hits(methods, noises, counts, png_path, info):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    groups = noises + ["all"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [len(noises), 1.3]})
    width = 0.8 / max(1, len(methods))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, gs in ((axes[0], noises), (axes[1], ["all"])):
        for i, m in enumerate(methods):
            xs = [g + (i - (len(methods) - 1) / 2) * width for g in range(len(gs))]
            hs = [counts[m, n][0] for n in gs]
            bars = ax.bar(xs, hs, width * 0.95, label=m, color=colors[i % len(colors)],
                          edgecolor="black" if m == "qgml" else None, linewidth=1.2 if m == "qgml" else 0)
            for b, n in zip(bars, gs):
                ax.annotate(f"{counts[m, n][0]}", (b.get_x() + b.get_width() / 2, b.get_height()),
                            ha="center", va="bottom", fontsize=7)
        totals = [counts[methods[0], n][1] for n in gs]
        for g, tot in enumerate(totals):
            ax.hlines(tot, g - 0.45, g + 0.45, colors="gray", linestyles="dashed", linewidth=1)
        ax.set_xticks(range(len(gs)))
        ax.set_xticklabels([f"noise {n:g}\n({t} data sets)" if n != "all" else f"overall\n({t} data sets)"
                            for n, t in zip(gs, totals)])
        ax.set_ylim(0, max(totals) * 1.12 if totals and max(totals) else 1)
        ax.grid(axis="y", alpha=0.3)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].set_ylabel("exact hits (round(estimate) = d)")
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    fig.suptitle(f"Intrinsic dimension: exact hits per method (dashed: number of data sets)\n"
                 f"{info.get('name', '')}, git {str(info.get('git_revision', '?'))[:12]}", fontsize=10)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)


def report(info, rows, out_dir, name):
    md, png = os.path.join(out_dir, name + ".md"), os.path.join(out_dir, name + "-hits.png")
    if not rows:
        log("no results to report")
        return
    table1 = write_report(info, rows, md, png)
    log(f"wrote {rel(md)} and {rel(png)}")
    print(table1)
