// qgml train CONFIG.yaml [--section.key value ...] [--resume RUN_DIR] [--quiet]
#include <Kokkos_Core.hpp>

#include <atomic>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <unistd.h>

#include "qgml/common/error.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/train/trainer.hpp"

#include "analysis.hpp"
#include "commands.hpp"
#include "config.hpp"
#include "data_source.hpp"
#include "format.hpp"
#include "json_file.hpp"
#include "parallel.hpp"
#include "profiler.hpp"
#include "run_directory.hpp"
#include "run_setup.hpp"

namespace qgml::app {

namespace fs = std::filesystem;

namespace {

std::atomic<bool> stop_requested{false};

// Installs the profiler for a scope (also on the error paths).
struct ProfilerGuard {
  bool active;
  explicit ProfilerGuard(const ProfilerOptions& o) : active(Profiler::install(o)) {}
  ~ProfilerGuard() {
    if (active) Profiler::uninstall();
  }
  ProfilerGuard(const ProfilerGuard&) = delete;
  ProfilerGuard& operator=(const ProfilerGuard&) = delete;
};
extern "C" void on_signal(int) { stop_requested.store(true); }

// Lines to the terminal (unless quiet) and to the run's log.txt.
class Log {
 public:
  Log(bool quiet) : quiet_(quiet) {}
  void open(const std::string& path) { file_.open(path, std::ios::app); }
  void line(const std::string& s) {
    if (!quiet_) std::printf("%s\n", s.c_str());
    if (file_) file_ << s << "\n" << std::flush;
  }
  bool quiet() const { return quiet_; }

 private:
  bool quiet_;
  std::ofstream file_;
};

// Bytes the run needs on the execution space (data, configuration, trainer buffers), for the
// "too large for memory" check before anything is allocated.
double bytes_needed(long points, int d, int n, int batch, std::size_t real_size) {
  const double c = 2.0 * real_size;
  const double per_point = 2.0 * n * n * c + 2.0 * d * n * c + 2.0 * n * c + n * real_size + (d + 8) * real_size;
  return double(points) * d * real_size + double(batch) * per_point + 8.0 * d * n * n * c;
}

void check_memory(double needed, const std::string& what) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;
  const double available = double(pages) * double(page);
  if (needed > 0.9 * available)
    throw Error(
        format("%s needs about %.2f GiB of memory; this machine has %.2f GiB (reduce training.batch_size, "
               "model.N or the number of points)",
               what.c_str(), needed / (1 << 30), available / (1 << 30)));
}

std::string progress_line(const EpochRecord& r, int epochs, double elapsed) {
  const double eta = r.epoch > 0 ? elapsed / r.epoch * (epochs - r.epoch) : 0;
  return format("epoch %d/%d  loss %.6g  (d^2 %.4g, sigma^2 %.4g)  %.0f points/s  ETA %.0f s%s", r.epoch, epochs,
                r.total, r.reconstruction, r.fluctuation, r.points_per_second, eta,
                r.skipped_batches ? format("  [%d batches skipped]", r.skipped_batches).c_str() : "") +
         (r.eigh_sweeps > 0 ? format("  (%.2f Jacobi sweeps per point)", r.eigh_sweeps) : std::string());
}

using Exec = Kokkos::DefaultExecutionSpace;
// data.placement = host: pinned host memory on GPUs (each batch streamed by the gather kernel); on
// CPUs the execution space's own memory.
using HostDataSpace = host_readable_space_t<Exec>;

// This rank's points in DataSpace (generated or read on the host first when DataSpace is not the
// execution space's memory).
template <class Real, class DataSpace>
std::pair<RealMatrix<Real, DataSpace>, std::int64_t> placed_data(const Exec& exec, const Config& c,
                                                                 Communicator& comm) {
  if constexpr (std::is_same_v<DataSpace, Exec::memory_space>) {
    const auto shard = load_data_shard<Real>(exec, c, comm);
    return {shard.points, shard.total};
  } else {
    const auto shard = load_data_shard<Real>(Kokkos::DefaultHostExecutionSpace(), c, comm);
    RealMatrix<Real, DataSpace> points(Kokkos::ViewAllocateWithoutInitializing("qgml::app::points"),
                                       shard.points.extent(0), shard.points.extent(1));
    Kokkos::deep_copy(points, shard.points);
    return {points, shard.total};
  }
}

template <class Real, class DataSpace>
int train(const Config& c, const std::string& config_path, const std::string& resume_dir, bool quiet) {
  const Exec exec;
  // With MPI, every rank trains on its shard of the points; rank 0 alone prints and writes files.
  Communicator& comm = communicator();
  use_gpu_aware_mpi(c.boolean("mpi.gpu_aware"));
  const bool root = comm.rank() == 0;
  Log log(quiet || !root);
  // The monitor is installed first so that its memory high-water mark sees every allocation.
  ProfilerOptions popts;
  popts.trace = c.boolean("profiling.enabled");
  popts.kernels = c.boolean("profiling.kernels");
  popts.record_memory = c.boolean("profiling.record_memory");
  popts.max_events = c.integer("profiling.max_events");
  popts.wait = int(c.integer("profiling.wait"));
  popts.warmup = int(c.integer("profiling.warmup"));
  popts.active = int(c.integer("profiling.active"));
  popts.repeat = int(c.integer("profiling.repeat"));
  const ProfilerGuard profiler(popts);
  const bool monitored = profiler.active;
  // Everything that can fail on bad input happens before the run directory exists.
  const auto placed = placed_data<Real, DataSpace>(exec, c, comm);
  const auto data = placed.first;
  const std::int64_t total_points = placed.second;
  const long points = long(total_points);
  const long local_points = long(data.extent(0));
  const int d = int(data.extent(1));
  const int n = int(c.integer("model.N"));
  const int batch = c.integer("training.batch_size") <= 0
                        ? int(points)
                        : int(std::min<long>(points, c.integer("training.batch_size")));
  MatrixConfiguration<Real, Exec> config;
  run_collectively(comm, [&] {
    check_memory(bytes_needed(local_points, d, n, int(std::min<long>(batch, local_points)), sizeof(Real)),
                 format("training N = %d, D = %d, batch %d on %ld points", n, d, batch, local_points));
    config = initial_configuration<Real>(exec, c, d);
  });
  std::string run_dir = resume_dir;
  if (run_dir.empty()) {
    run_collectively(comm, [&] {
      if (!root) return;
      std::string name = c.text("output.name");
      if (name.empty()) name = config_path.empty() ? "qgml" : fs::path(config_path).stem().string();
      run_dir = create_run_directory(c.text("output.directory"), name);
      write_file_atomically((fs::path(run_dir) / "config.yaml").string(), c.to_yaml());
    });
    run_dir = comm.broadcast(run_dir, 0);
  }
  if (root) log.open((fs::path(run_dir) / "log.txt").string());
  TrainingSettings settings = training_settings(c, run_dir);
  std::optional<Trainer<Real, Exec, DataSpace>> trainer_storage;
  run_collectively(comm, [&] { trainer_storage.emplace(config, data, settings, exec, comm, total_points); });
  Trainer<Real, Exec, DataSpace>& trainer = *trainer_storage;
  if (!resume_dir.empty()) {
    trainer.load_checkpoint(settings.checkpoint_dir);
    log.line(format("resuming %s at epoch %d of %d", run_dir.c_str(), trainer.epoch(), settings.epochs));
  }
  log.line(format("qgml train: N = %d, D = %d, %ld points, batch %d, %d epochs, w = %g, %s, %s", n, d, points,
                  trainer.batch_size(), settings.epochs, settings.loss.w,
                  std::is_same_v<Real, float> ? "float" : "double", Exec::name()));
  log.line("run directory: " + run_dir);
  if (comm.size() > 1)
    log.line(format("data parallel: %d ranks, %ld to %ld points each, %zu bytes per gradient all-reduce (%s)",
                    comm.size(), points / comm.size(), (points + comm.size() - 1) / comm.size(),
                    trainer.bytes_per_allreduce(),
                    c.boolean("mpi.gpu_aware") ? "device buffers" : "through host memory"));
  if (!monitored) log.line("an external Kokkos tool is loaded: qgml's own profiler and monitor are off");

  stop_requested.store(false);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const bool tty = !quiet && root && ::isatty(::fileno(stdout));
  const int every = std::max(1, settings.epochs / 20);
  Json monitor_epochs = Json::array();
  std::map<std::string, double> region_totals;
  double train_seconds = 0;
  Kokkos::Timer wall;
  const int start_epoch = trainer.epoch();
  if (monitored) Profiler::begin_epoch(start_epoch);
  trainer.train([&](const EpochRecord& r) {
    train_seconds += r.seconds;
    if (monitored) {
      const auto regions = Profiler::end_epoch();
      for (const auto& [name, s] : regions) region_totals[name] += s;
      monitor_epochs.push_back({{"epoch", r.epoch},
                                {"seconds", r.seconds},
                                {"points_per_second", r.points_per_second},
                                {"regions", regions},
                                {"peak_bytes", Profiler::peak_bytes()}});
      Profiler::begin_epoch(r.epoch);
    }
    const std::string line = progress_line(r, settings.epochs, wall.seconds());
    if (tty) {
      std::printf("\r%-110s", line.c_str());
      std::fflush(stdout);
    } else if (r.epoch % every == 0 || r.epoch == settings.epochs) {
      log.line(line);
    }
    return !stop_requested.load();
  });
  if (tty) std::printf("\n");
  std::int64_t stop_flag = stop_requested.load() ? 1 : 0;
  comm.allreduce_max(&stop_flag, 1);  // every rank takes the same exit
  const bool interrupted = stop_flag != 0;
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  const auto& history = trainer.history();
  const HostMatrices final_matrices = to_host(config, exec);
  run_collectively(comm, [&] {
    if (!root) return;
    write_history_csv((fs::path(run_dir) / "history.csv").string(), history);
    write_history_json((fs::path(run_dir) / "history.json").string(), history);
    save_matrices((fs::path(run_dir) / "final_matrices.npy").string(), final_matrices,
                  std::is_same_v<Real, float> ? Precision::single_precision : Precision::double_precision);
  });
  if (comm.size() > 1)
    log.line(format("communication: %.3f s in gradient all-reduces (%.1f %% of training)",
                    trainer.communication_seconds(),
                    train_seconds > 0 ? 100 * trainer.communication_seconds() / train_seconds : 0.0));
  if (monitored && root) {
    write_json_file((fs::path(run_dir) / "monitor.json").string(), {{"epochs", monitor_epochs},
                                                                    {"peak_bytes", Profiler::peak_bytes()},
                                                                    {"train_seconds", train_seconds},
                                                                    {"region_seconds", region_totals}});
    if (popts.trace) {
      const std::string dir = (fs::path(run_dir) / "profiler_traces").string();
      fs::create_directories(dir);
      Kokkos::Timer t;
      const long events = Profiler::write_trace((fs::path(dir) / "train.trace.json").string());
      log.line(format("profiler: %ld events written to %s/train.trace.json in %.3f s (%ld dropped)", events,
                      dir.c_str(), t.seconds(), Profiler::dropped_events()));
    }
    if (!quiet && train_seconds > 0) {
      log.line("time per region (all epochs of this session):");
      for (const auto& [name, s] : region_totals)
        if (name != "qgml::Trainer::epoch")
          log.line(format("  %-40s %9.3f s  %5.1f %%", name.c_str(), s, 100 * s / train_seconds));
      log.line(format("  peak memory %.1f MiB", Profiler::peak_bytes() / 1048576.0));
    }
  }
  if (interrupted) {
    log.line(format("interrupted after epoch %d: checkpoint written; continue with qgml train --resume %s",
                    trainer.epoch(), run_dir.c_str()));
    return 130;
  }
  const EpochRecord last = history.empty() ? EpochRecord{} : history.back();
  log.line(format("final loss %.6g (reconstruction %.6g, fluctuation %.6g) after %d epochs, %.1f s", last.total,
                  last.reconstruction, last.fluctuation, trainer.epoch(), train_seconds));
  if (c.boolean("analysis.enabled")) {
    const DimensionSummary s = analyze<Real>(exec, config, data, c, run_dir, comm);
    log.line(format("intrinsic dimension: mode %d, median %g, mean %.3f (fraction at the mode %.4f; D = %d)", s.mode,
                    s.median, s.mean, s.fraction()[s.mode], d));
    log.line(format("estimated intrinsic dimension: %d", s.mode));
  }
  if (c.boolean("output.plots") && root) plot_run(run_dir, log.quiet());
  log.line("outputs: " + run_dir);
  return 0;
}

}  // namespace

int train_command(const std::vector<std::string>& args) {
  std::string config_path, resume;
  bool quiet = false;
  std::vector<std::pair<std::string, std::string>> overrides;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--quiet" || a == "-q") {
      quiet = true;
    } else if (a == "--resume") {
      if (i + 1 >= args.size()) throw Error("--resume needs a run directory");
      resume = args[++i];
    } else if (a.rfind("--", 0) == 0) {
      std::string key = a.substr(2), value;
      const auto eq = key.find('=');
      if (eq != std::string::npos) {
        value = key.substr(eq + 1);
        key = key.substr(0, eq);
      } else {
        if (i + 1 >= args.size()) throw Error("option --" + key + " needs a value");
        value = args[++i];
      }
      overrides.emplace_back(key, value);
    } else if (config_path.empty()) {
      config_path = a;
    } else {
      throw Error("unexpected argument '" + a + "' (one config file, then --section.key value overrides)");
    }
  }
  if (!resume.empty()) {
    if (!config_path.empty()) throw Error("--resume takes the run directory's own config; give no config file");
    config_path = (fs::path(resume) / "config.yaml").string();
    if (!fs::exists(config_path))
      throw Error("--resume " + resume + ": no config.yaml there (not a qgml run directory)");
  } else if (config_path.empty()) {
    throw Error("qgml train needs a config file (see examples/configs/) or --resume RUN_DIR");
  }
  const Config c = load_config(config_path, overrides);
  const std::string path = resume.empty() ? config_path : "";
  const bool on_host = c.text("data.placement") == "host" && !std::is_same_v<HostDataSpace, Exec::memory_space>;
  if (c.text("model.precision") == "float")
    return on_host ? train<float, HostDataSpace>(c, path, resume, quiet)
                   : train<float, Exec::memory_space>(c, path, resume, quiet);
  return on_host ? train<double, HostDataSpace>(c, path, resume, quiet)
                 : train<double, Exec::memory_space>(c, path, resume, quiet);
}

}  // namespace qgml::app
