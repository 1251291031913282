// The ground state and the reduced resolvent from a float reduction refined in double
// (ground_state/ground_state_mixed.hpp), against a double eigendecomposition of the same H(x): E_0 to 1e-13 of
// the scale, psi_0 to 1e-12 up to its phase, phi = R s to 1e-11, for full pairs of packs, a pair with a
// partial second half and one with no second half; no fallback on these well-separated ground states.
// A half with a non-finite point, a point whose H is beyond the float copy's range, or a degenerate ground
// state (a configuration of size 1e-12: H = |x|^2 / 2 I to 1e-11) is sent to the double path, the other
// half is not. The first-order regulariser where the gap is below mixed_regularised_gap.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <tuple>
#include <vector>

#include "qgml/ground_state/ground_state_mixed.hpp"
#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/model/hamiltonian.hpp"
#include "qgml/model/initializers.hpp"

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

using MixedSpace = Kokkos::DefaultHostExecutionSpace;
constexpr int kMixedHalf = qgml::detail::mixed_half_width;

// The pair's arrays: H_A, H_B (n^2 kMixedHalf each, real and imaginary parts), psi of A, x_k of A, and the mixed
// arrays, all 64-byte aligned within one buffer.
struct MixedPairBuffers {
  int n, d;
  std::vector<double> buf;
  double *ha_r, *ha_i, *hb_r, *hb_i, *psr, *psi, *xk, *mixed;
  MixedPairBuffers(int n_, int d_) : n(n_), d(d_) {
    const std::size_t nn = std::size_t(n) * n * kMixedHalf;
    buf.assign(4 * nn + 2 * std::size_t(n) * kMixedHalf + std::size_t(d) * kMixedHalf +
                   qgml::detail::mixed_ground_state_scratch_reals(n, d) + 64,
               0.0);
    double* p = buf.data();
    p += (8 - (reinterpret_cast<std::uintptr_t>(p) / sizeof(double)) % 8) % 8;
    ha_r = p;
    ha_i = ha_r + nn;
    hb_r = ha_i + nn;
    hb_i = hb_r + nn;
    psr = hb_i + nn;
    psi = psr + n * kMixedHalf;
    xk = psi + n * kMixedHalf;
    mixed = xk + ((d * kMixedHalf + 7) / 8) * 8;
  }
  // The mixed arrays in `mixed` (a view: the same pointers every time).
  qgml::detail::MixedGroundStateArrays arrays() const { return qgml::detail::MixedGroundStateArrays(n, d, mixed); }
  // mixed_ground_state_pair on points 0 .. lanes_a - 1 (half A) and kMixedHalf .. (half B) of x.
  int code[2 * kMixedHalf], fallback[2];
  double e0[2 * kMixedHalf], emax[2 * kMixedHalf];
  std::tuple<const int*, const int*, const double*, const double*> outputs() const {
    return {code, fallback, e0, emax};
  }
  template <class Config, class Points>
  void run(const Config& config, const Points& x, int lanes_a, int lanes_b) {
    fallback[0] = fallback[1] = -1;
    qgml::detail::mixed_ground_state_pair(config.matrices(), config.square_sum(), x, 0, lanes_a, lanes_b, ha_r, ha_i,
                                          hb_r, hb_i, arrays(), xk, psr, psi, code, e0, emax, fallback);
  }
};

struct MixedReference {
  std::vector<double> w;                // eigenvalues, ascending
  std::vector<std::complex<double>> v;  // v[m * n + i]: eigenvector m
};

std::vector<MixedReference> mixed_reference_spectra(
    const MatrixConfiguration<double, MixedSpace>& config,
    const Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>& x) {
  const MixedSpace exec;
  const int count = int(x.extent(0)), n = config.matrix_size();
  Kokkos::View<Kokkos::complex<double>***, Kokkos::HostSpace> h("h", count, n, n), v("v", count, n, n);
  Kokkos::View<double**, Kokkos::HostSpace> w("w", count, n);
  Kokkos::View<int*, Kokkos::HostSpace> info("info", count);
  build_hamiltonians(exec, config, x, h);
  batched_eigh(exec, h, w, v, info, EighOptions{EighVariant::serial, 0});
  exec.fence();
  std::vector<MixedReference> out(count);
  for (int t = 0; t < count; ++t) {
    REQUIRE(info(t) == 0);
    for (int m = 0; m < n; ++m) {
      out[t].w.push_back(w(t, m));
      for (int i = 0; i < n; ++i) out[t].v.push_back(std::complex<double>(v(t, m, i).real(), v(t, m, i).imag()));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("mixed-precision ground state: E_0, psi_0 and phi = R s of a double eigendecomposition",
          "[ground_state][mixed]") {
  const MixedSpace exec;
  const int d = 3;
  for (int n : {12, 32, 45}) {
    for (int count : {16, 11, 5}) {
      CAPTURE(n, count);
      const auto config = to_configuration<double>(gaussian_hermitian_matrices(d, n, 0.6, 31 + n), exec);
      const auto x = to_device_points<double, MixedSpace>(random_points(count, d, 1.0, 7 + n + count), count, d);
      const auto ref = mixed_reference_spectra(config, x);
      MixedPairBuffers b(n, d);
      const int lanes_a = std::min(kMixedHalf, count), lanes_b = std::max(0, std::min(kMixedHalf, count - kMixedHalf));
      b.run(config, x, lanes_a, lanes_b);
      const qgml::detail::MixedGroundStateArrays m = b.arrays();
      const auto [code, fallback, e0, emax] = b.outputs();
      CHECK(fallback[0] == 0);
      if (lanes_b > 0) CHECK(fallback[1] == 0);
      for (int t = 0; t < count; ++t) {
        CAPTURE(t);
        const int h = t / kMixedHalf, q = t % kMixedHalf;
        const double* pr = h == 0 ? b.psr : m.psr_b;
        const double* pi = h == 0 ? b.psi : m.psi_b;
        const MixedReference& r = ref[t];
        const double scale = std::max(1.0, r.w[n - 1] - r.w[0]);
        REQUIRE(r.w[1] - r.w[0] >
                2 * qgml::detail::mixed_gap_tolerance * scale);  // separated enough for the mixed path
        CHECK(code[t] == 0);
        CHECK(std::abs(e0[t] - r.w[0]) <= 1e-13 * scale);
        CHECK(std::abs(emax[t] - r.w[n - 1]) <= 1e-4 * scale);  // float T's
        // psi = c psi_ref with |c| = 1.
        std::complex<double> c = 0;
        for (int i = 0; i < n; ++i)
          c += std::conj(r.v[i]) * std::complex<double>(pr[i * kMixedHalf + q], pi[i * kMixedHalf + q]);
        double err = 0;
        for (int i = 0; i < n; ++i)
          err = std::max(err,
                         std::abs(std::complex<double>(pr[i * kMixedHalf + q], pi[i * kMixedHalf + q]) - c * r.v[i]));
        CHECK(std::abs(std::abs(c) - 1.0) <= 1e-13);
        CHECK(err <= 1e-12);
      }
      // phi = R s for s(i) = cos(0.3 i + t) + i sin(0.7 i - t), against sum_{m >= 1} v_m <v_m|s> / (E_m - E_0).
      for (int h = 0; h < (lanes_b > 0 ? 2 : 1); ++h) {
        std::vector<double> sr(n * kMixedHalf), si(n * kMixedHalf), fr(n * kMixedHalf), fi(n * kMixedHalf);
        for (int i = 0; i < n; ++i)
          for (int q = 0; q < kMixedHalf; ++q) {
            sr[i * kMixedHalf + q] = std::cos(0.3 * i + h * kMixedHalf + q);
            si[i * kMixedHalf + q] = std::sin(0.7 * i - h * kMixedHalf - q);
          }
        int ok[kMixedHalf];
        const double eta[kMixedHalf] = {0, 0, 0, 0, 0, 0, 0, 0};  // R itself
        qgml::detail::mixed_reduced_resolvent(m, h, h == 0 ? b.ha_r : b.hb_r, h == 0 ? b.ha_i : b.hb_i,
                                              h == 0 ? b.psr : m.psr_b, h == 0 ? b.psi : m.psi_b, e0 + h * kMixedHalf,
                                              eta, sr.data(), si.data(), h == 0 ? lanes_a : lanes_b, fr.data(),
                                              fi.data(), ok);
        for (int q = 0; q < (h == 0 ? lanes_a : lanes_b); ++q) {
          CAPTURE(h, q);
          const MixedReference& r = ref[h * kMixedHalf + q];
          CHECK(ok[q] == 1);
          std::vector<std::complex<double>> phi(n, 0.0);
          for (int mm = 1; mm < n; ++mm) {
            std::complex<double> c = 0;
            for (int i = 0; i < n; ++i)
              c += std::conj(r.v[mm * n + i]) * std::complex<double>(sr[i * kMixedHalf + q], si[i * kMixedHalf + q]);
            c /= r.w[mm] - r.w[0];
            for (int i = 0; i < n; ++i) phi[i] += c * r.v[mm * n + i];
          }
          double err = 0, size = 0;
          for (int i = 0; i < n; ++i) {
            err =
                std::max(err, std::abs(std::complex<double>(fr[i * kMixedHalf + q], fi[i * kMixedHalf + q]) - phi[i]));
            size = std::max(size, std::abs(phi[i]));
          }
          CHECK(size > 0);
          CHECK(err <= 1e-11 * size);
        }
      }
    }
  }
}

TEST_CASE(
    "mixed-precision ground state: a non-finite point or a degenerate ground state sends its half to the "
    "double path",
    "[ground_state][mixed]") {
  const MixedSpace exec;
  const int d = 3, n = 32, count = 16;
  SECTION("a NaN coordinate in half B") {
    const auto config = to_configuration<double>(gaussian_hermitian_matrices(d, n, 0.6, 5), exec);
    std::vector<double> pts = random_points(count, d, 1.0, 6);
    pts[(kMixedHalf + 3) * d + 1] = std::numeric_limits<double>::quiet_NaN();
    const auto x = to_device_points<double, MixedSpace>(pts, count, d);
    MixedPairBuffers b(n, d);
    b.run(config, x, kMixedHalf, kMixedHalf);
    const auto [code, fallback, e0, emax] = b.outputs();
    CHECK(fallback[0] == 0);
    CHECK(fallback[1] == 1);
    CHECK(code[kMixedHalf + 3] == linalg::eigh_non_finite_input);
  }
  SECTION("a point at 1e9: H beyond the float copy's range in half A") {
    const auto config = to_configuration<double>(gaussian_hermitian_matrices(d, n, 0.6, 5), exec);
    std::vector<double> pts = random_points(count, d, 1.0, 6);
    pts[2 * d] = 1e9;
    const auto x = to_device_points<double, MixedSpace>(pts, count, d);
    MixedPairBuffers b(n, d);
    b.run(config, x, kMixedHalf, kMixedHalf);
    const auto [code, fallback, e0, emax] = b.outputs();
    CHECK(fallback[0] == 1);
    CHECK(fallback[1] == 0);
    CHECK(code[2] == 0);  // finite: the double path solves it
  }
  SECTION("a gap of 4e-5 of the scale, below mixed_gap_tolerance, though the refinement converges") {
    // H = 1/2 A_1^2 + |x|^2 / 2 with A_1 = diag(0, 0.02, 1 .. 3) (A_2 = A_3 = 0): diagonal, so the float
    // reduction is exact to the float copy and the refinement converges; E_1 - E_0 = 2e-4 against a spread
    // of ~4.5. Only the gap test sends the half to the double path.
    HostMatrices m = gaussian_hermitian_matrices(d, n, 1e-3, 77);
    for (int k = 0; k < d; ++k)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          m(k, i, j) = (k == 0 && i == j) ? (i == 0 ? 0.0 : i == 1 ? 0.02 : 1.0 + 2.0 * (i - 2) / (n - 3)) : 0.0;
    const auto config = to_configuration<double>(m, exec);
    std::vector<double> pts(kMixedHalf * d, 0.0);
    for (int t = 0; t < kMixedHalf; ++t) pts[t * d + 1] = 0.1 + 0.01 * t;
    const auto x = to_device_points<double, MixedSpace>(pts, kMixedHalf, d);
    const auto ref = mixed_reference_spectra(config, x);
    REQUIRE(ref[0].w[1] - ref[0].w[0] < qgml::detail::mixed_gap_tolerance * (ref[0].w[n - 1] - ref[0].w[0]));
    MixedPairBuffers b(n, d);
    b.run(config, x, kMixedHalf, 0);
    const auto [code, fallback, e0, emax] = b.outputs();
    CHECK(fallback[0] == 1);
    CHECK(std::abs(e0[0] - ref[0].w[0]) <= 1e-14);  // converged all the same: the gap test decides
  }
  SECTION("a configuration of size 1e-12: every ground state degenerate to 1e-11") {
    const auto config = to_configuration<double>(gaussian_hermitian_matrices(d, n, 1e-12, 5), exec);
    const auto x = to_device_points<double, MixedSpace>(random_points(count, d, 1.0, 6), count, d);
    MixedPairBuffers b(n, d);
    b.run(config, x, kMixedHalf, 2);
    const auto [code, fallback, e0, emax] = b.outputs();
    CHECK(fallback[0] == 1);
    CHECK(fallback[1] == 1);
  }
}

TEST_CASE(
    "mixed-precision resolvent: the regulariser eta to first order where the gap is below "
    "mixed_regularised_gap",
    "[ground_state][mixed]") {
  // A_1 = diag(a) with a_0 = 0, a_1 = 0.06 and the rest spread over [1, 3], A_2 a small Hermitian
  // perturbation, A_3 = 0: at x = (0, 0.1, 0) the gap is about 0.0018 against a spread of about 4.5
  // (relative 4e-4: between mixed_gap_tolerance and mixed_regularised_gap).
  const MixedSpace exec;
  const int d = 3, n = 32, count = 8;
  HostMatrices m = gaussian_hermitian_matrices(d, n, 1e-3, 77);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      m(0, i, j) = i == j ? (i == 0 ? 0.0 : i == 1 ? 0.06 : 1.0 + 2.0 * (i - 2) / (n - 3)) : 0.0;
      m(2, i, j) = 0.0;
    }
  const auto config = to_configuration<double>(m, exec);
  std::vector<double> pts(count * d, 0.0);
  for (int t = 0; t < count; ++t) pts[t * d + 1] = 0.1 + 0.01 * t;
  const auto x = to_device_points<double, MixedSpace>(pts, count, d);
  const auto ref = mixed_reference_spectra(config, x);
  MixedPairBuffers b(n, d);
  b.run(config, x, count, 0);
  const qgml::detail::MixedGroundStateArrays arrays = b.arrays();
  const auto [code, fallback, e0, emax] = b.outputs();
  REQUIRE(fallback[0] == 0);
  std::vector<double> sr(n * kMixedHalf), si(n * kMixedHalf), fr(n * kMixedHalf), fi(n * kMixedHalf);
  for (int i = 0; i < n * kMixedHalf; ++i) {
    sr[i] = std::cos(0.37 * i);
    si[i] = std::sin(0.11 * i);
  }
  double eta[kMixedHalf];
  for (int q = 0; q < kMixedHalf; ++q) eta[q] = 1e-5;
  int ok[kMixedHalf];
  qgml::detail::mixed_reduced_resolvent(arrays, 0, b.ha_r, b.ha_i, b.psr, b.psi, e0, eta, sr.data(), si.data(), count,
                                        fr.data(), fi.data(), ok);
  for (int q = 0; q < count; ++q) {
    CAPTURE(q);
    const MixedReference& r = ref[q];
    const double scale = r.w[n - 1] - r.w[0], gap = r.w[1] - r.w[0];
    REQUIRE(gap > qgml::detail::mixed_gap_tolerance * scale);
    REQUIRE(gap < qgml::detail::mixed_regularised_gap * scale);
    CHECK(arrays.near[q] == 1.0f);
    CHECK(ok[q] == 1);
    std::vector<std::complex<double>> reg(n, 0.0), plain(n, 0.0);
    for (int mm = 1; mm < n; ++mm) {
      std::complex<double> c = 0;
      for (int i = 0; i < n; ++i)
        c += std::conj(r.v[mm * n + i]) * std::complex<double>(sr[i * kMixedHalf + q], si[i * kMixedHalf + q]);
      const double g = r.w[mm] - r.w[0];
      for (int i = 0; i < n; ++i) {
        reg[i] += c * (g / (g * g + eta[q] * eta[q])) * r.v[mm * n + i];
        plain[i] += c / g * r.v[mm * n + i];
      }
    }
    double to_reg = 0, reg_to_plain = 0, size = 0;
    for (int i = 0; i < n; ++i) {
      const std::complex<double> f(fr[i * kMixedHalf + q], fi[i * kMixedHalf + q]);
      to_reg = std::max(to_reg, std::abs(f - reg[i]));
      reg_to_plain = std::max(reg_to_plain, std::abs(reg[i] - plain[i]));
      size = std::max(size, std::abs(reg[i]));
    }
    // (eta / gap)^2 ~ 3e-5 here: the regulariser is visible, and applied to within the float M's relative
    // error at this gap (~1e-3) times that term.
    CHECK(reg_to_plain > 1e-5 * size);
    CHECK(to_reg <= 1e-6 * size);
  }
}
