#!/usr/bin/env python3
"""Reads a compute-sanitizer log (--log-file) and sorts its reports into those inside Kokkos' own
reduction and team code, which the filter below suppresses, and all others, which fail the check.

  sanitizer_report.py --tool racecheck LOG [--json OUT.jsonl] [--step NAME]

The filter (documented in perf/gpu/README.md, "Sanitizer filter"): a report is suppressed only when
every device source location it names (the `in FILE:LINE` of each access) lies in one of KOKKOS_FILES,
the files of Kokkos 3.4 / 4.x that hold the warp-synchronous reductions (shuffles and shared-memory
trees whose ordering racecheck cannot prove), or, for initcheck, when it is a host API copy made by
Kokkos growing its team-scratch pool (KOKKOS_HOST_FRAMES in its host backtrace). A report with no source location (a build without
-lineinfo), or with any location in qgml's code or elsewhere, is kept. Nothing is suppressed for
memcheck. The summary line of the tool (ERROR SUMMARY / RACECHECK SUMMARY) is cross-checked: if it
counts more reports than were parsed, the difference is kept (unparsed reports are never suppressed).

Prints one JSON line (also appended to --json): tool, reports, suppressed, kept, the kept reports'
locations (most frequent first) and the tool's summary line; exit status 1 if anything is kept, 2 if
the log is missing or holds no summary (the tool did not finish).
"""
import argparse
import collections
import json
import os
import re
import sys

KOKKOS_FILES = {
    "Kokkos_Cuda_ReduceScan.hpp",     # cuda_intra_warp_reduction, cuda_intra_block_reduce_scan, ...
    "Kokkos_Cuda_Team.hpp",           # CudaTeamMember::team_reduce / team_scan / vector_reduce
    "Kokkos_Cuda_Vectorization.hpp",  # in_place_shfl and the warp shuffles
}
SUPPRESSIBLE_TOOLS = {"racecheck", "initcheck"}
# initcheck only: a host API copy (cudaMemcpy) whose host backtrace is Kokkos growing its team-scratch
# pool. Kokkos 3.4's CudaInternal::resize_team_scratch_space reallocates the pool with
# reallocate_tracked, which copies the old pool, never initialised, into the new one; every
# uninitialised word of it is one report (hundreds of thousands per test run, seen on an H200).
KOKKOS_HOST_FRAMES = ("Kokkos::Impl::CudaInternal::resize_team_scratch_space",)

START = re.compile(r"^========= (?!COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|Program hit|"
                   r"Target application|\s)(\S.*)$")
LOCATION = re.compile(r"\bin (/?[^\s:]+\.(?:hpp|cpp|h|cu|cuh|inl)):(\d+)")
HOST_FRAME = re.compile(r"Host Frame|Saved host backtrace")
HAZARDS = re.compile(r"\[(\d+) hazards?\]")
SUMMARY = re.compile(r"^========= (ERROR SUMMARY|RACECHECK SUMMARY): (\d+) (?:error|hazard)")


def parse(path):
    reports, current, summary = [], None, None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = SUMMARY.match(line)
            if m:
                summary = (line[len("========= "):], int(m.group(2)))
                current = None
                continue
            m = START.match(line)
            if m:
                current = {"head": m.group(1), "locations": [f"{f}:{n}" for f, n in LOCATION.findall(line)],
                           "weight": sum(int(h) for h in HAZARDS.findall(line)) or 1}
                reports.append(current)
                continue
            if current is None or not line.startswith("========="):
                continue
            if HOST_FRAME.search(line):
                current["host"] = True
                current.setdefault("host_frames", []).append(line)
                continue
            if current.get("host"):
                continue
            more = sum(int(h) for h in HAZARDS.findall(line))
            if more:
                current["weight"] = max(current["weight"], more)
            for file, lineno in LOCATION.findall(line):
                current["locations"].append(f"{file}:{lineno}")
    return reports, summary


def suppressed(report, tool):
    if (tool == "initcheck" and report["head"].startswith("Host API memory access error") and
            any(f in frame for frame in report.get("host_frames", []) for f in KOKKOS_HOST_FRAMES)):
        return True
    if tool not in SUPPRESSIBLE_TOOLS or not report["locations"]:
        return False
    return all(os.path.basename(loc.rsplit(":", 1)[0]) in KOKKOS_FILES for loc in report["locations"])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("log")
    p.add_argument("--tool", required=True, choices=["memcheck", "racecheck", "initcheck", "synccheck"])
    p.add_argument("--json", help="append the summary line to this JSON-lines file")
    p.add_argument("--step", help="name recorded in the summary (default: the tool)")
    a = p.parse_args(argv)
    record = {"suite": "sanitizer", "step": a.step or a.tool, "tool": a.tool, "log": os.path.basename(a.log)}
    if not os.path.exists(a.log):
        record.update(status="missing", reason=f"no log {a.log}")
        reports, summary = [], None
    else:
        reports, summary = parse(a.log)
    kept = [r for r in reports if not suppressed(r, a.tool)]
    weight = sum(r["weight"] for r in reports)  # racecheck counts the hazards a report stands for
    n_sup = weight - sum(r["weight"] for r in kept)
    unparsed = max(0, summary[1] - weight) if summary else 0
    where = collections.Counter(loc for r in kept for loc in (r["locations"][:1] or ["(no source location)"]))
    heads = collections.Counter(re.sub(r"0x[0-9a-f]+", "0x..", r["head"]) for r in kept)
    record.update(reports=weight, suppressed=n_sup, kept=weight - n_sup + unparsed, unparsed=unparsed,
                  summary=summary[0] if summary else None, filter=sorted(KOKKOS_FILES) if a.tool in
                  SUPPRESSIBLE_TOOLS else [], kept_locations=where.most_common(20), kept_kinds=heads.most_common(10))
    if "status" not in record:
        record["status"] = "no_summary" if summary is None else ("clean" if record["kept"] == 0 else "reports")
    line = json.dumps(record)
    print(line)
    if a.json:
        with open(a.json, "a") as f:
            f.write(line + "\n")
    if summary is None:
        return 2
    return 1 if record["kept"] else 0


if __name__ == "__main__":
    sys.exit(main())
