#!/usr/bin/env python3
"""Compare two benchmark runs (JSON lines) case by case and fail on slowdowns.

  perf/regression_check.py OLD.jsonl NEW.jsonl [--tolerance 0.10]

Cases match on (suite, impl, N, T, precision, threads, batch, w); batch and w exist for train_epoch only,
threads is the requested thread count where run_perf.py recorded it. Lines of one file with the same key
(appended runs, several ranks) are reduced to their median. Lines without a timing (run_perf.py's
"run_info" line and its skipped, failed or timed-out cases) are ignored. The table gives NEW / OLD of
median_s (or --metric min_s) per matched case.

Exit status: 0 if no matched case is slower than 1 + tolerance, 1 if at least one is, 2 on bad input (a
file that is missing, holds a line that is not a JSON object or a measurement without a positive
median_s, holds no measurement, or shares no case with the other file); the message names the file and
the line. The machine is noisy: compare runs of the same machine type, and prefer a tolerance of
10-30 % on shared machines.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old", metavar="OLD.jsonl")
    p.add_argument("new", metavar="NEW.jsonl")
    p.add_argument("--tolerance", type=float, default=0.10,
                   help="allowed slowdown as a fraction (default 0.10: NEW may take up to 1.10 x OLD)")
    p.add_argument("--metric", choices=["median_s", "min_s"], default="median_s")
    p.add_argument("--suite", nargs="+", help="only these suites (eigh, train_epoch, metric, gemm_peak)")
    p.add_argument("--impl", nargs="+", help="only these implementations (qgml, lapacke, torch, ...)")
    a = p.parse_args(argv)
    if not a.tolerance >= 0:
        p.error("--tolerance must be >= 0")
    return a


def load(path, a):
    """key -> median of the metric over the file's measurements of that key."""
    lines = compare.read_jsonl(path)
    if not lines:
        raise compare.ResultsError(f"{path}: no JSON lines")
    values = {}
    measured = 0
    for l in lines:
        if not compare.is_measurement(l):
            continue
        measured += 1
        if a.suite and l["suite"] not in a.suite or a.impl and l["impl"] not in a.impl:
            continue
        v = l.get(a.metric)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
            raise compare.ResultsError(f"{l['_source']}: {a.metric} must be a positive number, got {v!r}")
        values.setdefault(compare.case_key(l), []).append(float(v))
    if not measured:
        raise compare.ResultsError(f"{path}: no measurement (no JSON line with a median_s)")
    return {k: statistics.median(v) for k, v in values.items()}


def fmt_key(k):
    return [str(x) for x in k]


def main(argv=None):
    a = parse_args(argv)
    try:
        old, new = load(a.old, a), load(a.new, a)
    except compare.ResultsError as e:
        print(f"regression_check.py: error: {e}", file=sys.stderr)
        return 2
    common = sorted(set(old) & set(new),
                    key=lambda k: tuple((0, x, "") if isinstance(x, (int, float)) else (1, 0, str(x)) for x in k))
    if not common:
        print(f"regression_check.py: error: no common cases: {a.old} has {len(old)}, {a.new} has {len(new)} "
              f"(matched on {', '.join(compare.KEY_FIELDS)})", file=sys.stderr)
        return 2
    limit = 1.0 + a.tolerance
    header = list(compare.KEY_FIELDS) + [f"old {a.metric} ms", f"new {a.metric} ms", "new / old", "verdict"]
    rows, slower, faster = [], 0, 0
    for k in common:
        r = new[k] / old[k]
        verdict = "SLOWER" if r > limit else ("faster" if r < 1.0 / limit else "ok")
        slower += verdict == "SLOWER"
        faster += verdict == "faster"
        rows.append(fmt_key(k) + [f"{1e3 * old[k]:.4g}", f"{1e3 * new[k]:.4g}", f"{r:.3f}", verdict])
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    only_old, only_new = len(set(old) - set(new)), len(set(new) - set(old))
    print()
    if only_old or only_new:
        print(f"not compared: {only_old} case(s) only in {a.old}, {only_new} only in {a.new}")
    if slower:
        print(f"FAIL: {slower} of {len(common)} matched cases slower than {limit:.2f} x {a.old}")
        return 1
    print(f"OK: {len(common)} matched cases within {limit:.2f} x ({faster} faster than 1 / {limit:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
