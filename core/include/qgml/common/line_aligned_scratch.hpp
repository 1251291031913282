// The packed kernels' scratch, started on a cache line.
//
// One element of a pack (W lanes of Real, linalg::packed_eigh_width) is 64 bytes, and every array in a
// pack's scratch is a whole number of elements long, so when the scratch starts on a 64-byte boundary
// each element is exactly one cache line. Kokkos aligns team scratch to 8 bytes only (the OpenMP
// backend's level-1 scratch began 48 bytes past a line in the fused training kernel): then every
// element straddles two lines, each vector load and store touches both, and the Householder
// reduction ran 1.5x slower at N = 64 and 128 (perf/NOTES.md, "Cache-line alignment of the packed
// scratch").
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace qgml {

inline constexpr std::size_t scratch_line_bytes = 64;

// Reals to request for a scratch of `reals` Reals that line_aligned may move forward by up to one
// line.
template <class Real>
KOKKOS_INLINE_FUNCTION constexpr std::size_t line_aligned_scratch_reals(std::size_t reals) {
  return reals + scratch_line_bytes / sizeof(Real);
}

// The first 64-byte boundary at or after p (p itself when it is one).
template <class Real>
KOKKOS_INLINE_FUNCTION Real* line_aligned(Real* p) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
  constexpr std::uintptr_t mask = scratch_line_bytes - 1;
  return reinterpret_cast<Real*>((a + mask) & ~mask);
}

}  // namespace qgml
