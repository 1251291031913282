#!/usr/bin/env python3
"""The dimension per scale (docs/dimension.md, "The dimension per scale") on the trained runs of a
generalisation benchmark (perf/dimension_generalisation.py --work DIR): for every run, `qgml estimate` on
its final matrices and the points it analysed (the x columns of its per_point.csv, standardised as the
run saw them), so that only the analysis runs. Per data set: the true d, the half, the estimate of the
run and of the re-analyses with and without the scales (all three must agree), the mode per scale,
the verdict and the seconds of the analysis with and without the scales (their cost).

  perf/dimension_per_scale.py --work build/dimension-generalisation/dimension-generalisation-spread-20261128 \\
      --qgml build/openmp/apps/qgml/qgml --out perf/results --name dimension-per-scale-DATE

Output: DIR/NAME.jsonl (a run_info line, then one line per data set) and DIR/NAME.md.
"""
import argparse
import csv
import datetime
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dimension_families import FAMILIES  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", required=True, help="the --work directory of a dimension_generalisation.py run")
    p.add_argument("--qgml", default=os.path.join(HERE, "..", "build", "openmp", "apps", "qgml", "qgml"))
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--name", default="dimension-per-scale-" + datetime.date.today().strftime("%Y%m%d"))
    p.add_argument("--scales", default="10,20,50,100,200,400", help="qgml estimate --scales")
    p.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="more arguments for qgml estimate")
    a = p.parse_args(argv)
    families = {f.name: f for f in FAMILIES}
    env = dict(os.environ, OMP_PROC_BIND="false")
    info = subprocess.run([a.qgml, "info"], capture_output=True, text=True, env=env).stdout.strip().splitlines()
    version = ", ".join(info[:2]) if info else "?"  # qgml 0.1.0, Kokkos 3.4.1
    git = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty", "--abbrev=12"], capture_output=True,
                         text=True).stdout.strip()
    lines = [{"kind": "run_info", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "git": git, "qgml": a.qgml, "qgml_version": version, "work": a.work, "extra": a.extra,
              "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "")}]
    runs = sorted(glob.glob(os.path.join(a.work, "runs", "*", "*", "per_point.csv")))
    with tempfile.TemporaryDirectory() as tmp:
        for per_point in runs:
            run = os.path.dirname(per_point)
            data_set = os.path.basename(os.path.dirname(run))
            family = families.get(data_set.split("-n")[0])
            with open(os.path.join(run, "dimension_summary.json")) as f:
                trained = json.load(f)
            with open(per_point, newline="") as f:
                rows = list(csv.reader(f))
            d = int(trained["ambient_dimension"])
            points = os.path.join(tmp, data_set + ".csv")
            with open(points, "w") as f:
                f.write(",".join(rows[0][:d]) + "\n")
                for r in rows[1:]:
                    f.write(",".join(r[:d]) + "\n")
            out = os.path.join(tmp, data_set)

            def estimate(scales, where):
                start = time.perf_counter()
                done = subprocess.run([a.qgml, "estimate", "--matrices", os.path.join(run, "final_matrices.npy"),
                                       "--data", points, "--out", where, "--scales", scales, *a.extra],
                                      capture_output=True, text=True, env=env)
                return done, time.perf_counter() - start

            # Without the scales, then with them: the estimate must not change, the time is the cost.
            plain, plain_seconds = estimate("none", out + "-none")
            done, seconds = estimate(a.scales, out)
            line = {"kind": "result", "data_set": data_set, "family": data_set.split("-n")[0],
                    "true_d": family.d if family else None, "half": family.half if family else None,
                    "run_mode": trained["mode"], "seconds": seconds, "seconds_without_scales": plain_seconds}
            if plain.returncode == 0:
                with open(os.path.join(out + "-none", "dimension_summary.json")) as f:
                    line["mode_without_scales"] = json.load(f)["mode"]
            if done.returncode != 0:
                line.update(status="failed", stderr=done.stderr[-500:])
            else:
                with open(os.path.join(out, "dimension_summary.json")) as f:
                    s = json.load(f)
                line.update(status="ok", mode=s["mode"], scales=s.get("scales", []),
                            scale_verdict=s.get("scale_verdict", ""))
            lines.append(line)
            print(f"{data_set}: {line.get('mode')} {[x['mode'] for x in line.get('scales', [])]} "
                  f"{seconds:.2f} s", flush=True)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, a.name + ".jsonl"), "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    results = [l for l in lines if l["kind"] == "result" and l["status"] == "ok"]
    scale_ks = [x["neighbours"] for x in results[0]["scales"]] if results else []
    info = lines[0]
    md = [f"# The dimension per scale on the trained runs of {os.path.basename(a.work.rstrip('/'))}", "",
          f"- date {info['date']}, git {git}, {version}; raw data {a.name}.jsonl",
          "- `qgml estimate` on each run's final matrices and analysed points: only the analysis runs;",
          "  'estimate' is the re-analysis' mode and must equal the run's ('run')", "",
          "| data set | half | d | run | estimate | " + " | ".join(f"k {k}" for k in scale_ks) +
          " | verdict | s | s without |", "|---|---|---|---|---|" + "---|" * len(scale_ks) + "---|---|---|"]
    same = 0
    for l in sorted(results, key=lambda l: (str(l["half"]), l["data_set"])):
        same += l["mode"] == l["run_mode"] == l.get("mode_without_scales")
        verdict = "same" if l["scale_verdict"].startswith("the same") else "scale-dependent"
        cells = " | ".join(f"{x['mode']} ({100 * x['fraction']:.0f} %)" for x in l["scales"])
        md.append(f"| {l['data_set']} | {l['half']} | {l['true_d']} | {l['run_mode']} | {l['mode']} | {cells} | "
                  f"{verdict} | {l['seconds']:.2f} | {l['seconds_without_scales']:.2f} |")
    failed = [l for l in lines if l["kind"] == "result" and l["status"] != "ok"]
    md += ["", f"{same} of {len(results)} re-analyses give the run's estimate, with and without the scales; "
           f"{len(failed)} failed."]
    if results:
        worst = max(results, key=lambda l: l["seconds"] - l["seconds_without_scales"])
        total = sum(l["seconds"] for l in results)
        plain_total = sum(l["seconds_without_scales"] for l in results)
        md.append(f"- time of the analysis (process wall time): {total:.1f} s with the scales, {plain_total:.1f} s "
                  f"without ({total / plain_total:.2f}x); largest difference {worst['data_set']} "
                  f"{worst['seconds_without_scales']:.2f} -> {worst['seconds']:.2f} s")
    for tag in ("tune", "heldout"):
        group = [l for l in results if l["half"] == tag]
        dep = [l for l in group if l["scale_verdict"].startswith("scale-dependent")]
        md.append(f"- {tag}: {len(dep)} of {len(group)} data sets scale-dependent")
    text = "\n".join(md) + "\n"
    with open(os.path.join(a.out, a.name + ".md"), "w") as f:
        f.write(text)
    print(text)
    return 0 if not failed and same == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
