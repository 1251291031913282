#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "qgml/geometry/analyze_dimension.hpp"
#include "qgml/geometry/dimension_interval.hpp"
#include "qgml/geometry/quantum_geometry.hpp"
#include "qgml/linalg/batched_eigh.hpp"
#include "qgml/model/hamiltonian.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/model/observables.hpp"

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

// Points at distances 0.5 .. 2 from the origin in random directions.
std::vector<double> shell_points(int count, std::uint64_t seed) {
  std::vector<double> p = random_points(count, 3, 1.0, seed);
  for (int t = 0; t < count; ++t) {
    const double r = std::sqrt(p[3 * t] * p[3 * t] + p[3 * t + 1] * p[3 * t + 1] + p[3 * t + 2] * p[3 * t + 2]);
    const double radius = 0.5 + 1.5 * t / std::max(1, count - 1);
    for (int k = 0; k < 3; ++k) p[3 * t + k] *= radius / r;
  }
  return p;
}

// Rank 1 of 2: keeps what it would contribute to the collectives.
class RecordingRank final : public Communicator {
 public:
  std::vector<std::int64_t> histogram;
  std::vector<double> rows;
  std::vector<double> sums;  // the doubles it contributes (the error bar, computed on rank 0)
  int rank() const override { return 1; }
  int size() const override { return 2; }
  void allreduce_sum(double* data, std::size_t count, bool) override { sums.assign(data, data + count); }
  bool accepts_device_memory() const override { return true; }
  std::vector<std::vector<std::int64_t>> integer_sums;  // each integer all-reduce's contribution, in order
  void allreduce_sum(std::int64_t* data, std::size_t count) override {
    integer_sums.emplace_back(data, data + count);
    if (integer_sums.size() == 1) histogram = integer_sums.front();
  }
  void allreduce_max(std::int64_t*, std::size_t) override { throw std::logic_error("not used"); }
  std::vector<std::vector<double>> gathers;  // what it contributed to each gather, in order
  std::string root_broadcast;                // what rank 0 will broadcast (set by the test)
  std::vector<double> gather_to_root(const std::vector<double>& local) override {
    gathers.push_back(local);
    rows = local;
    return {};
  }
  std::string broadcast(const std::string&, int) override { return root_broadcast; }
  std::string agree_on_error(const std::string& e) override { return e; }
  [[noreturn]] void abort(int) override { throw std::logic_error("abort"); }
};

// Rank 0 of 2, whose peer contributed what a RecordingRank recorded.
class RootRank final : public Communicator {
 public:
  explicit RootRank(const RecordingRank& peer) : peer_(peer) {}
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void allreduce_sum(double* data, std::size_t count, bool) override {
    REQUIRE(peer_.sums.size() == count);
    for (std::size_t i = 0; i < count; ++i) data[i] += peer_.sums[i];
  }
  bool accepts_device_memory() const override { return true; }
  void allreduce_sum(std::int64_t* data, std::size_t count) override {
    REQUIRE(integer_sums_ < peer_.integer_sums.size());
    const std::vector<std::int64_t>& theirs = peer_.integer_sums[integer_sums_++];
    REQUIRE(theirs.size() == count);
    for (std::size_t i = 0; i < count; ++i) data[i] += theirs[i];
  }
  void allreduce_max(std::int64_t*, std::size_t) override { throw std::logic_error("not used"); }
  std::vector<double> gather_to_root(const std::vector<double>& local) override {
    REQUIRE(gathers_ < peer_.gathers.size());
    const std::vector<double>& theirs = peer_.gathers[gathers_++];
    std::vector<double> all = local;
    all.insert(all.end(), theirs.begin(), theirs.end());
    return all;
  }
  std::string broadcast(const std::string& text, int) override { return text; }
  std::string agree_on_error(const std::string& e) override { return e; }
  [[noreturn]] void abort(int) override { throw std::logic_error("abort"); }

 private:
  const RecordingRank& peer_;
  std::size_t gathers_ = 0, integer_sums_ = 0;
};

// What rank 0 of `ranks` broadcasts for the spread check's neighbours: the counts, then every point.
std::string shared_points(const std::vector<double>& counts, const std::vector<double>& points) {
  std::string bytes((counts.size() + points.size()) * sizeof(double), '\0');
  std::memcpy(bytes.data(), counts.data(), counts.size() * sizeof(double));
  std::memcpy(bytes.data() + counts.size() * sizeof(double), points.data(), points.size() * sizeof(double));
  return bytes;
}

}  // namespace

TEMPLATE_TEST_CASE("QuantumGeometry's xbar, E_0 and sigma^2 equal those of the observables path", "[geometry]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  using Mem = typename Space::memory_space;
  const Space exec;
  const double tol = std::is_same_v<Real, float> ? 1e-5 : 1e-12;
  for (auto [d, n] : {std::pair{3, 4}, std::pair{2, 7}, std::pair{4, 1}}) {
    auto config = qr_configuration<Real>(d, n, 23, exec);
    const int count = 40;
    auto points = to_device_points<Real, Space>(random_points(count, d, 1.5, 4), count, d);
    QuantumGeometry<Real, Space> geometry(d, n, count, false);
    geometry.compute(exec, config, points, GeometrySettings{});
    MatrixStack<Real, Mem> h("h", count, n, n), v("v", count, n, n);
    RealMatrix<Real, Mem> w("w", count, n);
    IntVector<Mem> info("info", count);
    build_hamiltonians(exec, config, points, h);
    batched_eigh(exec, h, w, v, info);
    GroundStateObservables<Real, Mem> obs(count, d);
    compute_ground_state_observables(exec, config, points, w, v, obs);
    auto gx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), geometry.xbar());
    auto ge = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), geometry.energy());
    auto gs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), geometry.sigma2());
    auto ox = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.xbar);
    auto oe = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.energy);
    auto os = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), obs.sigma2);
    for (int t = 0; t < count; ++t) {
      INFO("D = " << d << ", N = " << n << ", point " << t);
      CHECK(std::abs(ge(t) - oe(t)) <= tol * std::max(1.0, std::abs(double(oe(t)))));
      CHECK(std::abs(gs(t) - os(t)) <= tol * std::max(1.0, std::abs(double(os(t)))));
      for (int k = 0; k < d; ++k)
        CHECK(std::abs(gx(t, k) - ox(t, k)) <= tol * std::max(1.0, std::abs(double(ox(t, k)))));
    }
  }
}

// The fuzzy sphere (docs/math.md 7) with A_k = c J_k, j = (N - 1) / 2, at any x != 0: xbar = c j x / |x|,
// E_0 = ((|x| - c j)^2 + c^2 j) / 2, quantum metric {c j/|x|, c j/|x|, 0}, Fubini-Study {j/(2|x|^2), .., 0}.
TEMPLATE_TEST_CASE("fuzzy sphere closed forms from one geometry pass: xbar, E_0, quantum and Fubini-Study metric",
                   "[geometry]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const double tol = std::is_same_v<Real, float> ? 2e-4 : 1e-10;
  const int count = 24;
  const auto pts = shell_points(count, 9);
  auto points = to_device_points<Real, Space>(pts, count, 3);
  for (int n = 2; n <= 5; ++n) {
    const double j = 0.5 * (n - 1), c = 0.8;
    auto config = fuzzy_sphere_configuration<Real>(n, c, exec);
    for (MetricKind kind : {MetricKind::quantum, MetricKind::fubini_study}) {
      QuantumGeometry<Real, Space> geometry(3, n, count, false);  // no tensor storage needed for either metric
      GeometrySettings s;
      s.metric = kind;
      geometry.compute(exec, config, points, s);
      auto xbar = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), geometry.xbar());
      auto e0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), geometry.energy());
      auto ev = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), geometry.eigenvalues());
      auto dim = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), geometry.dimension());
      for (int t = 0; t < count; ++t) {
        const double* x = &pts[3 * t];
        const double r = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        INFO("N = " << n << ", " << to_string(kind) << ", |x| = " << r);
        for (int k = 0; k < 3; ++k) CHECK(std::abs(xbar(t, k) - c * j * x[k] / r) <= tol);
        CHECK(std::abs(e0(t) - 0.5 * ((r - c * j) * (r - c * j) + c * c * j)) <= tol);
        const double top = kind == MetricKind::quantum ? c * j / r : j / (2 * r * r);
        CHECK(std::abs(ev(t, 0) - top) <= tol * std::max(1.0, top));
        CHECK(std::abs(ev(t, 1) - top) <= tol * std::max(1.0, top));
        CHECK(std::abs(ev(t, 2)) <= tol);
        CHECK(dim(t) == 2);
      }
    }
  }
}

TEMPLATE_TEST_CASE("analyze_dimension with the Fubini-Study metric: rows, histogram and chunks", "[geometry]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const double tol = std::is_same_v<Real, float> ? 2e-4 : 1e-10;
  const int count = 30, n = 4;
  const double j = 1.5, c = 0.5;
  const auto pts = shell_points(count, 13);
  auto points = to_device_points<Real, Space>(pts, count, 3);
  auto config = fuzzy_sphere_configuration<Real>(n, c, exec);
  GeometrySettings s;
  s.metric = MetricKind::fubini_study;
  const DimensionAnalysis a = analyze_dimension(exec, config, points, s, 7);  // 5 chunks, the last partial
  CHECK(a.metric == MetricKind::fubini_study);
  CHECK(a.ambient_dimension == 3);
  CHECK(a.count == count);
  CHECK(a.failed_points == 0);
  CHECK(a.summary.points == count);
  CHECK(a.summary.histogram == std::vector<long>{0, 0, count, 0});
  CHECK(a.summary.mode == 2);
  REQUIRE(a.eigenvalues.size() == std::size_t(count) * 3);
  for (int t = 0; t < count; ++t) {
    const double* x = &pts[3 * t];
    const double r = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    INFO("point " << t << ", |x| = " << r);
    for (int k = 0; k < 3; ++k) {
      CHECK(std::abs(a.points[3 * t + k] - x[k]) <= tol);
      CHECK(std::abs(a.xbar[3 * t + k] - c * j * x[k] / r) <= tol);
    }
    CHECK(std::abs(a.eigenvalues[3 * t] - j / (2 * r * r)) <= tol * std::max(1.0, j / (2 * r * r)));
    CHECK(std::abs(a.eigenvalues[3 * t + 2]) <= tol);
    CHECK(std::abs(a.energy[t] - 0.5 * ((r - c * j) * (r - c * j) + c * c * j)) <= tol);
    CHECK(a.dimension[t] == 2);
  }
}

TEMPLATE_TEST_CASE("analyze_dimension over two ranks equals one rank over all points", "[geometry]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const int count = 33, d = 3, n = 3;
  auto config = qr_configuration<Real>(d, n, 2, exec);
  auto points = to_device_points<Real, Space>(random_points(count, d, 1.0, 6), count, d);
  const GeometrySettings s;
  const int split = 14;
  const auto first = Kokkos::subview(points, Kokkos::make_pair(0, split), Kokkos::ALL);
  const auto second = Kokkos::subview(points, Kokkos::make_pair(split, count), Kokkos::ALL);
  RecordingRank rank1;
  const auto x = random_points(count, d, 1.0, 6);
  std::vector<double> rounded(x.size());  // the points as Real, as both ranks hold them
  for (std::size_t i = 0; i < x.size(); ++i) rounded[i] = double(Real(x[i]));
  rank1.root_broadcast = shared_points({double(split), double(count - split)}, rounded);
  const DimensionAnalysis on_rank1 = analyze_dimension(exec, config, second, s, 5, rank1);
  CHECK(on_rank1.count == 0);  // the rows go to rank 0
  RootRank rank0(rank1);
  const DimensionAnalysis two = analyze_dimension(exec, config, first, s, 5, rank0);
  const DimensionAnalysis one = analyze_dimension(exec, config, points, s, 5);
  CHECK(two.count == count);
  CHECK(two.summary.histogram == one.summary.histogram);
  CHECK(two.summary.points == count);
  CHECK(two.failed_points == one.failed_points);
  CHECK(two.points == one.points);
  CHECK(two.xbar == one.xbar);
  CHECK(two.eigenvalues == one.eigenvalues);
  CHECK(two.energy == one.energy);
  CHECK(two.dimension == one.dimension);
  // The error bar: computed on rank 0 from every rank's rows, the same on both ranks.
  CHECK(rank1.sums == std::vector<double>(5, 0.0));  // rank 1 contributes zeros
  CHECK(two.summary.interval.resamples == one.summary.interval.resamples);
  CHECK(two.summary.interval.low == one.summary.interval.low);
  CHECK(two.summary.interval.high == one.summary.interval.high);
  CHECK(two.summary.interval.error == one.summary.interval.error);
  CHECK(two.summary.interval.mean_error == one.summary.interval.mean_error);
  CHECK(one.summary.interval.resamples == default_dimension_resamples);
  // The dimension per scale: histograms and radii summed over the ranks, the same as on one.
  REQUIRE(one.summary.scales.size() == s.spread.scales.size());
  REQUIRE(two.summary.scales.size() == one.summary.scales.size());
  for (std::size_t i = 0; i < one.summary.scales.size(); ++i) {
    CHECK(two.summary.scales[i].neighbours == one.summary.scales[i].neighbours);
    CHECK(two.summary.scales[i].points == one.summary.scales[i].points);
    CHECK(two.summary.scales[i].mode == one.summary.scales[i].mode);
    CHECK(two.summary.scales[i].fraction == one.summary.scales[i].fraction);
    CHECK(two.summary.scales[i].radius == one.summary.scales[i].radius);
    CHECK(one.summary.scales[i].radius > 0);
  }
  CHECK(two.summary.scale_verdict == one.summary.scale_verdict);
  CHECK_FALSE(one.summary.scale_verdict.empty());
}

TEST_CASE("QuantumGeometry asks for tensor storage only for the geometric tensor", "[geometry]") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const Space exec;
  auto config = fuzzy_sphere_configuration<double>(3, 1.0, exec);
  auto points = to_device_points<double, Space>(shell_points(4, 1), 4, 3);
  QuantumGeometry<double, Space> without(3, 3, 4, false);
  GeometrySettings s;
  s.metric = MetricKind::fubini_study;
  CHECK_NOTHROW(without.compute(exec, config, points, s));
  s.geometric_tensor = true;
  CHECK_THROWS_AS(without.compute(exec, config, points, s), Error);
  QuantumGeometry<double, Space> with(3, 3, 4, s);
  CHECK_NOTHROW(with.compute(exec, config, points, s));
  for (int t = 0; t < 4; ++t)
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) CHECK(std::abs(with.metric()(t, a, b) - with.fubini_study()(t, a, b)) <= 1e-15);
}
