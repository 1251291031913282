// The packed kernels' scratch, started on a cache line.
//
// One element of a pack (W lanes of Real, linalg::packed_eigh_width) is 64 bytes, and every array in a
// pack's scratch is a whole number of elements long, so when the scratch starts on a 64-byte boundary
// each element is exactly one cache line. Kokkos aligns team scratch to 8 bytes only (the OpenMP
// backend's level-1 scratch began 48 bytes past a line in the fused training kernel): then every
// element straddles two lines, each vector load and store touches both, and the Householder
// reduction ran markedly slower at large N (perf/NOTES.md, "Cache-line alignment of the packed
// scratch").
//
// LineAlignedScratch is how a kernel gets such a scratch: the host asks Kokkos for bytes(), the kernel
// takes data(member, level), and the slack that line_aligned may skip is added in both from the one
// `reals` they share, so a kernel cannot take the aligned pointer without having asked for the slack.
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

// Bytes of scratch for `elements` of ScratchView's value type, rounded up to a multiple of 16. Kokkos
// places consecutive teams' level-1 scratch (global memory on GPUs) `bytes` apart and aligns only to 8
// bytes; a Kokkos::complex<double> array in it needs 16. A size of 8 mod 16 misaligned every other team
// ("misaligned address" in the team loss-gradient kernel at N = 64 on an H100).
template <class ScratchView>
std::size_t team_scratch_bytes(std::size_t elements) {
  return (ScratchView::shmem_size(elements) + 15) / 16 * 16;
}

// `reals` Reals of team scratch per team, from a 64-byte boundary. ScratchView: an unmanaged View of
// Real in the execution space's scratch memory space.
template <class ScratchView>
struct LineAlignedScratch {
  using real_type = typename ScratchView::non_const_value_type;
  std::size_t reals = 0;

  // For set_scratch_size: reals and the slack.
  std::size_t bytes() const { return team_scratch_bytes<ScratchView>(line_aligned_scratch_reals<real_type>(reals)); }

  // The first of the `reals` Reals, on a line.
  template <class Member>
  KOKKOS_INLINE_FUNCTION real_type* data(const Member& member, const int level) const {
    const ScratchView scratch(member.team_scratch(level), line_aligned_scratch_reals<real_type>(reals));
    return line_aligned(scratch.data());
  }
};

}  // namespace qgml
