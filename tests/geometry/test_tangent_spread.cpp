// The spread check of the gap rule's directions and the local covariance's readings
// (geometry/tangent_spread.hpp; docs/dimension.md, "The spread check", "The local covariance"), and how
// the readings are combined with the checked estimate (geometry/local_dimension.hpp), on metrics and
// points built by hand.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "qgml/geometry/analyze_dimension.hpp"
#include "qgml/geometry/dimension_estimate.hpp"
#include "qgml/geometry/local_dimension.hpp"
#include "qgml/geometry/tangent_spread.hpp"

#include "test_support.hpp"

using namespace qgml;
using namespace qgml::test;
using Catch::Matchers::WithinAbs;

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Host = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

// A fixed rotation of R^3 (Rodrigues' formula about a unit axis), row-major.
std::vector<double> rotation() {
  const double ax[3] = {1 / std::sqrt(3.0), 1 / std::sqrt(3.0), 1 / std::sqrt(3.0)}, c = std::cos(0.7),
               s = std::sin(0.7);
  const double k[9] = {0, -ax[2], ax[1], ax[2], 0, -ax[0], -ax[1], ax[0], 0};
  std::vector<double> r(9);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double kk = 0;
      for (int m = 0; m < 3; ++m) kk += k[3 * i + m] * k[3 * m + j];
      r[3 * i + j] = (i == j ? 1.0 : 0.0) + s * k[3 * i + j] + (1 - c) * kk;
    }
  return r;
}

// `count` points u (uniform in [-1, 1]^3 from `seed`, the third coordinate times `thickness`) rotated,
// x = R u; every point's metric R diag(g) R^T and estimate `d0`, on the device.
struct SlabInputs {
  Kokkos::View<double**, Kokkos::LayoutRight> points;
  Kokkos::View<double***, Kokkos::LayoutRight> metric;
  IntVector<Kokkos::DefaultExecutionSpace::memory_space> dimension;
};

SlabInputs slab_inputs(int count, double thickness, const std::vector<double>& g, int d0, std::uint64_t seed) {
  const std::vector<double> r = rotation();
  std::vector<double> u = random_points(count, 3, 1.0, seed);
  SlabInputs in{Kokkos::View<double**, Kokkos::LayoutRight>("points", count, 3),
                Kokkos::View<double***, Kokkos::LayoutRight>("metric", count, 3, 3),
                IntVector<Kokkos::DefaultExecutionSpace::memory_space>("dimension", count)};
  auto hp = Kokkos::create_mirror_view(in.points);
  auto hm = Kokkos::create_mirror_view(in.metric);
  auto hd = Kokkos::create_mirror_view(in.dimension);
  for (int t = 0; t < count; ++t) {
    u[3 * std::size_t(t) + 2] *= thickness;
    for (int i = 0; i < 3; ++i) {
      double v = 0;
      for (int j = 0; j < 3; ++j) v += r[3 * i + j] * u[3 * std::size_t(t) + j];
      hp(t, i) = v;
    }
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double v = 0;
        for (int m = 0; m < 3; ++m) v += r[3 * i + m] * g[m] * r[3 * j + m];
        hm(t, i, j) = v;
      }
    hd(t) = d0;
  }
  Kokkos::deep_copy(in.points, hp);
  Kokkos::deep_copy(in.metric, hm);
  Kokkos::deep_copy(in.dimension, hd);
  return in;
}

// The slab above (seed 7) through the check; returns the estimates after it.
std::vector<int> checked(int count, double thickness, const std::vector<double>& g, int d0,
                         const TangentSpreadSettings& s) {
  const SlabInputs in = slab_inputs(count, thickness, g, d0, 7);
  const auto& points = in.points;
  const auto& metric = in.metric;
  const auto& dimension = in.dimension;
  // Two chunks, so that the second's rows are found by their offset among all points.
  const int half = count / 2;
  TangentSpreadCheck<double, Exec> check(3, count - half, s);
  const Exec exec;
  for (int start : {0, half}) {
    const int m = start == 0 ? half : count - half;
    const auto range = Kokkos::make_pair(start, start + m);
    check.apply(exec, points, Kokkos::subview(points, range, Kokkos::ALL), start,
                Kokkos::subview(metric, range, Kokkos::ALL, Kokkos::ALL), Kokkos::subview(dimension, range), s,
                DimensionEstimatorSettings{});
  }
  exec.fence();
  auto hd = Kokkos::create_mirror_view(dimension);
  Kokkos::deep_copy(hd, dimension);
  return std::vector<int>(hd.data(), hd.data() + count);
}

int count_of(const std::vector<int>& v, int value) {
  int n = 0;
  for (int x : v) n += x == value;
  return n;
}

}  // namespace

TEST_CASE("spread check rule: promotes filled directions, demotes empty ones", "[geometry][dimension][spread]") {
  // A solid 5-ball as the model reads it: the fifth direction flattened (e_4 = 0.005 e_0), but the data
  // spread in it as in the others: 4 -> 5.
  const double ball_e[5] = {1, 0.8, 0.6, 0.3, 0.005}, ball_s[5] = {1, 0.97, 0.95, 0.93, 0.95};
  CHECK(spread_checked_dimension(ball_e, ball_s, 5, 4, 1e-3, 0.02, 0.7, 1.1, 0.4) == 5);
  // A flat torus: the third direction is a circle's normal, followed by 10 %, with no data spread in
  // it: 3 -> 2.
  const double torus_e[4] = {1, 0.93, 0.1, 2e-4}, torus_s[4] = {1, 0.99, 0.09, 0.13};
  CHECK(spread_checked_dimension(torus_e, torus_s, 4, 3, 1e-3, 0.02, 0.7, 1.1, 0.4) == 2);
  // Above the band (0.02 e_0) the gap rule's decision stands: a noisy curve's normal at 0.04 e_0.
  const double curve_e[2] = {1, 0.04}, curve_s[2] = {1, 1.1};
  CHECK(spread_checked_dimension(curve_e, curve_s, 2, 1, 1e-3, 0.02, 0.7, 1.1, 0.4) == 1);
  CHECK(spread_checked_dimension(curve_e, curve_s, 2, 1, 1e-3, 0.05, 0.7, 1.1, 0.4) == 2);
  // A normal direction wider than the tangents is curvature, not a flattened tangent: not promoted.
  const double sphere_e[3] = {1, 0.8, 0.001 * 1.5}, sphere_s[3] = {1, 0.9, 1.3};
  CHECK(spread_checked_dimension(sphere_e, sphere_s, 3, 2, 1e-3, 0.02, 0.7, 1.1, 0.4) == 2);
  CHECK(spread_checked_dimension(sphere_e, sphere_s, 3, 2, 1e-3, 0.02, 0.7, 1.5, 0.4) == 3);
  // Below the noise floor nothing is promoted, however wide the data.
  const double flat_e[3] = {1, 0.9, 1e-4}, wide_s[3] = {1, 1, 1};
  CHECK(spread_checked_dimension(flat_e, wide_s, 3, 2, 1e-3, 0.02, 0.7, 1.1, 0.4) == 2);
  // Never below 1, never above D; failed points (-1) and d = 0 stay.
  const double one_s[3] = {1, 0, 0};
  CHECK(spread_checked_dimension(flat_e, one_s, 3, 3, 1e-3, 0.02, 0.7, 1.1, 0.4) == 1);
  CHECK(spread_checked_dimension(flat_e, one_s, 3, 1, 1e-3, 0.02, 0.7, 1.1, 0.4) == 1);
  CHECK(spread_checked_dimension(ball_e, ball_s, 5, 5, 1e-3, 0.02, 0.7, 1.1, 0.4) == 5);
  CHECK(spread_checked_dimension(ball_e, ball_s, 5, -1, 1e-3, 0.02, 0.7, 1.1, 0.4) == -1);
  CHECK(spread_checked_dimension(ball_e, ball_s, 5, 0, 1e-3, 0.02, 0.7, 1.1, 0.4) == 0);
  // A zero first spread (every neighbour on the point) decides nothing.
  const double zero_s[5] = {0, 0, 0, 0, 0};
  CHECK(spread_checked_dimension(ball_e, zero_s, 5, 4, 1e-3, 0.02, 0.7, 1.1, 0.4) == 4);
}

TEST_CASE("spread check: neighbours, eigenvectors and spreads on the device", "[geometry][dimension][spread]") {
  TangentSpreadSettings on;  // the kernel's mechanics; 50 neighbours' spreads vary by +-20 % about 1
  on.neighbours = 50;
  on.promote_max = 2;
  // A solid 3-d box whose metric flattens its third direction (0.004 e_0): -> 3 (but at a few corners,
  // where the neighbours lie to one side).
  CHECK(count_of(checked(600, 1.0, {1.0, 0.6, 0.004}, 2, on), 3) >= 580);
  // A flat square (third coordinate 0) whose metric follows the normal by 10 %: every point -> 2.
  CHECK(count_of(checked(600, 0.0, {1.0, 0.9, 0.1}, 3, on), 2) == 600);
  // The square with a clear gap stays 2; a thin slab (0.05) is not promoted either.
  CHECK(count_of(checked(600, 0.0, {1.0, 0.9, 1e-6}, 2, on), 2) == 600);
  CHECK(count_of(checked(600, 0.05, {1.0, 0.9, 0.004}, 2, on), 2) == 600);
  // Switched off, or with no neighbour to look at, nothing changes.
  TangentSpreadSettings off = on;
  off.enabled = false;
  CHECK(count_of(checked(600, 1.0, {1.0, 0.6, 0.004}, 2, off), 2) == 600);
  CHECK(count_of(checked(1, 1.0, {1.0, 0.6, 0.004}, 2, on), 2) == 1);
  // Neighbours among a strided subset (max_reference 100 of 600 points) read the box the same way.
  TangentSpreadSettings strided = on;
  strided.max_reference = 100;
  strided.neighbours = 20;
  CHECK(tangent_spread_stride(600, 100) == 6);
  CHECK(count_of(checked(600, 1.0, {1.0, 0.6, 0.004}, 2, strided), 3) >= 520);
}

namespace {

// A comb: `lines` parallel segments x in [-1, 1] at y = 0, gap, 2 gap, ... (`per_line` points each, in 2-d);
// every point's metric diag(1, 0.01) (the second direction in the band), its gap-rule estimate 1. Returns
// the check's estimate at k and, per scale, the estimates (scale-major).
struct CombReading {
  std::vector<int> estimate, scales, local;
};
CombReading comb(int lines, int per_line, double gap, const TangentSpreadSettings& s) {
  const int count = lines * per_line;
  const std::vector<double> u = random_points(count, 1, 1.0, 11);
  Kokkos::View<double**, Kokkos::LayoutRight> points("points", count, 2);
  Kokkos::View<double***, Kokkos::LayoutRight> metric("metric", count, 2, 2);
  IntVector<Kokkos::DefaultExecutionSpace::memory_space> dimension("dimension", count);
  auto hp = Kokkos::create_mirror_view(points);
  auto hm = Kokkos::create_mirror_view(metric);
  auto hd = Kokkos::create_mirror_view(dimension);
  for (int t = 0; t < count; ++t) {
    hp(t, 0) = u[std::size_t(t)];
    hp(t, 1) = gap * (t % lines);
    hm(t, 0, 0) = 1.0;
    hm(t, 1, 1) = 0.01;
    hd(t) = 1;
  }
  Kokkos::deep_copy(points, hp);
  Kokkos::deep_copy(metric, hm);
  Kokkos::deep_copy(dimension, hd);
  TangentSpreadCheck<double, Exec> check(2, count, s);
  const Exec exec;
  check.apply(exec, points, points, 0, metric, dimension, s, DimensionEstimatorSettings{});
  exec.fence();
  CombReading r;
  Kokkos::deep_copy(hd, dimension);
  r.estimate.assign(hd.data(), hd.data() + count);
  auto hs = Kokkos::create_mirror_view(check.scale_dimension());
  Kokkos::deep_copy(hs, check.scale_dimension());
  for (int sc = 0; sc < check.scales(); ++sc)
    for (int t = 0; t < count; ++t) r.scales.push_back(hs(t, sc));
  if (check.local()) {
    auto hl = Kokkos::create_mirror_view(check.local_dimension());
    Kokkos::deep_copy(hl, check.local_dimension());
    for (int sc = 0; sc < check.scales(); ++sc)
      for (int t = 0; t < count; ++t) r.local.push_back(hl(t, sc));
  }
  return r;
}

std::vector<int> scale_of(const CombReading& r, int scale, int count) {
  return std::vector<int>(r.scales.begin() + std::ptrdiff_t(scale) * count,
                          r.scales.begin() + std::ptrdiff_t(scale + 1) * count);
}

}  // namespace

TEST_CASE("dimension per scale: a comb of lines reads 1 among few neighbours, 2 among many",
          "[geometry][dimension][spread][scales]") {
  TangentSpreadSettings s;
  s.neighbours = 50;
  s.scales = {5, 300};
  const int lines = 10, per_line = 100, count = lines * per_line;
  const CombReading r = comb(lines, per_line, 0.1, s);
  REQUIRE(r.scales.size() == 2 * std::size_t(count));
  // 5 neighbours lie on the point's own line (spacing 0.02 along it, 0.1 across): no spread across.
  CHECK(count_of(scale_of(r, 0, count), 1) >= 950);
  // 300 neighbours (radius about 0.4) fill a disc of the comb: as wide across as along, except near its
  // ends and edges, where the neighbourhood is one-sided.
  CHECK(count_of(scale_of(r, 1, count), 2) >= 600);
  // The scales do not change the estimate at k: the same as without them, point for point.
  TangentSpreadSettings none = s;
  none.scales.clear();
  const CombReading plain = comb(lines, per_line, 0.1, none);
  CHECK(plain.scales.empty());
  CHECK(plain.estimate == r.estimate);
  // A scale beyond the reference points reads with all of them; a point with no estimate has none.
  TangentSpreadSettings wide = s;
  wide.scales = {5, 5000};
  const CombReading all = comb(lines, per_line, 0.1, wide);
  CHECK(count_of(scale_of(all, 1, count), -1) == 0);
  CHECK(all.estimate == r.estimate);
}

TEST_CASE("dimension per scale: the settings are checked", "[geometry][dimension][spread][scales]") {
  TangentSpreadSettings s;
  CHECK_NOTHROW(check_tangent_spread_scales(s));
  s.scales = {10, 10};
  CHECK_THROWS_WITH(check_tangent_spread_scales(s), Catch::Matchers::ContainsSubstring("ascending order"));
  s.scales = {0, 10};
  CHECK_THROWS_WITH(check_tangent_spread_scales(s), Catch::Matchers::ContainsSubstring(">= 1"));
  s.scales = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  CHECK_THROWS_WITH(check_tangent_spread_scales(s), Catch::Matchers::ContainsSubstring("at most 8 scales"));
  s.scales = {7, 300};
  s.neighbours = 50;
  CHECK(tangent_spread_search(s) == 300);
  s.scales.clear();
  CHECK(tangent_spread_search(s) == 50);
}

TEST_CASE("dimension per scale: the verdict sentence", "[geometry][dimension][scales]") {
  CHECK(scale_verdict({}).empty());
  CHECK(scale_verdict({{10, 0.05, 100, 2, 0.9}, {50, 0.1, 100, 2, 0.95}}) ==
        "the same at every scale: d = 2 at k = 10 .. 50 (radius 0.05 .. 0.1)");
  CHECK(
      scale_verdict({{10, 0.02, 100, 1, 0.9}, {20, 0.05, 100, 1, 0.8}, {50, 0.1, 0, -1, 0}, {100, 0.3, 100, 2, 0.7}}) ==
      "scale-dependent: d = 1 at k = 10 .. 20 (radius 0.02 .. 0.05), d = 2 at k = 100 (radius 0.3)");
}

TEST_CASE("spread check rule: a gap in the spreads below a flattened direction promotes it",
          "[geometry][dimension][spread]") {
  // A 17-cube in R^18 as the model reads it (median spectra of the benchmark): the 17th side flattened to
  // 0.002 e_0 with half the spread of the first, the normal at 5e-7 e_0 with none.
  std::vector<double> e(18), s(18);
  for (int j = 0; j < 16; ++j) {
    e[std::size_t(j)] = std::pow(0.78, j);
    s[std::size_t(j)] = 1 - 0.02 * j;
  }
  e[16] = 0.002, s[16] = 0.49, e[17] = 5e-7, s[17] = 0.002;
  // The window (0.7 .. 1.1 s_0) alone does not promote it; the gap below does (0.49 >= 3 x 0.002).
  CHECK(spread_checked_dimension(e.data(), s.data(), 18, 16, 1e-3, 0.02, 0.7, 1.1, 0.4) == 16);
  CHECK(spread_checked_dimension(e.data(), s.data(), 18, 16, 1e-3, 0.02, 0.7, 1.1, 0.4, 3.0, 0.3) == 17);
  // With noise of 0.2 s_0 in the normal direction the gap is 2.45 < 3: not promoted; a spread below
  // 0.3 s_0 is not promoted whatever lies below it.
  s[17] = 0.2;
  CHECK(spread_checked_dimension(e.data(), s.data(), 18, 16, 1e-3, 0.02, 0.7, 1.1, 0.4, 3.0, 0.3) == 16);
  s[17] = 0.002, s[16] = 0.25;
  CHECK(spread_checked_dimension(e.data(), s.data(), 18, 16, 1e-3, 0.02, 0.7, 1.1, 0.4, 3.0, 0.3) == 16);
  // The last direction has nothing below it: only the window promotes it.
  const double ball_e[3] = {1, 0.6, 0.005}, ball_s[3] = {1, 0.9, 0.5};
  CHECK(spread_checked_dimension(ball_e, ball_s, 3, 2, 1e-3, 0.02, 0.7, 1.1, 0.4, 3.0, 0.3) == 2);
}

TEST_CASE("spread check: the automatic k is 2 % of the reference points", "[geometry][dimension][spread]") {
  CHECK(resolve_spread_neighbours(0, 2500, 4096) == 50);
  CHECK(resolve_spread_neighbours(0, 2000, 4096) == 40);
  CHECK(resolve_spread_neighbours(0, 100, 4096) == 10);  // at least 10
  // 10000 points: every 3rd (3334) is a reference point, 2 % of them.
  CHECK(resolve_spread_neighbours(0, 10000, 4096) == 67);
  CHECK(resolve_spread_neighbours(0, 100000000, 1 << 30) == 400);  // at most 400
  CHECK(resolve_spread_neighbours(7, 2500, 4096) == 7);            // as set
  TangentSpreadSettings s;
  s.scales = {10};
  CHECK(tangent_spread_search(s, 2500) == 50);
  CHECK(tangent_spread_search(s) == 400);  // automatic, for any number of points
}

TEST_CASE("local covariance: a comb reads 1 among few neighbours and 2 among many; a box in R^5 reads 3",
          "[geometry][dimension][spread][local]") {
  TangentSpreadSettings s;
  s.neighbours = 50;
  s.scales = {5, 300};
  const int lines = 10, per_line = 100, count = lines * per_line;
  const CombReading r = comb(lines, per_line, 0.1, s);
  REQUIRE(r.local.size() == 2 * std::size_t(count));
  const std::vector<int> near(r.local.begin(), r.local.begin() + count), far(r.local.begin() + count, r.local.end());
  CHECK(count_of(near, 1) >= 950);  // 5 points of the point's own line
  CHECK(count_of(far, 2) >= 950);   // 300 points of 8 lines: a filled disc
  TangentSpreadSettings off = s;
  off.local = false;
  const CombReading plain = comb(lines, per_line, 0.1, off);
  CHECK(plain.local.empty());
  CHECK(plain.estimate == r.estimate);
  CHECK(plain.scales == r.scales);

  // A uniform 3-d box [-1, 1]^3 in R^5 (two zero coordinates, rotated by a fixed orthogonal map): the
  // Gram matrix of 4 points (k < D) reads at most 3, the covariance of 30 and 200 reads 3 at every point.
  const int n = 800, dims = 5;
  const std::vector<double> u = random_points(n, 3, 1.0, 5);
  Kokkos::View<double**, Kokkos::LayoutRight> points("points", n, dims);
  Kokkos::View<double***, Kokkos::LayoutRight> metric("metric", n, dims, dims);
  IntVector<Kokkos::DefaultExecutionSpace::memory_space> dimension("dimension", n);
  auto hp = Kokkos::create_mirror_view(points);
  auto hm = Kokkos::create_mirror_view(metric);
  auto hd = Kokkos::create_mirror_view(dimension);
  const double q[5][3] = {{0.6, 0, 0.8}, {0, 1, 0}, {0.8, 0, -0.6}, {0, 0, 0}, {0, 0, 0}};
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i < dims; ++i) {
      double v = 0;
      for (int j = 0; j < 3; ++j) v += q[i][j] * u[std::size_t(3 * t + j)];
      hp(t, i) = v;
      hm(t, i, i) = i < 3 ? 1.0 : 1e-6;
    }
    hd(t) = 3;
  }
  Kokkos::deep_copy(points, hp);
  Kokkos::deep_copy(metric, hm);
  Kokkos::deep_copy(dimension, hd);
  TangentSpreadSettings box;
  box.neighbours = 30;
  box.scales = {4, 30, 200};
  TangentSpreadCheck<double, Exec> check(dims, n, box, n);
  const Exec exec;
  check.apply(exec, points, points, 0, metric, dimension, box, DimensionEstimatorSettings{});
  exec.fence();
  auto hl = Kokkos::create_mirror_view(check.local_dimension());
  Kokkos::deep_copy(hl, check.local_dimension());
  int at_most_3 = 0, three_30 = 0, three_200 = 0;
  for (int t = 0; t < n; ++t) {
    at_most_3 += hl(t, 0) >= 1 && hl(t, 0) <= 3;
    three_30 += hl(t, 1) == 3;
    three_200 += hl(t, 2) == 3;
  }
  CHECK(at_most_3 == n);
  CHECK(three_30 >= n - 8);
  CHECK(three_200 == n);
}

TEST_CASE("local covariance: the scale and the combination with the metric's estimate",
          "[geometry][dimension][local]") {
  // Histograms of the readings at 10, 50, 200 neighbours for D = 20: modes 9 (> 4.5), 20 (> 24.5? no:
  // 20 <= 24.5) and 20: the scale is 50.
  const int d = 20;
  std::vector<std::int64_t> h(3 * (d + 1), 0);
  h[0 * (d + 1) + 9] = 100;
  h[1 * (d + 1) + 20] = 60, h[1 * (d + 1) + 19] = 40;
  h[2 * (d + 1) + 20] = 100;
  CHECK(choose_local_scale(h, d, {10, 50, 200}, 2.0) == 1);
  CHECK(choose_local_scale(h, d, {10, 50, 200}, 3.0) == 2);  // 20 > 49 / 3
  CHECK(choose_local_scale(h, d, {10, 30, 40}, 2.0) == -1);  // none resolves its mode
  CHECK(resolved_local_scales(h, d, {10, 50, 200}, 2.0) == std::vector<int>{0, 1, 1});
  CHECK(choose_local_scale(std::vector<std::int64_t>(3 * (d + 1), 0), d, {10, 50, 200}, 2.0) == -1);

  // With a gap (ratio 50 >= 3): the smaller of the two; a curve the model reads as a surface -> 1.
  CHECK(combined_dimension(2, 1, 50.0, 3, 32, 3.0) == 1);
  CHECK(combined_dimension(2, 3, 50.0, 3, 32, 3.0) == 2);
  // No gap (ratio 1.2): the local reading, unless it exceeds the metric's directions (m = 29 of a
  // possible 62 at N = 32) ...
  CHECK(combined_dimension(11, 10, 1.2, 29, 32, 3.0) == 10);
  CHECK(combined_dimension(11, 36, 1.2, 29, 32, 3.0) == 11);
  // ... where the metric is at its rank bound 2 (N - 1) = 62 (within 4), when the bound is N's.
  CHECK(combined_dimension(59, 70, 1.2, 59, 32, 3.0) == 70);
  CHECK(combined_dimension(59, 70, 1.2, 57, 32, 3.0) == 59);
  // Failed points, d = 0, missing or empty readings keep the checked estimate.
  CHECK(combined_dimension(-1, 2, 50.0, 3, 32, 3.0) == -1);
  CHECK(combined_dimension(0, 2, 50.0, 3, 32, 3.0) == 0);
  CHECK(combined_dimension(2, -1, 50.0, 3, 32, 3.0) == 2);
  CHECK(combined_dimension(2, 0, 1.0, 3, 32, 3.0) == 2);

  // The promotion: e_d in the band (1e-3 .. 0.02 e_0) and the readings exactly d + 1.
  const double e[4] = {1, 0.5, 0.005, 1e-7};
  CHECK(locally_promoted(2, 3, e, 4, 1e-3, 0.02) == 3);
  CHECK(locally_promoted(2, 4, e, 4, 1e-3, 0.02) == 2);  // more than one more: noise or curvature
  CHECK(locally_promoted(2, 2, e, 4, 1e-3, 0.02) == 2);
  CHECK(locally_promoted(2, -1, e, 4, 1e-3, 0.02) == 2);
  CHECK(locally_promoted(1, 2, e, 4, 1e-3, 0.02) == 1);  // e_1 = 0.5 e_0: above the band, the gap rule decided
  CHECK(locally_promoted(3, 4, e, 4, 1e-3, 0.02) == 3);  // e_3 below the noise floor
  CHECK(locally_promoted(4, 5, e, 4, 1e-3, 0.02) == 4);  // never above D
}

TEST_CASE("local covariance: the combination over a rank's rows", "[geometry][dimension][local]") {
  // Three points in D = 3, two scales (20, 100 neighbours), N = 16. Per point the row holds x, xbar, the
  // metric's eigenvalues, E_0, the checked estimate, the confidence and the gap ratio.
  qgml::detail::DimensionRows rows(3, {20, 100});
  rows.effective_scales = {20, 100};
  auto row = [&](std::vector<double> e, int estimate, double gap_ratio, std::vector<int> checked,
                 std::vector<int> local) {
    for (int k = 0; k < 6; ++k) rows.values.push_back(0.0);
    for (double v : e) rows.values.push_back(v);
    rows.values.push_back(0.0);
    rows.values.push_back(double(estimate));
    rows.values.push_back(0.5);
    rows.values.push_back(gap_ratio);
    rows.scale_checked.insert(rows.scale_checked.end(), checked.begin(), checked.end());
    rows.local.insert(rows.local.end(), local.begin(), local.end());
  };
  row({1, 0.9, 1e-6}, 2, 100, {2, 2}, {1, 1});   // a wound curve: 2 -> 1
  row({1, 0.9, 0.005}, 2, 100, {2, 2}, {3, 3});  // a flattened third side: 2 -> 3
  row({1, 0.8, 0.6}, 1, 1.3, {1, 1}, {1, 2});    // no gap: the local reading at the chosen scale
  GeometrySettings settings;
  SelfCommunicator self;
  qgml::detail::combine_local_dimension(rows, settings, 16, self);
  CHECK(rows.local_scale == 0);                       // modes 1 (<= 9.5) at 20
  CHECK(rows.local_modes == std::vector<int>{1, 1});  // at 100 a tie of 1, 2 and 3: the smallest
  CHECK(rows.values[3 * 3 + 1] == 1);
  CHECK(rows.values[rows.width() + 3 * 3 + 1] == 3);
  CHECK(rows.values[2 * rows.width() + 3 * 3 + 1] == 1);
  CHECK(rows.no_gap_points == 1);
  CHECK(rows.histogram == std::vector<std::int64_t>{0, 2, 0, 1, 0});
  // Per scale: 20 -> (1, 3, 1), 100 -> (1, 3, 2).
  CHECK(rows.scale_checked == std::vector<int>{1, 1, 3, 3, 1, 2});
  CHECK(rows.scale_histogram == std::vector<std::int64_t>{0, 2, 0, 1, 0, 1, 1, 1});
}

TEST_CASE("local covariance: the promotion's band is analysis.local_pca_band, not the spread check's",
          "[geometry][dimension][local]") {
  // One point in D = 3 whose metric reads 2 with a flattened third eigenvalue of 0.04 e_0 (above the spread
  // check's band 0.02, within the local covariance's 0.05) and a local covariance that reads 3 at both scales.
  auto combined = [](double local_band, double spread_band) {
    qgml::detail::DimensionRows rows(3, {20, 100});
    rows.effective_scales = {20, 100};
    rows.values = {0, 0, 0, 0, 0, 0, 1, 0.9, 0.04, 0, 2, 0.5, 100};
    rows.scale_checked = {2, 2};
    rows.local = {3, 3};
    GeometrySettings settings;
    settings.spread.local_band = local_band;
    settings.spread.band = spread_band;
    SelfCommunicator self;
    qgml::detail::combine_local_dimension(rows, settings, 16, self);
    return int(rows.values[3 * 3 + 1]);
  };
  const TangentSpreadSettings defaults;
  CHECK(combined(defaults.local_band, defaults.band) == 3);
  CHECK(combined(0.02, defaults.band) == 2);
  CHECK(combined(defaults.local_band, 0.001) == 3);
}

TEST_CASE("local covariance: a stable reading wins where the metric has exactly as many directions",
          "[geometry][dimension][local]") {
  // One point in D = 4 whose metric has a first gap after its largest eigenvalue (ratio 5, so the gap rule
  // and min(d_q, d_l) read 1) and three directions above the noise floor; the local covariance reads `first`
  // and `second` at the two scales.
  auto combined = [](int first, int second, double third_eigenvalue, bool agree) {
    qgml::detail::DimensionRows rows(4, {20, 100});
    rows.effective_scales = {20, 100};
    rows.values = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0.2, 0.1, third_eigenvalue, 0, 1, 0.5, 5};
    rows.scale_checked = {1, 1};
    rows.local = {first, second};
    GeometrySettings settings;
    settings.spread.local_agree = agree;
    SelfCommunicator self;
    qgml::detail::combine_local_dimension(rows, settings, 16, self);
    return std::pair<int, std::vector<int>>{int(rows.values[3 * 4 + 1]), rows.scale_checked};
  };
  const TangentSpreadSettings defaults;
  REQUIRE(defaults.local_agree);
  CHECK(combined(3, 3, 1e-5, true) == std::pair<int, std::vector<int>>{3, {3, 3}});
  CHECK(combined(3, 3, 1e-5, false).first == 1);
  // m = 4 directions against a reading of 3: they do not agree.
  CHECK(combined(3, 3, 0.05, true).first == 1);
  // A reading that changes with the scale is not stable (each scale's own report still agrees with its own).
  CHECK(combined(3, 2, 1e-5, true) == std::pair<int, std::vector<int>>{1, {3, 1}});
  // d_l = D: what noise reads too.
  CHECK(combined(4, 4, 0.05, true).first == 1);
}

TEST_CASE("spread check: the spreads along the metric's eigenvectors, over k and over each scale",
          "[geometry][dimension][spread][scales]") {
  // 60 points in [-1, 1]^3, the same metric R diag(4, 2, 1) R^T at every point: its eigenvectors are
  // R's columns, in that order. The host reference sorts the distances itself.
  const int count = 60, dims = 3, k = 10;
  const std::vector<double> r = rotation(), u = random_points(count, dims, 1.0, 21);
  const double lambda[3] = {4, 2, 1};
  Kokkos::View<double**, Kokkos::LayoutRight> points("points", count, dims);
  Kokkos::View<double***, Kokkos::LayoutRight> metric("metric", count, dims, dims);
  IntVector<Kokkos::DefaultExecutionSpace::memory_space> dimension("dimension", count);
  auto hp = Kokkos::create_mirror_view(points);
  auto hm = Kokkos::create_mirror_view(metric);
  auto hd = Kokkos::create_mirror_view(dimension);
  for (int t = 0; t < count; ++t) {
    for (int i = 0; i < dims; ++i) {
      hp(t, i) = u[std::size_t(dims * t + i)];
      for (int j = 0; j < dims; ++j) {
        double g = 0;
        for (int c = 0; c < dims; ++c) g += r[std::size_t(3 * i + c)] * lambda[c] * r[std::size_t(3 * j + c)];
        hm(t, i, j) = g;
      }
    }
    hd(t) = 2;
  }
  Kokkos::deep_copy(points, hp);
  Kokkos::deep_copy(metric, hm);
  Kokkos::deep_copy(dimension, hd);
  TangentSpreadSettings s;
  s.neighbours = k;
  s.scales = {5, 20, 59};
  TangentSpreadCheck<double, Exec> check(dims, count, s, count);
  const Exec exec;
  check.apply(exec, points, points, 0, metric, dimension, s, DimensionEstimatorSettings{});
  exec.fence();
  auto spread = Kokkos::create_mirror_view(check.spread());
  auto scale_spread = Kokkos::create_mirror_view(check.scale_spread());
  Kokkos::deep_copy(spread, check.spread());
  Kokkos::deep_copy(scale_spread, check.scale_spread());
  double worst = 0;
  for (int t = 0; t < count; ++t) {
    std::vector<std::pair<double, int>> near;
    for (int o = 0; o < count; ++o) {
      if (o == t) continue;
      double dist = 0;
      for (int i = 0; i < dims; ++i) dist += (hp(o, i) - hp(t, i)) * (hp(o, i) - hp(t, i));
      near.emplace_back(dist, o);
    }
    std::sort(near.begin(), near.end());
    auto expected = [&](int n, int j) {  // over the n nearest, along column j of R
      double sum = 0;
      for (int a = 0; a < n; ++a) {
        double proj = 0;
        for (int i = 0; i < dims; ++i)
          proj += (hp(near[std::size_t(a)].second, i) - hp(t, i)) * r[std::size_t(3 * i + j)];
        sum += proj * proj;
      }
      return std::sqrt(sum / n);
    };
    for (int j = 0; j < dims; ++j) {
      worst = std::max(worst, std::abs(spread(t, j) - expected(k, j)));
      for (int sc = 0; sc < 3; ++sc)
        worst = std::max(worst, std::abs(scale_spread(t, sc, j) - expected(s.scales[std::size_t(sc)], j)));
    }
  }
  CHECK(worst <= 1e-12);
}

TEST_CASE("neighbour distances: the statistic, the pooled reading and the combination",
          "[geometry][dimension][local][distance]") {
  // L = sum_{j < k} log(r_k / r_j) from squared distances 1, 4, 16: log 4 + log 2 = 3 log 2.
  const double squared[3] = {1, 4, 16};
  CHECK_THAT(neighbour_distance_log(squared, 3), WithinAbs(3 * std::log(2.0), 1e-14));
  CHECK_THAT(neighbour_distance_log(squared, 2), WithinAbs(std::log(2.0), 1e-14));
  const double coincide[3] = {0, 4, 16}, equal[3] = {4, 4, 4};
  CHECK(neighbour_distance_log(squared, 1) == -1);
  CHECK(neighbour_distance_log(coincide, 3) == -1);
  CHECK(neighbour_distance_log(equal, 3) == -1);
  // d_r = (k - 1) n / sum L, rounded, within 1 .. D; none without points or a positive sum.
  CHECK(neighbour_distance_dimension(300.0, 100, 10, 20) == 3);
  CHECK(neighbour_distance_dimension(260.0, 100, 10, 20) == 3);  // 3.46
  CHECK(neighbour_distance_dimension(250.0, 100, 10, 20) == 4);  // 3.6
  CHECK(neighbour_distance_dimension(1e9, 100, 10, 20) == 1);
  CHECK(neighbour_distance_dimension(1.0, 100, 10, 20) == 20);
  CHECK(neighbour_distance_dimension(300.0, 0, 10, 20) == 0);
  CHECK(neighbour_distance_dimension(0.0, 100, 10, 20) == 0);
  CHECK(neighbour_distance_dimension(300.0, 100, 1, 20) == 0);
  // A point is unresolved where the metric has no gap and the local reading exceeds its directions
  // below the rank bound: then the reading given decides, none keeps the checked estimate.
  CHECK(locally_unresolved(11, 36, 1.2, 29, 32, 3.0));
  CHECK_FALSE(locally_unresolved(11, 36, 50.0, 29, 32, 3.0));  // a gap
  CHECK_FALSE(locally_unresolved(11, 10, 1.2, 29, 32, 3.0));   // the local reading decides
  CHECK_FALSE(locally_unresolved(59, 70, 1.2, 59, 32, 3.0));   // at the rank bound
  CHECK(combined_dimension(11, 36, 1.2, 29, 32, 3.0, 7) == 7);
  CHECK(combined_dimension(11, 36, 1.2, 29, 32, 3.0, 0) == 11);
  CHECK(combined_dimension(11, 10, 1.2, 29, 32, 3.0, 7) == 10);
  CHECK(combined_dimension(2, 1, 50.0, 3, 32, 3.0, 7) == 1);
}

TEST_CASE("neighbour distances: the kernel reads a solid box as 3 and a flat square as 2",
          "[geometry][dimension][local][distance]") {
  // 3000 points uniform in [-1, 1]^3 (the third side times `thickness`), rotated: the pooled
  // maximum-likelihood dimension of the distances to the 10 nearest points, over every point.
  auto pooled = [](double thickness, int k) {
    const int count = 3000;
    const SlabInputs in = slab_inputs(count, thickness, {1.0, 1.0, 1.0}, 3, 5);
    TangentSpreadSettings s;
    s.distance_neighbours = k;
    TangentSpreadCheck<double, Exec> check(3, count, s, count);
    const Exec exec;
    check.apply(exec, in.points, in.points, 0, in.metric, in.dimension, s, DimensionEstimatorSettings{});
    exec.fence();
    auto hl = Kokkos::create_mirror_view(check.distance_log());
    Kokkos::deep_copy(hl, check.distance_log());
    double sum = 0;
    std::int64_t n = 0;
    for (int t = 0; t < count; ++t)
      if (hl(t) > 0) sum += hl(t), ++n;
    CHECK(n == count);
    return std::make_pair(double(k - 1) * double(n) / sum, neighbour_distance_dimension(sum, n, k, 3));
  };
  const auto box = pooled(1.0, 10), square = pooled(0.0, 10), box20 = pooled(1.0, 20);
  CHECK_THAT(box.first, WithinAbs(3.0, 0.35));  // the boundary lowers it a little
  CHECK(box.second == 3);
  CHECK_THAT(square.first, WithinAbs(2.0, 0.25));
  CHECK(square.second == 2);
  CHECK(box20.second == 3);
  // Off: no buffer.
  TangentSpreadSettings off;
  off.distance_neighbours = 0;
  TangentSpreadCheck<double, Exec> none(3, 10, off);
  CHECK(none.distance_log().extent(0) == 0);
}

TEST_CASE("neighbour distances: the combination over a rank's rows uses them where most points are unresolved",
          "[geometry][dimension][local][distance]") {
  // D = 40, N = 16 (rank bound 30): points whose metric has no gap (ratio 1.2), 20 directions above the
  // floor, the local covariance reading 38 at its one scale (more than the directions: unresolved), the
  // checked estimate 1; L = 9 / 7 at k = 10 (d_r = 7).
  auto run = [](int unresolved, int resolved, double share) {
    const int d = 40;
    qgml::detail::DimensionRows rows(d, {100});
    rows.effective_scales = {100};
    rows.distance_neighbours = 10;
    auto row = [&](int local) {
      for (int k = 0; k < 2 * d; ++k) rows.values.push_back(0.0);
      for (int k = 0; k < d; ++k) rows.values.push_back(k < 20 ? std::pow(0.8, k) : 1e-6);
      rows.values.push_back(0.0);
      rows.values.push_back(1.0);
      rows.values.push_back(0.5);
      rows.values.push_back(1.2);
      rows.scale_checked.push_back(1);
      rows.local.push_back(local);
      rows.distance_log.push_back(9.0 / 7.0);
    };
    for (int i = 0; i < unresolved; ++i) row(38);
    for (int i = 0; i < resolved; ++i) row(10);
    GeometrySettings settings;
    settings.spread.distance_share = share;
    SelfCommunicator self;
    qgml::detail::combine_local_dimension(rows, settings, 16, self);
    return rows;
  };
  const auto most = run(6, 4, 0.5);
  CHECK(most.unresolved_points == 6);
  CHECK_THAT(most.distance_reading, WithinAbs(7.0, 1e-5));
  CHECK(most.distance_dimension == 7);
  CHECK(most.histogram[7] == 6);
  CHECK(most.histogram[10] == 4);  // the resolved points keep the local reading
  CHECK(most.scale_checked == std::vector<int>{7, 7, 7, 7, 7, 7, 10, 10, 10, 10});
  const auto few = run(4, 6, 0.5);  // below the share: the checked estimate stays
  CHECK(few.unresolved_points == 4);
  CHECK_THAT(few.distance_reading, WithinAbs(7.0, 1e-5));
  CHECK(few.distance_dimension == 0);
  CHECK(few.histogram[1] == 4);
  const auto lower = run(4, 6, 0.4);
  CHECK(lower.distance_dimension == 7);
  CHECK(lower.distance_share == 0.4);  // what the summary and the printed line report
  CHECK(most.distance_share == 0.5);
}
