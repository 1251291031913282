// qgml::standardize (data/standardize.hpp): mean per coordinate and one overall standard deviation
// over the points of all ranks.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "qgml/data/datasets.hpp"
#include "qgml/data/standardize.hpp"
#include "qgml/parallel/communicator.hpp"

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;

namespace {

// Mean per coordinate and overall standard deviation of row-major T x D points, in double.
struct HostMoments {
  std::vector<double> mean;
  double sd = 0;
};
HostMoments moments(const std::vector<double>& x, int d) {
  const int t = int(x.size()) / d;
  HostMoments m{std::vector<double>(d, 0.0), 0.0};
  for (int i = 0; i < t; ++i)
    for (int k = 0; k < d; ++k) m.mean[k] += x[i * d + k] / t;
  double var = 0;
  for (int i = 0; i < t; ++i)
    for (int k = 0; k < d; ++k) var += (x[i * d + k] - m.mean[k]) * (x[i * d + k] - m.mean[k]);
  m.sd = std::sqrt(var / (double(t) * d));
  return m;
}

// Points far from the origin with different spreads per coordinate: x_tk = 3 + k + (1 + k) g_tk.
std::vector<double> shifted_points(int count, int d, std::uint64_t seed) {
  std::vector<double> x = random_points(count, d, 1.0, seed);
  for (int i = 0; i < count; ++i)
    for (int k = 0; k < d; ++k) x[i * d + k] = 3.0 + k + (1.0 + k) * x[i * d + k];
  return x;
}

template <class Real, class Space>
std::vector<double> to_host(const RealMatrix<Real, typename Space::memory_space>& x) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  std::vector<double> r;
  for (int i = 0; i < int(h.extent(0)); ++i)
    for (int k = 0; k < int(h.extent(1)); ++k) r.push_back(h(i, k));
  return r;
}

// Rank 0 of two, with rank 1 played by this object: it holds rank 1's points and answers each
// collective of standardize with rank 1's share, computed on the host (the point count, the binary
// exponent of the largest magnitude, the coordinate sums of the points divided by 2^e, then the squared
// deviations from the mean that the sums give).
class TwoRankCommunicator final : public Communicator {
 public:
  TwoRankCommunicator(std::vector<double> peer, int d) : peer_(std::move(peer)), d_(d) {}
  int rank() const override { return 0; }
  int size() const override { return 2; }
  bool accepts_device_memory() const override { return false; }
  void allreduce_sum(std::int64_t* data, std::size_t count) override {
    REQUIRE(count == 1);
    total_ = *data + std::int64_t(peer_.size()) / d_;
    *data = total_;
  }
  void allreduce_sum(double* data, std::size_t count, bool device_memory) override {
    REQUIRE(!device_memory);
    const int rows = int(peer_.size()) / d_;
    if (++calls_ == 1) {  // coordinate sums
      REQUIRE(int(count) == d_);
      for (int k = 0; k < d_; ++k) {
        for (int i = 0; i < rows; ++i) data[k] += std::ldexp(peer_[i * d_ + k], -exponent_);
        mean_.push_back(data[k] / double(total_));
      }
    } else {  // squared deviations from the mean
      REQUIRE(count == 1);
      for (int i = 0; i < rows; ++i)
        for (int k = 0; k < d_; ++k) {
          const double y = std::ldexp(peer_[i * d_ + k], -exponent_) - mean_[k];
          data[0] += y * y;
        }
    }
  }
  void allreduce_max(std::int64_t* data, std::size_t count) override {
    REQUIRE(count == 1);
    double largest = 0;
    for (double v : peer_) largest = std::max(largest, std::abs(v));
    int e = 0;
    std::frexp(largest, &e);
    exponent_ = int(std::max<std::int64_t>(*data, e));
    *data = exponent_;
  }
  std::vector<double> gather_to_root(const std::vector<double>&) override { throw std::logic_error("not used"); }
  std::string broadcast(const std::string&, int) override { throw std::logic_error("not used"); }
  std::string agree_on_error(const std::string& e) override { return e; }
  [[noreturn]] void abort(int) override { throw std::logic_error("not used"); }

 private:
  std::vector<double> peer_;
  int d_;
  std::int64_t total_ = 0;
  int calls_ = 0, exponent_ = 0;
  std::vector<double> mean_;
};

}  // namespace

TEMPLATE_TEST_CASE("standardize: zero mean per coordinate, unit overall standard deviation, shape kept",
                   "[data][standardize]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const double tol = std::is_same_v<Real, float> ? 1e-5 : 1e-13;
  const int count = 500, d = 3;
  const std::vector<double> x = shifted_points(count, d, 41);
  std::vector<double> rounded;  // the points as the device holds them
  for (double v : x) rounded.push_back(double(Real(v)));
  const HostMoments before = moments(rounded, d);
  auto points = to_device_points<Real, Space>(x, count, d);
  SelfCommunicator self;
  const Standardization s = standardize(exec, points, self);
  REQUIRE(s.mean.size() == std::size_t(d));
  for (int k = 0; k < d; ++k) CHECK(std::abs(s.mean[k] - before.mean[k]) <= tol * std::abs(before.mean[k]));
  CHECK(std::abs(s.scale - before.sd) <= tol * before.sd);
  const std::vector<double> y = to_host<Real, Space>(points);
  const HostMoments after = moments(y, d);
  for (int k = 0; k < d; ++k) CHECK(std::abs(after.mean[k]) <= 10 * tol);
  CHECK(std::abs(after.sd - 1) <= 10 * tol);
  // One scale for all coordinates: the coordinates keep their ratios of spreads (1 : 2 : 3 here up to
  // sampling), i.e. y = (x - mean) / scale exactly.
  for (int i = 0; i < count; ++i)
    for (int k = 0; k < d; ++k)
      CHECK(std::abs(y[i * d + k] - (rounded[i * d + k] - s.mean[k]) / s.scale) <=
            10 * tol * (1 + std::abs(y[i * d + k])));
}

TEMPLATE_TEST_CASE("standardize: identical points are refused, also where rounding gives a tiny spread",
                   "[data][standardize][security]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  SelfCommunicator self;
  const int count = 7, d = 2;
  // 0.1 is not a binary fraction: the mean of seven copies is not exactly 0.1, and the spread is
  // rounding (about 1e-17), not 0.
  for (const std::vector<double>& row :
       {std::vector<double>{1.5, -2.0}, std::vector<double>{0.1, 0.7}, std::vector<double>{0.0, 0.0}}) {
    std::vector<double> x;
    for (int i = 0; i < count; ++i) x.insert(x.end(), row.begin(), row.end());
    auto points = to_device_points<Real, Space>(x, count, d);
    CHECK_THROWS_WITH(standardize(exec, points, self), Catch::Matchers::ContainsSubstring("identical"));
  }
}

TEMPLATE_TEST_CASE("standardize: a non-finite point is refused", "[data][standardize][security]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  SelfCommunicator self;
  std::vector<double> x = shifted_points(20, 3, 5);
  x[17] = std::nan("");
  auto points = to_device_points<Real, Space>(x, 20, 3);
  CHECK_THROWS_WITH(data_statistics(exec, points, self), Catch::Matchers::ContainsSubstring("not finite"));
  x[17] = HUGE_VAL;
  auto more = to_device_points<Real, Space>(x, 20, 3);
  CHECK_THROWS_WITH(data_statistics(exec, more, self), Catch::Matchers::ContainsSubstring("not finite"));
}

// Issue 50: the sums of squares of data at 1e200 overflowed (every point became 0) and those of data
// at 1e-200 underflowed (reported as centred at unit spread).
TEST_CASE("standardize: data scaled by 1e200, 1e-200 or 1e-310 standardise to the unscaled data's values",
          "[data][standardize][security]") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const Space exec;
  SelfCommunicator self;
  const int count = 300, d = 3;
  const std::vector<double> x = shifted_points(count, d, 47);
  auto reference_points = to_device_points<double, Space>(x, count, d);
  const Standardization reference = standardize(exec, reference_points, self);
  const std::vector<double> expected = to_host<double, Space>(reference_points);
  for (const double factor : {1e200, 1e-200, 1e300, 1e-300, 1e-310, 0.5}) {
    INFO("factor " << factor);
    std::vector<double> scaled = x;
    for (double& v : scaled) v *= factor;
    auto points = to_device_points<double, Space>(scaled, count, d);
    const Standardization s = standardize(exec, points, self);
    // The subnormal factor keeps only about 14 significant bits of each point.
    const double tol = factor < 1e-307 ? 1e-3 : 1e-12;
    CHECK(std::abs(s.scale / factor - reference.scale) <= tol * reference.scale);
    for (int k = 0; k < d; ++k) CHECK(std::abs(s.mean[k] / factor - reference.mean[k]) <= tol * reference.mean[k]);
    const std::vector<double> y = to_host<double, Space>(points);
    for (std::size_t i = 0; i < y.size(); ++i)
      REQUIRE(std::abs(y[i] - expected[i]) <= tol * (1 + std::abs(expected[i])));
  }
}

TEST_CASE("standardize: a power-of-two scale changes no bit of the statistics", "[data][standardize]") {
  using Space = Kokkos::DefaultHostExecutionSpace;
  const Space exec;
  SelfCommunicator self;
  const int count = 100, d = 2;
  const std::vector<double> x = shifted_points(count, d, 53);
  auto points = to_device_points<double, Space>(x, count, d);
  const Standardization s = data_statistics(exec, points, self);
  const HostMoments m = moments(x, d);
  CHECK(std::abs(s.scale - m.sd) <= 1e-14 * m.sd);
  std::vector<double> scaled = x;
  for (double& v : scaled) v = std::ldexp(v, 900);
  auto big = to_device_points<double, Space>(scaled, count, d);
  const Standardization t = data_statistics(exec, big, self);
  CHECK(t.scale == std::ldexp(s.scale, 900));
  for (int k = 0; k < d; ++k) CHECK(t.mean[k] == std::ldexp(s.mean[k], 900));
}

TEMPLATE_TEST_CASE("standardize over two ranks uses the mean and spread of all points", "[data][standardize]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const double tol = std::is_same_v<Real, float> ? 1e-5 : 1e-13;
  const int d = 2, count = 40, first = 15;  // rank 0 holds rows [0, 15), rank 1 rows [15, 40)
  std::vector<double> x = shifted_points(count, d, 43);
  for (int i = first; i < count; ++i)  // rank 1's points lie elsewhere: its shard alone has another mean
    for (int k = 0; k < d; ++k) x[i * d + k] += 2.0;
  for (auto& v : x) v = double(Real(v));
  const std::vector<double> mine(x.begin(), x.begin() + first * d), peer(x.begin() + first * d, x.end());
  const HostMoments all = moments(x, d), local = moments(mine, d);
  auto points = to_device_points<Real, Space>(mine, first, d);
  TwoRankCommunicator comm(peer, d);
  const Standardization s = standardize(exec, points, comm);
  for (int k = 0; k < d; ++k) {
    CHECK(std::abs(s.mean[k] - all.mean[k]) <= tol * std::abs(all.mean[k]));
    CHECK(std::abs(s.mean[k] - local.mean[k]) > 0.5);  // the shard alone would give another mean
  }
  CHECK(std::abs(s.scale - all.sd) <= tol * all.sd);
  const std::vector<double> y = to_host<Real, Space>(points);
  for (int i = 0; i < first; ++i)
    for (int k = 0; k < d; ++k)
      CHECK(std::abs(y[i * d + k] - (mine[i * d + k] - all.mean[k]) / all.sd) <=
            10 * tol * (1 + std::abs(y[i * d + k])));
}

TEST_CASE("standardize auto: needed unless the spread is within a factor 2 of 1 and the data are centred",
          "[data][standardize]") {
  auto st = [](std::vector<double> mean, double scale) { return Standardization{std::move(mean), scale}; };
  CHECK_FALSE(standardization_needed(st({0.0, 0.0, 0.0}, 1.0)));
  CHECK_FALSE(standardization_needed(st({0.3, -0.3}, 0.6)));  // a unit circle: s = 0.71
  CHECK(standardization_needed(st({0.0, 0.0}, 7.1)));         // a circle of radius 10
  CHECK(standardization_needed(st({0.0, 0.0, 0.0}, 0.3)));    // a 10-sphere of radius 1 in R^11: s = 0.30
  CHECK(standardization_needed(st({5.0, 5.0}, 1.0)));         // off-centre
  CHECK_FALSE(standardization_needed(st({1.0, -1.0}, 1.0)));  // mean within one spread
}

TEST_CASE("data_statistics leaves the points alone; standardize is statistics then apply", "[data][standardize]") {
  using Space = Kokkos::DefaultExecutionSpace;
  const Space exec;
  SelfCommunicator self;
  auto a = sphere_points<double>(exec, 300, 3, 0.1, 5);
  Kokkos::View<double**, Space::memory_space> b("b", a.extent(0), a.extent(1));
  Kokkos::deep_copy(b, a);
  const auto before = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  const Standardization s1 = data_statistics(exec, a, self);
  const auto after = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  for (std::size_t i = 0; i < a.span(); ++i) REQUIRE(before.data()[i] == after.data()[i]);
  apply_standardization(exec, a, s1);
  const Standardization s2 = standardize(exec, b, self);
  CHECK(s1.scale == s2.scale);
  CHECK(s1.mean == s2.mean);
  const auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  const auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  // By index: a and b may differ in layout (LayoutLeft is the default on GPUs).
  for (std::size_t t = 0; t < a.extent(0); ++t)
    for (std::size_t k = 0; k < a.extent(1); ++k) REQUIRE(ha(t, k) == hb(t, k));
}
