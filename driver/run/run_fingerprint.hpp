// What a training run was trained on (CheckpointFingerprint, train/checkpoint.hpp), recorded in every
// checkpoint and compared by qgml train --resume.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "qgml/common/random.hpp"
#include "qgml/common/types.hpp"
#include "qgml/parallel/communicator.hpp"
#include "qgml/train/checkpoint.hpp"

#include "settings/config.hpp"
#include "settings/run_settings.hpp"

namespace qgml::app {

namespace detail {

// h_i of data_hash for row i of `points` (global index first + i): FNV-1a-64 over the 8 bytes of the
// index and of each coordinate as a double, least significant byte first; the sum of mix64(h_i)
// modulo 2^64 is the reduction (unsigned wrap-around: the same for any order, thread count or sharding).
template <class Points>
struct PointHashSum {
  Points points;
  std::uint64_t first;
  int d;

  KOKKOS_INLINE_FUNCTION static std::uint64_t fnv_word(std::uint64_t h, std::uint64_t word) {
    for (int byte = 0; byte < 8; ++byte) {
      h ^= (word >> (8 * byte)) & 0xffULL;
      h *= 1099511628211ULL;
    }
    return h;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, std::uint64_t& sum) const {
    std::uint64_t h = fnv_word(14695981039346656037ULL, first + std::uint64_t(i));
    for (int k = 0; k < d; ++k) {
      const double x = double(points(i, k));
      std::uint64_t bits;
      memcpy(&bits, &x, sizeof bits);
      h = fnv_word(h, bits);
    }
    sum += mix64(h);
  }
};

}  // namespace detail

// The hash of the T x D points as trained: h_i = FNV-1a-64 of (i, x_i1, ..., x_iD) (the global index
// and the coordinates as 8-byte doubles), s = sum_i mix64(h_i) mod 2^64 (a Kokkos reduction on `exec`;
// across ranks summed as two 32-bit halves, so that the shards of any number of ranks give the same s),
// and the hash FNV-1a-64 of (T, D, s). `points` are this rank's rows first .. first + extent(0) - 1,
// readable from `exec`. A collective.
template <class Exec, class Points>
std::string data_hash(const Exec& exec, const Points& points, std::int64_t total, std::int64_t first,
                      Communicator& comm) {
  const int d = int(points.extent(1));
  std::uint64_t local = 0;
  Kokkos::parallel_reduce("qgml::app::data_hash",
                          Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec, 0, points.extent(0)),
                          detail::PointHashSum<Points>{points, std::uint64_t(first), d}, local);
  std::int64_t halves[2] = {std::int64_t(local & 0xffffffffULL), std::int64_t(local >> 32)};
  comm.allreduce_sum(halves, 2);
  const std::uint64_t s = std::uint64_t(halves[0]) + (std::uint64_t(halves[1]) << 32);
  const std::uint64_t shape[2] = {std::uint64_t(total), std::uint64_t(d)};
  return hex64(fnv1a64(&s, sizeof s, fnv1a64(shape, sizeof shape)));
}

// Whether `key` shapes what is trained: every data.*, model.* and training.* setting except the
// run's length and bookkeeping (training.epochs, early stop, patience, checkpoint interval, replica checks,
// data.placement) and, with a data file or points in memory (given_points), the generator's settings.
inline bool shapes_training(bool given_points, const std::string& key) {
  static const char* const excluded[] = {"training.epochs",   "training.early_stop",       "training.early_stop_window",
                                         "training.patience", "training.checkpoint_every", "training.check_replicas",
                                         "data.placement"};
  for (const char* e : excluded)
    if (key == e) return false;
  static const char* const given_data_keys[] = {"data.file",           "data.array",       "data.standardize",
                                                "data.target_column",  "data.target_file", "data.validation_fraction",
                                                "data.validation_file"};
  bool kept = false;
  for (const char* k : given_data_keys) kept = kept || key == k;
  if (key.rfind("data.", 0) == 0 && !kept && given_points) return false;
  return key == "task" || key.rfind("data.", 0) == 0 || key.rfind("model.", 0) == 0 || key.rfind("training.", 0) == 0;
}

// The settings that shape what is trained, with their values in c (a run's resolved configuration).
inline std::vector<std::pair<std::string, std::string>> fingerprint_settings(const Config& c) {
  const DataSection data = read_data_settings(c);
  const bool given_points = !data.file.empty() || !data.array.empty();
  std::vector<std::pair<std::string, std::string>> out;
  for (const Setting& s : schema())
    if (shapes_training(given_points, s.key)) out.emplace_back(s.key, c.text(s.key));
  return out;
}

// One difference between a checkpoint's fingerprint and the run's: `key` is "data" (the points) or a
// setting; `before` is empty where the checkpoint did not record the setting.
struct FingerprintChange {
  std::string key, before, now;
};

inline std::vector<FingerprintChange> fingerprint_changes(const CheckpointFingerprint& saved,
                                                          const CheckpointFingerprint& now) {
  std::vector<FingerprintChange> out;
  if (saved.data != now.data) out.push_back({"data", saved.data, now.data});
  for (const auto& [key, value] : now.settings) {
    std::string before;
    bool found = false;
    for (const auto& [k, v] : saved.settings)
      if (k == key) {
        before = v;
        found = true;
      }
    if (!found || before != value) out.push_back({key, before, value});
  }
  for (const auto& [key, value] : saved.settings) {
    bool found = false;
    for (const auto& kv : now.settings) found = found || kv.first == key;
    if (!found) out.push_back({key, value, ""});
  }
  return out;
}

}  // namespace qgml::app
