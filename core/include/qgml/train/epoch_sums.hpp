// The sums a Trainer keeps on the device over an epoch (EpochSum: the loss terms of the batches taken,
// the batches taken and skipped, degenerate points, eigensolver failures and sweeps), and the end of a
// batch: a batch whose loss or gradient is not finite is flagged for the optimizer to skip, else its
// sums are added to the epoch's.
#pragma once

#include <Kokkos_Core.hpp>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/train/loss_gradient_views.hpp"
#include "qgml/train/loss_settings.hpp"

namespace qgml::detail {

// Indices of the epoch sums kept on the device.
enum EpochSum : int {
  sum_total = 0,
  sum_reconstruction,
  sum_fluctuation,
  sum_penalty,
  sum_degenerate,
  sum_skipped,
  sum_eigh_failures,
  sum_batches,
  sum_sweeps,        // Jacobi sweeps of warm-started eigensolves
  sum_swept_points,  // points solved warm
  sum_supervised,    // mean supervised loss of the batches
  epoch_sum_count
};

// Kernels are named functors, not extended lambdas: docs/architecture.md "Host execution spaces in a CUDA build".

template <class ExecSpace, class Sums>
void zero_epoch_sums(const ExecSpace& exec, const Sums& sums) {
  Kokkos::parallel_for("qgml::Trainer::zero_epoch_sums", Kokkos::RangePolicy<ExecSpace>(exec, 0, int(sums.extent(0))),
                       ZeroEntries<Sums>{sums});
}

// The number of entries of the D x N x N gradient with a non-finite real or imaginary part.
template <class Gradient>
struct CountNonfiniteGradient {
  Gradient g;
  int n = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const int lij, int& nonfinite) const {
    const auto z = g(lij / (n * n), (lij / n) % n, lij % n);
    if (!math::isfinite(z.real()) || !math::isfinite(z.imag())) ++nonfinite;
  }
};

// skip() = 0 if the batch's gradient and losses are finite and no eigensolve failed, else 1; the epoch
// sums += its mean losses (batch sums times inv = 1 / n_batch), or one skipped batch.
template <class Flag, class BatchSums, class EpochSums>
struct FinishBatch {
  Flag bad;
  BatchSums batch;
  EpochSums sums;
  Flag skip;
  double inv = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const int) const {
    const bool finite = bad() == 0 && batch(int(loss_nonfinite_points)) == 0 && batch(int(loss_eigh_failures)) == 0 &&
                        math::isfinite(batch(int(loss_penalty)));
    skip() = finite ? 0 : 1;
    sums(int(sum_degenerate)) += batch(int(loss_degenerate_points));
    sums(int(sum_eigh_failures)) += batch(int(loss_eigh_failures));
    if (finite) {
      sums(int(sum_total)) += batch(int(loss_total)) * inv + batch(int(loss_penalty));
      sums(int(sum_reconstruction)) += batch(int(loss_reconstruction)) * inv;
      sums(int(sum_fluctuation)) += batch(int(loss_fluctuation)) * inv;
      sums(int(sum_penalty)) += batch(int(loss_penalty));
      sums(int(sum_supervised)) += batch(int(loss_supervised)) * inv;
      sums(int(sum_batches)) += 1;
    } else {
      sums(int(sum_skipped)) += 1;
    }
  }
};

// Decides on the device whether the batch of n_batch points is usable (finite gradient, loss and
// penalty, no failed eigensolve): skip() = 0 or 1; adds its mean losses to the epoch sums.
template <class ExecSpace, class Gradient, class Flag, class BatchSums, class EpochSums>
void finish_batch(const ExecSpace& exec, const Gradient& g, const Flag& bad, const BatchSums& batch,
                  const EpochSums& sums, const Flag& skip, int n_batch) {
  using memory_space = typename ExecSpace::memory_space;
  const int n = int(g.extent(1)), dnn = int(g.extent(0)) * n * n;
  Kokkos::parallel_reduce("qgml::Trainer::check_gradient", Kokkos::RangePolicy<ExecSpace>(exec, 0, dnn),
                          CountNonfiniteGradient<Gradient>{g, n}, Kokkos::Sum<int, memory_space>(bad));
  const double inv = 1.0 / n_batch;
  Kokkos::parallel_for("qgml::Trainer::finish_batch", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1),
                       FinishBatch<Flag, BatchSums, EpochSums>{bad, batch, sums, skip, inv});
}

}  // namespace qgml::detail
