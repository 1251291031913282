#!/usr/bin/env python3
"""The same benchmarks with two builds of qgml (CI's Kokkos 3.4.01 and 4.6.01 builds, or any two build
trees), alternated A B A B ... so that both see the same machine load; per case the median over rounds
of each side's median time, and the ratio B / A.

Each round runs perf/run_perf.py once per build (qgml only: no peer, no GEMM peak) with the cases given
here. Output: DIR/NAME.jsonl (every JSON line of every round, tagged with "build" A or B and "round")
and DIR/NAME.md (the table).

  perf/kokkos_versions.py --a build/openmp --b build/openmp-kokkos4 --rounds 3 \\
      --suites train eigh metric --N 8 16 32 64 --T 2500 --out perf/results --name kokkos-versions-DATE
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def case_key(line):
    return (line["suite"], line.get("impl"), line.get("precision"), line.get("N"), line.get("T"),
            line.get("batch"), line.get("w"), line.get("threads"))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", required=True, help="build tree A (the reference)")
    p.add_argument("--b", required=True, help="build tree B")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--suites", nargs="+", default=["train", "eigh", "metric"])
    p.add_argument("--N", nargs="+", default=["8", "16", "32", "64"])
    p.add_argument("--T", nargs="+", default=["2500"])
    p.add_argument("--precision", nargs="+", default=["double"])
    p.add_argument("--threads", default="2")
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--name", default="kokkos-versions-" + datetime.date.today().strftime("%Y%m%d"))
    a = p.parse_args(argv)
    lines = []
    with tempfile.TemporaryDirectory() as work:
        for r in range(a.rounds):
            for tag, build in (("A", a.a), ("B", a.b)):
                name = f"round{r}-{tag}"
                cmd = [sys.executable, os.path.join(HERE, "run_perf.py"), "--build", build, "--no-torch",
                       "--no-gemm", "--no-plots", "--suites", *a.suites, "--N", *a.N, "--T", *a.T,
                       "--precision", *a.precision, "--threads", a.threads, "--eigh-impls", "qgml",
                       "--out", work, "--name", name]
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                with open(os.path.join(work, name + ".jsonl")) as f:
                    for text in f:
                        line = json.loads(text)
                        line.update(build=tag, build_tree=build, round=r)
                        lines.append(line)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, a.name + ".jsonl"), "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    cases = {}
    for line in lines:
        if "median_s" in line and line.get("status", "ok") not in ("skipped", "failed", "timeout"):
            cases.setdefault(case_key(line), {}).setdefault(line["build"], []).append(line["median_s"])
    kokkos = {line["build"]: line.get("kokkos_version") for line in lines if "kokkos_version" in line}
    git = next((line.get("git_revision") for line in lines if line.get("git_revision")), "?")
    out = [f"# qgml with two Kokkos builds: A = {a.a} (Kokkos {kokkos.get('A')}), "
           f"B = {a.b} (Kokkos {kokkos.get('B')})", "",
           f"- date {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}, git {git}, "
           f"{a.rounds} rounds alternated A B, {a.threads} threads; raw data {a.name}.jsonl",
           "- per case: the median over rounds of each round's median time", "",
           "| suite | impl | precision | N | T | batch | A s | B s | B / A |", "|---|---|---|---|---|---|---|---|---|"]
    ratios = []
    for key in sorted(cases, key=lambda k: tuple((0, x) if isinstance(x, (int, float)) else (1, str(x)) for x in k)):
        sides = cases[key]
        if "A" not in sides or "B" not in sides:
            continue
        ta, tb = statistics.median(sides["A"]), statistics.median(sides["B"])
        ratios.append(tb / ta)
        suite, impl, precision, n, t, batch = key[:6]
        out.append(f"| {suite} | {impl} | {precision} | {n} | {t} | {batch or ''} | {ta:.4g} | {tb:.4g} | "
                   f"{tb / ta:.3f} |")
    if ratios:
        out += ["", f"Median B / A over {len(ratios)} cases: {statistics.median(ratios):.3f} "
                f"(range {min(ratios):.3f}-{max(ratios):.3f})"]
    text = "\n".join(out) + "\n"
    with open(os.path.join(a.out, a.name + ".md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
