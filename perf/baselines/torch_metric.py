#!/usr/bin/env python3
"""PyTorch baseline: Eq. (7) quantum metric + dimension estimate per point (suite "metric").

For every point x (T points on the unit sphere in R^3, seeded) and a fixed matrix
configuration A_1..A_D (D = 3; a seeded random Hermitian one, A = (Z + Z^H)/2, or the
fuzzy sphere A_k = c J_k, c = 1, spin j = (N-1)/2 with --fuzzy), vectorised over a chunk
of points:
  1. H(x) = S - sum_k x_k A_k + 1/2 |x|^2 I with S = 1/2 sum_k A_k^2 (docs/math.md 2.1, cheap
     O(D N^2) form, not the reference's D matrix products per point);
  2. one batched torch.linalg.eigh (ascending E_n, columns psi_n);
  3. W[n, mu] = <psi_n|A_mu|psi_0> (n >= 1), g = 2 Re W^H diag(1/(E_n - E_0)) W (docs/math.md 5.1),
     gaps below --gap-tol (1e-12) dropped, NaN/Inf -> 0;
  4. eigenvalues of the D x D real symmetric g (torch.linalg.eigvalsh), sorted descending;
  5. ratio estimate (docs/math.md 6.1): rho_i = e_i / (e_{i+1} + 1e-12), d = argmax rho + 1.
With --device cuda the configuration and the points are made on the CPU (same seeds) and moved to
the GPU, where steps 1-5 run; each timed run ends with torch.cuda.synchronize().
Chunks of --chunk points bound the memory (a complex128 chunk of 25000 points at N = 64
needs several GB).

What is timed: steps 1-5 for all T points (one timed unit), after --warmup untimed runs;
--repeats timed runs, median and min reported. S is formed inside the timed unit.
Output: one JSON object per line per (precision, N, T) on stdout, also appended to
--out FILE. Keys: suite, impl, torch_version, N, T, D, precision, device, threads, repeats,
warmup, seed, config ("random" or "fuzzy"), chunk, median_s, min_s, points_per_s
(T / median_s), mean_dim (mean per-point estimate, a sanity value).

--check (needs --fuzzy): asserts that the metric eigenvalues at |x| = 1 are
{j, j, 0} (c = 1) and, in double, that every point estimates d = 2; prints "check ok" to stderr
(stdout stays pure JSON lines) or raises AssertionError.

Example:
    /usr/bin/python3 perf/baselines/torch_metric.py --N 3 8 16 32 64 --T 2500 100000
"""
import argparse
import json
import statistics
import sys
import time

SUITE = "metric"
D = 3


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--N", type=int, nargs="+", default=[3, 8, 16, 32, 64],
                   help="Hilbert-space dimensions (default: 3 8 16 32 64)")
    p.add_argument("--T", type=int, nargs="+", default=[2500, 100000],
                   help="numbers of points (default: 2500 100000)")
    p.add_argument("--precision", nargs="+", choices=["double", "float"], default=["double"])
    p.add_argument("--chunk", type=int, default=25000, help="points per chunk (default: 25000)")
    p.add_argument("--gap-tol", type=float, default=1e-12,
                   help="drop gaps E_n - E_0 below this (default: 1e-12)")
    p.add_argument("--fuzzy", action="store_true", help="fuzzy sphere A_k = J_k instead of random")
    p.add_argument("--check", action="store_true", help="with --fuzzy: assert eigenvalues {j, j, 0}")
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default: 2)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs (default: 5)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs (default: 1)")
    p.add_argument("--seed", type=int, default=1234, help="RNG seed")
    p.add_argument("--device", default="cpu", help="torch device: cpu (default) or cuda")
    p.add_argument("--out", metavar="FILE", help="also append the JSON lines to FILE")
    args = p.parse_args(argv)
    if args.check and not args.fuzzy:
        p.error("--check requires --fuzzy")
    return args


def emit(record, out_file):
    line = json.dumps(record)
    print(line, flush=True)
    if out_file:
        with open(out_file, "a") as fh:
            fh.write(line + "\n")


def fuzzy_sphere(torch, N, cdtype, c=1.0):
    """A_k = c J_k, spin j = (N-1)/2, basis m = j, j-1, ..., -j."""
    j = (N - 1) / 2.0
    m = torch.arange(N, dtype=torch.float64).neg().add(j)            # j ... -j
    jz = torch.diag(m).to(torch.complex128)
    # <m+1|J+|m> = sqrt(j(j+1) - m(m+1)), rows m+1 sit one index above rows m
    jp = torch.diag(torch.sqrt(j * (j + 1) - m[1:] * (m[1:] + 1)), 1).to(torch.complex128)
    jm = jp.conj().transpose(0, 1)
    jx = 0.5 * (jp + jm)
    jy = -0.5j * (jp - jm)
    return (c * torch.stack([jx, jy, jz])).to(cdtype)


def random_config(torch, N, cdtype, seed):
    gen = torch.Generator().manual_seed(seed)
    re = torch.randn(D, N, N, generator=gen, dtype=torch.float64)
    im = torch.randn(D, N, N, generator=gen, dtype=torch.float64)
    Z = torch.complex(re, im) / (2 ** 0.5)
    return (0.5 * (Z + Z.conj().transpose(-1, -2))).to(cdtype)


def sphere_points(torch, T, dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(T, D, generator=gen, dtype=torch.float64)
    return (x / x.norm(dim=1, keepdim=True)).to(dtype)


def metric_chunk(torch, A, S, x, gap_tol):
    """Metric eigenvalues (descending, B x D) and dimension estimates (B) for points x."""
    B, N = x.shape[0], A.shape[-1]
    # H = S - sum_k x_k A_k + 1/2 |x|^2 I: one real GEMM (B x D) @ (D x 2N^2), then S and the
    # diagonal in place (faster than a complex einsum; the chunk is memory-bound).
    H = torch.view_as_complex((x @ torch.view_as_real(-A).reshape(D, -1)).reshape(B, N, N, 2))
    H += S
    H.diagonal(dim1=-2, dim2=-1).add_(0.5 * (x * x).sum(1, keepdim=True))
    E, V = torch.linalg.eigh(H)                                     # B x N, B x N x N
    psi0 = V[..., :, 0]                                             # B x N
    Apsi0 = torch.einsum("kij,bj->bik", A, psi0)                    # B x N x D: A_mu psi0
    # Wc[n, mu] = conj <psi_n|A_mu|psi0> (n >= 1), written without a lazily conjugated V:
    # a conj-bit operand sends the batched matmul to a path ~7x slower (torch 1.13).
    Wc = V[:, :, 1:].transpose(-1, -2) @ Apsi0.conj()               # B x (N-1) x D
    gaps = E[:, 1:] - E[:, :1]
    inv = torch.where(gaps > gap_tol, 1.0 / gaps, torch.zeros_like(gaps))
    # g = 2 Re W^H diag(inv) W = 2 Re Wc^H diag(inv) Wc (the two are complex conjugates)
    g = 2.0 * (Wc.conj().transpose(-1, -2) @ (Wc * inv[:, :, None].to(Wc.dtype))).real
    g = torch.nan_to_num(0.5 * (g + g.transpose(-1, -2)), nan=0.0, posinf=0.0, neginf=0.0)
    e = torch.linalg.eigvalsh(g).flip(-1)                           # descending
    rho = e[:, :-1] / (e[:, 1:] + 1e-12)
    rho = torch.nan_to_num(rho, nan=0.0, posinf=1e12, neginf=0.0)
    dim = rho.argmax(dim=1) + 1
    return e, dim


def run_all(torch, A, x, chunk, gap_tol):
    S = 0.5 * (A @ A).sum(0)
    eigs, dims = [], []
    for s in range(0, x.shape[0], chunk):
        e, d = metric_chunk(torch, A, S, x[s:s + chunk], gap_tol)
        eigs.append(e)
        dims.append(d)
    return torch.cat(eigs), torch.cat(dims)


def check_fuzzy(torch, eigs, dims, N, precision):
    j = (N - 1) / 2.0
    tol = (1e-8 if precision == "double" else 2e-3) * max(1.0, j)
    target = torch.tensor([j, j, 0.0], dtype=eigs.dtype)
    err = (eigs - target).abs().max().item()
    assert err < tol, f"fuzzy metric eigenvalues off by {err} (N={N}, tol={tol})"
    frac2 = (dims == 2).double().mean().item()
    # In float, e_2 is rounding noise of either sign; a negative e_2 makes rho_1 < 0 and
    # the reference ratio rule then returns d = 1, so d = 2 is only asserted in double.
    assert precision == "float" or frac2 == 1.0, f"fuzzy d = 2 at only {frac2:.3f} of points"
    print(f"check ok: N={N} {precision} max|eig - (j, j, 0)| = {err:.3g}, "
          f"fraction d=2: {frac2:.3f}", file=sys.stderr)


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
    dtypes = {"double": (torch.float64, torch.complex128),
              "float": (torch.float32, torch.complex64)}

    for precision in args.precision:
        rdtype, cdtype = dtypes[precision]
        for N in args.N:
            if args.fuzzy:
                A = fuzzy_sphere(torch, N, cdtype).to(device)
            else:
                A = random_config(torch, N, cdtype, args.seed + N).to(device)
            for T in args.T:
                x = sphere_points(torch, T, rdtype, args.seed + T).to(device)
                for _ in range(args.warmup):
                    eigs, dims = run_all(torch, A, x, args.chunk, args.gap_tol)
                sync()
                times = []
                for _ in range(args.repeats):
                    t0 = time.perf_counter()
                    eigs, dims = run_all(torch, A, x, args.chunk, args.gap_tol)
                    sync()
                    times.append(time.perf_counter() - t0)
                if args.check:
                    check_fuzzy(torch, eigs.cpu(), dims.cpu(), N, precision)
                med = statistics.median(times)
                emit({
                    "suite": SUITE,
                    "impl": "torch",
                    "torch_version": torch.__version__,
                    "N": N,
                    "T": T,
                    "D": D,
                    "precision": precision,
                    "device": str(device),
                    "threads": torch.get_num_threads(),
                    "repeats": args.repeats,
                    "warmup": args.warmup,
                    "seed": args.seed,
                    "config": "fuzzy" if args.fuzzy else "random",
                    "chunk": args.chunk,
                    "median_s": med,
                    "min_s": min(times),
                    "points_per_s": T / med,
                    "mean_dim": dims.double().mean().item(),
                }, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
