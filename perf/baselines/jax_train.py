#!/usr/bin/env python3
"""JAX baseline: one training epoch of the QGML loss (suite "train_epoch", impl "jax").

The JAX trainer a user would write: `jit`, `vmap` and `value_and_grad` through `jnp.linalg.eigh`, x64 on
("double" = complex128/float64; "float" = complex64/float32). Same data, initialisation, optimiser, epoch,
options and output keys as torch_train_epoch.py / torch_train_vectorised.py:
- the D Hermitian matrices are held as their real and imaginary parts, two real (D, N, N) arrays, so the
  gradient is real and Adam acts on real and imaginary parts elementwise, exactly as torch.optim.Adam does
  on a complex Parameter (view_as_real); initial matrices: torch_train_epoch.qr_init when torch is
  importable (the identical start), else the same QR construction (docs/math.md 8.3) with numpy;
- the loss of one point (docs/math.md 4.4): H(x) = 1/2 S - sum_k x_k A_k + 1/2 |x|^2 I with S = sum_k A_k^2 formed
  once per step, psi_0 = the eigenvector of the lowest eigenvalue of `jnp.linalg.eigh(H)`,
  xbar_k = <psi_0|A_k|psi_0>, d^2 = |x - xbar|^2, sigma^2 = sum_k <psi_0|A_k^2|psi_0> - xbar_k^2 (only
  when w > 0); `vmap` over the batch (the sum over k becomes one GEMM, eigh one batched call);
  loss = mean d^2 + w mean sigma^2; the gradient by `value_and_grad`, i.e. JAX's own eigh backward;
- one jitted step per mini-batch: gather of the batch from the device-resident data and permutation,
  loss and gradient, Adam(lr, betas 0.9/0.999, eps 1e-8, torch's bias correction), the Hermitian
  projection A <- (A + A^H)/2, and the running sum of the batch losses, all on the device. A step whose
  loss or gradient is not finite leaves the state unchanged and is counted (as the reference does);
- the epoch: a device-side permutation (jax.random, split per epoch), contiguous mini-batches, the last
  partial batch kept (one more compilation, in the warm-up); the losses are read once per epoch and
  `block_until_ready` ends every timed epoch.
Threads: XLA_FLAGS (intra_op_parallelism_threads) and OMP_NUM_THREADS are set from --threads before jax is
first imported, OPENBLAS_NUM_THREADS to 1 unless set (see import_jax); "threads" in the output is that request.

Output: the JSON line of torch_train_vectorised.py with impl "jax" and jax_version (jaxlib_version too)
instead of torch_version; "device" is the JAX device. Without jax: a message on stderr, exit 0, no output.
  python3 perf/baselines/jax_train.py --N 8 --batch 2500 --w 0 --precision double
  python3 perf/baselines/jax_train.py --check     # gradient check (see check()); exit 77 without jax
"""
import functools
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_train_epoch as ref  # noqa: E402  (CLI, output)

SUITE = ref.SUITE
IMPL = "jax"


def import_jax(threads):
    """jax with x64 on; the thread settings only act if jax was not imported before."""
    if "jax" not in sys.modules:
        flags = os.environ.get("XLA_FLAGS", "")
        if "intra_op_parallelism_threads" not in flags:
            multi = "true" if threads > 1 else "false"
            os.environ["XLA_FLAGS"] = (flags + f" --xla_cpu_multi_thread_eigen={multi}"
                                       f" intra_op_parallelism_threads={threads}").strip()
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        # jaxlib's CPU eigh calls scipy's LAPACK (OpenBLAS) once per matrix; OpenBLAS threads on top of
        # XLA's make those small calls 30-50x slower (N = 32: 0.9 s -> 43 s per 2500 matrices here).
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def initial_matrices(N, D, precision, seed):
    """(re, im) of the D initial matrices as numpy float64 arrays: torch_train_epoch.qr_init with the
    torch seed of the other baselines when torch is importable, else the same construction with numpy."""
    import numpy as np
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.manual_seed(seed + N)
        cd = torch.complex128 if precision == "double" else torch.complex64
        A = torch.stack([m.detach() for m in ref.qr_init(torch, N, D, cd)]).to(torch.complex128).numpy()
    else:
        rng = np.random.default_rng(seed + N)
        A = np.empty((D, N, N), complex)
        for k in range(D):
            Z = (rng.standard_normal((N, N)) + 1j * rng.standard_normal((N, N))) / math.sqrt(2 * N)
            Q, _ = np.linalg.qr(Z)
            A[k] = 0.5 * (Q + Q.conj().T)
    return A.real.copy(), A.imag.copy()


def sphere_points_np(T, D, seed):
    """The points of torch_train_epoch.sphere_points when torch is importable, else numpy's (seeded)."""
    import numpy as np
    try:
        import torch
        return ref.sphere_points(torch, T, D, torch.float64, seed).numpy()
    except ImportError:
        x = np.random.default_rng(seed).standard_normal((T, D))
        return x / np.linalg.norm(x, axis=1, keepdims=True)


def make_loss(jax):
    """loss(params, x, w): mean_b [d^2 + w sigma^2] over the points x (B x D); params = (re, im)."""
    jnp = jax.numpy

    def point_terms(A, S, x, w):
        N = A.shape[1]
        H = 0.5 * S - jnp.einsum("k,kij->ij", x.astype(A.dtype), A)
        H = H + (0.5 * jnp.dot(x, x)).astype(A.dtype) * jnp.eye(N, dtype=A.dtype)
        _, V = jnp.linalg.eigh(H)
        psi = V[:, 0]
        Y = jnp.einsum("kij,j->ki", A, psi)                     # A_k psi_0
        xbar = jnp.real(jnp.einsum("i,ki->k", psi.conj(), Y))
        term = jnp.sum((x - xbar) ** 2)
        if w > 0:
            sq = jnp.real(jnp.einsum("i,ki->k", psi.conj(), jnp.einsum("kij,kj->ki", A, Y)))  # <psi_0|A_k^2|psi_0>
            term = term + w * jnp.sum(sq - xbar * xbar)
        return term

    def loss(params, x, w):
        re, im = params
        A = jax.lax.complex(re, im)
        S = jnp.einsum("kij,kjl->il", A, A)
        return jnp.mean(jax.vmap(point_terms, in_axes=(None, None, 0, None))(A, S, x, w))

    return loss


def make_step(jax, loss, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    """The jitted training step of one mini-batch (static: batch size and w)."""
    jnp = jax.numpy
    value_and_grad = jax.value_and_grad(loss)

    @functools.partial(jax.jit, static_argnums=(4, 5), donate_argnums=(0,))
    def step(state, data, perm, start, batch, w):
        params, m, v, t, total, skipped = state
        idx = jax.lax.dynamic_slice(perm, (start,), (batch,))
        value, grads = value_and_grad(params, data[idx], w)
        finite = jnp.isfinite(value) & jnp.all(jnp.array([jnp.all(jnp.isfinite(g)) for g in grads]))
        t1 = t + 1
        tf = t1.astype(params[0].dtype)         # the corrections in the parameters' precision
        bc1 = 1 - beta1 ** tf
        bc2 = 1 - beta2 ** tf
        m1 = tuple(beta1 * mi + (1 - beta1) * g for mi, g in zip(m, grads))
        v1 = tuple(beta2 * vi + (1 - beta2) * g * g for vi, g in zip(v, grads))
        p1 = tuple(p - (lr / bc1) * mi / (jnp.sqrt(vi) / jnp.sqrt(bc2) + eps) for p, mi, vi in zip(params, m1, v1))
        re, im = p1
        p1 = (0.5 * (re + jnp.swapaxes(re, 1, 2)), 0.5 * (im - jnp.swapaxes(im, 1, 2)))
        keep = lambda new, old: jax.tree_util.tree_map(lambda a, b: jnp.where(finite, a, b), new, old)
        return (keep(p1, params), keep(m1, m), keep(v1, v), jnp.where(finite, t1, t),
                total + jnp.where(finite, value, 0).astype(total.dtype), skipped + (~finite).astype(skipped.dtype))

    return step


class Trainer:
    """Device state of one (precision, N, batch, w) case and its epochs."""

    def __init__(self, jax, device, data, re, im, rdtype, lr, seed):
        jnp = jax.numpy
        self.jax, self.jnp = jax, jnp
        put = lambda a: jax.device_put(jnp.asarray(a, dtype=rdtype), device)
        params = (put(re), put(im))
        zeros = lambda: (put(0 * re), put(0 * im))
        # Every array of the state committed to the device, as the step's outputs are: one compilation.
        self.state = (params, zeros(), zeros(), jax.device_put(jnp.zeros((), jnp.int32), device), None, None)
        self.device = device
        self.data = put(data)
        self.key = jax.device_put(jax.random.PRNGKey(seed), device)
        self.step = make_step(jax, make_loss(jax), lr)
        self.skipped = 0

    def epoch(self, batch, w):
        """One epoch; returns the mean of the finite batch losses (nan if none), read once."""
        jax, jnp = self.jax, self.jnp
        T = self.data.shape[0]
        self.key, sub = jax.random.split(self.key)
        perm = jax.random.permutation(sub, T)
        params, m, v, t, _, _ = self.state
        state = (params, m, v, t) + jax.device_put((jnp.zeros((), self.data.dtype), jnp.zeros((), jnp.int32)),
                                                   self.device)
        steps = 0
        for start in range(0, T, batch):
            state = self.step(state, self.data, perm, start, min(batch, T - start), w)
            steps += 1
        total, skipped = jax.block_until_ready(state[4:6])
        self.state = state
        skipped = int(skipped)
        self.skipped += skipped
        return float(total) / (steps - skipped) if steps > skipped else float("nan")


def check():
    """Correctness of the loss and of JAX's gradient through eigh on tiny cases, float64. The loss is only
    defined on Hermitian A, so what is checked is the Hermitian part of the gradient, (g + g^H)/2 with
    g = d/dRe + i d/dIm (what moves A along the Hermitian matrices): against central finite differences of
    a numpy implementation of the loss (docs/math.md 4.4) along every direction of a basis of the Hermitian
    matrices (E_ij + E_ji and i(E_ij - E_ji), i <= j), and, where torch is importable, against
    torch_train_vectorised's loss and analytic gradient (Hermitian by construction). Prints 'check ok ...'
    to stderr; exit 0, 1 on a mismatch, 77 without jax."""
    try:
        jax = import_jax(1)
    except ImportError:
        print("jax not importable: skipped", file=sys.stderr)
        return 77
    import numpy as np
    jnp = jax.numpy
    loss = jax.jit(make_loss(jax), static_argnums=(2,))
    vg = jax.jit(jax.value_and_grad(make_loss(jax)), static_argnums=(2,))

    def np_loss(re, im, x, w):
        A = re + 1j * im
        S = np.einsum("kij,kjl->il", A, A)
        out = 0.0
        for p in x:
            H = 0.5 * S - np.einsum("k,kij->ij", p, A) + 0.5 * p @ p * np.eye(A.shape[1])
            _, V = np.linalg.eigh(H)
            psi = V[:, 0]
            xbar = np.array([np.vdot(psi, a @ psi).real for a in A])
            out += np.sum((p - xbar) ** 2)
            if w > 0:
                out += w * sum(np.vdot(a @ psi, a @ psi).real - xb * xb for a, xb in zip(A, xbar))
        return out / len(x)

    try:
        import torch
        import torch_train_vectorised as vec
    except ImportError:
        torch = None
    rng = np.random.default_rng(5)
    failures = 0
    for N, D, B, w in ((4, 3, 5, 0.0), (5, 3, 7, 0.3), (3, 2, 4, 0.25)):
        re, im = initial_matrices(N, D, "double", 11 * N + D)
        x = rng.standard_normal((B, D))
        value, (gre, gim) = vg((jnp.asarray(re), jnp.asarray(im)), jnp.asarray(x), w)
        ref_value = np_loss(re, im, x, w)
        if abs(float(value) - ref_value) > 1e-12 * abs(ref_value):
            print(f"FAILED N={N} w={w}: jax loss {float(value)!r} != numpy {ref_value!r}", file=sys.stderr)
            failures += 1
        gre, gim = np.asarray(gre), np.asarray(gim)
        g = np.stack([0.5 * (gre + gre.transpose(0, 2, 1)), 0.5 * (gim - gim.transpose(0, 2, 1))])
        h = 1e-6
        fd, an = [], []
        for k, i, j in np.ndindex(re.shape):
            for part in range(2):
                if j < i or part == 1 and i == j:
                    continue
                d = np.zeros((2,) + re.shape)
                d[part][k, i, j] += 1
                d[part][k, j, i] += 1 if part == 0 else -1
                f = lambda t: np_loss(re + t * d[0], im + t * d[1], x, w)
                fd.append((f(h) - f(-h)) / (2 * h))
                an.append(float(np.sum(g * d)))
        fd, an = np.array(fd), np.array(an)
        err = np.abs(an - fd).max() / np.abs(fd).max()
        if not err <= 1e-6:
            print(f"FAILED N={N} D={D} w={w}: jax gradient differs from the finite difference by {err:.2e}",
                  file=sys.stderr)
            failures += 1
        msg = f"N={N} D={D} B={B} w={w}: loss {float(value):.6g}, gradient vs finite difference {err:.1e}"
        if torch is not None:
            A = torch.nn.Parameter(torch.complex(torch.from_numpy(re), torch.from_numpy(im)))
            lt = vec.make_loss_function(torch).apply(A, torch.from_numpy(x), w, 1e-8)
            lt.backward()
            gt = np.stack([A.grad.real.numpy(), A.grad.imag.numpy()])
            terr = np.abs(g - gt).max() / np.abs(gt).max()
            lerr = abs(float(value) - lt.item()) / abs(lt.item())
            if not (terr <= 1e-10 and lerr <= 1e-13):
                print(f"FAILED N={N} D={D} w={w}: jax vs torch_train_vectorised: loss {lerr:.1e}, "
                      f"gradient {terr:.1e} (relative)", file=sys.stderr)
                failures += 1
            msg += f", vs torch_train_vectorised {terr:.1e}"
        # The jitted loss alone agrees with value_and_grad's value.
        if float(loss((jnp.asarray(re), jnp.asarray(im)), jnp.asarray(x), w)) != float(value):
            print(f"FAILED N={N} w={w}: jit(loss) != value_and_grad value", file=sys.stderr)
            failures += 1
        print(("check ok " if not failures else "check ") + msg, file=sys.stderr)
    # One epoch of the trainer lowers the loss of a small case (the step, Adam and the projection).
    jax_dev = jax.devices("cpu")[0]
    data = sphere_points_np(200, 3, 1)
    re, im = initial_matrices(4, 3, "double", 1)
    tr = Trainer(jax, jax_dev, data, re, im, jnp.float64, 0.01, 1)
    first = tr.epoch(50, 0.0)
    for _ in range(20):
        last = tr.epoch(50, 0.0)
    params = tr.state[0]
    herm = float(jnp.abs(params[0] - jnp.swapaxes(params[0], 1, 2)).max()
                 + jnp.abs(params[1] + jnp.swapaxes(params[1], 1, 2)).max())
    if not (last < first and herm == 0 and tr.skipped == 0):
        print(f"FAILED training: first epoch {first}, 21st {last}, Hermitian defect {herm}, skipped {tr.skipped}",
              file=sys.stderr)
        failures += 1
    else:
        print(f"check ok training: mean loss {first:.4g} -> {last:.4g} in 21 epochs", file=sys.stderr)
    # float stays float (no silent promotion to float64 under x64) and the step compiles once per batch size.
    tr = Trainer(jax, jax_dev, data, re, im, jnp.float32, 0.01, 1)
    for _ in range(3):
        tr.epoch(64, 0.25)                                     # batches of 64 and a last one of 8
    dtypes = {str(a.dtype) for a in jax.tree_util.tree_leaves(tr.state[:3])}
    compiled = tr.step._cache_size() if hasattr(tr.step, "_cache_size") else 2
    if dtypes != {"float32"} or compiled != 2:
        print(f"FAILED float: state dtypes {sorted(dtypes)}, {compiled} compilations of the step (want 2)",
              file=sys.stderr)
        failures += 1
    else:
        print("check ok float: the state stays float32, 2 compilations", file=sys.stderr)
    return 1 if failures else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--check" in argv:
        return check()
    args = ref.parse_args(argv)
    try:
        jax = import_jax(args.threads)
    except ImportError:
        print(f"jax not available: skipping {SUITE} baseline ({IMPL})", file=sys.stderr)
        return 0
    import jaxlib
    jnp = jax.numpy
    device = jax.devices(args.device)[0]
    dtypes = {"double": jnp.float64, "float": jnp.float32}
    for precision in args.precision:
        rdtype = dtypes[precision]
        data = sphere_points_np(args.T, args.D, args.seed)
        for N in args.N:
            for batch in args.batch:
                for w in args.w:
                    re, im = initial_matrices(N, args.D, precision, args.seed)
                    tr = Trainer(jax, device, data, re, im, rdtype, args.lr, args.seed + N)
                    final_loss = float("nan")
                    for _ in range(args.warmup):
                        final_loss = tr.epoch(batch, w)
                    times = []
                    for _ in range(args.repeats):
                        t0 = time.perf_counter()
                        final_loss = tr.epoch(batch, w)
                        times.append(time.perf_counter() - t0)
                    med = statistics.median(times)
                    ref.emit({
                        "suite": SUITE, "impl": IMPL, "jax_version": jax.__version__,
                        "jaxlib_version": jaxlib.__version__, "N": N, "T": args.T, "D": args.D, "batch": batch,
                        "w": w, "precision": precision, "device": str(device), "threads": args.threads,
                        "repeats": args.repeats, "warmup": args.warmup, "lr": args.lr, "seed": args.seed,
                        "median_s": med, "min_s": min(times), "points_per_s": args.T / med,
                        "final_loss": final_loss if math.isfinite(final_loss) else None,
                        "skipped_steps": tr.skipped,
                    }, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
