// qgml train CONFIG.yaml [--section.key value ...] [--resume RUN_DIR] [--quiet]
#include <Kokkos_Core.hpp>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <unistd.h>

#include "qgml/common/error.hpp"
#include "qgml/common/file_error.hpp"
#include "qgml/common/memory_budget.hpp"
#include "qgml/io/atomic_file.hpp"
#include "qgml/io/configuration_io.hpp"
#include "qgml/model/initializers.hpp"
#include "qgml/plan/kernel_plan.hpp"
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
#include "run_fingerprint.hpp"
#include "run_setup.hpp"
#include "supervised_data.hpp"
#include "train_run.hpp"

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
// The first SIGINT or SIGTERM sets stop_requested: training stops after the current batch, keeping the
// last complete epoch (checkpointed). A second one exits at once with 130: the checkpoint LATEST names
// is complete at every instant (checkpoint.hpp), so it stays in force.
extern "C" void on_signal(int) {
  if (stop_requested.exchange(true)) {
    static const char message[] =
        "\nqgml: second interrupt: exiting at once; the last complete checkpoint stays LATEST\n";
    const ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
    (void)ignored;
    ::_exit(130);
  }
}

// SIGINT and SIGTERM go to on_signal for a scope.
struct StopOnSignal {
  StopOnSignal() {
    stop_requested.store(false);
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
  }
  ~StopOnSignal() {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
};

// Lines to the terminal (unless quiet) and to the run's log.txt.
class Log {
 public:
  Log(bool quiet) : quiet_(quiet) {}
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;
  ~Log() {
    if (file_) std::fclose(file_);
  }
  // Appends to `path`; O_NOFOLLOW: a link planted at log.txt would have the log appended to its target.
  void open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ELOOP)
      throw FileError("log file '" + path + "' is a symbolic link; qgml never writes through links (remove it)");
    if (fd < 0) throw FileError("log file '" + path + "': cannot open: " + std::strerror(errno));
    file_ = ::fdopen(fd, "a");
    if (!file_) ::close(fd);
  }
  void line(const std::string& s) {
    if (!quiet_) std::printf("%s\n", s.c_str());
    file_line(s);
  }
  // To log.txt only (the terminal gets it from the caller, e.g. a fatal error from main).
  void file_line(const std::string& s) {
    if (file_) {
      std::fprintf(file_, "%s\n", s.c_str());
      std::fflush(file_);
    }
  }
  bool quiet() const { return quiet_; }

 private:
  bool quiet_;
  std::FILE* file_ = nullptr;
};

ProfilerOptions profiler_options(const Config& c) {
  ProfilerOptions popts;
  popts.trace = c.boolean("profiling.enabled");
  popts.kernels = c.boolean("profiling.kernels");
  popts.record_memory = c.boolean("profiling.record_memory");
  popts.max_events = c.integer("profiling.max_events");
  popts.wait = int(c.integer("profiling.wait"));
  popts.warmup = int(c.integer("profiling.warmup"));
  popts.active = int(c.integer("profiling.active"));
  popts.repeat = int(c.integer("profiling.repeat"));
  return popts;
}

// Throws before anything is allocated when the run needs more than the memory budget of the execution
// space (common/memory_budget.hpp); `needed` counts the data on the device, the configuration and the
// trainer's buffers (Trainer::estimate_bytes).
void check_memory(double needed, const MemoryBudget& budget, const std::string& what) {
  if (!budget.known() || needed <= budget.bytes) return;
  throw Error(
      format("%s needs about %.2f GiB of memory; this machine has %.2f GiB available (%s; %.0f bytes needed, %.0f "
             "bytes available), of which qgml uses at most %.0f %% (reduce training.batch_size, model.N or the number "
             "of points)",
             what.c_str(), needed / (1 << 30), budget.available / (1 << 30), budget.source.c_str(), needed,
             budget.available, 100 * memory_budget_share));
}

// The metrics of a supervised epoch for the progress line: RMSE and R^2, or accuracy and AUC.
std::string metrics_text(const SupervisedMetrics& m) {
  if (!std::isnan(m.accuracy)) return format("accuracy %.4f, AUC %.4f", m.accuracy, m.auc);
  return format("RMSE %.5g, R^2 %.4f", m.rmse, m.r2);
}

// The metrics per output (R^2) or per class (recall) of several target operators, "" for one.
std::string per_output_text(const SupervisedMetrics& m, const SupervisedTransform& tr) {
  if (m.per_output.empty()) return "";
  std::string out = tr.task == Task::classification ? "recall per class" : "R^2 per output";
  for (std::size_t c = 0; c < m.per_output.size(); ++c) {
    const std::string name =
        tr.task == Task::classification && c < tr.classes.size() ? format("%.17g", tr.classes[c]) : std::to_string(c);
    out += format("%s %s %.4f", c ? "," : "", name.c_str(), m.per_output[c]);
  }
  return out;
}

std::string progress_line(const EpochRecord& r, int epochs, double elapsed) {
  const double eta = r.epoch > 0 ? elapsed / r.epoch * (epochs - r.epoch) : 0;
  if (r.has_targets)
    return format("epoch %d/%d  loss %.8g  train %s%s  %.0f points/s  ETA %.0f s%s", r.epoch, epochs, r.total,
                  metrics_text(r.train).c_str(),
                  std::isnan(r.validation.mae) && std::isnan(r.validation.accuracy)
                      ? ""
                      : ("  validation " + metrics_text(r.validation)).c_str(),
                  r.points_per_second, eta,
                  r.skipped_batches ? format("  [%d batches skipped]", r.skipped_batches).c_str() : "");
  return format("epoch %d/%d  loss %.10g  (d^2 %.10g, sigma^2 %.10g)  %.0f points/s  ETA %.0f s%s", r.epoch, epochs,
                r.total, r.reconstruction, r.fluctuation, r.points_per_second, eta,
                r.skipped_batches ? format("  [%d batches skipped]", r.skipped_batches).c_str() : "") +
         (r.eigh_sweeps > 0 ? format("  (%.2f Jacobi sweeps per point)", r.eigh_sweeps) : std::string());
}

using Exec = Kokkos::DefaultExecutionSpace;
// data.placement = host: pinned host memory on GPUs (each batch streamed by the gather kernel); on
// CPUs the execution space's own memory.
using HostDataSpace = host_readable_space_t<Exec>;

// This rank's points in DataSpace (generated or read on the host first when DataSpace is not the
// execution space's memory), and what data.standardize did.
template <class Real, class DataSpace>
struct PlacedData {
  RealMatrix<Real, DataSpace> points;
  std::int64_t total = 0;
  bool automatic = false, standardized = false;
  std::string reason, header_note;
  Standardization standardization;
};

template <class Real, class DataSpace>
PlacedData<Real, DataSpace> placed_data(const Exec& exec, const Config& c, Communicator& comm,
                                        const PointsInMemory* memory) {
  PlacedData<Real, DataSpace> placed;
  auto take = [&](const auto& shard) {
    placed.total = shard.total;
    placed.automatic = shard.automatic;
    placed.standardized = shard.standardized;
    placed.reason = shard.reason;
    placed.header_note = shard.header_note;
    placed.standardization = shard.standardization;
  };
  if constexpr (std::is_same_v<DataSpace, Exec::memory_space>) {
    const auto shard = load_data_shard<Real>(exec, c, comm, memory);
    take(shard);
    placed.points = shard.points;
  } else {
    const auto shard = load_data_shard<Real>(Kokkos::DefaultHostExecutionSpace(), c, comm, memory);
    take(shard);
    placed.points = RealMatrix<Real, DataSpace>(Kokkos::ViewAllocateWithoutInitializing("qgml::app::points"),
                                                shard.points.extent(0), shard.points.extent(1));
    Kokkos::deep_copy(placed.points, shard.points);
  }
  return placed;
}

// What the run trains: this rank's points, the initial configuration and where its N came from.
template <class Real, class DataSpace>
struct RunInputs {
  RealMatrix<Real, DataSpace> data;
  std::int64_t total_points = 0;
  int d = 0, n = 0;
  std::string n_source;  // " (from model.load FILE)" or ""
  MatrixConfiguration<Real, Exec> config;
  Standardization standardization;     // what data.standardize applied (empty mean: nothing)
  std::vector<std::string> automatic;  // the automatic choices, one line each, for the log
  // Supervised tasks: the data have D + 1 columns (the target last), the configuration D + 1 operators.
  bool supervised = false;
  SupervisedTransform transform;
  RealMatrix<Real, Exec::memory_space> validation;  // T_v x (D + 1), on every rank
  std::string supervised_source;
};

// Throws when the dimension analysis after training (analysis.enabled) cannot run on this rank's `local`
// points of D = d coordinates at N = n beside the training's `training_bytes` (check_analysis_needs), so
// that the run is refused before its first epoch and not after its last (issue 50).
template <class Real>
void check_analysis_needs(const Config& c, const Communicator& comm, std::int64_t points, std::int64_t local, int d,
                          int n, double training_bytes, const MemoryBudget& budget) {
  AnalysisPreflight p;
  p.what = "the dimension analysis after training";
  p.refusal = "the analysis would fail after training, so the run is refused before it starts";
  p.otherwise = "set analysis.enabled false to train without the analysis, ";
  p.beside = "training";
  check_analysis_needs<Real, Exec>(geometry_settings(c), int(c.integer("analysis.chunk")), local,
                                   comm.rank() == 0 ? points : 0, d, n, training_bytes, budget, p);
}

// Throws when the run does not fit in memory: `points` of D = d coordinates (this rank's `local`), the
// configuration and the trainer's buffers (Trainer::estimate_bytes, interruptible: Ctrl-C stops between
// batches); for a file, also the host copy its reader makes.
template <class Real, class DataSpace>
void check_run_memory(const Exec& exec, const Config& c, const Communicator& comm, std::int64_t points,
                      std::int64_t local, int d, int n, bool from_file) {
  const TrainingSettings settings = training_settings(c, "");
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
  if (c.boolean("analysis.enabled") && !is_supervised(parse_task(c.text("task"))))
    check_analysis_needs<Real>(c, comm, points, local, d, n, data_bytes + config_bytes + trainer_bytes, budget);
}

// A collective. Everything that can fail on bad input, before the run directory exists: the model's
// shape (model.load sets model.N of c), the memory check (before the data are read or generated, with
// the N that is trained), the data, the initial configuration.
// prepare_inputs for a supervised task (supervised_data.hpp): every rank reads all points, keeps its
// shard of the training points.
// The `automatic:` lines of the kernels that run at N (plan/kernel_plan.hpp); `analysis`: the run computes
// the metric.
std::vector<std::string> kernel_notes(const Config& c, int n, bool analysis) {
  const TrainingSettings ts = training_settings(c, "");
  KernelRequest r;
  r.loss = ts.kernel;
  r.warm_start = ts.warm_start_eigh;
  r.ground_state_path = ts.ground_state_path;
  r.mixed_precision = ts.mixed_precision_reduction;
  r.wide_packs = ts.wide_packs;
  r.geometry = parse_geometry_kernel(c.text("analysis.kernel"));
  r.analysis = analysis;
  const Precision precision =
      c.text("model.precision") == "double" ? Precision::double_precision : Precision::single_precision;
  return plan_kernels(backend_of<Exec>, precision, n, r).describe();
}

template <class Real, class DataSpace>
RunInputs<Real, DataSpace> prepare_supervised_inputs(const Exec& exec, Config& c, Communicator& comm,
                                                     const PointsInMemory* memory) {
  RunInputs<Real, DataSpace> in;
  in.supervised = true;
  run_collectively(comm, [&] {
    SupervisedData data = load_supervised_data(c, memory);
    if (data.train.rows < comm.size())
      throw Error(format("%d training points are too few for %d ranks (every rank needs at least one point)",
                         data.train.rows, comm.size()));
    const bool automatic_n = c.is_auto("model.N") && c.text("model.load").empty();
    const int operators = data.d + data.transform.outputs();
    const ModelShape shape = resolve_model_shape(c, c.text("model.load").empty() ? data.d : operators);
    in.d = data.d;
    in.n = shape.n;
    in.total_points = data.train.rows;
    const ShardRange r = shard_range(data.train.rows, comm.size(), comm.rank());
    check_run_memory<Real, DataSpace>(exec, c, comm, data.train.rows, r.size(), operators, shape.n, false);
    HostData mine = detail::select_rows(data.train, [&] {
      std::vector<int> rows;
      for (std::int64_t t = r.begin; t < r.end; ++t) rows.push_back(int(t));
      return rows;
    }());
    const auto device = to_device_points<Real>(exec, mine);
    if constexpr (std::is_same_v<DataSpace, Exec::memory_space>) {
      in.data = device;
    } else {
      in.data = RealMatrix<Real, DataSpace>(Kokkos::ViewAllocateWithoutInitializing("qgml::app::points"),
                                            device.extent(0), device.extent(1));
      Kokkos::deep_copy(in.data, device);
    }
    if (data.validation.rows > 0) in.validation = to_device_points<Real>(exec, data.validation);
    if (c.is_auto("data.standardize"))
      c.set("data.standardize", "true", "automatic: supervised tasks z-score each feature");
    std::string patience_note;
    if (c.is_auto("training.patience")) {
      const bool validation = data.validation.rows > 0;
      const std::string why = validation ? "stop 20 epochs after the lowest mean validation loss and keep that "
                                           "epoch's operators"
                                         : "no validation points";
      c.set("training.patience", validation ? "20" : "0", "automatic: " + why);
      patience_note = "automatic: training.patience = " + std::string(validation ? "20" : "0") + " (" + why + ")";
    }
    in.automatic = data.automatic;
    if (!patience_note.empty()) in.automatic.push_back(patience_note);
    if (automatic_n)
      in.automatic.push_back(format("automatic: model.N = %d (%s)", shape.n, default_matrix_size_rule(data.d).c_str()));
    for (std::string& note : kernel_notes(c, shape.n, false)) in.automatic.push_back(std::move(note));
    if (!shape.load.empty()) in.n_source = " (from model.load " + shape.load + ")";
    in.config = initial_configuration<Real>(exec, c, shape, operators);
    in.transform = data.transform;
    in.supervised_source = data.source;
  });
  return in;
}

template <class Real, class DataSpace>
RunInputs<Real, DataSpace> prepare_inputs(const Exec& exec, Config& c, Communicator& comm,
                                          const PointsInMemory* memory) {
  if (is_supervised(parse_task(c.text("task"))))
    return prepare_supervised_inputs<Real, DataSpace>(exec, c, comm, memory);
  RunInputs<Real, DataSpace> in;
  const bool automatic_n = c.is_auto("model.N") && c.text("model.load").empty();
  const bool from_file = !c.text("data.file").empty();
  std::optional<ModelShape> shape;
  const std::optional<PlannedData> planned = planned_data(c, memory);
  if (planned) {
    run_collectively(comm, [&] {
      if (planned->points < comm.size()) return;  // the data reader's error
      shape = resolve_model_shape(c, planned->d);
      check_run_memory<Real, DataSpace>(exec, c, comm, planned->points,
                                        shard_range(planned->points, comm.size(), comm.rank()).size(), planned->d,
                                        shape->n, from_file);
    });
  }
  const auto placed = placed_data<Real, DataSpace>(exec, c, comm, memory);
  in.data = placed.points;
  in.total_points = placed.total;
  in.d = int(in.data.extent(1));
  in.standardization = placed.standardization;
  if (!placed.header_note.empty()) in.automatic.push_back(placed.header_note);
  if (placed.automatic) {
    c.set("data.standardize", placed.standardized ? "true" : "false", "automatic: " + placed.reason);
    in.automatic.push_back(format(
        "automatic: data.standardize = %s (%s; %s)", placed.standardized ? "true" : "false", placed.reason.c_str(),
        placed.standardized ? "not centred at unit spread" : "already centred at unit spread"));
  }
  run_collectively(comm, [&] {
    // Where the data were not known in advance (or a CSV held fewer points than lines), the shape and
    // the memory check with the data read.
    const bool checked = shape && planned->d == in.d && planned->points >= in.total_points;
    if (!shape || shape->n == 0 || planned->d != in.d) shape = resolve_model_shape(c, in.d);
    if (!checked)
      check_run_memory<Real, DataSpace>(exec, c, comm, in.total_points, std::int64_t(in.data.extent(0)), in.d, shape->n,
                                        false);
    if (automatic_n)
      in.automatic.push_back(format("automatic: model.N = %d (%s)", shape->n, default_matrix_size_rule(in.d).c_str()));
    if (c.is_auto("analysis.spread_neighbours") && c.boolean("analysis.enabled") &&
        c.boolean("analysis.spread_check")) {
      const int reference = TangentSpreadSettings{}.max_reference;
      const int k = resolve_spread_neighbours(0, in.total_points, reference);
      const std::int64_t stride = tangent_spread_stride(in.total_points, reference);
      const std::string why = format(
          "2 %% of the %lld points%s, within %d .. %d", (long long)((in.total_points + stride - 1) / stride),
          stride > 1 ? format(" the neighbours are searched among (every %lld-th)", (long long)stride).c_str() : "",
          spread_neighbours_min, spread_neighbours_max);
      c.set("analysis.spread_neighbours", std::to_string(k), "automatic: " + why);
      in.automatic.push_back(format("automatic: analysis.spread_neighbours = %d (%s)", k, why.c_str()));
    }
    in.n = shape->n;
    for (std::string& note : kernel_notes(c, in.n, true)) in.automatic.push_back(std::move(note));
    if (!shape->load.empty()) in.n_source = " (from model.load " + shape->load + ")";
    in.config = initial_configuration<Real>(exec, c, *shape, in.d);
  });
  return in;
}

// A collective: the run directory (a new one under output.directory with the resolved config.yaml,
// or resume_dir), the same on every rank.
std::string open_run_directory(const Config& c, const std::string& config_path, const std::string& resume_dir,
                               Communicator& comm) {
  if (!resume_dir.empty()) return resume_dir;
  std::string run_dir;
  run_collectively(comm, [&] {
    if (comm.rank() != 0) return;
    std::string name = c.text("output.name");
    if (name.empty()) {
      const std::string file = c.text("data.file");
      name = !config_path.empty()            ? fs::path(config_path).stem().string()
             : !file.empty()                 ? fs::path(file).stem().string()
             : !c.text("data.array").empty() ? std::string("array")
                                             : c.text("data.generator");
      // A file's name may hold control characters (a newline, a terminal escape): not in the run's name.
      for (char& ch : name)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '_';
    }
    run_dir = create_run_directory(c.text("output.directory"), name);
    write_file_atomically((fs::path(run_dir) / "config.yaml").string(), config_yaml(c));
  });
  return comm.broadcast(run_dir, 0);
}

// Per-epoch progress (terminal and log) and, with qgml's profiler, monitor.json's epoch entries and
// the time per region.
class EpochMonitor {
 public:
  EpochMonitor(Log& log, int epochs, bool tty, bool monitored)
      : log_(log), epochs_(epochs), every_(std::max(1, std::min(epochs / 20, 25))), tty_(tty), monitored_(monitored) {}

  void begin(int start_epoch) {
    if (monitored_) Profiler::begin_epoch(start_epoch);
  }

  void record(const EpochRecord& r) {
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

  void end() {
    if (tty_) std::printf("\n");
  }

  double train_seconds() const { return train_seconds_; }

  // monitor.json, the profiler trace and the time per region (rank 0, with qgml's profiler).
  void write(const std::string& run_dir, const ProfilerOptions& popts, bool quiet) {
    write_json_file((fs::path(run_dir) / "monitor.json").string(), {{"epochs", epochs_json_},
                                                                    {"peak_bytes", Profiler::peak_bytes()},
                                                                    {"train_seconds", train_seconds_},
                                                                    {"region_seconds", region_totals_}});
    if (popts.trace) {
      const std::string dir = (fs::path(run_dir) / "profiler_traces").string();
      fs::create_directories(dir);
      Kokkos::Timer t;
      const long events = Profiler::write_trace((fs::path(dir) / "train.trace.json").string());
      log_.line(format("profiler: %ld events written to %s/train.trace.json in %.3f s (%ld dropped)", events,
                       dir.c_str(), t.seconds(), Profiler::dropped_events()));
    }
    if (!quiet && train_seconds_ > 0) {
      log_.line("time per region (all epochs of this session):");
      for (const auto& [name, s] : region_totals_)
        if (name != "qgml::Trainer::epoch")
          log_.line(format("  %-40s %9.3f s  %5.1f %%", name.c_str(), s, 100 * s / train_seconds_));
      log_.line(format("  peak memory %.1f MiB", Profiler::peak_bytes() / 1048576.0));
    }
  }

 private:
  Log& log_;
  int epochs_, every_;
  bool tty_, monitored_;
  Json epochs_json_ = Json::array();
  std::map<std::string, double> region_totals_;
  double train_seconds_ = 0;
  Kokkos::Timer wall_;
};

// A collective: history.csv, history.json and final_matrices.npy, written by rank 0.
template <class Real>
void write_outputs(const std::string& run_dir, const std::vector<EpochRecord>& history,
                   const MatrixConfiguration<Real, Exec>& config, const Exec& exec, Communicator& comm) {
  const HostMatrices final_matrices = to_host(config, exec);
  run_collectively(comm, [&] {
    if (comm.rank() != 0) return;
    write_history_csv((fs::path(run_dir) / "history.csv").string(), history);
    write_history_json((fs::path(run_dir) / "history.json").string(), history);
    save_matrices((fs::path(run_dir) / "final_matrices.npy").string(), final_matrices, precision_of<Real>);
  });
}

// --resume-with-changes: the fingerprint keys (FingerprintChange::key, or "all") a resume may change.
using AcceptedChanges = std::vector<std::string>;

template <class Real, class DataSpace>
int train_in(Config& c, const TrainRequest& request, Log& log, const ProfilerOptions& popts, bool monitored,
             RunInputs<Real, DataSpace>& in, const std::string& run_dir);

// A relative path setting as an absolute one, resolved once, at the first run (its config.yaml then
// names the same file from any directory).
void make_absolute(Config& c, const std::string& key) {
  const std::string path = c.text(key);
  if (path.empty() || fs::path(path).is_absolute()) return;
  c.set(key, fs::absolute(path).lexically_normal().string(), c.origin(key));
}

// Whether the run directory's checkpoint directory holds no checkpoint yet: no LATEST and nothing but
// an epoch-0 checkpoint being written (the run stopped before its first checkpoint was complete).
bool no_checkpoint_yet(const std::string& checkpoint_dir) {
  std::error_code ec;
  if (fs::exists(fs::path(checkpoint_dir) / "LATEST", ec)) return false;
  for (const auto& e : fs::directory_iterator(checkpoint_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("epoch-", 0) == 0 && name.rfind("epoch-000000", 0) != 0) return false;
    if (name == "state.json") return false;
  }
  return true;
}

// What a resume accepted (check_resume), written to the run by record_resume once the checkpoint has
// been loaded: the checkpoint's epoch and the accepted differences, each with its description.
struct AcceptedResume {
  int epoch = 0;
  std::vector<std::pair<FingerprintChange, std::string>> changes;
};

// A collective that writes nothing. Compares the fingerprint of the checkpoint LATEST names (read and
// verified), or, where the run has no checkpoint yet (`fresh`), the settings of its config.yaml, with
// the run's: differences not in `accepted` are an error listing them; the accepted ones are returned
// for record_resume, called only after everything else has been checked (the checkpoint loaded), so
// that a change that cannot apply leaves config.yaml and changes.json as they were.
AcceptedResume check_resume(const std::string& run_dir, const std::string& checkpoint_dir, bool fresh,
                            const CheckpointFingerprint& now, const AcceptedChanges& accepted, Log& log,
                            Communicator& comm) {
  CheckpointState saved;
  run_collectively(comm, [&] {
    if (!fresh) {
      saved = read_checkpoint(checkpoint_dir);
      return;
    }
    const Config recorded = load_config((fs::path(run_dir) / "config.yaml").string(), {});
    saved.fingerprint = {now.data, fingerprint_settings(recorded)};  // no points recorded yet
  });
  const std::string against = fresh ? std::string("its config.yaml (no checkpoint yet)")
                                    : "its checkpoint (epoch " + std::to_string(saved.epoch) + ")";
  const std::vector<FingerprintChange> changes = fingerprint_changes(saved.fingerprint, now);
  const bool all = std::find(accepted.begin(), accepted.end(), "all") != accepted.end();
  const auto describe = [&](const FingerprintChange& d) {
    const std::string where = fresh ? "config.yaml" : "the checkpoint";
    return d.key == "data" ? "data: the points differ (hash " + d.before + " in " + where + ", " + d.now + " now)"
                           : d.key + ": '" + d.before + "' in " + where + ", '" + d.now + "' now";
  };
  std::string refused, keys;
  for (const FingerprintChange& d : changes)
    if (!all && std::find(accepted.begin(), accepted.end(), d.key) == accepted.end()) {
      refused += "\n  " + describe(d);
      keys += (keys.empty() ? "" : ",") + d.key;
    }
  if (!refused.empty())
    throw Error("--resume " + run_dir + ": the run differs from " + against + ":" + refused +
                "\nresume with --resume-with-changes " + keys +
                " to accept (recorded in the run), or with the run's own data and settings");
  if (changes.empty() && !all) {
    for (const std::string& key : accepted)
      log.line("--resume-with-changes " + key + ": no such difference (nothing to accept)");
  }
  AcceptedResume out;
  out.epoch = saved.epoch;
  for (const FingerprintChange& d : changes) out.changes.emplace_back(d, describe(d));
  return out;
}

// A collective, after check_resume and after the checkpoint has been loaded: logs the accepted changes,
// appends them to the run's changes.json and rewrites config.yaml to the configuration that now runs.
void record_resume(const Config& c, const std::string& run_dir, const AcceptedResume& resume, Log& log,
                   Communicator& comm) {
  for (const auto& [d, description] : resume.changes)
    log.line("resume with changes (accepted) at epoch " + std::to_string(resume.epoch) + ": " + description);
  run_collectively(comm, [&] {
    if (comm.rank() != 0) return;
    const Config recorded = load_config((fs::path(run_dir) / "config.yaml").string(), {});
    bool config_differs = false;
    for (const Setting& s : schema()) config_differs = config_differs || recorded.text(s.key) != c.text(s.key);
    if (config_differs) write_file_atomically((fs::path(run_dir) / "config.yaml").string(), config_yaml(c));
    if (resume.changes.empty()) return;
    const fs::path record = fs::path(run_dir) / "changes.json";
    Json entries = Json::array();
    if (fs::exists(record)) {
      std::ifstream in(record);
      entries = Json::parse(in, nullptr, false);
      if (!entries.is_array()) entries = Json::array();
    }
    Json list = Json::array();
    for (const auto& [d, description] : resume.changes)
      list.push_back({{"key", d.key}, {"checkpoint", d.before}, {"now", d.now}});
    const std::time_t t = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&t));
    entries.push_back({{"epoch", resume.epoch}, {"time", stamp}, {"changes", list}});
    write_json_file(record.string(), entries);
  });
}

template <class Real, class DataSpace>
TrainOutcome train(Config c, const std::string& config_path, const TrainRequest& request) {
  const std::string& resume_dir = request.resume_dir;
  const bool quiet = request.quiet;
  const Exec exec;
  // With MPI, every rank trains on its shard of the points; rank 0 alone prints and writes files.
  Communicator& comm = communicator();
  use_gpu_aware_mpi(c.boolean("mpi.gpu_aware"));
  const bool root = comm.rank() == 0;
  Log log(quiet || !root);
  // The monitor is installed first so that its memory high-water mark sees every allocation.
  const ProfilerOptions popts = profiler_options(c);
  const ProfilerGuard profiler(popts);
  const bool monitored = profiler.active;
  if (resume_dir.empty()) {
    make_absolute(c, "data.file");
    make_absolute(c, "model.load");
    if (!c.text("output.name").empty()) check_run_name(c.text("output.name"));
  } else {
    run_collectively(comm, [&] {
      if (!root) return;
      refuse_links(resume_dir, "run directory");
      const std::string checkpoints = (fs::path(resume_dir) / "checkpoints").string();
      std::error_code ec;
      if (fs::is_directory(fs::symlink_status(checkpoints, ec))) refuse_links(checkpoints, "checkpoint directory");
    });
  }
  auto in = prepare_inputs<Real, DataSpace>(exec, c, comm, request.points);
  const std::string run_dir = open_run_directory(c, config_path, resume_dir, comm);
  // Held until the run ends: one process at a time in a run directory.
  RunLock lock;
  run_collectively(comm, [&] {
    if (root) lock = RunLock(run_dir);
  });
  run_collectively(comm, [&] {
    if (root) log.open((fs::path(run_dir) / "log.txt").string());
  });
  // Under the lock: the temporaries that an interrupted write left in the run directory and its
  // checkpoints (the pid in their name has ended) are removed.
  if (!resume_dir.empty())
    run_collectively(comm, [&] {
      if (!root) return;
      for (const std::string& path : remove_stale_temporaries(run_dir, {"checkpoints"}))
        log.line("removed " + path + ": a temporary file of an interrupted write (its process has ended)");
    });
  // A fatal error from here on is also recorded in the run's log.txt (main prints it to stderr).
  try {
    return {train_in<Real, DataSpace>(c, request, log, popts, monitored, in, run_dir), run_dir};
  } catch (const std::exception& e) {
    log.file_line(std::string("error: ") + e.what());
    throw;
  }
}

template <class Real, class DataSpace>
int train_in(Config& c, const TrainRequest& request, Log& log, const ProfilerOptions& popts, bool monitored,
             RunInputs<Real, DataSpace>& in, const std::string& run_dir) {
  const std::string& resume_dir = request.resume_dir;
  const AcceptedChanges& accepted = request.accepted_changes;
  const auto stop = [&request] {
    return (request.handle_signals && stop_requested.load()) || (request.stop_requested && request.stop_requested());
  };
  const Exec exec;
  Communicator& comm = communicator();
  const bool root = comm.rank() == 0;
  const bool quiet = log.quiet();
  const TrainingSettings settings = training_settings(c, run_dir);
  std::optional<Trainer<Real, Exec, DataSpace>> trainer_storage;
  run_collectively(comm, [&] { trainer_storage.emplace(in.config, in.data, settings, exec, comm, in.total_points); });
  Trainer<Real, Exec, DataSpace>& trainer = *trainer_storage;
  if (in.supervised) {
    if (in.validation.extent(0) > 0) trainer.set_validation(in.validation);
    if (in.transform.task == Task::regression)
      trainer.set_target_units(in.transform.target_mean, in.transform.target_scale);
  }
  const CheckpointFingerprint fingerprint{
      data_hash(exec, in.data, in.total_points, shard_range(in.total_points, comm.size(), comm.rank()).begin, comm),
      fingerprint_settings(c)};
  trainer.set_fingerprint(fingerprint);
  // A run stopped before its epoch-0 checkpoint starts from epoch 0 with its own config.yaml.
  const bool fresh = resume_dir.empty() || no_checkpoint_yet(settings.checkpoint_dir);
  std::optional<AcceptedResume> accepted_resume;
  if (!resume_dir.empty())
    accepted_resume = check_resume(run_dir, settings.checkpoint_dir, fresh, fingerprint, accepted, log, comm);
  // Nothing is written to the run before the checkpoint has been loaded: a change that cannot apply
  // (another N or D, another seed) leaves the run resumable as it was.
  if (!fresh) trainer.load_checkpoint(settings.checkpoint_dir);
  if (accepted_resume) {
    record_resume(c, run_dir, *accepted_resume, log, comm);
    if (fresh) log.line("resume: " + run_dir + " has no checkpoint yet; starting it from epoch 0");
  }
  if (!fresh) {
    log.line(format("resuming %s at epoch %d of %d", run_dir.c_str(), trainer.epoch(), settings.epochs));
    if (trainer.already_stopped_early()) {
      log.line(
          format("the run already stopped early at epoch %d (training.early_stop, training.patience): nothing "
                 "to train; continue with --training.epochs above its limit, or with --training.early_stop 0 "
                 "and --training.patience 0",
                 trainer.epoch()));
      return 0;
    }
  }
  const long points = long(in.total_points);
  log.line(format("qgml train: N = %d%s, D = %d, %ld points, batch %d, %s epochs, w = %g, %s, %s", in.n,
                  in.n_source.c_str(), in.d, points, trainer.batch_size(),
                  settings.early_stop_tolerance > 0 || settings.validation_patience > 0
                      ? format("at most %d", settings.epochs).c_str()
                      : std::to_string(settings.epochs).c_str(),
                  settings.loss.w, std::is_same_v<Real, float> ? "float" : "double", Exec::name()));
  if (in.supervised)
    log.line(format(
        "task %s: loss %s%s, %s", to_string(settings.task).c_str(), to_string(settings.supervised.loss).c_str(),
        settings.supervised.lambda > 0 ? format(" + %g (d^2 + w sigma^2)", settings.supervised.lambda).c_str() : "",
        in.supervised_source.c_str()));
  if (fresh)
    for (const std::string& line : in.automatic) log.line(line);
  if (settings.early_stop_tolerance > 0)
    log.line(
        format("early stop: when the mean loss of %d epochs changes by at most %g relative to the %d before "
               "(training.early_stop, training.early_stop_window)",
               settings.early_stop_window, settings.early_stop_tolerance, settings.early_stop_window));
  if (settings.validation_patience > 0)
    log.line(
        format("validation patience: stop %d epochs after the lowest mean validation loss and end with that "
               "epoch's operators (training.patience)",
               settings.validation_patience));
  log.line("run directory: " + run_dir);
  if (comm.size() > 1)
    log.line(format("data parallel: %d ranks, %ld to %ld points each, %zu bytes per gradient all-reduce (%s)",
                    comm.size(), points / comm.size(), (points + comm.size() - 1) / comm.size(),
                    trainer.bytes_per_allreduce(),
                    c.boolean("mpi.gpu_aware") ? "device buffers" : "through host memory"));
  if (!monitored) log.line("an external Kokkos tool is loaded: qgml's own profiler and monitor are off");

  bool interrupted = false;
  EpochMonitor monitor(log, settings.epochs, !quiet && root && ::isatty(::fileno(stdout)), monitored);
  {
    std::optional<StopOnSignal> stop_on_signal;
    if (request.handle_signals) stop_on_signal.emplace();
    trainer.set_stop_query(stop);
    monitor.begin(trainer.epoch());
    trainer.train([&](const EpochRecord& r) {
      monitor.record(r);
      if (request.on_epoch) request.on_epoch(r);
      return !stop();
    });
    monitor.end();
    std::int64_t stop_flag = stop() || trainer.interrupted() ? 1 : 0;
    comm.allreduce_max(&stop_flag, 1);  // every rank takes the same exit
    interrupted = stop_flag != 0;
  }
  // training.patience: the outputs hold the best epoch's operators (the checkpoints keep the trajectory).
  const bool patience_stop = settings.validation_patience > 0 && trainer.best_epoch() > 0 &&
                             trainer.epoch() - trainer.best_epoch() >= settings.validation_patience;
  const int kept_epoch = !interrupted && settings.validation_patience > 0 && trainer.restore_best() > 0
                             ? trainer.best_epoch()
                             : trainer.epoch();
  write_outputs(run_dir, trainer.history(), in.config, exec, comm);
  const double train_seconds = monitor.train_seconds();
  if (comm.size() > 1)
    log.line(format("communication: %.3f s in gradient all-reduces (%.1f %% of training)",
                    trainer.communication_seconds(),
                    train_seconds > 0 ? 100 * trainer.communication_seconds() / train_seconds : 0.0));
  if (monitored && root) monitor.write(run_dir, popts, quiet);
  if (interrupted) {
    log.line(
        format("interrupted: epoch %d is the last complete one, its checkpoint is LATEST; continue with qgml "
               "train --resume %s",
               trainer.epoch(), run_dir.c_str()));
    return 130;
  }
  const EpochRecord last = trainer.history().empty() ? EpochRecord{} : trainer.history().back();
  // No epoch ran (training.epochs = 0): there is no final loss to print, only the initial configuration.
  const bool trained = !trainer.history().empty();
  const std::string untrained = format(
      "no training: training.epochs = %d, no epoch ran; the outputs hold the initial configuration", settings.epochs);
  const bool stopped_early = trainer.stopped_early();
  if (stopped_early && patience_stop)
    log.line(
        format("the validation loss has not improved for %d epochs: stopped after epoch %d of at most %d "
               "(training.patience)",
               settings.validation_patience, trainer.epoch(), settings.epochs));
  else if (stopped_early)
    log.line(
        format("the loss has plateaued: stopped after epoch %d of at most %d (training.early_stop %g over %d "
               "epochs)",
               trainer.epoch(), settings.epochs, settings.early_stop_tolerance, settings.early_stop_window));
  if (in.supervised) {
    if (!trained) {
      log.line(untrained);
    } else {
      log.line(format("final loss %.10g (supervised %.10g) after %d epochs, %.1f s", last.total, last.supervised,
                      trainer.epoch(), train_seconds));
      log.line("final train " + metrics_text(last.train) +
               (in.validation.extent(0) > 0 ? "; validation " + metrics_text(last.validation) : std::string()));
      if (const std::string t = per_output_text(last.train, in.transform); !t.empty()) log.line("final train " + t);
      if (const std::string t = per_output_text(last.validation, in.transform); !t.empty())
        log.line("final validation " + t);
    }
    if (kept_epoch != trainer.epoch()) {
      const EpochRecord& kept = trainer.history()[std::size_t(kept_epoch - 1)];
      log.line(format("kept the operators of epoch %d, the lowest mean validation loss (%.6g): validation ", kept_epoch,
                      trainer.best_validation_loss()) +
               metrics_text(kept.validation) + " (training.patience)");
      if (const std::string t = per_output_text(kept.validation, in.transform); !t.empty())
        log.line("kept epoch's validation " + t);
    }
    if (root)
      write_supervised_transform((fs::path(run_dir) / "supervised.json").string(), in.transform, in.d, kept_epoch);
    log.line("predict with: qgml predict --run " + run_dir + " --data FILE.csv");
    log.line("outputs: " + run_dir);
    return 0;
  }
  if (!trained)
    log.line(untrained);
  else
    log.line(format("final loss %.10g (reconstruction %.10g, fluctuation %.10g) after %d epochs, %.1f s", last.total,
                    last.reconstruction, last.fluctuation, trainer.epoch(), train_seconds));
  if (root && !in.standardization.mean.empty()) {
    Json st = {{"mean", in.standardization.mean},
               {"scale", in.standardization.scale},
               {"note", "the run's points, xbar and matrices are in standardised coordinates (x - mean) / scale"}};
    write_json_file((fs::path(run_dir) / "standardization.json").string(), st);
  }
  if (c.boolean("analysis.enabled")) {
    const DimensionSummary s = analyze<Real>(exec, in.config, in.data, c, run_dir, comm,
                                             JsonFields()
                                                 .add("N", in.n)
                                                 .add("N_origin", c.origin("model.N"))
                                                 .add("w", settings.loss.w)
                                                 .add("epochs", trainer.epoch())
                                                 .add("max_epochs", settings.epochs)
                                                 .add("stopped_early", stopped_early)
                                                 .add("standardized", !in.standardization.mean.empty())
                                                 .add("train_seconds", train_seconds));
    for (const std::string& line : summary_lines(s)) log.line(line);
    const std::string result =
        format("estimated intrinsic dimension: %d%s", s.mode, s.uncertain ? " (uncertain: see the summary)" : "");
    log.line(result);
    if (log.quiet() && root && request.print_result) std::printf("%s\n", result.c_str());
  }
  if (c.boolean("output.plots") && root) plot_run(run_dir, log.quiet());
  log.line("outputs: " + run_dir);
  return 0;
}

}  // namespace

TrainOutcome run_train(const TrainRequest& request) {
  if (!request.resume_dir.empty() && !request.config_path.empty())
    throw Error("--resume takes the run directory's own config; give no config or data file");
  std::vector<std::pair<std::string, std::string>> overrides = request.overrides;
  std::string config_path = request.config_path;
  if (!request.resume_dir.empty()) {
    config_path = (fs::path(request.resume_dir) / "config.yaml").string();
    if (!fs::exists(config_path))
      throw Error("--resume " + request.resume_dir + ": no config.yaml there (not a qgml run directory)");
  }
  const Config c = load_config(config_path, overrides);
  const std::string path = request.resume_dir.empty() ? config_path : "";
  const bool on_host = c.text("data.placement") == "host" && !std::is_same_v<HostDataSpace, Exec::memory_space>;
  if (c.text("model.precision") == "float")
    return on_host ? train<float, HostDataSpace>(c, path, request) : train<float, Exec::memory_space>(c, path, request);
  return on_host ? train<double, HostDataSpace>(c, path, request) : train<double, Exec::memory_space>(c, path, request);
}

int train_command(const std::vector<std::string>& args) {
  std::string config_path, data_path, resume;
  AcceptedChanges accepted;
  bool with_changes = false;
  bool quiet = false;
  std::vector<std::pair<std::string, std::string>> overrides;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--quiet" || a == "-q") {
      quiet = true;
    } else if (a == "--resume" || a.rfind("--resume=", 0) == 0) {
      if (a == "--resume" && i + 1 >= args.size()) throw Error("--resume needs a run directory");
      resume = a == "--resume" ? args[++i] : a.substr(9);
    } else if (a == "--resume-with-changes" || a.rfind("--resume-with-changes=", 0) == 0) {
      if (a == "--resume-with-changes" && i + 1 >= args.size())
        throw Error("--resume-with-changes needs KEY[,KEY...] (data, a setting, or all)");
      std::stringstream list(a == "--resume-with-changes" ? args[++i] : a.substr(22));
      for (std::string key; std::getline(list, key, ',');) {
        if (key != "all" && key != "data") {
          const Setting* known = nullptr;
          for (const Setting& s : schema()) known = s.key == key ? &s : known;
          if (!known)
            throw Error("--resume-with-changes: '" + key +
                        "' is not data, all or a setting (section.key, e.g. training.lr)");
        }
        accepted.push_back(key);
      }
      with_changes = true;
    } else if (a.rfind("--", 0) == 0) {
      overrides.push_back(take_option(args, i));
    } else if (config_path.empty() && data_path.empty()) {
      std::string ext = fs::path(a).extension().string();
      for (char& ch : ext) ch = char(std::tolower(static_cast<unsigned char>(ch)));
      if (ext == ".csv" || ext == ".npy")
        data_path = a;
      else if (ext == ".yaml" || ext == ".yml")
        config_path = a;
      else
        throw Error("'" + a + "': expected a data file (.csv, .npy) or a config file (.yaml, .yml)");
    } else {
      throw Error("unexpected argument '" + a + "' (one data or config file, then --section.key value overrides)");
    }
  }
  if (!data_path.empty()) {
    for (const auto& [key, value] : overrides)
      if (key == "data.file") throw Error("give the data file once: '" + data_path + "' and --data.file " + value);
    overrides.insert(overrides.begin(), {"data.file", data_path});
  }
  if (with_changes && resume.empty()) throw Error("--resume-with-changes is for --resume RUN_DIR");
  if (!resume.empty()) {
    if (!config_path.empty() || !data_path.empty())
      throw Error("--resume takes the run directory's own config; give no config or data file");
  } else if (config_path.empty() && data_path.empty()) {
    bool data_given = false;
    for (const auto& [key, value] : overrides) data_given = data_given || key.rfind("data.", 0) == 0;
    if (!data_given)
      throw Error(
          "qgml train needs data: qgml train DATA.csv (or .npy), --data.file FILE, --data.generator NAME, "
          "a config file (see examples/configs/) or --resume RUN_DIR");
  }
  TrainRequest request;
  request.config_path = config_path;
  request.overrides = overrides;
  request.resume_dir = resume;
  request.accepted_changes = accepted;
  request.quiet = quiet;
  request.handle_signals = true;
  request.print_result = true;
  return run_train(request).exit_code;
}

}  // namespace qgml::app
