#!/usr/bin/env python3
"""The compile time of each object of a build, from the build tree's .ninja_log, as JSON lines.

    perf/build_times.py BUILD_DIR [--label TEXT] [--wall SECONDS] [--top N] [--revision REV]

One line per object (the seconds ninja recorded for its latest build), then a summary line: the sum of
the objects' seconds (the CPU work of a build, whatever the core count), the largest object (the least
wall time any core count reaches without splitting it), the wall time when given (--wall, e.g. from
`/usr/bin/time ninja -C BUILD_DIR` of a clean build), the cores, the git revision and the preset's
compiler. A clean build measured this way on the same machine before and after a change gives the
change's effect on the build; run it after `rm -rf BUILD_DIR && cmake --preset P` and one full
`ninja`, with CCACHE_DISABLE=1 so that no object comes from the cache.
"""
import argparse
import json
import os
import subprocess
import sys


def latest_entries(log_path):
    """The latest record of each output: {output: seconds}."""
    entries = {}
    with open(log_path) as f:
        header = f.readline()
        if not header.startswith("# ninja log"):
            raise SystemExit(f"{log_path}: not a ninja log (first line {header.strip()!r})")
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 4:
                continue
            start, end, output = int(fields[0]), int(fields[1]), fields[3]
            entries[output] = (end - start) / 1000.0
    return entries


def cache_value(build_dir, key):
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build_dir")
    p.add_argument("--label", default="", help="what was built (e.g. the change measured)")
    p.add_argument("--wall", type=float, default=None, help="wall seconds of the clean build")
    p.add_argument("--top", type=int, default=0, help="only the N slowest objects (0: all)")
    p.add_argument("--revision", default="", help="the revision built (default: the source tree's HEAD)")
    a = p.parse_args()
    log = os.path.join(a.build_dir, ".ninja_log")
    if not os.path.isfile(log):
        sys.exit(f"{a.build_dir}: no .ninja_log (build it with ninja first)")
    objects = {k: v for k, v in latest_entries(log).items() if k.endswith((".o", ".obj"))}
    if not objects:
        sys.exit(f"{log}: no compiled object recorded")
    source = cache_value(a.build_dir, "CMAKE_HOME_DIRECTORY") or "."
    revision = a.revision
    try:
        revision = revision or subprocess.run(["git", "-C", source, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                                  text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        revision = "unknown"
    common = {"label": a.label, "revision": revision, "build_dir": os.path.abspath(a.build_dir),
              "compiler": cache_value(a.build_dir, "CMAKE_CXX_COMPILER"),
              "build_type": cache_value(a.build_dir, "CMAKE_BUILD_TYPE"),
              "unity": cache_value(a.build_dir, "QGML_UNITY_BUILD")}
    ranked = sorted(objects.items(), key=lambda kv: -kv[1])
    for output, seconds in ranked[: a.top or None]:
        print(json.dumps({"kind": "object", "object": output, "seconds": round(seconds, 3), **common}))
    summary = {"kind": "summary", "objects": len(objects), "sum_seconds": round(sum(objects.values()), 3),
               "largest_object": ranked[0][0], "largest_seconds": round(ranked[0][1], 3),
               "wall_seconds": a.wall, "cores": os.cpu_count(), **common}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
