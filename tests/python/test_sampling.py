"""qgml.sample, qgml.resume_sample and qgml.Samples (bindings/python/qgml/sampling.py): the program's
`qgml sample` in process, the same draws as the program, an exact resume, ArviZ's InferenceData."""

import os
import subprocess

import numpy as np
import pytest

import qgml


@pytest.fixture(scope="module")
def sphere_run(tmp_path_factory):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    directory = tmp_path_factory.mktemp("runs")
    return qgml.train(x, {"model.N": 3, "training.epochs": 20, "training.lr": 0.02, "output.plots": False,
                          "output.directory": str(directory)})


SMALL = dict(chains=8, steps=40, warmup=20, seed=3)


def test_sample_returns_the_draws_and_diagnostics(sphere_run, tmp_path):
    s = qgml.sample(sphere_run, out=tmp_path / "mala", **SMALL)
    assert s.sample_dir == str(tmp_path / "mala")
    assert s.draws.shape == (40, 8, 3) and s.draws.dtype == np.float64
    assert s.acceptance.shape == (8,) and np.all((s.acceptance >= 0) & (s.acceptance <= 1))
    assert s.r_hat.shape == (3,) and s.ess.shape == (3,) and s.step_size > 0
    assert s.info["sampler"] == "mala" and s.info["chains"] == 8
    # Drawn near the sphere the model learned.
    assert 0.3 < np.median(np.linalg.norm(s.draws.reshape(-1, 3), axis=1)) < 2.0
    # Default directory: RUN_DIR/samples-<sampler>.
    h = qgml.sample(sphere_run.run_dir, sampler="hmc", chains=4, steps=10, warmup=5, leapfrog=3)
    assert h.sample_dir == os.path.join(sphere_run.run_dir, "samples-hmc") and h.draws.shape == (10, 4, 3)


def test_the_same_draws_as_the_program(sphere_run, tmp_path, program):
    s = qgml.sample(sphere_run, sampler="ula", beta=2.0, out=tmp_path / "python", **SMALL)
    subprocess.run([program, "sample", sphere_run.run_dir, "--sampler", "ula", "--beta", "2.0", "--chains", "8",
                    "--steps", "40", "--warmup", "20", "--seed", "3", "--out", str(tmp_path / "program"), "--quiet"],
                   check=True, capture_output=True)
    assert np.array_equal(s.draws, qgml.Samples.open(tmp_path / "program").draws)


def test_resume_continues_exactly(sphere_run, tmp_path):
    whole = qgml.sample(sphere_run, out=tmp_path / "whole", **SMALL)
    part = qgml.sample(sphere_run, out=tmp_path / "part", **dict(SMALL, steps=15))
    assert part.draws.shape[0] == 15
    resumed = part.resume(steps=40)
    assert np.array_equal(resumed.draws, whole.draws)
    with pytest.raises(ValueError, match="already holds a sampling run"):
        qgml.sample(sphere_run, out=tmp_path / "whole", **SMALL)


def test_bad_options_are_refused_with_the_programs_message(sphere_run, tmp_path):
    with pytest.raises(ValueError, match="unknown sampler .gibbs."):
        qgml.sample(sphere_run, sampler="gibbs", out=tmp_path / "bad")
    with pytest.raises(ValueError, match="--chains = '0'"):
        qgml.sample(sphere_run, chains=0, out=tmp_path / "bad")
    with pytest.raises(ValueError, match="not a qgml sample directory"):
        qgml.resume_sample(tmp_path / "nowhere")
    with pytest.raises(TypeError, match="run directory or a Run"):
        qgml.sample(42)


def test_to_inference_data(sphere_run, tmp_path):
    arviz = pytest.importorskip("arviz")
    s = qgml.sample(sphere_run, out=tmp_path / "az", **SMALL)
    idata = s.to_inference_data()
    assert isinstance(idata, arviz.InferenceData)
    x = idata.posterior["x"]
    assert x.dims == ("chain", "draw", "coordinate") and x.shape == (8, 40, 3)
    assert np.array_equal(x.values, s.draws.transpose(1, 0, 2))
    assert np.array_equal(idata.constant_data["acceptance"].values, s.acceptance)
    assert idata.attrs["sampler"] == "mala" and idata.attrs["run"] == sphere_run.run_dir
    # ArviZ's own diagnostics on qgml's draws agree with the program's split R-hat to a few percent.
    r_hat = arviz.rhat(idata, method="split")["x"].values
    assert r_hat.shape == (3,) and np.allclose(r_hat, s.r_hat, rtol=0.05)
