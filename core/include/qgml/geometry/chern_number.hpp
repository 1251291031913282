// Chern number of the ground-state bundle over a sphere (docs/math.md 5.4): C = (1 / 2 pi) times the flux of
// the analytic Berry curvature F_{mu,nu} = -2 Im Q_{mu,nu} (Berry connection i <psi_0|d psi_0>)
// through the sphere |x - c| = r lying in the 3-d coordinate subspace spanned by `axes`, oriented by
// the outward normal:
//   flux = int F_{mu,nu} (d x^mu / d theta) (d x^nu / d phi) d theta d phi
//        = int_{-1}^{1} du int_0^{2 pi} d phi F(d_theta x, d_phi x) / sin(theta),   u = cos(theta),
// by Gauss-Legendre quadrature in u (n_theta nodes) and the trapezoidal rule in phi (n_phi nodes),
// both spectrally accurate for smooth integrands. The spin-j fuzzy sphere around the origin gives a
// monopole of charge 2j = N - 1 (docs/math.md 7); in this sign convention its ground state (the m = +j
// coherent state) has C = -(N - 1), the flux of F = -j x / |x|^3. The result is a real number; its
// distance from the nearest integer says how well the quadrature resolved it (or that the sphere
// passes near a degeneracy).
#pragma once

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <type_traits>
#include <vector>

#include "qgml/geometry/quantum_geometry.hpp"

namespace qgml {

struct ChernResult {
  double chern = 0;                // flux / 2 pi
  double distance_to_integer = 0;  // |C - round(C)|
  double flux = 0;
  long degenerate_points = 0;  // grid points with a failed or degenerate eigensolve
};

namespace detail {

// Kernels are named functors, not KOKKOS_LAMBDAs: docs/architecture.md "Host execution spaces in a CUDA build".
// Grid point g = start + t of the sphere, theta = acos(u_{g / n_phi}), phi = (g mod n_phi) dphi:
// pts(t, .) = centre + radius (sin theta cos phi, sin theta sin phi, cos theta) on the axes a0, a1, a2.
template <class Real, class MemorySpace, class PointsView>
struct ChernSpherePoints {
  PointsView pts;
  Kokkos::View<double**, MemorySpace> gauss;
  Kokkos::View<double*, MemorySpace> ctr;
  long start = 0;
  int n_phi = 0, d = 0, a0 = 0, a1 = 0, a2 = 0;
  double dphi = 0, radius = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    const long g = start + t;
    const double theta = math::acos(gauss(int(g / n_phi), 0)), phi = double(g % n_phi) * dphi;
    for (int k = 0; k < d; ++k) pts(t, k) = Real(ctr(k));
    pts(t, a0) += Real(radius * math::sin(theta) * math::cos(phi));
    pts(t, a1) += Real(radius * math::sin(theta) * math::sin(phi));
    pts(t, a2) += Real(radius * math::cos(theta));
  }
};

// Quadrature term of grid point g = start + t: F(d_theta x, d_phi x) / sin(theta) times the
// Gauss-Legendre weight and dphi, F the Berry curvature on the axes a0, a1, a2.
template <class Real, class MemorySpace>
struct ChernFlux {
  using value_type = double;
  Kokkos::View<Real***, Kokkos::LayoutRight, MemorySpace> berry;
  Kokkos::View<double**, MemorySpace> gauss;
  long start = 0;
  int n_phi = 0, a0 = 0, a1 = 0, a2 = 0;
  double dphi = 0, radius = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int t, double& sum) const {
    const long g = start + t;
    const double ct = gauss(int(g / n_phi), 0), weight = gauss(int(g / n_phi), 1);
    const double st = math::sqrt(1 - ct * ct), phi = double(g % n_phi) * dphi;
    const double sp = math::sin(phi), cp = math::cos(phi);
    const double dth[3] = {radius * ct * cp, radius * ct * sp, -radius * st};
    const double dph[3] = {-radius * st * sp, radius * st * cp, 0.0};
    const int ax[3] = {a0, a1, a2};
    double f = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) f += double(berry(t, ax[i], ax[j])) * dth[i] * dph[j];
    sum += f / st * weight * dphi;
  }
};

// The number of grid points whose eigensolve failed (info(t) != 0).
template <class InfoView>
struct ChernFailures {
  using value_type = long;
  InfoView info;

  KOKKOS_INLINE_FUNCTION void operator()(const int t, long& n_bad) const { n_bad += info(t) != 0 ? 1 : 0; }
};

}  // namespace detail

template <class Real, class ExecSpace>
ChernResult chern_number(const ExecSpace& exec, const MatrixConfiguration<Real, ExecSpace>& config,
                         const std::vector<double>& centre, double radius, std::array<int, 3> axes = {0, 1, 2},
                         int n_theta = 32, int n_phi = 64, int chunk = 8192) {
  using memory_space = typename ExecSpace::memory_space;
  const int d = config.dimension();
  QGML_REQUIRE(
      d >= 3, "qgml::chern_number: needs D >= 3 (a sphere in a 3-d coordinate subspace), got D = " + std::to_string(d));
  QGML_REQUIRE(int(centre.size()) == d, "qgml::chern_number: the centre has " + std::to_string(centre.size()) +
                                            " coordinates, D = " + std::to_string(d));
  QGML_REQUIRE(radius > 0 && n_theta >= 2 && n_phi >= 3,
               "qgml::chern_number: need radius > 0, n_theta >= 2, n_phi >= 3");
  for (int a : axes) QGML_REQUIRE(a >= 0 && a < d, "qgml::chern_number: axis out of range");
  QGML_REQUIRE(axes[0] != axes[1] && axes[1] != axes[2] && axes[0] != axes[2], "qgml::chern_number: axes must differ");
  const long total = long(n_theta) * n_phi;
  const int c = int(std::min<long>(chunk, total));
  QuantumGeometry<Real, ExecSpace> geometry(d, config.matrix_size(), c, true);
  RealMatrix<Real, memory_space> points(Kokkos::ViewAllocateWithoutInitializing("qgml::chern_number::points"), c, d);
  Kokkos::View<double*, memory_space> ctr("qgml::chern_number::centre", d);
  {
    auto h = Kokkos::create_mirror(ctr);
    for (int k = 0; k < d; ++k) h(k) = centre[k];
    Kokkos::deep_copy(exec, ctr, h);
    qgml::fence(exec, "qgml::chern_number: centre copied");
  }
  GeometrySettings settings;
  settings.geometric_tensor = true;
  const double pi = 3.141592653589793;
  const double dphi = 2 * pi / n_phi;
  // Gauss-Legendre nodes u_i and weights on [-1, 1] (Newton on P_n; Golub-Welsch is not needed here).
  Kokkos::View<double**, memory_space> gauss("qgml::chern_number::gauss_legendre", n_theta, 2);
  {
    auto h = Kokkos::create_mirror(gauss);
    for (int i = 0; i < n_theta; ++i) {
      double u = std::cos(pi * (i + 0.75) / (n_theta + 0.5)), dp = 1;
      for (int it = 0; it < 100; ++it) {
        double p0 = 1, p1 = u;
        for (int k = 2; k <= n_theta; ++k) {
          const double p2 = ((2 * k - 1) * u * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = n_theta * (u * p1 - p0) / (u * u - 1);
        const double du = p1 / dp;
        u -= du;
        if (std::abs(du) < 1e-16) break;
      }
      h(i, 0) = u;
      h(i, 1) = 2 / ((1 - u * u) * dp * dp);
    }
    Kokkos::deep_copy(exec, gauss, h);
    qgml::fence(exec, "qgml::chern_number: quadrature nodes copied");
  }
  const int a0 = axes[0], a1 = axes[1], a2 = axes[2];
  double flux = 0;
  long bad = 0;
  for (long start = 0; start < total; start += c) {
    const int m = int(std::min<long>(c, total - start));
    const auto pts = Kokkos::subview(points, Kokkos::make_pair(0, m), Kokkos::ALL);
    detail::ChernSpherePoints<Real, memory_space, std::remove_const_t<decltype(pts)>> grid;
    grid.pts = pts;
    grid.gauss = gauss;
    grid.ctr = ctr;
    grid.start = start;
    grid.n_phi = n_phi;
    grid.d = d;
    grid.a0 = a0;
    grid.a1 = a1;
    grid.a2 = a2;
    grid.dphi = dphi;
    grid.radius = radius;
    Kokkos::parallel_for("qgml::chern_number::grid", Kokkos::RangePolicy<ExecSpace>(exec, 0, m), grid);
    geometry.compute(exec, config, pts, settings);
    const auto berry = geometry.berry_curvature();
    const auto info = geometry.eigh_info();
    double part = 0;
    long part_bad = 0;
    detail::ChernFlux<Real, memory_space> flux_terms;
    flux_terms.berry = berry;
    flux_terms.gauss = gauss;
    flux_terms.start = start;
    flux_terms.n_phi = n_phi;
    flux_terms.a0 = a0;
    flux_terms.a1 = a1;
    flux_terms.a2 = a2;
    flux_terms.dphi = dphi;
    flux_terms.radius = radius;
    Kokkos::parallel_reduce("qgml::chern_number::flux", Kokkos::RangePolicy<ExecSpace>(exec, 0, m), flux_terms, part);
    Kokkos::parallel_reduce("qgml::chern_number::failures", Kokkos::RangePolicy<ExecSpace>(exec, 0, m),
                            detail::ChernFailures<IntVector<memory_space>>{info}, part_bad);
    flux += part;
    bad += part_bad;
  }
  ChernResult r;
  r.flux = flux;
  r.chern = flux / (2 * pi);
  r.distance_to_integer = std::abs(r.chern - std::round(r.chern));
  r.degenerate_points = bad;
  return r;
}

}  // namespace qgml
