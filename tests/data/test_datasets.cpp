// Seeded manifolds (manifolds.hpp) and point files (data_io.hpp).
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <unistd.h>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/data/datasets.hpp"
#include "qgml/data/manifolds.hpp"
#include "qgml/io/data_io.hpp"
#include "qgml/io/npy.hpp"

#include "temp_dir.hpp"
#include "test_support.hpp"

using namespace qgml;
using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

using qgml::test::TempDir;
using qgml::test::write_bytes;

namespace {

constexpr double pi = 3.141592653589793;

// How far noise-free points may be from their manifold: rounding of the coordinates (up to ~15 in size)
// and of the recovered parameters.
template <class Real>
constexpr double on_manifold_tolerance() {
  return std::is_same_v<Real, float> ? 1e-4 : 1e-12;
}

// A generator with its shape arguments bound: (T, noise, seed) -> points on the host.
using Generator = std::function<HostData(int, double, std::uint64_t)>;

// Shape, determinism (bitwise, same seed), sensitivity to the seed, and "point t depends only on
// (seed, t)": the first 50 of 300 points are the 50-point data set.
void check_seeded(const Generator& gen, int cols) {
  const HostData a = gen(300, 0.1, 42), b = gen(300, 0.1, 42), other = gen(300, 0.1, 43), prefix = gen(50, 0.1, 42);
  REQUIRE(a.rows == 300);
  REQUIRE(a.cols == cols);
  REQUIRE(a.values.size() == std::size_t(300) * cols);
  CHECK(std::all_of(a.values.begin(), a.values.end(), [](double v) { return std::isfinite(v); }));
  CHECK(a.values == b.values);
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.values.size(); ++i) differing += a.values[i] != other.values[i];
  CHECK(differing > 0.99 * a.values.size());
  REQUIRE(prefix.rows == 50);
  CHECK(std::equal(prefix.values.begin(), prefix.values.end(), a.values.begin()));
}

// The noise is drawn independently of the point: noisy - clean = noise * g with g i.i.d. N(0, 1) in every
// coordinate: per-coordinate mean 0 and standard deviation `factor` * noise, uncorrelated coordinates.
// (line_points projects the noise orthogonal to (1, 1, 1): factor sqrt(2/3), correlations -1/2.)
void check_noise(const Generator& gen, double factor = 1.0, double correlation = 0.0) {
  const int T = 4000;
  const double s = 0.05;
  const HostData clean = gen(T, 0.0, 7), noisy = gen(T, s, 7);
  const int D = clean.cols;
  std::vector<double> e(std::size_t(T) * D), mean(D, 0.0), std(D, 0.0);
  for (int t = 0; t < T; ++t)
    for (int k = 0; k < D; ++k) {
      e[std::size_t(t) * D + k] = noisy(t, k) - clean(t, k);
      mean[k] += e[std::size_t(t) * D + k] / T;
    }
  for (int k = 0; k < D; ++k) {
    for (int t = 0; t < T; ++t) std[k] += std::pow(e[std::size_t(t) * D + k] - mean[k], 2) / T;
    std[k] = std::sqrt(std[k]);
    INFO("coordinate " << k << ": mean " << mean[k] << ", std " << std[k]);
    CHECK(std::abs(mean[k]) < 5 * factor * s / std::sqrt(double(T)));
    CHECK(std::abs(std[k] / (factor * s) - 1) < 0.06);
  }
  double worst = 0;  // largest deviation of a correlation coefficient from the expected one
  for (int k = 0; k < D; ++k)
    for (int l = 0; l < k; ++l) {
      double c = 0;
      for (int t = 0; t < T; ++t)
        c += (e[std::size_t(t) * D + k] - mean[k]) * (e[std::size_t(t) * D + l] - mean[l]) / T;
      worst = std::max(worst, std::abs(c / (std[k] * std[l]) - correlation));
    }
  CHECK(worst < 0.08);  // standard error 1/sqrt(T) = 0.016
}

// float output is the double computation rounded once.
void check_rounded(const HostData& f, const HostData& d) {
  REQUIRE(f.rows == d.rows);
  REQUIRE(f.cols == d.cols);
  double worst = 0;
  for (std::size_t i = 0; i < f.values.size(); ++i)
    worst = std::max(worst, std::abs(f.values[i] - d.values[i]) / std::max(1e-30, std::abs(d.values[i])));
  CHECK(worst <= 0x1p-23);  // one float ulp: rounded once from the double result
}

// Pivoted Gram-Schmidt on the differences x_t - x_0: the largest residual norm left after 0, 1, 2, ...
// directions have been removed. An affine subspace of dimension k gives k large values, then ~0.
std::vector<double> pivot_residuals(const HostData& x, int steps) {
  const int D = x.cols;
  std::vector<std::vector<double>> diff(std::size_t(x.rows - 1), std::vector<double>(D));
  for (int t = 1; t < x.rows; ++t)
    for (int k = 0; k < D; ++k) diff[t - 1][k] = x(t, k) - x(0, k);
  std::vector<double> result;
  for (int step = 0; step < steps; ++step) {
    double best = -1;
    std::size_t pivot = 0;
    for (std::size_t i = 0; i < diff.size(); ++i) {
      double n = 0;
      for (double v : diff[i]) n += v * v;
      if (n > best) best = n, pivot = i;
    }
    result.push_back(std::sqrt(best));
    if (best == 0) break;
    std::vector<double> e = diff[pivot];
    for (double& v : e) v /= std::sqrt(best);
    for (int pass = 0; pass < 2; ++pass)
      for (auto& d : diff) {
        double dot = 0;
        for (int k = 0; k < D; ++k) dot += d[k] * e[k];
        for (int k = 0; k < D; ++k) d[k] -= dot * e[k];
      }
  }
  return result;
}

double angle_in_0_2pi(double y, double x) {
  const double a = std::atan2(y, x);
  return a < 0 ? a + 2 * pi : a;
}

// The message of the qgml::Error that f throws (any other exception fails the test).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no qgml::Error was thrown>";
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Generators

TEMPLATE_TEST_CASE("spiral_points: seeded points on the planar Archimedean spiral", "[datasets]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const Generator gen = [&](int T, double noise, std::uint64_t seed) {
    return to_host_data(spiral_points<Real>(exec, T, noise, seed));
  };
  check_seeded(gen, 3);
  check_noise(gen);

  const HostData x = gen(2000, 0.0, 5);
  double worst = 0, t_min = 1e300, t_max = 0, t_sum = 0;
  bool planar = true;
  for (int i = 0; i < x.rows; ++i) {
    const double t = std::hypot(x(i, 0), x(i, 1));  // t >= 0 is the radius
    worst = std::max({worst, std::abs(x(i, 0) - t * std::cos(t)), std::abs(x(i, 1) - t * std::sin(t))});
    planar = planar && x(i, 2) == 0;
    t_min = std::min(t_min, t), t_max = std::max(t_max, t), t_sum += t;
  }
  CHECK(worst <= on_manifold_tolerance<Real>());
  CHECK(planar);
  CHECK(t_max <= 4 * pi + on_manifold_tolerance<Real>());
  CHECK(t_min < 0.05);  // t covers [0, 4 pi] ...
  CHECK(t_max > 4 * pi - 0.05);
  CHECK(std::abs(t_sum / x.rows - 2 * pi) < 0.3);  // ... uniformly (mean 2 pi, std error 0.08)
  if constexpr (std::is_same_v<Real, float>)
    check_rounded(gen(500, 0.1, 3), to_host_data(spiral_points<double>(exec, 500, 0.1, 3)));
  CHECK_THROWS_AS(spiral_points<Real>(exec, 0, 0.1, 1), Error);
  CHECK_THROWS_AS(spiral_points<Real>(exec, 10, -0.1, 1), Error);
}

TEMPLATE_TEST_CASE("line_points: the diagonal line with noise orthogonal to it", "[datasets]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const Generator gen = [&](int T, double noise, std::uint64_t seed) {
    return to_host_data(line_points<Real>(exec, T, noise, seed));
  };
  check_seeded(gen, 3);
  check_noise(gen, std::sqrt(2.0 / 3.0), -0.5);

  const HostData x = gen(2000, 0.0, 5);
  bool on_line = true;
  double t_min = 1e300, t_max = -1e300, t_sum = 0;
  for (int i = 0; i < x.rows; ++i) {
    on_line = on_line && x(i, 0) == x(i, 1) && x(i, 1) == x(i, 2);
    t_min = std::min(t_min, x(i, 0)), t_max = std::max(t_max, x(i, 0)), t_sum += x(i, 0);
  }
  CHECK(on_line);
  CHECK(t_min >= 0);
  CHECK(t_max <= 10);
  CHECK(t_min < 0.05);
  CHECK(t_max > 9.95);
  CHECK(std::abs(t_sum / x.rows - 5) < 0.25);

  // The noise has no component along (1, 1, 1): the mean coordinate is the clean t.
  const HostData noisy = gen(2000, 0.3, 5);
  double along = 0, across = 0;
  for (int i = 0; i < x.rows; ++i) {
    along = std::max(along, std::abs((noisy(i, 0) + noisy(i, 1) + noisy(i, 2)) / 3 - x(i, 0)));
    across = std::max(across, std::abs(noisy(i, 0) - noisy(i, 1)));
  }
  CHECK(along <= 10 * on_manifold_tolerance<Real>());
  CHECK(across > 0.3);
  if constexpr (std::is_same_v<Real, float>)
    check_rounded(gen(500, 0.1, 3), to_host_data(line_points<double>(exec, 500, 0.1, 3)));
}

TEMPLATE_TEST_CASE("swiss_roll_points: scikit-learn's Swiss roll", "[datasets]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const Generator gen = [&](int T, double noise, std::uint64_t seed) {
    return to_host_data(swiss_roll_points<Real>(exec, T, noise, seed));
  };
  check_seeded(gen, 3);
  check_noise(gen);

  const HostData x = gen(2000, 0.0, 5);
  double worst = 0, t_min = 1e300, t_max = 0, h_min = 1e300, h_max = -1e300;
  for (int i = 0; i < x.rows; ++i) {
    const double t = std::hypot(x(i, 0), x(i, 2));
    worst = std::max({worst, std::abs(x(i, 0) - t * std::cos(t)), std::abs(x(i, 2) - t * std::sin(t))});
    t_min = std::min(t_min, t), t_max = std::max(t_max, t);
    h_min = std::min(h_min, x(i, 1)), h_max = std::max(h_max, x(i, 1));
  }
  const double tol = on_manifold_tolerance<Real>();
  CHECK(worst <= tol);
  CHECK(t_min >= 1.5 * pi - tol);
  CHECK(t_max <= 4.5 * pi + tol);
  CHECK(t_min < 1.5 * pi + 0.05);
  CHECK(t_max > 4.5 * pi - 0.05);
  CHECK(h_min >= 0);
  CHECK(h_max <= 21);
  CHECK(h_min < 0.1);
  CHECK(h_max > 20.9);
  if constexpr (std::is_same_v<Real, float>)
    check_rounded(gen(500, 0.1, 3), to_host_data(swiss_roll_points<double>(exec, 500, 0.1, 3)));
}

TEMPLATE_TEST_CASE("hypercube_points: a solid d-cube rotated into R^D", "[datasets]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const Generator gen = [&](int T, double noise, std::uint64_t seed) {
    return to_host_data(hypercube_points<Real>(exec, T, 3, 5, noise, seed));
  };
  check_seeded(gen, 5);
  check_noise(gen);

  // d = 3 in R^5, and the benchmark's 17-cube in R^18.
  for (const auto& [d, D] : {std::pair{3, 5}, std::pair{17, 18}}) {
    INFO("d = " << d << ", D = " << D);
    const std::uint64_t seed = 11;
    const std::vector<double> q = hypercube_rotation(D, seed);
    REQUIRE(q.size() == std::size_t(D) * D);
    double orthogonality = 0;
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j) {
        double dot = 0;
        for (int k = 0; k < D; ++k) dot += q[std::size_t(k) * D + i] * q[std::size_t(k) * D + j];
        orthogonality = std::max(orthogonality, std::abs(dot - (i == j ? 1 : 0)));
      }
    CHECK(orthogonality < 1e-14);
    CHECK(hypercube_rotation(D, seed + 1) != q);

    const HostData x = to_host_data(hypercube_points<Real>(exec, 3000, d, D, 0.0, seed));
    REQUIRE(x.rows == 3000);
    REQUIRE(x.cols == D);
    double off_cube = 0, inside = 0, last_coordinate_spread = 0;
    std::vector<double> reach(d, 0.0), mean(d, 0.0), second(d, 0.0);
    for (int t = 0; t < x.rows; ++t) {
      for (int i = 0; i < D; ++i) {
        double y = 0;  // (Q^T x)_i
        for (int k = 0; k < D; ++k) y += q[std::size_t(k) * D + i] * x(t, k);
        if (i < d) {
          inside = std::max(inside, std::abs(y));
          reach[i] = std::max(reach[i], std::abs(y));
          mean[i] += y / x.rows;
          second[i] += y * y / x.rows;
        } else {
          off_cube = std::max(off_cube, std::abs(y));
        }
      }
      last_coordinate_spread = std::max(last_coordinate_spread, std::abs(x(t, D - 1)));
    }
    const double tol = on_manifold_tolerance<Real>();
    CHECK(off_cube <= tol);        // Q^T x = (u, 0)
    CHECK(inside <= 1 + tol);      // |u_i| <= 1
    for (int i = 0; i < d; ++i) {  // u_i ~ U[-1, 1]: reaches the faces, mean 0, second moment 1/3
      CHECK(reach[i] > 0.98);
      CHECK(std::abs(mean[i]) < 0.06);
      CHECK(std::abs(second[i] - 1.0 / 3.0) < 0.03);
    }
    CHECK(last_coordinate_spread > 0.1);  // rotated: not confined to the first d axes
  }
  if constexpr (std::is_same_v<Real, float>)
    check_rounded(gen(500, 0.1, 3), to_host_data(hypercube_points<double>(exec, 500, 3, 5, 0.1, 3)));
  CHECK_THROWS_AS(hypercube_points<Real>(exec, 10, 4, 3, 0.0, 1), Error);
  CHECK_THROWS_AS(hypercube_points<Real>(exec, 10, 0, 3, 0.0, 1), Error);
}

TEMPLATE_TEST_CASE("benchmark_sphere10_points: the unit 10-sphere in R^11 (M1)", "[datasets]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const Generator gen = [&](int T, double noise, std::uint64_t seed) {
    return to_host_data(benchmark_sphere10_points<Real>(exec, T, noise, seed));
  };
  check_seeded(gen, 11);
  check_noise(gen);

  const HostData x = gen(2000, 0.0, 5);
  double worst = 0;
  for (int t = 0; t < x.rows; ++t) {
    double r2 = 0;
    for (int k = 0; k < x.cols; ++k) r2 += x(t, k) * x(t, k);
    worst = std::max(worst, std::abs(std::sqrt(r2) - 1));
  }
  CHECK(worst <= (std::is_same_v<Real, float> ? 1e-6 : 1e-14));
  CHECK(x.values == to_host_data(sphere_points<Real>(exec, 2000, 11, 0.0, 5)).values);
  CHECK(to_host_data(hypersphere_points<Real>(exec, 100, 2, 0.1, 5)).values ==
        to_host_data(sphere_points<Real>(exec, 100, 3, 0.1, 5)).values);
  CHECK_THROWS_AS(hypersphere_points<Real>(exec, 10, 0, 0.0, 1), Error);
}

TEMPLATE_TEST_CASE("affine_points: an affine 3-space in R^5 (M2)", "[datasets]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const Generator gen = [&](int T, double noise, std::uint64_t seed) {
    return to_host_data(affine_points<Real>(exec, T, noise, seed));
  };
  check_seeded(gen, 5);
  check_noise(gen);

  const std::uint64_t seed = 5;
  const HostData x = gen(2000, 0.0, seed);
  const double tol = on_manifold_tolerance<Real>();
  // Rank: three large pivots, then nothing left.
  const std::vector<double> pivots = pivot_residuals(x, 4);
  REQUIRE(pivots.size() == 4);
  CHECK(pivots[2] > 0.1);
  CHECK(pivots[3] <= 10 * tol);
  // With noise the cloud fills R^5: the same check sees a 4th direction.
  CHECK(pivot_residuals(gen(2000, 0.01, seed), 4)[3] > 0.01);

  // The parameters: u = (A^T A)^{-1} A^T (x - b) lies in [0, 1]^3 and reproduces x.
  const AffineMap map = affine_points_map(seed);
  double g[3][3] = {};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 5; ++k) g[i][j] += map.a[3 * k + i] * map.a[3 * k + j];
  const double det = g[0][0] * (g[1][1] * g[2][2] - g[1][2] * g[2][1]) -
                     g[0][1] * (g[1][0] * g[2][2] - g[1][2] * g[2][0]) +
                     g[0][2] * (g[1][0] * g[2][1] - g[1][1] * g[2][0]);
  REQUIRE(std::abs(det) > 1e-3);
  double residual = 0, u_min = 1e300, u_max = -1e300;
  for (int t = 0; t < x.rows; ++t) {
    double rhs[3] = {};
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 5; ++k) rhs[i] += map.a[3 * k + i] * (x(t, k) - map.b[k]);
    double u[3];
    for (int c = 0; c < 3; ++c) {  // Cramer's rule
      double m[3][3];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) m[i][j] = j == c ? rhs[i] : g[i][j];
      u[c] = (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
              m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])) /
             det;
      u_min = std::min(u_min, u[c]), u_max = std::max(u_max, u[c]);
    }
    for (int k = 0; k < 5; ++k)
      residual = std::max(residual, std::abs(map.a[3 * k] * u[0] + map.a[3 * k + 1] * u[1] + map.a[3 * k + 2] * u[2] +
                                             map.b[k] - x(t, k)));
  }
  CHECK(residual <= tol);
  CHECK(u_min >= -10 * tol);
  CHECK(u_max <= 1 + 10 * tol);
  CHECK(u_min < 0.02);
  CHECK(u_max > 0.98);
  if constexpr (std::is_same_v<Real, float>)
    check_rounded(gen(500, 0.1, 3), to_host_data(affine_points<double>(exec, 500, 0.1, 3)));
}

TEMPLATE_TEST_CASE("helix_points: the closed 1-d helix in R^3 (M5)", "[datasets]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const Generator gen = [&](int T, double noise, std::uint64_t seed) {
    return to_host_data(helix_points<Real>(exec, T, noise, seed));
  };
  check_seeded(gen, 3);
  check_noise(gen);

  const HostData x = gen(2000, 0.0, 5);
  double worst = 0, t_min = 1e300, t_max = 0;
  for (int i = 0; i < x.rows; ++i) {
    const double t = angle_in_0_2pi(x(i, 1), x(i, 0));
    const double r = 2 + std::cos(8 * t);
    worst = std::max({worst, std::abs(x(i, 0) - r * std::cos(t)), std::abs(x(i, 1) - r * std::sin(t)),
                      std::abs(x(i, 2) - std::sin(8 * t))});
    t_min = std::min(t_min, t), t_max = std::max(t_max, t);
  }
  CHECK(worst <= on_manifold_tolerance<Real>());
  CHECK(t_min < 0.02);
  CHECK(t_max > 2 * pi - 0.02);
  if constexpr (std::is_same_v<Real, float>)
    check_rounded(gen(500, 0.1, 3), to_host_data(helix_points<double>(exec, 500, 0.1, 3)));
}

TEMPLATE_TEST_CASE("mobius_points: the Moebius band in R^3 (M11 family)", "[datasets]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const Generator gen = [&](int T, double noise, std::uint64_t seed) {
    return to_host_data(mobius_points<Real>(exec, T, noise, seed));
  };
  check_seeded(gen, 3);
  check_noise(gen);

  const HostData x = gen(2000, 0.0, 5);
  double worst = 0, v_min = 1e300, v_max = -1e300, u_min = 1e300, u_max = 0;
  for (int i = 0; i < x.rows; ++i) {
    // u from the angle (the radius 1 + v/2 cos(u/2) >= 1/2 is positive); v from the radial and height
    // offsets, which must both lie along (cos(u/2), sin(u/2)).
    const double u = angle_in_0_2pi(x(i, 1), x(i, 0));
    const double v = 2 * ((std::hypot(x(i, 0), x(i, 1)) - 1) * std::cos(u / 2) + x(i, 2) * std::sin(u / 2));
    const double r = 1 + v / 2 * std::cos(u / 2);
    worst = std::max({worst, std::abs(x(i, 0) - r * std::cos(u)), std::abs(x(i, 1) - r * std::sin(u)),
                      std::abs(x(i, 2) - v / 2 * std::sin(u / 2))});
    v_min = std::min(v_min, v), v_max = std::max(v_max, v), u_min = std::min(u_min, u), u_max = std::max(u_max, u);
  }
  const double tol = on_manifold_tolerance<Real>();
  CHECK(worst <= tol);
  CHECK(v_min >= -1 - tol);
  CHECK(v_max <= 1 + tol);
  CHECK(v_min < -0.98);
  CHECK(v_max > 0.98);
  CHECK(u_min < 0.02);
  CHECK(u_max > 2 * pi - 0.02);
  if constexpr (std::is_same_v<Real, float>)
    check_rounded(gen(500, 0.1, 3), to_host_data(mobius_points<double>(exec, 500, 0.1, 3)));
}

TEMPLATE_TEST_CASE("curve13_points: a closed 1-d Fourier curve spanning R^13 (M13 family)", "[datasets]",
                   QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const Generator gen = [&](int T, double noise, std::uint64_t seed) {
    return to_host_data(curve13_points<Real>(exec, T, noise, seed));
  };
  check_seeded(gen, 13);
  check_noise(gen);

  const HostData x = gen(2000, 0.0, 5);
  double worst = 0, t_min = 1e300, t_max = 0;
  for (int i = 0; i < x.rows; ++i) {
    const double t = angle_in_0_2pi(x(i, 1), x(i, 0)) / (2 * pi);
    for (int k = 0; k < 13; ++k) {
      const double f = k / 2 + 1;
      const double expected = (k % 2 == 0 ? std::cos(2 * pi * f * t) : std::sin(2 * pi * f * t)) / f;
      worst = std::max(worst, std::abs(x(i, k) - expected));
    }
    t_min = std::min(t_min, t), t_max = std::max(t_max, t);
  }
  CHECK(worst <= on_manifold_tolerance<Real>());
  CHECK(t_min < 0.005);
  CHECK(t_max > 0.995);
  // Not contained in any proper affine subspace of R^13.
  const std::vector<double> pivots = pivot_residuals(x, 13);
  REQUIRE(pivots.size() == 13);
  CHECK(pivots[12] > 0.02);
  if constexpr (std::is_same_v<Real, float>)
    check_rounded(gen(500, 0.1, 3), to_host_data(curve13_points<double>(exec, 500, 0.1, 3)));
}

#if defined(KOKKOS_ENABLE_SERIAL) && defined(KOKKOS_ENABLE_OPENMP)
namespace {
template <class Space>
std::vector<std::vector<double>> all_generators(const Space& exec) {
  const int T = 257;
  const double s = 0.1;
  const std::uint64_t seed = 2024;
  return {to_host_data(spiral_points<double>(exec, T, s, seed)).values,
          to_host_data(line_points<double>(exec, T, s, seed)).values,
          to_host_data(swiss_roll_points<double>(exec, T, s, seed)).values,
          to_host_data(hypercube_points<double>(exec, T, 17, 18, s, seed)).values,
          to_host_data(benchmark_sphere10_points<double>(exec, T, s, seed)).values,
          to_host_data(affine_points<double>(exec, T, s, seed)).values,
          to_host_data(helix_points<double>(exec, T, s, seed)).values,
          to_host_data(mobius_points<double>(exec, T, s, seed)).values,
          to_host_data(curve13_points<double>(exec, T, s, seed)).values};
}
}  // namespace

TEST_CASE("every generator gives the same bits on Serial and OpenMP", "[datasets]") {
  const auto serial = all_generators(Kokkos::Serial());
  const auto openmp = all_generators(Kokkos::OpenMP());
  REQUIRE(serial.size() == openmp.size());
  for (std::size_t g = 0; g < serial.size(); ++g) {
    INFO("generator " << g);
    REQUIRE(serial[g].size() == openmp[g].size());
    CHECK(std::memcmp(serial[g].data(), openmp[g].data(), serial[g].size() * sizeof(double)) == 0);
  }
}
#endif

// ---------------------------------------------------------------------------------------------------
// Point files

TEST_CASE("points survive CSV and NPY round trips bit for bit", "[datasets][io]") {
  TempDir dir;
  HostData data = to_host_data(swiss_roll_points<double>(Kokkos::DefaultHostExecutionSpace(), 200, 0.1, 9));
  // Values whose text form is delicate: signed zero, subnormals, extremes, non-representable decimals.
  const double specials[] = {-0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -1e-300, 0.1, 1.0 / 3};
  for (std::size_t i = 0; i < std::size(specials); ++i) data.values[i] = specials[i];

  for (const std::string name : {"points.csv", "points.npy", "POINTS.CSV"}) {
    INFO(name);
    const std::string path = dir.file(name);
    if (name.find(".npy") != std::string::npos)
      write_points_npy(path, data);
    else
      write_points_csv(path, data);
    const HostData back = read_points(path);
    REQUIRE(back.rows == 200);
    REQUIRE(back.cols == 3);
    REQUIRE(back.values.size() == data.values.size());
    CHECK(std::memcmp(back.values.data(), data.values.data(), data.values.size() * sizeof(double)) == 0);
  }
  CHECK(read_points_csv(dir.file("points.csv")).values == data.values);
  CHECK(read_points_npy(dir.file("points.npy")).values == data.values);
  // Written atomically: no temporary files are left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path)) ++files;
  CHECK(files == 3);
  // The npy file is float64 of shape (200, 3).
  const NpyArray a = read_npy(dir.file("points.npy"));
  CHECK(a.type == NpyType::float64);
  CHECK(a.shape == std::vector<std::size_t>{200, 3});
}

TEST_CASE("read_points_csv: header, blank lines, CRLF, spaces, signs and exponents", "[datasets][io]") {
  TempDir dir;
  const std::string path = dir.file("data.csv");
  write_bytes(path, "\xEF\xBB\xBF x , y,z\r\n\r\n 1, -2.5e3 ,+3\r\n\n4,5,6\n  \t \n7,8,.5\n1e-999,-0,1E2");
  const HostData d = read_points_csv(path);
  REQUIRE(d.rows == 4);
  REQUIRE(d.cols == 3);
  CHECK(d.values == std::vector<double>{1, -2500, 3, 4, 5, 6, 7, 8, 0.5, 0, 0, 100});
  CHECK(std::signbit(d(3, 1)));  // "-0" keeps its sign

  // Without a header the first line is data (also behind a byte-order mark).
  write_bytes(path,
              "\xEF\xBB\xBF"
              "1,2\n3,4\n");
  const HostData e = read_points_csv(path);
  CHECK(e.rows == 2);
  CHECK(e.values == std::vector<double>{1, 2, 3, 4});
  // A single column.
  write_bytes(path, "value\n1.5\n-2\n");
  const HostData f = read_points_csv(path);
  CHECK(f.rows == 2);
  CHECK(f.cols == 1);
  CHECK(f.values == std::vector<double>{1.5, -2});
}

TEST_CASE("read_points_csv: every error names the file, the line and the column", "[datasets][io]") {
  TempDir dir;
  const auto error_for = [&](const std::string& name, const std::string& contents) {
    const std::string path = dir.file(name);
    write_bytes(path, contents);
    return error_of([&] { read_points_csv(path); });
  };
  CHECK_THAT(error_for("text.csv", "a,b,c\n1,2,3\n4,5,6\n\n7,8,9\n1,2,3\n1,2,abc\n"),
             ContainsSubstring(dir.file("text.csv")) && ContainsSubstring("line 7, column 3: 'abc' is not a number"));
  CHECK_THAT(
      error_for("empty_cell.csv", "1,2,3\n4,,6\n"),
      ContainsSubstring(dir.file("empty_cell.csv")) && ContainsSubstring("line 2, column 2: '' is not a number"));
  CHECK_THAT(error_for("ragged.csv", "x,y,z\n1,2,3\n4,5,6\n\n7,8\n"),
             ContainsSubstring(dir.file("ragged.csv")) && ContainsSubstring("line 5 has 2 columns, expected 3"));
  CHECK_THAT(error_for("too_wide.csv", "1,2,3\n4,5,6,7\n"),
             ContainsSubstring(dir.file("too_wide.csv")) && ContainsSubstring("line 2 has 4 columns, expected 3"));
  CHECK_THAT(error_for("nan.csv", "x,y\n1,2\n\nnan,3\n"),
             ContainsSubstring(dir.file("nan.csv")) && ContainsSubstring("line 4, column 1: non-finite value"));
  CHECK_THAT(error_for("inf.csv", "1,2\n3,-inf\n"),
             ContainsSubstring(dir.file("inf.csv")) && ContainsSubstring("line 2, column 2: non-finite value"));
  CHECK_THAT(error_for("overflow.csv", "1,2\n3,4\n1e999,0\n"),
             ContainsSubstring(dir.file("overflow.csv")) && ContainsSubstring("line 3, column 1: non-finite value"));
  CHECK_THAT(error_for("empty.csv", ""), ContainsSubstring(dir.file("empty.csv")) && ContainsSubstring("no data rows"));
  CHECK_THAT(error_for("blank.csv", "\n  \n\r\n"),
             ContainsSubstring(dir.file("blank.csv")) && ContainsSubstring("no data rows"));
  CHECK_THAT(error_for("header_only.csv", "x,y,z\n"),
             ContainsSubstring(dir.file("header_only.csv")) && ContainsSubstring("no data rows"));
  CHECK_THAT(error_for("header_width.csv", "x,y\n1,2,3\n"),
             ContainsSubstring(dir.file("header_width.csv")) && ContainsSubstring("header on line 1 has 2 columns"));
  const std::string missing = dir.file("missing.csv");
  CHECK_THAT(error_of([&] { read_points_csv(missing); }),
             ContainsSubstring(missing) && ContainsSubstring("cannot open"));
}

TEST_CASE("read_points_npy: 2-D float32 and float64, and errors naming the file", "[datasets][io]") {
  TempDir dir;
  const std::string f32 = dir.file("f32.npy");
  const std::vector<float> values = {1.5f, -2.25f, 3.1f, 0.0f, 1e-3f, 7.0f};
  write_npy(f32, NpyType::float32, {3, 2}, values.data());
  const HostData d = read_points_npy(f32);
  REQUIRE(d.rows == 3);
  REQUIRE(d.cols == 2);
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(d.values[i] == double(values[i]));

  const std::vector<double> six = {1, 2, 3, 4, 5, 6};
  const auto error_for = [&](const std::string& name, NpyType type, const std::vector<std::size_t>& shape,
                             const void* data) {
    const std::string path = dir.file(name);
    write_npy(path, type, shape, data);
    return error_of([&] { read_points_npy(path); });
  };
  CHECK_THAT(error_for("rank1.npy", NpyType::float64, {6}, six.data()),
             ContainsSubstring(dir.file("rank1.npy")) && ContainsSubstring("2-D") && ContainsSubstring("(6,)"));
  CHECK_THAT(error_for("rank3.npy", NpyType::float64, {1, 2, 3}, six.data()),
             ContainsSubstring(dir.file("rank3.npy")) && ContainsSubstring("(1, 2, 3)"));
  const std::vector<std::complex<float>> c(4);
  CHECK_THAT(error_for("complex.npy", NpyType::complex64, {2, 2}, c.data()),
             ContainsSubstring(dir.file("complex.npy")) && ContainsSubstring("complex64"));
  CHECK_THAT(error_for("no_rows.npy", NpyType::float64, {0, 3}, six.data()),
             ContainsSubstring(dir.file("no_rows.npy")) && ContainsSubstring("no data rows"));
  std::vector<double> with_nan = six;
  with_nan[5] = std::nan("");
  CHECK_THAT(error_for("nan.npy", NpyType::float64, {3, 2}, with_nan.data()),
             ContainsSubstring(dir.file("nan.npy")) && ContainsSubstring("row 2, column 1"));
  std::vector<float> with_inf(values);
  with_inf[2] = std::numeric_limits<float>::infinity();
  CHECK_THAT(error_for("inf32.npy", NpyType::float32, {3, 2}, with_inf.data()),
             ContainsSubstring(dir.file("inf32.npy")) && ContainsSubstring("non-finite value") &&
                 ContainsSubstring("row 1, column 0"));
  const std::string garbage = dir.file("garbage.npy");
  write_bytes(garbage, "this is not an npy file at all");
  CHECK_THAT(error_of([&] { read_points_npy(garbage); }), ContainsSubstring(garbage));
}

TEST_CASE("read_points dispatches on the extension; writers refuse what cannot be read back", "[datasets][io]") {
  TempDir dir;
  const std::string txt = dir.file("points.txt");
  write_bytes(txt, "1,2\n");
  CHECK_THAT(error_of([&] { read_points(txt); }), ContainsSubstring(txt) && ContainsSubstring(".csv or .npy"));
  const std::string none = dir.file("points");
  write_bytes(none, "1,2\n");
  CHECK_THAT(error_of([&] { read_points(none); }), ContainsSubstring(none));

  HostData bad{2, 2, {1, 2, std::numeric_limits<double>::quiet_NaN(), 4}};
  const std::string csv = dir.file("bad.csv"), npy = dir.file("bad.npy");
  CHECK_THAT(error_of([&] { write_points_csv(csv, bad); }),
             ContainsSubstring(csv) && ContainsSubstring("row 1, column 0"));
  CHECK_THAT(error_of([&] { write_points_npy(npy, bad); }),
             ContainsSubstring(npy) && ContainsSubstring("row 1, column 0"));
  const HostData wrong_size{2, 3, {1, 2, 3}};
  CHECK_THAT(error_of([&] { write_points_csv(csv, wrong_size); }), ContainsSubstring(csv));
  CHECK_FALSE(fs::exists(csv));
  CHECK_FALSE(fs::exists(npy));
}

TEMPLATE_TEST_CASE("to_device_points copies host points to the device", "[datasets][io]", QGML_TEST_CONFIGS) {
  using Real = typename TestType::real_type;
  using Space = typename TestType::execution_space;
  const Space exec;
  const HostData data{3, 2, {0.1, -2, 3.5, 1e-3, 5, 1.0 / 3}};
  const auto x = qgml::to_device_points<Real>(exec, data);
  static_assert(std::is_same_v<typename decltype(x)::memory_space, typename Space::memory_space>);
  REQUIRE(x.extent(0) == 3);
  REQUIRE(x.extent(1) == 2);
  const HostData back = to_host_data(x);
  for (std::size_t i = 0; i < data.values.size(); ++i) CHECK(back.values[i] == double(Real(data.values[i])));

  const HostData huge{1, 2, {1, 1e39}};
  if constexpr (std::is_same_v<Real, float>)
    CHECK_THAT(error_of([&] { qgml::to_device_points<Real>(exec, huge); }), ContainsSubstring("row 0, column 1"));
  else
    CHECK(to_host_data(qgml::to_device_points<Real>(exec, huge)).values == huge.values);
  CHECK_THROWS_AS(qgml::to_device_points<Real>(exec, HostData{2, 2, {1, 2, 3}}), Error);
}
