"""MatrixConfiguration: construction, round trips through the program's NPY format, bad input."""

import numpy as np
import pytest

import qgml
from conftest import spin_matrices


def random_hermitian(d, n, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(d, n, n)) + 1j * rng.normal(size=(d, n, n))
    return (a + a.conj().transpose(0, 2, 1)) / 2


def test_matrices_round_trip():
    a = random_hermitian(3, 4)
    c = qgml.MatrixConfiguration(a)
    assert (c.D, c.N, c.shape) == (3, 4, (3, 4, 4))
    np.testing.assert_array_equal(c.matrices, a)
    assert c.to_numpy(np.complex64).dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(c), a)


def test_save_load_double_is_exact(tmp_path):
    a = random_hermitian(2, 5, seed=1)
    path = tmp_path / "m.npy"
    qgml.MatrixConfiguration(a).save(path)
    assert np.load(path).dtype == np.complex128
    np.testing.assert_array_equal(np.load(path), a)  # the program's format is a plain NPY array
    np.testing.assert_array_equal(qgml.MatrixConfiguration.load(path).matrices, a)


def test_save_load_float(tmp_path):
    a = random_hermitian(3, 3, seed=2)
    path = tmp_path / "m32.npy"
    qgml.MatrixConfiguration(a).save(str(path), precision="float")
    assert np.load(path).dtype == np.complex64
    np.testing.assert_allclose(qgml.MatrixConfiguration.load(path).matrices, a, rtol=1e-6, atol=1e-6)


def test_complex64_input():
    a = spin_matrices(2).astype(np.complex64)
    c = qgml.MatrixConfiguration(a)
    np.testing.assert_allclose(c.matrices, spin_matrices(2), atol=1e-7)


def test_non_hermitian_is_refused_with_the_library_message():
    a = random_hermitian(3, 3)
    a[1, 0, 2] += 0.5
    with pytest.raises(ValueError, match="[Hh]ermitian"):
        qgml.MatrixConfiguration(a)


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (3, 3, 3, 3)])
def test_bad_shapes(shape):
    with pytest.raises(ValueError, match="shape"):
        qgml.MatrixConfiguration(np.zeros(shape, dtype=complex))


def test_bad_dtype():
    with pytest.raises(TypeError):
        qgml.MatrixConfiguration(np.array([[["a"]]]))


def test_load_missing_file_is_an_oserror(tmp_path):
    with pytest.raises(OSError):
        qgml.MatrixConfiguration.load(tmp_path / "missing.npy")


def test_load_a_real_array_is_an_oserror_naming_the_dtype(tmp_path):
    real = tmp_path / "real.npy"
    np.save(real, np.eye(2).reshape(1, 2, 2))
    with pytest.raises(OSError, match="complex128 or complex64"):
        qgml.MatrixConfiguration.load(real)


def test_load_not_an_npy_file(tmp_path):
    bad = tmp_path / "bad.npy"
    bad.write_text("not an npy file")
    with pytest.raises(OSError):
        qgml.MatrixConfiguration.load(bad)
