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
