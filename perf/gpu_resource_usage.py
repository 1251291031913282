#!/usr/bin/env python3
"""Per-kernel GPU resources of a CUDA build of qgml, from `cuobjdump --dump-resource-usage`, as Markdown.

  perf/gpu_resource_usage.py BUILD_DIR_OR_EXECUTABLE... [options]
  perf/gpu_resource_usage.py --from-dump FILE... [options]

Runs cuobjdump on the executables (and shared libraries) given, or found under the build directories
given, reads the resource usage of every kernel entry of their sm_XX cubins (registers per thread,
static shared memory, stack frame, local memory, constant memory), demangles the entries with c++filt
and maps each Kokkos kernel to its qgml:: kernel. Kokkos launches a closure as
Kokkos::Impl::cuda_parallel_launch_*_memory<Kokkos::Impl::ParallelFor<FUNCTOR, POLICY, ...>> (or
ParallelReduce, ParallelScan): a named FUNCTOR is the kernel; a lambda's type names only its enclosing
function, so a lambda is shown as that function (templates and parameters dropped) plus its number
there, e.g. `qgml::build_hamiltonians<double>(...)::{lambda(int)#2}` becomes `qgml::build_hamiltonians`,
lambda(int)#2. The label string given to parallel_for is not in the binary; no source is read.
Entries are grouped by kernel and Real (float / double, from the template arguments); `a-b` is the range
over the entries of a group (View types, translation units, executables).

The occupancy columns are the limits of an A100 (sm_80: 65536 registers in 4 sub-partitions allocated in
units of 256 per warp, 164 KB shared memory per SM plus 1 KB reserved per block in units of 128 B,
2048 threads and 32 blocks per SM), the rules of CUDA's cuda_occupancy.h, for --block-size threads per
block and --dynamic-smem bytes of dynamic shared memory (Kokkos' team scratch, reductions) per block.

Prints Markdown on stdout, progress on stderr. Exit status 0, 1 if no qgml kernel was found, 2 on
errors (no cuobjdump, no c++filt, nothing to read).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

A100 = dict(regs_per_sm=65536, sub_partitions=4, reg_unit=256, max_regs_per_thread=255, smem_per_sm=164 * 1024,
            smem_reserved_per_block=1024, smem_unit=128, smem_per_block=48 * 1024, smem_per_block_optin=163 * 1024,
            threads_per_sm=2048, blocks_per_sm=32, warp=32)
KOKKOS_CLOSURE = re.compile(r"Kokkos::Impl::Parallel(For|Reduce|ScanWithTotal|Scan)<")
PATTERNS = {"For": "for", "Reduce": "reduce", "Scan": "scan", "ScanWithTotal": "scan"}


def log(msg):
    print("gpu_resource_usage: " + msg, file=sys.stderr, flush=True)


def fail(msg):
    log(msg)
    sys.exit(2)


# ------------------------------------------------------------------------------------------------
# Reading cuobjdump


def find_cuobjdump(given):
    if given:
        if not (os.path.isfile(given) and os.access(given, os.X_OK)):
            fail(f"--cuobjdump {given}: not an executable file")
        return given
    for cand in (shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump",
                 os.path.join(os.environ.get("CUDA_HOME", "/nonexistent"), "bin", "cuobjdump")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    fail("cuobjdump not found (not on PATH, not in /usr/local/cuda/bin or $CUDA_HOME/bin); pass "
         "--cuobjdump PATH. It comes with the CUDA toolkit, or alone in NVIDIA's wheel: "
         "`pip download --no-deps nvidia-cuda-cuobjdump -d DIR`, unzip, nvidia/cu13/bin/cuobjdump.")


def is_elf_binary(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def binaries(paths):
    """Executables and shared libraries: the files given, and those found under the directories given."""
    found = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d != "CMakeFiles")
                for f in sorted(files):
                    full = os.path.join(root, f)
                    shared_lib = re.search(r"\.so(\.|$)", f)
                    if (os.access(full, os.X_OK) or shared_lib) and not os.path.islink(full) and is_elf_binary(full):
                        found.append(full)
        elif os.path.isfile(p):
            found.append(p)
        else:
            fail(f"{p}: no such file or directory")
    return found


def dump_binaries(cuobjdump, paths):
    """The concatenated dumps, each after a line '# executable: PATH' (the format --save-dump writes)."""
    out = []
    for path in paths:
        r = subprocess.run([cuobjdump, "--dump-resource-usage", path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if "Fatbin elf code" not in r.stdout:
            continue                                   # no device code (host tools, CMake probes)
        log(f"{path}: {r.stdout.count('Function ')} kernel entries")
        out.append(f"# executable: {path}\n{r.stdout}")
    return "".join(out)


def parse_dump(text, default_source):
    """Kernel entries of the sm_XX cubins: dicts source, arch, mangled, and the resource counts."""
    entries, source, arch, in_elf, fn = [], default_source, None, False, None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("# executable:"):
            source = s.split(":", 1)[1].strip()
        elif s.startswith("Fatbin elf code"):
            in_elf, arch = True, None
        elif s.startswith("Fatbin ptx code"):
            in_elf = False
        elif s.startswith("arch =") and in_elf:
            arch = s.split("=", 1)[1].strip()
        elif s.startswith("Function ") and s.endswith(":") and in_elf:
            fn = s[len("Function "):-1]
        elif fn and s.startswith("REG:"):
            res = {k: int(v) for k, v in re.findall(r"([A-Z]+(?:\[\d+\])?):(\d+)", s)}
            const = sum(v for k, v in res.items() if k.startswith("CONSTANT"))
            entries.append(dict(source=source, arch=arch, mangled=fn, regs=res.get("REG", 0),
                                smem=res.get("SHARED", 0), stack=res.get("STACK", 0),
                                local=res.get("LOCAL", 0), const=const))
            fn = None
    return entries


def demangle(names):
    cxxfilt = shutil.which("c++filt")
    if not cxxfilt:
        fail("c++filt not found (binutils)")
    out = subprocess.run([cxxfilt], input="\n".join(names) + "\n", stdout=subprocess.PIPE, text=True,
                         check=True).stdout.splitlines()
    return dict(zip(names, out))


# ------------------------------------------------------------------------------------------------
# From a demangled entry to a qgml kernel


def closing(s, i):
    """Index of the bracket closing the one that opens at s[i] (<>, () or {})."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] in "<({":
            depth += 1
        elif s[j] in ">)}":
            depth -= 1
            if depth == 0:
                return j
    return len(s)


def top_level_args(s, i):
    """Top-level arguments of the template argument list opening at s[i]."""
    end, args, depth, start = closing(s, i), [], 0, i + 1
    for j in range(i + 1, end):
        if s[j] in "<({":
            depth += 1
        elif s[j] in ">)}":
            depth -= 1
        elif s[j] == "," and depth == 0:
            args.append(s[start:j].strip())
            start = j + 1
    args.append(s[start:end].strip())
    return args


def plain_name(qualified):
    """'qgml::LossGradient<double, Kokkos::Cuda>::compute' -> 'qgml::LossGradient::compute'."""
    out, depth = "", 0
    for ch in qualified:
        depth += ch == "<"
        if depth == 0:
            out += ch
        depth -= ch == ">"
    return out.strip()


def function_name(text):
    """Qualified name of a demangled function 'ret ns::f<...>(params) const': the part before the
    parameter list, without a leading return type."""
    depth, paren = 0, len(text)
    for j, ch in enumerate(text):
        if ch in "<{":
            depth += 1
        elif ch in ">}":
            depth -= 1
        elif ch == "(" and depth == 0 and not text.startswith("(anonymous namespace)", j):
            paren = j
            break
    name, depth = text[:paren], 0
    for j, ch in enumerate(name):                      # a return type ends at a top-level space
        depth += ch in "<("
        depth -= ch in ">)"
        if ch == " " and depth == 0:
            return name[j + 1:], text[paren:]
    return name, text[paren:]


def real_of(*texts):
    for t in texts:
        m = re.search(r"\b(double|float)\b", t)
        if m:
            return m.group(1)
    return "-"


def classify(demangled):
    """dict(label, via, pattern, policy, real, qgml) for one kernel entry."""
    m = KOKKOS_CLOSURE.search(demangled)
    if not m:                                          # a plain __global__ function
        name, params = function_name(demangled)
        label = plain_name(name)
        return dict(label=label, via="kernel function", pattern="-", policy="-", real=real_of(name, params),
                    qgml=label.startswith("qgml::"))
    args = top_level_args(demangled, m.end() - 1)
    functor, policy_arg = args[0], (args[1] if len(args) > 1 else "")
    if functor.startswith("Kokkos::Impl::CudaFunctorAdapter<"):
        functor = top_level_args(functor, functor.index("<"))[0]
    policy = next((p for p in ("TeamPolicy", "MDRangePolicy", "RangePolicy") if p in policy_arg), "?")
    lam = functor.find("::{lambda(")
    if lam >= 0:                                       # the outermost lambda names its enclosing function
        enclosing = functor[:lam]
        tag = functor[lam + 3:closing(functor, lam + 2)].replace("Kokkos::Impl::", "")  # lambda(int)#2
        name, params = function_name(enclosing)
        label, via, real = plain_name(name), "enclosing function, " + tag, real_of(name, params)
    else:
        m2 = re.search(r"__nv_(?:h?dl)_tag<[^&]*&([^,>]+)", functor)   # nvcc's wrapper of extended lambdas
        if m2:
            label, via, real = plain_name(m2.group(1)), "enclosing function (nvcc lambda tag)", real_of(functor)
        else:
            label, via, real = plain_name(functor), "functor", real_of(functor)
    return dict(label=label, via=via, pattern=PATTERNS[m.group(1)], policy=policy, real=real,
                qgml=label.startswith("qgml::"))


# ------------------------------------------------------------------------------------------------
# Occupancy on an A100 (cuda_occupancy.h for compute capability 8.0)


def occupancy(regs, static_smem, block, dynamic_smem):
    """(blocks per SM, limiting resource, occupancy in % of the 64 warps of an SM)."""
    a, up = A100, (lambda x, u: -(-x // u) * u)
    warps = -(-block // a["warp"])
    limits = {"threads": a["threads_per_sm"] // (warps * a["warp"]), "blocks": a["blocks_per_sm"]}
    reg_warp = up(max(regs, 1) * a["warp"], a["reg_unit"])
    if (regs > a["max_regs_per_thread"] or reg_warp * up(warps, a["sub_partitions"]) > a["regs_per_sm"]):
        limits["registers"] = 0
    else:
        per_sub = (a["regs_per_sm"] // a["sub_partitions"]) // reg_warp
        limits["registers"] = per_sub * a["sub_partitions"] // warps
    smem = up(static_smem + dynamic_smem + a["smem_reserved_per_block"], a["smem_unit"])
    per_block_limit = a["smem_per_block"] if static_smem + dynamic_smem <= a["smem_per_block"] \
        else a["smem_per_block_optin"]
    limits["shared"] = 0 if static_smem + dynamic_smem > per_block_limit else a["smem_per_sm"] // smem
    blocks = min(limits.values())
    names = ", ".join(k for k in ("registers", "shared", "threads", "blocks") if limits[k] == blocks)
    return blocks, names, 100.0 * blocks * warps / (a["threads_per_sm"] // a["warp"])


# ------------------------------------------------------------------------------------------------
# Tables


def span(values):
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def main():
    p = argparse.ArgumentParser(prog="perf/gpu_resource_usage.py", description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.splitlines()[1:]))
    p.add_argument("paths", nargs="*", help="CUDA build directories (searched for ELF executables and "
                   "shared libraries, CMakeFiles/ skipped) or executables")
    p.add_argument("--from-dump", nargs="+", metavar="FILE", default=[],
                   help="read saved `cuobjdump --dump-resource-usage` output instead of running cuobjdump")
    p.add_argument("--save-dump", metavar="FILE", help="also write the dumps read to FILE (for --from-dump)")
    p.add_argument("--cuobjdump", metavar="PATH", help="cuobjdump to run (default: PATH, /usr/local/cuda/bin)")
    p.add_argument("--arch", default=None, help="cubin architecture, e.g. sm_80 (default: every sm_XX found)")
    p.add_argument("--block-size", type=int, nargs="+", default=[256], metavar="B",
                   help="threads per block for the occupancy columns (default 256; several give a column each)")
    p.add_argument("--dynamic-smem", type=int, default=0, metavar="BYTES",
                   help="dynamic shared memory per block for the occupancy columns (default 0)")
    p.add_argument("--all-kernels", action="store_true", help="also list Kokkos-internal and non-qgml kernels")
    a = p.parse_args()
    if not a.paths and not a.from_dump:
        p.error("give build directories or executables, or --from-dump FILE")

    dumps = []
    for f in a.from_dump:
        try:
            with open(f) as fh:
                dumps.append((fh.read(), f))
        except OSError as e:
            fail(f"{f}: cannot read ({e.strerror})")
    if a.paths:
        cuobjdump = find_cuobjdump(a.cuobjdump)
        files = binaries(a.paths)
        log(f"{cuobjdump} on {len(files)} ELF files")
        dumps.append((dump_binaries(cuobjdump, files), "-"))
    if a.save_dump:
        with open(a.save_dump, "w") as fh:
            fh.write("".join(d if d.startswith("# executable:") else f"# executable: {src}\n{d}" for d, src in dumps))
    entries = [e for d, src in dumps for e in parse_dump(d, src)]
    archs = sorted({e["arch"] for e in entries if e["arch"]})
    if a.arch:
        entries = [e for e in entries if e["arch"] == a.arch]
    if not entries:
        fail("no kernel entries found" + (f" for {a.arch} (found: {', '.join(archs) or 'none'})" if a.arch
                                          else " (no device code in the files given?)"))
    names = demangle(sorted({e["mangled"] for e in entries}))

    groups, others = {}, {}
    for e in entries:
        k = classify(names[e["mangled"]])
        if k["qgml"] or a.all_kernels:
            g = groups.setdefault((k["label"], k["via"], e["arch"]), dict(kind=k, reals={}))
            g["reals"].setdefault(k["real"], []).append(e)
        else:
            others.setdefault(k["label"], set()).add(e["mangled"])

    multi_arch = len({e["arch"] for e in entries}) > 1
    print(f"Kernels of {', '.join(sorted({e['source'] for e in entries}))}; cubins {', '.join(archs)}"
          + (f" (shown: {a.arch})" if a.arch else "") + ". Registers per thread; in bytes: static shared memory "
          "per block, stack frame and local memory (spills, local arrays) per thread, constant memory summed over "
          "the banks; `a / b` is double / float, `a-b` the range over a kernel's entries. "
          f"Occupancy on an A100 (sm_80) at B threads per block with {a.dynamic_smem} B of dynamic shared "
          "memory per block: warps resident / 64 (blocks per SM, the limiting resource).\n")
    print("| kernel | mapped via | pattern, policy | Real |" + (" arch |" if multi_arch else "") + " entries "
          "| registers | static smem | stack | local | constant |"
          + "".join(f" occupancy at B = {b} |" for b in a.block_size))
    print("|---" * (10 + multi_arch + len(a.block_size)) + "|")

    def cell(values):                                  # one value per Real, merged when they agree
        return values[0] if len(set(values)) == 1 else " / ".join(values)

    for (label, via, arch), g in sorted(groups.items(), key=lambda kv: (not kv[1]["kind"]["qgml"], kv[0])):
        k = g["kind"]
        reals = sorted(g["reals"], key=lambda r: ["double", "float", "-"].index(r))
        per_real = [g["reals"][r] for r in reals]
        distinct = {e["mangled"] for es in per_real for e in es}
        row = [f"`{label}`", via, f"{k['pattern']}, {k['policy']}", " / ".join(reals)]
        row += [arch or "?"] if multi_arch else []
        row += [str(len(distinct))]
        row += [cell([span([e[f] for e in es]) for es in per_real])
                for f in ("regs", "smem", "stack", "local", "const")]
        for b in a.block_size:                         # the worst entry of each Real: most registers and smem
            occ = [occupancy(max(e["regs"] for e in es), max(e["smem"] for e in es), b, a.dynamic_smem)
                   for es in per_real]
            row.append(cell([f"{o:.0f} % ({n}, {lim})" for n, lim, o in occ]))
        print("| " + " | ".join(row) + " |")
    print()
    if others:
        print("Not listed (--all-kernels lists them): " + ", ".join(
            f"{len(v)} {k}" for k, v in sorted(others.items(), key=lambda kv: (-len(kv[1]), kv[0]))) + ".")
    spills = [e for e in entries if e["local"] > 0]
    print(f"{len(entries)} entries ({len({e['mangled'] for e in entries})} distinct), "
          f"{len(spills)} with local memory (spills or local arrays).")
    seen = {}
    for e in entries:
        seen.setdefault((e["mangled"], e["arch"]), set()).add((e["regs"], e["smem"], e["stack"], e["local"]))
    mismatched = [k for k, v in seen.items() if len(v) > 1]
    if mismatched:
        print(f"Warning: {len(mismatched)} kernel entries differ between cubins (different builds?).")
    return 0 if any(g["kind"]["qgml"] for g in groups.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
