// The collective operations data-parallel training and analysis need, independent of how they are
// carried out: every rank holds one contiguous shard of the T points and a full copy of the D
// matrices; per optimisation step the partial gradient sums are added over the ranks (one in-place
// all-reduce), so every rank takes the same Adam step.
//
// The core library knows only this interface. `SelfCommunicator` is the one-process case; the MPI
// implementation is qgml::mpi::Communicator (backends/mpi, built with QGML_ENABLE_MPI).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"

namespace qgml {

// The rows [begin, end) of T points that rank r of P holds: begin = floor(r T / P).
struct ShardRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t size() const { return end - begin; }
};

inline ShardRange shard_range(std::int64_t total, int ranks, int rank) {
  QGML_REQUIRE(ranks >= 1 && rank >= 0 && rank < ranks && total >= 0,
               "qgml::shard_range: need 0 <= rank < ranks and total >= 0, got rank " + std::to_string(rank) + " of " +
                   std::to_string(ranks) + ", total " + std::to_string(total));
  return {total * rank / ranks, total * (rank + 1) / ranks};
}

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // In-place sum over all ranks of `count` doubles. With device_memory, `data` points to memory of the
  // execution space's memory space; an implementation that cannot read it directly (MPI that is not
  // GPU-aware) must not be handed such a pointer: callers ask accepts_device_memory() first. Every rank
  // receives bit-identical sums.
  virtual void allreduce_sum(double* data, std::size_t count, bool device_memory) = 0;
  // Whether allreduce_sum may be given device pointers (GPU-aware MPI, or a host execution space).
  virtual bool accepts_device_memory() const = 0;

  // Sum and maximum over ranks of host integers, in place.
  virtual void allreduce_sum(std::int64_t* data, std::size_t count) = 0;
  virtual void allreduce_max(std::int64_t* data, std::size_t count) = 0;

  // Rank 0 receives the concatenation, in rank order, of every rank's `local` (which may differ in
  // length); the others receive an empty vector.
  virtual std::vector<double> gather_to_root(const std::vector<double>& local) = 0;
  // `text` of rank `root` on every rank.
  virtual std::string broadcast(const std::string& text, int root) = 0;

  // Every rank passes its local error message ("" when it succeeded). Returns, on every rank, the
  // message of the lowest failing rank prefixed with that rank ("" when all succeeded).
  virtual std::string agree_on_error(const std::string& local_error) = 0;

  // Ends every process of the job (for failures after which the ranks can no longer agree, e.g. an
  // exception on one rank inside a step the others have entered).
  [[noreturn]] virtual void abort(int code) = 0;
};

// The single-process communicator: every collective is the identity.
class SelfCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce_sum(double*, std::size_t, bool) override {}
  bool accepts_device_memory() const override { return true; }
  void allreduce_sum(std::int64_t*, std::size_t) override {}
  void allreduce_max(std::int64_t*, std::size_t) override {}
  std::vector<double> gather_to_root(const std::vector<double>& local) override { return local; }
  std::string broadcast(const std::string& text, int) override { return text; }
  std::string agree_on_error(const std::string& local_error) override { return local_error; }
  [[noreturn]] void abort(int code) override;
};

// Rank 0 receives the rows of every rank's shard in point order: rank r passes its
// shard_range(total_rows, comm.size(), r).size() rows of `width` doubles each (row-major) and rank 0
// receives total_rows x width doubles; the others an empty vector. A collective, sent in rounds of at
// most `round_doubles` doubles per rank so that no message exceeds MPI's int counts.
std::vector<double> gather_shards_to_root(Communicator& comm, const std::vector<double>& local, std::int64_t total_rows,
                                          std::size_t width, std::size_t round_doubles = std::size_t(1) << 26);

// An error raised on every rank alike (by run_collectively), after which the ranks may exit normally.
class CollectiveError : public Error {
 public:
  using Error::Error;
};

// Runs `step` on every rank; if it throws on any rank, every rank throws CollectiveError with the
// same message (that of the lowest failing rank). A collective itself: every rank must call it, and
// `step` must not call collectives that a failing rank would skip. On one rank, exceptions pass
// through unchanged.
void run_collectively(Communicator& comm, const std::function<void()>& step);

}  // namespace qgml
