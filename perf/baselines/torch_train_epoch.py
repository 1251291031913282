#!/usr/bin/env python3
"""PyTorch baseline: one training epoch of the QGML loss (suite "train_epoch").

The straightforward PyTorch trainer, as the reference (qgml/matrix_trainer) does it:
- parameters: D Hermitian N x N matrices A_k, one complex torch.nn.Parameter each
  (complex128 for "double", complex64 for "float"), QR init (docs/math.md 8.3):
  Z complex normal / sqrt(N), Q from torch.linalg.qr(Z), A_k = (Q + Q^H)/2;
- data: T points on the unit sphere in R^D (Gaussian, normalised, seeded);
- per mini-batch: H(x) = 1/2 sum_k (A_k - x_k I)^2 built per point (batched, D
  matrix products per point), ONE batched torch.linalg.eigh, psi0 = eigenvectors[..., :, 0],
  xbar_k = Re <psi0|A_k|psi0>, d^2 = |x - xbar|^2, and, only when w > 0,
  sigma^2 = sum_k (<psi0|A_k^2|psi0> - xbar_k^2); loss = mean d^2 + w mean sigma^2;
  backward by autograd, torch.optim.Adam(lr), then A <- (A + A^H)/2 under no_grad.
  (The reference runs a second, redundant eigh for sigma^2 when w > 0; this baseline does not.)
- epoch: torch.randperm(T), contiguous mini-batches of --batch, last partial batch kept.
- non-finite loss or gradient (eigh backward at degenerate spectra): the step is
  skipped and counted in "skipped_steps" (over warm-up and timed epochs).

With --device cuda everything lives on the GPU (data and initial matrices are made on the CPU
with the same seeds and moved there; the shuffle is drawn on the device) and each timed epoch
ends with torch.cuda.synchronize().

What is timed: one epoch over all T points (shuffle + all steps). Training state
(matrices, Adam moments) carries over from the warm-up epoch(s) to the timed ones.
Output: one JSON object per line per (precision, N, batch, w) on stdout, also
appended to --out FILE. Keys: suite, impl, torch_version, N, T, D, batch, w,
precision, device, threads, repeats, warmup, lr, seed, median_s, min_s, points_per_s
(T / median_s), final_loss (mean batch loss of the last epoch run), skipped_steps.

Example:
    /usr/bin/python3 perf/baselines/torch_train_epoch.py --N 8 --batch 2500 --w 0 \
        --precision double --repeats 3
"""
import argparse
import json
import math
import statistics
import sys
import time

SUITE = "train_epoch"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--N", type=int, nargs="+", default=[3, 4, 8, 16, 32, 64],
                   help="Hilbert-space dimensions (default: 3 4 8 16 32 64)")
    p.add_argument("--batch", type=int, nargs="+", default=[256, 2500],
                   help="mini-batch sizes (default: 256 2500)")
    p.add_argument("--w", type=float, nargs="+", default=[0.0, 0.25],
                   help="fluctuation weights (default: 0 0.25)")
    p.add_argument("--precision", nargs="+", choices=["double", "float"],
                   default=["double", "float"])
    p.add_argument("--T", type=int, default=2500, help="number of points (default: 2500)")
    p.add_argument("--D", type=int, default=3, help="number of matrices / features (default: 3)")
    p.add_argument("--lr", type=float, default=0.01, help="Adam learning rate (default: 0.01)")
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default: 2)")
    p.add_argument("--repeats", type=int, default=5, help="timed epochs (default: 5)")
    p.add_argument("--warmup", type=int, default=1, help="untimed epochs (default: 1)")
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


def sphere_points(torch, T, D, dtype, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(T, D, generator=gen, dtype=torch.float64)
    return (x / x.norm(dim=1, keepdim=True)).to(dtype)


def qr_init(torch, N, D, cdtype, device="cpu"):
    """docs/math.md 8.3: A_k = (Q + Q^H)/2, Q from the QR of a complex normal matrix (made on the CPU)."""
    mats = []
    for _ in range(D):
        Z = torch.randn(N, N, dtype=cdtype) / math.sqrt(N)
        Q, _ = torch.linalg.qr(Z)
        mats.append(torch.nn.Parameter((0.5 * (Q + Q.conj().transpose(-1, -2))).to(device)))
    return torch.nn.ParameterList(mats)


def qgml_loss(torch, mats, x, w):
    """mean d^2 + w mean sigma^2 for the points x (B x D), via one batched eigh."""
    B, D = x.shape
    N = mats[0].shape[0]
    eye = torch.eye(N, dtype=mats[0].dtype, device=x.device)
    xc = x.to(mats[0].dtype)
    H = torch.zeros(B, N, N, dtype=mats[0].dtype, device=x.device)
    for k in range(D):
        Bk = mats[k].unsqueeze(0) - xc[:, k, None, None] * eye   # A_k - x_k I, per point
        H = H + Bk @ Bk
    H = 0.5 * H
    _, evecs = torch.linalg.eigh(H)
    psi0 = evecs[..., :, 0]                                       # B x N
    # <psi0|M|psi0> written as (conj(a) * b).sum(-1): Debian torch's complex vdot returns 0.
    xbar = torch.stack([(psi0.conj() * (psi0 @ mats[k].transpose(0, 1))).sum(-1).real
                        for k in range(D)], dim=1)                # B x D
    loss = ((x - xbar) ** 2).sum(1).mean()
    if w > 0:
        sq = torch.stack([(psi0.conj() * (psi0 @ (mats[k] @ mats[k]).transpose(0, 1))).sum(-1).real
                          for k in range(D)], dim=1)
        sigma2 = (sq - xbar ** 2).sum(1)
        loss = loss + w * sigma2.mean()
    return loss


def train_epoch(torch, mats, opt, data, batch, w, stats):
    """One epoch; returns the unweighted mean of the finite batch losses."""
    T = data.shape[0]
    perm = torch.randperm(T, device=data.device)
    losses = []
    for start in range(0, T, batch):
        xb = data[perm[start:start + batch]]
        opt.zero_grad()
        loss = qgml_loss(torch, mats, xb, w)
        lval = loss.item()
        if not math.isfinite(lval):
            stats["skipped_steps"] += 1
            continue
        loss.backward()
        if not all(torch.isfinite(torch.view_as_real(A.grad)).all() for A in mats):
            stats["skipped_steps"] += 1
            opt.zero_grad()
            continue
        opt.step()
        with torch.no_grad():
            for A in mats:
                A.copy_(0.5 * (A + A.conj().transpose(-1, -2)))
        losses.append(lval)
    return sum(losses) / len(losses) if losses else float("nan")


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
        data = sphere_points(torch, args.T, args.D, rdtype, args.seed).to(device)
        for N in args.N:
            for batch in args.batch:
                for w in args.w:
                    torch.manual_seed(args.seed + N)   # init and shuffles
                    mats = qr_init(torch, N, args.D, cdtype, device)
                    opt = torch.optim.Adam(mats.parameters(), lr=args.lr)
                    stats = {"skipped_steps": 0}
                    final_loss = float("nan")
                    for _ in range(args.warmup):
                        final_loss = train_epoch(torch, mats, opt, data, batch, w, stats)
                    sync()
                    times = []
                    for _ in range(args.repeats):
                        t0 = time.perf_counter()
                        final_loss = train_epoch(torch, mats, opt, data, batch, w, stats)
                        sync()
                        times.append(time.perf_counter() - t0)
                    med = statistics.median(times)
                    emit({
                        "suite": SUITE,
                        "impl": "torch",
                        "torch_version": torch.__version__,
                        "N": N,
                        "T": args.T,
                        "D": args.D,
                        "batch": batch,
                        "w": w,
                        "precision": precision,
                        "device": str(device),
                        "threads": torch.get_num_threads(),
                        "repeats": args.repeats,
                        "warmup": args.warmup,
                        "lr": args.lr,
                        "seed": args.seed,
                        "median_s": med,
                        "min_s": min(times),
                        "points_per_s": args.T / med,
                        "final_loss": final_loss if math.isfinite(final_loss) else None,
                        "skipped_steps": stats["skipped_steps"],
                    }, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
