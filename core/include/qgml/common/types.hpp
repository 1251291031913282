// Precision-generic scalar types and the View aliases every qgml kernel works on.
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace qgml {

// Real is double by default; float is selectable everywhere with the same code path.
using default_real = double;

template <class Real>
using complex_t = Kokkos::complex<Real>;

template <class Real>
inline constexpr bool is_supported_real_v = std::is_same_v<Real, double> || std::is_same_v<Real, float>;

// D x N x N: a matrix configuration (A_1 .. A_D), or a batch of N x N matrices (T x N x N).
template <class Real, class MemorySpace>
using MatrixStack = Kokkos::View<complex_t<Real>***, Kokkos::LayoutRight, MemorySpace>;

// N x N complex matrix.
template <class Real, class MemorySpace>
using Matrix = Kokkos::View<complex_t<Real>**, Kokkos::LayoutRight, MemorySpace>;

// T x D points (row-major: point t is row t), or T x N real values (eigenvalues per point).
template <class Real, class MemorySpace>
using RealMatrix = Kokkos::View<Real**, Kokkos::LayoutRight, MemorySpace>;

// T values, one per point.
template <class Real, class MemorySpace>
using RealVector = Kokkos::View<Real*, MemorySpace>;

// T x N complex vectors, one per point (e.g. ground states).
template <class Real, class MemorySpace>
using ComplexMatrix = Kokkos::View<complex_t<Real>**, Kokkos::LayoutRight, MemorySpace>;

template <class MemorySpace>
using IntVector = Kokkos::View<int*, MemorySpace>;

// Whether ExecSpace runs on the host (its memory is HostSpace): host-only paths and team sizes.
template <class ExecSpace>
inline constexpr bool is_host_space_v = std::is_same_v<typename ExecSpace::memory_space, Kokkos::HostSpace>;

// Machine epsilon without <limits> in device code.
template <class Real>
KOKKOS_INLINE_FUNCTION constexpr Real epsilon() {
  if constexpr (std::is_same_v<Real, float>) {
    return 1.1920928955078125e-07f;
  } else {
    return 2.220446049250313e-16;
  }
}

// Smallest positive normal number, likewise.
template <class Real>
KOKKOS_INLINE_FUNCTION constexpr Real min_normal() {
  if constexpr (std::is_same_v<Real, float>) {
    return 1.17549435e-38f;
  } else {
    return 2.2250738585072014e-308;
  }
}

}  // namespace qgml
