// The Householder tridiagonalisation of the team and serial code paths (linalg/householder_tridiagonal.hpp),
// both of its loop mappings: SerialLoops (one thread per matrix) and TeamLoops (a team per matrix, the GPU
// kernels). A = Q T Q^H to rounding; SerialLoops reads the lower triangle only (its upper triangle may hold
// anything); a team of one thread (both triangles, another order of the product's terms) agrees with it in
// d, e, tau and the reflectors to rounding; larger teams sum the reflector's norms in another order, and T
// agrees up to the signs of e. lane_dot, the product's dot, counts every term once.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "qgml/common/types.hpp"
#include "qgml/linalg/householder_tridiagonal.hpp"
#include "qgml/linalg/householder_tridiagonal_split.hpp"
#include "qgml/linalg/loops.hpp"

#include "eigh_fixtures.hpp"
#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

template <class Real>
struct HouseholderResult {
  std::vector<Real> d, e, tr, ti, vr, vi;  // vr, vi: the reflectors, column k below the diagonal
};

template <class Real, class AView>
HouseholderResult<Real> householder_serial_reference(const AView& a) {
  const int n = static_cast<int>(a.extent(0));
  std::vector<complex_t<Real>> tau(n), p(n);
  HouseholderResult<Real> out;
  out.d.resize(n);
  out.e.resize(n);
  linalg::hermitian_tridiagonalize(linalg::SerialLoops{}, a, tau.data(), p.data(), out.d.data(), out.e.data());
  for (int k = 0; k < n; ++k) {
    out.tr.push_back(tau[k].real());
    out.ti.push_back(tau[k].imag());
    for (int i = k + 1; i < n; ++i) {
      out.vr.push_back(a(i, k).real());
      out.vi.push_back(a(i, k).imag());
    }
  }
  return out;
}

template <class Real>
double tridiagonal_max_difference(const std::vector<Real>& a, const std::vector<Real>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - double(b[i])));
  return m;
}

// got against ref: d always; with reflectors (a matrix whose trailing blocks never become a multiple of
// I: elsewhere their columns, and so the later reflectors, are rounding noise) e, tau and v, else e up to
// sign (a reflector's beta takes the sign opposite to Re alpha, which rounding can flip where Re alpha is
// near 0: T then differs by a diagonal similarity of signs). tol: relative; scale: of the matrix.
template <class Real>
void check_reduction_agrees(const HouseholderResult<Real>& got, const HouseholderResult<Real>& ref,
                            const bool reflectors, const double tol, const double scale) {
  CHECK(tridiagonal_max_difference(got.d, ref.d) <= tol * scale);
  if (reflectors) {
    CHECK(tridiagonal_max_difference(got.e, ref.e) <= tol * scale);
    CHECK(tridiagonal_max_difference(got.tr, ref.tr) <= tol);
    CHECK(tridiagonal_max_difference(got.ti, ref.ti) <= tol);
    CHECK(tridiagonal_max_difference(got.vr, ref.vr) <= tol * scale);
    CHECK(tridiagonal_max_difference(got.vi, ref.vi) <= tol * scale);
  } else {
    std::vector<Real> ge(got.e), re(ref.e);
    for (auto& x : ge) x = std::abs(x);
    for (auto& x : re) x = std::abs(x);
    CHECK(tridiagonal_max_difference(ge, re) <= tol * scale);
  }
}

// max_ij |(Q T Q^H)(i, j) - A0(i, j)| for T = (d, e) and Q given by its columns q(:, j) (row-major, n x n).
template <class Real, class AView>
double reconstruction_error(const std::vector<std::complex<double>>& q, const std::vector<Real>& d,
                            const std::vector<Real>& e, const AView& a0) {
  const int n = static_cast<int>(d.size());
  double err = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      std::complex<double> sum = 0;
      for (int c = 0; c < n; ++c) {
        std::complex<double> tq = double(d[c]) * std::conj(q[std::size_t(j) * n + c]);
        if (c > 0) tq += double(e[c - 1]) * std::conj(q[std::size_t(j) * n + c - 1]);
        if (c + 1 < n) tq += double(e[c]) * std::conj(q[std::size_t(j) * n + c + 1]);
        sum += q[std::size_t(i) * n + c] * tq;
      }
      err = std::max(err, std::abs(sum - std::complex<double>(a0(i, j).real(), a0(i, j).imag())));
    }
  return err;
}

}  // namespace

TEMPLATE_TEST_CASE("hermitian_tridiagonalize: A = Q T Q^H, SerialLoops and TeamLoops agree", "[householder]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using complex_type = complex_t<Real>;
  using host_matrix = Kokkos::View<complex_type**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using policy_type = Kokkos::TeamPolicy<Space>;
  using member_type = typename policy_type::member_type;
  const double tol = tight_tolerance<Real>();
  const Space exec;
  const int wide = is_host_space_v<Space> ? (exec.concurrency() >= 2 ? 2 : 1) : 32;
  for (const MatrixKind kind : {MatrixKind::random, MatrixKind::degenerate_rotated, MatrixKind::diagonal,
                                MatrixKind::zero, MatrixKind::fuzzy_sphere})
    for (const int n : {2, 5, 8, 17, 33, 64}) {
      const HostMatrix m = make_matrix(kind, n, 1000 + n);
      double scale = 0;
      host_matrix a0("qgml::test::a0", n, n), a("qgml::test::a", n, n);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          a0(i, j) = complex_type(Real(m(i, j).real()), Real(m(i, j).imag()));
          scale = std::max(scale, std::abs(m(i, j)));
        }
      scale = std::max(scale, 1.0);
      Kokkos::deep_copy(a, a0);
      const HouseholderResult<Real> ref = householder_serial_reference<Real>(a);
      INFO(to_string(kind) << ", N = " << n);

      // A = Q T Q^H: column j of Q from apply_householder_q on e_j.
      {
        std::vector<complex_type> tau(n);
        for (int k = 0; k < n; ++k) tau[k] = complex_type(ref.tr[k], ref.ti[k]);
        std::vector<std::complex<double>> q(std::size_t(n) * n);
        std::vector<Real> xr(n), xi(n);
        for (int j = 0; j < n; ++j) {
          std::fill(xr.begin(), xr.end(), Real(0));
          std::fill(xi.begin(), xi.end(), Real(0));
          xr[j] = Real(1);
          linalg::apply_householder_q(linalg::SerialLoops{}, a, tau.data(), xr.data(), xi.data(), false);
          for (int i = 0; i < n; ++i) q[std::size_t(i) * n + j] = {double(xr[i]), double(xi[i])};
        }
        CHECK(reconstruction_error(q, ref.d, ref.e, a0) <= 50 * n * tol * scale);
      }

      // The team mapping, teams of one thread and of `wide` threads, in Space's memory.
      for (const int team : {1, wide}) {
        INFO("team of " << team);
        Kokkos::View<complex_type**, Kokkos::LayoutRight, typename Space::memory_space> ad("qgml::test::ad", n, n);
        Kokkos::View<complex_type*, typename Space::memory_space> tau("qgml::test::tau", n), p("qgml::test::p", n);
        Kokkos::View<Real*, typename Space::memory_space> d("qgml::test::d", n), e("qgml::test::e", n);
        const auto a0_mirror = Kokkos::create_mirror_view(ad);
        Kokkos::deep_copy(a0_mirror, a0);
        Kokkos::deep_copy(ad, a0_mirror);
        Kokkos::parallel_for(
            "qgml::test::tridiagonalize_team", policy_type(exec, 1, team), KOKKOS_LAMBDA(const member_type& member) {
              linalg::hermitian_tridiagonalize(linalg::TeamLoops<member_type>{member}, ad, tau.data(), p.data(),
                                               d.data(), e.data());
            });
        const auto ah = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ad);
        const auto th = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tau);
        const auto dh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
        const auto eh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e);
        HouseholderResult<Real> got;
        for (int k = 0; k < n; ++k) {
          got.d.push_back(dh(k));
          got.e.push_back(eh(k));
          got.tr.push_back(th(k).real());
          got.ti.push_back(th(k).imag());
          for (int i = k + 1; i < n; ++i) {
            got.vr.push_back(ah(i, k).real());
            got.vi.push_back(ah(i, k).imag());
          }
        }
        // The reflectors of a team of one against SerialLoops: the same sums in the same order, only the
        // compiler's contractions may differ.
        check_reduction_agrees(got, ref, team == 1 && kind == MatrixKind::random, 50 * n * tol, scale);
      }
    }
}

TEST_CASE("hermitian_tridiagonalize with SerialLoops never reads the strict upper triangle", "[householder]") {
  using complex_type = complex_t<double>;
  using host_matrix = Kokkos::View<complex_type**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  for (const MatrixKind kind : {MatrixKind::random, MatrixKind::fuzzy_sphere})
    for (const int n : {2, 5, 8, 17, 33}) {
      INFO(to_string(kind) << ", N = " << n);
      const HostMatrix m = make_matrix(kind, n, 2000 + n);
      host_matrix a("qgml::test::a", n, n), poisoned("qgml::test::poisoned", n, n);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          a(i, j) = complex_type(m(i, j).real(), m(i, j).imag());
          poisoned(i, j) = j > i ? complex_type(std::nan(""), std::nan("")) : a(i, j);
        }
      const HouseholderResult<double> ref = householder_serial_reference<double>(a);
      const HouseholderResult<double> got = householder_serial_reference<double>(poisoned);
      CHECK(same_bits(got.d, ref.d));
      CHECK(same_bits(got.e, ref.e));
      CHECK(same_bits(got.tr, ref.tr));
      CHECK(same_bits(got.ti, ref.ti));
      CHECK(same_bits(got.vr, ref.vr));
      CHECK(same_bits(got.vi, ref.vi));
    }
}

TEMPLATE_TEST_CASE("lane_dot counts every term once, in any length", "[householder]", float, double) {
  using Real = TestType;
  using complex_type = complex_t<Real>;
  // Small integers: every partial sum is exact, so any order gives the exact dot product.
  for (int len = 0; len <= 41; ++len) {
    std::vector<complex_type> x(len), y(len);
    long long re = 0, im = 0;
    for (int j = 0; j < len; ++j) {
      const int xr = (7 * j) % 11 - 5, xi = (3 * j) % 7 - 3, yr = (5 * j) % 9 - 4, yi = j % 5 - 2;
      x[j] = complex_type(Real(xr), Real(xi));
      y[j] = complex_type(Real(yr), Real(yi));
      re += xr * yr - xi * yi;
      im += xr * yi + xi * yr;
    }
    const complex_type dot = linalg::detail::lane_dot(x.data(), y.data(), len);
    INFO("len = " << len);
    CHECK(dot.real() == Real(re));
    CHECK(dot.imag() == Real(im));
  }
}

// The split-plane reduction of the host team path (linalg/householder_tridiagonal_split.hpp): the input's
// strict upper triangle poisoned with NaN (it must never be read), T and the reflectors against the
// interleaved SerialLoops reduction, A = Q T Q^H and Q^H Q = I through its own apply_householder_q.
TEMPLATE_TEST_CASE(
    "hermitian_tridiagonalize on split planes: the interleaved reduction's T and reflectors, "
    "A = Q T Q^H, the lower triangle only",
    "[householder][split]", float, double) {
  using Real = TestType;
  using complex_type = complex_t<Real>;
  using host_matrix = Kokkos::View<complex_type**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  const double tol = tight_tolerance<Real>();
  for (const MatrixKind kind : {MatrixKind::random, MatrixKind::degenerate_rotated, MatrixKind::diagonal,
                                MatrixKind::zero, MatrixKind::fuzzy_sphere})
    for (const int n : {1, 2, 5, 8, 9, 17, 33, 64}) {
      INFO(to_string(kind) << ", N = " << n);
      const HostMatrix m = make_matrix(kind, n, 3000 + n);
      host_matrix a("qgml::test::a", n, n);
      std::vector<Real> planes(2 * std::size_t(n) * n);
      const linalg::SplitMatrix<Real> s{planes.data(), planes.data() + std::size_t(n) * n, n, n};
      double scale = 1;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          a(i, j) = complex_type(Real(m(i, j).real()), Real(m(i, j).imag()));
          s.row_re(i)[j] = j > i ? Real(std::nan("")) : a(i, j).real();
          s.row_im(i)[j] = j > i ? Real(std::nan("")) : a(i, j).imag();
          scale = std::max(scale, std::abs(m(i, j)));
        }
      const host_matrix a0("qgml::test::a0", n, n);
      Kokkos::deep_copy(a0, a);
      const HouseholderResult<Real> ref = householder_serial_reference<Real>(a);

      std::vector<complex_type> tau(n);
      std::vector<Real> pr(n), pi(n);
      HouseholderResult<Real> got;
      got.d.resize(n);
      got.e.resize(n);
      linalg::hermitian_tridiagonalize(s, tau.data(), pr.data(), pi.data(), got.d.data(), got.e.data());
      for (int k = 0; k < n; ++k) {
        got.tr.push_back(tau[k].real());
        got.ti.push_back(tau[k].imag());
        for (int i = k + 1; i < n; ++i) {
          got.vr.push_back(s.row_re(i)[k]);
          got.vi.push_back(s.row_im(i)[k]);
        }
      }
      check_reduction_agrees(got, ref, kind == MatrixKind::random, 50 * n * tol, scale);

      // Column j of Q = Q e_j; then Q^H Q e_j = e_j.
      std::vector<std::complex<double>> q(std::size_t(n) * n);
      double unitary = 0;
      for (int j = 0; j < n; ++j) {
        std::vector<Real> xr(n, Real(0)), xi(n, Real(0));
        xr[j] = Real(1);
        linalg::apply_householder_q(linalg::SerialLoops{}, s, tau.data(), xr.data(), xi.data(), false);
        for (int i = 0; i < n; ++i) q[std::size_t(i) * n + j] = {double(xr[i]), double(xi[i])};
        linalg::apply_householder_q(linalg::SerialLoops{}, s, tau.data(), xr.data(), xi.data(), true);
        for (int i = 0; i < n; ++i)
          unitary = std::max(unitary, std::abs(std::complex<double>(xr[i], xi[i]) - (i == j ? 1.0 : 0.0)));
      }
      CHECK(unitary <= 50 * n * tol);
      CHECK(reconstruction_error(q, got.d, got.e, a0) <= 50 * n * tol * scale);
    }
}

TEMPLATE_TEST_CASE("split_dot and split_row_product count every term once, in any length", "[householder][split]",
                   float, double) {
  using Real = TestType;
  // Small integers: every partial sum is exact, so any order gives the exact sums.
  for (int len = 0; len <= 41; ++len) {
    INFO("len = " << len);
    const int b = 3, c = b + len;
    std::vector<Real> xr(c), xi(c), yr(c), yi(c), pr(c), pi(c);
    std::vector<long long> er(c), ei(c);
    long long re = 0, im = 0, cre = 0, cim = 0;
    const int vcr = 2, vci = -3;
    for (int j = 0; j < c; ++j) {
      const int ar = (7 * j) % 11 - 5, ai = (3 * j) % 7 - 3, br = (5 * j) % 9 - 4, bi = j % 5 - 2;
      xr[j] = Real(ar);
      xi[j] = Real(ai);
      yr[j] = Real(br);
      yi[j] = Real(bi);
      pr[j] = Real(j);
      pi[j] = Real(-j);
      er[j] = j;
      ei[j] = -j;
      if (j < b) continue;
      re += ar * br - ai * bi;  // A(c, j) v(j)
      im += ar * bi + ai * br;
      cre += ar * br + ai * bi;  // conj(x(j)) y(j)
      cim += ar * bi - ai * br;
      er[j] += ar * vcr + ai * vci;  // conj(A(c, j)) v_c
      ei[j] += ar * vci - ai * vcr;
    }
    const complex_t<Real> dot =
        linalg::detail::split_dot(xr.data() + b, xi.data() + b, yr.data() + b, yi.data() + b, len, false);
    CHECK(dot.real() == Real(re));
    CHECK(dot.imag() == Real(im));
    const complex_t<Real> cdot =
        linalg::detail::split_dot(xr.data() + b, xi.data() + b, yr.data() + b, yi.data() + b, len, true);
    CHECK(cdot.real() == Real(cre));
    CHECK(cdot.imag() == Real(cim));
    const complex_t<Real> row = linalg::detail::split_row_product(xr.data(), xi.data(), yr.data(), yi.data(), Real(vcr),
                                                                  Real(vci), pr.data(), pi.data(), b, c);
    CHECK(row.real() == Real(re));
    CHECK(row.imag() == Real(im));
    for (int j = 0; j < c; ++j) {
      CHECK(pr[j] == Real(er[j]));
      CHECK(pi[j] == Real(ei[j]));
    }
  }
}
