// Seeded manifolds for intrinsic-dimension experiments, generated on the device like datasets.hpp:
// point t depends only on (seed, t), so the same data come out on every backend, thread count and
// rank count, and the first T' points of a data set of T > T' points are the data set of T' points.
//
// Every generator draws its parameters and its noise from distinct CounterRng streams (so changing the
// noise level moves each point by exactly noise * g_t, g_t ~ N(0, I_D) fixed by (seed, t)), computes in
// double and rounds once to Real. Noise is i.i.d. Gaussian of standard deviation `noise` added in all
// ambient coordinates, with no re-projection (docs/math.md 8.4), except line_points, where it is projected
// orthogonal to the line as in the reference.
//
// Besides the reference generators of docs/math.md 8.4 (spiral, line, Swiss roll, hypercube) this has members of
// the benchmark family of Hein & Audibert (ICML 2005) and Campadelli et al. (2015, "Intrinsic dimension
// estimation: relevant techniques and a benchmark framework"); their names there are given per
// generator:
//   M1  10-sphere in R^11 ............ benchmark_sphere10_points  (= sphere_points(.., 11, ..))
//   M2  affine 3-space in R^5 ........ affine_points
//   M5  1-d helix in R^3 ............. helix_points
//   M7  Swiss roll ................... swiss_roll_points
//   M10b 17-cube in R^18 ............. hypercube_points(exec, T, 17, 18, noise, seed)
//   M11 Moebius band ................. mobius_points
//   M13 1-d curve in R^13 ............ curve13_points
// (the random matrices of M2, the twist count of M11 and the curve of M13 differ from the original
// generators; see each function).
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/random.hpp"
#include "qgml/common/types.hpp"
#include "qgml/data/datasets.hpp"

namespace qgml {

namespace detail {

// Kernels are named functors, not extended lambdas: docs/architecture.md "Host execution spaces in a CUDA build".
// Row i of x: point t = first + i of the spiral, (s cos s, s sin s, 0) with s ~ U[0, 4 pi], plus noise.
template <class Real, class MemorySpace>
struct SpiralPoints {
  RealMatrix<Real, MemorySpace> x;
  CounterRng param, jitter;
  std::int64_t first = 0;
  double noise = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const std::int64_t t = first + i;
    const std::uint64_t n = 3 * std::uint64_t(t);
    const double s = 12.566370614359172 * param.uniform(std::uint64_t(t));  // 4 pi u
    x(i, 0) = Real(s * math::cos(s) + noise * jitter.normal(n));
    x(i, 1) = Real(s * math::sin(s) + noise * jitter.normal(n + 1));
    x(i, 2) = Real(noise * jitter.normal(n + 2));
  }
};

}  // namespace detail

// Planar Archimedean spiral in R^3, intrinsic dimension 1: t ~ U[0, 4 pi], x = (t cos t, t sin t, 0).
// The reference's SpiralManifold (docs/math.md 8.4), but with t drawn at random rather than on the grid
// linspace(0, 4 pi, T).
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> spiral_points(const ExecSpace& exec, int count, double noise,
                                                                 std::uint64_t seed, std::int64_t first = 0) {
  QGML_REQUIRE(count >= 1 && noise >= 0, "qgml::spiral_points: need T >= 1 and noise >= 0");
  RealMatrix<Real, typename ExecSpace::memory_space> x(Kokkos::ViewAllocateWithoutInitializing("qgml::spiral_points"),
                                                       count, 3);
  const CounterRng param(seed, 0x5350495254ULL), jitter(seed, 0x535049524eULL);  // "SPIRT", "SPIRN"
  Kokkos::parallel_for("qgml::spiral_points", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                       detail::SpiralPoints<Real, typename ExecSpace::memory_space>{x, param, jitter, first, noise});
  return x;
}

namespace detail {

// Row i of x: point t = first + i of the line, (s, s, s) with s ~ U[0, 10], plus noise orthogonal to (1, 1, 1).
template <class Real, class MemorySpace>
struct LinePoints {
  RealMatrix<Real, MemorySpace> x;
  CounterRng param, jitter;
  std::int64_t first = 0;
  double noise = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const std::int64_t t = first + i;
    const std::uint64_t n = 3 * std::uint64_t(t);
    const double s = 10.0 * param.uniform(std::uint64_t(t));
    const double g0 = noise * jitter.normal(n), g1 = noise * jitter.normal(n + 1), g2 = noise * jitter.normal(n + 2);
    const double mean = (g0 + g1 + g2) / 3.0;
    x(i, 0) = Real(s + (g0 - mean));
    x(i, 1) = Real(s + (g1 - mean));
    x(i, 2) = Real(s + (g2 - mean));
  }
};

}  // namespace detail

// Straight line in R^3, intrinsic dimension 1: t ~ U[0, 10], x = (t, t, t) + n_perp, where n_perp is
// noise * N(0, I_3) projected onto the plane orthogonal to (1, 1, 1) (the reference's LineManifold,
// docs/math.md 8.4, with t random rather than on a grid). Each coordinate of n_perp has standard deviation
// noise * sqrt(2/3), and (x_0 + x_1 + x_2) / 3 = t exactly.
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> line_points(const ExecSpace& exec, int count, double noise,
                                                               std::uint64_t seed, std::int64_t first = 0) {
  QGML_REQUIRE(count >= 1 && noise >= 0, "qgml::line_points: need T >= 1 and noise >= 0");
  RealMatrix<Real, typename ExecSpace::memory_space> x(Kokkos::ViewAllocateWithoutInitializing("qgml::line_points"),
                                                       count, 3);
  const CounterRng param(seed, 0x4c494e4554ULL), jitter(seed, 0x4c494e454eULL);  // "LINET", "LINEN"
  Kokkos::parallel_for("qgml::line_points", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                       detail::LinePoints<Real, typename ExecSpace::memory_space>{x, param, jitter, first, noise});
  return x;
}

namespace detail {

// Row i of x: point t = first + i of the Swiss roll, (s cos s, 21 v, s sin s) with s = 1.5 pi (1 + 2 u),
// u, v ~ U[0, 1], plus noise.
template <class Real, class MemorySpace>
struct SwissRollPoints {
  RealMatrix<Real, MemorySpace> x;
  CounterRng param, jitter;
  std::int64_t first = 0;
  double noise = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const std::int64_t t = first + i;
    const std::uint64_t n = 3 * std::uint64_t(t);
    const double s = 4.71238898038469 * (1.0 + 2.0 * param.uniform(2 * std::uint64_t(t)));  // 1.5 pi (1 + 2u)
    const double height = 21.0 * param.uniform(2 * std::uint64_t(t) + 1);
    x(i, 0) = Real(s * math::cos(s) + noise * jitter.normal(n));
    x(i, 1) = Real(height + noise * jitter.normal(n + 1));
    x(i, 2) = Real(s * math::sin(s) + noise * jitter.normal(n + 2));
  }
};

}  // namespace detail

// Swiss roll in R^3, intrinsic dimension 2 (scikit-learn make_swiss_roll; benchmark M7): u, v ~ U[0, 1],
// t = 1.5 pi (1 + 2 u) in [1.5 pi, 4.5 pi], height = 21 v, x = (t cos t, height, t sin t). Raw, unscaled.
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> swiss_roll_points(const ExecSpace& exec, int count, double noise,
                                                                     std::uint64_t seed, std::int64_t first = 0) {
  QGML_REQUIRE(count >= 1 && noise >= 0, "qgml::swiss_roll_points: need T >= 1 and noise >= 0");
  RealMatrix<Real, typename ExecSpace::memory_space> x(
      Kokkos::ViewAllocateWithoutInitializing("qgml::swiss_roll_points"), count, 3);
  const CounterRng param(seed, 0x5357535254ULL), jitter(seed, 0x535753524eULL);  // "SWSRT", "SWSRN"
  Kokkos::parallel_for("qgml::swiss_roll_points", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                       detail::SwissRollPoints<Real, typename ExecSpace::memory_space>{x, param, jitter, first, noise});
  return x;
}

// The fixed random rotation of hypercube_points: a D x D orthogonal matrix, row-major (element (i, j) at
// i * D + j), whose columns are the Gram-Schmidt orthonormalisation (modified, done twice for accuracy)
// of the columns of a Gaussian matrix G_ij ~ N(0, 1) drawn from CounterRng(seed, "CUBEQ"), G_ij = normal(i D +
// j). Column j depends only on the first j + 1 columns of G, so the first d columns for a given (D, seed)
// are the same for every intrinsic dimension d.
inline std::vector<double> hypercube_rotation(int ambient_dim, std::uint64_t seed) {
  QGML_REQUIRE(ambient_dim >= 1, "qgml::hypercube_rotation: need D >= 1");
  const int D = ambient_dim;
  const CounterRng rng(seed, 0x4355424551ULL);  // "CUBEQ"
  std::vector<double> q(std::size_t(D) * D);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = rng.normal(i);
  for (int j = 0; j < D; ++j) {
    for (int pass = 0; pass < 2; ++pass)
      for (int k = 0; k < j; ++k) {
        double dot = 0;
        for (int i = 0; i < D; ++i) dot += q[std::size_t(i) * D + k] * q[std::size_t(i) * D + j];
        for (int i = 0; i < D; ++i) q[std::size_t(i) * D + j] -= dot * q[std::size_t(i) * D + k];
      }
    double norm = 0;
    for (int i = 0; i < D; ++i) norm += q[std::size_t(i) * D + j] * q[std::size_t(i) * D + j];
    norm = std::sqrt(norm);
    // A Gaussian matrix is singular with probability zero; this guards against a pathological seed.
    QGML_REQUIRE(norm > 1e-8, "qgml::hypercube_rotation: degenerate Gaussian matrix for this seed");
    for (int i = 0; i < D; ++i) q[std::size_t(i) * D + j] /= norm;
  }
  return q;
}

namespace detail {

// Row i of x: point t = first + i of the rotated cube, sum_{j < d} u_j Q[:, j] with u ~ U[-1, 1]^d, plus noise.
template <class Real, class MemorySpace>
struct HypercubePoints {
  RealMatrix<Real, MemorySpace> x;
  Kokkos::View<double**, Kokkos::LayoutRight, MemorySpace> q;
  CounterRng param, jitter;
  std::int64_t first = 0;
  int d = 0, D = 0;
  double noise = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const std::int64_t t = first + i;
    const std::uint64_t base = std::uint64_t(t) * std::uint64_t(d);
    const std::uint64_t n = std::uint64_t(t) * std::uint64_t(D);
    for (int k = 0; k < D; ++k) {
      double v = 0;
      for (int j = 0; j < d; ++j) v += q(k, j) * (2.0 * param.uniform(base + j) - 1.0);
      x(i, k) = Real(v + noise * jitter.normal(n + k));
    }
  }
};

}  // namespace detail

// Solid d-cube rotated into R^D, intrinsic dimension d (the reference's HypercubeManifold, docs/math.md 8.4;
// benchmark M10b is d = 17, D = 18, M10a d = 10, D = 11): u ~ U[-1, 1]^d,
// x = Q (u, 0, ..., 0) = sum_{i < d} u_i Q[:, i] with Q = hypercube_rotation(D, seed). Q^T x = (u, 0) recovers
// the cube coordinates. Note that the benchmark's Cubic manifolds are cube *surfaces*; this is the solid cube
// of the reference.
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> hypercube_points(const ExecSpace& exec, int count, int intrinsic_dim,
                                                                    int ambient_dim, double noise, std::uint64_t seed,
                                                                    std::int64_t first = 0) {
  QGML_REQUIRE(count >= 1 && noise >= 0, "qgml::hypercube_points: need T >= 1 and noise >= 0");
  QGML_REQUIRE(intrinsic_dim >= 1 && intrinsic_dim <= ambient_dim,
               "qgml::hypercube_points: need 1 <= intrinsic dimension d <= ambient dimension D");
  using memory_space = typename ExecSpace::memory_space;
  const int d = intrinsic_dim, D = ambient_dim;
  // The first d columns of Q (D x d) on the device.
  const std::vector<double> q_host = hypercube_rotation(D, seed);
  Kokkos::View<double**, Kokkos::LayoutRight, memory_space> q(
      Kokkos::ViewAllocateWithoutInitializing("qgml::hypercube_points::rotation"), D, d);
  auto q_mirror = Kokkos::create_mirror_view(q);
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < d; ++j) q_mirror(i, j) = q_host[std::size_t(i) * D + j];
  Kokkos::deep_copy(exec, q, q_mirror);

  RealMatrix<Real, memory_space> x(Kokkos::ViewAllocateWithoutInitializing("qgml::hypercube_points"), count, D);
  const CounterRng param(seed, 0x4355424555ULL), jitter(seed, 0x435542454eULL);  // "CUBEU", "CUBEN"
  Kokkos::parallel_for(
      "qgml::hypercube_points", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
      detail::HypercubePoints<Real, typename ExecSpace::memory_space>{x, q, param, jitter, first, d, D, noise});
  // The host mirror and the rotation are released on return: they must outlive the copy and the kernel.
  qgml::fence(exec, "qgml::hypercube_points: the rotation must outlive the kernel");
  return x;
}

// The unit d-sphere S^d in R^{d+1}, intrinsic dimension d: sphere_points(exec, T, d + 1, noise, seed)
// (g ~ N(0, I_{d+1}), x = g / |g|).
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> hypersphere_points(const ExecSpace& exec, int count,
                                                                      int intrinsic_dim, double noise,
                                                                      std::uint64_t seed, std::int64_t first = 0) {
  QGML_REQUIRE(intrinsic_dim >= 1, "qgml::hypersphere_points: need intrinsic dimension d >= 1");
  return sphere_points<Real>(exec, count, intrinsic_dim + 1, noise, seed, first);
}

// Benchmark M1: the unit 10-sphere in R^11, intrinsic dimension 10 (= sphere_points(exec, T, 11, ..)).
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> benchmark_sphere10_points(const ExecSpace& exec, int count,
                                                                             double noise, std::uint64_t seed,
                                                                             std::int64_t first = 0) {
  return hypersphere_points<Real>(exec, count, 10, noise, seed, first);
}

// The fixed map of affine_points: A (5 x 3, row-major, a[3 i + j] = A_ij) and b (5), all entries
// N(0, 1) drawn from CounterRng(seed, "AFFAB") (A_ij = normal(3 i + j), b_i = normal(15 + i)).
struct AffineMap {
  Kokkos::Array<double, 15> a;
  Kokkos::Array<double, 5> b;
};

inline AffineMap affine_points_map(std::uint64_t seed) {
  const CounterRng rng(seed, 0x4146464142ULL);  // "AFFAB"
  AffineMap m;
  for (int i = 0; i < 15; ++i) m.a[i] = rng.normal(std::uint64_t(i));
  for (int i = 0; i < 5; ++i) m.b[i] = rng.normal(std::uint64_t(15 + i));
  return m;
}

namespace detail {

// Row i of x: point t = first + i of the affine 3-space, A u + b with u ~ U[0, 1]^3, plus noise.
template <class Real, class MemorySpace>
struct AffinePoints {
  RealMatrix<Real, MemorySpace> x;
  AffineMap map;
  CounterRng param, jitter;
  std::int64_t first = 0;
  double noise = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const std::int64_t t = first + i;
    const std::uint64_t base = 3 * std::uint64_t(t), n = 5 * std::uint64_t(t);
    const double u0 = param.uniform(base), u1 = param.uniform(base + 1), u2 = param.uniform(base + 2);
    for (int k = 0; k < 5; ++k)
      x(i, k) = Real(map.a[3 * k] * u0 + map.a[3 * k + 1] * u1 + map.a[3 * k + 2] * u2 + map.b[k] +
                     noise * jitter.normal(n + k));
  }
};

}  // namespace detail

// Benchmark M2: an affine 3-space in R^5, intrinsic dimension 3: u ~ U[0, 1]^3, x = A u + b with the
// seeded A, b of affine_points_map(seed) (A has rank 3 with probability one). The original generator
// uses u ~ U[0, 4]^3 and one fixed hand-written A, b; only the (random) affine frame differs.
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> affine_points(const ExecSpace& exec, int count, double noise,
                                                                 std::uint64_t seed, std::int64_t first = 0) {
  QGML_REQUIRE(count >= 1 && noise >= 0, "qgml::affine_points: need T >= 1 and noise >= 0");
  RealMatrix<Real, typename ExecSpace::memory_space> x(Kokkos::ViewAllocateWithoutInitializing("qgml::affine_points"),
                                                       count, 5);
  const AffineMap map = affine_points_map(seed);                             // captured by value: no device allocation
  const CounterRng param(seed, 0x41464655ULL), jitter(seed, 0x4146464eULL);  // "AFFU", "AFFN"
  Kokkos::parallel_for(
      "qgml::affine_points", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
      detail::AffinePoints<Real, typename ExecSpace::memory_space>{x, map, param, jitter, first, noise});
  return x;
}

namespace detail {

// Row i of x: point t = first + i of the helix, ((2 + cos 8s) cos s, (2 + cos 8s) sin s, sin 8s), plus noise.
template <class Real, class MemorySpace>
struct HelixPoints {
  RealMatrix<Real, MemorySpace> x;
  CounterRng param, jitter;
  std::int64_t first = 0;
  double noise = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const std::int64_t t = first + i;
    const std::uint64_t n = 3 * std::uint64_t(t);
    const double s = 6.283185307179586 * param.uniform(std::uint64_t(t));
    const double r = 2.0 + math::cos(8.0 * s);
    x(i, 0) = Real(r * math::cos(s) + noise * jitter.normal(n));
    x(i, 1) = Real(r * math::sin(s) + noise * jitter.normal(n + 1));
    x(i, 2) = Real(math::sin(8.0 * s) + noise * jitter.normal(n + 2));
  }
};

}  // namespace detail

// Benchmark M5 (Helix1d): a closed 1-d curve in R^3, intrinsic dimension 1: t ~ U[0, 2 pi),
// x = ((2 + cos 8t) cos t, (2 + cos 8t) sin t, sin 8t). Since 2 + cos 8t >= 1, t = atan2(x_1, x_0).
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> helix_points(const ExecSpace& exec, int count, double noise,
                                                                std::uint64_t seed, std::int64_t first = 0) {
  QGML_REQUIRE(count >= 1 && noise >= 0, "qgml::helix_points: need T >= 1 and noise >= 0");
  RealMatrix<Real, typename ExecSpace::memory_space> x(Kokkos::ViewAllocateWithoutInitializing("qgml::helix_points"),
                                                       count, 3);
  const CounterRng param(seed, 0x48454c5854ULL), jitter(seed, 0x48454c584eULL);  // "HELXT", "HELXN"
  Kokkos::parallel_for("qgml::helix_points", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                       detail::HelixPoints<Real, typename ExecSpace::memory_space>{x, param, jitter, first, noise});
  return x;
}

namespace detail {

// Row i of x: point t = first + i of the Moebius band, (r cos u, r sin u, v/2 sin(u/2)) with
// r = 1 + v/2 cos(u/2), u ~ U[0, 2 pi), v ~ U[-1, 1], plus noise.
template <class Real, class MemorySpace>
struct MobiusPoints {
  RealMatrix<Real, MemorySpace> x;
  CounterRng param, jitter;
  std::int64_t first = 0;
  double noise = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const std::int64_t t = first + i;
    const std::uint64_t n = 3 * std::uint64_t(t);
    const double u = 6.283185307179586 * param.uniform(2 * std::uint64_t(t));
    const double v = 2.0 * param.uniform(2 * std::uint64_t(t) + 1) - 1.0;
    const double r = 1.0 + 0.5 * v * math::cos(0.5 * u);
    x(i, 0) = Real(r * math::cos(u) + noise * jitter.normal(n));
    x(i, 1) = Real(r * math::sin(u) + noise * jitter.normal(n + 1));
    x(i, 2) = Real(0.5 * v * math::sin(0.5 * u) + noise * jitter.normal(n + 2));
  }
};

}  // namespace detail

// Moebius band in R^3, intrinsic dimension 2 (benchmark M11 family): u ~ U[0, 2 pi), v ~ U[-1, 1],
// x = ((1 + v/2 cos(u/2)) cos u, (1 + v/2 cos(u/2)) sin u, v/2 sin(u/2)): the classic once-twisted,
// non-orientable band of width 1 around the unit circle. (The benchmark's M11 uses cos(5u), sin(5u),
// "10 times twisted"; the intrinsic dimension is 2 either way.) Since 1 + v/2 cos(u/2) >= 1/2,
// u = atan2(x_1, x_0) mod 2 pi.
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> mobius_points(const ExecSpace& exec, int count, double noise,
                                                                 std::uint64_t seed, std::int64_t first = 0) {
  QGML_REQUIRE(count >= 1 && noise >= 0, "qgml::mobius_points: need T >= 1 and noise >= 0");
  RealMatrix<Real, typename ExecSpace::memory_space> x(Kokkos::ViewAllocateWithoutInitializing("qgml::mobius_points"),
                                                       count, 3);
  const CounterRng param(seed, 0x4d4f425556ULL), jitter(seed, 0x4d4f42554eULL);  // "MOBUV", "MOBUN"
  Kokkos::parallel_for("qgml::mobius_points", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                       detail::MobiusPoints<Real, typename ExecSpace::memory_space>{x, param, jitter, first, noise});
  return x;
}

namespace detail {

// Row i of x: point t = first + i of the curve in R^13, x_k = cos or sin(2 pi f s) / f with f = k/2 + 1
// (cos for even k), s ~ U[0, 1), plus noise.
template <class Real, class MemorySpace>
struct Curve13Points {
  RealMatrix<Real, MemorySpace> x;
  CounterRng param, jitter;
  std::int64_t first = 0;
  double noise = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const std::int64_t t = first + i;
    const std::uint64_t n = 13 * std::uint64_t(t);
    const double s = param.uniform(std::uint64_t(t));
    for (int k = 0; k < 13; ++k) {
      const double f = double(k / 2 + 1);
      const double phase = 6.283185307179586 * f * s;
      const double v = (k % 2 == 0 ? math::cos(phase) : math::sin(phase)) / f;
      x(i, k) = Real(v + noise * jitter.normal(n + k));
    }
  }
};

}  // namespace detail

// Benchmark M13 family: a smooth closed 1-d curve in R^13, intrinsic dimension 1, not contained in any
// proper affine subspace: t ~ U[0, 1), and for j = 0..5
//   x_{2j} = cos(2 pi (j+1) t) / (j+1),  x_{2j+1} = sin(2 pi (j+1) t) / (j+1),  x_12 = cos(14 pi t) / 7.
// (x_0, x_1) is the unit circle, so the curve is injective on [0, 1) and t = atan2(x_1, x_0) / 2 pi mod 1;
// |x'(t)| = 2 pi sqrt(6 + sin^2(14 pi t)) never vanishes. The 13 coordinate functions are linearly
// independent Fourier modes. (A cosine-only curve cos(2 pi (k+1) t) would fold onto itself: x(t) = x(1 - t).)
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> curve13_points(const ExecSpace& exec, int count, double noise,
                                                                  std::uint64_t seed, std::int64_t first = 0) {
  QGML_REQUIRE(count >= 1 && noise >= 0, "qgml::curve13_points: need T >= 1 and noise >= 0");
  RealMatrix<Real, typename ExecSpace::memory_space> x(Kokkos::ViewAllocateWithoutInitializing("qgml::curve13_points"),
                                                       count, 13);
  const CounterRng param(seed, 0x4352563133ULL), jitter(seed, 0x435256314eULL);  // "CRV13", "CRV1N"
  Kokkos::parallel_for("qgml::curve13_points", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                       detail::Curve13Points<Real, typename ExecSpace::memory_space>{x, param, jitter, first, noise});
  return x;
}

}  // namespace qgml
