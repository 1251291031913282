#!/usr/bin/env bash
# Per-kernel GPU resource usage of a CUDA build of qgml, as Markdown tables (perf/README.md,
# "GPU readiness (A100, on paper)"). Needs no GPU.
#
#   perf/gpu_resource_usage.sh BUILD_DIR [options]
#
# BUILD_DIR is a configured and built CUDA tree (e.g. `cmake --preset cuda -B /tmp/qgml-cuda` and a
# build of qgml, qgml_app and the perf benchmarks). The script
#  1. recompiles every translation unit of BUILD_DIR/compile_commands.json whose object exists (by
#     default those under core/, apps/, backends/ and perf/) with the exact flags of the build plus
#     -Xptxas=-v, into BUILD_DIR/gpu_resource_usage/ (the build's own objects are not touched), and reads
#     what ptxas reports per kernel entry: registers per thread, static shared memory, stack frame,
#     spill stores and loads. They are those of the sm_XX code in the build's binaries as long as the
#     sources have not changed since the build (same compiler, same flags); only compile_commands.json
#     and the list of built objects are read from the build.
#  2. demangles the entries (c++filt) and maps each Kokkos ParallelFor/Reduce/Scan closure back to the
#     label string of the qgml:: kernel it comes from, by finding the enclosing function in the sources
#     and counting its lambdas the way the Itanium ABI numbers them ({lambda(int)#2} = the second
#     lambda with that signature in the function).
#  3. compiles a generated probe (not part of qgml) with one kernel per compile-time size of the
#     eigensolver (hermitian_eigh<2>, <3>, <4>, runtime N, the warm start, the team variant), because
#     the shipped serial kernel contains all of them behind a run-time switch and ptxas reports only
#     their maximum.
#  4. cross-checks registers and static shared memory against the sm_XX cubins embedded (uncompressed)
#     in the build's executables: the register count is the top byte of sh_info of the .text.<kernel>
#     section, the static shared memory the size of .nv.shared.<kernel>; a mismatch means the build
#     is older than the sources.
#  5. reads the team sizes and scratch requests of the team kernels from the sources
#     (core/include/qgml/linalg/batched_eigh.hpp, linalg/hermitian_eigensolver.hpp, linalg/hermitian_jacobi.hpp)
#     and Kokkos' level-0 scratch limit from its headers, and evaluates them for the sizes asked, with
#     the occupancy they allow on an A100 (sm_80: 65536 registers, 164 KB shared memory, 2048 threads,
#     32 blocks per SM; 48 KB dynamic shared memory per block without the opt-in Kokkos 3.4 never does).
#
# Options:
#   -j, --jobs J        parallel compiles (default 2)
#   --reuse             reuse the successful ptxas logs of an earlier run in BUILD_DIR/gpu_resource_usage/
#   --all-tus           also the tests and examples (when their objects exist)
#   --tu REGEX          only translation units whose source path matches REGEX
#   --sizes LIST        N for the scratch / occupancy table (default 8,16,32,64,128)
#   --no-probe          skip the compile-time-N probe
#   --all-kernels       also list Kokkos-internal and benchmark-local kernels
#   --csv FILE          also write every kernel entry (mangled and demangled) as CSV
#   --model             also print the on-paper A100 model (flops and bytes per point, roofline and
#                       latency floors per epoch) for --sizes, D = --dim (3), QL iterations per
#                       eigenvalue --ql-iterations (1.7); every formula and constant is in MODEL and model_*() below
#
# Prints Markdown on stdout; progress and warnings on stderr. Exit status 1 if no kernel was found.
set -euo pipefail

case "${1:-}" in
  -h|--help|"") sed -n '2,/^set -euo pipefail/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; [ -n "${1:-}" ]; exit $? ;;
esac

if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
fi
for tool in python3 c++filt; do
  command -v "$tool" >/dev/null 2>&1 || { echo "gpu_resource_usage: $tool not found" >&2; exit 2; }
done
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
QGML_GRU_SOURCE_DIR="$(cd "$script_dir/.." && pwd)"
export QGML_GRU_SOURCE_DIR
export QGML_GRU_COMMAND="perf/gpu_resource_usage.sh $*"

exec python3 - "$@" <<'PYTHON'
import argparse
import collections
import concurrent.futures
import csv
import glob
import json
import os
import re
import shlex
import struct
import subprocess
import sys

SOURCE_DIR = os.environ["QGML_GRU_SOURCE_DIR"]
COMMAND = os.environ["QGML_GRU_COMMAND"]


def log(msg):
    print("gpu_resource_usage: " + msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------
# A100 (sm_80) limits used for the occupancy columns (CUDA C++ Programming Guide, compute capability
# 8.0; NVIDIA A100 Tensor Core GPU Architecture whitepaper).
A100 = dict(sms=108, regs_per_sm=65536, reg_alloc_unit=256, max_regs_per_thread=255,
            smem_per_sm=164 * 1024, smem_reserved_per_block=1024, smem_per_block_default=48 * 1024,
            smem_per_block_optin=163 * 1024, max_threads_per_sm=2048, max_blocks_per_sm=32, warp=32)


# ----------------------------------------------------------------------------------------------
# Arguments and the build


def parse_args():
    p = argparse.ArgumentParser(prog="perf/gpu_resource_usage.sh", add_help=True)
    p.add_argument("build_dir")
    p.add_argument("-j", "--jobs", type=int, default=2)
    p.add_argument("--reuse", action="store_true")
    p.add_argument("--all-tus", action="store_true")
    p.add_argument("--tu", default=None)
    p.add_argument("--sizes", default="8,16,32,64,128")
    p.add_argument("--no-probe", action="store_true")
    p.add_argument("--all-kernels", action="store_true")
    p.add_argument("--csv", default=None)
    p.add_argument("--model", action="store_true")
    p.add_argument("--dim", type=int, default=3)
    p.add_argument("--ql-iterations", type=float, default=1.7)
    return p.parse_args()


def nvcc_version():
    try:
        out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    except OSError:
        return "nvcc not on PATH"
    m = re.search(r"release ([\d.]+), (V[\d.]+)", out)
    return f"nvcc {m.group(1)} ({m.group(2)})" if m else out.strip().splitlines()[-1]


def output_of(args):
    return args[args.index("-o") + 1] if "-o" in args else None


def select_translation_units(build, opts):
    path = os.path.join(build, "compile_commands.json")
    if not os.path.exists(path):
        sys.exit(f"gpu_resource_usage: {path} not found (configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON, "
                 "as the presets do)")
    units, seen = [], set()
    for entry in json.load(open(path)):
        args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
        obj = output_of(args)
        if obj is None or obj in seen:
            continue
        src = os.path.realpath(entry["file"])
        rel = os.path.relpath(src, SOURCE_DIR)
        if not opts.all_tus and not re.match(r"(core|apps|backends|perf)/", rel):
            continue
        if opts.tu and not re.search(opts.tu, rel):
            continue
        if not os.path.exists(os.path.join(entry["directory"], obj)):
            continue  # not built in this tree
        seen.add(obj)
        units.append(dict(source=rel, args=args, directory=entry["directory"], object=obj))
    return units


def is_cuda_build(units):
    return any(("nvcc" in os.path.basename(u["args"][0])) or any("-arch=sm_" in a for a in u["args"])
               for u in units)


def gpu_arch(units):
    for u in units:
        for a in u["args"]:
            m = re.match(r"-arch=(sm_\d+)", a) or re.match(r"--cuda-gpu-arch=(sm_\d+)", a)
            if m:
                return m.group(1)
    return "?"


def include_dirs(args):
    dirs = []
    for i, a in enumerate(args):
        if a in ("-I", "-isystem") and i + 1 < len(args):
            dirs.append(args[i + 1])
        elif a.startswith("-isystem") and len(a) > 8:
            dirs.append(a[8:])
        elif a.startswith("-I") and len(a) > 2:
            dirs.append(a[2:])
    return dirs


def compile_with_ptxas_info(unit, out_dir, tag, reuse):
    """Runs the unit's compile command with -Xptxas=-v into out_dir; returns (log path, exit code)."""
    log_path = os.path.join(out_dir, tag + ".log")
    rc_path = log_path + ".rc"
    if reuse and os.path.exists(log_path) and os.path.exists(rc_path) and open(rc_path).read().strip() == "0":
        return log_path, 0  # failed compiles are retried
    args = list(unit["args"])
    args[args.index("-o") + 1] = os.path.join(out_dir, tag + ".o")
    if "-c" not in args:
        args.append("-c")
    args.append("-Xptxas=-v")
    with open(log_path, "w") as f:
        r = subprocess.run(args, cwd=unit["directory"], stdout=f, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL)
    open(rc_path, "w").write(str(r.returncode))
    try:
        os.remove(os.path.join(out_dir, tag + ".o"))
    except OSError:
        pass
    return log_path, r.returncode



# ----------------------------------------------------------------------------------------------
# The build's executables: registers and static shared memory of the embedded cubins


def elf_sections(blob):
    """[(name, sh_info, size)] of a little-endian ELF64 image."""
    if blob[:4] != b"\x7fELF" or blob[4] != 2 or blob[5] != 1:
        return []
    shoff, = struct.unpack_from("<Q", blob, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", blob, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx][4] if shstrndx < len(headers) else 0

    def name(offset):
        end = blob.index(b"\0", strtab + offset)
        return blob[strtab + offset:end].decode(errors="replace")

    return [(name(h[0]), h[7], h[5], h[4]) for h in headers]


def embedded_cubins(path):
    """Uncompressed ELF images in the .nv_fatbin section of a host executable; (images, compressed)."""
    try:
        blob = open(path, "rb").read()
    except OSError:
        return [], 0
    fatbin = [(off, size) for name, _, size, off in elf_sections(blob) if name == ".nv_fatbin"]
    images, compressed = [], 0
    for off, size in fatbin:
        data, pos = blob[off:off + size], 0
        while pos + 16 <= len(data):
            magic, _, header, body = struct.unpack_from("<IHHQ", data, pos)
            if magic != 0xBA55ED50:
                pos += 8
                continue
            entry, end = pos + header, pos + header + body
            while entry + 16 <= end:
                kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, entry)
                image = data[entry + entry_header:entry + entry_header + payload]
                if kind == 2:
                    if image[:4] == b"\x7fELF":
                        images.append(image)
                    else:
                        compressed += 1
                entry += entry_header + payload
            pos = end
    return images, compressed


def binary_resources(build):
    """{mangled: (registers, static smem)} over the build's executables, and a description."""
    found, files, compressed = {}, [], 0
    for root, dirs, names in os.walk(build):
        dirs[:] = [d for d in dirs if d not in ("CMakeFiles", "gpu_resource_usage", "_deps")]
        for n in names:
            path = os.path.join(root, n)
            if not os.access(path, os.X_OK) or not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                if f.read(4) != b"\x7fELF":
                    continue
            images, c = embedded_cubins(path)
            compressed += c
            if images:
                files.append(os.path.relpath(path, build))
            for image in images:
                sections = elf_sections(image)
                for name, info, size, _ in sections:
                    if name.startswith(".text."):
                        k = name[len(".text."):]
                        found[k] = (info >> 24, found.get(k, (0, 0))[1])
                for name, info, size, _ in sections:
                    if name.startswith(".nv.shared.") and name[len(".nv.shared."):] in found:
                        k = name[len(".nv.shared."):]
                        found[k] = (found[k][0], size)
    return found, sorted(files), compressed


# ----------------------------------------------------------------------------------------------
# ptxas -v output


def parse_ptxas_log(path):
    """{mangled entry: dict(registers, smem, stack, spill_stores, spill_loads, barriers)} from ptxas -v.
    ptxas prints, per entry: "Compiling entry function 'NAME' for 'sm_XX'", "Function properties for
    NAME", "N bytes stack frame, N bytes spill stores, N bytes spill loads", "Used N registers, ...
    N bytes smem, ..." (the smem part only when there is static shared memory)."""
    kernels, current, properties_of = {}, None, None
    for line in open(path, errors="replace"):
        m = re.search(r"Compiling entry function '([^']+)' for '(sm_\d+)'", line)
        if m:
            current = m.group(1)
            kernels[current] = dict(arch=m.group(2), registers=None, smem=0, stack=0, spill_stores=0,
                                    spill_loads=0, barriers=0)
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            properties_of = m.group(1)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            if properties_of in kernels:
                k = kernels[properties_of]
                k["stack"], k["spill_stores"], k["spill_loads"] = (int(m.group(i)) for i in (1, 2, 3))
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current is not None:
            k = kernels[current]
            k["registers"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            k["smem"] = int(s.group(1)) if s else 0
            b = re.search(r"used (\d+) barriers", line)
            k["barriers"] = int(b.group(1)) if b else 0
    return {name: k for name, k in kernels.items() if k["registers"] is not None}


def demangle(names):
    if not names:
        return {}
    out = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True).stdout
    return dict(zip(names, out.splitlines()))


# ----------------------------------------------------------------------------------------------
# Demangled names: the Kokkos closure, its enclosing function and lambda number


def match_close(s, i, open_ch, close_ch):
    depth = 0
    for j in range(i, len(s)):
        if s[j] == open_ch:
            depth += 1
        elif s[j] == close_ch:
            depth -= 1
            if depth == 0:
                return j
    return -1


def split_top(s, sep=","):
    parts, depth, cur, i = [], 0, "", 0
    while i < len(s):
        ch = s[i]
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if depth == 0 and s.startswith(sep, i):
            parts.append(cur)
            cur = ""
            i += len(sep)
            continue
        cur += ch
        i += 1
    parts.append(cur)
    return [x.strip() for x in parts]


def template_args(s, start):
    """Top-level template arguments of the <...> that opens at s[start]."""
    end = match_close(s, start, "<", ">")
    return split_top(s[start + 1:end]) if end > 0 else []


def strip_templates(name):
    out, depth = "", 0
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out += ch
    return out


def closure_of(demangled):
    """(pattern, policy, functor type) of a Kokkos CUDA kernel entry, or None."""
    m = re.search(r"Kokkos::Impl::Parallel(For|Reduce|Scan|ScanWithTotal)<", demangled)
    if not m:
        return None
    args = template_args(demangled, m.end() - 1)
    if not args:
        return None
    functor = args[0]
    if functor.startswith("Kokkos::Impl::CudaFunctorAdapter<"):
        functor = template_args(functor, len("Kokkos::Impl::CudaFunctorAdapter"))[0]
    policy = "?"
    for a in args[1:]:
        for p in ("TeamPolicy", "MDRangePolicy", "RangePolicy"):
            if a.startswith("Kokkos::" + p) or a.startswith("Kokkos::Impl::" + p):
                policy = p
                break
        if policy != "?":
            break
    pattern = {"For": "for", "Reduce": "reduce", "Scan": "scan", "ScanWithTotal": "scan"}[m.group(1)]
    return pattern, policy, functor


def lambda_of(functor):
    """(enclosing function text, signature, number) for a closure type ending in {lambda(...)#k}."""
    m = re.search(r"\{lambda\((.*)\)#(\d+)\}$", functor)
    if not m:
        return None
    start = functor.rfind("::{lambda(")
    return functor[:start], m.group(1), int(m.group(2))


def function_parts(enclosing):
    """Qualified name components (templates stripped) and template-argument text of a function."""
    text = enclosing.strip()
    if text.endswith(" const"):
        text = text[: -len(" const")]
    # the parameter list is the last top-level (...)
    depth, paren = 0, -1
    for i in range(len(text) - 1, -1, -1):
        ch = text[i]
        if ch in ")>":
            depth += 1
        elif ch in "(<":
            depth -= 1
            if depth == 0 and ch == "(":
                paren = i
                break
    qualified = text[:paren] if paren > 0 else text
    # a leading return type ("void qgml::f<...>") is separated by a top-level space
    depth = 0
    for i, ch in enumerate(qualified):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == " " and depth == 0 and "::" in qualified[i:]:
            qualified = qualified[i + 1:]
            break
    components = split_top(qualified, "::")
    return [strip_templates(c).strip() for c in components], components


def real_type_of(components):
    """float or double from the class template arguments, else the function's."""
    for comp in reversed(components[:-1]):
        if "<" in comp:
            m = re.search(r"\b(float|double)\b", comp)
            if m:
                return m.group(1)
    m = re.search(r"\b(float|double)\b", components[-1]) if components else None
    return m.group(1) if m else "-"


# ----------------------------------------------------------------------------------------------
# Sources: function bodies, their lambdas and the labels of the parallel_* calls launching them

SOURCE_GLOBS = ["core/include/**/*.hpp", "core/src/**/*.cpp", "apps/**/*.hpp", "apps/**/*.cpp",
                "backends/**/*.hpp", "backends/**/*.cpp", "perf/**/*.hpp", "perf/**/*.cpp"]


def blank_comments_and_strings(text):
    """Same length; comments blanked; string and char literal contents replaced by spaces."""
    out, i, n = list(text), 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif text[i] in "\"'":
            q = text[i]
            if q == "'" and i > 0 and (text[i - 1].isalnum()):  # digit separator 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != q:
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


class SourceIndex:
    def __init__(self, root):
        self.files = []
        for g in SOURCE_GLOBS:
            for path in sorted(glob.glob(os.path.join(root, g), recursive=True)):
                text = open(path, errors="replace").read()
                code = blank_comments_and_strings(text)
                self.files.append((os.path.relpath(path, root), text, code, self.class_ranges(code)))
        self.class_names = {name for _, _, _, ranges in self.files for name, _, _ in ranges}
        self.cache = {}

    @staticmethod
    def class_ranges(code):
        ranges = []
        for m in re.finditer(r"\b(?:class|struct)\s+(\w+)\s*(?:final\s*)?(?::[^;{]*)?\{", code):
            end = match_close(code, m.end() - 1, "{", "}")
            if end > 0:
                ranges.append((m.group(1), m.end() - 1, end))
        return ranges

    def definitions(self, name, cls):
        """[(file, text, code, body_start, body_end)] of the definitions of cls::name (or ::name)."""
        found = []
        for rel, text, code, ranges in self.files:
            for m in re.finditer(r"(?<![\w.>])" + re.escape(name) + r"\s*\(", code):
                close = match_close(code, m.end() - 1, "(", ")")
                if close < 0:
                    continue
                tail = re.match(r"\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?(?:->[^{;]*)?\{", code[close + 1:])
                if not tail:
                    continue
                before = code[max(0, m.start() - 200):m.start()].rstrip()
                if re.search(r"(?:\b(?:if|while|for|switch|return)|[=,(])\s*$", before):
                    continue
                body_start = close + 1 + tail.end() - 1
                body_end = match_close(code, body_start, "{", "}")
                if body_end < 0:
                    continue
                inside = [c for c, s, e in ranges if s < m.start() < e]
                if cls:
                    qualified = re.search(re.escape(cls) + r"\s*(?:<[^;{}]*>)?\s*::\s*$", before)
                    if cls not in inside and not qualified:
                        continue
                elif inside:
                    continue
                found.append((rel, text, code, body_start, body_end))
        return found

    def lambdas(self, name, cls):
        """Lambdas directly in the function body (not nested in another lambda), in source order:
        [dict(signature=[canonical types], label, pattern, file, line)]."""
        key = (name, cls)
        if key in self.cache:
            return self.cache[key]
        result = []
        for rel, text, code, start, end in self.definitions(name, cls):
            lambdas, pos, last_end = [], start + 1, start
            intro = re.compile(r"KOKKOS_(?:CLASS_)?LAMBDA\s*\(|\[[^\[\]{};]*\]\s*(?:\(|\{|mutable\b)")
            while True:
                m = intro.search(code, pos, end)
                if not m:
                    break
                s = m.start()
                if code[s] == "[":
                    prev = code[:s].rstrip()[-1:]
                    if prev and (prev.isalnum() or prev in "_)]["):
                        pos = m.end()
                        continue
                params = ""
                after = m.end()
                if code[m.end() - 1] == "(":
                    close = match_close(code, m.end() - 1, "(", ")")
                    params = code[m.end():close]
                    after = close + 1
                body = code.find("{", after - 1 if code[after - 1] == "{" else after)
                body_end = match_close(code, body, "{", "}") if body >= 0 else -1
                if body_end < 0:
                    break
                label, pattern = None, None
                call = None
                for c in PARALLEL_CALL.finditer(code, last_end, s):
                    call = c
                if call:
                    lit = re.search(r'"([^"]*)"', text[call.end():s])
                    label = lit.group(1) if lit else None
                    pattern = call.group(1)
                lambdas.append(dict(signature=canonical_params(params), label=label, pattern=pattern,
                                    file=rel, line=text.count("\n", 0, s) + 1))
                pos = last_end = body_end + 1
            if lambdas:
                result = lambdas
                break
        self.cache[key] = result
        return result


PARALLEL_CALL = re.compile(r"parallel_(for|reduce|scan)\s*\(")

CANONICAL = [
    (r"^(?:Kokkos::Impl::CudaTeamMember|member_type|Member|team_member|\w+::member_type)&$", "member&"),
    (r"^(?:float|double|Real|real_type|value_type|T)&$", "fp&"),
    (r"^(?:float|double|Real|real_type|value_type|T)$", "fp"),
    (r"^(?:std::)?(?:size_t|uint64_t)$|^unsigned long$|^unsigned long long$", "ulong"),
    (r"^(?:std::)?(?:int64_t|ptrdiff_t)$|^long$|^long long$", "long"),
    (r"^(?:std::)?(?:size_t|uint64_t)&$|^unsigned long&$", "ulong&"),
    (r"^(?:std::)?(?:int64_t|ptrdiff_t)&$|^long&$", "long&"),
    (r"^int$", "int"),
    (r"^int&$", "int&"),
    (r"^unsigned(?: int)?$", "uint"),
    (r"^bool$", "bool"),
    (r"^bool&?$", "bool"),
]


def canonical_type(t):
    t = re.sub(r"\bconst\b|\bvolatile\b|\btypename\b", " ", t)
    t = re.sub(r"\s+", " ", t).strip()
    t = re.sub(r"\s*&\s*", "&", t)
    for pattern, canon in CANONICAL:
        if re.match(pattern, t):
            return canon
    return "?"


def canonical_params(params):
    """Canonical types of a source parameter list ("const int i, int& acc" -> ["int", "int&"])."""
    params = params.strip()
    if not params or params == "void":
        return []
    out = []
    for p in split_top(params):
        p = p.split("=")[0].strip()
        toks = re.findall(r"[\w:]+|&|\*", p)
        # drop the parameter name: a trailing identifier after a complete type
        if len(toks) >= 2 and re.match(r"^[A-Za-z_]\w*$", toks[-1]) and toks[-1] not in ("int", "long", "double", "float", "bool", "unsigned"):
            toks = toks[:-1]
        out.append(canonical_type(" ".join(toks)))
    return out


def canonical_demangled(sig):
    sig = sig.strip()
    return [canonical_type(t) for t in split_top(sig)] if sig else []


def signatures_match(a, b):
    return len(a) == len(b) and all(x == y or x == "?" or y == "?" for x, y in zip(a, b))


# ----------------------------------------------------------------------------------------------
# Team kernels: team size and scratch requests, read from the sources


def c_expression(code_text, pattern, what):
    m = re.search(pattern, code_text, re.S)
    if not m:
        log(f"warning: could not find {what} in the sources; the scratch table may be stale")
        return None
    return m


def read_team_parameters(source_dir, kokkos_includes):
    def read(rel):
        path = os.path.join(source_dir, rel)
        return blank_comments_and_strings(open(path).read()) if os.path.exists(path) else ""

    eigh = read("core/include/qgml/linalg/batched_eigh.hpp")
    solver = read("core/include/qgml/linalg/hermitian_eigensolver.hpp")
    jacobi = read("core/include/qgml/linalg/hermitian_jacobi.hpp")
    p = {}
    m = c_expression(solver, r"eigh_scratch_reals\s*\(\s*int\s+n\s*\)\s*\{\s*return\s+([^;]+);", "eigh_scratch_reals")
    p["eigh_reals"] = m.group(1).strip() if m else None
    m = c_expression(jacobi, r"jacobi_scratch_reals\s*\(\s*int\s+n\s*\)\s*\{\s*return\s+([^;]+);", "jacobi_scratch_reals")
    p["jacobi_reals"] = m.group(1).strip() if m else None
    m = c_expression(eigh, r"scratch_elements\s*=\s*\(([^;]+)\)\s*/\s*2\s*;", "scratch_elements")
    p["elements"] = m is not None
    m = c_expression(eigh, r"\?\s*1\s*:\s*\(\s*n\s*<=\s*(\d+)\s*\?\s*(\d+)\s*:\s*(\d+)\s*\)", "the team variant's team size")
    p["team_size"] = tuple(int(m.group(i)) for i in (1, 2, 3)) if m else None
    m = c_expression(eigh, r"is_host_space_v<ExecSpace>\s*\?\s*1\s*:\s*(\d+)\s*\)\s*;\s*\n?\s*const int league",
                     "the serial variant's team size")
    p["serial_team_size"] = int(m.group(1)) if m else None
    p["level0_max"] = None
    for inc in kokkos_includes:
        path = os.path.join(inc, "Cuda", "Kokkos_Cuda_Parallel.hpp")
        if os.path.exists(path):
            m = re.search(r"level\s*==\s*0\s*\?\s*1024\s*\*\s*(\d+)", open(path).read())
            if m:
                p["level0_max"] = 1024 * int(m.group(1))
                p["kokkos_parallel_hpp"] = path
            break
    if p["level0_max"] is None:
        log("warning: Kokkos' level-0 scratch limit not found; assuming 40 KB (Kokkos 3.4)")
        p["level0_max"] = 40 * 1024
    return p


def eval_reals(expr, n):
    """Evaluates a C integer expression in n such as "6 * n + 8" (digits, n, + - * / and parentheses)."""
    if not expr or not re.fullmatch(r"[\dn+\-*/() ]+", expr):
        return None
    return eval(expr.replace("/", "//"), {"__builtins__": {}}, {"n": n})


def scratch_bytes(params, n, real_size, warm):
    """Bytes of one solve's scratch as batched_eigh requests it:
    View<complex<Real>*>::shmem_size(elements) = (elements + 1) * sizeof(complex<Real>),
    elements = (eigh_scratch_reals(n) + [jacobi_scratch_reals(n)] + 1) / 2."""
    r = eval_reals(params["eigh_reals"], n)
    if r is None:
        return None
    if warm:
        j = eval_reals(params["jacobi_reals"], n)
        if j is None:
            return None
        r += j
    elements = (r + 1) // 2
    return (elements + 1) * 2 * real_size


def occupancy(registers, threads_per_block, dynamic_smem, static_smem):
    """Resident blocks per A100 SM and the limiting resource."""
    warps = -(-threads_per_block // A100["warp"])
    regs = max(registers, 1)
    regs_per_warp = -(-regs * A100["warp"] // A100["reg_alloc_unit"]) * A100["reg_alloc_unit"]
    limits = {
        "blocks": A100["max_blocks_per_sm"],
        "threads": A100["max_threads_per_sm"] // (warps * A100["warp"]),
        "registers": A100["regs_per_sm"] // (regs_per_warp * warps),
    }
    smem = dynamic_smem + static_smem
    if smem > 0:
        limits["shared"] = A100["smem_per_sm"] // (smem + A100["smem_reserved_per_block"])
    name = min(limits, key=lambda k: limits[k])
    return limits[name], name


# ----------------------------------------------------------------------------------------------
# The probe: one kernel per compile-time size of the eigensolver

PROBE = r"""
// Generated by perf/gpu_resource_usage.sh; not part of qgml. One kernel per branch of the shipped
// serial batched_eigh kernel (compile-time N = 2, 3, 4, run-time N, warm start) and the team variant,
// each with the launch shape and scratch placement batched_eigh uses, so that ptxas reports them
// separately.
#include <Kokkos_Core.hpp>

#include "qgml/linalg/hermitian_eigensolver.hpp"
#include "qgml/linalg/hermitian_jacobi.hpp"
#include "qgml/linalg/loops.hpp"

namespace qgml_probe {
template <class Real>
using Batch = Kokkos::View<Kokkos::complex<Real>***, Kokkos::LayoutRight>;
template <class Real>
using Values = Kokkos::View<Real**, Kokkos::LayoutRight>;
using Info = Kokkos::View<int*>;
using Policy = Kokkos::TeamPolicy<>;
using Member = Policy::member_type;
template <class Real>
using Scratch = Kokkos::View<Kokkos::complex<Real>*, Kokkos::DefaultExecutionSpace::scratch_memory_space,
                             Kokkos::MemoryUnmanaged>;

// Serial variant (one thread per matrix, 32 per team, PerThread scratch), compile-time FixedN
// (0 = run-time N).
template <int FixedN, class Real>
void serial(const Batch<Real>& h, const Values<Real>& w, const Batch<Real>& v, const Info& info, int count,
            int elements) {
  const std::size_t bytes = Scratch<Real>::shmem_size(elements);
  Kokkos::parallel_for(
      "probe", Policy((count + 31) / 32, 32).set_scratch_size(0, Kokkos::PerThread(bytes)),
      KOKKOS_LAMBDA(const Member& m) {
        const int t = m.league_rank() * m.team_size() + m.team_rank();
        if (t >= count) return;
        Scratch<Real> buf(m.thread_scratch(0), elements);
        info(t) = qgml::linalg::hermitian_eigh<FixedN>(
            qgml::linalg::SerialLoops{}, Kokkos::subview(h, t, Kokkos::ALL, Kokkos::ALL),
            Kokkos::subview(w, t, Kokkos::ALL), Kokkos::subview(v, t, Kokkos::ALL, Kokkos::ALL),
            reinterpret_cast<Real*>(buf.data()));
      });
}

// Serial variant, warm start (cyclic Jacobi).
template <class Real>
void warm(const Batch<Real>& h, const Values<Real>& w, const Batch<Real>& v, const Info& info, int count,
          int elements) {
  const std::size_t bytes = Scratch<Real>::shmem_size(elements);
  Kokkos::parallel_for(
      "probe", Policy((count + 31) / 32, 32).set_scratch_size(1, Kokkos::PerThread(bytes)),
      KOKKOS_LAMBDA(const Member& m) {
        const int t = m.league_rank() * m.team_size() + m.team_rank();
        if (t >= count) return;
        Scratch<Real> buf(m.thread_scratch(1), elements);
        int used = 0;
        info(t) = qgml::linalg::hermitian_eigh_warm(
            Kokkos::subview(h, t, Kokkos::ALL, Kokkos::ALL), Kokkos::subview(w, t, Kokkos::ALL),
            Kokkos::subview(v, t, Kokkos::ALL, Kokkos::ALL), reinterpret_cast<Real*>(buf.data()), used);
      });
}

// Team variant (one team per matrix, PerTeam scratch).
template <class Real>
void team(const Batch<Real>& h, const Values<Real>& w, const Batch<Real>& v, const Info& info, int count,
          int elements) {
  const std::size_t bytes = Scratch<Real>::shmem_size(elements);
  Kokkos::parallel_for(
      "probe", Policy(count, 32).set_scratch_size(0, Kokkos::PerTeam(bytes)), KOKKOS_LAMBDA(const Member& m) {
        const int t = m.league_rank();
        Scratch<Real> buf(m.team_scratch(0), elements);
        const int code = qgml::linalg::hermitian_eigh(
            qgml::linalg::TeamLoops<Member>{m}, Kokkos::subview(h, t, Kokkos::ALL, Kokkos::ALL),
            Kokkos::subview(w, t, Kokkos::ALL), Kokkos::subview(v, t, Kokkos::ALL, Kokkos::ALL),
            reinterpret_cast<Real*>(buf.data()));
        Kokkos::single(Kokkos::PerTeam(m), [&]() { info(t) = code; });
      });
}

#define QGML_PROBE_ARGS(R) const Batch<R>&, const Values<R>&, const Batch<R>&, const Info&, int, int
#define QGML_PROBE(R)                               \
  template void serial<2, R>(QGML_PROBE_ARGS(R));   \
  template void serial<3, R>(QGML_PROBE_ARGS(R));   \
  template void serial<4, R>(QGML_PROBE_ARGS(R));   \
  template void serial<0, R>(QGML_PROBE_ARGS(R));   \
  template void warm<R>(QGML_PROBE_ARGS(R));        \
  template void team<R>(QGML_PROBE_ARGS(R));
QGML_PROBE(double)
QGML_PROBE(float)
}  // namespace qgml_probe
"""


def probe_label(demangled):
    m = re.search(r"qgml_probe::(serial|warm|team)<(?:(\d+), )?(float|double)>", demangled)
    if not m:
        return None
    kind, n, real = m.group(1), int(m.group(2) or 0), m.group(3)
    if kind == "serial":
        what = f"serial, hermitian_eigh<{n}>" if n > 0 else "serial, run-time N"
    elif kind == "warm":
        what = "serial, warm start (Jacobi)"
    else:
        what = "team, run-time N"
    return what, real


def run_probe(units, out_dir, reuse):
    base = next((u for u in units if u["source"].startswith("perf/")), None) or \
        next((u for u in units if any("qgml" in d for d in include_dirs(u["args"]))), None)
    if base is None:
        return None, "no translation unit to take the flags from"
    src = os.path.join(out_dir, "eigh_probe.cpp")
    open(src, "w").write(PROBE)
    args = [a for a in base["args"]]
    # replace the source file and the object
    srcs = [i for i, a in enumerate(args) if os.path.realpath(os.path.join(base["directory"], a)) ==
            os.path.realpath(os.path.join(SOURCE_DIR, base["source"]))]
    if not srcs:
        return None, "could not locate the source argument in " + base["source"]
    args[srcs[-1]] = src
    unit = dict(args=args, directory=base["directory"], source="(probe)")
    path, rc = compile_with_ptxas_info(unit, out_dir, "eigh_probe", reuse)
    if rc != 0:
        return None, f"the probe did not compile (see {path})"
    return parse_ptxas_log(path), None


# ----------------------------------------------------------------------------------------------
# Output


def fmt_range(values):
    lo, hi = min(values), max(values)
    return str(lo) if lo == hi else f"{lo}-{hi}"



# ----------------------------------------------------------------------------------------------
# The on-paper model (--model). Counts are read off the kernels' loops (real flops: complex
# multiply-add 8, complex multiply 6, real x complex 2, complex add 2); nothing here has run on a GPU.

MODEL = dict(
    clock=1.41e9,          # A100 boost clock (Hz)
    fp64=9.7e12,           # FP64 FMA peak without tensor cores (the kernels use none)
    fp32=19.5e12,          # FP32 peak
    hbm=1.555e12,          # A100 40 GB HBM2 (the 80 GB part: 2.0e12)
    l2=40e6,               # L2 capacity (B)
    l_mad=20,              # cycles per complex multiply-add in a dependent chain (2 dependent FMAs
                           # of ~8 cycles plus partly hidden load latency); assumption
    l_rot=200,             # cycles per QL rotation computed by the single thread of a team (one
                           # square root, two divisions, shared-memory round trips); assumption
    l_sync=500,            # cycles of barriers and team reductions per Householder step; assumption
    launch=3e-6,           # seconds per kernel launch when kernels are short (back-to-back)
)


def model_counts(n, d, q, s):
    """Per point: real flops and compulsory HBM bytes per kernel, and the extra bytes of the
    eigensolver when its matrices do not stay in cache. s = sizeof(Real), c = 2s."""
    c = 2 * s
    flops = {
        # GPU path: one thread per entry, D complex axpys (4 flops) and |x|^2 recomputed (2 flops)
        "build_hamiltonians": 6 * d * n * n,
        # Householder 24 m^2 + 32 m per step (8 N^3 + 4 N^2), Q accumulation 16 m^2 + 6 m per step
        # (16/3 N^3 - 5 N^2), QL: q N(N-1)/2 rotations x (12 N on the rows of V + ~25 scalar)
        "batched_eigh": 8 * n**3 + 4 * n * n + 16 / 3 * n**3 - 5 * n * n + q * n * (n - 1) / 2 * (12 * n + 25),
        # y_k = A_k psi (8 D N^2), <n|s> (8 N^2), phi (8 N^2), A_l phi (8 D N^2), O(D N) rest
        "LossGradient::per_point": 16 * (d + 1) * n * n + 33 * d * n,
        # two columns (a_l psi^H, e_l phi^H) per point for each of the D N^2 entries
        "LossGradient::reduce_points": 16 * d * n * n,
        # y (8 N) and <m|y> (8 N) for each (mu, i): 16 D N^2; the D x D tensor: ~7 D^2 N
        "QuantumGeometry::tensors": 16 * d * n * n + 7 * d * d * n,
    }
    data = {
        "gather_batch": 2 * d * s,
        "build_hamiltonians": c * n * n + d * s,
        # H read, H written back (updated in place), V written, w, info
        "batched_eigh": 3 * c * n * n + s * n + 4,
        # V (all N rows), w, info, x, U (2 D N), W (2 N), xbar, 7 terms
        "LossGradient::per_point": c * n * n + s * n + 4 + d * s + (2 * d * n + 2 * n) * c + d * s + 7 * s,
        "LossGradient::reduce_points": (2 * d * n + 2 * n) * c,
        "LossGradient::reduce_terms": 7 * s,
        "QuantumGeometry::tensors": c * n * n + s * n + 2 * d * n * c + d * d * s,
        "QuantumGeometry::spectrum": 3 * d * d * s + d * s + 8,
    }
    # Every pass over a trailing block / row pair from memory: Householder 3 m^2 per step (N^3),
    # Q accumulation 3 m^2 per step (N^3), QL 4 N per rotation (2 q N^3) complex accesses.
    stream = (2 + 2 * q) * c * n**3
    return flops, data, stream


def resident_threads(registers, block=256):
    blocks, _ = occupancy(registers, block, 0, 0)
    return blocks * block


def model_epoch(n, d, q, real, t, batch, regs, team_in_flight, ts_team):
    """Seconds per epoch: (lower, upper, breakdown of the upper estimate) on an A100 40 GB."""
    s = 8 if real == "double" else 4
    peak = MODEL["fp64"] if real == "double" else MODEL["fp32"]
    f = MODEL["clock"]
    flops, data, stream = model_counts(n, d, q, s)
    batches = -(-t // batch)
    total_lo = total_hi = 0.0
    parts = collections.Counter()
    for b in [batch] * (t // batch) + ([t % batch] if t % batch else []):
        def roof(kernel, extra=0.0):
            return max(flops.get(kernel, 0) * b / peak, (data.get(kernel, 0) + extra) * b / MODEL["hbm"])
        # eigensolver (team variant for N >= 8)
        in_flight = min(b, team_in_flight)
        streams = in_flight * 2 * s * n * n > MODEL["l2"]  # one N x N complex matrix active per team
        rotations = q * n * (n - 1) / 2
        ts = ts_team
        chain = (rotations * (MODEL["l_rot"] + MODEL["l_mad"] * -(-n // ts))
                 + 2 * MODEL["l_mad"] * sum(m * -(-m // ts) for m in range(1, n))
                 + n * MODEL["l_sync"])
        eig_latency = -(-b // team_in_flight) * chain / f
        eig_lo = max(roof("batched_eigh"), eig_latency)
        eig_hi = max(roof("batched_eigh", stream if streams else 0.0), eig_latency)
        # one thread per point
        pp_threads = MODEL_SMS * resident_threads(regs.get("qgml::LossGradient::per_point", 64))
        pp = max(roof("LossGradient::per_point"), -(-b // pp_threads) * (2 * d + 2) * n * n * MODEL["l_mad"] / f)
        # D N^2 threads, each looping over the 2b columns of the batch
        rp = max(roof("LossGradient::reduce_points"), 2 * b * MODEL["l_mad"] / f)
        # 8 threads, each looping over the batch
        rt = max(roof("LossGradient::reduce_terms"), b * MODEL["l_mad"] / f)
        h = roof("build_hamiltonians") + roof("gather_batch")
        # per batch: S = 1/2 sum A_k^2 (N^2 threads, D N complex multiply-adds each), Adam, checks
        small = d * n * MODEL["l_mad"] / f
        launches = 12 * MODEL["launch"]
        lo = eig_lo + pp + rp + rt + h + small + launches
        hi = eig_hi + pp + rp + rt + h + small + launches
        total_lo += lo
        total_hi += hi
        parts["eigensolver"] += eig_hi
        parts["per_point"] += pp
        parts["reduce_points"] += rp
        parts["reduce_terms"] += rt
        parts["H build"] += h
        parts["launches + small kernels"] += launches + small
    return total_lo, total_hi, parts, batches


def model_metric(n, d, q, real, t, chunk, regs, team_in_flight, ts_team):
    s = 8 if real == "double" else 4
    peak = MODEL["fp64"] if real == "double" else MODEL["fp32"]
    f = MODEL["clock"]
    flops, data, stream = model_counts(n, d, q, s)
    lo = hi = 0.0
    for b in [chunk] * (t // chunk) + ([t % chunk] if t % chunk else []):
        def roof(kernel, extra=0.0):
            return max(flops.get(kernel, 0) * b / peak, (data.get(kernel, 0) + extra) * b / MODEL["hbm"])
        in_flight = min(b, team_in_flight)
        streams = in_flight * 2 * s * n * n > MODEL["l2"]  # one N x N complex matrix active per team
        rotations = q * n * (n - 1) / 2
        chain = (rotations * (MODEL["l_rot"] + MODEL["l_mad"] * -(-n // ts_team))
                 + 2 * MODEL["l_mad"] * sum(m * -(-m // ts_team) for m in range(1, n)) + n * MODEL["l_sync"])
        eig_latency = -(-b // team_in_flight) * chain / f
        threads = MODEL_SMS * resident_threads(regs.get("qgml::QuantumGeometry::tensors", 64))
        tens = max(roof("QuantumGeometry::tensors"), -(-b // threads) * 2 * d * n * n * MODEL["l_mad"] / f)
        rest = roof("build_hamiltonians") + roof("QuantumGeometry::spectrum") + 5 * MODEL["launch"]
        lo += max(roof("batched_eigh"), eig_latency) + tens + rest
        hi += max(roof("batched_eigh", stream if streams else 0.0), eig_latency) + tens + rest
    return lo, hi


MODEL_SMS = A100["sms"]


def ms(seconds):
    x = seconds * 1e3
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}" if x >= 1 else f"{x:.3f}"


def ms_range(lo, hi):
    return f"{ms(lo)}-{ms(hi)}" if hi > 1.05 * lo else ms(hi)


def si(x):
    """3 significant digits with k / M / G."""
    for factor, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(x) >= factor:
            return f"{x / factor:.3g}{suffix}"
    return f"{x:.3g}"


def print_model(opts, regs_all, team):
    d, q = opts.dim, opts.ql_iterations
    sizes = [int(x) for x in opts.sizes.split(",") if x.strip()]
    print(f"On-paper model, A100 40 GB (`--model`; D = {d}, {q} QL iterations per eigenvalue; "
          f"FP64 {MODEL['fp64'] / 1e12} TFLOP/s, FP32 {MODEL['fp32'] / 1e12} TFLOP/s, HBM "
          f"{MODEL['hbm'] / 1e12} TB/s, L2 {MODEL['l2'] / 1e6:.0f} MB, {MODEL['clock'] / 1e9} GHz; latency "
          f"constants: {MODEL['l_mad']} cycles per dependent complex multiply-add, {MODEL['l_rot']} per QL "
          f"rotation on the team's single thread, {MODEL['l_sync']} per Householder step for barriers, "
          f"{MODEL['launch'] * 1e6:.0f} us per launch). Per point, double (float: same flops, half the bytes):")
    print()
    print("| N | H build | eigensolve | per_point | reduce_points | training step | metric | bytes, training "
          "(compulsory) | + eigensolve streaming | bytes, metric | AI training (flop/B) | AI, streaming |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        fl, data, stream = model_counts(n, d, q, 8)
        train_f = fl["build_hamiltonians"] + fl["batched_eigh"] + fl["LossGradient::per_point"] + \
            fl["LossGradient::reduce_points"]
        metric_f = fl["build_hamiltonians"] + fl["batched_eigh"] + fl["QuantumGeometry::tensors"]
        train_b = sum(v for k, v in data.items() if not k.startswith("QuantumGeometry"))
        metric_b = data["build_hamiltonians"] + data["batched_eigh"] + data["QuantumGeometry::tensors"] + \
            data["QuantumGeometry::spectrum"]
        g = si
        print(f"| {n} | {g(fl['build_hamiltonians'])} | {g(fl['batched_eigh'])} | {g(fl['LossGradient::per_point'])} "
              f"| {g(fl['LossGradient::reduce_points'])} | {g(train_f)} | {g(metric_f)} | {g(train_b)} | {g(stream)} "
              f"| {g(metric_b)} | {train_f / train_b:.1f} | {train_f / (train_b + stream):.2f} |")
    print()
    ts = team["team_size"]
    print("Predicted time per epoch (ms), full batch unless noted: lower = roofline of the compulsory "
          "traffic or the latency floor, whichever is larger, per kernel; upper = the same with the "
          "eigensolver's streaming traffic wherever the matrices in flight (one active N x N complex matrix "
          "per team: the trailing block of H, then V) exceed the L2. Metric: one evaluation of every point in chunks of 25000.")
    print()
    print("| N | Real | T = 2500 | T = 100000 | T = 100000, batch 256 | metric, T = 2500 | metric, T = 100000 "
          "| largest part (T = 100000, full batch, upper) | buffers, T = 100000 full batch (GB) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for real in ("double", "float"):
        regs = {key[0]: r for key, r in regs_all.items() if len(key) == 2 and key[1] == real}
        treg = regs.get("qgml::batched_eigh[team]", 80)
        s = 8 if real == "double" else 4
        for n in sizes:
            tsz = ts[1] if n <= ts[0] else ts[2]
            dyn = 8 * (tsz + 2) + scratch_bytes(team, n, s, False)
            blocks, _ = occupancy(treg, tsz, dyn, 0)
            in_flight = blocks * A100["sms"]
            cells = []
            big = None
            for t, batch in ((2500, 2500), (100000, 100000), (100000, 256)):
                lo, hi, parts, _ = model_epoch(n, d, q, real, t, batch, regs, in_flight, tsz)
                cells.append(ms_range(lo, hi))
                if t == 100000 and batch == 100000:
                    big = max(parts, key=lambda k: parts[k])
                    share = parts[big] / sum(parts.values())
            for t in (2500, 100000):
                lo, hi = model_metric(n, d, q, real, t, min(t, 25000), regs, in_flight, tsz)
                cells.append(ms_range(lo, hi))
            c = 2 * s
            buffers = 100000 * (2 * c * n * n + s * n + 4 + (2 * d * n + 2 * n) * c + (d + 7) * s + d * s) / 1e9
            print(f"| {n} | {real} | " + " | ".join(cells) + f" | {big} ({share:.0%}) | {buffers:.1f} |")
    print()


def main():
    opts = parse_args()
    build = os.path.realpath(opts.build_dir)
    units = select_translation_units(build, opts)
    if not units:
        sys.exit("gpu_resource_usage: no built translation units found in " + build)
    if not is_cuda_build(units):
        sys.exit(f"gpu_resource_usage: {build} is not a CUDA build (configure it with --preset cuda)")
    out_dir = os.path.join(build, "gpu_resource_usage")
    os.makedirs(out_dir, exist_ok=True)
    arch = gpu_arch(units)

    log(f"{len(units)} translation units, ptxas -v into {out_dir} ({opts.jobs} at a time)")
    entries = {}  # mangled -> dict(resources, units)
    failures = []

    def work(unit):
        tag = re.sub(r"[^A-Za-z0-9]+", "_", unit["object"]).strip("_")
        return unit, compile_with_ptxas_info(unit, out_dir, tag, opts.reuse)

    with concurrent.futures.ThreadPoolExecutor(max(1, opts.jobs)) as pool:
        for unit, (path, rc) in pool.map(work, units):
            if rc != 0:
                failures.append((unit["source"], path))
                log(f"FAILED {unit['source']} (see {path})")
                continue
            found = parse_ptxas_log(path)
            log(f"{unit['source']}: {len(found)} kernel entries")
            for name, res in found.items():
                e = entries.setdefault(name, dict(res, units=set()))
                e["units"].add(unit["source"])

    probe, probe_error = ({}, "skipped (--no-probe)") if opts.no_probe else run_probe(units, out_dir, opts.reuse)
    if probe_error:
        log("probe: " + probe_error)

    names = demangle(sorted(set(entries) | set(probe or {})))
    index = SourceIndex(SOURCE_DIR)

    # classify every entry
    rows = collections.OrderedDict()
    others = collections.Counter()
    unmapped = []
    csv_rows = []
    for mangled, res in sorted(entries.items(), key=lambda kv: names.get(kv[0], kv[0])):
        dem = names.get(mangled, mangled)
        closure = closure_of(dem)
        label, real, pattern, policy, where = None, "-", "?", "?", ""
        if closure:
            pattern, policy, functor = closure
            lam = lambda_of(functor)
            if lam and "qgml::" in lam[0].split("(")[0]:
                enclosing, sig, number = lam
                plain, components = function_parts(enclosing)
                real = real_type_of(components)
                name = plain[-1]
                cls = plain[-2] if len(plain) >= 2 and plain[-2] in index.class_names else None
                wanted = canonical_demangled(sig)
                candidates = [l for l in index.lambdas(name, cls) if signatures_match(l["signature"], wanted)]
                if number <= len(candidates):
                    src = candidates[number - 1]
                    label = src["label"] or ("::".join(plain) + f" lambda #{number}")
                    pattern = src["pattern"] or pattern
                    where = f"{src['file']}:{src['line']}"
                else:
                    label = "::".join(plain) + f" {{lambda({sig})#{number}}}"
                    unmapped.append(label)
            elif lam:
                others["benchmark-local lambdas"] += 1
                if opts.all_kernels:
                    plain, components = function_parts(lam[0])
                    label = "(bench) " + plain[-1] + f" lambda #{lam[2]}"
                    real = real_type_of(components)
            else:
                kind = re.match(r"[\w:]+", functor)
                others["Kokkos/KokkosKernels functors (" + (kind.group(0).split("::")[-1] if kind else "?") + ")"] += 1
                if opts.all_kernels:
                    label = "(kokkos) " + (kind.group(0) if kind else functor[:60])
        else:
            others["other entries"] += 1
            if opts.all_kernels:
                label = "(other) " + dem[:80]
        csv_rows.append([mangled, dem, label or "", real, pattern, policy, res["registers"], res["smem"],
                         res["stack"], res["spill_stores"], res["spill_loads"], ";".join(sorted(res["units"]))])
        if label is None:
            continue
        key = (label, real)
        row = rows.setdefault(key, dict(label=label, real=real, pattern=pattern, policy=policy, where=where,
                                        registers=[], smem=[], stack=[], spill_stores=[], spill_loads=[],
                                        units=set(), count=0))
        row["count"] += 1
        for k in ("registers", "smem", "stack", "spill_stores", "spill_loads"):
            row[k].append(res[k])
        row["units"] |= res["units"]

    if opts.csv:
        with open(opts.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["mangled", "demangled", "label", "real", "pattern", "policy", "registers", "static_smem",
                        "stack_frame", "spill_stores", "spill_loads", "translation_units"])
            w.writerows(csv_rows)

    if not rows:
        log("no qgml kernel found")
        return 1

    in_binaries, binary_files, compressed = binary_resources(build)
    checked = [m for m in entries if m in in_binaries]
    differ = [m for m in checked if in_binaries[m] != (entries[m]["registers"], entries[m]["smem"])]

    kokkos_inc = [d for u in units[:1] for d in include_dirs(u["args"]) if os.path.exists(os.path.join(d, "Kokkos_Core.hpp"))]
    team = read_team_parameters(SOURCE_DIR, kokkos_inc)
    kokkos_version = "?"
    for d in kokkos_inc:
        cfg = os.path.join(d, "KokkosCore_config.h")
        if os.path.exists(cfg):
            m = re.search(r"#define KOKKOS_VERSION (\d+)", open(cfg).read())
            if m:
                v = int(m.group(1))
                kokkos_version = f"{v // 10000}.{v // 100 % 100}.{v % 100:02d}"

    # team-size / scratch descriptions for the team kernels
    ts_team = team["team_size"]
    ts_serial = team["serial_team_size"]
    R = team["eigh_reals"] or "?"
    J = team["jacobi_reals"] or "?"
    def pretty(expr):
        if not expr:
            return "?"
        e = re.sub(r"\bn\b", "N", expr.replace(" ", ""))
        e = e.replace("N*N", "N^2")
        return re.sub(r"(\d+)\*N", r"\1N", e)

    per_solve = f"2s (floor((R+1)/2) + 1) B, R = {pretty(R)}"
    team_columns = {
        "qgml::batched_eigh[serial]": (
            f"{ts_serial}, one matrix per thread" if ts_serial else "?",
            f"{ts_serial} x {per_solve} (warm start: R + {pretty(J)})"),
        "qgml::batched_eigh[team]": (
            f"{ts_team[1]} (N <= {ts_team[0]}), {ts_team[2]}" if ts_team else "?", per_solve),
        "qgml::batched_eigh[packed]": ("1 (host only)", "host only"),
    }

    print(f"Per-kernel resources of the {arch} code, from `{COMMAND}` "
          f"({nvcc_version()}, Kokkos {kokkos_version}; ptxas -v on the build's own compile commands; "
          f"{len(units)} translation units, {len(entries)} kernel entries). Registers per thread, static "
          "shared memory (Kokkos' own; the team scratch is dynamic and requested at launch, last column), "
          "stack frame and spills in bytes per thread; `a / b` is double / float, `a-b` spans the "
          "instantiations (View types, translation units) of one label; s = sizeof(Real).")
    print()
    print("| kernel label | source | pattern, policy | registers | static smem | stack frame | spill st/ld "
          "| team size | team scratch requested |")
    print("|---|---|---|---|---|---|---|---|---|")

    def pair(by_real, key):
        vals = [fmt_range(by_real[r][key]) for r in ("double", "float") if r in by_real]
        if not vals:
            vals = [fmt_range(v[key]) for v in by_real.values()]
        if len(vals) == 2 and vals[0] == vals[1]:
            return vals[0]
        return " / ".join(vals)

    labels = collections.OrderedDict()
    def position(row):
        m = re.match(r"(.*):(\d+)$", row["where"] or "")
        return (m.group(1), int(m.group(2)), row["label"]) if m else ("~", 0, row["label"])

    for (label, real), r in sorted(rows.items(), key=lambda kv: position(kv[1])):
        labels.setdefault(label, {})[real] = r
    for label, by_real in labels.items():
        first = next(iter(by_real.values()))
        tsz, scr = team_columns.get(label, ("-", "-") if first["policy"] != "TeamPolicy" else ("?", "?"))
        reals = [r for r in ("double", "float") if r in by_real]
        note = "" if len(reals) != 1 else f" ({reals[0]} only)"
        where = first["where"].replace("core/include/qgml/", "") if first["where"] else "?"
        stores = pair(by_real, "spill_stores")
        loads = pair(by_real, "spill_loads")
        spill = stores if stores == loads and stores == "0" else f"{stores} / {loads}"
        print(f"| `{label}`{note} | {where} | {first['pattern']}, {first['policy'].replace('Policy', '')} "
              f"| {pair(by_real, 'registers')} | {pair(by_real, 'smem')} | {pair(by_real, 'stack')} | {spill} "
              f"| {tsz} | {scr} |")
    print()
    if others:
        print("Not listed: " + ", ".join(f"{v} {k}" for k, v in sorted(others.items())) + ".")
    if unmapped:
        print("Not mapped to a label (lambda not found in the sources): " + ", ".join(sorted(set(unmapped))) + ".")
    if binary_files:
        print(f"Cross-check against the {arch} cubins embedded in the build's executables "
              f"({', '.join(binary_files)}): {len(checked)} of the {len(entries)} entries are there"
              + ("" if len(checked) == len(entries) else " (the others come from sources changed since the "
                 "build or from objects linked into no executable)") + "; registers and static shared memory " + ("equal for all." if not differ else
                                              f"DIFFER for {len(differ)} (the build is older than the sources): "
                                              + ", ".join(names.get(m, m)[:80] for m in differ[:5]) + "."))
    elif compressed:
        print(f"(No cross-check against the executables: their {compressed} cubins are compressed.)")
    if failures:
        print("Translation units that did not compile (their kernels are missing): " +
              ", ".join(f"{s} ({p})" for s, p in failures) + ".")
    print()

    # probe table
    if probe:
        print("Per compile-time size (generated probe kernels with the shipped launch shapes; the shipped "
              "`qgml::batched_eigh[serial]` kernel holds the serial rows behind one run-time switch and "
              "reports their maximum):")
        print()
        print("| eigensolver branch | Real | registers | static smem (B) | stack frame (B) | spill st/ld (B) |")
        print("|---|---|---|---|---|---|")
        prows = []
        for mangled, res in probe.items():
            pl = probe_label(names.get(mangled, mangled))
            if pl:
                prows.append((pl, res))
        kind_order = lambda s: (0 if s.startswith("serial, hermitian") else 1 if "run-time" in s and "serial" in s
                                else 2 if "warm" in s else 3, s)
        for (what, real), res in sorted(prows, key=lambda x: (x[0][1] != "double", kind_order(x[0][0]))):
            print(f"| {what} | {real} | {res['registers']} | {res['smem']} | {res['stack']} "
                  f"| {res['spill_stores']}/{res['spill_loads']} |")
        print()
    elif not opts.no_probe:
        print(f"(Compile-time-N probe: {probe_error}.)")
        print()

    # scratch / occupancy table
    sizes = [int(x) for x in opts.sizes.split(",") if x.strip()]
    regs = {}
    for (label, real), r in rows.items():
        regs[(label, real)] = max(r["registers"])
        regs[(label, real, "smem")] = max(r["smem"])
    level0 = team["level0_max"]
    print(f"Team scratch of `qgml::batched_eigh` as requested (formulas read from the sources: scratch Reals "
          f"R(N) = {R}, warm start + {J}; serial team size {ts_serial}, team variant "
          f"{ts_team[1] if ts_team else '?'} for N <= {ts_team[0] if ts_team else '?'} else "
          f"{ts_team[2] if ts_team else '?'}). Kokkos {kokkos_version} puts a request in level 0 (shared "
          f"memory) up to {level0} B per team, else level 1 (global memory, one slot per resident team, "
          "taken with an atomic lock); a block also gets 8 (team size + 2) B of Kokkos' own shared memory. "
          f"Blocks per SM: A100 limits ({A100['max_blocks_per_sm']} blocks, {A100['max_threads_per_sm']} "
          f"threads, {A100['regs_per_sm']} registers in units of {A100['reg_alloc_unit']} per warp, "
          f"{A100['smem_per_sm'] // 1024} KB shared memory + 1 KB reserved per block) with the registers of "
          "the shipped kernel above.")
    print()
    print("Each cell is double / float.")
    print()
    print("| variant | N | team size | scratch per team (B) | level | level-1 pool (MB) "
          "| dyn. smem per block (B) | registers | blocks per SM (limit) | matrices in flight on 108 SMs |")
    print("|---|---|---|---|---|---|---|---|---|---|")

    def both(a, b):
        return a if a == b else f"{a} / {b}"

    for variant in ("serial", "serial, warm start", "team"):
        label = "qgml::batched_eigh[team]" if variant == "team" else "qgml::batched_eigh[serial]"
        for n in sizes:
            cells = []
            for real, size in (("double", 8), ("float", 4)):
                reg = regs.get((label, real))
                static = regs.get((label, real, "smem"), 0)
                if variant == "team":
                    if not ts_team:
                        break
                    ts = ts_team[1] if n <= ts_team[0] else ts_team[2]
                    per_team = scratch_bytes(team, n, size, False)
                else:
                    if not ts_serial:
                        break
                    ts = ts_serial
                    per_thread = scratch_bytes(team, n, size, variant.endswith("warm start"))
                    per_team = None if per_thread is None else ts * per_thread
                if per_team is None:
                    break
                level = 0 if per_team <= level0 else 1
                dyn = 8 * (ts + 2) + (per_team if level == 0 else 0)
                # Kokkos allocates level 1 for Cuda::concurrency() / team size teams at once
                # (concurrency = 2048 threads x 108 SMs on an A100)
                pool = per_team * (A100["max_threads_per_sm"] * A100["sms"] // ts) if level == 1 else 0
                pool_text = f"{pool / 1e6:.0f}" if level == 1 else "-"
                if reg is not None:
                    blocks, limit = occupancy(reg, ts, dyn, static)
                    occ = f"{blocks} ({limit})"
                    flight = str(blocks * A100["sms"] * (ts if variant != "team" else 1))
                else:
                    occ, flight = "?", "?"
                cells.append([str(ts), str(per_team), str(level), pool_text, str(dyn),
                              str(reg) if reg is not None else "?", occ, flight])
            if len(cells) != 2:
                continue
            print(f"| {variant} | {n} | " + " | ".join(both(x, y) for x, y in zip(*cells)) + " |")
    print()
    if opts.model:
        print_model(opts, regs, team)
    print(f"<!-- generated by {COMMAND} -->")
    return 0


sys.exit(main())
PYTHON
