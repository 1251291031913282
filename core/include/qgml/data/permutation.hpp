// A keyed pseudo-random permutation of {0, ..., T - 1}: pi(t) is computed independently for every t
// (a balanced Feistel network on the smallest even number of bits covering T, with cycle walking), so
// an epoch's shuffle is one parallel kernel with no sort and no state, identical on every backend,
// thread count and rank count.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "qgml/common/random.hpp"

namespace qgml {

class KeyedPermutation {
 public:
  KeyedPermutation() = default;
  KOKKOS_INLINE_FUNCTION KeyedPermutation(std::uint64_t size, std::uint64_t seed, std::uint64_t stream)
      : size_(size), key_(mix64(mix64(seed ^ 0x5851f42d4c957f2dULL) + stream)) {
    int bits = 2;
    while ((std::uint64_t(1) << bits) < size && bits < 62) bits += 2;
    half_ = bits / 2;
    mask_ = (std::uint64_t(1) << half_) - 1;
  }

  // pi(t) for t < size; a bijection of {0, ..., size - 1}.
  KOKKOS_INLINE_FUNCTION std::uint64_t operator()(std::uint64_t t) const {
    std::uint64_t x = t;
    do {
      x = encrypt(x);
    } while (x >= size_);  // cycle walking: stays inside the domain, still a bijection
    return x;
  }

 private:
  KOKKOS_INLINE_FUNCTION std::uint64_t encrypt(std::uint64_t x) const {
    std::uint64_t left = x >> half_, right = x & mask_;
    for (std::uint64_t round = 0; round < 6; ++round) {
      const std::uint64_t f = mix64(key_ + round * 0x9e3779b97f4a7c15ULL + right) & mask_;
      const std::uint64_t next = left ^ f;
      left = right;
      right = next;
    }
    return (left << half_) | right;
  }

  std::uint64_t size_ = 1;
  std::uint64_t key_ = 0;
  int half_ = 1;
  std::uint64_t mask_ = 1;
};

}  // namespace qgml
