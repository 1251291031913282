// Mini-batch training of a matrix configuration (spec 1.5): per epoch a keyed shuffle of the points,
// contiguous batches (the last partial batch kept), the exact gradient of each batch's mean loss,
// and one Adam step per batch. The whole epoch stays on the device: the only device-to-host copy is
// the epoch's sums, once at its end; a batch whose loss or gradient is not finite is skipped on the
// device and never reaches the matrices.
//
// Data-parallel training: with a Communicator of P > 1 ranks, each rank holds the contiguous shard
// shard_range(T, P, rank) of the points and a full copy of the matrices. The batches are those of the
// one-process run (the same keyed shuffle of all T points); each rank computes the points of a batch
// that it holds, the partial gradient and loss sums are added over the ranks by one in-place
// all-reduce, and every rank takes the same Adam step. Histories therefore agree with the
// one-process run up to the order of the floating-point sums.
#pragma once

#include <Kokkos_Core.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/data/permutation.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/parallel/communicator.hpp"
#include "qgml/train/adam.hpp"
#include "qgml/train/checkpoint.hpp"
#include "qgml/train/loss_gradient.hpp"
#include "qgml/train/training_settings.hpp"

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
        batch_(settings.batch_size <= 0 || settings.batch_size > count_ ? count_ : settings.batch_size),
        engine_(config.dimension(), config.size(), engine_batch(batch_, shard_, distributed_),
                settings.fused_loss_gradient && !settings.warm_start_eigh),
        adam_(config.dimension(), config.size(), settings.adam),
        batch_points_(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::batch_points"),
                      engine_batch(batch_, shard_, distributed_), config.dimension()),
        epoch_sums_("qgml::Trainer::epoch_sums", int(epoch_sum_count)),
        epoch_sums_host_(Kokkos::create_mirror(epoch_sums_)),
        skip_("qgml::Trainer::skip"),
        bad_gradient_("qgml::Trainer::bad_gradient") {
    QGML_REQUIRE(count_ >= 1, "qgml::Trainer: the data set is empty");
    QGML_REQUIRE(std::int64_t(data.extent(0)) == shard_.size(),
                 "qgml::Trainer: rank " + std::to_string(comm ? comm->rank() : 0) + " holds " +
                     std::to_string(data.extent(0)) + " points, but its shard of T = " + std::to_string(count_) +
                     " points has " + std::to_string(shard_.size()));
    engine_.set_spectral_path(settings.ground_state_path ? LossGradient<Real, ExecSpace>::SpectralPath::automatic
                                                         : LossGradient<Real, ExecSpace>::SpectralPath::full_spectrum);
    if (settings.warm_start_eigh) {
      const int n = config.size();
      basis_ = MatrixStack<Real, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::basis"),
                                               std::max<std::int64_t>(1, shard_.size()), n, n);
      rows_ = IntVector<memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::rows"),
                                      engine_batch(batch_, shard_, distributed_));
      sweeps_ = IntVector<memory_space>("qgml::Trainer::sweeps", engine_batch(batch_, shard_, distributed_));
    }
    if (distributed_) {
      const int batches = (count_ + batch_ - 1) / batch_;
      order_ = Kokkos::View<int*, memory_space>(Kokkos::ViewAllocateWithoutInitializing("qgml::Trainer::order"),
                                                std::max<std::int64_t>(1, shard_.size()));
      batch_offsets_ = Kokkos::View<int*, memory_space>("qgml::Trainer::batch_offsets", batches + 1);
      batch_offsets_host_ = Kokkos::create_mirror(batch_offsets_);
      const int d = config.dimension(), n = config.size();
      reduce_buffer_ = Kokkos::View<double*, memory_space>("qgml::Trainer::reduce_buffer",
                                                           2 * std::size_t(d) * n * n + int(loss_sum_count));
      reduce_buffer_host_ = Kokkos::create_mirror(reduce_buffer_);
    }
    QGML_REQUIRE(int(data.extent(1)) == config.dimension(),
                 "qgml::Trainer: the data have D = " + std::to_string(data.extent(1)) +
                     " coordinates but the configuration has D = " + std::to_string(config.dimension()));
    QGML_REQUIRE(settings.epochs >= 0, "qgml::Trainer: epochs must be >= 0");
    QGML_REQUIRE(settings.learning_rate > 0, "qgml::Trainer: the learning rate must be > 0");
  }

 public:
  // Runs the remaining epochs (settings.epochs minus those already done, e.g. after a resume).
  const std::vector<EpochRecord>& train(const EpochCallback& callback = {}) {
    while (epoch_ < settings_.epochs && !on_any_rank(stop_.load())) {
      const EpochRecord r = train_epoch();
      const bool go_on = callback ? callback(r) : true;
      const bool halt = on_any_rank(!go_on || stop_.load());
      const bool early = converged();
      const bool last = epoch_ == settings_.epochs || halt || early;
      if (!settings_.checkpoint_dir.empty() &&
          (last || (settings_.checkpoint_every > 0 && epoch_ % settings_.checkpoint_every == 0)))
        save_checkpoint(settings_.checkpoint_dir);
      if (settings_.check_replicas) check_replicas();
      if (halt || early) break;
    }
    return history_;
  }

  // One epoch; returns (and appends to the history) its record.
  EpochRecord train_epoch() {
    ScopedRegion region("qgml::Trainer::epoch");
    Kokkos::Timer timer;
    const int epoch = epoch_;
    const double lr = settings_.schedule.at(settings_.learning_rate, epoch, settings_.epochs);
    const int d = config_.dimension();
    const auto sums = epoch_sums_;
    Kokkos::parallel_for(
        "qgml::Trainer::zero_epoch_sums", Kokkos::RangePolicy<ExecSpace>(exec_, 0, int(epoch_sum_count)),
        KOKKOS_LAMBDA(const int i) { sums(i) = 0; });
    const KeyedPermutation perm(std::uint64_t(count_), settings_.seed, std::uint64_t(epoch));
    if (distributed_) {
      train_distributed_batches(perm, lr);
    } else {
      for (int start = 0; start < count_; start += batch_) {
        const int n_batch = std::min(batch_, count_ - start);
        const auto pts = Kokkos::subview(batch_points_, Kokkos::make_pair(0, n_batch), Kokkos::ALL);
        {
          ScopedRegion gather("qgml::Trainer::gather_batch");
          const auto data = data_;
          const auto rows = rows_;
          const bool record = rows.extent(0) > 0;
          Kokkos::parallel_for(
              "qgml::Trainer::gather_batch", Kokkos::RangePolicy<ExecSpace>(exec_, 0, n_batch * d),
              KOKKOS_LAMBDA(const int ik) {
                const int i = ik / d, k = ik % d;
                const int row = int(perm(std::uint64_t(start + i)));
                pts(i, k) = data(row, k);
                if (record && k == 0) rows(i) = row;
              });
        }
        compute_batch(pts, n_batch);
        engine_.add_penalty(exec_, config_, settings_.loss);
        finish_batch(n_batch);
        ScopedRegion step("qgml::Trainer::optimizer_step");
        adam_.step(exec_, config_, engine_.gradient(), lr, skip_);
      }
    }
    {
      ScopedRegion copy("qgml::Trainer::epoch_sums_to_host");
      Kokkos::deep_copy(exec_, epoch_sums_host_, epoch_sums_);
      qgml::fence(exec_, "qgml::Trainer: epoch sums on the host");
    }
    const auto& h = epoch_sums_host_;
    EpochRecord r;
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
    r.seconds = timer.seconds();
    r.points_per_second = count_ / r.seconds;
    history_.push_back(r);
    ++epoch_;
    basis_ready_ = basis_.extent(0) > 0;  // every point has been solved once
    return r;
  }

  // Writes the configuration, optimizer state, epoch and history (see checkpoint.hpp).
  // Data-parallel: a collective; rank 0 writes, and a failure there is raised on every rank.
  void save_checkpoint(const std::string& dir) {
    ScopedRegion region("qgml::Trainer::checkpoint");
    if (comm_)
      run_collectively(*comm_, [&] {
        if (comm_->rank() == 0) write_checkpoint_files(dir);
      });
    else
      write_checkpoint_files(dir);
  }

  void write_checkpoint_files(const std::string& dir) {
    CheckpointState s;
    s.matrices = to_host(config_, exec_);
    s.precision = std::is_same_v<Real, float> ? Precision::single_precision : Precision::double_precision;
    s.adam_m = moments_to_host(adam_.first_moment());
    s.adam_v = moments_to_host(adam_.second_moment());
    auto step = Kokkos::create_mirror(adam_.step_count());
    Kokkos::deep_copy(exec_, step, adam_.step_count());
    qgml::fence(exec_, "qgml::Trainer::save_checkpoint");
    s.adam_step = step();
    s.epoch = epoch_;
    s.seed = settings_.seed;
    s.points = count_;
    s.history = history_;
    write_checkpoint(dir, s);
  }

  // Restores the configuration, optimizer state, epoch and history from a checkpoint written for the
  // same data size and shape; training then continues exactly where the checkpoint was taken.
  // Data-parallel: a collective (every rank reads it; a failure on any rank is raised on all), and the
  // checkpoint may come from a run on any number of ranks.
  void load_checkpoint(const std::string& dir) {
    if (comm_)
      run_collectively(*comm_, [&] { read_checkpoint_files(dir); });
    else
      read_checkpoint_files(dir);
  }

  void read_checkpoint_files(const std::string& dir) {
    const CheckpointState s = read_checkpoint(dir);
    QGML_REQUIRE(s.matrices.D == config_.dimension() && s.matrices.N == config_.size(),
                 "checkpoint '" + dir + "': D = " + std::to_string(s.matrices.D) +
                     ", N = " + std::to_string(s.matrices.N) + " do not match the configuration being trained");
    QGML_REQUIRE(s.points == count_, "checkpoint '" + dir + "' was written for T = " + std::to_string(s.points) +
                                         " points, the data have " + std::to_string(count_));
    QGML_REQUIRE(s.seed == settings_.seed, "checkpoint '" + dir + "' was written with seed " + std::to_string(s.seed) +
                                               ", training uses seed " + std::to_string(settings_.seed) +
                                               ": resume with the same seed");
    constexpr bool single = std::is_same_v<Real, float>;
    QGML_REQUIRE((s.precision == Precision::single_precision) == single,
                 "checkpoint '" + dir + "' was written in " +
                     std::string(s.precision == Precision::single_precision ? "float" : "double") +
                     " precision; resume in the same precision");
    auto a = Kokkos::create_mirror(config_.matrices());
    auto m = Kokkos::create_mirror(adam_.first_moment());
    auto v = Kokkos::create_mirror(adam_.second_moment());
    auto step = Kokkos::create_mirror(adam_.step_count());
    const int n = config_.size();
    for (int k = 0; k < config_.dimension(); ++k)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const auto z = s.matrices(k, i, j);
          a(k, i, j) = complex_t<Real>(Real(z.real()), Real(z.imag()));
          const std::size_t idx = (std::size_t(k) * n + i) * n + j;
          m(k, i, j) = Real(s.adam_m[idx]);
          v(k, i, j) = Real(s.adam_v[idx]);
        }
    step() = s.adam_step;
    Kokkos::deep_copy(exec_, config_.matrices(), a);
    Kokkos::deep_copy(exec_, adam_.first_moment(), m);
    Kokkos::deep_copy(exec_, adam_.second_moment(), v);
    Kokkos::deep_copy(exec_, adam_.step_count(), step);
    config_.update_square_sum(exec_);
    qgml::fence(exec_, "qgml::Trainer::load_checkpoint");
    epoch_ = s.epoch;
    history_ = s.history;
  }

  // Asks train() to stop after the current epoch (safe from a signal handler).
  void request_stop() { stop_.store(true); }
  bool stop_requested() const { return stop_.load(); }

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
  // Device memory held by the trainer's buffers (not the data or the configuration).
  std::size_t bytes() const {
    return engine_.bytes() + batch_points_.span() * sizeof(Real) + 3 * adam_.first_moment().span() * sizeof(Real);
  }

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
    epoch_sum_count
  };

  // Decides on the device whether the batch is usable and adds it to the epoch sums. Public only
  // because nvcc rejects device lambdas in private member functions.
  void finish_batch(int n_batch) {
    const auto g = engine_.gradient();
    const auto bad = bad_gradient_;
    const int n = config_.size();
    Kokkos::parallel_reduce(
        "qgml::Trainer::check_gradient", Kokkos::RangePolicy<ExecSpace>(exec_, 0, config_.dimension() * n * n),
        KOKKOS_LAMBDA(const int lij, int& nonfinite) {
          const auto z = g(lij / (n * n), (lij / n) % n, lij % n);
          if (!math::isfinite(z.real()) || !math::isfinite(z.imag())) ++nonfinite;
        },
        Kokkos::Sum<int, memory_space>(bad));
    const auto batch = engine_.sums();
    const auto sums = epoch_sums_;
    const auto skip = skip_;
    const double inv = 1.0 / n_batch;
    Kokkos::parallel_for(
        "qgml::Trainer::finish_batch", Kokkos::RangePolicy<ExecSpace>(exec_, 0, 1), KOKKOS_LAMBDA(const int) {
          const bool finite = bad() == 0 && batch(int(loss_nonfinite_points)) == 0 &&
                              batch(int(loss_eigh_failures)) == 0 && math::isfinite(batch(int(loss_penalty)));
          skip() = finite ? 0 : 1;
          sums(int(sum_degenerate)) += batch(int(loss_degenerate_points));
          sums(int(sum_eigh_failures)) += batch(int(loss_eigh_failures));
          if (finite) {
            sums(int(sum_total)) += batch(int(loss_total)) * inv + batch(int(loss_penalty));
            sums(int(sum_reconstruction)) += batch(int(loss_reconstruction)) * inv;
            sums(int(sum_fluctuation)) += batch(int(loss_fluctuation)) * inv;
            sums(int(sum_penalty)) += batch(int(loss_penalty));
            sums(int(sum_batches)) += 1;
          } else {
            sums(int(sum_skipped)) += 1;
          }
        });
  }

  // The epoch's batches when the points are spread over ranks. Public only for nvcc (device lambdas).
  void train_distributed_batches(const KeyedPermutation& perm, double lr) {
    const int d = config_.dimension();
    {
      // order(c) = local row of the c-th point, in shuffled order, that this rank holds;
      // batch_offsets(b) = how many of them come before batch b.
      ScopedRegion region("qgml::Trainer::distribute_epoch");
      const auto order = order_;
      const auto offsets = batch_offsets_;
      const std::int64_t begin = shard_.begin, end = shard_.end;
      const int count = count_, batch = batch_;
      Kokkos::parallel_scan(
          "qgml::Trainer::distribute_epoch", Kokkos::RangePolicy<ExecSpace>(exec_, 0, count),
          KOKKOS_LAMBDA(const int p, int& before, const bool final) {
            const std::int64_t g = std::int64_t(perm(std::uint64_t(p)));
            const int mine = (g >= begin && g < end) ? 1 : 0;
            if (final) {
              if (p % batch == 0) offsets(p / batch) = before;
              if (mine) order(before) = int(g - begin);
              if (p == count - 1) offsets((count + batch - 1) / batch) = before + mine;
            }
            before += mine;
          });
      Kokkos::deep_copy(exec_, batch_offsets_host_, batch_offsets_);
      qgml::fence(exec_, "qgml::Trainer: batch offsets on the host");
    }
    const auto data = data_;
    const auto order = order_;
    for (int b = 0, start = 0; start < count_; ++b, start += batch_) {
      const int n_batch = std::min(batch_, count_ - start);
      const int first = batch_offsets_host_(b), n_local = batch_offsets_host_(b + 1) - first;
      if (n_local > 0) {
        const auto pts = Kokkos::subview(batch_points_, Kokkos::make_pair(0, n_local), Kokkos::ALL);
        {
          ScopedRegion gather("qgml::Trainer::gather_batch");
          const auto rows = rows_;
          const bool record = rows.extent(0) > 0;
          Kokkos::parallel_for(
              "qgml::Trainer::gather_batch", Kokkos::RangePolicy<ExecSpace>(exec_, 0, n_local * d),
              KOKKOS_LAMBDA(const int ik) {
                const int i = ik / d, k = ik % d;
                pts(i, k) = data(order(first + i), k);
                if (record && k == 0) rows(i) = order(first + i);
              });
        }
        compute_batch(pts, n_batch);
      } else {
        engine_.zero(exec_);
      }
      reduce_across_ranks();
      engine_.add_penalty(exec_, config_, settings_.loss);
      finish_batch(n_batch);
      ScopedRegion step("qgml::Trainer::optimizer_step");
      adam_.step(exec_, config_, engine_.gradient(), lr, skip_);
    }
  }

  // Loss and gradient of the gathered batch (rows_ holds the points' local rows when warm starts are on):
  // with warm_start_eigh, each point's eigenvectors of the previous epoch start a Jacobi refinement and
  // the new ones are stored back. Public only for nvcc (device lambdas).
  template <class PointsView>
  void compute_batch(const PointsView& pts, int n_batch) {
    const int count = int(pts.extent(0));
    if (basis_.extent(0) == 0) {
      engine_.compute(exec_, config_, pts, settings_.loss, Real(1) / Real(n_batch), false);
      return;
    }
    const int n = config_.size();
    const auto basis = basis_;
    const auto rows = rows_;
    const auto v = engine_.eigenvectors();
    EighOptions options;
    options.warm_start = basis_ready_;
    if (basis_ready_)
      Kokkos::parallel_for(
          "qgml::Trainer::load_basis", Kokkos::RangePolicy<ExecSpace>(exec_, 0, count * n * n),
          KOKKOS_LAMBDA(const int q) {
            const int i = q / (n * n), a = (q / n) % n, b = q % n;
            v(i, a, b) = basis(rows(i), a, b);
          });
    engine_.compute(exec_, config_, pts, settings_.loss, Real(1) / Real(n_batch), false, options, sweeps_);
    Kokkos::parallel_for(
        "qgml::Trainer::store_basis", Kokkos::RangePolicy<ExecSpace>(exec_, 0, count * n * n),
        KOKKOS_LAMBDA(const int q) {
          const int i = q / (n * n), a = (q / n) % n, b = q % n;
          basis(rows(i), a, b) = v(i, a, b);
        });
    if (!basis_ready_) return;
    const auto sweeps = sweeps_;
    const auto sums = epoch_sums_;
    Kokkos::parallel_for(
        "qgml::Trainer::count_sweeps", Kokkos::RangePolicy<ExecSpace>(exec_, 0, 1), KOKKOS_LAMBDA(const int) {
          double total = 0;
          for (int i = 0; i < count; ++i) total += sweeps(i);
          sums(int(sum_sweeps)) += total;
          sums(int(sum_swept_points)) += count;
        });
  }

  // gradient and loss sums <- their sums over the ranks (one in-place all-reduce of doubles).
  void reduce_across_ranks() {
    ScopedRegion region("qgml::Trainer::allreduce");
    const auto g = engine_.gradient();
    const auto sums = engine_.sums();
    const auto buf = reduce_buffer_;
    const int n = config_.size(), dnn = config_.dimension() * n * n;
    Kokkos::parallel_for(
        "qgml::Trainer::pack_gradient", Kokkos::RangePolicy<ExecSpace>(exec_, 0, dnn + int(loss_sum_count)),
        KOKKOS_LAMBDA(const int q) {
          if (q < dnn) {
            const auto z = g(q / (n * n), (q / n) % n, q % n);
            buf(2 * q) = double(z.real());
            buf(2 * q + 1) = double(z.imag());
          } else {
            buf(2 * dnn + (q - dnn)) = sums(q - dnn);
          }
        });
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
    Kokkos::parallel_for(
        "qgml::Trainer::unpack_gradient", Kokkos::RangePolicy<ExecSpace>(exec_, 0, dnn + int(loss_sum_count)),
        KOKKOS_LAMBDA(const int q) {
          if (q < dnn)
            g(q / (n * n), (q / n) % n, q % n) = complex_t<Real>(Real(buf(2 * q)), Real(buf(2 * q + 1)));
          else
            sums(q - dnn) = buf(2 * dnn + (q - dnn));
        });
  }

  // Throws on every rank if the matrices differ between ranks (FNV-1a hash of their bytes compared
  // through a maximum and a minimum over the ranks).
  void check_replicas() {
    if (!comm_ || comm_->size() == 1) return;
    auto a = Kokkos::create_mirror(config_.matrices());
    Kokkos::deep_copy(exec_, a, config_.matrices());
    qgml::fence(exec_, "qgml::Trainer::check_replicas");
    std::uint64_t h = 1469598103934665603ULL;
    const auto* bytes = reinterpret_cast<const unsigned char*>(a.data());
    for (std::size_t i = 0; i < a.span() * sizeof(complex_t<Real>); ++i) h = (h ^ bytes[i]) * 1099511628211ULL;
    std::int64_t v[2] = {std::int64_t(h >> 1), std::int64_t((~h) >> 1)};
    comm_->allreduce_max(v, 2);
    QGML_REQUIRE(std::uint64_t(v[0]) == (h >> 1) && std::uint64_t(v[1]) == ((~h) >> 1),
                 "qgml::Trainer: the matrices differ between ranks after epoch " + std::to_string(epoch_) +
                     " (training.check_replicas)");
    ++replica_checks_;
  }
  int replica_checks() const { return replica_checks_; }

 private:
  static int checked_count(std::int64_t total) {
    QGML_REQUIRE(total >= 0 && total <= std::int64_t(std::numeric_limits<int>::max()),
                 "qgml::Trainer: " + std::to_string(total) + " points exceed the supported maximum of 2^31 - 1");
    return int(total);
  }
  // Points one compute() may see: a whole batch, or on one rank at most its shard.
  static int engine_batch(int batch, const ShardRange& shard, bool distributed) {
    const std::int64_t m = distributed ? std::min<std::int64_t>(batch, shard.size()) : batch;
    return int(std::max<std::int64_t>(1, m));
  }

  // Whether `flag` holds on any rank (so that every rank takes the same decision).
  bool on_any_rank(bool flag) {
    if (!distributed_) return flag;
    std::int64_t v = flag ? 1 : 0;
    comm_->allreduce_max(&v, 1);
    return v != 0;
  }

  bool converged() const {
    const double tol = settings_.early_stop_tolerance;
    if (tol <= 0 || history_.size() < 2) return false;
    const double a = history_[history_.size() - 2].total, b = history_.back().total;
    return std::abs(b - a) <= tol * std::abs(a);
  }

  template <class View>
  std::vector<double> moments_to_host(const View& m) const {
    auto h = Kokkos::create_mirror(m);
    Kokkos::deep_copy(exec_, h, m);
    qgml::fence(exec_, "qgml::Trainer::moments_to_host");
    return std::vector<double>(h.data(), h.data() + h.span());
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
  LossGradient<Real, ExecSpace> engine_;
  HermitianAdam<Real, ExecSpace> adam_;
  batch_type batch_points_;
  Kokkos::View<double*, memory_space> epoch_sums_;
  typename Kokkos::View<double*, memory_space>::HostMirror epoch_sums_host_;
  Kokkos::View<int, memory_space> skip_, bad_gradient_;
  Kokkos::View<int*, memory_space> order_, batch_offsets_;
  typename Kokkos::View<int*, memory_space>::HostMirror batch_offsets_host_;
  Kokkos::View<double*, memory_space> reduce_buffer_;
  typename Kokkos::View<double*, memory_space>::HostMirror reduce_buffer_host_;
  MatrixStack<Real, memory_space> basis_;  // warm_start_eigh: each local point's last eigenvectors
  IntVector<memory_space> rows_, sweeps_;
  bool basis_ready_ = false;
  double comm_seconds_ = 0;
  int replica_checks_ = 0;
  std::vector<EpochRecord> history_;
  std::atomic<bool> stop_{false};
};

}  // namespace qgml
