#!/usr/bin/env python3
"""PyTorch baseline: one epoch of supervised QCML training (suite "supervised_epoch", impl "torch").

The model of docs/supervised.md: D Hermitian N x N feature matrices A_k encode a point x in R^D into the
ground state psi_0 of H(x) = 1/2 sum_k (A_k - x_k I)^2; a Hermitian N x N target operator B reads it out,
y_hat = <psi_0|B|psi_0>. Objective of a mini-batch of points x_t with targets y_t:
    mean_t l(y_hat_t, y_t) + lambda mean_t [|x_t - xbar_t|^2 + w sigma_t^2] + gamma sum_{i<j} ||[M_i, M_j]||_F^2
with l = mse (y_hat - y)^2, mae |y_hat - y|, huber (delta 1), logistic softplus(y_hat) - y y_hat (y in {0, 1}),
xbar_k = <psi_0|A_k|psi_0>, sigma^2 = sum_k <psi_0|A_k^2|psi_0> - xbar_k^2, and the penalty over all D + 1
operators M = (A_1, ..., A_D, B). lambda (--lam), w and gamma default to 0 (pure supervised training).

Written for speed, with autograd (no hand-written gradient):
- the D + 1 operators are ONE complex (D + 1, N, N) Parameter M, Hermitised in the forward pass
  (Mh = (M + M^H)/2; the gradient of M is then Hermitian and Adam, acting on real and imaginary parts
  elementwise, keeps M Hermitian); initial operators: the QR initialisation of docs/math.md 8.3
  (torch_train_epoch.qr_init) for all D + 1;
- per mini-batch: S = 1/2 sum_k A_k^2 once (one batched GEMM and a sum), every H(x) = S - sum_k x_k A_k
  + 1/2 |x|^2 I by ONE real GEMM (B x D) @ (D x 2N^2) on the real view of the A_k, ONE batched
  torch.linalg.eigh, psi_0 = eigenvectors[..., :, 0], y_hat = Re <psi_0|B psi_0> (one GEMM and a
  batched dot product); with lambda > 0 every A_k psi_0 by one more GEMM;
- autograd through eigh, torch.optim.Adam(lr); a step whose loss or gradient is not finite is skipped and
  counted (as the reference trainer does; on the CPU the check costs microseconds);
- the epoch: a permutation of the T points from a seeded torch.Generator, contiguous mini-batches of
  --batch (0: the full data set), the last partial batch kept, one Adam step per batch.

Data: --data FILE.csv (D feature columns, then the target; no header; what perf/supervised_benchmark.py
hands to qgml and to this script), else a deterministic synthetic set: x ~ standard normal in R^D (numpy
default_rng(seed)), f = sin(x_0) + 0.5 x_1 x_2, y = (f - mean f) / std f; for --loss logistic y = 1 where
that standardised value is > 0, else 0. --write-data FILE writes that set as such a CSV (numpy only, no torch).

What is timed: one epoch over all T points (shuffle, every batch's forward, backward and Adam step).
Training state (operators, Adam moments) carries over from the --warmup untimed epochs to the --repeats
timed ones. Output: one JSON object per line per (precision, N, batch, loss) on stdout, also appended to
--out FILE. Keys: suite, impl, torch_version, N, D, T, batch, loss, lam, w, gamma, lr, precision, device,
threads, repeats, warmup, seed, data, median_s, min_s, points_per_s (T / median_s), gflops (the nominal
flop count T (36 N^3 + D N^2) per epoch over median_s: one complex Hermitian eigh with eigenvectors and
building H per point; the backward is not counted), final_loss (mean batch loss of the last epoch run),
skipped_steps. Without torch: "torch not available: skipping supervised baseline" on stderr, exit 0.

  build/perf-venv/bin/python perf/baselines/torch_supervised.py --N 8 32 --D 10 --T 2000 --batch 500
  build/perf-venv/bin/python perf/baselines/torch_supervised.py --check   # loss, gradient, training
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SUITE = "supervised_epoch"
IMPL = "torch"
LOSSES = ("mse", "mae", "huber", "logistic")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--N", type=int, nargs="+", default=[8, 32], help="Hilbert-space dimensions (default: 8 32)")
    p.add_argument("--D", type=int, default=10, help="number of features / matrices A_k (default: 10)")
    p.add_argument("--T", type=int, default=2000, help="number of points (default: 2000)")
    p.add_argument("--batch", type=int, nargs="+", default=[500],
                   help="mini-batch sizes, 0 = the full data set (default: 500)")
    p.add_argument("--loss", nargs="+", choices=LOSSES, default=["mse"], help="per-point losses (default: mse)")
    p.add_argument("--precision", nargs="+", choices=["double", "float"], default=["double", "float"])
    p.add_argument("--lam", type=float, default=0.0, help="weight lambda of the unsupervised term (default: 0)")
    p.add_argument("--w", type=float, default=0.0, help="fluctuation weight w inside that term (default: 0)")
    p.add_argument("--gamma", type=float, default=0.0,
                   help="weight of the squared commutator penalty over all D + 1 operators (default: 0)")
    p.add_argument("--lr", type=float, default=0.01, help="Adam learning rate (default: 0.01)")
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default: 2)")
    p.add_argument("--repeats", type=int, default=5, help="timed epochs (default: 5)")
    p.add_argument("--warmup", type=int, default=1, help="untimed epochs (default: 1)")
    p.add_argument("--seed", type=int, default=1234, help="seed of the data, initial operators and shuffles")
    p.add_argument("--device", default="cpu", help="torch device: cpu (default) or cuda")
    p.add_argument("--data", metavar="FILE.csv",
                   help="read x and y from this CSV (D feature columns, then the target; --T and --D ignored)")
    p.add_argument("--write-data", metavar="FILE.csv",
                   help="write the synthetic data set (--T, --D, --seed, first --loss) to FILE.csv and exit")
    p.add_argument("--check", action="store_true",
                   help="check loss, gradient and training on small cases (no timing, no JSON); exit 1 on failure")
    p.add_argument("--check-epochs", type=int, default=20, help="epochs of the --check training run (default: 20)")
    p.add_argument("--out", metavar="FILE", help="also append the JSON lines to FILE")
    a = p.parse_args(argv)
    if a.data is None and a.D < 3:
        p.error("the synthetic target sin(x_0) + 0.5 x_1 x_2 needs --D >= 3")
    if any(b < 0 for b in a.batch) or a.T < 1 or min(a.N) < 1:
        p.error("need --T >= 1, --N >= 1 and --batch >= 0")
    return a


def emit(record, out_file):
    line = json.dumps(record)
    print(line, flush=True)
    if out_file:
        with open(out_file, "a") as fh:
            fh.write(line + "\n")


# ------------------------------------------------------------------------------------------------ data

def synthetic_data(T, D, seed, loss):
    """(x, y) as float64 numpy arrays: x (T, D) standard normal, y standardised sin(x0) + 0.5 x1 x2 (0/1 for
    logistic)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, D))
    f = np.sin(x[:, 0]) + 0.5 * x[:, 1] * x[:, 2]
    sd = f.std()
    y = (f - f.mean()) / (sd if sd > 0 else 1.0)
    if loss == "logistic":
        y = (y > 0).astype(np.float64)
    return x, y


def write_csv(path, x, y):
    """No header; repr() of a float is its shortest round-trip form, so reading it back gives the same doubles."""
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        for row, target in zip(x.tolist(), y.tolist()):
            fh.write(",".join(repr(v) for v in row) + "," + repr(target) + "\n")
    os.replace(tmp, path)


def read_csv(path):
    import numpy as np
    a = np.loadtxt(path, delimiter=",", ndmin=2, dtype=np.float64)
    if a.shape[1] < 2:
        raise SystemExit(f"{path}: need at least one feature column and the target column, got {a.shape[1]}")
    return a[:, :-1].copy(), a[:, -1].copy()


# ------------------------------------------------------------------------------------------------ model

def init_operators(torch, N, D, cdtype, seed):
    """The D + 1 operators (A_1..A_D, B) as one complex (D + 1, N, N) tensor, QR initialisation (docs/math.md 8.3)."""
    import torch_train_epoch as ref
    torch.manual_seed(seed + N)
    return torch.stack([m.detach() for m in ref.qr_init(torch, N, D + 1, cdtype)])


def per_point_loss(torch, loss, yhat, y):
    e = yhat - y
    if loss == "mse":
        return e * e
    if loss == "mae":
        return e.abs()
    if loss == "huber":
        a = e.abs()
        return torch.where(a <= 1.0, 0.5 * e * e, a - 0.5)
    return torch.nn.functional.softplus(yhat) - y * yhat      # logistic, y in {0, 1}


def objective(torch, M, x, y, loss, lam, w, gamma):
    """Batch objective and y_hat for the operators M (D + 1, N, N; Hermitised here), points x (B, D), targets y."""
    D1, N, _ = M.shape
    D = D1 - 1
    Bsz = x.shape[0]
    Mh = 0.5 * (M + M.conj().transpose(-1, -2))
    A = Mh[:D]
    Bop = Mh[D]
    S = 0.5 * (A @ A).sum(0)                                            # 1/2 sum_k A_k^2
    XA = x @ torch.view_as_real(A).reshape(D, 2 * N * N)                # sum_k x_k A_k, real GEMM
    H = S - torch.view_as_complex(XA.view(Bsz, N, N, 2))
    eye = torch.eye(N, dtype=x.dtype, device=x.device)
    H = H + (0.5 * (x * x).sum(1))[:, None, None] * eye
    _, V = torch.linalg.eigh(H)
    psi = V[:, :, 0]                                                    # (B, N)
    yhat = (psi.conj() * (psi @ Bop.transpose(0, 1))).sum(-1).real      # <psi|B psi>
    value = per_point_loss(torch, loss, yhat, y).mean()
    if lam != 0:
        Y = (psi @ A.permute(2, 0, 1).reshape(N, D * N)).reshape(Bsz, D, N)   # A_k psi
        xbar = (psi.conj()[:, None, :] * Y).sum(-1).real
        u = ((x - xbar) ** 2).sum(1)
        if w != 0:
            u = u + w * ((Y.real ** 2 + Y.imag ** 2).sum(-1) - xbar * xbar).sum(1)
        value = value + lam * u.mean()
    if gamma != 0:
        P = Mh[:, None] @ Mh[None, :]                                   # M_i M_j
        C = P - P.transpose(0, 1)                                       # [M_i, M_j]
        value = value + gamma * 0.5 * (C.real ** 2 + C.imag ** 2).sum()  # each unordered pair once
    return value, yhat


def train_epoch(torch, M, opt, x, y, batch, a, loss, gen, stats):
    """One epoch; returns the mean of the finite batch losses."""
    T = x.shape[0]
    perm = torch.randperm(T, generator=gen).to(x.device)
    total, steps = 0.0, 0
    for start in range(0, T, batch):
        idx = perm[start:start + batch]
        opt.zero_grad(set_to_none=True)
        value, _ = objective(torch, M, x[idx], y[idx], loss, a.lam, a.w, a.gamma)
        lval = value.item()
        if not math.isfinite(lval):
            stats["skipped_steps"] += 1
            continue
        value.backward()
        if not bool(torch.isfinite(torch.view_as_real(M.grad)).all()):
            stats["skipped_steps"] += 1
            continue
        opt.step()
        total += lval
        steps += 1
    return total / steps if steps else float("nan")


def dtypes(torch, precision):
    return {"double": (torch.float64, torch.complex128), "float": (torch.float32, torch.complex64)}[precision]


# ------------------------------------------------------------------------------------------------ check

def numpy_objective(M, x, y, loss, lam, w, gamma):
    """The objective in numpy float64, written per point (the oracle of --check)."""
    import numpy as np
    M = 0.5 * (M + M.conj().transpose(0, 2, 1))
    D = M.shape[0] - 1
    N = M.shape[1]
    I = np.eye(N)
    total = 0.0
    for t in range(x.shape[0]):
        H = sum((M[k] - x[t, k] * I) @ (M[k] - x[t, k] * I) for k in range(D)) / 2
        _, V = np.linalg.eigh(H)
        psi = V[:, 0]
        yh = float(np.real(psi.conj() @ M[D] @ psi))
        e = yh - y[t]
        if loss == "mse":
            l = e * e
        elif loss == "mae":
            l = abs(e)
        elif loss == "huber":
            l = 0.5 * e * e if abs(e) <= 1 else abs(e) - 0.5
        else:
            l = math.log1p(math.exp(-abs(yh))) + max(yh, 0.0) - y[t] * yh
        xbar = np.array([np.real(psi.conj() @ M[k] @ psi) for k in range(D)])
        sq = np.array([np.real(psi.conj() @ M[k] @ M[k] @ psi) for k in range(D)])
        total += l + lam * (((x[t] - xbar) ** 2).sum() + w * (sq - xbar ** 2).sum())
    pen = 0.0
    for i in range(D + 1):
        for j in range(i + 1, D + 1):
            C = M[i] @ M[j] - M[j] @ M[i]
            pen += float(np.sum(np.abs(C) ** 2))
    return total / x.shape[0] + gamma * pen


def check(args, torch):
    """Loss against numpy, grad_B against mean l' |psi><psi|, the gradient against central differences along
    random Hermitian directions (double), then training: the loss falls, in double and float."""
    import numpy as np
    failures = []

    def report(ok, msg):
        print(("check ok " if ok else "check FAILED ") + msg, file=sys.stderr)
        if not ok:
            failures.append(msg)

    rng = np.random.default_rng(5)
    for (D, N, T) in ((3, 4, 17), (4, 6, 23)):
        x_np, y_np = synthetic_data(T, D, 11, "mse")
        for loss in LOSSES:
            y_use = (y_np > 0).astype(np.float64) if loss == "logistic" else y_np
            for lam, w, gamma in ((0.0, 0.0, 0.0), (0.5, 0.3, 0.02)):
                M0 = init_operators(torch, N, D, torch.complex128, 3)
                M = torch.nn.Parameter(M0.clone())
                x = torch.from_numpy(x_np)
                y = torch.from_numpy(y_use)
                value, yhat = objective(torch, M, x, y, loss, lam, w, gamma)
                value.backward()
                ref_value = numpy_objective(M0.numpy(), x_np, y_use, loss, lam, w, gamma)
                rel = abs(value.item() - ref_value) / max(abs(ref_value), 1e-300)
                report(rel < 1e-12, f"D={D} N={N} {loss} lam={lam} w={w} gamma={gamma}: loss vs numpy, rel {rel:.1e}")
                g = M.grad.detach()
                herm = (g - g.conj().transpose(-1, -2)).abs().max().item() / g.abs().max().item()
                report(herm < 1e-14, f"  gradient Hermitian: rel anti-Hermitian part {herm:.1e}")
                if gamma == 0:
                    # docs/supervised.md 4.1: grad_B = mean_t l'_t |psi_t><psi_t| (B does not enter H).
                    with torch.no_grad():
                        Mh = M0
                        A = Mh[:D]
                        H = torch.stack([sum((A[k] - float(x_np[t, k]) * torch.eye(N, dtype=A.dtype)) @
                                             (A[k] - float(x_np[t, k]) * torch.eye(N, dtype=A.dtype))
                                             for k in range(D)) / 2 for t in range(T)])
                        psi = torch.linalg.eigh(H)[1][:, :, 0]
                        e = yhat.detach() - y
                        lp = {"mse": 2 * e, "mae": torch.sign(e), "huber": e.clamp(-1, 1),
                              "logistic": torch.sigmoid(yhat.detach()) - y}[loss]
                        GB = (lp[:, None, None] * psi[:, :, None] * psi.conj()[:, None, :]).mean(0)
                        errB = (g[D] - GB).abs().max().item() / GB.abs().max().item()
                    report(errB < 1e-10, f"  grad_B = mean l' P: rel {errB:.1e}")
                # Central differences along random Hermitian directions; Richardson-extrapolated.
                worst = 0.0
                for _ in range(3):
                    Z = rng.standard_normal((D + 1, N, N)) + 1j * rng.standard_normal((D + 1, N, N))
                    dirn = torch.from_numpy(0.5 * (Z + Z.conj().transpose(0, 2, 1)))
                    analytic = float((g.conj() * dirn).sum().real)

                    def f(h):
                        with torch.no_grad():
                            return objective(torch, M0 + h * dirn, x, y, loss, lam, w, gamma)[0].item()

                    def cd(h):
                        return (f(h) - f(-h)) / (2 * h)

                    h = 1e-4
                    fd = (4 * cd(h / 2) - cd(h)) / 3
                    worst = max(worst, abs(fd - analytic) / max(abs(analytic), 1e-8))
                report(worst < 1e-6, f"  gradient vs central differences: rel {worst:.1e}")

    # Training lowers the loss, in both precisions; the state keeps the precision asked for.
    for precision in ("double", "float"):
        rdtype, cdtype = dtypes(torch, precision)
        for loss in ("mse", "logistic"):
            x_np, y_np = synthetic_data(400, 5, args.seed, loss)
            x = torch.from_numpy(x_np).to(rdtype)
            y = torch.from_numpy(y_np).to(rdtype)
            M = torch.nn.Parameter(init_operators(torch, 6, 5, cdtype, args.seed))
            opt = torch.optim.Adam([M], lr=0.05)
            gen = torch.Generator().manual_seed(args.seed)
            stats = {"skipped_steps": 0}
            with torch.no_grad():
                first = objective(torch, M, x, y, loss, 0.0, 0.0, 0.0)[0].item()
            history = [train_epoch(torch, M, opt, x, y, 100, args, loss, gen, stats)
                       for _ in range(args.check_epochs)]
            with torch.no_grad():
                last = objective(torch, M, x, y, loss, 0.0, 0.0, 0.0)[0].item()
            print(f"  {precision} {loss}: full-data loss {first:.4f} -> {last:.4f}; epoch means "
                  + " ".join(f"{v:.4f}" for v in history), file=sys.stderr)
            ok = last < 0.9 * first and M.dtype == cdtype and stats["skipped_steps"] == 0
            report(ok, f"{precision} {loss}: loss {first:.4g} -> {last:.4g} in {args.check_epochs} epochs, "
                       f"dtype {M.dtype}, {stats['skipped_steps']} skipped steps")
    return 1 if failures else 0


# ------------------------------------------------------------------------------------------------ main

def main(argv=None):
    args = parse_args(argv)
    if args.write_data:
        x, y = synthetic_data(args.T, args.D, args.seed, args.loss[0])
        write_csv(args.write_data, x, y)
        return 0
    try:
        import torch
    except ImportError:
        print("torch not available: skipping supervised baseline", file=sys.stderr)
        return 0
    torch.set_num_threads(args.threads)
    if args.check:
        a = argparse.Namespace(**vars(args))
        a.lam, a.w, a.gamma = 0.0, 0.0, 0.0
        return check(a, torch)
    device = torch.device(args.device)
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    if args.data:
        x_file, y_file = read_csv(args.data)

    for precision in args.precision:
        rdtype, cdtype = dtypes(torch, precision)
        for loss in args.loss:
            if args.data:
                x_np, y_np = x_file, y_file
            else:
                x_np, y_np = synthetic_data(args.T, args.D, args.seed, loss)
            T, D = x_np.shape
            x = torch.from_numpy(x_np).to(rdtype).to(device)
            y = torch.from_numpy(y_np).to(rdtype).to(device)
            for N in args.N:
                for batch_opt in args.batch:
                    batch = T if batch_opt == 0 else min(batch_opt, T)
                    M = torch.nn.Parameter(init_operators(torch, N, D, cdtype, args.seed).to(device))
                    opt = torch.optim.Adam([M], lr=args.lr)
                    gen = torch.Generator().manual_seed(args.seed)
                    stats = {"skipped_steps": 0}
                    final_loss = float("nan")
                    for _ in range(args.warmup):
                        final_loss = train_epoch(torch, M, opt, x, y, batch, args, loss, gen, stats)
                    sync()
                    times = []
                    for _ in range(args.repeats):
                        t0 = time.perf_counter()
                        final_loss = train_epoch(torch, M, opt, x, y, batch, args, loss, gen, stats)
                        sync()
                        times.append(time.perf_counter() - t0)
                    med = statistics.median(times) if times else float("nan")
                    flops = T * (36.0 * N ** 3 + D * N ** 2)
                    emit({
                        "suite": SUITE, "impl": IMPL, "torch_version": torch.__version__,
                        "N": N, "D": D, "T": T, "batch": batch_opt, "loss": loss,
                        "lam": args.lam, "w": args.w, "gamma": args.gamma, "lr": args.lr,
                        "precision": precision, "device": str(device), "threads": torch.get_num_threads(),
                        "repeats": args.repeats, "warmup": args.warmup, "seed": args.seed,
                        "data": os.path.abspath(args.data) if args.data else "synthetic",
                        "median_s": med, "min_s": min(times) if times else None,
                        "points_per_s": T / med if times else None,
                        "flops_per_epoch": flops, "gflops": flops / med / 1e9 if times else None,
                        "final_loss": final_loss if math.isfinite(final_loss) else None,
                        "skipped_steps": stats["skipped_steps"],
                    }, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
