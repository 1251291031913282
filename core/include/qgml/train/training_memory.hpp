// The memory model of training (qgml train's pre-flight check and qgml tune): the bytes a Trainer with
// these settings allocates for D x N x N matrices and T_local points of this process (of T_total over
// `ranks` processes; T_total < 0: T_local): every buffer of the trainer, its LossGradient, Adam state,
// batch distribution and warm-start cache, host mirrors included (not the data or the configuration);
// with `interruptible`, also what Trainer::set_stop_query allocates (the snapshot of the matrices and the
// optimizer state, the warm-start cache's second basis). A test checks it against the allocations Kokkos
// reports.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/memory_budget.hpp"
#include "qgml/plan/kernel_rules.hpp"
#include "qgml/train/batch_distribution.hpp"
#include "qgml/train/engine_path_settings.hpp"
#include "qgml/train/epoch_sums.hpp"
#include "qgml/train/gradient_allreduce.hpp"
#include "qgml/train/loss_gradient.hpp"
#include "qgml/train/training_settings.hpp"
#include "qgml/train/warm_start_cache.hpp"

namespace qgml {

namespace detail {
#if defined(QGML_HAVE_KOKKOSKERNELS)
inline constexpr bool kokkoskernels_available = true;
#else
inline constexpr bool kokkoskernels_available = false;
#endif
}  // namespace detail

template <class Real, class ExecSpace>
std::size_t training_bytes(const TrainingSettings& settings, int D, int N, std::int64_t T_local,
                           std::int64_t T_total = -1, int ranks = 1, bool interruptible = false) {
  using complex_type = complex_t<Real>;
  if (T_total < 0) T_total = T_local;
  const auto bytes = [](std::size_t count, std::size_t size) { return view_allocation_bytes(count, size); };
  // Supervised: D counts the operators, the D - C feature matrices and the C target operators.
  const bool supervised = is_supervised(settings.task);
  const int outputs = supervised ? settings.supervised.outputs : 0;
  const std::size_t d = std::size_t(D), n = std::size_t(N), dnn = d * n * n, cx = sizeof(complex_type);
  const std::size_t df = d - std::size_t(outputs);
  const std::size_t columns = df + std::size_t(supervised ? target_columns(settings.supervised.loss, outputs) : 0);
  const int batch = int(std::max<std::int64_t>(1, effective_batch_size(settings, T_total)));
  const int capacity = BatchDistribution<ExecSpace>::local_batch_capacity(batch, T_local);
  const std::size_t b = std::size_t(capacity);
  const bool distributed = ranks > 1;
  // LossGradient: eigensolver status, xbar and the per-point terms, Y and the gradient, the loss sums,
  // the commutator penalty's commutators and norms; U and W unless the fused path runs, and H, V and
  // the spectrum of the separate kernels; the fused path's partial sums of X on host spaces, the
  // partial sums of Y where the product runs without GEMM.
  const std::size_t pairs = std::size_t(std::max(1, D * (D - 1) / 2));
  std::size_t engine =
      bytes(b, sizeof(int)) + bytes(b * df, sizeof(Real)) + bytes(b * std::size_t(loss_penalty), sizeof(Real)) +
      bytes(std::size_t(detail::term_sum_chunks(capacity)) * std::size_t(loss_penalty), sizeof(double)) +
      2 * bytes(dnn, cx) + bytes(std::size_t(loss_sum_count), sizeof(double)) + bytes(pairs * n * n, cx) +
      bytes(pairs, sizeof(Real));
  const LossKernel kernel =
      resolve_loss_kernel<ExecSpace>(settings.kernel, N, EighVariant::automatic, settings.warm_start_eigh);
  if (kernel != LossKernel::fused_host) {
    engine += bytes(d * n * 2 * b, cx) + bytes(n * 2 * b, cx);
    if (!is_host_space_v<ExecSpace> || !detail::kokkoskernels_available)
      engine += bytes(std::size_t(detail::gradient_max_chunks<Real>(N, D, 2 * capacity)) * dnn, cx);
  }
  if (kernel == LossKernel::separate) engine += 2 * bytes(b * n * n, cx) + bytes(b * n, sizeof(Real));
  if constexpr (is_host_space_v<ExecSpace>) {
    const int blocks = detail::packed_gradient_blocks(int(df), outputs);
    const std::size_t row = std::size_t(detail::packed_gradient_row(N, linalg::packed_eigh_width<Real>));
    engine +=
        bytes(std::size_t(detail::packed_gradient_max_chunks<Real>(N, blocks)) * 2 * blocks * n * row, sizeof(Real));
    // The mixed-precision ground state's buffers, one per thread (LossGradient::mixed_precision_path).
    if (kernel == LossKernel::fused_host &&
        detail::EnginePathSettings<LossGradient<Real, ExecSpace>>(settings).path_choice(N).mixed_precision)
      engine +=
          bytes(std::size_t(detail::mixed_buffer_rows(ExecSpace())) * detail::mixed_buffer_row(N, D), sizeof(double));
  }
  // Supervised: the engine's predictions, the features' S, the best epoch's operators, this epoch's
  // (y_hat, y) and its host copy.
  if (supervised) {
    const std::size_t row = std::size_t(outputs) + columns - df;
    engine += bytes(b * std::size_t(outputs), sizeof(Real)) + bytes(n * n, cx) + bytes(dnn, cx) +
              2 * bytes(row * std::size_t(std::max<std::int64_t>(1, T_local)), sizeof(Real));
  }
  // HermitianAdam: the two moments and the step counter (what a snapshot copies), and the step's
  // bias corrections.
  const std::size_t adam_state = 2 * bytes(dnn, sizeof(Real)) + bytes(1, sizeof(int));
  const std::size_t adam = adam_state + bytes(2, sizeof(Real));
  // The trainer: the gathered batch, the epoch sums and their host mirror, the skip and bad-gradient
  // flags; on several ranks the all-reduce buffer and its host mirror.
  std::size_t own = bytes(b * columns, sizeof(Real)) + 2 * bytes(std::size_t(detail::epoch_sum_count), sizeof(double)) +
                    2 * bytes(1, sizeof(int));
  if (distributed) own += 2 * bytes(detail::allreduce_count(D, N), sizeof(double));
  own += BatchDistribution<ExecSpace>::estimate_bytes(T_total, batch, T_local, distributed ? ranks : 1);
  if (settings.warm_start_eigh)
    own += WarmStartCache<Real, ExecSpace>::estimate_bytes(T_local, capacity, N, interruptible);
  if (interruptible) own += bytes(dnn, cx) + adam_state;
  return engine + adam + own;
}

}  // namespace qgml
