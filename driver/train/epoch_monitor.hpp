// The per-epoch monitor of a training run: the progress on the terminal and in the log, and with qgml's
// profiler monitor.json and the time per region.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "qgml/train/training_settings.hpp"

#include "common/json_file.hpp"
#include "run/profiler.hpp"
#include "train/train_log.hpp"

namespace qgml::app {

// Per-epoch progress (terminal and log) and, with qgml's profiler, monitor.json's epoch entries and
// the time per region.
class EpochMonitor {
 public:
  EpochMonitor(Log& log, int epochs, bool tty, bool monitored)
      : log_(log), epochs_(epochs), every_(std::max(1, std::min(epochs / 20, 25))), tty_(tty), monitored_(monitored) {}

  void begin(int start_epoch);

  void record(const EpochRecord& r);

  void end();

  double train_seconds() const { return train_seconds_; }

  // monitor.json, the profiler trace and the time per region (rank 0, with qgml's profiler).
  void write(const std::string& run_dir, const ProfilerOptions& popts, bool quiet);

 private:
  Log& log_;
  int epochs_, every_;
  bool tty_, monitored_;
  Json epochs_json_ = Json::array();
  std::map<std::string, double> region_totals_;
  double train_seconds_ = 0;
  Kokkos::Timer wall_;
};

}  // namespace qgml::app
