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

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/host_readable_space.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/data/permutation.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/parallel/communicator.hpp"
#include "qgml/parallel/replica_check.hpp"
#include "qgml/train/adam.hpp"
#include "qgml/train/batch_distribution.hpp"
#include "qgml/train/checkpoint.hpp"
#include "qgml/train/engine_path_settings.hpp"
#include "qgml/train/epoch_snapshot.hpp"
#include "qgml/train/epoch_sums.hpp"
#include "qgml/train/gradient_allreduce.hpp"
#include "qgml/train/loss_gradient.hpp"
#include "qgml/train/supervised_tracker.hpp"
#include "qgml/train/training_memory.hpp"
#include "qgml/train/training_settings.hpp"
#include "qgml/train/warm_basis_transfer.hpp"
#include "qgml/train/warm_start_cache.hpp"

namespace qgml {

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

  // Bytes of memory a Trainer with these settings allocates for D x N x N matrices and T_local points of
  // this process, of T_total over `ranks` processes (the memory model, training_memory.hpp).
  static std::size_t estimate_bytes(const TrainingSettings& settings, int D, int N, std::int64_t T_local,
                                    std::int64_t T_total = -1, int ranks = 1, bool interruptible = false) {
    return training_bytes<Real, ExecSpace>(settings, D, N, T_local, T_total, ranks, interruptible);
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
        features_d_(training_feature_count(config.dimension(), settings)),
        engine_(features_d_, config.matrix_size(),
                BatchDistribution<ExecSpace>::local_batch_capacity(batch_, shard_.size()),
                settings.warm_start_eigh ? LossKernel::separate : settings.kernel,
                is_supervised(settings.task) ? settings.supervised.outputs : 0),
        adam_(config.dimension(), config.matrix_size(), settings.adam),
        distribution_(count_, batch_, shard_, distributed_ ? comm->size() : 1),
        batch_points_(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::batch_points"), engine_.max_batch(),
                      training_point_columns(config.dimension(), settings)),
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
    if (distributed_) allreduce_ = GradientAllReduce<ExecSpace>(config.dimension(), config.matrix_size());
    QGML_REQUIRE(int(data.extent(1)) == training_point_columns(config.dimension(), settings),
                 is_supervised(settings.task)
                     ? "qgml::Trainer: the data have " + std::to_string(data.extent(1)) + " columns, expected " +
                           std::to_string(training_point_columns(config.dimension(), settings)) +
                           " (the D = " + std::to_string(features_d_) + " coordinates, then " +
                           std::to_string(target_columns(settings.supervised.loss, settings.supervised.outputs)) +
                           " target column(s))"
                     : "qgml::Trainer: the data have D = " + std::to_string(data.extent(1)) +
                           " coordinates but the configuration has D = " + std::to_string(config.dimension()));
    QGML_REQUIRE(settings.epochs >= 0, "qgml::Trainer: epochs must be >= 0");
    QGML_REQUIRE(settings.learning_rate > 0, "qgml::Trainer: the learning rate must be > 0");
    if (is_supervised(settings.task))
      supervised_ = SupervisedTracker<Real, ExecSpace>(config, settings, features_d_, shard_.size(), exec);
  }

 public:
  // Supervised training: points (T_v x (D + target columns), coordinates then targets, the same on every
  // rank) whose predictions with the operators at the end of each epoch give EpochRecord::validation.
  // Allocates the buffers of their prediction once; an empty View removes them.
  void set_validation(const Kokkos::View<Real**, Kokkos::LayoutRight, memory_space>& points) {
    QGML_REQUIRE(is_supervised(settings_.task),
                 "qgml::Trainer::set_validation: validation points are for supervised training");
    const int columns = training_point_columns(config_.dimension(), settings_);
    QGML_REQUIRE(points.extent(0) == 0 || int(points.extent(1)) == columns,
                 "qgml::Trainer::set_validation: the validation points have " + std::to_string(points.extent(1)) +
                     " columns, expected " + std::to_string(columns) + " (the coordinates, then the targets)");
    supervised_.set_validation(points, config_, engine_.max_batch());
  }

  // The epoch with the lowest mean validation loss (in the units trained on) so far, 0 before any
  // epoch with validation points, and that loss. Kept in checkpoints.
  int best_epoch() const { return supervised_.best_epoch(); }
  double best_validation_loss() const { return supervised_.best_validation_loss(); }
  // The configuration <- the operators after best_epoch() (the trained trajectory itself, the
  // optimizer state and the history stay as they are, so that a resume continues the run; call it
  // once training is over). Returns best_epoch(); 0: nothing to restore, the configuration unchanged.
  int restore_best() { return supervised_.restore_best(config_, exec_); }

  // Regression: the metrics of output c are of mean[c] + scale[c] * (prediction, target), the units of
  // the targets before a standardisation the caller applied (the loss stays in the units trained on).
  void set_target_units(const std::vector<double>& mean, const std::vector<double>& scale) {
    supervised_.set_target_units(mean, scale);
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
    if (stop_query_ && !snapshot_.allocated()) {
      snapshot_.allocate(config_.dimension(), config_.matrix_size());
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
  const std::vector<EpochRecord>& train(const EpochCallback& callback = {});

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
    HostMatrices basis = gather_warm_basis(warm_, exec_, config_.matrix_size(), shard_, count_, comm_);
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
      s.best_epoch = supervised_.best_epoch();
      s.best_validation = supervised_.best_validation_loss();
      if (s.best_epoch > 0) s.best_matrices = supervised_.best_host(exec_);
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
      if (warm_.enabled() && !s.warm_basis.values.empty())
        restore_warm_basis(warm_, s.warm_basis, exec_, config_.matrix_size(), shard_);
      epoch_ = s.epoch;
      history_ = s.history;
      stopped_early_ = s.stopped_early;
      stopped_max_epochs_ = s.max_epochs;
      checkpointed_epoch_ = s.epoch;
      supervised_.restore_best_state(s.best_epoch, s.best_validation, s.best_matrices, config_, exec_);
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
  double communication_seconds() const { return allreduce_.seconds(); }
  // Bytes one all-reduce moves per rank: the D N^2 complex gradient plus the loss sums, as doubles.
  std::size_t bytes_per_allreduce() const { return distributed_ ? allreduce_.bytes() : 0; }
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
                          distributed_ ? comm_->size() : 1, snapshot_.allocated());
  }

 private:
  using complex_type = complex_t<Real>;

  static int checked_count(std::int64_t total) {
    QGML_REQUIRE(total >= 1, "qgml::Trainer: the data set is empty");
    QGML_REQUIRE(total <= std::int64_t(std::numeric_limits<int>::max()),
                 "qgml::Trainer: " + std::to_string(total) + " points exceed the supported maximum of 2^31 - 1");
    return int(total);
  }
  // One epoch into r (appended to the history); false when the stop query interrupted it (interruptible
  // only), with the state of the last complete epoch restored and nothing recorded.
  bool run_epoch(EpochRecord& r, bool interruptible);

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
      supervised_.features().update_square_sum(exec_);
      const auto x = Kokkos::subview(pts, Kokkos::ALL, Kokkos::make_pair(0, features_d_));
      const auto y = Kokkos::subview(pts, Kokkos::ALL, Kokkos::make_pair(features_d_, int(pts.extent(1))));
      engine_.compute_supervised(exec_, supervised_.features(), supervised_.target_operators(), x, y, settings_.loss,
                                 settings_.supervised, weight, false, options, sweeps);
      supervised_.record(exec_, engine_.predictions(), y, count);
    } else {
      engine_.compute(exec_, config_, pts, settings_.loss, weight, false, options, sweeps);
    }
    if (!warm_.enabled()) return;
    warm_.store(exec_, engine_.eigenvectors(), count);
    if (warm_.ready())
      detail::count_sweeps(exec_, warm_.sweeps(), count, epoch_sums_, int(detail::sum_sweeps),
                           int(detail::sum_swept_points));
  }

  // Whether `flag` holds on any rank (so that every rank takes the same decision).
  bool on_any_rank(bool flag) {
    if (!distributed_) return flag;
    std::int64_t v = flag ? 1 : 0;
    comm_->allreduce_max(&v, 1);
    return v != 0;
  }

  bool converged() const {
    return early_stop_converged(settings_, history_) ||
           supervised_.patience_exhausted(epoch_, settings_.validation_patience);
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
  SupervisedTracker<Real, ExecSpace> supervised_;  // supervised training only
  BatchDistribution<ExecSpace> distribution_;
  WarmStartCache<Real, ExecSpace> warm_;
  batch_type batch_points_;
  Kokkos::View<double*, memory_space> epoch_sums_;
  typename Kokkos::View<double*, memory_space>::HostMirror epoch_sums_host_;
  Kokkos::View<int, memory_space> skip_, bad_gradient_;
  GradientAllReduce<ExecSpace> allreduce_;  // distributed only
  int replica_checks_ = 0;
  StopQuery stop_query_;
  EpochSnapshot<Real, ExecSpace> snapshot_;  // with a stop query only
  bool interrupted_ = false, stopped_early_ = false;
  int stopped_max_epochs_ = 0;
  int checkpointed_epoch_ = -1;  // the epoch of the last checkpoint written or read; -1: none
  std::vector<EpochRecord> history_;
  CheckpointFingerprint fingerprint_;
};

}  // namespace qgml

// The epoch loop, out of the class for its explicit instances.
#include "qgml/train/trainer_epoch.hpp"
