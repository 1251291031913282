#!/usr/bin/env python3
"""PyTorch baseline: ULA / MALA / HMC sampling of exp(-beta E_0(x)) (suite "sample").

Target: p(x) ~ exp(-U(x)), U(x) = beta E_0(x), x in R^D, E_0(x) the smallest eigenvalue of
H(x) = 1/2 sum_k (A_k - x_k I)^2 for D Hermitian N x N matrices A_k. By Hellmann-Feynman
grad U = beta (x - xbar(x)), xbar_k = <psi_0|A_k|psi_0>, psi_0 the ground state.
One energy + force evaluation for all C chains (the batch):
  1. H = S - sum_k x_k A_k + 1/2 |x|^2 I, S = 1/2 sum_k A_k^2 precomputed: one real GEMM
     (C x (D+2)) @ ((D+2) x 2N^2), rows (x, 1, |x|^2) times (-A_k, S, I/2), into a reused buffer;
  2. one batched torch.linalg.eigh into reused buffers; E_0 = E[:, 0], psi_0 = V[:, :, 0];
  3. xbar_k = psi_0^H A_k psi_0 = w^T M_k w in real arithmetic, w = (Re psi_0, Im psi_0),
     M_k = [[Re A_k, -Im A_k], [Im A_k, Re A_k]]: one GEMM and one batched dot product.
Samplers (xi, p ~ N(0, I), u ~ U(0, 1), all drawn for all chains at once):
  ula:  x' = x - eps grad U(x) + sqrt(2 eps) xi;
  mala: y as ula, accepted where log u < U(x) - U(y) + log q(x|y) - log q(y|x),
        log q(b|a) = -|b - a + eps grad U(a)|^2 / (4 eps);
  hmc:  L leapfrog steps of size eps (half step in p, L - 1 full steps, half step), accepted where
        log u < H_old - H_new, H = U + |p|^2 / 2.
U and grad U of the current state are kept, so a step costs one evaluation (ula, mala) or L (hmc).
Configuration: the fuzzy sphere A_k = J_k / j (spin j = (N-1)/2, D = 3; c = 1/j as
qgml::fuzzy_sphere_configuration; c = 1 at N = 1), or --matrices FILE.npy (complex (D, N, N)).
Initial chains: standard normal (seeded, made on the CPU and moved to --device).

What is timed: --steps steps of all chains (one timed unit), after --warmup untimed units; the chain
state carries over from one unit to the next. Evaluation of the initial state is not timed. With
--device cuda every unit ends with torch.cuda.synchronize().
Output: one JSON object per line per (precision, N, sampler) on stdout, also appended to --out FILE.
Keys: suite, impl, torch_version, N, D, precision, device, threads, repeats, warmup, seed, config,
sampler, chains, steps, beta, step_size, leapfrog, energy_evaluations (per step), median_s, min_s,
chain_steps_per_s (chains * steps / median_s), acceptance (mean over chains and timed steps; null
for ula).

--check: commuting matrices A_k = a_k I_N (one well at a) give E_0 = |x - a|^2 / 2, so p is
N(a, I / beta); runs each sampler from the seeded start for --check-steps steps and asserts that the
mean and variance over the chains of the final states match the exact ones within 5 standard
errors (for ula the exact stationary variance of the discretised chain, 1 / (beta (1 - beta eps /
2))); prints "check ok ..." to stderr. No JSON output in this mode. Default steps here are larger
(see step_size) so that a wrong MALA correction or leapfrog shows (measured: 10-30 standard errors).

Examples:
    /usr/bin/python3 perf/baselines/torch_sample.py --N 8 --chains 10000 --threads 2 --repeats 3
    /usr/bin/python3 perf/baselines/torch_sample.py --check --N 1 4 --beta 2
"""
import argparse
import json
import math
import statistics
import sys
import time

SUITE = "sample"
SAMPLERS = ("ula", "mala", "hmc")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--N", type=int, nargs="+", default=[8],
                   help="Hilbert-space dimensions (default: 8; ignored with --matrices)")
    p.add_argument("--chains", type=int, default=10000, help="chains C (default: 10000)")
    p.add_argument("--steps", type=int, default=20, help="steps per timed unit (default: 20)")
    p.add_argument("--sampler", nargs="+", choices=SAMPLERS, default=list(SAMPLERS))
    p.add_argument("--precision", nargs="+", choices=["double", "float"],
                   default=["double", "float"])
    p.add_argument("--beta", type=float, default=1.0, help="inverse temperature (default: 1)")
    p.add_argument("--step", type=float, default=None,
                   help="step size eps (default: 0.05 for ula/mala, 0.1 for hmc)")
    p.add_argument("--leapfrog", type=int, default=10, help="hmc leapfrog steps L (default: 10)")
    p.add_argument("--matrices", metavar="FILE.npy",
                   help="complex (D, N, N) Hermitian matrices instead of the fuzzy sphere")
    p.add_argument("--check", action="store_true",
                   help="validate the samplers on A_k = a_k I (Gaussian target) instead of timing")
    p.add_argument("--check-steps", type=int, default=200,
                   help="steps from the start before the --check statistics (default: 200)")
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default: 2)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs (default: 5)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs (default: 1)")
    p.add_argument("--seed", type=int, default=1234, help="RNG seed")
    p.add_argument("--device", default="cpu", help="torch device: cpu (default) or cuda")
    p.add_argument("--out", metavar="FILE", help="also append the JSON lines to FILE")
    return p.parse_args(argv)


def emit(record, out_file):
    line = json.dumps(record)
    print(line, flush=True)
    if out_file:
        with open(out_file, "a") as fh:
            fh.write(line + "\n")


def fuzzy_sphere(torch, N):
    """A_k = J_k / j (spin j = (N-1)/2, basis m = j, ..., -j; c = 1 at N = 1), complex128."""
    j = (N - 1) / 2.0
    m = torch.arange(N, dtype=torch.float64).neg().add(j)
    jz = torch.diag(m).to(torch.complex128)
    jp = torch.diag(torch.sqrt(j * (j + 1) - m[1:] * (m[1:] + 1)), 1).to(torch.complex128)
    jm = jp.conj().transpose(0, 1)
    J = torch.stack([0.5 * (jp + jm), -0.5j * (jp - jm), jz])
    return J / j if j > 0 else J


def load_matrices(torch, path):
    import numpy as np
    A = torch.from_numpy(np.load(path)).to(torch.complex128)
    if A.dim() != 3 or A.shape[1] != A.shape[2]:
        sys.exit(f"{path}: expected a (D, N, N) array, got {tuple(A.shape)}")
    if (A - A.conj().transpose(-1, -2)).abs().max().item() > 1e-10 * max(1.0, A.abs().max().item()):
        sys.exit(f"{path}: matrices are not Hermitian")
    return A


class Energy:
    """U = beta E_0(x) and grad U = beta (x - xbar(x)) for a batch of C points, buffers reused."""

    def __init__(self, torch, A, C, beta, rdtype):
        self.torch = torch
        D, N = A.shape[0], A.shape[-1]
        self.D, self.N, self.beta = D, N, beta
        dev = A.device
        # H = [x_1 .. x_D, 1, |x|^2] . [-A_1 .. -A_D, S, I/2]: one real GEMM (C x (D+2)) @ ((D+2) x 2N^2)
        S = 0.5 * (A @ A).sum(0)
        I = torch.eye(N, dtype=A.dtype, device=dev)
        B = torch.cat([-A, S[None], 0.5 * I[None]])
        self.B = torch.view_as_real(B).reshape(D + 2, 2 * N * N).contiguous()
        # psi^H A_k psi = w^T M_k w with w = (Re psi, Im psi), M_k = [[Re A_k, -Im A_k], [Im A_k, Re A_k]];
        # the M_k side by side (2N x 2DN) make it one real GEMM and a batched dot product
        M = torch.cat([torch.cat([A.real, -A.imag], 2), torch.cat([A.imag, A.real], 2)], 1)
        self.M = M.permute(1, 0, 2).reshape(2 * N, D * 2 * N).contiguous()
        new = lambda *s, dtype=rdtype: torch.empty(*s, dtype=dtype, device=dev)
        self.xa = new(C, D + 2)
        self.xa[:, D] = 1
        self.Hr = new(C, 2 * N * N)
        self.H = torch.view_as_complex(self.Hr.view(C, N, N, 2))
        self.E, self.V = new(C, N), new(C, N, N, dtype=A.dtype)
        self.w, self.Mw, self.xbar = new(C, 2 * N), new(C, D * 2 * N), new(C, D, 1)

    def __call__(self, x, U, g):
        """Writes U(x) into U (C) and grad U(x) into g (C x D)."""
        torch, D, N = self.torch, self.D, self.N
        self.xa[:, :D] = x
        torch.sum(x * x, 1, out=self.xa[:, D + 1])
        torch.matmul(self.xa, self.B, out=self.Hr)
        torch.linalg.eigh(self.H, out=(self.E, self.V))        # ascending; psi_0 = column 0
        psi = self.V[:, :, 0]
        self.w[:, :N] = psi.real
        self.w[:, N:] = psi.imag
        torch.matmul(self.w, self.M, out=self.Mw)
        torch.bmm(self.Mw.view(-1, D, 2 * N), self.w.unsqueeze(2), out=self.xbar)
        torch.mul(self.E[:, 0], self.beta, out=U)
        torch.sub(x, self.xbar.squeeze(2), out=g).mul_(self.beta)


class Sampler:
    """State (x, U, grad U) of C chains and one step of ula, mala or hmc for all of them."""

    def __init__(self, torch, kind, energy, x0, eps, leapfrog, gen):
        self.torch, self.kind, self.f, self.eps, self.L, self.gen = torch, kind, energy, eps, leapfrog, gen
        C, D = x0.shape
        new = lambda *s: torch.empty(*s, dtype=x0.dtype, device=x0.device)
        self.x, self.U, self.g = x0.clone(), new(C), new(C, D)
        self.y, self.Uy, self.gy = new(C, D), new(C), new(C, D)      # proposal
        self.xi, self.u, self.la = new(C, D), new(C), new(C)
        self.acc = torch.empty(C, dtype=torch.bool, device=x0.device)
        self.accepted = torch.zeros((), dtype=torch.float64, device=x0.device)
        self.f(self.x, self.U, self.g)

    def step(self):
        getattr(self, self.kind)()

    def ula(self):
        torch, eps = self.torch, self.eps
        torch.randn(self.x.shape, generator=self.gen, out=self.xi, dtype=self.x.dtype, device=self.x.device)
        self.x.add_(self.g, alpha=-eps).add_(self.xi, alpha=math.sqrt(2 * eps))
        self.f(self.x, self.U, self.g)

    def mala(self):
        torch, eps, x, y, xi = self.torch, self.eps, self.x, self.y, self.xi
        torch.randn(x.shape, generator=self.gen, out=xi, dtype=x.dtype, device=x.device)
        torch.add(x, self.g, alpha=-eps, out=y).add_(xi, alpha=math.sqrt(2 * eps))
        self.f(y, self.Uy, self.gy)
        # log q(y|x) = -|sqrt(2 eps) xi|^2 / (4 eps) = -|xi|^2 / 2
        # log q(x|y) = -|x - y + eps grad U(y)|^2 / (4 eps)
        r = (x - y).add_(self.gy, alpha=eps)
        la = torch.sub(self.U, self.Uy, out=self.la)
        la.add_((xi * xi).sum(1), alpha=0.5).sub_((r * r).sum(1), alpha=1.0 / (4 * eps))
        self.accept(la)

    def hmc(self):
        torch, eps, x, q, p = self.torch, self.eps, self.x, self.y, self.xi
        torch.randn(x.shape, generator=self.gen, out=p, dtype=x.dtype, device=x.device)
        la = torch.add(self.U, (p * p).sum(1), alpha=0.5, out=self.la)   # H_old
        q.copy_(x)
        p.add_(self.g, alpha=-0.5 * eps)
        for l in range(self.L):
            q.add_(p, alpha=eps)
            self.f(q, self.Uy, self.gy)
            p.add_(self.gy, alpha=-eps if l + 1 < self.L else -0.5 * eps)
        la.sub_(self.Uy).sub_((p * p).sum(1), alpha=0.5)                  # H_old - H_new
        self.accept(la)

    def accept(self, log_alpha):
        """Where log u < log alpha the proposal (y, Uy, gy) replaces the state; NaN rejects."""
        torch = self.torch
        torch.rand(self.u.shape, generator=self.gen, out=self.u, dtype=self.u.dtype, device=self.u.device)
        torch.lt(self.u.log_(), log_alpha, out=self.acc)
        self.accepted += self.acc.sum()
        a = self.acc.unsqueeze(1)
        torch.where(a, self.y, self.x, out=self.x)
        torch.where(self.acc, self.Uy, self.U, out=self.U)
        torch.where(a, self.gy, self.g, out=self.g)


def initial_chains(torch, C, D, rdtype, seed, device):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(C, D, generator=gen, dtype=torch.float64).to(rdtype).to(device)


def step_size(args, kind):
    """--step, else 0.05 (ula, mala) and 0.1 (hmc); with --check 0.5 / beta (ula, mala) and
    0.4 / sqrt(beta) (hmc), large enough that a wrong acceptance rule or a non-reversible leapfrog
    shows as a bias of many standard errors."""
    if args.step is not None:
        return args.step
    if args.check:
        return 0.4 / math.sqrt(args.beta) if kind == "hmc" else 0.5 / args.beta
    return 0.1 if kind == "hmc" else 0.05


def run_check(torch, args, dtypes, device):
    """Gaussian target N(a, I / beta) from A_k = a_k I_N; statistics of the final states."""
    a = torch.tensor([0.5, -0.3, 0.2], dtype=torch.float64)
    C, beta, z = args.chains, args.beta, 5.0
    for precision in args.precision:
        rdtype, cdtype = dtypes[precision]
        for N in args.N:
            A = (a[:, None, None] * torch.eye(N, dtype=torch.float64)).to(cdtype).to(device)
            for kind in args.sampler:
                eps = step_size(args, kind)
                f = Energy(torch, A, C, beta, rdtype)
                gen = torch.Generator(device=device).manual_seed(args.seed + 1)
                x0 = initial_chains(torch, C, 3, rdtype, args.seed, device)
                s = Sampler(torch, kind, f, x0, eps, args.leapfrog, gen)
                for _ in range(args.check_steps):
                    s.step()
                x = s.x.double().cpu()
                var = 1.0 / (beta * (1.0 - 0.5 * beta * eps)) if kind == "ula" else 1.0 / beta
                mean_err = (x.mean(0) - a).abs().max().item() / math.sqrt(var / C)
                var_err = (x.var(0) - var).abs().max().item() / (var * math.sqrt(2.0 / (C - 1)))
                acc = s.accepted.item() / (C * args.check_steps)
                assert mean_err < z and var_err < z, (
                    f"check failed: {kind} N={N} {precision}: mean off by {mean_err:.2f}, "
                    f"variance off by {var_err:.2f} standard errors")
                print(f"check ok: {kind} N={N} {precision} beta={beta} eps={eps}: mean and variance "
                      f"within {mean_err:.2f} and {var_err:.2f} standard errors"
                      + ("" if kind == "ula" else f", acceptance {acc:.3f}"), file=sys.stderr)


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
    torch.set_grad_enabled(False)
    if args.check:
        run_check(torch, args, dtypes, device)
        return 0

    A64 = load_matrices(torch, args.matrices) if args.matrices else None
    Ns = [A64.shape[-1]] if A64 is not None else args.N
    for precision in args.precision:
        rdtype, cdtype = dtypes[precision]
        for N in Ns:
            A = (A64 if A64 is not None else fuzzy_sphere(torch, N)).to(cdtype).to(device)
            D = A.shape[0]
            for kind in args.sampler:
                eps = step_size(args, kind)
                f = Energy(torch, A, args.chains, args.beta, rdtype)
                gen = torch.Generator(device=device).manual_seed(args.seed + 1)
                x0 = initial_chains(torch, args.chains, D, rdtype, args.seed, device)
                s = Sampler(torch, kind, f, x0, eps, args.leapfrog, gen)

                def unit():
                    for _ in range(args.steps):
                        s.step()

                for _ in range(args.warmup):
                    unit()
                sync()
                s.accepted.zero_()
                times = []
                for _ in range(args.repeats):
                    t0 = time.perf_counter()
                    unit()
                    sync()
                    times.append(time.perf_counter() - t0)
                med = statistics.median(times)
                timed_steps = args.chains * args.steps * args.repeats
                emit({
                    "suite": SUITE,
                    "impl": "torch",
                    "torch_version": torch.__version__,
                    "N": N,
                    "D": D,
                    "precision": precision,
                    "device": str(device),
                    "threads": torch.get_num_threads(),
                    "repeats": args.repeats,
                    "warmup": args.warmup,
                    "seed": args.seed,
                    "config": args.matrices if args.matrices else "fuzzy",
                    "sampler": kind,
                    "chains": args.chains,
                    "steps": args.steps,
                    "beta": args.beta,
                    "step_size": eps,
                    "leapfrog": args.leapfrog if kind == "hmc" else None,
                    "energy_evaluations": args.leapfrog if kind == "hmc" else 1,
                    "median_s": med,
                    "min_s": min(times),
                    "chain_steps_per_s": args.chains * args.steps / med,
                    "acceptance": None if kind == "ula" else s.accepted.item() / timed_steps,
                }, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
