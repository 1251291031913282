"""Sampling from a trained model: the program's ``qgml sample`` in process (docs/math.md section 10).

``qgml.sample(run, sampler="mala", chains=1000, steps=1000, beta=1)`` draws from
p(x) ~ exp(-beta E_0(x)) of a finished run, all chains advancing together as one batch, into a sample
directory, and returns its :class:`Samples`: the draws, the acceptance per chain and the diagnostics
(split R-hat and ESS per coordinate). ``Samples.resume(steps)`` continues exactly; ``to_inference_data()``
hands the draws to ArviZ.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional

import numpy as np

from . import _qgml
from ._runtime import PathLike, ensure

# Parameter name -> the program's option (qgml sample --help).
_OPTIONS = {
    "sampler": "sampler",
    "chains": "chains",
    "steps": "steps",
    "warmup": "warmup",
    "thin": "thin",
    "beta": "beta",
    "init": "init",
    "step_size": "step-size",
    "leapfrog": "leapfrog",
    "target_acceptance": "target-acceptance",
    "seed": "seed",
    "out": "out",
}


class Samples:
    """A sample directory written by ``qgml sample`` or :func:`qgml.sample`.

    Attributes: ``sample_dir``; ``draws`` (draws, chains, D) float64 in the data's coordinates (every
    thin-th state after warm-up); ``acceptance`` (chains,) each chain's mean Metropolis probability;
    ``info`` (the whole sample.json: settings, automatic choices, results); ``r_hat`` and ``ess`` (D,)
    the split R-hat and effective sample size per coordinate; ``step_size``.
    """

    def __init__(self, sample_dir: PathLike):
        self.sample_dir = os.fspath(sample_dir)
        with open(os.path.join(self.sample_dir, "sample.json")) as f:
            self.info: Dict[str, Any] = json.load(f)
        self.draws = np.load(os.path.join(self.sample_dir, "samples.npy"))
        self.acceptance = np.load(os.path.join(self.sample_dir, "acceptance.npy"))

    @classmethod
    def open(cls, sample_dir: PathLike) -> "Samples":
        """Opens a sample directory (``qgml sample``'s output)."""
        return cls(sample_dir)

    @property
    def results(self) -> Dict[str, Any]:
        return self.info["results"]

    @property
    def r_hat(self) -> np.ndarray:
        return np.asarray(self.results["r_hat"], dtype=np.float64)

    @property
    def ess(self) -> np.ndarray:
        return np.asarray(self.results["ess"], dtype=np.float64)

    @property
    def step_size(self) -> float:
        return float(self.results["step_size"])

    def resume(self, steps: Optional[int] = None, quiet: bool = True) -> "Samples":
        """Continues this sampling exactly (``qgml sample --resume``) to ``steps`` sampling steps in all
        (None: the number it was started with, which finishes an interrupted sampling); returns the
        directory's new :class:`Samples`."""
        return resume_sample(self.sample_dir, steps, quiet=quiet)

    def to_inference_data(self):
        """The draws as an ``arviz.InferenceData`` (ArviZ is an optional dependency): ``posterior`` has
        the variable ``x`` with dimensions (chain, draw, coordinate); ``constant_data`` the acceptance per
        chain; the InferenceData's ``attrs`` the sampler, beta, step size, thin, warm-up and the run
        directory."""
        try:
            import arviz
        except ImportError as e:
            raise ImportError("qgml: Samples.to_inference_data needs ArviZ (pip install arviz)") from e
        draws, chains, d = self.draws.shape
        x = np.ascontiguousarray(self.draws.transpose(1, 0, 2))
        return arviz.from_dict(
            posterior={"x": x},
            constant_data={"acceptance": self.acceptance},
            coords={"coordinate": np.arange(d), "sampler_chain": np.arange(chains)},
            dims={"x": ["coordinate"], "acceptance": ["sampler_chain"]},
            attrs={"sampler": str(self.info.get("sampler")), "beta": float(self.info.get("beta", 1.0)),
                   "step_size": self.step_size, "run": str(self.info.get("run")),
                   "thin": int(self.info.get("thin", 1)), "warmup": int(self.info.get("warmup", 0)),
                   "qgml_version": str(self.results.get("qgml_version"))},
        )

    def __repr__(self) -> str:
        draws, chains, d = self.draws.shape
        return f"Samples({self.sample_dir!r}, draws={draws}, chains={chains}, D={d})"


def _run_dir(run: Any) -> str:
    if isinstance(run, (str, os.PathLike)):
        return os.fspath(run)
    directory = getattr(run, "run_dir", None)  # a Run
    if isinstance(directory, str):
        return directory
    raise TypeError(f"qgml: expected a run directory or a Run, got {type(run).__name__}")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def sample(run: Any, *, sampler: Optional[str] = None, chains: Optional[int] = None, steps: Optional[int] = None,
           beta: Optional[float] = None, warmup: Optional[int] = None, thin: Any = None, init: Optional[str] = None,
           step_size: Any = None, leapfrog: Optional[int] = None, target_acceptance: Any = None,
           seed: Optional[int] = None, out: Optional[PathLike] = None, quiet: bool = True) -> Samples:
    """Draws from p(x) ~ exp(-beta E_0(x)) of a finished run (a :class:`Run` or its directory), as
    ``qgml sample RUN_DIR``; returns the :class:`Samples`.

    Every argument left at None is the program's default (``qgml sample``: mala, 1000 chains, 1000
    steps after 500 warm-up iterations, beta 1, thin, init, step size and target acceptance chosen and
    printed). ``out``: the sample directory (default RUN_DIR/samples-<sampler>); an existing sampling
    there is refused (continue it with :func:`resume_sample`). The GIL is released while sampling.
    """
    ensure()
    given = {"sampler": sampler, "chains": chains, "steps": steps, "beta": beta, "warmup": warmup, "thin": thin,
             "init": init, "step_size": step_size, "leapfrog": leapfrog, "target_acceptance": target_acceptance,
             "seed": seed, "out": os.fspath(out) if out is not None else None}
    keys = [_OPTIONS[name] for name, value in given.items() if value is not None]
    values = [_text(value) for value in given.values() if value is not None]
    directory = _qgml.sample(_run_dir(run), keys, values, bool(quiet))
    return Samples(directory)


def resume_sample(sample_dir: PathLike, steps: Optional[int] = None, *, quiet: bool = True) -> Samples:
    """Continues a sample directory exactly (``qgml sample --resume DIR [--steps S]``): to ``steps``
    sampling steps in all, or (None) to the number it was started with."""
    ensure()
    directory = os.fspath(sample_dir)
    _qgml.sample_resume(directory, int(steps) if steps is not None else 0, bool(quiet))
    return Samples(directory)
