#include "qgml/model/initializers.hpp"

#include <cmath>

#include "qgml/common/error.hpp"
#include "qgml/common/random.hpp"

namespace qgml {

namespace {

void check_sizes(int D, int N, const char* who) {
  QGML_REQUIRE(D >= 1, std::string(who) + ": the number of matrices D must be >= 1, got " + std::to_string(D));
  QGML_REQUIRE(N >= 1, std::string(who) + ": the matrix size N must be >= 1, got " + std::to_string(N));
}

HostMatrices zeros(int D, int N) {
  HostMatrices h{D, N, {}};
  h.values.assign(std::size_t(D) * N * N, {0.0, 0.0});
  return h;
}

}  // namespace

HostMatrices qr_matrices(int D, int N, std::uint64_t seed) {
  check_sizes(D, N, "qgml::qr_matrices");
  HostMatrices h = zeros(D, N);
  const double sd = std::sqrt(0.5);
  std::vector<std::complex<double>> q(std::size_t(N) * N);  // column c is q[c * N .. c * N + N)
  for (int k = 0; k < D; ++k) {
    const CounterRng rng(seed, static_cast<std::uint64_t>(k));
    for (int c = 0; c < N; ++c)
      for (int r = 0; r < N; ++r) {
        const std::uint64_t idx = 2 * (std::uint64_t(r) * N + c);
        q[std::size_t(c) * N + r] = {sd * rng.normal(idx), sd * rng.normal(idx + 1)};
      }
    // Gram-Schmidt with one re-orthogonalisation pass (CGS2): Z = Q R with R_cc = |.| > 0.
    for (int c = 0; c < N; ++c) {
      std::complex<double>* v = &q[std::size_t(c) * N];
      for (int pass = 0; pass < 2; ++pass)
        for (int p = 0; p < c; ++p) {
          const std::complex<double>* u = &q[std::size_t(p) * N];
          std::complex<double> dot = 0;
          for (int r = 0; r < N; ++r) dot += std::conj(u[r]) * v[r];
          for (int r = 0; r < N; ++r) v[r] -= dot * u[r];
        }
      double norm = 0;
      for (int r = 0; r < N; ++r) norm += std::norm(v[r]);
      norm = std::sqrt(norm);
      QGML_REQUIRE(norm > 0, "qgml::qr_matrices: rank-deficient random matrix (seed " + std::to_string(seed) + ")");
      for (int r = 0; r < N; ++r) v[r] /= norm;
    }
    // A_k = (Q + Q^H) / 2, Q_ij = q[j * N + i].
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) h(k, i, j) = 0.5 * (q[std::size_t(j) * N + i] + std::conj(q[std::size_t(i) * N + j]));
  }
  return h;
}

HostMatrices gaussian_hermitian_matrices(int D, int N, double scale, std::uint64_t seed) {
  check_sizes(D, N, "qgml::gaussian_hermitian_matrices");
  QGML_REQUIRE(std::isfinite(scale) && scale > 0,
               "qgml::gaussian_hermitian_matrices: scale must be finite and > 0, got " + std::to_string(scale));
  HostMatrices h = zeros(D, N);
  for (int k = 0; k < D; ++k) {
    const CounterRng rng(seed, static_cast<std::uint64_t>(k) + (std::uint64_t(1) << 32));
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) {
        const std::uint64_t idx = 2 * (std::uint64_t(i) * N + j);
        h(k, i, j) = {scale * rng.normal(idx), scale * rng.normal(idx + 1)};
      }
    for (int i = 0; i < N; ++i)
      for (int j = i; j < N; ++j) {
        const auto m = 0.5 * (h(k, i, j) + std::conj(h(k, j, i)));
        h(k, i, j) = m;
        h(k, j, i) = std::conj(m);
      }
  }
  return h;
}

HostMatrices spin_matrices(int N) {
  check_sizes(3, N, "qgml::spin_matrices");
  HostMatrices h = zeros(3, N);
  const double j = 0.5 * (N - 1);
  const std::complex<double> I(0.0, 1.0);
  for (int a = 0; a < N; ++a) {
    const double m = j - a;
    h(2, a, a) = m;
    if (a > 0) {
      // <m + 1| J_+ |m> = sqrt(j (j + 1) - m (m + 1)); row a - 1 holds m + 1.
      const double jp = std::sqrt(j * (j + 1) - m * (m + 1));
      h(0, a - 1, a) += 0.5 * jp;  // J_x = (J_+ + J_-) / 2
      h(0, a, a - 1) += 0.5 * jp;
      h(1, a - 1, a) += -0.5 * I * jp;  // J_y = (J_+ - J_-) / (2 i)
      h(1, a, a - 1) += 0.5 * I * jp;
    }
  }
  return h;
}

}  // namespace qgml
