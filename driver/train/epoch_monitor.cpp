// The per-epoch monitor of a training run (epoch_monitor.hpp).
#include "train/epoch_monitor.hpp"

#include <cstdio>
#include <filesystem>

#include "common/format.hpp"
#include "train/train_progress.hpp"

namespace qgml::app {

namespace fs = std::filesystem;

void EpochMonitor::begin(int start_epoch) {
  if (monitored_) Profiler::begin_epoch(start_epoch);
}

void EpochMonitor::record(const EpochRecord& r) {
  train_seconds_ += r.seconds;
  if (monitored_) {
    const auto regions = Profiler::end_epoch();
    for (const auto& [name, s] : regions) region_totals_[name] += s;
    epochs_json_.push_back({{"epoch", r.epoch},
                            {"seconds", r.seconds},
                            {"points_per_second", r.points_per_second},
                            {"regions", regions},
                            {"peak_bytes", Profiler::peak_bytes()}});
    Profiler::begin_epoch(r.epoch);
  }
  const std::string line = progress_line(r, epochs_, wall_.seconds());
  if (tty_) {
    std::printf("\r%-110s", line.c_str());
    std::fflush(stdout);
  } else if (r.epoch % every_ == 0 || r.epoch == epochs_) {
    log_.line(line);
  }
}

void EpochMonitor::end() {
  if (tty_) std::printf("\n");
}

void EpochMonitor::write(const std::string& run_dir, const ProfilerOptions& popts, bool quiet) {
  write_json_file((fs::path(run_dir) / "monitor.json").string(), {{"epochs", epochs_json_},
                                                                  {"peak_bytes", Profiler::peak_bytes()},
                                                                  {"train_seconds", train_seconds_},
                                                                  {"region_seconds", region_totals_}});
  if (popts.trace) {
    const std::string dir = (fs::path(run_dir) / "profiler_traces").string();
    fs::create_directories(dir);
    Kokkos::Timer t;
    const long events = Profiler::write_trace((fs::path(dir) / "train.trace.json").string());
    log_.line(format("profiler: %ld events written to %s/train.trace.json in %.3f s (%ld dropped)", events, dir.c_str(),
                     t.seconds(), Profiler::dropped_events()));
  }
  if (!quiet && train_seconds_ > 0) {
    log_.line("time per region (all epochs of this session):");
    for (const auto& [name, s] : region_totals_)
      if (name != "qgml::Trainer::epoch")
        log_.line(format("  %-40s %9.3f s  %5.1f %%", name.c_str(), s, 100 * s / train_seconds_));
    log_.line(format("  peak memory %.1f MiB", Profiler::peak_bytes() / 1048576.0));
  }
}

}  // namespace qgml::app
