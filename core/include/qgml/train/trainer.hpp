// Mini-batch training of a matrix configuration (docs/math.md 8.2): per epoch a keyed shuffle of the points,
// contiguous batches (the last partial batch kept), the exact gradient of each batch's mean loss,
// and one Adam step per batch. The whole epoch stays on the device: the only device-to-host copy is
// the epoch's sums, once at its end; a batch whose loss or gradient is not finite is skipped on the
// device and never reaches the matrices.
//
// Data-parallel training: with a Communicator of P > 1 ranks, each rank holds the contiguous shard
// shard_range(T, P, rank) of the points and a full copy of the matrices. The batches are those of the
// one-process run (batch_distribution.hpp); each rank computes the points of a batch that it holds,
// the partial gradient and loss sums are added over the ranks by one in-place all-reduce, and every
// rank takes the same Adam step. Histories therefore agree with the one-process run up to the order
// of the floating-point sums.
//
// Supervised training (settings.task regression or classification, docs/supervised.md): the configuration
// holds the D feature matrices and then the C = settings.supervised.outputs target operators B_c, each
// point its D coordinates and then its targets (target_columns: one per output, or softmax's class
// index). The D + C operators are one parameter stack (one Adam, one checkpoint, one all-reduce); the
// features' S = 1/2 sum_k A_k^2 is a view of the first D of them. Every epoch also records metrics of the
// predictions (EpochRecord::train, ::validation; set_validation).
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/memory_budget.hpp"
#include "qgml/data/permutation.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/parallel/communicator.hpp"
#include "qgml/parallel/replica_check.hpp"
#include "qgml/train/adam.hpp"
#include "qgml/train/batch_distribution.hpp"
#include "qgml/train/checkpoint.hpp"
#include "qgml/train/loss_gradient.hpp"
#include "qgml/train/supervised_metrics.hpp"
#include "qgml/train/target_predictor.hpp"
#include "qgml/train/training_settings.hpp"
#include "qgml/train/warm_start_cache.hpp"

namespace qgml {

// Host memory an execution space can read directly: pinned host memory for CUDA (kernels read it over
// the host link), the space's own memory on CPUs. The DataSpace for data sets larger than device memory.
#ifdef KOKKOS_ENABLE_CUDA
template <class ExecSpace>
using host_readable_space_t = std::conditional_t<std::is_same_v<ExecSpace, Kokkos::Cuda>, Kokkos::CudaHostPinnedSpace,
                                                 typename ExecSpace::memory_space>;
#else
template <class ExecSpace>
using host_readable_space_t = typename ExecSpace::memory_space;
#endif

namespace detail {

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

// buf = (Re g, Im g interleaved over the dnn entries, then the sums) as doubles (pack), or g and sums
// read back from buf (unpack).
template <class Gradient, class Sums, class Buffer>
struct PackGradient {
  using Real = typename Gradient::value_type::value_type;
  Gradient g;
  Sums sums;
  Buffer buf;
  int n = 0, dnn = 0;
  bool pack = false;
  KOKKOS_INLINE_FUNCTION void operator()(const int q) const {
    if (pack) {
      if (q < dnn) {
        const auto z = g(q / (n * n), (q / n) % n, q % n);
        buf(2 * q) = double(z.real());
        buf(2 * q + 1) = double(z.imag());
      } else {
        buf(2 * dnn + (q - dnn)) = sums(q - dnn);
      }
    } else {
      if (q < dnn)
        g(q / (n * n), (q / n) % n, q % n) = complex_t<Real>(Real(buf(2 * q)), Real(buf(2 * q + 1)));
      else
        sums(q - dnn) = buf(2 * dnn + (q - dnn));
    }
  }
};

// buffer <- (Re g, Im g interleaved, then the loss sums) as doubles (pack), or the reverse (unpack).
template <class ExecSpace, class Gradient, class Sums, class Buffer>
void pack_gradient(const ExecSpace& exec, const Gradient& g, const Sums& sums, const Buffer& buf, bool pack) {
  const int n = int(g.extent(1)), dnn = int(g.extent(0)) * n * n, nsums = int(sums.extent(0));
  Kokkos::parallel_for(pack ? "qgml::Trainer::pack_gradient" : "qgml::Trainer::unpack_gradient",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, dnn + nsums),
                       PackGradient<Gradient, Sums, Buffer>{g, sums, buf, n, dnn, pack});
}

// Row first + t of out = (y_hat(t, 0..C-1), y(t, 0..columns-1)).
template <class Out, class Predictions, class Targets>
struct RecordPredictions {
  Out out;
  Predictions y_hat;
  Targets y;
  int first = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    const int outputs = int(y_hat.extent(1)), columns = int(y.extent(1));
    for (int c = 0; c < outputs; ++c) out(first + t, c) = y_hat(t, c);
    for (int j = 0; j < columns; ++j) out(first + t, outputs + j) = y(t, j);
  }
};

// Rows [first, first + count) of out <- (y_hat(t, :), y(t, :)): a batch's predictions and targets.
template <class ExecSpace, class Out, class Predictions, class Targets>
void record_predictions(const ExecSpace& exec, const Out& out, const Predictions& y_hat, const Targets& y, int first,
                        int count) {
  Kokkos::parallel_for("qgml::Trainer::record_predictions", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
                       RecordPredictions<Out, Predictions, Targets>{out, y_hat, y, first});
}

// out(t, outputs + j) = points(t, d + j) for the target columns j.
template <class Out, class Points>
struct CopyTargets {
  Out out;
  Points points;
  int d = 0, outputs = 0;
  KOKKOS_INLINE_FUNCTION void operator()(const int t) const {
    for (int j = 0; d + j < int(points.extent(1)); ++j) out(t, outputs + j) = points(t, d + j);
  }
};

// out(t, outputs + j) <- points(t, d + j), the targets of the points after their C outputs.
template <class ExecSpace, class Out, class Points>
void copy_targets(const ExecSpace& exec, const Out& out, const Points& points, int d, int outputs) {
  Kokkos::parallel_for("qgml::Trainer::validation_targets",
                       Kokkos::RangePolicy<ExecSpace>(exec, 0, int(points.extent(0))),
                       CopyTargets<Out, Points>{out, points, d, outputs});
}

// The LossGradient settings that TrainingSettings select: ground_state_path, mixed_precision_reduction and
// wide_packs each keep the engine's automatic choice or turn it off. The Trainer sets them on its engine;
// path_choice tells what they run at size n (qgml train prints it before training).
template <class Engine>
struct EnginePathSettings {
  typename Engine::SpectralPath spectral;
  typename Engine::ReductionPrecision reduction;
  typename Engine::PackWidth width;

  explicit EnginePathSettings(const TrainingSettings& s)
      : spectral(s.ground_state_path ? Engine::SpectralPath::automatic : Engine::SpectralPath::full_spectrum),
        reduction(s.mixed_precision_reduction ? Engine::ReductionPrecision::automatic
                                              : Engine::ReductionPrecision::full),
        width(s.wide_packs ? Engine::PackWidth::automatic : Engine::PackWidth::narrow) {}
  typename Engine::PathChoice path_choice(int n) const { return Engine::path_choice(n, spectral, reduction, width); }
};

}  // namespace detail

// DataSpace: where the points live. By default the execution space's memory; any space the execution
// space can read works, e.g. Kokkos::CudaHostPinnedSpace for data sets larger than device memory: each
// batch is then streamed to the device by the gather kernel (B x D values over the host link per batch)
// and only the batch buffers occupy device memory.
template <class Real, class ExecSpace = Kokkos::DefaultExecutionSpace,
          class DataSpace = typename ExecSpace::memory_space>
class Trainer {
 public:
  using memory_space = typename ExecSpace::memory_space;
  using data_space = DataSpace;
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, DataSpace>::accessible,
                "qgml::Trainer: the execution space must be able to read the data's memory space");
  using points_type = Kokkos::View<Real**, Kokkos::LayoutRight, DataSpace>;
  using batch_type = Kokkos::View<Real**, Kokkos::LayoutRight, memory_space>;
  // Called after every epoch with its record; return false to stop training.
  using EpochCallback = std::function<bool(const EpochRecord&)>;

  // Trains `config` in place on `data` (T x D, on the device).
  Trainer(MatrixConfiguration<Real, ExecSpace>& config, const points_type& data, const TrainingSettings& settings,
          const ExecSpace& exec)
      : Trainer(config, data, settings, exec, nullptr, std::int64_t(data.extent(0))) {}

  // Data-parallel training on `comm`'s ranks: `shard` (on the device) holds this rank's rows
  // shard_range(total_points, comm.size(), comm.rank()) of the T = total_points points. A collective:
  // every rank constructs its Trainer and calls train() / train_epoch() / checkpoint functions alike.
  Trainer(MatrixConfiguration<Real, ExecSpace>& config, const points_type& shard, const TrainingSettings& settings,
          const ExecSpace& exec, Communicator& comm, std::int64_t total_points)
      : Trainer(config, shard, settings, exec, &comm, total_points) {}

  // Bytes of memory a Trainer with these settings allocates for D x N x N matrices and T_local points
  // of this process (of T_total over `ranks` processes; T_total < 0: T_local): every buffer of the
  // trainer, its LossGradient, Adam state, batch distribution and warm-start cache, host mirrors
  // included (not the data or the configuration); with `interruptible`, also what set_stop_query
  // allocates (the snapshot of the matrices and the optimizer state, the warm-start cache's second
  // basis). The memory model of qgml train's pre-flight check and of qgml tune.
  static std::size_t estimate_bytes(const TrainingSettings& settings, int D, int N, std::int64_t T_local,
                                    std::int64_t T_total = -1, int ranks = 1, bool interruptible = false) {
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
    const LossKernel kernel = engine_kernel(settings, N);
    if (kernel != LossKernel::fused_host) {
      engine += bytes(d * n * 2 * b, cx) + bytes(n * 2 * b, cx);
      if (!is_host_space_v<ExecSpace> || !kokkoskernels_available)
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
    std::size_t own = bytes(b * columns, sizeof(Real)) +
                      2 * bytes(std::size_t(detail::epoch_sum_count), sizeof(double)) + 2 * bytes(1, sizeof(int));
    if (distributed) own += 2 * bytes(reduce_count(D, N), sizeof(double));
    own += BatchDistribution<ExecSpace>::estimate_bytes(T_total, batch, T_local, distributed ? ranks : 1);
    if (settings.warm_start_eigh)
      own += WarmStartCache<Real, ExecSpace>::estimate_bytes(T_local, capacity, N, interruptible);
    if (interruptible) own += bytes(dnn, cx) + adam_state;
    return engine + adam + own;
  }

 private:
  Trainer(MatrixConfiguration<Real, ExecSpace>& config, const points_type& data, const TrainingSettings& settings,
          const ExecSpace& exec, Communicator* comm, std::int64_t total_points)
      : config_(config),
        data_(data),
        settings_(settings),
        exec_(exec),
        comm_(comm),
        distributed_(comm != nullptr && comm->size() > 1),
        count_(checked_count(total_points)),
        shard_(comm ? shard_range(total_points, comm->size(), comm->rank()) : ShardRange{0, total_points}),
        batch_(int(effective_batch_size(settings, count_))),
        features_d_(feature_count(config, settings)),
        engine_(features_d_, config.matrix_size(),
                BatchDistribution<ExecSpace>::local_batch_capacity(batch_, shard_.size()),
                settings.warm_start_eigh ? LossKernel::separate : settings.kernel,
                is_supervised(settings.task) ? settings.supervised.outputs : 0),
        adam_(config.dimension(), config.matrix_size(), settings.adam),
        distribution_(count_, batch_, shard_, distributed_ ? comm->size() : 1),
        batch_points_(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::batch_points"), engine_.max_batch(),
                      point_columns(config, settings)),
        epoch_sums_("qgml::Trainer::epoch_sums", int(detail::epoch_sum_count)),
        epoch_sums_host_(Kokkos::create_mirror(epoch_sums_)),
        skip_("qgml::Trainer::skip"),
        bad_gradient_("qgml::Trainer::bad_gradient") {
    QGML_REQUIRE(std::int64_t(data.extent(0)) == shard_.size(),
                 "qgml::Trainer: rank " + std::to_string(comm ? comm->rank() : 0) + " holds " +
                     std::to_string(data.extent(0)) + " points, but its shard of T = " + std::to_string(count_) +
                     " points has " + std::to_string(shard_.size()));
    const detail::EnginePathSettings<LossGradient<Real, ExecSpace>> paths(settings);
    engine_.set_spectral_path(paths.spectral);
    engine_.set_team_shape(settings.team_shape);
    engine_.set_reduction_precision(paths.reduction);
    engine_.set_pack_width(paths.width);
    if (settings.warm_start_eigh)
      warm_ = WarmStartCache<Real, ExecSpace>(shard_.size(), engine_.max_batch(), config.matrix_size());
    if (distributed_) {
      reduce_buffer_ = Kokkos::View<double*, memory_space>("qgml::Trainer::reduce_buffer",
                                                           reduce_count(config.dimension(), config.matrix_size()));
      reduce_buffer_host_ = Kokkos::create_mirror(reduce_buffer_);
    }
    QGML_REQUIRE(int(data.extent(1)) == point_columns(config, settings),
                 is_supervised(settings.task)
                     ? "qgml::Trainer: the data have " + std::to_string(data.extent(1)) + " columns, expected " +
                           std::to_string(point_columns(config, settings)) +
                           " (the D = " + std::to_string(features_d_) + " coordinates, then " +
                           std::to_string(target_columns(settings.supervised.loss, settings.supervised.outputs)) +
                           " target column(s))"
                     : "qgml::Trainer: the data have D = " + std::to_string(data.extent(1)) +
                           " coordinates but the configuration has D = " + std::to_string(config.dimension()));
    QGML_REQUIRE(settings.epochs >= 0, "qgml::Trainer: epochs must be >= 0");
    QGML_REQUIRE(settings.learning_rate > 0, "qgml::Trainer: the learning rate must be > 0");
    if (is_supervised(settings.task)) {
      check_task_loss(settings.task, settings.supervised.loss);
      features_ = MatrixConfiguration<Real, ExecSpace>(
          Kokkos::subview(config.matrices(), Kokkos::make_pair(0, features_d_), Kokkos::ALL, Kokkos::ALL), exec);
      target_operator_ = Kokkos::subview(config.matrices(), Kokkos::make_pair(features_d_, config.dimension()),
                                         Kokkos::ALL, Kokkos::ALL);
      predictions_ = predictions_type(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::predictions"),
                                      std::max<std::int64_t>(1, shard_.size()), prediction_row());
      predictions_host_ = Kokkos::create_mirror(predictions_);
      target_mean_.assign(std::size_t(settings.supervised.outputs), 0.0);
      target_scale_.assign(std::size_t(settings.supervised.outputs), 1.0);
    }
  }

 public:
  // Supervised training: points (T_v x (D + target columns), coordinates then targets, the same on every
  // rank) whose predictions with the operators at the end of each epoch give EpochRecord::validation.
  // Allocates the buffers of their prediction once; an empty View removes them.
  void set_validation(const Kokkos::View<Real**, Kokkos::LayoutRight, memory_space>& points) {
    QGML_REQUIRE(is_supervised(settings_.task),
                 "qgml::Trainer::set_validation: validation points are for supervised training");
    const int columns = point_columns(config_, settings_);
    QGML_REQUIRE(points.extent(0) == 0 || int(points.extent(1)) == columns,
                 "qgml::Trainer::set_validation: the validation points have " + std::to_string(points.extent(1)) +
                     " columns, expected " + std::to_string(columns) + " (the coordinates, then the targets)");
    validation_ = points;
    if (points.extent(0) == 0) return;
    const int count = int(points.extent(0));
    predictor_ = TargetPredictor<Real, ExecSpace>(config_.matrix_size(), std::min(count, engine_.max_batch()));
    validation_predictions_ = predictions_type(
        Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::validation_predictions"), count, prediction_row());
    validation_predictions_host_ = Kokkos::create_mirror(validation_predictions_);
    allocate_best();
  }

  // The epoch with the lowest mean validation loss (in the units trained on) so far, 0 before any
  // epoch with validation points, and that loss. Kept in checkpoints.
  int best_epoch() const { return best_epoch_; }
  double best_validation_loss() const { return best_validation_; }
  // The configuration <- the operators after best_epoch() (the trained trajectory itself, the
  // optimizer state and the history stay as they are, so that a resume continues the run; call it
  // once training is over). Returns best_epoch(); 0: nothing to restore, the configuration unchanged.
  int restore_best() {
    if (best_epoch_ == 0) return 0;
    Kokkos::deep_copy(exec_, config_.matrices(), best_matrices_);
    config_.update_square_sum(exec_);
    qgml::fence(exec_, "qgml::Trainer: the best epoch's operators restored");
    return best_epoch_;
  }

  // Regression: the metrics of output c are of mean[c] + scale[c] * (prediction, target), the units of
  // the targets before a standardisation the caller applied (the loss stays in the units trained on).
  void set_target_units(const std::vector<double>& mean, const std::vector<double>& scale) {
    QGML_REQUIRE(int(mean.size()) == settings_.supervised.outputs && mean.size() == scale.size(),
                 "qgml::Trainer::set_target_units: one mean and one scale per output");
    target_mean_ = mean;
    target_scale_ = scale;
  }
  void set_target_units(double mean, double scale) {
    set_target_units(std::vector<double>{mean}, std::vector<double>{scale});
  }

 public:
  // Asked on the host between the batches of an epoch (never inside a kernel, and with no fence of its
  // own); true abandons the epoch: the matrices, the optimizer state and the warm-start basis return to
  // those of the last complete epoch (kept in buffers allocated here, once), a checkpoint of it is
  // written (with a checkpoint directory) and train() returns with interrupted() true. Data-parallel: a
  // collective per batch, so that every rank stops at the same batch.
  using StopQuery = std::function<bool()>;
  void set_stop_query(StopQuery query) {
    stop_query_ = std::move(query);
    if (stop_query_ && snapshot_matrices_.extent(0) == 0) {
      const int d = config_.dimension(), n = config_.matrix_size();
      snapshot_matrices_ =
          snapshot_matrices_type(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::snapshot_matrices"), d, n, n);
      snapshot_m_ =
          snapshot_moments_type(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::snapshot_m"), d, n, n);
      snapshot_v_ =
          snapshot_moments_type(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::snapshot_v"), d, n, n);
      snapshot_step_ = Kokkos::View<int, memory_space>("qgml::Trainer::snapshot_step");
      warm_.enable_rollback();
    }
  }

  // Runs the remaining epochs (settings.epochs minus those already done, e.g. after a resume), until
  // the callback returns false on any rank, training.early_stop holds or the stop query interrupts an
  // epoch. With a checkpoint directory, a fresh run first checkpoints epoch 0 (the initial state), so
  // that a run stopped at any point can be resumed. An epoch in which every batch is skipped (the loss
  // is not finite at any point) throws qgml::Error before any checkpoint of it is written. A run that
  // training.early_stop ended trains no further unless settings.epochs exceeds the limit it stopped
  // under or the early stop is turned off.
  const std::vector<EpochRecord>& train(const EpochCallback& callback = {}) {
    interrupted_ = false;
    if (already_stopped_early()) return history_;
    stopped_early_ = false;
    const bool checkpoints = !settings_.checkpoint_dir.empty();
    if (checkpoints && epoch_ == 0 && checkpointed_epoch_ != 0) save_checkpoint(settings_.checkpoint_dir);
    while (epoch_ < settings_.epochs) {
      EpochRecord r;
      if (!run_epoch(r, true)) {
        interrupted_ = true;
        if (checkpoints && checkpointed_epoch_ != epoch_) save_checkpoint(settings_.checkpoint_dir);
        break;
      }
      if (r.batches == 0)
        throw Error("epoch " + std::to_string(r.epoch) + ": the loss is not finite at any point (all " +
                    std::to_string(r.skipped_batches) +
                    " batches skipped): the data or the matrices are likely of an extreme scale (H(x) = 1/2 "
                    "sum_k (A_k - x_k)^2 overflows or underflows for |x| or |A_k| beyond about 1e150 or below "
                    "1e-150); standardise the data (data.standardize = true) or rescale the matrices" +
                    (checkpoints ? "; the last good checkpoint (epoch " + std::to_string(checkpointed_epoch_) +
                                       ") stays in force in " + settings_.checkpoint_dir
                                 : std::string()));
      const bool go_on = callback ? callback(r) : true;
      const bool halt = on_any_rank(!go_on);
      const bool early = converged();
      if (early) {
        stopped_early_ = true;
        stopped_max_epochs_ = settings_.epochs;
      }
      const bool last = epoch_ == settings_.epochs || halt || early;
      if (checkpoints && (last || (settings_.checkpoint_every > 0 && epoch_ % settings_.checkpoint_every == 0)))
        save_checkpoint(settings_.checkpoint_dir);
      if (settings_.check_replicas) check_replicas();
      if (halt || early) break;
    }
    return history_;
  }

  // Whether the last train() was interrupted by the stop query (the state is that of epoch()).
  bool interrupted() const { return interrupted_; }
  // Whether training.early_stop ended the run (in this session or in the checkpoint it resumed).
  bool stopped_early() const { return stopped_early_; }
  // Whether train() has nothing to do: training.early_stop ended the run under an epoch limit that
  // settings.epochs does not exceed, and the early stop is still on.
  bool already_stopped_early() const {
    return stopped_early_ && (settings_.early_stop_tolerance > 0 || settings_.validation_patience > 0) &&
           settings_.epochs <= stopped_max_epochs_;
  }

  // One epoch; returns (and appends to the history) its record.
  EpochRecord train_epoch() {
    EpochRecord r;
    run_epoch(r, false);
    return r;
  }

  // What every checkpoint records as the run's fingerprint (checkpoint.hpp).
  void set_fingerprint(const CheckpointFingerprint& f) { fingerprint_ = f; }

  // Writes the configuration, optimizer state, epoch, history and warm-start basis (see checkpoint.hpp).
  // Data-parallel: a collective; the shards' bases are gathered to rank 0 in point order (the file is
  // that of a one-process run), rank 0 writes, and a failure there is raised on every rank.
  void save_checkpoint(const std::string& dir) {
    ScopedRegion region("qgml::Trainer::checkpoint");
    HostMatrices basis = gathered_warm_basis();
    const auto write = [&] {
      CheckpointState s = checkpoint_state(config_, adam_, exec_);
      s.epoch = epoch_;
      s.seed = settings_.seed;
      s.points = count_;
      s.history = history_;
      s.stopped_early = stopped_early_;
      s.max_epochs = stopped_early_ ? stopped_max_epochs_ : settings_.epochs;
      s.fingerprint = fingerprint_;
      s.warm_basis = std::move(basis);
      s.best_epoch = best_epoch_;
      s.best_validation = best_validation_;
      if (best_epoch_ > 0) s.best_matrices = best_host();
      write_checkpoint(dir, s);
    };
    if (comm_)
      run_collectively(*comm_, [&] {
        if (comm_->rank() == 0) write();
      });
    else
      write();
    checkpointed_epoch_ = epoch_;
  }

  // Restores the configuration, optimizer state, epoch, history and warm-start basis from a checkpoint
  // written for the same data size and shape; training then continues exactly where the checkpoint was
  // taken. Data-parallel: a collective (every rank reads it and takes its shard's rows of the basis; a
  // failure on any rank is raised on all), and the checkpoint may come from a run on any number of
  // ranks.
  void load_checkpoint(const std::string& dir) {
    const auto read = [&] {
      const CheckpointState s = read_checkpoint(dir);
      check_checkpoint_matches(s, dir, config_.dimension(), config_.matrix_size(), count_, settings_.seed,
                               precision_of<Real>);
      restore_checkpoint(s, config_, adam_, exec_);
      if (warm_.enabled() && !s.warm_basis.values.empty()) restore_warm_basis(s.warm_basis);
      epoch_ = s.epoch;
      history_ = s.history;
      stopped_early_ = s.stopped_early;
      stopped_max_epochs_ = s.max_epochs;
      checkpointed_epoch_ = s.epoch;
      best_epoch_ = s.best_epoch;
      best_validation_ = s.best_validation;
      if (best_epoch_ > 0) restore_best_from(s.best_matrices);
    };
    if (comm_)
      run_collectively(*comm_, read);
    else
      read();
  }

  // Throws on every rank if the matrices differ between ranks (a hash of their bytes compared over the
  // ranks, parallel/replica_check.hpp).
  void check_replicas() {
    if (!comm_ || comm_->size() == 1) return;
    auto a = Kokkos::create_mirror(config_.matrices());
    Kokkos::deep_copy(exec_, a, config_.matrices());
    qgml::fence(exec_, "qgml::Trainer::check_replicas");
    QGML_REQUIRE(same_on_all_ranks(*comm_, fnv1a_hash(a.data(), a.span() * sizeof(complex_type))),
                 "qgml::Trainer: the matrices differ between ranks after epoch " + std::to_string(epoch_) +
                     " (training.check_replicas)");
    ++replica_checks_;
  }
  int replica_checks() const { return replica_checks_; }

  int epoch() const { return epoch_; }
  // Seconds spent in the gradient all-reduce (host copies included) since construction; 0 on one rank.
  double communication_seconds() const { return comm_seconds_; }
  // Bytes one all-reduce moves per rank: the D N^2 complex gradient plus the loss sums, as doubles.
  std::size_t bytes_per_allreduce() const { return distributed_ ? reduce_buffer_.span() * sizeof(double) : 0; }
  std::int64_t total_points() const { return count_; }
  ShardRange shard() const { return shard_; }
  int batch_size() const { return batch_; }
  const std::vector<EpochRecord>& history() const { return history_; }
  const TrainingSettings& settings() const { return settings_; }
  const LossGradient<Real, ExecSpace>& engine() const { return engine_; }
  // Bytes of memory the trainer's buffers hold: estimate_bytes of its settings and shape (a test checks
  // that the model matches the allocations Kokkos reports).
  std::size_t bytes() const {
    return estimate_bytes(settings_, config_.dimension(), config_.matrix_size(), shard_.size(), count_,
                          distributed_ ? comm_->size() : 1, snapshot_matrices_.extent(0) > 0);
  }

 private:
  using complex_type = complex_t<Real>;
  using snapshot_matrices_type = typename MatrixConfiguration<Real, ExecSpace>::matrices_type;
  using snapshot_moments_type = typename HermitianAdam<Real, ExecSpace>::moments_type;

  // D of the points: the configuration's operators less the C target operators of supervised training.
  static int feature_count(const MatrixConfiguration<Real, ExecSpace>& config, const TrainingSettings& s) {
    if (!is_supervised(s.task)) return config.dimension();
    const int outputs = s.supervised.outputs;
    QGML_REQUIRE(outputs >= 1 && (outputs == 1 || s.supervised.loss != SupervisedLoss::logistic),
                 "qgml::Trainer: supervised.outputs = " + std::to_string(outputs) +
                     " (expected >= 1, and 1 for the logistic loss: softmax takes several classes)");
    QGML_REQUIRE(config.dimension() >= outputs + 1,
                 "qgml::Trainer: supervised training needs the D >= 1 feature matrices and the " +
                     std::to_string(outputs) + " target operator(s) in the configuration, got " +
                     std::to_string(config.dimension()) + " matrices");
    return config.dimension() - outputs;
  }
  // Columns of a point: D, and supervised the target columns after them.
  static int point_columns(const MatrixConfiguration<Real, ExecSpace>& config, const TrainingSettings& s) {
    const int d = feature_count(config, s);
    return is_supervised(s.task) ? d + target_columns(s.supervised.loss, s.supervised.outputs) : d;
  }
  // Values per row of the predictions: the C outputs, then the target columns.
  int prediction_row() const {
    return settings_.supervised.outputs + target_columns(settings_.supervised.loss, settings_.supervised.outputs);
  }
  static int checked_count(std::int64_t total) {
    QGML_REQUIRE(total >= 1, "qgml::Trainer: the data set is empty");
    QGML_REQUIRE(total <= std::int64_t(std::numeric_limits<int>::max()),
                 "qgml::Trainer: " + std::to_string(total) + " points exceed the supported maximum of 2^31 - 1");
    return int(total);
  }
  // The loss-gradient implementation the trainer's LossGradient runs.
  static LossKernel engine_kernel(const TrainingSettings& s, int n) {
    return resolve_loss_kernel<ExecSpace>(s.kernel, n, EighVariant::automatic, s.warm_start_eigh);
  }
#if defined(QGML_HAVE_KOKKOSKERNELS)
  static constexpr bool kokkoskernels_available = true;
#else
  static constexpr bool kokkoskernels_available = false;
#endif
  // Doubles in one all-reduce: the D N^2 complex gradient and the loss sums.
  static std::size_t reduce_count(int d, int n) {
    return 2 * std::size_t(d) * std::size_t(n) * std::size_t(n) + std::size_t(loss_sum_count);
  }

  // One epoch into r (appended to the history); false when the stop query interrupted it (interruptible
  // only), with the state of the last complete epoch restored and nothing recorded.
  bool run_epoch(EpochRecord& r, bool interruptible) {
    ScopedRegion region("qgml::Trainer::epoch");
    Kokkos::Timer timer;
    const int epoch = epoch_;
    const double lr = settings_.schedule.at(settings_.learning_rate, epoch, settings_.epochs);
    detail::zero_epoch_sums(exec_, epoch_sums_);
    distribution_.plan_epoch(exec_, KeyedPermutation(std::uint64_t(count_), settings_.seed, std::uint64_t(epoch)));
    if (interruptible && stop_query_) save_snapshot();
    predicted_ = 0;
    for (int b = 0; b < distribution_.batches(); ++b) {
      if (interruptible && stop_query_ && b > 0 && on_any_rank(stop_query_())) {
        restore_snapshot();
        return false;
      }
      const int n_batch = distribution_.batch_points(b);
      const int n_local = distribution_.local_batch(b).second;
      if (n_local > 0) {
        const auto pts = Kokkos::subview(batch_points_, Kokkos::make_pair(0, n_local), Kokkos::ALL);
        distribution_.gather(exec_, data_, b, pts, warm_.rows());
        compute_batch(pts, n_batch);
      } else {
        engine_.zero(exec_);
      }
      if (distributed_) reduce_across_ranks();
      engine_.add_penalty(exec_, config_, settings_.loss);
      detail::finish_batch(exec_, engine_.gradient(), bad_gradient_, engine_.sums(), epoch_sums_, skip_, n_batch);
      ScopedRegion step("qgml::Trainer::optimizer_step");
      // Supervised: the next batch refreshes the features' S (compute_batch); S of the whole stack
      // (features and B) is refreshed once, at the end of the epoch.
      adam_.step(exec_, config_, engine_.gradient(), lr, skip_, !is_supervised(settings_.task));
    }
    if (is_supervised(settings_.task)) config_.update_square_sum(exec_);
    {
      ScopedRegion copy("qgml::Trainer::epoch_sums_to_host");
      Kokkos::deep_copy(exec_, epoch_sums_host_, epoch_sums_);
      qgml::fence(exec_, "qgml::Trainer: epoch sums on the host");
    }
    using namespace detail;
    const auto& h = epoch_sums_host_;
    r = EpochRecord{};
    r.epoch = epoch + 1;
    r.batches = int(h(sum_batches));
    const double nb = r.batches > 0 ? double(r.batches) : 1.0;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    r.total = r.batches > 0 ? h(sum_total) / nb : nan;
    r.reconstruction = r.batches > 0 ? h(sum_reconstruction) / nb : nan;
    r.fluctuation = r.batches > 0 ? h(sum_fluctuation) / nb : nan;
    r.penalty = r.batches > 0 ? h(sum_penalty) / nb : nan;
    r.learning_rate = lr;
    r.degenerate_points = long(h(sum_degenerate));
    r.skipped_batches = int(h(sum_skipped));
    r.eigh_failures = int(h(sum_eigh_failures));
    r.eigh_sweeps = h(sum_swept_points) > 0 ? h(sum_sweeps) / h(sum_swept_points) : 0.0;
    if (is_supervised(settings_.task)) {
      r.supervised = r.batches > 0 ? h(sum_supervised) / nb : nan;
      epoch_metrics(r);
    }
    r.seconds = timer.seconds();
    r.points_per_second = count_ / r.seconds;
    history_.push_back(r);
    ++epoch_;
    warm_.commit();  // every point has been solved once
    if (is_supervised(settings_.task) && validation_.extent(0) > 0) track_best();
    return true;
  }

  // The warm-start basis of all T points (on rank 0; empty on the others and before the first epoch),
  // gathered from the ranks' shards. A collective when distributed.
  HostMatrices gathered_warm_basis() {
    HostMatrices all;
    if (!warm_.ready()) return all;
    const int n = config_.matrix_size();
    const std::size_t width = 2 * std::size_t(n) * std::size_t(n);
    const auto b = Kokkos::create_mirror_view(warm_.basis());
    Kokkos::deep_copy(exec_, b, warm_.basis());
    qgml::fence(exec_, "qgml::Trainer: warm-start basis to the host");
    std::vector<double> local(std::size_t(shard_.size()) * width);
    for (std::int64_t i = 0; i < shard_.size(); ++i)
      for (int a = 0; a < n; ++a)
        for (int c = 0; c < n; ++c) {
          const auto z = b(i, a, c);
          const std::size_t q = std::size_t(i) * width + 2 * (std::size_t(a) * n + c);
          local[q] = double(z.real());
          local[q + 1] = double(z.imag());
        }
    const std::vector<double> rows = comm_ ? gather_shards_to_root(*comm_, local, count_, width) : std::move(local);
    if (rows.empty()) return all;
    all.D = count_;
    all.N = n;
    all.values.resize(std::size_t(count_) * n * n);
    for (std::size_t q = 0; q < all.values.size(); ++q)
      all.values[q] = std::complex<double>(rows[2 * q], rows[2 * q + 1]);
    return all;
  }
  // This rank's rows [shard begin, end) of the basis of all T points.
  void restore_warm_basis(const HostMatrices& all) {
    auto b = Kokkos::create_mirror_view(Kokkos::HostSpace(), warm_.basis());
    qgml::fence(exec_, "qgml::Trainer: earlier work on the warm-start basis done (the mirror may alias it)");
    const int n = config_.matrix_size();
    for (std::int64_t i = 0; i < shard_.size(); ++i)
      for (int a = 0; a < n; ++a)
        for (int c = 0; c < n; ++c) {
          const auto z = all(int(shard_.begin + i), a, c);
          b(i, a, c) = complex_t<Real>(Real(z.real()), Real(z.imag()));
        }
    Kokkos::deep_copy(exec_, warm_.basis(), b);
    qgml::fence(exec_, "qgml::Trainer: warm-start basis restored");
    warm_.set_ready(true);
  }

  // The matrices and the optimizer state at the start of an epoch (device copies on exec, no fence),
  // and back (the warm-start basis of the last complete epoch stays in place, warm_start_cache.hpp).
  void save_snapshot() {
    Kokkos::deep_copy(exec_, snapshot_matrices_, config_.matrices());
    Kokkos::deep_copy(exec_, snapshot_m_, adam_.first_moment());
    Kokkos::deep_copy(exec_, snapshot_v_, adam_.second_moment());
    Kokkos::deep_copy(exec_, snapshot_step_, adam_.step_count());
  }
  void restore_snapshot() {
    Kokkos::deep_copy(exec_, config_.matrices(), snapshot_matrices_);
    Kokkos::deep_copy(exec_, adam_.first_moment(), snapshot_m_);
    Kokkos::deep_copy(exec_, adam_.second_moment(), snapshot_v_);
    Kokkos::deep_copy(exec_, adam_.step_count(), snapshot_step_);
    config_.update_square_sum(exec_);
    qgml::fence(exec_, "qgml::Trainer: state of the last complete epoch restored");
  }

  // Loss and gradient of the gathered batch (n_batch points over all ranks): with warm starts, each
  // point's eigenvectors of the previous epoch start a Jacobi refinement and the new ones are stored.
  template <class PointsView>
  void compute_batch(const PointsView& pts, int n_batch) {
    const Real weight = Real(1) / Real(n_batch);
    const int count = int(pts.extent(0));
    EighOptions options;
    options.warm_start = warm_.ready();
    if (warm_.ready()) warm_.load(exec_, engine_.eigenvectors(), count);
    const IntVector<memory_space> sweeps = warm_.enabled() ? warm_.sweeps() : IntVector<memory_space>();
    if (is_supervised(settings_.task)) {
      features_.update_square_sum(exec_);
      const auto x = Kokkos::subview(pts, Kokkos::ALL, Kokkos::make_pair(0, features_d_));
      const auto y = Kokkos::subview(pts, Kokkos::ALL, Kokkos::make_pair(features_d_, int(pts.extent(1))));
      engine_.compute_supervised(exec_, features_, target_operator_, x, y, settings_.loss, settings_.supervised, weight,
                                 false, options, sweeps);
      record_predictions(y, count);
    } else {
      engine_.compute(exec_, config_, pts, settings_.loss, weight, false, options, sweeps);
    }
    if (!warm_.enabled()) return;
    warm_.store(exec_, engine_.eigenvectors(), count);
    if (warm_.ready())
      detail::count_sweeps(exec_, warm_.sweeps(), count, epoch_sums_, int(detail::sum_sweeps),
                           int(detail::sum_swept_points));
  }

  // Rows [predicted_, predicted_ + count) of predictions_ <- (y_hat, y) of the batch just computed.
  template <class TargetView>
  void record_predictions(const TargetView& y, int count) {
    detail::record_predictions(exec_, predictions_, engine_.predictions(), y, predicted_, count);
    predicted_ += count;
  }

  // The metrics of prediction rows (the C outputs, then the targets) in host memory, in the caller's
  // target units.
  template <class HostRows>
  SupervisedMetrics metrics_of(const HostRows& rows, std::size_t count) const {
    const int outputs = settings_.supervised.outputs, row = prediction_row();
    const bool regression = settings_.task == Task::regression;
    std::vector<double> values(std::size_t(row) * count);
    for (std::size_t i = 0; i < count; ++i)
      for (int c = 0; c < row; ++c) {
        const int o = c < outputs ? c : c - outputs;  // the output of a prediction or of a target column
        const double v = double(rows(i, c));
        values[std::size_t(row) * i + c] =
            regression ? target_mean_[std::size_t(o)] + target_scale_[std::size_t(o)] * v : v;
      }
    return supervised_metrics(settings_.task, settings_.supervised.loss, outputs, values.data(), count);
  }

  // r.train from this epoch's predictions (gathered to rank 0, which computes them and tells the others)
  // and r.validation from the validation points with the operators as they are now.
  void epoch_metrics(EpochRecord& r) {
    r.has_targets = true;
    const int outputs = settings_.supervised.outputs, row = prediction_row();
    Kokkos::deep_copy(exec_, predictions_host_, predictions_);
    if (validation_.extent(0) > 0) {
      features_.update_square_sum(exec_);
      const auto x = Kokkos::subview(validation_, Kokkos::ALL, Kokkos::make_pair(0, features_d_));
      const auto y_hat = Kokkos::subview(validation_predictions_, Kokkos::ALL, Kokkos::make_pair(0, outputs));
      predictor_.predict(exec_, features_, target_operator_, x, y_hat);
      detail::copy_targets(exec_, validation_predictions_, validation_, features_d_, outputs);
      Kokkos::deep_copy(exec_, validation_predictions_host_, validation_predictions_);
    }
    qgml::fence(exec_, "qgml::Trainer: predictions on the host");
    if (validation_.extent(0) > 0) {
      const std::size_t count = validation_.extent(0);
      r.validation = metrics_of(validation_predictions_host_, count);
      std::vector<double> rows(std::size_t(row) * count);
      for (std::size_t i = 0; i < count; ++i)
        for (int c = 0; c < row; ++c) rows[std::size_t(row) * i + c] = double(validation_predictions_host_(i, c));
      validation_loss_ =
          mean_point_loss(settings_.supervised.loss, outputs, settings_.supervised.huber_delta, rows.data(), count);
    }
    const std::size_t local = std::size_t(predicted_);
    if (!distributed_) {
      r.train = metrics_of(predictions_host_, local);
      return;
    }
    std::vector<double> mine(std::size_t(row) * local);
    for (std::size_t i = 0; i < local; ++i)
      for (int c = 0; c < row; ++c) mine[std::size_t(row) * i + c] = double(predictions_host_(i, c));
    const std::vector<double> all = comm_->gather_to_root(mine);
    std::string text;
    if (comm_->rank() == 0) {
      const std::size_t count = all.size() / std::size_t(row);
      Kokkos::View<const double**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> gathered(
          all.data(), count, std::size_t(row));
      const SupervisedMetrics m = metrics_of(gathered, count);
      std::ostringstream out;
      out.precision(17);
      for (double v : {m.mae, m.rmse, m.r2, m.accuracy, m.auc}) out << v << " ";
      out << m.per_output.size() << " ";
      for (double v : m.per_output) out << v << " ";
      text = out.str();
    }
    std::istringstream in(comm_->broadcast(text, 0));
    const auto next = [&in] {
      std::string word;
      in >> word;
      return std::strtod(word.c_str(), nullptr);
    };
    for (double* v : {&r.train.mae, &r.train.rmse, &r.train.r2, &r.train.accuracy, &r.train.auc}) *v = next();
    r.train.per_output.resize(std::size_t(next()));
    for (double& v : r.train.per_output) v = next();
  }

  // gradient and loss sums <- their sums over the ranks (one in-place all-reduce of doubles).
  void reduce_across_ranks() {
    ScopedRegion region("qgml::Trainer::allreduce");
    const auto& buf = reduce_buffer_;
    detail::pack_gradient(exec_, engine_.gradient(), engine_.sums(), buf, true);
    qgml::fence(exec_, "qgml::Trainer: gradient packed for the all-reduce");
    Kokkos::Timer timer;
    constexpr bool host_memory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
    if (host_memory || comm_->accepts_device_memory()) {
      comm_->allreduce_sum(buf.data(), buf.span(), !host_memory);
    } else {
      Kokkos::deep_copy(exec_, reduce_buffer_host_, buf);
      qgml::fence(exec_, "qgml::Trainer: gradient on the host for the all-reduce");
      comm_->allreduce_sum(reduce_buffer_host_.data(), reduce_buffer_host_.span(), false);
      Kokkos::deep_copy(exec_, buf, reduce_buffer_host_);
    }
    comm_seconds_ += timer.seconds();
    detail::pack_gradient(exec_, engine_.gradient(), engine_.sums(), buf, false);
  }

  // Whether `flag` holds on any rank (so that every rank takes the same decision).
  bool on_any_rank(bool flag) {
    if (!distributed_) return flag;
    std::int64_t v = flag ? 1 : 0;
    comm_->allreduce_max(&v, 1);
    return v != 0;
  }

  bool converged() const { return early_stop_converged(settings_, history_) || patience_exhausted(); }
  // validation_patience epochs after the best one without a lower validation loss.
  bool patience_exhausted() const {
    return settings_.validation_patience > 0 && best_epoch_ > 0 &&
           epoch_ - best_epoch_ >= settings_.validation_patience;
  }
  // After an epoch with validation points: a lower (finite) mean validation loss makes it the best.
  void track_best() {
    if (!std::isfinite(validation_loss_) || (best_epoch_ > 0 && !(validation_loss_ < best_validation_))) return;
    best_epoch_ = epoch_;
    best_validation_ = validation_loss_;
    Kokkos::deep_copy(exec_, best_matrices_, config_.matrices());
  }
  HostMatrices best_host() const { return stack_to_host(best_matrices_, exec_); }
  void restore_best_from(const HostMatrices& h) {
    allocate_best();
    host_to_stack(h, best_matrices_, exec_);
  }
  void allocate_best() {
    if (best_matrices_.extent(0) > 0) return;
    best_matrices_ = MatrixStack<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::best"),
                                                     config_.dimension(), config_.matrix_size(), config_.matrix_size());
  }

  MatrixConfiguration<Real, ExecSpace>& config_;
  points_type data_;
  TrainingSettings settings_;
  ExecSpace exec_;
  Communicator* comm_ = nullptr;
  bool distributed_ = false;
  int count_ = 0;
  ShardRange shard_;
  int batch_ = 0, epoch_ = 0;
  int features_d_ = 0;  // D: the configuration's operators less the target operators (supervised)
  LossGradient<Real, ExecSpace> engine_;
  HermitianAdam<Real, ExecSpace> adam_;
  // Supervised: the feature matrices (a view of the first D operators) and the B_c (the last C); this epoch's
  // (y_hat, y) per point of this rank in batch order (predicted_ rows filled); the validation points and
  // their predictor.
  MatrixConfiguration<Real, ExecSpace> features_;
  MatrixStack<Real, memory_space> target_operator_;
  using predictions_type = Kokkos::View<Real**, Kokkos::LayoutRight, memory_space>;
  predictions_type predictions_, validation_predictions_;  // rows: the C outputs, then the targets
  typename predictions_type::HostMirror predictions_host_, validation_predictions_host_;
  int predicted_ = 0;
  Kokkos::View<Real**, Kokkos::LayoutRight, memory_space> validation_;
  TargetPredictor<Real, ExecSpace> predictor_;
  std::vector<double> target_mean_, target_scale_;  // per output
  BatchDistribution<ExecSpace> distribution_;
  WarmStartCache<Real, ExecSpace> warm_;
  batch_type batch_points_;
  Kokkos::View<double*, memory_space> epoch_sums_;
  typename Kokkos::View<double*, memory_space>::HostMirror epoch_sums_host_;
  Kokkos::View<int, memory_space> skip_, bad_gradient_;
  Kokkos::View<double*, memory_space> reduce_buffer_;
  typename Kokkos::View<double*, memory_space>::HostMirror reduce_buffer_host_;
  double comm_seconds_ = 0;
  int replica_checks_ = 0;
  StopQuery stop_query_;
  snapshot_matrices_type snapshot_matrices_;
  snapshot_moments_type snapshot_m_, snapshot_v_;
  Kokkos::View<int, memory_space> snapshot_step_;
  bool interrupted_ = false, stopped_early_ = false;
  int stopped_max_epochs_ = 0;
  int checkpointed_epoch_ = -1;  // the epoch of the last checkpoint written or read; -1: none
  // Supervised with validation points: the last epoch's mean validation loss, the best epoch (0: none)
  // and its loss and operators.
  double validation_loss_ = 0, best_validation_ = 0;
  int best_epoch_ = 0;
  MatrixStack<Real, memory_space> best_matrices_;
  std::vector<EpochRecord> history_;
  CheckpointFingerprint fingerprint_;
};

}  // namespace qgml
