// Counter-based random numbers: value i of stream s under seed k is a pure function of (k, s, i), so a
// kernel draws the same numbers on every backend and thread count, with no generator state to carry.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "qgml/common/kokkos_compat.hpp"

namespace qgml {

// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective avalanche mix of 64 bits.
KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class CounterRng {
 public:
  KOKKOS_INLINE_FUNCTION CounterRng(std::uint64_t seed, std::uint64_t stream)
      : key_(mix64(mix64(seed + 0x9e3779b97f4a7c15ULL) ^ (stream * 0xd1b54a32d192ed03ULL + 1))) {}

  KOKKOS_INLINE_FUNCTION std::uint64_t bits(std::uint64_t counter) const {
    return mix64(key_ + 0x9e3779b97f4a7c15ULL * (counter + 1));
  }

  // Uniform in the open interval (0, 1), 53 random bits.
  KOKKOS_INLINE_FUNCTION double uniform(std::uint64_t counter) const {
    return (static_cast<double>(bits(counter) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  }

  // Standard normal N(0, 1) by the Box-Muller transform of the uniforms 2i and 2i+1.
  KOKKOS_INLINE_FUNCTION double normal(std::uint64_t counter) const {
    const double u1 = uniform(2 * counter);
    const double u2 = uniform(2 * counter + 1);
    return math::sqrt(-2.0 * math::log(u1)) * math::cos(6.283185307179586 * u2);
  }

 private:
  std::uint64_t key_;
};

}  // namespace qgml
