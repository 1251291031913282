// Whether every rank holds the same bytes (data-parallel training keeps one copy of the matrices per
// rank; TrainingSettings::check_replicas compares them after every epoch).
#pragma once

#include <cstddef>
#include <cstdint>

#include "qgml/parallel/communicator.hpp"

namespace qgml {

// FNV-1a (64 bit) of `size` bytes.
inline std::uint64_t fnv1a_hash(const void* data, std::size_t size) {
  std::uint64_t h = 1469598103934665603ULL;
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 1099511628211ULL;
  return h;
}

// A collective: whether `hash` is the same on every rank (its maximum and minimum over the ranks
// agree, both through one allreduce_max of two integers). The same answer on every rank.
inline bool same_on_all_ranks(Communicator& comm, std::uint64_t hash) {
  std::int64_t v[2] = {std::int64_t(hash >> 1), std::int64_t((~hash) >> 1)};
  comm.allreduce_max(v, 2);
  return std::uint64_t(v[0]) == (hash >> 1) && std::uint64_t(v[1]) == ((~hash) >> 1);
}

}  // namespace qgml
