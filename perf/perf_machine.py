"""The machine and the build tree of perf/run_perf.py: the memory budget of the benchmarks, a build's
backend and Kokkos version (from its CMakeCache), Kokkos' thread option and the environment of a case."""
import os
import re


def memory_budget_bytes(a):
    if a.memory_gb:
        return a.memory_gb * 2**30
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            v = open(path).read().strip()
            if v.isdigit():
                total = min(total, int(v))
        except OSError:
            pass
    return 0.75 * total


def build_config(build):
    """Backend and Kokkos version of a build tree, from its CMakeCache (without running anything)."""
    cfg = {"backend": "unknown", "kokkos_version": "unknown"}
    try:
        cache = open(os.path.join(build, "CMakeCache.txt")).read()
    except OSError:
        return cfg
    m = re.search(r"^QGML_BACKEND:\w+=(\S+)", cache, re.M)
    if m:
        cfg["backend"] = m.group(1)
    m = re.search(r"^Kokkos_DIR:\w+=(.+)$", cache, re.M)
    if m:
        try:
            v = re.search(r'PACKAGE_VERSION "([0-9.]+)"',
                          open(os.path.join(m.group(1).strip(), "KokkosConfigVersion.cmake")).read())
            if v:
                cfg["kokkos_version"] = v.group(1)
        except OSError:
            pass
    return cfg


def kokkos_threads_flag(kokkos_version, threads):
    """--kokkos-num-threads=N (Kokkos >= 3.7) or --kokkos-threads=N (older; 3.4 ignores the new spelling)."""
    try:
        major, minor = (int(x) for x in kokkos_version.split(".")[:2])
        new = (major, minor) >= (3, 7)
    except ValueError:
        new = True
    return f"--kokkos-num-threads={threads}" if new else f"--kokkos-threads={threads}"


def case_env(threads):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env["OPENBLAS_NUM_THREADS"] = "1"
    env.setdefault("OMP_PROC_BIND", "false")   # a batch job's binding (OMP_PROC_BIND, OMP_PLACES) is kept
    return env
