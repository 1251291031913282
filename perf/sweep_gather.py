#!/usr/bin/env python3
"""Gather benchmark JSON lines from many job output directories into one table (Markdown and CSV).

  perf/sweep_gather.py perf-out/*/ [more dirs, files or 'globs/**/*.jsonl'] [--csv all.csv] [--md all.md]

Each argument is a directory (every *.jsonl below it), a file, or a glob pattern (quoted, '**' allowed).
Lines are grouped by (suite, impl, N, T, precision, threads, batch, w) - batch and w for train_epoch
only, threads as requested where run_perf.py recorded it. Per group: the number of measurements, the
median of their medians, the smallest min_s, the spread (largest / smallest median), the git revisions
and the hosts they came from; a group mixing revisions or hosts is flagged in the notes, and the header
says whether the whole gather does. Cases that run_perf.py skipped or that failed are counted per group,
with the first reason. A line that is not a JSON object or a measurement without a positive median_s
(a job killed while writing) is reported with its file and line and left out; --strict makes it an
error (exit 2). Exit 2 also if nothing was found. The Markdown is printed; --md and --csv write files.
"""
import argparse
import csv
import glob
import io
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

COLUMNS = list(compare.KEY_FIELDS) + ["runs", "median_of_medians_s", "min_s", "spread", "not_measured",
                                      "git_revisions", "hosts", "jobs", "notes"]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH", help="directories, files or glob patterns")
    p.add_argument("--csv", metavar="FILE", help="write the table as CSV")
    p.add_argument("--md", metavar="FILE", help="write the Markdown table")
    p.add_argument("--strict", action="store_true", help="a bad line is an error (exit 2)")
    return p.parse_args(argv)


def find_files(paths):
    files, missing = [], []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(glob.glob(os.path.join(p, "**", "*.jsonl"), recursive=True))
        elif os.path.isfile(p):
            found = [p]
        else:
            found = sorted(f for f in glob.glob(p, recursive=True) if os.path.isfile(f))
        if not found:
            missing.append(p)
        files += [f for f in found if f not in files]
    return files, missing


def job_of(line):
    if line.get("slurm_job_id"):
        return str(line["slurm_job_id"])
    return os.path.basename(os.path.dirname(line["_source"].rsplit(":", 1)[0])) or "."


def gather(lines):
    groups = {}
    for l in lines:
        if l.get("suite") == "run_info" or l.get("status") == "info":
            continue
        g = groups.setdefault(compare.case_key(l), {"ok": [], "not": []})
        g["ok" if compare.is_measurement(l) else "not"].append(l)
    rows = []
    for key in sorted(groups, key=lambda k: tuple((0, x, "") if isinstance(x, (int, float)) else (1, 0, str(x))
                                                  for x in k)):
        ok, nots = groups[key]["ok"], groups[key]["not"]
        meds = [float(l["median_s"]) for l in ok]
        mins = [float(l["min_s"]) for l in ok if isinstance(l.get("min_s"), (int, float))]
        revs = sorted({str(l.get("git_revision", "?")) for l in ok + nots})
        hosts = sorted({str(l.get("host", "?")) for l in ok + nots})
        jobs = sorted({job_of(l) for l in ok})
        notes = []
        if len(revs) > 1:
            notes.append("mixed revisions")
        if len(hosts) > 1:
            notes.append("mixed hosts")
        if nots:
            notes.append(f"{nots[0].get('status', 'not measured')}: {nots[0].get('reason', '')}")
        rows.append(dict(zip(compare.KEY_FIELDS, key), runs=len(ok),
                         median_of_medians_s=statistics.median(meds) if meds else None,
                         min_s=min(mins) if mins else None,
                         spread=max(meds) / min(meds) if meds else None, not_measured=len(nots),
                         git_revisions=" ".join(revs), hosts=" ".join(hosts), jobs=len(jobs),
                         notes="; ".join(notes)))
    return rows


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def markdown(rows, files, bad, lines):
    revs = sorted({r for row in rows for r in row["git_revisions"].split()})
    hosts = sorted({h for row in rows for h in row["hosts"].split()})
    out = [f"Gathered {sum(r['runs'] for r in rows)} measurements in {len(rows)} cases from {len(files)} files "
           f"({len(lines)} lines" + (f", {len(bad)} bad lines left out" if bad else "") + ").",
           f"Git revisions: {', '.join(revs) or '?'}" + (" (MIXED)" if len(revs) > 1 else "") +
           f". Hosts: {', '.join(hosts) or '?'}" + (" (MIXED)" if len(hosts) > 1 else "") + ".", ""]
    out.append("| " + " | ".join(COLUMNS) + " |")
    out.append("|" + "---|" * len(COLUMNS))
    for row in rows:
        out.append("| " + " | ".join(fmt(row[c]).replace("|", "/") for c in COLUMNS) + " |")
    return "\n".join(out) + "\n"


def main(argv=None):
    a = parse_args(argv)
    files, missing = find_files(a.paths)
    for p in missing:
        print(f"sweep_gather.py: warning: {p}: no .jsonl files", file=sys.stderr)
    if not files:
        print("sweep_gather.py: error: no .jsonl files found in " + ", ".join(a.paths), file=sys.stderr)
        return 2
    lines, bad = [], []
    for f in files:
        try:
            lines += compare.read_jsonl(f, errors=None if a.strict else bad)
        except compare.ResultsError as e:
            print(f"sweep_gather.py: error: {e}", file=sys.stderr)
            return 2
    for msg in bad:
        print(f"sweep_gather.py: warning: left out {msg}", file=sys.stderr)
    rows = gather(lines)
    if not rows:
        print(f"sweep_gather.py: error: no benchmark lines in {len(files)} files", file=sys.stderr)
        return 2
    md = markdown(rows, files, bad, lines)
    print(md, end="")
    if a.md:
        with open(a.md, "w") as f:
            f.write(md)
    if a.csv:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for row in rows:
            w.writerow({c: fmt(row[c]) for c in COLUMNS})
        with open(a.csv, "w") as f:
            f.write(buf.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
