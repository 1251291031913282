#!/usr/bin/env python3
"""Checks a CUDA build's object files for nvcc extended lambdas that can crash or allocate on the host.

nvcc compiles the host side of each `KOKKOS_LAMBDA` into `__nv_hdl_wrapper_t<..., __nv_dl_tag<...,
&enclosing_function, index>>`, whose call, copy and destructor go through function pointers private to
the translation unit that constructed it, and which heap-allocates a copy of the lambda on every
construction and copy (every launch). Its code is weak, so when a template holding the lambda is
instantiated in two translation units the linker may keep one unit's code and the other's pointers:
the program calls address 0 (docs/architecture.md "Host execution spaces in a CUDA build").

Fails (exit 1) when
  - a wrapper's enclosing function is in namespace qgml (the library's kernels are named functors), or
  - one wrapper type is defined in more than one object file;
and (exit 2) when the directory holds no object compiled by nvcc, so that the check never passes on
nothing. Usage: check_extended_lambdas.py BUILD_DIR
"""
import collections
import os
import re
import subprocess
import sys


def tag_of(symbol):
    """The __nv_dl_tag<...> of a demangled wrapper symbol, and the enclosing function's name."""
    i = symbol.find("__nv_dl_tag<")
    if i < 0:
        return None, None
    depth = 0
    for k in range(i + len("__nv_dl_tag"), len(symbol)):
        if symbol[k] == "<":
            depth += 1
        elif symbol[k] == ">":
            depth -= 1
            if depth == 0:
                break
    tag = symbol[i : k + 1]
    m = re.search(r", &(.*), \d+u>$", tag)
    return tag, (m.group(1) if m else "")


def function_name(enclosing):
    """The qualified name in a demangled `(ReturnType ns::f<...>(Args...) const)`."""
    text = enclosing[1:-1] if enclosing.startswith("(") and enclosing.endswith(")") else enclosing
    depth, start = 0, 0
    for k, c in enumerate(text):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == " " and depth == 0:
            start = k + 1
        elif c == "(" and depth == 0:
            return text[start:k]
    return text[start:]


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = sys.argv[1]
    objects = sorted(
        os.path.join(d, f) for d, _, files in os.walk(root) for f in files if f.endswith(".o")
    )
    cuda_objects = 0
    where = collections.defaultdict(set)
    enclosing = {}
    for obj in objects:
        out = subprocess.run(["nm", "-C", obj], capture_output=True, text=True).stdout
        if "__cudaRegisterFatBinary" in out:
            cuda_objects += 1
        for line in out.splitlines():
            parts = line.split(" ", 2)
            # defined code and data of a wrapper: weak (W, V) or global (T, D, B) symbols
            if len(parts) != 3 or parts[1] not in "WVTDB" or "__nv_hdl_wrapper_t<" not in parts[2]:
                continue
            tag, name = tag_of(parts[2])
            if tag is None:
                continue
            where[tag].add(os.path.relpath(obj, root))
            enclosing[tag] = name
    if cuda_objects == 0:
        print(f"check_extended_lambdas: no object compiled by nvcc under {root} ({len(objects)} objects)")
        return 2
    in_library = sorted(t for t in where if function_name(enclosing[t]).startswith("qgml::"))
    shared = sorted(t for t in where if len(where[t]) > 1)
    for t in in_library:
        print(f"extended lambda in a qgml kernel (make it a named functor): {function_name(enclosing[t]) or t}")
        print("    in " + ", ".join(sorted(where[t])[:4]))
    for t in shared:
        if t in in_library:
            continue
        print(f"extended lambda defined in {len(where[t])} object files: {function_name(enclosing[t]) or t}")
        print("    in " + ", ".join(sorted(where[t])[:4]))
    print(
        f"check_extended_lambdas: {len(objects)} objects ({cuda_objects} from nvcc), {len(where)} extended "
        f"lambdas, {len(in_library)} in qgml kernels, {len(shared)} in several object files"
    )
    return 1 if in_library or shared else 0


if __name__ == "__main__":
    sys.exit(main())
