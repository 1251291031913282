// qgml::mpi::Communicator: sums, gathers, broadcasts and agreement on errors across the ranks.
#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "qgml/mpi/communicator.hpp"
#include "qgml/parallel/communicator.hpp"

using qgml::mpi::Communicator;

TEST_CASE("shard ranges cover the points once, in rank order", "[mpi]") {
  for (std::int64_t total : {1, 2, 7, 2500, 100003})
    for (int ranks = 1; ranks <= 5; ++ranks) {
      std::int64_t next = 0;
      for (int r = 0; r < ranks; ++r) {
        const auto s = qgml::shard_range(total, ranks, r);
        CHECK(s.begin == next);
        CHECK(s.size() >= total / ranks);
        CHECK(s.size() <= total / ranks + 1);
        next = s.end;
      }
      CHECK(next == total);
    }
  CHECK_THROWS_AS(qgml::shard_range(10, 2, 2), qgml::Error);
}

TEST_CASE("allreduce, gather and broadcast give every rank the global values", "[mpi]") {
  Communicator comm;
  const int p = comm.size(), r = comm.rank();
  std::vector<double> v{double(r + 1), 0.5 * r, -1.0};
  comm.allreduce_sum(v.data(), v.size(), false);
  CHECK(v[0] == p * (p + 1) / 2.0);
  CHECK(v[1] == 0.25 * p * (p - 1));
  CHECK(v[2] == -p);
  std::int64_t m[2] = {r, -r};
  comm.allreduce_max(m, 2);
  CHECK(m[0] == p - 1);
  CHECK(m[1] == 0);
  // rank r contributes r + 1 values r, r, ...: rank 0 gets them concatenated in rank order
  const auto all = comm.gather_to_root(std::vector<double>(std::size_t(r + 1), double(r)));
  if (r == 0) {
    REQUIRE(all.size() == std::size_t(p * (p + 1) / 2));
    std::size_t i = 0;
    for (int q = 0; q < p; ++q)
      for (int k = 0; k <= q; ++k) CHECK(all[i++] == double(q));
  } else {
    CHECK(all.empty());
  }
  CHECK(comm.broadcast(r == p - 1 ? "from the last rank" : "", p - 1) == "from the last rank");
}

TEST_CASE("an error on one rank is raised with the same message on every rank", "[mpi]") {
  Communicator comm;
  const int p = comm.size(), r = comm.rank();
  std::string message;
  try {
    qgml::run_collectively(comm, [&] {
      if (r == p - 1) throw qgml::Error("bad row 17 in points.csv");
    });
  } catch (const qgml::CollectiveError& e) {
    message = e.what();
  } catch (const qgml::Error& e) {
    message = std::string("single process: ") + e.what();
  }
  if (p == 1)
    CHECK(message == "single process: bad row 17 in points.csv");
  else
    CHECK(message == "rank " + std::to_string(p - 1) + " of " + std::to_string(p) + ": bad row 17 in points.csv");
  // Nothing is raised when every rank succeeds.
  CHECK_NOTHROW(qgml::run_collectively(comm, [] {}));
}

TEST_CASE("gather_shards_to_root gives rank 0 every shard's rows in point order, in rounds", "[mpi][warm-start]") {
  Communicator comm;
  const int p = comm.size(), r = comm.rank();
  // Fewer rows than ranks (empty shards), one row per round (round < width), several rounds, one round.
  for (const std::int64_t total : {std::int64_t(2), std::int64_t(23), std::int64_t(100)})
    for (const std::size_t round : {std::size_t(1), std::size_t(7), std::size_t(1) << 26}) {
      const std::size_t width = 3;
      const auto mine = qgml::shard_range(total, p, r);
      std::vector<double> local;
      for (std::int64_t t = mine.begin; t < mine.end; ++t)
        for (std::size_t c = 0; c < width; ++c) local.push_back(double(t) + 0.25 * double(c));
      const auto all = qgml::gather_shards_to_root(comm, local, total, width, round);
      if (r != 0) {
        CHECK(all.empty());
        continue;
      }
      REQUIRE(all.size() == std::size_t(total) * width);
      bool in_order = true;
      for (std::int64_t t = 0; t < total; ++t)
        for (std::size_t c = 0; c < width; ++c)
          in_order = in_order && all[std::size_t(t) * width + c] == double(t) + 0.25 * double(c);
      CHECK(in_order);
    }
}
