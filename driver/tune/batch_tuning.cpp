// tune_batches (batch_tuning.hpp): the trainer's memory model, the budget, the candidates and the trials.
#include "tune/batch_tuning.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
#include <set>
#include <string>
#include <vector>

#include "qgml/common/error.hpp"
#include "qgml/common/kokkos_compat.hpp"
#include "qgml/common/memory_budget.hpp"
#include "qgml/train/trainer.hpp"

#include "common/format.hpp"
#include "data/data_source.hpp"
#include "settings/run_setup.hpp"

namespace qgml::app {

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

struct Budget {
  double bytes = 0;
  std::string source;
};

// The execution space's memory budget (common/memory_budget.hpp).
Budget auto_budget(const Exec& exec) {
  const MemoryBudget b = memory_budget(exec);
  if (!b.known())
    throw Error("--memory-budget auto: cannot determine the available memory" +
                (b.source.empty() ? std::string() : " (" + b.source + ")") + " (give --memory-budget BYTES)");
  return {std::floor(b.bytes), format("auto: %.0f %% of %s %s", 100 * memory_budget_share, b.source.c_str(),
                                      human_bytes(b.available).c_str())};
}

template <class Real>
MemoryModel trainer_memory_model(const TrainingSettings& settings, int d, int n, long points) {
  const auto bytes = [&](long batch, long t) {
    TrainingSettings s = settings;
    s.batch_size = int(batch);
    return double(Trainer<Real, Exec>::estimate_bytes(s, d, n, t));
  };
  const long t = std::max(points, 4L);  // the per-point part does not depend on T
  const double per_point = (bytes(4, t) - bytes(2, t)) / 2;
  return points >= 2 ? MemoryModel{per_point, bytes(2, points) - 2 * per_point}
                     : MemoryModel{per_point, bytes(1, points) - per_point};
}

// A fresh copy of the initial configuration for one trial.
template <class Real>
MatrixConfiguration<Real, Exec> fresh_copy(const Exec& exec, const MatrixConfiguration<Real, Exec>& initial) {
  MatrixConfiguration<Real, Exec> c(initial.dimension(), initial.matrix_size(), exec);
  Kokkos::deep_copy(exec, c.matrices(), initial.matrices());
  c.update_square_sum(exec);
  return c;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

template <class Real>
void run_trial(const Exec& exec, const MatrixConfiguration<Real, Exec>& initial,
               const typename Trainer<Real, Exec>::points_type& data, TrainingSettings settings, int epochs, Trial& t) {
  try {
    auto config = fresh_copy(exec, initial);
    settings.batch_size = int(t.batch);
    settings.epochs = tune_warmup_epochs + epochs;
    Trainer<Real, Exec> trainer(config, data, settings, exec);
    t.bytes = double(trainer.bytes());
    for (int e = 0; e < tune_warmup_epochs; ++e) trainer.train_epoch();
    for (int e = 0; e < epochs; ++e) {
      const EpochRecord r = trainer.train_epoch();
      t.seconds.push_back(r.seconds);
      t.loss = r.total;
    }
    t.timed = true;
    t.median = median(t.seconds);
    t.points_per_second = double(data.extent(0)) / t.median;
  } catch (const std::exception& e) {
    t.error = e.what();
  }
}

template <class Real>
TuneResult tune(RunSettings s, const TuneRequest& request, const std::function<void(const TunePlan&)>& on_plan,
                const std::function<void(const Trial&)>& on_trial) {
  const Exec exec;
  TuneResult result;
  TunePlan& plan = result.plan;
  auto data = load_data<Real>(exec, s.data);
  const long points = long(data.extent(0));
  const int d = int(data.extent(1));
  const auto initial = initial_configuration<Real>(exec, s.model, resolve_model_shape(s, d), d);
  plan.n = initial.matrix_size();
  plan.d = d;
  plan.points = points;
  plan.data_bytes = double(data.span()) * sizeof(Real);
  for (const long b : request.batches)
    if (b > points)
      throw Error("--batches: " + std::to_string(b) + " is larger than the data set (" + std::to_string(points) +
                  " points)");
  TrainingSettings settings = training_settings(s, "");
  settings.checkpoint_dir.clear();  // tune writes no checkpoints
  settings.checkpoint_every = 0;
  settings.early_stop_tolerance = 0;

  plan.model = trainer_memory_model<Real>(settings, d, plan.n, points);
  const Budget budget = request.budget >= 0 ? Budget{request.budget, "--memory-budget"} : auto_budget(exec);
  plan.budget = budget.bytes;
  plan.budget_source = budget.source;
  plan.max_points = plan.model.max_points(budget.bytes);
  long largest = long(std::min<double>(double(points), plan.max_points));
  if (largest < 1)
    throw Error(
        format("memory budget %s (%.0f bytes, %s) does not fit even a batch of 1 point: the trainer's "
               "buffers need %.0f bytes + %.0f bytes per point",
               human_bytes(budget.bytes).c_str(), budget.bytes, budget.source.c_str(), plan.model.fixed,
               plan.model.per_point));
  // Verify the answer by allocating it; step down if the allocation fails.
  bool verified = false;
  for (int attempt = 0; attempt < 40 && !verified && largest >= 1; ++attempt) {
    try {
      auto config = fresh_copy(exec, initial);
      TrainingSettings t = settings;
      t.batch_size = int(largest);
      const Trainer<Real, Exec> trainer(config, data, t, exec);
      qgml::fence(exec, "qgml::tune: verify allocation");
      plan.verified_bytes = double(trainer.bytes());
      verified = true;
    } catch (const std::exception& e) {
      plan.verify_error = e.what();
      largest = long(0.9 * double(largest));
    }
  }
  if (!verified) throw Error("qgml tune: no batch could be allocated within the budget: " + plan.verify_error);
  plan.largest = largest;

  // Candidates: the given list, else powers of two from 32 below T, T, the settings' batch size and
  // the largest that fits, restricted to those that fit.
  plan.config_batch = long(effective_batch_size(settings, points));
  std::set<long> candidates(request.batches.begin(), request.batches.end());
  if (request.batches.empty()) {
    for (long b = 32; b < points; b *= 2) candidates.insert(b);
    candidates.insert(points);
    if (plan.config_batch <= points) candidates.insert(plan.config_batch);
    if (largest < points) candidates.insert(largest);
    for (auto it = candidates.begin(); it != candidates.end();)
      it = plan.model.bytes(*it) <= budget.bytes && *it <= largest ? std::next(it) : candidates.erase(it);
  }
  plan.candidates.assign(candidates.begin(), candidates.end());
  if (on_plan) on_plan(plan);

  for (const long b : plan.candidates) {
    Trial t;
    t.batch = b;
    t.from_config = request.batches.empty() && b == plan.config_batch;
    t.batches_per_epoch = int((points + b - 1) / b);
    t.bytes = plan.model.bytes(b);
    t.fits = t.bytes <= budget.bytes && b <= largest;
    if (t.fits) run_trial<Real>(exec, initial, data, settings, request.epochs_per_trial, t);
    if (on_trial) on_trial(t);
    result.trials.push_back(t);
  }
  return result;
}

}  // namespace

double MemoryModel::max_points(double budget) const {
  return budget < bytes(1) ? 0.0 : std::floor((budget - fixed) / per_point);
}

const Trial* TuneResult::fastest() const {
  const Trial* best = nullptr;
  for (const Trial& t : trials)
    if (t.timed && (!best || t.median < best->median)) best = &t;
  return best;
}

TuneResult tune_batches(const RunSettings& s, const TuneRequest& request,
                        const std::function<void(const TunePlan&)>& on_plan,
                        const std::function<void(const Trial&)>& on_trial) {
  return s.model.single_precision ? tune<float>(s, request, on_plan, on_trial)
                                  : tune<double>(s, request, on_plan, on_trial);
}

}  // namespace qgml::app
