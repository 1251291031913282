// The memory check of a training run, before anything is allocated: the data, the configuration, the
// trainer's buffers and the dimension analysis after training.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

#include "qgml/common/memory_budget.hpp"
#include "qgml/common/types.hpp"
#include "qgml/parallel/communicator.hpp"
#include "qgml/train/trainer.hpp"

#include "analysis/analysis.hpp"
#include "common/format.hpp"
#include "settings/run_setup.hpp"
#include "train/train_spaces.hpp"

namespace qgml::app {

// Throws before anything is allocated when the run needs more than the memory budget of the execution
// space (common/memory_budget.hpp); `needed` counts the data on the device, the configuration and the
// trainer's buffers (Trainer::estimate_bytes).
void check_memory(double needed, const MemoryBudget& budget, const std::string& what);

// Throws when the dimension analysis after training (analysis.enabled) cannot run on this rank's `local`
// points of D = d coordinates at N = n beside the training's `training_bytes` (check_analysis_needs), so
// that the run is refused before its first epoch and not after its last.
template <class Real>
void check_analysis_needs(const AnalysisSection& analysis, const Communicator& comm, std::int64_t points,
                          std::int64_t local, int d, int n, double training_bytes, const MemoryBudget& budget) {
  AnalysisPreflight p;
  p.what = "the dimension analysis after training";
  p.refusal = "the analysis would fail after training, so the run is refused before it starts";
  p.otherwise = "set analysis.enabled false to train without the analysis, ";
  p.beside = "training";
  check_analysis_needs<Real, Exec>(analysis.geometry, analysis.chunk, local, comm.rank() == 0 ? points : 0, d, n,
                                   training_bytes, budget, p);
}

// Throws when the run does not fit in memory: `points` of D = d coordinates (this rank's `local`), the
// configuration and the trainer's buffers (Trainer::estimate_bytes, interruptible: Ctrl-C stops between
// batches); for a file, also the host copy its reader makes.
template <class Real, class DataSpace>
void check_run_memory(const Exec& exec, const RunSettings& s, const Communicator& comm, std::int64_t points,
                      std::int64_t local, int d, int n, bool from_file) {
  const TrainingSettings settings = training_settings(s, "");
  const double point_bytes = double(local) * d * sizeof(Real);
  const double data_bytes = (std::is_same_v<DataSpace, Exec::memory_space> ? point_bytes : 0.0) +
                            (from_file ? double(local) * d * sizeof(double) : 0.0);
  const double config_bytes = double(d + 1) * n * n * sizeof(complex_t<Real>);
  const double trainer_bytes =
      double(Trainer<Real, Exec, DataSpace>::estimate_bytes(settings, d, n, local, points, comm.size(), true));
  const MemoryBudget budget = memory_budget(exec);
  check_memory(data_bytes + config_bytes + trainer_bytes, budget,
               format("training N = %d, D = %d, batch %lld on %lld points", n, d,
                      (long long)effective_batch_size(settings, points), (long long)local));
  if (s.analysis.enabled && !is_supervised(s.task))
    check_analysis_needs<Real>(s.analysis, comm, points, local, d, n, data_bytes + config_bytes + trainer_bytes,
                               budget);
}

}  // namespace qgml::app
