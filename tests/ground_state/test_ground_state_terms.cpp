#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <complex>
#include <vector>

#include "qgml/common/random.hpp"
#include "qgml/ground_state/ground_state_terms.hpp"
#include "qgml/linalg/hermitian_eigensolver_packed.hpp"
#include "qgml/model/initializers.hpp"

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

// For W unit vectors psi (not eigenvectors: the formulas of docs/math.md 2.2 hold for any state) and points x:
// the scalar form on pointers, the lane form on interleaved values, and a direct computation in
// std::complex<double> with A_k^2 formed explicitly, sigma^2 = sum_k <psi|A_k^2|psi> - <psi|A_k|psi>^2.
// Sinks as functors with host-device call operators (the helper is KOKKOS_INLINE_FUNCTION; a plain host
// lambda would be a host function called from a host-device one under nvcc).
template <class Complex>
struct StoreProducts {
  Complex* y;
  int n;
  KOKKOS_INLINE_FUNCTION void operator()(const int k, const int i, const Complex& v) const { y[k * n + i] = v; }
};

template <class Real, int W>
struct StoreLanes {
  Real* xbar;
  KOKKOS_INLINE_FUNCTION void operator()(const int k, const Real* xb) const {
    for (int q = 0; q < W; ++q) xbar[k * W + q] = xb[q];
  }
};

TEMPLATE_TEST_CASE("ground-state terms: scalar form, lane form and a direct computation agree", "[ground_state_terms]",
                   float, double) {
  using Real = TestType;
  using complex_type = complex_t<Real>;
  constexpr int W = linalg::packed_eigh_width<Real>;
  const double tol = std::is_same_v<Real, float> ? 2e-5 : 1e-13;
  const Kokkos::DefaultHostExecutionSpace exec;
  for (auto [d, n] : {std::pair{3, 4}, std::pair{2, 1}, std::pair{5, 9}}) {
    auto config = qr_configuration<Real>(d, n, 5, exec);
    const HostMatrices hm = to_host(config, exec);
    auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), config.matrices());
    const CounterRng rng(11, 3);
    std::vector<std::vector<std::complex<double>>> psi(W, std::vector<std::complex<double>>(n));
    std::vector<std::vector<double>> x(W, std::vector<double>(d));
    for (int q = 0; q < W; ++q) {
      double norm = 0;
      for (int j = 0; j < n; ++j) {
        psi[q][j] = {2 * rng.uniform(std::uint64_t(q * 100 + 2 * j)) - 1,
                     2 * rng.uniform(std::uint64_t(q * 100 + 2 * j + 1)) - 1};
        norm += std::norm(psi[q][j]);
      }
      for (auto& p : psi[q]) p /= std::sqrt(norm);
      for (int k = 0; k < d; ++k) x[q][k] = 2 * rng.uniform(std::uint64_t(10000 + q * 10 + k)) - 1;
    }
    // Lane form.
    std::vector<Real> pr(n * W), pi(n * W), xl(d * W), yr(d * n * W), yi(d * n * W), r(d * W), s2(W), d2(W);
    std::vector<Real> xbar_lanes(d * W);
    for (int q = 0; q < W; ++q) {
      for (int j = 0; j < n; ++j) {
        pr[j * W + q] = Real(psi[q][j].real());
        pi[j * W + q] = Real(psi[q][j].imag());
      }
      for (int k = 0; k < d; ++k) xl[k * W + q] = Real(x[q][k]);
    }
    ground_state_terms_lanes<W>(a, pr.data(), pi.data(), xl.data(), yr.data(), yi.data(), r.data(), s2.data(),
                                d2.data(), StoreLanes<Real, W>{xbar_lanes.data()});
    for (int q = 0; q < W; ++q) {
      // Scalar form on raw pointers.
      std::vector<complex_type> ps(n);
      std::vector<Real> xs(d), xbar(d);
      for (int j = 0; j < n; ++j) ps[j] = complex_type(Real(psi[q][j].real()), Real(psi[q][j].imag()));
      for (int k = 0; k < d; ++k) xs[k] = Real(x[q][k]);
      std::vector<complex_type> y(std::size_t(d) * n);
      const auto terms =
          ground_state_terms<Real>(a, ps.data(), xs.data(), xbar.data(), StoreProducts<complex_type>{y.data(), n});
      // Direct.
      double sigma2 = 0, dist2 = 0;
      for (int k = 0; k < d; ++k) {
        const HostMatrix ak = matrix_of(hm, k), ak2 = multiply(ak, ak);
        std::complex<double> e1 = 0, e2 = 0;
        for (int i = 0; i < n; ++i) {
          std::complex<double> yk = 0, yk2 = 0;
          for (int j = 0; j < n; ++j) {
            yk += ak(i, j) * psi[q][j];
            yk2 += ak2(i, j) * psi[q][j];
          }
          e1 += std::conj(psi[q][i]) * yk;
          e2 += std::conj(psi[q][i]) * yk2;
          INFO("D = " << d << ", N = " << n << ", lane " << q << ", k = " << k << ", i = " << i);
          const std::complex<double> ys = {double(y[std::size_t(k) * n + i].real()),
                                           double(y[std::size_t(k) * n + i].imag())};
          CHECK(std::abs(ys - yk) <= tol);
          CHECK(std::abs(std::complex<double>(yr[(k * n + i) * W + q], yi[(k * n + i) * W + q]) - yk) <= tol);
        }
        INFO("D = " << d << ", N = " << n << ", lane " << q << ", k = " << k);
        CHECK(std::abs(xbar[k] - e1.real()) <= tol);
        CHECK(std::abs(xbar_lanes[k * W + q] - xbar[k]) <= tol);
        CHECK(std::abs(r[k * W + q] - (xbar[k] - xs[k])) <= tol);
        sigma2 += e2.real() - e1.real() * e1.real();
        dist2 += (x[q][k] - e1.real()) * (x[q][k] - e1.real());
      }
      INFO("D = " << d << ", N = " << n << ", lane " << q);
      CHECK(std::abs(terms.sigma2 - sigma2) <= tol * std::max(1.0, std::abs(sigma2)));
      CHECK(std::abs(terms.distance2 - dist2) <= tol * std::max(1.0, dist2));
      CHECK(std::abs(s2[q] - terms.sigma2) <= tol * std::max(1.0, std::abs(sigma2)));
      CHECK(std::abs(d2[q] - terms.distance2) <= tol * std::max(1.0, dist2));
    }
  }
}
