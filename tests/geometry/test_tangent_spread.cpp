// The spread check of the gap rule's directions (geometry/tangent_spread.hpp; docs/dimension.md, "The
// spread check") and the Jacobi eigensystem it uses (linalg/symmetric_eigensystem.hpp), on metrics and
// points built by hand.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <vector>

#include "qgml/geometry/dimension_estimate.hpp"
#include "qgml/geometry/tangent_spread.hpp"
#include "qgml/linalg/symmetric_eigensystem.hpp"

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

// `count` points u (uniform in [-1, 1]^3, the third coordinate times `thickness`) rotated, x = R u; every
// point's metric R diag(g) R^T; every point's estimate `d0`. Returns the estimates after the check.
std::vector<int> checked(int count, double thickness, const std::vector<double>& g, int d0,
                         const TangentSpreadSettings& s) {
  const std::vector<double> r = rotation();
  std::vector<double> u = random_points(count, 3, 1.0, 7), x(3 * std::size_t(count));
  for (int t = 0; t < count; ++t) {
    u[3 * t + 2] *= thickness;
    for (int i = 0; i < 3; ++i) {
      double v = 0;
      for (int j = 0; j < 3; ++j) v += r[3 * i + j] * u[3 * t + j];
      x[3 * t + i] = v;
    }
  }
  Kokkos::View<double**, Kokkos::LayoutRight> points("points", count, 3);
  Kokkos::View<double***, Kokkos::LayoutRight> metric("metric", count, 3, 3);
  IntVector<Kokkos::DefaultExecutionSpace::memory_space> dimension("dimension", count);
  auto hp = Kokkos::create_mirror_view(points);
  auto hm = Kokkos::create_mirror_view(metric);
  auto hd = Kokkos::create_mirror_view(dimension);
  for (int t = 0; t < count; ++t) {
    for (int i = 0; i < 3; ++i) hp(t, i) = x[3 * t + i];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double v = 0;
        for (int m = 0; m < 3; ++m) v += r[3 * i + m] * g[m] * r[3 * j + m];
        hm(t, i, j) = v;
      }
    hd(t) = d0;
  }
  Kokkos::deep_copy(points, hp);
  Kokkos::deep_copy(metric, hm);
  Kokkos::deep_copy(dimension, hd);
  // Two chunks, so that the second's rows are found by their offset among all points.
  const int half = count / 2;
  TangentSpreadCheck<double, Exec> check(3, count - half, s);
  const Exec exec;
  for (int start : {0, half}) {
    const int m = start == 0 ? half : count - half;
    const auto range = Kokkos::make_pair(start, start + m);
    check.apply(exec, points, Kokkos::subview(points, range, Kokkos::ALL), start,
                Kokkos::subview(metric, range, Kokkos::ALL, Kokkos::ALL), Kokkos::subview(dimension, range), s, 1e-3);
  }
  exec.fence();
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

TEST_CASE("symmetric eigensystem: A v_j = e_j v_j, V orthonormal, descending", "[linalg][jacobi][spread]") {
  for (int d : {1, 2, 5, 12}) {
    const std::vector<double> r = random_points(d, d, 1.0, 11 + d);
    const std::size_t dd = std::size_t(d) * std::size_t(d);
    std::vector<double> a0(dd, 0.0), a(dd, 0.0), v(dd, 0.0), e(std::size_t(d), 0.0);
    std::vector<int> order(std::size_t(d), 0);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) a0[std::size_t(i * d + j)] = r[std::size_t(i * d + j)] + r[std::size_t(j * d + i)];
    a = a0;
    const Host av(a.data(), d, d), vv(v.data(), d, d);
    const Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> ev(e.data(), d);
    const Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> ov(order.data(), d);
    CHECK(linalg::symmetric_eigensystem_descending(av, vv, ev, ov) <= linalg::symmetric_eigenvalues_max_sweeps);
    for (int j = 0; j + 1 < d; ++j) CHECK(e[std::size_t(j)] >= e[std::size_t(j + 1)]);
    for (int j = 0; j < d; ++j)
      for (int i = 0; i < d; ++i) {
        double av_ij = 0, vtv = 0;
        for (int k = 0; k < d; ++k) {
          av_ij += a0[std::size_t(i * d + k)] * v[std::size_t(k * d + j)];
          vtv += v[std::size_t(k * d + i)] * v[std::size_t(k * d + j)];
        }
        CHECK_THAT(av_ij, WithinAbs(e[std::size_t(j)] * v[std::size_t(i * d + j)], 1e-12));
        CHECK_THAT(vtv, WithinAbs(i == j ? 1.0 : 0.0, 1e-12));
      }
  }
}

TEST_CASE("spread check: neighbours, eigenvectors and spreads on the device", "[geometry][dimension][spread]") {
  TangentSpreadSettings on;  // the kernel's mechanics; 50 neighbours' spreads vary by +-20 % about 1
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
  std::vector<int> estimate, scales;
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
  check.apply(exec, points, points, 0, metric, dimension, s, 1e-3);
  exec.fence();
  CombReading r;
  Kokkos::deep_copy(hd, dimension);
  r.estimate.assign(hd.data(), hd.data() + count);
  auto hs = Kokkos::create_mirror_view(check.scale_dimension());
  Kokkos::deep_copy(hs, check.scale_dimension());
  for (int sc = 0; sc < check.scales(); ++sc)
    for (int t = 0; t < count; ++t) r.scales.push_back(hs(t, sc));
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
