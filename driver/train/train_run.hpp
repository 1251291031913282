// `qgml train` as a function: the program's train command and the C, Fortran and Python interfaces
// (bindings/) run the same code, so one set of settings gives one loss history whichever calls it.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "qgml/train/training_settings.hpp"

#include "data/data_source.hpp"

namespace qgml::app {

struct TrainRequest {
  std::string config_path;                                     // a YAML file, or empty
  std::vector<std::pair<std::string, std::string>> overrides;  // after the file, in order
  std::string resume_dir;                                      // `--resume RUN_DIR` (then no config_path)
  std::vector<std::string> accepted_changes;                   // `--resume-with-changes` keys, or "all"
  bool quiet = false;                                          // nothing on the terminal ...
  bool print_result = false;                                   // ... but the dimension line (the program's --quiet)
  const PointsInMemory* points = nullptr;                      // with data.array; read during the call only
  std::function<bool()> stop_requested;                        // polled between batches (may be empty)
  bool handle_signals = false;  // the program: SIGINT/SIGTERM stop training, a second one exits at once
  std::function<void(const EpochRecord&)> on_epoch;  // after each epoch (may be empty)
};

struct TrainOutcome {
  int exit_code = 0;  // 0, or 130 when stopped by stop_requested (the run resumes from LATEST)
  std::string run_dir;
};

// Trains as `qgml train` does (run directory, checkpoints, history, analysis); throws qgml::Error on
// bad input before the run directory exists where it can. A collective under MPI.
TrainOutcome run_train(const TrainRequest& request);

}  // namespace qgml::app
