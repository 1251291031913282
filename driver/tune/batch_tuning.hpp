// qgml tune as a function (tune_batches): batch-size tuning on the data set and model of a run's
// settings. For each candidate batch size a Trainer on a fresh copy of the initial configuration runs
// tune_warmup_epochs epochs and the timed epochs; the result holds per candidate the epoch times, their
// median, points/s and the trainer's buffer bytes, and the largest batch whose buffers fit in the memory
// budget. Speed only: how well a batch size trains is for qgml train to show.
#pragma once

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "settings/run_settings.hpp"

namespace qgml::app {

constexpr int tune_warmup_epochs = 1;

// What the tuning times: the batch sizes (sorted, unique; empty: the default candidates), the timed
// epochs per candidate and the memory budget in bytes (< 0: the execution space's, memory_budget.hpp).
struct TuneRequest {
  std::vector<long> batches;
  int epochs_per_trial = 3;
  double budget = -1;
};

// Trainer::estimate_bytes as fixed + per_point * batch: the batch buffers grow linearly with the
// batch, the gradient, Adam moments, penalty scratch and per-point-of-the-data buffers do not (exact
// for even batches; Kokkos rounds every buffer up to 8 bytes, which odd batches of ints or floats fill
// with up to 4 bytes more).
struct MemoryModel {
  double per_point = 0, fixed = 0;
  double bytes(long batch) const { return fixed + per_point * double(batch); }
  // The largest batch whose buffers fit `budget` (0 if not even one point fits).
  double max_points(double budget) const;
};

// What is known before the first trial.
struct TunePlan {
  int n = 0, d = 0;
  long points = 0;
  double data_bytes = 0;  // the data set on the device (not counted in the trainer's buffers)
  MemoryModel model;
  double budget = 0;  // bytes
  std::string budget_source;
  double max_points = 0;  // in the budget, by the model
  long largest = 0;       // verified by allocating a batch of it
  double verified_bytes = 0;
  std::string verify_error;  // of the larger allocations that failed
  long config_batch = 0;     // training.batch_size of the settings, as the trainer takes it
  std::vector<long> candidates;
};

struct Trial {
  long batch = 0;
  bool from_config = false;  // training.batch_size of the settings, among the default candidates
  bool fits = false;
  bool timed = false;
  double bytes = 0;  // Trainer::bytes() (measured when timed, else the model's)
  int batches_per_epoch = 0;
  std::vector<double> seconds;
  double median = std::numeric_limits<double>::quiet_NaN();
  double points_per_second = std::numeric_limits<double>::quiet_NaN();
  double loss = std::numeric_limits<double>::quiet_NaN();  // of the last timed epoch
  std::string error;
};

struct TuneResult {
  TunePlan plan;
  std::vector<Trial> trials;
  const Trial* fastest() const;  // the timed trial of the lowest median; nullptr: none timed
};

// Everything that can fail on bad input (the data, the model, a batch larger than the data set, a
// budget that fits no batch) throws before the first trial; on_plan is called once the plan is known,
// on_trial after each candidate (run or not), so that a front end prints as the tuning goes.
TuneResult tune_batches(const RunSettings& s, const TuneRequest& request,
                        const std::function<void(const TunePlan&)>& on_plan,
                        const std::function<void(const Trial&)>& on_trial);

}  // namespace qgml::app
