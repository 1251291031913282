#!/usr/bin/env python3
"""Checks of the perf tools (perf/regression_check.py, perf/sweep_gather.py, perf/run_perf.py --dry-run,
perf/gpu_resource_usage.py --from-dump, perf/gpu/sanitizer_report.py, perf/scaling.py with a stand-in benchmark, perf/speed_targets.py's
ratios and compare.py train --floor on synthetic lines) on the fixture files next to this script. Standard library only
(and c++filt for gpu_resource_usage); registered with CTest by CMakeLists.txt.

  check_perf_tools.py CHECK --perf-dir perf/ --work SCRATCH_DIR

Each CHECK runs one tool as a subprocess with the same interpreter and asserts its exit status and output.
Prints 'ok CHECK' and exits 0, or prints what differed and exits 1.
"""
import argparse
import csv
import json
import os
import stat
import subprocess
import sys

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


class Failed(Exception):
    pass


def run(tool, *args):
    r = subprocess.run([sys.executable, os.path.join(PERF, tool)] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    print(f"$ {tool} {' '.join(args)}\n-> exit {r.returncode}\n{r.stdout}{r.stderr}")
    return r


def expect(cond, what):
    if not cond:
        raise Failed(what)


def fx(name):
    return os.path.join(FIXTURES, name)


def check_regression_equal():
    r = run("regression_check.py", fx("old.jsonl"), fx("equal.jsonl"), "--tolerance", "0.10")
    expect(r.returncode == 0, f"equal runs: exit {r.returncode}, expected 0")
    expect("OK: 8 matched cases" in r.stdout, "equal runs: expected 'OK: 9 matched cases' (skipped lines ignored)")
    expect("SLOWER" not in r.stdout, "equal runs: no case may be SLOWER")


def check_regression_slower():
    r = run("regression_check.py", fx("old.jsonl"), fx("slower.jsonl"), "--tolerance", "0.10")
    expect(r.returncode == 1, f"30 % slowdown: exit {r.returncode}, expected 1")
    rows = [l for l in r.stdout.splitlines() if "SLOWER" in l]
    expect(len(rows) == 1, f"expected exactly one SLOWER row, got {len(rows)}")
    expect(rows[0].startswith("| eigh | qgml | 64 | 2500 | double | 2 |") and "| 1.300 |" in rows[0],
           f"the SLOWER row must be eigh qgml N=64 with ratio 1.300: {rows[0]}")
    expect("FAIL: 1 of 8" in r.stdout, "expected 'FAIL: 1 of 8'")
    # The same files pass with a tolerance above the slowdown.
    r = run("regression_check.py", fx("old.jsonl"), fx("slower.jsonl"), "--tolerance", "0.35")
    expect(r.returncode == 0, f"30 % slowdown with --tolerance 0.35: exit {r.returncode}, expected 0")


def check_regression_bad_input():
    r = run("regression_check.py", fx("old.jsonl"), fx("bad_line.jsonl"))
    expect(r.returncode == 2, f"bad line: exit {r.returncode}, expected 2")
    expect("bad_line.jsonl:3: not valid JSON" in r.stderr, "bad line: the message must name bad_line.jsonl:3")
    r = run("regression_check.py", fx("absent.jsonl"), fx("old.jsonl"))
    expect(r.returncode == 2 and "absent.jsonl: cannot open" in r.stderr, "missing file: exit 2 naming the file")
    r = run("regression_check.py", fx("old.jsonl"), fx("no_common.jsonl"))
    expect(r.returncode == 2 and "no common cases" in r.stderr, "no common case: exit 2")
    empty = os.path.join(WORK, "empty.jsonl")
    open(empty, "w").close()
    r = run("regression_check.py", empty, fx("old.jsonl"))
    expect(r.returncode == 2 and "empty.jsonl: no JSON lines" in r.stderr, "empty file: exit 2 naming the file")


def check_sweep_gather():
    out_csv, out_md = os.path.join(WORK, "gathered.csv"), os.path.join(WORK, "gathered.md")
    r = run("sweep_gather.py", os.path.join(FIXTURES, "sweep"), "--csv", out_csv, "--md", out_md)
    expect(r.returncode == 0, f"exit {r.returncode}, expected 0")
    expect("job-102/quick.jsonl:4" in r.stderr and "left out" in r.stderr,
           "the cut last line of job-102 must be reported with its file and line")
    rows = list(csv.DictReader(open(out_csv)))
    by = {(x["suite"], x["impl"], x["N"], x["T"], x["precision"], x["threads"]): x for x in rows}
    expect(len(rows) == 3, f"expected 3 grouped rows, got {len(rows)}")
    q = by.get(("eigh", "qgml", "8", "2500", "double", "2"))
    expect(q is not None, "no row for eigh qgml N=8 T=2500 double 2 threads")
    got = {k: q[k] for k in ("runs", "median_of_medians_s", "min_s", "spread", "git_revisions", "hosts", "jobs")}
    want = {"runs": "3", "median_of_medians_s": "0.005", "min_s": "0.0039", "spread": "1.5",
            "git_revisions": "aaaaaaaaaaaa bbbbbbbbbbbb", "hosts": "node001 node002", "jobs": "2"}
    expect(got == want, f"grouped row {got} != {want}")
    expect("mixed revisions" in q["notes"] and "mixed hosts" in q["notes"], f"notes: {q['notes']}")
    s = by.get(("eigh", "torch", "128", "1000000", "double", "2"))
    expect(s is not None and s["runs"] == "0" and s["not_measured"] == "1" and "skipped: needs" in s["notes"],
           "the skipped case must be kept with its reason")
    expect("(MIXED)" in open(out_md).read(), "the Markdown header must flag the mixed revisions and hosts")
    r = run("sweep_gather.py", os.path.join(FIXTURES, "sweep"), "--strict")
    expect(r.returncode == 2 and "job-102/quick.jsonl:4" in r.stderr, "--strict: exit 2 naming the bad line")
    r = run("sweep_gather.py", os.path.join(WORK, "no-such-dir"))
    expect(r.returncode == 2, "nothing found: exit 2")


def check_run_perf_dry_run():
    # An "interpreter" for which `import torch` succeeds, so the plan includes the torch baseline whatever
    # is installed here; --dry-run never runs it.
    fake = os.path.join(WORK, "python-with-torch")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
    plan = os.path.join(WORK, "plan.jsonl")
    r = run("run_perf.py", "--dry-run", "--suites", "eigh", "train", "--N", "128", "8", "--T", "1000000", "2500",
            "--precision", "double", "--threads", "2", "--eigh-impls", "qgml", "--repeats", "5",
            "--max-seconds-per-case", "1800", "--memory-gb", "18", "--python", fake,
            "--build", os.path.join(WORK, "no-build"), "--plan-json", plan)
    expect(r.returncode == 0, f"exit {r.returncode}, expected 0")
    got = [json.loads(l) for l in open(plan)]
    got = [(p["suite"], p["impl"], p["N"], p.get("T"), p["decision"], p["rule"]) for p in got]
    want = [("gemm_peak", "openblas_dgemm", 2048, None, "run", "run")]
    for suite in ("eigh", "train_epoch"):
        for T in (2500, 1000000):
            for N in (8, 128):
                for impl in ("qgml", "torch"):
                    if T == 2500 or N == 8:
                        want.append((suite, impl, N, T, "run", "run"))
                    elif suite == "eigh" and impl == "torch":     # 6 x 1e6 x 128^2 complex128: ~1.5 TB
                        want.append((suite, impl, N, T, "skip", "memory"))
                    else:                                       # hours on this machine
                        want.append((suite, impl, N, T, "skip", "time"))
    expect(got == want, "planned cases differ:\n  got  " + "\n       ".join(map(str, got)) +
           "\n  want " + "\n       ".join(map(str, want)))
    expect("13 cases to run" in r.stdout and "4 skipped" in r.stdout,
           "the summary line must count 13 cases to run and 4 skipped")
    # --quick plans the small grid and skips nothing.
    r = run("run_perf.py", "--dry-run", "--quick", "--python", fake, "--build", os.path.join(WORK, "no-build"),
            "--plan-json", plan)
    quick = [json.loads(l) for l in open(plan)]
    expect(r.returncode == 0 and all(p["decision"] == "run" for p in quick), "--quick must skip nothing")
    expect(sorted({p["N"] for p in quick if p["suite"] != "gemm_peak"}) == [3, 8, 16, 32] and
           {p["T"] for p in quick if p["suite"] != "gemm_peak"} == {2500}, "--quick grid: N 3 8 16 32, T 2500")


def markdown_rows(text):
    """Table rows of Markdown output as lists of cells (header and separator left out)."""
    rows = [[c.strip() for c in l.strip().strip("|").split("|")] for l in text.splitlines() if l.startswith("| ")]
    return rows[1:]


def check_gpu_resource_usage():
    # A saved `cuobjdump --dump-resource-usage` (excerpts of the sm_80 cubins of a CUDA build of qgml_app and
    # of a small Kokkos program with a named functor), in the format --save-dump writes.
    dump = fx("cuobjdump_resource_usage.txt")
    r = run("gpu_resource_usage.py", "--from-dump", dump, "--block-size", "32", "256")
    expect(r.returncode == 0, f"exit {r.returncode}, expected 0")
    rows = {(c[0], c[1]): c[2:] for c in markdown_rows(r.stdout)}
    # columns after kernel and mapped via: pattern/policy, Real, entries, registers, static smem, stack, local,
    # constant, occupancy at 32, occupancy at 256
    want = {
        ("`qgml::batched_eigh`", "enclosing function, lambda(CudaTeamMember const&)#1"):
            ["for, TeamPolicy", "double / float", "2", "90 / 76", "16", "24", "0", "720 / 696",
             "31 % (20, registers) / 38 % (24, registers)", "25 % (2, registers) / 38 % (3, registers)"],
        ("`qgml::batched_eigh`", "enclosing function, lambda(CudaTeamMember const&)#2"):
            ["for, TeamPolicy", "double", "1", "76", "144", "24", "0", "672", "38 % (24, registers)",
             "38 % (3, registers)"],
        ("`qgml::build_hamiltonians`", "enclosing function, lambda(unsigned long)#1"):
            ["for, RangePolicy", "double / float", "2", "34", "0", "0", "0", "568", "50 % (32, blocks)",
             "75 % (6, registers)"],
        ("`qgml::Trainer::finish_batch`", "enclosing function, lambda(int, int&)#1"):
            ["reduce, RangePolicy", "double", "1", "24", "0", "0", "0", "512", "50 % (32, blocks)",
             "100 % (8, threads)"],
        ("`qgml::Trainer::train_distributed_batches`", "enclosing function, lambda(int, int&, bool)#1"):
            ["scan, RangePolicy", "double", "1", "30", "0", "8", "0", "528", "50 % (32, blocks)",
             "100 % (8, registers, threads)"],
        ("`qgml::count_eigh_failures`", "enclosing function, lambda(int, int&)#1"):
            ["reduce, RangePolicy", "-", "1", "21", "0", "0", "0", "464", "50 % (32, blocks)", "100 % (8, threads)"],
        ("`qgml::ScaleFunctor`", "functor"):
            ["for, RangePolicy", "double", "1", "11", "0", "0", "0", "408", "50 % (32, blocks)", "100 % (8, threads)"],
    }
    for key, cells in want.items():
        expect(rows.get(key) == cells, f"row {key}:\n  got  {rows.get(key)}\n  want {cells}")
    expect(len(rows) == len(want), f"expected {len(want)} qgml rows, got {len(rows)}: {sorted(rows)}")
    expect("1 Kokkos::Impl::ViewCopy" in r.stdout and "1 main" in r.stdout,
           "the Kokkos-internal and non-qgml kernels must be counted under 'Not listed'")
    expect("14 entries (13 distinct), 0 with local memory" in r.stdout, "expected '14 entries (13 distinct)'")
    # --all-kernels lists them; --dynamic-smem enters the shared-memory limit (16 + 40000 + 1024 reserved,
    # in units of 128: 41088 B per block, 4 blocks in 164 KB).
    r = run("gpu_resource_usage.py", "--from-dump", dump, "--all-kernels", "--block-size", "32",
            "--dynamic-smem", "40000")
    rows = {(c[0], c[1]): c[2:] for c in markdown_rows(r.stdout)}
    expect(r.returncode == 0 and rows.get(("`Kokkos::Impl::ViewCopy`", "functor"), [""])[0] == "for, MDRangePolicy",
           "--all-kernels must list Kokkos::Impl::ViewCopy (for, MDRangePolicy)")
    eigh = rows.get(("`qgml::batched_eigh`", "enclosing function, lambda(CudaTeamMember const&)#1"), [""])
    expect(eigh[-1] == "6 % (4, shared)", f"--dynamic-smem 40000 at B = 32: got {eigh[-1]}")
    # --save-dump writes what --from-dump reads back to the same table.
    saved = os.path.join(WORK, "saved_dump.txt")
    r1 = run("gpu_resource_usage.py", "--from-dump", dump, "--save-dump", saved)
    r2 = run("gpu_resource_usage.py", "--from-dump", saved)
    expect(r1.returncode == 0 and r2.returncode == 0 and r1.stdout == r2.stdout, "--save-dump round trip differs")
    # Errors: an architecture that is not in the dump, a --cuobjdump that does not exist.
    r = run("gpu_resource_usage.py", "--from-dump", dump, "--arch", "sm_90")
    expect(r.returncode == 2 and "no kernel entries found for sm_90 (found: sm_80)" in r.stderr,
           "--arch sm_90: exit 2 naming the architectures found")
    r = run("gpu_resource_usage.py", WORK, "--cuobjdump", os.path.join(WORK, "no-cuobjdump"))
    expect(r.returncode == 2 and "not an executable file" in r.stderr, "missing --cuobjdump: exit 2 with a message")


def check_scaling_report():
    """perf/scaling.py --report on synthetic results: t = 1e-9 N^3 T (N >= 16), t = 4e-7 T, 20 MiB + 64 B/point."""
    r = run("scaling.py", "--report", fx("scaling/fixture.jsonl"), "--out", WORK, "--name", "report", "--no-plots")
    expect(r.returncode == 0, f"exit {r.returncode}, expected 0")
    md = open(os.path.join(WORK, "report.md")).read()
    expect("p = 3.00 over N >= 16 (16, 32, 64)" in md, "the N exponent over N >= 16 must be 3.00")
    expect("Fitted t ~ T^q: q = 1.000 (T = 2500 .. 1000000)" in md, "the T exponent must be 1.000")
    expect("Peak memory against T at batch 2500: 20 MiB + 64 bytes per point." in md,
           "the memory fit must give 20 MiB + 64 bytes per point")
    rows = {cells[0]: cells for cells in markdown_rows(md) if cells and cells[0].isdigit()}
    expect(rows.get("32", [None] * 5)[4] == "3.00", f"local exponent between N = 16 and 32: {rows.get('32')}")
    expect("| T | 64 | 1000000 | predicted epoch 77 s" in md, "the skipped case must be listed with its reason")


def check_scaling_measure():
    """perf/scaling.py against a stand-in benchmark (median_s = 1e-7 N T, 1 KiB of memory per point): series,
    the long-case rule (one epoch, no warm-up), the skip rule and the measured peak memory."""
    out = os.path.join(WORK, "m")
    r = run("scaling.py", "--build", fx("scaling/fake_build"), "--N", "4", "8", "--n-series-T", "1000",
            "--T", "1000", "10000", "100000", "--T-series-N", "8", "64", "--long-epoch-seconds", "0.05",
            "--max-epoch-seconds", "0.5", "--out", out, "--name", "m", "--no-plots")
    expect(r.returncode == 0, f"exit {r.returncode}, expected 0")
    lines = [json.loads(l) for l in open(os.path.join(out, "m.jsonl"))]
    got = {(l.get("series"), l["N"], l["T"]): l for l in lines if l.get("suite") == "train_epoch"}
    want = {("N", 4, 1000), ("N", 8, 1000), ("T", 8, 1000), ("T", 8, 10000), ("T", 8, 100000), ("T", 64, 1000),
            ("T", 64, 10000), ("T", 64, 100000)}
    expect(set(got) == want, f"cases {sorted(got)} != {sorted(want)}")
    expect(got[("T", 64, 100000)].get("status") == "skipped"
           and "predicted epoch 0.64 s > --max-epoch-seconds 0.5" in got[("T", 64, 100000)]["reason"],
           f"N = 64, T = 1e5 (predicted 0.64 s) must be skipped: {got[('T', 64, 100000)]}")
    expect(all(l.get("precision") == "double" for l in got.values()), "only the requested precision is kept")
    long_case = got[("T", 8, 100000)]
    expect(long_case["repeats"] == 1 and long_case["warmup"] == 0,
           f"predicted 0.08 s > 0.05 s: one epoch without warm-up, got {long_case['repeats']}, {long_case['warmup']}")
    expect(got[("T", 8, 10000)]["repeats"] == 3 and got[("T", 8, 10000)]["warmup"] == 1, "default repeats 3, warmup 1")
    expect(got[("T", 8, 10000)]["batch"] == 2500 and got[("T", 8, 1000)]["batch"] == 1000, "batch = min(T, 2500)")
    grow = got[("T", 8, 100000)]["peak_rss_bytes"] - got[("T", 8, 1000)]["peak_rss_bytes"]
    expect(grow >= 0.9 * 1024 * 99000, f"peak RSS must grow by the stand-in's 1 KiB per point: {grow} bytes")


def check_speed_target_ratios():
    """perf/speed_targets.py's ratios and compare.py train --floor's columns on synthetic lines: dgemm 200
    GFLOP/s, so the N = 8, T = 2500 floor is 2500 x 36 x 512 / 2e11 s = 0.2304 ms."""
    sys.path.insert(0, PERF)
    import compare
    import speed_targets
    peak = {"suite": "gemm_peak", "impl": "openblas_dgemm", "gflops": 200.0}
    base = {"suite": "train_epoch", "precision": "double", "N": 8, "T": 2500, "batch": 2500, "w": 0.0,
            "points_per_s": 1.0, "final_loss": 0.1}
    lines = [peak, dict(base, impl="qgml", median_s=0.0005),
             dict(base, impl="torch2_vectorised", peer="torch2_vectorised", median_s=0.015),
             dict(base, impl="jax", peer="jax", median_s=0.02)]
    fastest = speed_targets.ratios(lines, ("double", 8), "fastest_peer")
    floor = speed_targets.ratios(lines, ("double", 8), "floor")
    expect(abs(fastest - 30.0) < 1e-12, f"fastest peer / qgml = {fastest}, expected 30")
    expect(abs(floor - 0.0005 / 0.00023040) < 1e-9, f"qgml / floor = {floor}, expected 2.170")
    expect(speed_targets.ratios(lines, ("double", 64), "fastest_peer") is None, "a missing case gives None")
    expect(speed_targets.ratios(lines[1:], ("double", 8), "floor") is None, "no dgemm line, no floor")
    eigh = [dict(suite="eigh", precision="double", N=64, T=2500, impl="qgml", median_s=0.01),
            dict(suite="eigh", precision="double", N=64, T=2500, impl="lapacke", median_s=0.025)]
    expect(abs(speed_targets.ratios(eigh, ("double", 64), "lapacke") - 2.5) < 1e-12, "LAPACKE / qgml = 2.5")
    table = compare.summarize("train", lines, False, ("qgml",), ["torch2_vectorised", "jax"])
    expect("| 0.2304 | 2.17 |" in table, f"the floor columns of compare.py train --floor:\n{table}")
    expect("| 30.00 (torch2_vectorised) |" in table, f"the fastest-peer column:\n{table}")


def check_sanitizer_report():
    """perf/gpu/sanitizer_report.py: a racecheck report is suppressed only when every access lies in the
    Kokkos reduction files; one access in qgml's code keeps it; an initcheck host copy only when Kokkos'
    scratch-pool growth made it; memcheck is never filtered; hazards the summary counts beyond the parsed
    reports are kept; a log without a summary exits 2."""
    kokkos = "/opt/kokkos/include/Cuda/Kokkos_Cuda_ReduceScan.hpp"
    team = "/opt/kokkos/include/Cuda/Kokkos_Cuda_Team.hpp"
    qgml = "/src/core/include/qgml/linalg/jacobi_team.hpp"

    def log(name, body):
        path = os.path.join(WORK, name)
        with open(path, "w") as f:
            f.write("========= COMPUTE-SANITIZER\n" + body)
        return path

    def race(a, b, hazards=1, kind="Warning"):
        return (f"========= {kind}: Race reported between Write access at 0x1a0 in {a}:120:void f()\n"
                f"=========     and Read access at 0x1c0 in {b}:118:void g() [{hazards} hazards]\n=========\n")

    inside = log("inside.log", race(kokkos, kokkos, 40) + race(team, kokkos, 2) +
                 "========= RACECHECK SUMMARY: 42 hazards displayed (0 errors, 42 warnings)\n")
    r = run("gpu/sanitizer_report.py", "--tool", "racecheck", "--json", os.path.join(WORK, "s.jsonl"), inside)
    rec = json.loads(r.stdout.splitlines()[-1])
    expect(r.returncode == 0 and rec["suppressed"] == 42 and rec["kept"] == 0, "Kokkos-only hazards not suppressed")
    mixed = log("mixed.log", race(kokkos, kokkos, 5) + race(qgml, kokkos, 3, "Error") +
                "========= RACECHECK SUMMARY: 8 hazards displayed (3 errors, 5 warnings)\n")
    r = run("gpu/sanitizer_report.py", "--tool", "racecheck", mixed)
    rec = json.loads(r.stdout.splitlines()[-1])
    expect(r.returncode == 1 and rec["kept"] == 3 and rec["suppressed"] == 5, "a hazard in qgml's code was filtered")
    expect(rec["kept_locations"][0][0] == qgml + ":77" or rec["kept_locations"][0][0].startswith(qgml),
           "the kept hazard's location is not named")
    unparsed = log("unparsed.log", race(kokkos, kokkos, 1) +
                   "========= RACECHECK SUMMARY: 4 hazards displayed (0 errors, 4 warnings)\n")
    r = run("gpu/sanitizer_report.py", "--tool", "racecheck", unparsed)
    expect(r.returncode == 1 and json.loads(r.stdout.splitlines()[-1])["unparsed"] == 3,
           "hazards counted by the summary but not parsed were dropped")
    mem = log("mem.log", "========= Invalid __global__ read of size 8 bytes\n=========     at 0x90 in "
              f"{kokkos}:10:void k()\n=========\n========= ERROR SUMMARY: 1 error\n")
    r = run("gpu/sanitizer_report.py", "--tool", "memcheck", mem)
    expect(r.returncode == 1 and json.loads(r.stdout.splitlines()[-1])["kept"] == 1, "memcheck was filtered")
    def host_copy(frames):
        return ("========= Host API memory access error at host access to 0x7f00 of size 950 bytes\n"
                "=========     Uninitialized access to 0x7f10 on access by cudaMemcpy source\n"
                "=========     Saved host backtrace up to driver entry point at error\n" +
                "".join(f"=========         Host Frame: {f} [0x1] in qgml_tests\n" for f in frames) + "=========\n")

    pool = ["Kokkos::Impl::DeepCopy<>::DeepCopy(void*)", "Kokkos::Impl::SharedAllocationRecordCommon<>::reallocate_tracked",
            "Kokkos::Impl::CudaInternal::resize_team_scratch_space(long, bool)", "qgml::detail::loss_gradient_team<>()"]
    ours = ["Kokkos::Impl::DeepCopy<>::DeepCopy(void*)", "qgml::Trainer<>::checkpoint()"]
    init = log("init.log", host_copy(pool) * 3 + host_copy(ours) + "========= ERROR SUMMARY: 4 errors\n")
    r = run("gpu/sanitizer_report.py", "--tool", "initcheck", init)
    rec = json.loads(r.stdout.splitlines()[-1])
    expect(r.returncode == 1 and rec["suppressed"] == 3 and rec["kept"] == 1,
           "initcheck: Kokkos' scratch-pool copies not filtered, or qgml's own copy filtered")
    r = run("gpu/sanitizer_report.py", "--tool", "memcheck", init)
    expect(json.loads(r.stdout.splitlines()[-1])["kept"] == 4, "the scratch-pool filter applied to memcheck")
    clean = log("clean.log", "========= ERROR SUMMARY: 0 errors\n")
    expect(run("gpu/sanitizer_report.py", "--tool", "memcheck", clean).returncode == 0, "a clean log failed")
    cut = log("cut.log", race(qgml, qgml))
    expect(run("gpu/sanitizer_report.py", "--tool", "racecheck", cut).returncode == 2, "a log cut short passed")
    expect(run("gpu/sanitizer_report.py", "--tool", "initcheck", os.path.join(WORK, "none.log")).returncode == 2,
           "a missing log passed")


def check_build_times():
    # A ninja log in which one object was built twice (the latest record counts), a link (not an object)
    # and three objects: 5 + 2 + 1 = 8 seconds of compilation, the largest 5.
    build = os.path.join(WORK, "build")
    os.makedirs(build, exist_ok=True)
    with open(os.path.join(build, ".ninja_log"), "w") as f:
        f.write("# ninja log v5\n0\t9000\t0\ta.o\tx\n0\t5000\t0\ta.o\tx\n5000\t7000\t0\tb.o\tx\n"
                "7000\t8000\t0\tc.cxx.o\tx\n8000\t9500\t0\tprogram\tx\n")
    r = run("build_times.py", build, "--label", "fixture", "--wall", "6.5", "--revision", "abc")
    expect(r.returncode == 0, f"exit {r.returncode}")
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    objects = [x for x in lines if x["kind"] == "object"]
    summary = [x for x in lines if x["kind"] == "summary"]
    expect([x["object"] for x in objects] == ["a.o", "b.o", "c.cxx.o"], f"objects {objects}")
    expect(len(summary) == 1 and summary[0]["sum_seconds"] == 8.0 and summary[0]["largest_seconds"] == 5.0 and
           summary[0]["largest_object"] == "a.o" and summary[0]["wall_seconds"] == 6.5 and
           summary[0]["revision"] == "abc", f"summary {summary}")
    expect(run("build_times.py", os.path.join(WORK, "nothing")).returncode != 0, "a tree without a log passed")


CHECKS = {
    "build-times": check_build_times,
    "sanitizer-report": check_sanitizer_report,
    "regression-equal": check_regression_equal,
    "regression-slower": check_regression_slower,
    "regression-bad-input": check_regression_bad_input,
    "sweep-gather": check_sweep_gather,
    "run-perf-dry-run": check_run_perf_dry_run,
    "gpu-resource-usage": check_gpu_resource_usage,
    "scaling-report": check_scaling_report,
    "scaling-measure": check_scaling_measure,
    "torch-vectorised-gradient": lambda: check_torch_vectorised_gradient(),
    "speed-target-ratios": check_speed_target_ratios,
}


def check_torch_vectorised_gradient():
    """perf/baselines/torch_train_vectorised.py's analytic backward equals autograd through eigh (the
    reference-style baseline) and stays finite where that one is NaN (degenerate excited states, docs/math.md 4.7)."""
    try:
        import torch
    except ImportError:
        print("torch not importable: skipped")
        sys.exit(77)
    sys.path.insert(0, os.path.join(PERF, "baselines"))
    import torch_train_epoch as ref
    import torch_train_vectorised as vec
    loss_fn = vec.make_loss_function(torch)
    torch.manual_seed(7)
    for N, D, B, w in ((5, 3, 7, 0.0), (5, 3, 7, 0.3), (8, 2, 11, 0.25), (1, 3, 4, 0.0)):
        mats = ref.qr_init(torch, N, D, torch.complex128)
        A = torch.nn.Parameter(torch.stack([m.detach() for m in mats]))
        x = torch.randn(B, D, dtype=torch.float64)
        lv = loss_fn.apply(A, x, w, 1e-8)
        lv.backward()
        lr = ref.qgml_loss(torch, mats, x, w)
        lr.backward()
        G = torch.stack([m.grad for m in mats])
        expect(abs(float(lv) - float(lr)) <= 1e-13 * abs(float(lr)), f"N={N} w={w}: loss {float(lv)} != {float(lr)}")
        err = float((A.grad - G).abs().max() / G.abs().max().clamp_min(1e-300))
        expect(err <= 1e-11 or N == 1 and float(G.abs().max()) <= 1e-14,
               f"N={N} D={D} w={w}: analytic gradient differs from autograd by {err:.2e} (relative)")
    # A_1 = diag(0, 1, 1), x = 0.2: excited states degenerate; autograd through eigh gives NaN (docs/math.md 4.7).
    A = torch.nn.Parameter(torch.zeros(1, 3, 3, dtype=torch.complex128))
    with torch.no_grad():
        A[0] = torch.diag(torch.tensor([0.0, 1.0, 1.0], dtype=torch.complex128))
    loss_fn.apply(A, torch.tensor([[0.2]], dtype=torch.float64), 0.0, 1e-8).backward()
    expect(bool(torch.isfinite(torch.view_as_real(A.grad)).all()), "degenerate excited states: non-finite gradient")


def main():
    global PERF, WORK
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("check", choices=sorted(CHECKS))
    p.add_argument("--perf-dir", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    PERF, WORK = os.path.abspath(a.perf_dir), os.path.abspath(a.work)
    os.makedirs(WORK, exist_ok=True)
    try:
        CHECKS[a.check]()
    except Failed as e:
        print(f"FAILED {a.check}: {e}")
        return 1
    print(f"ok {a.check}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
