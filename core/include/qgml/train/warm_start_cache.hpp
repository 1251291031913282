// Warm-started eigensolves (TrainingSettings::warm_start_eigh): each local point's eigenvectors of
// the previous epoch are the starting basis of its Jacobi refinement in the next one (EighOptions::
// warm_start). Holds T_local N^2 complex numbers, plus the local rows of the gathered batch and the
// sweeps per point. With rollback (an interruptible trainer), a second T_local N^2 buffer takes the
// epoch's new bases, and the epoch's end makes them the stored ones: an epoch abandoned between
// batches leaves the bases of the last complete epoch untouched.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "qgml/common/memory_budget.hpp"
#include "qgml/common/types.hpp"

namespace qgml {

namespace detail {

// Kernels are named functors, not extended lambdas: docs/architecture.md "Host execution spaces in a CUDA build".

// v(i, a, b) = basis(rows(i), a, b) (load), or basis(rows(i), a, b) = v(i, a, b) (store).
template <class Basis, class Vectors, class Rows>
struct CopyBasis {
  Basis basis;
  Vectors v;
  Rows rows;
  int n = 0;
  bool load = false;
  KOKKOS_INLINE_FUNCTION void operator()(const int q) const {
    const int i = q / (n * n), a = (q / n) % n, b = q % n;
    if (load)
      v(i, a, b) = basis(rows(i), a, b);
    else
      basis(rows(i), a, b) = v(i, a, b);
  }
};

// to(i, a, b) = from(rows(i), a, b) for i < count (load), or the reverse (store).
template <class ExecSpace, class Basis, class Vectors, class Rows>
void copy_basis(const ExecSpace& exec, const Basis& basis, const Vectors& v, const Rows& rows, int count, bool load) {
  const int n = int(v.extent(1));
  Kokkos::parallel_for(load ? "qgml::Trainer::load_basis" : "qgml::Trainer::store_basis",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, count * n * n),
                       CopyBasis<Basis, Vectors, Rows>{basis, v, rows, n, load});
}

// sums(sweeps_index) += sum_i sweeps(i), i < count; sums(points_index) += count (one team).
template <class ExecSpace, class Sweeps, class Sums>
struct CountSweeps {
  using member_type = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  Sweeps sweeps;
  Sums sums;
  int count = 0, sweeps_index = 0, points_index = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    long long total = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(member, count), [&](const int i, long long& acc) { acc += sweeps(i); }, total);
    Kokkos::single(Kokkos::PerTeam(member), [&]() {
      sums(sweeps_index) += double(total);
      sums(points_index) += count;
    });
  }
};

// sums(sweeps_index) += sum of sweeps(0 .. count-1); sums(points_index) += count.
template <class ExecSpace, class Sweeps, class Sums>
void count_sweeps(const ExecSpace& exec, const Sweeps& sweeps, int count, const Sums& sums, int sweeps_index,
                  int points_index) {
  // One team: an integer sum, exact in any order.
  using policy_type = Kokkos::TeamPolicy<ExecSpace>;
  const policy_type policy = is_host_space_v<ExecSpace> ? policy_type(exec, 1, 1) : policy_type(exec, 1, Kokkos::AUTO);
  Kokkos::parallel_for("qgml::Trainer::count_sweeps", policy,
                       CountSweeps<ExecSpace, Sweeps, Sums>{sweeps, sums, count, sweeps_index, points_index});
}

}  // namespace detail

template <class Real, class ExecSpace>
class WarmStartCache {
 public:
  using memory_space = typename ExecSpace::memory_space;

  WarmStartCache() = default;
  // A basis for each of `local_points` points; batches of at most `capacity` points.
  WarmStartCache(std::int64_t local_points, int capacity, int n)
      : basis_(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::basis"), basis_extent(local_points), n, n),
        rows_(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::rows"), capacity),
        sweeps_("qgml::Trainer::sweeps", capacity) {}

  bool enabled() const { return basis_.extent(0) > 0; }
  // Allocates the second buffer (once): from now on an epoch's stores go there until commit().
  void enable_rollback() {
    if (enabled() && next_.extent(0) == 0)
      next_ = MatrixStack<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::next_basis"),
                                              basis_.extent(0), basis_.extent(1), basis_.extent(2));
  }
  bool rollback_enabled() const { return next_.extent(0) > 0; }
  // Whether every point has a stored basis (after one epoch).
  bool ready() const { return ready_; }
  // At the end of a complete epoch (every local point stored once): its bases become the stored ones.
  void commit() {
    if (next_.extent(0) > 0) std::swap(basis_, next_);
    ready_ = enabled();
  }

  // Where the gather writes the local rows of the batch's points (empty when disabled).
  const IntVector<memory_space>& rows() const { return rows_; }
  const IntVector<memory_space>& sweeps() const { return sweeps_; }

  // v(i) <- the stored basis of the batch's i-th point, i < count.
  template <class Vectors>
  void load(const ExecSpace& exec, const Vectors& v, int count) const {
    detail::copy_basis(exec, basis_, v, rows_, count, true);
  }
  // The basis of the batch's i-th point <- v(i), i < count (the stored one, or with rollback the
  // epoch's next one).
  template <class Vectors>
  void store(const ExecSpace& exec, const Vectors& v, int count) const {
    detail::copy_basis(exec, next_.extent(0) > 0 ? next_ : basis_, v, rows_, count, false);
  }

  // The stored bases (checkpointed, train/checkpoint.hpp) and marking them ready after a restore.
  const MatrixStack<Real, memory_space>& basis() const { return basis_; }
  void set_ready(bool ready) { ready_ = ready && enabled(); }

  // Bytes allocated by a cache with these arguments (and enable_rollback()).
  static std::size_t estimate_bytes(std::int64_t local_points, int capacity, int n, bool rollback = false) {
    return (rollback ? 2 : 1) *
               view_allocation_bytes(std::size_t(basis_extent(local_points)) * std::size_t(n) * std::size_t(n),
                                     sizeof(complex_t<Real>)) +
           2 * view_allocation_bytes(std::size_t(capacity), sizeof(int));
  }

 private:
  static std::int64_t basis_extent(std::int64_t local_points) { return std::max<std::int64_t>(1, local_points); }

  MatrixStack<Real, memory_space> basis_, next_;
  IntVector<memory_space> rows_, sweeps_;
  bool ready_ = false;
};

}  // namespace qgml
