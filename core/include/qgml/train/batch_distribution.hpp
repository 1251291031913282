// Which points of an epoch's batches this process computes (docs/math.md 8.2). The batches are those of the
// one-process run: the keyed shuffle pi of all T points cut into contiguous batches of B (the last
// one partial). Process r of P holds the rows shard_range(T, P, r) and computes, of each batch, the
// points it holds; one process is the case P = 1, where it holds every point.
//
// Per epoch one scan over the shuffled positions c = 0 .. T-1 gives order(m) = the local row of the
// m-th point (in shuffled order) that this process holds and offsets(b) = how many of them come
// before batch b; batch b is then order(offsets(b) .. offsets(b+1) - 1), gathered by one kernel. With
// P = 1, order = pi and offsets(b) = b B: no scan and no copy to the host.
//
// One batch per epoch (B >= T, full batch): no shuffle. The batch holds every point whatever the order,
// and its loss and gradient are sums over its points, which the order changes only in rounding; so
// order is the identity (each process's rows in their stored order, offsets = {0, rows held}), planned
// once, and an epoch plans nothing (the keyed permutation was a visible share of a full-batch epoch at
// N = 8, perf/NOTES.md "Packs of 16 doubles, and full batch without a shuffle").
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/memory_budget.hpp"
#include "qgml/common/types.hpp"
#include "qgml/data/permutation.hpp"
#include "qgml/parallel/communicator.hpp"

namespace qgml {

namespace detail {

// Kernels are named functors, not extended lambdas: docs/architecture.md "Host execution spaces in a CUDA build".

// order(p) = p: one batch per epoch.
template <class OrderView>
struct IdentityOrder {
  OrderView order;
  KOKKOS_INLINE_FUNCTION void operator()(const int p) const { order(p) = p; }
};

// order(p) = pi(p): one process holds every point.
template <class OrderView>
struct ShuffledOrder {
  OrderView order;
  KeyedPermutation perm;
  KOKKOS_INLINE_FUNCTION void operator()(const int p) const { order(p) = int(perm(std::uint64_t(p))); }
};

// Exclusive scan over the shuffled positions p of mine(p) = [begin <= pi(p) < end]: order(before) =
// pi(p) - begin for the points held, offsets(b) = the count before batch b (and the total at the end).
template <class OrderView, class OffsetView>
struct ScanLocalOrder {
  using value_type = int;
  KeyedPermutation perm;
  OrderView order;
  OffsetView offsets;
  std::int64_t begin = 0, end = 0;
  int batch = 0, count = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const int p, int& before, const bool final) const {
    const std::int64_t g = std::int64_t(perm(std::uint64_t(p)));
    const int mine = (g >= begin && g < end) ? 1 : 0;
    if (final) {
      if (p % batch == 0) offsets(p / batch) = before;
      if (mine) order(before) = int(g - begin);
      if (p == count - 1) offsets((count + batch - 1) / batch) = before + mine;
    }
    before += mine;
  }
};

// order(m) and, with several processes, offsets(b): see the top of this file. One process holds
// every point: order = pi, with no scan.
template <class ExecSpace, class OrderView, class OffsetView>
void distribute_epoch(const ExecSpace& exec, const KeyedPermutation& perm, std::int64_t total, int batch,
                      const ShardRange& shard, int ranks, const OrderView& order, const OffsetView& offsets) {
  const int count = int(total);
  if (ranks == 1) {
    Kokkos::parallel_for("qgml::Trainer::distribute_epoch", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                         ShuffledOrder<OrderView>{order, perm});
    return;
  }
  const std::int64_t begin = shard.begin, end = shard.end;
  Kokkos::parallel_scan("qgml::Trainer::distribute_epoch", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                        ScanLocalOrder<OrderView, OffsetView>{perm, order, offsets, begin, end, batch, count});
}

// points(i, k) = data(order(first + i), k); rows(i) = order(first + i) when record.
template <class DataView, class OrderView, class BatchView, class RowView>
struct GatherBatch {
  DataView data;
  OrderView order;
  BatchView points;
  RowView rows;
  int first = 0, d = 0;
  bool record = false;
  KOKKOS_INLINE_FUNCTION void operator()(const int ik) const {
    const int i = ik / d, k = ik % d;
    const int row = order(first + i);
    points(i, k) = data(row, k);
    if (record && k == 0) rows(i) = row;
  }
};

// points(i, k) = data(order(first + i), k) for i < points.extent(0); rows(i) = order(first + i) when
// rows is not empty (the warm-start cache's index).
template <class ExecSpace, class DataView, class BatchView, class OrderView, class RowView>
void gather_batch(const ExecSpace& exec, const DataView& data, const OrderView& order, int first,
                  const BatchView& points, const RowView& rows) {
  const int n_local = int(points.extent(0)), d = int(points.extent(1));
  const bool record = rows.extent(0) > 0;
  Kokkos::parallel_for(
      "qgml::Trainer::gather_batch", Kokkos::RangePolicy<ExecSpace>(exec, 0, n_local * d),
      GatherBatch<DataView, OrderView, BatchView, RowView>{data, order, points, rows, first, d, record});
}

}  // namespace detail

template <class ExecSpace>
class BatchDistribution {
 public:
  using memory_space = typename ExecSpace::memory_space;

  BatchDistribution() = default;
  // T = total points in batches of `batch` (1 <= batch <= T), this process's rows `shard` of `ranks`.
  BatchDistribution(std::int64_t total, int batch, const ShardRange& shard, int ranks)
      : total_(total),
        batch_(batch),
        ranks_(ranks),
        shard_(shard),
        order_(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::order"), order_extent(shard.size())) {
    if (ranks > 1) {
      offsets_ = Kokkos::View<int*, memory_space>("qgml::Trainer::batch_offsets", batches() + 1);
      offsets_host_ = Kokkos::create_mirror(offsets_);
    }
  }

  int batches() const { return int((total_ + batch_ - 1) / batch_); }
  // Points of batch b over all processes (the divisor of its mean loss).
  int batch_points(int b) const { return int(std::min<std::int64_t>(batch_, total_ - std::int64_t(b) * batch_)); }
  // The most points of one batch that this process holds.
  static int local_batch_capacity(int batch, std::int64_t local_points) {
    return int(std::max<std::int64_t>(1, std::min<std::int64_t>(batch, local_points)));
  }

  // Whether the epochs' points are shuffled: with one batch per epoch they are not (the top of this file).
  bool shuffled() const { return batches() > 1; }

  // Plans the epoch shuffled by `perm` (a copy of the offsets to the host when P > 1); with one batch
  // per epoch, the identity order, once.
  void plan_epoch(const ExecSpace& exec, const KeyedPermutation& perm) {
    ScopedRegion region("qgml::Trainer::distribute_epoch");
    if (!shuffled()) {
      if (identity_planned_) return;
      const int rows = int(shard_.size());
      Kokkos::parallel_for("qgml::Trainer::distribute_epoch", Kokkos::RangePolicy<ExecSpace>(exec, 0, rows),
                           detail::IdentityOrder<Kokkos::View<int*, memory_space>>{order_});
      if (ranks_ > 1) {
        offsets_host_(0) = 0;
        offsets_host_(1) = rows;
      }
      identity_planned_ = true;
      return;
    }
    detail::distribute_epoch(exec, perm, total_, batch_, shard_, ranks_, order_, offsets_);
    if (ranks_ > 1) {
      Kokkos::deep_copy(exec, offsets_host_, offsets_);
      qgml::fence(exec, "qgml::Trainer: batch offsets on the host");
    }
  }

  // (first, count): the positions in order() of batch b's points that this process holds.
  std::pair<int, int> local_batch(int b) const {
    if (ranks_ == 1) return {b * batch_, batch_points(b)};
    return {offsets_host_(b), offsets_host_(b + 1) - offsets_host_(b)};
  }

  // Gathers this process's points of batch b (local_batch(b).second > 0) into points.
  template <class DataView, class BatchView, class RowView>
  void gather(const ExecSpace& exec, const DataView& data, int b, const BatchView& points, const RowView& rows) const {
    ScopedRegion region("qgml::Trainer::gather_batch");
    detail::gather_batch(exec, data, order_, local_batch(b).first, points, rows);
  }

  // Bytes allocated (device buffers and host mirrors) by a distribution with these arguments.
  static std::size_t estimate_bytes(std::int64_t total, int batch, std::int64_t local_points, int ranks) {
    const std::size_t offsets = ranks > 1 ? 2 * view_allocation_bytes((total + batch - 1) / batch + 1, sizeof(int)) : 0;
    return view_allocation_bytes(order_extent(local_points), sizeof(int)) + offsets;
  }

 private:
  static std::int64_t order_extent(std::int64_t local_points) { return std::max<std::int64_t>(1, local_points); }

  std::int64_t total_ = 0;
  int batch_ = 1, ranks_ = 1;
  bool identity_planned_ = false;
  ShardRange shard_;
  Kokkos::View<int*, memory_space> order_, offsets_;
  typename Kokkos::View<int*, memory_space>::HostMirror offsets_host_;
};

}  // namespace qgml
