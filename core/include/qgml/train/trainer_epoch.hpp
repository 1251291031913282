// Trainer::train and Trainer::run_epoch (docs/math.md 8.2): the epoch loop and one epoch, defined out of
// the class so that the library's explicit instances (below) are what programs link.
#pragma once

#include "qgml/common/explicit_instances.hpp"
#include "qgml/train/trainer.hpp"

namespace qgml {

template <class Real, class ExecSpace, class DataSpace>
const std::vector<EpochRecord>& Trainer<Real, ExecSpace, DataSpace>::train(const EpochCallback& callback) {
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

template <class Real, class ExecSpace, class DataSpace>
bool Trainer<Real, ExecSpace, DataSpace>::run_epoch(EpochRecord& r, bool interruptible) {
  ScopedRegion region("qgml::Trainer::epoch");
  Kokkos::Timer timer;
  const int epoch = epoch_;
  const double lr = settings_.schedule.at(settings_.learning_rate, epoch, settings_.epochs);
  detail::zero_epoch_sums(exec_, epoch_sums_);
  distribution_.plan_epoch(exec_, KeyedPermutation(std::uint64_t(count_), settings_.seed, std::uint64_t(epoch)));
  if (interruptible && stop_query_) snapshot_.save(exec_, config_, adam_);
  supervised_.begin_epoch();
  for (int b = 0; b < distribution_.batches(); ++b) {
    if (interruptible && stop_query_ && b > 0 && on_any_rank(stop_query_())) {
      snapshot_.restore(exec_, config_, adam_);
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
    if (distributed_) allreduce_.sum(exec_, *comm_, engine_.gradient(), engine_.sums());
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
    supervised_.epoch_metrics(r, exec_, distributed_ ? comm_ : nullptr);
  }
  r.seconds = timer.seconds();
  r.points_per_second = count_ / r.seconds;
  history_.push_back(r);
  ++epoch_;
  warm_.commit();  // every point has been solved once
  if (is_supervised(settings_.task) && supervised_.has_validation()) supervised_.track_best(epoch_, config_, exec_);
  return true;
}

// Explicit instances (common/explicit_instances.hpp): the points in the space's memory; defined in
// src/train/trainer_instances_{double,float}.cpp.
#define QGML_TRAINER_INSTANCE(E, Real, Space, H)                                                        \
  E template const std::vector<EpochRecord>& Trainer<Real, Space, typename Space::memory_space>::train( \
      const Trainer<Real, Space, typename Space::memory_space>::EpochCallback&);                        \
  E template bool Trainer<Real, Space, typename Space::memory_space>::run_epoch(EpochRecord&, bool);
QGML_FOR_EACH_INSTANCE(QGML_TRAINER_INSTANCE, extern)

}  // namespace qgml
