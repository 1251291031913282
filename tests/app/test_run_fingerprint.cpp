// The data fingerprint of a run (app::data_hash, driver/run/run_fingerprint.hpp): a Kokkos reduction
// that gives the value of the per-point definition for any thread count and any sharding over ranks.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "qgml/data/datasets.hpp"

#include "run/run_fingerprint.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Points = qgml::RealMatrix<double, Exec::memory_space>;

// The definition, on the host, point by point: h_i = FNV-1a-64 of (i, x_i1, ..., x_iD) as bytes,
// s = sum_i mix64(h_i) mod 2^64, hash = FNV-1a-64 of (T, D, s).
std::string reference_hash(const Points& points) {
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), points);
  std::uint64_t s = 0;
  for (std::uint64_t i = 0; i < host.extent(0); ++i) {
    std::uint64_t h = qgml::fnv1a64(&i, sizeof i);
    for (std::size_t k = 0; k < host.extent(1); ++k) h = qgml::fnv1a64(&host(i, k), sizeof(double), h);
    s += qgml::mix64(h);
  }
  const std::uint64_t shape[2] = {host.extent(0), host.extent(1)};
  return qgml::hex64(qgml::fnv1a64(&s, sizeof s, qgml::fnv1a64(shape, sizeof shape)));
}

// One rank of a job whose other ranks' contributions to the integer sums are `others` (recorded in
// `seen`): the collectives of data_hash without MPI.
class ShardCommunicator final : public qgml::Communicator {
 public:
  std::vector<std::int64_t> seen, others;
  int rank() const override { return 0; }
  int size() const override { return 3; }
  void allreduce_sum(double*, std::size_t, bool) override {}
  bool accepts_device_memory() const override { return true; }
  void allreduce_sum(std::int64_t* data, std::size_t count) override {
    seen.assign(data, data + count);
    for (std::size_t i = 0; i < count && i < others.size(); ++i) data[i] += others[i];
  }
  void allreduce_max(std::int64_t*, std::size_t) override {}
  std::vector<double> gather_to_root(const std::vector<double>& local) override { return local; }
  std::string broadcast(const std::string& text, int) override { return text; }
  std::string agree_on_error(const std::string& local_error) override { return local_error; }
  [[noreturn]] void abort(int) override { std::abort(); }
};

}  // namespace

TEST_CASE("data fingerprint: the reduction gives the per-point definition; a changed point changes it",
          "[app][fingerprint]") {
  const Exec exec;
  qgml::SelfCommunicator self;
  const Points points = qgml::sphere_points<double>(exec, 1000, 3, 0.1, 7);
  const std::string hash = qgml::app::data_hash(exec, points, 1000, 0, self);
  CHECK(hash == reference_hash(points));

  Points changed("changed", 1000, 3);
  Kokkos::deep_copy(changed, points);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), changed);
  host(517, 2) = std::nextafter(host(517, 2), 2.0);  // one bit of one coordinate
  Kokkos::deep_copy(changed, host);
  CHECK(qgml::app::data_hash(exec, changed, 1000, 0, self) != hash);

  // Two points swapped: the same set, another order (the index is part of h_i).
  auto swapped = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), points);
  for (int k = 0; k < 3; ++k) std::swap(swapped(3, k), swapped(900, k));
  Kokkos::deep_copy(changed, swapped);
  CHECK(qgml::app::data_hash(exec, changed, 1000, 0, self) != hash);
}

TEST_CASE("data fingerprint: three shards of the points give the hash of the whole", "[app][fingerprint]") {
  const Exec exec;
  const Points points = qgml::sphere_points<double>(exec, 1000, 3, 0.1, 7);
  qgml::SelfCommunicator self;
  const std::string whole = qgml::app::data_hash(exec, points, 1000, 0, self);
  std::vector<std::vector<std::int64_t>> halves;
  std::vector<Points> shards;
  for (int r = 0; r < 3; ++r) {
    const qgml::ShardRange range = qgml::shard_range(1000, 3, r);
    shards.push_back(Kokkos::subview(points, std::make_pair(range.begin, range.end), Kokkos::ALL));
    ShardCommunicator record;
    qgml::app::data_hash(exec, shards.back(), 1000, range.begin, record);
    halves.push_back(record.seen);
  }
  for (int r = 0; r < 3; ++r) {
    ShardCommunicator comm;
    comm.others = {0, 0};
    for (int o = 0; o < 3; ++o)
      if (o != r)
        for (int i = 0; i < 2; ++i) comm.others[i] += halves[o][i];
    CHECK(qgml::app::data_hash(exec, shards[r], 1000, qgml::shard_range(1000, 3, r).begin, comm) == whole);
  }
}
