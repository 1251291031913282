"""The Markdown summary of perf/run_perf.py: the lines collected per suite and case (collect), the order
of the implementations in the tables (impl_order) and the tables themselves (summary_markdown)."""
import statistics

import compare  # perf/compare.py: result lines, peers
from perf_cases import CLI_SUITE, fmt_s


def thr(l):
    return int(l.get("requested_threads", l.get("threads", 0)))


def ms(x):
    return f"{1e3 * x:.4g}" if x is not None else "-"


def ratio(num, den):
    return f"{num / den:.2f}" if num and den else "-"


def collect(lines):
    """suite -> row key -> {"ok": {impl: median line}, "not": {impl: record}}; gemm peaks by thread count."""
    peaks, tables = {}, {}
    for l in lines:
        if l.get("suite") == "gemm_peak" and compare.is_measurement(l):
            peaks.setdefault(thr(l), []).append(l["gflops"])
    for l in lines:
        s = l.get("suite")
        if s not in CLI_SUITE:
            continue
        key = (l.get("precision", "double"), thr(l), int(l.get("T", 0)), l.get("batch"),
               float(l["w"]) if "w" in l else None, int(l["N"]))
        row = tables.setdefault(s, {}).setdefault(key, {"ok": {}, "not": {}, "all": {}})
        if compare.is_measurement(l):
            row["all"].setdefault(l["impl"], []).append(l)
        elif l.get("status") in ("skipped", "failed", "timeout"):
            row["not"][l["impl"]] = l
    for rows in tables.values():
        for row in rows.values():
            for impl, ls in row["all"].items():   # several runs (--report of many files): median of medians
                med = statistics.median(x["median_s"] for x in ls)
                g = [x["gflops"] for x in ls if "gflops" in x]
                row["ok"][impl] = {"median_s": med, "gflops": statistics.median(g) if g else None,
                                   "points_per_s": ls[0]["T"] / med if ls[0].get("T") else None, "runs": len(ls)}
    return {k: statistics.median(v) for k, v in peaks.items()}, tables


PEER_IMPLS = set()     # impls of peer lines in the lines being summarised (set by summary_markdown)
PEER_RANK = {}         # peer label -> position in the run's peer list (run_info "peers")


def impl_order(impl):
    """qgml first, then its variants, LAPACKE, the peers (torch first, then in the run's order) last."""
    group = {"qgml": 0, "lapacke": 2, "torch": 3}.get(impl, 4 if impl in PEER_IMPLS else 1)
    return (group, PEER_RANK.get(impl, len(PEER_RANK)), impl)


def fastest_cell(row, q, peers):
    """'ratio (peer)' of the fastest peer's time over qgml's, for the "fastest peer / qgml" column."""
    f = compare.fastest_peer(row["ok"], peers)
    return f"{f[1] / q['median_s']:.2f} ({f[0]})" if f and q else "-"


def notes(row):
    out = []
    for impl, rec in sorted(row["not"].items()):
        if impl not in row["ok"]:
            out.append(f"{impl} {rec['status']}: {rec.get('reason', '')}")
    return "; ".join(out).replace("|", "/")


def summary_markdown(lines, name):
    info = next((l for l in lines if l.get("suite") == "run_info"), {})
    peaks, tables = collect(lines)
    qline = next((l for l in lines if l.get("impl") == "qgml" and compare.is_measurement(l)), {})
    tline = next((l for l in lines if l.get("impl") == "torch" and compare.is_measurement(l)), {})
    revs = sorted({l.get("git_revision") for l in lines if compare.is_measurement(l) and l.get("git_revision")})
    PEER_IMPLS.clear()
    PEER_RANK.clear()
    PEER_RANK.update((p["label"], i) for i, p in enumerate(info.get("peers", [])))
    PEER_IMPLS.update(l["impl"] for l in lines if compare.is_measurement(l) and compare.is_peer_line(l))
    many = len(PEER_IMPLS) > 1      # the "fastest peer / qgml" column
    versions = {}
    for l in lines:
        if compare.is_measurement(l) and compare.is_peer_line(l) and l["impl"] not in versions:
            v = [f"torch {l['torch_version']}"] if l.get("torch_version") else []
            v += [f"jax {l['jax_version']}"] if l.get("jax_version") else []
            versions[l["impl"]] = (", ".join(v) or "?") + (f" ({l['peer_impl']})" if l.get("peer_impl") else "")
    out = [f"# Performance run `{name}`", ""]
    if info:
        out.append(f"Host `{info.get('host')}`, {info.get('cpus')} CPUs, backend {info.get('backend')}, "
                   f"load average {info.get('loadavg_before')} before" +
                   (f", {info.get('loadavg_after')} after" if info.get("loadavg_after") else "") + ". "
                   f"Command: `{info.get('command')}`.")
        if info.get("stopped_early"):
            out.append("**The run was stopped early**; the tables hold what was measured.")
    out.append(f"qgml: Kokkos {qline.get('kokkos_version', '?')} ({qline.get('execution_space', '?')}), git "
               f"{', '.join(revs) or '?'}. torch: {tline.get('torch_version') or info.get('torch', 'not run')}.")
    if peaks:
        out.append("Measured double GEMM peak (OpenBLAS dgemm 2048^3): " +
                   ", ".join(f"{p:.1f} GFLOP/s with {t} thread{'s' if t > 1 else ''}" for t, p in sorted(peaks.items())) +
                   "; % of peak compares a case with the peak at its thread count (float too).")
    if many:
        ordered = sorted(versions.items(), key=lambda x: impl_order(x[0]))
        out.append("Peers: " + "; ".join(f"{i}: {v}" for i, v in ordered) +
                   ". \"fastest peer / qgml\" is the smallest peer time over qgml's, with that peer named.")
    out.append("Times are medians of the timed runs of one unit (eigh: all T matrices; train: one epoch; "
               "metric: all T points); ratios > 1 mean qgml is faster.")
    out.append("")
    skipped = []
    for s in ("eigh", "train_epoch", "metric"):
        rows = tables.get(s)
        if not rows:
            continue
        out.append(f"## {s}")
        out.append("")
        others = sorted({i for r in rows.values() for i in r["ok"]} - {"qgml", "lapacke", "torch"}, key=impl_order)
        fh, fr = (" fastest peer / qgml |", "---|") if many else ("", "")
        if s == "eigh":
            out.append("| precision | threads | T | N | qgml ms | lapacke ms | " +
                       "".join(f"{i} ms | " for i in others) + "torch ms | torch / qgml | lapacke / qgml |"
                       " qgml GFLOP/s | % of GEMM peak |" + fh + " notes |")
            out.append("|---|---|---|---|---|---|---|---|---|---|---|---|" + "---|" * len(others) + fr)
        elif s == "train_epoch":
            out.append("| precision | threads | T | batch | w | N | qgml ms/epoch | torch ms/epoch | torch / qgml | " +
                       "".join(f"{i} ms/epoch | {i} / qgml | " for i in others) + "qgml points/s |" + fh + " notes |")
            out.append("|---|---|---|---|---|---|---|---|---|---|---|" + "---|---|" * len(others) + fr)
        else:
            out.append("| precision | threads | T | N | qgml ms | torch ms | torch / qgml | " +
                       "".join(f"{i} ms | {i} / qgml | " for i in others) + "qgml points/s |" + fh + " notes |")
            out.append("|---|---|---|---|---|---|---|---|---|" + "---|---|" * len(others) + fr)
        for key in sorted(rows, key=lambda k: (k[0] != "double", k[1], k[2], k[3] or 0, k[4] or 0, k[5])):
            row = rows[key]
            prec, t, T, batch, w, N = key
            q, lp, tr = (row["ok"].get(i) for i in ("qgml", "lapacke", "torch"))
            med = lambda x: x["median_s"] if x else None
            n = notes(row)
            fc = f" {fastest_cell(row, q, PEER_IMPLS)} |" if many else ""
            for impl, rec in row["not"].items():
                if impl not in row["ok"]:
                    skipped.append((s, impl, prec, t, T, N, rec))
            if s == "eigh":
                pct = f"{100 * q['gflops'] / peaks[t]:.1f}" if q and q.get("gflops") and peaks.get(t) else "-"
                gf = f"{q['gflops']:.2f}" if q and q.get("gflops") else "-"
                extra = "".join(f"{ms(med(row['ok'].get(i)))} | " for i in others)
                out.append(f"| {prec} | {t} | {T} | {N} | {ms(med(q))} | {ms(med(lp))} | {extra}{ms(med(tr))} | "
                           f"{ratio(med(tr), med(q))} | {ratio(med(lp), med(q))} | {gf} | {pct} |{fc} {n} |")
            elif s == "train_epoch":
                pps = f"{q['points_per_s']:.0f}" if q and q.get("points_per_s") else "-"
                extra = "".join(f"{ms(med(row['ok'].get(i)))} | {ratio(med(row['ok'].get(i)), med(q))} | "
                                for i in others)
                out.append(f"| {prec} | {t} | {T} | {batch} | {w:g} | {N} | {ms(med(q))} | {ms(med(tr))} | "
                           f"{ratio(med(tr), med(q))} | {extra}{pps} |{fc} {n} |")
            else:
                pps = f"{q['points_per_s']:.0f}" if q and q.get("points_per_s") else "-"
                extra = "".join(f"{ms(med(row['ok'].get(i)))} | {ratio(med(row['ok'].get(i)), med(q))} | "
                                for i in others)
                out.append(f"| {prec} | {t} | {T} | {N} | {ms(med(q))} | {ms(med(tr))} | {ratio(med(tr), med(q))} "
                           f"| {extra}{pps} |{fc} {n} |")
        out.append("")
    if skipped:
        out.append("## Cases not measured")
        out.append("")
        out.append("| suite | impl | precision | threads | T | N | status | estimated | reason |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for s, impl, prec, t, T, N, rec in skipped:
            e = rec.get("estimated_s")
            out.append(f"| {s} | {impl} | {prec} | {t} | {T} | {N} | {rec['status']} | "
                       f"{fmt_s(e) if e is not None else '-'} | {rec.get('reason', '').replace('|', '/')} |")
        out.append("")
    return "\n".join(out)
