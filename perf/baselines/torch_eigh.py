#!/usr/bin/env python3
"""PyTorch baseline: batched Hermitian eigendecomposition (suite "eigh").

What is timed: ONE call ``torch.linalg.eigh(H)`` (eigenvalues and eigenvectors)
on a batch of T random complex Hermitian N x N matrices, H = (Z + Z^H)/2 with Z
standard complex normal (seeded). The matrices are built once, outside the
timed region. After ``--warmup`` untimed calls, ``--repeats`` calls are timed
with ``time.perf_counter``; the median and the minimum are reported.
With ``--device cuda`` the matrices are made and decomposed on the GPU (seeded on that
device, so not the CPU's numbers) and every timed call ends with
``torch.cuda.synchronize()``.

Output: one JSON object per line (JSON lines) on stdout per (precision, N, T),
also appended to ``--out FILE`` if given. Keys: suite, impl, torch_version, N,
T, precision, device, threads, repeats, warmup, seed, median_s, min_s, gflops
(36 N^3 T / median_s / 1e9, the nominal cost of a complex Hermitian eigh with
vectors), points_per_s (T / median_s).

Example:
    /usr/bin/python3 perf/baselines/torch_eigh.py --N 3 8 16 64 --T 2500 \
        --precision double --repeats 3
"""
import argparse
import json
import statistics
import sys
import time

SUITE = "eigh"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--N", type=int, nargs="+", default=[3, 4, 8, 16, 32, 64],
                   help="matrix sizes (default: 3 4 8 16 32 64)")
    p.add_argument("--T", type=int, nargs="+", default=[2500],
                   help="batch sizes = number of points (default: 2500)")
    p.add_argument("--precision", nargs="+", choices=["double", "float"],
                   default=["double", "float"],
                   help="complex128 (double) and/or complex64 (float)")
    p.add_argument("--threads", type=int, default=2,
                   help="torch.set_num_threads (default: 2)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs (default: 5)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs (default: 1)")
    p.add_argument("--seed", type=int, default=1234, help="RNG seed")
    p.add_argument("--device", default="cpu", help="torch device: cpu (default) or cuda")
    p.add_argument("--out", metavar="FILE", help="also append the JSON lines to FILE")
    return p.parse_args(argv)


def time_runs(fn, warmup, repeats, sync=lambda: None):
    """Run fn() warmup times untimed, then repeats times timed; return the times. sync() waits for the
    device (torch.cuda.synchronize on a GPU) before each clock reading."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return times


def emit(record, out_file):
    line = json.dumps(record)
    print(line, flush=True)
    if out_file:
        with open(out_file, "a") as fh:
            fh.write(line + "\n")


def random_hermitian_batch(torch, T, N, cdtype, seed, device="cpu"):
    """T random Hermitian N x N matrices (Z + Z^H)/2, Z standard complex normal, made on `device`."""
    gen = torch.Generator(device=device).manual_seed(seed)
    rdtype = torch.float64 if cdtype == torch.complex128 else torch.float32
    re = torch.randn(T, N, N, generator=gen, dtype=rdtype, device=device)
    im = torch.randn(T, N, N, generator=gen, dtype=rdtype, device=device)
    Z = torch.complex(re, im) / (2 ** 0.5)
    return 0.5 * (Z + Z.conj().transpose(-1, -2))


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
    except ImportError:
        print(f"torch not available: skipping {SUITE} baseline", file=sys.stderr)
        return 0
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    cdtypes = {"double": torch.complex128, "float": torch.complex64}

    for precision in args.precision:
        for N in args.N:
            for T in args.T:
                H = random_hermitian_batch(torch, T, N, cdtypes[precision],
                                           args.seed + 1000 * N + T, device)
                times = time_runs(lambda: torch.linalg.eigh(H), args.warmup, args.repeats, sync)
                med = statistics.median(times)
                emit({
                    "suite": SUITE,
                    "impl": "torch",
                    "torch_version": torch.__version__,
                    "N": N,
                    "T": T,
                    "precision": precision,
                    "device": str(device),
                    "threads": torch.get_num_threads(),
                    "repeats": args.repeats,
                    "warmup": args.warmup,
                    "seed": args.seed,
                    "median_s": med,
                    "min_s": min(times),
                    "gflops": 36.0 * N ** 3 * T / med / 1e9,
                    "points_per_s": T / med,
                }, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
