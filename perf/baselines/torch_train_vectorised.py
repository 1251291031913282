#!/usr/bin/env python3
"""PyTorch baseline, written for speed: one training epoch of the QGML loss (suite "train_epoch").

The strongest PyTorch trainer we know how to write (impl "torch_vectorised"); torch_train_epoch.py is
the reference's style. Same data, initialisation, optimiser, epoch and output keys as that script:
- the D matrices are one complex (D, N, N) Parameter;
- per mini-batch, H(x) = 1/2 S - sum_k x_k A_k + 1/2 |x|^2 I with S = sum_k A_k^2 formed once per
  step: one (B x D) x (D x N^2) GEMM builds every H(x);
- ONE batched torch.linalg.eigh; A_k psi_0 for every k by one GEMM;
- a custom torch.autograd.Function whose backward is the analytic gradient of docs/math.md 4.4, not autograd
  through eigh: phi = R (sum_k r_k A_k psi_0) from the eigenpairs already computed, with the
  regularised reduced resolvent (E_n - E_0) / ((E_n - E_0)^2 + eta^2), eta = 1e-8 (double) or 1e-4
  (float) times the spectral width (docs/math.md 4.7), so degenerate spectra give finite gradients; the batch
  gradient G_l = M_l + M_l^H is one GEMM, M = [L1; L2]^T conj([psi_0; phi]) over the batch;
- no host synchronisation inside the epoch: the batch losses are summed on the device and read once.
Adam and the Hermitian projection after each step are the reference's.

Output: the JSON line of torch_train_epoch.py with impl "torch_vectorised".
Example:
    python3 perf/baselines/torch_train_vectorised.py --N 8 --batch 2500 --w 0 --precision double
"""
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_train_epoch as ref  # noqa: E402  (CLI, data, initialisation, JSON output)

SUITE = ref.SUITE
IMPL = "torch_vectorised"


def make_loss_function(torch):
    class QgmlLoss(torch.autograd.Function):
        """mean_b [d^2 + w sigma^2] of the points x (B x D) for Hermitian A (D x N x N); docs/math.md 4.4."""

        @staticmethod
        def forward(ctx, A, x, w, eta_rel):
            D, N, _ = A.shape
            B = x.shape[0]
            xc = x.to(A.dtype)
            S = torch.einsum("kij,kjl->il", A, A)
            H = (xc @ A.reshape(D, N * N)).reshape(B, N, N).neg_()
            H += 0.5 * S
            H.diagonal(dim1=-2, dim2=-1).add_((0.5 * (x * x).sum(1)).to(A.dtype)[:, None])
            E, V = torch.linalg.eigh(H)
            psi = V[:, :, 0]
            Aop = A.permute(2, 0, 1).reshape(N, D * N)       # psi @ Aop = (A_k psi)_i, k-major
            Y = (psi @ Aop).reshape(B, D, N)
            xbar = (psi.conj()[:, None, :] * Y).sum(-1).real
            r = xbar - x
            terms = (r * r).sum(1)
            if w > 0:
                terms = terms + w * ((Y.abs() ** 2).sum(-1) - xbar * xbar).sum(1)
            ctx.save_for_backward(A, x, E, V, Y, r)
            ctx.w, ctx.eta_rel = w, eta_rel
            return terms.mean()

        @staticmethod
        def backward(ctx, grad_out):
            A, x, E, V, Y, r = ctx.saved_tensors
            w = ctx.w
            D, N, _ = A.shape
            B = x.shape[0]
            psi = V[:, :, 0]
            # phi = R s, s = sum_k r_k A_k psi_0, in the eigenbasis of H(x) (docs/math.md 4.4, 4.7).
            s = (r.to(A.dtype)[:, :, None] * Y).sum(1)
            c = (V.conj().transpose(1, 2) @ s[:, :, None]).squeeze(-1)
            gap = E - E[:, :1]
            eta = ctx.eta_rel * (E[:, -1:] - E[:, :1]).clamp_min(torch.finfo(E.dtype).tiny)
            inv = gap / (gap * gap + eta * eta)
            inv[:, 0] = 0
            phi = (V @ (inv.to(A.dtype) * c)[:, :, None]).squeeze(-1)
            Aop = A.permute(2, 0, 1).reshape(N, D * N)
            xc = x.to(A.dtype)[:, :, None]
            b = Y - xc * psi[:, None, :]                                   # B_l psi_0
            cl = (phi @ Aop).reshape(B, D, N) - xc * phi[:, None, :]       # B_l phi
            # grad_l = M_l + M_l^H, M_l = sum_b [(1-w) r_l psi + w b_l - (1-w) c_l] psi^H - (1-w) b_l phi^H.
            L1 = (1 - w) * r.to(A.dtype)[:, :, None] * psi[:, None, :] + w * b - (1 - w) * cl
            L2 = -(1 - w) * b
            L = torch.cat([L1, L2], 0).reshape(2 * B, D * N)
            R = torch.cat([psi, phi], 0).conj()
            M = (L.transpose(0, 1) @ R).reshape(D, N, N)
            G = (M + M.conj().transpose(1, 2)) * (grad_out / B)
            return G, None, None, None

    return QgmlLoss


def train_epoch(torch, loss_fn, A, opt, data, batch, w, eta_rel):
    """One epoch; returns the mean of the batch losses, read from the device once."""
    T = data.shape[0]
    perm = torch.randperm(T, device=data.device)
    total = torch.zeros((), dtype=data.dtype, device=data.device)
    steps = 0
    for start in range(0, T, batch):
        xb = data[perm[start:start + batch]]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn.apply(A, xb, w, eta_rel)
        loss.backward()
        opt.step()
        with torch.no_grad():
            A.copy_(0.5 * (A + A.conj().transpose(1, 2)))
            total += loss.detach()
        steps += 1
    return total.item() / max(steps, 1)


def main(argv=None):
    args = ref.parse_args(argv)
    try:
        import torch
    except ImportError:
        print(f"torch not available: skipping {SUITE} baseline ({IMPL})", file=sys.stderr)
        return 0
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    dtypes = {"double": (torch.float64, torch.complex128, 1e-8),
              "float": (torch.float32, torch.complex64, 1e-4)}
    loss_fn = make_loss_function(torch)

    for precision in args.precision:
        rdtype, cdtype, eta_rel = dtypes[precision]
        data = ref.sphere_points(torch, args.T, args.D, rdtype, args.seed).to(device)
        for N in args.N:
            for batch in args.batch:
                for w in args.w:
                    torch.manual_seed(args.seed + N)
                    mats = ref.qr_init(torch, N, args.D, cdtype)
                    A = torch.nn.Parameter(torch.stack([m.detach() for m in mats]).to(device))
                    opt = torch.optim.Adam([A], lr=args.lr)
                    final_loss = float("nan")
                    for _ in range(args.warmup):
                        final_loss = train_epoch(torch, loss_fn, A, opt, data, batch, w, eta_rel)
                    sync()
                    times = []
                    for _ in range(args.repeats):
                        t0 = time.perf_counter()
                        final_loss = train_epoch(torch, loss_fn, A, opt, data, batch, w, eta_rel)
                        sync()
                        times.append(time.perf_counter() - t0)
                    med = statistics.median(times)
                    ref.emit({
                        "suite": SUITE, "impl": IMPL, "torch_version": torch.__version__, "N": N, "T": args.T,
                        "D": args.D, "batch": batch, "w": w, "precision": precision, "device": str(device),
                        "threads": torch.get_num_threads(), "repeats": args.repeats, "warmup": args.warmup,
                        "lr": args.lr, "seed": args.seed, "median_s": med, "min_s": min(times),
                        "points_per_s": args.T / med,
                        "final_loss": final_loss if math.isfinite(final_loss) else None,
                        "skipped_steps": 0,
                    }, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
