// The real symmetric eigensolver by Householder tridiagonalisation and implicit QL
// (linalg/symmetric_tridiagonal_eigensolver.hpp): eigenpairs of random, degenerate, rank-deficient and
// graded matrices against their definition and against cyclic Jacobi (linalg/symmetric_eigenvalues.hpp).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "qgml/linalg/symmetric_eigenvalues.hpp"
#include "qgml/linalg/symmetric_tridiagonal_eigensolver.hpp"

#include "test_support.hpp"

using namespace qgml;
using Catch::Matchers::WithinAbs;

namespace {

using Host = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

// A symmetric d x d matrix: R + R^T for random R, or Q diag(spectrum) Q^T for a random orthogonal Q.
std::vector<double> random_symmetric_matrix(int d, unsigned seed) {
  const std::vector<double> r = test::random_points(d, d, 1.0, seed);
  std::vector<double> a(std::size_t(d) * d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) a[std::size_t(i * d + j)] = r[std::size_t(i * d + j)] + r[std::size_t(j * d + i)];
  return a;
}

std::vector<double> symmetric_with_spectrum(const std::vector<double>& spectrum, unsigned seed) {
  const int d = int(spectrum.size());
  // Q from Gram-Schmidt on random columns.
  std::vector<double> q = test::random_points(d, d, 1.0, seed);
  for (int j = 0; j < d; ++j) {
    for (int k = 0; k < j; ++k) {
      double dot = 0;
      for (int i = 0; i < d; ++i) dot += q[std::size_t(i * d + j)] * q[std::size_t(i * d + k)];
      for (int i = 0; i < d; ++i) q[std::size_t(i * d + j)] -= dot * q[std::size_t(i * d + k)];
    }
    double norm = 0;
    for (int i = 0; i < d; ++i) norm += q[std::size_t(i * d + j)] * q[std::size_t(i * d + j)];
    for (int i = 0; i < d; ++i) q[std::size_t(i * d + j)] /= std::sqrt(norm);
  }
  std::vector<double> a(std::size_t(d) * d, 0.0);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j)
      for (int k = 0; k < d; ++k)
        a[std::size_t(i * d + j)] += q[std::size_t(i * d + k)] * spectrum[std::size_t(k)] * q[std::size_t(j * d + k)];
  return a;
}

double largest_magnitude(const std::vector<double>& a) {
  double m = 0;
  for (double x : a) m = std::max(m, std::fabs(x));
  return m;
}

// Checks A v_j = e_j v_j, V^T V = I and the descending order; returns the eigenvalues.
std::vector<double> check_tridiagonal_eigensystem(const std::vector<double>& a0, int d) {
  std::vector<double> a = a0, v(a0.size(), 0.0), e(std::size_t(d), 0.0), work(4 * std::size_t(d), 0.0);
  const Host av(a.data(), d, d), vv(v.data(), d, d);
  CHECK(linalg::symmetric_eigensystem_tridiagonal_descending(av, vv, d, e.data(), work.data()));
  const double tol = 1e-12 * std::max(1.0, largest_magnitude(a0)) * d;
  for (int j = 0; j + 1 < d; ++j) CHECK(e[std::size_t(j)] >= e[std::size_t(j + 1)]);
  for (int j = 0; j < d; ++j)
    for (int i = 0; i < d; ++i) {
      double av_ij = 0, vtv = 0;
      for (int k = 0; k < d; ++k) {
        av_ij += a0[std::size_t(i * d + k)] * v[std::size_t(k * d + j)];
        vtv += v[std::size_t(k * d + i)] * v[std::size_t(k * d + j)];
      }
      CHECK_THAT(av_ij, WithinAbs(e[std::size_t(j)] * v[std::size_t(i * d + j)], tol));
      CHECK_THAT(vtv, WithinAbs(i == j ? 1.0 : 0.0, 1e-12 * d));
    }
  return e;
}

std::vector<double> tridiagonal_eigenvalues_only(const std::vector<double>& a0, int d) {
  std::vector<double> a = a0, e(std::size_t(d), 0.0), work(3 * std::size_t(d), 0.0);
  const Host av(a.data(), d, d);
  CHECK(linalg::symmetric_eigenvalues_tridiagonal_descending(av, d, e.data(), work.data()));
  return e;
}

std::vector<double> jacobi_eigenvalues(const std::vector<double>& a0, int d) {
  std::vector<double> a = a0, e(std::size_t(d), 0.0);
  const Host av(a.data(), d, d);
  const Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> ev(e.data(), d);
  CHECK(linalg::symmetric_eigenvalues_descending(av, ev) <= linalg::symmetric_eigenvalues_max_sweeps);
  return e;
}

}  // namespace

TEST_CASE("symmetric tridiagonal eigensolver: A v_j = e_j v_j, V orthonormal, as Jacobi",
          "[linalg][tridiagonal][spread]") {
  for (int d : {1, 2, 3, 5, 12, 40, 101}) {
    const std::vector<double> a = random_symmetric_matrix(d, 11 + unsigned(d));
    const std::vector<double> e = check_tridiagonal_eigensystem(a, d);
    const std::vector<double> only = tridiagonal_eigenvalues_only(a, d), reference = jacobi_eigenvalues(a, d);
    for (int j = 0; j < d; ++j) {
      CHECK_THAT(only[std::size_t(j)], WithinAbs(e[std::size_t(j)], 1e-12 * d));
      CHECK_THAT(e[std::size_t(j)], WithinAbs(reference[std::size_t(j)], 1e-11 * d));
    }
  }
}

TEST_CASE("symmetric tridiagonal eigensolver: degenerate, rank-deficient, graded and diagonal spectra",
          "[linalg][tridiagonal][spread]") {
  // A repeated eigenvalue (a covariance of a flat disc in R^6), zeros (rank 2), and a graded spectrum over
  // 14 orders of magnitude (the normal directions of noise-free data).
  const std::vector<std::vector<double>> spectra = {
      {3, 3, 3, 1, 1, 0}, {5, 2, 0, 0, 0, 0, 0, 0}, {1, 1e-2, 1e-4, 1e-6, 1e-8, 1e-10, 1e-12, 1e-14}};
  for (std::size_t c = 0; c < spectra.size(); ++c) {
    const int d = int(spectra[c].size());
    std::vector<double> want = spectra[c];
    std::sort(want.rbegin(), want.rend());
    const std::vector<double> e =
        check_tridiagonal_eigensystem(symmetric_with_spectrum(spectra[c], 3 + unsigned(c)), d);
    for (int j = 0; j < d; ++j) CHECK_THAT(e[std::size_t(j)], WithinAbs(want[std::size_t(j)], 1e-12 * want[0]));
  }
  // Already diagonal (every Householder step the identity) and the zero matrix.
  std::vector<double> diagonal(16, 0.0);
  for (int i = 0; i < 4; ++i) diagonal[std::size_t(5 * i)] = double(i) - 1.5;
  const std::vector<double> e = check_tridiagonal_eigensystem(diagonal, 4);
  CHECK(e == std::vector<double>{1.5, 0.5, -0.5, -1.5});
  const std::vector<double> zero = check_tridiagonal_eigensystem(std::vector<double>(9, 0.0), 3);
  CHECK(zero == std::vector<double>{0.0, 0.0, 0.0});
}
