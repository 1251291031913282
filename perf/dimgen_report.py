"""Scoring and report of perf/dimension_generalisation.py: hits and relative errors of one result (score),
the data set of a result line (dataset_id), the summary tables per half, n and noise, and DIR/NAME.md."""
import math
import os
import statistics

import dimension_benchmark as db  # (read_jsonl, rel)
from dimgen_common import log, noise_label
from dimgen_peers import ALL_METHODS


def score(row):
    """Adds rounded, exact (None for fractals), abs_error and rel_error (1 for a failed run)."""
    est, d = row.get("estimate"), row["d"]
    if est is None or not isinstance(est, (int, float)) or not math.isfinite(est):
        row.update(rounded=None, exact=(None if row.get("fractal") else False), abs_error=None, rel_error=1.0)
        return row
    rounded = int(math.floor(float(est) + 0.5))
    row.update(rounded=rounded, exact=(None if row.get("fractal") else rounded == int(d)),
               abs_error=round(abs(est - d), 6), rel_error=round(abs(est - d) / d, 6))
    return row


def dataset_id(r):
    return (r["family"], r["n"], r["noise_kind"], float(r["noise_level"]), r["seed"])


read_jsonl = db.read_jsonl  # (run_info, result lines)


def method_order(rows):
    seen = {r["method"] for r in rows}
    return [m for m in ALL_METHODS if m in seen] + sorted(seen - set(ALL_METHODS))


def fam_order():
    import dimension_families as F
    return {f.name: i for i, f in enumerate(F.FAMILIES + F.LITERATURE_FAMILIES)}


def summary_tables(rows):
    """Markdown: per half, n and noise level, for each method: hits / count, MRE, median and max seconds."""
    methods = method_order(rows)
    groups = sorted({(r["half"], r["n"], r["noise_kind"], float(r["noise_level"])) for r in rows},
                    key=lambda g: ({"tune": 0, "extra": 1, "heldout": 2}.get(g[0], 3), g[1], g[3], g[2]))
    out = []
    for half in [h for h in ("tune", "extra", "heldout", "literature-tune", "literature-heldout") if any(g[0] == h for g in groups)]:
        gs = [g for g in groups if g[0] == half]
        nfam = len({r["family"] for r in rows if r["half"] == half})
        out += [f"### {half} half ({nfam} families)", "",
                "| method | " + " | ".join(f"n {g[1]}, {noise_label(g[2], g[3])}" for g in gs) + " |",
                "|---|" + "---|" * len(gs)]
        for m in methods:
            cells = []
            for g in gs:
                sel = [r for r in rows if r["method"] == m and (r["half"], r["n"], r["noise_kind"],
                                                                 float(r["noise_level"])) == g]
                if not sel:
                    cells.append("")
                    continue
                ints = [r for r in sel if r.get("exact") is not None]
                hits = sum(1 for r in ints if r["exact"])
                mre = statistics.mean(r.get("rel_error", 1.0) if r.get("rel_error") is not None else 1.0 for r in sel)
                secs = [r["seconds"] for r in sel if isinstance(r.get("seconds"), (int, float))]
                t = f"{statistics.median(secs):.2g}/{max(secs):.2g} s" if secs else "-"
                cells.append(f"{hits}/{len(ints)}, MRE {mre:.3f}, {t}")
            out.append(f"| {m} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def fmt_est(r):
    if r is None:
        return ""
    if r.get("estimate") is None:
        return "timeout" if "timed out" in (r.get("error") or "") else "err"
    e = r["estimate"]
    s = f"{e:d}" if isinstance(e, int) else f"{e:.2f}"
    return f"**{s}**" if r.get("exact") else s


def write_report(info, rows, md_path):
    methods = method_order(rows)
    settings = info.get("settings", {})
    q = info.get("qgml") or {}
    qline = (q.get("qgml info") or q.get("qgml --version") or "").splitlines()
    out = ["# Intrinsic dimension: generalisation benchmark (qgml vs scikit-dimension and DADApy)", "",
           f"- date {info.get('date', '?')}, host {info.get('host', '?')}, git {info.get('git_revision', '?')}",
           f"- qgml: {q.get('path', '-')} ({qline[0] if qline else 'version unknown'}); extra args: "
           f"{settings.get('qgml_args') or 'none'}",
           f"- numpy {info.get('numpy_version', '?')}, scikit-dimension {info.get('skdim_version', '?')}, "
           f"dadapy {info.get('dadapy_version', '?')}, python {info.get('python_version', '?')}",
           f"- grid: halves {settings.get('half')}, noise {settings.get('noise')}, n {settings.get('points')}, "
           f"seeds {settings.get('seeds')}; {len({dataset_id(r) for r in rows})} data sets; peers copied from "
           f"{settings.get('peers_from') or '-'}",
           "- cell: exact hits / integer data sets, MRE (mean |est - d| / d over all, fractals included, "
           "failures 1), median / max seconds", ""]
    if (info.get("run_end") or {}).get("interrupted"):
        out += ["**The run was interrupted: the tables hold what was measured.**", ""]
    out += ["## Summary per half, n and noise", "", summary_tables(rows), "",
            "## Estimates per data set", "", "Bold: exact hit; fractal d shown with 3 decimals.", "",
            "| family | half | d | D | n | noise | seed | " + " | ".join(methods) + " |",
            "|" + "---|" * (7 + len(methods))]
    order = fam_order()
    by_ds = {}
    for r in rows:
        by_ds.setdefault(dataset_id(r), {})[r["method"]] = r
    errors = []
    for key in sorted(by_ds, key=lambda k: (k[1], k[3], k[2], order.get(k[0], 99), k[0], k[4])):
        ms = by_ds[key]
        a = next(iter(ms.values()))
        d = f"{a['d']:.3f}" if a.get("fractal") else f"{int(a['d'])}"
        out.append(f"| {a['family']} | {a['half']} | {d} | {a['D']} | {a['n']} | "
                   f"{noise_label(a['noise_kind'], float(a['noise_level']))} | {a['seed']} | "
                   + " | ".join(fmt_est(ms.get(m)) for m in methods) + " |")
        for m in methods:
            r = ms.get(m)
            if r and r.get("error"):
                errors.append(f"- {a['family']} n {a['n']} {noise_label(a['noise_kind'], float(a['noise_level']))} "
                              f"seed {a['seed']}, {m}: {r['error'].splitlines()[0][:240]}")
    out.append("")
    qrows = [r for r in rows if r["method"] == "qgml" and r.get("estimate") is not None]
    if qrows:
        out += ["## qgml's choices per data set", "",
                "| family | n | noise | seed | mode | median | mean | at mode | N | w | epochs | seconds | other |",
                "|" + "---|" * 13]
        for r in sorted(qrows, key=lambda r: (r["n"], float(r["noise_level"]), r["noise_kind"],
                                               order.get(r["family"], 99))):
            other = ", ".join(f"{k} {v}" for k, v in (r.get("summary_extra") or {}).items())[:200]
            cells = [r["family"], r["n"], noise_label(r["noise_kind"], float(r["noise_level"])), r["seed"],
                     r["estimate"], r.get("median"),
                     f"{r['mean']:.2f}" if isinstance(r.get("mean"), (int, float)) else None,
                     f"{r['fraction_at_mode']:.2f}" if isinstance(r.get("fraction_at_mode"), float) else None,
                     r.get("N"), r.get("w"), r.get("epochs"), r.get("seconds"), other]
            out.append("| " + " | ".join("" if c is None else str(c) for c in cells) + " |")
        out.append("")
    if errors:
        out += ["## Errors and timeouts", ""] + errors + [""]
    with open(md_path, "w") as f:
        f.write("\n".join(out))


def report(info, rows, out_dir, name):
    if not rows:
        log("no results to report")
        return
    md = os.path.join(out_dir, name + ".md")
    write_report(info, rows, md)
    log(f"wrote {db.rel(md)}")
    print(summary_tables(rows))
