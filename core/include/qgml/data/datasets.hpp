// Seeded synthetic data sets (docs/math.md 8.4), generated on the device: point t depends only on (seed, t),
// so the same data come out on every backend, thread count and rank count.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

#include "qgml/common/error.hpp"
#include "qgml/common/random.hpp"
#include "qgml/common/types.hpp"

namespace qgml {

namespace detail {

// Kernels are named functors, not extended lambdas: docs/architecture.md "Host execution spaces in a CUDA build".
// Row i of x: point t = first + i on S^{D-1}, g / |g| with g ~ N(0, I_D), plus noise * N(0, I_D).
template <class Real, class MemorySpace>
struct SpherePoints {
  RealMatrix<Real, MemorySpace> x;
  CounterRng rng;
  std::int64_t first = 0;
  int d = 0;
  double noise = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const std::int64_t t = first + i;
    const std::uint64_t base = 2 * std::uint64_t(t) * std::uint64_t(d);
    double norm = 0;
    for (int k = 0; k < d; ++k) {
      const double g = rng.normal(base + k);
      norm += g * g;
    }
    norm = math::sqrt(norm);
    for (int k = 0; k < d; ++k) x(i, k) = Real(rng.normal(base + k) / norm + noise * rng.normal(base + d + k));
  }
};

}  // namespace detail

// T points uniform on the unit sphere S^{D-1} in R^D (g ~ N(0, I_D), x = g / |g|), plus i.i.d.
// Gaussian noise of standard deviation `noise` in every coordinate (the "fuzzy sphere" data).
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> sphere_points(const ExecSpace& exec, int count, int d, double noise,
                                                                 std::uint64_t seed, std::int64_t first = 0) {
  QGML_REQUIRE(count >= 1 && d >= 1, "qgml::sphere_points: need T >= 1 and D >= 1");
  RealMatrix<Real, typename ExecSpace::memory_space> x(Kokkos::ViewAllocateWithoutInitializing("qgml::sphere_points"),
                                                       count, d);
  const CounterRng rng(seed, 0x5350484552ULL);  // "SPHER"
  Kokkos::parallel_for("qgml::sphere_points", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                       detail::SpherePoints<Real, typename ExecSpace::memory_space>{x, rng, first, d, noise});
  return x;
}

namespace detail {

// Row i of x: point t = first + i, r (cos theta, sin theta) with theta ~ U[0, 2 pi), plus noise * N(0, I_2).
template <class Real, class MemorySpace>
struct CirclePoints {
  RealMatrix<Real, MemorySpace> x;
  CounterRng angle, jitter;
  std::int64_t first = 0;
  double radius = 0, noise = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const int i) const {
    const std::int64_t t = first + i;
    const double theta = 6.283185307179586 * angle.uniform(std::uint64_t(t));
    x(i, 0) = Real(radius * math::cos(theta) + noise * jitter.normal(2 * std::uint64_t(t)));
    x(i, 1) = Real(radius * math::sin(theta) + noise * jitter.normal(2 * std::uint64_t(t) + 1));
  }
};

}  // namespace detail

// T points on the circle of radius r in R^2 (theta ~ U[0, 2 pi)) plus Gaussian noise.
template <class Real, class ExecSpace>
RealMatrix<Real, typename ExecSpace::memory_space> circle_points(const ExecSpace& exec, int count, double radius,
                                                                 double noise, std::uint64_t seed,
                                                                 std::int64_t first = 0) {
  QGML_REQUIRE(count >= 1, "qgml::circle_points: need T >= 1");
  RealMatrix<Real, typename ExecSpace::memory_space> x(Kokkos::ViewAllocateWithoutInitializing("qgml::circle_points"),
                                                       count, 2);
  const CounterRng angle(seed, 0x434952434cULL), jitter(seed, 0x434952434dULL);
  Kokkos::parallel_for(
      "qgml::circle_points", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
      detail::CirclePoints<Real, typename ExecSpace::memory_space>{x, angle, jitter, first, radius, noise});
  return x;
}

}  // namespace qgml
