#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cmath>

#include "qgml/data/datasets.hpp"
#include "qgml/geometry/chern_number.hpp"
#include "qgml/geometry/quantum_geometry.hpp"
#include "qgml/linalg/symmetric_eigenvalues.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/train/evaluate.hpp"
#include "qgml/train/trainer.hpp"

#include "test_support.hpp"
#include "train/training_fixtures.hpp"

using namespace qgml;
using namespace qgml::test;

TEMPLATE_TEST_CASE("the D x D Jacobi eigenvalues converge in a few sweeps in float and double", "[geometry]", float,
                   double) {
  using Real = TestType;
  for (int d : {2, 3, 5, 11}) {
    Kokkos::View<Real**, Kokkos::HostSpace> a("a", d, d), b("b", d, d);
    Kokkos::View<Real*, Kokkos::HostSpace> e("e", d);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j <= i; ++j) a(i, j) = a(j, i) = Real(std::sin(1.0 + 3.0 * i + 7.0 * j) + (i == j ? d : 0));
    Kokkos::deep_copy(b, a);
    const int sweeps = linalg::symmetric_eigenvalues_descending(a, e);
    INFO("D = " << d << ", " << sweeps << " sweeps");
    CHECK(sweeps <= 10);  // a rounding-level stopping rule: never the 50-sweep cap
    double trace = 0, sum = 0;
    for (int i = 0; i < d; ++i) {
      trace += b(i, i);
      sum += e(i);
      if (i > 0) CHECK(e(i - 1) >= e(i));
    }
    CHECK(std::abs(trace - sum) <= (sizeof(Real) == 4 ? 1e-4 : 1e-12) * std::abs(trace));
  }
}

namespace {

template <class Real, class Space>
struct HostGeometry {
  Kokkos::View<Real***, Kokkos::LayoutRight, Kokkos::HostSpace> metric, fs, berry;
  Kokkos::View<Real**, Kokkos::LayoutRight, Kokkos::HostSpace> eigenvalues;
  Kokkos::View<int*, Kokkos::HostSpace> dimension;
};

template <class Real, class Space>
HostGeometry<Real, Space> geometry_at(const MatrixConfiguration<Real, Space>& config, const std::vector<double>& pts,
                                      MetricKind kind) {
  const Space exec;
  const int d = config.dimension(), count = int(pts.size()) / d;
  auto points = to_device_points<Real, Space>(pts, count, d);
  QuantumGeometry<Real, Space> g(d, config.matrix_size(), count, true);
  GeometrySettings s;
  s.metric = kind;
  s.geometric_tensor = true;
  g.compute(exec, config, points, s);
  HostGeometry<Real, Space> r;
  r.metric = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.metric());
  r.fs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.fubini_study());
  r.berry = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.berry_curvature());
  r.eigenvalues = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.eigenvalues());
  r.dimension = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), g.dimension());
  return r;
}

std::vector<double> unit_sphere_points(int count, std::uint64_t seed) {
  std::vector<double> p = random_points(count, 3, 1.0, seed);
  for (int t = 0; t < count; ++t) {
    const double r = std::sqrt(p[3 * t] * p[3 * t] + p[3 * t + 1] * p[3 * t + 1] + p[3 * t + 2] * p[3 * t + 2]);
    for (int k = 0; k < 3; ++k) p[3 * t + k] /= r;
  }
  return p;
}

}  // namespace

TEMPLATE_TEST_CASE(
    "fuzzy sphere at |x| = 1: metric {cj, cj, 0}, Fubini-Study {j/2, j/2, 0}, |F| = j, covariance "
    "{c^2 j, c^2 j, 0}",
    "[geometry]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const double tol = std::is_same_v<Real, float> ? 2e-4 : 1e-10;
  const auto pts = unit_sphere_points(20, 3);
  for (int n = 2; n <= 5; ++n)
    for (double w : {0.0, 0.25}) {
      const double j = 0.5 * (n - 1), c = 1 / (j + w);
      auto config = fuzzy_sphere_configuration<Real>(n, c, Space());
      const auto q = geometry_at(config, pts, MetricKind::quantum);
      const auto cov = geometry_at(config, pts, MetricKind::covariance);
      for (int t = 0; t < 20; ++t) {
        INFO("N = " << n << ", w = " << w << ", point " << t);
        CHECK(std::abs(q.eigenvalues(t, 0) - c * j) <= tol);
        CHECK(std::abs(q.eigenvalues(t, 1) - c * j) <= tol);
        CHECK(std::abs(q.eigenvalues(t, 2)) <= tol);
        CHECK(q.dimension(t) == 2);
        CHECK(std::abs(cov.eigenvalues(t, 0) - c * c * j) <= tol);
        CHECK(std::abs(cov.eigenvalues(t, 1) - c * c * j) <= tol);
        CHECK(std::abs(cov.eigenvalues(t, 2)) <= tol);
        // Fubini-Study: eigenvalues of the 3 x 3 block; trace = j, determinant-free check via trace
        // and the radial direction being a null vector.
        double trace = 0, radial = 0;
        for (int a = 0; a < 3; ++a) {
          trace += q.fs(t, a, a);
          for (int b = 0; b < 3; ++b) radial += pts[3 * t + a] * q.fs(t, a, b) * pts[3 * t + b];
        }
        CHECK(std::abs(trace - j) <= tol);
        CHECK(std::abs(radial) <= tol);
        // |F| = j: F_{12}^2 + F_{13}^2 + F_{23}^2 = j^2, and F is radial: F_{ab} = +-j eps_{abc} x_c.
        const double f2 = double(q.berry(t, 0, 1)) * q.berry(t, 0, 1) + double(q.berry(t, 0, 2)) * q.berry(t, 0, 2) +
                          double(q.berry(t, 1, 2)) * q.berry(t, 1, 2);
        CHECK(std::abs(std::sqrt(f2) - j) <= tol);
        CHECK(std::abs(std::abs(q.berry(t, 0, 1)) - j * std::abs(pts[3 * t + 2])) <= tol);
      }
    }
}

TEST_CASE("the quantum metric is the Jacobian d xbar / d x", "[geometry]") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const Space exec;
  for (auto [d, n] : {std::pair{3, 4}, std::pair{4, 6}}) {
    auto config = gaussian_hermitian_configuration<double>(d, n, 0.6, 21, exec);
    const std::vector<double> pts = random_points(5, d, 1.0, 8);
    const auto g = geometry_at(config, pts, MetricKind::quantum);
    const double h = 1e-6;
    for (int t = 0; t < 5; ++t)
      for (int nu = 0; nu < d; ++nu) {
        std::vector<double> plus(pts.begin() + t * d, pts.begin() + (t + 1) * d), minus = plus;
        plus[nu] += h;
        minus[nu] -= h;
        std::vector<double> both = plus;
        both.insert(both.end(), minus.begin(), minus.end());
        auto points = to_device_points<double, Space>(both, 2, d);
        const auto e = evaluate(exec, config, points, LossSettings{0.0});
        auto xbar = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e.xbar);
        for (int mu = 0; mu < d; ++mu) {
          const double fd = (xbar(0, mu) - xbar(1, mu)) / (2 * h);
          INFO("D = " << d << ", N = " << n << ", point " << t << ", (mu, nu) = (" << mu << ", " << nu << ")");
          CHECK(std::abs(g.metric(t, mu, nu) - fd) <= 1e-6 * std::max(1.0, std::abs(fd)));
        }
      }
  }
}

TEMPLATE_TEST_CASE("Chern number of the spin-j fuzzy sphere around the origin is N - 1", "[geometry][chern]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  for (int n = 2; n <= 6; ++n) {
    auto config = fuzzy_sphere_configuration<Real>(n, 1.0, exec);
    const ChernResult r = chern_number(exec, config, {0.0, 0.0, 0.0}, 1.0, {0, 1, 2}, 16, 32);
    INFO("N = " << n << ": C = " << r.chern);
    // Monopole of charge 2j = N - 1; negative for the m = +j ground state in this convention.
    CHECK(std::abs(r.chern + (n - 1)) <= (std::is_same_v<Real, float> ? 1e-4 : 1e-10));
    CHECK(r.distance_to_integer <= (std::is_same_v<Real, float> ? 1e-4 : 1e-10));
    CHECK(r.degenerate_points == 0);
    // A sphere that does not enclose the degeneracy at the origin carries no charge.
    const ChernResult off = chern_number(exec, config, {3.0, 0.0, 0.0}, 1.0, {0, 1, 2}, 16, 32);
    CHECK(std::abs(off.chern) <= 1e-4);
    // Off-centre but enclosing: the charge is topological, not a property of the sphere.
    const ChernResult shifted = chern_number(exec, config, {0.3, -0.2, 0.1}, 1.5, {0, 1, 2}, 24, 48);
    CHECK(std::abs(shifted.chern + (n - 1)) <= 1e-3);
  }
}

TEMPLATE_TEST_CASE("the trained N = 3 sphere has dimension 2 at >= 99% of the points", "[geometry][training]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const auto run = train_sphere_run<Real>(exec, 100);
  const auto& data = run.data;
  const auto& config = run.config;
  QuantumGeometry<Real, Space> geometry(3, 3, 2500, false);
  geometry.compute(exec, config, data, GeometrySettings{});
  auto dim = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), geometry.dimension());
  auto e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), geometry.eigenvalues());
  int two = 0;
  double e0 = 0, e1 = 0, e2 = 0;
  for (int t = 0; t < 2500; ++t) {
    two += dim(t) == 2;
    e0 += e(t, 0) / 2500;
    e1 += e(t, 1) / 2500;
    e2 += e(t, 2) / 2500;
  }
  INFO("d = 2 at " << two << " of 2500 points; mean eigenvalues " << e0 << ", " << e1 << ", " << e2);
  CHECK(two >= 0.99 * 2500);
  CHECK(std::abs(e0 - 0.8) <= 0.05);
  CHECK(std::abs(e1 - 0.8) <= 0.05);
  CHECK(e2 <= 1e-2);
}

namespace {

// Every output of QuantumGeometry::compute with the given kernel and team size, copied to the host.
struct GeometryResult {
  std::vector<double> metric, fs, berry, xbar, energy, sigma2, eigenvalues;
  std::vector<int> dimension, info;
};

template <class Real, class Space>
GeometryResult run_geometry(const HostMatrices& m, const std::vector<double>& pts, MetricKind kind,
                            GeometryKernel kernel, const TeamShape& shape = {}) {
  const Space exec;
  auto config = to_configuration<Real>(m, exec);
  const int count = int(pts.size()) / m.D;
  auto points = to_device_points<Real, Space>(pts, count, m.D);
  GeometrySettings s;
  s.metric = kind;
  s.geometric_tensor = true;
  s.kernel = kernel;
  s.team_shape = shape;
  QuantumGeometry<Real, Space> g(m.D, m.N, count, true);
  g.compute(exec, config, points, s);
  GeometryResult r;
  const auto copy = [](const auto& v, auto& out) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    out.assign(h.data(), h.data() + h.span());
  };
  copy(g.metric(), r.metric);
  copy(g.fubini_study(), r.fs);
  copy(g.berry_curvature(), r.berry);
  copy(g.xbar(), r.xbar);
  copy(g.energy(), r.energy);
  copy(g.sigma2(), r.sigma2);
  copy(g.eigenvalues(), r.eigenvalues);
  copy(g.dimension(), r.dimension);
  copy(g.eigh_info(), r.info);
  return r;
}

// max |a - b| / max(1, max |a|) over the finite entries; a NaN on one side only is infinitely far.
double geometry_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0, scale = 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return INFINITY;
      continue;
    }
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(a[i]));
  }
  return diff / scale;
}

// g (a ground-state kernel) against r (the separate path, the sums over the whole spectrum): every
// output, with the non-finite point `bad`.
void check_same_geometry(const GeometryResult& r, const GeometryResult& g, double tol, int bad) {
  CHECK(geometry_difference(r.metric, g.metric) <= tol);
  CHECK(geometry_difference(r.fs, g.fs) <= tol);
  CHECK(geometry_difference(r.berry, g.berry) <= tol);
  CHECK(geometry_difference(r.xbar, g.xbar) <= tol);
  CHECK(geometry_difference(r.energy, g.energy) <= tol);
  CHECK(geometry_difference(r.sigma2, g.sigma2) <= tol);
  CHECK(geometry_difference(r.eigenvalues, g.eigenvalues) <= tol);
  CHECK(r.info == g.info);
  CHECK(g.info[bad] == linalg::eigh_non_finite_input);
  CHECK(g.dimension[bad] == -1);
  int same = 0;
  for (std::size_t t = 0; t < r.dimension.size(); ++t) same += r.dimension[t] == g.dimension[t] ? 1 : 0;
  CHECK(same >= int(r.dimension.size()) - 1);  // a gap ratio at the threshold may round either way
}

// A_1 = diag(0, 0, 1, 2) makes the ground state of x = 0 doubly degenerate (A_2 mixes only the excited
// states): the kernel's regularised metric is finite there and equals the separate path's elsewhere.
template <class Real, class Space>
void check_degenerate_ground_state(GeometryKernel kernel, double tol) {
  HostMatrices m{2, 4, std::vector<cplx>(32)};
  m(0, 2, 2) = 1;
  m(0, 3, 3) = 2;
  m(1, 2, 3) = m(1, 3, 2) = 0.3;
  const std::vector<double> pts{0.0, 0.0, 0.4, -0.2};
  const auto r = run_geometry<Real, Space>(m, pts, MetricKind::quantum, GeometryKernel::separate);
  const auto g = run_geometry<Real, Space>(m, pts, MetricKind::quantum, kernel);
  for (double v : g.metric) CHECK(std::isfinite(v));
  CHECK(geometry_difference(std::vector<double>(r.metric.begin() + 4, r.metric.end()),
                            std::vector<double>(g.metric.begin() + 4, g.metric.end())) <= tol);
}

}  // namespace

// The team kernel (ground state and one tridiagonal solve per direction) against the sums over the
// whole spectrum: every metric, the geometric tensor, the ground-state terms and the dimension, with a
// NaN point and a degenerate one, in several team shapes.
TEMPLATE_TEST_CASE("the team geometry kernel gives the spectral sums' metric, tensor and dimension", "[geometry][team]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const double tol = std::is_same_v<Real, float> ? 2e-3 : 1e-10;
  for (const int n : {1, 2, 4, 9, 24}) {
    for (const int d : {2, 3, 5}) {
      CAPTURE(n, d);
      const HostMatrices m = gaussian_hermitian_matrices(d, n, 0.6, 50 + n + d);
      std::vector<double> pts = random_points(23, d, 1.0, 60 + n);
      pts[d * 7] = std::nan("");  // point 7 is not finite
      for (const MetricKind kind : {MetricKind::quantum, MetricKind::covariance, MetricKind::fubini_study}) {
        CAPTURE(to_string(kind));
        const auto r = run_geometry<Real, Space>(m, pts, kind, GeometryKernel::separate);
        const auto g = run_geometry<Real, Space>(m, pts, kind, GeometryKernel::team);
        check_same_geometry(r, g, tol, 7);
        // Other team shapes: one point per team of two threads, several points per team on vector lanes
        // (3 per team: an odd size, and a last team partly empty).
        std::vector<TeamShape> shapes{TeamShape::with_lanes(4, 3), TeamShape::with_lanes(1, 2)};
        if (!is_host_space_v<Space> || Space().concurrency() >= 2) shapes.push_back(TeamShape::with_threads(2));
        if (!is_host_space_v<Space>) shapes.push_back(TeamShape::with_threads(32));
        for (const TeamShape& shape : shapes) {
          CAPTURE(to_string(shape));
          const auto other = run_geometry<Real, Space>(m, pts, kind, GeometryKernel::team, shape);
          check_same_geometry(r, other, tol, 7);
        }
      }
    }
  }
  SECTION("a degenerate ground state gives a finite metric (the regularised 1/g)") {
    check_degenerate_ground_state<Real, Space>(GeometryKernel::team, tol);
  }
}

// The packed kernel (one SIMD pack of points per thread, the same formulas with the lanes innermost)
// against the sums over the whole spectrum, as the team kernel above: partial packs (23 points), a NaN
// point, N beyond the packed eigensolver's automatic range, every metric kind.
TEMPLATE_TEST_CASE("the packed geometry kernel gives the spectral sums' metric, tensor and dimension",
                   "[geometry][packed]", QGML_TEST_HOST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const double tol = std::is_same_v<Real, float> ? 2e-3 : 1e-10;
  for (const int n : {2, 4, 9, 24, 70}) {
    for (const int d : {2, 3, 5}) {
      CAPTURE(n, d);
      const HostMatrices m = gaussian_hermitian_matrices(d, n, 0.6, 50 + n + d);
      std::vector<double> pts = random_points(23, d, 1.0, 60 + n);
      pts[d * 7] = std::nan("");  // point 7 is not finite
      for (const MetricKind kind : {MetricKind::quantum, MetricKind::covariance, MetricKind::fubini_study}) {
        CAPTURE(to_string(kind));
        const auto r = run_geometry<Real, Space>(m, pts, kind, GeometryKernel::separate);
        const auto g = run_geometry<Real, Space>(m, pts, kind, GeometryKernel::packed);
        const auto a = run_geometry<Real, Space>(m, pts, kind, GeometryKernel::automatic);
        check_same_geometry(r, g, tol, 7);
        CHECK(geometry_difference(g.metric, a.metric) == 0);  // automatic is packed on CPUs
        CHECK(geometry_difference(g.berry, a.berry) == 0);
      }
    }
  }
  SECTION("a degenerate ground state gives a finite metric (the regularised 1/g)") {
    check_degenerate_ground_state<Real, Space>(GeometryKernel::packed, tol);
  }
}

TEST_CASE("resolve_geometry_kernel: packed on CPUs for 2 <= N <= 256, team on devices", "[geometry][team]") {
  using Host = Kokkos::DefaultHostExecutionSpace;
  CHECK(resolve_geometry_kernel<Host>(GeometryKernel::automatic, 8) == GeometryKernel::packed);
  CHECK(resolve_geometry_kernel<Host>(GeometryKernel::automatic, geometry_packed_max_n) == GeometryKernel::packed);
  CHECK(resolve_geometry_kernel<Host>(GeometryKernel::automatic, 1) == GeometryKernel::separate);
  CHECK(resolve_geometry_kernel<Host>(GeometryKernel::automatic, geometry_packed_max_n + 1) == GeometryKernel::team);
  CHECK(resolve_geometry_kernel<Host>(GeometryKernel::team, 3) == GeometryKernel::team);
  CHECK(resolve_geometry_kernel<Host>(GeometryKernel::separate, 64) == GeometryKernel::separate);
  CHECK_THROWS_AS(resolve_geometry_kernel<Host>(GeometryKernel::packed, 1), Error);
  CHECK_THROWS_AS(resolve_geometry_kernel<Host>(GeometryKernel::packed, geometry_packed_max_n + 1), Error);
  CHECK(parse_geometry_kernel("auto") == GeometryKernel::automatic);
  CHECK(parse_geometry_kernel("packed") == GeometryKernel::packed);
  CHECK(to_string(GeometryKernel::packed) == "packed");
  CHECK_THROWS_AS(parse_geometry_kernel("spectrum"), Error);
#if defined(KOKKOS_ENABLE_CUDA)
  CHECK(resolve_geometry_kernel<Kokkos::Cuda>(GeometryKernel::automatic, 8) == GeometryKernel::team);
  CHECK_THROWS_AS(resolve_geometry_kernel<Kokkos::Cuda>(GeometryKernel::packed, 8), Error);
#endif
}
