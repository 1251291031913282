// Shared test fixtures: the (execution space, precision) pairs every test runs for, host reference
// computations in double, and tolerances.
#pragma once

#include <Kokkos_Core.hpp>

#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>

#include "qgml/common/random.hpp"
#include "qgml/model/initializers.hpp"

namespace qgml::test {

template <class Space, class Real>
struct Config {
  using execution_space = Space;
  using memory_space = typename Space::memory_space;
  using real_type = Real;
};

#ifdef KOKKOS_ENABLE_SERIAL
using Serial_double = Config<Kokkos::Serial, double>;
using Serial_float = Config<Kokkos::Serial, float>;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
using OpenMP_double = Config<Kokkos::OpenMP, double>;
using OpenMP_float = Config<Kokkos::OpenMP, float>;
#endif
#ifdef KOKKOS_ENABLE_CUDA
using Cuda_double = Config<Kokkos::Cuda, double>;
using Cuda_float = Config<Kokkos::Cuda, float>;
#endif

// Every enabled execution space, double and float (the argument list of TEMPLATE_TEST_CASE).
#if defined(KOKKOS_ENABLE_SERIAL) && defined(KOKKOS_ENABLE_OPENMP)
#define QGML_TEST_HOST_CONFIGS \
  qgml::test::Serial_double, qgml::test::Serial_float, qgml::test::OpenMP_double, qgml::test::OpenMP_float
#elif defined(KOKKOS_ENABLE_SERIAL)
#define QGML_TEST_HOST_CONFIGS qgml::test::Serial_double, qgml::test::Serial_float
#else
#define QGML_TEST_HOST_CONFIGS qgml::test::OpenMP_double, qgml::test::OpenMP_float
#endif
#ifdef KOKKOS_ENABLE_CUDA
#define QGML_TEST_CONFIGS QGML_TEST_HOST_CONFIGS, qgml::test::Cuda_double, qgml::test::Cuda_float
#else
#define QGML_TEST_CONFIGS QGML_TEST_HOST_CONFIGS
#endif

// True if a and b hold the same doubles bit for bit.
inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Relative tolerance for results that should be exact up to rounding.
template <class Real>
constexpr double tight_tolerance() {
  return std::is_same_v<Real, float> ? 1e-5 : 1e-13;
}

using cplx = std::complex<double>;

// A dense host matrix in double, row-major.
struct HostMatrix {
  int n = 0;
  std::vector<cplx> a;
  explicit HostMatrix(int n_ = 0) : n(n_), a(std::size_t(n_) * n_, 0.0) {}
  cplx& operator()(int i, int j) { return a[std::size_t(i) * n + j]; }
  const cplx& operator()(int i, int j) const { return a[std::size_t(i) * n + j]; }
};

inline HostMatrix matrix_of(const HostMatrices& m, int k) {
  HostMatrix r(m.N);
  for (int i = 0; i < m.N; ++i)
    for (int j = 0; j < m.N; ++j) r(i, j) = m(k, i, j);
  return r;
}

inline HostMatrix multiply(const HostMatrix& x, const HostMatrix& y) {
  HostMatrix r(x.n);
  for (int i = 0; i < x.n; ++i)
    for (int l = 0; l < x.n; ++l)
      for (int j = 0; j < x.n; ++j) r(i, j) += x(i, l) * y(l, j);
  return r;
}

// a + h e, entry by entry: a step along a direction e (finite differences).
inline HostMatrices axpy(const HostMatrices& a, double h, const HostMatrices& e) {
  HostMatrices r = a;
  for (std::size_t i = 0; i < r.values.size(); ++i) r.values[i] += h * e.values[i];
  return r;
}

inline HostMatrix axpy(const HostMatrix& a, double h, const HostMatrix& e) {
  HostMatrix r = a;
  for (std::size_t i = 0; i < r.a.size(); ++i) r.a[i] += h * e.a[i];
  return r;
}

inline double max_abs_difference(const HostMatrix& x, const HostMatrix& y) {
  double m = 0;
  for (std::size_t i = 0; i < x.a.size(); ++i) m = std::max(m, std::abs(x.a[i] - y.a[i]));
  return m;
}

// Random points with coordinates uniform in [-scale, scale].
inline std::vector<double> random_points(int count, int d, double scale, std::uint64_t seed) {
  const CounterRng rng(seed, 99);
  std::vector<double> p(std::size_t(count) * d);
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = scale * (2 * rng.uniform(i) - 1);
  return p;
}

// Copies host doubles (count x d, row-major) into a new device View of Real.
template <class Real, class Space>
Kokkos::View<Real**, Kokkos::LayoutRight, typename Space::memory_space> to_device_points(const std::vector<double>& p,
                                                                                         int count, int d) {
  Kokkos::View<Real**, Kokkos::LayoutRight, typename Space::memory_space> v("qgml::test::points", count, d);
  auto h = Kokkos::create_mirror_view(v);
  for (int t = 0; t < count; ++t)
    for (int k = 0; k < d; ++k) h(t, k) = static_cast<Real>(p[std::size_t(t) * d + k]);
  Kokkos::deep_copy(v, h);
  return v;
}

}  // namespace qgml::test
