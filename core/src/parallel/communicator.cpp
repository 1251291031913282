#include "qgml/parallel/communicator.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>

namespace qgml {

void SelfCommunicator::abort(int code) { std::exit(code); }

void run_collectively(Communicator& comm, const std::function<void()>& step) {
  if (comm.size() == 1) {
    step();
    return;
  }
  std::string local;
  try {
    step();
  } catch (const std::exception& e) {
    local = e.what();
    if (local.empty()) local = "unknown error";
  }
  const std::string agreed = comm.agree_on_error(local);
  if (!agreed.empty()) throw CollectiveError(agreed);
}

std::vector<double> gather_shards_to_root(Communicator& comm, const std::vector<double>& local, std::int64_t total_rows,
                                          std::size_t width, std::size_t round_doubles) {
  const int p = comm.size(), r = comm.rank();
  const ShardRange mine = shard_range(total_rows, p, r);
  QGML_REQUIRE(local.size() == std::size_t(mine.size()) * width,
               "qgml::gather_shards_to_root: rank " + std::to_string(r) + " passes " + std::to_string(local.size()) +
                   " doubles for " + std::to_string(mine.size()) + " rows of " + std::to_string(width));
  if (p == 1) return local;
  // Every rank knows every shard, so all agree on the number of rounds without communicating.
  const std::int64_t per_round =
      std::max<std::int64_t>(1, std::int64_t(round_doubles / std::max<std::size_t>(1, width)));
  const std::int64_t largest = shard_range(total_rows, p, p - 1).size();  // floor division: the last is largest
  const std::int64_t rounds = (largest + per_round - 1) / per_round;
  std::vector<double> all(r == 0 ? std::size_t(total_rows) * width : 0), part;
  for (std::int64_t k = 0; k < rounds; ++k) {
    const std::int64_t first = std::min(mine.size(), k * per_round), last = std::min(mine.size(), first + per_round);
    part.assign(local.begin() + std::ptrdiff_t(std::size_t(first) * width),
                local.begin() + std::ptrdiff_t(std::size_t(last) * width));
    const std::vector<double> got = comm.gather_to_root(part);
    if (r != 0) continue;
    std::size_t at = 0;
    for (int q = 0; q < p; ++q) {
      const ShardRange s = shard_range(total_rows, p, q);
      const std::int64_t a = std::min(s.size(), k * per_round), b = std::min(s.size(), a + per_round);
      const std::size_t n = std::size_t(b - a) * width;
      std::copy(got.begin() + std::ptrdiff_t(at), got.begin() + std::ptrdiff_t(at + n),
                all.begin() + std::ptrdiff_t(std::size_t(s.begin + a) * width));
      at += n;
    }
  }
  return all;
}

}  // namespace qgml
